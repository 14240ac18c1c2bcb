// The qafd retriever's optional output (RetrievalRequest::explain):
// explanation paths and the flow-carrying subgraph (qafd_graph.h).
#include <algorithm>

#include "retrieval/qafd_graph.h"

namespace flowrag {
namespace {

// Follows the largest inflow back from `passage` to a source within one run.
ExplanationPath PathTo(const RankedPassage& p, const std::vector<QafdRun>& runs,
                       const QafdNodes& nodes) {
  ExplanationPath path;
  path.passage = p.passage;
  path.score = p.score;
  auto at = nodes.find(p.passage);
  if (at == nodes.end()) {
    path.nodes.push_back(p.passage);
    return path;
  }
  const FlowDiffusionResult& f = runs[at->second.run].flow;
  std::vector<uint32_t> rev;
  ptrdiff_t e = at->second.entry;
  for (size_t guard = 0; guard < 64 && e >= 0; ++guard) {
    const uint32_t v = f.nodes[e];
    if (std::find(rev.begin(), rev.end(), v) != rev.end()) break;
    rev.push_back(v);
    if (f.source[e] > 0 || f.parent[e] == UINT32_MAX) break;
    e = f.Find(f.parent[e]);
  }
  path.nodes.assign(rev.rbegin(), rev.rend());
  return path;
}

void AddRunEdges(const QafdRun& run, double support,
                 std::unordered_map<uint64_t, TouchedEdge>* edges) {
  const FlowDiffusionResult& f = run.flow;
  std::unordered_map<uint32_t, double> xs;
  for (uint32_t i = 0; i < f.nodes.size(); ++i) xs.emplace(f.nodes[i], f.x[i]);
  for (uint32_t i = 0; i < f.nodes.size(); ++i) {
    if (f.x[i] <= support) continue;
    const uint32_t u = f.nodes[i];
    for (uint64_t j = f.adj_offsets[i]; j < f.adj_offsets[i + 1]; ++j) {
      const uint32_t v = f.adj_nodes[j];
      auto it = xs.find(v);
      const double xv = it == xs.end() ? 0.0 : it->second;
      if (xv >= f.x[i]) continue;
      const uint64_t key = (static_cast<uint64_t>(u) << 32) | v;
      auto [e, inserted] = edges->try_emplace(key, TouchedEdge{u, v, EdgeKind::kMentions, 0, 0});
      if (inserted) e->second.kind = run.graph->KindBetween(u, v);
      e->second.weight += f.adj_weights[j];
      e->second.flow += f.adj_weights[j] * (f.x[i] - xv);
    }
  }
}

}  // namespace

void ExplainQafd(const std::vector<QafdRun>& runs, const QafdNodes& nodes,
                 const QafdOptions& options, RetrievalOutput* out) {
  for (const RankedPassage& p : out->ranked) out->paths.push_back(PathTo(p, runs, nodes));
  std::unordered_map<uint64_t, TouchedEdge> edges;
  for (const QafdRun& run : runs) AddRunEdges(run, options.support, &edges);
  for (const auto& [key, e] : edges) out->subgraph.push_back(e);
  std::sort(out->subgraph.begin(), out->subgraph.end(),
            [](const TouchedEdge& a, const TouchedEdge& b) {
              if (a.flow != b.flow) return a.flow > b.flow;
              return a.from != b.from ? a.from < b.from : a.to < b.to;
            });
  out->diagnostics.extra["subgraph_edges"] = static_cast<double>(out->subgraph.size());
  if (out->subgraph.size() > options.max_subgraph_edges) {
    out->subgraph.resize(options.max_subgraph_edges);
  }
}

}  // namespace flowrag
