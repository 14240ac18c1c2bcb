// Stored vectors: float16, or floats when a coordinate does not fit one
// (storage/vector_blob.h).
#include "storage/vector_blob.h"

#include <cstdint>
#include <cstring>

#include "common/half.h"

namespace flowrag {
namespace {

bool AllFitHalf(const float* x, size_t d) {
  for (size_t i = 0; i < d; ++i) {
    if (!FitsHalf(x[i])) return false;
  }
  return true;
}

}  // namespace

std::string EncodeVectorBlob(const float* x, size_t d) {
  if (!AllFitHalf(x, d)) return std::string(reinterpret_cast<const char*>(x), d * sizeof(float));
  std::string out(d * sizeof(uint16_t), '\0');
  for (size_t i = 0; i < d; ++i) {
    const uint16_t h = FloatToHalf(x[i]);
    std::memcpy(out.data() + i * sizeof h, &h, sizeof h);
  }
  return out;
}

bool IsVectorBlobSize(size_t bytes, size_t d) {
  return bytes == d * sizeof(uint16_t) || bytes == d * sizeof(float);
}

bool DecodeVectorBlob(std::string_view blob, size_t d, float* out) {
  if (d == 0 || !IsVectorBlobSize(blob.size(), d)) return blob.empty() && d == 0;
  if (blob.size() == d * sizeof(uint16_t)) {
    for (size_t i = 0; i < d; ++i) {
      uint16_t h;
      std::memcpy(&h, blob.data() + i * sizeof h, sizeof h);
      out[i] = HalfToFloat(h);
    }
    return true;
  }
  std::memcpy(out, blob.data(), d * sizeof(float));
  if (AllFitHalf(out, d)) {
    for (size_t i = 0; i < d; ++i) out[i] = HalfToFloat(FloatToHalf(out[i]));
  }
  return true;
}

}  // namespace flowrag
