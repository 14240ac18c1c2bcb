// A vector's bytes: sparse float16, float16, or floats (common/vector_bytes.h).
#include "common/vector_bytes.h"

#include <bit>
#include <cstring>

#include "common/half.h"

namespace flowrag {
namespace {

// float16 bits with negative zero made +0: the one zero the half forms hold.
uint16_t CanonicalHalf(float x) {
  const uint16_t h = FloatToHalf(x);
  return (h & 0x7fffu) == 0 ? 0 : h;
}

// True when x may take a half form under `rounding`.
bool HalfHolds(float x, HalfRounding rounding) {
  if (!FitsHalf(x)) return false;
  return rounding == HalfRounding::kRound || HalfToFloat(FloatToHalf(x)) == x;
}

uint16_t LoadHalf(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof h);
  return h;
}

void StoreHalf(uint16_t h, uint8_t* p) { std::memcpy(p, &h, sizeof h); }

// A stored float16 as the coordinate it reads as: ±0 as +0.
float WidenHalf(uint16_t h) { return (h & 0x7fffu) == 0 ? 0.0f : HalfToFloat(h); }

// The sparse form's values, checked against its bitmap before anything is
// written: as many values as bits, no bit past d.
bool DecodeSparse(std::span<const uint8_t> bytes, size_t d, float* out) {
  const size_t bitmap = SparseVectorBitmapBytes(d);
  const uint8_t* bits = bytes.data();
  size_t set = 0;
  for (size_t b = 0; b < bitmap; ++b) set += static_cast<size_t>(std::popcount(bits[b]));
  if (d % 8 != 0 && (bits[bitmap - 1] >> (d % 8)) != 0) return false;
  if (bytes.size() != bitmap + 2 * set) return false;
  std::memset(out, 0, d * sizeof(float));
  const uint8_t* value = bytes.data() + bitmap;
  for (size_t b = 0; b < bitmap; ++b) {
    for (unsigned byte = bits[b]; byte != 0; byte &= byte - 1) {
      out[b * 8 + static_cast<size_t>(std::countr_zero(byte))] = WidenHalf(LoadHalf(value));
      value += 2;
    }
  }
  return true;
}

}  // namespace

size_t SparseVectorBitmapBytes(size_t d) { return (d + 7) / 8; }

bool IsVectorBytesSize(size_t bytes, size_t d) {
  return (bytes >= SparseVectorBitmapBytes(d) && bytes < 2 * d) || bytes == 2 * d || bytes == 4 * d;
}

size_t EncodeVectorBytes(const float* x, size_t d, HalfRounding rounding, uint8_t* out) {
  size_t nonzero = 0;
  for (size_t i = 0; i < d; ++i) {
    if (!HalfHolds(x[i], rounding)) {
      std::memcpy(out, x, d * sizeof(float));
      return d * sizeof(float);
    }
    nonzero += CanonicalHalf(x[i]) != 0;
  }
  const size_t bitmap = SparseVectorBitmapBytes(d);
  if (bitmap + 2 * nonzero >= 2 * d) {
    for (size_t i = 0; i < d; ++i) StoreHalf(CanonicalHalf(x[i]), out + 2 * i);
    return 2 * d;
  }
  std::memset(out, 0, bitmap);
  uint8_t* value = out + bitmap;
  for (size_t i = 0; i < d; ++i) {
    const uint16_t h = CanonicalHalf(x[i]);
    if (h == 0) continue;
    out[i / 8] = static_cast<uint8_t>(out[i / 8] | (1u << (i % 8)));
    StoreHalf(h, value);
    value += 2;
  }
  return bitmap + 2 * nonzero;
}

bool DecodeVectorBytes(std::span<const uint8_t> bytes, size_t d, float* out) {
  if (d == 0) return bytes.empty();
  if (!IsVectorBytesSize(bytes.size(), d)) return false;
  if (bytes.size() < 2 * d) return DecodeSparse(bytes, d, out);
  if (bytes.size() == 2 * d) {
    for (size_t i = 0; i < d; ++i) out[i] = WidenHalf(LoadHalf(bytes.data() + 2 * i));
    return true;
  }
  std::memcpy(out, bytes.data(), d * sizeof(float));
  return true;
}

}  // namespace flowrag
