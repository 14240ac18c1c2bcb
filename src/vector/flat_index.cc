#include "vector/flat_index.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "vector/dot_product.h"
#include "vector/index_util.h"
#include "vector/quantized.h"

namespace flowrag {

namespace {
// Rows scored per kernel call: 256 scores (1 KiB) live on the stack, and the
// heap update for a block runs while its rows are still in cache.
constexpr size_t kBlockRows = 256;
// Rows whose partial sums an int8 sparse search keeps at once: 64 KiB of
// floats, in the L2 cache while every non-zero column adds to them, each
// column read 16 KiB at a stretch (4,096 rows: 4.1-4.3 ms against 3.8-3.9
// ms, the dense method's p50 at 10^6, measured with int16 weights).
constexpr size_t kInt8BlockRows = 16384;
}  // namespace

FlatIndex::FlatIndex(size_t dim, size_t expected_size, ColumnCopy columns)
    : dim_(dim), packed_(dim), column_copy_(columns) {
  rows_.cols = dim;
  if (columns == ColumnCopy::kFloat) rows_.data.reserve(expected_size * dim);
}

Result<std::unique_ptr<FlatIndex>> FlatIndex::FromMatrix(FloatMatrix&& rows, ColumnCopy columns) {
  if (rows.cols == 0) return Status::InvalidArgument("vector index: dim must be > 0");
  FLOWRAG_RETURN_IF_ERROR(vector_internal::ValidateRows(rows, rows.cols, 0));
  auto index = std::make_unique<FlatIndex>(rows.cols, 0, columns);
  index->AppendColumns(rows);
  index->size_ = rows.rows;
  if (columns == ColumnCopy::kFloat) {
    index->rows_ = std::move(rows);
  } else {
    rows = FloatMatrix();  // packed (AppendCodes): the floats are not kept
  }
  return index;
}

Status FlatIndex::Add(const FloatMatrix& rows) {
  FLOWRAG_RETURN_IF_ERROR(vector_internal::ValidateRows(rows, dim_, size_));
  if (adopted_) {
    FLOWRAG_RETURN_IF_ERROR(adopted_rows_.VerifyAll());
    FLOWRAG_RETURN_IF_ERROR(adopted_codes_.VerifyAll());
    FLOWRAG_RETURN_IF_ERROR(packed_.Own());
    CopyAdopted();
  }
  if (column_copy_ == ColumnCopy::kFloat) {
    rows_.data.insert(rows_.data.end(), rows.data.begin(), rows.data.end());
  }
  AppendColumns(rows);
  size_ += rows.rows;
  rows_.rows = size_;
  return Status::Ok();
}

std::string FlatIndex::Kind() const {
  return column_copy_ == ColumnCopy::kInt8 ? "flat-int8" : "flat";
}

size_t FlatIndex::MemoryBytes() const {
  return (rows_.data.capacity() + columns_.capacity() + scales_.capacity()) * 4 +
         codes_.capacity() + packed_.MemoryBytes() + adopted_rows_.bytes() +
         adopted_columns_.bytes() + adopted_codes_.bytes() + adopted_scales_.bytes();
}

namespace {

// Room for `new_size` vectors in a dimension-major copy of `dim` columns of
// `*capacity` entries (the first `size` valid), grown geometrically:
// amortised O(d) per vector.
template <class Columns>
void ReserveColumns(Columns* columns, size_t dim, size_t size, size_t new_size, size_t* capacity) {
  if (new_size <= *capacity) return;
  const size_t cap = std::max(new_size, 2 * *capacity);
  Columns grown(dim * cap);
  for (size_t d = 0; d < dim; ++d) {
    std::copy_n(columns->data() + d * *capacity, size, grown.data() + d * cap);
  }
  columns->swap(grown);
  *capacity = cap;
}

}  // namespace

void FlatIndex::AppendColumns(const FloatMatrix& rows) {
  if (column_copy_ == ColumnCopy::kInt8) return AppendCodes(rows);
  ReserveColumns(&columns_, dim_, size_, size_ + rows.rows, &capacity_);
  for (size_t r = 0; r < rows.rows; ++r) {
    const float* row = rows.row(r);
    for (size_t d = 0; d < dim_; ++d) columns_[d * capacity_ + size_ + r] = row[d];
  }
}

void FlatIndex::AppendCodes(const FloatMatrix& rows) {
  ReserveColumns(&codes_, dim_, size_, size_ + rows.rows, &capacity_);
  for (size_t r = 0; r < rows.rows; ++r) {
    scales_.push_back(vector_internal::EncodeInt8PerVector(
        rows.row(r), dim_, codes_.data() + size_ + r, capacity_));
    packed_.Append(rows.row(r));
  }
}

void FlatIndex::CopyAdopted() {
  rows_.cols = dim_;
  rows_.rows = size_;
  rows_.data.assign(adopted_rows_.begin(), adopted_rows_.end());
  columns_.assign(adopted_columns_.begin(), adopted_columns_.end());
  codes_.assign(adopted_codes_.begin(), adopted_codes_.end());
  scales_.assign(adopted_scales_.begin(), adopted_scales_.end());
  capacity_ = size_;
  adopted_ = false;
  lazy_ = false;
  adopted_rows_ = FlatArray<float>();
  adopted_columns_ = FlatArray<float>();
  adopted_codes_ = FlatArray<int8_t>();
  adopted_scales_ = FlatArray<float>();
  matrix_copy_ = std::make_shared<MatrixCopy>();
}

const FloatMatrix& FlatIndex::matrix() const {
  if (!adopted_ && holds_floats()) return rows_;
  MatrixCopy& copy = *matrix_copy_;
  std::call_once(copy.once, [&] {
    copy.matrix.rows = size_;
    copy.matrix.cols = dim_;
    copy.matrix.data.resize(size_ * dim_);
    for (uint32_t i = 0; i < size_; ++i) {
      float* row = copy.matrix.data.data() + size_t{i} * dim_;
      const float* stored = Row(i, row);
      if (stored != row) std::copy_n(stored, dim_, row);
    }
  });
  return copy.matrix;
}

std::span<const float> FlatIndex::vectors() const {
  return std::span<const float>(RowData(), holds_floats() ? size_ * dim_ : 0);
}

const float* FlatIndex::Row(uint32_t id, float* scratch) const {
  if (holds_floats()) return FloatRow(id);
  packed_.Read(id, scratch);
  return scratch;
}

bool FlatIndex::ColumnReadable(size_t d) const {
  return !lazy_ || adopted_codes_.Verify(d * size_, size_).ok();
}

namespace {

constexpr std::string_view kRows = ".rows";

}  // namespace

Result<FlatIndex::ArrayNames> FlatIndex::NamesFor(std::string_view prefix) {
  ArrayNames names;
  names.prefix = std::string(prefix);
  FLOWRAG_ASSIGN_OR_RETURN(names.columns, vector_internal::ArrayName(prefix, ".columns"));
  names.codes = std::string(prefix) + ".codes";
  names.scales = std::string(prefix) + ".scales";
  names.dim = std::string(prefix) + ".dim";
  names.rows = std::string(prefix) + std::string(kRows);
  return names;
}

namespace {

// A dimension-major copy of `dim` columns, `size` values each, column d at
// data + d·capacity, handed to `sink` as `name` without the spare capacity
// (compacted into a temporary when there is some).
template <class T>
Status PutColumns(ArraySink& sink, const std::string& name, const T* data, size_t dim, size_t size,
                  size_t capacity) {
  if (capacity == size) return sink.Put<T>(name, std::span<const T>(data, size * dim));
  std::vector<T> compact(size * dim);  // column d at d·size
  for (size_t d = 0; d < dim; ++d) std::copy_n(data + d * capacity, size, compact.data() + d * size);
  return sink.Put<T>(name, std::span<const T>(compact));
}

}  // namespace

Status FlatIndex::ExportArrays(ArraySink& sink, std::string_view prefix) const {
  FLOWRAG_ASSIGN_OR_RETURN(const ArrayNames names, NamesFor(prefix));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<uint64_t>(names.dim, dim_));
  if (column_copy_ == ColumnCopy::kInt8) {
    FLOWRAG_RETURN_IF_ERROR(packed_.ExportArrays(sink, prefix));
    if (adopted_) FLOWRAG_RETURN_IF_ERROR(adopted_codes_.VerifyAll());
    FLOWRAG_RETURN_IF_ERROR(sink.Put<float>(names.scales, std::span<const float>(ScaleData(), size_)));
    return PutColumns(sink, names.codes, CodeData(), dim_, size_, capacity_);
  }
  FLOWRAG_RETURN_IF_ERROR(sink.Put<float>(names.rows, vectors(), /*random=*/true));
  return PutColumns(sink, names.columns, ColumnData(), dim_, size_, capacity_);
}

std::vector<std::string> FlatIndex::LazyArrays(std::string_view prefix) {
  std::vector<std::string> lazy = PackedRows::LazyArrays(prefix);
  lazy.push_back(std::string(prefix) + ".codes");
  return lazy;
}

bool FlatIndex::HasArrays(const ArraySource& source, std::string_view prefix) {
  return source.Has(std::string(prefix) + std::string(kRows)) ||
         PackedRows::HasArrays(source, prefix);
}

Result<std::unique_ptr<FlatIndex>> FlatIndex::AdoptArrays(const ArraySource& source,
                                                          std::string_view prefix) {
  FLOWRAG_ASSIGN_OR_RETURN(const ArrayNames names, NamesFor(prefix));
  FLOWRAG_ASSIGN_OR_RETURN(const uint64_t dim,
                           vector_internal::GetScalar<uint64_t>(source, names.dim));
  if (dim == 0 || dim > vector_internal::kMaxAdoptedDimension) {
    return vector_internal::CorruptArray(names.dim, std::to_string(dim) + " dimensions");
  }
  if (source.Has(names.codes)) return AdoptInt8(source, names, dim);
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<float> rows,
                           vector_internal::GetArray<float>(source, names.rows));
  if (rows.size() % dim != 0 || rows.size() / dim > vector_internal::kMaxVectors) {
    return vector_internal::CorruptArray(names.rows, std::to_string(rows.size()) +
                                                         " floats are not vectors of " +
                                                         std::to_string(dim) + " dimensions");
  }
  auto index = std::make_unique<FlatIndex>(dim, 0, ColumnCopy::kFloat);
  index->size_ = rows.size() / dim;
  FLOWRAG_ASSIGN_OR_RETURN(index->adopted_columns_,
                           vector_internal::GetArray<float>(source, names.columns));
  if (index->adopted_columns_.size() != rows.size()) {
    return vector_internal::CorruptArray(
        names.columns, std::to_string(index->adopted_columns_.size()) + " floats for " +
                           std::to_string(rows.size()) + " in the rows");
  }
  index->capacity_ = index->size_;
  index->adopted_ = true;
  index->adopted_rows_ = std::move(rows);
  return index;
}

Result<std::unique_ptr<FlatIndex>> FlatIndex::AdoptInt8(const ArraySource& source,
                                                        const ArrayNames& names, size_t dim) {
  auto index = std::make_unique<FlatIndex>(dim, 0, ColumnCopy::kInt8);
  FLOWRAG_ASSIGN_OR_RETURN(index->adopted_codes_,
                           vector_internal::GetArray<int8_t>(source, names.codes, /*lazily=*/true));
  const size_t n = index->adopted_codes_.size() / dim;
  if (index->adopted_codes_.size() % dim != 0 || n > vector_internal::kMaxVectors) {
    return vector_internal::CorruptArray(names.codes, std::to_string(index->adopted_codes_.size()) +
                                                          " codes are not vectors of " +
                                                          std::to_string(dim) + " dimensions");
  }
  FLOWRAG_ASSIGN_OR_RETURN(index->adopted_scales_,
                           vector_internal::GetArray<float>(source, names.scales));
  if (index->adopted_scales_.size() != n) {
    return vector_internal::CorruptArray(
        names.scales, std::to_string(index->adopted_scales_.size()) + " scales for " +
                          std::to_string(n) + " vectors");
  }
  FLOWRAG_ASSIGN_OR_RETURN(index->packed_, PackedRows::AdoptArrays(source, names.prefix, dim, n));
  index->size_ = n;
  index->capacity_ = n;
  index->adopted_ = true;
  index->lazy_ = index->packed_.lazy() || index->adopted_codes_.lazy();
  return index;
}

std::vector<VectorHit> FlatIndex::SearchSparse(const float* query, const VectorSearchParams& params,
                                               size_t k, VectorSearchStats* stats) const {
  thread_local std::vector<float> scores;
  scores.assign(size_, 0.0f);
  for (size_t d = 0; d < dim_; ++d) {
    if (query[d] != 0.0f) {
      vector_internal::Axpy(query[d], ColumnData() + d * capacity_, scores.data(), size_);
    }
  }
  vector_internal::TopK top(k);
  size_t scored = 0;
  for (size_t i = 0; i < size_; ++i) {
    const auto id = static_cast<uint32_t>(i);
    if (params.filter && !params.filter(id)) continue;
    ++scored;
    if (!top.full() || scores[i] > top.worst().score) top.Push(id, scores[i]);
  }
  if (stats != nullptr) stats->candidates_scored += scored;
  return vector_internal::DropBelow(top.Take(), params.min_score);
}

std::vector<VectorHit> FlatIndex::SearchSparseInt8(const float* query,
                                                   const VectorSearchParams& params, size_t k,
                                                   VectorSearchStats* stats) const {
  std::vector<uint32_t> dims;
  double mass = 0.0;
  for (size_t d = 0; d < dim_; ++d) {
    if (query[d] != 0.0f) {
      dims.push_back(static_cast<uint32_t>(d));
      mass += std::fabs(query[d]);
    }
  }
  // Ascending, for the scores from the codes (the scan reorders `dims`).
  const std::vector<uint32_t> nonzero = params.exact_scores ? std::vector<uint32_t>{} : dims;
  const float scan_mass = params.scan_mass > 0.0f ? params.scan_mass : kDefaultScanMass;
  if (scan_mass < 1.0f) {  // the largest |q_d| up to that share, then in column order
    std::sort(dims.begin(), dims.end(), [query](uint32_t a, uint32_t b) {
      return std::fabs(query[a]) != std::fabs(query[b]) ? std::fabs(query[a]) > std::fabs(query[b])
                                                        : a < b;
    });
    double kept = 0.0;
    size_t n = 0;
    while (n < dims.size() && kept < scan_mass * mass) kept += std::fabs(query[dims[n++]]);
    dims.resize(n);
    std::sort(dims.begin(), dims.end());
  }
  std::vector<const int8_t*> columns;
  std::vector<float> weights;
  for (uint32_t d : dims) {
    if (!ColumnReadable(d)) continue;  // damaged: left out (recorded)
    columns.push_back(CodeData() + size_t{d} * capacity_);
    weights.push_back(query[d]);
  }
  const float* scales = ScaleData();
  const size_t candidates =
      std::min(size_, k * (params.rescore > 0 ? params.rescore : kDefaultRescoreFactor));
  vector_internal::TopK top(candidates);
  thread_local std::vector<float> block_sums(kInt8BlockRows);
  float* sums = block_sums.data();
  std::vector<const int8_t*> block(columns.size());
  size_t scored = 0;
  for (size_t start = 0; start < size_; start += kInt8BlockRows) {
    const size_t n = std::min(kInt8BlockRows, size_ - start);
    std::fill_n(sums, n, 0.0f);
    for (size_t j = 0; j < columns.size(); ++j) block[j] = columns[j] + start;
    vector_internal::AxpyInt8Columns(weights.data(), block.data(), block.size(), sums, n);
    for (size_t i = 0; i < n; ++i) {
      const auto id = static_cast<uint32_t>(start + i);
      if (params.filter && !params.filter(id)) continue;
      ++scored;
      const float score = sums[i] * scales[id];
      if (!top.full() || score > top.worst().score) top.Push(id, score);
    }
  }
  std::vector<VectorHit> found = top.Take();
  if (stats != nullptr) stats->candidates_scored += scored + found.size();
  std::vector<VectorHit> hits = params.exact_scores
                                    ? Rescored(query, std::move(found), k)
                                    : ScoredFromCodes(query, nonzero, std::move(found), k);
  return vector_internal::DropBelow(std::move(hits), params.min_score);
}

float FlatIndex::Int8Score(const float* query, std::span<const uint32_t> dims, float scale,
                           const int8_t* codes, size_t stride) {
  float sum = 0.0f;
  for (uint32_t d : dims) sum += query[d] * static_cast<float>(codes[d * stride]);
  return sum * scale;
}

std::vector<VectorHit> FlatIndex::ScoredFromCodes(const float* query,
                                                  std::span<const uint32_t> nonzero,
                                                  std::vector<VectorHit> hits, size_t k) const {
  std::vector<uint32_t> dims;  // damaged columns left out, as the scan did
  for (uint32_t d : nonzero) {
    if (ColumnReadable(d)) dims.push_back(d);
  }
  // Ascending ids: the columns' bytes are read in address order.
  std::sort(hits.begin(), hits.end(), [](const VectorHit& a, const VectorHit& b) { return a.id < b.id; });
  const float* scales = ScaleData();
  vector_internal::TopK top(k);
  for (const VectorHit& h : hits) {
    top.Push(h.id, Int8Score(query, dims, scales[h.id], CodeData() + h.id, capacity_));
  }
  return top.Take();
}

std::vector<VectorHit> FlatIndex::Rescored(const float* query, std::vector<VectorHit> hits,
                                           size_t k) const {
  // Packed rows decoded kBlockRows at a time (a multiple of 4, so each row
  // meets the gather kernel's same 4-row pass as in one call: the same bits).
  thread_local std::vector<float> scratch;
  if (!holds_floats()) scratch.resize(kBlockRows * dim_);
  std::vector<float> scores(hits.size());
  const float* rows[kBlockRows];
  for (size_t start = 0; start < hits.size(); start += kBlockRows) {
    const size_t n = std::min(kBlockRows, hits.size() - start);
    for (size_t i = 0; i < n; ++i) rows[i] = Row(hits[start + i].id, scratch.data() + i * dim_);
    vector_internal::DotProductGather(query, rows, n, dim_, scores.data() + start);
  }
  vector_internal::TopK top(k);
  for (size_t i = 0; i < hits.size(); ++i) top.Push(hits[i].id, scores[i]);
  return top.Take();
}

void FlatIndex::ScoreAll(const float* query, std::span<float> out) const {
  std::fill(out.begin(), out.end(), 0.0f);
  if (out.size() != size_ || size_ == 0) return;
  size_t nnz = 0;
  for (size_t d = 0; d < dim_; ++d) nnz += query[d] != 0.0f;
  if (nnz * kSparseFraction <= dim_ && column_copy_ == ColumnCopy::kFloat) {
    for (size_t d = 0; d < dim_; ++d) {
      if (query[d] != 0.0f) {
        vector_internal::Axpy(query[d], ColumnData() + d * capacity_, out.data(), size_);
      }
    }
    return;
  }
  thread_local std::vector<float> scratch;
  if (!holds_floats()) scratch.resize(kBlockRows * dim_);
  for (size_t start = 0; start < size_; start += kBlockRows) {
    const size_t n = std::min(kBlockRows, size_ - start);
    vector_internal::DotProductBlock(query, BlockRows(start, n, scratch.data()), n, dim_,
                                     out.data() + start);
  }
}

const float* FlatIndex::BlockRows(size_t start, size_t n, float* scratch) const {
  if (holds_floats()) return RowData() + start * dim_;
  for (size_t i = 0; i < n; ++i) packed_.Read(static_cast<uint32_t>(start + i), scratch + i * dim_);
  return scratch;
}

std::vector<VectorHit> FlatIndex::Search(const float* query, const VectorSearchParams& params,
                                         VectorSearchStats* stats) const {
  const size_t k = std::min(params.k, size_);
  if (k == 0 || !vector_internal::AllFinite(query, dim_)) return {};
  size_t nnz = 0;
  for (size_t d = 0; d < dim_; ++d) nnz += query[d] != 0.0f;
  if (nnz * kSparseFraction <= dim_) {
    return column_copy_ == ColumnCopy::kInt8 ? SearchSparseInt8(query, params, k, stats)
                                             : SearchSparse(query, params, k, stats);
  }

  vector_internal::TopK top(k);
  float scores[kBlockRows];
  size_t scored = 0;
  thread_local std::vector<float> scratch;
  if (!holds_floats()) scratch.resize(kBlockRows * dim_);
  if (!params.filter) {
    for (size_t start = 0; start < size_; start += kBlockRows) {
      const size_t n = std::min(kBlockRows, size_ - start);
      vector_internal::DotProductBlock(query, BlockRows(start, n, scratch.data()), n, dim_, scores);
      // Ids arrive in ascending order, so a score equal to the current worst
      // loses the tie: only a strictly greater score can enter a full heap.
      for (size_t i = 0; i < n; ++i) {
        if (!top.full() || scores[i] > top.worst().score) {
          top.Push(static_cast<uint32_t>(start + i), scores[i]);
        }
      }
    }
    scored = size_;
  } else {
    const float* rows[kBlockRows];
    uint32_t ids[kBlockRows];
    for (size_t start = 0; start < size_; start += kBlockRows) {
      const size_t n = std::min(kBlockRows, size_ - start);
      size_t m = 0;
      for (size_t i = 0; i < n; ++i) {
        const auto id = static_cast<uint32_t>(start + i);
        if (params.filter(id)) {
          rows[m] = Row(id, scratch.data() + m * dim_);
          ids[m] = id;
          ++m;
        }
      }
      vector_internal::DotProductGather(query, rows, m, dim_, scores);
      for (size_t i = 0; i < m; ++i) top.Push(ids[i], scores[i]);
      scored += m;
    }
  }
  if (stats != nullptr) stats->candidates_scored += scored;
  return vector_internal::DropBelow(top.Take(), params.min_score);
}

}  // namespace flowrag
