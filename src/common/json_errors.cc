#include "common/json_errors.h"

#include "common/encoding.h"

namespace flowrag {
namespace {

// The last `max_bytes` (or fewer) of `text`, starting at a character boundary.
std::string_view Tail(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t start = text.size() - max_bytes;
  while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
  return text.substr(start);
}

}  // namespace

std::string CleanJsonError(std::string_view what, bool single_line) {
  if (size_t p = what.find("] ");
      p != std::string_view::npos && !what.empty() && what.front() == '[') {
    what.remove_prefix(p + 2);
  }
  for (std::string_view prefix :
       {std::string_view("parse error at "), std::string_view("parse error: ")}) {
    if (what.substr(0, prefix.size()) == prefix) what.remove_prefix(prefix.size());
  }
  constexpr std::string_view kLine1 = "line 1, ";
  if (single_line && what.substr(0, kLine1.size()) == kLine1) what.remove_prefix(kLine1.size());
  // "last read: '...'" quotes the input (a whole unterminated string, say):
  // its end, where the error is, is kept, escaped (no raw NUL or invalid bytes).
  constexpr std::string_view kLastRead = "last read: '";
  const size_t quote = what.find(kLastRead);
  if (quote == std::string_view::npos) return EscapeForMessage(what, kMaxJsonErrorBytes);
  // The quote runs to the last "'" or to "'; expected ..." (what the parser wanted).
  std::string_view quoted = what.substr(quote + kLastRead.size());
  std::string_view after;
  if (size_t e = quoted.rfind("'; expected "); e != std::string_view::npos) {
    after = quoted.substr(e + 1);
    quoted = quoted.substr(0, e);
  } else if (!quoted.empty() && quoted.back() == '\'') {
    quoted.remove_suffix(1);
  }
  const std::string_view excerpt = Tail(quoted, kMaxJsonExcerptBytes);
  return EscapeForMessage(what.substr(0, quote + kLastRead.size()), kMaxJsonErrorBytes) +
         (excerpt.size() < quoted.size() ? "..." : "") +
         EscapeForMessage(excerpt, kMaxJsonExcerptBytes) + "'" +
         EscapeForMessage(after, kMaxJsonErrorBytes);
}

}  // namespace flowrag
