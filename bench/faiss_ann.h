// Faiss indexes over a store's passage vectors, for bench/vector_quantization
// (issue 34: "Measure hnswlib against Faiss ... on recall@10 against exact
// search, latency, memory, build time, and whether a delete needs a
// rebuild"). Built only when CMake finds Faiss (Debian libfaiss-dev, with
// OpenBLAS for its k-means and assignment); nothing in the engine links it.
//
// An index is made by Faiss's index factory with inner-product metric (the
// vectors are unit length, as flowrag scores them), trained on an evenly
// spaced sample of at most `train_rows` rows, filled with every row, and
// searched single-threaded at one setting per call: nprobe for an IVF index,
// efSearch for an HNSW one.
#ifndef FLOWRAG_BENCH_FAISS_ANN_H_
#define FLOWRAG_BENCH_FAISS_ANN_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common/matrix.h"
#include "vector/vector_index.h"

namespace flowrag::bench {

class FaissAnn {
 public:
  // `factory`: a Faiss index factory string ("IVF1024,SQ8", "HNSW32,SQ8",
  // "IVF1024,Flat"). Null with *error set when Faiss refuses it. Builds with
  // every core (OpenMP), as Faiss does by default.
  static std::unique_ptr<FaissAnn> Build(const FloatMatrix& data, const std::string& factory,
                                         size_t train_rows, std::string* error);
  ~FaissAnn();

  // The best k ids (score desc) with `setting` probes (IVF) or efSearch
  // (HNSW), on the calling thread only. Not thread-safe: the setting is
  // written into the index.
  std::vector<VectorHit> Search(const float* query, size_t k, size_t setting) const;

  // "nprobe" or "efSearch".
  const char* setting_name() const;
  double build_seconds() const { return build_seconds_; }
  // The serialised index (write_index), a measure of what it holds.
  size_t bytes() const { return bytes_; }
  // True when the index removes ids in place (IVF: remove_ids), false when
  // a delete needs a rebuild (HNSW).
  bool removes_in_place() const;

 private:
  struct Impl;
  explicit FaissAnn(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  double build_seconds_ = 0;
  size_t bytes_ = 0;
};

}  // namespace flowrag::bench

#endif  // FLOWRAG_BENCH_FAISS_ANN_H_
