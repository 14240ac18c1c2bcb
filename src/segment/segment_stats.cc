#include "segment/segment_stats.h"

#include <filesystem>
#include <set>
#include <system_error>

#include "segment/manifest.h"
#include "segment/segment_set.h"

namespace flowrag {
namespace {

namespace fs = std::filesystem;

// Segment and tombstone files in `dir` that `view` does not name, and
// their bytes. Manifests, CURRENT, LOCK and temporary files are the set's
// own and not counted.
void CountUnreferenced(const std::string& dir, const SegmentView& view, SegmentStats* stats) {
  std::set<std::string> named;
  for (const LiveSegment& s : view.segments()) {
    named.insert(s.record.file_name());
    if (s.tombstones != nullptr) named.insert(fs::path(s.tombstones->path()).filename().string());
  }
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!ParseSegmentFileName(name).has_value() || named.count(name) > 0) continue;
    std::error_code size_ec;
    const uintmax_t bytes = e.file_size(size_ec);
    ++stats->unreferenced_files;
    if (!size_ec) stats->unreferenced_bytes += bytes;
  }
}

}  // namespace

Result<SegmentStats> ReadSegmentStats(const std::string& dir, const MergePolicyOptions& merge) {
  SegmentStats stats;
  stats.directory = dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return stats;
  SegmentSetOptions options;
  options.writable = false;
  options.merge = merge;
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<SegmentSet> set, SegmentSet::Open(dir, options));
  const std::shared_ptr<const SegmentView> view = set->Current();
  stats.manifest = view->number();
  stats.generation = view->generation();
  for (const LiveSegment& s : view->segments()) {
    SegmentFileStats f;
    f.id = s.record.id;
    f.kind = s.record.kind;
    f.rows = s.record.rows;
    f.deleted_rows = s.deleted.size();
    f.bytes = s.record.file_bytes;
    f.level = s.record.level;
    stats.live_bytes += f.bytes;
    stats.files.push_back(std::move(f));
  }
  CountUnreferenced(dir, *view, &stats);
  stats.merges_pending = PlanMerges(*view, merge).size();
  return stats;
}

}  // namespace flowrag
