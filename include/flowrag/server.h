// Server: flowrag's HTTP JSON API and subgraph viewer over one or more stores.
//
//   flowrag::ServerOptions options;
//   options.port = 0;  // any free port
//   auto server = flowrag::Server::Create(options, {{"default", "corpus.db"}});
//   if (!server.ok() || !(*server)->Start().ok()) ...
//   std::printf("listening on %d\n", (*server)->port());
//   (*server)->Wait();  // until Stop() is called from another thread or a signal handler thread
//
// Each workspace is one store opened with Engine::Open. Workspace `name`
// answers under /v1/w/{name}/...; the first workspace also answers under
// /v1/... (the default workspace). The endpoints, request and response
// shapes, error codes and metric names are documented in doc/http_api.md.
//
// Concurrency: one thread accepts connections and reads request heads; each
// complete request is served by one of `threads` worker threads.
// Queries of a workspace run concurrently with each other and with one write
// (document insert or delete) of that workspace, which the engine serialises;
// readers see the old snapshot until the engine swaps in the new one.
// Workspaces share nothing but the thread pool.
//
// Thread-safety: Start() once, then Stop() and port() from any thread; Wait()
// from any number of threads. Destroying a running Server stops it first.
#ifndef FLOWRAG_SERVER_H_
#define FLOWRAG_SERVER_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/options.h"
#include "flowrag/status.h"

namespace flowrag {

struct ServerOptions {
  // Interface to bind. The default is loopback only; "0.0.0.0" (or "::")
  // exposes the server to the network, best together with `bearer_token`.
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: an ephemeral port (read it back with Server::port())
  // When not empty, every /v1/..., /mcp and /metrics request needs the header
  // "Authorization: Bearer <token>" (401 otherwise). /healthz and the viewer
  // page stay open; the page asks for the token when the API refuses it.
  std::string bearer_token;
  // Largest request body accepted (413 above it).
  size_t max_body_bytes = 8u << 20;
  // Slow and idle clients (the design is in src/server/connections.h):
  // - a request head (request line and headers) must be complete within
  //   head_timeout_s of its first byte: 408, then the connection closes;
  // - a read of the body that makes no progress for read_timeout_s fails, and
  //   a whole body must arrive within body_timeout_s of the end of its head
  //   (408), however it is trickled;
  // - a write of the response that makes no progress for write_timeout_s
  //   closes the connection;
  // - a connection that sends nothing (before its first request, or between
  //   requests) is closed after keep_alive_timeout_s.
  int head_timeout_s = 10;
  int read_timeout_s = 10;
  int write_timeout_s = 10;
  int body_timeout_s = 30;
  int keep_alive_timeout_s = 5;
  // Open connections at most (idle ones included); one more is answered 503
  // and closed at once. Lowered to the open-files limit (RLIMIT_NOFILE) less
  // 64 descriptors for the stores.
  size_t max_connections = 4096;
  // Connections the kernel queues before the server accepts them (listen(2);
  // the kernel caps it at net.core.somaxconn).
  int listen_backlog = 1024;
  // Upper bound on a query's AnswerOptions::deadline_ms (0 = no bound). A
  // request may ask for less; a query that runs out starts no further
  // retrieval round and answers from what it gathered, with a warning.
  double query_deadline_ms = 0.0;
  // Worker threads (0: max(8, 2 × hardware threads)). A worker serves one
  // request at a time, from the end of its head to the end of its response;
  // idle connections and unfinished heads hold no worker.
  size_t threads = 0;
  // How every workspace's store is opened.
  EngineOptions engine;
  // Log one line per request on stderr.
  bool access_log = false;
};

// Whether `name` can name a workspace: 1 to 64 of [A-Za-z0-9_.-], not "."
// nor ".." (clients resolve those in /v1/w/{name}/). flowrag.yaml's reader
// checks names with it too (src/config), so `config check` refuses what
// Server::Create would.
inline bool ValidWorkspaceName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name == "." || name == "..") return false;
  for (char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

struct WorkspaceSpec {
  std::string name;     // ValidWorkspaceName, unique
  std::string db_path;  // opened (created if missing) with Engine::Open
  // This workspace's own bearer token: it opens this workspace's /v1 routes
  // and no other's (ServerOptions::bearer_token opens all). Empty: none.
  // A workspace with a token needs one even when the server has none.
  std::string token;
  // The engine options of this workspace; unset: ServerOptions::engine.
  std::optional<EngineOptions> engine;
};

class Server {
 public:
  // Opens every workspace's store. InvalidArgument for a bad or duplicate
  // workspace name or option; the engine's error for a store that does not open.
  // REQUIRES: !workspaces.empty().
  static Result<std::unique_ptr<Server>> Create(const ServerOptions& options,
                                                std::vector<WorkspaceSpec> workspaces);

  // The checks Create makes before it opens a store (options in range,
  // workspace names valid and unique, at least one workspace), for a caller
  // that validates a setup without serving it (`flowrag config check`).
  static Status Validate(const ServerOptions& options,
                         const std::vector<WorkspaceSpec>& workspaces);
  virtual ~Server() = default;

  // Binds host:port and starts serving on a background thread. Returns once
  // the server accepts connections, or an error (e.g. the port is taken).
  virtual Status Start() = 0;

  // The bound port (useful with port = 0); 0 before Start().
  virtual int port() const = 0;

  // Stops accepting, lets requests in progress finish, and returns.
  // Idempotent; safe to call from any thread (not from a signal handler).
  virtual void Stop() = 0;

  // Blocks until the server has stopped.
  virtual void Wait() = 0;
};

}  // namespace flowrag

#endif  // FLOWRAG_SERVER_H_
