// The connection front end of the HTTP server: owns the listening socket,
// the open connections and the worker threads, and hands each complete
// request to a worker that serves it through httplib's request parser.
//
// Design (why slow clients cannot stall the server):
//   - One poller thread accepts connections and reads request heads. Idle
//     keep-alive connections and clients that send their head slowly wait
//     here, costing a file descriptor and a buffer but no worker thread.
//   - A Content-Length body is read by the poller as well (within
//     body_timeout of the end of the head, no read stalling for more than
//     read_timeout: 408 otherwise), up to max_buffered_body_bytes for all
//     connections together.
//   - A worker thread gets a connection only once its request is complete
//     (or its body is chunked, waits for "100 Continue" or is beyond the
//     poller's budget). It reads what is left of the body and writes the
//     response through a Stream whose reads share one deadline (body_timeout
//     + read_timeout from the end of the head; the handler enforces
//     body_timeout itself at each chunk) and each wait at most read_timeout;
//     then the connection goes back to the poller for its next request, or
//     is closed.
//   - A head must be complete within head_timeout of its first byte (408,
//     then close), a connection that sends nothing is closed after
//     idle_timeout, and a head larger than max_head_bytes answers 431.
//   - A head announcing a Content-Length over max_body_bytes answers 413 at
//     once, from the poller, without reading the body; one whose body length
//     is ambiguous (CheckFraming: two Content-Lengths, Content-Length with
//     Transfer-Encoding, ...) answers 400 (or 501), so that no two readers
//     of the stream can disagree on where the next request starts.
//   - At most max_connections are open; one more is answered 503 and closed
//     at once. The listen backlog is listen_backlog.
// So /healthz waits only for the requests that are being served: a worker is
// held by a client only once it has sent a whole request (bar the exceptions
// above, where it is held for at most body_timeout + read_timeout), then for
// the handler and at most write_timeout per write.
//
// Thread-safety: Start() once, Stop() from any thread (idempotent); port()
// from any thread. The ServeFn runs on the worker threads concurrently.
#ifndef FLOWRAG_SERVER_CONNECTIONS_H_
#define FLOWRAG_SERVER_CONNECTIONS_H_

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "flowrag/status.h"

namespace flowrag::server {

struct ConnectionLimits {
  std::chrono::milliseconds idle_timeout{5000};   // no byte of a next request
  std::chrono::milliseconds head_timeout{10000};  // first byte to the end of the head
  std::chrono::milliseconds read_timeout{10000};  // one read of the body without progress
  std::chrono::milliseconds body_timeout{30000};  // end of the head to the end of the body
  std::chrono::milliseconds write_timeout{10000};  // one write without progress
  size_t max_head_bytes = 64u << 10;
  size_t max_body_bytes = 8u << 20;
  // Content-Length bodies are read by the poller too, up to this many bytes
  // for all connections together; a body that does not fit (and a chunked
  // one, or one after "Expect: 100-continue") is read by its worker.
  size_t max_buffered_body_bytes = 64u << 20;
  size_t max_connections = 4096;
  int listen_backlog = 1024;
  size_t workers = 8;
};

// The Stream one request is served through. A handler may write its
// response itself (a streamed reply, written as it is made): it then calls
// DropLaterWrites(), so that the response httplib writes after the handler
// goes nowhere, and closes the connection after the request.
class ServedStream : public httplib::Stream {
 public:
  virtual void DropLaterWrites() = 0;
};

// Serves one request from `stream` (whose head is buffered already). Returns
// whether the connection may carry another request.
using ServeFn = std::function<bool(ServedStream& stream)>;

// An error the front end answers by itself, before any worker sees the request.
struct EarlyReply {
  int http_status;
  std::string_view code;
};
// Called (on the poller thread) for each EarlyReply sent, e.g. for metrics.
using EarlyReplyFn = std::function<void(const EarlyReply& reply)>;

class ConnectionServer {
 public:
  // Binds and listens on host:port (0: an ephemeral port). IoError when the
  // address is taken or not local.
  static Result<std::unique_ptr<ConnectionServer>> Listen(const std::string& host, int port,
                                                          const ConnectionLimits& limits,
                                                          ServeFn serve, EarlyReplyFn on_early);
  ~ConnectionServer();

  int port() const { return port_; }

  // Starts the poller and the workers.
  void Start();

  // Stops accepting, closes waiting connections, lets requests being served
  // finish (their reads give up within 100 ms) and joins every thread.
  void Stop();

 private:
  struct Connection;
  ConnectionServer(int listen_fd, int wake_fd, int port, const ConnectionLimits& limits,
                   ServeFn serve, EarlyReplyFn on_early);

  void PollLoop();
  void AcceptAll(std::vector<Connection>* waiting);
  // Reads what `c` has sent; false when it is done with (closed or handed on).
  bool ReadHead(Connection& c);
  // Refuses a head over max_head_bytes, or passes a complete one to
  // HeadComplete; false when `c` left the poller (handed to a worker).
  bool ScanHead(Connection& c);
  // The head of `c` is complete: refuse it (413), wait here for its body, or
  // hand it to a worker; false when `c` left the poller.
  bool HeadComplete(Connection& c, size_t head_end);
  void Dispatch(Connection& c);  // to a worker; `c` is moved from
  void ReleaseBody(Connection& c);  // gives back the body budget `c` holds
  // Answers `reply` and half-closes `c`, which then drains for a while.
  void Refuse(Connection& c, const EarlyReply& reply, std::string_view message);
  void Serve(Connection c);
  void HandBack(Connection c);
  void CloseConnection(int fd);
  void TakeHandedBack(std::vector<Connection>* waiting);
  void Wake() const;

  const int listen_fd_;
  const int wake_fd_;  // eventfd: wakes the poller
  const int port_;
  const ConnectionLimits limits_;
  const ServeFn serve_;
  const EarlyReplyFn on_early_;

  std::atomic<bool> stopping_{false};
  std::atomic<size_t> open_{0};  // connections accepted and not yet closed
  std::mutex mu_;
  std::vector<Connection> handed_back_;  // guarded by mu_: from workers to the poller
  bool poller_done_ = false;             // guarded by mu_
  // Poller only: accepting pauses until then after running out of descriptors.
  std::chrono::steady_clock::time_point accept_paused_until_;
  size_t buffered_body_bytes_ = 0;  // poller only: bodies being read (reserved)
  std::unique_ptr<httplib::ThreadPool> workers_;
  std::thread poller_;
  std::mutex stop_mu_;  // serialises Stop()
};

// Where the head in `buffer` ends (the index after "\r\n\r\n" or "\n\n"), or
// npos while it is incomplete.
size_t HeadEnd(std::string_view buffer);

// The Content-Length a head announces (saturated at UINT64_MAX); nullopt when
// it has none or it is not a decimal number.
std::optional<uint64_t> AnnouncedContentLength(std::string_view head);

// Why the body of the request whose head is `head` cannot be framed without
// doubt (RFC 9112 sections 5.1 and 6.3), answered by the front end before a
// worker sees the request, and the connection closed:
//   400: more than one Content-Length (equal or not), a Content-Length that
//        is not one decimal number, Transfer-Encoding together with
//        Content-Length, a Transfer-Encoding whose last coding is not
//        chunked, white space between a header's name and its colon;
//   501: a transfer coding other than chunked before it (gzip, chunked).
// nullopt when the head is framed by at most one Content-Length or by
// Transfer-Encoding: chunked alone.
struct FramingError {
  int http_status;
  std::string_view code;  // "bad_request", "not_implemented"
  std::string message;
};
std::optional<FramingError> CheckFraming(std::string_view head);

}  // namespace flowrag::server

#endif  // FLOWRAG_SERVER_CONNECTIONS_H_
