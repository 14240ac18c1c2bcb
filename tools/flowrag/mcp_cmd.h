// `flowrag mcp`: a Model Context Protocol server over stdio (doc/mcp.md).
#ifndef FLOWRAG_TOOLS_MCP_CMD_H_
#define FLOWRAG_TOOLS_MCP_CMD_H_

#include <CLI/CLI.hpp>
#include <string>

#include "flowrag/options.h"
#include "flowrag/status.h"

namespace flowrag::cli {

struct McpArgs {
  std::string db;
  bool read_only = false;  // no index_text / delete
  bool create = false;     // create a missing store (empty)
  double max_line_mib = 16.0;
  size_t page_size = 100;  // documents per resources/list page
  EngineOptions engine;
};

// Registers the subcommand and its options (filled into *args) on `app`.
CLI::App* AddMcpCommand(CLI::App& app, McpArgs* args);

// Serves MCP on stdin/stdout until stdin ends; logs on stderr only.
Status RunMcp(McpArgs args);

}  // namespace flowrag::cli

#endif  // FLOWRAG_TOOLS_MCP_CMD_H_
