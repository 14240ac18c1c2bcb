#include "retrieval/seeds.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <unordered_map>

#include "retrieval/ppr_retriever.h"

namespace flowrag {

Result<std::vector<Seed>> SelectSeeds(const KnowledgeGraph& graph,
                                      const FloatMatrix& keyword_vectors,
                                      const SeedSelection& selection) {
  const size_t n = selection.n;
  const VectorIndex* index = graph.entity_index();
  if (index == nullptr) {
    return Status::FailedPrecondition("seed selection: the graph has no entity vectors");
  }
  if (keyword_vectors.rows > 0 && keyword_vectors.cols != index->Dimension()) {
    return Status::FailedPrecondition(
        "seed selection: keyword embeddings have " + std::to_string(keyword_vectors.cols) +
        " dimensions, the entity index has " + std::to_string(index->Dimension()));
  }
  std::unordered_map<uint32_t, Seed> best;
  const double log_p = std::log1p(static_cast<double>(std::max<size_t>(1, graph.num_passages())));
  auto weight = [&](uint32_t entity) -> float {
    if (!selection.specificity) return 1.0f;
    const double df = std::max<uint32_t>(1, graph.EntityPassageCount(entity));
    return static_cast<float>(std::log1p(static_cast<double>(graph.num_passages()) / df) / log_p);
  };
  VectorSearchParams params;
  // With specificity the per-keyword top n by raw score need not contain the
  // top n by product: search deeper, then rank by the product.
  params.k = selection.specificity ? std::max<size_t>(n * 8, 256) : n;
  params.min_score = 1e-6f;
  for (size_t k = 0; k < keyword_vectors.rows; ++k) {
    for (const VectorHit& h : index->Search(keyword_vectors.row(k), params, nullptr)) {
      const float score = h.score * weight(h.id);
      auto [it, inserted] = best.try_emplace(h.id, Seed{h.id, score, static_cast<uint32_t>(k)});
      if (!inserted && score > it->second.score) it->second = {h.id, score, static_cast<uint32_t>(k)};
    }
  }
  for (uint32_t e : selection.named) {
    if (e < graph.num_entities()) best[e] = Seed{e, 1.0f, 0};
  }
  std::vector<Seed> seeds;
  seeds.reserve(best.size());
  for (const auto& [id, s] : best) seeds.push_back(s);
  auto better = [](const Seed& a, const Seed& b) {
    return a.score != b.score ? a.score > b.score : a.entity < b.entity;
  };
  if (seeds.size() > n) {
    std::partial_sort(seeds.begin(), seeds.begin() + static_cast<ptrdiff_t>(n), seeds.end(), better);
    seeds.resize(n);
  } else {
    std::sort(seeds.begin(), seeds.end(), better);
  }
  if (!seeds.empty() && selection.min_ratio > 0) {
    const float cut = static_cast<float>(selection.min_ratio) * seeds.front().score;
    while (seeds.size() > 1 && seeds.back().score < cut) seeds.pop_back();
  }
  return seeds;
}

Result<FloatMatrix> EmbedTexts(const Snapshot& snapshot, const std::vector<std::string>& texts) {
  if (snapshot.embedder() == nullptr) {
    return Status::FailedPrecondition("the snapshot has no embedder to embed the query with");
  }
  return snapshot.embedder()->Embed(std::span<const std::string>(texts));
}

std::shared_ptr<const GraphQueryIndex> GraphQueryIndex::For(const Snapshot& snapshot) {
  static const char kTag = 0;
  if (snapshot.graph() == nullptr) return std::make_shared<GraphQueryIndex>();
  return std::static_pointer_cast<const GraphQueryIndex>(
      snapshot.Derived(&kTag, [&]() -> std::shared_ptr<const void> {
        auto index = std::make_shared<GraphQueryIndex>();
        index->Build(snapshot);
        return index;
      }));
}

void GraphQueryIndex::Build(const Snapshot& snapshot) {
  const auto start = std::chrono::steady_clock::now();
  const KnowledgeGraph& g = *snapshot.graph();
  graph_ = &g;
  static const char kNamesTag = 0;
  names_ = std::static_pointer_cast<const EntityNameMatcher>(
      snapshot.DerivedFromEntities(&kNamesTag, [&]() -> std::shared_ptr<const void> {
        return std::make_shared<const EntityNameMatcher>(g);
      }));
  entity_vectors_ = g.entity_vectors();
  build_seconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace flowrag
