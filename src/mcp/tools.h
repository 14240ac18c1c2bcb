// The MCP tools over an Engine: query, ask, index_text, delete, stats.
//
// Errors follow the MCP spec (2025-11-25, "Error Handling" of tools): a
// malformed tools/call (no "name", "arguments" not an object) and an unknown
// tool are protocol errors (JSON-RPC kInvalidParams); arguments that do not
// fit the tool's inputSchema and failures of the engine are tool execution
// errors, a result with isError: true whose text names the tool and the
// field, so that the model can correct its call.
#ifndef FLOWRAG_MCP_TOOLS_H_
#define FLOWRAG_MCP_TOOLS_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "flowrag/engine.h"
#include "mcp/jsonrpc.h"

namespace flowrag::mcp {

struct ToolOptions {
  // index_text and delete are offered (false: not listed, and a call is a
  // protocol error saying the store is read-only).
  bool allow_writes = true;
  // The negotiated protocol revision: from 2025-06-18 on, tools carry a
  // title and an outputSchema, and results structuredContent and links to
  // the cited documents (resource_link).
  std::string_view protocol_version;
};

// Limits of the tools' arguments.
inline constexpr size_t kMaxQuestionBytes = 8192;
inline constexpr int64_t kMaxTopK = 50;
inline constexpr size_t kMaxDocuments = 1000;  // index_text documents, delete ids
inline constexpr size_t kMaxIdBytes = 1024;

// tools/list: {"tools": [{name, title?, description, inputSchema, outputSchema?, annotations}]}.
nlohmann::json ListTools(const ToolOptions& options);

// tools/call. Fills *result (a CallToolResult, possibly isError) or returns
// the protocol error.
std::optional<RpcError> CallTool(Engine& engine, const nlohmann::json& params,
                                 const ToolOptions& options, nlohmann::json* result);

}  // namespace flowrag::mcp

#endif  // FLOWRAG_MCP_TOOLS_H_
