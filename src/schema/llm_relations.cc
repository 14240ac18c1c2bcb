// ExtractLlmRelationships (schema/llm_relations.h).
#include "schema/llm_relations.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "common/text.h"
#include "llm/json_repair.h"

namespace flowrag {
namespace {

using Json = nlohmann::json;

struct Candidate {
  std::string name, type;
};

// One record the model is asked about.
struct Ask {
  PlannedRecord* record;
  std::vector<Candidate> entities;
  std::vector<const RelationshipType*> relations;  // the llm ones that fit them
};

std::vector<Candidate> EntitiesOf(const SchemaContract& c, const PlannedRecord& p) {
  std::vector<Candidate> out = {{p.title, p.entity_type}};
  for (const PlannedEntity& d : p.derived) out.push_back({d.name, d.type});
  for (const PlannedLink& l : p.links) {
    if (!l.subject.empty()) continue;
    for (const RelationshipType& r : c.relationships) {
      if (r.name == l.relation && r.from == p.entity_type) {
        out.push_back({l.target, r.to});
        break;
      }
    }
  }
  std::set<std::pair<std::string, std::string>> seen;  // (EntityKey, type)
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const Candidate& e) { return !seen.emplace(EntityKey(e.name), e.type).second; }),
            out.end());
  return out;
}

bool Connects(const RelationshipType& r, const std::vector<Candidate>& entities) {
  for (size_t a = 0; a < entities.size(); ++a) {
    if (entities[a].type != r.from) continue;
    for (size_t b = 0; b < entities.size(); ++b) {
      if (b != a && entities[b].type == r.to && EntityKey(entities[a].name) != EntityKey(entities[b].name)) {
        return true;
      }
    }
  }
  return false;
}

std::string Prompt(const Ask& ask, size_t max_chars) {
  const PlannedRecord& p = *ask.record;
  std::string text = p.text.substr(0, max_chars);
  if (p.text.size() > max_chars) text += "\n[...]";
  std::string out =
      "Extract the relationships between the entities of this record that the record itself "
      "supports.\n\n=== RECORD (" + p.file + ":" + std::to_string(p.line) + ") ===\n" + text +
      "\n=== ENTITIES ===\n";
  for (const Candidate& e : ask.entities) out += "- \"" + e.name + "\" (" + e.type + ")\n";
  out += "=== RELATIONSHIP TYPES ===\n";
  for (const RelationshipType* r : ask.relations) out += "- " + r->name + ": " + r->from + " -> " + r->to + "\n";
  out +=
      "=== INSTRUCTIONS ===\n"
      "Use only the relationship types and entity names listed, spelled exactly as listed; the "
      "source entity has the type left of the arrow, the target the type right of it. State a "
      "relationship only when the record's text supports it, with your confidence (0.0-1.0). "
      "Answer with JSON only:\n"
      "{\"relationships\": [{\"type\": \"...\", \"source\": \"...\", \"target\": \"...\", "
      "\"confidence\": 0.9, \"evidence\": \"...\"}]}";
  return out;
}

std::string Str(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// Reads one answer into `ask.record`'s links; false when unreadable.
bool Apply(const Ask& ask, const ChatResponse& response, ConstructionPlan* plan, LlmRelationReport* report) {
  JsonRepairOptions ro;
  ro.allow_truncated = response.finish_reason == "length";
  Result<RepairedJson> parsed = ParseLlmJson(response.content, ro);
  if (!parsed.ok()) return false;
  const Json& j = parsed->value;
  const Json* list = j.is_array() ? &j : (j.is_object() && j.contains("relationships") ? &j["relationships"] : nullptr);
  if (list == nullptr || !list->is_array()) return false;
  PlannedRecord& p = *ask.record;
  std::set<std::tuple<std::string, std::string, std::string>> have;
  for (const PlannedLink& l : p.links) {
    have.emplace(EntityKey(l.subject.empty() ? p.title : l.subject), l.relation, EntityKey(l.target));
  }
  auto find = [&](const std::string& name, const std::string& type) -> const Candidate* {
    const std::string key = EntityKey(name);
    for (const Candidate& e : ask.entities) {
      if (e.type == type && EntityKey(e.name) == key) return &e;
    }
    return nullptr;
  };
  for (const Json& item : *list) {
    const RelationshipType* r = nullptr;
    const std::string type = Str(item, "type");
    for (const RelationshipType* offered : ask.relations) {
      if (EntityKey(offered->name) == EntityKey(type)) r = offered;
    }
    const Candidate* from = r ? find(Str(item, "source"), r->from) : nullptr;
    const Candidate* to = r ? find(Str(item, "target"), r->to) : nullptr;
    if (from == nullptr || to == nullptr || EntityKey(from->name) == EntityKey(to->name) ||
        !have.emplace(EntityKey(from->name), r->name, EntityKey(to->name)).second) {
      ++report->rejected;
      continue;
    }
    double confidence = 0.8;
    if (item.contains("confidence") && item["confidence"].is_number()) {
      confidence = std::clamp(item["confidence"].get<double>(), 0.0, 1.0);
    }
    const bool own = EntityKey(from->name) == EntityKey(p.title);
    p.links.push_back({r->name, to->name, confidence, own ? "" : from->name});
    ++plan->links;
    ++report->added;
  }
  return true;
}

}  // namespace

bool HasLlmRelationships(const SchemaContract& contract) {
  return std::any_of(contract.relationships.begin(), contract.relationships.end(),
                     [](const RelationshipType& r) { return r.extraction == "llm"; });
}

LlmRelationReport ExtractLlmRelationships(const SchemaContract& contract, ConstructionPlan* plan,
                                          ChatModel& chat, const LlmRelationOptions& options) {
  LlmRelationReport report;
  std::vector<const RelationshipType*> llm;
  for (const RelationshipType& r : contract.relationships) {
    if (r.extraction == "llm") llm.push_back(&r);
  }
  if (llm.empty()) return report;
  std::map<std::string, std::vector<Ask>> by_source;  // in plan (hierarchy, file) order per source
  for (PlannedRecord& p : plan->records) {
    if (p.text_document) continue;
    Ask ask{&p, EntitiesOf(contract, p), {}};
    for (const RelationshipType* r : llm) {
      if (Connects(*r, ask.entities)) ask.relations.push_back(r);
    }
    if (ask.relations.empty()) continue;
    ++report.candidates;
    std::vector<Ask>& asks = by_source[p.source];
    if (asks.size() >= options.max_calls_per_source) {
      ++report.over_cap;
      continue;
    }
    asks.push_back(std::move(ask));
  }
  for (auto& [source, asks] : by_source) {
    std::vector<ChatRequest> requests;
    for (const Ask& ask : asks) {
      ChatRequest request;
      request.json_mode = true;
      request.messages.push_back({"user", Prompt(ask, options.max_record_chars)});
      requests.push_back(std::move(request));
    }
    std::vector<Result<ChatResponse>> responses = chat.CompleteBatch(requests);
    report.calls += responses.size();
    for (size_t i = 0; i < asks.size() && i < responses.size(); ++i) {
      if (!responses[i].ok() || !Apply(asks[i], *responses[i], plan, &report)) ++report.failed_calls;
    }
  }
  return report;
}

}  // namespace flowrag
