#include "graph_algo/flow_diffusion.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <string>

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

bool Positive(double v) { return v > 0 && std::isfinite(v); }

Status OptionError(const char* name, double value, const char* expected) {
  return Status::InvalidArgument(std::string("flow diffusion ") + name + " " +
                                 std::to_string(value) + ": expected " + expected);
}

Status CheckInput(const FlowDiffusionOptions& o, const std::vector<FlowSource>& sources) {
  if (!Positive(o.alpha)) return OptionError("alpha", o.alpha, "a finite number > 0");
  if (o.capacity == CapacityKind::kUniform && !Positive(o.beta)) {
    return OptionError("beta", o.beta, "a finite number > 0");
  }
  if (!Positive(o.epsilon)) return OptionError("epsilon", o.epsilon, "a finite number > 0");
  if (!(o.max_fill > 0 && o.max_fill <= 1))
    return OptionError("max_fill", o.max_fill, "0 < f <= 1");
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!std::isfinite(sources[i].scale)) {
      return Status::InvalidArgument("flow diffusion source[" + std::to_string(i) +
                                     "]: scale not finite");
    }
  }
  return Status::Ok();
}

// One solve: the result being filled, the node → entry map of the thread's
// workspace, and the push loop's state. Entries are indexes into r_.nodes.
class FlowSolve {
 public:
  FlowSolve(const DiffusionGraph& graph, const FlowDiffusionOptions& options)
      : g_(graph), o_(options), ws_(LocalWorkspace()) {
    ws_.Ensure(graph.num_nodes());
  }

  FlowDiffusionResult Run(const std::vector<FlowSource>& sources) {
    PlaceSources(sources);
    GuardSmallComponents();
    Inject();
    PushExcess();
    Finish();
    WriteAdjacency();
    for (uint32_t v : r_.nodes) ws_.pos[v] = kNone;
    return std::move(r_);
  }

 private:
  // A loaded row: entries [begin, end) of adj_pos_ / r_.adj_weights.
  struct Row {
    uint64_t begin, end;
    double wsum;
  };

  double CapacityOf(uint32_t v) const {
    return o_.capacity == CapacityKind::kDegree
               ? std::max<double>(1.0, static_cast<double>(g_.Degree(v)))
               : o_.beta;
  }

  // The entry of node v, appended (with its sink capacity) on first touch.
  uint32_t Touch(uint32_t v) {
    if (ws_.pos[v] != kNone) return ws_.pos[v];
    const auto i = static_cast<uint32_t>(r_.nodes.size());
    ws_.pos[v] = i;
    r_.nodes.push_back(v);
    r_.x.push_back(0.0);
    r_.mass.push_back(0.0);
    r_.capacity.push_back(CapacityOf(v));
    r_.source.push_back(0.0);
    r_.parent.push_back(kNone);
    return i;
  }

  // Δ_v = α·T_v·scale_v, or with SourceMass::kShared the sources' total
  // capacity shared by scale.
  void PlaceSources(const std::vector<FlowSource>& sources) {
    const size_t n = g_.num_nodes();
    for (const FlowSource& s : sources) {
      if (s.node >= n || s.scale <= 0) continue;
      const uint32_t i = Touch(s.node);
      r_.source[i] += o_.alpha * r_.capacity[i] * s.scale;
    }
    if (o_.source_mass != SourceMass::kShared) return;
    double scale_sum = 0.0, capacity_sum = 0.0;
    for (const FlowSource& s : sources) {
      if (s.node < n && s.scale > 0) scale_sum += s.scale;
    }
    for (size_t i = 0; i < r_.nodes.size(); ++i) capacity_sum += r_.capacity[i];
    for (size_t i = 0; i < r_.nodes.size(); ++i) {
      // r_.source[i] = α·T_i·Σscale_i so far: swap T_i for the shared ΣT.
      r_.source[i] *= capacity_sum / (r_.capacity[i] * scale_sum);
    }
  }

  // Feasibility guard (see the header): a bounded search from each source;
  // a component exhausted below the budget has its sources scaled to at
  // most max_fill of its capacity.
  void GuardSmallComponents() {
    double total = 0.0;
    for (double d : r_.source) total += d;
    const double budget = total / std::max(o_.max_fill, 1e-12);
    std::vector<uint32_t>& label = ws_.label;
    std::vector<uint32_t> all_visited;
    uint32_t next_label = 1;
    for (size_t si = 0; si < r_.nodes.size(); ++si) {
      const uint32_t s = r_.nodes[si];
      if (r_.source[si] <= 0 || label[s] != kNone) continue;
      double capacity = 0.0;
      const size_t first = all_visited.size();
      if (ReachesBudget(s, next_label, budget, &all_visited, &capacity)) {
        for (size_t k = first; k < all_visited.size(); ++k) label[all_visited[k]] = kBig;
      } else {
        ScaleComponent(next_label, capacity);
        ++next_label;
      }
    }
    for (uint32_t v : all_visited) label[v] = kNone;
  }

  // Breadth-first from `s`, labelling what it visits `component` and
  // appending it to *visited, with the capacity seen in *capacity: true as
  // soon as it meets a component already known to be big or the capacity
  // reaches `budget`.
  bool ReachesBudget(uint32_t s, uint32_t component, double budget, std::vector<uint32_t>* visited,
                     double* capacity) {
    std::vector<uint32_t>& label = ws_.label;
    const size_t first = visited->size();
    label[s] = component;
    visited->push_back(s);
    *capacity = CapacityOf(s);
    bool reached = false;
    auto visit = [&](uint32_t v) {  // false: stop, reached
      if (label[v] == kBig) {
        reached = true;
      } else if (label[v] == kNone) {
        label[v] = component;
        visited->push_back(v);
        *capacity += CapacityOf(v);
        reached = *capacity >= budget;
      }
      return !reached;
    };
    for (size_t head = first; head < visited->size() && !reached; ++head) {
      g_.VisitNeighbors((*visited)[head], visit);
    }
    return reached;
  }

  // Scales the sources labelled `component` if they overfill its capacity.
  void ScaleComponent(uint32_t component, double capacity) {
    const std::vector<uint32_t>& label = ws_.label;
    double m = 0.0;
    for (size_t sj = 0; sj < r_.nodes.size(); ++sj) {
      if (label[r_.nodes[sj]] == component) m += r_.source[sj];
    }
    if (!(m > o_.max_fill * capacity)) return;
    const double f = o_.max_fill * capacity / m;
    for (size_t sj = 0; sj < r_.nodes.size(); ++sj) {
      if (label[r_.nodes[sj]] == component && r_.source[sj] > 0) {
        r_.source[sj] *= f;
        ++r_.scaled_sources;
      }
    }
  }

  void Inject() {
    double total = 0.0;
    for (size_t i = 0; i < r_.nodes.size(); ++i) {
      r_.mass[i] = r_.source[i];
      total += r_.source[i];
    }
    r_.injected = total;
  }

  // Per-entry push state sized to the entries touched so far.
  void Sync() {
    adj_row_.resize(r_.nodes.size(), -1);
    best_inflow_.resize(r_.nodes.size(), 0.0);
    queued_.resize(r_.nodes.size(), 0);
  }

  // The total excess over nodes that can push (a loaded row of weight 0
  // cannot).
  double ExactExcess() const {
    double e = 0.0;
    for (size_t i = 0; i < r_.nodes.size(); ++i) {
      if (r_.mass[i] > r_.capacity[i] && !(adj_row_[i] >= 0 && rows_[adj_row_[i]].wsum <= 0)) {
        e += r_.mass[i] - r_.capacity[i];
      }
    }
    return e;
  }

  // FIFO pushes until the excess is below ε, nothing is queued or the push
  // cap is reached.
  void PushExcess() {
    Sync();
    for (uint32_t i = 0; i < r_.nodes.size(); ++i) {
      if (r_.mass[i] > r_.capacity[i]) {
        excess_ += r_.mass[i] - r_.capacity[i];
        queue_.push_back(i);
        queued_[i] = 1;
      }
    }
    epsilon_ = o_.relative_epsilon ? o_.epsilon * r_.injected : o_.epsilon;
    while (!queue_.empty() && r_.pushes < o_.max_pushes) {
      if (excess_ < epsilon_) {
        excess_ = ExactExcess();  // confirm against drift
        if (excess_ < epsilon_) break;
      }
      const uint32_t u = queue_.front();
      queue_.pop_front();
      queued_[u] = 0;
      const double ex = r_.mass[u] - r_.capacity[u];
      if (ex <= 0) continue;
      if (adj_row_[u] < 0) LoadRow(u);
      const Row row = rows_[adj_row_[u]];
      if (row.wsum <= 0) {  // no neighbours: the excess stays
        excess_ -= ex;
        continue;
      }
      Push(u, ex, row);
    }
  }

  // Requests u's weights (once per solve), touching its neighbours.
  void LoadRow(uint32_t u) {
    tmp_nodes_.clear();
    tmp_weights_.clear();
    g_.WeightedNeighbors(r_.nodes[u], &tmp_nodes_, &tmp_weights_);
    Row row{adj_pos_.size(), 0, 0.0};
    for (size_t k = 0; k < tmp_nodes_.size(); ++k) {
      const double w = tmp_weights_[k];
      if (!(w > 0) || !std::isfinite(w)) continue;
      const uint32_t j = Touch(tmp_nodes_[k]);
      adj_pos_.push_back(j);
      r_.adj_weights.push_back(w);
      row.wsum += w;
    }
    row.end = adj_pos_.size();
    r_.edges_touched += tmp_nodes_.size();
    adj_row_[u] = static_cast<int64_t>(rows_.size());
    rows_.push_back(row);
    Sync();
  }

  // The coordinate step at u: x_u += ex / w_u, m_u ← T_u, the excess to the
  // neighbours in proportion to their weights.
  void Push(uint32_t u, double ex, const Row& row) {
    // The loop reads and writes through locals: the members' storage could
    // alias the byte-sized `queued` writes, which would reload them per edge.
    double* mass = r_.mass.data();
    const double* capacity = r_.capacity.data();
    double* best_inflow = best_inflow_.data();
    uint32_t* parent = r_.parent.data();
    uint8_t* queued = queued_.data();
    const uint32_t* adj_pos = adj_pos_.data();
    const double* adj_weights = r_.adj_weights.data();
    const uint32_t from = r_.nodes[u];
    r_.x[u] += ex / row.wsum;
    mass[u] = capacity[u];
    double excess = excess_ - ex;
    const double share = ex / row.wsum;  // one division per push, not per edge
    r_.edge_visits += row.end - row.begin;
    for (uint64_t k = row.begin; k < row.end; ++k) {
      const uint32_t v = adj_pos[k];
      const double delta = share * adj_weights[k];
      const double before = std::max(mass[v] - capacity[v], 0.0);
      mass[v] += delta;
      const double after = std::max(mass[v] - capacity[v], 0.0);
      excess += after - before;
      if (delta > best_inflow[v]) {
        best_inflow[v] = delta;
        parent[v] = from;
      }
      if (after > 0 && !queued[v]) {
        queued[v] = 1;
        queue_.push_back(v);
      }
    }
    excess_ = excess;
    ++r_.pushes;
    if (o_.verify_conservation) {
      double sum = 0.0;
      for (double m : r_.mass) sum += m;
      r_.max_conservation_error = std::max(
          r_.max_conservation_error, std::abs(sum - r_.injected) / std::max(1.0, r_.injected));
    }
  }

  void Finish() {
    Sync();
    r_.residual = 0.0;
    for (size_t i = 0; i < r_.nodes.size(); ++i) {
      r_.residual += std::max(r_.mass[i] - r_.capacity[i], 0.0);
    }
    r_.converged = ExactExcess() < epsilon_ || queue_.empty();
  }

  // Adjacency rows per entry (CSR over entries of `nodes`, by node id).
  void WriteAdjacency() {
    r_.adj_offsets.assign(r_.nodes.size() + 1, 0);
    std::vector<uint32_t> adj_nodes;
    std::vector<double> adj_weights;
    adj_nodes.reserve(adj_pos_.size());
    adj_weights.reserve(adj_pos_.size());
    for (size_t i = 0; i < r_.nodes.size(); ++i) {
      if (adj_row_[i] >= 0) {
        const Row& row = rows_[adj_row_[i]];
        for (uint64_t k = row.begin; k < row.end; ++k) {
          adj_nodes.push_back(r_.nodes[adj_pos_[k]]);
          adj_weights.push_back(r_.adj_weights[k]);
        }
      }
      r_.adj_offsets[i + 1] = adj_nodes.size();
    }
    r_.adj_nodes = std::move(adj_nodes);
    r_.adj_weights = std::move(adj_weights);
  }

  static constexpr uint32_t kBig = 0;  // label of nodes in a component above the budget

  const DiffusionGraph& g_;
  const FlowDiffusionOptions& o_;
  Workspace& ws_;
  FlowDiffusionResult r_;
  // Push state, per entry.
  std::vector<int64_t> adj_row_;  // row index into rows_, -1 if not loaded
  std::vector<Row> rows_;
  std::vector<uint32_t> adj_pos_;  // neighbour entries of the loaded rows
  std::vector<double> best_inflow_;
  std::vector<uint8_t> queued_;
  std::deque<uint32_t> queue_;
  std::vector<uint32_t> tmp_nodes_;
  std::vector<double> tmp_weights_;
  double excess_ = 0.0;
  double epsilon_ = 0.0;
};

}  // namespace

ptrdiff_t FlowDiffusionResult::Find(uint32_t node) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i] == node) return static_cast<ptrdiff_t>(i);
  }
  return -1;
}

Result<FlowDiffusionResult> SolveFlowDiffusion(const DiffusionGraph& graph,
                                               const std::vector<FlowSource>& sources,
                                               const FlowDiffusionOptions& options) {
  FLOWRAG_RETURN_IF_ERROR(CheckInput(options, sources));
  return FlowSolve(graph, options).Run(sources);
}

}  // namespace flowrag
