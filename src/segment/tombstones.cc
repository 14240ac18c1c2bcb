#include "segment/tombstones.h"

#include <algorithm>

#include "segment/segment_set.h"
#include "segment/segment_writer.h"

namespace flowrag {
namespace {

// The first position where `rows` does not ascend strictly, or rows.size().
size_t FirstUnordered(std::span<const uint64_t> rows) {
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i] <= rows[i - 1]) return i;
  }
  return rows.size();
}

}  // namespace

Status WriteTombstoneFile(const std::string& path, uint64_t segment_id, int64_t generation,
                          std::span<const uint64_t> rows) {
  if (rows.empty()) return Status::InvalidArgument(path + ": a tombstone set of no rows");
  const size_t bad = FirstUnordered(rows);
  if (bad != rows.size()) {
    return Status::InvalidArgument(path + ": deleted rows do not ascend strictly (" +
                                   std::to_string(rows[bad]) + " after " +
                                   std::to_string(rows[bad - 1]) + ")");
  }
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<SegmentWriter> w,
                           SegmentWriter::Create(path, kTombstoneKind, generation, segment_id));
  FLOWRAG_RETURN_IF_ERROR(w->AddSection(kTombstoneRowsSection, rows));
  return w->Finish();
}

Result<std::span<const uint64_t>> ReadTombstoneRows(const SegmentReader& reader,
                                                    const SegmentRecord& segment) {
  const std::string& path = reader.path();
  const std::string of = " (tombstones of segment " + std::to_string(segment.id) + ")";
  if (reader.info().kind != kTombstoneKind) {
    return Status::Corruption(path + ": a segment of kind '" + reader.info().kind +
                              "', not tombstones" + of);
  }
  if (reader.info().segment_id != segment.id) {
    return Status::Corruption(path + ": tombstones of segment " +
                              std::to_string(reader.info().segment_id) + ", named" + of);
  }
  Result<std::span<const uint64_t>> rows = reader.Section<uint64_t>(kTombstoneRowsSection);
  if (!rows.ok()) {
    // A missing or mistyped section is damage here, not a caller's mistake.
    return Status::Corruption(rows.status().message() + of);
  }
  if (rows->size() != segment.tombstones.deleted) {
    return Status::Corruption(path + ": " + std::to_string(rows->size()) +
                              " deleted rows, the manifest says " +
                              std::to_string(segment.tombstones.deleted) + of);
  }
  const size_t bad = FirstUnordered(*rows);
  if (bad != rows->size()) {
    return Status::Corruption(path + ": deleted rows do not ascend strictly at " +
                              std::to_string(bad) + of);
  }
  if (!rows->empty() && rows->back() >= segment.rows) {
    return Status::Corruption(path + ": deleted row " + std::to_string(rows->back()) +
                              " of a segment of " + std::to_string(segment.rows) + " rows" + of);
  }
  return *rows;
}

std::vector<uint64_t> UnionRows(std::span<const uint64_t> a, std::span<const uint64_t> b) {
  std::vector<uint64_t> out;
  out.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

Result<std::vector<uint64_t>> TombstonesSince(const SegmentView& base, const SegmentView& now,
                                              uint64_t segment_id) {
  const LiveSegment* before = base.Find(segment_id);
  const LiveSegment* after = now.Find(segment_id);
  if (before == nullptr || after == nullptr) {
    return Status::FailedPrecondition(
        "segment " + std::to_string(segment_id) + " is not live in manifest " +
        std::to_string(before == nullptr ? base.number() : now.number()));
  }
  std::vector<uint64_t> added;
  std::set_difference(after->deleted.begin(), after->deleted.end(), before->deleted.begin(),
                      before->deleted.end(), std::back_inserter(added));
  if (after->deleted.size() - added.size() != before->deleted.size()) {
    return Status::FailedPrecondition(
        "segment " + std::to_string(segment_id) + ": rows deleted in manifest " +
        std::to_string(base.number()) + " are not deleted in manifest " +
        std::to_string(now.number()) + " (its tombstones were replaced)");
  }
  return added;
}

Result<MergeRowMap> MergeRowMap::Build(const SegmentView& base, std::span<const uint64_t> sources) {
  MergeRowMap map;
  for (uint64_t id : sources) {
    const LiveSegment* s = base.Find(id);
    if (s == nullptr) {
      return Status::FailedPrecondition("merged segment " + std::to_string(id) +
                                        " is not live in manifest " +
                                        std::to_string(base.number()));
    }
    if (map.sources_.count(id)) {
      return Status::InvalidArgument("segment " + std::to_string(id) + " merged twice");
    }
    map.sources_[id] = Source{map.merged_rows_, s->record.rows, s->deleted};
    map.merged_rows_ += s->live_rows();
  }
  return map;
}

std::optional<uint64_t> MergeRowMap::Map(uint64_t segment_id, uint64_t row) const {
  auto it = sources_.find(segment_id);
  if (it == sources_.end() || row >= it->second.rows) return std::nullopt;
  const std::span<const uint64_t> deleted = it->second.deleted;
  auto at = std::lower_bound(deleted.begin(), deleted.end(), row);
  if (at != deleted.end() && *at == row) return std::nullopt;
  return it->second.offset + row - static_cast<uint64_t>(at - deleted.begin());
}

Result<std::vector<uint64_t>> MergeRowMap::MapRows(uint64_t segment_id,
                                                   std::span<const uint64_t> rows) const {
  std::vector<uint64_t> out;
  out.reserve(rows.size());
  for (uint64_t row : rows) {
    const std::optional<uint64_t> mapped = Map(segment_id, row);
    if (!mapped) {
      return Status::InvalidArgument("row " + std::to_string(row) + " of segment " +
                                     std::to_string(segment_id) + " is not in the merged segment");
    }
    out.push_back(*mapped);
  }
  return out;
}

}  // namespace flowrag
