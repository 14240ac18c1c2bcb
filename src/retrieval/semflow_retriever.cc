#include "retrieval/semflow_retriever.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "retrieval/fact_seeds.h"
#include "retrieval/ppr_retriever.h"

namespace flowrag {
namespace {

constexpr uint8_t Tag(EdgeKind k) { return static_cast<uint8_t>(k); }

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

Status SemFlowOptions::Override(ParamReader& r) {
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.reset", &reset));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.lambda", &lambda));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.down_share", &down_share));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.direction", &direction));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.query_similarity", &query_similarity));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.abstractness_penalty", &abstractness_penalty));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.facts", &facts));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.seeds", &seeds));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.name_seeds", &name_seeds));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.fact_filter", &fact_filter));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.passage_prior", &passage_prior));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.synonyms", &synonyms));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.solver", &solver));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.epsilon", &epsilon));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.tolerance", &tolerance));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.max_nodes", &max_nodes));
  FLOWRAG_RETURN_IF_ERROR(prior.Override(r, "semflow"));
  if (!(reset > 0 && reset <= 1)) {
    return Status::InvalidArgument("option semflow.reset: expected 0 < reset <= 1");
  }
  if (lambda < 0) return Status::InvalidArgument("option semflow.lambda: expected >= 0");
  if (!(down_share >= 0 && down_share <= 1)) {
    return Status::InvalidArgument("option semflow.down_share: expected 0..1");
  }
  if (passage_prior < 0) {
    return Status::InvalidArgument("option semflow.passage_prior: expected >= 0");
  }
  if (solver != "push" && solver != "power") {
    return Status::InvalidArgument("option semflow.solver=\"" + solver +
                                   "\": expected push or power");
  }
  if (!(epsilon > 0)) return Status::InvalidArgument("option semflow.epsilon: expected > 0");
  if (!(tolerance > 0)) return Status::InvalidArgument("option semflow.tolerance: expected > 0");
  return Status::Ok();
}

std::vector<double> EntityRelevance(const KnowledgeGraph& g,
                                    const std::vector<float>& passage_scores) {
  const Csr& m = g.Edges(EdgeKind::kMentions);
  std::vector<float> best(g.num_entities(), 0.0f);
  for (uint32_t e = 0; e < g.num_entities(); ++e) {
    const uint32_t node = g.EntityNode(e);
    float b = -std::numeric_limits<float>::infinity();
    for (uint64_t i = m.Begin(node); i < m.End(node); ++i) {
      const uint32_t p = m.targets[i];
      if (p < passage_scores.size()) b = std::max(b, passage_scores[p]);
    }
    best[e] = std::isfinite(b) ? b : 0.0f;
  }
  return MinMaxNormalize(best);
}

// ---------------------------------------------------------------- transitions

size_t SemFlowTransitions::Degree(uint32_t u) const {
  size_t d = g_.Edges(EdgeKind::kMentions).Degree(u);
  if (u >= g_.num_passages()) {
    d += g_.Edges(EdgeKind::kRelatedTo).Degree(u);
    if (o_.synonyms) d += g_.Edges(EdgeKind::kSynonym).Degree(u);
  }
  return d;
}

void SemFlowTransitions::Row(uint32_t u, std::vector<Transition>* out) const {
  out->clear();
  if (u >= num_nodes()) return;
  const Csr& m = g_.Edges(EdgeKind::kMentions);
  for (uint64_t i = m.Begin(u); i < m.End(u); ++i) {
    if (!out->empty() && out->back().target == m.targets[i]) continue;
    out->push_back({m.targets[i], Tag(EdgeKind::kMentions), 1.0});
  }
  const size_t num_passage_edges = out->size();
  if (u < g_.num_passages()) {  // passage → its entities, uniform
    for (Transition& t : *out) t.prob = 1.0 / static_cast<double>(num_passage_edges);
    return;
  }
  // Distinct entity neighbours (RELATED_TO first, so a pair that is both
  // related and synonymous is tagged RELATED_TO).
  const Csr& rel = g_.Edges(EdgeKind::kRelatedTo);
  for (uint64_t i = rel.Begin(u); i < rel.End(u); ++i) {
    if (out->size() > num_passage_edges && out->back().target == rel.targets[i]) continue;
    out->push_back({rel.targets[i], Tag(EdgeKind::kRelatedTo), 0.0});
  }
  if (o_.synonyms) {
    const Csr& syn = g_.Edges(EdgeKind::kSynonym);
    const size_t related_end = out->size();
    for (uint64_t i = syn.Begin(u); i < syn.End(u); ++i) {
      const uint32_t v = syn.targets[i];
      bool seen = false;
      for (size_t j = num_passage_edges; j < related_end && !seen; ++j) seen = (*out)[j].target == v;
      if (!seen) out->push_back({v, Tag(EdgeKind::kSynonym), 0.0});
    }
  }
  const size_t total = out->size();
  if (total == 0) return;
  const size_t num_entity_edges = total - num_passage_edges;
  for (size_t j = 0; j < num_passage_edges; ++j) (*out)[j].prob = 1.0 / static_cast<double>(total);
  if (num_entity_edges == 0) return;
  const double entity_share =
      static_cast<double>(num_entity_edges) / static_cast<double>(total);

  const uint32_t P = static_cast<uint32_t>(g_.num_passages());
  auto abstractness = [&](uint32_t node) -> double {
    const uint32_t e = node - P;
    return abstractness_.empty() ? g_.Abstractness(e) : abstractness_[e];
  };
  const double du = abstractness(u);
  // Transition score s(u, v) (Eq. 3) and direction of each entity edge.
  double max_s[2] = {-1e300, -1e300};
  size_t count[2] = {0, 0};
  std::vector<uint8_t>& group = group_scratch();
  group.assign(num_entity_edges, 0);
  for (size_t j = 0; j < num_entity_edges; ++j) {
    Transition& t = (*out)[num_passage_edges + j];
    const double dv = abstractness(t.target);
    double s = 0.0;
    if (o_.query_similarity) s += relevance_.empty() ? 0.0 : relevance_[t.target - P];
    if (o_.abstractness_penalty) s -= o_.lambda * std::abs(dv - du);
    const uint8_t gi = (o_.direction && dv > du) ? 1 : 0;  // 0: down (or all), 1: up
    group[j] = gi;
    t.prob = s;  // holds s until the softmax below
    max_s[gi] = std::max(max_s[gi], s);
    ++count[gi];
  }
  double share[2];
  if (!o_.direction || count[1] == 0) {
    share[0] = entity_share;
    share[1] = 0.0;
  } else if (count[0] == 0) {
    share[0] = 0.0;
    share[1] = entity_share;
  } else {
    share[0] = o_.down_share * entity_share;
    share[1] = (1.0 - o_.down_share) * entity_share;
  }
  double z[2] = {0.0, 0.0};
  for (size_t j = 0; j < num_entity_edges; ++j) {
    Transition& t = (*out)[num_passage_edges + j];
    t.prob = std::exp(t.prob - max_s[group[j]]);
    z[group[j]] += t.prob;
  }
  for (size_t j = 0; j < num_entity_edges; ++j) {
    Transition& t = (*out)[num_passage_edges + j];
    t.prob = share[group[j]] * t.prob / z[group[j]];
  }
}

std::vector<uint8_t>& SemFlowTransitions::group_scratch() {
  thread_local std::vector<uint8_t> scratch;
  return scratch;
}

// ---------------------------------------------------------------- retriever

Result<RetrievalOutput> SemFlowRetriever::Retrieve(const Snapshot& s,
                                                   const RetrievalRequest& r) const {
  const auto start = std::chrono::steady_clock::now();
  ParamReader reader(r.params);
  SemFlowOptions o;
  FLOWRAG_RETURN_IF_ERROR(o.Override(reader));
  FLOWRAG_RETURN_IF_ERROR(reader.CheckAllUsed(Name()));
  FLOWRAG_ASSIGN_OR_RETURN(QueryScores qs, ScoreQuery(s, r.query));
  const KnowledgeGraph& g = *s.graph();

  RetrievalOutput out;
  FactSeedOptions fo;
  fo.facts = o.facts;
  fo.seeds = o.seeds;
  fo.name_seeds = o.name_seeds;
  fo.fact_filter = o.fact_filter;
  fo.normalize_scores = false;  // A.2: weights from the query–fact similarity itself
  FLOWRAG_ASSIGN_OR_RETURN(FactSeeds fs, SeedWalkFromFacts(s, r.query, qs, fo, r.chat, &out));
  if (fs.seeds.empty()) {  // no usable fact → dense passage retrieval
    RankDenseFallback(qs, r.top_k, &out);
    out.diagnostics.time_ms = MillisSince(start);
    return out;
  }

  const std::vector<double> dense = PassagePrior(s, r.query, qs, o.prior);
  std::vector<NodeWeight> reset;
  reset.reserve(fs.seeds.size() + dense.size());
  std::unordered_map<uint32_t, double> seed_weight;
  double entity_mass = 0.0, passage_mass = 0.0;
  for (const EntitySeed& e : fs.seeds) {
    reset.push_back({g.EntityNode(e.entity), e.weight});
    seed_weight[g.EntityNode(e.entity)] = e.weight;
    entity_mass += e.weight;
  }
  for (uint32_t p = 0; p < dense.size(); ++p) {
    const double w = dense[p] * o.passage_prior;
    if (w > 0) {
      reset.push_back({p, w});
      passage_mass += w;
    }
  }
  const double total = entity_mass + passage_mass;
  const double prior = o.passage_prior;
  auto reset_of = [&](uint32_t u) -> double {
    if (u < dense.size()) return dense[u] * prior / total;
    auto it = seed_weight.find(u);
    return it == seed_weight.end() ? 0.0 : it->second / total;
  };
  for (const EntitySeed& e : fs.seeds) {
    out.seeds.push_back({g.EntityNode(e.entity), e.weight / total});
  }

  std::vector<double> relevance;
  if (o.query_similarity) relevance = EntityRelevance(g, qs.passage_scores);
  SemFlowTransitions walk(g, {}, relevance, o);
  const double damping = 1.0 - o.reset;
  PprStats st;
  if (o.solver == "push") {
    thread_local PushSolver solver;
    PushOptions po;
    po.damping = damping;
    po.epsilon = o.epsilon;
    FLOWRAG_RETURN_IF_ERROR(solver.Solve(walk, reset, po, &st));
    FillGraphOutput(s, walk, solver.touched(), [&](uint32_t u) { return solver.Score(u); },
                    reset_of, damping, r.top_k, o.max_nodes, &out);
  } else {
    PowerOptions po;
    po.damping = damping;
    po.tolerance = o.tolerance;
    FLOWRAG_ASSIGN_OR_RETURN(std::vector<double> x, PowerIteration(walk, reset, po, &st));
    std::vector<uint32_t> nodes;
    for (uint32_t u = 0; u < x.size(); ++u) {
      if (x[u] > 0) nodes.push_back(u);
    }
    FillGraphOutput(s, walk, nodes, [&](uint32_t u) { return x[u]; }, reset_of, damping, r.top_k,
                    o.max_nodes, &out);
  }
  out.diagnostics.iterations = st.iterations;
  out.diagnostics.residual = st.residual;
  out.diagnostics.nodes_touched = st.nodes_touched;
  out.diagnostics.edges_touched = st.edges_touched;
  out.diagnostics.extra["solver_ms"] = st.time_ms;
  out.diagnostics.extra["entity_seeds"] = static_cast<double>(fs.seeds.size());
  out.diagnostics.extra["reset_entity_mass"] = entity_mass / total;
  out.diagnostics.extra["reset_passage_mass"] = passage_mass / total;
  out.diagnostics.extra["converged"] = st.converged ? 1 : 0;
  out.diagnostics.time_ms = MillisSince(start);
  return out;
}

}  // namespace flowrag
