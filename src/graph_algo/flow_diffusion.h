// Flow diffusion solved on the dual by the push method (QAFD-RAG §2.2
// Eq. 6–8, Algorithm 2; Fountoulakis et al. 2020, "p-norm flow diffusion",
// p = 2).
//
// Primal (6): min_f ½ fᵀW f  s.t.  Δ + B W f ≤ T.  Dual (8):
//   min_{x ≥ 0} F(x) = ½ xᵀ L x + xᵀ (T − Δ),   L = B W Bᵀ.
// The mass vector m = Δ − L x is the negative gradient shifted by T
// (∇F = T − m). A push at a node u with excess m_u > T_u is an exact
// coordinate step: x_u += (m_u − T_u)/w_u with w_u = Σ_v w_uv, m_u ← T_u and
// the excess goes to the neighbours in proportion to w_uv. Mass is conserved
// (Σ m = Σ Δ at every step); at the end x_v > 0 ⇒ m_v = T_v up to the
// remaining excess (complementary slackness), and x is supported on the
// nodes that received mass (Lemma 2: |supp x| ≤ ‖Δ‖₁ / min T).
//
// Sources: Δ_v = α·T_v·scale_v for each source v. The paper writes
// Δ_v = α Σ_{u∈V} T_u; taken over the whole graph that mass exceeds the
// graph's total capacity (Σ Δ = |S|·α·ΣT > ΣT), the primal is infeasible,
// the dual is unbounded and no push method terminates. A2.2.1 sums T over a
// local set instead (m_s = α Σ_{j∈P} T_j, P a shortest path), following
// Fountoulakis et al. 2020b (Δ = α·vol(seed)); we take the local set to be
// the source itself, so ‖Δ‖₁ = α·Σ_{v∈S} T_v — bounded by the seed set, not
// the graph, which is what the locality argument (Lemma 2, Cor. 4) needs.
//
// Feasibility guard: a source in a small connected component (an isolated
// entity, a two-node island) cannot place more mass than the component
// holds. Before pushing, a breadth-first search from each source, bounded by
// the total injected mass, finds the components that are smaller than that;
// the sources inside such a component C are scaled so that their mass is at
// most `max_fill`·T(C) (default ½). Nodes without neighbours keep their
// mass (their excess over T counts in the residual but is not pushable, so
// the solver stops when only such nodes are left).
//
// Termination: when the total excess Σ_v max(m_v − T_v, 0) over pushable
// nodes drops below ε, the FIFO queue of active nodes empties, or after
// max_pushes pushes. FIFO order (instead of the paper's uniformly random
// choice) makes results deterministic.
//
// Weights are requested lazily, once per node, the first time mass leaves it
// (QAFD-RAG "Locality Preservation and On-Demand Computation"): the cost is
// O(Σ_{pushed u} deg(u)·cost(weight) + pushes·avg deg), independent of |V|
// apart from the O(|V|) workspace allocated once per thread.
//
// Complexity: O(B) for the feasibility guard, where B is the number of
// nodes the bounded searches visit (at most the components of the sources,
// and per source at most the nodes whose capacity sums to ΣΔ / max_fill),
// plus O(Σ_{pushed u} deg(u)) weight requests and O(pushes · avg deg) push
// work; memory O(|V|) per thread (once) plus O(touched nodes + their rows).
//
// Parameters are checked before anything runs (InvalidArgument naming the
// option): α > 0, β > 0 (uniform capacities), ε > 0, 0 < max_fill ≤ 1, all
// finite, and every source scale finite. Sources on nodes outside the graph
// or with scale ≤ 0 are ignored.
//
// Thread-safety: SolveFlowDiffusion() is reentrant (per-thread workspace).
#ifndef FLOWRAG_GRAPH_ALGO_FLOW_DIFFUSION_H_
#define FLOWRAG_GRAPH_ALGO_FLOW_DIFFUSION_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "flowrag/status.h"

namespace flowrag {

// The graph as the solver sees it. Implementations must be symmetric
// (v ∈ N(u) ⇔ u ∈ N(v), same weight both ways) for the dual to be (8).
class DiffusionGraph {
 public:
  virtual ~DiffusionGraph() = default;
  virtual size_t num_nodes() const = 0;
  // Structural neighbours of u (parallel edges may repeat a neighbour).
  virtual void Neighbors(uint32_t u, std::vector<uint32_t>* out) const = 0;
  // Calls visit(v) for each of Neighbors(u), in that order, until visit
  // returns false (then returns false). The default lists Neighbors(u)
  // first; a graph that reads its rows in place overrides it, so that a
  // caller that stops early (the feasibility guard's search stops once it
  // has seen enough capacity) does not list every neighbour of a hub.
  virtual bool VisitNeighbors(uint32_t u, const std::function<bool(uint32_t)>& visit) const {
    std::vector<uint32_t> nbrs;
    Neighbors(u, &nbrs);
    for (uint32_t v : nbrs) {
      if (!visit(v)) return false;
    }
    return true;
  }
  // Neighbours of u and the weight of each edge (> 0), in the same order as
  // Neighbors(). Called at most once per node per solve.
  virtual void WeightedNeighbors(uint32_t u, std::vector<uint32_t>* nodes,
                                 std::vector<double>* weights) const = 0;
  // Unweighted degree (entries of Neighbors()).
  virtual size_t Degree(uint32_t u) const = 0;
};

enum class CapacityKind { kUniform, kDegree };
// How source mass is set: per source Δ_v = α·T_v·scale_v (kPerCapacity, the
// paper's local set being the source itself), or the sources' total
// capacity shared by weight, Δ_v = α·(Σ_{s∈S} T_s)·scale_v / Σ_{s∈S} scale_s
// (kShared: QAFD-RAG's QA code distributes α·ΣT by the normalised seed
// weights; taking ΣT over the sources, not the graph, keeps it local).
enum class SourceMass { kPerCapacity, kShared };

struct FlowDiffusionOptions {
  // Source strength α (QAFD-RAG §2.2; A2.1: 50 for QA, A2.2.1: 10 for schema graphs).
  double alpha = 50.0;
  // Sink capacities T (§2.2): uniform T_v = beta (A2.2.1: 1) or T_v = degree(v).
  CapacityKind capacity = CapacityKind::kUniform;
  double beta = 1.0;
  SourceMass source_mass = SourceMass::kPerCapacity;
  // Stop when the total excess drops below ε (A2.2.1: 0.05), or with
  // relative_epsilon below ε·Σ Δ (a threshold that scales with the sources,
  // so the work depends on α and the seeds, not on their absolute mass).
  double epsilon = 0.05;
  bool relative_epsilon = false;
  // Push cap (A2.2.1: N_max = 10^6).
  size_t max_pushes = 1000000;
  // Feasibility guard: at most this fraction of a small component's capacity.
  double max_fill = 0.5;
  // Tests: after every push, compare Σ m with the injected mass and keep the
  // largest deviation (O(touched) per push).
  bool verify_conservation = false;
};

struct FlowSource {
  uint32_t node = 0;
  double scale = 1.0;  // Δ_v = α·T_v·scale
};

struct FlowDiffusionResult {
  // Every node that received mass, in the order it was reached.
  std::vector<uint32_t> nodes;
  // Per entry of `nodes`:
  std::vector<double> x;         // dual variables (node importance)
  std::vector<double> mass;      // m_v
  std::vector<double> capacity;  // T_v
  std::vector<double> source;    // Δ_v after the feasibility guard
  std::vector<uint32_t> parent;  // node that sent it the most mass (UINT32_MAX: none)
  // Weighted adjacency of the nodes mass left from (CSR over entries of
  // `nodes`; empty rows for nodes never pushed).
  std::vector<uint64_t> adj_offsets;
  std::vector<uint32_t> adj_nodes;
  std::vector<double> adj_weights;

  double injected = 0.0;  // Σ Δ
  double residual = 0.0;  // total excess at exit (pushable and stuck nodes)
  size_t pushes = 0;
  size_t edges_touched = 0;             // weights computed (once per pushed node's row)
  size_t edge_visits = 0;               // row entries the pushes visited (Σ degree over pushes)
  bool converged = false;               // residual < ε (or nothing left to push)
  size_t scaled_sources = 0;            // sources reduced by the feasibility guard
  double max_conservation_error = 0.0;  // with verify_conservation

  // Index of `node` in `nodes`, or -1.
  ptrdiff_t Find(uint32_t node) const;
};

// InvalidArgument when an option or a source scale is out of range (see the
// file comment); otherwise the diffusion from `sources`.
Result<FlowDiffusionResult> SolveFlowDiffusion(const DiffusionGraph& graph,
                                               const std::vector<FlowSource>& sources,
                                               const FlowDiffusionOptions& options);

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_ALGO_FLOW_DIFFUSION_H_
