// The bytes of a stored vector (the `vector` column of the table
// `embeddings`, doc/storage.md "Stored vectors").
//
// A vector x of d coordinates is stored in the smallest of three forms, told
// apart by the blob's size:
//   sparse  ceil(d/8) bytes of bitmap (bit i of byte i/8: x_i is not zero),
//           then the float16 values of the non-zero coordinates in order:
//           ceil(d/8) + 2·nnz bytes, used when that is under 2·d;
//   half    d float16 values: 2·d bytes;
//   float   d floats: 4·d bytes, when a coordinate does not fit a float16
//           (|x| >= 65520, or not finite).
// Little endian. A coordinate is zero when its float16 is (±0): it reads as
// +0 in every form. The built-in embedder's passage vectors fill 34-47% of
// their 1,024 dimensions, so they take ~1 KiB sparse, where their floats
// took 4 KiB; exact search over the float16 values gives the same dense and
// hybrid R@2/R@5 as over floats on every benchmark
// (bench/out/vector_quantization.md).
//
// Stores written before format 7 hold floats for every vector; they read as
// the value the other forms would have stored (DecodeVectorBlob rounds them
// the same way), so a store written then and the same corpus indexed now
// give the same snapshot, bit for bit, without rewriting the old rows.
#ifndef FLOWRAG_STORAGE_VECTOR_BLOB_H_
#define FLOWRAG_STORAGE_VECTOR_BLOB_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace flowrag {

// The largest dimension a stored vector may declare (as the vector indexes'
// bound, vector/flat_index.h): a row claiming more is damaged.
inline constexpr size_t kMaxVectorDimension = size_t{1} << 20;

// The stored bytes of `x` (d floats): the smallest form above. O(d).
std::string EncodeVectorBlob(const float* x, size_t d);

// The sizes a stored vector of d coordinates may have: ceil(d/8) up to
// (not including) 2·d for the sparse form, 2·d, 4·d. O(1). (A sparse blob
// must also hold as many values as its bitmap has bits: DecodeVectorBlob
// checks that.)
bool IsVectorBlobSize(size_t bytes, size_t d);
// ceil(d/8): the bitmap of the sparse form, its smallest size.
size_t SparseVectorBitmapBytes(size_t d);

// Writes the d coordinates `blob` stores to out[0, d): float16 values
// widened, zeros as +0, or a float blob rounded as EncodeVectorBlob would
// store it (DecodeVectorBlob(EncodeVectorBlob(x)) == DecodeVectorBlob(floats
// of x)). False, writing nothing, when the blob is no form of a d-vector. O(d).
bool DecodeVectorBlob(std::string_view blob, size_t d, float* out);

}  // namespace flowrag

#endif  // FLOWRAG_STORAGE_VECTOR_BLOB_H_
