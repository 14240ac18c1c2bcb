// GraphVectors: the embeddings of a knowledge graph's texts (entity names,
// descriptions, distinct fact texts, distinct relation texts;
// graph/graph_texts.h), held the way queries read them.
//
//   entity_rows        rows (vector/sparse_rows.h): query-aware edge
//                      weights compare any two entities (QAFD-RAG Eq. 4–5);
//                      present only for a local (built-in) embedder
//   entity_index       search (seed selection, Eq. 1–2)
//   description_index  search (SA-RAG seeds)
//   fact_index         search (fact seeds; ids = fact text ids) and rows
//                      (retrieval/local_facts.h scores the facts near a
//                      query row by row): a HalfRowsIndex, the fact vectors'
//                      one copy, whenever they are sparse
//   relation_rows      rows (KnowledgeGraph::RelationDot)
//
// Indexes are exact: SparseIndex when the vectors fill less than a quarter of
// their dimensions (the hashed embedder's short texts: 3–20%), else
// FlatIndex; the fact texts' a HalfRowsIndex (vector/half_rows_index.h:
// rows of float16 values, whose inverted lists are built at a global
// search's first query) for any local embedder and for sparse remote
// vectors, so that the largest kind of text is held once, as rows, at 4
// bytes per non-zero (10^6 passages: 2.4 GB, against 3.5 GB of inverted
// lists plus 2.4 GB of rows before). A snapshot reads them from its persisted part
// (graph/graph_io.h) or builds them here from rows.
//
// Built-in embedder: texts are embedded one batch at a time straight into
// sparse rows, so no dense matrix of a whole kind ever exists (2wiki: 282k
// texts, 20.5 M non-zeros = 164 MB as rows, against 1.1 GB dense). After a
// write, the vectors of texts an earlier snapshot holds are renumbered, not
// embedded again (RemapGraphVectors): only new texts are embedded.
//
// Thread-safety: immutable once built; share through the KnowledgeGraph.
#ifndef FLOWRAG_GRAPH_GRAPH_VECTORS_H_
#define FLOWRAG_GRAPH_GRAPH_VECTORS_H_

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/array_io.h"
#include "common/matrix.h"
#include "embed/embedder.h"
#include "flowrag/status.h"
#include "vector/sparse_rows.h"
#include "vector/vector_index.h"

namespace flowrag {

struct GraphVectors {
  SparseRows entity_rows;  // rows() == 0 when absent
  std::unique_ptr<VectorIndex> entity_index, description_index, fact_index;  // null when absent
  SparseRows relation_rows;

  size_t MemoryBytes() const;
};

// The four kinds of text, rows in the KnowledgeGraph's order.
struct GraphTextRows {
  SparseRows entities, descriptions, facts, relations;
};

// Embeds `texts` into sparse rows, `batch` texts at a time (the dense
// scratch is batch × dimension floats). O(bytes of the texts + nnz).
Result<SparseRows> EmbedSparse(Embedder& embedder, std::span<const std::string> texts,
                               size_t batch = 256);

// The index for one kind's rows: SparseIndex below density 0.25, else
// FlatIndex. Null for no rows. O(nnz) (+ O(rows·d) for a flat one).
Result<std::unique_ptr<VectorIndex>> IndexForRows(const SparseRows& rows);

// The layout of the arrays ExportGraphVectors writes, part of the snapshot
// segment's key (graph/snapshot_segment.cc): a segment of another layout is
// rebuilt. 2: the fact texts' index as half rows (stop 50).
inline constexpr int kGraphVectorsArraysFormat = 2;

// The fact texts' index for `rows`: a HalfRowsIndex (of at most 65,536
// dimensions; else IndexForRows). Null for no rows. O(nnz).
Result<std::unique_ptr<VectorIndex>> FactIndexForRows(const SparseRows& rows);

// The fact index EmbedGraphVectors makes, from the vectors `index` holds (a
// local embedder's fact index read from a snapshot part): a SparseIndex or
// FlatIndex of at most 65,536 dimensions as a HalfRowsIndex of its vectors
// (FactIndexForRows: bit-equal to a fresh build, since the part holds the
// embedder's floats or the float values of halves); any other unchanged.
// O(nnz).
Result<std::unique_ptr<VectorIndex>> AsFactIndex(std::unique_ptr<VectorIndex> index);

// GraphVectors of a local embedder: each kind of text embedded and indexed
// in turn, entity and relation rows kept. Only one kind's rows are held
// beside the finished indexes (facts, the largest, first): the peak memory
// of a full graph build.
Result<GraphVectors> EmbedGraphVectors(Embedder& embedder, std::span<const std::string> entities,
                                       std::span<const std::string> descriptions,
                                       std::span<const std::string> facts,
                                       std::span<const std::string> relations);
// GraphVectors from dense matrices (a remote model's cached vectors; empty
// matrices when there are none): no entity rows, as the dense vectors of a
// remote model are not worth holding twice.
Result<GraphVectors> GraphVectorsFromDense(const FloatMatrix& entities,
                                           const FloatMatrix& descriptions,
                                           const FloatMatrix& facts,
                                           const FloatMatrix& relations,
                                           const VectorIndexOptions& options);

// The vectors an index holds, as rows (a transpose for a SparseIndex, the
// non-zeros of a FlatIndex, a HalfRowsIndex's as floats; no rows for another
// kind). O(nnz + size).
SparseRows RowsOfIndex(const VectorIndex* index);

// The vectors as arrays under `prefix` (common/array_io.h; the snapshot
// segment's "gv"): the entity and relation rows, and each index with its
// kind ("<prefix>.<x>k": 0 none, 1 sparse, 2 flat, 3 half rows). InvalidArgument, before
// anything is written, for an index of another kind (HNSW): see
// ExportableGraphVectors. O(arrays).
bool ExportableGraphVectors(const GraphVectors& vectors);
Status ExportGraphVectors(const GraphVectors& vectors, ArraySink& sink, std::string_view prefix);
// The same arrays, borrowed, each structure checking its own offsets and
// indexes (Corruption naming the array). The caller checks that the counts
// fit its graph (KnowledgeGraph::AdoptArrays). The indexes borrow their
// large arrays lazily where the source can (SparseIndex::AdoptArrays,
// FlatIndex::AdoptArrays), and so do the entity and relation rows
// (SparseRows::AdoptArrays). O(arrays).
Result<GraphVectors> AdoptGraphVectors(const ArraySource& source, std::string_view prefix);
// The arrays of AdoptGraphVectors' rows and indexes that may be borrowed lazily.
std::vector<std::string> LazyGraphVectorArrays(std::string_view prefix);

// How a later graph's texts relate to an earlier graph's, per kind: text i
// of the later graph is the earlier graph's text old_of_new[i], or a new text
// (-1) whose row comes from `fresh` (in order).
struct VectorRemap {
  std::vector<int64_t> entities, descriptions, facts, relations;
  GraphTextRows fresh;
};

// The later graph's vectors from the earlier graph's: kept rows and postings
// renumbered (SparseIndex::Remap), new texts' rows added. Equal to
// EmbedGraphVectors over the later graph's texts, without embedding or
// transposing what was kept. O(nnz + rows).
Result<GraphVectors> RemapGraphVectors(const GraphVectors& old, const VectorRemap& remap);

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_GRAPH_VECTORS_H_
