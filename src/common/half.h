// IEEE 754 binary16 ("half", float16) conversions: the format of the stored
// passage vectors (storage/vector_blob.h) and of the vector indexes' float16
// rows (vector/quantized.h, vector/half_rows_index.h).
//
// Portable code, no intrinsics: the values are part of the on-disk format, so
// every machine must round the same way (the tests check the conversion
// against every one of the 65,536 halves and the rounding boundaries).
#ifndef FLOWRAG_COMMON_HALF_H_
#define FLOWRAG_COMMON_HALF_H_

#include <cstddef>
#include <cstdint>

namespace flowrag {

// float -> binary16 bits, round to nearest even; NaN stays NaN, overflow
// (|x| >= 65520) gives infinity. O(1).
uint16_t FloatToHalf(float x);
// binary16 bits -> float; exact (every half is a float). O(1).
float HalfToFloat(uint16_t h);

// True when x is finite and rounds to a finite half (|x| < 65520), so
// HalfToFloat(FloatToHalf(x)) is x rounded to 11 significant bits. O(1).
bool FitsHalf(float x);

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_HALF_H_
