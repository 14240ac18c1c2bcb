// Fuzz target: the document loaders (src/ingest/loaders.h LoadSource) on one
// file, and the chunkers (ChunkText) on every document they return.
//
// Input: byte 0 picks the file type (bits 0-1: .jsonl, .json, .txt, .md) and
// the options (bit 2: InvalidUtf8::kReplace, bit 3: skip_bad_records); the
// rest is the file's content.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/text.h"
#include "fuzz_util.h"
#include "ingest/chunker.h"
#include "ingest/loaders.h"

namespace {

void CheckChunks(const flowrag::RawDocument& doc) {
  for (auto strategy : {flowrag::ChunkOptions::Strategy::kWordWindow,
                        flowrag::ChunkOptions::Strategy::kBoundary}) {
    flowrag::ChunkOptions o;
    o.strategy = strategy;
    o.window_words = 8;  // small, so short inputs make several chunks
    o.overlap_words = 3;
    o.boundary_threshold_chars = 64;
    o.max_chars = 48;
    o.overlap_chars = 8;
    FUZZ_CHECK(o.Validate().ok(), o.Validate().ToString());
    for (const flowrag::Chunk& c : flowrag::ChunkText(doc.text, o)) {
      FUZZ_CHECK(c.begin <= c.end && c.end <= doc.text.size(), "chunk out of range");
      FUZZ_CHECK(flowrag::IsValidUtf8(std::string_view(doc.text).substr(c.begin, c.end - c.begin)),
                 "chunk splits a UTF-8 sequence");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const kNames[] = {"in.jsonl", "in.json", "in.txt", "in.md"};
  const uint8_t mode = data[0];
  const std::string path = flowrag::fuzz::ScratchDir() + "/documents-" + kNames[mode & 3];
  flowrag::fuzz::WriteBytes(path, std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));

  flowrag::LoadOptions options;
  if (mode & 4) options.invalid_utf8 = flowrag::LoadOptions::InvalidUtf8::kReplace;
  options.skip_bad_records = (mode & 8) != 0;
  flowrag::LoadReport report;
  flowrag::Status st = flowrag::LoadSource(
      path, options,
      [](flowrag::RawDocument&& doc) {
        FUZZ_CHECK(flowrag::IsValidUtf8(doc.text), "document text is not UTF-8: " + doc.external_id);
        CheckChunks(doc);
        return flowrag::Status::Ok();
      },
      &report);
  if (!st.ok()) FUZZ_CHECK_ERROR(st);
  FUZZ_CHECK(report.messages.size() <= options.max_report_messages, "too many report messages");
  return 0;
}
