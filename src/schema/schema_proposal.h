// A schema proposed by a chat model (schema-contracts paper A.6, E.1–E.2),
// read tolerantly from its JSON answer and validated against the
// closed-world field catalog (A.5, Eq. 3) and the linter's rules (A.6.1).
//
// Field references: a catalog field id, "source.path" exactly as in the
// catalog, or a bare path of the entity's own source. Anything else is an
// invalid (hallucinated) reference: it is dropped and listed, never
// invented; FieldValidity = valid / all references (Eq. 3). A valid field of
// another source than the entity's is left out (listed under `adjusted`).
//
// Entity types: names become PascalCase, relationship names UPPER_SNAKE
// (`adjusted` lists changes). An entity's source is the one it names, else
// the source of its first field id. An entity is dropped (listed under
// `dropped`) when it has no name, no source, is a "SourceRecord" (provenance
// is built in), when all of its field references are invalid, or when its
// extraction method needs a field it does not have (field, nested_field,
// pattern; llm falls back to the source's "text" fields). Relationships are
// dropped when an endpoint is neither a proposed type nor a known (offline)
// type, or when they named link fields and all were invalid; a from/to field
// pair given the wrong way round is swapped. Duplicates merge: entities by
// name (same source: attributes united; another source: the later one is
// dropped), relationships by (from, to, name).
//
// Pure; thread-safe. O(size of the answer · log(catalog)).
#ifndef FLOWRAG_SCHEMA_SCHEMA_PROPOSAL_H_
#define FLOWRAG_SCHEMA_SCHEMA_PROPOSAL_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/schema.h"
#include "flowrag/status.h"
#include "schema/field_catalog.h"

namespace flowrag {

struct ProposedEntityType {
  std::string name;  // PascalCase
  std::string description;
  std::string source;                     // a catalog source
  std::vector<std::string> identity_key;  // catalog paths of `source` (the "anchor")
  std::vector<std::string>
      attributes;  // catalog paths of `source` (anchor and extraction field included)
  std::vector<std::string> text_fields;  // catalog paths of `source`
  // "row_as_entity", "field", "nested_field", "pattern" or "llm" (E.1).
  std::string extraction = "row_as_entity";
  std::string extraction_field;  // the path instances are read from; may be empty
  double confidence = 0.5;
  int pass = 1;  // the pass that proposed it
};

struct ProposedRelationshipType {
  std::string name;                  // UPPER_SNAKE
  std::string description;           // the model's evidence snippet
  std::string from, to;              // entity type names
  std::string from_field, to_field;  // catalog paths of from's / to's source; may be empty
  std::string cardinality;           // "1:1", "1:N", "N:1", "N:M" or ""
  // "join_on_field", "co_occurrence", "within_text_span" or "semantic_extraction".
  std::string extraction;
  double confidence = 0.5;
  int pass = 1;
};

struct TemporalConfig {
  std::string mode = "none";        // "edge_properties", "reified_nodes", "date_nodes", "none"
  std::vector<std::string> fields;  // "source.path" of the time fields
};

struct SchemaProposal {
  std::vector<ProposedEntityType> entity_types;
  std::vector<ProposedRelationshipType> relationships;
  TemporalConfig temporal;
  std::vector<std::string> issues;  // the model's own issues and notes
};

// What validation of one answer found and changed.
struct ProposalCheck {
  int64_t references = 0;             // field references read
  int64_t valid_references = 0;       // of those, in the catalog
  std::vector<std::string> invalid;   // each invalid reference, where it was
  std::vector<std::string> dropped;   // entity types and relationships left out, and why
  std::vector<std::string> adjusted;  // names normalised, fields moved, duplicates merged
  // Eq. 3; 1 when nothing was referenced.
  double FieldValidity() const {
    return references == 0 ? 1.0 : static_cast<double>(valid_references) / references;
  }
};

// "customer order" / "customer_order" / "customerOrder" → "CustomerOrder";
// "" when nothing alphanumeric (ASCII) is left. A leading digit gets "T".
std::string PascalCaseName(std::string_view name);
// "placedBy" / "placed by" / "PLACED-BY" → "PLACED_BY"; "" when nothing is
// left. A leading digit gets "R_".
std::string UpperSnakeName(std::string_view name);

// Pass 1 (E.1): the "entities", "relationships" and "temporal" of `answer`
// (other keys such as "observations" are ignored; "issues"/"notes" kept).
// `known_types` maps type names outside the proposal (the offline ones) to
// their sources; they are valid relationship endpoints. InvalidArgument when
// `answer` is not an object with an "entities" (or "entity_types") list.
// `check` receives every reference, drop and adjustment.
Result<SchemaProposal> ReadDiscoveryAnswer(const nlohmann::json& answer,
                                           const FieldCatalog& catalog,
                                           const std::map<std::string, std::string>& known_types,
                                           ProposalCheck* check);

// Pass 2 (E.2), merged into `proposal` as A.6.1 says: added entities are
// appended (a known name of the same source extends it), added attributes
// extend existing entities, added relationships are deduplicated by (from,
// to, name); renamed entities are renamed everywhere, and merged into the
// type already holding the new name when both read the same source;
// temporal_changes replaces the temporal configuration. An answer holding
// "entities"/"relationships" instead is read as additions. InvalidArgument
// when `answer` is not an object with at least one of these keys.
Status ApplyValidationAnswer(const nlohmann::json& answer, const FieldCatalog& catalog,
                             const std::map<std::string, std::string>& known_types,
                             SchemaProposal* proposal, ProposalCheck* check);

// The proposal with field ids, as the pass-2 prompt shows it (the E.1 shape;
// temporal fields as ids too).
// `known_types` as above, for link fields of relationships to offline types.
nlohmann::ordered_json ProposalToJson(const SchemaProposal& proposal, const FieldCatalog& catalog,
                                      const std::map<std::string, std::string>& known_types);

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_SCHEMA_PROPOSAL_H_
