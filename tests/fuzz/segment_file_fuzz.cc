// Fuzz target: a segment file (src/segment/segment_reader.h), format
// version 1 or 2. The bytes go to a scratch file; SegmentReader::Open maps
// it and checks its header and table; then every section of a known
// element type is read in ranges first (View<T>, span of single rows
// spread over the section and of a row range, at, and a range past the
// end), then whole by its element type (Section<T>) and as bytes
// (SectionBytes); every byte handed out is touched, and VerifyAll runs.
// Invariants: an accepted file's sections lie inside it, aligned as the
// format says and in order, their block checksums inside it and their
// block sizes 4 KiB-1 GiB (version 2; version 1: none, no hint);
// a read either fails with a short Corruption (a checksum) or returns
// exactly what was asked; a range outside the section is InvalidArgument;
// a section whose ranged read failed fails whole too; VerifyAll agrees
// with the whole reads.
//
// Input: byte 0 is the mode, the rest the file's bytes. Mode bit 0: the
// header and table checksums are recomputed before the open (so that
// mutations reach the header's fields and the table entries, which a
// checksum would otherwise refuse first); bit 1: the sections' checksums
// too (version 1: of the section; versions 2 and 3: every block checksum,
// in the entry's own block size and by the version's block checksum, then
// the entry's checksum of them), so that damaged entries and bytes reach
// the reads. Seeds (corpus/segment_file/) are small segments written by
// SegmentWriter, version 1 (older seeds), version 2 (v2_*: default blocks
// of 64 KiB, "rows" in 4 KiB blocks and "edges" in 16 KiB ones, both with
// the random hint) and version 3 (v3_*: the committed v3_sample.seg, intact
// and with a flipped byte), intact and damaged, in both modes.
#include <algorithm>
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

// Ranged reads of section `s` as T, before any whole read: a view, single
// rows spread over the section, a range in its middle, and ranges past its
// end. True when every one was handed out.
template <typename T>
bool ReadRanges(const SegmentReader& r, const SectionInfo& s) {
  auto view = r.View<T>(s.name);
  if (!view.ok()) {
    FUZZ_CHECK_ERROR(view.status());
    FUZZ_CHECK(view.status().code() == StatusCode::kCorruption, view.status().ToString());
    return false;
  }
  const uint64_t n = view->size();
  FUZZ_CHECK(n == s.element_count, s.name);
  FUZZ_CHECK(view->span(n, 1).status().code() == StatusCode::kInvalidArgument, s.name);
  FUZZ_CHECK(view->at(n).status().code() == StatusCode::kInvalidArgument, s.name);
  bool all = true;
  auto check = [&](uint64_t first, uint64_t count) {
    auto rows = view->span(first, count);
    if (!rows.ok()) {
      FUZZ_CHECK_ERROR(rows.status());
      FUZZ_CHECK(rows.status().code() == StatusCode::kCorruption, rows.status().ToString());
      all = false;
      return;
    }
    FUZZ_CHECK(rows->size() == count && rows->data() == view->span(first, 0)->data(), s.name);
    Touch(std::as_bytes(*rows));
  };
  const uint64_t step = n / 16 + 1;
  for (uint64_t i = 0; i < n; i += step) {
    check(i, 1);
    auto one = view->at(i);
    FUZZ_CHECK(one.ok() == view->span(i, 1).ok(), s.name);  // the verdict sticks
  }
  if (n > 0) check(n - 1, 1);
  check(n / 3, n / 3);
  return all;
}

// Reads section `s` as T, in ranges and whole; true when it was handed
// out whole.
template <typename T>
bool ReadAs(const SegmentReader& r, const SectionInfo& s) {
  const bool ranges = ReadRanges<T>(r, s);
  auto values = r.Section<T>(s.name);
  if (!values.ok()) {
    FUZZ_CHECK_ERROR(values.status());
    FUZZ_CHECK(values.status().code() == StatusCode::kCorruption, values.status().ToString());
    return false;
  }
  FUZZ_CHECK(ranges, s.name);  // a damaged block fails the whole section too
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

// Versions 2 and 3: recomputes entry `e`'s block checksums (in its own
// block size, by the version's block checksum) where it says they lie and
// its checksum of them; false when they do not lie inside the bytes or the
// block size is out of range.
bool FixBlockChecksums(std::string& bytes, uint32_t version, flowrag::SectionEntry* e) {
  using flowrag::StreamChecksum;
  const uint32_t shift = e->block_shift;
  if (shift < flowrag::kMinBlockShift || shift > flowrag::kMaxBlockShift) return false;
  const uint64_t blocks = flowrag::BlockCount(e->length, shift);
  if (e->block_sums > bytes.size() || (bytes.size() - e->block_sums) / 8 < blocks) return false;
  const uint64_t block = uint64_t{1} << shift;
  std::string sums(blocks * 8, '\0');
  for (uint64_t b = 0; b < blocks; ++b) {
    const uint64_t from = b * block;
    const uint64_t sum = flowrag::SegmentBlockChecksum(version, bytes.data() + e->offset + from,
                                                       std::min(block, e->length - from));
    std::memcpy(sums.data() + b * 8, &sum, 8);
  }
  std::memcpy(bytes.data() + e->block_sums, sums.data(), sums.size());
  e->checksum = StreamChecksum::Of(sums.data(), sums.size());
  return true;
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
      if (h.format_version == flowrag::kSegmentFormatVersionV1) {
        e.checksum = StreamChecksum::Of(bytes.data() + e.offset, e.length);
      } else if (!FixBlockChecksums(bytes, h.format_version, &e)) {
        continue;
      }
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
    if (r.info().format_version >= 2) {
      FUZZ_CHECK(s.block_sums >= s.offset + s.length, s.name);
      FUZZ_CHECK(s.block_sums + s.block_count * 8 <= r.info().file_bytes, s.name);
      FUZZ_CHECK(s.block_shift >= flowrag::kMinBlockShift &&
                     s.block_shift <= flowrag::kMaxBlockShift &&
                     s.block_bytes == uint64_t{1} << s.block_shift,
                 s.name);
      FUZZ_CHECK(s.block_count == flowrag::BlockCount(s.length, s.block_shift), s.name);
    } else {
      FUZZ_CHECK(s.block_bytes == 0 && s.access == flowrag::SectionAccess::kSequential, s.name);
    }
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
