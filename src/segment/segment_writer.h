// SegmentWriter: writes one segment file (segment_format.h) section by
// section, so that a crash leaves either no segment or a whole one.
//
//   auto w = SegmentWriter::Create(path, "passages", generation, id);
//   FLOWRAG_RETURN_IF_ERROR((*w)->AddSection("offsets", offsets));  // any contiguous range
//   FLOWRAG_RETURN_IF_ERROR((*w)->BeginSection<float>(            // streamed: larger
//       "vectors", {.block_bytes = 4096, .access = SectionAccess::kRandom}));
//   for (...) FLOWRAG_RETURN_IF_ERROR((*w)->Append(std::span(batch)));  // than memory
//   FLOWRAG_RETURN_IF_ERROR((*w)->EndSection());
//   FLOWRAG_RETURN_IF_ERROR((*w)->Finish());
//
// Each section's block checksums (segment_format.h: one per block of the
// section's block size, SectionOptions::block_bytes, by default the file's
// SegmentWriterOptions::block_bytes, 64 KiB) are computed as the bytes
// pass and written, with the table, by Finish(). A section read by random
// rows (vectors, CSR targets, HNSW links) wants 4 KiB blocks and
// SectionAccess::kRandom; one read whole or in runs the default.
//
// Durability: the bytes go to `path + ".tmp"` (created or truncated: one
// writer per path at a time is the caller's rule); Finish() writes the
// section table, then the header at offset 0 (so the temporary file has no
// valid header until then), fsyncs the file, renames it to `path`
// (replacing a file there atomically; readers that mapped the old one keep
// it) and fsyncs the directory. A writer destroyed without a successful
// Finish() removes its temporary file; a process killed before the rename
// leaves no `path` (and a stale `.tmp`, which the next writer truncates).
// SegmentWriteStep names these steps for tests that crash at each
// (tests/snapshot_crash_test.cc).
//
// Errors: every call returns a Status naming the path (and the section).
// The first error is sticky: later calls return it again and Finish() fails,
// so a writer that reported an error produces no segment (one exception: a
// failed fsync of the directory after the rename, when the segment is in
// place but its name may not survive a power loss). Misuse
// (a bad or duplicate name, Append outside a section, a length that is not
// a whole number of elements) is InvalidArgument; the OS's refusals are
// IoError (NotFound for a missing directory).
//
// Cost: AddSection and Append copy the bytes once into a 1 MiB buffer or,
// for larger pieces, straight to the file, and checksum them block by
// block as they pass (~4 bytes per cycle); memory is O(buffer + sections +
// 8 bytes per block), e.g. 128 KiB of block checksums per GiB at 64 KiB.
//
// Thread-safety: none; one thread drives a writer.
#ifndef FLOWRAG_SEGMENT_SEGMENT_WRITER_H_
#define FLOWRAG_SEGMENT_SEGMENT_WRITER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <ranges>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/checksum.h"
#include "flowrag/status.h"
#include "segment/segment_format.h"

namespace flowrag {

// Named steps of writing a segment file, for tests that stop the process
// there (SegmentWriterOptions::crash_hook; a set's publish has its own,
// segment_set.h PublishStep).
enum class SegmentWriteStep {
  kCreated,          // the temporary file created, a zero header its only bytes
  kSectionEnded,     // a section ended (once per section; its bytes may be buffered)
  kSectionsWritten,  // Finish called: every section given, the last bytes buffered
  kTableWritten,     // block checksums, table and header written; not yet fsynced
  kSynced,           // the temporary file fsynced and closed; not yet renamed
  kRenamed,          // renamed into place; the directory not yet fsynced
  kDirectorySynced,  // the directory fsynced: Finish's last step
};
const char* SegmentWriteStepName(SegmentWriteStep step);

struct SegmentWriterOptions {
  // The header's creator tag: who wrote the file (0-23 printable ASCII bytes).
  std::string creator = "flowrag";
  // The blocks a section is checksummed in unless its SectionOptions say
  // otherwise (segment_format.h; the header's default block_shift): a
  // power of two from 4 KiB to 1 GiB. Smaller blocks make a ranged read
  // verify fewer bytes and cost 8 bytes of checksum per block.
  uint64_t block_bytes = uint64_t{1} << kDefaultBlockShift;
  // Tests only: called at each step (above); a test's hook _exit()s there.
  // Empty (the default): one test of an empty function per step.
  std::function<void(SegmentWriteStep)> crash_hook;
};

// One section's choices, stored in its table entry.
struct SectionOptions {
  // Its block size: a power of two from 4 KiB to 1 GiB; 0: the file's
  // (SegmentWriterOptions::block_bytes).
  uint64_t block_bytes = 0;
  // How readers will read it: kRandom makes a reader advise MADV_RANDOM
  // on its pages (segment_reader.h).
  SectionAccess access = SectionAccess::kSequential;
};

class SegmentWriter {
 public:
  // Starts `path + ".tmp"` for a segment of `kind` (1-23 bytes of
  // [a-z0-9_.-]) derived from store generation `generation`, with id
  // `segment_id`. InvalidArgument for a bad kind, creator or block size;
  // IoError / NotFound when the file cannot be created.
  static Result<std::unique_ptr<SegmentWriter>> Create(const std::string& path,
                                                       std::string_view kind, int64_t generation,
                                                       uint64_t segment_id,
                                                       const SegmentWriterOptions& options = {});
  ~SegmentWriter();  // removes the temporary file unless Finish() succeeded
  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;

  // One whole section from a contiguous range of SegmentElement values
  // (std::vector, std::span, std::array, std::string, ...), typed as
  // ElementTypeOf<T>. Aligned to 64 bytes, or to 4096 when it is 64 KiB or
  // more. InvalidArgument for a bad block size in `options`.
  // REQUIRES: no section open.
  template <std::ranges::contiguous_range R>
  requires std::ranges::sized_range<R> && SegmentElement<std::ranges::range_value_t<R>> Status
  AddSection(std::string_view name, const R& values, const SectionOptions& options = {}) {
    using T = std::ranges::range_value_t<R>;
    const size_t bytes = std::ranges::size(values) * sizeof(T);
    FLOWRAG_RETURN_IF_ERROR(
        Begin(name, ElementTypeOf<T>(), sizeof(T), SectionAlignmentFor(bytes), options));
    FLOWRAG_RETURN_IF_ERROR(Append(std::ranges::data(values), bytes));
    return EndSection();
  }

  // One whole section of `bytes` typed `type` with `element_size`-byte
  // elements (as BeginSection), aligned as AddSection aligns it: for
  // callers that hold type-erased arrays (segment_arrays.h).
  Status AddSectionBytes(std::string_view name, ElementType type, uint32_t element_size,
                         std::span<const std::byte> bytes, const SectionOptions& options = {});

  // A streamed section, page-aligned (its length is not known yet): Begin,
  // any number of Append / AppendZeros, then EndSection. `element_size`
  // must be ElementTypeSize(type) unless type is kOpaque (then >= 1);
  // `options` as for AddSection.
  Status BeginSection(std::string_view name, ElementType type, uint32_t element_size,
                      const SectionOptions& options = {});
  template <SegmentElement T>
  Status BeginSection(std::string_view name, const SectionOptions& options = {}) {
    return BeginSection(name, ElementTypeOf<T>(), sizeof(T), options);
  }
  // Appends `bytes` bytes to the open section (any split of the elements:
  // EndSection checks that the total is whole elements).
  Status Append(const void* data, size_t bytes);
  template <SegmentElement T>
  Status Append(std::span<const T> values) {
    return Append(values.data(), values.size_bytes());
  }
  // Appends `bytes` zero bytes, as a hole in the file where the file system
  // has them (sparse: no disk written), checksummed like written zeros.
  // For zero-initialised arrays (counters, bitsets) and tests of large files.
  Status AppendZeros(uint64_t bytes);
  // Closes the open section: its count, length and checksum go to the table.
  Status EndSection();

  // Writes the table and the header, fsyncs, renames into place and fsyncs
  // the directory (above). REQUIRES: no section open; called once.
  Status Finish();

  const std::string& path() const { return path_; }
  // Bytes of the file so far (after Finish: the file's length).
  uint64_t bytes_written() const { return position_; }

 private:
  SegmentWriter(std::string path, int fd);

  Status Begin(std::string_view name, ElementType type, uint32_t element_size, uint64_t alignment,
               const SectionOptions& options);
  // The first error, kept (sticky), or `st` when OK.
  Status Fail(Status st);
  Status Misuse(std::string_view what);
  Status CheckUsable() const;
  // Buffered writes at the file's end; Flush empties the buffer.
  Status Emit(const void* data, size_t bytes);
  Status PadTo(uint64_t alignment);
  Status Flush();
  Status WriteFully(const char* data, size_t bytes);
  Status WriteHeader(uint64_t table_offset, uint64_t table_checksum);
  // Feeds section bytes (null: zeros) to the open section's block checksums.
  void SumBlocks(const char* data, uint64_t bytes);
  uint64_t ZeroBlockChecksum();
  Status SyncAndRename();
  void Hook(SegmentWriteStep step) const {
    if (crash_hook_) crash_hook_(step);
  }

  std::string path_;
  std::string tmp_path_;
  int fd_ = -1;
  SegmentHeader header_{};
  std::vector<SectionEntry> entries_;
  std::set<std::string, std::less<>> names_;
  uint64_t position_ = 0;  // where the next byte goes
  std::string buffer_;     // bytes not yet written, ending at position_
  bool section_open_ = false;
  SectionEntry current_{};
  uint64_t default_block_bytes_ = 0;  // SegmentWriterOptions::block_bytes
  uint64_t block_bytes_ = 0;          // the open section's
  BlockChecksum block_checksum_;      // of the open section's current block (format 3)
  uint64_t block_fill_ = 0;           // its bytes so far
  size_t section_first_sum_ = 0;      // the open section's first in block_sums_
  std::vector<uint64_t> block_sums_;  // every section's, in table order
  // Of a whole block of zeros, per block shift, once known (0: not yet).
  std::array<uint64_t, kMaxBlockShift + 1> zero_block_checksums_{};
  bool finished_ = false;
  Status error_;
  std::function<void(SegmentWriteStep)> crash_hook_;  // SegmentWriterOptions::crash_hook
};

}  // namespace flowrag

#endif  // FLOWRAG_SEGMENT_SEGMENT_WRITER_H_
