#include "vector/half_rows_index.h"

#include <cmath>
#include <string>
#include <utility>

#include "vector/index_util.h"
#include "vector/quantized.h"
#include "vector/sparse_index.h"

namespace flowrag {

using vector_internal::CorruptArray;

namespace {

// False for the float16 bit patterns of an infinity or NaN (exponent all ones).
bool FiniteHalf(uint16_t h) { return (h & 0x7c00u) != 0x7c00u; }

Status BadRow(size_t row, const std::string& what) {
  return Status::InvalidArgument("sparse rows: row " + std::to_string(row) + ": " + what);
}

}  // namespace

HalfRowsIndex::HalfRowsIndex(size_t dim) : dim_(dim) {}
HalfRowsIndex::~HalfRowsIndex() = default;

size_t HalfRowsIndex::MemoryBytes() const {
  std::lock_guard<std::mutex> lock(postings_mu_);
  return offsets_.bytes() + dims_.bytes() + halves_.bytes() +
         (postings_ != nullptr ? postings_->MemoryBytes() : 0);
}

Status HalfRowsIndex::AppendFloatRow(size_t row, std::span<const uint32_t> dims,
                                     std::span<const float> values) {
  std::vector<uint16_t>& d = dims_.Mutable();
  std::vector<uint16_t>& h = halves_.Mutable();
  const size_t start = d.size();
  Status bad;
  for (size_t i = 0; i < dims.size() && bad.ok(); ++i) {
    const uint16_t half = FloatToHalf(values[i]);
    if (dims[i] >= dim_) {
      bad = BadRow(row, "dimension " + std::to_string(dims[i]) + " of " + std::to_string(dim_));
    } else if (i > 0 && dims[i - 1] >= dims[i]) {
      bad = BadRow(row, "dimensions out of order");
    } else if (!FiniteHalf(half)) {
      bad = BadRow(row, "value " + std::to_string(values[i]) + " is not finite as a float16");
    } else {
      d.push_back(static_cast<uint16_t>(dims[i]));
      h.push_back(half);
    }
  }
  if (!bad.ok()) {  // the row is not kept
    d.resize(start);
    h.resize(start);
  } else {
    offsets_.Mutable().push_back(d.size());
    offsets_.Sync();
  }
  dims_.Sync();
  halves_.Sync();
  return bad;
}

void HalfRowsIndex::TruncateTo(size_t rows) {
  std::vector<uint64_t>& o = offsets_.Mutable();
  o.resize(rows + 1);
  dims_.Mutable().resize(o.back());
  halves_.Mutable().resize(o.back());
  offsets_.Sync();
  dims_.Sync();
  halves_.Sync();
}

void HalfRowsIndex::Reserve(size_t rows, size_t nonzeros) {
  offsets_.Mutable().reserve(rows + 1);
  dims_.Mutable().reserve(nonzeros);
  halves_.Mutable().reserve(nonzeros);
  offsets_.Sync();
  dims_.Sync();
  halves_.Sync();
}

void HalfRowsIndex::AppendRow(const RowView& row) {
  std::vector<uint16_t>& d = dims_.Mutable();
  std::vector<uint16_t>& h = halves_.Mutable();
  d.insert(d.end(), row.dims.begin(), row.dims.end());
  h.insert(h.end(), row.halves.begin(), row.halves.end());
  dims_.Sync();
  halves_.Sync();
  offsets_.Mutable().push_back(d.size());
  offsets_.Sync();
}

Result<std::unique_ptr<HalfRowsIndex>> HalfRowsIndex::FromRows(const SparseRows& rows) {
  if (rows.cols == 0 || rows.cols > kMaxDimension) {
    return Status::InvalidArgument("half rows: " + std::to_string(rows.cols) +
                                   " dimensions (1 to 65536)");
  }
  if (rows.rows() > vector_internal::kMaxVectors) {
    return Status::InvalidArgument("half rows: too many rows");
  }
  auto index = std::make_unique<HalfRowsIndex>(rows.cols);
  index->dims_.Mutable().reserve(rows.nonzeros());
  index->halves_.Mutable().reserve(rows.nonzeros());
  index->offsets_.Mutable().reserve(rows.rows() + 1);
  for (size_t r = 0; r < rows.rows(); ++r) {
    const SparseRows::RowView row = rows.Row(r);
    FLOWRAG_RETURN_IF_ERROR(index->AppendFloatRow(r, row.dims, row.values));
  }
  return index;
}

Result<std::unique_ptr<HalfRowsIndex>> HalfRowsIndex::Remap(const HalfRowsIndex& old,
                                                            std::span<const int64_t> old_of_new,
                                                            const SparseRows& fresh) {
  if (fresh.rows() > 0 && fresh.cols != old.dim_) {
    return Status::InvalidArgument("half rows remap: fresh rows of " + std::to_string(fresh.cols) +
                                   " dimensions, index of " + std::to_string(old.dim_));
  }
  auto index = std::make_unique<HalfRowsIndex>(old.dim_);
  index->Reserve(old_of_new.size(), old.NonZeros() + fresh.values.size());  // at most
  size_t next_fresh = 0;
  for (size_t i = 0; i < old_of_new.size(); ++i) {
    const int64_t o = old_of_new[i];
    if (o >= 0) {
      if (static_cast<uint64_t>(o) >= old.Size()) {
        return Status::InvalidArgument("half rows remap: row " + std::to_string(o) + " of " +
                                       std::to_string(old.Size()));
      }
      index->AppendRow(old.Row(static_cast<size_t>(o)));
    } else {
      if (next_fresh >= fresh.rows()) {
        return Status::InvalidArgument("half rows remap: more new texts than fresh rows");
      }
      const SparseRows::RowView row = fresh.Row(next_fresh);
      FLOWRAG_RETURN_IF_ERROR(index->AppendFloatRow(i, row.dims, row.values));
      ++next_fresh;
    }
  }
  if (next_fresh != fresh.rows()) {
    return Status::InvalidArgument("half rows remap: " + std::to_string(fresh.rows()) +
                                   " fresh rows for " + std::to_string(next_fresh) + " new texts");
  }
  return index;
}

Status HalfRowsIndex::Add(const FloatMatrix& rows) {
  FLOWRAG_RETURN_IF_ERROR(vector_internal::ValidateRows(rows, dim_, Size()));
  checked_.reset();  // REQUIRES a verified or owned index: the copy is checked no more
  const size_t before = Size();
  const SparseRows batch = SparseRows::FromMatrix(rows);
  for (size_t r = 0; r < batch.rows(); ++r) {
    const SparseRows::RowView row = batch.Row(r);
    if (Status st = AppendFloatRow(before + r, row.dims, row.values); !st.ok()) {
      TruncateTo(before);  // all or nothing
      return st;
    }
  }
  std::lock_guard<std::mutex> lock(postings_mu_);
  postings_.reset();
  return Status::Ok();
}

HalfRowsIndex::RowView HalfRowsIndex::Row(size_t row) const {
  if (checked_ != nullptr && !RowChecked(row)) return {};
  const uint64_t b = offsets_[row], n = offsets_[row + 1] - b;
  return {dims_.span().subspan(b, n), halves_.span().subspan(b, n)};
}

float HalfRowsIndex::Dot(size_t row, const float* query) const {
  const RowView r = Row(row);
  float sum = 0.0f;
  for (size_t i = 0; i < r.dims.size(); ++i) sum += HalfToFloat(r.halves[i]) * query[r.dims[i]];
  return sum;
}

SparseRows HalfRowsIndex::Rows() const {
  SparseRows rows;
  rows.cols = dim_;
  rows.Reserve(Size(), NonZeros());
  std::vector<uint32_t>& d = rows.dims.Mutable();
  std::vector<float>& v = rows.values.Mutable();
  std::vector<uint64_t>& o = rows.offsets.Mutable();
  for (size_t r = 0; r < Size(); ++r) {
    const RowView row = Row(r);
    for (size_t i = 0; i < row.dims.size(); ++i) {
      d.push_back(row.dims[i]);
      v.push_back(HalfToFloat(row.halves[i]));
    }
    o.push_back(d.size());
  }
  rows.dims.Sync();
  rows.values.Sync();
  rows.offsets.Sync();
  return rows;
}

const SparseIndex& HalfRowsIndex::Postings() const {
  std::lock_guard<std::mutex> lock(postings_mu_);
  if (postings_ == nullptr) {
    // Rows() reads only checked rows (a damaged one as empty), so they are
    // valid input and FromRows cannot fail.
    Result<std::unique_ptr<SparseIndex>> built = SparseIndex::FromRows(Rows());
    postings_ = built.ok() ? std::move(*built) : std::make_unique<SparseIndex>(dim_);
  }
  return *postings_;
}

std::vector<VectorHit> HalfRowsIndex::Search(const float* query, const VectorSearchParams& params,
                                             VectorSearchStats* stats) const {
  if (Size() == 0) return {};
  return Postings().Search(query, params, stats);
}

bool HalfRowsIndex::RowChecked(size_t row) const {
  return checked_->Passed(
      row, [&] { return CheckRow(row); }, [&](const Status& s) { dims_.ReportDamage(s); });
}

Status HalfRowsIndex::CheckRow(size_t row) const {
  const std::string at = "row " + std::to_string(row) + ": ";
  FLOWRAG_RETURN_IF_ERROR(offsets_.Verify(row, 2));
  if (offsets_[row] > offsets_[row + 1] || offsets_[row + 1] > dims_.size()) {
    return CorruptArray(offsets_name_, at + "offsets " + std::to_string(offsets_[row]) + ", " +
                                           std::to_string(offsets_[row + 1]) + " of " +
                                           std::to_string(dims_.size()) + " entries");
  }
  const uint64_t first = offsets_[row], count = offsets_[row + 1] - first;
  FLOWRAG_RETURN_IF_ERROR(dims_.Verify(first, count));
  FLOWRAG_RETURN_IF_ERROR(halves_.Verify(first, count));
  for (uint64_t i = first; i < first + count; ++i) {
    if (dims_[i] >= dim_) {
      return CorruptArray(dims_name_, at + "dimension " + std::to_string(dims_[i]) + " of " +
                                          std::to_string(dim_) + " out of range");
    }
    if (i > first && dims_[i - 1] >= dims_[i]) {
      return CorruptArray(dims_name_, at + "dimensions out of order");
    }
    if (!FiniteHalf(halves_[i])) return CorruptArray(halves_name_, at + "a value is not finite");
  }
  return Status::Ok();
}

Status HalfRowsIndex::VerifyAll() const {
  if (checked_ == nullptr) return Status::Ok();
  for (size_t r = 0; r < Size(); ++r) {
    if (!RowChecked(r)) return CheckRow(r);
  }
  return Status::Ok();
}

Status HalfRowsIndex::ExportArrays(ArraySink& sink, std::string_view prefix) const {
  FLOWRAG_ASSIGN_OR_RETURN(const std::string halves, vector_internal::ArrayName(prefix, ".halves"));
  const std::string p(prefix);
  FLOWRAG_RETURN_IF_ERROR(VerifyAll());  // damage is never copied
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<uint64_t>(p + ".dim", dim_));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint64_t>(p + ".off", offsets_.span(), /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint16_t>(p + ".dims", dims_.span(), /*random=*/true));
  return sink.Put<uint16_t>(halves, halves_.span(), /*random=*/true);
}

std::vector<std::string> HalfRowsIndex::LazyArrays(std::string_view prefix) {
  return {std::string(prefix) + ".off", std::string(prefix) + ".dims",
          std::string(prefix) + ".halves"};
}

Result<std::unique_ptr<HalfRowsIndex>> HalfRowsIndex::AdoptArrays(const ArraySource& source,
                                                                  std::string_view prefix) {
  FLOWRAG_ASSIGN_OR_RETURN(const std::string halves, vector_internal::ArrayName(prefix, ".halves"));
  const std::string p(prefix);
  FLOWRAG_ASSIGN_OR_RETURN(const uint64_t dim,
                           vector_internal::GetScalar<uint64_t>(source, p + ".dim"));
  if (dim == 0 || dim > kMaxDimension) {
    return CorruptArray(p + ".dim", std::to_string(dim) + " dimensions (1 to 65536)");
  }
  auto index = std::make_unique<HalfRowsIndex>(static_cast<size_t>(dim));
  index->offsets_name_ = p + ".off";
  index->dims_name_ = p + ".dims";
  index->halves_name_ = halves;
  FLOWRAG_ASSIGN_OR_RETURN(index->offsets_, vector_internal::GetArray<uint64_t>(
                                                source, index->offsets_name_, /*lazily=*/true));
  FLOWRAG_ASSIGN_OR_RETURN(index->dims_, vector_internal::GetArray<uint16_t>(
                                             source, index->dims_name_, /*lazily=*/true));
  FLOWRAG_ASSIGN_OR_RETURN(index->halves_,
                           vector_internal::GetArray<uint16_t>(source, halves, /*lazily=*/true));
  const FlatArray<uint64_t>& offsets = index->offsets_;
  if (offsets.empty() || offsets.size() - 1 > vector_internal::kMaxVectors) {
    return CorruptArray(index->offsets_name_, std::to_string(offsets.size()) + " offsets");
  }
  if (index->halves_.size() != index->dims_.size()) {
    return CorruptArray(halves, std::to_string(index->halves_.size()) + " values for " +
                                    std::to_string(index->dims_.size()) + " dims");
  }
  const size_t n = offsets.size() - 1;
  index->checked_ = std::make_unique<const CheckedOnce>(n);
  if (offsets.lazy() && index->dims_.lazy() && index->halves_.lazy()) {
    return index;  // each row's offsets, dimensions and values when it is read
  }
  FLOWRAG_RETURN_IF_ERROR(
      vector_internal::CheckOffsets(index->offsets_name_, offsets, n, index->dims_.size()));
  for (size_t r = 0; r < n; ++r) FLOWRAG_RETURN_IF_ERROR(index->CheckRow(r));
  index->checked_.reset();
  return index;
}

}  // namespace flowrag
