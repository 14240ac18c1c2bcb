// The manifest of a segment set (segment_set.h): which segments are live,
// with their tombstones, at one manifest number. This header is the byte
// layout of a `MANIFEST-<n>` file, of the `CURRENT` file that names the
// newest one, and the file names of the set's directory; segment_set.h says
// how they are published and read.
//
// Why a format of its own and not a segment of kind "manifest": a manifest
// is read whole (one read of a few KB: 96 bytes per segment), never used in
// place, so the segment container's mapping, per-section alignment and
// table would be most of its bytes and buy nothing; and publishing needs a
// crash point between the manifest's write, its rename and the directory
// fsync, which SegmentWriter::Finish does in one step. The format is flat
// little-endian records with one checksum over the whole file, so a torn or
// altered manifest is Corruption before any field is believed.
//
// MANIFEST-<n> (n: the manifest number, decimal, at least 8 digits):
//
//   [0, 64)                  header (ManifestHeader)
//   [64, 64 + 96 * count)    the live segments (ManifestRecord), ascending id
//   [file_bytes - 8, end)    StreamChecksum of every byte before it
//
// Header (64 bytes):
//
//   offset size field               meaning
//   0      8    magic               "FLOWRMAN" (kManifestMagic)
//   8      4    format_version      kManifestFormatVersion (1)
//   12     4    header_bytes        64
//   16     4    record_bytes        96
//   20     4    segment_count       records that follow
//   24     8    number              the manifest number, >= 1; equals n
//   32     8    generation          int64: the store generation it describes
//   40     8    next_file_number    every file number the set has handed
//                                   out is below it, >= 1
//   48     8    file_bytes          the file's exact length
//   56     8    reserved            0
//
// Record (96 bytes, one per live segment):
//
//   offset size field                  meaning
//   0      8    id                     the segment's id, which is also the
//                                      number of its file <id>.<kind>.seg
//   8      24   kind                   the segment's kind (1-23 bytes of
//                                      [a-z0-9_.-], NUL-padded; not
//                                      "tombstones"), as in its header
//   32     8    file_bytes             the segment file's length
//   40     8    fingerprint            its header's header_checksum
//   48     8    rows                   rows it holds (tombstones index them)
//   56     4    level                  its size tier when published
//                                      (merge_policy.h: SizeTier), <= 63
//   60     4    reserved               0
//   64     8    tombstone_number       number of its tombstone file
//                                      <number>.tombstones.seg; 0: none
//   72     8    tombstone_bytes        that file's length (0 when none)
//   80     8    tombstone_fingerprint  its header's header_checksum (0: none)
//   88     8    deleted                rows deleted, 1..rows (0: none)
//
// Ids ascend strictly; every id and tombstone number is below
// next_file_number, and no number appears twice in a manifest. A parsed
// manifest encodes back to the same bytes (the encoding is canonical).
//
// CURRENT holds exactly "MANIFEST-<n>\n" (the canonical name, as
// ManifestFileName gives it, and a newline): anything else is damaged.
//
// Compatibility: a change of this layout bumps kManifestFormatVersion; a
// reader refuses other versions, and the set then falls back or starts
// empty (segments are derived: the store rebuilds them).
#ifndef FLOWRAG_SEGMENT_MANIFEST_H_
#define FLOWRAG_SEGMENT_MANIFEST_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"
#include "segment/segment_format.h"

namespace flowrag {

inline constexpr char kManifestMagic[8] = {'F', 'L', 'O', 'W', 'R', 'M', 'A', 'N'};
inline constexpr uint32_t kManifestFormatVersion = 1;
inline constexpr size_t kManifestHeaderBytes = 64;
inline constexpr size_t kManifestRecordBytes = 96;
inline constexpr size_t kManifestChecksumBytes = 8;
inline constexpr uint32_t kMaxSegmentLevel = 63;

// The kind of a tombstone file; no data segment may have it.
inline constexpr std::string_view kTombstoneKind = "tombstones";

// A segment's tombstone file, as the manifest records it.
struct TombstoneRecord {
  uint64_t number = 0;  // 0: the segment has no deleted rows
  uint64_t file_bytes = 0;
  uint64_t fingerprint = 0;
  uint64_t deleted = 0;
  bool operator==(const TombstoneRecord&) const = default;
};

// One live segment, as the manifest records it.
struct SegmentRecord {
  uint64_t id = 0;
  std::string kind;
  uint64_t file_bytes = 0;
  uint64_t fingerprint = 0;
  uint64_t rows = 0;
  uint32_t level = 0;
  TombstoneRecord tombstones;

  std::string file_name() const;  // "<id>.<kind>.seg"
  bool operator==(const SegmentRecord&) const = default;
};

struct Manifest {
  uint64_t number = 0;  // 0: no manifest (an empty set never published)
  int64_t generation = 0;
  uint64_t next_file_number = 1;
  std::vector<SegmentRecord> segments;  // ascending id

  // The record of segment `id`, or null. O(log segments).
  const SegmentRecord* Find(uint64_t id) const;
  bool operator==(const Manifest&) const = default;
};

// The file's bytes. REQUIRES: `manifest` is valid (what ParseManifest
// accepts); a violation is a programmer error (asserted).
std::string EncodeManifest(const Manifest& manifest);

// Checks and decodes a manifest file's bytes; errors are Corruption naming
// `file` (the path, for the message) and the field. O(bytes + segments log
// segments).
Result<Manifest> ParseManifest(std::string_view bytes, const std::string& file);

// The checksum a manifest file ends with: StreamChecksum of the bytes before
// it (for the fuzz target, which recomputes it so mutations reach the field
// checks).
uint64_t ManifestChecksum(std::string_view bytes_before_checksum);

// File names of the set's directory.
std::string ManifestFileName(uint64_t number);                        // "MANIFEST-00000007"
std::string SegmentFileName(uint64_t number, std::string_view kind);  // "00000012.passages.seg"
inline constexpr std::string_view kCurrentFileName = "CURRENT";
inline constexpr std::string_view kLockFileName = "LOCK";
inline constexpr std::string_view kTmpSuffix = ".tmp";

// The number of a canonical manifest file name, nullopt for any other name.
std::optional<uint64_t> ParseManifestFileName(std::string_view name);
struct SegmentFileId {
  uint64_t number = 0;
  std::string kind;
};
// The number and kind of a canonical segment file name, nullopt otherwise.
std::optional<SegmentFileId> ParseSegmentFileName(std::string_view name);

// CURRENT's bytes for manifest `number`, and its parse: the number, or
// Corruption naming `file` when the bytes are not exactly a canonical
// manifest name and a newline.
std::string EncodeCurrent(uint64_t number);
Result<uint64_t> ParseCurrent(std::string_view bytes, const std::string& file);

}  // namespace flowrag

#endif  // FLOWRAG_SEGMENT_MANIFEST_H_
