#include "segment/segment_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "common/checksum.h"
#include "common/file_reader.h"
#include "segment/file_util.h"

namespace flowrag {
namespace {

// Printable excerpt of a field for an error message.
std::string Shown(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 40)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

// Reads a T from the mapping (no alignment or aliasing assumption).
template <typename T>
T Load(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

#ifndef MADV_POPULATE_READ
constexpr int MADV_POPULATE_READ = 22;
#endif

// Advice for mapped bytes [from, from + bytes) (rounded out to pages).
// Advice only: where it fails, the page faults do the same work.
void Advise(const std::byte* base, uint64_t from, uint64_t bytes, int advice) {
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  if (bytes == 0) return;
  const uint64_t start = from / page * page;
  ::madvise(const_cast<std::byte*>(base) + start, from + bytes - start, advice);
}

// Ranges shorter than this are read by their page faults, unadvised: a
// query's lazy checks verify one 4 KiB or 64 KiB block at a time, and two
// madvise calls per block cost more than the faults they replace (a cold
// 10^5 `qafd` query made 2,663 of them, 22% of its samples; doc/scale.md
// stop 55).
constexpr uint64_t kAdviseFrom = uint64_t{1} << 20;

// Walks mapped bytes [offset, offset + n) in windows of at least 8 MiB
// (whole `unit`s of bytes, the last one shorter): the kernel is asked to
// read the next window ahead (WILLNEED) while this one is mapped in one
// call (POPULATE_READ, Linux 5.14: one call instead of a page fault per 16
// pages); then `f(at, bytes)` runs on each unit of the window. Stops at the
// first unit f returns false for. Under kAdviseFrom bytes: no advice.
template <typename F>
bool ForEachMappedUnit(const std::byte* base, uint64_t offset, uint64_t n, uint64_t unit, F f) {
  if (n < kAdviseFrom) {
    for (uint64_t at = 0; at < n; at += unit) {
      if (!f(offset + at, std::min(unit, n - at))) return false;
    }
    return true;
  }
  const uint64_t window = std::max<uint64_t>(unit, (uint64_t{8} << 20) / unit * unit);
  for (uint64_t done = 0; done < n;) {
    const uint64_t take = std::min(n - done, window);
    // The first window too: a section advised MADV_RANDOM has no
    // read-around on faults, so POPULATE_READ alone would read it a page
    // at a time.
    if (done == 0) Advise(base, offset, take, MADV_WILLNEED);
    Advise(base, offset + done + take, std::min(n - done - take, window), MADV_WILLNEED);
    Advise(base, offset + done, take, MADV_POPULATE_READ);
    for (uint64_t at = done; at < done + take; at += unit) {
      if (!f(offset + at, std::min(unit, done + take - at))) return false;
    }
    done += take;
  }
  return true;
}

// The checksum of `n` mapped bytes (version 1's whole-section checksum).
uint64_t MappedChecksum(const std::byte* base, uint64_t offset, uint64_t n) {
  StreamChecksum c;
  ForEachMappedUnit(base, offset, n, uint64_t{8} << 20, [&](uint64_t at, uint64_t bytes) {
    c.Update(base + at, bytes);
    return true;
  });
  return c.Final();
}

}  // namespace

Result<std::shared_ptr<const SegmentReader>> SegmentReader::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return OsError(path, "cannot open segment", errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return OsError(path, "cannot stat segment", err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::Corruption(path + ": not a regular file");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < sizeof(SegmentHeader)) {
    ::close(fd);
    return Status::Corruption(path + ": " + std::to_string(size) +
                              " bytes, shorter than a segment header (" +
                              std::to_string(sizeof(SegmentHeader)) + ")");
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping keeps the file
  if (map == MAP_FAILED) return OsError(path, "cannot map segment", err);
  std::shared_ptr<SegmentReader> reader(
      new SegmentReader(path, static_cast<const std::byte*>(map), size));
  FLOWRAG_RETURN_IF_ERROR(reader->ParseHeader());
  FLOWRAG_RETURN_IF_ERROR(reader->ParseTable());
  reader->AdviseAccess();
  return std::shared_ptr<const SegmentReader>(std::move(reader));
}

SegmentReader::SegmentReader(std::string path, const std::byte* base, size_t size)
    : path_(std::move(path)), base_(base), size_(size) {}

SegmentReader::~SegmentReader() {
  if (base_ != nullptr) ::munmap(const_cast<std::byte*>(base_), size_);
}

Status SegmentReader::Corrupt(std::string_view what) const {
  return Status::Corruption(path_ + ": corrupt segment: " + std::string(what));
}

Status SegmentReader::ParseHeader() {
  const SegmentHeader h = Load<SegmentHeader>(base_);
  if (std::memcmp(h.magic, kSegmentMagic, sizeof(h.magic)) != 0) {
    return Corrupt("not a segment file (bad magic)");
  }
  // Before the checksum: another version may lay its header out otherwise.
  if (h.format_version != kSegmentFormatVersion && h.format_version != kSegmentFormatVersionV2 &&
      h.format_version != kSegmentFormatVersionV1) {
    return Corrupt("format version " + std::to_string(h.format_version) + ", this reader reads " +
                   std::to_string(kSegmentFormatVersionV1) + " to " +
                   std::to_string(kSegmentFormatVersion));
  }
  const uint64_t computed = StreamChecksum::Of(base_, kHeaderChecksummedBytes);
  if (computed != h.header_checksum) {
    return Corrupt("header checksum mismatch (stored " + Hex(h.header_checksum) + ", computed " +
                   Hex(computed) + ")");
  }
  if (h.header_bytes != sizeof(SegmentHeader) || h.table_entry_bytes != sizeof(SectionEntry)) {
    return Corrupt("header of " + std::to_string(h.header_bytes) + " bytes, table entries of " +
                   std::to_string(h.table_entry_bytes) + "; expected " +
                   std::to_string(sizeof(SegmentHeader)) + " and " +
                   std::to_string(sizeof(SectionEntry)));
  }
  const std::optional<std::string_view> kind = FieldText(h.kind);
  if (!kind || !IsSegmentKind(*kind)) return Corrupt("bad segment kind");
  const std::optional<std::string_view> creator = FieldText(h.creator);
  if (!creator || !IsCreatorTag(*creator)) return Corrupt("bad creator tag");
  if (h.reserved != 0) return Corrupt("reserved header field not zero");
  const bool v1 = h.format_version == kSegmentFormatVersionV1;
  if (v1 ? h.block_shift != 0 : h.block_shift < kMinBlockShift || h.block_shift > kMaxBlockShift) {
    return Corrupt("default block size 2^" + std::to_string(h.block_shift) +
                   (v1 ? " in a version-1 file (reserved: 0)" : ", not 4 KiB to 1 GiB"));
  }
  if (h.file_bytes != size_) {
    return Corrupt((h.file_bytes > size_ ? "truncated: " : "extended: ") + std::to_string(size_) +
                   " bytes, the header says " + std::to_string(h.file_bytes));
  }
  const uint64_t table_bytes = uint64_t{h.section_count} * sizeof(SectionEntry);
  if (h.table_offset < sizeof(SegmentHeader) || h.table_offset % kSectionAlignment != 0 ||
      h.table_offset > size_ || size_ - h.table_offset != table_bytes) {
    return Corrupt("section table of " + std::to_string(h.section_count) + " entries at " +
                   std::to_string(h.table_offset) + " does not end the file");
  }
  info_.format_version = h.format_version;
  info_.kind = std::string(*kind);
  info_.creator = std::string(*creator);
  info_.generation = h.generation;
  info_.segment_id = h.segment_id;
  info_.file_bytes = h.file_bytes;
  info_.block_bytes = v1 ? 0 : uint64_t{1} << h.block_shift;
  block_shift_ = h.block_shift;
  table_offset_ = h.table_offset;
  section_count_ = h.section_count;
  table_checksum_ = h.table_checksum;
  return Status::Ok();
}

Status SegmentReader::ParseTable() {
  const uint64_t table_bytes = uint64_t{section_count_} * sizeof(SectionEntry);
  const uint64_t computed = StreamChecksum::Of(base_ + table_offset_, table_bytes);
  if (computed != table_checksum_) {
    return Corrupt("section table checksum mismatch (stored " + Hex(table_checksum_) +
                   ", computed " + Hex(computed) + ")");
  }
  sections_.reserve(section_count_);
  uint64_t end_of_previous = sizeof(SegmentHeader);
  for (size_t i = 0; i < section_count_; ++i) {
    const SectionEntry e = Load<SectionEntry>(base_ + table_offset_ + i * sizeof(SectionEntry));
    FLOWRAG_RETURN_IF_ERROR(ParseEntry(e, i, &end_of_previous));
  }
  state_ = std::make_unique<SectionState[]>(section_count_);
  if (block_shift_ != 0) FLOWRAG_RETURN_IF_ERROR(ParseBlockSums(end_of_previous));
  return Status::Ok();
}

// Version 2: each section's block checksums lie exactly where the format
// puts them (one array after another from the 64-aligned end of the
// sections), and the table follows them at the next multiple of 64.
Status SegmentReader::ParseBlockSums(uint64_t end_of_sections) {
  uint64_t at = (end_of_sections + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment;
  for (size_t i = 0; i < sections_.size(); ++i) {
    SectionInfo& s = sections_[i];
    s.block_count = BlockCount(s.length, s.block_shift);
    // length <= file size, so neither product nor sum overflows.
    const uint64_t bytes = s.block_count * sizeof(uint64_t);
    if (s.block_sums != at || at > table_offset_ || table_offset_ - at < bytes) {
      return Corrupt("section " + std::to_string(i) + " '" + s.name + "': block checksums at " +
                     std::to_string(s.block_sums) + ", the layout puts its " +
                     std::to_string(s.block_count) + " at " + std::to_string(at) +
                     " before the table at " + std::to_string(table_offset_));
    }
    at += bytes;
    state_[i].blocks = std::make_unique<std::atomic<uint64_t>[]>((s.block_count + 63) / 64);
  }
  const uint64_t table_at = (at + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment;
  if (table_at != table_offset_) {
    return Corrupt("section table at " + std::to_string(table_offset_) +
                   ", not after the block checksums (at " + std::to_string(table_at) + ")");
  }
  return Status::Ok();
}

Status SegmentReader::ParseEntry(const SectionEntry& e, size_t index, uint64_t* end_of_previous) {
  const std::string at = "section " + std::to_string(index);
  const std::optional<std::string_view> name = FieldText(e.name);
  if (!name || !IsSectionName(*name)) {
    return Corrupt(at + ": name is not 1-31 printable bytes, NUL-terminated and NUL-padded");
  }
  const std::string where = at + " '" + Shown(*name) + "'";
  if (by_name_.count(*name)) return Corrupt(where + ": name used twice");
  if (e.element_type > kMaxElementType) {
    return Corrupt(where + ": unknown element type " + std::to_string(e.element_type));
  }
  const uint32_t type_size = ElementTypeSize(static_cast<ElementType>(e.element_type));
  if (e.element_size == 0 || (type_size != 0 && e.element_size != type_size)) {
    return Corrupt(where + ": element size " + std::to_string(e.element_size) +
                   " does not fit its type");
  }
  uint64_t length = 0;
  if (__builtin_mul_overflow(e.element_count, uint64_t{e.element_size}, &length) ||
      length != e.length) {
    return Corrupt(where + ": " + std::to_string(e.element_count) + " elements of " +
                   std::to_string(e.element_size) + " bytes are not its length " +
                   std::to_string(e.length));
  }
  const uint64_t alignment = SectionAlignmentFor(e.length);
  uint64_t end = 0;
  if (e.offset % alignment != 0 || e.offset < *end_of_previous ||
      __builtin_add_overflow(e.offset, e.length, &end) || end > table_offset_) {
    return Corrupt(where + ": bytes [" + std::to_string(e.offset) + ", +" +
                   std::to_string(e.length) + ") are not " + std::to_string(alignment) +
                   "-aligned between " + std::to_string(*end_of_previous) + " and the table at " +
                   std::to_string(table_offset_));
  }
  const bool v1 = block_shift_ == 0;
  if (v1 && (e.block_sums != 0 || e.block_shift != 0 || e.flags != 0)) {
    return Corrupt(where + ": reserved field not zero");
  }
  if (!v1 && (e.block_shift < kMinBlockShift || e.block_shift > kMaxBlockShift)) {
    return Corrupt(where + ": block size 2^" + std::to_string(e.block_shift) +
                   ", not 4 KiB to 1 GiB");
  }
  if ((e.flags & ~kSectionKnownFlags) != 0) {
    return Corrupt(where + ": unknown flags " + Hex(e.flags));
  }
  *end_of_previous = end;
  by_name_.emplace(std::string(*name), index);
  SectionInfo s;
  s.name = std::string(*name);
  s.element_type = static_cast<ElementType>(e.element_type);
  s.element_size = e.element_size;
  s.element_count = e.element_count;
  s.offset = e.offset;
  s.length = e.length;
  s.checksum = e.checksum;
  s.block_sums = e.block_sums;
  s.block_shift = e.block_shift;
  s.block_bytes = v1 ? 0 : uint64_t{1} << e.block_shift;
  s.access =
      (e.flags & kSectionRandomAccess) != 0 ? SectionAccess::kRandom : SectionAccess::kSequential;
  sections_.push_back(std::move(s));
  return Status::Ok();
}

void SegmentReader::AdviseAccess() const {
  for (const SectionInfo& s : sections_) {
    if (s.access == SectionAccess::kRandom) Advise(base_, s.offset, s.length, MADV_RANDOM);
  }
}

const SectionInfo* SegmentReader::FindSection(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &sections_[it->second];
}

Status SegmentReader::ComputeChecksum(size_t index) const {
  const SectionInfo& s = sections_[index];
  if (block_shift_ != 0) {
    FLOWRAG_RETURN_IF_ERROR(SumsVerified(index));
    return s.block_count == 0 ? Status::Ok() : VerifyBlocks(index, 0, s.block_count - 1);
  }
  const uint64_t computed = MappedChecksum(base_, s.offset, s.length);
  if (computed == s.checksum) return Status::Ok();
  return Status::Corruption(path_ + ": section '" + s.name + "': checksum mismatch (stored " +
                            Hex(s.checksum) + ", computed " + Hex(computed) + "): torn or altered");
}

Status SegmentReader::CheckBlockSums(size_t index) const {
  const SectionInfo& s = sections_[index];
  const uint64_t computed =
      StreamChecksum::Of(base_ + s.block_sums, s.block_count * sizeof(uint64_t));
  if (computed == s.checksum) return Status::Ok();
  return Status::Corruption(path_ + ": section '" + s.name +
                            "': block checksums mismatch (stored " + Hex(s.checksum) +
                            ", computed " + Hex(computed) + "): torn or altered");
}

const Status& SegmentReader::Verified(size_t index) const {
  SectionState& v = state_[index];
  std::call_once(v.whole_once, [&] { v.whole = ComputeChecksum(index); });
  return v.whole;
}

const Status& SegmentReader::SumsVerified(size_t index) const {
  SectionState& v = state_[index];
  std::call_once(v.sums_once, [&] { v.sums = CheckBlockSums(index); });
  return v.sums;
}

Status SegmentReader::VerifyBlocks(size_t index, uint64_t first_block, uint64_t last_block) const {
  const SectionInfo& s = sections_[index];
  std::atomic<uint64_t>* bits = state_[index].blocks.get();
  const uint32_t shift = s.block_shift;
  const uint64_t block = s.block_bytes;
  auto verified = [&](uint64_t b) {
    return (bits[b / 64].load(std::memory_order_acquire) >> (b % 64) & 1) != 0;
  };
  Status failure;
  for (uint64_t b = first_block; b <= last_block;) {
    if (verified(b)) {
      ++b;
      continue;
    }
    // A run of unverified blocks [b, end), read in windows.
    uint64_t end = b + 1;
    while (end <= last_block && !verified(end)) ++end;
    const uint64_t from = b << shift;
    const uint64_t to = std::min(end << shift, s.length);
    ForEachMappedUnit(base_, s.offset + from, to - from, block, [&](uint64_t at, uint64_t bytes) {
      const uint64_t k = (at - s.offset) >> shift;
      const uint64_t stored = Load<uint64_t>(base_ + s.block_sums + k * sizeof(uint64_t));
      const uint64_t computed = SegmentBlockChecksum(info_.format_version, base_ + at, bytes);
      if (computed != stored) {
        failure = Status::Corruption(
            path_ + ": section '" + s.name + "': block " + std::to_string(k) + " of " +
            std::to_string(s.block_count) + " (bytes [" + std::to_string(k << shift) + ", +" +
            std::to_string(bytes) + ")) checksum mismatch (stored " + Hex(stored) + ", computed " +
            Hex(computed) + "): torn or altered");
        return false;
      }
      bits[k / 64].fetch_or(uint64_t{1} << (k % 64), std::memory_order_release);
      return true;
    });
    if (!failure.ok()) return failure;
    b = end;
  }
  return Status::Ok();
}

Status SegmentReader::RowsOutside(size_t index, uint64_t first, uint64_t count) const {
  const SectionInfo& s = sections_[index];
  return Status::InvalidArgument(path_ + ": section '" + s.name + "': rows [" +
                                 std::to_string(first) + ", +" + std::to_string(count) +
                                 ") outside its " + std::to_string(s.element_count));
}

Result<size_t> SegmentReader::Viewable(std::string_view name, ElementType type,
                                       size_t element_size) const {
  Result<const SectionInfo*> s = Checked(name, true, type, element_size, /*whole=*/false);
  if (!s.ok()) return s.status();
  return static_cast<size_t>(*s - sections_.data());
}

Result<const SectionInfo*> SegmentReader::Checked(std::string_view name, bool check_type,
                                                  ElementType type, size_t element_size,
                                                  bool whole) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) {
    return Status::NotFound(path_ + ": no section '" + Shown(name) + "'");
  }
  const SectionInfo& s = sections_[it->second];
  if (check_type && (s.element_type != type || s.element_size != element_size)) {
    return Status::InvalidArgument(path_ + ": section '" + s.name + "' holds " +
                                   ElementTypeName(s.element_type) + " elements of " +
                                   std::to_string(s.element_size) + " bytes, read as " +
                                   ElementTypeName(type) + " of " + std::to_string(element_size));
  }
  const bool blocks = block_shift_ != 0 && !whole;
  FLOWRAG_RETURN_IF_ERROR(blocks ? SumsVerified(it->second) : Verified(it->second));
  return &s;
}

Result<std::span<const std::byte>> SegmentReader::SectionBytes(std::string_view name) const {
  Result<const SectionInfo*> s = Checked(name, false, ElementType::kOpaque, 0, /*whole=*/true);
  if (!s.ok()) return s.status();
  return std::span<const std::byte>(base_ + (*s)->offset, (*s)->length);
}

Result<std::span<const std::byte>> SegmentReader::UnverifiedBytes(std::string_view name,
                                                                  size_t* index) const {
  Result<const SectionInfo*> s = Checked(name, false, ElementType::kOpaque, 0, /*whole=*/false);
  if (!s.ok()) return s.status();
  *index = static_cast<size_t>(*s - sections_.data());
  return std::span<const std::byte>(base_ + (*s)->offset, (*s)->length);
}

Status SegmentReader::VerifyBytes(size_t index, uint64_t first, uint64_t count) const {
  const SectionInfo& s = sections_[index];
  if (first > s.length || count > s.length - first) {
    return Status::InvalidArgument(path_ + ": section '" + s.name + "': bytes [" +
                                   std::to_string(first) + ", +" + std::to_string(count) +
                                   ") outside its " + std::to_string(s.length));
  }
  if (count == 0 || block_shift_ == 0) return Status::Ok();  // version 1: verified whole
  const uint64_t last = (first + count - 1) >> s.block_shift;
  const uint64_t b = FirstUnverifiedBlock(state_[index].blocks.get(), first >> s.block_shift, last);
  if (b > last) return Status::Ok();
  Status verified = VerifyBlocks(index, b, last);
  if (!verified.ok()) RecordDamage(verified);
  return verified;
}

Status SegmentReader::Damage() const {
  if (!damaged_.load(std::memory_order_acquire)) return Status::Ok();
  std::lock_guard<std::mutex> lock(damage_mu_);
  return damage_;
}

namespace {

struct DamagedSegments {
  std::atomic<uint64_t> count{0};
  std::mutex mu;
  std::map<std::string, Status> paths;  // guarded by mu
};

DamagedSegments& Damaged() {
  static DamagedSegments* damaged = new DamagedSegments();  // never destroyed
  return *damaged;
}

}  // namespace

uint64_t SegmentDamageCount() { return Damaged().count.load(std::memory_order_acquire); }

Status SegmentDamageOf(const std::string& path) {
  DamagedSegments& d = Damaged();
  if (d.count.load(std::memory_order_acquire) == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(d.mu);
  auto it = d.paths.find(path);
  return it == d.paths.end() ? Status::Ok() : it->second;
}

void SegmentReader::RecordDamage(const Status& damage) const {
  if (damage.ok()) return;
  {
    std::lock_guard<std::mutex> lock(damage_mu_);
    if (!damage_.ok()) return;  // reported once
    damage_ = damage;
    damaged_.store(true, std::memory_order_release);
  }
  DamagedSegments& d = Damaged();
  std::lock_guard<std::mutex> lock(d.mu);
  d.paths.emplace(path_, damage);
  d.count.fetch_add(1, std::memory_order_release);
}

Status SegmentReader::VerifyAll() const {
  for (size_t i = 0; i < sections_.size(); ++i) FLOWRAG_RETURN_IF_ERROR(Verified(i));
  return Status::Ok();
}

void SegmentReader::VerifyAhead(const std::atomic<bool>& stop,
                                const std::function<bool(std::string_view name)>& wanted) const {
  for (size_t i = 0; i < sections_.size() && !stop.load(std::memory_order_relaxed); ++i) {
    if (wanted(sections_[i].name) && !Verified(i).ok()) return;
  }
}

}  // namespace flowrag
