// Fuzz target: an untrusted .sqlite file opened through the hardened
// catalog path (src/sql/schema_graph.h SchemaFromSqlite, on
// ReadOnlyDatabase::Open), then its value index (ValueIndex::FromSqlite) and
// one model-style query through ReadOnlyDatabase::Execute.
//
// Input: the file's bytes.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "sql/safe_exec.h"
#include "sql/schema_graph.h"
#include "sql/value_index.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = flowrag::fuzz::ScratchDir() + "/fuzz.sqlite";
  flowrag::fuzz::RemoveSqliteFiles(path);
  flowrag::fuzz::WriteBytes(path, std::string_view(reinterpret_cast<const char*>(data), size));
  // Counts and samples stop after a second, as `flowrag sql` bounds them.
  flowrag::IntrospectionOptions options;
  options.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  std::vector<std::string> warnings;
  auto graph = flowrag::SchemaFromSqlite(path, options, &warnings);
  if (!graph.ok()) {
    FUZZ_CHECK_ERROR(graph.status());
    flowrag::fuzz::RemoveSqliteFiles(path);
    return 0;
  }
  graph->Finalize();
  auto values = flowrag::ValueIndex::FromSqlite(
      path, *graph, {}, std::chrono::steady_clock::now() + std::chrono::seconds(1), &warnings);
  if (!values.ok()) FUZZ_CHECK_ERROR(values.status());
  auto db = flowrag::ReadOnlyDatabase::Open(path);
  if (db.ok()) {
    flowrag::SqlLimits limits;
    limits.time_limit_seconds = 1.0;
    auto rows = (*db)->Execute("SELECT * FROM sqlite_master", limits);
    if (!rows.ok()) FUZZ_CHECK_ERROR(rows.status());
  }
  flowrag::fuzz::RemoveSqliteFiles(path);
  return 0;
}
