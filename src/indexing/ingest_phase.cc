#include "indexing/ingest_phase.h"

#include "common/hash.h"
#include "common/progress.h"
#include "ingest/chunker.h"

namespace flowrag {
namespace {

uint64_t ContentHash(const RawDocument& doc, const std::string& chunking) {
  uint64_t h = Hash64(doc.title, 1);
  h = HashCombine(h, Hash64(doc.text, 2));
  return HashCombine(h, Hash64(chunking, 3));
}

DocumentWrite Chunked(RawDocument&& doc, uint64_t hash, const std::string& chunking,
                      const ChunkOptions& options) {
  DocumentWrite w;
  w.content_hash = hash;
  w.chunking = chunking;
  for (const Chunk& c : ChunkText(doc.text, options)) {
    PassageWrite p;
    p.ordinal = c.index;
    p.begin = c.begin;
    p.end = c.end;
    p.embed_hash = Hash64(PassageEmbedText(doc.title, c.text));
    w.passages.push_back(p);
  }
  w.doc = std::move(doc);
  return w;
}

}  // namespace

Status CommitDocumentBatch(IndexContext& ctx, std::vector<DocumentWrite>* batch) {
  if (batch->empty()) return Status::Ok();
  FLOWRAG_ASSIGN_OR_RETURN(BatchWriteReport r, ctx.stores.documents.WriteDocuments(*batch));
  batch->clear();
  IndexReport& report = ctx.report;
  report.documents_added += r.documents_added;
  report.documents_replaced += r.documents_replaced;
  report.documents_unchanged += r.documents_unchanged;
  report.passages_added += r.passages_added;
  ++report.batches_committed;
  ctx.run.documents_added = report.documents_added;
  ctx.run.documents_replaced = report.documents_replaced;
  ctx.run.documents_unchanged = report.documents_unchanged;
  ctx.run.passages_added = report.passages_added;
  ctx.run.batches_committed = report.batches_committed;
  FLOWRAG_RETURN_IF_ERROR(ctx.stores.journal.UpdateIndexRun(ctx.run));
  if (ctx.options.after_batch) return ctx.options.after_batch(report.batches_committed);
  return Status::Ok();
}

Status IngestDocuments(IndexContext& ctx, const DocumentProducer& produce) {
  const std::string chunking = ctx.options.chunking.Signature();
  IndexReport& report = ctx.report;
  Progress progress("ingest", "documents", 0, ctx.options.progress);
  std::vector<DocumentWrite> batch;
  auto flush = [&]() -> Status {
    progress.Advance(batch.size());
    return CommitDocumentBatch(ctx, &batch);
  };
  FLOWRAG_RETURN_IF_ERROR(produce([&](RawDocument&& doc) -> Status {
    if (report.documents_seen % 64 == 0) FLOWRAG_RETURN_IF_ERROR(PollInterrupt(ctx.options));
    ++report.documents_seen;
    const uint64_t hash = ContentHash(doc, chunking);
    FLOWRAG_ASSIGN_OR_RETURN(auto stored, ctx.stores.documents.DocumentHash(doc.external_id));
    if (stored && *stored == hash) {  // unchanged: nothing to redo
      ++report.documents_unchanged;
      ctx.run.documents_unchanged = report.documents_unchanged;
      progress.Advance(1);
      return Status::Ok();
    }
    batch.push_back(Chunked(std::move(doc), hash, chunking, ctx.options.chunking));
    if (batch.size() >= ctx.options.batch_size) return flush();
    return Status::Ok();
  }));
  FLOWRAG_RETURN_IF_ERROR(flush());
  progress.Finish();
  return Status::Ok();
}

}  // namespace flowrag
