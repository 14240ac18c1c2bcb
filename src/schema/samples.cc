#include "schema/samples.h"

#include <algorithm>
#include <set>
#include <string>

namespace flowrag {
namespace {

size_t TextLength(const FlatRecord& r) {
  size_t n = 0;
  for (const auto& [path, value] : r.values) n += value.size();
  return n;
}

size_t SerializedSize(const FlatRecord& r) {
  size_t n = 2;
  for (const auto& [path, value] : r.values) n += path.size() + value.size() + 6;
  return n;
}

}  // namespace

long RepresentativeRecord(const std::vector<FlatRecord>& records) {
  long best = -1;
  double best_score = 0;
  const size_t n = records.size();
  for (size_t i = 0; i < n; ++i) {
    std::set<std::string> filled;
    for (const auto& [path, value] : records[i].values) {
      if (!value.empty()) filled.insert(path);
    }
    const size_t text = TextLength(records[i]);
    const double rich = text > 1000 ? 50.0 : (text < 100 ? -30.0 : 0.0);
    const double pos = static_cast<double>(i) >= 0.2 * static_cast<double>(n) &&
                               static_cast<double>(i) < 0.8 * static_cast<double>(n)
                           ? 10.0
                           : 0.0;
    const double score = 10.0 * static_cast<double>(filled.size()) + rich + pos;
    if (best < 0 || score > best_score) {
      best = static_cast<long>(i);
      best_score = score;
    }
  }
  return best;
}

std::vector<size_t> DiverseSamples(const std::vector<FlatRecord>& records, long representative,
                                   const SampleOptions& options) {
  std::vector<size_t> out;
  if (records.empty()) return out;
  size_t budget = options.token_budget * options.chars_per_token;
  std::set<size_t> taken;
  if (representative >= 0) taken.insert(static_cast<size_t>(representative));
  std::set<std::string> covered;
  auto take = [&](size_t i) {
    if (taken.count(i)) return;
    const size_t size = SerializedSize(records[i]);
    if (size > budget) return;
    budget -= size;
    taken.insert(i);
    out.push_back(i);
    for (const auto& [path, value] : records[i].values) {
      if (!value.empty()) covered.insert(path);
    }
  };
  if (representative >= 0) {
    for (const auto& [path, value] : records[static_cast<size_t>(representative)].values) {
      if (!value.empty()) covered.insert(path);
    }
  }
  const size_t n = records.size();
  for (size_t i : {size_t{0}, n / 2, n - 1}) take(i);
  // Coverage-adaptive: the record adding the most uncovered fields, while any does.
  while (true) {
    size_t best = n, best_gain = 0;
    // Large sources: candidates spread evenly, at most ~2,000 per round.
    const size_t stride = std::max<size_t>(1, n / 2000);
    for (size_t i = 0; i < n; i += stride) {
      if (taken.count(i) || SerializedSize(records[i]) > budget) continue;
      std::set<std::string> fresh;
      for (const auto& [path, value] : records[i].values) {
        if (!value.empty() && !covered.count(path)) fresh.insert(path);
      }
      if (fresh.size() > best_gain) {
        best_gain = fresh.size();
        best = i;
      }
    }
    if (best == n) break;
    take(best);
  }
  return out;
}

}  // namespace flowrag
