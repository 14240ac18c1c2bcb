// Tombstones of a segment set (segment_set.h): the files that hold a
// segment's deleted row ordinals, and carrying deletes over a merge.
//
// A tombstone file is a segment (segment_format.h) of kind "tombstones"
// whose header's segment_id is the segment it deletes from, with one
// section "rows": the deleted ordinals as u64, strictly ascending. A
// segment has at most one live tombstone file, holding all its deleted
// rows; a new delete writes a new file with the union (files are
// immutable), which the next manifest names instead.
//
// Re-applying deletes after a merge: a merge reads its segments from a view
// `base` and writes their rows, leaving out those deleted in `base`, one
// segment after the other. Rows deleted after `base` are still in the
// merged segment; TombstonesSince finds them and MergeRowMap maps them to
// the merged segment's ordinals. Publish does this for an edit with
// `merged_from`; a consumer with another row order uses TombstonesSince
// with its own map.
#ifndef FLOWRAG_SEGMENT_TOMBSTONES_H_
#define FLOWRAG_SEGMENT_TOMBSTONES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "flowrag/status.h"
#include "segment/manifest.h"
#include "segment/segment_reader.h"

namespace flowrag {

class SegmentView;

inline constexpr char kTombstoneRowsSection[] = "rows";

// Writes the tombstone file `path` for segment `segment_id` (tmp, fsync,
// rename, directory fsync: SegmentWriter). InvalidArgument unless `rows` is
// non-empty and strictly ascending. O(rows).
Status WriteTombstoneFile(const std::string& path, uint64_t segment_id, int64_t generation,
                          std::span<const uint64_t> rows);

// The deleted rows of `reader`, the tombstone file of `segment`: checks its
// kind, the segment it names, its rows' checksum, that they ascend strictly
// and lie below segment.rows, and that there are as many as the manifest
// says. Corruption naming the file otherwise. O(rows).
Result<std::span<const uint64_t>> ReadTombstoneRows(const SegmentReader& reader,
                                                    const SegmentRecord& segment);

// The sorted union of two strictly ascending lists. O(a + b).
std::vector<uint64_t> UnionRows(std::span<const uint64_t> a, std::span<const uint64_t> b);

// The rows of segment `segment_id` deleted in `now` and not in `base`,
// ascending. FailedPrecondition when the segment is not live in both views
// or a row deleted in `base` is not deleted in `now` (tombstones were
// replaced, not added to). O(deleted rows).
Result<std::vector<uint64_t>> TombstonesSince(const SegmentView& base, const SegmentView& now,
                                              uint64_t segment_id);

// Where the rows of merged segments land in the merged segment: the
// segments' rows one segment after the other, in `sources` order, each
// leaving out the rows deleted in `base`.
class MergeRowMap {
 public:
  // FailedPrecondition when a source is not live in `base`; InvalidArgument
  // when one is named twice. O(sources log sources). The map borrows the
  // deleted rows of `base`: hold `base` while using it.
  static Result<MergeRowMap> Build(const SegmentView& base, std::span<const uint64_t> sources);

  // Rows of the merged segment.
  uint64_t merged_rows() const { return merged_rows_; }
  // The merged segment's ordinal of row `row` of `segment_id`; nullopt when
  // the row was deleted in `base` (not in the merged segment), the row is
  // out of range or the segment is no source. O(log deleted).
  std::optional<uint64_t> Map(uint64_t segment_id, uint64_t row) const;
  // Map of each of `rows` (strictly ascending, none deleted in `base`),
  // ascending. InvalidArgument for a row that does not map. O(rows log deleted).
  Result<std::vector<uint64_t>> MapRows(uint64_t segment_id, std::span<const uint64_t> rows) const;

 private:
  struct Source {
    uint64_t offset = 0;  // merged ordinal of its first kept row
    uint64_t rows = 0;
    std::span<const uint64_t> deleted;  // in base; borrowed from base's view
  };
  std::map<uint64_t, Source> sources_;
  uint64_t merged_rows_ = 0;
};

}  // namespace flowrag

#endif  // FLOWRAG_SEGMENT_TOMBSTONES_H_
