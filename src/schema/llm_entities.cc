// ExtractLlmEntities (schema/llm_entities.h).
#include "schema/llm_entities.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <unordered_map>

#include "common/text.h"
#include "llm/json_repair.h"

namespace flowrag {
namespace {

using Json = nlohmann::json;

// One passage the model is asked about.
struct Ask {
  PlannedRecord* record;
  uint32_t passage;
  std::vector<const EntityType*> types;
};

std::string_view PassageText(const PlannedRecord& p, uint32_t k) {
  const auto [b, e] = p.passages[k];
  return std::string_view(p.text).substr(b, e - b);
}

std::string Prompt(const Ask& ask) {
  const PlannedRecord& p = *ask.record;
  std::string out = "Extract the entities of the listed types that this text names.\n\n=== TEXT (" + p.file +
                    (p.text_document ? "" : ":" + std::to_string(p.line)) + ") ===\n" +
                    std::string(PassageText(p, ask.passage)) + "\n=== ENTITY TYPES ===\n";
  for (const EntityType* t : ask.types) out += "- " + t->name + "\n";
  out +=
      "=== INSTRUCTIONS ===\n"
      "List every entity of the types above that the text names, each once, with its name "
      "exactly as the text writes it. Do not list entities the text does not name. Answer with "
      "JSON only:\n"
      "{\"entities\": [{\"type\": \"...\", \"name\": \"...\"}]}";
  return out;
}

std::string Str(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

std::string Trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

class Collector {
 public:
  Collector(const SchemaContract& c, ConstructionPlan* plan, LlmEntityReport* report)
      : contract_(c), plan_(*plan), report_(*report) {}

  // Reads one answer into the record's derived entities; false when unreadable.
  bool Apply(const Ask& ask, const ChatResponse& response) {
    JsonRepairOptions ro;
    ro.allow_truncated = response.finish_reason == "length";
    Result<RepairedJson> parsed = ParseLlmJson(response.content, ro);
    if (!parsed.ok()) return false;
    const Json& j = parsed->value;
    const Json* list = j.is_array() ? &j : (j.is_object() && j.contains("entities") ? &j["entities"] : nullptr);
    if (list == nullptr || !list->is_array()) return false;
    PlannedRecord& p = *ask.record;
    const std::string text = ToLowerAscii(PassageText(p, ask.passage));
    for (const Json& item : *list) {
      const EntityType* type = nullptr;
      for (const EntityType* t : ask.types) {
        if (EntityKey(t->name) == EntityKey(Str(item, "type"))) type = t;
      }
      const std::string name = Trimmed(Str(item, "name"));
      if (type == nullptr || name.empty() || name.size() > 200 || text.find(ToLowerAscii(name)) == std::string::npos) {
        ++report_.rejected;
        continue;
      }
      ++report_.found;
      auto [it, fresh] = instances_[type->name].emplace(EntityKey(name), name);
      if (fresh) ++report_.entities;
      const std::string& spelling = it->second;
      if (!seen_[&p].emplace(type->name, it->first).second) continue;
      p.derived.push_back({spelling, type->name, ask.passage});
      if (!p.text_document && EntityKey(spelling) != EntityKey(p.title)) Link(&p, *type, spelling);
    }
    return true;
  }

 private:
  // The record's entity to the instance: by a declared (non-llm)
  // relationship between their types, else MENTIONS.
  void Link(PlannedRecord* p, const EntityType& type, const std::string& name) {
    bool linked = false;
    for (const RelationshipType& r : contract_.relationships) {
      if (r.extraction == "llm") continue;
      if (r.from == p->entity_type && r.to == type.name) {
        Add(p, {r.name, name, 0.9, ""});
        linked = true;
      } else if (r.from == type.name && r.to == p->entity_type) {
        Add(p, {r.name, p->title, 0.9, name});
        linked = true;
      }
    }
    if (!linked) Add(p, {"MENTIONS", name, 0.9, ""});
  }

  void Add(PlannedRecord* p, PlannedLink l) {
    for (const PlannedLink& have : p->links) {
      if (have.relation == l.relation && have.subject == l.subject && have.target == l.target) return;
    }
    p->links.push_back(std::move(l));
    ++plan_.links;
  }

  const SchemaContract& contract_;
  ConstructionPlan& plan_;
  LlmEntityReport& report_;
  std::map<std::string, std::unordered_map<std::string, std::string>> instances_;  // type → key → spelling
  std::map<const PlannedRecord*, std::set<std::pair<std::string, std::string>>> seen_;
};

}  // namespace

std::vector<const EntityType*> LlmEntityTypes(const SchemaContract& contract) {
  std::vector<const EntityType*> out;
  for (const EntityType& t : contract.entity_types) {
    if (t.extraction == "llm" && !t.source.empty()) out.push_back(&t);
  }
  return out;
}

LlmEntityReport ExtractLlmEntities(const SchemaContract& contract, ConstructionPlan* plan, ChatModel& chat,
                                   const LlmEntityOptions& options) {
  LlmEntityReport report;
  const std::vector<const EntityType*> llm = LlmEntityTypes(contract);
  if (llm.empty()) return report;
  std::vector<Ask> asks;
  for (PlannedRecord& p : plan->records) {
    std::vector<const EntityType*> types;
    for (const EntityType* t : llm) {
      if (t->HasSource(p.source)) types.push_back(t);
    }
    if (types.empty()) continue;
    for (uint32_t k = 0; k < p.passages.size(); ++k) asks.push_back({&p, k, types});
  }
  Collector collect(contract, plan, &report);
  const size_t batch = std::max<size_t>(1, options.batch_records);
  for (size_t begin = 0; begin < asks.size(); begin += batch) {
    const size_t end = std::min(asks.size(), begin + batch);
    std::vector<ChatRequest> requests;
    for (size_t i = begin; i < end; ++i) {
      ChatRequest request;
      request.json_mode = true;
      request.messages.push_back({"user", Prompt(asks[i])});
      requests.push_back(std::move(request));
    }
    std::vector<Result<ChatResponse>> responses = chat.CompleteBatch(requests);
    report.calls += responses.size();
    for (size_t i = 0; i < responses.size(); ++i) {
      if (!responses[i].ok() || !collect.Apply(asks[begin + i], *responses[i])) ++report.failed_calls;
    }
  }
  plan->derived_entities += report.entities;
  return report;
}

}  // namespace flowrag
