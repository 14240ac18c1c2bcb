#include "common/file_reader.h"

#include <sys/types.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <utility>

namespace flowrag {

std::string OsReason(int err) { return std::error_code(err, std::generic_category()).message(); }

Status OsError(const std::string& path, std::string_view what, int err) {
  std::string m = path + ": " + std::string(what) + ": " + OsReason(err);
  if (err == ENOENT || err == ENOTDIR) return Status::NotFound(std::move(m));
  return Status::IoError(std::move(m));
}

std::string LowerExtension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

Result<FilePtr> OpenFile(const std::string& path) {
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "rbe");
  if (f == nullptr) return OsError(path, "cannot open", errno != 0 ? errno : EIO);
  return FilePtr(f);
}

LineReader::~LineReader() { std::free(buf_); }

bool LineReader::Next(std::string_view* line) {
  errno = 0;
  const ssize_t n = ::getline(&buf_, &cap_, file_);
  if (n < 0) {
    if (std::ferror(file_)) error_ = errno != 0 ? errno : EIO;
    return false;
  }
  *line = std::string_view(buf_, static_cast<size_t>(n));
  return true;
}

}  // namespace flowrag
