#include "graph_algo/ppr.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "common/stopwatch.h"
#include "graph/knowledge_graph.h"

namespace flowrag {
namespace {

constexpr uint8_t kSynonymTag = static_cast<uint8_t>(EdgeKind::kSynonym);

Status CheckDamping(double d) {
  if (!(d >= 0.0 && d < 1.0)) {
    return Status::InvalidArgument("PPR damping " + std::to_string(d) + ": expected 0 <= d < 1");
  }
  return Status::Ok();
}

}  // namespace

CsrTransitions::CsrTransitions(std::vector<uint64_t> offsets, std::vector<uint32_t> targets,
                               std::vector<double> weights)
    : offsets_(std::move(offsets)), targets_(std::move(targets)), weights_(std::move(weights)) {
  if (offsets_.empty()) offsets_.push_back(0);
  row_sums_.assign(offsets_.size() - 1, 0.0);
  for (size_t u = 0; u + 1 < offsets_.size(); ++u) {
    for (uint64_t i = offsets_[u]; i < offsets_[u + 1]; ++i) row_sums_[u] += weights_[i];
  }
}

Result<CsrTransitions> CsrTransitions::Make(std::vector<uint64_t> offsets,
                                            std::vector<uint32_t> targets,
                                            std::vector<double> weights) {
  if (offsets.empty() || offsets.front() != 0) {
    return Status::InvalidArgument("CSR offsets: expected num_nodes + 1 entries starting at 0");
  }
  if (targets.size() != weights.size() || offsets.back() != targets.size()) {
    return Status::InvalidArgument("CSR: offsets.back() = " + std::to_string(offsets.back()) +
                                   ", targets " + std::to_string(targets.size()) + ", weights " +
                                   std::to_string(weights.size()) + ": expected all equal");
  }
  const size_t n = offsets.size() - 1;
  for (size_t u = 0; u < n; ++u) {
    if (offsets[u + 1] < offsets[u]) {
      return Status::InvalidArgument("CSR offsets[" + std::to_string(u + 1) + "]: decreasing");
    }
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] >= n) {
      return Status::InvalidArgument("CSR target[" + std::to_string(i) +
                                     "] = " + std::to_string(targets[i]) + ": expected < " +
                                     std::to_string(n));
    }
    if (!std::isfinite(weights[i]) || weights[i] < 0) {
      return Status::InvalidArgument("CSR weight[" + std::to_string(i) +
                                     "]: expected a finite number >= 0");
    }
  }
  return CsrTransitions(std::move(offsets), std::move(targets), std::move(weights));
}

void CsrTransitions::Row(uint32_t u, std::vector<Transition>* out) const {
  out->clear();
  const double sum = row_sums_[u];
  if (!(sum > 0)) return;
  const uint64_t begin = offsets_[u], end = offsets_[u + 1];
  out->reserve(end - begin);
  if (sum == 1.0) {  // Materialize stores probabilities
    for (uint64_t i = begin; i < end; ++i) {
      out->push_back({targets_[i], tags_.empty() ? uint8_t{0} : tags_[i], weights_[i]});
    }
    return;
  }
  for (uint64_t i = begin; i < end; ++i) {
    out->push_back({targets_[i], tags_.empty() ? uint8_t{0} : tags_[i], weights_[i] / sum});
  }
}

CsrTransitions CsrTransitions::Materialize(const TransitionSource& g) {
  CsrTransitions c({0}, {}, {});
  const size_t n = g.num_nodes();
  c.offsets_.reserve(n + 1);
  c.degrees_.reserve(n);
  c.row_sums_.assign(n, 0.0);
  std::vector<Transition> row;
  for (uint32_t u = 0; u < n; ++u) {
    g.Row(u, &row);
    for (const Transition& t : row) {
      c.targets_.push_back(t.target);
      c.weights_.push_back(t.prob);
      c.tags_.push_back(t.tag);
    }
    c.offsets_.push_back(c.targets_.size());
    c.degrees_.push_back(static_cast<uint32_t>(g.Degree(u)));
    if (!row.empty()) c.row_sums_[u] = 1.0;  // exact: Row returns g's probabilities as stored
  }
  return c;
}

void WalkTransitions::Row(uint32_t u, std::vector<Transition>* out) const {
  out->clear();
  if (u >= g_.num_nodes()) return;
  double sum = 0.0;
  for (uint64_t i = g_.Begin(u); i < g_.End(u); ++i) {
    const uint8_t kind = static_cast<uint8_t>(g_.Kind(i));
    if (skip_synonyms_ && kind == kSynonymTag) continue;
    out->push_back({g_.Target(i), kind, g_.Weight(i)});
    sum += g_.Weight(i);
  }
  if (!(sum > 0)) {
    out->clear();
    return;
  }
  for (Transition& t : *out) t.prob /= sum;
}

Result<std::vector<NodeWeight>> NormalizeReset(std::span<const NodeWeight> reset,
                                               size_t num_nodes) {
  std::vector<NodeWeight> out;
  out.reserve(reset.size());
  for (size_t i = 0; i < reset.size(); ++i) {
    const NodeWeight& w = reset[i];
    if (w.node >= num_nodes) {
      return Status::InvalidArgument("PPR reset[" + std::to_string(i) + "]: node " +
                                     std::to_string(w.node) + " out of range (" +
                                     std::to_string(num_nodes) + " nodes)");
    }
    if (!std::isfinite(w.weight)) {
      return Status::InvalidArgument("PPR reset[" + std::to_string(i) + "]: weight not finite");
    }
    if (w.weight > 0) out.push_back(w);
  }
  std::sort(out.begin(), out.end(),
            [](const NodeWeight& a, const NodeWeight& b) { return a.node < b.node; });
  size_t m = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (m > 0 && out[m - 1].node == out[i].node) {
      out[m - 1].weight += out[i].weight;
    } else {
      out[m++] = out[i];
    }
  }
  out.resize(m);
  double sum = 0.0;
  for (const NodeWeight& w : out) sum += w.weight;
  if (out.empty() || !(sum > 0)) {
    return Status::InvalidArgument("PPR reset: no node has a positive weight");
  }
  for (NodeWeight& w : out) w.weight /= sum;
  return out;
}

// ---------------------------------------------------------------- push

void PushSolver::Clear() {
  for (uint32_t u : touched_) {
    p_[u] = 0.0;
    rho_[u] = 0.0;
    state_[u] = 0;
  }
  touched_.clear();
  queue_.clear();
  memo_.clear();
  rows_built_ = 0;
  scale_ = 1.0;
}

// The push loop over any row source: `for_each(u, fn)` calls fn(v, P(u, v))
// for each out-transition of u and returns how many it visited; `degree(u)`
// scales the threshold.
template <typename ForEach, typename DegreeOf>
Status PushSolver::Run(size_t n, const ForEach& for_each, const DegreeOf& degree,
                       std::span<const NodeWeight> reset, const PushOptions& o, PprStats* stats) {
  const auto start = SteadyClock::now();
  FLOWRAG_RETURN_IF_ERROR(CheckDamping(o.damping));
  if (!(o.epsilon > 0) || !std::isfinite(o.epsilon)) {
    return Status::InvalidArgument("PPR push epsilon: expected a number > 0");
  }
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<NodeWeight> r, NormalizeReset(reset, n));
  Clear();
  if (p_.size() != n) {
    p_.assign(n, 0.0);
    rho_.assign(n, 0.0);
    state_.assign(n, 0);
  }
  const double d = o.damping, eps = o.epsilon;
  auto threshold = [&](uint32_t u) {
    return eps * static_cast<double>(std::max<size_t>(1, degree(u)));
  };
  auto touch = [&](uint32_t u) {
    if (!(state_[u] & 1)) {
      state_[u] |= 1;
      touched_.push_back(u);
    }
  };
  for (const NodeWeight& w : r) {
    touch(w.node);
    rho_[w.node] = w.weight;
    if (w.weight >= threshold(w.node)) {
      state_[w.node] |= 2;
      queue_.push_back(w.node);
    }
  }
  PprStats st;
  // FIFO over a growing vector: `head` walks it; compacted when half is dead.
  size_t head = 0;
  while (head < queue_.size()) {
    if (st.iterations >= o.max_pushes) {
      st.converged = false;
      break;
    }
    const uint32_t u = queue_[head++];
    if (head > 4096 && head * 2 > queue_.size()) {
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(head));
      head = 0;
    }
    state_[u] &= ~uint8_t{2};
    const double ru = rho_[u];
    rho_[u] = 0.0;
    p_[u] += (1.0 - d) * ru;
    ++st.iterations;
    const double out_mass = d * ru;
    st.edges_touched += for_each(u, [&](uint32_t v, double prob) {
      touch(v);
      rho_[v] += out_mass * prob;
      if (!(state_[v] & 2) && rho_[v] >= eps && rho_[v] >= threshold(v)) {
        state_[v] |= 2;
        queue_.push_back(v);
      }
    });
  }
  double residual = 0.0, total = 0.0;
  for (uint32_t u : touched_) {
    residual += rho_[u];
    total += p_[u];
  }
  st.residual = residual;
  st.nodes_touched = touched_.size();
  // The residual is mass still to be settled: count it in the total so the
  // scale does not depend on how far the push went.
  scale_ = (o.normalize && total + residual > 0) ? 1.0 / (total + residual) : 1.0;
  st.time_ms = MillisSince(start);
  if (stats) *stats = st;
  return Status::Ok();
}

Status PushSolver::Solve(const TransitionSource& g, std::span<const NodeWeight> reset,
                         const PushOptions& o, PprStats* stats) {
  auto for_each = [&](uint32_t u, const auto& fn) -> size_t {
    g.Row(u, &row_);
    for (const Transition& t : row_) fn(t.target, t.prob);
    return row_.size();
  };
  return Run(
      g.num_nodes(), for_each, [&](uint32_t u) { return g.Degree(u); }, reset, o, stats);
}

Status PushSolver::Solve(const WalkGraph& g, std::span<const NodeWeight> reset,
                         const PushOptions& o, PprStats* stats) {
  const std::span<const uint32_t> targets = g.targets();
  const std::span<const float> weights = g.weight_values();
  auto for_each = [&](uint32_t u, const auto& fn) -> size_t {
    const double sum = g.RowSum(u);
    if (!(sum > 0)) return 0;
    const double inv = 1.0 / sum;
    const uint64_t begin = g.Begin(u), end = g.End(u);  // Begin first: it checks the row
    for (uint64_t i = begin; i < end; ++i) fn(targets[i], weights[i] * inv);
    return end - begin;
  };
  return Run(
      g.num_nodes(), for_each, [&](uint32_t u) { return g.Degree(u); }, reset, o, stats);
}

Status PushSolver::SolveMemoized(const TransitionSource& g, std::span<const NodeWeight> reset,
                                 const PushOptions& o, PprStats* stats) {
  constexpr uint8_t kMemoised = 4;
  if (memo_begin_.size() < g.num_nodes()) {
    memo_begin_.resize(g.num_nodes());
    memo_end_.resize(g.num_nodes());
  }
  // Only pushed nodes get a row, and every pushed node is touched, so
  // Clear() (through state_) forgets the rows of the previous solve.
  auto for_each = [&](uint32_t u, const auto& fn) -> size_t {
    if (!(state_[u] & kMemoised)) {
      g.Row(u, &row_);
      memo_begin_[u] = static_cast<uint32_t>(memo_.size());
      memo_.insert(memo_.end(), row_.begin(), row_.end());
      memo_end_[u] = static_cast<uint32_t>(memo_.size());
      state_[u] |= kMemoised;
      ++rows_built_;
    }
    for (uint32_t i = memo_begin_[u]; i < memo_end_[u]; ++i) fn(memo_[i].target, memo_[i].prob);
    return memo_end_[u] - memo_begin_[u];
  };
  auto degree = [&](uint32_t u) -> size_t {
    return (state_[u] & kMemoised) ? memo_end_[u] - memo_begin_[u] : g.Degree(u);
  };
  return Run(g.num_nodes(), for_each, degree, reset, o, stats);
}

// ---------------------------------------------------------------- power iteration

Result<std::vector<double>> PowerIteration(const TransitionSource& g,
                                           std::span<const NodeWeight> reset, const PowerOptions& o,
                                           PprStats* stats) {
  const auto start = SteadyClock::now();
  FLOWRAG_RETURN_IF_ERROR(CheckDamping(o.damping));
  if (!(o.tolerance > 0)) return Status::InvalidArgument("PPR tolerance: expected > 0");
  const size_t n = g.num_nodes();
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<NodeWeight> r, NormalizeReset(reset, n));

  // Reachable part: BFS from the reset support, materialising rows with
  // local ids (in discovery order) so the sweeps stream through memory.
  std::vector<uint32_t> local(n, UINT32_MAX), nodes;
  std::vector<uint64_t> offsets{0};
  std::vector<uint32_t> targets;
  std::vector<double> probs;
  std::vector<Transition> row;
  for (const NodeWeight& w : r) {
    local[w.node] = static_cast<uint32_t>(nodes.size());
    nodes.push_back(w.node);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    g.Row(nodes[i], &row);
    for (const Transition& t : row) {
      if (local[t.target] == UINT32_MAX) {
        local[t.target] = static_cast<uint32_t>(nodes.size());
        nodes.push_back(t.target);
      }
      targets.push_back(local[t.target]);
      probs.push_back(t.prob);
    }
    offsets.push_back(targets.size());
  }
  const size_t m = nodes.size();
  std::vector<double> base(m, 0.0), x(m, 0.0), next(m);
  for (const NodeWeight& w : r) base[local[w.node]] = (1.0 - o.damping) * w.weight;
  x = base;
  PprStats st;
  st.converged = false;
  while (st.iterations < o.max_iterations) {
    next = base;
    for (size_t u = 0; u < m; ++u) {
      const double out = o.damping * x[u];
      if (out == 0.0) continue;
      for (uint64_t i = offsets[u]; i < offsets[u + 1]; ++i) next[targets[i]] += out * probs[i];
    }
    double delta = 0.0;
    for (size_t u = 0; u < m; ++u) delta += std::abs(next[u] - x[u]);
    x.swap(next);
    ++st.iterations;
    st.residual = delta;
    if (delta < o.tolerance) {
      st.converged = true;
      break;
    }
  }
  double total = 0.0;
  for (double v : x) total += v;
  const double scale = (o.normalize && total > 0) ? 1.0 / total : 1.0;
  std::vector<double> out(n, 0.0);
  for (size_t i = 0; i < m; ++i) out[nodes[i]] = x[i] * scale;
  st.nodes_touched = m;
  st.edges_touched = targets.size();
  st.time_ms = MillisSince(start);
  if (stats) *stats = st;
  return out;
}

// ---------------------------------------------------------------- explanation paths

const std::vector<Transition>& RowCache::Get(uint32_t u) {
  auto [it, inserted] = rows_.try_emplace(u);
  if (inserted) g_.Row(u, &it->second);
  return it->second;
}

std::vector<uint32_t> PredecessorPath(RowCache& rows, const std::function<double(uint32_t)>& score,
                                      const std::function<double(uint32_t)>& reset, double damping,
                                      uint32_t target, size_t max_nodes) {
  std::vector<uint32_t> chain{target};
  std::vector<Transition> row;
  uint32_t cur = target;
  while (chain.size() < max_nodes) {
    double best_flow = (1.0 - damping) * reset(cur);
    uint32_t best = cur;
    row = rows.Get(cur);
    // Candidates in ascending id so ties resolve the same way every time.
    std::sort(row.begin(), row.end(),
              [](const Transition& a, const Transition& b) { return a.target < b.target; });
    uint32_t last = UINT32_MAX;
    for (const Transition& t : row) {
      const uint32_t u = t.target;
      if (u == last) continue;
      last = u;
      const double xu = score(u);
      if (!(xu > 0)) continue;
      double p = 0.0;
      for (const Transition& b : rows.Get(u)) {
        if (b.target == cur) p += b.prob;
      }
      const double flow = damping * xu * p;
      if (flow > best_flow) {
        best_flow = flow;
        best = u;
      }
    }
    if (best == cur || std::find(chain.begin(), chain.end(), best) != chain.end()) break;
    chain.push_back(best);
    cur = best;
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

}  // namespace flowrag
