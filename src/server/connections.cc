#include "server/connections.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "common/encoding.h"
#include "server/errors.h"

namespace flowrag::server {

using Clock = std::chrono::steady_clock;

struct ConnectionServer::Connection {
  enum class State {
    kIdle,      // waiting for the first byte of a request
    kHead,      // reading a request head
    kBody,      // head complete, reading its Content-Length body
    kDraining,  // answered and half-closed: discarding input until EOF
  };
  int fd = -1;
  std::string buffer;  // bytes read and not yet parsed
  State state = State::kIdle;
  Clock::time_point deadline;  // of the current state (kBody: of the next read)
  // kBody: the request is whole once buffer holds `complete_at` bytes, which
  // must happen by `body_deadline`; `reserved` bytes of the body budget.
  size_t complete_at = 0;
  Clock::time_point body_deadline;
  size_t reserved = 0;
};

namespace {

// How long a refused connection is drained (so that closing it with unread
// input does not reset it before the client has read the refusal).
constexpr std::chrono::milliseconds kDrainTime{1000};
// Longest single wait of a worker's read or write, so that Stop() is noticed.
constexpr std::chrono::milliseconds kStopCheck{100};
constexpr size_t kReadChunk = 16u << 10;

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

// A whole HTTP response with the API's JSON error shape that closes the connection.
std::string ErrorResponse(const EarlyReply& reply, std::string_view message) {
  const std::string body =
      ErrorJson({reply.http_status, std::string(reply.code), std::string(message), ""}).dump();
  std::string out = "HTTP/1.1 " + std::to_string(reply.http_status) + " " +
                    std::string(ReasonPhrase(reply.http_status)) + "\r\n";
  out += "Content-Type: application/json; charset=utf-8\r\n";
  out += "X-Content-Type-Options: nosniff\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  out += "Connection: close\r\n\r\n";
  return out + body;
}

std::string Seconds(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g s", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

int PollMillis(Clock::duration d) {
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(d).count();
  return static_cast<int>(std::clamp<int64_t>(ms, 0, 1000));
}

void AddressOf(int fd, bool peer, std::string* ip, int* port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  const int rc = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                      : getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  char host[NI_MAXHOST] = "";
  char serv[NI_MAXSERV] = "";
  if (rc != 0 || getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof(host), serv,
                             sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return;
  }
  *ip = host;
  *port = std::atoi(serv);
}

// The Stream a worker serves one request through: the bytes the poller read
// first, then the socket, every read within the request's deadline.
class ConnectionStream final : public ServedStream {
 public:
  ConnectionStream(int fd, std::string buffered, const ConnectionLimits& limits,
                   const std::atomic<bool>& stopping)
      : fd_(fd),
        buffer_(std::move(buffered)),
        limits_(limits),
        stopping_(stopping),
        // The handler checks body_timeout at each chunk it is handed; this
        // deadline ends a body that arrives in one trickle too slow to chunk.
        read_deadline_(Clock::now() + limits.body_timeout + limits.read_timeout) {}

  bool is_readable() const override {
    return pos_ < buffer_.size() || Wait(POLLIN, limits_.read_timeout, read_deadline_);
  }
  bool is_writable() const override {
    return Wait(POLLOUT, limits_.write_timeout, Clock::time_point::max());
  }
  // Reads give up on Stop(); a response being written is finished.
  ssize_t read(char* ptr, size_t size) override {
    if (pos_ == buffer_.size() && !Fill()) return -1;
    const size_t n = std::min(size, buffer_.size() - pos_);
    std::memcpy(ptr, buffer_.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (drop_writes_) return static_cast<ssize_t>(size);
    while (Wait(POLLOUT, limits_.write_timeout, Clock::time_point::max())) {
      const ssize_t n = send(fd_, ptr, size, MSG_NOSIGNAL);
      if (n >= 0 || (errno != EAGAIN && errno != EINTR)) return n;
    }
    return -1;
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    AddressOf(fd_, true, &ip, &port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    AddressOf(fd_, false, &ip, &port);
  }
  socket_t socket() const override { return fd_; }
  void DropLaterWrites() override { drop_writes_ = true; }

  // The bytes read and not consumed (the start of a pipelined next request).
  std::string TakeUnread() { return buffer_.substr(pos_); }

 private:
  // Reads more into the empty buffer; false on EOF, error, timeout or stop.
  bool Fill() {
    buffer_.clear();
    pos_ = 0;
    char chunk[kReadChunk];
    while (Wait(POLLIN, limits_.read_timeout, read_deadline_)) {
      const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n > 0) {
        buffer_.assign(chunk, static_cast<size_t>(n));
        return true;
      }
      if (n == 0 || (errno != EAGAIN && errno != EINTR)) return false;
    }
    return false;
  }

  // Waits until the socket is ready for `events`, for at most `timeout` and
  // never past `deadline`; false on timeout, or on Stop() while reading.
  bool Wait(short events, std::chrono::milliseconds timeout, Clock::time_point deadline) const {
    const Clock::time_point until = std::min(Clock::now() + timeout, deadline);
    for (Clock::time_point now = Clock::now(); now < until; now = Clock::now()) {
      if (events == POLLIN && stopping_.load()) return false;
      pollfd p{fd_, events, 0};
      const int rc = poll(&p, 1, PollMillis(std::min<Clock::duration>(until - now, kStopCheck)));
      if (rc > 0) return true;  // ready, or hung up / failed: the call that follows says which
      if (rc < 0 && errno != EINTR) return false;
    }
    return false;
  }

  const int fd_;
  std::string buffer_;
  size_t pos_ = 0;
  const ConnectionLimits& limits_;
  const std::atomic<bool>& stopping_;
  const Clock::time_point read_deadline_;
  bool drop_writes_ = false;
};

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

Result<int> BindAndListen(const std::string& host, int port, int backlog) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.c_str(), service.c_str(), &hints, &found) != 0 || found == nullptr) {
    return Status::IoError("server: cannot resolve host \"" + host + "\"");
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    // SO_REUSEADDR only: with SO_REUSEPORT a second server on the same port
    // would start and silently share the traffic.
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, backlog) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) {
    return Status::IoError("server: cannot listen on " + host + ":" + std::to_string(port) +
                           " (address in use, not local, or not permitted)");
  }
  return fd;
}

int BoundPort(int fd) {
  std::string ip;
  int port = 0;
  AddressOf(fd, false, &ip, &port);
  return port;
}

}  // namespace

size_t HeadEnd(std::string_view buffer) {
  for (size_t i = buffer.find('\n'); i != std::string_view::npos; i = buffer.find('\n', i + 1)) {
    if (i + 1 < buffer.size() && buffer[i + 1] == '\n') return i + 2;
    if (i + 2 < buffer.size() && buffer[i + 1] == '\r' && buffer[i + 2] == '\n') return i + 3;
  }
  return std::string_view::npos;
}

// The header lines of `head` (after the request line), without line ends.
template <typename Fn>
void ForEachHeaderLine(std::string_view head, Fn&& fn) {
  for (size_t start = head.find('\n'); start != std::string_view::npos;
       start = head.find('\n', start + 1)) {
    std::string_view line = head.substr(start + 1);
    line = line.substr(0, line.find('\n'));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) fn(line);
  }
}

std::optional<std::string_view> HeaderValue(std::string_view head, std::string_view name) {
  std::optional<std::string_view> found;
  ForEachHeaderLine(head, [&](std::string_view line) {
    const size_t colon = line.find(':');
    if (!found && colon != std::string_view::npos &&
        EqualsIgnoreCase(line.substr(0, colon), name)) {
      found = Trim(line.substr(colon + 1));
    }
  });
  return found;
}

bool IsDecimal(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<uint64_t> AnnouncedContentLength(std::string_view head) {
  const std::optional<std::string_view> value = HeaderValue(head, "content-length");
  if (!value.has_value() || !IsDecimal(*value)) return std::nullopt;
  uint64_t n = 0;
  for (char c : *value) {
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    n = n > (UINT64_MAX - digit) / 10 ? UINT64_MAX : n * 10 + digit;
  }
  return n;
}

std::optional<FramingError> CheckFraming(std::string_view head) {
  size_t lengths = 0;
  std::string_view length;
  std::vector<std::string_view> codings;  // of every Transfer-Encoding line, in order
  std::optional<FramingError> error;
  ForEachHeaderLine(head, [&](std::string_view line) {
    const size_t colon = line.find(':');
    if (error || colon == std::string_view::npos) return;  // httplib refuses a line without ':'
    const std::string_view name = line.substr(0, colon);
    if (name.find_first_of(" \t") != std::string_view::npos) {
      // RFC 9112 §5.1: a proxy could read "Content-Length : 5" as another field.
      error = FramingError{
          400, "bad_request",
          "header \"" + EscapeForMessage(name, 40) + "\": white space before the colon"};
      return;
    }
    const std::string_view value = Trim(line.substr(colon + 1));
    if (EqualsIgnoreCase(name, "content-length")) {
      ++lengths;
      length = value;
    } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
      std::string_view rest = value;
      while (true) {
        const size_t comma = rest.find(',');
        codings.push_back(Trim(rest.substr(0, comma)));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
    }
  });
  if (error) return error;
  if (lengths > 1) {
    return FramingError{400, "bad_request",
                        "more than one Content-Length header: the body's length is ambiguous "
                        "(RFC 9112 section 6.3)"};
  }
  if (lengths == 1 && !IsDecimal(length)) {
    return FramingError{
        400, "bad_request",
        "Content-Length \"" + EscapeForMessage(length, 40) + "\": expected one decimal number"};
  }
  if (codings.empty()) return std::nullopt;
  if (lengths == 1) {
    return FramingError{400, "bad_request",
                        "both Transfer-Encoding and Content-Length: the body's length is "
                        "ambiguous (RFC 9112 section 6.3)"};
  }
  if (!EqualsIgnoreCase(codings.back(), "chunked")) {
    return FramingError{400, "bad_request",
                        "Transfer-Encoding \"" + EscapeForMessage(codings.back(), 40) +
                            "\": a request body's last transfer coding must be chunked"};
  }
  for (size_t i = 0; i + 1 < codings.size(); ++i) {
    if (EqualsIgnoreCase(codings[i], "chunked")) {
      return FramingError{400, "bad_request", "Transfer-Encoding: chunked applied twice"};
    }
  }
  if (codings.size() > 1) {
    return FramingError{501, "not_implemented",
                        "Transfer-Encoding \"" + EscapeForMessage(codings.front(), 40) +
                            "\" is not supported (only chunked)"};
  }
  return std::nullopt;
}

Result<std::unique_ptr<ConnectionServer>> ConnectionServer::Listen(const std::string& host,
                                                                   int port,
                                                                   const ConnectionLimits& limits,
                                                                   ServeFn serve,
                                                                   EarlyReplyFn on_early) {
  Result<int> listen_fd = BindAndListen(host, port, limits.listen_backlog);
  if (!listen_fd.ok()) return listen_fd.status();
  const int wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) {
    close(*listen_fd);
    return Status::IoError(std::string("server: eventfd: ") + std::strerror(errno));
  }
  return std::unique_ptr<ConnectionServer>(new ConnectionServer(
      *listen_fd, wake_fd, BoundPort(*listen_fd), limits, std::move(serve), std::move(on_early)));
}

ConnectionServer::ConnectionServer(int listen_fd, int wake_fd, int port,
                                   const ConnectionLimits& limits, ServeFn serve,
                                   EarlyReplyFn on_early)
    : listen_fd_(listen_fd),
      wake_fd_(wake_fd),
      port_(port),
      limits_(limits),
      serve_(std::move(serve)),
      on_early_(std::move(on_early)) {}

ConnectionServer::~ConnectionServer() {
  Stop();
  close(listen_fd_);
  close(wake_fd_);
}

void ConnectionServer::Start() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (poller_.joinable() || stopping_.load()) return;
  workers_ = std::make_unique<httplib::ThreadPool>(std::max<size_t>(1, limits_.workers));
  poller_ = std::thread([this] { PollLoop(); });
}

void ConnectionServer::Stop() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  stopping_.store(true);
  Wake();
  if (poller_.joinable()) poller_.join();
  if (workers_ != nullptr) {
    workers_->shutdown();  // requests being served finish; their connections are handed back
    workers_.reset();
  }
  std::vector<Connection> left;
  {
    std::lock_guard<std::mutex> guard(mu_);
    left.swap(handed_back_);
  }
  for (const Connection& c : left) CloseConnection(c.fd);
}

void ConnectionServer::Wake() const {
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
}

void ConnectionServer::CloseConnection(int fd) {
  close(fd);
  open_.fetch_sub(1);
}

void ConnectionServer::PollLoop() {
  std::vector<Connection> waiting;
  std::vector<pollfd> fds;
  while (!stopping_.load()) {
    TakeHandedBack(&waiting);
    Clock::time_point next = Clock::now() + std::chrono::seconds(1);
    const bool accepting = Clock::now() >= accept_paused_until_;
    fds.assign({{wake_fd_, POLLIN, 0}, {accepting ? listen_fd_ : -1, POLLIN, 0}});
    if (!accepting) next = std::min(next, accept_paused_until_);
    for (const Connection& c : waiting) {
      fds.push_back({c.fd, POLLIN, 0});
      next = std::min(next, c.deadline);
    }
    const int rc = poll(fds.data(), fds.size(), PollMillis(next - Clock::now()));
    if (rc < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) {
      uint64_t n;
      (void)!::read(wake_fd_, &n, sizeof(n));
    }
    // Connections first (fds[2 + i] is waiting[i]), then new ones.
    std::vector<Connection> still;
    const Clock::time_point now = Clock::now();
    for (size_t i = 0; i < waiting.size(); ++i) {
      Connection& c = waiting[i];
      if (fds[2 + i].revents != 0 && !ReadHead(c)) continue;
      if (now < c.deadline) {
        still.push_back(std::move(c));
      } else if (c.state == Connection::State::kHead) {
        Refuse(c, {408, "request_timeout"},
               "request head not received within " + Seconds(limits_.head_timeout));
        still.push_back(std::move(c));
      } else if (c.state == Connection::State::kBody) {
        Refuse(c, {408, "request_timeout"},
               "request body not received within " + Seconds(limits_.body_timeout) +
                   " (or stalled for " + Seconds(limits_.read_timeout) + ")");
        still.push_back(std::move(c));
      } else {
        CloseConnection(c.fd);
      }
    }
    waiting.swap(still);
    if (fds[1].revents != 0) AcceptAll(&waiting);
  }
  for (const Connection& c : waiting) CloseConnection(c.fd);
  std::lock_guard<std::mutex> lock(mu_);
  poller_done_ = true;
}

void ConnectionServer::AcceptAll(std::vector<Connection>* waiting) {
  for (int i = 0; i < 256; ++i) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      // Out of descriptors: the backlog holds the rest until some close.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        accept_paused_until_ = Clock::now() + std::chrono::milliseconds(100);
      }
      return;
    }
    int yes = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    if (open_.fetch_add(1) >= limits_.max_connections) {
      const std::string response =
          ErrorResponse({503, "unavailable"}, "too many open connections (" +
                                                  std::to_string(limits_.max_connections) +
                                                  "); retry later");
      char sink[4096];
      while (recv(fd, sink, sizeof(sink), 0) > 0) {
      }
      (void)!send(fd, response.data(), response.size(), MSG_NOSIGNAL);
      if (on_early_) on_early_({503, "unavailable"});
      CloseConnection(fd);
      continue;
    }
    Connection c;
    c.fd = fd;
    c.deadline = Clock::now() + limits_.idle_timeout;
    waiting->push_back(std::move(c));
  }
}

bool ConnectionServer::ReadHead(Connection& c) {
  char chunk[kReadChunk];
  const ssize_t n = recv(c.fd, chunk, sizeof(chunk), 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
  if (n <= 0) {
    ReleaseBody(c);
    CloseConnection(c.fd);
    return false;
  }
  if (c.state == Connection::State::kDraining) return true;
  if (c.state == Connection::State::kBody) {
    c.buffer.append(chunk, static_cast<size_t>(n));
    if (c.buffer.size() < c.complete_at) {
      c.deadline = std::min(c.body_deadline, Clock::now() + limits_.read_timeout);
      return true;
    }
    ReleaseBody(c);
    Dispatch(c);
    return false;
  }
  if (c.state == Connection::State::kIdle) {
    c.state = Connection::State::kHead;
    c.deadline = Clock::now() + limits_.head_timeout;
  }
  c.buffer.append(chunk, static_cast<size_t>(n));
  return ScanHead(c);
}

bool ConnectionServer::ScanHead(Connection& c) {
  const size_t end = HeadEnd(c.buffer);
  const size_t head_bytes = end != std::string::npos ? end : c.buffer.size();
  if (head_bytes > limits_.max_head_bytes) {
    Refuse(c, {431, "header_too_large"},
           "request head larger than " + std::to_string(limits_.max_head_bytes) + " bytes");
    return true;
  }
  if (end == std::string::npos) return true;
  return HeadComplete(c, end);
}

bool ConnectionServer::HeadComplete(Connection& c, size_t head_end) {
  const std::string_view head = std::string_view(c.buffer).substr(0, head_end);
  if (std::optional<FramingError> error = CheckFraming(head)) {
    Refuse(c, {error->http_status, error->code}, error->message);
    return true;
  }
  const std::optional<uint64_t> length = AnnouncedContentLength(head);
  if (length.has_value() && *length > limits_.max_body_bytes) {
    Refuse(c, {413, "payload_too_large"},
           "request body of " + std::to_string(*length) + " bytes larger than " +
               std::to_string(limits_.max_body_bytes) + " bytes");
    return true;
  }
  const size_t body = static_cast<size_t>(length.value_or(0));
  // A client that waits for "100 Continue" sends its body to the worker.
  const bool waits = HeaderValue(head, "expect").has_value();
  if (c.buffer.size() < head_end + body && !waits &&
      buffered_body_bytes_ + body <= limits_.max_buffered_body_bytes) {
    buffered_body_bytes_ += body;
    c.reserved = body;
    c.state = Connection::State::kBody;
    c.complete_at = head_end + body;
    c.body_deadline = Clock::now() + limits_.body_timeout;
    c.deadline = std::min(c.body_deadline, Clock::now() + limits_.read_timeout);
    return true;
  }
  Dispatch(c);
  return false;
}

void ConnectionServer::Dispatch(Connection& c) {
  Connection job = std::move(c);
  workers_->enqueue([this, job]() { Serve(job); });
}

void ConnectionServer::ReleaseBody(Connection& c) {
  buffered_body_bytes_ -= c.reserved;
  c.reserved = 0;
}

void ConnectionServer::Refuse(Connection& c, const EarlyReply& reply, std::string_view message) {
  ReleaseBody(c);
  const std::string response = ErrorResponse(reply, message);
  (void)!send(c.fd, response.data(), response.size(), MSG_NOSIGNAL);
  shutdown(c.fd, SHUT_WR);
  if (on_early_) on_early_(reply);
  c.buffer.clear();
  c.state = Connection::State::kDraining;
  c.deadline = Clock::now() + kDrainTime;
}

void ConnectionServer::Serve(Connection c) {
  if (stopping_.load()) {
    CloseConnection(c.fd);
    return;
  }
  ConnectionStream stream(c.fd, std::move(c.buffer), limits_, stopping_);
  const bool keep = serve_(stream) && !stopping_.load();
  if (!keep) {
    CloseConnection(c.fd);
    return;
  }
  c.buffer = stream.TakeUnread();
  HandBack(std::move(c));
}

void ConnectionServer::HandBack(Connection c) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!poller_done_) {
      handed_back_.push_back(std::move(c));
      c.fd = -1;
    }
  }
  if (c.fd >= 0) {
    CloseConnection(c.fd);
  } else {
    Wake();
  }
}

void ConnectionServer::TakeHandedBack(std::vector<Connection>* waiting) {
  std::vector<Connection> back;
  {
    std::lock_guard<std::mutex> lock(mu_);
    back.swap(handed_back_);
  }
  for (Connection& c : back) {
    const bool idle = c.buffer.empty();
    c.state = idle ? Connection::State::kIdle : Connection::State::kHead;
    c.deadline = Clock::now() + (idle ? limits_.idle_timeout : limits_.head_timeout);
    if (!idle && !ScanHead(c)) continue;
    waiting->push_back(std::move(c));
  }
}

}  // namespace flowrag::server
