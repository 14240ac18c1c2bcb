// The merge policy of a segment set: which segments to fold into one, as a
// pure function of their sizes (issue 34). Size-tiered, like Lucene's
// TieredMergePolicy in spirit (and its defaults): segments are grouped into
// tiers of similar size, a tier holding `merge_factor` segments is merged
// into one, never into a segment larger than `max_segment_bytes`, and a
// segment with many deleted rows is rewritten alone to drop them.
//
// Planning does no I/O; the merge itself (reading the rows and writing the
// merged segment) is the consumer's, and so is running it in the
// background. segment_set.h says how a merge is published so that deletes
// published while it ran are carried over.
//
// The algorithm, for segments not `busy` (being merged already):
//   1. A segment's live bytes: file bytes * live rows / rows (file bytes
//      when it has no rows). Its tier: SizeTier(live bytes).
//   2. For each kind (segments of different kinds never merge), each tier
//      from the smallest, the segments of that tier whose live bytes are at
//      most max_segment_bytes / 2 (larger ones only ever get rewritten),
//      smallest first (ties by id): while at least merge_factor remain,
//      take the merge_factor smallest, drop the largest of them until their
//      live bytes sum to at most max_segment_bytes (two always fit, each
//      being at most half of it), and plan that merge.
//   3. Every segment not in a merge whose deleted rows are at least
//      `deletes_ratio` of its rows is rewritten alone (kDeletes).
// The plan lists each segment at most once; each merge's segments ascend by
// id (their age order), which is the order the merged segment holds their
// rows in. Repeated planning and applying converges: a tier merge lowers the
// number of segments, a rewrite leaves a segment without deletes.
// Cost: O(n log n) for n segments.
#ifndef FLOWRAG_SEGMENT_MERGE_POLICY_H_
#define FLOWRAG_SEGMENT_MERGE_POLICY_H_

#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace flowrag {

class SegmentView;

struct MergePolicyOptions {
  // Segments merged at once, and the width of a tier (sizes within a factor
  // of it are "similar"): Lucene's segmentsPerTier and maxMergeAtOnce (10).
  size_t merge_factor = 10;
  // Segments up to this size form tier 0 together (tiny segments are merged
  // as if they were this large): Lucene's floorSegmentMB (2 MiB).
  uint64_t floor_segment_bytes = uint64_t{2} << 20;
  // No merge writes a larger segment: Lucene's maxMergedSegmentMB (5 GiB).
  uint64_t max_segment_bytes = uint64_t{5} << 30;
  // A segment whose deleted rows reach this share is rewritten: Lucene's
  // deletesPctAllowed (33%).
  double deletes_ratio = 0.33;
};

// The size tier of a segment of `bytes` bytes: 0 up to floor_segment_bytes,
// then t for bytes in (floor * factor^(t-1), floor * factor^t]; at most 63.
uint32_t SizeTier(uint64_t bytes, const MergePolicyOptions& options);

// What planning reads of one segment.
struct MergeCandidate {
  uint64_t id = 0;
  std::string kind;
  uint64_t file_bytes = 0;
  uint64_t rows = 0;
  uint64_t deleted = 0;  // <= rows
};

struct PlannedMerge {
  enum class Reason { kTier, kDeletes };
  Reason reason = Reason::kTier;
  std::vector<uint64_t> segments;  // ascending id; one for kDeletes
  uint64_t live_bytes = 0;         // their live bytes: the merged size, about
  uint64_t live_rows = 0;          // rows the merged segment holds
  uint32_t tier = 0;               // SizeTier(live_bytes)
};

// The merges to run now (above). Ids in `busy` are left out.
std::vector<PlannedMerge> PlanMerges(std::span<const MergeCandidate> segments,
                                     const MergePolicyOptions& options,
                                     const std::set<uint64_t>& busy = {});
// The same over a view's live segments and their tombstones.
std::vector<PlannedMerge> PlanMerges(const SegmentView& view, const MergePolicyOptions& options,
                                     const std::set<uint64_t>& busy = {});

}  // namespace flowrag

#endif  // FLOWRAG_SEGMENT_MERGE_POLICY_H_
