// Fuzz target: the record readers of schema induction and the SQL data
// loaders: CSV (src/schema/csv_reader.h ParseCsv; src/sql/spider_data.h
// ParseCsvRecords, the reader of Spider 2.0-lite DDL.csv) and JSON / JSONL
// records (src/schema/json_records.h ReadJsonRecords).
//
// Input: byte 0 picks the reader (0: ParseCsv, 1: ParseCsvRecords,
// 2: ReadJsonRecords of a .jsonl file, 3: of a .json file); the rest is the
// file's content.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/text.h"
#include "fuzz_util.h"
#include "schema/csv_reader.h"
#include "schema/json_records.h"
#include "sql/spider_data.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] & 3) {
    case 0: {
      auto table = flowrag::ParseCsv(bytes, "in.csv");
      if (!table.ok()) {
        FUZZ_CHECK_ERROR(table.status());
        break;
      }
      FUZZ_CHECK(table->rows.size() == table->row_lines.size(), "row_lines");
      for (const auto& name : table->columns) FUZZ_CHECK(flowrag::IsValidUtf8(name), "column");
      for (const auto& row : table->rows) {
        FUZZ_CHECK(row.size() == table->columns.size(), "row width");
        for (const auto& field : row) FUZZ_CHECK(flowrag::IsValidUtf8(field), "field not UTF-8");
      }
      break;
    }
    case 1: {
      std::vector<size_t> lines;
      auto records = flowrag::ParseCsvRecords(bytes, "DDL.csv", &lines);
      if (!records.ok()) {
        FUZZ_CHECK_ERROR(records.status());
        break;
      }
      FUZZ_CHECK(records->size() == lines.size(), "record_lines");
      break;
    }
    default: {
      const std::string path =
          flowrag::fuzz::ScratchDir() + ((data[0] & 3) == 2 ? "/records.jsonl" : "/records.json");
      flowrag::fuzz::WriteBytes(path, bytes);
      size_t transcoded = 0;
      auto records = flowrag::ReadJsonRecords(path, {}, &transcoded);
      if (!records.ok()) {
        FUZZ_CHECK_ERROR(records.status());
        break;
      }
      for (const auto& record : *records) {
        for (const auto& [path, value] : record.values) {
          FUZZ_CHECK(flowrag::IsValidUtf8(path) && flowrag::IsValidUtf8(value), "not UTF-8");
        }
      }
      break;
    }
  }
  return 0;
}
