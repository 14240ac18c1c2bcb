// The two prompts of LLM schema discovery (schema-contracts paper A.6,
// Appendix E.1–E.2) and the renderings they embed.
//
//   Pass 1, deep discovery (E.1): the closed-world field catalog, structural
//   hints (identity keys, foreign keys, the offline type of each source) and
//   sample records; the model observes, then proposes entity types,
//   relationships and a temporal configuration as JSON:
//     {"observations": [...], "entities": [...], "relationships": [...],
//      "temporal": {...}, "notes": "..."}
//   Pass 2, validation and extension (E.2): the catalog, the hints, the
//   validated pass-1 schema and further samples; the model keeps the schema,
//   fixes and consolidates names, and proposes additions only:
//     {"added_entities": [...], "added_relationships": [...],
//      "added_attributes": [...], "renamed_entities": [...],
//      "temporal_changes": {...} | null, "issues": [...], "notes": "..."}
//   The entity and relationship objects of both passes have one shape (see
//   the prompts); every field reference is a catalog field id.
//
// Instructions are in our own words; the steps, evidence rules and output
// keys follow the paper. Requests use json_mode and the given temperature
// (0 by default, so answers are reproducible and cacheable).
// All functions are pure and thread-safe.
#ifndef FLOWRAG_SCHEMA_DISCOVERY_PROMPTS_H_
#define FLOWRAG_SCHEMA_DISCOVERY_PROMPTS_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "flowrag/schema.h"
#include "llm/chat_model.h"
#include "schema/json_records.h"

namespace flowrag {

// What the prompts embed, rendered by the functions below.
struct DiscoveryPromptInput {
  std::string description;  // of the dataset, from the caller; may be empty
  std::string formats;      // "csv, jsonl"
  int64_t records = 0;      // over all sources
  std::string catalog;      // RenderFieldCatalog()
  std::string hints;        // RenderStructuralHints()
  std::string samples;      // RenderSampleRecord() blocks; may be empty
  std::string matched;      // pass 1: matched record sets of linked sources (A.8.1); may be empty
  std::string existing;     // pass 2: the pass-1 schema as JSON
};

// One JSON object per line: id, source, path, type, null_rate, distinct,
// uniqueness and up to 3 examples (each cut to 60 bytes).
std::string RenderFieldCatalog(const InducedSchema& schema);

// Identity keys, foreign keys (with confidence and cardinality) and the
// offline entity type of each source (`offline` = DeriveContract(schema)).
std::string RenderStructuralHints(const SchemaContract& offline);

// A header line naming the source, the record's position and `role`
// ("representative" or "sample"), then the record as one JSON object of
// path → value. Only paths in `catalog_paths` are shown (excluded fields
// never reach the model), empty values are left out, and each value is cut
// to `max_value_bytes` (at a UTF-8 boundary, "…" marks the cut).
std::string RenderSampleRecord(const SourceInfo& source, size_t index, const FlatRecord& record,
                               std::string_view role, const std::set<std::string>& catalog_paths,
                               size_t max_value_bytes);

// The pass-1 schema (ProposalToJson) for the pass-2 prompt: one entity or
// relationship per line.
std::string RenderExistingSchema(const nlohmann::ordered_json& proposal);

ChatRequest DeepDiscoveryRequest(const DiscoveryPromptInput& input, int max_tokens,
                                 double temperature);
ChatRequest ValidationRequest(const DiscoveryPromptInput& input, int max_tokens,
                              double temperature);

// `original` plus the model's unusable `answer` and a follow-up naming
// `problem` and asking for the JSON again.
ChatRequest DiscoveryFormatRepairRequest(const ChatRequest& original, std::string_view answer,
                                         std::string_view problem);

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_DISCOVERY_PROMPTS_H_
