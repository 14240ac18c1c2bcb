// PlanTools (agent/tool_plan.h).
#include "agent/tool_plan.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "flowrag/schema.h"
#include "llm/json_repair.h"

namespace flowrag {
namespace {

const char kPlanPrompt[] = R"(You are a schema-guided question-answering agent. Analyze the question against the schema to decide which tools to call.

=== SCHEMA (YAML) ===
{SCHEMA}
=== AVAILABLE TOOLS ===
SchemaLookup(entity_type, constraints, return_field)
  Exact lookup on the structured records. For typed attribute questions and identifier lookups.
VectorRAG(query, filters, top_k)
  Dense retrieval over text passages. For descriptive evidence and open-ended questions.
GraphTraverse(start_entity, pattern)
  Follows links in the knowledge graph. For multi-hop and relationship questions.
ExternalSearch(query)
  Web search, for questions outside what the schema covers.
=== QUESTION ===
{QUERY}
=== INSTRUCTIONS ===
1. Find the entity types, relationships and fields of the schema the question is about.
2. Check for out-of-scope signals: real-time words ("current", "latest"), or entities the schema cannot hold. If the question is out of scope, call only ExternalSearch.
3. Pick tools by the kind of question:
   - typed, discrete-valued constraints -> SchemaLookup
   - descriptive or unstructured evidence -> VectorRAG
   - multi-hop or relationship questions -> GraphTraverse
   - out of scope -> ExternalSearch
4. Fill the calls with names exactly as the schema spells them and values exactly as the question states them.
Answer with JSON only:
{"out_of_scope": false, "reason": "...", "tool_calls": [
  {"tool": "SchemaLookup", "entity_type": "...", "constraints": {"field": "value"}, "return_field": "..."},
  {"tool": "VectorRAG", "query": "...", "filters": {"entity": "...", "year": 2020}, "top_k": 5},
  {"tool": "GraphTraverse", "start_entity": "...", "pattern": "..."}]})";

std::string Fill(std::string text, std::string_view key, std::string_view value) {
  const size_t at = text.find(key);
  if (at != std::string::npos) text.replace(at, key.size(), value);
  return text;
}

std::string Str(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) return "";
  const nlohmann::json& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return "";
}

class Validator {
 public:
  Validator(const SchemaIndex& index, ToolPlan* plan) : index_(index), plan_(*plan) {}

  void AddTool(const std::string& tool) {
    if (std::find(plan_.tools.begin(), plan_.tools.end(), tool) == plan_.tools.end()) {
      plan_.tools.push_back(tool);
    }
  }

  // A value of `type`.`field`; false (counted) when the store has none such.
  bool AddConstraint(const std::string& type, const std::string& field, const std::string& value) {
    std::vector<ValueMatch> m = index_.MatchValue(type, field, value);
    if (m.empty()) {
      ++plan_.dropped;
      return false;
    }
    for (ValueMatch& v : m) Add(std::move(v));
    return true;
  }

  // An entity named anywhere: the record names of any type.
  void AddEntity(const std::string& value) {
    bool found = false;
    for (const EntityType& t : index_.contract().entity_types) {
      for (ValueMatch& v : index_.MatchValue(t.name, "name", value)) {
        Add(std::move(v));
        found = true;
      }
    }
    if (!found) ++plan_.dropped;
  }

 private:
  void Add(ValueMatch v) {
    for (const ValueMatch& c : plan_.constraints) {
      if (c.type == v.type && c.field == v.field && c.value == v.value) return;
    }
    plan_.constraints.push_back(std::move(v));
  }

  const SchemaIndex& index_;
  ToolPlan& plan_;
};

}  // namespace

std::string ToolPlanPrompt(std::string_view question, const SchemaIndex& index,
                           const SchemaContract* shown) {
  return Fill(Fill(kPlanPrompt, "{SCHEMA}", ToYaml(shown ? *shown : index.contract())), "{QUERY}",
              question);
}

Result<ToolPlan> PlanTools(std::string_view question, const SchemaIndex& index, ChatModel& chat,
                           const SchemaContract* shown) {
  ChatRequest request;
  request.json_mode = true;
  request.messages.push_back({"user", ToolPlanPrompt(question, index, shown)});
  FLOWRAG_ASSIGN_OR_RETURN(ChatResponse response, chat.Complete(request));
  JsonRepairOptions ro;
  ro.allow_truncated = response.finish_reason == "length";
  FLOWRAG_ASSIGN_OR_RETURN(RepairedJson parsed, ParseLlmJson(response.content, ro));
  const nlohmann::json& j = parsed.value;
  const nlohmann::json calls =
      j.is_object() && j.contains("tool_calls") ? j["tool_calls"] : (j.is_array() ? j : nlohmann::json());
  if (!calls.is_array()) return Status::InvalidArgument("tool plan: the answer has no \"tool_calls\" list");
  ToolPlan plan;
  Validator check(index, &plan);
  if (j.is_object() && j.contains("out_of_scope") && j["out_of_scope"].is_boolean()) {
    plan.out_of_scope = j["out_of_scope"].get<bool>();
  }
  if (j.is_object()) plan.reason = Str(j, "reason");
  for (const nlohmann::json& call : calls) {
    if (!call.is_object()) continue;
    const std::string tool = Str(call, "tool");
    if (tool == "ExternalSearch") {
      plan.out_of_scope = true;
    } else if (tool == "SchemaLookup") {
      const std::string type = index.FindType(Str(call, "entity_type"));
      if (type.empty()) {
        ++plan.dropped;
        continue;
      }
      bool any = false;
      if (call.contains("constraints") && call["constraints"].is_object()) {
        for (const auto& [field, value] : call["constraints"].items()) {
          const std::string v = value.is_string() ? value.get<std::string>()
                                : value.is_number() ? value.dump()
                                                    : "";
          any = check.AddConstraint(type, field, v) || any;
        }
      }
      const std::string asked = Str(call, "return_field");
      const std::string field = asked.empty() ? "" : index.FindField(type, asked);
      if (!field.empty()) {
        plan.fields.push_back({type, field, 1.0});
      } else if (!asked.empty()) {
        ++plan.dropped;
      }
      if (any) check.AddTool(tool);  // a lookup without a valid constraint has nothing to look up
    } else if (tool == "VectorRAG") {
      check.AddTool(tool);
      plan.vector_query = Str(call, "query");
      if (call.contains("filters") && call["filters"].is_object()) {
        const nlohmann::json& f = call["filters"];
        const std::string entity = Str(f, "entity");
        if (!entity.empty()) check.AddEntity(entity);
        const std::string year = Str(f, "year");
        if (!year.empty() && year.find_first_not_of("0123456789") == std::string::npos && year.size() == 4) {
          plan.years.push_back(std::stoi(year));
        }
      }
    } else if (tool == "GraphTraverse") {
      check.AddTool(tool);
      const std::string start = Str(call, "start_entity");
      if (!start.empty()) check.AddEntity(start);
    } else {
      ++plan.dropped;
    }
  }
  if (plan.out_of_scope && plan.reason.empty()) plan.reason = "the model routed the question to ExternalSearch";
  return plan;
}

}  // namespace flowrag
