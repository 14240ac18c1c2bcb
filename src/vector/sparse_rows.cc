#include "vector/sparse_rows.h"

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
  FLOWRAG_ASSIGN_OR_RETURN(rows.dims, vector_internal::GetArray<uint32_t>(source, names.dims));
  FLOWRAG_ASSIGN_OR_RETURN(rows.values, vector_internal::GetArray<float>(source, names.vals));
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
  const size_t entries = rows.dims.size();
  // (cols is at most kMaxAdoptedDimension, checked above.)
  if (const size_t i = FirstOutside<uint32_t>(rows.dims.data(), 0, entries, 0,
                                              static_cast<uint32_t>(cols));
      i < entries) {
    return CorruptArray(names.dims, "entry " + std::to_string(i) + ": dimension " +
                                        std::to_string(rows.dims[i]) + " of " +
                                        std::to_string(cols) + " out of range");
  }
  if (const size_t i = FirstNonFinite(rows.values.span()); i < entries) {
    return CorruptArray(names.vals, "entry " + std::to_string(i) + ": a value is not finite");
  }
  for (size_t r = 0; r < n; ++r) {
    bool unordered = false;
    for (uint64_t i = rows.offsets[r] + 1; i < rows.offsets[r + 1]; ++i) {
      unordered |= rows.dims[i - 1] >= rows.dims[i];
    }
    if (unordered) {
      return CorruptArray(names.dims, "row " + std::to_string(r) + ": dimensions out of order");
    }
  }
  return rows;
}

}  // namespace flowrag
