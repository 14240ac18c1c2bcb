// IndexRun: one write run over a store, from the writer lock to the
// journal row: an index of documents, a schema ingest, an OpenIE import or
// a delete.
//
// For its whole life a run owns
//   - the store's cross-process writer lock (taken by Begin; the offline
//     extractor's claimed batches let it go, so that concurrent runs share
//     them, and take it again for what follows: extraction_phase.h);
//   - the embedder it embeds with: the engine's when the store still
//     records that model, else the one the store records (another process
//     refitted it); refitted when due, with its meta (embedder, language,
//     tokenizer, dense model) written by the embed phase;
//   - the chat model extraction and the schema plan use;
//   - its journal row (index_runs), begun before its first write and
//     finished, done or failed, whatever happens;
//   - the order of the phases (index_context.h lists them).
// It writes nothing to stderr (progress goes to IndexOptions::progress,
// the loaders' messages to IndexReport::messages) and builds no read
// snapshot: the engine publishes what a run committed once it returns.
//
// Begin checks what a run would otherwise find broken only after its first
// writes (the cached vectors it rebuilds snapshots from) and refuses a
// damaged store before writing anything.
//
// Thread-safety: one thread drives a run; its extraction workers are its
// own. Two runs of one store, in this process or others, take turns on
// the writer lock (an engine also serialises its own).
#ifndef FLOWRAG_INDEXING_INDEX_RUN_H_
#define FLOWRAG_INDEXING_INDEX_RUN_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "embed/embedder.h"
#include "flowrag/options.h"
#include "flowrag/schema.h"
#include "flowrag/types.h"
#include "indexing/index_context.h"
#include "indexing/ingest_phase.h"
#include "storage/store.h"
#include "storage/writer_lock.h"

namespace flowrag {

struct ConstructionPlan;  // schema/construct.h

// The store as a run uses it: the phases' interfaces, the meta it records,
// the cache of chat answers. References into one store that outlives the
// run.
struct RunStores {
  PhaseStores phases;
  StoreState& state;
  LlmResponseStore& responses;

  static RunStores Of(Store& store) { return {PhaseStores::Of(store), store, store}; }
};

class IndexRun {
 public:
  // Whether Begin checks every cached vector of the model for damage
  // (EmbeddingCache::CheckVectorSizes: range probes of an index of the
  // rows' sizes, O(log n + damaged rows), reading no vector). A run that
  // indexes needs it: the snapshot after it may read any of them. A delete
  // reads none (Snapshot::Remove), and a rebuild that would read them
  // checks each as it reads it.
  enum class VectorCheck { kScan, kSkip };
  // Takes the writer lock (waiting up to EngineOptions::writer_wait_ms),
  // settles the embedder (`current`, the engine's, when the store records
  // its model; may be null) and, with kScan, checks the store for damage a
  // run would meet after writing (Corruption naming it). Writes nothing.
  static Result<std::unique_ptr<IndexRun>> Begin(RunStores stores, const EngineOptions& engine,
                                                 std::shared_ptr<Embedder> current,
                                                 VectorCheck check = VectorCheck::kScan);
  IndexRun(const IndexRun&) = delete;
  IndexRun& operator=(const IndexRun&) = delete;

  // Documents from `produce` through every phase: ingest, embed,
  // extraction, graph extras; journalled as `label`. `stored`, when set, is
  // called once the new documents are stored and embedded, before their
  // extraction (API inserts are searchable before they are linked), with
  // the report so far. The report of a failed run is lost, its status
  // returned; what it committed stays (the next run resumes).
  Result<IndexReport> IndexDocuments(const std::string& label, const IndexOptions& options,
                                     const DocumentProducer& produce,
                                     const std::function<void(const IndexReport&)>& stored = {});

  // Schema-driven construction (Engine::Ingest): the plan, then record
  // documents, embeddings, extraction of text documents, the record graph
  // and graph extras (schema_records.h).
  Result<IngestReport> Ingest(const std::string& dir, const SchemaContract& contract,
                              const IngestOptions& options);

  // Precomputed OpenIE as the graph of the passages it covers
  // (Engine::ImportOpenIe; openie_phase.h), then graph extras.
  Result<ImportReport> ImportOpenIe(const std::string& path, const ImportOpenIeOptions& options);

  // Engine::DeleteDocument: the document, its passages and what only they
  // supported.
  Status DeleteDocument(std::string_view document_id);

  // The embedder the run ends with (refitted, or another process's): what
  // snapshots of its writes embed queries with; and its kind.
  const std::shared_ptr<Embedder>& embedder() const { return embedder_; }
  const std::string& embedder_kind() const { return embedder_kind_; }
  const std::string& language() const { return language_; }

 private:
  IndexRun(RunStores stores, const EngineOptions& engine) : stores_(stores), engine_(engine) {}

  // Settles language, embedder kind and embedder as described at Begin.
  Status SettleEmbedder(std::shared_ptr<Embedder> current);
  // Begins the journal row of a run labelled `label`.
  Status BeginJournal(const std::string& label, IndexRunRecord* run);
  // Journals `st` as the run's outcome; returns the first error.
  Status FinishJournal(IndexRunRecord* run, const Status& st);
  // The embed phase: refit when due, the embedder's meta, the passages
  // without a vector, the dense model; drops vectors a refit superseded.
  Status Embed(IndexContext& ctx);
  // The extraction phase with this run's chat model, then graph extras;
  // records the extractor. With `share_lock` the offline extractor's
  // batches run without the writer lock, beside other runs.
  Status Extract(IndexContext& ctx, bool share_lock = true);
  // Ingest's plan: the construction plan and the chat model's entity types
  // and relationships (index_run_ingest.cc).
  Result<ConstructionPlan> PlanIngest(const std::string& dir, const SchemaContract& contract,
                                      const IngestOptions& options, IngestReport* report);
  Status PlanLlmExtraction(const SchemaContract& contract, const IngestOptions& options,
                           ConstructionPlan* plan, IngestReport* report);
  // Graph-text vectors and synonym edges of what is new, into the report.
  Status GraphExtras(IndexContext& ctx);
  // After the writer lock was let go of: the embedder another run may have
  // refitted meanwhile.
  Status RetakeWriterLock();

  RunStores stores_;
  const EngineOptions& engine_;
  WriterLock lock_;
  std::string language_;
  std::string embedder_kind_;
  std::shared_ptr<Embedder> embedder_;
};

}  // namespace flowrag

#endif  // FLOWRAG_INDEXING_INDEX_RUN_H_
