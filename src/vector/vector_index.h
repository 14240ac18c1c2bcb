// VectorIndex: maximum-inner-product search over L2-normalised vectors (so the
// score is the cosine similarity).
//
// Two implementations behind this interface, chosen by MakeVectorIndex():
//  - FlatIndex (vector/flat_index.h): exact; one contiguous float matrix and
//    vectorised dot products. O(n·d) per query.
//  - HnswIndex (vector/hnsw_index.h): approximate, hnswlib graph;
//    O(log n · ef · d) per query, for large collections.
//
// Ids are dense: the i-th vector added gets id i.
// Thread-safety: Add() needs exclusive access; Search() is const and may run
// concurrently with other Search() calls.
#ifndef FLOWRAG_VECTOR_VECTOR_INDEX_H_
#define FLOWRAG_VECTOR_VECTOR_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/matrix.h"
#include "flowrag/status.h"

namespace flowrag {

struct VectorHit {
  uint32_t id = 0;
  float score = 0.0f;  // inner product
};

struct VectorSearchParams {
  size_t k = 10;
  // HNSW breadth of search (hnswlib `ef`); raised to k when smaller.
  size_t ef_search = 128;
  // A FlatIndex with int8 columns: candidates rescored per hit of a sparse
  // query (0: FlatIndex::kDefaultRescoreFactor), and the share of the
  // query's mass (Σ|q_d|) whose columns the candidate scan reads, largest
  // |q_d| first (0: FlatIndex::kDefaultScanMass; 1: every non-zero; the
  // rescoring reads them all).
  size_t rescore = 0;
  float scan_mass = 0.0f;
  // A FlatIndex with int8 columns: false returns the candidates' scores
  // from the codes instead (over every non-zero of the query: <q, x̂> with
  // x̂ the dequantized vector, error at most (s/2)·‖q‖₁,
  // vector/quantized.h), reading no float row. For a
  // caller that needs many scores and not their last digits (a graph
  // method's dense prior reads 128); other kinds ignore it.
  bool exact_scores = true;
  // When set, only ids for which it returns true are eligible.
  std::function<bool(uint32_t)> filter;
  // Hits scoring below this are not returned (so fewer than k may come back).
  float min_score = -std::numeric_limits<float>::infinity();
};

struct VectorSearchStats {
  size_t candidates_scored = 0;  // distance computations made
};

class VectorIndex {
 public:
  virtual ~VectorIndex() = default;
  virtual std::string Kind() const = 0;  // "flat", "flat-int8", "hnsw", "sparse"
  virtual size_t Dimension() const = 0;
  virtual size_t Size() const = 0;
  // Approximate bytes held by the index.
  virtual size_t MemoryBytes() const = 0;

  // Appends rows; rows.cols must equal Dimension().
  virtual Status Add(const FloatMatrix& rows) = 0;

  // Top-k ids by descending score (ties by ascending id), at most k.
  // REQUIRES: `query` points at Dimension() floats; a query with a NaN or
  // infinite component matches nothing. When `stats` is non-null
  // its counters are incremented (not reset), so one struct can sum a batch.
  virtual std::vector<VectorHit> Search(const float* query, const VectorSearchParams& params,
                                        VectorSearchStats* stats) const = 0;
};

struct VectorIndexOptions {
  // Collections with fewer vectors than this use exact search.
  size_t hnsw_threshold = 20000;
  // hnswlib parameters (M and efConstruction of the HNSW paper).
  size_t hnsw_m = 16;
  size_t hnsw_ef_construction = 200;
  uint64_t seed = 42;
  // A snapshot's HNSW index edited by inserts and deletes (LayeredIndex:
  // appended rows searched exactly, deleted rows skipped) is built again
  // from its vectors once more than this many rows were appended, or more
  // than max(this, size / 8) rows appended and deleted together
  // (graph/snapshot.cc FoldedWhenEdited): the appended rows cost an exact
  // scan per query, the deleted ones a longer walk.
  size_t hnsw_fold_rows = 1024;
  // "auto" (by threshold), "flat", "flat-int8" (a FlatIndex with an int8
  // column copy, vector/flat_index.h), "hnsw" or "sparse"
  // (vector/sparse_index.h).
  std::string kind = "auto";
  // The queries are sparse (the built-in hashed embedder's: 10-15% of the
  // dimensions non-zero): "auto" then chooses "flat-int8" instead of "hnsw"
  // at hnsw_threshold vectors and more (flat_index.h says why and what it
  // measured). False for a dense embedder's queries.
  bool sparse_queries = false;
};

// Creates an empty index for `expected_size` vectors of `dim` dimensions:
// kind "flat" → FlatIndex, "flat-int8" → FlatIndex with int8 columns, "hnsw"
// → HnswIndex, "auto" → FlatIndex when expected_size < hnsw_threshold, else
// a FlatIndex with int8 columns for sparse_queries and HnswIndex otherwise
// (the choice is made once; an auto flat index does not switch kinds as it
// grows). InvalidArgument when dim == 0, the kind is unknown, or an HNSW
// option is out of range.
Result<std::unique_ptr<VectorIndex>> MakeVectorIndex(size_t dim, size_t expected_size,
                                                     const VectorIndexOptions& options);

// True when MakeVectorIndex(dim, expected_size, options) creates an HnswIndex
// (kind "hnsw", or "auto" at expected_size >= hnsw_threshold): how a caller
// knows which kind of persisted index to look for before building one.
bool ChoosesHnsw(const VectorIndexOptions& options, size_t expected_size);
// True when it creates a FlatIndex with int8 columns.
bool ChoosesInt8Columns(const VectorIndexOptions& options, size_t expected_size);

// Dot product of two float arrays, vectorised (AVX2/AVX-512 when the CPU has them).
float DotProduct(const float* a, const float* b, size_t n);

}  // namespace flowrag

#endif  // FLOWRAG_VECTOR_VECTOR_INDEX_H_
