// QueryAwareWalk: a snapshot's WalkGraph (graph/walk_graph.h) seen by the
// flow diffusion solver with the query-aware weights of QAFD-RAG Eq. 5 for
// one (sub-)query (the formula and options are described in
// retrieval/qafd_retriever.h).
//
// Node–query similarities are computed on first use and cached for the
// life of the object (a hash table of the nodes read, so a query's cost
// does not grow with the graph): entities from their name vectors (sparse
// rows), passages from the query's precomputed dense passage scores.
// Weights are computed only when the solver asks for a node's row (once per
// pushed node).
//
// Thread-safety: one object per query and thread (it caches).
#ifndef FLOWRAG_RETRIEVAL_QAFD_GRAPH_H_
#define FLOWRAG_RETRIEVAL_QAFD_GRAPH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/knowledge_graph.h"
#include "graph_algo/flow_diffusion.h"
#include "retrieval/qafd_retriever.h"
#include "retrieval/query_scores.h"

namespace flowrag {

class FlatIndex;

// A node → float memo with open addressing (linear probing, load ≤ 1/2):
// memory and time in the number of nodes stored, not in the graph's size.
class NodeValueCache {
 public:
  // The stored value of `node`, or compute() stored first.
  template <typename Compute>
  float GetOrCompute(uint32_t node, Compute&& compute) {
    if (2 * (size_ + 1) > keys_.size()) Grow();
    size_t i = Slot(node);
    for (; keys_[i] != kEmpty; i = (i + 1) & (keys_.size() - 1)) {
      if (keys_[i] == node) return values_[i];
    }
    keys_[i] = node;
    values_[i] = compute();
    ++size_;
    return values_[i];
  }
  size_t size() const { return size_; }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  size_t Slot(uint32_t node) const {
    return static_cast<size_t>((node * 0x9E3779B97F4A7C15ull) >> 32) & (keys_.size() - 1);
  }
  void Grow();
  std::vector<uint32_t> keys_;
  std::vector<float> values_;
  size_t size_ = 0;
};

class QueryAwareWalk final : public DiffusionGraph {
 public:
  // `entity_vectors` (rows = entities) and `passages` may be null: the
  // similarities they would give are then those of cosine 0. `query` has the
  // entity vectors' dimension (may be null: every cosine 0); `scores` gives
  // the passages' cosines (may be null: every cosine 0); its list of cosines
  // must outlive the object (moving the QueryScores keeps it).
  QueryAwareWalk(const KnowledgeGraph& graph, const SparseRows* entity_vectors,
                 const FlatIndex* passages, const float* query, const QueryScores* scores,
                 const QafdOptions& options);

  size_t num_nodes() const override { return walk_.num_nodes(); }
  size_t Degree(uint32_t u) const override;
  void Neighbors(uint32_t u, std::vector<uint32_t>* out) const override;
  // Reads u's walk row in place (no list): a hub of a million passages is
  // not listed when the visitor stops at its first few.
  bool VisitNeighbors(uint32_t u, const std::function<bool(uint32_t)>& visit) const override;
  void WeightedNeighbors(uint32_t u, std::vector<uint32_t>* nodes,
                         std::vector<double>* weights) const override;

  // Similarity in [0, 1] of node v with the query (cached).
  double QuerySim(uint32_t v) const;
  // The kind of the edge u–v (a fact outranks a synonym); kMentions when
  // either end is a passage.
  EdgeKind KindBetween(uint32_t u, uint32_t v) const;

 private:
  bool Skipped(uint64_t entry) const {
    return !options_.synonyms && walk_.Kind(entry) == EdgeKind::kSynonym;
  }
  // Cosine of the embeddings of u and v (structure = similarity).
  double NodeCosine(uint32_t u, uint32_t v) const;
  void LoadDense(uint32_t entity) const;
  void ClearDense(uint32_t entity) const;

  const KnowledgeGraph& g_;
  const WalkGraph& walk_;
  const SparseRows* entity_vectors_;
  const FlatIndex* passages_;
  const float* query_;
  std::span<const PassageScore> passage_cosines_;  // QueryScores::dense
  size_t num_passages_ = 0;
  const QafdOptions& options_;
  mutable NodeValueCache sims_;         // QuerySim of the nodes read so far
  mutable std::vector<float> scratch_;  // a dense entity vector (similarity structure)
  mutable std::vector<float> row_scratch_;  // two passage rows decoded (FlatIndex::Row)
};

// One diffusion of a qafd query: the whole query, or one sub-query (Eq. 9).
struct QafdRun {
  std::string text;
  QueryScores scores;            // the text's embedding and dense passage scores
  std::vector<NodeScore> seeds;  // sources and their weights, for the output
  std::unique_ptr<QueryAwareWalk> graph;
  FlowDiffusionResult flow;
};

// The union of the runs (Eq. 10): per node the run with the largest x.
struct QafdNode {
  double x = 0, mass = 0;
  double through = 0;           // mass pushed out of the node: x·Σ_v w_uv
  uint32_t run = 0, entry = 0;  // entry index in runs[run].flow
};
using QafdNodes = std::unordered_map<uint32_t, QafdNode>;

// With RetrievalRequest::explain: for each ranked passage the chain of
// largest inflows back to a source, and the edges carrying flow
// f_uv = w_uv·(x_u − x_v) out of nodes with x above options.support
// (at most options.max_subgraph_edges, largest flow first).
void ExplainQafd(const std::vector<QafdRun>& runs, const QafdNodes& nodes,
                 const QafdOptions& options, RetrievalOutput* out);

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_QAFD_GRAPH_H_
