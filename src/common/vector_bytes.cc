// A vector's bytes: sparse float16, float16, or floats (common/vector_bytes.h).
#include "common/vector_bytes.h"

#include <algorithm>
#include <bit>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

void WidenPortable(const uint8_t* src, size_t n, float* out) {
  for (size_t i = 0; i < n; ++i) out[i] = WidenHalf(LoadHalf(src + 2 * i));
}

#if defined(__x86_64__)
// Eight at a time with F16C (exact, as HalfToFloat; -0 made +0 first; a
// NaN may come back quieted, still a NaN).
__attribute__((target("avx2,f16c"))) void WidenF16c(const uint8_t* src, size_t n, float* out) {
  const __m128i magnitude = _mm_set1_epi16(0x7fff);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    const __m128i zero = _mm_cmpeq_epi16(_mm_and_si128(h, magnitude), _mm_setzero_si128());
    h = _mm_andnot_si128(zero, h);
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  WidenPortable(src + 2 * i, n - i, out + i);
}

bool HasF16c() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return has;
}
#endif

// n float16 values at src as floats (WidenHalf each): what decoding a
// packed row of an int8 index spends its time on (rescoring, doc/scale.md).
void WidenHalves(const uint8_t* src, size_t n, float* out) {
#if defined(__x86_64__)
  if (HasF16c()) return WidenF16c(src, n, out);
#endif
  WidenPortable(src, n, out);
}

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
  float widened[64];
  for (size_t b = 0; b < bitmap; b += 8) {  // 64 coordinates at a time
    uint64_t word = 0;
    std::memcpy(&word, bits + b, std::min<size_t>(8, bitmap - b));  // little endian
    const auto count = static_cast<size_t>(std::popcount(word));
    WidenHalves(value, count, widened);
    value += 2 * count;
    for (size_t k = 0; word != 0; word &= word - 1, ++k) {
      out[b * 8 + static_cast<size_t>(std::countr_zero(word))] = widened[k];
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
    WidenHalves(bytes.data(), d, out);
    return true;
  }
  std::memcpy(out, bytes.data(), d * sizeof(float));
  return true;
}

}  // namespace flowrag
