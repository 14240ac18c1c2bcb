#include "graph/walk_graph.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <string_view>

#include "graph/array_checks.h"
#include "graph/knowledge_graph.h"

namespace flowrag {
namespace {

struct Item {
  uint32_t target;
  float weight;
  uint8_t kind;
};

// Factor on every edge of entity e (literal and hub rules).
std::vector<float> EntityFactors(const KnowledgeGraph& g, const WalkWeights& w) {
  std::vector<float> f(g.num_entities(), 1.0f);
  for (uint32_t e = 0; e < g.num_entities(); ++e) {
    const std::string_view type = g.EntityType(e);
    if (type == "DATE" || type == "NUMBER") f[e] *= w.literal;
    const uint32_t df = g.EntityPassageCount(e);
    if (w.hub_passages > 0 && df > w.hub_passages) {
      f[e] *= static_cast<float>(w.hub_passages) / static_cast<float>(df);
    }
  }
  return f;
}

// u's entries of one edge kind, one per distinct target (parallel entries
// add up for facts; mentions count once per pair).
void CollectRow(const KnowledgeGraph& g, uint32_t u, const WalkWeights& w,
                const std::vector<float>& factor, std::vector<Item>* row) {
  const size_t P = g.num_passages();
  auto entity_factor = [&](uint32_t node) { return node >= P ? factor[node - P] : 1.0f; };
  const float fu = entity_factor(u);
  const Csr& m = g.Edges(EdgeKind::kMentions);
  for (uint64_t i = m.Begin(u); i < m.End(u); ++i) {
    const uint32_t v = m.targets[i];
    const float base = m.attrs[i] == 1 ? w.title : w.mention;
    row->push_back({v, base * fu * entity_factor(v), static_cast<uint8_t>(EdgeKind::kMentions)});
  }
  if (u < P) return;
  const Csr& rel = g.Edges(EdgeKind::kRelatedTo);
  for (uint64_t i = rel.Begin(u); i < rel.End(u); ++i) {
    const uint32_t v = rel.targets[i];
    row->push_back({v, w.fact * fu * entity_factor(v), static_cast<uint8_t>(EdgeKind::kRelatedTo)});
  }
  const Csr& syn = g.Edges(EdgeKind::kSynonym);
  for (uint64_t i = syn.Begin(u); i < syn.End(u); ++i) {
    const float s = std::max(0.0f, syn.weights[i]);
    if (s == 0.0f) continue;
    row->push_back({syn.targets[i], w.synonym * s * fu * entity_factor(syn.targets[i]),
                    static_cast<uint8_t>(EdgeKind::kSynonym)});
  }
}

}  // namespace

WalkGraph WalkGraph::Build(const KnowledgeGraph& g, const WalkWeights& w) {
  WalkGraph out;
  out.config_ = w;
  const size_t n = g.num_passages() + g.num_entities();
  const std::vector<float> factor = EntityFactors(g, w);
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> targets;
  std::vector<float> weights;
  std::vector<uint8_t> kinds;
  std::vector<double> row_sums(n, 0.0);
  offsets.reserve(n + 1);
  offsets.push_back(0);
  std::vector<Item> row;
  for (uint32_t u = 0; u < n; ++u) {
    row.clear();
    CollectRow(g, u, w, factor, &row);
    // Merge by target: weights add; the kind is the lowest EdgeKind present
    // (a fact outranks a synonym, a mention is alone in its pair).
    std::sort(row.begin(), row.end(), [](const Item& a, const Item& b) {
      return a.target != b.target ? a.target < b.target : a.kind < b.kind;
    });
    double sum = 0.0;
    const size_t row_begin = targets.size();
    for (const Item& it : row) {
      if (!(it.weight > 0)) continue;
      if (targets.size() > row_begin && targets.back() == it.target) {
        weights.back() += it.weight;
      } else {
        targets.push_back(it.target);
        weights.push_back(it.weight);
        kinds.push_back(it.kind);
      }
      sum += it.weight;
    }
    row_sums[u] = sum;
    offsets.push_back(targets.size());
  }
  out.offsets_ = std::move(offsets);
  out.targets_ = std::move(targets);
  out.weights_ = std::move(weights);
  out.kinds_ = std::move(kinds);
  out.row_sums_ = std::move(row_sums);
  return out;
}

Status WalkGraph::ExportArrays(ArraySink& sink) const {
  if (lazy_ != nullptr) {  // never copy damage into a new segment
    for (uint32_t u = 0; u < num_nodes(); ++u) {
      if (!RowChecked(u)) return CheckRow(u, lazy_->passages, lazy_->slots);
    }
  }
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint64_t>("walk.offsets", offsets_, /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>("walk.targets", targets_, /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<float>("walk.weights", weights_, /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint8_t>("walk.kinds", kinds_, /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<double>("walk.row_sums", row_sums_, /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<float>("walk.w.mention", config_.mention));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<float>("walk.w.title", config_.title));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<float>("walk.w.fact", config_.fact));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<float>("walk.w.synonym", config_.synonym));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<float>("walk.w.literal", config_.literal));
  return sink.PutScalar<uint32_t>("walk.w.hub_passages", config_.hub_passages);
}

namespace {

Result<WalkWeights> AdoptWeights(const ArraySource& source) {
  using array_checks::GetScalar;
  WalkWeights w;
  struct Field {
    const char* name;
    float* value;
  };
  for (const Field& f : {Field{"walk.w.mention", &w.mention}, Field{"walk.w.title", &w.title},
                         Field{"walk.w.fact", &w.fact}, Field{"walk.w.synonym", &w.synonym},
                         Field{"walk.w.literal", &w.literal}}) {
    FLOWRAG_ASSIGN_OR_RETURN(*f.value, GetScalar<float>(source, f.name));
    if (!std::isfinite(*f.value)) return array_checks::Bad(f.name, 0, "not finite");
  }
  FLOWRAG_ASSIGN_OR_RETURN(w.hub_passages, GetScalar<uint32_t>(source, "walk.w.hub_passages"));
  return w;
}

}  // namespace

Result<WalkGraph> WalkGraph::AdoptArrays(const ArraySource& source, size_t num_passages,
                                         size_t num_entities, size_t passages) {
  using array_checks::Bad;
  using array_checks::Get;
  using array_checks::GetLazy;
  WalkGraph out;
  FLOWRAG_ASSIGN_OR_RETURN(out.config_, AdoptWeights(source));
  FLOWRAG_ASSIGN_OR_RETURN(out.offsets_, Get<uint64_t>(source, "walk.offsets"));
  FLOWRAG_ASSIGN_OR_RETURN(out.targets_, GetLazy<uint32_t>(source, "walk.targets"));
  FLOWRAG_ASSIGN_OR_RETURN(out.weights_, GetLazy<float>(source, "walk.weights"));
  FLOWRAG_ASSIGN_OR_RETURN(out.kinds_, GetLazy<uint8_t>(source, "walk.kinds"));
  FLOWRAG_ASSIGN_OR_RETURN(out.row_sums_, Get<double>(source, "walk.row_sums"));
  const size_t n = num_passages + num_entities, entries = out.targets_.size();
  FLOWRAG_RETURN_IF_ERROR(array_checks::CheckOffsets("walk.offsets", out.offsets_, n, entries));
  FLOWRAG_RETURN_IF_ERROR(array_checks::CheckSize<float>("walk.weights", out.weights_, entries));
  FLOWRAG_RETURN_IF_ERROR(array_checks::CheckSize<uint8_t>("walk.kinds", out.kinds_, entries));
  FLOWRAG_RETURN_IF_ERROR(array_checks::CheckSize<double>("walk.row_sums", out.row_sums_, n));
  FLOWRAG_RETURN_IF_ERROR(array_checks::CheckFinite<double>("walk.row_sums", out.row_sums_));
  if (passages > num_passages) return Bad("walk.offsets", passages, "more passages than slots");
  if (out.offsets_[passages] != out.offsets_[num_passages]) {
    return Bad("walk.offsets", passages, "an empty slot's row");
  }
  if (out.targets_.lazy() && out.weights_.lazy() && out.kinds_.lazy()) {
    auto lazy = std::make_shared<LazyRows>(n);
    lazy->passages = passages;
    lazy->slots = num_passages;
    out.lazy_ = std::move(lazy);
    return out;
  }
  // A source that verified the arrays: every row now.
  for (size_t u = 0; u < n; ++u) {
    FLOWRAG_RETURN_IF_ERROR(out.CheckRow(static_cast<uint32_t>(u), passages, num_passages));
  }
  return out;
}

std::vector<std::string> WalkGraph::LazyArrays() {
  return {"walk.targets", "walk.weights", "walk.kinds"};
}

bool WalkGraph::RowChecked(uint32_t u) const {
  return lazy_->checked.Passed(
      u, [&] { return CheckRow(u, lazy_->passages, lazy_->slots); },
      [&](const Status& s) { targets_.ReportDamage(s); });
}

// Row u joins the nodes its kinds may join, as Build makes them (rows:
// `slots` passage slots, of which those below `passages` hold passages,
// then the entities): a mention joins a passage and an entity, a
// RELATED_TO or synonym entry two entities; its weights are finite and
// > 0 and add up to its row sum (within 1e-4: summed in four lanes, not in
// the order Build summed).
Status WalkGraph::CheckRow(uint32_t u, size_t passages, size_t slots) const {
  using array_checks::Bad;
  constexpr auto kMentions = static_cast<uint8_t>(EdgeKind::kMentions);
  constexpr auto kRelated = static_cast<uint8_t>(EdgeKind::kRelatedTo);
  constexpr auto kSynonym = static_cast<uint8_t>(EdgeKind::kSynonym);
  const uint64_t b = offsets_[u], e = offsets_[u + 1];
  FLOWRAG_RETURN_IF_ERROR(targets_.Verify(b, e - b));
  FLOWRAG_RETURN_IF_ERROR(weights_.Verify(b, e - b));
  FLOWRAG_RETURN_IF_ERROR(kinds_.Verify(b, e - b));
  const size_t n = num_nodes();
  const bool from_passage = u < slots;
  double lane[4] = {0, 0, 0, 0};
  for (uint64_t i = b; i < e; ++i) {
    const uint32_t t = targets_[i];
    const uint8_t k = kinds_[i];
    if (t >= n) {
      return Bad("walk.targets", i, "index " + std::to_string(t) + " of " + std::to_string(n));
    }
    if (t >= passages && t < slots) return Bad("walk.targets", i, "an empty passage slot");
    const bool to_passage = t < slots;
    const bool joins = from_passage || to_passage ? k == kMentions && from_passage != to_passage
                                                  : k == kRelated || k == kSynonym;
    if (!joins) {
      return Bad("walk.kinds", i, "kind " + std::to_string(k) + " does not join these nodes");
    }
    const float w = weights_[i];
    if (!(std::isfinite(w) && w > 0.0f)) return Bad("walk.weights", i, "not finite and > 0");
    lane[(i - b) % 4] += w;
  }
  const double sum = (lane[0] + lane[1]) + (lane[2] + lane[3]);
  if (std::abs(row_sums_[u] - sum) > 1e-4 * sum) {
    return Bad("walk.row_sums", u, "not the sum of the row's weights");
  }
  return Status::Ok();
}

size_t WalkGraph::MemoryBytes() const {
  return offsets_.bytes() + targets_.bytes() + weights_.bytes() + kinds_.bytes() +
         row_sums_.bytes();
}

}  // namespace flowrag
