#include "retrieval/flow_diffusion.h"

#include <algorithm>
#include <cmath>
#include <deque>

namespace flowrag {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

// Per-thread O(|V|) scratch, all entries kNone between solves.
struct Workspace {
  std::vector<uint32_t> pos;    // node → index in result.nodes
  std::vector<uint32_t> label;  // feasibility BFS: node → component label
  void Ensure(size_t n) {
    if (pos.size() < n) pos.resize(n, kNone);
    if (label.size() < n) label.resize(n, kNone);
  }
};

Workspace& LocalWorkspace() {
  thread_local Workspace ws;
  return ws;
}

}  // namespace

ptrdiff_t FlowDiffusionResult::Find(uint32_t node) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i] == node) return static_cast<ptrdiff_t>(i);
  }
  return -1;
}

FlowDiffusionResult SolveFlowDiffusion(const DiffusionGraph& graph,
                                       const std::vector<FlowSource>& sources,
                                       const FlowDiffusionOptions& options) {
  FlowDiffusionResult r;
  const size_t n = graph.num_nodes();
  Workspace& ws = LocalWorkspace();
  ws.Ensure(n);
  std::vector<uint32_t>& pos = ws.pos;

  auto capacity_of = [&](uint32_t v) {
    return options.capacity == CapacityKind::kDegree
               ? std::max<double>(1.0, static_cast<double>(graph.Degree(v)))
               : options.beta;
  };
  auto touch = [&](uint32_t v) -> uint32_t {
    if (pos[v] != kNone) return pos[v];
    const auto i = static_cast<uint32_t>(r.nodes.size());
    pos[v] = i;
    r.nodes.push_back(v);
    r.x.push_back(0.0);
    r.mass.push_back(0.0);
    r.capacity.push_back(capacity_of(v));
    r.source.push_back(0.0);
    r.parent.push_back(kNone);
    return i;
  };

  // ---- sources
  for (const FlowSource& s : sources) {
    if (s.node >= n || s.scale <= 0) continue;
    const uint32_t i = touch(s.node);
    r.source[i] += options.alpha * r.capacity[i] * s.scale;
  }
  if (options.source_mass == SourceMass::kShared) {
    double scale_sum = 0.0, capacity_sum = 0.0;
    for (const FlowSource& s : sources) {
      if (s.node < n && s.scale > 0) scale_sum += s.scale;
    }
    for (size_t i = 0; i < r.nodes.size(); ++i) capacity_sum += r.capacity[i];
    for (size_t i = 0; i < r.nodes.size(); ++i) {
      // r.source[i] = α·T_i·Σscale_i so far: swap T_i for the shared ΣT.
      r.source[i] *= capacity_sum / (r.capacity[i] * scale_sum);
    }
  }
  double total = 0.0;
  for (double d : r.source) total += d;

  // ---- feasibility guard (see header)
  {
    std::vector<uint32_t>& label = ws.label;
    std::vector<uint32_t> visited, frontier, nbrs;
    const double budget = total / std::max(options.max_fill, 1e-12);
    constexpr uint32_t kBig = 0;
    uint32_t next_label = 1;
    std::vector<uint32_t> all_visited;
    for (size_t si = 0; si < r.nodes.size(); ++si) {
      const uint32_t s = r.nodes[si];
      if (r.source[si] <= 0 || label[s] != kNone) continue;
      visited.clear();
      frontier.clear();
      frontier.push_back(s);
      label[s] = next_label;
      visited.push_back(s);
      double cap = capacity_of(s);
      bool big = false;
      for (size_t head = 0; head < frontier.size() && !big; ++head) {
        nbrs.clear();
        graph.Neighbors(frontier[head], &nbrs);
        for (uint32_t v : nbrs) {
          if (label[v] == kBig) {
            big = true;
            break;
          }
          if (label[v] != kNone) continue;
          label[v] = next_label;
          visited.push_back(v);
          frontier.push_back(v);
          cap += capacity_of(v);
          if (cap >= budget) {
            big = true;
            break;
          }
        }
      }
      if (big) {
        for (uint32_t v : visited) label[v] = kBig;
      } else {
        // An exhausted component: scale its sources if they overfill it.
        double m = 0.0;
        for (size_t sj = 0; sj < r.nodes.size(); ++sj) {
          if (label[r.nodes[sj]] == next_label) m += r.source[sj];
        }
        if (m > options.max_fill * cap) {
          const double f = options.max_fill * cap / m;
          for (size_t sj = 0; sj < r.nodes.size(); ++sj) {
            if (label[r.nodes[sj]] == next_label && r.source[sj] > 0) {
              r.source[sj] *= f;
              ++r.scaled_sources;
            }
          }
        }
        ++next_label;
      }
      all_visited.insert(all_visited.end(), visited.begin(), visited.end());
    }
    for (uint32_t v : all_visited) label[v] = kNone;
  }
  total = 0.0;
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    r.mass[i] = r.source[i];
    total += r.source[i];
  }
  r.injected = total;

  // ---- push loop
  std::vector<int64_t> adj_row;  // per entry: row index into rows_, -1 if not loaded
  struct Row {
    uint64_t begin, end;
    double wsum;
  };
  std::vector<Row> rows;
  std::vector<uint32_t> tmp_nodes;
  std::vector<double> tmp_weights;
  std::vector<uint32_t> adj_pos;  // neighbour entries as indexes into r.nodes
  std::vector<double> best_inflow;
  std::vector<uint8_t> queued;
  std::deque<uint32_t> queue;  // entries of r.nodes

  double excess = 0.0;
  auto sync = [&] {
    adj_row.resize(r.nodes.size(), -1);
    best_inflow.resize(r.nodes.size(), 0.0);
    queued.resize(r.nodes.size(), 0);
  };
  sync();
  for (uint32_t i = 0; i < r.nodes.size(); ++i) {
    if (r.mass[i] > r.capacity[i]) {
      excess += r.mass[i] - r.capacity[i];
      queue.push_back(i);
      queued[i] = 1;
    }
  }
  double stuck = 0.0;  // excess on nodes without neighbours
  auto exact_excess = [&] {
    double e = 0.0;
    for (size_t i = 0; i < r.nodes.size(); ++i) {
      if (r.mass[i] > r.capacity[i] && !(adj_row[i] >= 0 && rows[adj_row[i]].wsum <= 0)) {
        e += r.mass[i] - r.capacity[i];
      }
    }
    return e;
  };

  const double epsilon = options.relative_epsilon ? options.epsilon * total : options.epsilon;
  while (!queue.empty() && r.pushes < options.max_pushes) {
    if (excess < epsilon) {
      excess = exact_excess();  // confirm against drift
      if (excess < epsilon) break;
    }
    const uint32_t u = queue.front();
    queue.pop_front();
    queued[u] = 0;
    const double ex = r.mass[u] - r.capacity[u];
    if (ex <= 0) continue;
    if (adj_row[u] < 0) {
      tmp_nodes.clear();
      tmp_weights.clear();
      graph.WeightedNeighbors(r.nodes[u], &tmp_nodes, &tmp_weights);
      Row row{adj_pos.size(), 0, 0.0};
      for (size_t k = 0; k < tmp_nodes.size(); ++k) {
        const double w = tmp_weights[k];
        if (!(w > 0) || !std::isfinite(w)) continue;
        const uint32_t j = touch(tmp_nodes[k]);
        adj_pos.push_back(j);
        r.adj_weights.push_back(w);
        row.wsum += w;
      }
      row.end = adj_pos.size();
      r.edges_touched += tmp_nodes.size();
      adj_row[u] = static_cast<int64_t>(rows.size());
      rows.push_back(row);
      sync();
    }
    const Row& row = rows[adj_row[u]];
    if (row.wsum <= 0) {
      excess -= ex;
      stuck += ex;
      continue;
    }
    r.x[u] += ex / row.wsum;
    r.mass[u] = r.capacity[u];
    excess -= ex;
    const double share = ex / row.wsum;  // one division per push, not per edge
    r.edge_visits += row.end - row.begin;
    for (uint64_t k = row.begin; k < row.end; ++k) {
      const uint32_t v = adj_pos[k];
      const double delta = share * r.adj_weights[k];
      const double before = std::max(r.mass[v] - r.capacity[v], 0.0);
      r.mass[v] += delta;
      const double after = std::max(r.mass[v] - r.capacity[v], 0.0);
      excess += after - before;
      if (delta > best_inflow[v]) {
        best_inflow[v] = delta;
        r.parent[v] = r.nodes[u];
      }
      if (after > 0 && !queued[v]) {
        queued[v] = 1;
        queue.push_back(v);
      }
    }
    ++r.pushes;
    if (options.verify_conservation) {
      double sum = 0.0;
      for (double m : r.mass) sum += m;
      r.max_conservation_error =
          std::max(r.max_conservation_error, std::abs(sum - r.injected) / std::max(1.0, r.injected));
    }
  }
  sync();
  r.residual = 0.0;
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    r.residual += std::max(r.mass[i] - r.capacity[i], 0.0);
  }
  const double pushable = exact_excess();
  r.converged = pushable < epsilon || queue.empty();

  // Adjacency rows per entry (CSR over entries of `nodes`).
  r.adj_offsets.assign(r.nodes.size() + 1, 0);
  std::vector<uint32_t> adj_nodes;
  std::vector<double> adj_weights;
  adj_nodes.reserve(adj_pos.size());
  adj_weights.reserve(adj_pos.size());
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    if (adj_row[i] >= 0) {
      const Row& row = rows[adj_row[i]];
      for (uint64_t k = row.begin; k < row.end; ++k) {
        adj_nodes.push_back(r.nodes[adj_pos[k]]);
        adj_weights.push_back(r.adj_weights[k]);
      }
    }
    r.adj_offsets[i + 1] = adj_nodes.size();
  }
  r.adj_nodes = std::move(adj_nodes);
  r.adj_weights = std::move(adj_weights);
  for (uint32_t v : r.nodes) pos[v] = kNone;
  return r;
}

}  // namespace flowrag
