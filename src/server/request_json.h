// Reading request bodies: JSON syntax errors with their byte position, and
// typed field access whose errors name the field ("documents[2].text").
// Messages quote at most kMaxQuotedInputBytes of a value or key
// (EscapeForMessage, common/encoding.h), however long the request's.
#ifndef FLOWRAG_SERVER_REQUEST_JSON_H_
#define FLOWRAG_SERVER_REQUEST_JSON_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "server/errors.h"

namespace flowrag::server {

// Parses a request body as a JSON object. On failure the error names the
// byte position of the syntax error (400 "invalid_json"), or says that the
// body is not an object (400 "invalid_argument").
std::optional<ApiError> ParseJsonObject(std::string_view body, nlohmann::json* out);

// 400 naming the first member of `object` not in `known` (field = prefix + name).
std::optional<ApiError> RejectUnknownFields(const nlohmann::json& object,
                                            std::span<const std::string_view> known,
                                            const std::string& prefix = "");
std::optional<ApiError> RejectUnknownFields(const nlohmann::json& object,
                                            std::initializer_list<std::string_view> known,
                                            const std::string& prefix = "");

// object[name] as a boolean into *out (when not null); absent (or null)
// leaves *out unchanged.
std::optional<ApiError> ReadBoolean(const nlohmann::json& object, const char* name, bool* out);

// The longest value of a field that names something (a method, pipeline,
// answerer, style, chunking strategy): longer ones are refused here, so that
// no message made further on can quote more than this of it.
inline constexpr size_t kMaxNameBytes = 100;

// object[name] as a string of at most `max_bytes` into *out; absent (or null)
// leaves *out unchanged unless `required`. `path` is the field's name in
// errors, which quote no more of the value than EscapeForMessage's limit.
std::optional<ApiError> ReadString(const nlohmann::json& object, const char* name,
                                   const std::string& path, bool required, std::string* out,
                                   size_t max_bytes = SIZE_MAX);

// object[name] as an integer in [min, max]; absent (or null) leaves *out unchanged.
std::optional<ApiError> ReadInteger(const nlohmann::json& object, const char* name, int64_t min,
                                    int64_t max, int64_t* out);

// object[name] as a finite number >= 0; absent (or null) leaves *out unchanged.
std::optional<ApiError> ReadNonNegative(const nlohmann::json& object, const char* name,
                                        double* out);

}  // namespace flowrag::server

#endif  // FLOWRAG_SERVER_REQUEST_JSON_H_
