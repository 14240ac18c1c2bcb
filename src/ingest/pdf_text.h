// PDF → text per page, with poppler's C++ API (libpoppler-cpp).
//
// Each page's text is read in reading order (poppler's
// non_raw_non_physical_layout: columns one after the other, lines joined
// by '\n'), stripped of trailing whitespace and of any form feed of its own,
// and followed by a page break (ingest/document.h: kPageBreak, one per page,
// the last at the end of the text). A page without text adds only its page
// break, so page numbers stay those of the PDF.
//
// Errors (InvalidArgument; `display` names the file in each):
//   report.pdf: not a readable PDF (poppler: ...): the file is damaged, truncated or not a PDF
//   report.pdf: the PDF is encrypted and needs a password: flowrag does not decrypt PDFs ...
//   report.pdf: no text layer on any of its 12 pages (a scanned document?): OCR is not done
//   report.pdf: 20000 pages: expected at most 10000 (PdfLimits::max_pages)
//   report.pdf: page 812: the text so far exceeds 67108864 bytes (PdfLimits::max_text_bytes)
// poppler's own messages are not printed; the first one is quoted (at most
// 120 bytes) when a document cannot be read.
//
// Complexity: poppler's, about linear in the file size and the pages' content
// (bounded by the limits); memory: the file's bytes plus the extracted text.
// Thread-safety: ExtractPdfText may run on several threads at once (poppler
// documents are independent; its message hook is installed once and keeps
// per-thread state).
#ifndef FLOWRAG_INGEST_PDF_TEXT_H_
#define FLOWRAG_INGEST_PDF_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"

namespace flowrag {

struct PdfLimits {
  int max_pages = 10000;                  // documents with more pages are refused
  uint64_t max_text_bytes = 64ull << 20;  // extracted text of one document
};

struct PdfText {
  std::string title;  // the metadata Title (collapsed), else ""
  std::string text;   // valid UTF-8; every page followed by kPageBreak
  int pages = 0;
  std::vector<int> empty_pages;       // 1-based numbers of the pages without text
  std::vector<int> unreadable_pages;  // pages poppler could not open (kept empty)
};

// Extracts the text of the PDF held in `bytes`. `display` names it in errors.
Result<PdfText> ExtractPdfText(std::string_view bytes, const std::string& display,
                               const PdfLimits& limits = {});

// The first non-blank line of `text` (collapsed whitespace, at most 200
// bytes cut before a code point), or "" when there is none.
std::string FirstLine(std::string_view text);

}  // namespace flowrag

#endif  // FLOWRAG_INGEST_PDF_TEXT_H_
