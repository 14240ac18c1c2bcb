#include <memory>
#include <string>

#include "vector/flat_index.h"
#include "vector/hnsw_index.h"
#include "vector/sparse_index.h"
#include "vector/vector_index.h"

namespace flowrag {

bool ChoosesHnsw(const VectorIndexOptions& options, size_t expected_size) {
  return options.kind == "hnsw" || (options.kind == "auto" && !options.sparse_queries &&
                                    expected_size >= options.hnsw_threshold);
}

bool ChoosesInt8Columns(const VectorIndexOptions& options, size_t expected_size) {
  return options.kind == "flat-int8" || (options.kind == "auto" && options.sparse_queries &&
                                         expected_size >= options.hnsw_threshold);
}

Result<std::unique_ptr<VectorIndex>> MakeVectorIndex(size_t dim, size_t expected_size,
                                                     const VectorIndexOptions& options) {
  if (dim == 0) return Status::InvalidArgument("vector index: dim must be > 0");
  bool hnsw;
  if (options.kind == "sparse") {
    return std::unique_ptr<VectorIndex>(std::make_unique<SparseIndex>(dim));
  } else if (options.kind == "flat" || options.kind == "flat-int8") {
    hnsw = false;
  } else if (options.kind == "hnsw" || options.kind == "auto") {
    hnsw = ChoosesHnsw(options, expected_size);
  } else {
    return Status::InvalidArgument(
        "vector index kind: expected \"auto\", \"flat\", \"flat-int8\", \"hnsw\" or "
        "\"sparse\", got \"" + options.kind + "\"");
  }
  if (!hnsw) {
    const auto columns = ChoosesInt8Columns(options, expected_size) ? FlatIndex::ColumnCopy::kInt8
                                                                    : FlatIndex::ColumnCopy::kFloat;
    return std::unique_ptr<VectorIndex>(std::make_unique<FlatIndex>(dim, expected_size, columns));
  }
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<HnswIndex> index,
                           HnswIndex::Create(dim, expected_size, options));
  return std::unique_ptr<VectorIndex>(std::move(index));
}

}  // namespace flowrag
