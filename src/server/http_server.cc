// Server (include/flowrag/server.h): ConnectionServer (server/connections.h)
// accepts connections and reads request heads; each complete head goes to
// cpp-httplib's request parser on a worker thread. One catch-all handler per
// HTTP method feeds Dispatch(), which owns auth (401, first), routing (404 /
// 405), body limits (411 / 413 / 408) and the JSON error shape; the pre- and
// post-routing hooks bracket every request for the metrics.
#include <httplib.h>
#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include "common/encoding.h"
#include "flowrag/engine.h"
#include "flowrag/server.h"
#include "server/assets.h"
#include "server/connections.h"
#include "server/errors.h"
#include "server/handlers.h"
#include "server/metrics.h"
#include "server/openapi.h"
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
  // The store locations of the request's workspace as JSON text spells them
  // (HideStoreLocations); null until the workspace is known.
  const std::vector<std::string>* store_locations = nullptr;
};
thread_local RequestContext tl_request;
// Whether the response just written closes the connection (set by the
// post-routing hook, read by the worker that serves the connection).
thread_local bool tl_close_after = false;
// The stream of the request this worker serves (for streamed replies).
thread_local ServedStream* tl_stream = nullptr;

// Bodies up to this size are read and dropped when a request is refused
// before its body is read, so that the connection stays usable; a larger
// body closes the connection instead.
constexpr uint64_t kMaxDrainedBody = 64u << 10;

// Error messages quote at most this much of a path.
constexpr size_t kMaxQuotedBytes = 80;

// File descriptors kept out of max_connections (stores, logs, the listener).
constexpr size_t kReservedFiles = 64;

// httplib's request parser, serving one request from a Stream.
class RequestParser final : public httplib::Server {
 public:
  // Whether the connection may carry another request.
  bool ServeOne(ServedStream& stream) {
    bool client_closes = false;
    tl_close_after = false;
    tl_stream = &stream;
    const bool ok = process_request(stream, /*close_connection=*/false, client_closes, nullptr);
    return ok && !client_closes && !tl_close_after;
  }
};

// The raw path of the request target (percent-encoding kept, no query string).
std::string_view RawPath(const httplib::Request& req) {
  std::string_view target = req.target;
  return target.substr(0, target.find('?'));
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

// What the server's errors say instead of where a workspace's store lives.
constexpr std::string_view kHiddenLocation = "(the workspace's store)";

// The spellings of a store location an engine error may carry (the location
// given, redacted for a URL, and a file's absolute path), as JSON strings
// hold them: what HideStoreLocations replaces. Relative file names without a
// directory are left alone (they say nothing of the file system, and a short
// one could be any word of a message).
std::vector<std::string> StoreLocationSpellings(const std::string& location) {
  std::vector<std::string> raw;
  if (IsDatabaseUrl(location)) {
    raw = {location, DisplayLocation(location)};
  } else if (!location.empty() && location != ":memory:") {
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(location, ec);
    raw = {location, ec ? location : absolute.lexically_normal().string()};
    if (std::filesystem::path p = std::filesystem::weakly_canonical(location, ec); !ec) {
      raw.push_back(p.string());
    }
  }
  std::vector<std::string> out;
  for (const std::string& r : raw) {
    if (r.find('/') == std::string::npos) continue;
    const std::string quoted =
        nlohmann::json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    out.push_back(quoted.substr(1, quoted.size() - 2));
  }
  // Longest first, so that a path is hidden whole before a part of it.
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return out;
}

// Errors built by the engine and the store name the store's file or URL
// (useful to the CLI's user, not to an HTTP client): every spelling in
// tl_request.store_locations is replaced in `json_text`.
void HideStoreLocations(std::string* json_text) {
  if (tl_request.store_locations == nullptr) return;
  for (const std::string& location : *tl_request.store_locations) {
    for (size_t at = json_text->find(location); at != std::string::npos;
         at = json_text->find(location, at + kHiddenLocation.size())) {
      json_text->replace(at, location.size(), kHiddenLocation);
    }
  }
}

void SetJson(httplib::Response& res, const Reply& reply) {
  res.status = reply.http_status;
  std::string body = reply.body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (reply.http_status >= 400) HideStoreLocations(&body);
  res.set_content(body, kJsonType);
  tl_request.error_code = reply.error_code;
}

// Writes all of `bytes`; false when the client is gone or stalled for
// write_timeout.
bool WriteAll(httplib::Stream& out, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = out.write(bytes.data(), bytes.size());
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// A streamed reply as Server-Sent Events, written by this worker as it is
// made (httplib's content providers wait for a listening httplib::Server,
// which ours is not): the head with the first write, then one chunk per
// write, then the last chunk; the connection closes after it. A stream that
// refuses before its first write is answered as a plain JSON error instead.
// A failed write (the client left, or stalled for write_timeout) makes the
// writer stop, which cancels the answer.
void StreamReply(httplib::Response& res, const StreamFn& stream) {
  ServedStream& out = *tl_stream;
  bool started = false;
  bool ok = true;
  const StreamWriter write = [&](std::string_view bytes) {
    if (!ok || bytes.empty()) return ok;
    if (!started) {
      started = true;
      ok = WriteAll(out,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
                    "Cache-Control: no-store\r\nX-Accel-Buffering: no\r\n"
                    "X-Content-Type-Options: nosniff\r\nTransfer-Encoding: chunked\r\n"
                    "Connection: close\r\n\r\n");
    }
    std::string data(bytes);
    HideStoreLocations(&data);
    char size[24];
    std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
    ok = ok && WriteAll(out, size) && WriteAll(out, data) && WriteAll(out, "\r\n");
    return ok;
  };
  Reply refused;
  refused.http_status = 0;
  stream(write, &refused);
  if (!started && refused.http_status != 0) return SetJson(res, refused);
  if (!started) write("\n");  // nothing to say: an empty stream
  if (ok) WriteAll(out, "0\r\n\r\n");
  out.DropLaterWrites();
  res.status = 200;
  res.set_header("Connection", "close");
}

// MCP Streamable HTTP (routes_mcp.cc): the headers it reads, the reply it makes.
void ServeMcp(const httplib::Request& req, const std::string& body, Engine& engine,
              bool read_only, httplib::Response& res) {
  McpHttpRequest request{body,
                         req.get_header_value("MCP-Protocol-Version"),
                         req.get_header_value("Accept"),
                         req.get_header_value("Content-Type"),
                         req.get_header_value("Origin"),
                         req.get_header_value("Host"),
                         read_only};
  McpHttpReply reply = HandleMcp(engine, request);
  res.status = reply.http_status;
  // Tool errors are results (isError), so every body is cleaned.
  HideStoreLocations(&reply.body);
  if (!reply.body.empty()) res.set_content(reply.body, kJsonType);
  tl_request.error_code = reply.error_code;
}

class ServerImpl final : public Server {
 public:
  struct Workspace {
    std::string name;
    std::unique_ptr<Engine> engine;
    std::string token;  // WorkspaceSpec::token
    std::vector<std::string> store_locations;  // StoreLocationSpellings of its db_path
    std::shared_ptr<ChatModel> rewriter;       // QueryRewriteModel; null: offline
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
  ConnectionLimits Limits() const;
  void Dispatch(const httplib::Request& req, httplib::Response& res,
                const httplib::ContentReader* reader);
  // Auth, route, workspace and method, checked before any body is read.
  // Sets *ws, or answers `res` (204 for OPTIONS, or an error) and returns true.
  bool Refused(const httplib::Request& req, const Route& route, httplib::Response& res,
               Workspace** ws);
  // The request's body into *body; answers `res` and returns false on an error.
  bool ReceiveBody(const httplib::Request& req, const httplib::ContentReader& reader,
                   httplib::Response& res, std::string* body) const;
  // Reads the body through `reader` within the size and time limits.
  std::optional<ApiError> ReadBody(const httplib::Request& req,
                                   const httplib::ContentReader& reader, std::string* body) const;
  Reply Handle(const Route& route, Workspace& ws, const std::string& body);
  Workspace* FindWorkspace(const Route& route);
  // Whether the request may use `ws` (null: a route of no workspace, e.g.
  // /metrics): the server's token opens everything, a workspace's token only
  // that workspace; with neither configured, everything is open.
  bool Authorized(const httplib::Request& req, const Workspace* ws) const;
  void LogRequest(const httplib::Request& req, const httplib::Response& res);

  const ServerOptions options_;
  std::vector<Workspace> workspaces_;  // [0]: the default workspace
  Metrics metrics_;
  RequestParser http_;
  std::unique_ptr<ConnectionServer> connections_;  // guarded by stop_mu_ after Start()

  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false;  // guarded by mu_
  bool stopped_ = false;  // guarded by mu_
  std::mutex stop_mu_;  // serialises Start() and Stop()
  std::atomic<int> port_{0};
};

void ServerImpl::Configure() {
  // Sockets, timeouts and worker threads belong to connections_; httplib
  // parses requests, routes them to the handlers below and writes responses.
  http_.set_payload_max_length(options_.max_body_bytes);
  http_.set_keep_alive_timeout(options_.keep_alive_timeout_s);
  http_.set_keep_alive_max_count(1000);
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
        SetJson(res, ErrorReply({500, "internal", EscapeForMessage(what), ""}));
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
  // A request httplib could not parse (never routed) closes its connection.
  tl_close_after = !ctx.active || res.get_header_value("Connection") == "close";
  const RouteKind kind = ParseRoute(RawPath(req)).kind;
  metrics_.RequestFinished(RouteLabel(kind), req.method, res.status, ctx.workspace, seconds,
                           error_code, ctx.active);
  if (options_.access_log) {
    std::fprintf(stderr, "%s %s %s %d %.1fms\n", req.remote_addr.c_str(), req.method.c_str(),
                 req.path.c_str(), res.status, seconds * 1000.0);
  }
  ctx = RequestContext{};
}

bool ServerImpl::Authorized(const httplib::Request& req, const Workspace* ws) const {
  const bool workspace_token = ws != nullptr && !ws->token.empty();
  if (options_.bearer_token.empty() && !workspace_token) return true;
  const std::string header = req.get_header_value("Authorization");
  constexpr std::string_view kScheme = "Bearer ";
  if (header.size() <= kScheme.size() || header.compare(0, kScheme.size(), kScheme) != 0) {
    return false;
  }
  const std::string_view presented = std::string_view(header).substr(kScheme.size());
  return (!options_.bearer_token.empty() && TokenMatches(presented, options_.bearer_token)) ||
         (workspace_token && TokenMatches(presented, ws->token));
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
  // The connection's reads end at body_timeout_s + read_timeout_s.
  too_slow = too_slow || Clock::now() > deadline;
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

bool ServerImpl::Refused(const httplib::Request& req, const Route& route,
                         httplib::Response& res, Workspace** ws) {
  // The workspace is looked up first (its token may open it) but revealed
  // only after the token is checked.
  Workspace* found = route.kind == RouteKind::kUnknown || route.kind == RouteKind::kMetrics
                         ? nullptr
                         : FindWorkspace(route);
  if (NeedsAuth(route.kind) && !Authorized(req, found)) {
    res.set_header("WWW-Authenticate", "Bearer realm=\"flowrag\"");
    SetJson(res, ErrorReply({401, "unauthorized",
                             req.has_header("Authorization")
                                 ? "invalid bearer token"
                                 : "missing header \"Authorization: Bearer <token>\"",
                             ""}));
    return true;
  }
  if (route.kind == RouteKind::kUnknown) {
    SetJson(res, ErrorReply({404, "not_found",
                             "no route " + req.method + " " +
                                 EscapeForMessage(RawPath(req), kMaxQuotedBytes) +
                                 " (see doc/http_api.md)",
                             ""}));
    return true;
  }
  *ws = route.kind == RouteKind::kMetrics ? &workspaces_.front() : found;
  if (*ws == nullptr) {
    SetJson(res, ErrorReply({404, "workspace_not_found", "no workspace \"" +
                                 EscapeForMessage(route.workspace, kMaxQuotedBytes) + "\"",
                             "workspace"}));
    return true;
  }
  tl_request.workspace = (*ws)->name;
  tl_request.store_locations = &(*ws)->store_locations;
  if (req.method == "OPTIONS") {
    res.status = 204;
    res.set_header("Allow", std::string(AllowedMethods(route.kind)));
    return true;
  }
  if (!MethodAllowed(route.kind, req.method)) {
    res.set_header("Allow", std::string(AllowedMethods(route.kind)));
    SetJson(res, ErrorReply({405, "method_not_allowed",
                             req.method + " " + std::string(RouteLabel(route.kind)) + ": allowed " +
                                 std::string(AllowedMethods(route.kind)),
                             ""}));
    return true;
  }
  return false;
}

bool ServerImpl::ReceiveBody(const httplib::Request& req, const httplib::ContentReader& reader,
                             httplib::Response& res, std::string* body) const {
  const bool has_body =
      req.has_header("Content-Length") ||
      req.get_header_value("Transfer-Encoding").find("chunked") != std::string::npos;
  std::optional<ApiError> error;
  if (!has_body && req.method != "DELETE") {
    error = ApiError{411, "length_required",
                     "a request body needs Content-Length or chunked encoding", ""};
  } else if (has_body) {
    error = ReadBody(req, reader, body);
  }
  if (!error) return true;
  res.set_header("Connection", "close");
  SetJson(res, ErrorReply(*error));
  return false;
}

// A request refused before its body was read: a small announced body is read
// and dropped so that the connection stays usable, any other closes it.
void DropBody(const httplib::Request& req, const httplib::ContentReader* reader,
              httplib::Response& res) {
  if (reader == nullptr) return;  // httplib read the body already
  const bool chunked = req.get_header_value("Transfer-Encoding").find("chunked") != std::string::npos;
  if (!chunked && !req.has_header("Content-Length")) return;  // no body
  const uint64_t length = req.get_header_value<uint64_t>("Content-Length");
  if (!chunked && length <= kMaxDrainedBody && (*reader)([](const char*, size_t) { return true; })) {
    return;
  }
  res.set_header("Connection", "close");
}

void ServerImpl::Dispatch(const httplib::Request& req, httplib::Response& res,
                          const httplib::ContentReader* reader) {
  const Route route = ParseRoute(RawPath(req));
  // Auth comes first, then routing: nothing of the request is read, nor its
  // route revealed, before the token is checked.
  Workspace* ws = nullptr;
  if (Refused(req, route, res, &ws)) {
    DropBody(req, reader, res);
    return;
  }
  // A body is read (or drained) before anything else is answered, so that
  // the connection stays in step for the next request.
  std::string body;
  if (reader != nullptr && !ReceiveBody(req, *reader, res, &body)) return;
  switch (route.kind) {
    case RouteKind::kViewer:
      res.set_header("Cache-Control", "no-store");
      // Nothing but this page and the API of its own origin.
      res.set_header("Content-Security-Policy",
                     "default-src 'none'; script-src 'self' 'unsafe-inline'; "
                     "style-src 'unsafe-inline'; "
                     "connect-src 'self'; img-src 'self' data:");
      res.set_content(std::string(ViewerHtml()), "text/html; charset=utf-8");
      return;
    case RouteKind::kHealthz:
      SetJson(res, OkReply({{"status", "ok"}}));
      return;
    case RouteKind::kAsset:
      if (std::optional<Asset> asset = FindAsset(route.id)) {
        res.set_header("Cache-Control", "public, max-age=3600");
        res.set_content(std::string(asset->bytes), std::string(asset->content_type));
      } else {
        SetJson(res, ErrorReply({404, "not_found",
                                 "no asset \"" + EscapeForMessage(route.id, kMaxQuotedBytes) + "\"",
                                 ""}));
      }
      return;
    case RouteKind::kGraphEntities:
    case RouteKind::kGraphEntity:
    case RouteKind::kGraphFactPassages:
      SetJson(res, HandleGraph(*ws->engine, route, req.params));
      return;
    case RouteKind::kMetrics:
      res.set_content(metrics_.Render(), "text/plain; version=0.0.4; charset=utf-8");
      return;
    case RouteKind::kOpenApi:
      res.set_content(std::string(OpenApiJson()), kJsonType);
      return;
    case RouteKind::kMcp:
      ServeMcp(req, body, *ws->engine, options_.engine.read_only, res);
      return;
    default: {
      Reply reply = Handle(route, *ws, body);
      if (reply.stream) return StreamReply(res, reply.stream);
      SetJson(res, reply);
      return;
    }
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
    case RouteKind::kModels:
      return HandleModels();
    case RouteKind::kChatCompletions: {
      nlohmann::json request;
      if (auto e = ParseJsonObject(body, &request)) return ChatErrorReply(*e);
      return HandleChatCompletions(*ws.engine, request, options_.query_deadline_ms,
                                   ws.rewriter.get());
    }
    default:
      return ErrorReply({500, "internal", "unhandled route", ""});
  }
}

ConnectionLimits ServerImpl::Limits() const {
  using std::chrono::seconds;
  ConnectionLimits limits;
  limits.idle_timeout = seconds(options_.keep_alive_timeout_s);
  limits.head_timeout = seconds(options_.head_timeout_s);
  limits.read_timeout = seconds(options_.read_timeout_s);
  limits.body_timeout = seconds(options_.body_timeout_s);
  limits.write_timeout = seconds(options_.write_timeout_s);
  limits.max_body_bytes = options_.max_body_bytes;
  limits.listen_backlog = options_.listen_backlog;
  limits.workers = options_.threads != 0
                       ? options_.threads
                       : std::max<size_t>(8, 2 * std::thread::hardware_concurrency());
  // Each connection is a descriptor: keep some for the stores and the rest.
  limits.max_connections = options_.max_connections;
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    const size_t usable = files.rlim_cur > 2 * kReservedFiles ? files.rlim_cur - kReservedFiles
                                                               : files.rlim_cur / 2;
    limits.max_connections = std::min(limits.max_connections, usable);
  }
  return limits;
}

Status ServerImpl::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (started_ || stopped_) return Status::FailedPrecondition("server: Start() called twice");
    started_ = true;
  }
  auto connections = ConnectionServer::Listen(
      options_.host, options_.port, Limits(),
      [this](ServedStream& stream) { return http_.ServeOne(stream); },
      [this](const EarlyReply& reply) {
        metrics_.RequestFinished(RouteLabel(RouteKind::kUnknown), "", reply.http_status, "", -1.0,
                                 reply.code, false);
      });
  std::lock_guard<std::mutex> stop_lock(stop_mu_);
  if (!connections.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    cv_.notify_all();
    return connections.status();
  }
  connections_ = std::move(connections).value();
  port_ = connections_->port();
  connections_->Start();
  return Status::Ok();
}

void ServerImpl::Stop() {
  std::lock_guard<std::mutex> stop_lock(stop_mu_);
  if (connections_ != nullptr) connections_->Stop();
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

Status Server::Validate(const ServerOptions& options,
                        const std::vector<WorkspaceSpec>& workspaces) {
  if (workspaces.empty()) return Status::InvalidArgument("server: no workspace to serve");
  if (options.port < 0 || options.port > 65535) {
    return Status::InvalidArgument("server port " + std::to_string(options.port) +
                                   ": expected 0 to 65535");
  }
  if (options.max_body_bytes == 0 || options.read_timeout_s <= 0 || options.write_timeout_s <= 0 ||
      options.body_timeout_s <= 0 || options.head_timeout_s <= 0 ||
      options.keep_alive_timeout_s <= 0 || options.max_connections == 0 ||
      options.listen_backlog <= 0) {
    return Status::InvalidArgument(
        "server options: max_body_bytes, read_timeout_s, write_timeout_s, body_timeout_s, "
        "head_timeout_s, keep_alive_timeout_s, max_connections and listen_backlog must be "
        "positive");
  }
  for (size_t i = 0; i < workspaces.size(); ++i) {
    const std::string& name = workspaces[i].name;
    if (!ValidWorkspaceName(name)) {
      return Status::InvalidArgument("workspace name \"" + EscapeForMessage(name, 80) +
                                     "\": expected 1 to 64 of [A-Za-z0-9_.-], not . or ..");
    }
    for (size_t j = 0; j < i; ++j) {
      if (workspaces[j].name == name) {
        return Status::InvalidArgument("workspace \"" + name + "\" given twice");
      }
    }
  }
  return Status::Ok();
}

Result<std::unique_ptr<Server>> Server::Create(const ServerOptions& options,
                                               std::vector<WorkspaceSpec> workspaces) {
  FLOWRAG_RETURN_IF_ERROR(Validate(options, workspaces));
  std::vector<server::ServerImpl::Workspace> opened;
  for (const WorkspaceSpec& spec : workspaces) {
    Result<std::unique_ptr<Engine>> engine =
        Engine::Open(spec.db_path, spec.engine ? *spec.engine : options.engine);
    // Loaded now: a server is ready when it listens, and a store it cannot
    // read is refused at start.
    if (engine.ok()) {
      if (Result<bool> loaded = (*engine)->Refresh(); !loaded.ok()) engine = loaded.status();
    }
    if (!engine.ok()) return engine.status().WithContext("workspace \"" + spec.name + "\"");
    opened.push_back({spec.name, std::move(engine).value(), spec.token,
                      server::StoreLocationSpellings(spec.db_path),
                      server::QueryRewriteModel(spec.engine ? *spec.engine : options.engine)});
  }
  return std::unique_ptr<Server>(new server::ServerImpl(options, std::move(opened)));
}

}  // namespace flowrag
