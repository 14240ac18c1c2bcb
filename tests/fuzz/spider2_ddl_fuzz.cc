// Fuzz target: a Spider 2.0-lite schema folder (src/sql/spider_data.h
// LoadSpider2Database: DDL.csv and the per-table .json files), then the
// hardened in-memory database its DDL builds (SchemaFromSpider2, which runs
// Spider2SchemaDatabase: untrusted DDL under the read-only policy).
//
// Input: the files of the folder separated by kSeparator: DDL.csv first,
// then t0.json, t1.json, ... (at most 8).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "sql/schema_graph.h"
#include "sql/spider_data.h"

namespace {
constexpr std::string_view kSeparator = "\n--8<--\n";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string dir = flowrag::fuzz::FreshDir("spider2_ddl") + "/DB_FUZZ";
  std::filesystem::create_directories(dir);
  const auto parts = flowrag::fuzz::SplitInput(input, kSeparator);
  flowrag::fuzz::WriteBytes(dir + "/DDL.csv", parts[0]);
  for (size_t i = 1; i < parts.size() && i <= 8; ++i) {
    flowrag::fuzz::WriteBytes(dir + "/t" + std::to_string(i - 1) + ".json", parts[i]);
  }
  auto db = flowrag::LoadSpider2Database(dir);
  if (!db.ok()) {
    FUZZ_CHECK_ERROR(db.status());
    return 0;
  }
  auto graph = flowrag::SchemaFromSpider2(*db);
  if (!graph.ok()) {
    FUZZ_CHECK_ERROR(graph.status());
    return 0;
  }
  graph->Finalize();
  return 0;
}
