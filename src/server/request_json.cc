#include "server/request_json.h"

#include <cmath>
#include <vector>

#include "common/encoding.h"
#include "common/json_errors.h"

namespace flowrag::server {
namespace {

// A client's member name is quoted by at most this many bytes.
constexpr size_t kMaxKeyBytes = 60;

// Follows the parser's events to know the path of the value being parsed
// ("options.top_k", "documents[2].text"), to name the field of an error the
// parser raises (a number out of range).
class JsonPathTracker {
 public:
  void Step(nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        frames_.push_back({event == Event::array_start, "", 0});
        break;
      case Event::key:
        if (!frames_.empty()) frames_.back().key = parsed.get<std::string>();
        break;
      case Event::object_end:
      case Event::array_end:
        if (!frames_.empty()) frames_.pop_back();
        NextElement();
        break;
      case Event::value:
        NextElement();
        break;
    }
  }

  // The path of the value being parsed; "" at the top level.
  std::string Path() const {
    std::string path;
    for (const Frame& f : frames_) {
      if (f.array) {
        path += "[" + std::to_string(f.index) + "]";
      } else {
        path += (path.empty() ? "" : ".") + EscapeForMessage(f.key, kMaxKeyBytes);
      }
    }
    return path;
  }

 private:
  struct Frame {
    bool array;
    std::string key;   // object: the current member
    size_t index = 0;  // array: the current element
  };
  void NextElement() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  std::vector<Frame> frames_;
};

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
  JsonPathTracker path;
  try {
    *out = nlohmann::json::parse(
        body.begin(), body.end(),
        [&path](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
          path.Step(event, parsed);
          return true;
        });
  } catch (const nlohmann::json::parse_error& e) {
    const bool single_line = body.find('\n') == std::string_view::npos;
    return ApiError{400, "invalid_json",
                    "request body is not valid JSON (byte " + std::to_string(e.byte) +
                        "): " + CleanJsonError(e.what(), single_line),
                    ""};
  } catch (const nlohmann::json::exception& e) {
    // out_of_range 406: a number beyond the range of a double (1e400).
    const std::string field = path.Path();
    return BadRequest((field.empty() ? std::string("request body") : field) +
                          ": number out of range: " + CleanJsonError(e.what(), true) +
                          "; expected a finite number",
                      field);
  }
  if (!out->is_object()) {
    return BadRequest(std::string("request body: expected a JSON object, got ") + out->type_name());
  }
  return std::nullopt;
}

std::optional<ApiError> RejectUnknownFields(const nlohmann::json& object,
                                            std::span<const std::string_view> known,
                                            const std::string& prefix) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool found = false;
    for (std::string_view k : known) found = found || it.key() == k;
    if (found) continue;
    std::string list;
    for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    // The name is the client's: at most kMaxKeyBytes of it are echoed.
    const std::string name = prefix + EscapeForMessage(it.key(), kMaxKeyBytes);
    return BadRequest("unknown field \"" + name + "\" (known: " + list + ")", name);
  }
  return std::nullopt;
}

std::optional<ApiError> RejectUnknownFields(const nlohmann::json& object,
                                            std::initializer_list<std::string_view> known,
                                            const std::string& prefix) {
  return RejectUnknownFields(object, std::span<const std::string_view>(known.begin(), known.size()),
                             prefix);
}

std::optional<ApiError> ReadBoolean(const nlohmann::json& object, const char* name, bool* out) {
  const nlohmann::json* v = Member(object, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) {
    return BadRequest(std::string(name) + ": expected true or false, got " + v->type_name(), name);
  }
  if (out != nullptr) *out = v->get<bool>();
  return std::nullopt;
}

std::optional<ApiError> ReadString(const nlohmann::json& object, const char* name,
                                   const std::string& path, bool required, std::string* out,
                                   size_t max_bytes) {
  const nlohmann::json* v = Member(object, name);
  if (v == nullptr) {
    if (required) return BadRequest(path + ": required string is missing", path);
    return std::nullopt;
  }
  if (!v->is_string()) {
    return BadRequest(path + ": expected a string, got " + v->type_name(), path);
  }
  const std::string& s = v->get_ref<const std::string&>();
  if (s.size() > max_bytes) {
    return BadRequest(path + ": expected at most " + std::to_string(max_bytes) + " bytes, got " +
                          JsonExcerpt(*v, 60),
                      path);
  }
  *out = s;
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
    return BadRequest(
        std::string(name) + ": expected an integer" + range + ", got " + JsonExcerpt(*v, 60), name);
  }
  *out = v->get<int64_t>();
  return std::nullopt;
}

std::optional<ApiError> ReadNonNegative(const nlohmann::json& object, const char* name,
                                        double* out) {
  const nlohmann::json* v = Member(object, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < 0) {
    return BadRequest(std::string(name) + ": expected a number >= 0, got " + JsonExcerpt(*v, 60),
                      name);
  }
  *out = v->get<double>();
  return std::nullopt;
}

}  // namespace flowrag::server
