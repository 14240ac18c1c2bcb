#include "indexing/embed_phase.h"

#include <unordered_map>

#include "common/progress.h"

namespace flowrag {

Status EmbedMissingPassages(IndexContext& ctx, Embedder& embedder) {
  EmbeddingCache& cache = ctx.stores.embeddings;
  const std::string model = embedder.ModelId();
  FLOWRAG_ASSIGN_OR_RETURN(int64_t missing, cache.CountPassagesMissingEmbeddings(model));
  Progress progress("embed", "passages", static_cast<uint64_t>(missing), ctx.options.progress);
  // Every passage up to the last one of a batch has a vector once the batch
  // is stored: the next batch starts after it. The first starts after the
  // store's embed watermark (the passages a finished phase embedded).
  int64_t after = 0;
  while (true) {
    FLOWRAG_RETURN_IF_ERROR(PollInterrupt(ctx.options));
    FLOWRAG_ASSIGN_OR_RETURN(
        auto todo, cache.PassagesMissingEmbeddings(model, ctx.options.embed_batch_size, after));
    if (todo.empty()) break;
    after = todo.back().passage_id;
    std::vector<std::string> texts;
    std::vector<uint64_t> hashes;
    std::unordered_map<uint64_t, size_t> seen;
    for (auto& p : todo) {
      if (seen.emplace(p.embed_hash, texts.size()).second) {
        texts.push_back(std::move(p.text));
        hashes.push_back(p.embed_hash);
      }
    }
    FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix vectors, embedder.Embed(texts));
    FLOWRAG_RETURN_IF_ERROR(cache.PutEmbeddings(model, hashes, vectors));
    ctx.report.passages_embedded += texts.size();
    ctx.run.passages_embedded = ctx.report.passages_embedded;
    progress.Advance(todo.size());
  }
  progress.Finish();
  // The writer lock is held: no passage was added since the last empty batch.
  return cache.MarkAllPassagesEmbedded(model);
}

}  // namespace flowrag
