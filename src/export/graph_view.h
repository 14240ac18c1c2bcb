// The GraphView (include/flowrag/graph.h) of one snapshot: export through
// export/graph_export.h, browsing over the snapshot's KnowledgeGraph.
// Engine::Graph() hands these out.
#ifndef FLOWRAG_EXPORT_GRAPH_VIEW_H_
#define FLOWRAG_EXPORT_GRAPH_VIEW_H_

#include <memory>

#include "flowrag/graph.h"
#include "graph/snapshot.h"

namespace flowrag {

// A view that keeps `snapshot` alive. REQUIRES: snapshot != nullptr.
std::shared_ptr<const GraphView> MakeGraphView(std::shared_ptr<const Snapshot> snapshot);

}  // namespace flowrag

#endif  // FLOWRAG_EXPORT_GRAPH_VIEW_H_
