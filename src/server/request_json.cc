#include "server/request_json.h"

#include <cmath>

namespace flowrag::server {
namespace {

const nlohmann::json* Member(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

}  // namespace

std::optional<ApiError> ParseJsonObject(std::string_view body, nlohmann::json* out) {
  if (body.empty()) {
    return ApiError{400, "invalid_json", "request body is empty: expected a JSON object", ""};
  }
  try {
    *out = nlohmann::json::parse(body.begin(), body.end());
  } catch (const nlohmann::json::parse_error& e) {
    // what(): "[json.exception.parse_error.101] parse error at line 1, column 9: ..."
    std::string what = e.what();
    const size_t pos = what.find("] ");
    if (pos != std::string::npos) what = what.substr(pos + 2);
    return ApiError{400, "invalid_json",
                    "request body is not valid JSON (byte " + std::to_string(e.byte) + "): " + what,
                    ""};
  }
  if (!out->is_object()) {
    return BadRequest(std::string("request body: expected a JSON object, got ") + out->type_name());
  }
  return std::nullopt;
}

std::optional<ApiError> RejectUnknownFields(const nlohmann::json& object,
                                            std::initializer_list<std::string_view> known,
                                            const std::string& prefix) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool found = false;
    for (std::string_view k : known) found = found || it.key() == k;
    if (found) continue;
    std::string list;
    for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    return BadRequest("unknown field \"" + prefix + it.key() + "\" (known: " + list + ")",
                      prefix + it.key());
  }
  return std::nullopt;
}

std::optional<ApiError> ReadString(const nlohmann::json& object, const char* name,
                                   const std::string& path, bool required, std::string* out) {
  const nlohmann::json* v = Member(object, name);
  if (v == nullptr) {
    if (required) return BadRequest(path + ": required string is missing", path);
    return std::nullopt;
  }
  if (!v->is_string()) {
    return BadRequest(path + ": expected a string, got " + v->type_name(), path);
  }
  *out = v->get<std::string>();
  return std::nullopt;
}

std::optional<ApiError> ReadInteger(const nlohmann::json& object, const char* name, int64_t min,
                                    int64_t max, int64_t* out) {
  const nlohmann::json* v = Member(object, name);
  if (v == nullptr) return std::nullopt;
  const std::string range = " in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  bool in_range = false;
  if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    in_range = u <= static_cast<uint64_t>(max) && static_cast<int64_t>(u) >= min;
  } else if (v->is_number_integer()) {
    in_range = v->get<int64_t>() >= min && v->get<int64_t>() <= max;
  }
  if (!in_range) {
    return BadRequest(std::string(name) + ": expected an integer" + range + ", got " + v->dump(),
                      name);
  }
  *out = v->get<int64_t>();
  return std::nullopt;
}

std::optional<ApiError> ReadNonNegative(const nlohmann::json& object, const char* name,
                                        double* out) {
  const nlohmann::json* v = Member(object, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < 0) {
    return BadRequest(std::string(name) + ": expected a number >= 0, got " + v->dump(), name);
  }
  *out = v->get<double>();
  return std::nullopt;
}

}  // namespace flowrag::server
