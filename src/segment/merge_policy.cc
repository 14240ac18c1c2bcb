#include "segment/merge_policy.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "segment/segment_set.h"

namespace flowrag {
namespace {

struct Sized {
  const MergeCandidate* candidate;
  uint64_t live_bytes;
  uint64_t live_rows;
};

uint64_t LiveBytes(const MergeCandidate& c) {
  if (c.rows == 0) return c.file_bytes;
  const uint64_t live_rows = c.rows - std::min(c.deleted, c.rows);
  return static_cast<uint64_t>(static_cast<unsigned __int128>(c.file_bytes) * live_rows / c.rows);
}

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

size_t MergeFactor(const MergePolicyOptions& options) {
  return std::max<size_t>(options.merge_factor, 2);
}

PlannedMerge MakeMerge(PlannedMerge::Reason reason, std::span<const Sized> members,
                       const MergePolicyOptions& options) {
  PlannedMerge m;
  m.reason = reason;
  for (const Sized& s : members) {
    m.segments.push_back(s.candidate->id);
    m.live_bytes = SaturatingAdd(m.live_bytes, s.live_bytes);
    m.live_rows = SaturatingAdd(m.live_rows, s.live_rows);
  }
  std::sort(m.segments.begin(), m.segments.end());
  m.tier = SizeTier(m.live_bytes, options);
  return m;
}

// Step 2 for one tier of one kind, `tier` sorted smallest first: appends
// the merges and marks their members in `merged`.
void PlanTier(std::span<const Sized> tier, const MergePolicyOptions& options,
              std::vector<PlannedMerge>* plan, std::set<uint64_t>* merged) {
  const size_t factor = MergeFactor(options);
  size_t next = 0;
  while (tier.size() - next >= factor) {
    size_t take = factor;
    uint64_t sum = 0;
    for (size_t i = 0; i < take; ++i) sum = SaturatingAdd(sum, tier[next + i].live_bytes);
    while (take > 2 && sum > options.max_segment_bytes) {
      --take;
      sum -= tier[next + take].live_bytes;
    }
    const std::span<const Sized> members = tier.subspan(next, take);
    plan->push_back(MakeMerge(PlannedMerge::Reason::kTier, members, options));
    for (const Sized& s : members) merged->insert(s.candidate->id);
    next += take;
  }
}

}  // namespace

uint32_t SizeTier(uint64_t bytes, const MergePolicyOptions& options) {
  const uint64_t factor = MergeFactor(options);
  uint64_t bound = std::max<uint64_t>(options.floor_segment_bytes, 1);
  uint32_t tier = 0;
  while (bytes > bound && tier < 63) {
    bound = bound > UINT64_MAX / factor ? UINT64_MAX : bound * factor;
    ++tier;
  }
  return tier;
}

std::vector<PlannedMerge> PlanMerges(std::span<const MergeCandidate> segments,
                                     const MergePolicyOptions& options,
                                     const std::set<uint64_t>& busy) {
  // (kind, tier) -> the tier's mergeable segments.
  std::map<std::pair<std::string, uint32_t>, std::vector<Sized>> tiers;
  std::vector<Sized> all;
  for (const MergeCandidate& c : segments) {
    if (busy.count(c.id)) continue;
    const Sized s{&c, LiveBytes(c), c.rows - std::min(c.deleted, c.rows)};
    all.push_back(s);
    if (s.live_bytes <= options.max_segment_bytes / 2) {
      tiers[{c.kind, SizeTier(s.live_bytes, options)}].push_back(s);
    }
  }
  std::vector<PlannedMerge> plan;
  std::set<uint64_t> merged;
  for (auto& [key, members] : tiers) {
    std::sort(members.begin(), members.end(), [](const Sized& a, const Sized& b) {
      return std::tie(a.live_bytes, a.candidate->id) < std::tie(b.live_bytes, b.candidate->id);
    });
    PlanTier(members, options, &plan, &merged);
  }
  std::sort(all.begin(), all.end(),
            [](const Sized& a, const Sized& b) { return a.candidate->id < b.candidate->id; });
  for (const Sized& s : all) {
    const MergeCandidate& c = *s.candidate;
    if (merged.count(c.id) || c.rows == 0 || c.deleted == 0) continue;
    if (static_cast<double>(c.deleted) >= options.deletes_ratio * static_cast<double>(c.rows)) {
      plan.push_back(MakeMerge(PlannedMerge::Reason::kDeletes, std::span(&s, 1), options));
    }
  }
  return plan;
}

std::vector<PlannedMerge> PlanMerges(const SegmentView& view, const MergePolicyOptions& options,
                                     const std::set<uint64_t>& busy) {
  std::vector<MergeCandidate> candidates;
  candidates.reserve(view.segments().size());
  for (const LiveSegment& s : view.segments()) {
    candidates.push_back(MergeCandidate{s.record.id, s.record.kind, s.record.file_bytes,
                                        s.record.rows, s.record.tombstones.deleted});
  }
  return PlanMerges(candidates, options, busy);
}

}  // namespace flowrag
