// A vector's coordinates as bytes, in the smallest of three forms, told
// apart by their size (d coordinates):
//   sparse  ceil(d/8) bytes of bitmap (bit i of byte i/8: x_i is not zero),
//           then the float16 values of the non-zero coordinates in order:
//           ceil(d/8) + 2·nnz bytes, used when that is under 2·d;
//   half    d float16 values: 2·d bytes;
//   float   d floats: 4·d bytes.
// Little endian. A coordinate is zero when its float16 is (±0): it reads as
// +0 in the half forms.
//
// Two users, two roundings: the store's vectors (storage/vector_blob.h,
// doc/storage.md "Stored vectors") are rounded to float16 whenever every
// coordinate fits one (HalfRounding::kRound); a vector index's packed rows
// (vector/packed_rows.h) take a half form only when it holds every
// coordinate exactly (kExact), so a row reads back as the floats it was
// given, and the store's vectors, float16 values already, take ~1 KiB
// sparse instead of 4 KiB.
#ifndef FLOWRAG_COMMON_VECTOR_BYTES_H_
#define FLOWRAG_COMMON_VECTOR_BYTES_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace flowrag {

enum class HalfRounding {
  // A half form when every coordinate FitsHalf (rounded to nearest even).
  kRound,
  // A half form only when every coordinate is a float16 value exactly (-0
  // included: it reads back as +0, which every sum treats alike).
  kExact,
};

// ceil(d/8): the sparse form's bitmap, its smallest size. O(1).
size_t SparseVectorBitmapBytes(size_t d);
// The sizes the forms of a d-vector have: ceil(d/8) up to (not including)
// 2·d for the sparse form, 2·d, 4·d. O(1). (A sparse form must also hold as
// many values as its bitmap has bits: DecodeVectorBytes checks that.)
bool IsVectorBytesSize(size_t bytes, size_t d);
// The most bytes a d-vector's form takes: 4·d. O(1).
inline size_t MaxVectorBytes(size_t d) { return 4 * d; }

// Writes the smallest form of x (d floats) that `rounding` allows to
// out[0, n) and returns n. REQUIRES: out holds MaxVectorBytes(d) bytes. O(d),
// no allocation.
size_t EncodeVectorBytes(const float* x, size_t d, HalfRounding rounding, uint8_t* out);

// Writes the d coordinates `bytes` holds to out[0, d): float16 values
// widened (zeros as +0), a float form as it is. False, writing nothing, when
// the bytes are no form of a d-vector (their size, or a sparse form's
// bitmap against its values). O(d).
bool DecodeVectorBytes(std::span<const uint8_t> bytes, size_t d, float* out);

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_VECTOR_BYTES_H_
