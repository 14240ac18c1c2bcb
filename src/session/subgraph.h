// The subgraph a graph method used, as the public RetrievalResult carries
// it: labelled nodes (seeds first, then the nodes of the explanation paths
// and the returned passages, then the best scored, at most 150: what a
// viewer can draw), the edges among them with their relation text, the
// paths as labels, the query's keywords and extra context.
#ifndef FLOWRAG_SESSION_SUBGRAPH_H_
#define FLOWRAG_SESSION_SUBGRAPH_H_

#include "flowrag/types.h"
#include "graph/snapshot.h"
#include "retrieval/retriever.h"

namespace flowrag {

// REQUIRES: snap.graph() not null. O(nodes + edges of `out` · log) plus,
// per RELATED_TO edge kept, a scan of its source's RELATED_TO entries.
void DescribeSubgraph(const Snapshot& snap, const RetrievalOutput& out, RetrievalResult* result);

}  // namespace flowrag

#endif  // FLOWRAG_SESSION_SUBGRAPH_H_
