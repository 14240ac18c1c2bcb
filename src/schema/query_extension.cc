// ExtendForQuery and SaveExtensionSnapshot (schema/query_extension.h).
#include "schema/query_extension.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>

#include "common/text.h"
#include "llm/json_repair.h"
#include "schema/schema_proposal.h"

namespace flowrag {
namespace {

using Json = nlohmann::json;

const char kPrompt[] = R"(Analyze this user query to decide whether answering it needs entity types or relationships that the current knowledge graph schema does not have.

Query: "{QUERY}"

Existing entities:
{ENTITIES}
Existing relationships:
{RELATIONSHIPS}
Task:
1. Identify the entity types the query mentions or implies.
2. Decide whether any of them are MISSING from the existing entities.
3. Identify relationships the query needs that are MISSING.
4. For each missing item give its type name, a confidence (0.0-1.0), the reason it is needed, example instances from the query, and the attributes to track.
Answer with JSON only:
{"needs_extension": true,
 "required_entities": [{"type": "...", "confidence": 0.9, "reason": "...", "examples": ["..."], "attributes": ["..."]}],
 "required_relationships": [{"type": "...", "source_entity": "...", "target_entity": "...", "confidence": 0.9, "reason": "..."}],
 "reasoning": "..."}
Only propose an extension when it is really needed; when the existing schema suffices, answer "needs_extension": false with empty lists.)";

std::string Fill(std::string text, std::string_view key, std::string_view value) {
  const size_t at = text.find(key);
  if (at != std::string::npos) text.replace(at, key.size(), value);
  return text;
}

std::string Str(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

double Confidence(const Json& j) {
  if (!j.contains("confidence")) return 0.0;
  const Json& c = j["confidence"];
  if (c.is_number()) return c.get<double>();
  if (c.is_string()) return std::strtod(c.get<std::string>().c_str(), nullptr);
  return 0.0;
}

std::string Percent(double x) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%.2f", x);
  return buf;
}

// The contract's spelling of a type, compared by PascalCase form.
std::string TypeNamed(const std::vector<EntityType>& types, const std::string& name) {
  const std::string want = ToLowerAscii(PascalCaseName(name));
  for (const EntityType& t : types) {
    if (ToLowerAscii(t.name) == want) return t.name;
  }
  return "";
}

}  // namespace

std::string QueryExtensionPrompt(std::string_view question, const SchemaContract& base) {
  std::string entities, relationships;
  for (const EntityType& t : base.entity_types) {
    entities += "- " + t.name;
    for (size_t i = 0; i < t.attributes.size(); ++i) {
      entities += (i == 0 ? " (attributes: " : ", ") + t.attributes[i];
    }
    if (!t.attributes.empty()) entities += ")";
    entities += "\n";
  }
  for (const RelationshipType& r : base.relationships) {
    relationships += "- (" + r.from + ")-[" + r.name + "]->(" + r.to + ")\n";
  }
  if (entities.empty()) entities = "(none)\n";
  if (relationships.empty()) relationships = "(none)\n";
  return Fill(Fill(Fill(kPrompt, "{QUERY}", question), "{ENTITIES}", entities), "{RELATIONSHIPS}",
              relationships);
}

Result<QueryExtension> ExtendForQuery(std::string_view question, const SchemaContract& base,
                                      ChatModel& chat, double min_confidence) {
  ChatRequest request;
  request.json_mode = true;
  request.messages.push_back({"user", QueryExtensionPrompt(question, base)});
  FLOWRAG_ASSIGN_OR_RETURN(ChatResponse response, chat.Complete(request));
  JsonRepairOptions ro;
  ro.allow_truncated = response.finish_reason == "length";
  FLOWRAG_ASSIGN_OR_RETURN(RepairedJson parsed, ParseLlmJson(response.content, ro));
  const Json& j = parsed.value;
  if (!j.is_object()) return Status::InvalidArgument("query extension: the answer is not a JSON object");

  QueryExtension out;
  out.reasoning = Str(j, "reasoning");
  out.needs_extension = j.contains("needs_extension") && j["needs_extension"].is_boolean() &&
                        j["needs_extension"].get<bool>();
  const Json empty = Json::array();
  const Json& entities = j.contains("required_entities") && j["required_entities"].is_array()
                             ? j["required_entities"] : empty;
  const Json& relations = j.contains("required_relationships") && j["required_relationships"].is_array()
                              ? j["required_relationships"] : empty;
  SchemaContract incoming;
  for (const Json& e : entities) {
    const std::string asked = Str(e, "type");
    const std::string name = PascalCaseName(asked);
    const double c = Confidence(e);
    if (name.empty()) {
      out.rejected.push_back("\"" + asked + "\": not a usable type name");
    } else if (!out.needs_extension) {
      out.rejected.push_back(name + ": the model says the schema suffices");
    } else if (!TypeNamed(base.entity_types, name).empty()) {
      out.rejected.push_back(name + ": already an entity type");
    } else if (c < min_confidence) {
      out.rejected.push_back(name + ": confidence " + Percent(c) + " below " + Percent(min_confidence));
    } else if (TypeNamed(incoming.entity_types, name).empty()) {
      EntityType t;
      t.name = name;
      t.extraction = "llm";
      incoming.entity_types.push_back(std::move(t));
    }
  }
  for (const Json& r : relations) {
    const std::string name = UpperSnakeName(Str(r, "type"));
    const double c = Confidence(r);
    std::string ends[2];
    const char* keys[2] = {"source_entity", "target_entity"};
    std::string missing;
    for (int k = 0; k < 2; ++k) {
      const std::string asked = Str(r, keys[k]);
      ends[k] = TypeNamed(base.entity_types, asked);
      if (ends[k].empty()) ends[k] = TypeNamed(incoming.entity_types, asked);
      if (ends[k].empty() && missing.empty()) missing = "\"" + asked + "\"";
    }
    if (name.empty()) {
      out.rejected.push_back("\"" + Str(r, "type") + "\": not a usable relationship name");
    } else if (!out.needs_extension) {
      out.rejected.push_back(name + ": the model says the schema suffices");
    } else if (!missing.empty()) {
      out.rejected.push_back(name + ": " + missing + " is not an entity type");
    } else if (c < min_confidence) {
      out.rejected.push_back(name + ": confidence " + Percent(c) + " below " + Percent(min_confidence));
    } else {
      RelationshipType rel;
      rel.name = name;
      rel.from = ends[0];
      rel.to = ends[1];
      rel.confidence = c;
      incoming.relationships.push_back(std::move(rel));
    }
  }
  ExtensionResult merged = ExtendContract(base, incoming);
  out.contract = std::move(merged.contract);
  out.added = std::move(merged.added);
  return out;
}

Result<std::string> SaveExtensionSnapshot(const SchemaContract& contract, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IoError(dir + ": cannot create the snapshot directory: " + ec.message());
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d_%H%M%S", &utc);
  const std::string text = ToYaml(contract);
  for (int n = 1; n < 1000; ++n) {
    const std::string path = (std::filesystem::path(dir) /
                              ("schema_" + std::string(stamp) + (n > 1 ? "_" + std::to_string(n) : "") + ".yaml"))
                                 .string();
    std::FILE* f = std::fopen(path.c_str(), "wx");  // exclusive: a concurrent query takes the next name
    if (f == nullptr) {
      if (errno == EEXIST) continue;
      return Status::IoError(path + ": cannot create: " + std::strerror(errno));
    }
    const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !written) {
      std::remove(path.c_str());
      return Status::IoError(path + ": write failed");
    }
    return path;
  }
  return Status::IoError(dir + ": no free snapshot name for " + stamp);
}

}  // namespace flowrag
