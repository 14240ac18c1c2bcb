// The Model Context Protocol server of flowrag over stdio: agents (Claude
// Desktop, Cursor, any MCP client) launch `flowrag mcp --db FILE` and use the
// tools query, ask, index_text, delete and stats, and read the documents as
// resources (flowrag://documents/{id}). doc/mcp.md has the tools, resources
// and errors. The same protocol is served over Streamable HTTP by
// flowrag::Server at /mcp (doc/http_api.md).
#ifndef FLOWRAG_MCP_H_
#define FLOWRAG_MCP_H_

#include <cstddef>

#include "flowrag/engine.h"
#include "flowrag/status.h"

namespace flowrag {

struct McpStdioOptions {
  // Offer index_text and delete (false: the tools are not listed).
  bool allow_writes = true;
  // Longest message line; a longer one is answered with an invalid-request
  // error (id null) and skipped, and serving goes on.
  size_t max_line_bytes = 16u << 20;
  // Documents per resources/list page.
  size_t page_size = 100;
};

// Serves newline-delimited JSON-RPC from `in_fd`, one response line per
// reply to `out_fd` (nothing else is written there; diagnostics go to
// stderr), in order, until `in_fd` ends: then OK. IoError when a read fails
// or `out_fd` is closed. `engine` must outlive the call.
Status ServeMcpStdio(Engine& engine, int in_fd, int out_fd, const McpStdioOptions& options = {});

}  // namespace flowrag

#endif  // FLOWRAG_MCP_H_
