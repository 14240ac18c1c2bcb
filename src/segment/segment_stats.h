// ReadSegmentStats: what a segment directory holds, for `flowrag stats`,
// /v1/stats and Python (flowrag/types.h SegmentStats): the current
// manifest's segments (rows, tombstoned rows, size, level), the files no
// manifest names (garbage a reader still maps, or a crash left behind
// until the next writable open), and the merges the merge policy would run
// now.
//
// Reads only: the set is opened read-only (no lock, nothing written or
// deleted), so it may run beside a writer in another process. A missing
// directory is an empty SegmentStats, not an error; a damaged manifest is
// the set's open error (segment_set.h). O(files in the directory).
#ifndef FLOWRAG_SEGMENT_SEGMENT_STATS_H_
#define FLOWRAG_SEGMENT_SEGMENT_STATS_H_

#include <string>

#include "flowrag/status.h"
#include "flowrag/types.h"
#include "segment/merge_policy.h"

namespace flowrag {

Result<SegmentStats> ReadSegmentStats(const std::string& dir,
                                      const MergePolicyOptions& merge = MergePolicyOptions());

}  // namespace flowrag

#endif  // FLOWRAG_SEGMENT_SEGMENT_STATS_H_
