// Result types of the public API.
#ifndef FLOWRAG_TYPES_H_
#define FLOWRAG_TYPES_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace flowrag {

// One retrieved passage, ranked.
struct ScoredPassage {
  int64_t passage_id = 0;    // stable while its document is unchanged
  std::string document_id;   // the document's external id (e.g. "2wiki-p00531", "people/ada.md")
  std::string title;         // the document title
  int32_t ordinal = 0;       // position of the passage in its document
  uint32_t begin = 0;        // UTF-8 byte offsets into the document text
  uint32_t end = 0;
  // The 1-based pages the passage lies on (first == last for one page); 0
  // when its document has no pages. A document has pages when its text
  // holds page breaks (U+000C): every PDF, one break after each page.
  int32_t page_first = 0;
  int32_t page_last = 0;
  std::string text;
  double score = 0.0;        // method-specific; higher is better
};

// "p. 12", "pp. 12-13", or "" when first is 0 (a document without pages).
inline std::string PagesLabel(int32_t first, int32_t last) {
  if (first <= 0) return "";
  if (last <= first) return "p. " + std::to_string(first);
  return "pp. " + std::to_string(first) + "-" + std::to_string(last);
}

// What a retrieval cost. Fields a method does not use stay 0.
struct RetrievalDiagnostics {
  double time_ms = 0.0;            // wall time of the retrieval itself
  size_t candidates_scored = 0;    // passages (or vectors) that received a score
  size_t iterations = 0;           // solver iterations / pushes
  double residual = 0.0;           // solver residual at exit
  size_t nodes_touched = 0;
  size_t edges_touched = 0;
  std::map<std::string, double> extra;  // method-specific counters
};

// A node of the subgraph a graph method touched.
struct GraphNode {
  uint32_t id = 0;       // node id within the snapshot graph
  std::string kind;      // "Passage", "Entity", "EntityDescription", "Fact"
  std::string label;     // entity name, passage document id#ordinal, ...
  double score = 0.0;    // mass / activation / probability
  bool seed = false;
};

struct GraphEdge {
  uint32_t from = 0, to = 0;
  std::string kind;      // "MENTIONS", "RELATED_TO", "DESCRIBES", "SYNONYM"
  std::string relation;  // RELATED_TO: the relation text
  double weight = 0.0;
  double flow = 0.0;
};

struct RetrievalResult {
  std::string method;
  std::vector<ScoredPassage> passages;  // best first
  RetrievalDiagnostics diagnostics;
  // Graph methods: the query keywords, the touched subgraph (highest-scoring
  // nodes and the edges between them) and a path from a seed to each
  // returned passage (node labels, seed first).
  std::vector<std::string> keywords;
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;
  std::vector<std::vector<std::string>> paths;
  // Relation texts a method adds to the answer context (SA-RAG §5.5, τr).
  std::vector<std::string> context;
};

// One per-query option of a retrieval method (QueryOptions::params), as
// Engine::MethodOptions lists it.
struct MethodOption {
  std::string name;           // e.g. "qafd.alpha"
  std::string type;           // "number", "integer", "bool" or "string"
  std::string default_value;  // spelled as QueryOptions::params takes it
};

// One cited source of an answer: a passage and the sentence that supports it.
struct Citation {
  int marker = 0;            // the [n] used in the answer and its numbered context (1-based)
  int64_t passage_id = 0;
  std::string document_id;
  std::string title;
  std::string quote;         // the supporting sentence (or the passage start)
  uint32_t begin = 0;        // UTF-8 byte offsets of `quote` in the document text
  uint32_t end = 0;
  int32_t page_first = 0;    // the pages of `quote` (ScoredPassage::page_first); 0: no pages
  int32_t page_last = 0;
};

// What the chat model calls of one answer cost. cost_usd uses the prices
// configured by FLOWRAG_LLM_PRICE_INPUT / FLOWRAG_LLM_PRICE_OUTPUT (USD per
// million tokens; 0 when unset).
struct TokenUsage {
  int64_t llm_calls = 0;
  int64_t cache_hits = 0;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  double cost_usd = 0.0;
};

// One retrieval round of an iterative pipeline.
struct AnswerStep {
  std::string query;               // what this step retrieved with
  std::string answer;              // decompose: the sub-question's answer; cot: the step's answer
  std::string summary;             // cot: the evidence summary carried to the next step
  std::string follow_up;           // cot: the next question (empty when the step answered)
  std::vector<int64_t> passage_ids;  // retrieved, best first
};

// A grounded answer. `retrieval` is the evidence the final answer was
// written from (for iterative pipelines: every step's passages, merged, in
// the order they were first retrieved, and the last step's subgraph).
struct Answer {
  std::string question;
  std::string text;                // the short (or long-form) answer
  std::string reasoning;           // the model's reasoning; extractive: how the span was chosen
  bool answered = true;            // false: "Insufficient Information"
  double confidence = 0.0;         // extractive: support score in [0, 1]; LLM: 1 or 0
  std::string answerer;            // "extractive" or "llm:<model>"
  std::string pipeline;            // "single", "cot" or "decompose"
  std::vector<Citation> citations;
  std::vector<AnswerStep> steps;
  RetrievalResult retrieval;
  TokenUsage usage;
  std::vector<std::string> warnings;  // degradations (e.g. the model failed: extractive answer)
  double time_ms = 0.0;
};

// Receives an answer while Engine::Ask makes it (AnswerOptions::observer),
// on the thread that called Ask: first the retrieval the answer is written
// from (passages numbered as its citations, subgraph), once; then the
// answer's text in pieces as the chat model writes it (an offline answer,
// or a model that does not stream, in one piece). Ask then returns the
// whole Answer, which is authoritative: if the model fails midway, the
// pipeline answers offline and warns, and the text may differ from the
// pieces. Returning false from either call cancels the answer (the model's
// request is aborted): Ask returns Cancelled.
class AnswerObserver {
 public:
  virtual ~AnswerObserver() = default;
  virtual bool OnRetrieval(const RetrievalResult& retrieval) = 0;
  virtual bool OnText(std::string_view piece) = 0;
};

// A document given directly (not read from a file): the HTTP API's inserts.
struct DocumentInput {
  std::string id;      // external id; an existing document with this id is replaced
  std::string title;
  std::string text;
};

// A stored document as Engine::GetDocument and Engine::ListDocuments return it.
struct StoredDocument {
  std::string id;      // external id
  std::string title;
  std::string text;    // ListDocuments: empty (read one with GetDocument)
  size_t bytes = 0;    // UTF-8 length of the text
};

// One page of Engine::ListDocuments.
struct DocumentPage {
  std::vector<StoredDocument> documents;
  std::string next_cursor;  // pass it back for the next page; empty after the last
};

struct IndexReport {
  size_t documents_seen = 0;
  size_t documents_added = 0;
  size_t documents_replaced = 0;
  size_t documents_unchanged = 0;  // skipped: same content hash as stored
  size_t passages_added = 0;
  size_t passages_embedded = 0;    // embeddings computed (not found in the cache)
  size_t batches_committed = 0;
  bool embedder_refitted = false;
  // Knowledge graph (extraction phase).
  std::string extractor;               // what ran ("heuristic", "llm:openie", "none")
  size_t passages_extracted = 0;
  size_t passages_relinked = 0;        // older passages re-extracted for new names
  size_t extraction_failures = 0;      // passages left for the next run
  size_t entities_created = 0;
  size_t entities_deleted = 0;
  size_t facts_created = 0;
  size_t triples_rejected = 0;
  size_t graph_texts_embedded = 0;
  size_t synonym_edges = 0;
  double extract_seconds = 0.0;
  double graph_seconds = 0.0;          // graph text embedding + synonyms
  // --dry-run: what the LLM extraction of the pending passages would cost.
  size_t estimated_llm_calls = 0;
  size_t estimated_prompt_tokens = 0;
  size_t estimated_completion_tokens = 0;
  std::vector<std::string> messages;   // rejections and skips worth showing
  double ingest_seconds = 0.0;
  double embed_seconds = 0.0;
  double total_seconds = 0.0;
};

struct ImportReport {
  size_t records_read = 0;
  size_t records_unmatched = 0;       // no stored passage has this id / text
  size_t passages_matched = 0;
  size_t passages_without_record = 0; // stored passages the file does not cover
  size_t triples_read = 0;
  size_t triples_kept = 0;            // = read − malformed − duplicate
  size_t triples_malformed = 0;       // not three strings, or an empty subject/object
  size_t duplicate_triples = 0;       // repeated within a record, kept once
  size_t triples_rejected = 0;        // kept but refused by the graph (subject = object)
  size_t entities_created = 0;
  size_t facts_created = 0;
  size_t synonym_edges = 0;
  double seconds = 0.0;
  std::vector<std::string> messages;
};

// Graph statistics (schema-contracts paper Eq. 7–8 over entities and their
// RELATED_TO relationships).
struct GraphStats {
  std::map<std::string, int64_t> nodes;  // per node kind
  std::map<std::string, int64_t> edges;  // per edge kind (undirected)
  double isolated_ratio = 0.0;           // entities without a RELATED_TO edge / entities
  double average_degree = 0.0;           // 2·|RELATED_TO| / |entities|
  // Entity RELATED_TO degree distribution.
  int64_t degree_min = 0, degree_median = 0, degree_p90 = 0, degree_p99 = 0, degree_max = 0;
  int64_t extracted_passages = 0;
  int64_t failed_passages = 0;
  int64_t llm_calls = 0;                 // cached chat responses (each paid once)
  int64_t llm_prompt_tokens = 0;
  int64_t llm_completion_tokens = 0;
  int64_t memory_bytes = 0;              // in-memory graph of the snapshot
};

// Schema and KG quality (schema-contracts paper B.7.1–B.7.2) of a store
// built by Engine::Ingest; `present` is false without a contract.
struct SchemaStats {
  bool present = false;
  int version = 0;
  std::string generated_by;
  int64_t source_records = 0;       // SourceRecord nodes
  int64_t derived_from = 0;         // DERIVED_FROM edges (entity, record)
  int64_t entity_types = 0, entity_types_used = 0;
  int64_t relationship_types = 0, relationship_types_used = 0;
  double schema_utility = 0.0;           // entity types with ≥ 1 entity / types
  double relationship_usage = 0.0;       // relationship types with ≥ 1 edge / types
  double cross_source_utility = 0.0;     // source pairs joined by a relationship / pairs
  double link_validity = 0.0;            // edges whose endpoints both exist / edges
  double provenance_completeness = 0.0;  // entities with DERIVED_FROM / entities
  bool qa_ready = false;                 // isolated ratio < 0.3 and average degree ≥ 2 (B.7.1)
};

// One file of a store's segment directory (doc/storage.md, "Segments").
struct SegmentFileStats {
  uint64_t id = 0;
  std::string kind;          // "snapshot", ...
  uint64_t rows = 0;         // rows it holds (passages, for a snapshot)
  uint64_t deleted_rows = 0; // of those, deleted by tombstones
  uint64_t bytes = 0;        // file size
  uint32_t level = 0;        // size tier (merge policy)
};

// The store's segments: what queries map, what awaits deletion, what the
// merge policy would merge now. Empty `directory` when the store keeps
// none (a PostgreSQL workspace, ":memory:", FLOWRAG_SNAPSHOT_SEGMENTS=off).
struct SegmentStats {
  std::string directory;
  uint64_t manifest = 0;             // the current manifest's number; 0: none yet
  int64_t generation = 0;            // the store generation it shows
  std::vector<SegmentFileStats> files;
  uint64_t live_bytes = 0;           // bytes of the files above
  uint64_t unreferenced_files = 0;   // files no manifest names (garbage not yet
  uint64_t unreferenced_bytes = 0;   // collected: a reader still maps them)
  uint64_t merges_pending = 0;       // merges the merge policy plans now
  // How this engine's snapshot was opened: "segment" (mapped in place),
  // else "built" and why the segment was not used.
  std::string snapshot_source;
};

struct StoreStats {
  std::string path;
  int format_version = 0;
  int64_t documents = 0;
  int64_t passages = 0;
  int64_t embeddings = 0;
  int64_t embedding_models = 0;
  int64_t file_bytes = 0;
  int64_t index_runs = 0;
  std::string dense_model;   // the model passages are embedded with
  // The current snapshot's passage index: "flat" (exact), "flat-int8" (an
  // int8 scan rescored exactly), "hnsw", or "" (no dense index).
  std::string passage_index;
  int64_t passages_missing_embeddings = 0;
  // The last failure to write the snapshot's parts (a cache of the store:
  // reads are unaffected, the next open rebuilds what is missing); "" when
  // the last write succeeded or none was made by this engine.
  std::string snapshot_parts_error;
  GraphStats graph;
  SchemaStats schema;
  SegmentStats segments;
};

}  // namespace flowrag

#endif  // FLOWRAG_TYPES_H_
