// The segment file format: an immutable file of flat, aligned, checksummed
// sections that a reader memory-maps and uses in place (issue 34;
// doc/storage.md "Segment files"). This header is the byte layout; the
// writer is segment_writer.h, the reader segment_reader.h. The container
// knows nothing of what its sections hold: consumers (passages, postings,
// vectors, CSR graph arrays) name their sections and element types.
//
// Byte order: little-endian only (every integer below, and the sections'
// elements as the host holds them). A big-endian host is refused at compile
// time, so a file is never silently misread.
//
// File layout, version 2 (offsets from the start of the file):
//
//   [0, 128)               header (SegmentHeader)
//   [128, sums_offset)     the sections, in table order, each at its offset;
//                          the gaps between them are zero padding
//   [sums_offset, ...)     the block checksums: for each section in table
//                          order, one uint64 per block of the section
//                          (below); sums_offset is the first multiple of 64
//                          at or after the end of the last section (128
//                          when there is none), and the arrays follow each
//                          other without gaps
//   [table_offset, end)    the section table: section_count SectionEntry,
//                          at the first multiple of 64 after the block
//                          checksums
//   end == file_bytes      nothing may follow the table
//
// Blocks: each section is cut into blocks of block_bytes = 2^block_shift
// bytes, its own block size (the entry's block_shift: 4 KiB to 1 GiB; a
// writer's default 64 KiB), counted from the section's first byte: block k is the section's bytes
// [k * block_bytes, min((k + 1) * block_bytes, length)), so the last block
// of a section may be shorter and a section of n bytes has
// ceil(n / block_bytes) blocks (none when empty). A block's checksum is the
// StreamChecksum of its bytes; the section's array of block checksums is
// covered by the checksum in its table entry, and the table by the header.
// A reader can so verify any range of a section by the blocks covering it
// (segment_reader.h) instead of the whole section. Sections of one file
// may have different block sizes: 4 KiB suits sections read by random
// rows (vectors, CSR targets, HNSW links), 64 KiB sequential ones
// (bench/segment_open.cc).
//
// Access hint: an entry's flags say how the section is read (bit 0: at
// random, else sequentially). A reader advises the kernel accordingly
// (segment_reader.h: MADV_RANDOM on a random section's pages, so that a
// page fault reads one page instead of a read-around window); the hint
// changes no byte a reader hands out.
//
// Header (128 bytes, at offset 0; written last by the writer):
//
//   offset size field              meaning
//   0      8    magic              "FLOWRSEG" (kSegmentMagic)
//   8      4    format_version     kSegmentFormatVersion (3)
//   12     4    header_bytes       128 (sizeof(SegmentHeader))
//   16     24   kind               what the segment holds ("passages",
//                                  "tombstones", ...): 1-23 bytes of
//                                  [a-z0-9_.-], then NULs to the end
//   40     24   creator            who wrote it ("flowrag"): 0-23 bytes of
//                                  printable ASCII, then NULs to the end
//   64     8    generation         int64: the store generation it derives from
//   72     8    segment_id         uint64: the segment's id in its store
//   80     8    file_bytes         the file's exact length
//   88     8    table_offset       where the section table starts (a multiple
//                                  of 64, after every section)
//   96     4    section_count      entries in the table
//   100    4    table_entry_bytes  80 (sizeof(SectionEntry))
//   104    8    table_checksum     StreamChecksum of the table's bytes
//   112    4    block_shift        the writer's default block size, log2:
//                                  12-30 (version 1: 0); each section's is
//                                  in its entry, which alone decides
//   116    4    reserved           0
//   120    8    header_checksum    StreamChecksum of bytes [0, 120)
//
// Section table entry (80 bytes each):
//
//   offset size field          meaning
//   0      32   name           1-31 bytes of printable ASCII (0x21-0x7e),
//                              then NULs to the end; unique in the file
//   32     2    element_type   ElementType below (kOpaque: a struct the
//                              consumer defines; only its size is checked)
//   34     1    block_shift    log2 of the section's block size: 12-30
//                              (version 1: 0)
//   35     1    flags          bit 0 (kSectionRandomAccess): read at random;
//                              bits 1-7: 0 (version 1: the whole byte 0)
//   36     4    element_size   bytes per element, >= 1, matching the type
//   40     8    element_count  elements in the section
//   48     8    offset         where the section starts: a multiple of 64
//                              (kSectionAlignment); a section of 64 KiB or
//                              more (kPageAlignFrom) starts on a 4096-byte
//                              boundary (kPageAlignment)
//   56     8    length         bytes: element_count * element_size
//   64     8    checksum       StreamChecksum of the section's block
//                              checksums (8 * blocks bytes; version 1: of
//                              the section's bytes)
//   72     8    block_sums     where the section's block checksums start
//                              (the layout above fixes it; version 1: 0)
//
// Sections appear in the table in file order and do not overlap: each
// starts at or after the end of the one before, the first at or after the
// header, and the last ends at or before the block checksums. Empty
// sections (count 0) have length 0, no blocks and an aligned offset like
// any other.
//
// Checksums are StreamChecksum (common/checksum.h), the snapshot parts'
// checksum. What the reader checks, and when, is in segment_reader.h.
//
// Version 1 (read, no longer written): no block checksums; the table
// follows the sections (at or after the last one's end, 64-aligned), the
// entry's checksum covers the section's bytes, the header's block_shift
// and the entry's block_shift, flags and block_sums are 0 (version 1's
// element_type was 4 bytes, so its upper 2 bytes, now block_shift and
// flags, were 0 in every valid file); a reader verifies a version-1
// section whole on its first read.
//
// Version 2 files written before per-section block sizes (commit d984688)
// had one block size, in the header, and element_type of 4 bytes: their
// entries' block_shift is 0, which this reader refuses. No consumer wrote
// them; the format changed in place, still version 2.
//
// Version 3 (written): version 2's layout, but a block's checksum is the
// BlockChecksum of its bytes (common/block_checksum.h: 16 GB/s in cache
// where StreamChecksum does 6, 5.6 against 4.0 GB/s from memory; an open
// of a 10^6-passage store verifies about 3 GB of blocks). Everything else
// (header, table, a section's checksum of its block checksums) stays
// StreamChecksum. Version 2 files are still read, their blocks verified by
// StreamChecksum.
//
// Compatibility: a change of this layout bumps kSegmentFormatVersion; a
// reader refuses versions it does not know (the file is then rebuilt from
// the store, which stays the truth). tests/segment_test.cc reads fixtures
// written by versions 1 and 2 and writes the version-3 one byte for byte
// (tests/testdata/segment/).
#ifndef FLOWRAG_SEGMENT_SEGMENT_FORMAT_H_
#define FLOWRAG_SEGMENT_SEGMENT_FORMAT_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "common/block_checksum.h"
#include "common/checksum.h"

namespace flowrag {

static_assert(std::endian::native == std::endian::little,
              "segment files are little-endian and used in place: a big-endian host "
              "would misread them");

inline constexpr char kSegmentMagic[8] = {'F', 'L', 'O', 'W', 'R', 'S', 'E', 'G'};
inline constexpr uint32_t kSegmentFormatVersion = 3;    // what the writer writes
inline constexpr uint32_t kSegmentFormatVersionV2 = 2;  // still read: StreamChecksum blocks
inline constexpr uint32_t kSegmentFormatVersionV1 = 1;  // still read: no blocks

// The checksum of one block of a file of format `version` (2 or 3; above).
inline uint64_t SegmentBlockChecksum(uint32_t version, const void* data, size_t n) {
  return version == kSegmentFormatVersionV2 ? StreamChecksum::Of(data, n)
                                            : BlockChecksum::Of(data, n);
}

// Block sizes (log2): 64 KiB by default, 4 KiB to 1 GiB; per section.
inline constexpr uint32_t kDefaultBlockShift = 16;
inline constexpr uint32_t kMinBlockShift = 12;
inline constexpr uint32_t kMaxBlockShift = 30;

// SectionEntry::flags: bit 0 is the access hint; the other bits are 0.
inline constexpr uint8_t kSectionRandomAccess = 1;
inline constexpr uint8_t kSectionKnownFlags = kSectionRandomAccess;

// How a section is read: the access hint in its entry's flags.
enum class SectionAccess : uint8_t {
  kSequential = 0,  // whole, or in long runs: the kernel's read-ahead helps
  kRandom = 1,      // by scattered rows: one page per fault (MADV_RANDOM)
};

inline constexpr uint64_t kSectionAlignment = 64;      // every section's offset
inline constexpr uint64_t kPageAlignment = 4096;       // large and streamed sections
inline constexpr uint64_t kPageAlignFrom = 64 * 1024;  // "large": at least this long

// Bounds of the names (without their terminating NUL).
inline constexpr size_t kMaxKindBytes = 23;
inline constexpr size_t kMaxCreatorBytes = 23;
inline constexpr size_t kMaxSectionNameBytes = 31;

// What a section's elements are. Arithmetic types are checked by type and
// size when read; kOpaque (a trivially copyable struct) by size only.
enum class ElementType : uint32_t {
  kOpaque = 0,
  kU8 = 1,  // uint8_t, unsigned char, char, std::byte: raw bytes
  kI8 = 2,
  kU16 = 3,
  kI16 = 4,
  kU32 = 5,
  kI32 = 6,
  kU64 = 7,
  kI64 = 8,
  kF32 = 9,
  kF64 = 10,
};
inline constexpr uint32_t kMaxElementType = 10;

// The bytes one element of `type` takes (0 for kOpaque: any size).
constexpr uint32_t ElementTypeSize(ElementType type) {
  switch (type) {
    case ElementType::kU8:
    case ElementType::kI8:
      return 1;
    case ElementType::kU16:
    case ElementType::kI16:
      return 2;
    case ElementType::kU32:
    case ElementType::kI32:
    case ElementType::kF32:
      return 4;
    case ElementType::kU64:
    case ElementType::kI64:
    case ElementType::kF64:
      return 8;
    case ElementType::kOpaque:
      return 0;
  }
  return 0;
}

// "u32", "f64", "opaque", ...; "?" for a value that is no ElementType.
constexpr const char* ElementTypeName(ElementType type) {
  switch (type) {
    case ElementType::kOpaque:
      return "opaque";
    case ElementType::kU8:
      return "u8";
    case ElementType::kI8:
      return "i8";
    case ElementType::kU16:
      return "u16";
    case ElementType::kI16:
      return "i16";
    case ElementType::kU32:
      return "u32";
    case ElementType::kI32:
      return "i32";
    case ElementType::kU64:
      return "u64";
    case ElementType::kI64:
      return "i64";
    case ElementType::kF32:
      return "f32";
    case ElementType::kF64:
      return "f64";
  }
  return "?";
}

// The ElementType a C++ element type is written and read as.
template <typename T>
constexpr ElementType ElementTypeOf() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, uint8_t> || std::is_same_v<U, char> ||
                std::is_same_v<U, std::byte>) {
    return ElementType::kU8;
  } else if constexpr (std::is_same_v<U, int8_t>) {
    return ElementType::kI8;
  } else if constexpr (std::is_same_v<U, uint16_t>) {
    return ElementType::kU16;
  } else if constexpr (std::is_same_v<U, int16_t>) {
    return ElementType::kI16;
  } else if constexpr (std::is_same_v<U, uint32_t>) {
    return ElementType::kU32;
  } else if constexpr (std::is_same_v<U, int32_t>) {
    return ElementType::kI32;
  } else if constexpr (std::is_same_v<U, uint64_t> || std::is_same_v<U, unsigned long> ||
                       std::is_same_v<U, unsigned long long>) {
    return sizeof(U) == 8 ? ElementType::kU64 : ElementType::kOpaque;
  } else if constexpr (std::is_same_v<U, int64_t> || std::is_same_v<U, long> ||
                       std::is_same_v<U, long long>) {
    return sizeof(U) == 8 ? ElementType::kI64 : ElementType::kOpaque;
  } else if constexpr (std::is_same_v<U, float>) {
    return ElementType::kF32;
  } else if constexpr (std::is_same_v<U, double>) {
    return ElementType::kF64;
  } else {
    return ElementType::kOpaque;
  }
}

// What a section may hold: trivially copyable values that any bit pattern
// is valid for (bool and enums are not: read them as integers and check),
// aligned at most to kSectionAlignment so a span over the mapping is.
template <typename T>
concept SegmentElement =
    std::is_trivially_copyable_v<T> && !std::is_same_v<std::remove_cv_t<T>, bool> &&
    !std::is_enum_v<T> && !std::is_pointer_v<T> && alignof(T) <= kSectionAlignment;

// The header, as it lies at offset 0 (see the table above).
struct SegmentHeader {
  char magic[8];
  uint32_t format_version;
  uint32_t header_bytes;
  char kind[kMaxKindBytes + 1];
  char creator[kMaxCreatorBytes + 1];
  int64_t generation;
  uint64_t segment_id;
  uint64_t file_bytes;
  uint64_t table_offset;
  uint32_t section_count;
  uint32_t table_entry_bytes;
  uint64_t table_checksum;
  uint32_t block_shift;
  uint32_t reserved;
  uint64_t header_checksum;
};
static_assert(std::is_trivially_copyable_v<SegmentHeader> && sizeof(SegmentHeader) == 128);
static_assert(offsetof(SegmentHeader, kind) == 16 && offsetof(SegmentHeader, creator) == 40 &&
              offsetof(SegmentHeader, generation) == 64 &&
              offsetof(SegmentHeader, file_bytes) == 80 &&
              offsetof(SegmentHeader, section_count) == 96 &&
              offsetof(SegmentHeader, table_checksum) == 104 &&
              offsetof(SegmentHeader, block_shift) == 112 &&
              offsetof(SegmentHeader, header_checksum) == 120);
// The header checksum covers every byte before it.
inline constexpr size_t kHeaderChecksummedBytes = offsetof(SegmentHeader, header_checksum);

// One section table entry (see the table above).
struct SectionEntry {
  char name[kMaxSectionNameBytes + 1];
  uint16_t element_type;
  uint8_t block_shift;
  uint8_t flags;
  uint32_t element_size;
  uint64_t element_count;
  uint64_t offset;
  uint64_t length;
  uint64_t checksum;
  uint64_t block_sums;
};
static_assert(std::is_trivially_copyable_v<SectionEntry> && sizeof(SectionEntry) == 80);
static_assert(offsetof(SectionEntry, element_type) == 32 &&
              offsetof(SectionEntry, block_shift) == 34 && offsetof(SectionEntry, flags) == 35 &&
              offsetof(SectionEntry, element_count) == 40 && offsetof(SectionEntry, offset) == 48 &&
              offsetof(SectionEntry, checksum) == 64 && offsetof(SectionEntry, block_sums) == 72);

// The names the format allows (the table above): a section name is 1-31
// bytes of printable ASCII without space; a kind 1-23 bytes of [a-z0-9_.-];
// a creator 0-23 bytes of printable ASCII (space included).
constexpr bool IsSectionName(std::string_view name) {
  if (name.empty() || name.size() > kMaxSectionNameBytes) return false;
  for (char c : name) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}
constexpr bool IsSegmentKind(std::string_view kind) {
  if (kind.empty() || kind.size() > kMaxKindBytes) return false;
  for (char c : kind) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}
constexpr bool IsCreatorTag(std::string_view creator) {
  if (creator.size() > kMaxCreatorBytes) return false;
  for (char c : creator) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

// The alignment a section of `length` bytes starts on.
constexpr uint64_t SectionAlignmentFor(uint64_t length) {
  return length >= kPageAlignFrom ? kPageAlignment : kSectionAlignment;
}

// The blocks of a section of `length` bytes cut in blocks of 2^shift bytes.
constexpr uint64_t BlockCount(uint64_t length, uint32_t shift) {
  return (length >> shift) + ((length & ((uint64_t{1} << shift) - 1)) != 0 ? 1 : 0);
}

}  // namespace flowrag

#endif  // FLOWRAG_SEGMENT_SEGMENT_FORMAT_H_
