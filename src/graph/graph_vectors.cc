#include "graph/graph_vectors.h"

#include <algorithm>
#include <functional>

#include "vector/flat_index.h"
#include "vector/half_rows_index.h"
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

namespace {

// Calls fn(batch matrix) for `texts` embedded `batch` at a time, in order;
// *cols is set from the first batch when the embedder did not know it.
Status ForEachEmbeddedBatch(Embedder& embedder, std::span<const std::string> texts, size_t batch,
                            size_t* cols, const std::function<Status(const FloatMatrix&)>& fn) {
  for (size_t start = 0; start < texts.size(); start += batch) {
    const size_t n = std::min(batch, texts.size() - start);
    FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix m, embedder.Embed(texts.subspan(start, n)));
    if (*cols == 0) *cols = m.cols;  // a remote model's dimension, known now
    if (m.cols != *cols || m.rows != n) {
      return Status::Internal("embedder returned " + std::to_string(m.rows) + "x" +
                              std::to_string(m.cols) + " for " + std::to_string(n) +
                              " texts of dimension " + std::to_string(*cols));
    }
    FLOWRAG_RETURN_IF_ERROR(fn(m));
  }
  return Status::Ok();
}

// The non-zero dimensions and values of a dense row.
void NonZerosOf(const float* row, size_t cols, std::vector<uint32_t>* dims,
                std::vector<float>* values) {
  dims->clear();
  values->clear();
  for (size_t d = 0; d < cols; ++d) {
    if (row[d] != 0.0f) {
      dims->push_back(static_cast<uint32_t>(d));
      values->push_back(row[d]);
    }
  }
}

// One kind's index straight from the embedder, IndexForRows(EmbedSparse())
// without holding the rows: the first pass counts each dimension's
// postings, the second embeds the texts again and fills them in (a
// FlatIndex instead when the counted density asks for one). The peak of a
// graph build is then the fact index alone, not the fact rows beside it
// (2wiki: 85 MB of rows). The local embedder is deterministic; the builder
// reports Internal if the passes disagree.
Result<std::unique_ptr<VectorIndex>> EmbedIndex(Embedder& embedder,
                                                std::span<const std::string> texts,
                                                size_t batch = 256) {
  size_t cols = embedder.Dimension();
  if (texts.empty() || cols == 0) {
    FLOWRAG_ASSIGN_OR_RETURN(SparseRows rows, EmbedSparse(embedder, texts, batch));
    return IndexForRows(rows);
  }
  SparseIndex::TwoPassBuilder builder(cols);
  std::vector<uint32_t> dims;
  std::vector<float> values;
  FLOWRAG_RETURN_IF_ERROR(ForEachEmbeddedBatch(embedder, texts, batch, &cols, [&](const FloatMatrix& m) {
    for (size_t r = 0; r < m.rows; ++r) {
      NonZerosOf(m.row(r), cols, &dims, &values);
      FLOWRAG_RETURN_IF_ERROR(builder.CountRow(dims));
    }
    return Status::Ok();
  }));
  const double density = static_cast<double>(builder.nonzeros_counted()) /
                         (static_cast<double>(texts.size()) * static_cast<double>(cols));
  if (density >= kSparseDensity) {
    auto flat = std::make_unique<FlatIndex>(cols, texts.size());
    FLOWRAG_RETURN_IF_ERROR(ForEachEmbeddedBatch(embedder, texts, batch, &cols,
                                                 [&](const FloatMatrix& m) { return flat->Add(m); }));
    return std::unique_ptr<VectorIndex>(std::move(flat));
  }
  FLOWRAG_RETURN_IF_ERROR(ForEachEmbeddedBatch(embedder, texts, batch, &cols, [&](const FloatMatrix& m) {
    for (size_t r = 0; r < m.rows; ++r) {
      NonZerosOf(m.row(r), cols, &dims, &values);
      FLOWRAG_RETURN_IF_ERROR(builder.FillRow(dims, values));
    }
    return Status::Ok();
  }));
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<SparseIndex> index, builder.Finish());
  return std::unique_ptr<VectorIndex>(std::move(index));
}

// The fact texts' index straight from the embedder: their rows as float16
// (FactIndexForRows), one batch at a time, so that the rows are never held
// as floats; EmbedIndex when the embedder's dimension does not fit 16 bits.
Result<std::unique_ptr<VectorIndex>> EmbedFactIndex(Embedder& embedder,
                                                    std::span<const std::string> texts,
                                                    size_t batch = 256) {
  size_t cols = embedder.Dimension();
  if (texts.empty() || cols == 0 || cols > HalfRowsIndex::kMaxDimension) {
    return EmbedIndex(embedder, texts, batch);
  }
  auto index = std::make_unique<HalfRowsIndex>(cols);
  FLOWRAG_RETURN_IF_ERROR(ForEachEmbeddedBatch(embedder, texts, batch, &cols,
                                               [&](const FloatMatrix& m) { return index->Add(m); }));
  return std::unique_ptr<VectorIndex>(std::move(index));
}

}  // namespace

Result<SparseRows> EmbedSparse(Embedder& embedder, std::span<const std::string> texts,
                               size_t batch) {
  SparseRows out;
  out.cols = embedder.Dimension();
  out.Reserve(texts.size(), 0);
  FLOWRAG_RETURN_IF_ERROR(ForEachEmbeddedBatch(embedder, texts, batch, &out.cols, [&](const FloatMatrix& m) {
    for (size_t r = 0; r < m.rows; ++r) out.Append(m.row(r));
    return Status::Ok();
  }));
  return out;
}

Result<std::unique_ptr<VectorIndex>> IndexForRows(const SparseRows& rows) {
  if (rows.rows() == 0 || rows.cols == 0) return std::unique_ptr<VectorIndex>();
  if (rows.Density() >= kSparseDensity) return FlatFromRows(rows);
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<SparseIndex> index, SparseIndex::FromRows(rows));
  return std::unique_ptr<VectorIndex>(std::move(index));
}

Result<std::unique_ptr<VectorIndex>> FactIndexForRows(const SparseRows& rows) {
  if (rows.rows() == 0 || rows.cols == 0) return std::unique_ptr<VectorIndex>();
  if (rows.cols > HalfRowsIndex::kMaxDimension) return IndexForRows(rows);
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<HalfRowsIndex> index, HalfRowsIndex::FromRows(rows));
  return std::unique_ptr<VectorIndex>(std::move(index));
}

Result<std::unique_ptr<VectorIndex>> AsFactIndex(std::unique_ptr<VectorIndex> index) {
  const bool sparse = dynamic_cast<const SparseIndex*>(index.get()) != nullptr;
  const bool flat = dynamic_cast<const FlatIndex*>(index.get()) != nullptr;
  if ((!sparse && !flat) || index->Dimension() > HalfRowsIndex::kMaxDimension) return index;
  return FactIndexForRows(RowsOfIndex(index.get()));
}

Result<GraphVectors> EmbedGraphVectors(Embedder& embedder, std::span<const std::string> entities,
                                       std::span<const std::string> descriptions,
                                       std::span<const std::string> facts,
                                       std::span<const std::string> relations) {
  GraphVectors v;
  FLOWRAG_ASSIGN_OR_RETURN(v.fact_index, EmbedFactIndex(embedder, facts));
  FLOWRAG_ASSIGN_OR_RETURN(v.description_index, EmbedIndex(embedder, descriptions));
  FLOWRAG_ASSIGN_OR_RETURN(SparseRows entity_rows, EmbedSparse(embedder, entities));
  FLOWRAG_ASSIGN_OR_RETURN(v.entity_index, IndexForRows(entity_rows));
  if (entity_rows.cols > 0) v.entity_rows = std::move(entity_rows);
  FLOWRAG_ASSIGN_OR_RETURN(SparseRows relation_rows, EmbedSparse(embedder, relations));
  if (relation_rows.cols > 0) v.relation_rows = std::move(relation_rows);
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
  if (facts.rows > 0 && Density(facts) < kSparseDensity) {
    FLOWRAG_ASSIGN_OR_RETURN(v.fact_index, FactIndexForRows(SparseRows::FromMatrix(facts)));
  } else {
    FLOWRAG_ASSIGN_OR_RETURN(v.fact_index, index_of(facts));
  }
  v.relation_rows = SparseRows::FromMatrix(relations);
  return v;
}

SparseRows RowsOfIndex(const VectorIndex* index) {
  if (const auto* sparse = dynamic_cast<const SparseIndex*>(index)) return sparse->Rows();
  if (const auto* half = dynamic_cast<const HalfRowsIndex*>(index)) return half->Rows();
  SparseRows rows;
  if (const auto* flat = dynamic_cast<const FlatIndex*>(index)) {
    rows.cols = flat->Dimension();
    std::vector<float> scratch(rows.cols);
    for (uint32_t i = 0; i < flat->Size(); ++i) rows.Append(flat->Row(i, scratch.data()));
  }
  return rows;
}

namespace {

// Row i of the result: old row old_of_new[i], or the next fresh row.
SparseRows GatherRows(const SparseRows& old, std::span<const int64_t> old_of_new,
                      const SparseRows& fresh) {
  SparseRows out;
  out.cols = old.cols > 0 ? old.cols : fresh.cols;
  out.Reserve(old_of_new.size(), 0);
  size_t next_fresh = 0;
  for (int64_t o : old_of_new) {
    if (o >= 0) {
      out.AppendRow(old, static_cast<size_t>(o));
    } else {
      out.AppendRow(fresh, next_fresh++);
    }
  }
  return out;
}

Status CheckRemap(std::span<const int64_t> old_of_new, size_t old_rows, size_t fresh_rows,
                  const char* kind) {
  size_t fresh = 0;
  for (int64_t o : old_of_new) {
    if (o < 0) {
      ++fresh;
    } else if (static_cast<uint64_t>(o) >= old_rows) {
      return Status::InvalidArgument(std::string("vector remap: ") + kind + " row " +
                                     std::to_string(o) + " of " + std::to_string(old_rows));
    }
  }
  if (fresh != fresh_rows) {
    return Status::InvalidArgument(std::string("vector remap: ") + kind + ": " +
                                   std::to_string(fresh_rows) + " fresh rows for " +
                                   std::to_string(fresh) + " new texts");
  }
  return Status::Ok();
}

using IndexOfRows = Result<std::unique_ptr<VectorIndex>> (*)(const SparseRows&);

// One searched kind: its postings renumbered when it is sparse and stays so,
// half rows gathered as they are, else its rows gathered and indexed again
// (`index_of` chooses the kind: IndexForRows, or FactIndexForRows).
Result<std::unique_ptr<VectorIndex>> RemapIndex(const VectorIndex* old,
                                                std::span<const int64_t> old_of_new,
                                                const SparseRows& fresh, const char* kind,
                                                IndexOfRows index_of = IndexForRows) {
  FLOWRAG_RETURN_IF_ERROR(CheckRemap(old_of_new, old ? old->Size() : 0, fresh.rows(), kind));
  if (const auto* half = dynamic_cast<const HalfRowsIndex*>(old)) {
    if (old_of_new.empty()) return std::unique_ptr<VectorIndex>();
    FLOWRAG_ASSIGN_OR_RETURN(auto index, HalfRowsIndex::Remap(*half, old_of_new, fresh));
    return std::unique_ptr<VectorIndex>(std::move(index));
  }
  if (const auto* sparse = dynamic_cast<const SparseIndex*>(old)) {
    FLOWRAG_ASSIGN_OR_RETURN(auto index, SparseIndex::Remap(*sparse, old_of_new, fresh));
    const double cells = static_cast<double>(index->Size()) * static_cast<double>(index->Dimension());
    if (index->Size() == 0) return std::unique_ptr<VectorIndex>();
    if (static_cast<double>(index->NonZeros()) < kSparseDensity * cells) {
      return std::unique_ptr<VectorIndex>(std::move(index));
    }
  }
  return index_of(GatherRows(RowsOfIndex(old), old_of_new, fresh));
}

}  // namespace

Result<GraphVectors> RemapGraphVectors(const GraphVectors& old, const VectorRemap& remap) {
  GraphVectors v;
  FLOWRAG_ASSIGN_OR_RETURN(v.entity_index, RemapIndex(old.entity_index.get(), remap.entities,
                                                      remap.fresh.entities, "entity"));
  FLOWRAG_ASSIGN_OR_RETURN(v.description_index,
                           RemapIndex(old.description_index.get(), remap.descriptions,
                                      remap.fresh.descriptions, "description"));
  FLOWRAG_ASSIGN_OR_RETURN(v.fact_index, RemapIndex(old.fact_index.get(), remap.facts,
                                                    remap.fresh.facts, "fact", FactIndexForRows));
  if (old.entity_rows.cols > 0 || remap.fresh.entities.cols > 0) {
    FLOWRAG_RETURN_IF_ERROR(CheckRemap(remap.entities, old.entity_rows.rows(),
                                       remap.fresh.entities.rows(), "entity rows"));
    v.entity_rows = GatherRows(old.entity_rows, remap.entities, remap.fresh.entities);
  }
  if (old.relation_rows.cols > 0 || remap.fresh.relations.cols > 0) {
    FLOWRAG_RETURN_IF_ERROR(CheckRemap(remap.relations, old.relation_rows.rows(),
                                       remap.fresh.relations.rows(), "relation rows"));
    v.relation_rows = GatherRows(old.relation_rows, remap.relations, remap.fresh.relations);
  }
  return v;
}

namespace {

enum IndexKind : int64_t { kNoIndex = 0, kSparseIndex = 1, kFlatIndex = 2, kHalfRows = 3 };

int64_t KindOf(const VectorIndex* index) {
  if (index == nullptr) return kNoIndex;
  if (dynamic_cast<const SparseIndex*>(index) != nullptr) return kSparseIndex;
  if (dynamic_cast<const FlatIndex*>(index) != nullptr) return kFlatIndex;
  if (dynamic_cast<const HalfRowsIndex*>(index) != nullptr) return kHalfRows;
  return -1;
}

Status ExportIndex(const VectorIndex* index, ArraySink& sink, const std::string& name) {
  const int64_t kind = KindOf(index);
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<int64_t>(name + "k", kind));
  if (kind == kSparseIndex) {
    return static_cast<const SparseIndex*>(index)->ExportArrays(sink, name);
  }
  if (kind == kFlatIndex) return static_cast<const FlatIndex*>(index)->ExportArrays(sink, name);
  if (kind == kHalfRows) return static_cast<const HalfRowsIndex*>(index)->ExportArrays(sink, name);
  return Status::Ok();
}

Result<std::unique_ptr<VectorIndex>> AdoptIndex(const ArraySource& source, const std::string& name) {
  FLOWRAG_ASSIGN_OR_RETURN(int64_t kind, source.GetScalar<int64_t>(name + "k"));
  switch (kind) {
    case kNoIndex:
      return std::unique_ptr<VectorIndex>();
    case kSparseIndex: {
      FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<SparseIndex> index,
                               SparseIndex::AdoptArrays(source, name));
      return std::unique_ptr<VectorIndex>(std::move(index));
    }
    case kFlatIndex: {
      FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<FlatIndex> index,
                               FlatIndex::AdoptArrays(source, name));
      return std::unique_ptr<VectorIndex>(std::move(index));
    }
    case kHalfRows: {
      FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<HalfRowsIndex> index,
                               HalfRowsIndex::AdoptArrays(source, name));
      return std::unique_ptr<VectorIndex>(std::move(index));
    }
    default:
      return Status::Corruption("array " + name + "k: unknown index kind " + std::to_string(kind));
  }
}

}  // namespace

bool ExportableGraphVectors(const GraphVectors& vectors) {
  return KindOf(vectors.entity_index.get()) >= 0 && KindOf(vectors.description_index.get()) >= 0 &&
         KindOf(vectors.fact_index.get()) >= 0;
}

Status ExportGraphVectors(const GraphVectors& vectors, ArraySink& sink, std::string_view prefix) {
  const std::string p(prefix);
  if (!ExportableGraphVectors(vectors)) {
    return Status::InvalidArgument("graph vectors: an index that is neither sparse nor flat");
  }
  FLOWRAG_RETURN_IF_ERROR(vectors.entity_rows.ExportArrays(sink, p + ".er"));
  FLOWRAG_RETURN_IF_ERROR(vectors.relation_rows.ExportArrays(sink, p + ".rr"));
  FLOWRAG_RETURN_IF_ERROR(ExportIndex(vectors.entity_index.get(), sink, p + ".ei"));
  FLOWRAG_RETURN_IF_ERROR(ExportIndex(vectors.description_index.get(), sink, p + ".di"));
  return ExportIndex(vectors.fact_index.get(), sink, p + ".fi");
}

std::vector<std::string> LazyGraphVectorArrays(std::string_view prefix) {
  std::vector<std::string> names;
  for (const char* rows : {".er", ".rr"}) {
    auto lazy = SparseRows::LazyArrays(std::string(prefix) + rows);
    names.insert(names.end(), lazy.begin(), lazy.end());
  }
  for (const char* index : {".ei", ".di", ".fi"}) {
    const std::string p = std::string(prefix) + index;
    for (auto lazy : {SparseIndex::LazyArrays(p), FlatIndex::LazyArrays(p),
                      HalfRowsIndex::LazyArrays(p)}) {
      names.insert(names.end(), lazy.begin(), lazy.end());
    }
  }
  return names;
}

Result<GraphVectors> AdoptGraphVectors(const ArraySource& source, std::string_view prefix) {
  const std::string p(prefix);
  GraphVectors vectors;
  FLOWRAG_ASSIGN_OR_RETURN(vectors.entity_rows, SparseRows::AdoptArrays(source, p + ".er"));
  FLOWRAG_ASSIGN_OR_RETURN(vectors.relation_rows, SparseRows::AdoptArrays(source, p + ".rr"));
  FLOWRAG_ASSIGN_OR_RETURN(vectors.entity_index, AdoptIndex(source, p + ".ei"));
  FLOWRAG_ASSIGN_OR_RETURN(vectors.description_index, AdoptIndex(source, p + ".di"));
  FLOWRAG_ASSIGN_OR_RETURN(vectors.fact_index, AdoptIndex(source, p + ".fi"));
  return vectors;
}

}  // namespace flowrag
