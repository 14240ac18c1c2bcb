// File and JSON helpers shared by the benchmark-data loaders: reading a file,
// parsing JSON with errors that name the place, Python's non-finite literals,
// string-list fields. See data_files.h.
#include "sql/data_files.h"

#include <cctype>
#include <cerrno>
#include <cstdio>

#include "common/file_reader.h"
#include "common/json_errors.h"

namespace flowrag {
namespace {

using Json = nlohmann::json;

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

Result<std::string> ReadText(const std::string& path) {
  FLOWRAG_ASSIGN_OR_RETURN(FilePtr file, OpenFile(path));
  std::string out;
  char block[1 << 16];
  while (true) {
    const size_t n = std::fread(block, 1, sizeof(block), file.get());
    out.append(block, n);
    if (n < sizeof(block)) {
      if (std::ferror(file.get())) return OsError(path, "read failed", errno != 0 ? errno : EIO);
      break;
    }
  }
  if (out.compare(0, 3, "\xEF\xBB\xBF") == 0) out.erase(0, 3);
  return out;
}

Result<Json> ParseJson(std::string_view text, const std::string& where, bool single_line) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(where + ": invalid JSON (" +
                                   CleanJsonError(e.what(), single_line) + ")");
  }
}

Result<Json> ReadJsonFile(const std::string& path) {
  FLOWRAG_ASSIGN_OR_RETURN(std::string text, ReadText(path));
  return ParseJson(text, path, /*single_line=*/false);
}

std::string NonFiniteToNull(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (i == 0 || !IsWordChar(text[i - 1])) {
      bool replaced = false;
      for (std::string_view word : {"NaN", "Infinity", "-Infinity"}) {
        const size_t end = i + word.size();
        if (text.substr(i, word.size()) == word && (end == text.size() || !IsWordChar(text[end]))) {
          out += "null";
          i = end - 1;
          replaced = true;
          break;
        }
      }
      if (replaced) continue;
    }
    out += c;
  }
  return out;
}

Status StringList(const Json& obj, const char* field, std::vector<std::string>* out) {
  auto it = obj.find(field);
  if (it == obj.end() || !it->is_array()) {
    return Status::InvalidArgument(std::string(field) + ": expected a list of strings");
  }
  out->clear();
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string()) {
      return Status::InvalidArgument(std::string(field) + "[" + std::to_string(i) +
                                     "]: expected a string");
    }
    out->push_back((*it)[i].get<std::string>());
  }
  return Status::Ok();
}

}  // namespace flowrag
