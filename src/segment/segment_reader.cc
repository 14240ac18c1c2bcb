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

// The checksum of `n` mapped bytes, in windows: the kernel is asked to read
// the next window ahead (WILLNEED) while this one is mapped in one call
// (POPULATE_READ, Linux 5.14: one call instead of a page fault per 16
// pages) and summed. Advice only: where it fails, the page faults do the
// same work.
uint64_t MappedChecksum(const std::byte* base, uint64_t offset, uint64_t n) {
  constexpr uint64_t kWindow = 8 << 20;
#ifndef MADV_POPULATE_READ
  constexpr int MADV_POPULATE_READ = 22;
#endif
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  auto advise = [&](uint64_t from, uint64_t bytes, int advice) {
    if (bytes == 0) return;
    const uint64_t start = from / page * page;
    ::madvise(const_cast<std::byte*>(base) + start, from + bytes - start, advice);
  };
  StreamChecksum c;
  for (uint64_t done = 0; done < n;) {
    const uint64_t take = std::min(n - done, kWindow);
    advise(offset + done + take, std::min(n - done - take, kWindow), MADV_WILLNEED);
    advise(offset + done, take, MADV_POPULATE_READ);
    c.Update(base + offset + done, take);
    done += take;
  }
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
  if (h.format_version != kSegmentFormatVersion) {
    return Corrupt("format version " + std::to_string(h.format_version) + ", this reader reads " +
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
  verification_ = std::make_unique<Verification[]>(section_count_);
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
  if (e.reserved != 0) return Corrupt(where + ": reserved field not zero");
  *end_of_previous = end;
  by_name_.emplace(std::string(*name), index);
  sections_.push_back(SectionInfo{std::string(*name), static_cast<ElementType>(e.element_type),
                                  e.element_size, e.element_count, e.offset, e.length, e.checksum});
  return Status::Ok();
}

const SectionInfo* SegmentReader::FindSection(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &sections_[it->second];
}

Status SegmentReader::ComputeChecksum(size_t index) const {
  const SectionInfo& s = sections_[index];
  const uint64_t computed = MappedChecksum(base_, s.offset, s.length);
  if (computed == s.checksum) return Status::Ok();
  return Status::Corruption(path_ + ": section '" + s.name + "': checksum mismatch (stored " +
                            Hex(s.checksum) + ", computed " + Hex(computed) + "): torn or altered");
}

const Status& SegmentReader::Verified(size_t index) const {
  Verification& v = verification_[index];
  std::call_once(v.once, [&] { v.status = ComputeChecksum(index); });
  return v.status;
}

Result<const SectionInfo*> SegmentReader::Checked(std::string_view name, bool check_type,
                                                  ElementType type, size_t element_size) const {
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
  FLOWRAG_RETURN_IF_ERROR(Verified(it->second));
  return &s;
}

Result<std::span<const std::byte>> SegmentReader::SectionBytes(std::string_view name) const {
  Result<const SectionInfo*> s = Checked(name, false, ElementType::kOpaque, 0);
  if (!s.ok()) return s.status();
  return std::span<const std::byte>(base_ + (*s)->offset, (*s)->length);
}

Status SegmentReader::VerifyAll() const {
  for (size_t i = 0; i < sections_.size(); ++i) FLOWRAG_RETURN_IF_ERROR(Verified(i));
  return Status::Ok();
}

}  // namespace flowrag
