#include "mcp/tools.h"

#include <string>
#include <vector>

#include "common/encoding.h"
#include "common/json_errors.h"
#include "mcp/protocol.h"
#include "mcp/tool_impl.h"

namespace flowrag::mcp {
namespace {

using nlohmann::json;

struct Tool {
  const char* name;
  const char* title;
  const char* description;
  bool writes;
  json (*input_schema)();
  json (*output_schema)();  // null: none
  json annotations;
  json (*call)(Engine&, const json& args, const ToolOptions&);
};

json Hints(bool read_only, bool destructive, bool idempotent) {
  return {{"readOnlyHint", read_only},
          {"destructiveHint", destructive},
          {"idempotentHint", idempotent},
          {"openWorldHint", false}};
}

const std::vector<Tool>& Tools() {
  static const std::vector<Tool> tools = {
      {"query", "Search the store",
       "Retrieve the passages of the flowrag store that best answer a question, ranked, with "
       "their document ids, titles and scores. Use it to gather evidence; `ask` answers "
       "directly.",
       false, QueryInput, PassagesOutputSchema, Hints(true, false, true), CallQuery},
      {"ask", "Answer with citations",
       "Answer a question from the flowrag store: retrieves passages, then answers with the "
       "cited sentences (document id, title, quote). Multi-hop questions: pipeline cot.",
       false, AskInput, AnswerOutputSchema, Hints(true, false, true), CallAsk},
      {"index_text", "Add documents",
       "Store and index text documents ({id, title, text}, or a list in `documents`): chunked, "
       "embedded and linked into the knowledge graph, searchable as soon as this returns. A "
       "document with an existing id replaces it; unchanged text is skipped.",
       true, IndexInput, IndexOutput, Hints(false, true, true), CallIndexText},
      {"delete", "Delete documents",
       "Remove documents by id, with their passages and what only they supported in the "
       "knowledge graph. Unknown ids fail the call and nothing is deleted.",
       true, DeleteInput, DeleteOutput, Hints(false, true, true), CallDelete},
      {"stats", "Store statistics",
       "Counts of the store: documents, passages, embeddings, knowledge-graph nodes and edges "
       "per kind, index runs, size.",
       false, StatsInput, StatsOutput, Hints(true, false, true), CallStats},
  };
  return tools;
}

std::string ToolNames(const ToolOptions& options) {
  std::string names;
  for (const Tool& t : Tools()) {
    if (t.writes && !options.allow_writes) continue;
    names += (names.empty() ? "" : ", ") + std::string(t.name);
  }
  return names;
}

}  // namespace

json ListTools(const ToolOptions& options) {
  const bool v2 = HasStructuredOutput(options.protocol_version);
  json tools = json::array();
  for (const Tool& t : Tools()) {
    if (t.writes && !options.allow_writes) continue;
    json tool = {
        {"name", t.name}, {"description", t.description}, {"inputSchema", t.input_schema()}};
    json annotations = t.annotations;
    annotations["title"] = t.title;
    if (v2) {
      tool["title"] = t.title;
      if (t.output_schema != nullptr) tool["outputSchema"] = t.output_schema();
    }
    tool["annotations"] = std::move(annotations);
    tools.push_back(std::move(tool));
  }
  return {{"tools", std::move(tools)}};
}

std::optional<RpcError> CallTool(Engine& engine, const json& params, const ToolOptions& options,
                                 json* result) {
  auto name = params.find("name");
  if (name == params.end() || !name->is_string()) {
    return InvalidParams("invalid params: \"name\": required string (the tool) is missing", "name");
  }
  const json empty = json::object();
  const json* args = &empty;
  if (auto a = params.find("arguments"); a != params.end() && !a->is_null()) {
    if (!a->is_object()) {
      return InvalidParams(
          "invalid params: \"arguments\": expected an object, got " + DescribeJsonType(*a),
          "arguments");
    }
    args = &*a;
  }
  const std::string& tool_name = name->get_ref<const std::string&>();
  for (const Tool& t : Tools()) {
    if (tool_name != t.name) continue;
    if (t.writes && !options.allow_writes) {
      RpcError e = InvalidParams("invalid params: tool \"" + tool_name +
                                     "\" is not available: the store is served read-only",
                                 "name");
      e.data["tool"] = tool_name;
      return e;
    }
    *result = t.call(engine, *args, options);
    return std::nullopt;
  }
  RpcError e = InvalidParams("invalid params: unknown tool \"" + EscapeForMessage(tool_name, 60) +
                                 "\" (tools: " + ToolNames(options) + ")",
                             "name");
  e.data["tool"] = EscapeForMessage(tool_name, 60);  // the client's, cut
  return e;
}

}  // namespace flowrag::mcp
