#include "mcp_cmd.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "config_cmd.h"
#include "flowrag/engine.h"
#include "flowrag/mcp.h"
#include "serve.h"

namespace flowrag::cli {

CLI::App* AddMcpCommand(CLI::App& app, McpArgs* args) {
  auto* mcp = app.add_subcommand(
      "mcp",
      "Model Context Protocol server on stdin/stdout for agents (Claude Desktop, Cursor, ...): "
      "tools query, ask, index_text, delete, stats; documents as resources (doc/mcp.md)");
  mcp->add_option("--db", args->db, "Store: a SQLite file or a postgresql:// URL")->required();
  mcp->add_flag("--read-only", args->read_only,
                "Open the store read-only: no index_text or delete tools");
  mcp->add_flag("--create", args->create,
                "Create a missing store (empty; fill it with index_text)");
  mcp->add_option("--max-line-mib", args->max_line_mib,
                  "Longest message line, MiB (a longer one is answered with an error and skipped)")
      ->capture_default_str();
  mcp->add_option("--page-size", args->page_size, "Documents per resources/list page")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  mcp->add_option("--embedder", args->engine.embedder, "hash (built-in) or openai");
  // Writes of other processes (an index run, a server) become visible.
  args->engine.follow_store = true;
  return mcp;
}

Status RunMcp(McpArgs args) {
  if (!args.create && !IsDatabaseUrl(args.db) && !StoreFileExists(args.db)) {
    return Status::NotFound(args.db +
                            ": no such store (index one with `flowrag index`, or pass --create "
                            "to start empty)");
  }
  if (!(args.max_line_mib > 0)) return Status::InvalidArgument("--max-line-mib: expected > 0");
  ReturnLargeFreesToTheSystem();  // its writes free what serve's do
  // The protocol owns stdout: it moves to a private descriptor, and fd 1
  // becomes stderr, so that nothing else printed can corrupt the stream.
  const int protocol_out = dup(STDOUT_FILENO);
  if (protocol_out < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    return Status::IoError("mcp: cannot set up stdout");
  }
  signal(SIGPIPE, SIG_IGN);  // a client that goes away ends us through a failed write

  args.engine.read_only = args.read_only;
  FLOWRAG_ASSIGN_OR_RETURN(EngineOptions eo, ConfiguredEngineOptions(args.db, args.engine));
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Open(args.db, eo));
  FLOWRAG_RETURN_IF_ERROR(engine->Refresh().status());  // ready before the first request
  std::fprintf(stderr, "flowrag mcp: serving %s on stdio%s\n", DisplayLocation(args.db).c_str(),
               args.read_only ? " (read-only)" : "");
  McpStdioOptions options;
  options.allow_writes = !args.read_only;
  options.max_line_bytes = static_cast<size_t>(args.max_line_mib * 1048576.0);
  options.page_size = args.page_size;
  Status st = ServeMcpStdio(*engine, STDIN_FILENO, protocol_out, options);
  close(protocol_out);
  return st;
}

}  // namespace flowrag::cli
