#include "common/json_errors.h"

#include "common/encoding.h"

namespace flowrag {

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
  // "last read: '...'" quotes the input: no raw NUL or invalid bytes in a message.
  return EscapeForMessage(what, what.size());
}

}  // namespace flowrag
