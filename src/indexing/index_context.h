// The small context every write phase of an index run works against: the
// store seen through the narrow interfaces the phases use
// (storage/store.h), the run's options, its report and its journal row.
//
// The phases, one file each in this module, in the order an IndexRun runs
// them (index_run.h, index_run_ingest.cc):
//   ingest_phase.h     documents → hash → (skip unchanged) → chunk → store;
//   schema_records.h   the same for a schema contract's planned records,
//                      and afterwards their entities and links;
//   embed_phase.h      passages without a cached vector → embedder → cache;
//   extraction_phase.h pending passages → extractor → graph, in claimed
//                      batches that concurrent runs share;
//   openie_phase.h     precomputed triples as the graph of their passages;
//   graph_extras.h     graph-text vectors and SYNONYM edges of new entities.
// Each commits in batches and resumes from what the store shows as done, so
// a crash anywhere leaves a store that a rerun completes. A phase takes no
// lock and swaps no snapshot: the run holds the store's writer lock around
// them and the engine publishes what they committed.
#ifndef FLOWRAG_INDEXING_INDEX_CONTEXT_H_
#define FLOWRAG_INDEXING_INDEX_CONTEXT_H_

#include "flowrag/options.h"
#include "flowrag/types.h"
#include "storage/store.h"

namespace flowrag {

// The store interfaces the write phases use. References into one store,
// which outlives the context.
struct PhaseStores {
  DocumentStore& documents;
  EmbeddingCache& embeddings;
  GraphSource& graph_source;
  GraphSink& graph;
  RunJournal& journal;
  SourceRecordStore& records;

  static PhaseStores Of(Store& store) { return {store, store, store, store, store, store}; }
};

// One index run as its phases see it. Not thread-safe: the phases run one
// after another (the extraction workers update the report under a lock of
// their own).
struct IndexContext {
  PhaseStores stores;
  const IndexOptions& options;
  IndexReport& report;
  IndexRunRecord& run;  // the run's journal row; phases keep its counters current
};

// IndexOptions::extract_batch_size, its 0 resolved: kOfflineExtractBatch for
// the offline (heuristic) extractor, kModelExtractBatch for the others.
inline constexpr size_t kOfflineExtractBatch = 4096;
inline constexpr size_t kModelExtractBatch = 256;
inline size_t ExtractBatchSize(const IndexOptions& options, bool offline) {
  if (options.extract_batch_size > 0) return options.extract_batch_size;
  return offline ? kOfflineExtractBatch : kModelExtractBatch;
}

// IndexOptions::interrupt, polled between batches: OK when unset.
inline Status PollInterrupt(const IndexOptions& options) {
  return options.interrupt ? options.interrupt() : Status::Ok();
}

}  // namespace flowrag

#endif  // FLOWRAG_INDEXING_INDEX_CONTEXT_H_
