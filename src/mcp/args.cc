#include "mcp/args.h"

#include <cmath>

#include "common/encoding.h"
#include "common/json_errors.h"

namespace flowrag::mcp {

std::string Excerpt(const nlohmann::json& value) { return JsonExcerpt(value, 60); }

ArgError ArgReader::Error(std::string field, std::string what) const {
  std::string message = std::string(tool_) + ": " + field + ": " + what;
  return ArgError{std::move(field), std::move(message)};
}

const nlohmann::json* ArgReader::Member(const char* name) const {
  auto it = args_.find(name);
  if (it == args_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<ArgError> ArgReader::RejectUnknown(
    std::initializer_list<std::string_view> known) const {
  for (auto it = args_.begin(); it != args_.end(); ++it) {
    bool found = false;
    for (std::string_view k : known) found = found || it.key() == k;
    if (found) continue;
    std::string list;
    for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    if (list.empty()) list = "none";
    return Error(EscapeForMessage(it.key(), 60), "unknown argument (known: " + list + ")");
  }
  return std::nullopt;
}

std::optional<ArgError> ArgReader::String(const char* name, bool required, size_t max_bytes,
                                          std::string* out, bool non_blank) const {
  const nlohmann::json* v = Member(name);
  if (v == nullptr) {
    if (required) return Error(name, "required string is missing");
    return std::nullopt;
  }
  if (!v->is_string()) return Error(name, "expected a string, got " + DescribeJsonType(*v));
  const std::string& s = v->get_ref<const std::string&>();
  if (s.size() > max_bytes) {
    return Error(name, "longer than " + std::to_string(max_bytes) + " bytes");
  }
  if (non_blank && s.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Error(name, "expected a non-empty string");
  }
  *out = s;
  return std::nullopt;
}

std::optional<ArgError> ArgReader::Enum(const char* name, const std::vector<std::string>& allowed,
                                        std::string* out) const {
  const nlohmann::json* v = Member(name);
  if (v == nullptr) return std::nullopt;
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
  if (v->is_string()) {
    for (const std::string& a : allowed) {
      if (*v == a) {
        *out = a;
        return std::nullopt;
      }
    }
  }
  return Error(name, "expected one of " + list + ", got " + Excerpt(*v));
}

std::optional<ArgError> ArgReader::Integer(const char* name, int64_t min, int64_t max,
                                           int64_t* out) const {
  const nlohmann::json* v = Member(name);
  if (v == nullptr) return std::nullopt;
  const std::string range = "expected an integer in [" + std::to_string(min) + ", " +
                            std::to_string(max) + "], got " + Excerpt(*v);
  double d = 0;
  if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(max)) return Error(name, range);
    d = static_cast<double>(u);
  } else if (v->is_number()) {
    d = v->get<double>();
  } else {
    return Error(name, range);
  }
  if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(min) ||
      d > static_cast<double>(max)) {
    return Error(name, range);
  }
  *out = static_cast<int64_t>(d);
  return std::nullopt;
}

std::optional<ArgError> ArgReader::Params(const char* name,
                                          std::map<std::string, std::string>* out) const {
  const nlohmann::json* v = Member(name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_object()) {
    return Error(name, "expected an object of option: value, got " + DescribeJsonType(*v));
  }
  for (auto it = v->begin(); it != v->end(); ++it) {
    const std::string field = std::string(name) + "." + EscapeForMessage(it.key(), 60);
    if (it->is_string()) {
      (*out)[it.key()] = it->get<std::string>();
    } else if (it->is_number() || it->is_boolean()) {
      (*out)[it.key()] = it->dump();
    } else {
      return Error(field, "expected a string, number or boolean, got " + DescribeJsonType(*it));
    }
  }
  return std::nullopt;
}

}  // namespace flowrag::mcp
