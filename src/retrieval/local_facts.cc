#include "retrieval/local_facts.h"

#include <algorithm>

#include "graph/array_checks.h"
#include "retrieval/persistent_indexes.h"
#include "vector/vector_index.h"

namespace flowrag {

namespace {

constexpr char kTag = 0;

}  // namespace

void LocalFacts::UseIndexOf(const KnowledgeGraph* g) {
  const VectorIndex* index = g != nullptr ? g->fact_index() : nullptr;
  half_ = dynamic_cast<const HalfRowsIndex*>(index);
  flat_ = dynamic_cast<const FlatIndex*>(index);
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
  // Format 3: no rows of its own; the graph's fact index holds them.
  static const PersistentDerived persistence = PersistentIndexOf<LocalFacts>(&kTag, "lf", 3);
  return persistence;
}

Status LocalFacts::ExportArrays(ArraySink& sink) const {
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
  local->UseIndexOf(&g);
  return std::shared_ptr<const LocalFacts>(std::move(local));
}

void LocalFacts::Build(const KnowledgeGraph& g) {
  UseIndexOf(&g);
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
  if (flat_ != nullptr) {
    thread_local std::vector<float> scratch;
    scratch.resize(flat_->Dimension());
    return DotProduct(flat_->Row(t, scratch.data()), query, flat_->Dimension());
  }
  return t < half_->Size() ? half_->Dot(t, query) : 0.0;
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
