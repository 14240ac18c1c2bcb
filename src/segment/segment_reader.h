// SegmentReader: a segment file (segment_format.h) memory-mapped and used in
// place. Opening maps the file and reads only its header and section table,
// so it costs O(sections), not O(bytes); a section's bytes are read (and
// checksummed) the first time the section is asked for.
//
//   FLOWRAG_ASSIGN_OR_RETURN(auto segment, SegmentReader::Open(path));
//   FLOWRAG_ASSIGN_OR_RETURN(std::span<const uint32_t> offsets,
//                            segment->Section<uint32_t>("offsets"));
//
// What Open checks, each failure Corruption naming the file: the length
// (at least a header; exactly the header's file_bytes: a truncated or
// extended file), the magic, the format version, the header checksum, the
// kind and creator fields, the table's place (aligned, after the header,
// ending at the end of the file) and checksum, and every entry: its name
// (1-31 printable bytes, NUL-terminated and NUL-padded, unique), its element
// type and size (known type, size matching it, count * size == length), its
// place (aligned as the format says, inside the file, after the section
// before it: no overlap), reserved fields zero; all arithmetic checked for
// overflow. A file that is missing is NotFound, one the OS refuses IoError.
//
// What a section read checks: the element type and size against T
// (InvalidArgument when they differ: the caller reads it as something it is
// not), then, the first time the section is read, its checksum: a torn or
// altered section is Corruption naming the file and the section, and then
// and on every later read, its bytes are never returned. VerifyAll() checks
// every section at once (O(bytes)).
//
// Lifetime and thread-safety: Open returns a shared_ptr; the mapping lives
// as long as the reader, and every span it hands out borrows from it (keep
// the shared_ptr while using them). After Open the reader is immutable but
// for the per-section verification, done once per section under a
// std::call_once: every method may be called from any thread at once. The
// file must not be modified or truncated while mapped (segments are
// immutable: writers rename new files into place; a truncated mapped file
// faults with SIGBUS on access).
//
// Values: the container checks bytes, not meaning. A consumer still checks
// what its values say (ids within range, offsets non-decreasing) when the
// file may come from outside.
#ifndef FLOWRAG_SEGMENT_SEGMENT_READER_H_
#define FLOWRAG_SEGMENT_SEGMENT_READER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"
#include "segment/segment_format.h"

namespace flowrag {

// The header's fields.
struct SegmentInfo {
  uint32_t format_version = 0;
  std::string kind;
  std::string creator;
  int64_t generation = 0;
  uint64_t segment_id = 0;
  uint64_t file_bytes = 0;
};

// One section table entry.
struct SectionInfo {
  std::string name;
  ElementType element_type = ElementType::kOpaque;
  uint32_t element_size = 0;
  uint64_t element_count = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t checksum = 0;
};

class SegmentReader {
 public:
  // Maps `path` and checks its header and table (above).
  static Result<std::shared_ptr<const SegmentReader>> Open(const std::string& path);
  ~SegmentReader();
  SegmentReader(const SegmentReader&) = delete;
  SegmentReader& operator=(const SegmentReader&) = delete;

  const std::string& path() const { return path_; }
  const SegmentInfo& info() const { return info_; }
  // In file order.
  const std::vector<SectionInfo>& sections() const { return sections_; }
  // The section named `name`, or null.
  const SectionInfo* FindSection(std::string_view name) const;

  // The section's elements, in place: NotFound when there is no such
  // section, InvalidArgument when it is not of ElementTypeOf<T> with
  // sizeof(T)-byte elements, Corruption when its checksum fails (above).
  // O(length) on the first read of the section, O(log sections) after.
  template <SegmentElement T>
  Result<std::span<const T>> Section(std::string_view name) const {
    Result<const SectionInfo*> s = Checked(name, true, ElementTypeOf<T>(), sizeof(T));
    if (!s.ok()) return s.status();
    // The bytes are T values as the writer's host held them (same byte
    // order, enforced by segment_format.h); the offset is aligned to 64.
    const T* first = reinterpret_cast<const T*>(base_ + (*s)->offset);
    return std::span<const T>(first, (*s)->element_count);
  }
  // The section's bytes whatever its element type; checksummed like Section.
  Result<std::span<const std::byte>> SectionBytes(std::string_view name) const;

  // Verifies every section's checksum (those not verified yet): OK, or the
  // first failure in file order. O(bytes of unverified sections).
  Status VerifyAll() const;

 private:
  SegmentReader(std::string path, const std::byte* base, size_t size);

  Status ParseHeader();
  Status ParseTable();
  Status ParseEntry(const SectionEntry& e, size_t index, uint64_t* end_of_previous);
  Status Corrupt(std::string_view what) const;
  // The section after the type check (when `check_type`) and its
  // verification.
  Result<const SectionInfo*> Checked(std::string_view name, bool check_type, ElementType type,
                                     size_t element_size) const;
  const Status& Verified(size_t index) const;
  Status ComputeChecksum(size_t index) const;

  struct Verification {
    std::once_flag once;
    Status status;
  };

  std::string path_;
  const std::byte* base_ = nullptr;
  size_t size_ = 0;
  SegmentInfo info_;
  uint64_t table_offset_ = 0;
  uint32_t section_count_ = 0;
  uint64_t table_checksum_ = 0;
  std::vector<SectionInfo> sections_;
  std::map<std::string, size_t, std::less<>> by_name_;
  std::unique_ptr<Verification[]> verification_;
};

}  // namespace flowrag

#endif  // FLOWRAG_SEGMENT_SEGMENT_READER_H_
