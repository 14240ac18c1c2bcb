// Ingest, the first phase of an index run (index_context.h): documents in,
// passages stored. Each document is hashed (title, text and the chunking
// signature); a document stored with that hash is skipped, any other is
// chunked and written, IndexOptions::batch_size documents per transaction.
// A crash leaves whole batches, which a rerun skips by their hash.
#ifndef FLOWRAG_INDEXING_INGEST_PHASE_H_
#define FLOWRAG_INDEXING_INGEST_PHASE_H_

#include <functional>
#include <vector>

#include "indexing/index_context.h"
#include "ingest/loaders.h"

namespace flowrag {

// A source of documents hands each one to the sink (ingest/loaders.h); the
// sink's error stops it.
using DocumentProducer = std::function<Status(const DocumentSink&)>;

// Stores every document `produce` hands over (above). Counts go to
// ctx.report and ctx.run; IndexOptions::interrupt is polled every 64
// documents. Errors: the producer's, the store's, the interrupt's.
Status IngestDocuments(IndexContext& ctx, const DocumentProducer& produce);

// Writes `batch` in one transaction (DocumentStore::WriteDocuments), adds
// its counts to ctx.report, writes them to the journal row and clears the
// batch; then calls IndexOptions::after_batch. Nothing for an empty batch.
Status CommitDocumentBatch(IndexContext& ctx, std::vector<DocumentWrite>* batch);

}  // namespace flowrag

#endif  // FLOWRAG_INDEXING_INGEST_PHASE_H_
