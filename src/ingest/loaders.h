// Source loaders: turn a path (directory, JSONL, JSON, text, markdown, PDF or
// HTML file) into a stream of RawDocuments.
//
// The API is streaming: LoadSource hands each document to a sink as soon as
// it is read and keeps at most one document (one JSONL line, one JSON list
// element, one text file) in memory, so corpora larger than RAM load fine.
// The only exception is a JSON file holding a single object, which is one
// document anyway.
//
// Formats (chosen by DetectSourceKind):
//   directory        every *.txt, *.md, *.markdown, *.pdf, *.html, *.htm file
//                    below it (recursive),
//                    one document per file, in byte-wise order of the path
//                    relative to the directory. Hidden entries (name starting
//                    with '.') are skipped; symbolic links are followed, each
//                    directory is visited once (so symlink loops end); files
//                    with other extensions are ignored; empty files are
//                    skipped and counted in LoadReport.
//                    external_id = relative path ("sub/a.md", '/' separated),
//                    title = text of the first "# " heading (outside fenced
//                    code blocks) or else the file stem ("a"); PDF and HTML
//                    files as below. A PDF or HTML file that cannot be read
//                    (encrypted, damaged, no text layer, over a limit) is
//                    skipped, counted in skipped_unreadable_files and noted
//                    with the error it would have raised, so one bad file
//                    does not stop the others.
//   benchmark dir    a directory holding a regular file "corpus.jsonl" (the
//                    normalised benchmark folders, data/bench/README.md):
//                    only that file is loaded, as JSONL.
//   .jsonl/.ndjson   one JSON object per line {"id"?, "title"?, "text"};
//                    blank lines are skipped; external_id = "id" (a string,
//                    or an integer printed in decimal) or "<file name>:<line>"
//                    when absent; RawDocument::line = the 1-based line.
//   .json            a JSON list of objects [{"title"?, "text", "id"?}, ...]
//                    (HippoRAG corpus format; other fields such as "idx" are
//                    ignored), external_id = "id" or "<file name>#<index>"
//                    with a 0-based index, RawDocument::line = index + 1; or a
//                    single object with "text" (external_id = "id" or the file
//                    name).
//   .txt/.md/.markdown  one document, as in a directory (external_id = file name).
//   .pdf             one document (ingest/pdf_text.h): the text of every
//                    page in reading order, each page followed by a page
//                    break (U+000C, ingest/document.h), so passages and
//                    citations know their pages; title = the metadata Title,
//                    else the first line of text, else the file stem. Pages
//                    without text are kept (empty) and noted in LoadReport;
//                    a PDF without any text (scanned) is an error: OCR is not
//                    done.
//   .html/.htm       one document (ingest/html_text.h): the visible text
//                    without markup, scripts or styles, references decoded,
//                    blocks as line breaks; title = <title>, else the first
//                    <h1>, else the file stem. UTF-8, or windows-1252/Latin-1
//                    when the page declares it (<meta charset>) and is not
//                    valid UTF-8.
// Extensions are matched case-insensitively. A "title" or "id" that is JSON
// null counts as absent. Unknown fields are ignored.
//
// Text: a leading UTF-8 byte order mark is removed (files and JSONL lines
// alike); text must be valid UTF-8 (see LoadOptions::invalid_utf8); a
// document may not exceed 4 GiB - 1 bytes (Chunk offsets are 32-bit).
//
// Errors name the file and the place and say what was expected:
//   corpus.jsonl:17: invalid JSON (at column 5: syntax error ...): expected one object per line
//   corpus.jsonl:4: "text" is a number: expected a string
//   list.json: record #3: missing "text": expected an object with a string "text" field
//   notes.txt: invalid UTF-8 at byte offset 12: expected UTF-8 text (...)
//   x.jsonl: file is empty: expected one JSON object per line
//   scan.pdf: no text layer on any of its 12 pages (a scanned document?): OCR is not done
//   big.pdf: file is 300000000 bytes: expected a PDF of at most 268435456 bytes (...)
// Codes: NotFound when a path does not exist, IoError when the OS refuses a
// read (the message carries the OS reason), InvalidArgument for malformed
// content, unknown extensions and empty files given directly. When an error
// stops a load, the documents before it have already reached the sink.
//
// Thread-safety: LoadSource and DetectSourceKind keep no shared state; any
// number may run concurrently (on different or the same paths).
#ifndef FLOWRAG_INGEST_LOADERS_H_
#define FLOWRAG_INGEST_LOADERS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"
#include "ingest/document.h"
#include "ingest/pdf_text.h"

namespace flowrag {

enum class SourceKind {
  kDirectory,           // scanned recursively for .txt/.md/.markdown/.pdf/.html/.htm
  kBenchmarkDirectory,  // a directory with corpus.jsonl: loads that file only
  kJsonl,               // .jsonl or .ndjson
  kJson,                // .json: list of objects, or one object
  kText,                // .txt
  kMarkdown,            // .md or .markdown
  kPdf,                 // .pdf
  kHtml,                // .html or .htm
};

std::string_view SourceKindName(SourceKind kind);

struct LoadOptions {
  enum class InvalidUtf8 {
    kError,    // fail with the file, line and byte offset of the first bad byte
    kReplace,  // substitute U+FFFD for each maximal ill-formed subpart
  };
  InvalidUtf8 invalid_utf8 = InvalidUtf8::kError;

  // When true, bad records are skipped and counted in LoadReport instead of
  // failing the load: malformed or invalid JSONL lines, JSON list elements
  // without a valid "text" (a JSON syntax error still ends a .json file,
  // which cannot be resynchronised), and files of a directory scan whose
  // content is invalid. I/O errors always fail.
  bool skip_bad_records = false;

  // LoadReport::messages keeps at most this many messages.
  size_t max_report_messages = 20;

  // Bounds on PDF and HTML files: larger files are refused before they are
  // read (an error naming the file and the limit; skipped in a directory).
  uint64_t max_pdf_file_bytes = 256ull << 20;  // 256 MiB
  uint64_t max_html_file_bytes = 64ull << 20;  // 64 MiB
  PdfLimits pdf;                               // pages (10,000) and extracted text (64 MiB) per PDF
};

// What a load did besides delivering documents. Filled by LoadSource when
// the caller passes one; reset at the start of each call.
struct LoadReport {
  int64_t files_read = 0;                // files opened and read
  int64_t documents = 0;                 // documents the sink accepted
  int64_t skipped_records = 0;           // bad records or files skipped (skip_bad_records)
  int64_t skipped_empty_files = 0;       // empty files inside a directory scan
  int64_t skipped_links = 0;             // broken symlinks and directories reached twice
  int64_t skipped_unreadable_files = 0;  // PDF/HTML files of a directory that could not be read
  int64_t utf8_replacements = 0;         // ill-formed sequences replaced (InvalidUtf8::kReplace)
  // The first LoadOptions::max_report_messages messages about skipped or
  // repaired input, in the format of the error messages.
  std::vector<std::string> messages;
};

// Receives each document. Returning a non-OK Status stops the load, and
// LoadSource returns that Status unchanged.
using DocumentSink = std::function<Status(RawDocument&&)>;

// What `path` is: a directory (with or without corpus.jsonl) or a file type
// known by its extension. Errors: NotFound / IoError (with the OS reason)
// when the path cannot be examined; InvalidArgument for an unknown extension
// or a path that is neither a directory nor a regular file.
Result<SourceKind> DetectSourceKind(const std::string& path);

// Loads every document of `path` in source order and passes it to `sink`.
// `report` (optional, not owned) receives counts and skip messages.
// Complexity: linear in the input size; memory bounded by the largest single
// document (plus the sorted list of file paths for a directory).
Status LoadSource(const std::string& path, const LoadOptions& options, const DocumentSink& sink,
                  LoadReport* report = nullptr);

// Convenience for tests and small corpora: collects all documents in memory.
Result<std::vector<RawDocument>> LoadAll(const std::string& path, const LoadOptions& options = {},
                                         LoadReport* report = nullptr);

// The title rule for text files: the text of the first level-1 markdown
// heading ("# Title", up to 3 leading spaces, closing #s removed, outside
// ``` / ~~~ fences), or `fallback` when there is none.
std::string ExtractMarkdownTitle(std::string_view text, std::string_view fallback);

}  // namespace flowrag

#endif  // FLOWRAG_INGEST_LOADERS_H_
