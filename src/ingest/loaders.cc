#include "ingest/loaders.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <filesystem>
#include <istream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <streambuf>
#include <system_error>
#include <utility>

#include "common/encoding.h"
#include "common/file_reader.h"
#include "common/json_builder.h"
#include "common/json_errors.h"
#include "ingest/html_text.h"
#include "ingest/pdf_text.h"
#include "ingest/utf8.h"

namespace flowrag {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Chunk offsets are 32-bit, so no document may be longer.
constexpr uint64_t kMaxDocumentBytes = UINT32_MAX;

constexpr std::string_view kUtf8Hint =
    "expected UTF-8 text (set LoadOptions::invalid_utf8 = kReplace to substitute U+FFFD)";
constexpr std::string_view kSupportedTypes =
    "expected a directory or a .jsonl, .ndjson, .json, .txt, .md, .markdown, .pdf, .html or .htm "
    "file";

// ---------------------------------------------------------------------------
// Small helpers.

std::string FileName(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  return name.empty() ? path : name;
}

bool IsTextExtension(const std::string& ext) {
  return ext == ".txt" || ext == ".md" || ext == ".markdown";
}

bool IsHtmlExtension(const std::string& ext) { return ext == ".html" || ext == ".htm"; }

// The files a directory scan loads.
bool IsDocumentExtension(const std::string& ext) {
  return IsTextExtension(ext) || IsHtmlExtension(ext) || ext == ".pdf";
}

bool IsAsciiBlank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
  });
}

std::string_view TrimAscii(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Reads `path` whole. A file of more than `max_bytes` bytes is refused before
// it is read (InvalidArgument naming `limit`), and reading stops there if
// the file grows meanwhile.
Status ReadWholeFile(const std::string& path, std::string* out,
                     uint64_t max_bytes = kMaxDocumentBytes + kUtf8Bom.size(),
                     std::string_view limit = "a document of at most 4 GiB - 1 bytes") {
  FLOWRAG_ASSIGN_OR_RETURN(FilePtr file, OpenFile(path));
  auto too_big = [&](uint64_t size) {
    return Status::InvalidArgument(path + ": file is " + std::to_string(size) +
                                   " bytes: expected " + std::string(limit));
  };
  struct stat st;
  if (::fstat(fileno(file.get()), &st) == 0 && S_ISREG(st.st_mode)) {
    if (static_cast<uint64_t>(st.st_size) > max_bytes) return too_big(st.st_size);
    out->reserve(static_cast<size_t>(st.st_size));
  }
  out->clear();
  char block[1 << 16];
  while (true) {
    const size_t n = std::fread(block, 1, sizeof(block), file.get());
    out->append(block, n);
    if (out->size() > max_bytes) return too_big(out->size());
    if (n < sizeof(block)) {
      if (std::ferror(file.get())) return OsError(path, "read failed", errno != 0 ? errno : EIO);
      break;
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Load state shared by the format readers.

class LoadContext {
 public:
  LoadContext(const LoadOptions& options, const DocumentSink& sink, LoadReport& report)
      : options_(options), sink_(sink), report_(report) {}

  const LoadOptions& options() const { return options_; }
  LoadReport& report() { return report_; }
  bool replace_utf8() const { return options_.invalid_utf8 == LoadOptions::InvalidUtf8::kReplace; }

  // Adds a message to the report, up to the configured maximum.
  void Note(std::string message) {
    if (report_.messages.size() < options_.max_report_messages) {
      report_.messages.push_back(std::move(message));
    }
  }

  // For a PDF or HTML file of a directory scan that cannot be read
  // (encrypted, damaged, without text, over a limit): skipped, counted and
  // noted, so the other files still load. Given directly: `error`.
  Status UnreadableFile(Status error, bool in_directory) {
    if (!in_directory) return error;
    ++report_.skipped_unreadable_files;
    Note("skipped: " + error.message());
    return Status::Ok();
  }

  // For a malformed record: OK (counted and noted) when skipping, else `error`.
  Status BadRecord(Status error) {
    if (!options_.skip_bad_records) return error;
    ++report_.skipped_records;
    Note("skipped: " + error.message());
    return Status::Ok();
  }

  void NoteReplacements(const std::string& where, size_t count) {
    if (count == 0) return;
    report_.utf8_replacements += static_cast<int64_t>(count);
    Note(where + ": replaced " + std::to_string(count) + " invalid UTF-8 sequence" +
         (count == 1 ? "" : "s") + " with U+FFFD");
  }

  // Hands a document to the sink; its error is returned unchanged.
  Status Emit(RawDocument&& doc) {
    FLOWRAG_RETURN_IF_ERROR(sink_(std::move(doc)));
    ++report_.documents;
    return Status::Ok();
  }

 private:
  const LoadOptions& options_;
  const DocumentSink& sink_;
  LoadReport& report_;
};

// ---------------------------------------------------------------------------
// JSON records (JSONL lines and JSON list elements) → RawDocument.

// `where` names the record ("x.jsonl:17" or "x.json: record #3").
Status RecordToDocument(json&& value, const std::string& where, std::string default_id,
                        RawDocument* doc) {
  if (!value.is_object()) {
    return Status::InvalidArgument(where +
                                   ": expected a JSON object with a string \"text\" field, got " +
                                   DescribeJsonType(value));
  }
  auto text = value.find("text");
  if (text == value.end()) {
    return Status::InvalidArgument(
        where + ": missing \"text\": expected an object with a string \"text\" field");
  }
  if (!text->is_string()) {
    return Status::InvalidArgument(where + ": \"text\" is " + DescribeJsonType(*text) +
                                   ": expected a string");
  }
  if (text->get_ref<const std::string&>().size() > kMaxDocumentBytes) {
    return Status::InvalidArgument(where + ": \"text\" is longer than 4 GiB - 1 bytes");
  }
  std::string id = std::move(default_id);
  if (auto it = value.find("id"); it != value.end() && !it->is_null()) {
    if (it->is_string()) {
      if (it->get_ref<const std::string&>().empty()) {
        return Status::InvalidArgument(
            where + ": \"id\" is an empty string: expected a non-empty string or an integer");
      }
      id = std::move(it->get_ref<std::string&>());
    } else if (it->is_number_integer()) {  // signed or unsigned
      id = it->dump();
    } else {
      return Status::InvalidArgument(where + ": \"id\" is " + DescribeJsonType(*it) +
                                     ": expected a string or an integer");
    }
  }
  std::string title;
  if (auto it = value.find("title"); it != value.end() && !it->is_null()) {
    if (!it->is_string()) {
      return Status::InvalidArgument(where + ": \"title\" is " + DescribeJsonType(*it) +
                                     ": expected a string");
    }
    title = std::move(it->get_ref<std::string&>());
  }
  doc->external_id = std::move(id);
  doc->title = std::move(title);
  doc->text = std::move(text->get_ref<std::string&>());
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// JSONL.

Status LoadJsonlFile(const std::string& path, LoadContext& ctx) {
  FLOWRAG_ASSIGN_OR_RETURN(FilePtr file, OpenFile(path));
  ++ctx.report().files_read;
  const std::string name = FileName(path);
  LineReader reader(file.get());
  std::string_view raw;
  int64_t line_no = 0;
  uint64_t file_offset = 0;
  bool saw_record = false;
  std::string repaired;
  while (reader.Next(&raw)) {
    ++line_no;
    const uint64_t line_offset = file_offset;
    file_offset += raw.size();
    std::string_view line = raw;
    size_t prefix = 0;  // bytes dropped at the front of the line (BOM)
    if (line_no == 1 && line.substr(0, kUtf8Bom.size()) == kUtf8Bom) {
      line.remove_prefix(kUtf8Bom.size());
      prefix = kUtf8Bom.size();
    }
    if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (IsAsciiBlank(line)) continue;
    saw_record = true;
    const std::string where = path + ":" + std::to_string(line_no);

    size_t bad = 0;
    if (!IsValidUtf8(line, &bad)) {
      if (!ctx.replace_utf8()) {
        FLOWRAG_RETURN_IF_ERROR(ctx.BadRecord(Status::InvalidArgument(
            where + ": invalid UTF-8 at byte " + std::to_string(prefix + bad) +
            " of the line (file byte offset " + std::to_string(line_offset + prefix + bad) +
            "): " + std::string(kUtf8Hint))));
        continue;
      }
      size_t count = 0;
      repaired = SanitizeUtf8(line, &count);
      ctx.NoteReplacements(where, count);
      line = repaired;
    }

    json value;
    try {
      value = json::parse(line.begin(), line.end());
    } catch (const json::exception& e) {
      FLOWRAG_RETURN_IF_ERROR(ctx.BadRecord(Status::InvalidArgument(
          where + ": invalid JSON (at " + CleanJsonError(e.what(), /*single_line=*/true) +
          "): expected one object per line")));
      continue;
    }
    RawDocument doc;
    Status st =
        RecordToDocument(std::move(value), where, name + ":" + std::to_string(line_no), &doc);
    if (!st.ok()) {
      FLOWRAG_RETURN_IF_ERROR(ctx.BadRecord(std::move(st)));
      continue;
    }
    doc.source = path;
    doc.line = line_no;
    FLOWRAG_RETURN_IF_ERROR(ctx.Emit(std::move(doc)));
  }
  if (reader.error() != 0) return OsError(path, "read failed", reader.error());
  if (!saw_record) {
    return Status::InvalidArgument(
        path + (line_no == 0 ? ": file is empty" : ": file is empty (only blank lines)") +
        ": expected one JSON object per line");
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// JSON: streamed through a UTF-8 checking buffer into a SAX handler that
// materialises one list element at a time.

// A read-only streambuf over a FILE that drops a leading BOM and checks (or
// repairs) UTF-8 on the fly. In check mode it ends the stream at the first
// ill-formed byte and remembers its file offset.
class Utf8CheckingBuf : public std::streambuf {
 public:
  Utf8CheckingBuf(std::FILE* file, bool replace) : file_(file), replace_(replace) {}

  bool bad_utf8() const { return bad_; }
  uint64_t bad_offset() const { return bad_offset_; }  // file byte offset
  int read_errno() const { return read_errno_; }
  size_t replacements() const { return replacements_; }
  uint64_t raw_bytes() const { return consumed_; }
  uint64_t delivered() const { return delivered_; }  // bytes made available to the reader
  bool saw_content() const { return saw_content_; }  // a non-whitespace byte was delivered

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    while (true) {
      if (bad_ || read_errno_ != 0) return traits_type::eof();
      if (eof_ && in_.empty()) return traits_type::eof();
      if (!eof_) {
        block_.resize(kBlock);
        errno = 0;
        const size_t n = std::fread(block_.data(), 1, kBlock, file_);
        if (n < kBlock) {
          if (std::ferror(file_)) {
            read_errno_ = errno != 0 ? errno : EIO;
            return traits_type::eof();
          }
          eof_ = true;
        }
        in_.append(block_.data(), n);
      }
      if (at_start_) {
        if (in_.size() < kUtf8Bom.size() && !eof_ && kUtf8Bom.substr(0, in_.size()) == in_) {
          continue;  // too few bytes to tell whether a BOM starts the file
        }
        if (std::string_view(in_).substr(0, kUtf8Bom.size()) == kUtf8Bom) {
          in_.erase(0, kUtf8Bom.size());
          consumed_ += kUtf8Bom.size();
        }
        at_start_ = false;
      }
      out_.clear();
      size_t pos = 0;
      const size_t n = in_.size();
      while (pos < n) {
        const auto c = static_cast<unsigned char>(in_[pos]);
        if (c < 0x80) {
          size_t end = pos + 1;
          while (end < n && static_cast<unsigned char>(in_[end]) < 0x80) ++end;
          out_.append(in_, pos, end - pos);
          pos = end;
          continue;
        }
        char32_t cp;
        bool ok;
        const size_t len = DecodeUtf8(in_, pos, &cp, &ok);
        if (ok) {
          out_.append(in_, pos, len);
          pos += len;
          continue;
        }
        if (!eof_ && pos + len == n && len < Utf8SequenceLength(c)) break;  // wait for more bytes
        if (!replace_) {
          bad_ = true;
          bad_offset_ = consumed_ + pos;
          break;
        }
        out_.append(kUtf8Replacement);
        ++replacements_;
        pos += len;
      }
      consumed_ += pos;
      in_.erase(0, pos);
      if (!out_.empty()) {
        if (!saw_content_ && !IsAsciiBlank(out_)) saw_content_ = true;
        delivered_ += out_.size();
        setg(out_.data(), out_.data(), out_.data() + out_.size());
        return traits_type::to_int_type(*gptr());
      }
    }
  }

 private:
  static constexpr size_t kBlock = 1 << 16;
  std::FILE* file_;
  bool replace_;
  std::string block_;
  std::string in_;   // read, not yet converted (at most an incomplete sequence between calls)
  std::string out_;  // the get area
  uint64_t consumed_ = 0;
  uint64_t delivered_ = 0;
  uint64_t bad_offset_ = 0;
  size_t replacements_ = 0;
  int read_errno_ = 0;
  bool at_start_ = true;
  bool eof_ = false;
  bool bad_ = false;
  bool saw_content_ = false;
};

class JsonRecordHandler : public nlohmann::json_sax<json> {
 public:
  enum class Top { kNone, kList, kObject };
  // Receives each list element (index >= 0) or the top-level object (index
  // -1); returns false to stop parsing.
  using Callback = std::function<bool(json&&, int64_t index)>;

  explicit JsonRecordHandler(Callback callback) : callback_(std::move(callback)) {}

  Top top() const { return top_; }
  int64_t records() const { return next_index_; }
  bool in_record() const { return depth_ > (top_ == Top::kList ? 1 : 0); }
  bool top_level_scalar() const { return top_level_scalar_; }
  const std::string& scalar_type() const { return scalar_type_; }
  bool has_parse_error() const { return parse_error_; }
  size_t parse_error_position() const { return error_position_; }
  const std::string& parse_error_message() const { return error_message_; }

  bool null() override { return Scalar(json(nullptr)); }
  bool boolean(bool v) override { return Scalar(json(v)); }
  bool number_integer(number_integer_t v) override { return Scalar(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Scalar(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return Scalar(json(v)); }
  bool string(string_t& v) override { return Scalar(json(std::move(v))); }
  bool binary(binary_t&) override { return Scalar(json(nullptr)); }  // not produced by JSON text
  bool start_object(std::size_t) override { return StartContainer(json::value_t::object); }
  bool key(string_t& k) override {
    builder_.Key(k);
    return true;
  }
  bool end_object() override { return EndContainer(); }
  bool start_array(std::size_t) override { return StartContainer(json::value_t::array); }
  bool end_array() override { return EndContainer(); }
  bool parse_error(std::size_t position, const std::string&, const json::exception& ex) override {
    parse_error_ = true;
    error_position_ = position;
    error_message_ = CleanJsonError(ex.what(), /*single_line=*/false);
    return false;
  }

 private:
  bool Scalar(json&& v) {
    if (depth_ == 0) {
      top_level_scalar_ = true;
      scalar_type_ = DescribeJsonType(v);
      return false;
    }
    return builder_.Value(std::move(v)) ? Complete() : true;
  }
  bool StartContainer(json::value_t type) {
    if (depth_++ == 0) {
      top_ = type == json::value_t::array ? Top::kList : Top::kObject;
      if (top_ == Top::kList) return true;  // the list itself is never built
    }
    builder_.Start(type);
    return true;
  }
  bool EndContainer() {
    if (--depth_ == 0 && top_ == Top::kList) return true;
    return builder_.End() ? Complete() : true;
  }
  bool Complete() {
    const int64_t index = top_ == Top::kList ? next_index_ : -1;
    ++next_index_;
    return callback_(builder_.Take(), index);
  }

  Callback callback_;
  JsonBuilder builder_;
  Top top_ = Top::kNone;
  int depth_ = 0;
  int64_t next_index_ = 0;
  bool top_level_scalar_ = false;
  std::string scalar_type_;
  bool parse_error_ = false;
  size_t error_position_ = 0;
  std::string error_message_;
};

Status LoadJsonFile(const std::string& path, LoadContext& ctx) {
  FLOWRAG_ASSIGN_OR_RETURN(FilePtr file, OpenFile(path));
  ++ctx.report().files_read;
  const std::string name = FileName(path);
  constexpr std::string_view kExpected =
      "expected a JSON list of objects with a string \"text\" field, or one such object";

  Status record_error;  // a bad record (not skipped) or the sink's error
  auto on_record = [&](json&& value, int64_t index) {
    const bool in_list = index >= 0;
    const std::string where = in_list ? path + ": record #" + std::to_string(index) : path;
    RawDocument doc;
    Status st = RecordToDocument(std::move(value), where,
                                 in_list ? name + "#" + std::to_string(index) : name, &doc);
    if (!st.ok()) {
      record_error = ctx.BadRecord(std::move(st));
      return record_error.ok();
    }
    doc.source = path;
    doc.line = in_list ? index + 1 : 0;
    record_error = ctx.Emit(std::move(doc));
    return record_error.ok();
  };

  Utf8CheckingBuf buf(file.get(), ctx.replace_utf8());
  std::istream in(&buf);
  JsonRecordHandler handler(on_record);
  bool parsed = false;
  try {
    parsed = json::sax_parse(in, &handler, json::input_format_t::json, /*strict=*/true);
  } catch (const json::exception& e) {
    return Status::InvalidArgument(path + ": invalid JSON (" +
                                   CleanJsonError(e.what(), /*single_line=*/false) +
                                   "): " + std::string(kExpected));
  }
  ctx.NoteReplacements(path, buf.replacements());
  if (!record_error.ok()) return record_error;
  if (buf.read_errno() != 0) return OsError(path, "read failed", buf.read_errno());
  const std::string context = handler.top() == JsonRecordHandler::Top::kList && handler.in_record()
                                  ? " (in record #" + std::to_string(handler.records()) + ")"
                                  : "";
  // An ill-formed byte ends the stream early; report it unless the parser
  // failed on a genuine syntax error before reaching it.
  const bool error_before_bad_byte =
      handler.has_parse_error() && handler.parse_error_position() <= buf.delivered();
  if (buf.bad_utf8() && !error_before_bad_byte) {
    return Status::InvalidArgument(path + ": invalid UTF-8 at byte offset " +
                                   std::to_string(buf.bad_offset()) + context + ": " +
                                   std::string(kUtf8Hint));
  }
  if (!buf.saw_content()) {
    return Status::InvalidArgument(
        path + (buf.raw_bytes() == 0 ? ": file is empty" : ": file is empty (only whitespace)") +
        ": " + std::string(kExpected));
  }
  if (handler.top_level_scalar()) {
    return Status::InvalidArgument(path + ": the top-level value is " + handler.scalar_type() +
                                   ": " + std::string(kExpected));
  }
  if (!parsed || handler.has_parse_error()) {
    return Status::InvalidArgument(path + ": invalid JSON (" + handler.parse_error_message() + ")" +
                                   context + ": " + std::string(kExpected));
  }
  if (handler.top() == JsonRecordHandler::Top::kList && handler.records() == 0) {
    return Status::InvalidArgument(path + ": the JSON list is empty: " + std::string(kExpected));
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Text and markdown files, and directories of them.

// `display` is the path used in messages and RawDocument::source.
Status LoadTextFile(const std::string& display, const std::string& external_id, bool in_directory,
                    LoadContext& ctx) {
  std::string data;
  FLOWRAG_RETURN_IF_ERROR(ReadWholeFile(display, &data));
  ++ctx.report().files_read;
  const size_t bom =
      std::string_view(data).substr(0, kUtf8Bom.size()) == kUtf8Bom ? kUtf8Bom.size() : 0;
  std::string_view body = std::string_view(data).substr(bom);
  if (IsBlank(body)) {
    std::string what = data.empty() ? "file is empty" : "file is empty (only whitespace)";
    if (in_directory) {
      ++ctx.report().skipped_empty_files;
      ctx.Note("skipped: " + display + ": " + what);
      return Status::Ok();
    }
    return Status::InvalidArgument(display + ": " + what + ": expected UTF-8 text");
  }
  std::string text;
  size_t bad = 0;
  if (IsValidUtf8(body, &bad)) {
    data.erase(0, bom);
    text = std::move(data);
  } else {
    if (!ctx.replace_utf8()) {
      return ctx.BadRecord(Status::InvalidArgument(display + ": invalid UTF-8 at byte offset " +
                                                   std::to_string(bom + bad) + ": " +
                                                   std::string(kUtf8Hint)));
    }
    size_t count = 0;
    text = SanitizeUtf8(body, &count);
    ctx.NoteReplacements(display, count);
    if (text.size() > kMaxDocumentBytes) {
      return ctx.BadRecord(Status::InvalidArgument(
          display + ": longer than 4 GiB - 1 bytes after replacing invalid UTF-8"));
    }
  }
  RawDocument doc;
  doc.external_id = external_id;
  doc.title = ExtractMarkdownTitle(text, fs::path(display).stem().string());
  doc.text = std::move(text);
  doc.source = display;
  doc.line = 0;
  return ctx.Emit(std::move(doc));
}

// ---------------------------------------------------------------------------
// PDF and HTML files.

std::string FileStem(const std::string& path) { return fs::path(path).stem().string(); }

Status LoadPdfFile(const std::string& display, const std::string& external_id, bool in_directory,
                   LoadContext& ctx) {
  const LoadOptions& options = ctx.options();
  std::string data;
  Status read = ReadWholeFile(display, &data, options.max_pdf_file_bytes,
                              "a PDF of at most " + std::to_string(options.max_pdf_file_bytes) +
                                  " bytes (LoadOptions::max_pdf_file_bytes)");
  if (read.code() != StatusCode::kInvalidArgument) FLOWRAG_RETURN_IF_ERROR(read);
  if (!read.ok()) return ctx.UnreadableFile(std::move(read), in_directory);
  ++ctx.report().files_read;
  if (data.empty()) {
    if (in_directory) {
      ++ctx.report().skipped_empty_files;
      ctx.Note("skipped: " + display + ": file is empty");
      return Status::Ok();
    }
    return Status::InvalidArgument(display + ": file is empty: expected a PDF");
  }
  Result<PdfText> pdf = ExtractPdfText(data, display, options.pdf);
  data = std::string();  // the text is all that is kept
  if (!pdf.ok()) return ctx.UnreadableFile(pdf.status(), in_directory);
  if (!pdf->empty_pages.empty()) {
    std::string list;
    for (size_t i = 0; i < pdf->empty_pages.size() && i < 10; ++i) {
      list += (i == 0 ? "" : ", ") + std::to_string(pdf->empty_pages[i]);
    }
    if (pdf->empty_pages.size() > 10) list += ", ...";
    const size_t n = pdf->empty_pages.size();
    ctx.Note(display + ": " + std::to_string(n) + " of " + std::to_string(pdf->pages) +
             (n == 1 ? " pages has" : " pages have") + " no text (page" + (n == 1 ? " " : "s ") +
             list + "; images are not read: OCR is not done)");
  }
  RawDocument doc;
  doc.external_id = external_id;
  doc.title = !pdf->title.empty() ? std::move(pdf->title) : FirstLine(pdf->text);
  if (doc.title.empty()) doc.title = FileStem(display);
  doc.text = std::move(pdf->text);
  doc.source = display;
  return ctx.Emit(std::move(doc));
}

Status LoadHtmlFile(const std::string& display, const std::string& external_id, bool in_directory,
                    LoadContext& ctx) {
  const LoadOptions& options = ctx.options();
  std::string data;
  Status read =
      ReadWholeFile(display, &data, options.max_html_file_bytes,
                    "an HTML file of at most " + std::to_string(options.max_html_file_bytes) +
                        " bytes (LoadOptions::max_html_file_bytes)");
  if (read.code() != StatusCode::kInvalidArgument) FLOWRAG_RETURN_IF_ERROR(read);
  if (!read.ok()) return ctx.UnreadableFile(std::move(read), in_directory);
  ++ctx.report().files_read;
  // A byte-order mark (or the zero bytes of UTF-16/32) decides the encoding.
  DecodedText decoded = DecodeUnicodeText(data);
  if (decoded.encoding != TextEncoding::kUtf8 || decoded.bom) data = std::move(decoded.text);
  ctx.NoteReplacements(display, decoded.replaced);
  std::string_view body = data;
  std::string converted;
  size_t bad = 0;
  if (!IsValidUtf8(body, &bad)) {
    const std::string charset = DeclaredHtmlCharset(body);
    if (IsWindows1252Label(charset)) {
      converted = Windows1252ToUtf8(body);
    } else if (!ctx.replace_utf8()) {
      return ctx.BadRecord(Status::InvalidArgument(
          display + ": invalid UTF-8 at byte offset " + std::to_string(bad) +
          (decoded.bom ? " (after the byte order mark)" : "") +
          (charset.empty() ? "" : " (declared charset \"" + charset + "\" is not supported)") +
          ": " + std::string(kUtf8Hint)));
    } else {
      size_t count = 0;
      converted = SanitizeUtf8(body, &count);
      ctx.NoteReplacements(display, count);
    }
    body = converted;
  }
  HtmlText html = ExtractHtmlText(body);
  data = std::string();
  converted = std::string();
  if (IsBlank(html.text)) {
    if (in_directory) {
      ++ctx.report().skipped_empty_files;
      ctx.Note("skipped: " + display + ": no text outside markup");
      return Status::Ok();
    }
    return Status::InvalidArgument(display + ": no text outside markup: expected an HTML page");
  }
  if (html.text.size() > kMaxDocumentBytes) {
    return ctx.UnreadableFile(
        Status::InvalidArgument(display + ": the text is longer than 4 GiB - 1 bytes"),
        in_directory);
  }
  RawDocument doc;
  doc.external_id = external_id;
  doc.title = html.title.empty() ? FileStem(display) : std::move(html.title);
  doc.text = std::move(html.text);
  doc.source = display;
  return ctx.Emit(std::move(doc));
}

// A file of a directory scan, or given directly, by its extension.
Status LoadDocumentFile(const std::string& display, const std::string& external_id,
                        bool in_directory, LoadContext& ctx) {
  const std::string ext = LowerExtension(display);
  if (ext == ".pdf") return LoadPdfFile(display, external_id, in_directory, ctx);
  if (IsHtmlExtension(ext)) return LoadHtmlFile(display, external_id, in_directory, ctx);
  return LoadTextFile(display, external_id, in_directory, ctx);
}

struct DirectoryFile {
  std::string relative;  // '/'-separated, relative to the scanned directory
  std::string path;      // as opened
};

// Lists the text files below `root`, sorted by relative path.
//
// Real directories are walked first (depth-first, in name order); symbolic
// links to directories are queued and followed afterwards, and a directory
// already visited (by its device and inode) is skipped. So the real path of a
// directory wins over any link to it, symlink loops end, and the result does
// not depend on the file system's listing order.
Status ScanDirectory(const std::string& root, LoadContext& ctx, std::vector<DirectoryFile>* files) {
  struct PendingDir {
    fs::path path;
    std::string relative;
  };
  std::set<std::pair<dev_t, ino_t>> visited;
  std::vector<PendingDir> stack{{fs::path(root), ""}};
  std::deque<PendingDir> links;
  while (!stack.empty() || !links.empty()) {
    PendingDir dir;
    if (!stack.empty()) {
      dir = std::move(stack.back());
      stack.pop_back();
    } else {
      dir = std::move(links.front());
      links.pop_front();
    }
    struct stat st;
    if (::stat(dir.path.c_str(), &st) != 0) {
      return OsError(dir.path.string(), "cannot read directory", errno);
    }
    if (!visited.emplace(st.st_dev, st.st_ino).second) {
      ++ctx.report().skipped_links;
      ctx.Note("skipped: " + dir.path.string() +
               ": directory already visited (symbolic link loop or second link)");
      continue;
    }
    std::error_code ec;
    std::vector<std::pair<std::string, fs::path>> entries;
    for (fs::directory_iterator it(dir.path, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (name.empty() || name.front() == '.') continue;  // hidden
      entries.emplace_back(std::move(name), it->path());
    }
    if (ec) return OsError(dir.path.string(), "cannot read directory", ec.value());
    std::sort(entries.begin(), entries.end());
    std::vector<PendingDir> subdirs;
    for (auto& [name, path] : entries) {
      std::string relative = dir.relative.empty() ? name : dir.relative + "/" + name;
      struct stat lst;
      if (::lstat(path.c_str(), &lst) != 0) return OsError(path.string(), "cannot access", errno);
      const bool is_link = S_ISLNK(lst.st_mode);
      if (is_link && ::stat(path.c_str(), &st) != 0) {
        ++ctx.report().skipped_links;
        ctx.Note("skipped: " + path.string() + ": broken symbolic link (" + OsReason(errno) + ")");
        continue;
      }
      if (!is_link) st = lst;
      if (S_ISDIR(st.st_mode)) {
        PendingDir sub{path, std::move(relative)};
        if (is_link) {
          links.push_back(std::move(sub));
        } else {
          subdirs.push_back(std::move(sub));
        }
      } else if (S_ISREG(st.st_mode) && IsDocumentExtension(LowerExtension(name))) {
        files->push_back({std::move(relative), path.string()});
      }
    }
    for (auto it = subdirs.rbegin(); it != subdirs.rend(); ++it) stack.push_back(std::move(*it));
  }
  std::sort(files->begin(), files->end(),
            [](const DirectoryFile& a, const DirectoryFile& b) { return a.relative < b.relative; });
  return Status::Ok();
}

Status LoadDirectory(const std::string& root, LoadContext& ctx) {
  std::vector<DirectoryFile> files;
  FLOWRAG_RETURN_IF_ERROR(ScanDirectory(root, ctx, &files));
  for (DirectoryFile& f : files) {
    FLOWRAG_RETURN_IF_ERROR(LoadDocumentFile(f.path, f.relative, /*in_directory=*/true, ctx));
  }
  return Status::Ok();
}

std::string BenchmarkCorpusPath(const std::string& dir) {
  return (fs::path(dir) / "corpus.jsonl").string();
}

}  // namespace

std::string_view SourceKindName(SourceKind kind) {
  switch (kind) {
    case SourceKind::kDirectory:
      return "directory";
    case SourceKind::kBenchmarkDirectory:
      return "benchmark directory";
    case SourceKind::kJsonl:
      return "jsonl";
    case SourceKind::kJson:
      return "json";
    case SourceKind::kText:
      return "text";
    case SourceKind::kMarkdown:
      return "markdown";
    case SourceKind::kPdf:
      return "pdf";
    case SourceKind::kHtml:
      return "html";
  }
  return "unknown";
}

Result<SourceKind> DetectSourceKind(const std::string& path) {
  struct stat st;
  if (path.empty())
    return Status::InvalidArgument("empty source path: " + std::string(kSupportedTypes));
  if (::stat(path.c_str(), &st) != 0) return OsError(path, "cannot access", errno);
  if (S_ISDIR(st.st_mode)) {
    struct stat corpus;
    if (::stat(BenchmarkCorpusPath(path).c_str(), &corpus) == 0 && S_ISREG(corpus.st_mode)) {
      return SourceKind::kBenchmarkDirectory;
    }
    return SourceKind::kDirectory;
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(
        path + ": neither a regular file nor a directory: " + std::string(kSupportedTypes));
  }
  const std::string ext = LowerExtension(path);
  if (ext == ".jsonl" || ext == ".ndjson") return SourceKind::kJsonl;
  if (ext == ".json") return SourceKind::kJson;
  if (ext == ".txt") return SourceKind::kText;
  if (ext == ".md" || ext == ".markdown") return SourceKind::kMarkdown;
  if (ext == ".pdf") return SourceKind::kPdf;
  if (IsHtmlExtension(ext)) return SourceKind::kHtml;
  if (ext.empty()) {
    return Status::InvalidArgument(path + ": no file extension: " + std::string(kSupportedTypes));
  }
  return Status::InvalidArgument(path + ": unsupported file type \"" + ext +
                                 "\": " + std::string(kSupportedTypes));
}

Status LoadSource(const std::string& path, const LoadOptions& options, const DocumentSink& sink,
                  LoadReport* report) {
  LoadReport local;
  LoadReport& rep = report != nullptr ? *report : local;
  rep = LoadReport{};
  LoadContext ctx(options, sink, rep);
  try {
    FLOWRAG_ASSIGN_OR_RETURN(SourceKind kind, DetectSourceKind(path));
    switch (kind) {
      case SourceKind::kDirectory:
        return LoadDirectory(path, ctx);
      case SourceKind::kBenchmarkDirectory:
        return LoadJsonlFile(BenchmarkCorpusPath(path), ctx);
      case SourceKind::kJsonl:
        return LoadJsonlFile(path, ctx);
      case SourceKind::kJson:
        return LoadJsonFile(path, ctx);
      case SourceKind::kText:
      case SourceKind::kMarkdown:
        return LoadTextFile(path, FileName(path), /*in_directory=*/false, ctx);
      case SourceKind::kPdf:
        return LoadPdfFile(path, FileName(path), /*in_directory=*/false, ctx);
      case SourceKind::kHtml:
        return LoadHtmlFile(path, FileName(path), /*in_directory=*/false, ctx);
    }
    return Status::Internal(path + ": unhandled source kind");
  } catch (const std::exception& e) {
    // Out of memory, or an exception thrown by the sink.
    return Status::Internal(path + ": unexpected exception while loading: " + e.what());
  }
}

Result<std::vector<RawDocument>> LoadAll(const std::string& path, const LoadOptions& options,
                                         LoadReport* report) {
  std::vector<RawDocument> docs;
  Status st = LoadSource(
      path, options,
      [&docs](RawDocument&& doc) {
        docs.push_back(std::move(doc));
        return Status::Ok();
      },
      report);
  if (!st.ok()) return st;
  return docs;
}

std::string ExtractMarkdownTitle(std::string_view text, std::string_view fallback) {
  char fence = 0;  // '`' or '~' while inside a fenced code block
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    size_t indent = 0;
    while (indent < line.size() && indent < 4 && line[indent] == ' ') ++indent;
    if (indent > 3) continue;  // indented code
    line.remove_prefix(indent);
    if (line.size() >= 3 && (line[0] == '`' || line[0] == '~') && line[1] == line[0] &&
        line[2] == line[0]) {
      if (fence == 0) {
        fence = line[0];
      } else if (fence == line[0]) {
        fence = 0;
      }
      continue;
    }
    if (fence != 0) continue;
    if (line.empty() || line[0] != '#') continue;
    if (line.size() > 1 && line[1] != ' ' && line[1] != '\t' && line[1] != '\r') continue;
    std::string_view title = TrimAscii(line.substr(1));
    // Optional closing sequence: " ###".
    size_t hashes = title.size();
    while (hashes > 0 && title[hashes - 1] == '#') --hashes;
    if (hashes == 0) {
      title = {};
    } else if (hashes < title.size() && (title[hashes - 1] == ' ' || title[hashes - 1] == '\t')) {
      title = TrimAscii(title.substr(0, hashes));
    }
    if (!title.empty()) return std::string(title);
  }
  return std::string(fallback);
}

}  // namespace flowrag
