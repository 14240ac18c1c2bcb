// Reading local files for the importers (ingest's document loaders and
// extract's OpenIE import): opening a file with an error that names the path
// and the OS's reason, and reading it line by line without a length limit.
//
// Errors: NotFound for a missing path (ENOENT, ENOTDIR), IoError for any other
// refusal by the OS; the message reads "<path>: <what>: <reason>".
#ifndef FLOWRAG_COMMON_FILE_READER_H_
#define FLOWRAG_COMMON_FILE_READER_H_

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "flowrag/status.h"

namespace flowrag {

// The OS's text for errno value `err` ("No such file or directory").
std::string OsReason(int err);

// "<path>: <what>: <reason>": NotFound for ENOENT/ENOTDIR, else IoError.
Status OsError(const std::string& path, std::string_view what, int err);

// Lower-cased extension of `path` with its dot (".jsonl"), "" when none.
std::string LowerExtension(const std::string& path);

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// Opens `path` for binary reading (close-on-exec); error "<path>: cannot
// open: <reason>".
Result<FilePtr> OpenFile(const std::string& path);

// Reads a FILE line by line with getline(3). Not thread-safe; `file` is not
// owned and must outlive the reader. A line returned by Next() stays valid
// until the next call.
class LineReader {
 public:
  explicit LineReader(std::FILE* file) : file_(file) {}
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Reads the next line including its '\n'; false at end of file or on a
  // read error (then error() is the errno).
  bool Next(std::string_view* line);
  int error() const { return error_; }

 private:
  std::FILE* file_;
  char* buf_ = nullptr;
  size_t cap_ = 0;
  int error_ = 0;
};

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_FILE_READER_H_
