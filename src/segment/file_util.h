// Small helpers shared by the segment module's file formats (segment files,
// manifests) and their writers: fixed NUL-padded text fields, checksums in
// messages, and the directory fsync that makes a rename last.
#ifndef FLOWRAG_SEGMENT_FILE_UTIL_H_
#define FLOWRAG_SEGMENT_FILE_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "flowrag/status.h"

namespace flowrag {

// "0x0123456789abcdef": a checksum in an error message.
std::string Hex(uint64_t v);

// The text of a fixed NUL-padded field of N bytes: the bytes up to the
// first NUL, which must be there, with only NULs after it; nullopt when not
// so (the field is damaged).
template <size_t N>
std::optional<std::string_view> FieldText(const char (&field)[N]) {
  const char* end = static_cast<const char*>(std::memchr(field, 0, N));
  if (end == nullptr) return std::nullopt;
  for (const char* p = end; p < field + N; ++p) {
    if (*p != 0) return std::nullopt;
  }
  return std::string_view(field, static_cast<size_t>(end - field));
}

// fsync of directory `dir`, so that a rename or a creation in it lasts.
// IoError / NotFound naming the directory.
Status SyncDirectory(const std::string& dir);
// The same for the directory holding `path` ("." when it names none).
Status SyncDirectoryOf(const std::string& path);

}  // namespace flowrag

#endif  // FLOWRAG_SEGMENT_FILE_UTIL_H_
