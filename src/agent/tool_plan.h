// Query analysis and tool selection by a chat model (schema-contracts paper
// D.2, D.4, Appendix E.4: the pre-retrieval prompt).
//
// The model reads the contract (YAML) and the question and answers a list of
// tool calls in the order it would run them:
//   {"out_of_scope": false, "reason": "...",
//    "tool_calls": [
//      {"tool": "SchemaLookup", "entity_type": "Customer",
//       "constraints": {"name": "Acme Corp"}, "return_field": "city"},
//      {"tool": "VectorRAG", "query": "...", "filters": {"entity": "Acme Corp", "year": 2022}},
//      {"tool": "GraphTraverse", "start_entity": "Acme Corp"},
//      {"tool": "ExternalSearch", "query": "..."}]}
// Everything is checked against the closed world before the agent uses it
// (SchemaIndex::MatchValue / FindType / FindField): an entity type, field or
// value the store does not have is dropped and counted, a tool name not in
// the list above is dropped. ExternalSearch (or "out_of_scope": true) marks
// the question out of scope; flowrag has no web search, so the agent abstains.
//
// Thread-safety: reentrant if the chat model is.
#ifndef FLOWRAG_AGENT_TOOL_PLAN_H_
#define FLOWRAG_AGENT_TOOL_PLAN_H_

#include <string>
#include <string_view>
#include <vector>

#include "agent/schema_index.h"
#include "llm/chat_model.h"

namespace flowrag {

struct ToolPlan {
  // Validated tools, in the model's order, each once: "SchemaLookup",
  // "VectorRAG", "GraphTraverse".
  std::vector<std::string> tools;
  bool out_of_scope = false;
  std::string reason;                    // the model's, when out of scope
  std::vector<ValueMatch> constraints;   // SchemaLookup constraints and entity filters
  std::vector<FieldMention> fields;      // return fields (score 1.0)
  std::vector<int> years;                // VectorRAG year filters
  std::string vector_query;              // VectorRAG query ("" → the question)
  size_t dropped = 0;                    // names the closed-world check removed
};

// The prompt sent (the schema YAML, tools and question filled in). The
// schema shown is `shown` (a query-scoped extension of the index's contract,
// C.6) or, when null, the index's.
std::string ToolPlanPrompt(std::string_view question, const SchemaIndex& index,
                           const SchemaContract* shown = nullptr);

// One chat call. The plan is checked against the index (its records), not
// `shown`: a type only the extension has holds no records to look up.
// Errors: the model's, and InvalidArgument when the answer is not JSON with
// a "tool_calls" list.
Result<ToolPlan> PlanTools(std::string_view question, const SchemaIndex& index, ChatModel& chat,
                           const SchemaContract* shown = nullptr);

}  // namespace flowrag

#endif  // FLOWRAG_AGENT_TOOL_PLAN_H_
