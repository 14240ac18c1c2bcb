#include "retrieval/semflow_retriever.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "common/stopwatch.h"
#include "retrieval/seeding.h"
#include "retrieval/walk_ranking.h"

namespace flowrag {

Status SemFlowOptions::Override(ParamReader& r) {
  FLOWRAG_RETURN_IF_ERROR(ReadFactSearch(r, &fact_search));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.reset", &reset));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.lambda", &lambda));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.down_share", &down_share));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.direction", &direction));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.query_similarity", &query_similarity));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.abstractness_penalty", &abstractness_penalty));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.weights", &weights));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.entity_share", &entity_share));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.passage_edges", &passage_edges));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.self_loop", &self_loop));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.floor", &floor));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.relevance", &relevance));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.facts", &facts));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.seeds", &seeds));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.fact_passages", &fact_passages));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.normalize_facts", &normalize_facts));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.name_seeds", &name_seeds));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.fact_filter", &fact_filter));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.passage_prior", &passage_prior));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.prior_mode", &prior_mode));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.passage_share", &passage_share));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.unnamed_passage_share", &unnamed_passage_share));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.synonyms", &synonyms));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.solver", &solver));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.epsilon", &epsilon));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.tolerance", &tolerance));
  FLOWRAG_RETURN_IF_ERROR(r.Read("semflow.max_nodes", &max_nodes));
  FLOWRAG_RETURN_IF_ERROR(prior.Override(r, "semflow"));
  if (!(reset > 0 && reset <= 1)) {
    return Status::InvalidArgument("option semflow.reset: expected 0 < reset <= 1");
  }
  if (!(lambda >= 0)) return Status::InvalidArgument("option semflow.lambda: expected >= 0");
  if (!(down_share >= 0 && down_share <= 1)) {
    return Status::InvalidArgument("option semflow.down_share: expected 0..1");
  }
  if (weights != "linear" && weights != "softmax") {
    return Status::InvalidArgument("option semflow.weights=\"" + weights +
                                   "\": expected linear or softmax");
  }
  if (entity_share != "one" && entity_share != "edges") {
    return Status::InvalidArgument("option semflow.entity_share=\"" + entity_share +
                                   "\": expected one or edges");
  }
  if (passage_edges != "walk" && passage_edges != "unit") {
    return Status::InvalidArgument("option semflow.passage_edges=\"" + passage_edges +
                                   "\": expected walk or unit");
  }
  if (relevance != "local" && relevance != "global") {
    return Status::InvalidArgument("option semflow.relevance=\"" + relevance +
                                   "\": expected local or global");
  }
  if (!(floor > 0)) return Status::InvalidArgument("option semflow.floor: expected > 0");
  if (prior_mode != "weight" && prior_mode != "share") {
    return Status::InvalidArgument("option semflow.prior_mode=\"" + prior_mode +
                                   "\": expected weight or share");
  }
  if (!(passage_share >= 0 && passage_share < 1) ||
      !(unnamed_passage_share >= 0 && unnamed_passage_share < 1)) {
    return Status::InvalidArgument(
        "option semflow.passage_share / unnamed_passage_share: expected 0 <= share < 1");
  }
  if (!(passage_prior >= 0)) {
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

SemFlowTransitionOptions SemFlowOptions::Transition() const {
  SemFlowTransitionOptions t;
  t.lambda = lambda;
  t.down_share = down_share;
  t.direction = direction;
  t.query_similarity = query_similarity;
  t.abstractness_penalty = abstractness_penalty;
  t.linear = weights == "linear";
  t.one_share = entity_share == "one";
  t.walk_weights = passage_edges == "walk";
  t.self_loop = self_loop;
  t.floor = floor;
  t.synonyms = synonyms;
  return t;
}

namespace {

// The reset vector: entity seeds, then the passage prior on its support.
struct SemFlowReset {
  std::vector<NodeWeight> raw;                   // seeds first, unnormalised
  std::vector<NodeWeight> normalized;            // NormalizeReset(raw): by node, Σ = 1
  double entity_mass = 0.0, passage_mass = 0.0;  // of `raw`
  double max_weight = 0.0;                       // largest normalised entry
};

// Entity seeds at their weights beside the passages at prior ×
// passage_prior (weight mode), or, in share mode, the passages holding a
// fixed share φ of the reset split by prior (the baseline's mechanism,
// ppr_retriever.h). Seeds go to out->seeds with their normalised weight.
Result<SemFlowReset> BuildReset(const Snapshot& s, const std::string& query, const QueryScores& qs,
                                const FactSeeds& fs, const SemFlowOptions& o,
                                RetrievalOutput* out) {
  const KnowledgeGraph& g = *s.graph();
  const std::vector<PassageWeight> prior = PassagePrior(s, query, qs, o.prior);
  double prior_total = 0.0;
  for (const PassageWeight& w : prior) prior_total += w.weight;
  double entity_scale = 1.0, passage_scale = o.passage_prior;
  if (o.prior_mode == "share" && prior_total > 0) {
    double seed_total = 0.0;
    for (const EntitySeed& e : fs.seeds) seed_total += e.weight;
    const double phi = fs.named > 0 ? o.passage_share : o.unnamed_passage_share;
    entity_scale = seed_total > 0 ? (1.0 - phi) / seed_total : 0.0;
    passage_scale = phi / prior_total;
  }
  SemFlowReset reset;
  for (const EntitySeed& e : fs.seeds) {
    reset.raw.push_back({g.EntityNode(e.entity), e.weight * entity_scale});
    reset.entity_mass += e.weight * entity_scale;
  }
  for (const PassageWeight& pw : prior) {
    const double w = pw.weight * passage_scale;
    if (w > 0) {
      reset.raw.push_back({pw.passage, w});
      reset.passage_mass += w;
    }
  }
  FLOWRAG_ASSIGN_OR_RETURN(reset.normalized,
                           NormalizeReset(reset.raw, g.num_passages() + g.num_entities()));
  for (const NodeWeight& w : reset.normalized)
    reset.max_weight = std::max(reset.max_weight, w.weight);
  const double total = reset.entity_mass + reset.passage_mass;
  for (const EntitySeed& e : fs.seeds) {
    out->seeds.push_back({g.EntityNode(e.entity), e.weight * entity_scale / total});
  }
  return reset;
}

// Per-thread memo of Rel(v|q) by entity, reset in O(1) per query by a
// generation stamp, so a query costs what it touches.
struct RelevanceMemo {
  uint32_t gen = 0;
  std::vector<uint32_t> stamp;
  std::vector<float> value;

  void Prepare(size_t entities) {
    if (++gen == 0) {
      std::fill(stamp.begin(), stamp.end(), 0);
      gen = 1;
    }
    if (stamp.size() < entities) {
      stamp.resize(entities, 0);
      value.resize(entities);
    }
  }
};

// Rel(v|q) of one query: on demand from the passage cosines, memoised
// (relevance=local), or for every entity (global); none without
// query_similarity.
class QueryRelevance {
 public:
  QueryRelevance(const KnowledgeGraph& g, const QueryScores& qs, const SemFlowOptions& o)
      : g_(g), qs_(qs), men_(g.Edges(EdgeKind::kMentions)), memo_(ThreadMemo()) {
    const double best_cosine = qs.BestCosine();
    inv_best_ = best_cosine > 0 ? 1.0 / best_cosine : 0.0;
    if (!o.query_similarity) return;
    if (o.relevance == "global") {
      global_ = EntityRelevance(g, qs.Cosines());
      computed_ = g.num_entities();
      mentions_read_ = men_.num_entries() / 2;
      fn_ = [this](uint32_t e) { return global_[e]; };
      return;
    }
    memo_.Prepare(g.num_entities());
    fn_ = [this](uint32_t e) { return Local(e); };
  }
  QueryRelevance(const QueryRelevance&) = delete;
  QueryRelevance& operator=(const QueryRelevance&) = delete;

  const RelevanceFn& fn() const { return fn_; }
  size_t computed() const { return computed_; }
  size_t mentions_read() const { return mentions_read_; }

 private:
  static RelevanceMemo& ThreadMemo() {
    thread_local RelevanceMemo memo;
    return memo;
  }

  // clip(max cosine of e's passages / the best passage cosine, 0, 1).
  double Local(uint32_t e) {
    if (memo_.stamp[e] == memo_.gen) return memo_.value[e];
    const uint32_t node = g_.EntityNode(e);
    float best = 0.0f;
    for (uint64_t i = men_.Begin(node); i < men_.End(node); ++i) {
      const uint32_t p = men_.targets[i];
      if (p < qs_.num_passages) best = std::max(best, qs_.Cosine(p));
    }
    mentions_read_ += men_.Degree(node);
    ++computed_;
    memo_.stamp[e] = memo_.gen;
    memo_.value[e] = static_cast<float>(std::clamp(best * inv_best_, 0.0, 1.0));
    return memo_.value[e];
  }

  const KnowledgeGraph& g_;
  const QueryScores& qs_;
  const Csr& men_;
  RelevanceMemo& memo_;
  double inv_best_ = 0.0;
  std::vector<double> global_;
  RelevanceFn fn_;
  size_t computed_ = 0, mentions_read_ = 0;
};

// The walk's fixed point: every node that received mass and its score.
struct SemFlowSolution {
  std::vector<uint32_t> scored;
  std::function<double(uint32_t)> score;
  std::vector<double> power;  // power iteration's solution
  PprStats stats;
  size_t rows_built = 0;
};

// Local push over rows built once per query (ε relative to the largest
// reset entry), or power iteration.
Result<SemFlowSolution> SolveWalk(const SemFlowTransitions& walk, const SemFlowReset& reset,
                                  const SemFlowOptions& o) {
  const double damping = 1.0 - o.reset;
  SemFlowSolution sol;
  if (o.solver == "push") {
    thread_local PushSolver solver;
    PushOptions po;
    po.damping = damping;
    po.epsilon = o.epsilon * reset.max_weight;
    po.max_pushes = 5'000'000;
    // The raw reset: the solver normalises it as NormalizeReset did above.
    FLOWRAG_RETURN_IF_ERROR(solver.SolveMemoized(walk, reset.raw, po, &sol.stats));
    sol.scored = solver.touched();
    sol.score = [](uint32_t u) { return solver.Score(u); };
    sol.rows_built = solver.rows_built();
    return sol;
  }
  PowerOptions po;
  po.damping = damping;
  po.tolerance = o.tolerance;
  FLOWRAG_ASSIGN_OR_RETURN(sol.power, PowerIteration(walk, reset.normalized, po, &sol.stats));
  for (uint32_t u = 0; u < sol.power.size(); ++u) {
    if (sol.power[u] > 0) sol.scored.push_back(u);
  }
  return sol;
}

// Ranked passages, node scores and, with explain, paths and the subgraph.
void WriteOutput(const Snapshot& s, const SemFlowTransitions& walk, const SemFlowReset& reset,
                 const SemFlowSolution& sol, const SemFlowOptions& o, const RetrievalRequest& r,
                 RetrievalOutput* out) {
  std::unordered_map<uint32_t, double> reset_weight;
  if (r.explain) {
    for (const NodeWeight& w : reset.normalized) reset_weight[w.node] = w.weight;
  }
  auto reset_of = [&](uint32_t u) {
    auto it = reset_weight.find(u);
    return it == reset_weight.end() ? 0.0 : it->second;
  };
  auto score_of = [&](uint32_t u) -> double {
    return sol.power.empty() ? sol.score(u) : sol.power[u];
  };
  FillGraphOutput(s, walk, sol.scored, score_of, reset_of, 1.0 - o.reset, r.top_k, o.max_nodes, out,
                  r.explain);
}

}  // namespace

Result<RetrievalOutput> SemFlowRetriever::Retrieve(const Snapshot& s,
                                                   const RetrievalRequest& r) const {
  const auto start = SteadyClock::now();
  std::optional<SemFlowOptions> scratch;
  FLOWRAG_ASSIGN_OR_RETURN(const SemFlowOptions* options, RequestOptions(r, &scratch));
  const SemFlowOptions& o = *options;
  // With the BM25 scores: the prior and the local fact channel read them.
  FLOWRAG_ASSIGN_OR_RETURN(QueryScores qs, ScoreQuery(s, r.query, /*lexical=*/true));
  const KnowledgeGraph& g = *s.graph();
  const double score_ms = MillisSince(start);

  RetrievalOutput out;
  RetrievalDiagnostics& d = out.diagnostics;
  FactSeedOptions fo;
  fo.facts = o.facts;
  fo.seeds = o.seeds;
  fo.name_seeds = o.name_seeds;
  fo.fact_filter = o.fact_filter;
  fo.normalize_scores = o.normalize_facts;
  fo.local_passages = o.fact_passages;
  fo.search = o.fact_search;
  FLOWRAG_ASSIGN_OR_RETURN(FactSeeds fs, SeedWalkFromFacts(s, r.query, qs, fo, r.chat, &out));
  const double seed_ms = MillisSince(start) - score_ms;
  if (fs.seeds.empty()) {  // no usable fact → dense passage retrieval
    RankDenseFallback(qs, r.top_k, &out);
    d.time_ms = MillisSince(start);
    return out;
  }

  const auto t_prior = SteadyClock::now();
  FLOWRAG_ASSIGN_OR_RETURN(SemFlowReset reset, BuildReset(s, r.query, qs, fs, o, &out));
  const double prior_ms = MillisSince(t_prior);

  QueryRelevance relevance(g, qs, o);
  FLOWRAG_ASSIGN_OR_RETURN(SemFlowTransitions walk,
                           SemFlowTransitions::Make(g, {}, relevance.fn(), o.Transition()));
  const auto t_solve = SteadyClock::now();
  FLOWRAG_ASSIGN_OR_RETURN(SemFlowSolution sol, SolveWalk(walk, reset, o));
  const double solve_ms = MillisSince(t_solve);

  const auto t_output = SteadyClock::now();
  WriteOutput(s, walk, reset, sol, o, r, &out);

  const double total = reset.entity_mass + reset.passage_mass;
  d.iterations = sol.stats.iterations;
  d.residual = sol.stats.residual;
  d.nodes_touched = sol.scored.size();
  d.edges_touched = sol.stats.edges_touched;
  d.extra["score_ms"] = score_ms;
  d.extra["seed_ms"] = seed_ms;
  d.extra["prior_ms"] = prior_ms;
  d.extra["solver_ms"] = solve_ms;
  d.extra["output_ms"] = MillisSince(t_output);
  d.extra["rows_built"] = static_cast<double>(sol.rows_built);
  d.extra["relevance_computed"] = static_cast<double>(relevance.computed());
  d.extra["relevance_mentions_read"] = static_cast<double>(relevance.mentions_read());
  d.extra["entity_seeds"] = static_cast<double>(fs.seeds.size());
  d.extra["prior_passages"] = static_cast<double>(reset.normalized.size() - fs.seeds.size());
  d.extra["reset_entity_mass"] = reset.entity_mass / total;
  d.extra["reset_passage_mass"] = reset.passage_mass / total;
  d.extra["converged"] = sol.stats.converged ? 1 : 0;
  d.time_ms = MillisSince(start);
  return out;
}

}  // namespace flowrag
