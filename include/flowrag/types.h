// Result types of the public API.
#ifndef FLOWRAG_TYPES_H_
#define FLOWRAG_TYPES_H_

#include <cstdint>
#include <map>
#include <string>
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
  std::string text;
  double score = 0.0;        // method-specific; higher is better
};

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

struct RetrievalResult {
  std::string method;
  std::vector<ScoredPassage> passages;  // best first
  RetrievalDiagnostics diagnostics;
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
  double ingest_seconds = 0.0;
  double embed_seconds = 0.0;
  double total_seconds = 0.0;
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
  int64_t passages_missing_embeddings = 0;
};

}  // namespace flowrag

#endif  // FLOWRAG_TYPES_H_
