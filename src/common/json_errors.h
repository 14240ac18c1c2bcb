// Error texts for JSON readers (ingest's document loaders, extract's OpenIE
// import): nlohmann's exception messages cut down to the part a user needs.
// Pure and thread-safe.
#ifndef FLOWRAG_COMMON_JSON_ERRORS_H_
#define FLOWRAG_COMMON_JSON_ERRORS_H_

#include <string>
#include <string_view>

#include "common/encoding.h"

namespace flowrag {

// At most this many bytes of the input are quoted in a JSON error message
// (nlohmann's "last read: '...'" can be a whole multi-megabyte token).
inline constexpr size_t kMaxJsonExcerptBytes = 80;
// The rest of a JSON error message is cut after this many bytes.
inline constexpr size_t kMaxJsonErrorBytes = 200;

// nlohmann messages look like "[json.exception.parse_error.101] parse error at
// line 1, column 5: syntax error while parsing ...". Keeps "line 1, column 5:
// syntax error ..." (or "column 5: ..." for single-line input), with the
// quoted input escaped (EscapeForMessage in common/encoding.h) and cut to its
// last kMaxJsonExcerptBytes ("..." in front when cut), where the error is.
std::string CleanJsonError(std::string_view what, bool single_line);

// "a string", "an integer", "a non-integer number", ... for messages about a
// field of the wrong type; an array is `array_word` (a format may call its
// arrays lists). `Json` is a nlohmann JSON value type.
template <typename Json>
std::string DescribeJsonType(const Json& v, std::string_view array_word = "an array") {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer()) return "an integer";
  if (v.is_number_float()) return "a non-integer number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return std::string(array_word);
  if (v.is_object()) return "an object";
  if (v.is_binary()) return "binary data";
  if (v.is_discarded()) return "a discarded value";
  return "an unknown value";
}

// A JSON value as an error message may quote it: a string in quotes and
// escaped, a number or boolean as written, both cut to `max_bytes`
// (EscapeForMessage: "...(N bytes)" when cut); an object or array by its type
// only. `Json` is a nlohmann JSON value type.
template <typename Json>
std::string JsonExcerpt(const Json& v, size_t max_bytes = kMaxQuotedInputBytes) {
  if (v.is_string()) {
    return "\"" + EscapeForMessage(v.template get_ref<const std::string&>(), max_bytes) + "\"";
  }
  if (v.is_object() || v.is_array()) return DescribeJsonType(v);
  return EscapeForMessage(v.dump(), max_bytes);
}

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_JSON_ERRORS_H_
