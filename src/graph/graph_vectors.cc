#include "graph/graph_vectors.h"

#include <algorithm>

#include "vector/flat_index.h"
#include "vector/sparse_index.h"

namespace flowrag {
namespace {

// SparseIndex below this density, FlatIndex above (a posting costs twice a
// dense float).
constexpr double kSparseDensity = 0.25;

Result<std::unique_ptr<VectorIndex>> FlatFromRows(const SparseRows& rows) {
  auto index = std::make_unique<FlatIndex>(rows.cols, rows.rows());
  constexpr size_t kBatch = 1024;
  for (size_t start = 0; start < rows.rows(); start += kBatch) {
    FloatMatrix part(std::min(kBatch, rows.rows() - start), rows.cols);
    for (size_t r = 0; r < part.rows; ++r) rows.Densify(start + r, part.row(r));
    FLOWRAG_RETURN_IF_ERROR(index->Add(part));
  }
  return std::unique_ptr<VectorIndex>(std::move(index));
}

}  // namespace

size_t GraphVectors::MemoryBytes() const {
  size_t bytes = entity_rows.MemoryBytes() + relation_rows.MemoryBytes();
  for (const auto* index : {entity_index.get(), description_index.get(), fact_index.get()}) {
    if (index != nullptr) bytes += index->MemoryBytes();
  }
  return bytes;
}

Result<SparseRows> EmbedSparse(Embedder& embedder, std::span<const std::string> texts,
                               const TextRows* reuse, size_t* embedded, size_t batch) {
  SparseRows out;
  out.cols = embedder.Dimension();
  out.offsets.reserve(texts.size() + 1);
  if (embedded != nullptr) *embedded = 0;
  if (reuse != nullptr && reuse->rows.rows() > 0 && reuse->rows.cols != out.cols) reuse = nullptr;
  // Rows are appended in text order; a batch of texts to embed is flushed
  // before the next reused row so the order holds.
  std::vector<std::string> pending;
  auto flush = [&]() -> Status {
    if (pending.empty()) return Status::Ok();
    FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix m, embedder.Embed(pending));
    if (out.cols == 0) out.cols = m.cols;  // a remote model's dimension, known now
    if (m.cols != out.cols || m.rows != pending.size()) {
      return Status::Internal("embedder returned " + std::to_string(m.rows) + "x" +
                              std::to_string(m.cols) + " for " + std::to_string(pending.size()) +
                              " texts of dimension " + std::to_string(out.cols));
    }
    for (size_t r = 0; r < m.rows; ++r) out.Append(m.row(r));
    if (embedded != nullptr) *embedded += pending.size();
    pending.clear();
    return Status::Ok();
  };
  for (const std::string& text : texts) {
    if (reuse != nullptr) {
      auto it = reuse->row_of.find(text);
      if (it != reuse->row_of.end()) {
        FLOWRAG_RETURN_IF_ERROR(flush());
        out.AppendRow(reuse->rows, it->second);
        continue;
      }
    }
    pending.push_back(text);
    if (pending.size() >= batch) FLOWRAG_RETURN_IF_ERROR(flush());
  }
  FLOWRAG_RETURN_IF_ERROR(flush());
  return out;
}

Result<std::unique_ptr<VectorIndex>> IndexForRows(const SparseRows& rows) {
  if (rows.rows() == 0 || rows.cols == 0) return std::unique_ptr<VectorIndex>();
  if (rows.Density() >= kSparseDensity) return FlatFromRows(rows);
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<SparseIndex> index, SparseIndex::FromRows(rows));
  return std::unique_ptr<VectorIndex>(std::move(index));
}

Result<GraphVectors> GraphVectorsFromRows(GraphTextRows rows) {
  GraphVectors v;
  FLOWRAG_ASSIGN_OR_RETURN(v.entity_index, IndexForRows(rows.entities));
  FLOWRAG_ASSIGN_OR_RETURN(v.description_index, IndexForRows(rows.descriptions));
  FLOWRAG_ASSIGN_OR_RETURN(v.fact_index, IndexForRows(rows.facts));
  if (rows.entities.cols > 0) v.entity_rows = std::move(rows.entities);
  if (rows.relations.cols > 0) v.relation_rows = std::move(rows.relations);
  return v;
}

Result<GraphVectors> GraphVectorsFromDense(const FloatMatrix& entities,
                                           const FloatMatrix& descriptions,
                                           const FloatMatrix& facts,
                                           const FloatMatrix& relations,
                                           const VectorIndexOptions& options) {
  auto index_of = [&](const FloatMatrix& m) -> Result<std::unique_ptr<VectorIndex>> {
    if (m.cols == 0 || m.rows == 0) return std::unique_ptr<VectorIndex>();
    VectorIndexOptions o = options;
    o.kind = Density(m) < kSparseDensity ? "sparse" : "flat";
    FLOWRAG_ASSIGN_OR_RETURN(auto index, MakeVectorIndex(m.cols, m.rows, o));
    FLOWRAG_RETURN_IF_ERROR(index->Add(m));
    return index;
  };
  GraphVectors v;
  FLOWRAG_ASSIGN_OR_RETURN(v.entity_index, index_of(entities));
  FLOWRAG_ASSIGN_OR_RETURN(v.description_index, index_of(descriptions));
  FLOWRAG_ASSIGN_OR_RETURN(v.fact_index, index_of(facts));
  v.relation_rows = SparseRows::FromMatrix(relations);
  return v;
}

SparseRows RowsOfIndex(const VectorIndex* index) {
  if (const auto* sparse = dynamic_cast<const SparseIndex*>(index)) return sparse->Rows();
  SparseRows rows;
  if (const auto* flat = dynamic_cast<const FlatIndex*>(index)) {
    rows.cols = flat->Dimension();
    for (uint32_t i = 0; i < flat->Size(); ++i) rows.Append(flat->Row(i));
  }
  return rows;
}

TextRows TextRowsOf(const VectorIndex* index, const SparseRows* rows, size_t n,
                    const std::function<const std::string&(uint32_t)>& text) {
  TextRows out;
  if (rows != nullptr && rows->rows() == n && n > 0) {
    out.rows = *rows;
  } else if (index != nullptr) {
    out.rows = RowsOfIndex(index);
  }
  if (out.rows.rows() != n) return TextRows();
  out.row_of.reserve(n);
  for (uint32_t i = 0; i < n; ++i) out.row_of.emplace(text(i), i);
  return out;
}

}  // namespace flowrag
