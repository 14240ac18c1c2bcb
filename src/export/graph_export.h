// The graph export writers: a snapshot's knowledge graph as GraphML or as
// JSON Lines (both described in doc/graph_export.md), written to a stream
// as they go.
//
// What is written: documents and passages (GraphExportOptions::passages),
// entities, entity descriptions; CONTAINS (document → passage), MENTIONS
// (passage → entity), DESCRIBES (description → entity), RELATED_TO (one per
// fact, subject → object, with its relation and source passages) and
// SYNONYM (one per pair) edges. Counts per kind equal the engine's
// StoreStats graph counts (RELATED_TO = facts).
//
// Thread-safety: reads the immutable snapshot only. Memory: one buffer of
// at most ~64 KiB plus one element. Complexity: O(nodes + edges + fact
// sources).
#ifndef FLOWRAG_EXPORT_GRAPH_EXPORT_H_
#define FLOWRAG_EXPORT_GRAPH_EXPORT_H_

#include <ostream>

#include "flowrag/graph.h"
#include "flowrag/status.h"
#include "graph/snapshot.h"

namespace flowrag {

// The graph of `snapshot` to `out`; `report` may be null. Fails (IoError,
// saying how many bytes were written) only when `out` fails.
Status WriteGraph(const Snapshot& snapshot, const GraphExportOptions& options, std::ostream& out,
                  GraphExportReport* report);

}  // namespace flowrag

#endif  // FLOWRAG_EXPORT_GRAPH_EXPORT_H_
