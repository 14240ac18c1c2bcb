// Input quoted in error messages: at most a bounded, printable part of what
// was given. The library quotes input this way in every message of the HTTP
// API, MCP and `config check`; a program on the library (the flowrag CLI)
// uses the same functions for the messages it prints, so that none of them
// carries megabytes of an argument or raw control bytes to a terminal or a
// log.
//
// Thread-safety: pure functions. Complexity: linear in the input.
#ifndef FLOWRAG_MESSAGES_H_
#define FLOWRAG_MESSAGES_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace flowrag {

// At most this many bytes of one input are quoted in an error message of
// the HTTP API, MCP, the CLI or `config check` (a request may carry
// megabytes in one field).
inline constexpr size_t kMaxQuotedInputBytes = 200;

// `text` as it may appear in an error message: valid UTF-8 other than
// control characters is kept; NUL, other C0 controls, DEL and bytes that are
// not UTF-8 become \0, \t, \n, \r or \xNN; at most `max_bytes` of input are
// shown, cut before the first character that does not fit, and a cut text
// ends in "...(N bytes)" with its whole size N. The one helper for quoting
// input in a message.
std::string EscapeForMessage(std::string_view text, size_t max_bytes = kMaxQuotedInputBytes);

// `message` with every stretch of more than `max_bytes` that repeats a part
// of one of `inputs` replaced by EscapeForMessage(stretch, max_bytes): for a
// boundary that prints messages built by code it does not own (a library's
// parse error, a loader that names the path it was given), so that no
// message there quotes more than `max_bytes` of what was given to it. Inputs
// are compared byte for byte (an echo that was escaped or transformed is not
// found; such echoes are bounded where they are made). O(message + inputs).
std::string BoundInputEchoes(std::string_view message, const std::vector<std::string_view>& inputs,
                             size_t max_bytes = kMaxQuotedInputBytes);

}  // namespace flowrag

#endif  // FLOWRAG_MESSAGES_H_
