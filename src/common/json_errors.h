// Error texts for JSON readers (ingest's document loaders, extract's OpenIE
// import): nlohmann's exception messages cut down to the part a user needs.
// Pure and thread-safe.
#ifndef FLOWRAG_COMMON_JSON_ERRORS_H_
#define FLOWRAG_COMMON_JSON_ERRORS_H_

#include <string>
#include <string_view>

namespace flowrag {

// nlohmann messages look like "[json.exception.parse_error.101] parse error at
// line 1, column 5: syntax error while parsing ...". Keeps "line 1, column 5:
// syntax error ..." (or "column 5: ..." for single-line input), with the
// quoted input escaped (EscapeForMessage in common/encoding.h).
std::string CleanJsonError(std::string_view what, bool single_line);

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_JSON_ERRORS_H_
