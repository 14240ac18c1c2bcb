// Server (include/flowrag/server.h) on cpp-httplib: one catch-all handler per
// HTTP method feeds Dispatch(), which owns routing (404 / 405), auth (401),
// body limits (413 / 408) and the JSON error shape; the pre- and post-routing
// hooks bracket every request for the metrics.
#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "flowrag/engine.h"
#include "flowrag/server.h"
#include "server/errors.h"
#include "server/handlers.h"
#include "server/metrics.h"
#include "server/request_json.h"
#include "server/routes.h"
#include "server/viewer_page.h"

namespace flowrag {
namespace server {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kJsonType[] = "application/json; charset=utf-8";

// What the hooks of one request share. httplib serves a request on one
// worker thread from the pre-routing hook to the logger, so thread-local
// state is per request.
struct RequestContext {
  bool active = false;  // the pre-routing hook ran (counted in flight)
  Clock::time_point start;
  std::string workspace;   // metrics label, set once the workspace is known
  std::string error_code;  // metrics label of an error reply
};
thread_local RequestContext tl_request;

// [A-Za-z0-9_.-]{1,64}
bool ValidWorkspaceName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

// Equal-time comparison of a presented token with the configured one.
bool TokenMatches(std::string_view presented, std::string_view expected) {
  unsigned diff = presented.size() == expected.size() ? 0u : 1u;
  for (size_t i = 0; i < presented.size(); ++i) {
    diff |= static_cast<unsigned char>(presented[i]) ^
            static_cast<unsigned char>(expected[i % std::max<size_t>(1, expected.size())]);
  }
  return diff == 0;
}

// The error shape for statuses httplib answers by itself (a request it could
// not read, a body over the limit).
ApiError ProtocolError(int status) {
  switch (status) {
    case 400:
      return {400, "bad_request", "malformed HTTP request", ""};
    case 404:
      return {404, "not_found", "no such route", ""};
    case 408:
      return {408, "request_timeout", "request not received in time", ""};
    case 413:
      return {413, "payload_too_large", "request body too large", ""};
    case 414:
      return {414, "uri_too_long", "request URI too long", ""};
    default:
      break;
  }
  return {status, status >= 500 ? "internal" : "bad_request", "HTTP " + std::to_string(status), ""};
}

void SetJson(httplib::Response& res, const Reply& reply) {
  res.status = reply.http_status;
  res.set_content(reply.body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  kJsonType);
  tl_request.error_code = reply.error_code;
}

class ServerImpl final : public Server {
 public:
  struct Workspace {
    std::string name;
    std::unique_ptr<Engine> engine;
  };

  ServerImpl(ServerOptions options, std::vector<Workspace> workspaces)
      : options_(std::move(options)), workspaces_(std::move(workspaces)) {
    Configure();
  }
  ~ServerImpl() override { Stop(); }

  Status Start() override;
  int port() const override { return port_.load(); }
  void Stop() override;
  void Wait() override;

 private:
  void Configure();
  void Dispatch(const httplib::Request& req, httplib::Response& res,
                const httplib::ContentReader* reader);
  // Reads the body through `reader` within the size and time limits.
  std::optional<ApiError> ReadBody(const httplib::Request& req,
                                   const httplib::ContentReader& reader, std::string* body) const;
  Reply Handle(const Route& route, Workspace& ws, const std::string& body);
  Workspace* FindWorkspace(const Route& route);
  bool Authorized(const httplib::Request& req) const;
  void LogRequest(const httplib::Request& req, const httplib::Response& res);

  const ServerOptions options_;
  std::vector<Workspace> workspaces_;  // [0]: the default workspace
  Metrics metrics_;
  httplib::Server http_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false;  // guarded by mu_
  bool stopped_ = false;  // guarded by mu_
  std::mutex stop_mu_;    // serialises Stop()
  std::thread listener_;  // guarded by stop_mu_ after Start()
  std::atomic<int> port_{0};
};

void ServerImpl::Configure() {
  size_t threads = options_.threads;
  if (threads == 0) threads = std::max<size_t>(8, 2 * std::thread::hardware_concurrency());
  http_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http_.set_payload_max_length(options_.max_body_bytes);
  http_.set_read_timeout(options_.read_timeout_s, 0);
  http_.set_write_timeout(options_.write_timeout_s, 0);
  http_.set_keep_alive_timeout(options_.keep_alive_timeout_s);
  http_.set_keep_alive_max_count(1000);
  http_.set_tcp_nodelay(true);
  // httplib's default also sets SO_REUSEPORT, with which a second server on
  // the same port would start and silently share the traffic.
  http_.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  http_.set_default_headers({{"X-Content-Type-Options", "nosniff"}});

  http_.set_pre_routing_handler([this](const httplib::Request&, httplib::Response&) {
    tl_request = RequestContext{true, Clock::now(), "", ""};
    metrics_.RequestStarted();
    return httplib::Server::HandlerResponse::Unhandled;
  });
  auto plain = [this](const httplib::Request& req, httplib::Response& res) {
    Dispatch(req, res, nullptr);
  };
  auto with_body = [this](const httplib::Request& req, httplib::Response& res,
                          const httplib::ContentReader& reader) { Dispatch(req, res, &reader); };
  http_.Get(".*", plain);
  http_.Options(".*", plain);
  http_.Post(".*", httplib::Server::HandlerWithContentReader(with_body));
  http_.Put(".*", httplib::Server::HandlerWithContentReader(with_body));
  http_.Patch(".*", httplib::Server::HandlerWithContentReader(with_body));
  http_.Delete(".*", httplib::Server::HandlerWithContentReader(with_body));
  // Statuses httplib sets by itself (unreadable request, body over the
  // limit, an unknown HTTP method) get the JSON error shape too.
  http_.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        SetJson(res, ErrorReply(ProtocolError(res.status)));
        return httplib::Server::HandlerResponse::Handled;
      }));
  http_.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unexpected error";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        SetJson(res, ErrorReply({500, "internal", what, ""}));
      });
  // Runs once the response is final and before it is written, so a client
  // that has read its response finds the request counted.
  http_.set_post_routing_handler(
      [this](const httplib::Request& req, httplib::Response& res) { LogRequest(req, res); });
}

void ServerImpl::LogRequest(const httplib::Request& req, const httplib::Response& res) {
  RequestContext& ctx = tl_request;
  const double seconds =
      ctx.active ? std::chrono::duration<double>(Clock::now() - ctx.start).count() : -1.0;
  std::string error_code = ctx.error_code;
  if (error_code.empty() && res.status >= 400) error_code = ProtocolError(res.status).code;
  const RouteKind kind = ParseRoute(req.path).kind;
  metrics_.RequestFinished(RouteLabel(kind), req.method, res.status, ctx.workspace, seconds,
                           error_code, ctx.active);
  if (options_.access_log) {
    std::fprintf(stderr, "%s %s %s %d %.1fms\n", req.remote_addr.c_str(), req.method.c_str(),
                 req.path.c_str(), res.status, seconds * 1000.0);
  }
  ctx = RequestContext{};
}

bool ServerImpl::Authorized(const httplib::Request& req) const {
  if (options_.bearer_token.empty()) return true;
  const std::string header = req.get_header_value("Authorization");
  constexpr std::string_view kScheme = "Bearer ";
  if (header.size() <= kScheme.size() || header.compare(0, kScheme.size(), kScheme) != 0) {
    return false;
  }
  return TokenMatches(std::string_view(header).substr(kScheme.size()), options_.bearer_token);
}

ServerImpl::Workspace* ServerImpl::FindWorkspace(const Route& route) {
  if (route.default_workspace) return &workspaces_.front();
  for (Workspace& ws : workspaces_) {
    if (ws.name == route.workspace) return &ws;
  }
  return nullptr;
}

std::optional<ApiError> ServerImpl::ReadBody(const httplib::Request& req,
                                             const httplib::ContentReader& reader,
                                             std::string* body) const {
  const Clock::time_point deadline =
      tl_request.start + std::chrono::seconds(options_.body_timeout_s);
  bool too_large = false;
  bool too_slow = false;
  const bool ok = reader([&](const char* data, size_t n) {
    if (body->size() + n > options_.max_body_bytes) {
      too_large = true;
      return false;
    }
    if (Clock::now() > deadline) {
      too_slow = true;
      return false;
    }
    body->append(data, n);
    return true;
  });
  if (ok) return std::nullopt;
  // httplib skips a body whose Content-Length is over the limit without
  // handing us a byte.
  if (req.has_header("Content-Length") &&
      req.get_header_value<uint64_t>("Content-Length") > options_.max_body_bytes) {
    too_large = true;
  }
  if (too_large) {
    return ApiError{
        413, "payload_too_large",
        "request body larger than " + std::to_string(options_.max_body_bytes) + " bytes", ""};
  }
  if (too_slow) {
    return ApiError{
        408, "request_timeout",
        "request body not received within " + std::to_string(options_.body_timeout_s) + " s", ""};
  }
  return ApiError{408, "request_timeout",
                  "request body incomplete: the client stopped sending for " +
                      std::to_string(options_.read_timeout_s) + " s or closed the connection",
                  ""};
}

void ServerImpl::Dispatch(const httplib::Request& req, httplib::Response& res,
                          const httplib::ContentReader* reader) {
  const Route route = ParseRoute(req.path);
  // A body is read (or drained) before anything is answered, so that the
  // connection stays in step for the next request.
  std::string body;
  if (reader != nullptr) {
    const bool has_body =
        req.has_header("Content-Length") ||
        req.get_header_value("Transfer-Encoding").find("chunked") != std::string::npos;
    if (!has_body && req.method != "DELETE") {
      res.set_header("Connection", "close");
      SetJson(res, ErrorReply({411, "length_required",
                               "a request body needs Content-Length or chunked encoding", ""}));
      return;
    }
    if (has_body) {
      if (auto e = ReadBody(req, *reader, &body)) {
        res.set_header("Connection", "close");
        SetJson(res, ErrorReply(*e));
        return;
      }
    }
  }
  if (route.kind == RouteKind::kUnknown) {
    SetJson(res,
            ErrorReply({404, "not_found",
                        "no route " + req.method + " " + req.path + " (see doc/http_api.md)", ""}));
    return;
  }
  if (NeedsAuth(route.kind) && !Authorized(req)) {
    res.set_header("WWW-Authenticate", "Bearer realm=\"flowrag\"");
    SetJson(res, ErrorReply({401, "unauthorized",
                             req.has_header("Authorization")
                                 ? "invalid bearer token"
                                 : "missing header \"Authorization: Bearer <token>\"",
                             ""}));
    return;
  }
  Workspace* ws = FindWorkspace(route);
  if (ws == nullptr) {
    SetJson(res, ErrorReply({404, "workspace_not_found", "no workspace \"" + route.workspace + "\"",
                             "workspace"}));
    return;
  }
  tl_request.workspace = ws->name;
  if (req.method == "OPTIONS") {
    res.status = 204;
    res.set_header("Allow", std::string(AllowedMethods(route.kind)));
    return;
  }
  if (!MethodAllowed(route.kind, req.method)) {
    res.set_header("Allow", std::string(AllowedMethods(route.kind)));
    SetJson(res, ErrorReply({405, "method_not_allowed",
                             req.method + " " + std::string(RouteLabel(route.kind)) + ": allowed " +
                                 std::string(AllowedMethods(route.kind)),
                             ""}));
    return;
  }
  switch (route.kind) {
    case RouteKind::kViewer:
      res.set_header("Cache-Control", "no-store");
      // Nothing but this page and the API of its own origin.
      res.set_header("Content-Security-Policy",
                     "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                     "connect-src 'self'; img-src 'self' data:");
      res.set_content(std::string(ViewerHtml()), "text/html; charset=utf-8");
      return;
    case RouteKind::kHealthz:
      SetJson(res, OkReply({{"status", "ok"}}));
      return;
    case RouteKind::kMetrics:
      res.set_content(metrics_.Render(), "text/plain; version=0.0.4; charset=utf-8");
      return;
    default:
      SetJson(res, Handle(route, *ws, body));
      return;
  }
}

Reply ServerImpl::Handle(const Route& route, Workspace& ws, const std::string& body) {
  switch (route.kind) {
    case RouteKind::kQuery: {
      nlohmann::json request;
      if (auto e = ParseJsonObject(body, &request)) return ErrorReply(*e);
      return HandleQuery(*ws.engine, request, options_.query_deadline_ms);
    }
    case RouteKind::kDocuments: {
      nlohmann::json request;
      if (auto e = ParseJsonObject(body, &request)) return ErrorReply(*e);
      return HandleInsertDocuments(*ws.engine, request);
    }
    case RouteKind::kDocument:
      return HandleDeleteDocument(*ws.engine, route.document_id);
    case RouteKind::kStats:
      return HandleStats(*ws.engine, ws.name);
    case RouteKind::kMethods:
      return HandleMethods();
    default:
      return ErrorReply({500, "internal", "unhandled route", ""});
  }
}

Status ServerImpl::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (started_ || stopped_) return Status::FailedPrecondition("server: Start() called twice");
    started_ = true;
  }
  int port = options_.port;
  if (port == 0) {
    port = http_.bind_to_any_port(options_.host);
  } else if (!http_.bind_to_port(options_.host, port)) {
    port = -1;
  }
  if (port <= 0) {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    cv_.notify_all();
    return Status::IoError("server: cannot listen on " + options_.host + ":" +
                           std::to_string(options_.port) +
                           " (address in use, not local, or not permitted)");
  }
  port_ = port;
  {
    std::lock_guard<std::mutex> stop_lock(stop_mu_);
    listener_ = std::thread([this] {
      http_.listen_after_bind();
      std::lock_guard<std::mutex> lock(mu_);
      stopped_ = true;
      cv_.notify_all();
    });
  }
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(5);
  while (!http_.is_running() && Clock::now() < give_up) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!http_.is_running()) {
    Stop();
    return Status::Internal("server: the accept loop did not start");
  }
  return Status::Ok();
}

void ServerImpl::Stop() {
  std::lock_guard<std::mutex> stop_lock(stop_mu_);
  http_.stop();
  if (listener_.joinable()) {
    if (listener_.get_id() == std::this_thread::get_id()) {
      listener_.detach();
    } else {
      listener_.join();
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = true;
  cv_.notify_all();
}

void ServerImpl::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return stopped_; });
}

}  // namespace
}  // namespace server

Result<std::unique_ptr<Server>> Server::Create(const ServerOptions& options,
                                               std::vector<WorkspaceSpec> workspaces) {
  if (workspaces.empty()) return Status::InvalidArgument("server: no workspace to serve");
  if (options.port < 0 || options.port > 65535) {
    return Status::InvalidArgument("server port " + std::to_string(options.port) +
                                   ": expected 0 to 65535");
  }
  if (options.max_body_bytes == 0 || options.read_timeout_s <= 0 || options.write_timeout_s <= 0 ||
      options.body_timeout_s <= 0) {
    return Status::InvalidArgument(
        "server options: max_body_bytes, read_timeout_s, write_timeout_s and body_timeout_s must "
        "be positive");
  }
  std::vector<server::ServerImpl::Workspace> opened;
  for (const WorkspaceSpec& spec : workspaces) {
    if (!server::ValidWorkspaceName(spec.name)) {
      return Status::InvalidArgument("workspace name \"" + spec.name +
                                     "\": expected 1 to 64 of [A-Za-z0-9_.-]");
    }
    for (const auto& ws : opened) {
      if (ws.name == spec.name) {
        return Status::InvalidArgument("workspace \"" + spec.name + "\" given twice");
      }
    }
    Result<std::unique_ptr<Engine>> engine = Engine::Open(spec.db_path, options.engine);
    if (!engine.ok()) return engine.status().WithContext("workspace \"" + spec.name + "\"");
    opened.push_back({spec.name, std::move(engine).value()});
  }
  return std::unique_ptr<Server>(new server::ServerImpl(options, std::move(opened)));
}

}  // namespace flowrag
