// Graph rows after passages are removed, computed in memory from the rows
// a snapshot kept (serialised, graph_io.h) instead of reading the tables
// again: what a delete does to the graph (Snapshot::Remove).
//
// The store removes a document's passages with their mentions, keys,
// descriptions and fact sources, then collects (GraphWriter::Finish):
// entities no passage defines any more, and with them (ON DELETE CASCADE)
// their mentions, descriptions, facts and synonym edges; facts without a
// source; relations without a fact. RemovePassages applies the same rules
// to the rows, keeping every row's order, so the result equals what
// LoadGraphRows reads afterwards except for the canonical names of the
// entities the removed passages mentioned (recomputed by the store from the
// remaining mentions' surface forms, which the rows do not hold: the caller
// reads them back) and the fact texts (AssignFactTexts, once the names are
// known). snapshot_persist_test checks the whole against LoadGraphRows.
//
// Thread-safety: pure functions. Cost: O(rows).
#ifndef FLOWRAG_GRAPH_GRAPH_ROWS_UPDATE_H_
#define FLOWRAG_GRAPH_GRAPH_ROWS_UPDATE_H_

#include <cstdint>
#include <vector>

#include "graph/knowledge_graph.h"

namespace flowrag {

struct GraphRowsRemoval {
  KnowledgeGraph::Input rows;  // what remains; fact texts left empty
  // Remaining entities (new indexes) a removed passage mentioned: their
  // canonical name and type may have changed.
  std::vector<uint32_t> touched;
};

// `rows` without the passages marked in `removed` (one flag per passage),
// passages renumbered densely.
GraphRowsRemoval RemovePassages(KnowledgeGraph::Input rows, const std::vector<bool>& removed);

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_GRAPH_ROWS_UPDATE_H_
