#include "schema/json_records.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/encoding.h"
#include "common/json_errors.h"
#include "common/text.h"

namespace flowrag {
namespace {

using Json = nlohmann::json;

Status Flatten(const Json& v, const std::string& path, size_t depth, const JsonReadOptions& o,
               const std::string& where, FlatRecord* out) {
  if (depth > o.max_depth) {
    return Status::InvalidArgument(where + ": nested deeper than " + std::to_string(o.max_depth) +
                                   " levels at \"" + EscapeForMessage(path) + "\"");
  }
  switch (v.type()) {
    case Json::value_t::object:
      for (const auto& [k, member] : v.items()) {
        FLOWRAG_RETURN_IF_ERROR(
            Flatten(member, path.empty() ? k : path + "." + k, depth + 1, o, where, out));
      }
      return Status::Ok();
    case Json::value_t::array:
      for (const Json& e : v)
        FLOWRAG_RETURN_IF_ERROR(Flatten(e, path + "[*]", depth + 1, o, where, out));
      return Status::Ok();
    case Json::value_t::null:
      out->values.emplace_back(path, "");
      return Status::Ok();
    case Json::value_t::string:
      out->values.emplace_back(path, v.get<std::string>());
      return Status::Ok();
    default:
      out->values.emplace_back(path, v.dump());
      return Status::Ok();
  }
}

// 1-based line where each element of the top-level array of `text` (valid
// JSON) starts.
std::vector<int64_t> ElementLines(std::string_view text) {
  std::vector<int64_t> lines;
  int64_t line = 1;
  int depth = 0;
  bool in_string = false, escaped = false, expect_element = false;
  for (char ch : text) {
    if (ch == '\n') ++line;
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (ch == '\\') {
        escaped = true;
      } else if (ch == '"') {
        in_string = false;
      }
      continue;
    }
    if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n') continue;
    if (depth == 1 && expect_element) {
      lines.push_back(line);
      expect_element = false;
    }
    if (ch == '"') in_string = true;
    if (ch == '[' || ch == '{') {
      if (++depth == 1) expect_element = true;
    } else if (ch == ']' || ch == '}') {
      --depth;
    } else if (ch == ',' && depth == 1) {
      expect_element = true;
    }
  }
  return lines;
}

Status Record(const Json& v, int64_t line, const std::string& where, const JsonReadOptions& o,
              std::vector<FlatRecord>* out) {
  if (!v.is_object()) {
    return Status::InvalidArgument(where + ": " + std::string(v.type_name()) +
                                   ": expected a JSON object (one record)");
  }
  FlatRecord r;
  r.line = line;
  FLOWRAG_RETURN_IF_ERROR(Flatten(v, "", 0, o, where, &r));
  out->push_back(std::move(r));
  return Status::Ok();
}

}  // namespace

Result<std::vector<FlatRecord>> ReadJsonRecords(const std::string& path, const JsonReadOptions& o,
                                                size_t* transcoded_lines) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return Status::IoError(path + ": read failed");
  // BOMs, UTF-16 and UTF-32 to UTF-8; then lines that are not UTF-8 as
  // Windows-1252, as the CSV reader does per field.
  std::string text = DecodeUnicodeText(buf.str()).text;
  const size_t transcoded = LinesToUtf8(&text);
  if (transcoded_lines != nullptr) *transcoded_lines += transcoded;
  std::vector<FlatRecord> out;
  const std::string ext = ToLowerAscii(path.substr(
      path.find_last_of('.') == std::string::npos ? path.size() : path.find_last_of('.')));
  if (ext == ".jsonl" || ext == ".ndjson") {
    std::string_view rest(text);
    for (int64_t n = 1; !rest.empty(); ++n) {
      const size_t end = rest.find('\n');
      const std::string_view line = rest.substr(0, end);
      rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      const std::string where = path + ":" + std::to_string(n);
      Json v;
      try {
        v = Json::parse(line);
      } catch (const Json::exception& e) {
        return Status::InvalidArgument(where + ": invalid JSON (" + CleanJsonError(e.what(), true) +
                                       "): expected one object per line");
      }
      FLOWRAG_RETURN_IF_ERROR(Record(v, n, where, o, &out));
    }
    return out;
  }
  Json v;
  try {
    v = Json::parse(text);
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(path + ": invalid JSON (" + CleanJsonError(e.what(), false) +
                                   ")");
  }
  if (v.is_array()) {
    const std::vector<int64_t> lines = ElementLines(text);
    for (size_t i = 0; i < v.size(); ++i) {
      const int64_t line = i < lines.size() ? lines[i] : static_cast<int64_t>(i) + 1;
      FLOWRAG_RETURN_IF_ERROR(Record(v[i], line,
                                     path + ":" + std::to_string(line) + ": record #" +
                                         std::to_string(i + 1),
                                     o, &out));
    }
    return out;
  }
  FLOWRAG_RETURN_IF_ERROR(Record(v, 1, path, o, &out));
  return out;
}

}  // namespace flowrag
