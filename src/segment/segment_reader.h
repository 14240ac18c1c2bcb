// SegmentReader: a segment file (segment_format.h) memory-mapped and used in
// place. Opening maps the file and reads only its header and section table,
// so it costs O(sections), not O(bytes); a section's bytes are read (and
// checksummed) when they are asked for: a whole section on its first
// Section<T>, a range of rows by the blocks covering it (SectionView).
//
//   FLOWRAG_ASSIGN_OR_RETURN(auto segment, SegmentReader::Open(path));
//   // Whole sections (small ones, or ones read whole anyway):
//   FLOWRAG_ASSIGN_OR_RETURN(std::span<const uint32_t> offsets,
//                            segment->Section<uint32_t>("offsets"));
//   // Random access into large sections (vectors, CSR targets, graphs):
//   FLOWRAG_ASSIGN_OR_RETURN(SectionView<float> vectors,
//                            segment->View<float>("vectors"));
//   FLOWRAG_ASSIGN_OR_RETURN(std::span<const float> row,
//                            vectors.span(i * dim, dim));
//
// Which to use: Section<T> verifies the whole section on its first call
// (O(length): 282 ms per GiB warm, 1.2 s cold, bench/segment_open, and every
// page brought into memory). A caller that reads a few rows of a large
// section (a graph walk, a vector rescoring) must use View<T> once and then
// SectionView::span / at per row: they verify only the blocks (the
// section's block size, 64 KiB by default) that the rows lie in, each block
// once per reader, and cost a bounds check and one atomic load per block
// when verified (~60 ns per 4 KiB row read, bench/segment_open). Small
// random rows in a large section touch many blocks: 10,000 random 4 KiB
// rows of a 1 GiB section lie in 46% of its 64 KiB blocks; write such
// sections with 4 KiB blocks and the random hint (SectionOptions{.block_bytes
// = 4096, .access = SectionAccess::kRandom}).
//
// Access hints: Open advises MADV_RANDOM on the pages of each section
// whose entry says it is read at random (its page range rounded out to
// whole pages; best effort: a failure is ignored), so that a page fault
// there reads that page, not the kernel's read-around window (10,000
// random 4 KiB rows of a 1 GiB section: RSS grows by 45 MiB instead of
// 468-720 MiB, bench/segment_open). The advice stays while the reader
// lives: whole-section verifies (Section<T>, SectionBytes, VerifyAll) do
// not switch it, they ask the kernel to read each window ahead
// (MADV_WILLNEED, which the random advice does not stop) before they map
// it (1 GiB cold: 1.05-1.22 s, against 0.85 s without the hint; switching
// to MADV_SEQUENTIAL for the scan measured no better, bench/segment_open).
//
// What Open checks, each failure Corruption naming the file: the length
// (at least a header; exactly the header's file_bytes: a truncated or
// extended file), the magic, the format version (1 or 2), the header
// checksum, the kind and creator fields, the default block size, the table's place
// (aligned, after the block checksums, ending at the end of the file) and
// checksum, and every entry: its name (1-31 printable bytes, NUL-terminated
// and NUL-padded, unique), its element type and size (known type, size
// matching it, count * size == length), its block size (4 KiB to 1 GiB;
// version 1: 0), its flags (only the access hint; version 1: 0), its place
// (aligned as the format says, inside the file, after the section before
// it: no overlap), its
// block checksums' place (exactly where the format puts them), reserved
// fields zero; all arithmetic checked for overflow. A file that is missing
// is NotFound, one the OS refuses IoError.
//
// What a read checks: the element type and size against T
// (InvalidArgument when they differ: the caller reads it as something it is
// not), then the bytes it hands out. Version 2: the section's array of
// block checksums against its entry's checksum (once per section), then
// each block covering the bytes against its block checksum, the first time
// the block is read; a damaged block is Corruption naming the file, the
// section and the block, on this and every later read of it, and its
// bytes are never returned, while rows in other blocks still read.
// Version 1 (no blocks): the whole section's checksum on its first read,
// by Section<T> and View<T> alike. VerifyAll() checks every section at
// once (O(bytes)).
//
// Lifetime and thread-safety: Open returns a shared_ptr; the mapping lives
// as long as the reader, and every span and view it hands out borrows from
// it (keep the shared_ptr while using them). After Open the reader is
// immutable but for the verification state: a std::call_once per section
// for its block checksums and for its whole verification, and an atomic
// bitmap of verified blocks per section (no lock: two threads that touch
// an unverified block at once may both checksum it). Every method, and
// every SectionView method, may be called from any thread at once. The
// file must not be modified or truncated while mapped (segments are
// immutable: writers rename new files into place; a truncated mapped file
// faults with SIGBUS on access).
//
// Values: the container checks bytes, not meaning. A consumer still checks
// what its values say (ids within range, offsets non-decreasing) when the
// file may come from outside.
#ifndef FLOWRAG_SEGMENT_SEGMENT_READER_H_
#define FLOWRAG_SEGMENT_SEGMENT_READER_H_

#include <atomic>
#include <functional>
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
  // The writer's default block size (each section has its own,
  // SectionInfo::block_bytes); 0: version 1, no blocks.
  uint64_t block_bytes = 0;
};

// One section table entry.
struct SectionInfo {
  std::string name;
  ElementType element_type = ElementType::kOpaque;
  uint32_t element_size = 0;
  uint64_t element_count = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t checksum = 0;     // version 2: of the block checksums
  uint64_t block_sums = 0;   // version 2: where its block checksums lie
  uint32_t block_shift = 0;  // version 2: log2 of its block size; 0: version 1
  uint64_t block_bytes = 0;  // version 2: 2^block_shift; 0: version 1
  uint64_t block_count = 0;  // version 2: ceil(length / block_bytes)
  SectionAccess access = SectionAccess::kSequential;  // its hint (version 1: sequential)
};

class SegmentReader;

// The first block in [first, last] whose bit in a section's verified-block
// bitmap is not set, or last + 1 when all are: the fast path of every
// ranged read (one atomic load per block).
inline uint64_t FirstUnverifiedBlock(const std::atomic<uint64_t>* bits, uint64_t first,
                                     uint64_t last) {
  for (uint64_t b = first; b <= last; ++b) {
    if ((bits[b >> 6].load(std::memory_order_acquire) >> (b & 63) & 1) == 0) return b;
  }
  return last + 1;
}

// Rows of one section, verified block by block as they are read (above).
// A small value (copy it freely) that borrows the reader: valid while the
// reader lives. Thread-safe.
template <SegmentElement T>
class SectionView {
 public:
  SectionView() = default;

  uint64_t size() const { return count_; }

  // Elements [first, first + count): InvalidArgument when the range is not
  // inside the section, Corruption when a block covering it is damaged.
  // O(1) when its blocks were verified; else O(bytes of those blocks).
  Result<std::span<const T>> span(uint64_t first, uint64_t count) const {
    if (first > count_ || count > count_ - first) return OutOfRange(first, count);
    if (blocks_ != nullptr && count > 0) {
      const uint64_t begin = first * sizeof(T);
      const uint64_t last = (begin + count * sizeof(T) - 1) >> shift_;
      if (const uint64_t b = FirstUnverifiedBlock(blocks_, begin >> shift_, last); b <= last) {
        FLOWRAG_RETURN_IF_ERROR(VerifyRange(b, last));
      }
    }
    return std::span<const T>(data_ + first, count);
  }
  // Element i (a copy; span(i, 1) for a large struct in place).
  Result<T> at(uint64_t i) const {
    Result<std::span<const T>> one = span(i, 1);
    if (!one.ok()) return one.status();
    return (*one)[0];
  }

 private:
  friend class SegmentReader;
  Status OutOfRange(uint64_t first, uint64_t count) const;
  Status VerifyRange(uint64_t first_block, uint64_t last_block) const;

  const SegmentReader* reader_ = nullptr;
  size_t index_ = 0;
  const T* data_ = nullptr;
  uint64_t count_ = 0;
  // The section's verified-block bitmap; null when the whole section is
  // verified (version 1).
  const std::atomic<uint64_t>* blocks_ = nullptr;
  uint32_t shift_ = 0;
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
    Result<const SectionInfo*> s = Checked(name, true, ElementTypeOf<T>(), sizeof(T), true);
    if (!s.ok()) return s.status();
    // The bytes are T values as the writer's host held them (same byte
    // order, enforced by segment_format.h); the offset is aligned to 64.
    const T* first = reinterpret_cast<const T*>(base_ + (*s)->offset);
    return std::span<const T>(first, (*s)->element_count);
  }
  // The section's bytes whatever its element type; checksummed like Section.
  Result<std::span<const std::byte>> SectionBytes(std::string_view name) const;

  // A view of the section that verifies only the rows it hands out (above):
  // NotFound, InvalidArgument as Section; Corruption when the section's
  // block checksums are damaged (version 2) or, for version 1, the section.
  // O(log sections) after the section's first view, which checksums its
  // block checksums (8 bytes per block: 128 KiB per GiB at 64 KiB).
  template <SegmentElement T>
  Result<SectionView<T>> View(std::string_view name) const {
    Result<size_t> index = Viewable(name, ElementTypeOf<T>(), sizeof(T));
    if (!index.ok()) return index.status();
    const SectionInfo& s = sections_[*index];
    SectionView<T> view;
    view.reader_ = this;
    view.index_ = *index;
    view.data_ = reinterpret_cast<const T*>(base_ + s.offset);
    view.count_ = s.element_count;
    view.blocks_ = state_[*index].blocks.get();
    view.shift_ = s.block_shift;
    return view;
  }
  // Elements [first, first + count) of the section: View<T>(name) then
  // span(first, count). A section lookup per call: hold a view instead
  // when reading many rows.
  template <SegmentElement T>
  Result<std::span<const T>> Rows(std::string_view name, uint64_t first, uint64_t count) const {
    Result<SectionView<T>> view = View<T>(name);
    if (!view.ok()) return view.status();
    return view->span(first, count);
  }

  // Verifies blocks [first_block, last_block] of section `index` (those not
  // verified yet) and marks them verified: OK, or Corruption naming the
  // first damaged block. REQUIRES: the section's block checksums verified
  // (a view of it exists). What SectionView calls on a first touch.
  Status VerifyBlocks(size_t index, uint64_t first_block, uint64_t last_block) const;
  // InvalidArgument naming the section: rows outside it.
  Status RowsOutside(size_t index, uint64_t first, uint64_t count) const;

  // Lazy verification, for a consumer that borrows a large section before
  // reading it and verifies each range at its first read:
  // The section's bytes, unverified, and its index: NotFound as Section,
  // Corruption when its block checksums are damaged (version 2; version 1:
  // the whole section, verified now). O(log sections) after the first call.
  Result<std::span<const std::byte>> UnverifiedBytes(std::string_view name, size_t* index) const;
  // Verifies bytes [first, first + count) of section `index` by the blocks
  // covering them: OK, InvalidArgument outside the section, or Corruption
  // naming the damaged block, which is also recorded (Damage()).
  // O(1) per block already verified.
  Status VerifyBytes(size_t index, uint64_t first, uint64_t count) const;
  // The first damage recorded since Open: a block that VerifyBytes found
  // damaged, or what RecordDamage was told (an adopter that found a
  // verified section's values out of range); OK when none. RecordDamage
  // also adds the file to the process's damaged segments (below).
  Status Damage() const;
  void RecordDamage(const Status& damage) const;

  // Verifies every section's checksum (those not verified yet): OK, or the
  // first failure in file order. O(bytes of unverified sections).
  Status VerifyAll() const;
  // Verifies the whole sections `wanted` accepts (by name), in file order,
  // until `stop` is set or a section fails: a second thread running ahead
  // of an open that adopts those sections (each section's result is kept,
  // so the adopting thread finds the sections it reaches verified, or waits
  // for the one being verified, and spends its time on its own checks).
  // Failures are not returned: the reader of a section gets them.
  void VerifyAhead(const std::atomic<bool>& stop,
                   const std::function<bool(std::string_view name)>& wanted) const;

 private:
  SegmentReader(std::string path, const std::byte* base, size_t size);

  Status ParseHeader();
  Status ParseTable();
  Status ParseEntry(const SectionEntry& e, size_t index, uint64_t* end_of_previous);
  Status ParseBlockSums(uint64_t end_of_sections);
  // MADV_RANDOM on the pages of the sections read at random (best effort).
  void AdviseAccess() const;
  Status Corrupt(std::string_view what) const;
  // The section after the type check (when `check_type`) and its
  // verification: whole, or (when not `whole`) its block checksums only.
  Result<const SectionInfo*> Checked(std::string_view name, bool check_type, ElementType type,
                                     size_t element_size, bool whole) const;
  // The section after the type check, its block checksums verified
  // (version 2) or the whole section (version 1).
  Result<size_t> Viewable(std::string_view name, ElementType type, size_t element_size) const;
  // The section verified whole (once; the status kept).
  const Status& Verified(size_t index) const;
  // Version 2: its block checksums verified against the entry (once).
  const Status& SumsVerified(size_t index) const;
  Status ComputeChecksum(size_t index) const;
  Status CheckBlockSums(size_t index) const;

  struct SectionState {
    std::once_flag whole_once;
    Status whole;
    std::once_flag sums_once;
    Status sums;
    // Version 2: bit b of word b / 64 set when block b was verified;
    // allocated at Open (blocks / 8 bytes).
    std::unique_ptr<std::atomic<uint64_t>[]> blocks;
  };

  std::string path_;
  const std::byte* base_ = nullptr;
  size_t size_ = 0;
  SegmentInfo info_;
  uint64_t table_offset_ = 0;
  uint32_t section_count_ = 0;
  uint64_t table_checksum_ = 0;
  uint32_t block_shift_ = 0;  // the header's default; 0: version 1
  std::vector<SectionInfo> sections_;
  std::map<std::string, size_t, std::less<>> by_name_;
  std::unique_ptr<SectionState[]> state_;
  mutable std::atomic<bool> damaged_{false};
  mutable std::mutex damage_mu_;
  mutable Status damage_;  // guarded by damage_mu_
};

// The segment files of this process found damaged after they were opened
// (SegmentReader::RecordDamage): an owner that adopted a file's arrays
// lazily polls the count (one atomic load) after each use, and no later
// open in this process should adopt a file listed here again (the owner
// rebuilds from the store instead). Segment files are immutable and never
// renamed over, so a path names one file's content. Thread-safe.
uint64_t SegmentDamageCount();
// The damage found in the file at `path` (its first), or OK.
Status SegmentDamageOf(const std::string& path);

template <SegmentElement T>
Status SectionView<T>::OutOfRange(uint64_t first, uint64_t count) const {
  if (reader_ == nullptr) return Status::InvalidArgument("rows of an empty SectionView");
  return reader_->RowsOutside(index_, first, count);
}

template <SegmentElement T>
Status SectionView<T>::VerifyRange(uint64_t first_block, uint64_t last_block) const {
  return reader_->VerifyBlocks(index_, first_block, last_block);
}

}  // namespace flowrag

#endif  // FLOWRAG_SEGMENT_SEGMENT_READER_H_
