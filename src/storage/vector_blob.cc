// Stored vectors: sparse float16, float16, or floats where a coordinate does
// not fit a float16 (storage/vector_blob.h).
#include "storage/vector_blob.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/half.h"

namespace flowrag {
namespace {

bool AllFitHalf(const float* x, size_t d) {
  for (size_t i = 0; i < d; ++i) {
    if (!FitsHalf(x[i])) return false;
  }
  return true;
}

// float16 bits with negative zero made +0: the one zero every form stores.
uint16_t CanonicalHalf(float x) {
  const uint16_t h = FloatToHalf(x);
  return (h & 0x7fffu) == 0 ? 0 : h;
}

uint16_t LoadHalf(const char* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof h);
  return h;
}

void StoreHalf(uint16_t h, char* p) { std::memcpy(p, &h, sizeof h); }

// A stored float16 as the coordinate it reads as: ±0 as +0.
float WidenHalf(uint16_t h) { return (h & 0x7fffu) == 0 ? 0.0f : HalfToFloat(h); }

// The sparse form's values, checked against its bitmap before anything is
// written: as many values as bits, no bit past d.
bool DecodeSparse(std::string_view blob, size_t d, float* out) {
  const size_t bitmap = SparseVectorBitmapBytes(d);
  const auto* bits = reinterpret_cast<const unsigned char*>(blob.data());
  size_t set = 0;
  for (size_t b = 0; b < bitmap; ++b) set += static_cast<size_t>(std::popcount(bits[b]));
  if (d % 8 != 0 && (bits[bitmap - 1] >> (d % 8)) != 0) return false;
  if (blob.size() != bitmap + 2 * set) return false;
  const char* value = blob.data() + bitmap;
  for (size_t i = 0; i < d; ++i) {
    if ((bits[i / 8] >> (i % 8)) & 1u) {
      out[i] = WidenHalf(LoadHalf(value));
      value += 2;
    } else {
      out[i] = 0.0f;
    }
  }
  return true;
}

}  // namespace

size_t SparseVectorBitmapBytes(size_t d) { return (d + 7) / 8; }

std::string EncodeVectorBlob(const float* x, size_t d) {
  if (!AllFitHalf(x, d)) return std::string(reinterpret_cast<const char*>(x), d * sizeof(float));
  std::vector<uint16_t> halves(d);
  size_t nonzero = 0;
  for (size_t i = 0; i < d; ++i) {
    halves[i] = CanonicalHalf(x[i]);
    nonzero += halves[i] != 0;
  }
  const size_t bitmap = SparseVectorBitmapBytes(d);
  if (bitmap + 2 * nonzero < 2 * d) {
    std::string out(bitmap + 2 * nonzero, '\0');
    char* value = out.data() + bitmap;
    for (size_t i = 0; i < d; ++i) {
      if (halves[i] == 0) continue;
      out[i / 8] = static_cast<char>(out[i / 8] | (1 << (i % 8)));
      StoreHalf(halves[i], value);
      value += 2;
    }
    return out;
  }
  std::string out(2 * d, '\0');
  for (size_t i = 0; i < d; ++i) StoreHalf(halves[i], out.data() + 2 * i);
  return out;
}

bool IsVectorBlobSize(size_t bytes, size_t d) {
  return (bytes >= SparseVectorBitmapBytes(d) && bytes < 2 * d) || bytes == 2 * d || bytes == 4 * d;
}

bool DecodeVectorBlob(std::string_view blob, size_t d, float* out) {
  if (d == 0) return blob.empty();
  if (!IsVectorBlobSize(blob.size(), d)) return false;
  if (blob.size() < 2 * d) return DecodeSparse(blob, d, out);
  if (blob.size() == 2 * d) {
    for (size_t i = 0; i < d; ++i) out[i] = WidenHalf(LoadHalf(blob.data() + 2 * i));
    return true;
  }
  std::memcpy(out, blob.data(), d * sizeof(float));
  if (AllFitHalf(out, d)) {
    for (size_t i = 0; i < d; ++i) out[i] = WidenHalf(FloatToHalf(out[i]));
  }
  return true;
}

}  // namespace flowrag
