#include "graph_algo/spreading_activation.h"

#include <algorithm>
#include <cassert>
#include <string>

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

namespace {

// One relaxation of Algorithm 1 along arc i (u → t, weight w) in the pass
// from `seed`: a[t] ← min(1, a[t] + w·a[u]), recording the arc that first
// raised t from 0 and, with `carried`, the activation the arc added.
void Relax(uint32_t i, uint32_t u, uint32_t t, float w, uint32_t seed, float* a,
           std::vector<uint32_t>* first_arc, std::vector<float>* carried) {
  const float before = a[t];
  const float after = std::min(1.0f, before + w * a[u]);
  if (!(after > before)) return;
  a[t] = after;
  if (before == 0.0f && (*first_arc)[t] == SaRun::kNoArc && t != seed) (*first_arc)[t] = i;
  if (carried != nullptr) (*carried)[i] += after - before;
}

}  // namespace

SaRun SpreadActivation(const SaGraph& graph, std::span<const uint32_t> seeds, bool track_carried) {
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
        Relax(i, u, t, graph.weights[i], seed, a, &run.first_arc,
              track_carried ? &run.carried : nullptr);
        ++run.arc_updates;
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

namespace flowrag {

void SaGraphSource::Arcs(uint32_t u, bool /*may_discover*/, std::vector<SaArc>* out) {
  for (uint32_t i = g_.offsets[u]; i < g_.offsets[u + 1]; ++i) {
    out->push_back({g_.targets[i], g_.weights[i], i});
  }
}

Result<LocalSaRun> SpreadActivationLocal(SaArcSource& source, std::span<const uint32_t> seeds,
                                         const SaLimits& limits, bool track_carried) {
  if (!(limits.fire >= 0.0f && limits.fire <= 1.0f)) {
    return Status::InvalidArgument("spreading activation fire " + std::to_string(limits.fire) +
                                   ": expected 0 <= fire <= 1");
  }
  constexpr uint32_t kUnread = 0xffffffffu;
  LocalSaRun run;
  std::vector<uint32_t> visited, arc_begin, arc_end;
  std::vector<uint8_t> seen_seed;
  auto grow = [&] {
    const size_t n = source.num_nodes();
    if (run.activation.size() >= n) return;
    run.activation.resize(n, 0.0f);
    run.first_arc.resize(n, SaRun::kNoArc);
    visited.resize(n, 0);
    arc_begin.resize(n, kUnread);
    arc_end.resize(n, 0);
    seen_seed.resize(n, 0);
  };
  grow();
  const size_t num_seed_ids = run.activation.size();
  std::vector<std::pair<uint32_t, uint32_t>> queue;  // (node, BFS level)
  std::vector<SaArc> read;
  uint32_t pass = 0;
  for (uint32_t seed : seeds) {
    if (seed >= num_seed_ids || seen_seed[seed]) continue;
    seen_seed[seed] = 1;
    ++pass;
    run.activation[seed] = 1.0f;
    queue.clear();
    queue.push_back({seed, 0});
    for (size_t head = 0; head < queue.size(); ++head) {
      const auto [u, level] = queue[head];
      if (visited[u] == pass) continue;
      visited[u] = pass;
      ++run.steps;
      if (u != seed && run.activation[u] < limits.fire) continue;
      if (level >= limits.hops) continue;
      ++run.expansions;
      if (arc_begin[u] == kUnread) {
        read.clear();
        const bool may_discover = source.num_nodes() < limits.max_nodes;
        run.truncated |= !may_discover;
        source.Arcs(u, may_discover, &read);
        ++run.nodes_read;
        arc_begin[u] = static_cast<uint32_t>(run.arcs.size());
        for (const SaArc& a : read) {
          run.arcs.push_back(a);
          run.arc_from.push_back(u);
        }
        arc_end[u] = static_cast<uint32_t>(run.arcs.size());
        if (track_carried) run.carried.resize(run.arcs.size(), 0.0f);
        grow();
      }
      float* a = run.activation.data();
      for (uint32_t i = arc_begin[u]; i < arc_end[u]; ++i) {
        const uint32_t t = run.arcs[i].to;
        Relax(i, u, t, run.arcs[i].weight, seed, a, &run.first_arc,
              track_carried ? &run.carried : nullptr);
        ++run.arc_updates;
        if (visited[t] != pass) queue.push_back({t, level + 1});
      }
    }
  }
  return run;
}

}  // namespace flowrag
