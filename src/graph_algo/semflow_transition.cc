#include "graph_algo/semflow_transition.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace flowrag {
namespace {

constexpr uint8_t Tag(EdgeKind k) { return static_cast<uint8_t>(k); }

// numpy.quantile's default (linear interpolation between order statistics).
double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  const double a = v[lo];
  double b = a;
  if (hi != lo) b = *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end());
  return a + (pos - static_cast<double>(lo)) * (b - a);
}

Status OptionError(const char* name, double value, const char* expected) {
  return Status::InvalidArgument(std::string("semflow transition ") + name + " " +
                                 std::to_string(value) + ": expected " + expected);
}

// The mass of the entity edges by direction group (0: down, or all without
// direction control; 1: up) and the self-loop's, as shares of the entity
// edges' total.
struct GroupBudgets {
  double group[2] = {1.0, 0.0};
  double self = 0.0;
};

GroupBudgets BudgetsOf(const SemFlowTransitionOptions& o, const size_t count[2]) {
  GroupBudgets b;
  if (!o.direction || count[1] == 0) return b;
  if (count[0] > 0) {
    b.group[0] = o.down_share;
    b.group[1] = 1.0 - o.down_share;
  } else if (o.self_loop) {
    b.group[0] = 0.0;
    b.group[1] = 1.0 - o.down_share;
    b.self = o.down_share;
  } else {
    b.group[0] = 0.0;
    b.group[1] = 1.0;
  }
  return b;
}

}  // namespace

Status SemFlowTransitionOptions::Validate() const {
  if (!(lambda >= 0) || !std::isfinite(lambda)) return OptionError("lambda", lambda, ">= 0");
  if (!(down_share >= 0 && down_share <= 1)) {
    return OptionError("down_share", down_share, "0 <= share <= 1");
  }
  if (!(floor > 0) || !std::isfinite(floor)) return OptionError("floor", floor, "> 0");
  return Status::Ok();
}

// ---------------------------------------------------------------- relevance

std::vector<double> EntityRelevance(const KnowledgeGraph& g,
                                    const std::vector<float>& passage_scores) {
  const Csr& m = g.Edges(EdgeKind::kMentions);
  std::vector<double> raw(g.num_entities(), 0.0);
  for (uint32_t e = 0; e < g.num_entities(); ++e) {
    const uint32_t node = g.EntityNode(e);
    double b = -std::numeric_limits<double>::infinity();
    for (uint64_t i = m.Begin(node); i < m.End(node); ++i) {
      const uint32_t p = m.targets[i];
      if (p < passage_scores.size()) b = std::max(b, static_cast<double>(passage_scores[p]));
    }
    raw[e] = std::isfinite(b) ? b : 0.0;
  }
  const double lo = Quantile(raw, 0.01), hi = Quantile(raw, 0.99);
  if (!(hi > lo)) return std::vector<double>(raw.size(), 0.5);
  for (double& x : raw) x = std::clamp((x - lo) / (hi - lo), 0.0, 1.0);
  return raw;
}

// ---------------------------------------------------------------- transitions

Result<SemFlowTransitions> SemFlowTransitions::Make(const KnowledgeGraph& graph,
                                                    std::span<const float> abstractness,
                                                    RelevanceFn relevance,
                                                    const SemFlowTransitionOptions& options) {
  FLOWRAG_RETURN_IF_ERROR(options.Validate());
  if (!abstractness.empty() && abstractness.size() != graph.num_entities()) {
    return Status::InvalidArgument("semflow transition: " + std::to_string(abstractness.size()) +
                                   " abstractness values for " +
                                   std::to_string(graph.num_entities()) + " entities");
  }
  return SemFlowTransitions(graph, abstractness, std::move(relevance), options);
}

SemFlowTransitions::SemFlowTransitions(const KnowledgeGraph& graph,
                                       std::span<const float> abstractness, RelevanceFn relevance,
                                       const SemFlowTransitionOptions& options)
    : g_(graph), abstractness_(abstractness), relevance_(std::move(relevance)), o_(options) {
  o_.walk_weights = options.walk_weights && graph.walk().num_nodes() > 0;
}

SemFlowTransitions::SemFlowTransitions(const KnowledgeGraph& graph,
                                       std::span<const float> abstractness,
                                       std::span<const double> relevance,
                                       const SemFlowTransitionOptions& options)
    : SemFlowTransitions(graph, abstractness, RelevanceFn(), options) {
  if (!relevance.empty()) {
    relevance_ = [relevance](uint32_t e) { return e < relevance.size() ? relevance[e] : 0.0; };
  }
}

size_t SemFlowTransitions::Degree(uint32_t u) const {
  size_t d = g_.Edges(EdgeKind::kMentions).Degree(u);
  if (u >= g_.num_passages()) {
    d += g_.Edges(EdgeKind::kRelatedTo).Degree(u) + 1;  // + the self-loop
    if (o_.synonyms) d += g_.Edges(EdgeKind::kSynonym).Degree(u);
  }
  return d;
}

void SemFlowTransitions::Row(uint32_t u, std::vector<Transition>* out) const {
  out->clear();
  if (u >= num_nodes()) return;
  const double passage_weight = AppendPassageEdges(u, out);
  const size_t num_passage_edges = out->size();
  if (u >= g_.num_passages()) AppendEntityNeighbours(u, out);
  if (out->empty()) return;                // isolated: dangling
  if (out->size() == num_passage_edges) {  // a passage, or an entity without entity edges
    for (Transition& t : *out) t.prob /= passage_weight;
    return;
  }
  WeighEntityRow(u, num_passage_edges, passage_weight, out);
}

double SemFlowTransitions::AppendPassageEdges(uint32_t u, std::vector<Transition>* out) const {
  // Weight 1 each (the paper), or the snapshot's walk-graph weight
  // (graph/walk_graph.h: the title link, literal and hub rules every walk
  // reads).
  double passage_weight = 0.0;
  if (o_.walk_weights) {
    const WalkGraph& w = g_.walk();
    for (uint64_t i = w.Begin(u); i < w.End(u); ++i) {
      if (w.Kind(i) != EdgeKind::kMentions) continue;
      out->push_back({w.Target(i), Tag(EdgeKind::kMentions), w.Weight(i)});
      passage_weight += w.Weight(i);
    }
    return passage_weight;
  }
  const Csr& m = g_.Edges(EdgeKind::kMentions);
  for (uint64_t i = m.Begin(u); i < m.End(u); ++i) {
    if (!out->empty() && out->back().target == m.targets[i]) continue;
    out->push_back({m.targets[i], Tag(EdgeKind::kMentions), 1.0});
    passage_weight += 1.0;
  }
  return passage_weight;
}

void SemFlowTransitions::AppendEntityNeighbours(uint32_t u, std::vector<Transition>* out) const {
  // RELATED_TO, then (with synonyms) SYNONYM neighbours that are not related
  // too. Both lists are sorted by target.
  const size_t num_passage_edges = out->size();
  const Csr& rel = g_.Edges(EdgeKind::kRelatedTo);
  for (uint64_t i = rel.Begin(u); i < rel.End(u); ++i) {
    const uint32_t v = rel.targets[i];
    if (v == u || (out->size() > num_passage_edges && out->back().target == v)) continue;
    out->push_back({v, Tag(EdgeKind::kRelatedTo), 0.0});
  }
  if (!o_.synonyms) return;
  const Csr& syn = g_.Edges(EdgeKind::kSynonym);
  const size_t related_end = out->size();
  size_t j = num_passage_edges;
  for (uint64_t i = syn.Begin(u); i < syn.End(u); ++i) {
    const uint32_t v = syn.targets[i];
    while (j < related_end && (*out)[j].target < v) ++j;
    if (v == u || (j < related_end && (*out)[j].target == v)) continue;
    if (out->size() > related_end && out->back().target == v) continue;
    out->push_back({v, Tag(EdgeKind::kSynonym), 0.0});
  }
}

void SemFlowTransitions::WeighEntityRow(uint32_t u, size_t first_entity_edge, double passage_weight,
                                        std::vector<Transition>* out) const {
  const size_t num_entity_edges = out->size() - first_entity_edge;
  const uint32_t P = static_cast<uint32_t>(g_.num_passages());
  const double du = AbstractnessOf(u - P);
  // Transition score s(u, v) (Eq. 3), held in `prob`, and the direction
  // group of each entity edge.
  double max_s[2] = {-1e300, -1e300};
  size_t count[2] = {0, 0};
  thread_local std::vector<uint8_t> group;
  group.assign(num_entity_edges, 0);
  for (size_t j = 0; j < num_entity_edges; ++j) {
    Transition& t = (*out)[first_entity_edge + j];
    const double dv = AbstractnessOf(t.target - P);
    double s = 0.0;
    if (o_.query_similarity && relevance_) s += relevance_(t.target - P);
    if (o_.abstractness_penalty) s -= o_.lambda * std::abs(dv - du);
    const uint8_t gi = (o_.direction && dv > du) ? 1 : 0;
    group[j] = gi;
    t.prob = s;
    max_s[gi] = std::max(max_s[gi], s);
    ++count[gi];
  }
  const GroupBudgets budget = BudgetsOf(o_, count);
  double z[2] = {0.0, 0.0};
  for (size_t j = 0; j < num_entity_edges; ++j) {
    Transition& t = (*out)[first_entity_edge + j];
    t.prob = o_.linear ? std::max(t.prob, o_.floor) : std::exp(t.prob - max_s[group[j]]);
    z[group[j]] += t.prob;
  }
  // The entity edges together weigh as much as an average passage edge
  // (1 with unit passage edges, the authors' code), or one each.
  const double mean_passage =
      first_entity_edge > 0 ? passage_weight / static_cast<double>(first_entity_edge) : 1.0;
  const double entity_weight =
      (o_.one_share ? 1.0 : static_cast<double>(num_entity_edges)) * mean_passage;
  const double total = passage_weight + entity_weight;
  for (size_t j = 0; j < first_entity_edge; ++j) (*out)[j].prob /= total;
  const double share = entity_weight / total;
  for (size_t j = 0; j < num_entity_edges; ++j) {
    Transition& t = (*out)[first_entity_edge + j];
    t.prob = share * budget.group[group[j]] * t.prob / z[group[j]];
  }
  if (budget.self > 0) out->push_back({u, Tag(EdgeKind::kRelatedTo), share * budget.self});
}

}  // namespace flowrag
