#include "extract/extraction.h"

namespace flowrag {

std::string EntityKey(std::string_view name) {
  std::string key;
  key.reserve(name.size());
  bool pending_space = false;
  for (unsigned char c : name) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (alnum || c >= 0x80) {
      if (pending_space && !key.empty()) key.push_back(' ');
      pending_space = false;
      key.push_back((c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : static_cast<char>(c));
    } else {
      pending_space = true;
    }
  }
  return key;
}

}  // namespace flowrag
