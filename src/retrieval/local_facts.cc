#include "retrieval/local_facts.h"

#include <algorithm>

#include "graph/array_checks.h"
#include "retrieval/persistent_indexes.h"
#include "vector/quantized.h"
#include "vector/sparse_index.h"
#include "vector/vector_index.h"

namespace flowrag {

namespace {

// False for the float16 bit patterns of an infinity or NaN (exponent all ones).
bool FiniteHalf(uint16_t h) { return (h & 0x7c00u) != 0x7c00u; }

constexpr char kTag = 0;

}  // namespace

const VectorIndex* LocalFacts::UsableIndex(const KnowledgeGraph* g) {
  if (g == nullptr || g->fact_index() == nullptr) return nullptr;
  const VectorIndex* index = g->fact_index();
  const auto* sparse = dynamic_cast<const SparseIndex*>(index);
  const bool compact = sparse != nullptr && sparse->Dimension() <= (size_t{1} << 16);
  if (!compact && dynamic_cast<const FlatIndex*>(index) == nullptr) return nullptr;
  return index;
}

std::shared_ptr<const LocalFacts> LocalFacts::For(const Snapshot& s) {
  if (s.graph() == nullptr) return nullptr;
  return std::static_pointer_cast<const LocalFacts>(
      s.Derived(&kTag, [&]() -> std::shared_ptr<const void> {
        auto local = std::make_shared<LocalFacts>();
        local->Build(*s.graph());
        return local;
      }));
}

const PersistentDerived& LocalFacts::Persistence() {
  // Format 2: float16 values (vector/quantized.h) instead of float.
  static const PersistentDerived persistence = PersistentIndexOf<LocalFacts>(&kTag, "lf", 2);
  return persistence;
}

Status LocalFacts::ExportArrays(ArraySink& sink) const {
  if (row_offsets_.size() > 0) {
    FLOWRAG_RETURN_IF_ERROR(dims_.VerifyAll());  // lazily adopted: not copied unverified
    FLOWRAG_RETURN_IF_ERROR(halves_.VerifyAll());
    FLOWRAG_RETURN_IF_ERROR(sink.Put<uint64_t>("lf.rows", row_offsets_.span()));
    FLOWRAG_RETURN_IF_ERROR(sink.Put<uint16_t>("lf.dims", dims_.span(), /*random=*/true));
    FLOWRAG_RETURN_IF_ERROR(sink.Put<uint16_t>("lf.halves", halves_.span(), /*random=*/true));
  }
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint64_t>("lf.passages", passage_offsets_.span()));
  return sink.Put<uint32_t>("lf.texts", passage_texts_.span(), /*random=*/true);
}

Result<std::shared_ptr<const LocalFacts>> LocalFacts::AdoptArrays(const Snapshot& s,
                                                                  const ArraySource& source) {
  if (s.graph() == nullptr) return Status::FailedPrecondition("local facts: no graph");
  const KnowledgeGraph& g = *s.graph();
  auto local = std::make_shared<LocalFacts>();
  FLOWRAG_ASSIGN_OR_RETURN(local->passage_offsets_, source.Get<uint64_t>("lf.passages"));
  FLOWRAG_ASSIGN_OR_RETURN(local->passage_texts_, source.Get<uint32_t>("lf.texts"));
  FLOWRAG_RETURN_IF_ERROR(array_checks::CheckOffsets(
      "lf.passages", local->passage_offsets_, g.num_passages(), local->passage_texts_.size()));
  FLOWRAG_RETURN_IF_ERROR(array_checks::CheckBelow("lf.texts", local->passage_texts_,
                                                   g.num_fact_texts(), "fact texts"));
  const VectorIndex* index = UsableIndex(&g);
  if (index == nullptr) return std::shared_ptr<const LocalFacts>(std::move(local));
  local->flat_ = dynamic_cast<const FlatIndex*>(index);
  if (local->flat_ != nullptr) return std::shared_ptr<const LocalFacts>(std::move(local));
  FLOWRAG_ASSIGN_OR_RETURN(local->row_offsets_, source.Get<uint64_t>("lf.rows"));
  FLOWRAG_ASSIGN_OR_RETURN(local->dims_, source.GetLazy<uint16_t>("lf.dims"));
  FLOWRAG_ASSIGN_OR_RETURN(local->halves_, source.GetLazy<uint16_t>("lf.halves"));
  local->dimension_ = index->Dimension();
  if (local->halves_.size() != local->dims_.size()) {
    return Status::Corruption("local facts: lf.halves and lf.dims differ in length");
  }
  FLOWRAG_RETURN_IF_ERROR(array_checks::CheckOffsets("lf.rows", local->row_offsets_, index->Size(),
                                                     local->dims_.size()));
  if (local->dims_.lazy() || local->halves_.lazy()) {  // each row when it is scored
    return std::shared_ptr<const LocalFacts>(std::move(local));
  }
  for (size_t i = 0; i < local->halves_.size(); ++i) {
    if (!FiniteHalf(local->halves_[i])) return array_checks::Bad("lf.halves", i, "not finite");
  }
  FLOWRAG_RETURN_IF_ERROR(
      array_checks::CheckBelow("lf.dims", local->dims_, index->Dimension(), "dimensions"));
  return std::shared_ptr<const LocalFacts>(std::move(local));
}

bool LocalFacts::RowReadable(uint32_t text, uint64_t first, uint64_t count) const {
  if (!dims_.Verify(first, count).ok() || !halves_.Verify(first, count).ok()) return false;
  for (uint64_t i = first; i < first + count; ++i) {
    if (dims_[i] >= dimension_ || !FiniteHalf(halves_[i])) {
      dims_.ReportDamage(Status::Corruption(
          "lf.dims / lf.halves: row " + std::to_string(text) + ", entry " + std::to_string(i) +
          ": a dimension out of range or a value not finite"));
      return false;
    }
  }
  return true;
}

void LocalFacts::Build(const KnowledgeGraph& g) {
  const VectorIndex* index = UsableIndex(&g);
  if (const auto* sparse = dynamic_cast<const SparseIndex*>(index)) {
    std::vector<uint64_t> offsets;
    std::vector<uint16_t> dims;
    std::vector<float> values;
    sparse->Transpose(&offsets, &dims, &values);
    std::vector<uint16_t> halves(values.size());
    for (size_t i = 0; i < values.size(); ++i) halves[i] = FloatToHalf(values[i]);
    row_offsets_ = std::move(offsets);
    dims_ = std::move(dims);
    halves_ = std::move(halves);
  } else {
    flat_ = dynamic_cast<const FlatIndex*>(index);
  }
  // Passage → the fact texts it states (CSR, deduplicated per passage).
  std::vector<std::pair<uint32_t, uint32_t>> pairs;  // (passage, fact text)
  for (uint32_t f = 0; f < g.num_facts(); ++f) {
    for (uint32_t p : g.FactSources(f)) pairs.push_back({p, g.FactTextId(f)});
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  std::vector<uint64_t> offsets(g.num_passages() + 1, 0);
  for (const auto& [p, t] : pairs) ++offsets[p + 1];
  for (size_t p = 0; p < g.num_passages(); ++p) offsets[p + 1] += offsets[p];
  std::vector<uint32_t> texts;
  texts.reserve(pairs.size());
  for (const auto& [p, t] : pairs) texts.push_back(t);
  passage_offsets_ = std::move(offsets);
  passage_texts_ = std::move(texts);
}

std::vector<uint32_t> LocalFacts::Candidates(const KnowledgeGraph& g,
                                             std::span<const uint32_t> passages,
                                             std::span<const uint32_t> entities) const {
  std::vector<uint32_t> out;
  for (uint32_t p : passages) {
    if (p + 1 >= passage_offsets_.size()) continue;
    out.insert(out.end(), passage_texts_.begin() + static_cast<ptrdiff_t>(passage_offsets_[p]),
               passage_texts_.begin() + static_cast<ptrdiff_t>(passage_offsets_[p + 1]));
  }
  const Csr& rel = g.Edges(EdgeKind::kRelatedTo);  // attr = fact index
  for (uint32_t e : entities) {
    if (e >= g.num_entities()) continue;
    const uint32_t node = g.EntityNode(e);
    for (uint64_t i = rel.Begin(node); i < rel.End(node); ++i)
      out.push_back(g.FactTextId(rel.attrs[i]));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double LocalFacts::Dot(uint32_t t, const float* query) const {
  if (flat_ != nullptr) return DotProduct(flat_->Row(t), query, flat_->Dimension());
  if (t + 1 >= row_offsets_.size()) return 0.0;
  const uint64_t first = row_offsets_[t], count = row_offsets_[t + 1] - first;
  if (dims_.lazy() && !RowReadable(t, first, count)) return 0.0;
  float sum = 0.0f;
  for (uint64_t i = first; i < first + count; ++i)
    sum += HalfToFloat(halves_[i]) * query[dims_[i]];
  return sum;
}

std::vector<FactHit> LocalFacts::Best(std::span<const uint32_t> candidates, const float* query,
                                      size_t k) const {
  if (!has_vectors()) return {};
  std::vector<FactHit> hits;
  hits.reserve(candidates.size());
  for (uint32_t t : candidates) {
    const double score = Dot(t, query);
    if (score > 1e-9) hits.push_back({t, score});
  }
  auto better = [](const FactHit& a, const FactHit& b) {
    return a.score != b.score ? a.score > b.score : a.fact_text < b.fact_text;
  };
  k = std::min(k, hits.size());
  std::partial_sort(hits.begin(), hits.begin() + static_cast<ptrdiff_t>(k), hits.end(), better);
  hits.resize(k);
  return hits;
}

}  // namespace flowrag
