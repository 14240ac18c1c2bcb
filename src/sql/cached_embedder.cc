#include "sql/cached_embedder.h"

#include <algorithm>
#include <vector>

#include "common/hash.h"

namespace flowrag {

Result<FloatMatrix> CachedEmbedder::Embed(std::span<const std::string> texts) {
  std::vector<uint64_t> hashes;
  hashes.reserve(texts.size());
  for (const std::string& t : texts) hashes.push_back(Hash64(t));
  const std::string model = inner_->ModelId();
  std::vector<bool> found(texts.size(), false);
  FloatMatrix out;
  size_t dim = inner_->Dimension();  // a remote model learns it from its first answer
  if (dim == 0) {
    FLOWRAG_ASSIGN_OR_RETURN(dim, store_->EmbeddingDimension(model));
  }
  if (dim > 0) {
    FLOWRAG_ASSIGN_OR_RETURN(out, store_->GetEmbeddings(model, hashes, dim, &found));
  }
  std::vector<std::string> missing;
  std::vector<size_t> where;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (!found[i]) {
      missing.push_back(texts[i]);
      where.push_back(i);
    }
  }
  hits_ += texts.size() - missing.size();
  if (missing.empty()) return out;
  FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix fresh, inner_->Embed(missing));
  if (out.cols != fresh.cols) out = FloatMatrix(texts.size(), fresh.cols);  // dimension learnt now
  std::vector<uint64_t> fresh_hashes;
  for (size_t k = 0; k < where.size(); ++k) {
    std::copy(fresh.row(k), fresh.row(k) + fresh.cols, out.row(where[k]));
    fresh_hashes.push_back(hashes[where[k]]);
  }
  FLOWRAG_RETURN_IF_ERROR(store_->PutEmbeddings(model, fresh_hashes, fresh));
  return out;
}

}  // namespace flowrag
