// The bytes of a stored vector (the `vector` column of the table
// `embeddings`, doc/storage.md "Stored vectors").
//
// A vector of d coordinates is stored as d float16 values (2·d bytes, little
// endian), or, when a coordinate does not fit a float16 (|x| >= 65520 or not
// finite), as d floats (4·d bytes). The float16 form halves the store's
// largest table (4 KiB to 2 KiB per passage for the built-in embedder), and
// rounding to 11 significant bits changes no benchmark's dense or hybrid
// R@2/R@5 (bench/out/vector_quantization.md: fp16 exact search against
// float32 on every benchmark). Stores written before this form hold floats
// (4·d bytes) for every vector; they read as what the float16 form would
// have stored (DecodeVectorBlob rounds them the same way), so a store
// written then and one indexed again now give the same snapshot, bit for
// bit, without rewriting the old rows.
#ifndef FLOWRAG_STORAGE_VECTOR_BLOB_H_
#define FLOWRAG_STORAGE_VECTOR_BLOB_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace flowrag {

// The largest dimension a stored vector may declare (as the vector indexes'
// bound, vector/flat_index.h): a row claiming more is damaged.
inline constexpr size_t kMaxVectorDimension = size_t{1} << 20;

// The stored bytes of `x` (d floats): float16 when every coordinate fits
// one, else the floats themselves. O(d).
std::string EncodeVectorBlob(const float* x, size_t d);

// True when `bytes` is a size a stored vector of d coordinates may have
// (2·d or 4·d). O(1).
bool IsVectorBlobSize(size_t bytes, size_t d);

// Writes the d coordinates `blob` stores to out[0, d): float16 values
// widened, or a float blob rounded as EncodeVectorBlob would store it
// (DecodeVectorBlob(EncodeVectorBlob(x)) == DecodeVectorBlob(floats of x)).
// False, writing nothing, when !IsVectorBlobSize(blob.size(), d). O(d).
bool DecodeVectorBlob(std::string_view blob, size_t d, float* out);

}  // namespace flowrag

#endif  // FLOWRAG_STORAGE_VECTOR_BLOB_H_
