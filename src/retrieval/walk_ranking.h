// Ranking for the walk methods (ppr, semflow): passages and nodes by their
// score at the walk's fixed point, and with RetrievalRequest::explain how
// each returned passage was reached.
//
// Thread-safety: reentrant. Complexity: O(S log k) for S scored nodes; with
// explain, O(Σ rows of the reported nodes) more.
#ifndef FLOWRAG_RETRIEVAL_WALK_RANKING_H_
#define FLOWRAG_RETRIEVAL_WALK_RANKING_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "graph/snapshot.h"
#include "graph_algo/ppr.h"
#include "retrieval/retriever.h"

namespace flowrag {

// Given the fixed point, fills ranked passages (top_k by score, ties by
// passage index), node_scores (best `max_nodes`) and, with `explain`, a
// predecessor path (graph_algo/ppr.h PredecessorPath) for each returned
// passage and the subgraph: every transition between reported nodes (the
// node scores, the paths' nodes and out->seeds), with weight = P(u, v) and
// flow = d·x_u·P(u, v). `score(node)` and `reset(node)` read the solution
// and the normalised reset; `damping` is the walk's d.
void FillGraphOutput(const Snapshot& snapshot, const TransitionSource& graph,
                     const std::vector<uint32_t>& scored_nodes,
                     const std::function<double(uint32_t)>& score,
                     const std::function<double(uint32_t)>& reset, double damping, size_t top_k,
                     size_t max_nodes, RetrievalOutput* out, bool explain = true);

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_WALK_RANKING_H_
