// Fuzz target: opening a store file (src/storage/store.h Store::Open: the
// SQLite header, the "is this a flowrag store" checks, quick_check, format
// migrations) read-only and writable, then cheap reads (Counts, CountGraph,
// Generation, GetMeta).
//
// Input: the file's bytes (an empty input creates a new store).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "storage/store.h"

namespace {

void OpenAndRead(const std::string& path, std::string_view bytes, bool read_only) {
  flowrag::fuzz::RemoveSqliteFiles(path);
  flowrag::fuzz::WriteBytes(path, bytes);
  flowrag::StoreOptions options;
  options.read_only = read_only;
  auto store = flowrag::Store::Open(path, options);
  if (!store.ok()) {
    FUZZ_CHECK_ERROR(store.status());
    return;
  }
  flowrag::Store& s = **store;
  if (auto counts = s.Counts(); !counts.ok()) FUZZ_CHECK_ERROR(counts.status());
  if (auto graph = s.CountGraph(); !graph.ok()) FUZZ_CHECK_ERROR(graph.status());
  if (auto generation = s.Generation(); !generation.ok()) FUZZ_CHECK_ERROR(generation.status());
  if (auto meta = s.GetMeta("format_version"); !meta.ok()) FUZZ_CHECK_ERROR(meta.status());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = flowrag::fuzz::ScratchDir() + "/fuzz.db";
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  OpenAndRead(path, bytes, /*read_only=*/true);
  OpenAndRead(path, bytes, /*read_only=*/false);
  flowrag::fuzz::RemoveSqliteFiles(path);
  return 0;
}
