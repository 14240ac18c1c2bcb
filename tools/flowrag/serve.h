// `flowrag serve`: the HTTP API and viewer over one or more stores.
#ifndef FLOWRAG_TOOLS_SERVE_H_
#define FLOWRAG_TOOLS_SERVE_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "flowrag/config.h"
#include "flowrag/server.h"
#include "flowrag/status.h"

namespace flowrag::cli {

struct ServeArgs {
  std::string db;                       // the default workspace's store
  std::vector<std::string> workspaces;  // name=FILE
  std::string token;                    // else $FLOWRAG_SERVER_TOKEN
  double max_body_mib = 8.0;
  bool create = false;  // create missing stores (empty)
  ServerOptions server;
};

// Registers the subcommand and its options (filled into *args) on `app`.
CLI::App* AddServeCommand(CLI::App& app, ServeArgs* args);

// Fixes glibc's mmap and trim thresholds (1 MiB, 8 MiB) and its arenas
// (one per core, at least two) for a long-lived process that writes
// (`serve`, `mcp`), so that what a write frees goes back to the system
// (serve.cc says why). Call it before any thread starts. Nothing when
// GLIBC_TUNABLES is set.
void ReturnLargeFreesToTheSystem();

// What `serve` runs: the server options and workspaces `args` and `config`
// (may be null) make, with every check serve makes before it opens a store
// (the configuration's workspaces, keys and tokens named by environment
// variables, the token, the body limit, Server::Validate). `missing` lists
// the workspaces' SQLite files that do not exist (an error for serve
// without --create). `flowrag config check` runs it on the file alone, so
// the two cannot disagree about a file.
struct ServePlan {
  ServerOptions server;
  std::vector<WorkspaceSpec> workspaces;
  std::vector<std::string> missing;  // store files not there yet
};
Result<ServePlan> PlanServe(const ServeArgs& args, const Config* config);

// Serves until SIGINT or SIGTERM, then stops gracefully (requests in progress finish).
Status RunServe(ServeArgs args);

}  // namespace flowrag::cli

#endif  // FLOWRAG_TOOLS_SERVE_H_
