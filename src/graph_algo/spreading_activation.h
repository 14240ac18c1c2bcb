// Spreading activation (SA-RAG, Pavlović et al., §5.5 and Algorithm 1): the
// core, as a pure function over a small weighted adjacency the caller builds
// (retrieval/sa_retriever.h reads the query's entity graph on demand through
// SaArcSource below).
//
// Algorithm 1, exactly as published (and as in the authors' code,
// github.com/jomibg/sa-rag, graph.py `run_sa`):
//
//   a[v] ← 0 for every node
//   for each seed e, in the given order:
//     a[e] ← 1
//     visited ← ∅;  Q ← [e]
//     while Q not empty:
//       u ← Q.pop_front();  if u ∈ visited: continue;  visited ← visited ∪ {u}
//       for each arc (u → t, w):
//         a[t] ← min(1, a[t] + w · a[u])
//         if t ∉ visited: Q.push_back(t)
//   activated ← {v : a[v] > τa}
//
// Notes that follow from the algorithm, kept on purpose:
//  - `visited` is reset per seed, so each seed floods its whole connected
//    component of the subgraph once (no hop limit inside the BFS; the hop
//    limit is the subgraph fetch, §5.4).
//  - A node uses the activation it has when it is popped; arcs into nodes
//    already visited in this seed's pass still add activation to them, but
//    it is not propagated further in that pass.
//  - Seeds are processed in order, so the result depends on it; callers pass
//    them best first (deterministic).
//  - Weights are expected in [0, 1] (the rescaled, clipped cosines of
//    RescaleLinkWeight); arcs of weight 0 still take part in the traversal
//    order, as in the paper, but carry nothing.
//
// Complexity: O(|seeds| · (V_s + A_s)) where V_s, A_s are the nodes and arcs
// reachable from the seeds. Memory O(V + A).
// Thread-safety: pure function; no shared state.
#ifndef FLOWRAG_GRAPH_ALGO_SPREADING_ACTIVATION_H_
#define FLOWRAG_GRAPH_ALGO_SPREADING_ACTIVATION_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "flowrag/status.h"

namespace flowrag {

// Directed weighted arcs in CSR form over local node ids [0, num_nodes()).
// An undirected link is two arcs.
struct SaGraph {
  std::vector<uint32_t> offsets{0};  // num_nodes + 1
  std::vector<uint32_t> targets;
  std::vector<float> weights;

  size_t num_nodes() const { return offsets.size() - 1; }
  size_t num_arcs() const { return targets.size(); }

  // Builds the CSR from an arc list (kept in input order per source node).
  // REQUIRES: every endpoint < num_nodes.
  struct Arc {
    uint32_t from, to;
    float weight;
  };
  static SaGraph FromArcs(size_t num_nodes, std::span<const Arc> arcs);
};

// SA-RAG §5.5: w' = (w − c) / (1 − c), clipped at 0 as in the authors' code
// (`max(0, ...)`) so that weakly related links do not inhibit. c = 0.4 in the
// paper. REQUIRES: c < 1. A NaN weight maps to 0.
inline float RescaleLinkWeight(float w, float c) {
  const float r = (w - c) / (1.0f - c);
  return r > 0.0f ? r : 0.0f;
}

struct SaRun {
  std::vector<float> activation;  // per node, in [0, 1]
  // Per arc: the activation it added to its target over the whole run
  // (after the min(1, ·) cap). Empty unless requested.
  std::vector<float> carried;
  // Per node: the arc that first raised its activation from 0 (the node's
  // parent in an explanation path), or kNoArc for seeds and nodes never
  // reached. Parents were activated strictly earlier, so following them
  // always ends at a seed.
  std::vector<uint32_t> first_arc;
  size_t steps = 0;        // BFS node expansions (pops of an unvisited node), over all seeds
  size_t arc_updates = 0;  // arc relaxations a[t] ← min(1, a[t] + w·a[u])

  static constexpr uint32_t kNoArc = 0xffffffffu;
};

// Runs Algorithm 1 from `seeds` (duplicates are ignored after their first
// occurrence; ids ≥ num_nodes() are ignored). `track_carried` fills
// SaRun::carried.
SaRun SpreadActivation(const SaGraph& graph, std::span<const uint32_t> seeds,
                       bool track_carried = false);

// Nodes whose activation exceeds tau_a (strictly, as in Algorithm 1), ascending.
std::vector<uint32_t> ActivatedNodes(const SaRun& run, float tau_a);

// ---- Algorithm 1 over a graph read on demand (the retriever's form)
//
// The published procedure fetches the n-hop subgraph around the seeds
// first (§5.4) and then floods it; on a graph with hub entities that
// subgraph is most of the graph (2wiki: 3 hops from 10 seeds reach 33.8k of
// 45.4k entities) although nearly all of it ends with negligible
// activation. This form reads a node's arcs only when the node expands and
// bounds expansion the way classic spreading-activation models do
// (Crestani 1997: a distance constraint and a firing threshold):
//   - hops:  a node expands only when it is fewer than `hops` BFS levels
//            from the seed of the current pass (the paper's n-hop fetch,
//            measured from each seed's own pass);
//   - fire:  a node other than the pass's seed expands only when its
//            activation is at least `fire` when popped (0 = every node, as
//            Algorithm 1);
//   - max_nodes: discovery stops adding new nodes past this many (hub guard).
// Everything else is Algorithm 1 as above (per-seed visited sets, FIFO,
// min(1, a_t + w·a_u) on every arc of an expanding node, including arcs into
// visited nodes). With hops and max_nodes unbounded and fire = 0 it returns
// exactly SpreadActivation's activations on the same arcs (tested).

// One arc as a source reports it; `tag` is the caller's (a fact index).
struct SaArc {
  uint32_t to = 0;
  float weight = 0.0f;
  uint32_t tag = 0;
};

// A graph whose nodes get local ids as they are discovered (seeds first).
class SaArcSource {
 public:
  virtual ~SaArcSource() = default;
  // Nodes known so far; Arcs() may grow it (new targets get the next ids).
  virtual size_t num_nodes() const = 0;
  // Appends u's arcs, targets < num_nodes() after the call. Called at most
  // once per node and run. `may_discover` false: arcs to nodes not yet known
  // must be left out (the node cap is reached).
  virtual void Arcs(uint32_t u, bool may_discover, std::vector<SaArc>* out) = 0;
};

struct SaLimits {
  size_t hops = static_cast<size_t>(-1);
  float fire = 0.0f;
  size_t max_nodes = static_cast<size_t>(-1);
};

struct LocalSaRun {
  std::vector<float> activation;    // per local node
  std::vector<uint32_t> first_arc;  // per local node; SaRun::kNoArc for seeds / unreached
  // The arcs read, grouped by source in expansion order.
  std::vector<uint32_t> arc_from;
  std::vector<SaArc> arcs;
  std::vector<float> carried;  // per arc, with track_carried
  size_t steps = 0;            // BFS pops of an unvisited node, over all seeds
  size_t expansions = 0;       // of those, pops that relaxed arcs
  size_t arc_updates = 0;      // relaxations
  size_t nodes_read = 0;       // nodes whose arcs were read
  bool truncated = false;      // the node cap stopped discovery
};

// Seeds are local ids < source.num_nodes() at the call (duplicates ignored
// after their first occurrence). InvalidArgument when limits.fire is not in
// [0, 1]. Complexity O(Σ over passes of the arcs of expanding nodes) plus
// one Arcs() call per expanding node.
Result<LocalSaRun> SpreadActivationLocal(SaArcSource& source, std::span<const uint32_t> seeds,
                                         const SaLimits& limits, bool track_carried = false);

// Adapter: an SaGraph as an SaArcSource (every node known from the start).
class SaGraphSource final : public SaArcSource {
 public:
  explicit SaGraphSource(const SaGraph& g) : g_(g) {}
  size_t num_nodes() const override { return g_.num_nodes(); }
  void Arcs(uint32_t u, bool may_discover, std::vector<SaArc>* out) override;

 private:
  const SaGraph& g_;
};

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_ALGO_SPREADING_ACTIVATION_H_
