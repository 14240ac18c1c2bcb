#include "vector/sparse_rows.h"

#include <cmath>
#include <string>

#include "common/array_scan.h"
#include "vector/index_util.h"

namespace flowrag {

using vector_internal::CorruptArray;

namespace {

struct ArrayNames {
  std::string cols, off, dims, vals;
};

// "<prefix>.cols" etc.; InvalidArgument when too long (ArrayName).
Result<ArrayNames> NamesFor(std::string_view prefix) {
  ArrayNames names;
  FLOWRAG_ASSIGN_OR_RETURN(names.cols, vector_internal::ArrayName(prefix, ".cols"));  // longest
  names.off = std::string(prefix) + ".off";
  names.dims = std::string(prefix) + ".dims";
  names.vals = std::string(prefix) + ".vals";
  return names;
}

}  // namespace

Status SparseRows::ExportArrays(ArraySink& sink, std::string_view prefix) const {
  FLOWRAG_ASSIGN_OR_RETURN(const ArrayNames names, NamesFor(prefix));
  FLOWRAG_RETURN_IF_ERROR(VerifyAll());
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<uint64_t>(names.cols, cols));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint64_t>(names.off, offsets.span(), /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>(names.dims, dims.span(), /*random=*/true));
  return sink.Put<float>(names.vals, values.span(), /*random=*/true);
}

Result<SparseRows> SparseRows::AdoptArrays(const ArraySource& source, std::string_view prefix) {
  FLOWRAG_ASSIGN_OR_RETURN(const ArrayNames names, NamesFor(prefix));
  SparseRows rows;
  FLOWRAG_ASSIGN_OR_RETURN(const uint64_t cols,
                           vector_internal::GetScalar<uint64_t>(source, names.cols));
  FLOWRAG_ASSIGN_OR_RETURN(rows.offsets, vector_internal::GetArray<uint64_t>(source, names.off));
  FLOWRAG_ASSIGN_OR_RETURN(rows.dims,
                           vector_internal::GetArray<uint32_t>(source, names.dims, /*lazily=*/true));
  FLOWRAG_ASSIGN_OR_RETURN(rows.values,
                           vector_internal::GetArray<float>(source, names.vals, /*lazily=*/true));
  if (cols > vector_internal::kMaxAdoptedDimension) {
    return CorruptArray(names.cols, std::to_string(cols) + " columns");
  }
  rows.cols = static_cast<size_t>(cols);
  if (rows.offsets.empty() || rows.offsets.size() - 1 > vector_internal::kMaxVectors) {
    return CorruptArray(names.off, std::to_string(rows.offsets.size()) + " offsets");
  }
  const size_t n = rows.offsets.size() - 1;
  FLOWRAG_RETURN_IF_ERROR(
      vector_internal::CheckOffsets(names.off, rows.offsets, n, rows.dims.size()));
  if (rows.values.size() != rows.dims.size()) {
    return CorruptArray(names.vals, std::to_string(rows.values.size()) + " values for " +
                                        std::to_string(rows.dims.size()) + " dims");
  }
  if (n > 0 && cols == 0) return CorruptArray(names.cols, "rows without columns");
  rows.lazy_rows_ = std::make_shared<const LazyRows>(n, names.dims, names.vals);
  if (!rows.dims.lazy() || !rows.values.lazy()) {  // verified: check every row now
    FLOWRAG_RETURN_IF_ERROR(rows.CheckAllRows());
    rows.lazy_rows_.reset();
  }
  return rows;
}

std::vector<std::string> SparseRows::LazyArrays(std::string_view prefix) {
  return {std::string(prefix) + ".dims", std::string(prefix) + ".vals"};
}

bool SparseRows::RowChecked(size_t row) const {
  return lazy_rows_->checked.Passed(
      row, [&] { return CheckRow(row); }, [&](const Status& s) { dims.ReportDamage(s); });
}

Status SparseRows::CheckRow(size_t row) const {
  const uint64_t first = offsets[row], count = offsets[row + 1] - first;
  FLOWRAG_RETURN_IF_ERROR(dims.Verify(first, count));
  FLOWRAG_RETURN_IF_ERROR(values.Verify(first, count));
  const std::string& name = lazy_rows_->dims_name;
  const std::string at = "row " + std::to_string(row) + ": ";
  if (const size_t i = FirstOutside<uint32_t>(dims.data(), first, first + count, 0,
                                              static_cast<uint32_t>(cols));
      i < first + count) {
    return CorruptArray(name, at + "dimension " + std::to_string(dims[i]) + " of " +
                                  std::to_string(cols) + " out of range");
  }
  bool unordered = false, infinite = false;
  for (uint64_t i = first; i < first + count; ++i) {
    unordered |= i > first && dims[i - 1] >= dims[i];
    infinite |= !std::isfinite(values[i]);
  }
  if (unordered) return CorruptArray(name, at + "dimensions out of order");
  if (infinite) return CorruptArray(lazy_rows_->vals_name, at + "a value is not finite");
  return Status::Ok();
}

Status SparseRows::CheckAllRows() const {
  for (size_t r = 0; r < rows(); ++r) FLOWRAG_RETURN_IF_ERROR(CheckRow(r));
  return Status::Ok();
}

Status SparseRows::VerifyAll() const {
  if (lazy_rows_ == nullptr) return Status::Ok();
  for (size_t r = 0; r < rows(); ++r) {
    if (!RowChecked(r)) return CheckRow(r);
  }
  return Status::Ok();
}

}  // namespace flowrag
