#include "vector/index_util.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "common/array_scan.h"

namespace flowrag::vector_internal {

Status ValidateRows(const FloatMatrix& rows, size_t dim, size_t current_size) {
  if (rows.cols != dim) {
    return Status::InvalidArgument("vector index Add: expected rows with " + std::to_string(dim) +
                                   " columns (the index dimension), got " +
                                   std::to_string(rows.cols));
  }
  if (rows.data.size() != rows.rows * rows.cols) {
    return Status::InvalidArgument("vector index Add: matrix data holds " +
                                   std::to_string(rows.data.size()) +
                                   " values, expected rows*cols = " + std::to_string(rows.rows) +
                                   "*" + std::to_string(rows.cols));
  }
  if (rows.rows > kMaxVectors - current_size) {
    return Status::InvalidArgument("vector index Add: " + std::to_string(rows.rows) +
                                   " more rows would exceed the limit of " +
                                   std::to_string(kMaxVectors) + " vectors");
  }
  for (size_t i = 0; i < rows.data.size(); ++i) {
    if (!std::isfinite(rows.data[i])) {
      return Status::InvalidArgument("vector index Add: row " + std::to_string(i / dim) +
                                     ", column " + std::to_string(i % dim) +
                                     ": expected a finite float, got " +
                                     std::to_string(rows.data[i]));
    }
  }
  return Status::Ok();
}

uint64_t Checksum64(const char* p, size_t n) {
  constexpr uint64_t kMul1 = 0x9E3779B97F4A7C15ull;
  constexpr uint64_t kMul2 = 0xC2B2AE3D27D4EB4Full;
  uint64_t h = 0x27D4EB2F165667C5ull ^ (n * kMul1);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = std::rotl(h ^ (w * kMul2), 31) * kMul1;
  }
  uint64_t tail = 0;
  if (i < n) std::memcpy(&tail, p + i, n - i);
  h = std::rotl(h ^ (tail * kMul2), 31) * kMul1;
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return h;
}

Result<std::string> ArrayName(std::string_view prefix, std::string_view suffix) {
  std::string name = std::string(prefix) + std::string(suffix);
  if (prefix.empty() || name.size() > 31) {
    return Status::InvalidArgument("array name \"" + name + "\": the prefix must be 1 to " +
                                   std::to_string(31 - suffix.size()) + " bytes");
  }
  return name;
}

Status CorruptArray(std::string_view name, const std::string& what) {
  return Status::Corruption(std::string(name) + ": " + what);
}

Status CheckOffsets(const std::string& name, std::span<const uint64_t> offsets, size_t lists,
                    size_t entries) {
  if (offsets.size() != lists + 1) {
    return CorruptArray(
        name, std::to_string(offsets.size()) + " offsets for " + std::to_string(lists) + " lists");
  }
  if (offsets[0] != 0) return CorruptArray(name, "the first offset is not 0");
  if (const size_t i = FirstDecrease(offsets); i < offsets.size()) {
    return CorruptArray(name, "offset " + std::to_string(i) + " decreases");
  }
  if (offsets.back() != entries) {
    return CorruptArray(name, "the last offset " + std::to_string(offsets.back()) + " is not the " +
                                  std::to_string(entries) + " entries");
  }
  return Status::Ok();
}

namespace {
// "a is worse than b": makes std::*_heap keep the worst hit at the front.
struct Better {
  bool operator()(const VectorHit& a, const VectorHit& b) const { return HitBefore(a, b); }
};
}  // namespace

void TopK::PushHeap() { std::push_heap(heap_.begin(), heap_.end(), Better()); }
void TopK::PopHeap() { std::pop_heap(heap_.begin(), heap_.end(), Better()); }

std::vector<VectorHit> TopK::Take() {
  std::vector<VectorHit> out = std::move(heap_);
  heap_.clear();
  std::sort(out.begin(), out.end(), HitBefore);
  return out;
}

}  // namespace flowrag::vector_internal
