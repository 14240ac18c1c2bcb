#include "serve.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "config_cmd.h"
#include "flowrag/engine.h"
#include "flowrag/messages.h"

namespace flowrag::cli {
namespace {

// The largest --max-body-mib (server.max_body_mib of flowrag.yaml alike).
constexpr double kMaxBodyMib = 4096;

// Each connection is a descriptor: the soft open-files limit (often 1024)
// goes up to the hard one, so that --max-connections is not cut down to it.
void RaiseOpenFilesLimit() {
  rlimit files{};
  constexpr rlim_t kEnough = 65536;
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < std::min(files.rlim_max, kEnough)) {
    files.rlim_cur = std::min(files.rlim_max, kEnough);
    setrlimit(RLIMIT_NOFILE, &files);
  }
}

}  // namespace

// A served store's writes build private snapshots (hundreds of MiB on
// 2wiki, gigabytes at 10^6 passages) and free them once their segment is
// mapped (engine/published_segment.cc). glibc raises its mmap threshold to
// up to 32 MiB at the first large free, after which arrays up to that size
// come from the arenas, and what they free there stays resident: an arena's
// top below the trim threshold (raised with it, up to 64 MiB) is never
// handed back, malloc_trim included. On 2wiki, after 100 inserts and
// deletes back to back and 15 s of rest, the server held 1.62x its RSS
// after open, 1.41x with these fixed thresholds (doc/scale.md): an
// allocation of 1 MiB or more gets a mapping of its own, returned at free.
// What stays is small allocations that outlive a write, scattered over the
// pages of the arenas its threads used: glibc gives up to 8 arenas per core,
// and each keeps its scattered pages (malloc_trim cannot return a page that
// holds one live byte). One arena per core, at least two: after 30 inserts
// and deletes on 2wiki the rested server held 36.5 MiB of private memory
// with glibc's arenas and 16.0 with two (1.30x against 1.18x its RSS after
// open), at the same query throughput under bench/server_load.sh (doc/scale.md).
// A GLIBC_TUNABLES setting from the environment is left as it is.
void ReturnLargeFreesToTheSystem() {
#ifdef __GLIBC__
  if (std::getenv("GLIBC_TUNABLES") != nullptr) return;
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 8 << 20);
  mallopt(M_ARENA_MAX, static_cast<int>(std::max(2u, std::thread::hardware_concurrency())));
#endif
}

CLI::App* AddServeCommand(CLI::App& app, ServeArgs* args) {
  auto* serve = app.add_subcommand(
      "serve",
      "HTTP JSON API (/v1/query, /v1/documents, ...), MCP (/mcp) and the subgraph viewer (/)");
  serve->add_option("--db", args->db,
                    "Store of the default workspace (/v1/...); default: the config file's "
                    "workspaces");
  serve
      ->add_option("--host", args->server.host,
                   "Interface to bind (loopback unless told otherwise)")
      ->capture_default_str();
  serve->add_option("--port", args->server.port, "Port (0: any free port)")->capture_default_str();
  serve->add_option("--token", args->token,
                    "Require \"Authorization: Bearer TOKEN\" on /v1, /mcp and /metrics "
                    "(default: $FLOWRAG_SERVER_TOKEN)");
  serve->add_option("--workspace", args->workspaces,
                    "Another store served under /v1/w/NAME/...: NAME=FILE (repeatable)");
  serve->add_option("--threads", args->server.threads, "Worker threads (0: automatic)")
      ->capture_default_str();
  serve->add_option("--max-body-mib", args->max_body_mib, "Largest request body, MiB")
      ->capture_default_str();
  serve
      ->add_option("--head-timeout", args->server.head_timeout_s,
                   "Seconds a request head may take from its first byte")
      ->capture_default_str();
  serve
      ->add_option("--read-timeout", args->server.read_timeout_s,
                   "Seconds a client may stall while sending a body")
      ->capture_default_str();
  serve
      ->add_option("--body-timeout", args->server.body_timeout_s,
                   "Seconds a whole request body may take")
      ->capture_default_str();
  serve
      ->add_option("--keep-alive-timeout", args->server.keep_alive_timeout_s,
                   "Seconds an idle connection stays open")
      ->capture_default_str();
  serve
      ->add_option("--max-connections", args->server.max_connections,
                   "Open connections at most (one more is answered 503)")
      ->capture_default_str();
  serve
      ->add_option("--query-deadline-ms", args->server.query_deadline_ms,
                   "Upper bound on a query's deadline (0: none)")
      ->capture_default_str();
  serve->add_flag("--read-only", args->server.engine.read_only,
                  "Open the stores read-only (inserts and deletes answer 409)");
  serve->add_flag("--create", args->create,
                  "Create missing stores, empty (documents then come by POST /v1/documents)");
  serve->add_flag("--access-log", args->server.access_log, "One line per request on stderr");
  // Replicas: every server follows its stores, so writes through another
  // server (or an index run) become visible here (doc/storage.md).
  args->server.engine.follow_store = true;
  serve
      ->add_option("--follow-poll-ms", args->server.engine.follow_poll_ms,
                   "How often a store that announces no changes (SQLite) is checked for "
                   "other processes' writes")
      ->capture_default_str();
  return serve;
}

namespace {

// The workspaces to serve: --db (the default) or else the config file's,
// then each --workspace; none when neither gives one.
Result<std::vector<WorkspaceSpec>> WorkspacesOf(const ServeArgs& args, const Config* config) {
  std::vector<WorkspaceSpec> workspaces;
  if (!args.db.empty()) {
    WorkspaceSpec spec{"default", args.db, "", std::nullopt};
    FLOWRAG_ASSIGN_OR_RETURN(spec.engine,
                             ConfiguredEngineOptions(config, args.db, args.server.engine));
    workspaces.push_back(std::move(spec));
  } else if (config != nullptr && !config->workspaces.empty()) {
    FLOWRAG_ASSIGN_OR_RETURN(workspaces, ConfiguredWorkspaces(*config, args.server.engine));
  }
  for (const std::string& w : args.workspaces) {
    const size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == w.size()) {
      return Status::InvalidArgument("--workspace \"" + EscapeForMessage(w, 80) +
                                     "\": expected NAME=FILE");
    }
    WorkspaceSpec spec{w.substr(0, eq), w.substr(eq + 1), "", std::nullopt};
    FLOWRAG_ASSIGN_OR_RETURN(spec.engine,
                             ConfiguredEngineOptions(config, spec.db_path, args.server.engine));
    workspaces.push_back(std::move(spec));
  }
  return workspaces;
}

// --token, else $FLOWRAG_SERVER_TOKEN, else the config's server.token_env
// (which must then be set).
Result<std::string> BearerToken(const ServeArgs& args, const Config* config) {
  if (!args.token.empty()) return args.token;
  if (const char* t = std::getenv("FLOWRAG_SERVER_TOKEN"); t != nullptr && *t != '\0') {
    return std::string(t);
  }
  if (config == nullptr || !config->token_env) return std::string();
  const char* t = std::getenv(config->token_env->c_str());
  if (t == nullptr || *t == '\0') {
    const std::string why = "the environment variable " + *config->token_env +
                            " is not set (nor FLOWRAG_SERVER_TOKEN, nor --token)";
    return Status::FailedPrecondition(config->path + ": server.token_env: " + why);
  }
  return std::string(t);
}

}  // namespace

Result<ServePlan> PlanServe(const ServeArgs& args, const Config* config) {
  ServePlan plan;
  plan.server = args.server;
  FLOWRAG_ASSIGN_OR_RETURN(plan.workspaces, WorkspacesOf(args, config));
  if (plan.workspaces.empty()) {
    return Status::InvalidArgument("serve: give --db, or workspaces in the config file");
  }
  for (const WorkspaceSpec& w : plan.workspaces) {
    if (!IsDatabaseUrl(w.db_path) && !StoreFileExists(w.db_path)) {
      plan.missing.push_back(w.db_path);
    }
  }
  FLOWRAG_ASSIGN_OR_RETURN(plan.server.bearer_token, BearerToken(args, config));
  if (!(args.max_body_mib > 0 && args.max_body_mib <= kMaxBodyMib)) {
    return Status::InvalidArgument("--max-body-mib: expected more than 0 and at most " +
                                   std::to_string(static_cast<int>(kMaxBodyMib)));
  }
  plan.server.max_body_bytes =
      std::max<size_t>(1, static_cast<size_t>(args.max_body_mib * 1048576.0));
  FLOWRAG_RETURN_IF_ERROR(Server::Validate(plan.server, plan.workspaces));
  return plan;
}

Status RunServe(ServeArgs args) {
  FLOWRAG_ASSIGN_OR_RETURN(ServePlan plan, PlanServe(args, ActiveConfig()));
  if (!args.create && !plan.missing.empty()) {
    return Status::NotFound(EscapeForMessage(plan.missing.front()) +
                            ": no such store (index one with `flowrag index`, or "
                            "pass --create to start empty)");
  }
  args.server = plan.server;
  std::vector<WorkspaceSpec> workspaces = std::move(plan.workspaces);

  // SIGINT and SIGTERM are taken by sigwait below; every thread started from
  // here on inherits the blocked mask. A client that hangs up must not kill us.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  RaiseOpenFilesLimit();
  ReturnLargeFreesToTheSystem();
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Create(args.server, workspaces));
  FLOWRAG_RETURN_IF_ERROR(server->Start());
  std::fprintf(stderr,
               "flowrag: serving %zu workspace(s) on http://%s:%d/ (viewer at /, API at /v1, "
               "MCP at /mcp)%s\n",
               workspaces.size(), args.server.host.c_str(), server->port(),
               args.server.bearer_token.empty() ? "" : "; bearer token required");
  for (const WorkspaceSpec& w : workspaces) {
    std::fprintf(stderr, "flowrag:   %-12s %s  /v1/w/%s/\n", w.name.c_str(),
                 DisplayLocation(w.db_path).c_str(),
                 w.name.c_str());
  }
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::fprintf(stderr, "flowrag: %s received, stopping\n",
               signal_number == SIGINT ? "SIGINT" : "SIGTERM");
  server->Stop();
  return Status::Ok();
}

}  // namespace flowrag::cli
