// Schema induction (executable schema contracts paper, Appendix A): discover
// the record sources of a folder, profile every field into a closed-world
// catalog, and infer structural intelligence without any model: identity
// keys (A.7.1, Eq. 4–5, composite pairs), foreign keys (A.7.2, Eq. 6,
// confidence and cardinality) and companion links (A.8.2: "x_meta" beside
// "x" joined on a shared field of the same name).
//
//   auto schema = flowrag::InduceSchema("exports/");
//   for (const auto& fk : schema->foreign_keys) ...
//
// Sources (A.3): every .csv, .json (a list of objects, or one object),
// .jsonl/.ndjson and .txt/.md file below the folder, one source per file
// named by its relative path without the extension, except corpus
// directories (≥ 50 files of one kind with agreeing structure, or ≥ 2 text
// files), which are one source named by the directory. JSON records are flattened to paths
// ("address.city", "tags[*]", "items[*].price"); a text file is one record
// {path, title, text}. Each source gets its representative record (Eq. 2)
// and diverse samples packed into an 8K-token budget (A.4.2–A.4.3).
// Errors name the file and line (csv_reader.h). Pure; O(total cells) plus
// O(pairs of candidate columns · distinct values) for foreign keys.
#ifndef FLOWRAG_SCHEMA_H_
#define FLOWRAG_SCHEMA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "flowrag/options.h"
#include "flowrag/status.h"
#include "flowrag/types.h"

namespace flowrag {

// The rules of an exclusion manifest (A.3): fnmatch globs on file paths
// relative to the folder, and on "source.field". A contract keeps the rules
// it was induced under (SchemaContract::structure.exclusion_rules), so
// ingestion removes the same files and fields without the manifest.
struct ExclusionRules {
  std::vector<std::string> files;
  std::vector<std::string> fields;

  bool empty() const { return files.empty() && fields.empty(); }
  bool ExcludesFile(const std::string& relative_path) const;
  bool ExcludesField(const std::string& source, const std::string& field) const;
  // Adds the globs of `other` that are not here yet; returns how many.
  size_t Merge(const ExclusionRules& other);
};

struct SchemaOptions {
  // An exclusion manifest (YAML) applied before anything reads the data:
  //   exclude:
  //     files: ["raw/*.tmp.csv", "secrets.csv"]    # globs on paths relative to the folder
  //     fields: ["users.password", "*.ssn"]        # globs on source.field
  // Empty: the folder's "flowrag_exclude.yaml" when present. Its rules are
  // recorded in the result (InducedSchema::exclusion_rules).
  std::string exclusions;
  // A.7.1: qualify(f) = uniq ≥ 0.95, or uniq ≥ 0.80 and an id-like name.
  double unique_ratio = 0.95;
  double id_like_unique_ratio = 0.80;
  // Fields excluded from keys: fewer non-null values, longer average text,
  // or at most this many distinct values.
  int64_t min_key_values = 5;
  double max_key_avg_length = 500.0;
  int64_t min_key_cardinality = 3;
  // Composite keys (pairs) are looked for only in sources without a single key.
  bool composite_keys = true;
  // A.7.2: a candidate foreign key needs this much value overlap (Eq. 6 uses
  // > 0; containment of the child's values in the parent key is also
  // required to reach `min_containment`).
  double min_overlap = 0.0;
  double min_containment = 0.9;
};

// One field of the closed-world catalog.
struct FieldInfo {
  std::string id;  // stable: hash of source and path, 16 hex digits
  std::string source;
  std::string path;       // column name (CSV) or JSON path ("a.b", "tags[*]")
  std::string type;       // "integer", "number", "boolean", "date", "string", "text", "empty"
  int64_t count = 0;      // records
  int64_t nulls = 0;      // empty values
  int64_t distinct = 0;   // distinct non-null values
  double uniqueness = 0;  // distinct / non-null
  double avg_length = 0;  // bytes, over non-null values
  bool id_like = false;   // name matches id, key, uuid, code, ...
  std::vector<std::string> examples;  // up to 3 distinct values
};

struct IdentityKey {
  std::string source;
  std::vector<std::string> fields;  // one, or two for a composite key
  double uniqueness = 0;
  double confidence = 0;  // Eq. 5 (composite: the pair's uniqueness, capped)
  bool primary = false;   // the source's chosen key (first by id-likeness, uniqueness, position)
};

struct ForeignKey {
  std::string from_source, from_field;  // the referencing (child) field
  std::string to_source, to_field;      // the referenced identity key
  double overlap = 0;                   // Eq. 6
  double containment = 0;               // |V_from ∩ V_to| / |V_from|
  bool exact_name = false;
  double confidence = 0;    // min(0.95, 0.5 + 0.3·overlap + 0.15·[exact name])
  std::string cardinality;  // "1:1", "N:1", "1:N", "N:M" (from side first)
  bool companion = false;   // A.8.2: linked as companion sources (see InduceSchema)
};

// Source hierarchy (§3.2, A.7): `parent` has k× fewer records than
// `child`, which references it through a 1:N foreign key (`via`, the
// child's field): "customers" is the parent of "orders". Ingestion reads
// parents first (B.2).
struct SourceParent {
  std::string parent, child, via;
  double ratio = 0;  // child records / parent records, > 1
};

struct SourceInfo {
  std::string name;
  std::string path;
  std::string format;  // "csv", "json", "jsonl", "text"
  int64_t records = 0;
  size_t corpus_files = 0;       // > 0: a corpus directory of this many files
  long representative = -1;      // record index of r* (Eq. 2), -1 without records
  std::vector<size_t> samples;   // record indexes of the diverse samples
  size_t transcoded_fields = 0;  // fields (CSV) or lines (JSON, JSONL, text) read as Windows-1252
};

struct InducedSchema {
  std::vector<SourceInfo> sources;
  std::vector<FieldInfo> fields;
  std::vector<IdentityKey> identity_keys;
  std::vector<ForeignKey> foreign_keys;
  std::vector<SourceParent> hierarchy;  // parents first where they chain
  std::vector<std::string> warnings;
  std::vector<std::string> excluded;  // files and fields the manifest removed
  // The manifest's rules: written into the contract (its `exclude` block)
  // and applied again by every ingestion under it.
  ExclusionRules exclusion_rules;
  double seconds = 0;
};

Result<InducedSchema> InduceSchema(const std::string& dir, const SchemaOptions& options = {});

// ---- The contract: a versioned YAML schema file (A.6, A.9) ----------------

// An entity type: offline, one per record source, named from the source
// (PascalCase, singular), its attributes the source's catalog fields; sources
// whose names give the same type are unified into one (A.9).
struct EntityType {
  std::string name;
  std::string source;
  // A.9 unification: further sources declaring the same type (offline: the
  // same derived name, e.g. "2019/orders.csv" and "2020/orders.csv" are both
  // Order); attributes are the union over all of them.
  std::vector<std::string> merged_sources;
  std::vector<std::string> identity_key;  // fields; empty when none was found
  std::vector<std::string> attributes;    // catalog paths of the source
  std::vector<std::string> text_fields;   // long text ("text" type): passages
  // How instances are read from the source (B.3.2):
  //   "row_as_entity"  every record is one instance (the default, and the
  //                    only kind DeriveContract makes: the source's row type);
  //   "field"          every distinct value of `extraction_field` is one
  //                    instance (e.g. Category from products.category);
  //   "nested_field"   every element of the list `extraction_field`
  //                    ("tags[*]", "items[*].sku") is one instance;
  //   "llm"            instances are named by a chat model in the text of the
  //                    source's records, each passage asked once and every
  //                    name checked against it (Algorithm 3; Engine::Ingest
  //                    with the indexing model, none without one). A type
  //                    without a source (a query-scoped extension, C.6) has
  //                    no instances.
  // Field and nested-field instances are named by the value, deduplicated
  // by it (canonical form), DERIVED_FROM every record they occur in, and
  // linked to the record's entity.
  std::string extraction = "row_as_entity";
  std::string extraction_field;

  bool RowType() const { return extraction == "row_as_entity"; }
  bool HasSource(const std::string& s) const {
    if (s == source) return true;
    for (const std::string& m : merged_sources) {
      if (m == s) return true;
    }
    return false;
  }
};

// A relationship type: offline, one per foreign key.
struct RelationshipType {
  std::string name;      // UPPER_SNAKE
  std::string from, to;  // entity type names
  std::string from_field, to_field;
  std::string cardinality;
  double confidence = 0;
  // "" : instances by foreign keys, link fields and type co-occurrence
  //      (B.5.1, B.5.2, B.5.4);
  // "llm": instances only where a chat model reading the record says so
  //      (B.5.3; the discovery prompts' "semantic_extraction"); without a
  //      model none are made.
  std::string extraction;
};

// One persistent extension: the version it produced, what it added, and
// the additions its confidence threshold left out (C.4).
struct ExtensionLogEntry {
  int version = 0;
  std::vector<std::string> added;
  std::vector<std::string> left_out;
};

// How the schema agent routes a question (paper D.4), the contract's
// `routing` section: the local tools in preference order (each of
// SchemaLookup, VectorRAG, GraphTraverse at most once; SchemaLookup is
// skipped when the question constrains no typed field) and whether the
// stage-1 out-of-scope gate runs (AnswerOptions::schema.ood_gate can only
// turn it off). `schema induce` writes the defaults; a contract without the
// section reads as them.
struct RoutingPolicy {
  std::vector<std::string> preference = {"SchemaLookup", "VectorRAG", "GraphTraverse"};
  bool ood_gate = true;
};

// The tools a RoutingPolicy may name.
inline constexpr const char* kRoutingTools[] = {"SchemaLookup", "VectorRAG", "GraphTraverse"};

struct SchemaContract {
  int version = 1;  // bumped by every persistent extension
  std::string generated_by = "offline";
  InducedSchema structure;  // catalog, keys, links (sources and fields)
  std::vector<EntityType> entity_types;
  std::vector<RelationshipType> relationships;
  std::vector<ExtensionLogEntry> extensions;  // oldest first
  RoutingPolicy routing;
};

// The deterministic (offline) semantic layer over structural analysis.
SchemaContract DeriveContract(const InducedSchema& schema);

// Semantic discovery with the configured chat model (FLOWRAG_LLM_BASE_URL /
// FLOWRAG_LLM_MODEL): the two-pass prompts of E.1–E.2 over the catalog, the
// structural hints and the samples; every field reference checked against
// the closed-world catalog (FieldValidity, A.6.1), invalid ones dropped; the
// result merged into DeriveContract(schema), whose keys and links stay
// authoritative. `exclusions` is the manifest InduceSchema used. `notes`
// (may be null) receives FieldValidity, token use, and what was dropped.
// FailedPrecondition without a configured model; Unavailable when the
// model's answers stay unusable (callers fall back to DeriveContract).
Result<SchemaContract> DiscoverContractWithLlm(const InducedSchema& schema, const std::string& dir,
                                               const std::string& exclusions,
                                               std::vector<std::string>* notes);

// Persistent extension (Appendix C.4–C.5): `incoming` (e.g. DeriveContract
// of InduceSchema over new sources) is merged into `base` by diff, and the
// merge is monotonic: nothing of `base` is removed or altered (its sources,
// fields, keys, types, attributes and relationships stay as they are; a new
// key of an existing source is secondary; a type whose name is taken by
// another source is renamed Name2, Name3, ...). Exclusion rules are
// unioned (what either excluded stays excluded). When anything is added the
// version is bumped and an extension log entry lists it (and what was left
// out); otherwise the contract comes back unchanged, same version.
//
// Confidence (ExtensionOptions::min_confidence, τ): a new identity key,
// foreign key or relationship whose confidence is below τ is left out and
// listed with its confidence (a new type then keeps no key that was left
// out); sources, fields, types and attributes carry no confidence and are
// always merged. The paper is of two minds here: §3.4 merges "only additions
// with confidence > τ = 0.7", while Appendix C.4 applies τ (≥ 0.7) to
// query-scoped extension only and has persistent extension merge "all
// additions that survive the diff", the full pipeline's output being
// trusted; and the initial contract keeps foreign keys from confidence 0.5
// on. The default follows C.4 (τ = 0: everything merged); `flowrag schema
// induce --extend --min-confidence 0.7` applies §3.4's filter.
//
// Query-scoped extension (C.6) is the same merge into a copy held for one
// query: the caller keeps `base` and drops the result afterwards (its own
// filter, schema/query_extension.h, keeps proposals of confidence ≥ 0.7).
struct ExtensionOptions {
  double min_confidence = 0.0;  // τ: additions below it are left out
};
struct ExtensionResult {
  SchemaContract contract;
  std::vector<std::string> added;     // human-readable, in merge order
  std::vector<std::string> left_out;  // below min_confidence: "<what>: confidence 0.62 below 0.70"
};
ExtensionResult ExtendContract(const SchemaContract& base, const SchemaContract& incoming,
                               const ExtensionOptions& options = {});

// YAML text of the contract, and back. Top level: flowrag_schema (1),
// version, generated_by, exclude ({files: [globs], fields: [globs]}: the
// rules it was induced under, applied by every ingestion; absent when there
// are none), sources (name, path, format, records, corpus_files when the
// source is a corpus directory, fields), identity_keys, foreign_keys,
// entity_types, relationships, extensions (version, added, left_out).
// LoadContract validates it (the linter of A.6.1): every field reference is
// in the catalog (closed world), relationship endpoints are defined entity
// types, entity names are PascalCase and relationship names UPPER_SNAKE,
// versions are positive, exclusion globs are non-empty and `exclude` has no
// other keys.
// Errors name the file, line and field ("schema.yaml:14: relationships[2].to:
// \"Contnent\" is not an entity type").
std::string ToYaml(const SchemaContract& contract);
Result<SchemaContract> ParseContract(const std::string& yaml_text, const std::string& path);
Result<SchemaContract> LoadContract(const std::string& path);

// ---- Schema-driven construction (Appendix B): Engine::Ingest ----------------

struct IngestOptions {
  // An exclusion manifest (see SchemaOptions::exclusions) applied on top of
  // the contract's own rules (what induction excluded) and the folder's
  // "flowrag_exclude.yaml": exclusions only ever add up. "" : none.
  std::string exclusions;
  // Chunking of text fields and text documents (B.7.4: boundary chunks of
  // 8,000 chars with 500 overlap above 10,000 chars), batch sizes, and the
  // extractor that reads text documents ("auto": the LLM when configured).
  IndexOptions index;
  double dedup_similarity = 0.85;  // B.4.2 stage 2 for types without a key; 0 = off
  // Records of the contract's sources that are no longer in the folder are
  // deleted (with what only they supported).
  bool remove_missing = true;
  IngestOptions() { index.chunking.strategy = ChunkOptions::Strategy::kBoundary; }
};

struct IngestReport {
  IndexReport index;                      // documents, passages, embeddings, extraction
  std::vector<std::string> source_order;  // B.2 hierarchy order
  size_t records = 0;                     // structured records (SourceRecords)
  size_t text_documents = 0;
  size_t records_removed = 0;
  size_t entities = 0;             // distinct entities the records define
  size_t merged_by_key = 0;        // records folded into an entity by identity key
  size_t merged_by_embedding = 0;  // by name similarity (types without a key)
  size_t field_entities = 0;       // distinct field / nested_field / llm instances (B.3.2)
  size_t links = 0;                // relationship edges (all strategies, LLM ones included)
  size_t llm_entities = 0;         // distinct instances of llm types (Algorithm 3)
  size_t llm_links = 0;            // links by the chat model (B.5.3)
  size_t llm_calls = 0;            // chat calls for both (cached ones included)
  size_t unresolved_links = 0;     // references matching nothing: dropped (see warnings)
  size_t text_mentions = 0;        // record entities named in text passages
  std::vector<std::string> warnings;
  double plan_seconds = 0, graph_seconds = 0, total_seconds = 0;
};

// The schema as JSON (sources, fields, identity_keys, foreign_keys, warnings).
std::string ToJson(const InducedSchema& schema);

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_H_
