// Fuzz target: a stored vector's bytes (src/storage/vector_blob.h
// DecodeVectorBlob), as a damaged or crafted `embeddings` row holds them.
//
// Input: bytes 0-1 the dimension (1 to 65,536); the rest the blob. Checks:
// no crash or out-of-bounds read or write (the output has exactly d floats),
// a refused blob leaves the output untouched, an accepted one has a size
// IsVectorBytesSize allows, and its values encode again to bytes that decode
// to the same values (zeros as +0).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "storage/vector_blob.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t d = size_t{data[0]} + (size_t{data[1]} << 8) + 1;
  const std::string_view blob(reinterpret_cast<const char*>(data) + 2, size - 2);
  std::vector<float> out(d, -7.0f);
  if (!flowrag::DecodeVectorBlob(blob, d, out.data())) {
    for (float v : out) FUZZ_CHECK(v == -7.0f, "a refused blob wrote its output");
    return 0;
  }
  FUZZ_CHECK(flowrag::IsVectorBytesSize(blob.size(), d), "accepted a size no form has");
  const std::string again = flowrag::EncodeVectorBlob(out.data(), d);
  std::vector<float> back(d);
  FUZZ_CHECK(flowrag::DecodeVectorBlob(again, d, back.data()), "its own encoding refused");
  FUZZ_CHECK(std::memcmp(back.data(), out.data(), d * sizeof(float)) == 0,
             "decode(encode(decoded)) differs");
  return 0;
}
