#include "schema/discovery_prompts.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace flowrag {
namespace {

using Json = nlohmann::ordered_json;

// `s` cut to at most `max` bytes at a UTF-8 boundary, "…" marking a cut.
std::string Cut(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "…";
}

double Round2(double x) { return std::round(x * 100.0) / 100.0; }

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string Fixed(double x, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

// The entity and relationship object shapes, shared by both passes.
constexpr const char* kObjectShapes = R"(Entity object:
  {"name": "Customer",                      // PascalCase, singular
   "description": "A person who places orders.",
   "source": "customers",                   // the source whose records hold it
   "anchor": ["<field id>"],                // the field(s) identifying one instance
   "attributes": [{"field_id": "<field id>", "name": "email", "type_guess": "string"}],
   "text_fields": ["<field id>"],           // long free text to index as passages
   "extraction": {"method": "row_as_entity", "field_id": null},
   "examples": ["..."],
   "confidence": 0.9}
  extraction.method is one of:
    row_as_entity  every record of the source is one instance;
    field          instances are the distinct values of field_id;
    nested_field   instances are the elements of a nested list field_id ("items[*].sku");
    pattern        instances are matched by a regular pattern in field_id;
    llm            instances must be read from free text (field_id = the text field).
Relationship object:
  {"type": "PLACED_BY",                     // UPPER_SNAKE
   "from": "Order", "to": "Customer",       // entity names
   "cardinality": "N:1",                    // 1:1, 1:N, N:1 or N:M
   "extraction": "join_on_field",           // join_on_field, co_occurrence,
                                            // within_text_span or semantic_extraction
   "from_field_id": "<field id>",           // join_on_field: the linking fields
   "to_field_id": "<field id>",
   "evidence": "order 17 has customer_id 4",
   "confidence": 0.9}
Temporal object:
  {"mode": "none", "field_ids": []}         // mode: edge_properties, reified_nodes,
                                            // date_nodes or none
)";

constexpr const char* kClosedWorld =
    R"(CLOSED WORLD: refer to data ONLY by the field ids of the FIELD CATALOG
(or, if you must, as "source.path" exactly as listed). A field that is not in the
catalog does not exist: never invent one. Entity types and relationships must be
evidenced by the catalog and the samples.
Do not model a SourceRecord type: provenance is recorded automatically.
)";

ChatRequest JsonRequest(std::string system, std::string user, int max_tokens, double temperature) {
  ChatRequest r;
  r.temperature = temperature;
  r.max_tokens = max_tokens;
  r.json_mode = true;
  r.messages.push_back({"system", std::move(system)});
  r.messages.push_back({"user", std::move(user)});
  return r;
}

std::string Common(const DiscoveryPromptInput& in) {
  std::string s;
  if (!in.description.empty()) s += "Dataset: " + in.description + "\n";
  s += "Source formats: " + in.formats + "\n";
  s += "Total records: " + std::to_string(in.records) + "\n\n";
  s += "FIELD CATALOG (authoritative; one field per line):\n" + in.catalog + "\n";
  s += "STRUCTURAL HINTS (computed from the data; keys and links are already known):\n" + in.hints +
       "\n";
  return s;
}

}  // namespace

std::string RenderFieldCatalog(const InducedSchema& schema) {
  std::string out;
  for (const FieldInfo& f : schema.fields) {
    Json examples = Json::array();
    for (size_t i = 0; i < f.examples.size() && i < 3; ++i)
      examples.push_back(Cut(f.examples[i], 60));
    const double null_rate = f.count > 0 ? static_cast<double>(f.nulls) / f.count : 0.0;
    Json line = Json::object();
    line["id"] = f.id;
    line["source"] = f.source;
    line["path"] = f.path;
    line["type"] = f.type;
    line["null_rate"] = Round2(null_rate);
    line["distinct"] = f.distinct;
    line["uniqueness"] = Round2(f.uniqueness);
    line["examples"] = std::move(examples);
    out += Dump(line) + "\n";
  }
  return out;
}

std::string RenderStructuralHints(const SchemaContract& offline) {
  const InducedSchema& s = offline.structure;
  std::string out = "Identity keys:\n";
  if (s.identity_keys.empty()) out += "  (none)\n";
  for (const IdentityKey& k : s.identity_keys) {
    std::string fields;
    for (const std::string& f : k.fields) fields += (fields.empty() ? "" : ", ") + f;
    out += "  " + k.source + ": [" + fields + "]" + (k.primary ? " primary" : " secondary") +
           ", uniqueness " + Fixed(k.uniqueness, 2) + "\n";
  }
  out += "Foreign keys:\n";
  if (s.foreign_keys.empty()) out += "  (none)\n";
  for (const ForeignKey& fk : s.foreign_keys) {
    out += "  " + fk.from_source + "." + fk.from_field + " -> " + fk.to_source + "." + fk.to_field +
           " (" + fk.cardinality + ", confidence " + Fixed(fk.confidence, 2) + ")\n";
  }
  out +=
      "Default entity type of each source (one instance per record; rename it by\n"
      "proposing a row_as_entity type for the same source):\n";
  for (const EntityType& t : offline.entity_types) {
    out += "  " + t.source + " -> " + t.name + "\n";
  }
  return out;
}

std::string RenderSampleRecord(const SourceInfo& source, size_t index, const FlatRecord& record,
                               std::string_view role, const std::set<std::string>& catalog_paths,
                               size_t max_value_bytes) {
  Json values = Json::object();
  for (const auto& [path, value] : record.values) {
    if (value.empty() || !catalog_paths.count(path)) continue;
    const std::string cut = Cut(value, max_value_bytes);
    if (path.find("[*]") != std::string::npos) {
      Json& list = values[path];
      if (!list.is_array()) list = Json::array();
      list.push_back(cut);
    } else if (!values.contains(path)) {
      values[path] = cut;
    }
  }
  return "--- source \"" + source.name + "\" (" + source.format + "), record " +
         std::to_string(index + 1) + " of " + std::to_string(source.records) + ", " +
         std::string(role) + ":\n" + Dump(values) + "\n";
}

std::string RenderExistingSchema(const Json& proposal) {
  std::string out = "{";
  const char* sep = "";
  for (const char* key : {"entities", "relationships"}) {
    out += sep + std::string("\"") + key + "\": [";
    sep = ",\n ";
    const Json& list = proposal.contains(key) ? proposal[key] : Json::array();
    for (size_t i = 0; i < list.size(); ++i) out += (i ? ",\n   " : "\n   ") + Dump(list[i]);
    out += "]";
  }
  if (proposal.contains("temporal")) out += ",\n \"temporal\": " + Dump(proposal["temporal"]);
  return out + "}\n";
}

ChatRequest DeepDiscoveryRequest(const DiscoveryPromptInput& in, int max_tokens,
                                 double temperature) {
  std::string u = std::string(kClosedWorld) +
                  "Be COMPLETE: model every entity type and "
                  "relationship the samples give evidence for, not only the obvious ones.\n\n";
  u += Common(in);
  u += "SAMPLE DATA (read every record; it is your only evidence):\n" +
       (in.samples.empty() ? std::string("(no samples)\n") : in.samples) + "\n";
  if (!in.matched.empty()) {
    u += "MATCHED RECORDS (linked sources: for one shared key value, the records of both "
         "sides; they show how the sources relate and with which cardinality):\n" +
         in.matched + "\n";
  }
  u += R"(STEP A - OBSERVE. Note concrete patterns before modelling: identifiers and keys,
labels that repeat, speaker or turn markers, dates and times, nested lists. For each,
record the field id and a short snippet.
STEP B - ENTITIES. Find both kinds:
  1. instances: the same specific thing recurs (a person, a company, an identifier);
  2. concepts: different instances of one kind (a metric, a product, a period).
For each give name, description, source, anchor, attributes, text_fields,
extraction, examples and confidence in [0, 1].
STEP C - RELATIONSHIPS. Propose every relationship the data supports: structural
(foreign keys, records that co-occur), semantic (spans of text, possessive or
attributive phrases) and implicit (a metric and the period it is reported for).
For each give type, from, to, cardinality, extraction, the linking field ids when
it joins on fields, a short evidence snippet and confidence.
STEP D - TEMPORAL. Enable a temporal mode only when the samples show relationships
bound to time; otherwise use "none".

OUTPUT: one JSON object with exactly the keys
  {"observations": [{"field_id": "...", "snippet": "..."}],
   "entities": [<entity>, ...], "relationships": [<relationship>, ...],
   "temporal": <temporal>, "notes": "..."}
)";
  u += kObjectShapes;
  return JsonRequest(
      "You are a schema discovery expert. You infer the entity types and relationships "
      "of a dataset from what you can OBSERVE: the field catalog (the complete, "
      "authoritative list of fields) and the sample records. You answer with one JSON "
      "object and nothing else.",
      std::move(u), max_tokens, temperature);
}

ChatRequest ValidationRequest(const DiscoveryPromptInput& in, int max_tokens, double temperature) {
  std::string u = std::string(kClosedWorld) + "\n";
  u += Common(in);
  u += "EXISTING SCHEMA (authoritative; keep it):\n" + in.existing + "\n\n";
  u += "ADDITIONAL SAMPLES (only for finding gaps):\n" +
       (in.samples.empty() ? std::string("(none beyond those already analysed)\n") : in.samples) +
       "\n";
  u += R"(GUIDELINES:
1. Keep the existing schema; never remove an element, report doubts under "issues".
2. Add an entity for every distinct concept the schema does not capture yet.
3. Add a relationship for every clear connection that is missing.
4. Add attributes to existing entities for catalog fields they should carry.
5. Consolidate: when two entities are the same concept, or a name breaks the
   conventions (PascalCase entities, UPPER_SNAKE relationships), rename it.
WHAT TO CHECK:
Step 1 - the catalog: fields no entity covers that stand for a distinct concept.
Step 2 - the samples: add an entity for a distinct concept someone would ask about,
a category of things, or a concept that recurs in several contexts; add a
relationship for every structural or semantic connection, including ones an LLM
would have to read from text.
EVIDENCE: every addition carries an evidence snippet (at most 25 words), the field
id it comes from, an extraction method and a confidence in [0, 1].

OUTPUT: one JSON object with exactly the keys
  {"added_entities": [<entity>, ...],
   "added_relationships": [<relationship>, ...],
   "added_attributes": [{"entity": "Customer", "field_ids": ["<field id>"]}],
   "renamed_entities": [{"from": "Client", "to": "Customer"}],
   "temporal_changes": <temporal> or null,
   "issues": ["..."], "notes": "..."}
Use empty lists when there is nothing to add.
)";
  u += kObjectShapes;
  return JsonRequest(
      "You review and extend a discovered schema. You keep what is there, fix what "
      "is inconsistent and add what is missing, using only the field catalog and the "
      "samples as evidence. You answer with one JSON object and nothing else.",
      std::move(u), max_tokens, temperature);
}

ChatRequest DiscoveryFormatRepairRequest(const ChatRequest& original, std::string_view answer,
                                         std::string_view problem) {
  ChatRequest r = original;
  r.messages.push_back({"assistant", std::string(answer)});
  r.messages.push_back({"user", "Your previous answer could not be used: " + std::string(problem) +
                                    "\nAnswer again with only the JSON object in the output "
                                    "format described above, without any other text."});
  return r;
}

}  // namespace flowrag
