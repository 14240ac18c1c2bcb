#include "retrieval/qafd_graph.h"

#include <algorithm>
#include <cmath>

#include "vector/flat_index.h"
#include "vector/vector_index.h"

namespace flowrag {
namespace {

constexpr double kStabiliser = 1e-10;  // QAFD-RAG A2.2.1

}  // namespace

QueryAwareWalk::QueryAwareWalk(const KnowledgeGraph& graph, const SparseRows* entity_vectors,
                               const FlatIndex* passages, const float* query,
                               const QueryScores* scores, const QafdOptions& options)
    : g_(graph),
      walk_(graph.walk()),
      entity_vectors_(entity_vectors),
      passages_(passages),
      query_(query),
      options_(options) {
  if (scores != nullptr) {
    passage_cosines_ = scores->dense;
    num_passages_ = scores->num_passages;
  }
  if (entity_vectors_ != nullptr && passages_ != nullptr &&
      passages_->Dimension() != entity_vectors_->cols) {
    passages_ = nullptr;
  }
}

size_t QueryAwareWalk::Degree(uint32_t u) const {
  if (options_.synonyms) return walk_.Degree(u);
  size_t d = 0;
  for (uint64_t i = walk_.Begin(u); i < walk_.End(u); ++i) d += !Skipped(i);
  return d;
}

void QueryAwareWalk::Neighbors(uint32_t u, std::vector<uint32_t>* out) const {
  for (uint64_t i = walk_.Begin(u); i < walk_.End(u); ++i) {
    if (!Skipped(i)) out->push_back(walk_.Target(i));
  }
}

bool QueryAwareWalk::VisitNeighbors(uint32_t u,
                                    const std::function<bool(uint32_t)>& visit) const {
  for (uint64_t i = walk_.Begin(u); i < walk_.End(u); ++i) {
    if (!Skipped(i) && !visit(walk_.Target(i))) return false;
  }
  return true;
}

void QueryAwareWalk::WeightedNeighbors(uint32_t u, std::vector<uint32_t>* nodes,
                                       std::vector<double>* weights) const {
  const double s_uq = QuerySim(u);
  const bool by_similarity = options_.structure == EdgeStructure::kSimilarity;
  const bool u_entity = g_.Kind(u) == NodeKind::kEntity;
  if (by_similarity && u_entity) LoadDense(g_.LocalIndex(u));
  for (uint64_t i = walk_.Begin(u); i < walk_.End(u); ++i) {
    if (Skipped(i)) continue;
    const uint32_t v = walk_.Target(i);
    const double s_uv = by_similarity ? SimilarityFromCosine(options_.similarity, NodeCosine(u, v),
                                                             options_.rbf_gamma)
                                      : walk_.Weight(i);
    nodes->push_back(v);
    weights->push_back(
        QueryAwareWeight(options_.weights, s_uv, s_uq, QuerySim(v), options_.a, options_.b) +
        kStabiliser);
  }
  if (by_similarity && u_entity) ClearDense(g_.LocalIndex(u));
}

double QueryAwareWalk::QuerySim(uint32_t v) const {
  return sims_.GetOrCompute(v, [&] {
    double cos = 0.0;
    if (query_ != nullptr && g_.Kind(v) == NodeKind::kEntity) {
      if (entity_vectors_ != nullptr) cos = entity_vectors_->Dot(g_.LocalIndex(v), query_);
    } else if (g_.Kind(v) == NodeKind::kPassage) {
      cos = CosineOf(passage_cosines_, num_passages_, v);
    }
    return static_cast<float>(SimilarityFromCosine(options_.similarity, cos, options_.rbf_gamma));
  });
}

EdgeKind QueryAwareWalk::KindBetween(uint32_t u, uint32_t v) const {
  const auto begin = walk_.targets().begin();
  const auto first = begin + static_cast<ptrdiff_t>(walk_.Begin(u));
  const auto last = begin + static_cast<ptrdiff_t>(walk_.End(u));
  const auto it = std::lower_bound(first, last, v);
  if (it == last || *it != v) return EdgeKind::kMentions;
  return walk_.Kind(static_cast<uint64_t>(it - begin));
}

double QueryAwareWalk::NodeCosine(uint32_t u, uint32_t v) const {
  const SparseRows* ev = entity_vectors_;
  if (ev == nullptr) return 0.0;
  const bool u_entity = g_.Kind(u) == NodeKind::kEntity;
  const bool v_entity = g_.Kind(v) == NodeKind::kEntity;
  if (u_entity && v_entity) return ev->Dot(g_.LocalIndex(v), scratch_.data());
  if (passages_ == nullptr) return 0.0;
  const size_t d = passages_->Dimension();
  if (row_scratch_.size() != 2 * d) row_scratch_.resize(2 * d);
  if (u_entity) return ev->Dot(g_.LocalIndex(u), passages_->Row(v, row_scratch_.data()));
  if (v_entity) return ev->Dot(g_.LocalIndex(v), passages_->Row(u, row_scratch_.data()));
  return DotProduct(passages_->Row(u, row_scratch_.data()),
                    passages_->Row(v, row_scratch_.data() + d), d);
}

void NodeValueCache::Grow() {
  std::vector<uint32_t> keys = std::move(keys_);
  std::vector<float> values = std::move(values_);
  keys_.assign(std::max<size_t>(64, 2 * keys.size()), kEmpty);
  values_.assign(keys_.size(), 0.0f);
  for (size_t j = 0; j < keys.size(); ++j) {
    if (keys[j] == kEmpty) continue;
    size_t i = Slot(keys[j]);
    while (keys_[i] != kEmpty) i = (i + 1) & (keys_.size() - 1);
    keys_[i] = keys[j];
    values_[i] = values[j];
  }
}

void QueryAwareWalk::LoadDense(uint32_t e) const {
  const SparseRows* ev = entity_vectors_;
  if (ev == nullptr) return;
  if (scratch_.size() != ev->cols) scratch_.assign(ev->cols, 0.0f);
  const SparseRows::RowView row = ev->Row(e);
  for (size_t k = 0; k < row.dims.size(); ++k) scratch_[row.dims[k]] = row.values[k];
}

void QueryAwareWalk::ClearDense(uint32_t e) const {
  const SparseRows* ev = entity_vectors_;
  if (ev == nullptr) return;
  for (uint32_t d : ev->Row(e).dims) scratch_[d] = 0.0f;
}

}  // namespace flowrag
