// HnswIndex: approximate maximum-inner-product search on an HNSW graph
// (Malkov & Yashunin, 2018) built by hnswlib 0.6.2 (Debian libhnswlib-dev).
//
// Construction is hnswlib's own: HierarchicalNSW::addPoint, one vector at a
// time in id order (label i = internal id i), level draws from hnswlib's
// generator seeded with VectorIndexOptions::seed. The metric is a space with
// distance = -<a, b> computed by flowrag's dispatched DotProduct (AVX-512 /
// AVX2); it orders neighbours exactly like hnswlib's InnerProductSpace
// (1 - <a, b>) but avoids its rounding near 1 and, unlike the header-only
// space, uses the wide SIMD units in a portable build. Scores are therefore
// plain inner products, with no 1 - d conversion.
//
// Search does NOT call hnswlib's searchKnn. In 0.6.2 `ef` is a member set by
// setEf() (global to the index, not synchronised) and there is no filter
// functor (BaseFilterFunctor arrived in 0.7). Taking a mutex around
// setEf+searchKnn would serialise all queries, and post-filtering needs retry
// loops with no guarantee. Instead this class runs its own query over the
// hnswlib graph, which it only reads:
//   1. greedy descent from the entry point through levels max..1 (as hnswlib);
//   2. a best-first beam search on level 0 with ef = max(params.ef_search, k)
//      taken from the call, not from the index;
//   3. with a filter, rejected nodes are still expanded (they keep the graph
//      connected) but never enter the result beam, which stops only once it
//      holds ef accepted nodes and no candidate can improve it (the approach
//      of hnswlib >= 0.7's filtered search). The filter is called at most once
//      per visited node. A very selective filter (fewer than ef ids pass)
//      degrades gracefully into a walk over the whole reachable graph, which
//      then returns the exact filtered top-k: O(n·(d + M)) at worst, no
//      retry loop and no over-fetch factor to tune.
// Neighbour scores are computed four at a time with the gathered SIMD kernel.
// Results: at most k hits, score desc then id asc. Without a filter the hits
// equal hnswlib's searchKnn at the same ef (tests check this).
//
// Costs: Add O(ef_construction · M · d · log n) per vector; Search roughly
// O(ef · M · d · log n); memory 4·n·d + ~8·M·n bytes.
//
// Thread-safety: Add(), Load() and the hnswlib reference search need
// exclusive access. Search() and Save() are const and may run concurrently
// with each other; each Search takes a visited-set from hnswlib's
// mutex-guarded pool. The filter must not throw.
//
// Determinism: for a fixed seed, dimension, options and the same sequence of
// vectors (in any batch split), the graph, Save() bytes and every search
// result are identical run to run for the same build and CPU SIMD level
// (the level changes float rounding, hence possibly the graph). Save()
// records the level generator's state, so Load() followed by Add() continues
// exactly as if the index had never been saved.
//
// Serialised format, version 1 (little-endian; a 64-bit checksum guards it):
//   8   magic "FLOWHNSW"
//   u32 format version (1)          u32 dim
//   u64 count                       u64 M
//   u64 ef_construction             u64 seed
//   i32 max level (-1 when empty)   u32 entry point (0xFFFFFFFF when empty)
//   u32 n, then n bytes: level generator state (text form of hnswlib's
//                        std::default_random_engine, libstdc++ minstd_rand0)
//   count × dim f32                 vectors, id order
//   count × i32                     level of each vector
//   per vector, per level 0..level: u32 degree, then degree × u32 neighbour ids
//   u64 checksum of every preceding byte
// Load() rejects a wrong magic, an unknown version, a checksum mismatch, a
// truncated buffer and any structurally impossible graph (neighbour id out of
// range, degree above M·2 on level 0 or M above, link to a node that does not
// reach that level, bad entry point) with Status::Corruption.
//
// Arrays out and back (a snapshot segment, graph/snapshot_segment.h): the
// same graph as flat arrays (ExportArrays; layout in hnsw_index.cc:
// parameters, level generator state, count × dim f32 vectors, a u8 level
// per vector, level-0 lists at a fixed stride of 2M + 1 u32 (degree, then
// the slots), upper-level lists as CSR). AdoptArrays checks them as Load
// checks its buffer and returns an HnswArraysIndex that searches the
// source's memory in place: ONE search implementation (a greedy descent and
// beam search templated on a graph view) runs over hnswlib's memory for
// HnswIndex and over the arrays for HnswArraysIndex, so both answer hit for
// hit, score for score. Opening a 100,000-passage store no longer copies
// its graph into hnswlib (a writer converts the adopted index, ToHnswIndex).
#ifndef FLOWRAG_VECTOR_HNSW_INDEX_H_
#define FLOWRAG_VECTOR_HNSW_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/array_io.h"
#include "vector/vector_index.h"

namespace flowrag {

class HnswArraysIndex;

class HnswIndex final : public VectorIndex {
 public:
  static constexpr uint32_t kFormatVersion = 1;

  // An empty index. Uses options.hnsw_m (2..10000), options.hnsw_ef_construction
  // (>= 1) and options.seed; `expected_size` pre-sizes hnswlib's arrays (it
  // grows past it by doubling). InvalidArgument on dim == 0 or a bad option.
  static Result<std::unique_ptr<HnswIndex>> Create(size_t dim, size_t expected_size,
                                                   const VectorIndexOptions& options);

  // Rebuilds an index from Save() output (format above). The buffer is only
  // read during the call. Corruption on any malformed buffer.
  static Result<std::unique_ptr<HnswIndex>> Load(std::string_view buffer);

  ~HnswIndex() override;
  HnswIndex(const HnswIndex&) = delete;
  HnswIndex& operator=(const HnswIndex&) = delete;

  std::string Kind() const override { return "hnsw"; }
  size_t Dimension() const override { return dim_; }
  size_t Size() const override;
  // Vectors plus level-0 links (2·M per node) and a share for upper levels.
  size_t MemoryBytes() const override { return Size() * (dim_ * 4 + (2 * m_ + 2) * 4 + 16); }

  // Appends rows (ids Size() .. Size()+rows.rows-1). Invalid input (wrong
  // column count, short data, non-finite value) is rejected before anything
  // is added. If hnswlib fails mid-batch (out of memory) the rows before the
  // failing one stay added and Internal is returned.
  Status Add(const FloatMatrix& rows) override;

  // REQUIRES: `query` points at Dimension() floats. `stats` may be null; its
  // candidates_scored is incremented by the inner products computed.
  std::vector<VectorHit> Search(const float* query, const VectorSearchParams& params,
                                VectorSearchStats* stats) const override;

  // The stored vector of `id`: the index keeps its own copy of every vector
  // it was given (FloatMatrix rows, bit for bit), so a caller needs no other
  // copy to read them back (Snapshot: abstractness, Append, Remove).
  // REQUIRES: id < Size(). The pointer is valid until the next Add() (which
  // may reallocate) or the index's destruction. O(1).
  const float* Vector(uint32_t id) const;

  // Replaces *buffer with the serialised index. O(n·(d + M)); the buffer
  // holds the whole index (4·n·d bytes and the links).
  Status Save(std::string* buffer) const;

  size_t m() const { return m_; }
  size_t ef_construction() const { return ef_construction_; }
  uint64_t seed() const { return seed_; }

  // Hands the graph to `sink` as the arrays above ("Arrays out and back"),
  // names "<prefix>.h*" (`prefix` at most 23 bytes, else InvalidArgument).
  // O(n·(d + M)): hnswlib interleaves vectors and links, so both are copied
  // into contiguous temporaries first (4·n·d + 4·n·(2M + 1) bytes).
  Status ExportArrays(ArraySink& sink, std::string_view prefix) const;
  // True when `source` holds "<prefix>.hparams" (an HNSW index was exported).
  static bool HasArrays(const ArraySource& source, std::string_view prefix);
  // The index of those arrays, searched in place (HnswArraysIndex). Checks
  // every array before use, Corruption naming it: the parameters (as Load:
  // dim, M, efConstruction), each array's length, every level (0..64, the
  // maximum equal to the stored max level), the entry point (a vector on
  // the top level), every list's degree (<= 2M on level 0, <= M above),
  // the CSR offsets, and every neighbour id (another vector that reaches
  // that level). A missing array: the source's NotFound. O(n·M) for the
  // links; the vectors are not read (non-finite stored values answer as
  // they are).
  static Result<std::unique_ptr<HnswArraysIndex>> AdoptArrays(const ArraySource& source,
                                                              std::string_view prefix);

  // hnswlib's own searchKnn at `ef` (setEf + searchKnn), an independent
  // reference for tests. Not thread-safe: it changes the index-wide ef.
  std::vector<VectorHit> SearchWithHnswlibForTesting(const float* query, size_t k, size_t ef);

 private:
  struct Graph;  // hnswlib's HierarchicalNSW and its space; hnsw_index.cc only

  HnswIndex(size_t dim, size_t m, size_t ef_construction, uint64_t seed);

  size_t dim_;
  size_t m_;
  size_t ef_construction_;
  uint64_t seed_;
  std::unique_ptr<Graph> graph_;
};

// An HNSW index adopted from an ArraySource (HnswIndex::AdoptArrays): the
// same graph, searched in place over the source's arrays (a mapped snapshot
// segment's pages, shared between processes) by the same code as
// HnswIndex::Search, hit for hit and score for score. Read-only: Add() is
// FailedPrecondition; a writer converts it first (ToHnswIndex).
//
// Private memory: hnswlib's visited lists (2 bytes per vector per
// concurrent query) and nothing per vector.
//
// Thread-safety: every method is const apart from Add (which changes
// nothing); Search may run concurrently.
class HnswArraysIndex final : public VectorIndex {
 public:
  ~HnswArraysIndex() override;
  HnswArraysIndex(const HnswArraysIndex&) = delete;
  HnswArraysIndex& operator=(const HnswArraysIndex&) = delete;

  std::string Kind() const override { return "hnsw"; }
  size_t Dimension() const override { return dim_; }
  size_t Size() const override { return size_; }
  // The adopted arrays' bytes (the source's, not private memory).
  size_t MemoryBytes() const override;
  Status Add(const FloatMatrix& rows) override;
  // As HnswIndex::Search. REQUIRES: `query` points at Dimension() floats.
  std::vector<VectorHit> Search(const float* query, const VectorSearchParams& params,
                                VectorSearchStats* stats) const override;

  // The stored vector of `id`, in place. REQUIRES: id < Size(). O(1).
  const float* Vector(uint32_t id) const;
  size_t m() const { return m_; }
  size_t ef_construction() const { return ef_construction_; }
  uint64_t seed() const { return seed_; }

  // The arrays again (borrowed ones written as they are): what
  // HnswIndex::ExportArrays of the exported index wrote.
  Status ExportArrays(ArraySink& sink, std::string_view prefix) const;
  // An hnswlib-backed copy (through the Save format and Load, so with the
  // level generator's state: Add() continues as on the exported index).
  // For write paths only: O(n·(d + M)) time, the index's size in private
  // memory plus a transient buffer of it.
  Result<std::unique_ptr<HnswIndex>> ToHnswIndex() const;

  struct Arrays;  // hnsw_index.cc only

 private:
  friend class HnswIndex;
  HnswArraysIndex(size_t dim, size_t size, size_t m, size_t ef_construction, uint64_t seed,
                  std::unique_ptr<Arrays> arrays);

  size_t dim_;
  size_t size_;
  size_t m_;
  size_t ef_construction_;
  uint64_t seed_;
  std::unique_ptr<Arrays> arrays_;
};

}  // namespace flowrag

#endif  // FLOWRAG_VECTOR_HNSW_INDEX_H_
