// FlatIndex: exact maximum-inner-product search by scanning every vector.
//
// Storage: one contiguous row-major float matrix (row i at i·dim): a
// FloatMatrix grown by Add() or taken over whole by FromMatrix() (no copy,
// so a snapshot's passage vectors exist once), or, for an index adopted from
// an ArraySource (AdoptArrays: a snapshot segment), the source's bytes
// borrowed in place. Memory: 4·n·d bytes. An int8 column copy (below) keeps
// its rows packed instead (vector/packed_rows.h: each in the smallest form
// that holds it exactly, ~1 KiB for a store's built-in passage vector).
//
// Search: the query is scored against blocks of 256 rows with the batched
// SIMD kernel (vector/dot_product.h: four rows per pass, AVX-512 or AVX2 when
// the CPU has them) and a bounded heap keeps the best k. Scores are exact
// float inner products; ties are broken by ascending id, so the result is the
// first k of all (score desc, id asc) pairs. O(n·d + n·log k) time, O(k) extra
// memory. With a filter, the filter is called once per id in ascending order
// and only accepted rows are scored (stats->candidates_scored counts them).
//
// Sparse queries: the index also keeps a dimension-major copy of the matrix
// (column d holds coordinate d of every vector). A query with at most
// dim/kSparseFraction non-zero coordinates (the built-in hashed embedder's
// short queries touch ~15% of dimensions) is scored as Σ_d q_d·column_d over
// its non-zeros only: O(nnz·n) instead of O(d·n), same top-k rules. Its
// scores equal the dense ones up to float summation order. Memory: 8·n·d
// bytes in all.
//
// An int8 column copy instead (ColumnCopy::kInt8, kind "flat-int8"; what a
// snapshot's passage index above VectorIndexOptions::hnsw_threshold rows is
// for an embedder with sparse queries): column d holds coordinate d of every
// vector as an int8 code with one scale per vector (vector/quantized.h,
// kInt8PerVector), 1·d + 4 bytes per vector instead of 4·d. A sparse query
// sums q_d·code over the columns of its largest coordinates, up to a share
// m of its mass Σ|q_d|, in blocks of rows (the partial sums stay in the L1
// cache), keeps the best k·r rows by those approximate scores, and rescores
// them exactly from the rows over every coordinate (the gather kernel of
// the filtered scan; r and m are VectorSearchParams::rescore and
// scan_mass, by default kDefaultRescoreFactor and kDefaultScanMass). With
// m = 1 the result is exact search's whenever the true top k are among the
// candidates: a code's error is at most s/2 per coordinate, so |<q,x> -
// <q,x̂>| <= (s/2)·‖q‖₁; m < 1 adds the skipped coordinates' share to that
// error and reads fewer columns. Dense queries and ScoreAll read the rows
// exactly, as the float kind does. A search with
// VectorSearchParams::exact_scores false reads no row: each candidate is
// scored from its codes over every non-zero of the query (Int8Score, the
// skipped columns too), and the best k by <q, x̂> (x̂ the dequantized
// vector) come back with those scores.
//
// The defaults, measured (bench/vector_quantization --ann-only; recall@10
// against float exact search over the same vectors, tie-aware recall
// equal; time per search, single-threaded): on the four passage
// benchmarks forced to this index (`--int8`), every r >= 2 and m >= 0.8
// gives recall 1.000 and the same dense and hybrid R@2/R@5 as float
// search. On the synthetic 10^5 and 10^6 stores, with their questions (~120
// non-zeros) and with 200 passage titles as queries (~35):
//   r, m        10^6 questions      10^5 titles
//   2, 1.0      1.000, 24.8 ms      1.000, 0.77 ms
//   2, 0.9      0.999, 15.9 ms      0.979
//   4, 0.9      1.000, 13.3 ms      0.997, 0.70 ms
//   8, 0.9      1.000, 12.0 ms      0.999
//   4, 0.8      0.994,  8.8 ms      0.953
// (float exact search 45-51 ms at 10^6.) r = 4, m = 0.9 halves the scan at
// no measured loss; m = 0.8 loses on short queries. The scan adds its
// columns to 32 rows at a time held in registers (AxpyInt8Columns): the
// dense method's p50 at 10^6, 200 questions, 12.1 and 8.3 ms against 16.6
// and 11.4 ms one column at a time (two alternating runs, doc/scale.md);
// since stop 53 in groups of 8 columns over blocks of 16,384 rows, which
// the prefetcher follows: 3.9-4.1 ms against 6.5-7.8 ms (beside an index
// run; quantized.cc kColumnGroup).
// Why not HNSW for these vectors: the built-in embedder's passage vectors
// fill ~40% of their dimensions and crowd together (they share the corpus'
// frequent words), and hnswlib's recall@10 against exact search fell to
// 0.58 at 10^5 and 0.17 at 10^6 (ef 128) while its build took most of the
// index run; Faiss's IVF-SQ8 (bench/out/vector_quantization.md, 10^6:
// IVF1024 0.25 at nprobe 16 in 24.9 ms, 0.70 at 256 in 373 ms; IVF4096
// 0.46 at 256) fares no better, for the same reason; this scan needs no
// build beyond the transpose, and a delete or insert needs no rebuild.
//
// The rows of an int8 copy are packed (PackedRows, stop 55): a store's
// vectors are float16 values, so each row takes its sparse float16 form
// (~1 KiB at 34-47% non-zeros, d = 1,024) instead of 4 KiB of floats, and
// decodes to the same floats: rescoring gives the same scores, bit for bit
// (each candidate decoded into a scratch row, then the gather kernel). At
// 10^6 passages the segment holds 3 GiB less (doc/scale.md).
//
// Arrays out and back: ExportArrays writes the rows and the column copy
// both, and AdoptArrays borrows both, so adoption transposes nothing and
// holds no private memory: the pages are the source's (a mapped segment's,
// shared between processes and evictable). Rebuilding the columns at
// adoption instead would halve the file (4·d bytes less per vector) but
// cost a transpose into 4·n·d bytes of private memory per process at every
// open. Measured (d = 1024, clustered unit vectors of
// bench/synthetic_vectors.h, a segment file through SegmentArraySource,
// which checksums each section whole at its first Get; median of 3, page
// cache warm / this file evicted first):
//   n        both borrowed            rows + columns rebuilt
//   6,119    11 / 74 ms, 0 MiB anon   52 / 64 ms, 24 MiB anon
//   10^5     188 / 829 ms, 0 MiB anon 646 / 1128 ms, 391 MiB anon
// (RSS after adoption equal: 48 / 782 MiB, all file pages when both are
// borrowed). An int8 index is now adopted that way (AdoptArrays below: its
// rows and codes verified by the blocks a query reads), so adopting it
// reads nothing of them, a sparse query touches only its columns and the
// rows it rescores (at 10^6, 4.9 GB not read at open, doc/scale.md).
//
// Thread-safety: Add() needs exclusive access; Search() is const and may run
// concurrently with other Search() calls. The filter must be safe to call from
// the searching thread and must not throw.
#ifndef FLOWRAG_VECTOR_FLAT_INDEX_H_
#define FLOWRAG_VECTOR_FLAT_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/array_io.h"
#include "common/flat_array.h"
#include "vector/packed_rows.h"
#include "vector/vector_index.h"

namespace flowrag {

namespace vector_internal {
// Minimal allocator giving 64-byte (cache line, AVX-512 register) alignment.
template <typename T>
struct CacheAlignedAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheAlignedAllocator() = default;
  template <typename U>
  CacheAlignedAllocator(const CacheAlignedAllocator<U>&) {}  // NOLINT: allocator rebind
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, size_t) { ::operator delete(p, kAlign); }
  template <typename U>
  bool operator==(const CacheAlignedAllocator<U>&) const {
    return true;
  }
};
}  // namespace vector_internal

class FlatIndex final : public VectorIndex {
 public:
  // The dimension-major copy sparse queries read (above).
  enum class ColumnCopy { kFloat, kInt8 };
  // An int8 column copy's sparse search: candidates rescored per hit, and
  // the share of the query's mass whose columns the candidate scan reads
  // (VectorSearchParams::rescore, scan_mass; chosen below).
  static constexpr size_t kDefaultRescoreFactor = 4;
  static constexpr float kDefaultScanMass = 0.9f;

  // An empty index of `dim`-dimensional vectors with room reserved for
  // `expected_size` of them. REQUIRES: dim > 0 (MakeVectorIndex checks it).
  explicit FlatIndex(size_t dim, size_t expected_size = 0,
                     ColumnCopy columns = ColumnCopy::kFloat);

  // An index over `rows`, which it takes over (ids = row numbers).
  // InvalidArgument as Add() for a bad matrix (then `rows` is left as it
  // was). O(rows·d) for the dimension-major copy.
  static Result<std::unique_ptr<FlatIndex>> FromMatrix(FloatMatrix&& rows,
                                                       ColumnCopy columns = ColumnCopy::kFloat);

  // Hands the index to `sink` as "<prefix>.dim" (uint64 scalar),
  // "<prefix>.rows" (Size()·d floats, row-major, random access: rows are
  // read by id) and "<prefix>.columns" (the same floats dimension-major,
  // column d at d·Size(); each column read whole), or for an int8 copy the
  // packed rows ("<prefix>.packed", "<prefix>.offsets": PackedRows),
  // "<prefix>.codes" (Size()·d int8, dimension-major) and "<prefix>.scales"
  // (Size() floats) instead. InvalidArgument when a
  // name would exceed 31 bytes (`prefix` at most 23). O(1) beyond the
  // sink's copy, O(n·d) when Add() left the column copy with spare
  // capacity (compacted into a temporary first).
  Status ExportArrays(ArraySink& sink, std::string_view prefix) const;
  // The arrays AdoptArrays may borrow lazily (an int8 index's packed rows
  // and codes), which a reader verifying a segment ahead of the adoption leaves
  // to it.
  static std::vector<std::string> LazyArrays(std::string_view prefix);
  // True when `source` holds a flat index's rows ("<prefix>.rows" or
  // "<prefix>.packed").
  static bool HasArrays(const ArraySource& source, std::string_view prefix);
  // The index of those arrays, both borrowed in place (no copy, no
  // transpose): it searches exactly as the exported one, scores bit for
  // bit. An int8 index borrows its rows and codes lazily (ArraySource::
  // GetLazy: a segment's are not read at adoption, each column and row is
  // verified at its first read), so adopting it reads O(n) scales, not
  // O(n·d) vectors; a column or row whose bytes fail their checksum reads
  // as zeros (the search leaves it out, Row() returns zeros) and the damage
  // is recorded with the source (ArraySource::Damage) for its owner to
  // rebuild from. The float kind's arrays are verified at adoption. Checks what a damaged or
  // crafted file could make unsafe, Corruption naming the array: 0 < d ≤ 2^20, the rows a whole
  // number of vectors (at most kMaxVectors), the columns (or codes) as many values as the rows, one
  // scale per vector, n + 1 offsets of packed rows. The values themselves are not read (that would
  // be O(n·d) at every open): a file whose checksummed bytes hold non-finite values or columns that
  // differ from its rows answers with what it holds. The caller checks Size() and Dimension()
  // against its passages and the queries it will ask (a query is read for Dimension() floats). A
  // missing array: the source's NotFound. O(1).
  static Result<std::unique_ptr<FlatIndex>> AdoptArrays(const ArraySource& source,
                                                        std::string_view prefix);
  // True when the index reads an ArraySource's arrays (AdoptArrays, until an
  // Add() copies them).
  bool borrowed() const { return adopted_; }

  // "flat", or "flat-int8" for an int8 column copy.
  std::string Kind() const override;
  size_t Dimension() const override { return dim_; }
  size_t Size() const override { return size_; }
  size_t MemoryBytes() const override;
  ColumnCopy column_copy() const { return column_copy_; }
  // True when every search is exact (a float column copy): ScoreAll is then
  // what ranking every vector would give.
  bool exact() const { return column_copy_ == ColumnCopy::kFloat; }
  // The approximate score of one vector (VectorSearchParams::exact_scores
  // false): scale·Σ q_d·codes[d·stride] over `dims` in the order given, in
  // float. The one function every int8 score comes from, so a vector scores
  // the same bits in a column copy (stride = capacity) and as a row (stride
  // 1: LayeredIndex's appended rows, encoded as a rebuild would).
  static float Int8Score(const float* query, std::span<const uint32_t> dims, float scale,
                         const int8_t* codes, size_t stride);

  // Appends rows (ids Size() .. Size()+rows.rows-1); an int8 copy packs
  // them (a row that is not float16 values keeps its floats). All-or-nothing: a batch
  // with the wrong column count, a short data array or a non-finite value is
  // rejected with InvalidArgument and nothing is added. Amortised O(rows·d);
  // the first Add() to an adopted index copies its arrays (O(n·d)).
  Status Add(const FloatMatrix& rows) override;

  // REQUIRES: `query` points at Dimension() floats. Returns min(k, eligible)
  // hits. `stats` may be null.
  std::vector<VectorHit> Search(const float* query, const VectorSearchParams& params,
                                VectorSearchStats* stats) const override;

  // Queries with nnz·kSparseFraction <= dim take the sparse path.
  static constexpr size_t kSparseFraction = 4;

  // The score of every vector (out.size() == Size()), without ranking
  // them: what a caller that needs all scores (a min-max normalised prior)
  // would otherwise get from Search with k = Size() at the cost of a sort.
  // Same arithmetic as Search. O(Size()·nnz(query)) for a sparse query, else
  // O(Size()·d).
  void ScoreAll(const float* query, std::span<float> out) const;
  // The stored vector of `id` (Dimension() floats): in place for the float
  // kind, else decoded into `scratch` (Dimension() floats), which it
  // returns. A packed row that is damaged reads as zeros (above). Valid
  // until the next Add() or the next use of `scratch`. REQUIRES: id <
  // Size(). O(1), or O(d) to decode.
  const float* Row(uint32_t id, float* scratch) const;
  // Row `id` in place. REQUIRES: holds_floats(), id < Size().
  const float* FloatRow(uint32_t id) const { return RowData() + size_t{id} * dim_; }
  // True when the index holds its vectors as floats in place (the float
  // kind): matrix() is then free for a built index.
  bool holds_floats() const { return column_copy_ == ColumnCopy::kFloat; }
  // Every stored vector, row-major (Size()·Dimension() floats), in place.
  // Valid until the next Add(). REQUIRES: holds_floats().
  std::span<const float> vectors() const;
  // Every stored vector as a FloatMatrix (rows = Size()). Valid until the
  // next Add(). A built float index returns the matrix it holds; an adopted
  // or int8 one has none, so its first call copies the vectors into one
  // (O(n·d) time and 4·n·d bytes, once, thread-safe): read Row() instead
  // where one row at a time will do.
  const FloatMatrix& matrix() const;

 private:
  size_t dim_;
  size_t size_ = 0;
  std::vector<VectorHit> SearchSparse(const float* query, const VectorSearchParams& params,
                                      size_t k, VectorSearchStats* stats) const;
  std::vector<VectorHit> SearchSparseInt8(const float* query, const VectorSearchParams& params,
                                          size_t k, VectorSearchStats* stats) const;
  // The exact scores of `hits` (from the rows), best k of them in
  // VectorIndex order.
  std::vector<VectorHit> Rescored(const float* query, std::vector<VectorHit> hits,
                                  size_t k) const;
  // VectorSearchParams::exact_scores == false: `hits` scored by Int8Score
  // over the query's `nonzero` dimensions, best k.
  std::vector<VectorHit> ScoredFromCodes(const float* query, std::span<const uint32_t> nonzero,
                                         std::vector<VectorHit> hits, size_t k) const;
  const float* RowData() const { return adopted_ ? adopted_rows_.data() : rows_.data.data(); }
  // Rows [start, start + n) (n <= kBlockRows, row-major): in place, or
  // decoded into `scratch` (n·d floats; a damaged row as zeros).
  const float* BlockRows(size_t start, size_t n, float* scratch) const;
  // True when column d of the int8 copy may be read (verified; a lazily
  // adopted one at its first read).
  bool ColumnReadable(size_t d) const;
  // Column d starts at ColumnData() + d·capacity_ (CodeData() for int8).
  const float* ColumnData() const { return adopted_ ? adopted_columns_.data() : columns_.data(); }
  const int8_t* CodeData() const { return adopted_ ? adopted_codes_.data() : codes_.data(); }
  const float* ScaleData() const { return adopted_ ? adopted_scales_.data() : scales_.data(); }
  // The names of the arrays under one prefix (flat_index.cc NamesFor).
  struct ArrayNames {
    std::string prefix, dim, rows, columns, codes, scales;
  };
  // "<prefix>.dim" etc.; InvalidArgument when too long (ArrayName).
  static Result<ArrayNames> NamesFor(std::string_view prefix);
  // AdoptArrays of an int8 index: scales, codes and packed rows.
  static Result<std::unique_ptr<FlatIndex>> AdoptInt8(const ArraySource& source,
                                                      const ArrayNames& names, size_t dim);
  // An adopted index's arrays copied into rows_ and columns_ (before Add).
  void CopyAdopted();

  // Built: grows with every vector (the float kind's rows_, an int8 copy's
  // packed_); the dimension-major copy below is rebuilt on capacity growth.
  FloatMatrix rows_;
  PackedRows packed_;
  void AppendColumns(const FloatMatrix& rows);
  void AppendCodes(const FloatMatrix& rows);
  ColumnCopy column_copy_ = ColumnCopy::kFloat;
  // Dimension-major copy: column d at columns_[d·capacity_] (codes_ for
  // int8, with scales_ per vector), first size_ valid.
  std::vector<float, vector_internal::CacheAlignedAllocator<float>> columns_;
  std::vector<int8_t, vector_internal::CacheAlignedAllocator<int8_t>> codes_;
  std::vector<float> scales_;
  size_t capacity_ = 0;
  // Adopted (adopted_): the rows (or packed_) and the columns (capacity_ ==
  // size_), borrowed; lazy_: the packed rows and codes verified at their
  // first read (int8).
  bool adopted_ = false;
  bool lazy_ = false;
  FlatArray<float> adopted_rows_;
  FlatArray<float> adopted_columns_;
  FlatArray<int8_t> adopted_codes_;
  FlatArray<float> adopted_scales_;
  // matrix() of an adopted index, made at its first call.
  struct MatrixCopy {
    std::once_flag once;
    FloatMatrix matrix;
  };
  std::shared_ptr<MatrixCopy> matrix_copy_ = std::make_shared<MatrixCopy>();
};

}  // namespace flowrag

#endif  // FLOWRAG_VECTOR_FLAT_INDEX_H_
