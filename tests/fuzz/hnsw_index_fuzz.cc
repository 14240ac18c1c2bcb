// Fuzz target: HNSW index deserialisation (src/vector/hnsw_index.h
// HnswIndex::Load), then a search and an insert on what it accepts.
//
// Input: the serialised index WITHOUT its trailing checksum; the target
// appends the right one, so the fuzzer reaches the structural checks
// behind it (a wrong checksum is rejected first and would hide them).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "vector/hnsw_index.h"
#include "common/matrix.h"
#include "vector/index_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string buffer(reinterpret_cast<const char*>(data), size);
  const uint64_t checksum = flowrag::vector_internal::Checksum64(buffer.data(), buffer.size());
  buffer.append(reinterpret_cast<const char*>(&checksum), sizeof(checksum));
  auto index = flowrag::HnswIndex::Load(buffer);
  if (!index.ok()) {
    FUZZ_CHECK_ERROR(index.status());
    return 0;
  }
  flowrag::HnswIndex& h = **index;
  const size_t dim = h.Dimension();
  std::vector<float> query(dim, 0.0f);
  if (dim > 0) query[0] = 1.0f;
  flowrag::VectorSearchParams params;
  params.k = 5;
  (void)h.Search(query.data(), params, nullptr);
  // Save of a loaded index loads again, to the same bytes.
  std::string saved;
  FUZZ_CHECK(h.Save(&saved).ok(), "Save of a loaded index failed");
  auto again = flowrag::HnswIndex::Load(saved);
  FUZZ_CHECK(again.ok(), "Save output does not load: " + again.status().ToString());
  std::string resaved;
  FUZZ_CHECK((*again)->Save(&resaved).ok() && resaved == saved, "Save/Load is not stable");
  // Load then Add continues the index.
  if (dim > 0 && dim <= 1024 && h.Size() < 1000) {
    flowrag::FloatMatrix row(1, dim);
    row.data.assign(dim, 0.5f);
    flowrag::Status st = h.Add(row);
    if (!st.ok()) FUZZ_CHECK_ERROR(st);
  }
  return 0;
}
