// Fuzz target: OpenIE import (src/extract/openie_import.h ReadOpenIe with
// DetectOpenIeFormat, then ToExtraction and AddTitleEntity on every record).
//
// Input: byte 0 picks the file name (bits 0-1: .jsonl, .json, .txt detected
// by content) and skip_bad_records (bit 2); the rest is the file's content.
#include <cstddef>
#include <cstdint>
#include <string>

#include "extract/openie_import.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const kNames[] = {"openie.jsonl", "results.json", "openie.txt", "x.ndjson"};
  const uint8_t mode = data[0];
  const std::string path = flowrag::fuzz::ScratchDir() + "/openie-" + kNames[mode & 3];
  flowrag::fuzz::WriteBytes(path, std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));

  flowrag::OpenIeReadOptions options;
  options.skip_bad_records = (mode & 4) != 0;
  flowrag::OpenIeReport report;
  flowrag::OpenIePassageMatcher matcher;
  matcher.AddPassage(1, "1", "Title", "text");
  int64_t passage = 0;
  flowrag::Status st = flowrag::ReadOpenIe(
      path, options,
      [&](flowrag::OpenIeRecord&& record) {
        (void)matcher.Find(record);
        flowrag::PassageExtraction extraction = flowrag::ToExtraction(record, ++passage, &report);
        flowrag::AddTitleEntity(record.passage_key.substr(0, 16), &extraction);
        return flowrag::Status::Ok();
      },
      &report);
  if (!st.ok()) FUZZ_CHECK_ERROR(st);
  FUZZ_CHECK(report.messages.size() <= options.max_report_messages, "too many report messages");
  return 0;
}
