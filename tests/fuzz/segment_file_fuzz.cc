// Fuzz target: a segment file (src/segment/segment_reader.h). The bytes go
// to a scratch file; SegmentReader::Open maps it and checks its header and
// table; then every section is read by its element type (Section<T>) and as
// bytes (SectionBytes), every byte handed out is touched, and VerifyAll
// runs. Invariants: an accepted file's sections lie inside it, aligned as
// the format says and in order; a section read either fails with a short
// Corruption (a checksum) or returns exactly its length; VerifyAll agrees
// with the reads.
//
// Input: byte 0 is the mode, the rest the file's bytes. Mode bit 0: the
// header and table checksums are recomputed before the open (so that
// mutations reach the header's fields and the table entries, which a
// checksum would otherwise refuse first); bit 1: the sections' checksums
// too (so that damaged entries reach the reads). Seeds
// (corpus/segment_file/) are small segments written by SegmentWriter,
// intact and damaged, in both modes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "common/checksum.h"
#include "fuzz_util.h"
#include "segment/segment_reader.h"

namespace {

using flowrag::ElementType;
using flowrag::SectionInfo;
using flowrag::SegmentReader;
using flowrag::Status;
using flowrag::StatusCode;

// Reads every byte (into a volatile sum, so that the reads stay).
volatile uint64_t touched = 0;
void Touch(std::span<const std::byte> bytes) {
  uint64_t sum = 0;
  for (std::byte b : bytes) sum += static_cast<uint8_t>(b);
  touched = touched + sum;
}

// Reads section `s` as T; true when it was handed out.
template <typename T>
bool ReadAs(const SegmentReader& r, const SectionInfo& s) {
  auto values = r.Section<T>(s.name);
  if (!values.ok()) {
    FUZZ_CHECK_ERROR(values.status());
    FUZZ_CHECK(values.status().code() == StatusCode::kCorruption, values.status().ToString());
    return false;
  }
  FUZZ_CHECK(values->size() == s.element_count, s.name);
  FUZZ_CHECK(reinterpret_cast<uintptr_t>(values->data()) % alignof(T) == 0, s.name);
  Touch(std::as_bytes(*values));
  return true;
}

bool ReadTyped(const SegmentReader& r, const SectionInfo& s) {
  switch (s.element_type) {
    case ElementType::kU8:
      return ReadAs<uint8_t>(r, s);
    case ElementType::kI8:
      return ReadAs<int8_t>(r, s);
    case ElementType::kU16:
      return ReadAs<uint16_t>(r, s);
    case ElementType::kI16:
      return ReadAs<int16_t>(r, s);
    case ElementType::kU32:
      return ReadAs<uint32_t>(r, s);
    case ElementType::kI32:
      return ReadAs<int32_t>(r, s);
    case ElementType::kU64:
      return ReadAs<uint64_t>(r, s);
    case ElementType::kI64:
      return ReadAs<int64_t>(r, s);
    case ElementType::kF32:
      return ReadAs<float>(r, s);
    case ElementType::kF64:
      return ReadAs<double>(r, s);
    case ElementType::kOpaque:
      break;
  }
  // Opaque: the wrong type is refused before any byte is checked.
  auto wrong = r.Section<uint8_t>(s.name);
  FUZZ_CHECK(!wrong.ok() && wrong.status().code() == StatusCode::kInvalidArgument, s.name);
  auto bytes = r.SectionBytes(s.name);
  return bytes.ok();
}

// Recomputes the checksums the mode asks for, where the (untrusted) header
// and table say they are and they lie inside the bytes.
void FixChecksums(std::string& bytes, uint8_t mode) {
  using flowrag::SectionEntry;
  using flowrag::SegmentHeader;
  using flowrag::StreamChecksum;
  if ((mode & 1) == 0 || bytes.size() < sizeof(SegmentHeader)) return;
  SegmentHeader h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  const uint64_t table_bytes = uint64_t{h.section_count} * sizeof(SectionEntry);
  const bool table_inside =
      h.table_offset <= bytes.size() && bytes.size() - h.table_offset >= table_bytes;
  if (table_inside && (mode & 2) != 0) {
    for (uint32_t i = 0; i < h.section_count; ++i) {
      char* at = bytes.data() + h.table_offset + uint64_t{i} * sizeof(SectionEntry);
      SectionEntry e;
      std::memcpy(&e, at, sizeof(e));
      if (e.offset > bytes.size() || bytes.size() - e.offset < e.length) continue;
      e.checksum = StreamChecksum::Of(bytes.data() + e.offset, e.length);
      std::memcpy(at, &e, sizeof(e));
    }
  }
  if (table_inside) {
    h.table_checksum = StreamChecksum::Of(bytes.data() + h.table_offset, table_bytes);
  }
  h.header_checksum = StreamChecksum::Of(&h, flowrag::kHeaderChecksummedBytes);
  std::memcpy(bytes.data(), &h, sizeof(h));
}

void CheckLayout(const SegmentReader& r) {
  uint64_t end = sizeof(flowrag::SegmentHeader);
  for (const SectionInfo& s : r.sections()) {
    FUZZ_CHECK(s.offset >= end && s.offset % flowrag::kSectionAlignment == 0, s.name);
    FUZZ_CHECK(s.length == s.element_count * s.element_size, s.name);
    FUZZ_CHECK(s.offset + s.length <= r.info().file_bytes, s.name);
    FUZZ_CHECK(r.FindSection(s.name) == &s, s.name);
    end = s.offset + s.length;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  FixChecksums(bytes, data[0]);
  const std::string path = flowrag::fuzz::ScratchDir() + "/fuzz.seg";
  flowrag::fuzz::WriteBytes(path, bytes);
  auto reader = SegmentReader::Open(path);
  if (!reader.ok()) {
    FUZZ_CHECK_ERROR(reader.status());
    FUZZ_CHECK(reader.status().code() == StatusCode::kCorruption, reader.status().ToString());
    return 0;
  }
  const SegmentReader& r = **reader;
  CheckLayout(r);
  bool all_read = true;
  for (const SectionInfo& s : r.sections()) {
    const bool typed = ReadTyped(r, s);
    auto bytes = r.SectionBytes(s.name);
    FUZZ_CHECK(bytes.ok() == typed, s.name);  // the first read's verdict sticks
    if (bytes.ok()) {
      FUZZ_CHECK(bytes->size() == s.length, s.name);
      Touch(*bytes);
    }
    all_read = all_read && typed;
  }
  const Status all = r.VerifyAll();
  FUZZ_CHECK(all.ok() == all_read, all.ToString());
  if (!all.ok()) FUZZ_CHECK_ERROR(all);
  return 0;
}
