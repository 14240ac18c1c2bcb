#include "mcp/stdio.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/encoding.h"
#include "flowrag/mcp.h"
#include "mcp/jsonrpc.h"

namespace flowrag::mcp {
namespace {

constexpr size_t kReadChunk = 64u << 10;
// What an error about a line too long quotes of it, at most.
constexpr size_t kHeadBytes = 64;

void LogTo(const StdioOptions& options, const std::string& line) {
  if (options.log) {
    options.log(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

}  // namespace

LineReader::LineReader(ReadFn read, size_t max_line_bytes)
    : read_(std::move(read)), max_(max_line_bytes) {}

bool LineReader::Fill() {
  if (end_ || error_) return false;
  if (pos_ > 0) {
    buffer_.erase(0, pos_);
    pos_ = 0;
  }
  const size_t old = buffer_.size();
  buffer_.resize(old + kReadChunk);
  const long n = read_(buffer_.data() + old, kReadChunk);
  buffer_.resize(old + (n > 0 ? static_cast<size_t>(n) : 0));
  if (n == 0) end_ = true;
  if (n < 0) error_ = true;
  return n > 0;
}

LineReader::Next LineReader::Read(std::string* line) {
  line->clear();
  bool too_long = false;
  while (true) {
    const size_t newline = buffer_.find('\n', pos_);
    const size_t available = (newline == std::string::npos ? buffer_.size() : newline) - pos_;
    if (!too_long && line->size() + available > max_) {
      // Keep a head of it for the message; drop the rest up to the newline.
      too_long = true;
      if (line->size() < kHeadBytes) {
        line->append(buffer_, pos_, std::min(available, kHeadBytes - line->size()));
      }
      line->resize(std::min(line->size(), kHeadBytes));
    } else if (!too_long) {
      line->append(buffer_, pos_, available);
    }
    if (newline != std::string::npos) {
      pos_ = newline + 1;
      ++line_number_;
      break;
    }
    pos_ = buffer_.size();
    if (!Fill()) {
      if (error_) return Next::kError;
      if (line->empty() && !too_long) return Next::kEnd;
      ++line_number_;  // a last line without a newline
      break;
    }
  }
  if (too_long) return Next::kTooLong;
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return Next::kLine;
}

Status ServeLines(McpSession& session, LineReader::ReadFn read,
                  const std::function<bool(std::string_view)>& write, const StdioOptions& options) {
  LineReader reader(std::move(read), options.max_line_bytes);
  std::string line;
  while (true) {
    const LineReader::Next next = reader.Read(&line);
    if (next == LineReader::Next::kEnd) return Status::Ok();
    if (next == LineReader::Next::kError) {
      return Status::IoError(std::string("mcp: reading stdin: ") + std::strerror(errno));
    }
    std::string out;
    if (next == LineReader::Next::kTooLong) {
      const std::string why = "line " + std::to_string(reader.line_number()) +
                              ": message longer than " + std::to_string(options.max_line_bytes) +
                              " bytes, skipped (it began \"" + EscapeForMessage(line, 40) + "\")";
      LogTo(options, "flowrag mcp: " + why);
      out = Serialize(
          ErrorResponse(nullptr, RpcError{kInvalidRequest, "invalid request: " + why, nullptr}));
    } else {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      McpReply reply = session.Handle(line);
      if (reply.malformed) {
        LogTo(options, "flowrag mcp: line " + std::to_string(reader.line_number()) +
                           ": refused: " + EscapeForMessage(reply.body.value_or(""), 200));
      }
      if (!reply.body) continue;
      out = std::move(*reply.body);
    }
    out += '\n';
    if (!write(out)) return Status::IoError("mcp: writing stdout: the client closed it");
  }
}

Status ServeStdio(McpSession& session, int in_fd, int out_fd, const StdioOptions& options) {
  auto read_fd = [in_fd](char* buffer, size_t n) -> long {
    while (true) {
      const ssize_t got = ::read(in_fd, buffer, n);
      if (got < 0 && errno == EINTR) continue;
      return static_cast<long>(got);
    }
  };
  auto write_fd = [out_fd](std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t put = ::write(out_fd, bytes.data(), bytes.size());
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(put));
    }
    return true;
  };
  return ServeLines(session, read_fd, write_fd, options);
}

}  // namespace flowrag::mcp

namespace flowrag {

Status ServeMcpStdio(Engine& engine, int in_fd, int out_fd, const McpStdioOptions& options) {
  mcp::McpSessionOptions session_options;
  session_options.allow_writes = options.allow_writes;
  session_options.page_size = options.page_size;
  mcp::McpSession session(engine, session_options);
  mcp::StdioOptions stdio;
  stdio.max_line_bytes = options.max_line_bytes;
  return mcp::ServeStdio(session, in_fd, out_fd, stdio);
}

}  // namespace flowrag
