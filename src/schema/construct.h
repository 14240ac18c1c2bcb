// Schema-driven construction plan (schema-contracts paper, Appendix B): what
// a folder's records become in the store under a contract, computed without
// touching the store, so it can be checked on its own.
//
// Files: each contract source reads the files that belong to it as the
// contract describes it (MatchContractSources in schema/discovery.h: its
// file, or the files of its corpus directory), never what a fresh discovery
// of the folder would group, so a source keeps its name and membership when
// files come, go or are excluded. Exclusions (A.3) are the contract's rules,
// the folder's manifest and ConstructionOptions::exclusions together:
// excluded files are not read, excluded fields are dropped from every record
// before anything sees them. A source whose files are all excluded is
// skipped with a warning; one with no file at all is NotFound; a file in no
// source is skipped with a warning.
//
// Per record source of the contract, in hierarchy order (B.2: a source that
// another one references through a foreign key comes first; cycles keep
// catalog order):
//   - every record is one SourceRecord document (B.6), external id
//     "<file>:<line>" ("<file>#<n>" for the n-th record of a .json file, where
//     several may share a line), its text the record rendered as "<Type>: <name>" and
//     "field: value" lines (passage 0), then each text field chunked into
//     further passages (B.7.4);
//   - row_as_entity (B.3.2): the record defines one entity of the source's
//     type, named by its name field (a "name"/"title"/"label" field, else a
//     string identity key, else the most unique short string field, else
//     "<Type> <key or position>");
//   - field and nested_field types (B.3.2) of the source: every value of the
//     type's field (every element of its list) is an instance named by the
//     value, one per name as the store resolves names (EntityKey: the first
//     spelling wins), defined by every
//     record it occurs in; llm types are read by a chat model, when one
//     is used, from the records' text (schema/llm_entities.h);
//   - deduplication (B.4): records with equal identity key values define
//     one entity (stage 1); types without a key merge records whose names
//     embed at cosine ≥ `dedup_similarity` (stage 2, single linkage); a name
//     shared by records with different keys gets the key appended;
//   - relationships (B.5): foreign keys by hash join on canonical values
//     (Algorithm 5, the relationship's name and confidence), and link fields
//     (B.5.1): a string attribute whose value names an entity of another
//     source (e.g. a table cell naming a text document) links to it with the
//     field name as relation. A reference that matches nothing is dropped and
//     reported with file, line and field; no edge ever points nowhere.
//     Type co-occurrence (B.5.2): a record's entity and its field instances,
//     and two field instances of one record, are linked by the contract's
//     relationship between their types (either direction; confidence 1.0
//     when it names the instance's field, else 0.9); a field instance with
//     no declared relationship to the record's type is linked from the
//     record's entity by the field's name. Relationships declared
//     `extraction: llm` take no part in any of these: their instances come
//     from ExtractLlmRelationships (schema/llm_relations.h) or not at all.
// Text sources (.txt/.md) are documents the extraction phase reads; their
// entity is the document title.
//
// Pure apart from reading the folder. Errors name the file and line (CSV
// and JSON readers) or the contract field that does not match the folder.
#ifndef FLOWRAG_SCHEMA_CONSTRUCT_H_
#define FLOWRAG_SCHEMA_CONSTRUCT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/matrix.h"
#include "flowrag/options.h"
#include "flowrag/schema.h"
#include "flowrag/status.h"

namespace flowrag {

struct PlannedLink {
  std::string relation;  // relationship type name, or the link field's name
  std::string target;    // entity name
  double confidence = 1.0;
  std::string subject;   // entity name; "" for the record's entity
};

// An instance of a field, nested_field or llm type read from a record.
struct PlannedEntity {
  std::string name, type;
  uint32_t passage = 0;  // the record passage it is read from (llm instances in text)
};

struct PlannedRecord {
  std::string document_id;  // "<file>:<line>" or "<file>#<n>" (relative), or the file (text)
  std::string title;        // the entity name (text: the document title)
  std::string text;
  std::vector<std::pair<uint32_t, uint32_t>> passages;  // byte ranges of text
  std::string source, file;
  int64_t line = 0;
  std::string entity_type;
  std::string key;          // identity key values joined by '|' ("" without a key)
  std::string fields_json;  // the record's original field values (B.6.1)
  bool text_document = false;
  std::vector<PlannedEntity> derived;  // field / nested_field instances, DERIVED_FROM this record
  std::vector<PlannedLink> links;
};

struct ConstructionPlan {
  std::vector<PlannedRecord> records;  // sources in hierarchy order, records in file order
  std::vector<std::string> source_order;
  size_t merged_by_key = 0;        // records whose entity another record with the same key defines
  size_t merged_by_embedding = 0;  // records merged into a similar name (stage 2)
  size_t derived_entities = 0;     // distinct field / nested_field instances
  size_t links = 0;
  size_t unresolved_links = 0;     // references matching no entity: dropped
  std::vector<std::string> warnings;
};

struct ConstructionOptions {
  // An exclusion manifest applied on top of the contract's rules (its
  // `exclude` block, what induction excluded) and the folder's
  // "flowrag_exclude.yaml"; "" : none. Errors name the manifest and line.
  std::string exclusions;
  ChunkOptions chunking;                  // for text fields and text documents
  double dedup_similarity = 0.85;         // B.4.2; 0 disables stage 2
  size_t max_cluster_entities = 5000;     // stage 2 is skipped (and said) above this per type
  size_t max_warnings = 20;               // unresolved references listed (all are counted)
};

// Embeds names (rows L2-normalised); may be null (stage 2 is skipped).
using NameEmbedder = std::function<Result<FloatMatrix>(const std::vector<std::string>&)>;

Result<ConstructionPlan> PlanConstruction(const std::string& dir, const SchemaContract& contract,
                                          const ConstructionOptions& options,
                                          const NameEmbedder& embed);

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_CONSTRUCT_H_
