// Engine: the entry point of the flowrag library.
//
//   auto engine = flowrag::Engine::Open("corpus.db");
//   engine.value()->Index({"docs/"});
//   auto result = engine.value()->Query("Who founded the observatory?");
//
// An Engine owns one store (a SQLite file, or a workspace of a PostgreSQL
// database named by a `postgresql://user@host/db?workspace=name` URL; see
// doc/storage.md) and the in-memory snapshot that queries read. Index() writes the store in transactional batches and then
// swaps in a new snapshot.
//
// Thread-safety: Query() and Stats() may run concurrently with each other
// and with one Index() (readers see the old snapshot until the swap); Index()
// calls are serialised.
#ifndef FLOWRAG_ENGINE_H_
#define FLOWRAG_ENGINE_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/graph.h"
#include "flowrag/matrix.h"
#include "flowrag/options.h"
#include "flowrag/schema.h"
#include "flowrag/status.h"
#include "flowrag/types.h"

namespace flowrag {

// True when `location` is a PostgreSQL URL (postgresql:// or postgres://)
// rather than the path of a SQLite file.
bool IsDatabaseUrl(std::string_view location);

// `location` fit to print: a PostgreSQL URL with its password replaced by
// `***`; a file path as it is.
std::string DisplayLocation(const std::string& location);

class Engine {
 public:
  // Opens (or creates) the store at `db_path`. The snapshot the reads run on
  // is loaded by the first read (or Refresh), so an engine opened to write
  // reads nothing it does not need; a server calls Refresh to be ready. (That
  // first read waits for a write this engine has in progress; later reads
  // never wait for writes.)
  static Result<std::unique_ptr<Engine>> Open(const std::string& db_path,
                                              const EngineOptions& options = {});
  virtual ~Engine() = default;

  // Loads each source (directory of .txt/.md/.pdf/.html, .jsonl, .json list, benchmark
  // folder, single files; src/ingest/loaders.h), chunks, stores and embeds
  // it; passages of a PDF know their pages. Unchanged documents are skipped;
  // a run interrupted by a crash resumes where it stopped.
  virtual Result<IndexReport> Index(const std::vector<std::string>& sources,
                                    const IndexOptions& options = {}) = 0;

  // Stores, embeds and extracts documents given directly (same transactional
  // batches and skip-unchanged rule as Index). Errors name the document's
  // position and field; nothing of a rejected call is stored.
  virtual Result<IndexReport> IndexDocuments(const std::vector<DocumentInput>& documents,
                                             const IndexOptions& options = {}) = 0;

  // Schema-driven construction (schema-contracts paper, Appendix B): the
  // folder's records under `contract` become SourceRecord documents, typed
  // entities (DERIVED_FROM their records), relationships (foreign keys and
  // link fields) and passages, in this store and snapshot, so every
  // retriever and Ask() see them; text documents go through the extractor
  // and are linked to the record entities they name. The contract is kept
  // in the store (Ask's schema agent reads it). Re-ingesting skips unchanged
  // records; a crash leaves whole batches and a rerun completes the graph.
  // Errors name the file, line and field; references that match nothing
  // are dropped and reported, never stored as dangling edges.
  virtual Result<IngestReport> Ingest(const std::string& dir, const SchemaContract& contract,
                                      const IngestOptions& options = {}) = 0;

  // Imports precomputed OpenIE (the benchmark openie.jsonl, keyed by corpus
  // id, or HippoRAG's openie_results_ner_*.json, keyed by passage text) as the
  // graph of the passages it covers, replacing what they had.
  virtual Result<ImportReport> ImportOpenIe(const std::string& path,
                                            const ImportOpenIeOptions& options = {}) = 0;

  // Removes a document by external id.
  virtual Status DeleteDocument(std::string_view document_id) = 0;

  // Ranked passages for `question` with the method in `options`.
  virtual Result<RetrievalResult> Query(std::string_view question,
                                        const QueryOptions& options = {}) const = 0;

  // A grounded answer with citations: retrieval with options.query, the
  // pipeline, then the chat model (when configured and asked for) or the
  // offline extractive answerer. A chat-model failure degrades to the
  // extractive answer and says so in Answer::warnings.
  virtual Result<Answer> Ask(std::string_view question, const AnswerOptions& options = {}) const = 0;

  virtual Result<StoreStats> Stats() const = 0;

  // The documents queries currently see (the snapshot), in store order,
  // at most `limit` per page and without their text. `cursor` is "" for the
  // first page, then the previous page's next_cursor; a document inserted
  // meanwhile comes after the cursors handed out, a deleted one is skipped.
  // InvalidArgument for a cursor that is not one. O(log n + limit).
  virtual Result<DocumentPage> ListDocuments(std::string_view cursor, size_t limit) const = 0;

  // One document of the snapshot with its text; NotFound for an unknown id.
  // O(n) comparisons of ids.
  virtual Result<StoredDocument> GetDocument(std::string_view id) const = 0;

  // The knowledge graph of the current snapshot, for export and browsing
  // (flowrag/graph.h). The view pins that snapshot; it never changes. O(1)
  // once the snapshot is loaded; the load's error otherwise.
  virtual Result<std::shared_ptr<const GraphView>> Graph() const = 0;

  // texts[i] embedded into row i with the engine's embedder, as passages
  // are for dense search (L2-normalised rows; 0 columns while a remote
  // model's dimension is unknown and `texts` is empty).
  virtual Result<FloatMatrix> Embed(const std::vector<std::string>& texts) const = 0;

  // Loads what other processes wrote to the store since this engine's
  // snapshot, or the snapshot itself before the first read; true when a new
  // snapshot was swapped in (nothing to do costs one small query). EngineOptions::follow_store calls it in the
  // background.
  virtual Result<bool> Refresh() = 0;

  // Writes what the store derives for reading now, instead of after the
  // next write (doc/storage.md "The snapshot segment"): a SQLite store's
  // snapshot segment, so that the next open maps it instead of building
  // the snapshot (a store written before segments migrates here). Nothing
  // to do when the current snapshot came from its segment. A no-op for a
  // store without a segment directory. FailedPrecondition for a read-only
  // engine; the write's failure otherwise.
  virtual Status Compact() = 0;

  // The retrieval methods this build knows: "auto" (QueryOptions::method),
  // then "bm25", "dense", "hybrid" and the graph methods.
  static std::vector<std::string> Methods();

  // The per-query options `method` reads (QueryOptions::params), in the
  // order it reads them, with their defaults. InvalidArgument for an
  // unknown method and for "auto" (it resolves per store).
  static Result<std::vector<MethodOption>> MethodOptions(std::string_view method);
};

}  // namespace flowrag

#endif  // FLOWRAG_ENGINE_H_
