// PackedRows: vectors held row by row in the smallest form that keeps them
// exactly (common/vector_bytes.h, HalfRounding::kExact): sparse float16,
// float16, or floats. What an int8 FlatIndex rescores from
// (vector/flat_index.h).
//
// Why: a store's passage vectors are float16 values (storage/vector_blob.h),
// and the built-in embedder's fill 34-47% of their 1,024 dimensions, so a
// row takes ~1 KiB here where its floats took 4 KiB, and a row reads back
// as exactly the floats it was given: every score computed from it is the
// one the floats gave, bit for bit. Vectors that are not float16 values
// (another embedder's, a test's) keep their floats, 4·d bytes.
//
// Layout: the rows' bytes end to end ("bytes") and n + 1 offsets into them
// ("offsets", the first 0); row i is bytes[offsets[i], offsets[i+1]).
// Memory: Σ row sizes + 8·(n + 1) bytes.
//
// Adopted from an ArraySource (a mapped segment), both arrays are borrowed
// lazily: Read verifies a row's offsets and bytes at its first read, and a
// row whose bytes fail their checksum or are no form of a d-vector reads as
// zeros (its damage reported to the source). So adoption reads nothing.
//
// Thread-safety: Append needs exclusive access; Read is const and may run
// concurrently with other Reads.
#ifndef FLOWRAG_VECTOR_PACKED_ROWS_H_
#define FLOWRAG_VECTOR_PACKED_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/array_io.h"
#include "common/flat_array.h"
#include "flowrag/status.h"

namespace flowrag {

class PackedRows {
 public:
  explicit PackedRows(size_t dim = 0);

  size_t size() const { return offsets_.size() - 1; }
  size_t dim() const { return dim_; }
  // The bytes held (both arrays; borrowed ones counted too).
  size_t MemoryBytes() const { return bytes_.bytes() + offsets_.bytes(); }
  bool lazy() const { return bytes_.lazy() || offsets_.lazy(); }

  // Appends x (dim() floats). Amortised O(d). REQUIRES: not adopted (call
  // Own() first).
  void Append(const float* x);
  // Writes row `id` to out[0, dim()). False, with zeros written, when the
  // row is damaged (adopted: its offsets or bytes fail their checksum or
  // their meaning). REQUIRES: id < size(). O(d).
  bool Read(uint32_t id, float* out) const;

  // "<prefix>.packed" (the bytes, random access) and "<prefix>.offsets".
  Status ExportArrays(ArraySink& sink, std::string_view prefix) const;
  static bool HasArrays(const ArraySource& source, std::string_view prefix);
  // The rows of those arrays, borrowed lazily (above): Corruption naming an
  // array when there are not `rows` + 1 offsets. Each row's offsets and
  // bytes are checked at its read. O(1).
  static Result<PackedRows> AdoptArrays(const ArraySource& source, std::string_view prefix,
                                        size_t dim, size_t rows);
  // The arrays AdoptArrays borrows lazily.
  static std::vector<std::string> LazyArrays(std::string_view prefix);
  // Verifies every row, then copies borrowed arrays into owned ones (before
  // Append). Corruption naming the first damaged row. O(bytes).
  Status Own();

 private:
  // Read without the zeros: false when the row is damaged (reported).
  bool Decode(uint32_t id, float* out) const;

  size_t dim_;
  FlatArray<uint8_t> bytes_;
  FlatArray<uint64_t> offsets_;
};

}  // namespace flowrag

#endif  // FLOWRAG_VECTOR_PACKED_ROWS_H_
