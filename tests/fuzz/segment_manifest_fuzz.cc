// Fuzz target: the manifest of a segment set (src/segment/manifest.h) and
// what a set does with one (segment_set.h).
//
// Input: byte 0 is the mode, the rest the bytes. Mode bit 0: the manifest's
// trailing checksum is recomputed first (so that mutations reach the header
// and record checks, which the checksum would otherwise refuse first).
//  - ParseManifest: an accepted manifest encodes back to exactly its bytes
//    (the encoding is canonical), its ids ascend and no file number repeats;
//    a refused one is a short Corruption naming the file.
//  - ParseCurrent on the bytes: an accepted CURRENT is EncodeCurrent of its
//    number.
//  - Mode bit 1: the bytes become MANIFEST-00000001 of a scratch directory
//    with a CURRENT naming it, and a read-only SegmentSet opens it: Open must
//    succeed (the files the manifest names do not exist, so it falls back to
//    no segments with notes naming the files, or loads a manifest of none),
//    and never writes.
// Seeds (corpus/segment_manifest/): manifests written by EncodeManifest,
// empty and with segments and tombstones, intact and damaged, CURRENT files.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>

#include "fuzz_util.h"
#include "segment/manifest.h"
#include "segment/segment_set.h"

namespace {

using flowrag::Manifest;
using flowrag::StatusCode;

void FixChecksum(std::string& bytes) {
  if (bytes.size() < flowrag::kManifestChecksumBytes) return;
  const size_t body = bytes.size() - flowrag::kManifestChecksumBytes;
  const uint64_t sum = flowrag::ManifestChecksum(std::string_view(bytes).substr(0, body));
  std::memcpy(bytes.data() + body, &sum, sizeof(sum));
}

void CheckManifest(const std::string& bytes) {
  auto parsed = flowrag::ParseManifest(bytes, "MANIFEST-00000001");
  if (!parsed.ok()) {
    FUZZ_CHECK_ERROR(parsed.status());
    FUZZ_CHECK(parsed.status().code() == StatusCode::kCorruption, parsed.status().ToString());
    FUZZ_CHECK(parsed.status().message().find("MANIFEST-00000001") != std::string::npos,
               parsed.status().ToString());
    return;
  }
  const Manifest& m = *parsed;
  FUZZ_CHECK(flowrag::EncodeManifest(m) == bytes, "the encoding is not canonical");
  std::set<uint64_t> numbers;
  for (size_t i = 0; i < m.segments.size(); ++i) {
    const flowrag::SegmentRecord& r = m.segments[i];
    FUZZ_CHECK(i == 0 || r.id > m.segments[i - 1].id, "ids do not ascend");
    FUZZ_CHECK(numbers.insert(r.id).second && r.id < m.next_file_number, "segment number");
    if (r.tombstones.number != 0) {
      FUZZ_CHECK(
          numbers.insert(r.tombstones.number).second && r.tombstones.number < m.next_file_number,
          "tombstone number");
      FUZZ_CHECK(r.tombstones.deleted >= 1 && r.tombstones.deleted <= r.rows, "deleted");
    }
    FUZZ_CHECK(flowrag::ParseSegmentFileName(r.file_name()).has_value(), r.file_name());
    FUZZ_CHECK(m.Find(r.id) == &r, "Find");
  }
}

void CheckCurrent(const std::string& bytes) {
  auto number = flowrag::ParseCurrent(bytes, "CURRENT");
  if (!number.ok()) {
    FUZZ_CHECK_ERROR(number.status());
    FUZZ_CHECK(number.status().code() == StatusCode::kCorruption, number.status().ToString());
    return;
  }
  FUZZ_CHECK(flowrag::EncodeCurrent(*number) == bytes, "CURRENT is not canonical");
}

void OpenAsASet(const std::string& bytes) {
  const std::string dir = flowrag::fuzz::FreshDir("segment_manifest");
  flowrag::fuzz::WriteBytes(dir + "/MANIFEST-00000001", bytes);
  flowrag::fuzz::WriteBytes(dir + "/CURRENT", flowrag::EncodeCurrent(1));
  flowrag::SegmentSetOptions options;
  options.writable = false;
  auto set = flowrag::SegmentSet::Open(dir, options);
  FUZZ_CHECK(set.ok(), set.status().ToString());
  const auto view = (*set)->Current();
  FUZZ_CHECK(view->segments().empty(), "a set of segments that do not exist");
  for (const flowrag::Status& note : (*set)->open_notes()) {
    FUZZ_CHECK_ERROR(note);
    FUZZ_CHECK(note.message().find(dir) != std::string::npos, note.ToString());
  }
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++files;
  }
  FUZZ_CHECK(files == 2, "a read-only open wrote to the directory");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  CheckCurrent(bytes);
  if (mode & 1) FixChecksum(bytes);
  CheckManifest(bytes);
  if (mode & 2) OpenAsASet(bytes);
  return 0;
}
