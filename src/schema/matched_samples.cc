// MatchedSampling (schema/matched_samples.h).
#include "schema/matched_samples.h"

#include <algorithm>
#include <unordered_map>

namespace flowrag {
namespace {

// Algorithm 2's GroupBy: value → the records holding it, and the values in
// the order they first occur.
struct Groups {
  std::unordered_map<std::string, std::vector<size_t>> records;
  std::vector<std::string> order;
};

Groups GroupBy(const std::vector<FlatRecord>& records, const std::string& path) {
  Groups g;
  for (size_t i = 0; i < records.size(); ++i) {
    for (const auto& [p, value] : records[i].values) {
      if (p != path || value.empty()) continue;
      std::vector<size_t>& list = g.records[value];
      if (list.empty()) g.order.push_back(value);
      if (list.empty() || list.back() != i) list.push_back(i);
    }
  }
  return g;
}

}  // namespace

std::vector<MatchedSet> MatchedSampling(const ForeignKey& fk, const std::vector<FlatRecord>& from,
                                        const std::vector<FlatRecord>& to, size_t max_values) {
  const Groups a = GroupBy(from, fk.from_field);
  const Groups b = GroupBy(to, fk.to_field);
  std::vector<const std::string*> common;
  for (const std::string& v : a.order) {
    if (b.records.count(v)) common.push_back(&v);
  }
  std::vector<MatchedSet> out;
  const size_t n = std::min(max_values, common.size());
  for (size_t k = 0; k < n; ++k) {
    const std::string& v = *common[k * common.size() / n];
    out.push_back({v, a.records.at(v), b.records.at(v)});
  }
  return out;
}

}  // namespace flowrag
