#include "segment/segment_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/file_reader.h"
#include "segment/file_util.h"

namespace flowrag {
namespace {

constexpr size_t kBufferBytes = 1 << 20;

// Zeros to checksum holes and to pad with.
constexpr size_t kZeroBytes = 64 * 1024;
const char* Zeros() {
  static const char zeros[kZeroBytes] = {};
  return zeros;
}

// Copies `text` into a NUL-padded fixed field of N bytes (text.size() < N).
template <size_t N>
void SetField(char (&field)[N], std::string_view text) {
  std::memset(field, 0, N);
  std::memcpy(field, text.data(), std::min(text.size(), N - 1));
}

uint64_t RoundUp(uint64_t n, uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

bool IsBlockSize(uint64_t bytes) {
  return std::has_single_bit(bytes) && bytes >= (uint64_t{1} << kMinBlockShift) &&
         bytes <= (uint64_t{1} << kMaxBlockShift);
}

}  // namespace

const char* SegmentWriteStepName(SegmentWriteStep step) {
  switch (step) {
    case SegmentWriteStep::kCreated:
      return "file created";
    case SegmentWriteStep::kSectionEnded:
      return "section ended";
    case SegmentWriteStep::kSectionsWritten:
      return "sections written";
    case SegmentWriteStep::kTableWritten:
      return "table written";
    case SegmentWriteStep::kSynced:
      return "file synced";
    case SegmentWriteStep::kRenamed:
      return "file renamed";
    case SegmentWriteStep::kDirectorySynced:
      return "directory synced";
  }
  return "?";
}

Result<std::unique_ptr<SegmentWriter>> SegmentWriter::Create(const std::string& path,
                                                             std::string_view kind,
                                                             int64_t generation,
                                                             uint64_t segment_id,
                                                             const SegmentWriterOptions& options) {
  if (!IsSegmentKind(kind)) {
    return Status::InvalidArgument(path + ": segment kind '" + std::string(kind.substr(0, 40)) +
                                   "' is not 1-23 bytes of [a-z0-9_.-]");
  }
  if (!IsCreatorTag(options.creator)) {
    return Status::InvalidArgument(path + ": creator tag '" + options.creator.substr(0, 40) +
                                   "' is not 0-23 bytes of printable ASCII");
  }
  const uint64_t block = options.block_bytes;
  if (!IsBlockSize(block)) {
    return Status::InvalidArgument(path + ": block size " + std::to_string(block) +
                                   " is not a power of two from 4 KiB to 1 GiB");
  }
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return OsError(tmp, "cannot create segment file", errno);
  std::unique_ptr<SegmentWriter> w(new SegmentWriter(path, fd));
  SegmentHeader& h = w->header_;
  std::memcpy(h.magic, kSegmentMagic, sizeof(h.magic));
  h.format_version = kSegmentFormatVersion;
  h.header_bytes = sizeof(SegmentHeader);
  SetField(h.kind, kind);
  SetField(h.creator, options.creator);
  h.generation = generation;
  h.segment_id = segment_id;
  h.table_entry_bytes = sizeof(SectionEntry);
  h.block_shift = static_cast<uint32_t>(std::countr_zero(block));
  w->default_block_bytes_ = block;
  w->crash_hook_ = options.crash_hook;
  // A zero header until Finish: the temporary file is never a valid segment.
  FLOWRAG_RETURN_IF_ERROR(w->Emit(Zeros(), sizeof(SegmentHeader)));
  w->Hook(SegmentWriteStep::kCreated);
  return w;
}

SegmentWriter::SegmentWriter(std::string path, int fd)
    : path_(std::move(path)), tmp_path_(path_ + ".tmp"), fd_(fd) {
  buffer_.reserve(kBufferBytes);
}

SegmentWriter::~SegmentWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!finished_) ::unlink(tmp_path_.c_str());
}

Status SegmentWriter::Fail(Status st) {
  if (!st.ok() && error_.ok()) error_ = st;
  return st;
}

Status SegmentWriter::Misuse(std::string_view what) {
  return Fail(Status::InvalidArgument(path_ + ": " + std::string(what)));
}

Status SegmentWriter::CheckUsable() const {
  if (!error_.ok()) return error_;
  if (finished_) return Status::FailedPrecondition(path_ + ": segment already finished");
  return Status::Ok();
}

Status SegmentWriter::WriteFully(const char* data, size_t bytes) {
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, data, std::min<size_t>(bytes, size_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(OsError(tmp_path_, "cannot write", errno));
    }
    data += n;
    bytes -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status SegmentWriter::Flush() {
  if (buffer_.empty()) return Status::Ok();
  Status st = WriteFully(buffer_.data(), buffer_.size());
  buffer_.clear();
  return st;
}

Status SegmentWriter::Emit(const void* data, size_t bytes) {
  if (bytes == 0) return Status::Ok();
  if (buffer_.size() + bytes > kBufferBytes) FLOWRAG_RETURN_IF_ERROR(Flush());
  if (bytes >= kBufferBytes) {
    FLOWRAG_RETURN_IF_ERROR(WriteFully(static_cast<const char*>(data), bytes));
  } else {
    buffer_.append(static_cast<const char*>(data), bytes);
  }
  position_ += bytes;
  return Status::Ok();
}

Status SegmentWriter::PadTo(uint64_t alignment) {
  uint64_t pad = RoundUp(position_, alignment) - position_;
  while (pad > 0) {
    const size_t n = std::min<uint64_t>(pad, kZeroBytes);
    FLOWRAG_RETURN_IF_ERROR(Emit(Zeros(), n));
    pad -= n;
  }
  return Status::Ok();
}

Status SegmentWriter::BeginSection(std::string_view name, ElementType type, uint32_t element_size,
                                   const SectionOptions& options) {
  return Begin(name, type, element_size, kPageAlignment, options);
}

Status SegmentWriter::AddSectionBytes(std::string_view name, ElementType type,
                                      uint32_t element_size, std::span<const std::byte> bytes,
                                      const SectionOptions& options) {
  FLOWRAG_RETURN_IF_ERROR(
      Begin(name, type, element_size, SectionAlignmentFor(bytes.size()), options));
  FLOWRAG_RETURN_IF_ERROR(Append(bytes.data(), bytes.size()));
  return EndSection();
}

Status SegmentWriter::Begin(std::string_view name, ElementType type, uint32_t element_size,
                            uint64_t alignment, const SectionOptions& options) {
  FLOWRAG_RETURN_IF_ERROR(CheckUsable());
  const std::string shown(name.substr(0, 40));
  if (section_open_) {
    return Misuse("section '" + shown + "' begun while section '" + current_.name + "' is open");
  }
  if (!IsSectionName(name)) {
    return Misuse("section name '" + shown +
                  "' is not 1-31 bytes of printable ASCII without space");
  }
  if (names_.count(name)) return Misuse("section '" + shown + "' written twice");
  if (static_cast<uint32_t>(type) > kMaxElementType)
    return Misuse("section '" + shown + "': unknown element type");
  const uint32_t type_size = ElementTypeSize(type);
  if (element_size == 0 || (type_size != 0 && element_size != type_size)) {
    return Misuse("section '" + shown + "': element size " + std::to_string(element_size) +
                  " does not fit its type");
  }
  const uint64_t block = options.block_bytes != 0 ? options.block_bytes : default_block_bytes_;
  if (!IsBlockSize(block)) {
    return Misuse("section '" + shown + "': block size " + std::to_string(block) +
                  " is not a power of two from 4 KiB to 1 GiB");
  }
  if (options.access != SectionAccess::kSequential && options.access != SectionAccess::kRandom) {
    return Misuse("section '" + shown + "': unknown access hint");
  }
  if (entries_.size() >= UINT32_MAX) return Misuse("too many sections");
  FLOWRAG_RETURN_IF_ERROR(PadTo(alignment));
  current_ = SectionEntry{};
  SetField(current_.name, name);
  current_.element_type = static_cast<uint16_t>(type);
  current_.block_shift = static_cast<uint8_t>(std::countr_zero(block));
  current_.flags = options.access == SectionAccess::kRandom ? kSectionRandomAccess : 0;
  current_.element_size = element_size;
  current_.offset = position_;
  block_bytes_ = block;
  block_checksum_ = BlockChecksum();
  block_fill_ = 0;
  section_first_sum_ = block_sums_.size();
  section_open_ = true;
  names_.emplace(name);
  return Status::Ok();
}

Status SegmentWriter::Append(const void* data, size_t bytes) {
  FLOWRAG_RETURN_IF_ERROR(CheckUsable());
  if (!section_open_) return Misuse("Append outside a section");
  SumBlocks(static_cast<const char*>(data), bytes);
  return Emit(data, bytes);
}

Status SegmentWriter::AppendZeros(uint64_t bytes) {
  FLOWRAG_RETURN_IF_ERROR(CheckUsable());
  if (!section_open_) return Misuse("AppendZeros outside a section");
  if (bytes > static_cast<uint64_t>(INT64_MAX) - position_) return Misuse("file too large");
  SumBlocks(nullptr, bytes);
  if (bytes < kZeroBytes) return Emit(Zeros(), bytes);
  FLOWRAG_RETURN_IF_ERROR(Flush());
  if (::lseek(fd_, static_cast<off_t>(bytes), SEEK_CUR) < 0) {
    return Fail(OsError(tmp_path_, "cannot seek", errno));
  }
  position_ += bytes;
  return Status::Ok();
}

Status SegmentWriter::EndSection() {
  FLOWRAG_RETURN_IF_ERROR(CheckUsable());
  if (!section_open_) return Misuse("EndSection outside a section");
  const uint64_t length = position_ - current_.offset;
  if (length % current_.element_size != 0) {
    return Misuse("section '" + std::string(current_.name) + "': " + std::to_string(length) +
                  " bytes are not whole elements of " + std::to_string(current_.element_size) +
                  " bytes");
  }
  current_.length = length;
  current_.element_count = length / current_.element_size;
  if (block_fill_ > 0) block_sums_.push_back(block_checksum_.Final());
  const uint64_t blocks = block_sums_.size() - section_first_sum_;
  current_.checksum =
      StreamChecksum::Of(block_sums_.data() + section_first_sum_, blocks * sizeof(uint64_t));
  entries_.push_back(current_);
  section_open_ = false;
  Hook(SegmentWriteStep::kSectionEnded);
  return Status::Ok();
}

uint64_t SegmentWriter::ZeroBlockChecksum() {
  // No block's checksum is 0 in practice; a 0 is only computed again.
  uint64_t& known = zero_block_checksums_[std::countr_zero(block_bytes_)];
  if (known == 0) {
    BlockChecksum c;
    for (uint64_t left = block_bytes_; left > 0;) {
      const size_t n = std::min<uint64_t>(left, kZeroBytes);
      c.Update(Zeros(), n);
      left -= n;
    }
    known = c.Final();
  }
  return known;
}

void SegmentWriter::SumBlocks(const char* data, uint64_t bytes) {
  while (bytes > 0) {
    const uint64_t take = std::min(bytes, block_bytes_ - block_fill_);
    if (data == nullptr && block_fill_ == 0 && take == block_bytes_) {
      block_sums_.push_back(ZeroBlockChecksum());  // a whole block of zeros
    } else {
      for (uint64_t done = 0; done < take;) {
        const size_t n = std::min<uint64_t>(take - done, kZeroBytes);
        block_checksum_.Update(data != nullptr ? data + done : Zeros(), n);
        done += n;
      }
      block_fill_ += take;
      if (block_fill_ == block_bytes_) {
        block_sums_.push_back(block_checksum_.Final());
        block_checksum_ = BlockChecksum();
        block_fill_ = 0;
      }
    }
    if (data != nullptr) data += take;
    bytes -= take;
  }
}

Status SegmentWriter::WriteHeader(uint64_t table_offset, uint64_t table_checksum) {
  header_.file_bytes = position_;
  header_.table_offset = table_offset;
  header_.section_count = static_cast<uint32_t>(entries_.size());
  header_.table_checksum = table_checksum;
  header_.header_checksum = StreamChecksum::Of(&header_, kHeaderChecksummedBytes);
  const char* p = reinterpret_cast<const char*>(&header_);
  for (size_t done = 0; done < sizeof(header_);) {
    const ssize_t n = ::pwrite(fd_, p + done, sizeof(header_) - done, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(OsError(tmp_path_, "cannot write the header", errno));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status SegmentWriter::SyncAndRename() {
  if (::fsync(fd_) != 0) return Fail(OsError(tmp_path_, "cannot fsync", errno));
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) return Fail(OsError(tmp_path_, "cannot close", errno));
  Hook(SegmentWriteStep::kSynced);
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    return Fail(OsError(path_, "cannot rename " + tmp_path_ + " to it", errno));
  }
  finished_ = true;  // the segment exists: nothing to remove any more
  Hook(SegmentWriteStep::kRenamed);
  FLOWRAG_RETURN_IF_ERROR(Fail(SyncDirectoryOf(path_)));
  Hook(SegmentWriteStep::kDirectorySynced);
  return Status::Ok();
}

Status SegmentWriter::Finish() {
  FLOWRAG_RETURN_IF_ERROR(CheckUsable());
  if (section_open_) return Misuse("Finish with section '" + std::string(current_.name) + "' open");
  Hook(SegmentWriteStep::kSectionsWritten);
  // The block checksums, each section's where its entry says.
  FLOWRAG_RETURN_IF_ERROR(PadTo(kSectionAlignment));
  uint64_t sums_at = position_;
  for (SectionEntry& e : entries_) {
    e.block_sums = sums_at;
    sums_at += BlockCount(e.length, e.block_shift) * sizeof(uint64_t);
  }
  FLOWRAG_RETURN_IF_ERROR(Emit(block_sums_.data(), block_sums_.size() * sizeof(uint64_t)));
  FLOWRAG_RETURN_IF_ERROR(PadTo(kSectionAlignment));
  const uint64_t table_offset = position_;
  const size_t table_bytes = entries_.size() * sizeof(SectionEntry);
  const uint64_t table_checksum = StreamChecksum::Of(entries_.data(), table_bytes);
  FLOWRAG_RETURN_IF_ERROR(Emit(entries_.data(), table_bytes));
  FLOWRAG_RETURN_IF_ERROR(Flush());
  // A hole at the very end (AppendZeros, no table) has no bytes yet.
  if (::ftruncate(fd_, static_cast<off_t>(position_)) != 0) {
    return Fail(OsError(tmp_path_, "cannot set the length", errno));
  }
  FLOWRAG_RETURN_IF_ERROR(WriteHeader(table_offset, table_checksum));
  Hook(SegmentWriteStep::kTableWritten);
  return SyncAndRename();
}

}  // namespace flowrag
