#include "extract/openie_import.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <istream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <streambuf>
#include <system_error>
#include <unordered_set>
#include <utility>

#include "common/file_reader.h"
#include "common/json_builder.h"
#include "common/json_errors.h"
#include "common/text.h"

namespace flowrag {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
constexpr std::string_view kAnyFormat =
    "expected an OpenIE results file (a benchmark openie.jsonl or a HippoRAG "
    "openie_results_ner_*.json)";
constexpr std::string_view kJsonlExpected =
    "expected one JSON object per line {\"id\", \"entities\", \"triples\"}";
constexpr std::string_view kHippoRagExpected =
    "expected a HippoRAG OpenIE results object {\"docs\": [{\"passage\", \"extracted_entities\", "
    "\"extracted_triples\"}, ...]}";

// ---------------------------------------------------------------------------
// Small helpers.

bool IsAsciiBlank(std::string_view s) { return std::all_of(s.begin(), s.end(), IsAsciiSpace); }

std::string_view TrimAscii(std::string_view s) {
  while (!s.empty() && IsAsciiSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsAsciiSpace(s.back())) s.remove_suffix(1);
  return s;
}

// 'x' for a printable ASCII byte, else byte 0xNN.
std::string DescribeByte(int c) {
  if (c >= 0x20 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
  char buf[16];
  std::snprintf(buf, sizeof(buf), "byte 0x%02X", static_cast<unsigned>(c) & 0xFFu);
  return buf;
}

// A string for a message: quoted, cut to 80 bytes (at a UTF-8 boundary).
std::string QuoteForMessage(std::string_view s) {
  constexpr size_t kMax = 80;
  if (s.size() <= kMax) return "\"" + std::string(s) + "\"";
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return "\"" + std::string(s.substr(0, cut)) + "...\"";
}

// ---------------------------------------------------------------------------
// Python's json.dump writes NaN, Infinity and -Infinity, which are not JSON.
// Outside strings no JSON token starts with 'N' or 'I', so these are rewritten
// as null without changing the meaning of anything valid.

class NonFiniteFilter {
 public:
  // Appends the filtered form of `in` to `out`; a token split across calls is
  // held back until it is complete or ruled out.
  void Feed(std::string_view in, std::string* out) {
    for (char c : in) Put(c, out);
  }
  // Flushes a held-back partial token (the input ended inside it).
  void Finish(std::string* out) {
    out->append(pending_);
    pending_.clear();
  }
  int64_t replaced() const { return replaced_; }

 private:
  static constexpr std::string_view kTokens[] = {"NaN", "Infinity", "-Infinity"};

  void Put(char c, std::string* out) {
    if (!pending_.empty()) {
      bool prefix = false;
      for (std::string_view t : kTokens) {
        if (t.size() > pending_.size() && t.substr(0, pending_.size()) == pending_ &&
            t[pending_.size()] == c) {
          prefix = true;
          if (t.size() == pending_.size() + 1) {
            out->append("null");
            pending_.clear();
            ++replaced_;
            return;
          }
        }
      }
      if (prefix) {
        pending_.push_back(c);
        return;
      }
      out->append(pending_);
      pending_.clear();
    }
    if (in_string_) {
      out->push_back(c);
      if (escape_) {
        escape_ = false;
      } else if (c == '\\') {
        escape_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      return;
    }
    if (c == 'N' || c == 'I' || c == '-') {
      pending_.assign(1, c);
      return;
    }
    if (c == '"') in_string_ = true;
    out->push_back(c);
  }

  bool in_string_ = false;
  bool escape_ = false;
  std::string pending_;  // a proper prefix of one of kTokens
  int64_t replaced_ = 0;
};

// A read-only streambuf over a FILE that applies NonFiniteFilter.
class NonFiniteFilterBuf : public std::streambuf {
 public:
  explicit NonFiniteFilterBuf(std::FILE* file) : file_(file) {}

  int read_errno() const { return read_errno_; }
  int64_t replaced() const { return filter_.replaced(); }
  bool saw_content() const { return saw_content_; }  // a non-whitespace byte was delivered

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    out_.clear();
    while (out_.empty()) {
      if (read_errno_ != 0) return traits_type::eof();
      if (eof_) {
        if (finished_) return traits_type::eof();
        filter_.Finish(&out_);
        finished_ = true;
        continue;
      }
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
      filter_.Feed(std::string_view(block_.data(), n), &out_);
    }
    if (!saw_content_) {
      std::string_view view = out_;
      if (at_start_ && view.substr(0, kUtf8Bom.size()) == kUtf8Bom) {
        view.remove_prefix(kUtf8Bom.size());
      }
      saw_content_ = !IsAsciiBlank(view);
    }
    at_start_ = false;
    setg(out_.data(), out_.data(), out_.data() + out_.size());
    return traits_type::to_int_type(*gptr());
  }

 private:
  static constexpr size_t kBlock = 1 << 16;
  std::FILE* file_;
  NonFiniteFilter filter_;
  std::string block_;
  std::string out_;  // the get area
  int read_errno_ = 0;
  bool eof_ = false;
  bool finished_ = false;
  bool at_start_ = true;
  bool saw_content_ = false;
};

// ---------------------------------------------------------------------------
// Records.

// The field names of one format.
struct RecordFields {
  std::string_view key;       // "id" or "passage"
  std::string_view entities;  // "entities" or "extracted_entities"
  std::string_view triples;   // "triples" or "extracted_triples"
  bool key_is_text;
  std::string_view shape;  // the expected object, for messages
};

constexpr RecordFields kBenchmarkFields = {"id", "entities", "triples", false,
                                           "{\"id\", \"entities\", \"triples\"}"};
constexpr RecordFields kHippoRagFields = {
    "passage", "extracted_entities", "extracted_triples", true,
    "{\"passage\", \"extracted_entities\", \"extracted_triples\"}"};

// Counts and notes of one record, merged into the report only when the
// record is accepted.
struct RecordTally {
  int64_t entities_read = 0;
  int64_t empty_entities = 0;
  int64_t duplicate_entities = 0;
  int64_t triples_read = 0;
  int64_t triples_rejected = 0;
  int64_t duplicate_triples = 0;
  std::vector<std::string> notes;
};

Status ParseKey(json& value, const RecordFields& f, const std::string& where, OpenIeRecord* rec) {
  const std::string name = "\"" + std::string(f.key) + "\"";
  const std::string expected = f.key_is_text
                                   ? "expected a non-empty string (the passage text)"
                                   : "expected a non-empty string or an integer (the corpus id)";
  auto it = value.find(f.key);
  if (it == value.end() || it->is_null()) {
    return Status::InvalidArgument(where + ": missing " + name + ": " + expected);
  }
  if (it->is_string()) {
    std::string& s = it->get_ref<std::string&>();
    if (f.key_is_text ? IsAsciiBlank(s) : s.empty()) {
      return Status::InvalidArgument(
          where + ": " + name + (s.empty() ? " is an empty string: " : " is blank: ") + expected);
    }
    rec->passage_key = std::move(s);
  } else if (!f.key_is_text && it->is_number_integer()) {  // signed or unsigned
    rec->passage_key = it->dump();
  } else {
    return Status::InvalidArgument(where + ": " + name + " is " + DescribeJsonType(*it, "a list") + ": " +
                                   expected);
  }
  rec->key_is_text = f.key_is_text;
  if (f.key_is_text) {
    if (auto idx = value.find("idx"); idx != value.end()) {
      if (idx->is_string()) {
        rec->idx = idx->get<std::string>();
      } else if (idx->is_number_integer()) {
        rec->idx = idx->dump();
      }
    }
  }
  return Status::Ok();
}

Status ParseEntities(json& value, const RecordFields& f, const std::string& where,
                     OpenIeRecord* rec, RecordTally* tally) {
  const std::string name = "\"" + std::string(f.entities) + "\"";
  auto it = value.find(f.entities);
  if (it == value.end()) {
    return Status::InvalidArgument(where + ": missing " + name + ": expected a list of strings");
  }
  if (!it->is_array()) {
    return Status::InvalidArgument(where + ": " + name + " is " + DescribeJsonType(*it, "a list") +
                                   ": expected a list of strings");
  }
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < it->size(); ++i) {
    json& e = (*it)[i];
    ++tally->entities_read;
    const std::string place = name + "[" + std::to_string(i) + "]";
    if (!e.is_string()) {
      return Status::InvalidArgument(where + ": " + place + " is " + DescribeJsonType(e, "a list") +
                                     ": expected a string");
    }
    const std::string_view trimmed = TrimAscii(e.get_ref<const std::string&>());
    if (trimmed.empty()) {
      ++tally->empty_entities;
      tally->notes.push_back(where + ": " + place + " is empty: entity dropped");
      continue;
    }
    if (!seen.emplace(trimmed).second) {
      ++tally->duplicate_entities;
      continue;
    }
    rec->entities.emplace_back(trimmed);
  }
  return Status::Ok();
}

// Why triple `t` is rejected, or "" when it is a list of three strings.
std::string TripleShapeProblem(const json& t) {
  if (!t.is_array()) return "is " + DescribeJsonType(t, "a list");
  if (t.size() != 3) {
    return "has " + std::to_string(t.size()) + (t.size() == 1 ? " element" : " elements");
  }
  for (size_t j = 0; j < 3; ++j) {
    if (!t[j].is_string()) return "[" + std::to_string(j) + "] is " + DescribeJsonType(t[j], "a list");
  }
  return "";
}

Status ParseTriples(json& value, const RecordFields& f, const std::string& where, OpenIeRecord* rec,
                    RecordTally* tally) {
  const std::string name = "\"" + std::string(f.triples) + "\"";
  auto it = value.find(f.triples);
  if (it == value.end()) {
    return Status::InvalidArgument(where + ": missing " + name +
                                   ": expected a list of [subject, relation, object] lists");
  }
  if (!it->is_array()) {
    return Status::InvalidArgument(where + ": " + name + " is " + DescribeJsonType(*it, "a list") +
                                   ": expected a list of [subject, relation, object] lists");
  }
  std::set<std::array<std::string, 3>> seen;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& t = (*it)[i];
    ++tally->triples_read;
    const std::string place = name + "[" + std::to_string(i) + "]";
    std::string problem = TripleShapeProblem(t);
    std::array<std::string, 3> triple;
    if (problem.empty()) {
      for (size_t j = 0; j < 3; ++j) triple[j] = TrimAscii(t[j].get_ref<const std::string&>());
      if (triple[0].empty()) {
        problem = "has an empty subject";
      } else if (triple[2].empty()) {
        problem = "has an empty object";
      }
    }
    if (!problem.empty()) {
      ++tally->triples_rejected;
      tally->notes.push_back(where + ": " + place + " " + problem +
                             ": expected [subject, relation, object], three strings with a "
                             "non-empty subject and object (triple rejected)");
      continue;
    }
    if (!seen.insert(triple).second) {
      ++tally->duplicate_triples;
      continue;
    }
    rec->triples.push_back(std::move(triple));
  }
  return Status::Ok();
}

// Validates one record (see the header). A non-OK result is a record error.
Status ParseRecord(json& value, const RecordFields& f, const std::string& where, OpenIeRecord* rec,
                   RecordTally* tally) {
  if (!value.is_object()) {
    return Status::InvalidArgument(where + ": expected a JSON object " + std::string(f.shape) +
                                   ", got " + DescribeJsonType(value, "a list"));
  }
  FLOWRAG_RETURN_IF_ERROR(ParseKey(value, f, where, rec));
  FLOWRAG_RETURN_IF_ERROR(ParseEntities(value, f, where, rec, tally));
  return ParseTriples(value, f, where, rec, tally);
}

// State shared by the two format readers.
class ReadContext {
 public:
  ReadContext(const OpenIeReadOptions& options, const OpenIeSink& sink, OpenIeReport& report)
      : options_(options), sink_(sink), report_(report) {}

  OpenIeReport& report() { return report_; }

  void Note(std::string message) {
    if (report_.messages.size() < options_.max_report_messages) {
      report_.messages.push_back(std::move(message));
    }
  }

  // For a malformed record: OK (counted and noted) when skipping, else `error`.
  Status BadRecord(Status error) {
    if (!options_.skip_bad_records) return error;
    ++report_.records_skipped;
    Note("skipped: " + error.message());
    return Status::Ok();
  }

  // Rejects a repeated passage key, merges the tally and hands the record to
  // the sink (whose error is returned unchanged).
  Status Accept(OpenIeRecord&& rec, RecordTally&& tally, const std::string& where) {
    auto [it, inserted] = seen_keys_.try_emplace(rec.passage_key, rec.line_or_index);
    if (!inserted) {
      const std::string first = rec.key_is_text ? "docs[" + std::to_string(it->second) + "]"
                                                : "line " + std::to_string(it->second);
      const std::string what = rec.key_is_text ? "duplicate passage text"
                                               : "duplicate id " + QuoteForMessage(rec.passage_key);
      return BadRecord(Status::InvalidArgument(where + ": " + what + ", first at " + first +
                                               ": expected one record per passage"));
    }
    report_.entities_read += tally.entities_read;
    report_.entities_kept += static_cast<int64_t>(rec.entities.size());
    report_.empty_entities_dropped += tally.empty_entities;
    report_.duplicate_entities_removed += tally.duplicate_entities;
    report_.triples_read += tally.triples_read;
    report_.triples_kept += static_cast<int64_t>(rec.triples.size());
    report_.triples_rejected += tally.triples_rejected;
    report_.duplicate_triples_removed += tally.duplicate_triples;
    for (std::string& note : tally.notes) Note(std::move(note));
    FLOWRAG_RETURN_IF_ERROR(sink_(std::move(rec)));
    ++report_.records_delivered;
    return Status::Ok();
  }

  // Validates `value` and accepts it, or handles the record error.
  Status Record(json&& value, const RecordFields& f, const std::string& where,
                int64_t line_or_index) {
    OpenIeRecord rec;
    RecordTally tally;
    Status st = ParseRecord(value, f, where, &rec, &tally);
    if (!st.ok()) return BadRecord(std::move(st));
    rec.line_or_index = line_or_index;
    return Accept(std::move(rec), std::move(tally), where);
  }

 private:
  const OpenIeReadOptions& options_;
  const OpenIeSink& sink_;
  OpenIeReport& report_;
  std::unordered_map<std::string, int64_t> seen_keys_;  // passage key → first line or index
};

// ---------------------------------------------------------------------------
// Benchmark JSONL.

Status ReadBenchmarkJsonl(const std::string& path, ReadContext& ctx) {
  FLOWRAG_ASSIGN_OR_RETURN(FilePtr file, OpenFile(path));
  LineReader reader(file.get());
  std::string_view line;
  int64_t line_no = 0;
  bool saw_record = false;
  std::string filtered;
  while (reader.Next(&line)) {
    ++line_no;
    if (line_no == 1 && line.substr(0, kUtf8Bom.size()) == kUtf8Bom) {
      line.remove_prefix(kUtf8Bom.size());
    }
    if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (IsAsciiBlank(line)) continue;
    saw_record = true;
    ++ctx.report().records_read;
    const std::string where = path + ":" + std::to_string(line_no);
    if (line.find("NaN") != std::string_view::npos ||
        line.find("Infinity") != std::string_view::npos) {
      NonFiniteFilter filter;
      filtered.clear();
      filter.Feed(line, &filtered);
      filter.Finish(&filtered);
      ctx.report().nonfinite_numbers_replaced += filter.replaced();
      line = filtered;
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
    FLOWRAG_RETURN_IF_ERROR(ctx.Record(std::move(value), kBenchmarkFields, where, line_no));
  }
  if (reader.error() != 0) return OsError(path, "read failed", reader.error());
  if (!saw_record) {
    return Status::InvalidArgument(
        path + (line_no == 0 ? ": file is empty" : ": file is empty (only blank lines)") + ": " +
        std::string(kJsonlExpected));
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// HippoRAG JSON: streamed into a SAX handler that materialises one "docs"
// element at a time and skips every other field.

class HippoRagHandler : public nlohmann::json_sax<json> {
 public:
  // Receives each "docs" element with its index; returns false to stop.
  using Callback = std::function<bool(json&&, int64_t index)>;

  explicit HippoRagHandler(Callback callback) : callback_(std::move(callback)) {}

  bool saw_docs() const { return saw_docs_; }
  int64_t docs() const { return next_index_; }
  bool in_doc() const { return builder_.active(); }
  // A structural problem ("docs" is not a list, the top is not an object): "" if none.
  const std::string& shape_error() const { return shape_error_; }
  bool has_parse_error() const { return parse_error_; }
  const std::string& parse_error_message() const { return parse_error_message_; }

  bool null() override { return Scalar(json(nullptr)); }
  bool boolean(bool v) override { return Scalar(json(v)); }
  bool number_integer(number_integer_t v) override { return Scalar(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Scalar(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return Scalar(json(v)); }
  bool string(string_t& v) override { return Scalar(json(std::move(v))); }
  bool binary(binary_t&) override { return Scalar(json(nullptr)); }  // not produced by JSON text
  bool start_object(std::size_t) override { return Start(json::value_t::object); }
  bool key(string_t& k) override {
    if (builder_.active()) {
      builder_.Key(k);
    } else if (depth_ == 1) {
      top_key_ = std::move(k);
    }
    return true;
  }
  bool end_object() override { return End(); }
  bool start_array(std::size_t) override { return Start(json::value_t::array); }
  bool end_array() override { return End(); }
  bool parse_error(std::size_t, const std::string&, const json::exception& ex) override {
    parse_error_ = true;
    parse_error_message_ = CleanJsonError(ex.what(), /*single_line=*/false);
    return false;
  }

 private:
  // Depth 0: the top-level value; depth 1: fields of the top-level object;
  // depth 2 inside "docs": its elements.
  bool AtDocsField() const { return depth_ == 1 && top_key_ == "docs"; }
  bool AtDocElement() const { return depth_ == 2 && in_docs_; }

  bool ShapeError(const std::string& what) {
    shape_error_ = what;
    return false;
  }

  bool Scalar(json&& v) {
    if (builder_.active()) return builder_.Value(std::move(v)) ? Complete() : true;
    if (depth_ == 0) return ShapeError("the top-level value is " + DescribeJsonType(v, "a list"));
    if (AtDocsField()) return ShapeError("\"docs\" is " + DescribeJsonType(v, "a list"));
    if (AtDocElement()) {
      builder_.Value(std::move(v));
      return Complete();
    }
    return true;  // another field: ignored
  }

  bool Start(json::value_t type) {
    if (builder_.active()) {
      builder_.Start(type);
      ++depth_;
      return true;
    }
    if (depth_ == 0 && type != json::value_t::object) {
      return ShapeError("the top-level value is a list");
    }
    if (AtDocsField()) {
      if (type != json::value_t::array) return ShapeError("\"docs\" is an object");
      if (saw_docs_) return ShapeError("\"docs\" appears twice");
      saw_docs_ = true;
      in_docs_ = true;
    } else if (AtDocElement()) {
      builder_.Start(type);
    }
    ++depth_;
    return true;
  }

  bool End() {
    --depth_;
    if (builder_.active()) return builder_.End() ? Complete() : true;
    if (depth_ == 1 && in_docs_) in_docs_ = false;
    return true;
  }

  bool Complete() { return callback_(builder_.Take(), next_index_++); }

  Callback callback_;
  JsonBuilder builder_;
  int depth_ = 0;
  std::string top_key_;
  bool in_docs_ = false;
  bool saw_docs_ = false;
  int64_t next_index_ = 0;
  std::string shape_error_;
  bool parse_error_ = false;
  std::string parse_error_message_;
};

Status ReadHippoRagJson(const std::string& path, ReadContext& ctx) {
  FLOWRAG_ASSIGN_OR_RETURN(FilePtr file, OpenFile(path));
  Status record_error;  // a bad record (not skipped) or the sink's error
  auto on_doc = [&](json&& value, int64_t index) {
    ++ctx.report().records_read;
    const std::string where = path + ": docs[" + std::to_string(index) + "]";
    record_error = ctx.Record(std::move(value), kHippoRagFields, where, index);
    return record_error.ok();
  };
  NonFiniteFilterBuf buf(file.get());
  std::istream in(&buf);
  HippoRagHandler handler(on_doc);
  bool parsed = false;
  std::string thrown;
  try {
    parsed = json::sax_parse(in, &handler, json::input_format_t::json, /*strict=*/true);
  } catch (const json::exception& e) {
    thrown = CleanJsonError(e.what(), /*single_line=*/false);
  }
  ctx.report().nonfinite_numbers_replaced += buf.replaced();
  if (!record_error.ok()) return record_error;
  if (buf.read_errno() != 0) return OsError(path, "read failed", buf.read_errno());
  if (!buf.saw_content()) {
    return Status::InvalidArgument(path + ": file is empty: " + std::string(kHippoRagExpected));
  }
  if (!handler.shape_error().empty()) {
    return Status::InvalidArgument(path + ": " + handler.shape_error() + ": " +
                                   std::string(kHippoRagExpected));
  }
  if (!parsed || handler.has_parse_error() || !thrown.empty()) {
    const std::string context =
        handler.in_doc() ? " (in docs[" + std::to_string(handler.docs()) + "])" : "";
    return Status::InvalidArgument(path + ": invalid JSON (" +
                                   (thrown.empty() ? handler.parse_error_message() : thrown) + ")" +
                                   context + ": " + std::string(kHippoRagExpected));
  }
  if (!handler.saw_docs()) {
    return Status::InvalidArgument(path + ": missing \"docs\": " + std::string(kHippoRagExpected));
  }
  if (handler.docs() == 0) {
    return Status::InvalidArgument(path + ": \"docs\" is empty: expected one entry per passage");
  }
  return Status::Ok();
}

// Reads the first non-whitespace byte after an optional BOM (EOF when none),
// and, when it is '{', the first key if it is a plain string of at most 64
// bytes ("" otherwise).
struct Sniff {
  int first = EOF;
  std::string first_key;
  bool any_bytes = false;
};

Result<Sniff> SniffFile(const std::string& path) {
  FLOWRAG_ASSIGN_OR_RETURN(FilePtr file, OpenFile(path));
  std::FILE* f = file.get();
  Sniff sniff;
  auto next_non_space = [f]() {
    int c;
    do {
      c = std::getc(f);
    } while (c != EOF && IsAsciiSpace(static_cast<char>(c)));
    return c;
  };
  errno = 0;
  int c = std::getc(f);
  sniff.any_bytes = c != EOF;
  if (c == 0xEF) {  // a BOM, or not UTF-8 text at all
    const int c2 = std::getc(f);
    const int c3 = c2 == 0xBB ? std::getc(f) : EOF;
    if (c2 == 0xBB && c3 == 0xBF) c = std::getc(f);
  }
  if (c != EOF && IsAsciiSpace(static_cast<char>(c))) c = next_non_space();
  sniff.first = c;
  if (c == '{' && next_non_space() == '"') {
    std::string key;
    while ((c = std::getc(f)) != EOF && c != '"' && c != '\\' && key.size() <= 64) {
      key.push_back(static_cast<char>(c));
    }
    if (c == '"') sniff.first_key = std::move(key);
  }
  if (std::ferror(f)) return OsError(path, "read failed", errno != 0 ? errno : EIO);
  return sniff;
}

}  // namespace

// ---------------------------------------------------------------------------
// Public API.

std::string_view OpenIeFormatName(OpenIeFormat format) {
  switch (format) {
    case OpenIeFormat::kBenchmarkJsonl:
      return "benchmark-jsonl";
    case OpenIeFormat::kHippoRagJson:
      return "hipporag-json";
  }
  return "unknown";
}

Result<OpenIeFormat> DetectOpenIeFormat(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return OsError(path, "cannot access", errno);
  if (S_ISDIR(st.st_mode)) {
    const std::string inside = (fs::path(path) / "openie.jsonl").string();
    std::error_code ec;
    const bool has_openie = fs::is_regular_file(inside, ec);
    return Status::InvalidArgument(path + ": is a directory: " + std::string(kAnyFormat) +
                                   (has_openie ? " (did you mean " + inside + "?)" : ""));
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(path + ": not a regular file: " + std::string(kAnyFormat));
  }
  FLOWRAG_ASSIGN_OR_RETURN(Sniff sniff, SniffFile(path));
  if (sniff.first == EOF) {
    return Status::InvalidArgument(
        path + (sniff.any_bytes ? ": file is empty (only whitespace)" : ": file is empty") + ": " +
        std::string(kAnyFormat));
  }
  const std::string ext = LowerExtension(path);
  if (ext == ".jsonl" || ext == ".ndjson") return OpenIeFormat::kBenchmarkJsonl;
  if (ext == ".json") {
    if (sniff.first != '{') {
      return Status::InvalidArgument(path + ": starts with " + DescribeByte(sniff.first) + ": " +
                                     std::string(kHippoRagExpected));
    }
    return OpenIeFormat::kHippoRagJson;
  }
  if (sniff.first != '{') {
    return Status::InvalidArgument(path + ": unknown format (extension \"" + ext +
                                   "\", content starts with " + DescribeByte(sniff.first) + "): " +
                                   std::string(kAnyFormat) + ", both of which start with '{'");
  }
  return sniff.first_key == "docs" ? OpenIeFormat::kHippoRagJson : OpenIeFormat::kBenchmarkJsonl;
}

Status ReadOpenIe(const std::string& path, const OpenIeReadOptions& options, const OpenIeSink& sink,
                  OpenIeReport* report) {
  OpenIeReport local;
  OpenIeReport& r = report != nullptr ? *report : local;
  r = OpenIeReport();
  OpenIeFormat format;
  if (options.format.has_value()) {
    format = *options.format;
  } else {
    FLOWRAG_ASSIGN_OR_RETURN(format, DetectOpenIeFormat(path));
  }
  ReadContext ctx(options, sink, r);
  switch (format) {
    case OpenIeFormat::kBenchmarkJsonl:
      return ReadBenchmarkJsonl(path, ctx);
    case OpenIeFormat::kHippoRagJson:
      return ReadHippoRagJson(path, ctx);
  }
  return Status::Internal("unknown OpenIeFormat");
}

Result<std::vector<OpenIeRecord>> ReadAllOpenIe(const std::string& path,
                                                const OpenIeReadOptions& options,
                                                OpenIeReport* report) {
  std::vector<OpenIeRecord> records;
  FLOWRAG_RETURN_IF_ERROR(ReadOpenIe(
      path, options,
      [&records](OpenIeRecord&& rec) {
        records.push_back(std::move(rec));
        return Status::Ok();
      },
      report));
  return records;
}

void AddTitleEntity(std::string_view title, PassageExtraction* ex) {
  const std::string key = EntityKey(title);
  if (key.empty()) return;
  auto& entities = ex->entities;
  auto it = std::find_if(entities.begin(), entities.end(),
                         [&](const ExtractedEntity& e) { return EntityKey(e.name) == key; });
  ExtractedEntity title_entity;
  if (it != entities.end()) {
    title_entity = std::move(*it);
    entities.erase(it);
  } else {
    title_entity.name = std::string(title);
  }
  title_entity.type = "TITLE";
  title_entity.defining = true;
  entities.insert(entities.begin(), std::move(title_entity));
}

PassageExtraction ToExtraction(const OpenIeRecord& record, int64_t passage_id,
                               OpenIeReport* report) {
  OpenIeReport local;
  OpenIeReport& r = report != nullptr ? *report : local;
  PassageExtraction out;
  out.passage_id = passage_id;
  std::unordered_map<std::string, size_t> by_name;  // entity name or alias → entity index
  std::unordered_map<std::string, size_t> by_key;   // EntityKey → first entity with it

  auto add_entity = [&](std::string_view name) {
    const size_t index = out.entities.size();
    ExtractedEntity& e = out.entities.emplace_back();
    e.name = std::string(name);
    e.defining = true;
    by_name.emplace(e.name, index);
    if (std::string key = EntityKey(name); !key.empty()) by_key.emplace(std::move(key), index);
  };
  for (const std::string& raw : record.entities) {
    const std::string_view name = TrimAscii(raw);
    if (name.empty()) {
      ++r.empty_entities_dropped;
    } else if (by_name.count(std::string(name)) != 0) {
      ++r.duplicate_entities_removed;
    } else {
      add_entity(name);
    }
  }

  // Makes `name` an entity name or alias of `out`.
  auto resolve = [&](const std::string& name) {
    if (by_name.count(name) != 0) return;
    const std::string key = EntityKey(name);
    if (auto it = key.empty() ? by_key.end() : by_key.find(key); it != by_key.end()) {
      out.entities[it->second].aliases.push_back(name);
      by_name.emplace(name, it->second);
      ++r.aliases_added_from_triples;
      return;
    }
    add_entity(name);
    ++r.entities_added_from_triples;
  };
  std::set<std::array<std::string, 3>> seen;
  for (const std::array<std::string, 3>& t : record.triples) {
    std::array<std::string, 3> triple = {std::string(TrimAscii(t[0])), std::string(TrimAscii(t[1])),
                                         std::string(TrimAscii(t[2]))};
    if (triple[0].empty() || triple[2].empty()) {
      ++r.triples_rejected;
      continue;
    }
    if (!seen.insert(triple).second) {
      ++r.duplicate_triples_removed;
      continue;
    }
    resolve(triple[0]);
    resolve(triple[2]);
    out.triples.push_back(
        ExtractedTriple{std::move(triple[0]), std::move(triple[1]), std::move(triple[2])});
  }
  return out;
}

std::string NormalizeWhitespace(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (char c : text) {
    if (IsAsciiSpace(c)) {
      pending_space = true;
      continue;
    }
    if (pending_space && !out.empty()) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

void OpenIePassageMatcher::AddTo(Index& index, std::string key, size_t slot) {
  if (key.empty()) return;
  std::vector<size_t>& slots = index[std::move(key)];
  if (slots.empty() || slots.back() != slot) slots.push_back(slot);
}

void OpenIePassageMatcher::AddPassage(int64_t passage_id, std::string_view key,
                                      std::string_view title, std::string_view text) {
  const size_t slot = passages_.size();
  passages_.push_back(Passage{passage_id, false});
  AddTo(by_key_, std::string(key), slot);
  AddTo(by_text_, std::string(text), slot);
  AddTo(by_normalized_text_, NormalizeWhitespace(text), slot);
  if (!title.empty()) {
    std::string combined;
    combined.reserve(title.size() + 1 + text.size());
    combined.append(title).append("\n").append(text);
    AddTo(by_normalized_text_, NormalizeWhitespace(combined), slot);
    AddTo(by_text_, std::move(combined), slot);
  }
}

OpenIePassageMatcher::Match OpenIePassageMatcher::Take(const std::vector<size_t>& slots,
                                                       MatchKind kind) {
  Match m;
  m.kind = kind;
  for (size_t slot : slots) {
    passages_[slot].matched = true;
    m.passage_ids.push_back(passages_[slot].id);
  }
  return m;
}

OpenIePassageMatcher::Match OpenIePassageMatcher::Find(const OpenIeRecord& record) {
  if (!record.key_is_text) {
    if (auto it = by_key_.find(record.passage_key); it != by_key_.end()) {
      return Take(it->second, MatchKind::kKey);
    }
    return Match{};
  }
  if (auto it = by_text_.find(record.passage_key); it != by_text_.end()) {
    return Take(it->second, MatchKind::kExactText);
  }
  if (auto it = by_normalized_text_.find(NormalizeWhitespace(record.passage_key));
      it != by_normalized_text_.end()) {
    return Take(it->second, MatchKind::kNormalizedText);
  }
  return Match{};
}

std::vector<int64_t> OpenIePassageMatcher::UnmatchedPassages() const {
  std::vector<int64_t> ids;
  for (const Passage& p : passages_) {
    if (!p.matched) ids.push_back(p.id);
  }
  return ids;
}

}  // namespace flowrag
