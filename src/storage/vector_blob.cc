// Stored vectors: the forms of common/vector_bytes.h, rounded to float16
// (storage/vector_blob.h).
#include "storage/vector_blob.h"

#include <cstdint>
#include <cstring>
#include <span>

#include "common/half.h"

namespace flowrag {

std::string EncodeVectorBlob(const float* x, size_t d) {
  std::string out(MaxVectorBytes(d), '\0');
  out.resize(EncodeVectorBytes(x, d, HalfRounding::kRound, reinterpret_cast<uint8_t*>(out.data())));
  return out;
}

bool DecodeVectorBlob(std::string_view blob, size_t d, float* out) {
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(blob.data()), blob.size());
  if (!DecodeVectorBytes(bytes, d, out)) return false;
  if (d == 0 || blob.size() != 4 * d) return true;
  // A float form: rounded as EncodeVectorBlob stores it when every
  // coordinate fits (a format-6 row), so both read the same.
  for (size_t i = 0; i < d; ++i) {
    if (!FitsHalf(out[i])) return true;
  }
  for (size_t i = 0; i < d; ++i) {
    const uint16_t h = FloatToHalf(out[i]);
    out[i] = (h & 0x7fffu) == 0 ? 0.0f : HalfToFloat(h);
  }
  return true;
}

}  // namespace flowrag
