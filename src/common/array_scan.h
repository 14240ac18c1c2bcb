// Scans of large arrays for the first element that breaks a rule, in
// chunks the compiler vectorizes: each chunk is reduced (a min and max, an
// OR of flags) with no exit inside it, and only a chunk that holds a bad
// element is searched element by element. What adopting structures from a
// segment runs over every offset, index and value it checks (issue 34: the
// per-element early exits cost 0.6 s of CPU at a 10^6-passage open); the
// callers name the array and say what is wrong.
//
// Thread-safety: pure functions. Each is O(length), and returns `end` (or
// the array's size) when no element breaks the rule.
#ifndef FLOWRAG_COMMON_ARRAY_SCAN_H_
#define FLOWRAG_COMMON_ARRAY_SCAN_H_

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

namespace flowrag {

// Elements per chunk: a fixed trip count, so that -O2 vectorizes the loop.
inline constexpr size_t kScanChunk = 1024;

// The first index in [begin, end) of `v` whose value is outside [lo, hi).
template <class T>
size_t FirstOutside(const T* v, size_t begin, size_t end, T lo, T hi) {
  size_t b = begin;
  for (; b + kScanChunk <= end; b += kScanChunk) {
    const T* p = v + b;
    T min = p[0], max = p[0];
    for (size_t j = 0; j < kScanChunk; ++j) {
      min = p[j] < min ? p[j] : min;
      max = p[j] > max ? p[j] : max;
    }
    if (min < lo || max >= hi) break;
  }
  for (size_t i = b; i < end; ++i) {  // the chunk that holds a bad value, or the tail
    if (v[i] < lo || v[i] >= hi) return i;
  }
  return end;
}

// The first index of `v` (of `n` elements) whose value is `value`.
template <class T>
size_t FirstEqual(const T* v, size_t n, T value) {
  size_t b = 0;
  for (; b + kScanChunk <= n; b += kScanChunk) {
    const T* p = v + b;
    T found = 0;
    for (size_t j = 0; j < kScanChunk; ++j) found |= static_cast<T>(p[j] == value);
    if (found != 0) break;
  }
  for (size_t i = b; i < n; ++i) {
    if (v[i] == value) return i;
  }
  return n;
}

// The first i >= 1 with offsets[i] < offsets[i - 1].
inline size_t FirstDecrease(std::span<const uint64_t> offsets) {
  // (a[i] - a[i-1]) | a[i] has its top bit set when a[i] < a[i-1] (or a
  // value is 2^63 or more, which the exact loop then judges).
  size_t b = 1;
  for (; b + kScanChunk <= offsets.size(); b += kScanChunk) {
    const uint64_t* p = offsets.data() + b;
    uint64_t top = 0;
    for (size_t j = 0; j < kScanChunk; ++j) top |= (p[j] - p[j - 1]) | p[j];
    if (top >> 63 != 0) break;
  }
  for (size_t i = b; i < offsets.size(); ++i) {
    if (offsets[i] < offsets[i - 1]) return i;
  }
  return offsets.size();
}

// The first value that is an infinity or a NaN (its exponent bits all set).
template <class T>
size_t FirstNonFinite(std::span<const T> values) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  using Bits = std::conditional_t<std::is_same_v<T, float>, uint32_t, uint64_t>;
  constexpr Bits kExponent =
      static_cast<Bits>(std::is_same_v<T, float> ? 0x7f800000ull : 0x7ff0000000000000ull);
  size_t b = 0;
  for (; b + kScanChunk <= values.size(); b += kScanChunk) {
    const T* p = values.data() + b;
    Bits infinite = 0;
    for (size_t j = 0; j < kScanChunk; ++j) {
      infinite |= static_cast<Bits>((std::bit_cast<Bits>(p[j]) & kExponent) == kExponent);
    }
    if (infinite != 0) break;
  }
  for (size_t i = b; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) return i;
  }
  return values.size();
}

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_ARRAY_SCAN_H_
