// GraphVectors: the embeddings of a knowledge graph's texts (entity names,
// descriptions, distinct fact texts, distinct relation texts;
// graph/graph_texts.h), held the way queries read them.
//
//   entity_rows        rows (vector/sparse_rows.h): query-aware edge
//                      weights compare any two entities (QAFD-RAG Eq. 4–5);
//                      present only for a local (built-in) embedder
//   entity_index       search (seed selection, Eq. 1–2)
//   description_index  search (SA-RAG seeds)
//   fact_index         search (fact seeds; ids = fact text ids)
//   relation_rows      rows (KnowledgeGraph::RelationDot)
//
// Indexes are exact: SparseIndex when the vectors fill less than a quarter of
// their dimensions (the hashed embedder's short texts: 3–20%), else
// FlatIndex. A snapshot reads them from its persisted part
// (graph/graph_io.h) or builds them here from rows.
//
// Built-in embedder: texts are embedded one batch at a time straight into
// sparse rows, so no dense matrix of a whole kind ever exists (2wiki: 282k
// texts, 20.5 M non-zeros = 164 MB as rows, against 1.1 GB dense). Texts
// whose rows an earlier snapshot already holds (TextRows) are copied, not
// embedded again: after an insert only the new texts are embedded.
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

// Rows of one kind of text of an earlier graph, found by their text.
// `row_of` views strings the earlier graph owns: keep it alive meanwhile.
struct TextRows {
  std::unordered_map<std::string_view, uint32_t> row_of;
  SparseRows rows;
};

// The four kinds of text, rows in the KnowledgeGraph's order.
struct GraphTextRows {
  SparseRows entities, descriptions, facts, relations;
};

// Embeds `texts` into sparse rows, `batch` texts at a time (the dense
// scratch is batch × dimension floats). A text found in `reuse` (may be
// null) gets that row instead; *embedded (may be null) counts the others.
// O(bytes of the embedded texts + nnz).
Result<SparseRows> EmbedSparse(Embedder& embedder, std::span<const std::string> texts,
                               const TextRows* reuse, size_t* embedded = nullptr,
                               size_t batch = 256);

// The index for one kind's rows: SparseIndex below density 0.25, else
// FlatIndex. Null for no rows. O(nnz) (+ O(rows·d) for a flat one).
Result<std::unique_ptr<VectorIndex>> IndexForRows(const SparseRows& rows);

// GraphVectors from rows (a local embedder: entity rows are kept).
Result<GraphVectors> GraphVectorsFromRows(GraphTextRows rows);
// GraphVectors from dense matrices (a remote model's cached vectors; empty
// matrices when there are none): no entity rows, as the dense vectors of a
// remote model are not worth holding twice.
Result<GraphVectors> GraphVectorsFromDense(const FloatMatrix& entities,
                                           const FloatMatrix& descriptions,
                                           const FloatMatrix& facts,
                                           const FloatMatrix& relations,
                                           const VectorIndexOptions& options);

// The vectors an index holds, as rows (a transpose for a SparseIndex, the
// non-zeros of a FlatIndex; no rows for another kind). O(nnz + size).
SparseRows RowsOfIndex(const VectorIndex* index);

// The rows of one kind of an earlier graph again, keyed by their texts
// (`text(i)` of row i, references that must outlive the result): `rows`
// when it has rows, else those of `index` (a transpose for a SparseIndex,
// the non-zeros of a FlatIndex; nothing for another kind).
// O(nnz + rows) time and memory.
TextRows TextRowsOf(const VectorIndex* index, const SparseRows* rows, size_t n,
                    const std::function<const std::string&(uint32_t)>& text);

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_GRAPH_VECTORS_H_
