#include "retrieval/walk_ranking.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace flowrag {
namespace {

bool ScoreBefore(const NodeScore& a, const NodeScore& b) {
  return a.score != b.score ? a.score > b.score : a.node < b.node;
}

// Keeps the best k of *v, best first.
void KeepTop(std::vector<NodeScore>* v, size_t k) {
  k = std::min(k, v->size());
  std::partial_sort(v->begin(), v->begin() + static_cast<std::ptrdiff_t>(k), v->end(), ScoreBefore);
  v->resize(k);
}

// A path to each ranked passage, then the transitions among the reported
// nodes (merged per target, by target).
void ExplainWalk(const TransitionSource& graph, const std::function<double(uint32_t)>& score,
                 const std::function<double(uint32_t)>& reset, double damping,
                 const std::vector<NodeScore>& passages, RetrievalOutput* out) {
  constexpr size_t kMaxPathNodes = 6;
  RowCache rows(graph);
  std::unordered_set<uint32_t> members;
  for (const NodeScore& n : out->node_scores) members.insert(n.node);
  for (const NodeScore& p : passages) {
    ExplanationPath path;
    path.passage = p.node;
    path.score = p.score;
    path.nodes = PredecessorPath(rows, score, reset, damping, p.node, kMaxPathNodes);
    for (uint32_t n : path.nodes) members.insert(n);
    out->paths.push_back(std::move(path));
  }
  for (const NodeScore& sd : out->seeds) members.insert(sd.node);

  std::vector<uint32_t> sorted(members.begin(), members.end());
  std::sort(sorted.begin(), sorted.end());
  std::unordered_map<uint32_t, size_t> at;  // target → index in the merged row
  for (uint32_t u : sorted) {
    const double xu = score(u);
    std::vector<Transition> merged;
    at.clear();
    for (const Transition& t : rows.Get(u)) {
      if (!members.count(t.target)) continue;
      auto [it, inserted] = at.try_emplace(t.target, merged.size());
      if (inserted) {
        merged.push_back(t);
      } else {
        merged[it->second].prob += t.prob;
      }
    }
    std::sort(merged.begin(), merged.end(),
              [](const Transition& a, const Transition& b) { return a.target < b.target; });
    for (const Transition& t : merged) {
      out->subgraph.push_back(
          {u, t.target, static_cast<EdgeKind>(t.tag), t.prob, damping * xu * t.prob});
    }
  }
}

}  // namespace

void FillGraphOutput(const Snapshot& s, const TransitionSource& graph,
                     const std::vector<uint32_t>& scored_nodes,
                     const std::function<double(uint32_t)>& score,
                     const std::function<double(uint32_t)>& reset, double damping, size_t top_k,
                     size_t max_nodes, RetrievalOutput* out, bool explain) {
  const uint32_t num_passages = static_cast<uint32_t>(s.num_passages());
  std::vector<NodeScore> passages, nodes;
  nodes.reserve(scored_nodes.size());
  for (uint32_t u : scored_nodes) {
    const double x = score(u);
    if (!(x > 0)) continue;
    nodes.push_back({u, x});
    if (u < num_passages) passages.push_back({u, x});
  }
  KeepTop(&passages, top_k);
  KeepTop(&nodes, max_nodes);
  for (const NodeScore& p : passages) out->ranked.push_back({p.node, p.score});
  out->node_scores = std::move(nodes);
  if (explain) ExplainWalk(graph, score, reset, damping, passages, out);
}

}  // namespace flowrag
