#include "retrieval/spreading_activation.h"

#include <algorithm>
#include <cassert>

namespace flowrag {

SaGraph SaGraph::FromArcs(size_t num_nodes, std::span<const Arc> arcs) {
  SaGraph g;
  g.offsets.assign(num_nodes + 1, 0);
  for (const Arc& a : arcs) {
    assert(a.from < num_nodes && a.to < num_nodes);
    ++g.offsets[a.from + 1];
  }
  for (size_t i = 0; i < num_nodes; ++i) g.offsets[i + 1] += g.offsets[i];
  g.targets.resize(arcs.size());
  g.weights.resize(arcs.size());
  std::vector<uint32_t> next(g.offsets.begin(), g.offsets.end() - 1);
  for (const Arc& a : arcs) {
    const uint32_t slot = next[a.from]++;
    g.targets[slot] = a.to;
    g.weights[slot] = a.weight;
  }
  return g;
}

SaRun SpreadActivation(const SaGraph& graph, std::span<const uint32_t> seeds,
                       bool track_carried) {
  const size_t n = graph.num_nodes();
  SaRun run;
  run.activation.assign(n, 0.0f);
  run.first_arc.assign(n, SaRun::kNoArc);
  if (track_carried) run.carried.assign(graph.num_arcs(), 0.0f);
  // visited[v] == pass ⇔ v visited in the current seed's pass (no O(n) reset).
  std::vector<uint32_t> visited(n, 0);
  std::vector<uint8_t> seen_seed(n, 0);
  std::vector<uint32_t> queue;
  uint32_t pass = 0;
  float* a = run.activation.data();
  for (uint32_t seed : seeds) {
    if (seed >= n || seen_seed[seed]) continue;
    seen_seed[seed] = 1;
    ++pass;
    a[seed] = 1.0f;
    queue.clear();
    queue.push_back(seed);
    for (size_t head = 0; head < queue.size(); ++head) {
      const uint32_t u = queue[head];
      if (visited[u] == pass) continue;
      visited[u] = pass;
      ++run.steps;
      for (uint32_t i = graph.offsets[u]; i < graph.offsets[u + 1]; ++i) {
        const uint32_t t = graph.targets[i];
        const float before = a[t];
        const float after = std::min(1.0f, before + graph.weights[i] * a[u]);
        ++run.arc_updates;
        if (after > before) {
          a[t] = after;
          if (before == 0.0f && run.first_arc[t] == SaRun::kNoArc && t != seed) {
            run.first_arc[t] = i;
          }
          if (track_carried) run.carried[i] += after - before;
        }
        if (visited[t] != pass) queue.push_back(t);
      }
    }
  }
  return run;
}

std::vector<uint32_t> ActivatedNodes(const SaRun& run, float tau_a) {
  std::vector<uint32_t> out;
  for (uint32_t v = 0; v < run.activation.size(); ++v) {
    if (run.activation[v] > tau_a) out.push_back(v);
  }
  return out;
}

}  // namespace flowrag
