// The stdio transport of MCP: newline-delimited JSON-RPC messages on a
// byte stream in (the client's stdin to us), one response line per reply
// out; nothing else is written to the output (logs go to stderr).
//
// Lines are bounded: a line longer than max_line_bytes is read through and
// dropped, answered with an invalid-request error (id null) naming its line
// number, and serving goes on. Blank lines are skipped; a trailing "\r" is
// dropped. The end of the input ends serving cleanly (a last line without a
// newline is served first).
#ifndef FLOWRAG_MCP_STDIO_H_
#define FLOWRAG_MCP_STDIO_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "flowrag/status.h"
#include "mcp/session.h"

namespace flowrag::mcp {

struct StdioOptions {
  // Longest message line accepted (without its newline).
  size_t max_line_bytes = 16u << 20;
  // Where diagnostics go (one line each, no newline given); default: stderr.
  std::function<void(const std::string&)> log;
};

// Splits a byte stream into bounded lines. `read` is called like read(2):
// it fills up to n bytes and returns how many, 0 at the end, < 0 on an
// error (retried on EINTR by the caller's function, not here).
class LineReader {
 public:
  using ReadFn = std::function<long(char* buffer, size_t n)>;
  LineReader(ReadFn read, size_t max_line_bytes);

  enum class Next {
    kLine,     // *line holds the next line (no newline)
    kTooLong,  // a line over the limit was skipped; *line holds its first bytes
    kEnd,      // end of input
    kError,    // the read failed
  };
  Next Read(std::string* line);
  // The number of the line last returned (1-based).
  size_t line_number() const { return line_number_; }

 private:
  bool Fill();  // false at the end or on an error
  ReadFn read_;
  size_t max_;
  std::string buffer_;
  size_t pos_ = 0;
  bool end_ = false, error_ = false;
  size_t line_number_ = 0;
};

// Serves `session` until the input ends. `write` sends one complete line
// (newline included) and returns false when the output is gone, which ends
// serving with an IoError. Read errors are IoError too.
Status ServeLines(McpSession& session, LineReader::ReadFn read,
                  const std::function<bool(std::string_view)>& write, const StdioOptions& options);

// ServeLines over file descriptors (stdin and stdout of `flowrag mcp`).
Status ServeStdio(McpSession& session, int in_fd, int out_fd, const StdioOptions& options);

}  // namespace flowrag::mcp

#endif  // FLOWRAG_MCP_STDIO_H_
