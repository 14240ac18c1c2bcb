// CachedEmbedder: an Embedder that keeps the vectors of a remote model in a
// flowrag store's embedding cache (table `embeddings`, keyed by the model id
// and Hash64 of the text), so the node texts of a schema graph are embedded
// once, not on every open. Texts whose vector is cached are not sent; the
// others go to the inner embedder in one call and are stored afterwards.
// Local embedders (IsLocal) need no cache: use them directly.
//
// Thread-safety: as the inner embedder and the cache (a store serialises).
#ifndef FLOWRAG_SQL_CACHED_EMBEDDER_H_
#define FLOWRAG_SQL_CACHED_EMBEDDER_H_

#include <memory>
#include <string>

#include "embed/embedder.h"
#include "storage/store.h"

namespace flowrag {

class CachedEmbedder final : public Embedder {
 public:
  // `store` (a store's embedding cache) is not owned and must outlive this
  // embedder.
  CachedEmbedder(std::shared_ptr<Embedder> inner, EmbeddingCache* store)
      : inner_(std::move(inner)), store_(store) {}

  std::string ModelId() const override { return inner_->ModelId(); }
  size_t Dimension() const override { return inner_->Dimension(); }
  bool IsLocal() const override { return inner_->IsLocal(); }
  bool SparseQueries() const override { return inner_->SparseQueries(); }
  Result<FloatMatrix> Embed(std::span<const std::string> texts) override;

  size_t cache_hits() const { return hits_; }

 private:
  std::shared_ptr<Embedder> inner_;
  EmbeddingCache* store_;
  size_t hits_ = 0;
};

}  // namespace flowrag

#endif  // FLOWRAG_SQL_CACHED_EMBEDDER_H_
