#include "segment/manifest.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstring>
#include <set>
#include <type_traits>

#include "common/checksum.h"
#include "segment/file_util.h"

namespace flowrag {
namespace {

// The header and a record as they lie in the file (manifest.h).
struct ManifestHeader {
  char magic[8];
  uint32_t format_version;
  uint32_t header_bytes;
  uint32_t record_bytes;
  uint32_t segment_count;
  uint64_t number;
  int64_t generation;
  uint64_t next_file_number;
  uint64_t file_bytes;
  uint64_t reserved;
};
static_assert(std::is_trivially_copyable_v<ManifestHeader> &&
              sizeof(ManifestHeader) == kManifestHeaderBytes);
static_assert(offsetof(ManifestHeader, number) == 24 && offsetof(ManifestHeader, file_bytes) == 48);

struct ManifestRecord {
  uint64_t id;
  char kind[kMaxKindBytes + 1];
  uint64_t file_bytes;
  uint64_t fingerprint;
  uint64_t rows;
  uint32_t level;
  uint32_t reserved;
  uint64_t tombstone_number;
  uint64_t tombstone_bytes;
  uint64_t tombstone_fingerprint;
  uint64_t deleted;
};
static_assert(std::is_trivially_copyable_v<ManifestRecord> &&
              sizeof(ManifestRecord) == kManifestRecordBytes);
static_assert(offsetof(ManifestRecord, file_bytes) == 32 && offsetof(ManifestRecord, level) == 56 &&
              offsetof(ManifestRecord, tombstone_number) == 64 &&
              offsetof(ManifestRecord, deleted) == 88);

// The smallest file a segment can be: its header.
constexpr uint64_t kMinSegmentBytes = sizeof(SegmentHeader);

bool IsDataKind(std::string_view kind) { return IsSegmentKind(kind) && kind != kTombstoneKind; }

std::string ZeroPadded(uint64_t n) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%08llu", static_cast<unsigned long long>(n));
  return buf;
}

// Digits of a canonical number (as ZeroPadded writes it), nullopt otherwise.
std::optional<uint64_t> ParseNumber(std::string_view digits) {
  if (digits.size() < 8 || digits.size() > 20) return std::nullopt;
  uint64_t n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    if (__builtin_mul_overflow(n, uint64_t{10}, &n) ||
        __builtin_add_overflow(n, uint64_t(c - '0'), &n)) {
      return std::nullopt;
    }
  }
  if (ZeroPadded(n) != digits) return std::nullopt;  // "000000001" is not canonical
  return n;
}

class ManifestParser {
 public:
  ManifestParser(std::string_view bytes, const std::string& file) : bytes_(bytes), file_(file) {}

  Result<Manifest> Parse() {
    FLOWRAG_RETURN_IF_ERROR(CheckFrame());
    FLOWRAG_RETURN_IF_ERROR(ParseHeader());
    for (uint32_t i = 0; i < count_; ++i) {
      ManifestRecord r;
      std::memcpy(&r, bytes_.data() + kManifestHeaderBytes + size_t{i} * kManifestRecordBytes,
                  sizeof(r));
      FLOWRAG_RETURN_IF_ERROR(ParseRecord(r, i));
    }
    return std::move(manifest_);
  }

 private:
  Status Corrupt(const std::string& what) const {
    return Status::Corruption(file_ + ": corrupt manifest: " + what);
  }

  // Length, magic, version and checksum: nothing else is believed before.
  Status CheckFrame() {
    if (bytes_.size() < kManifestHeaderBytes + kManifestChecksumBytes) {
      return Corrupt(std::to_string(bytes_.size()) + " bytes, shorter than a header and checksum");
    }
    if (std::memcmp(bytes_.data(), kManifestMagic, sizeof(kManifestMagic)) != 0) {
      return Corrupt("not a manifest (bad magic)");
    }
    uint32_t version;
    std::memcpy(&version, bytes_.data() + 8, sizeof(version));
    if (version != kManifestFormatVersion) {
      return Corrupt("format version " + std::to_string(version) + ", this reader reads " +
                     std::to_string(kManifestFormatVersion));
    }
    const size_t body = bytes_.size() - kManifestChecksumBytes;
    uint64_t stored;
    std::memcpy(&stored, bytes_.data() + body, sizeof(stored));
    const uint64_t computed = ManifestChecksum(bytes_.substr(0, body));
    if (stored != computed) {
      return Corrupt("checksum mismatch (stored " + Hex(stored) + ", computed " + Hex(computed) +
                     "): torn or altered");
    }
    return Status::Ok();
  }

  Status ParseHeader() {
    ManifestHeader h;
    std::memcpy(&h, bytes_.data(), sizeof(h));
    if (h.header_bytes != kManifestHeaderBytes || h.record_bytes != kManifestRecordBytes) {
      return Corrupt("header of " + std::to_string(h.header_bytes) + " bytes, records of " +
                     std::to_string(h.record_bytes) + "; expected 64 and 96");
    }
    if (h.reserved != 0) return Corrupt("reserved header field not zero");
    if (h.file_bytes != bytes_.size()) {
      return Corrupt(std::to_string(bytes_.size()) + " bytes, the header says " +
                     std::to_string(h.file_bytes));
    }
    const uint64_t expected = kManifestHeaderBytes +
                              uint64_t{h.segment_count} * kManifestRecordBytes +
                              kManifestChecksumBytes;
    if (expected != bytes_.size()) {
      return Corrupt(std::to_string(h.segment_count) + " records do not fill " +
                     std::to_string(bytes_.size()) + " bytes");
    }
    if (h.number == 0) return Corrupt("manifest number 0");
    if (h.next_file_number == 0) return Corrupt("next file number 0");
    count_ = h.segment_count;
    manifest_.number = h.number;
    manifest_.generation = h.generation;
    manifest_.next_file_number = h.next_file_number;
    manifest_.segments.reserve(count_);
    return Status::Ok();
  }

  // A file number the manifest may name: 1 <= n < next_file_number, unused.
  Status CheckNumber(uint64_t n, const std::string& where) {
    if (n == 0 || n >= manifest_.next_file_number) {
      return Corrupt(where + ": file number " + std::to_string(n) + " outside [1, " +
                     std::to_string(manifest_.next_file_number) + ")");
    }
    if (!numbers_.insert(n).second) {
      return Corrupt(where + ": file number " + std::to_string(n) + " named twice");
    }
    return Status::Ok();
  }

  Status ParseRecord(const ManifestRecord& r, uint32_t index) {
    const std::string where = "record " + std::to_string(index);
    const std::optional<std::string_view> kind = FieldText(r.kind);
    if (!kind || !IsDataKind(*kind)) {
      return Corrupt(where + ": kind is not 1-23 bytes of [a-z0-9_.-] (nor \"tombstones\")");
    }
    if (!manifest_.segments.empty() && r.id <= manifest_.segments.back().id) {
      return Corrupt(where + ": segment ids do not ascend (" + std::to_string(r.id) + " after " +
                     std::to_string(manifest_.segments.back().id) + ")");
    }
    FLOWRAG_RETURN_IF_ERROR(CheckNumber(r.id, where));
    if (r.file_bytes < kMinSegmentBytes) {
      return Corrupt(where + ": segment of " + std::to_string(r.file_bytes) + " bytes");
    }
    if (r.level > kMaxSegmentLevel) return Corrupt(where + ": level " + std::to_string(r.level));
    if (r.reserved != 0) return Corrupt(where + ": reserved field not zero");
    TombstoneRecord t{r.tombstone_number, r.tombstone_bytes, r.tombstone_fingerprint, r.deleted};
    if (t.number == 0) {
      if (t != TombstoneRecord{}) return Corrupt(where + ": tombstone fields without a file");
    } else {
      FLOWRAG_RETURN_IF_ERROR(CheckNumber(t.number, where + " tombstones"));
      if (t.file_bytes < kMinSegmentBytes) {
        return Corrupt(where + ": tombstone file of " + std::to_string(t.file_bytes) + " bytes");
      }
      if (t.deleted == 0 || t.deleted > r.rows) {
        return Corrupt(where + ": " + std::to_string(t.deleted) + " deleted rows of " +
                       std::to_string(r.rows));
      }
    }
    manifest_.segments.push_back(
        SegmentRecord{r.id, std::string(*kind), r.file_bytes, r.fingerprint, r.rows, r.level, t});
    return Status::Ok();
  }

  std::string_view bytes_;
  const std::string& file_;
  uint32_t count_ = 0;
  Manifest manifest_;
  std::set<uint64_t> numbers_;
};

}  // namespace

std::string SegmentRecord::file_name() const { return SegmentFileName(id, kind); }

const SegmentRecord* Manifest::Find(uint64_t id) const {
  auto it = std::lower_bound(segments.begin(), segments.end(), id,
                             [](const SegmentRecord& r, uint64_t v) { return r.id < v; });
  return it != segments.end() && it->id == id ? &*it : nullptr;
}

uint64_t ManifestChecksum(std::string_view bytes_before_checksum) {
  return StreamChecksum::Of(bytes_before_checksum.data(), bytes_before_checksum.size());
}

std::string EncodeManifest(const Manifest& manifest) {
  const size_t size = kManifestHeaderBytes + manifest.segments.size() * kManifestRecordBytes +
                      kManifestChecksumBytes;
  std::string out(size, '\0');
  ManifestHeader h{};
  std::memcpy(h.magic, kManifestMagic, sizeof(h.magic));
  h.format_version = kManifestFormatVersion;
  h.header_bytes = kManifestHeaderBytes;
  h.record_bytes = kManifestRecordBytes;
  h.segment_count = static_cast<uint32_t>(manifest.segments.size());
  h.number = manifest.number;
  h.generation = manifest.generation;
  h.next_file_number = manifest.next_file_number;
  h.file_bytes = size;
  std::memcpy(out.data(), &h, sizeof(h));
  char* at = out.data() + kManifestHeaderBytes;
  for (const SegmentRecord& s : manifest.segments) {
    assert(IsDataKind(s.kind) && s.level <= kMaxSegmentLevel);
    ManifestRecord r{};
    r.id = s.id;
    std::memcpy(r.kind, s.kind.data(), std::min(s.kind.size(), kMaxKindBytes));
    r.file_bytes = s.file_bytes;
    r.fingerprint = s.fingerprint;
    r.rows = s.rows;
    r.level = s.level;
    r.tombstone_number = s.tombstones.number;
    r.tombstone_bytes = s.tombstones.file_bytes;
    r.tombstone_fingerprint = s.tombstones.fingerprint;
    r.deleted = s.tombstones.deleted;
    std::memcpy(at, &r, sizeof(r));
    at += sizeof(r);
  }
  const uint64_t checksum = ManifestChecksum(std::string_view(out.data(), size - 8));
  std::memcpy(at, &checksum, sizeof(checksum));
  return out;
}

Result<Manifest> ParseManifest(std::string_view bytes, const std::string& file) {
  return ManifestParser(bytes, file).Parse();
}

std::string ManifestFileName(uint64_t number) { return "MANIFEST-" + ZeroPadded(number); }

std::string SegmentFileName(uint64_t number, std::string_view kind) {
  return ZeroPadded(number) + "." + std::string(kind) + ".seg";
}

std::optional<uint64_t> ParseManifestFileName(std::string_view name) {
  constexpr std::string_view kPrefix = "MANIFEST-";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  return ParseNumber(name.substr(kPrefix.size()));
}

std::optional<SegmentFileId> ParseSegmentFileName(std::string_view name) {
  constexpr std::string_view kSuffix = ".seg";
  const size_t dot = name.find('.');
  if (dot == std::string_view::npos || name.size() < dot + 1 + kSuffix.size() ||
      name.substr(name.size() - kSuffix.size()) != kSuffix) {
    return std::nullopt;
  }
  const std::optional<uint64_t> number = ParseNumber(name.substr(0, dot));
  const std::string_view kind = name.substr(dot + 1, name.size() - kSuffix.size() - dot - 1);
  if (!number || !IsSegmentKind(kind)) return std::nullopt;
  return SegmentFileId{*number, std::string(kind)};
}

std::string EncodeCurrent(uint64_t number) { return ManifestFileName(number) + "\n"; }

Result<uint64_t> ParseCurrent(std::string_view bytes, const std::string& file) {
  std::optional<uint64_t> number;
  if (!bytes.empty() && bytes.back() == '\n') {
    number = ParseManifestFileName(bytes.substr(0, bytes.size() - 1));
  }
  if (!number || *number == 0) {
    std::string shown;
    for (char c : bytes.substr(0, 40)) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
    return Status::Corruption(file + ": damaged: '" + shown +
                              "' is not a manifest name and a newline");
  }
  return *number;
}

}  // namespace flowrag
