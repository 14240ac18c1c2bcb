// Personalized PageRank solvers over a generic transition graph (a CSR
// array, a snapshot's WalkGraph, or rows computed on demand), used by the
// HippoRAG 2 baseline (retrieval/ppr_retriever.h) and SemFlowRAG's directed
// walk (retrieval/semflow_retriever.h, graph_algo/semflow_transition.h).
//
// The problem. A graph on nodes [0, n) gives each node u a row of
// out-transitions P(u, ·) with Σ_v P(u, v) = 1, or an empty row (a dangling
// node). With damping d (probability of following an edge; 1 − d is the
// reset probability) and a reset distribution r (Σ r = 1), the solvers
// compute
//     x = (1 − d)·r + d·Pᵀx,   i.e.  (I − d·Pᵀ)x = (1 − d)·r.
// Mass that reaches a dangling node leaves the system, so Σ x ≤ 1. With
// `normalize` (the default) the answer is x / Σ x, which equals the PageRank
// in which a dangling node jumps back to r (python-igraph's
// personalized_pagerank with PRPACK): that chain's equation differs only by
// a scalar factor on the right-hand side.
//
// Two independent solvers:
//  - PushSolver: local push (Andersen, Chung & Lang 2006, "Local graph
//    partitioning using PageRank vectors"). Keeps an estimate p and a
//    residual ρ (initially r) with the invariant x = p + (1 − d)(I − dPᵀ)⁻¹ρ;
//    a push at u moves (1 − d)ρ_u into p_u and d·ρ_u·P(u, v) into each ρ_v.
//    Nodes are pushed in FIFO order while ρ_u ≥ ε·max(1, deg u). At exit
//    every ρ_u < ε·max(1, deg u) and ‖x − p‖₁ ≤ Σ ρ (reported as `residual`).
//    Work O(Σ pushed degrees), ≤ 1 / (ε(1 − d)) edge visits; it never looks
//    at nodes the mass does not reach, so a query touches a small region of
//    a large graph. `normalize` divides by Σp + Σρ (the unsettled residual
//    counts towards the total), so scores do not drift with ε.
//  - PowerIteration: materialises the rows of the nodes reachable from the
//    support of r, then iterates x ← (1 − d)r + d·Pᵀx until ‖Δx‖₁ < tol.
//    O(iterations · reachable edges); error ≤ d/(1 − d)·‖Δx‖₁.
// Both are deterministic: same graph, reset and options → same bits.
//
// Thread-safety: TransitionSource implementations used here are immutable
// and may be shared; a PushSolver is a per-thread workspace.
#ifndef FLOWRAG_GRAPH_ALGO_PPR_H_
#define FLOWRAG_GRAPH_ALGO_PPR_H_

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "flowrag/status.h"
#include "graph/walk_graph.h"

namespace flowrag {

// One out-transition. `tag` is an edge label the caller interprets (e.g. an
// EdgeKind); the solvers ignore it.
struct Transition {
  uint32_t target = 0;
  uint8_t tag = 0;
  double prob = 0.0;
};

struct NodeWeight {
  uint32_t node = 0;
  double weight = 0.0;
};

// Rows of a (sub)stochastic transition matrix, possibly computed on demand.
class TransitionSource {
 public:
  virtual ~TransitionSource() = default;
  virtual size_t num_nodes() const = 0;
  // Replaces *out with the out-transitions of u (probabilities ≥ 0 summing
  // to 1, or empty). A target may appear more than once; its probabilities
  // add up.
  virtual void Row(uint32_t u, std::vector<Transition>* out) const = 0;
  // Number of entries Row(u) returns (an upper bound is fine): the push
  // threshold scales with it. O(1).
  virtual size_t Degree(uint32_t u) const = 0;
};

// A weighted directed graph in CSR form; P(u, v) = w(u, v) / Σ_x w(u, x).
// Weights must be finite and ≥ 0; a row whose weights sum to 0 is dangling.
// For an undirected graph store both directions.
class CsrTransitions final : public TransitionSource {
 public:
  CsrTransitions(std::vector<uint64_t> offsets, std::vector<uint32_t> targets,
                 std::vector<double> weights);
  // Validates sizes, ids and weights; InvalidArgument naming the entry.
  static Result<CsrTransitions> Make(std::vector<uint64_t> offsets, std::vector<uint32_t> targets,
                                     std::vector<double> weights);
  size_t num_nodes() const override { return offsets_.size() - 1; }
  void Row(uint32_t u, std::vector<Transition>* out) const override;
  size_t Degree(uint32_t u) const override {
    return degrees_.empty() ? offsets_[u + 1] - offsets_[u] : degrees_[u];
  }

  // Every row of `g`, computed once: Row(u) and Degree(u) then return
  // exactly g.Row(u) (targets, tags and probabilities, entries in g's
  // order) and g.Degree(u) without recomputing them. For sources whose rows are costly and reused
  // by many solves (a snapshot's HippoRAG graph). O(Σ deg) time and memory.
  static CsrTransitions Materialize(const TransitionSource& g);

 private:
  std::vector<uint64_t> offsets_;
  std::vector<uint32_t> targets_;
  std::vector<double> weights_;
  std::vector<double> row_sums_;
  std::vector<uint8_t> tags_;      // empty: every tag 0
  std::vector<uint32_t> degrees_;  // empty: row lengths
};

// A WalkGraph as a TransitionSource: P(u, v) = w(u, v) / Σ_x w(u, x), tags
// are EdgeKind values. With `skip_synonyms` the SYNONYM entries are left out
// and each row renormalised over the rest. Holds a reference to `graph`.
class WalkTransitions final : public TransitionSource {
 public:
  explicit WalkTransitions(const WalkGraph& graph, bool skip_synonyms = false)
      : g_(graph), skip_synonyms_(skip_synonyms) {}
  size_t num_nodes() const override { return g_.num_nodes(); }
  void Row(uint32_t u, std::vector<Transition>* out) const override;
  size_t Degree(uint32_t u) const override { return g_.Degree(u); }

 private:
  const WalkGraph& g_;
  bool skip_synonyms_;
};

struct PprStats {
  size_t iterations = 0;     // pushes (push) or sweeps (power iteration)
  double residual = 0.0;     // push: Σ remaining residual; power: last ‖Δx‖₁
  size_t nodes_touched = 0;  // nodes that received mass
  size_t edges_touched = 0;  // transitions followed (push) / materialised (power)
  bool converged = true;     // false when a work limit stopped the solver
  double time_ms = 0.0;
};

struct PushOptions {
  double damping = 0.5;   // HippoRAG 2 / SemFlowRAG A.2: reset probability 0.5
  double epsilon = 1e-7;  // push while ρ_u ≥ ε·max(1, deg u)
  size_t max_pushes = 50'000'000;
  bool normalize = true;  // divide the answer by its sum (see above)
};

struct PowerOptions {
  double damping = 0.5;
  double tolerance = 1e-12;  // stop when ‖x_{k+1} − x_k‖₁ < tolerance
  size_t max_iterations = 1000;
  bool normalize = true;
};

// Normalises `reset` to sum 1 after dropping non-positive entries and
// merging duplicates (sorted by node). InvalidArgument when an entry is out
// of range or not finite, or nothing positive remains.
Result<std::vector<NodeWeight>> NormalizeReset(std::span<const NodeWeight> reset, size_t num_nodes);

// Local push with a reusable workspace (O(num_nodes) memory, reset in
// O(touched) between solves). Not thread-safe: one per thread.
class PushSolver {
 public:
  Status Solve(const TransitionSource& g, std::span<const NodeWeight> reset,
               const PushOptions& options, PprStats* stats);
  // The same push over a WalkGraph, P(u, v) = w(u, v) / RowSum(u), reading
  // its arrays in place (no per-row copies): the graph retrievers' fast path.
  Status Solve(const WalkGraph& g, std::span<const NodeWeight> reset, const PushOptions& options,
               PprStats* stats);
  // The same push over rows computed once per solve: g.Row(u) is called at
  // most once per node, the first time u pushes, and kept until the next
  // solve; a node's threshold scales with its row's length once the row is
  // built and with g.Degree(u) (an upper bound) before. For sources whose
  // rows are costly to compute and read by many pushes (the SemFlow
  // transition). Extra memory O(Σ built rows).
  Status SolveMemoized(const TransitionSource& g, std::span<const NodeWeight> reset,
                       const PushOptions& options, PprStats* stats);
  // The (normalised) estimate of node u after Solve.
  double Score(uint32_t u) const { return u < p_.size() ? p_[u] * scale_ : 0.0; }
  // Nodes that received mass in the last Solve, in first-touch order.
  const std::vector<uint32_t>& touched() const { return touched_; }
  // Rows the last SolveMemoized computed.
  size_t rows_built() const { return rows_built_; }

 private:
  void Clear();
  template <typename ForEach, typename DegreeOf>
  Status Run(size_t n, const ForEach& for_each, const DegreeOf& degree,
             std::span<const NodeWeight> reset, const PushOptions& options, PprStats* stats);
  std::vector<double> p_, rho_;
  std::vector<uint8_t> state_;  // bit 0: touched, bit 1: queued, bit 2: row memoised
  std::vector<uint32_t> touched_, queue_;
  std::vector<Transition> row_;
  // SolveMemoized: node u's row is memo_[memo_begin_[u], memo_end_[u]).
  std::vector<Transition> memo_;
  std::vector<uint32_t> memo_begin_, memo_end_;
  size_t rows_built_ = 0;
  double scale_ = 1.0;
};

// Power iteration; returns a dense vector of num_nodes() scores.
Result<std::vector<double>> PowerIteration(const TransitionSource& g,
                                           std::span<const NodeWeight> reset,
                                           const PowerOptions& options, PprStats* stats);

// Memoised rows of a TransitionSource (for output assembly, where the same
// node's row is needed by several paths and the subgraph). Not thread-safe.
class RowCache {
 public:
  explicit RowCache(const TransitionSource& g) : g_(g) {}
  const std::vector<Transition>& Get(uint32_t u);
  const TransitionSource& source() const { return g_; }

 private:
  const TransitionSource& g_;
  std::unordered_map<uint32_t, std::vector<Transition>> rows_;
};

// Mass carried along u → v per step at the fixed point: d·x_u·P(u, v).
// The highest-probability predecessor chain ending at `target`, seed first:
// from the target, repeatedly step to the in-neighbour u maximising
// d·x_u·P(u, cur); stop where the reset inflow (1 − d)·r_cur is larger than
// every such edge inflow, at a node already on the chain, or after
// `max_nodes` nodes. REQUIRES: every edge u → v has a reverse v → u (the
// candidates for in-neighbours of v are the targets of Row(v)), which holds
// for the undirected and the direction-weighted graphs of this module.
// O(Σ over chain nodes of Σ_{neighbours} deg).
std::vector<uint32_t> PredecessorPath(RowCache& rows, const std::function<double(uint32_t)>& score,
                                      const std::function<double(uint32_t)>& reset, double damping,
                                      uint32_t target, size_t max_nodes);

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_ALGO_PPR_H_
