#include "vector/sparse_rows.h"

#include <cmath>
#include <string>

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
  for (size_t r = 0; r < n; ++r) {
    for (uint64_t i = rows.offsets[r]; i < rows.offsets[r + 1]; ++i) {
      if (rows.dims[i] >= cols || (i > rows.offsets[r] && rows.dims[i - 1] >= rows.dims[i])) {
        return CorruptArray(names.dims, "row " + std::to_string(r) + ": dimension " +
                                            std::to_string(rows.dims[i]) + " of " +
                                            std::to_string(cols) + " out of range or order");
      }
      if (!std::isfinite(rows.values[i])) {
        return CorruptArray(names.vals, "row " + std::to_string(r) + ": a value is not finite");
      }
    }
  }
  return rows;
}

}  // namespace flowrag
