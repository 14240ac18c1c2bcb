// Rows in the smallest exact form each (vector/packed_rows.h).
#include "vector/packed_rows.h"

#include <cstring>
#include <span>
#include <vector>

#include "common/vector_bytes.h"
#include "vector/index_util.h"

namespace flowrag {

namespace {
constexpr std::string_view kBytes = ".packed";
constexpr std::string_view kOffsets = ".offsets";
}  // namespace

PackedRows::PackedRows(size_t dim) : dim_(dim), offsets_(std::vector<uint64_t>{0}) {}

void PackedRows::Append(const float* x) {
  std::vector<uint8_t>& bytes = bytes_.Mutable();
  const size_t at = bytes.size();
  bytes.resize(at + MaxVectorBytes(dim_));
  bytes.resize(at + EncodeVectorBytes(x, dim_, HalfRounding::kExact, bytes.data() + at));
  bytes_.Sync();
  offsets_.Mutable().push_back(bytes.size());
  offsets_.Sync();
}

bool PackedRows::Decode(uint32_t id, float* out) const {
  if (!offsets_.Verify(id, 2).ok()) return false;  // reported by the check
  const uint64_t begin = offsets_[id], end = offsets_[id + 1];
  if (begin > end || end > bytes_.size()) {
    offsets_.ReportDamage(Status::Corruption(
        "packed row " + std::to_string(id) + ": offsets " + std::to_string(begin) + ".." +
        std::to_string(end) + " outside " + std::to_string(bytes_.size()) + " bytes"));
    return false;
  }
  if (!bytes_.Verify(begin, end - begin).ok()) return false;
  if (DecodeVectorBytes(std::span<const uint8_t>(bytes_.data() + begin, end - begin), dim_, out)) {
    return true;
  }
  bytes_.ReportDamage(Status::Corruption("packed row " + std::to_string(id) + ": " +
                                         std::to_string(end - begin) + " bytes are no form of a " +
                                         std::to_string(dim_) + "-vector"));
  return false;
}

bool PackedRows::Read(uint32_t id, float* out) const {
  if (Decode(id, out)) return true;
  std::memset(out, 0, dim_ * sizeof(float));
  return false;
}

Status PackedRows::ExportArrays(ArraySink& sink, std::string_view prefix) const {
  FLOWRAG_ASSIGN_OR_RETURN(const std::string bytes, vector_internal::ArrayName(prefix, kBytes));
  FLOWRAG_ASSIGN_OR_RETURN(const std::string offsets, vector_internal::ArrayName(prefix, kOffsets));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint8_t>(bytes, bytes_.span(), /*random=*/true));
  return sink.Put<uint64_t>(offsets, offsets_.span(), /*random=*/true);
}

bool PackedRows::HasArrays(const ArraySource& source, std::string_view prefix) {
  return source.Has(std::string(prefix) + std::string(kBytes));
}

std::vector<std::string> PackedRows::LazyArrays(std::string_view prefix) {
  return {std::string(prefix) + std::string(kBytes), std::string(prefix) + std::string(kOffsets)};
}

Result<PackedRows> PackedRows::AdoptArrays(const ArraySource& source, std::string_view prefix,
                                           size_t dim, size_t rows) {
  FLOWRAG_ASSIGN_OR_RETURN(const std::string bytes, vector_internal::ArrayName(prefix, kBytes));
  FLOWRAG_ASSIGN_OR_RETURN(const std::string offsets, vector_internal::ArrayName(prefix, kOffsets));
  PackedRows packed(dim);
  FLOWRAG_ASSIGN_OR_RETURN(packed.bytes_,
                           vector_internal::GetArray<uint8_t>(source, bytes, /*lazily=*/true));
  FLOWRAG_ASSIGN_OR_RETURN(packed.offsets_,
                           vector_internal::GetArray<uint64_t>(source, offsets, /*lazily=*/true));
  if (packed.offsets_.size() != rows + 1) {
    return vector_internal::CorruptArray(
        offsets,
        std::to_string(packed.offsets_.size()) + " offsets for " + std::to_string(rows) + " rows");
  }
  return packed;
}

Status PackedRows::Own() {
  if (!bytes_.borrowed() && !offsets_.borrowed()) return Status::Ok();
  FLOWRAG_RETURN_IF_ERROR(offsets_.VerifyAll());
  FLOWRAG_RETURN_IF_ERROR(bytes_.VerifyAll());
  FLOWRAG_RETURN_IF_ERROR(
      vector_internal::CheckOffsets("packed rows offsets", offsets_.span(), size(), bytes_.size()));
  std::vector<float> row(dim_);
  for (uint32_t i = 0; i < size(); ++i) {
    if (!Read(i, row.data())) {
      return Status::Corruption("packed row " + std::to_string(i) + " is no form of a " +
                                std::to_string(dim_) + "-vector");
    }
  }
  bytes_.Mutable();
  offsets_.Mutable();
  bytes_.Sync();
  offsets_.Sync();
  return Status::Ok();
}

}  // namespace flowrag
