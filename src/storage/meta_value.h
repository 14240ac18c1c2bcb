// Parsing of the store's own meta values (storage-internal): a value the
// store wrote as a decimal integer that no longer reads as one was damaged
// or edited, which is Corruption naming the store and the key.
#ifndef FLOWRAG_STORAGE_META_VALUE_H_
#define FLOWRAG_STORAGE_META_VALUE_H_

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "flowrag/status.h"

namespace flowrag {

// `text`, the value of meta.`key` in the store at `path`, as a decimal
// integer in [min, max]; Corruption quoting at most 40 bytes of it otherwise.
inline Result<int64_t> ParseMetaInt(std::string_view path, std::string_view key,
                                    std::string_view text, int64_t min, int64_t max) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || v < min || v > max) {
    return Status::Corruption(std::string(path) + ": meta." + std::string(key) + " \"" +
                              std::string(text.substr(0, 40)) + "\": expected an integer from " +
                              std::to_string(min) + " to " + std::to_string(max) +
                              " (the store is damaged or was edited)");
  }
  return v;
}

}  // namespace flowrag

#endif  // FLOWRAG_STORAGE_META_VALUE_H_
