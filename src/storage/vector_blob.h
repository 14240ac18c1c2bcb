// The bytes of a stored vector (the `vector` column of the table
// `embeddings`, doc/storage.md "Stored vectors").
//
// A vector is stored in the smallest of the forms of common/vector_bytes.h
// (sparse float16, float16, floats), its coordinates rounded to float16
// whenever every one fits (|x| < 65520, finite): HalfRounding::kRound.
// The built-in embedder's passage vectors fill 34-47% of
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

#include "common/vector_bytes.h"

namespace flowrag {

// The largest dimension a stored vector may declare (as the vector indexes'
// bound, vector/flat_index.h): a row claiming more is damaged.
inline constexpr size_t kMaxVectorDimension = size_t{1} << 20;

// The stored bytes of `x` (d floats): the smallest form, rounded. O(d).
std::string EncodeVectorBlob(const float* x, size_t d);

// Writes the d coordinates `blob` stores to out[0, d): float16 values
// widened, zeros as +0, or a float blob rounded as EncodeVectorBlob would
// store it (DecodeVectorBlob(EncodeVectorBlob(x)) == DecodeVectorBlob(floats
// of x)). False, writing nothing, when the blob is no form of a d-vector. O(d).
bool DecodeVectorBlob(std::string_view blob, size_t d, float* out);

}  // namespace flowrag

#endif  // FLOWRAG_STORAGE_VECTOR_BLOB_H_
