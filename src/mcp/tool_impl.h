// Inside the MCP tools (tools.cc): each tool's call (tool_calls.cc) and its
// input and output JSON Schemas (tool_schemas.cc). Pure but for the Engine
// calls; thread-safe as the Engine is.
#ifndef FLOWRAG_MCP_TOOL_IMPL_H_
#define FLOWRAG_MCP_TOOL_IMPL_H_

#include <nlohmann/json.hpp>

#include "flowrag/engine.h"
#include "mcp/tools.h"

namespace flowrag::mcp {

// A CallToolResult for `args` (isError with a message naming the tool and
// the field when they do not fit the tool's inputSchema).
nlohmann::json CallQuery(Engine& engine, const nlohmann::json& args, const ToolOptions& options);
nlohmann::json CallAsk(Engine& engine, const nlohmann::json& args, const ToolOptions& options);
nlohmann::json CallIndexText(Engine& engine, const nlohmann::json& args,
                             const ToolOptions& options);
nlohmann::json CallDelete(Engine& engine, const nlohmann::json& args, const ToolOptions& options);
nlohmann::json CallStats(Engine& engine, const nlohmann::json& args, const ToolOptions& options);

nlohmann::json QueryInput();
nlohmann::json AskInput();
nlohmann::json IndexInput();
nlohmann::json DeleteInput();
nlohmann::json StatsInput();
nlohmann::json PassagesOutputSchema();
nlohmann::json AnswerOutputSchema();
nlohmann::json IndexOutput();
nlohmann::json DeleteOutput();
nlohmann::json StatsOutput();

}  // namespace flowrag::mcp

#endif  // FLOWRAG_MCP_TOOL_IMPL_H_
