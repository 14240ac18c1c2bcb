#include "retrieval/local_facts.h"

#include <algorithm>

#include "vector/sparse_index.h"
#include "vector/vector_index.h"

namespace flowrag {

std::shared_ptr<const LocalFacts> LocalFacts::For(const Snapshot& s) {
  static const char kTag = 0;
  const KnowledgeGraph* g = s.graph();
  if (g == nullptr || g->fact_index() == nullptr) return nullptr;
  const VectorIndex* index = g->fact_index();
  const auto* sparse = dynamic_cast<const SparseIndex*>(index);
  const bool compact = sparse != nullptr && sparse->Dimension() <= (size_t{1} << 16);
  if (!compact && dynamic_cast<const FlatIndex*>(index) == nullptr) return nullptr;
  return std::static_pointer_cast<const LocalFacts>(
      s.Derived(&kTag, [&]() -> std::shared_ptr<const void> {
        auto local = std::make_shared<LocalFacts>();
        local->Build(*g);
        return local;
      }));
}

void LocalFacts::Build(const KnowledgeGraph& g) {
  if (const auto* sparse = dynamic_cast<const SparseIndex*>(g.fact_index())) {
    sparse->Transpose(&row_offsets_, &dims_, &values_);
  } else {
    flat_ = dynamic_cast<const FlatIndex*>(g.fact_index());
  }
  // Passage → the fact texts it states (CSR, deduplicated per passage).
  std::vector<std::pair<uint32_t, uint32_t>> pairs;  // (passage, fact text)
  for (uint32_t f = 0; f < g.num_facts(); ++f) {
    for (uint32_t p : g.FactSources(f)) pairs.push_back({p, g.FactTextId(f)});
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  passage_offsets_.assign(g.num_passages() + 1, 0);
  for (const auto& [p, t] : pairs) ++passage_offsets_[p + 1];
  for (size_t p = 0; p < g.num_passages(); ++p) passage_offsets_[p + 1] += passage_offsets_[p];
  passage_texts_.reserve(pairs.size());
  for (const auto& [p, t] : pairs) passage_texts_.push_back(t);
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
  float sum = 0.0f;  // the same order and precision as SparseRows::Dot
  for (uint64_t i = row_offsets_[t]; i < row_offsets_[t + 1]; ++i)
    sum += values_[i] * query[dims_[i]];
  return sum;
}

std::vector<FactHit> LocalFacts::Best(std::span<const uint32_t> candidates, const float* query,
                                      size_t k) const {
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
