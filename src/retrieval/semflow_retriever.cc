#include "retrieval/semflow_retriever.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "common/stopwatch.h"
#include "retrieval/fact_seeds.h"
#include "retrieval/ppr_retriever.h"

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

}  // namespace

Status SemFlowOptions::Override(ParamReader& r) {
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
    return Status::InvalidArgument("option semflow.passage_share / unnamed_passage_share: expected 0 <= share < 1");
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

SemFlowTransitions::SemFlowTransitions(const KnowledgeGraph& graph,
                                       std::span<const float> abstractness, RelevanceFn relevance,
                                       const SemFlowOptions& options)
    : g_(graph),
      abstractness_(abstractness),
      relevance_(std::move(relevance)),
      o_(options),
      linear_(options.weights == "linear"),
      one_share_(options.entity_share == "one"),
      walk_weights_(options.passage_edges == "walk" && graph.walk().num_nodes() > 0) {}

SemFlowTransitions::SemFlowTransitions(const KnowledgeGraph& graph,
                                       std::span<const float> abstractness,
                                       std::span<const double> relevance,
                                       const SemFlowOptions& options)
    : g_(graph),
      abstractness_(abstractness),
      o_(options),
      linear_(options.weights == "linear"),
      one_share_(options.entity_share == "one"),
      walk_weights_(options.passage_edges == "walk" && graph.walk().num_nodes() > 0) {
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
  // Passage–entity edges: weight 1 each (the paper), or the snapshot's
  // walk-graph weight (graph/walk_graph.h: the title link, literal and hub
  // rules every walk reads). Held in `prob` until normalised below.
  double passage_weight = 0.0;
  if (walk_weights_) {
    const WalkGraph& w = g_.walk();
    for (uint64_t i = w.Begin(u); i < w.End(u); ++i) {
      if (w.Kind(i) != EdgeKind::kMentions) continue;
      out->push_back({w.Target(i), Tag(EdgeKind::kMentions), w.Weight(i)});
      passage_weight += w.Weight(i);
    }
  } else {
    const Csr& m = g_.Edges(EdgeKind::kMentions);
    for (uint64_t i = m.Begin(u); i < m.End(u); ++i) {
      if (!out->empty() && out->back().target == m.targets[i]) continue;
      out->push_back({m.targets[i], Tag(EdgeKind::kMentions), 1.0});
      passage_weight += 1.0;
    }
  }
  const size_t num_passage_edges = out->size();
  if (u < g_.num_passages()) {  // passage → its entities
    for (Transition& t : *out) t.prob /= passage_weight;
    return;
  }
  // Distinct entity neighbours: RELATED_TO, then (with synonyms) SYNONYM
  // neighbours that are not related too. Both lists are sorted by target.
  const Csr& rel = g_.Edges(EdgeKind::kRelatedTo);
  for (uint64_t i = rel.Begin(u); i < rel.End(u); ++i) {
    const uint32_t v = rel.targets[i];
    if (v == u || (out->size() > num_passage_edges && out->back().target == v)) continue;
    out->push_back({v, Tag(EdgeKind::kRelatedTo), 0.0});
  }
  if (o_.synonyms) {
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
  const size_t num_entity_edges = out->size() - num_passage_edges;
  if (out->empty()) return;  // isolated: dangling
  if (num_entity_edges == 0) {
    for (Transition& t : *out) t.prob /= passage_weight;
    return;
  }

  const uint32_t P = static_cast<uint32_t>(g_.num_passages());
  const double du = AbstractnessOf(u - P);
  // Transition score s(u, v) (Eq. 3) and direction of each entity edge.
  double max_s[2] = {-1e300, -1e300};
  size_t count[2] = {0, 0};
  thread_local std::vector<uint8_t> group;
  group.assign(num_entity_edges, 0);
  for (size_t j = 0; j < num_entity_edges; ++j) {
    Transition& t = (*out)[num_passage_edges + j];
    const double dv = AbstractnessOf(t.target - P);
    double s = 0.0;
    if (o_.query_similarity && relevance_) s += relevance_(t.target - P);
    if (o_.abstractness_penalty) s -= o_.lambda * std::abs(dv - du);
    const uint8_t gi = (o_.direction && dv > du) ? 1 : 0;  // 0: down (or all), 1: up
    group[j] = gi;
    t.prob = s;  // holds s until the weights below
    max_s[gi] = std::max(max_s[gi], s);
    ++count[gi];
  }
  // Group budgets within the entity share, and the self-loop's.
  double budget[2] = {1.0, 0.0}, self = 0.0;
  if (o_.direction && count[1] > 0) {
    if (count[0] > 0) {
      budget[0] = o_.down_share;
      budget[1] = 1.0 - o_.down_share;
    } else if (o_.self_loop) {
      budget[0] = 0.0;
      budget[1] = 1.0 - o_.down_share;
      self = o_.down_share;
    } else {
      budget[0] = 0.0;
      budget[1] = 1.0;
    }
  }
  double z[2] = {0.0, 0.0};
  for (size_t j = 0; j < num_entity_edges; ++j) {
    Transition& t = (*out)[num_passage_edges + j];
    t.prob = linear_ ? std::max(t.prob, o_.floor) : std::exp(t.prob - max_s[group[j]]);
    z[group[j]] += t.prob;
  }
  // The entity edges together weigh as much as an average passage edge
  // (1 with unit passage edges, the authors' code), or one each (`edges`).
  const double mean_passage =
      num_passage_edges > 0 ? passage_weight / static_cast<double>(num_passage_edges) : 1.0;
  const double entity_weight =
      (one_share_ ? 1.0 : static_cast<double>(num_entity_edges)) * mean_passage;
  const double total = passage_weight + entity_weight;
  for (size_t j = 0; j < num_passage_edges; ++j) (*out)[j].prob /= total;
  const double share = entity_weight / total;
  for (size_t j = 0; j < num_entity_edges; ++j) {
    Transition& t = (*out)[num_passage_edges + j];
    t.prob = share * budget[group[j]] * t.prob / z[group[j]];
  }
  if (self > 0) out->push_back({u, Tag(EdgeKind::kRelatedTo), share * self});
}

// ---------------------------------------------------------------- retriever

namespace {

// Per-thread workspace of one query: node- and entity-indexed arrays reset
// in O(1) by generation stamps, so a query costs what it touches.
struct Workspace {
  uint32_t gen = 0;
  std::vector<uint32_t> node_stamp;  // p, rho, queued valid for this query
  std::vector<double> p, rho;
  std::vector<uint8_t> queued;
  std::vector<uint32_t> row_stamp, row_begin, row_end;  // memoised rows
  std::vector<uint32_t> rel_stamp;                      // memoised Rel(v|q)
  std::vector<float> rel;
  std::vector<Transition> rows, scratch;
  std::vector<uint32_t> touched, queue;

  void Prepare(size_t nodes, size_t entities) {
    if (++gen == 0) {
      std::fill(node_stamp.begin(), node_stamp.end(), 0);
      std::fill(row_stamp.begin(), row_stamp.end(), 0);
      std::fill(rel_stamp.begin(), rel_stamp.end(), 0);
      gen = 1;
    }
    if (node_stamp.size() < nodes) {
      node_stamp.resize(nodes, 0);
      p.resize(nodes);
      rho.resize(nodes);
      queued.resize(nodes);
      row_stamp.resize(nodes, 0);
      row_begin.resize(nodes);
      row_end.resize(nodes);
    }
    if (rel_stamp.size() < entities) {
      rel_stamp.resize(entities, 0);
      rel.resize(entities);
    }
    rows.clear();
    touched.clear();
    queue.clear();
  }
};

Workspace& ThreadWorkspace() {
  thread_local Workspace ws;
  return ws;
}

struct PushResult {
  size_t pushes = 0, edge_visits = 0;
  double residual = 0.0, scale = 1.0;
  bool converged = true;
};

}  // namespace

Result<RetrievalOutput> SemFlowRetriever::Retrieve(const Snapshot& s,
                                                   const RetrievalRequest& r) const {
  const auto start = SteadyClock::now();
  ParamReader reader(r.params);
  SemFlowOptions o;
  FLOWRAG_RETURN_IF_ERROR(o.Override(reader));
  FLOWRAG_RETURN_IF_ERROR(reader.CheckAllUsed(Name()));
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
  FLOWRAG_ASSIGN_OR_RETURN(FactSeeds fs, SeedWalkFromFacts(s, r.query, qs, fo, r.chat, &out));
  const double seed_ms = MillisSince(start) - score_ms;
  if (fs.seeds.empty()) {  // no usable fact → dense passage retrieval
    RankDenseFallback(qs, r.top_k, &out);
    d.time_ms = MillisSince(start);
    return out;
  }

  // Reset: entity seeds, then the passage prior on its support; normalised.
  const auto t_prior = SteadyClock::now();
  const std::vector<PassageWeight> prior = PassagePrior(s, r.query, qs, o.prior);
  std::vector<NodeWeight> reset;
  double entity_mass = 0.0, passage_mass = 0.0, prior_total = 0.0;
  for (const PassageWeight& w : prior) prior_total += w.weight;
  // share mode: the passages hold a fixed share φ of the reset, split by
  // prior (the baseline's mechanism, ppr_retriever.h); weight mode: each
  // passage weighs prior × passage_prior beside the seeds' raw weights.
  double entity_scale = 1.0, passage_scale = o.passage_prior;
  if (o.prior_mode == "share" && prior_total > 0) {
    double seed_total = 0.0;
    for (const EntitySeed& e : fs.seeds) seed_total += e.weight;
    const double phi = fs.named > 0 ? o.passage_share : o.unnamed_passage_share;
    entity_scale = seed_total > 0 ? (1.0 - phi) / seed_total : 0.0;
    passage_scale = phi / prior_total;
  }
  for (const EntitySeed& e : fs.seeds) {
    reset.push_back({g.EntityNode(e.entity), e.weight * entity_scale});
    entity_mass += e.weight * entity_scale;
  }
  for (const PassageWeight& pw : prior) {
    const double w = pw.weight * passage_scale;
    if (w > 0) {
      reset.push_back({pw.passage, w});
      passage_mass += w;
    }
  }
  const double total = entity_mass + passage_mass;
  FLOWRAG_ASSIGN_OR_RETURN(reset, NormalizeReset(reset, g.num_passages() + g.num_entities()));
  double max_reset = 0.0;
  for (const NodeWeight& w : reset) max_reset = std::max(max_reset, w.weight);
  for (const EntitySeed& e : fs.seeds) {
    out.seeds.push_back({g.EntityNode(e.entity), e.weight * entity_scale / total});
  }
  const double prior_ms = MillisSince(t_prior);

  // Rel(v|q): on demand from the passage cosines (memoised), or for every entity.
  Workspace& ws = ThreadWorkspace();
  ws.Prepare(g.num_passages() + g.num_entities(), g.num_entities());
  const uint32_t gen = ws.gen;
  std::vector<double> global_relevance;
  const double best_cosine = qs.BestCosine();
  const double inv_best = best_cosine > 0 ? 1.0 / best_cosine : 0.0;
  size_t relevance_computed = 0, relevance_mentions = 0;
  const Csr& men = g.Edges(EdgeKind::kMentions);
  RelevanceFn relevance;
  if (o.query_similarity) {
    if (o.relevance == "global") {
      global_relevance = EntityRelevance(g, qs.Cosines());
      relevance_computed = g.num_entities();
      relevance_mentions = men.num_entries() / 2;
      relevance = [&global_relevance](uint32_t e) { return global_relevance[e]; };
    } else {
      relevance = [&](uint32_t e) -> double {
        if (ws.rel_stamp[e] == gen) return ws.rel[e];
        const uint32_t node = g.EntityNode(e);
        float best = 0.0f;
        for (uint64_t i = men.Begin(node); i < men.End(node); ++i) {
          const uint32_t p = men.targets[i];
          if (p < qs.num_passages) best = std::max(best, qs.Cosine(p));
        }
        relevance_mentions += men.Degree(node);
        ++relevance_computed;
        ws.rel_stamp[e] = gen;
        ws.rel[e] = static_cast<float>(std::clamp(best * inv_best, 0.0, 1.0));
        return ws.rel[e];
      };
    }
  }
  SemFlowTransitions walk(g, {}, relevance, o);
  const double damping = 1.0 - o.reset;

  // ---- solve
  const auto t_solve = SteadyClock::now();
  size_t rows_built = 0;
  PushResult pr;
  std::vector<double> x;  // power iteration's solution
  std::vector<uint32_t> scored;
  const bool push = o.solver == "push";
  if (push) {
    // Local push (retrieval/ppr.h PushSolver's algorithm) over rows built
    // once per query: FIFO while ρ_u ≥ ε·max(1, row length).
    auto build_row = [&](uint32_t u) {
      if (ws.row_stamp[u] == gen) return;
      walk.Row(u, &ws.scratch);
      ws.row_begin[u] = static_cast<uint32_t>(ws.rows.size());
      ws.rows.insert(ws.rows.end(), ws.scratch.begin(), ws.scratch.end());
      ws.row_end[u] = static_cast<uint32_t>(ws.rows.size());
      ws.row_stamp[u] = gen;
      ++rows_built;
    };
    const double eps = o.epsilon * max_reset;
    auto threshold = [&](uint32_t v) {
      const size_t deg = ws.row_stamp[v] == gen ? ws.row_end[v] - ws.row_begin[v] : walk.Degree(v);
      return eps * static_cast<double>(std::max<size_t>(1, deg));
    };
    auto touch = [&](uint32_t v) {
      if (ws.node_stamp[v] != gen) {
        ws.node_stamp[v] = gen;
        ws.p[v] = ws.rho[v] = 0.0;
        ws.queued[v] = 0;
        ws.touched.push_back(v);
      }
    };
    for (const NodeWeight& w : reset) {
      touch(w.node);
      ws.rho[w.node] = w.weight;
      if (w.weight >= threshold(w.node)) {
        ws.queued[w.node] = 1;
        ws.queue.push_back(w.node);
      }
    }
    constexpr size_t kMaxPushes = 5'000'000;
    for (size_t head = 0; head < ws.queue.size(); ++head) {
      if (pr.pushes >= kMaxPushes) {
        pr.converged = false;
        break;
      }
      const uint32_t u = ws.queue[head];
      ws.queued[u] = 0;
      const double ru = ws.rho[u];
      ws.rho[u] = 0.0;
      ws.p[u] += (1.0 - damping) * ru;
      ++pr.pushes;
      build_row(u);
      const double out_mass = damping * ru;
      for (uint32_t i = ws.row_begin[u]; i < ws.row_end[u]; ++i) {
        const Transition& t = ws.rows[i];
        const uint32_t v = t.target;
        touch(v);
        ws.rho[v] += out_mass * t.prob;
        if (!ws.queued[v] && ws.rho[v] >= threshold(v)) {
          ws.queued[v] = 1;
          ws.queue.push_back(v);
        }
      }
      pr.edge_visits += ws.row_end[u] - ws.row_begin[u];
    }
    double settled = 0.0;
    for (uint32_t v : ws.touched) {
      pr.residual += ws.rho[v];
      settled += ws.p[v];
    }
    pr.scale = settled + pr.residual > 0 ? 1.0 / (settled + pr.residual) : 1.0;
    scored = ws.touched;
  } else {
    PowerOptions po;
    po.damping = damping;
    po.tolerance = o.tolerance;
    PprStats st;
    FLOWRAG_ASSIGN_OR_RETURN(x, PowerIteration(walk, reset, po, &st));
    pr.pushes = st.iterations;
    pr.edge_visits = st.edges_touched;
    pr.residual = st.residual;
    pr.converged = st.converged;
    for (uint32_t u = 0; u < x.size(); ++u) {
      if (x[u] > 0) scored.push_back(u);
    }
  }
  const double solve_ms = MillisSince(t_solve);
  auto score_of = [&](uint32_t u) -> double {
    if (!push) return x[u];
    return ws.node_stamp[u] == gen ? ws.p[u] * pr.scale : 0.0;
  };

  // ---- output
  const auto t_output = SteadyClock::now();
  {
    std::unordered_map<uint32_t, double> reset_weight;
    if (r.explain) {
      for (const NodeWeight& w : reset) reset_weight[w.node] = w.weight;
    }
    auto reset_of = [&](uint32_t u) {
      auto it = reset_weight.find(u);
      return it == reset_weight.end() ? 0.0 : it->second;
    };
    FillGraphOutput(s, walk, scored, score_of, reset_of, damping, r.top_k, o.max_nodes, &out,
                    r.explain);
  }

  d.iterations = pr.pushes;
  d.residual = pr.residual;
  d.nodes_touched = scored.size();
  d.edges_touched = pr.edge_visits;
  d.extra["score_ms"] = score_ms;
  d.extra["seed_ms"] = seed_ms;
  d.extra["prior_ms"] = prior_ms;
  d.extra["solver_ms"] = solve_ms;
  d.extra["output_ms"] = MillisSince(t_output);
  d.extra["rows_built"] = static_cast<double>(rows_built);
  d.extra["relevance_computed"] = static_cast<double>(relevance_computed);
  d.extra["relevance_mentions_read"] = static_cast<double>(relevance_mentions);
  d.extra["entity_seeds"] = static_cast<double>(fs.seeds.size());
  d.extra["prior_passages"] = static_cast<double>(reset.size() - fs.seeds.size());
  d.extra["reset_entity_mass"] = entity_mass / total;
  d.extra["reset_passage_mass"] = passage_mass / total;
  d.extra["converged"] = pr.converged ? 1 : 0;
  d.time_ms = MillisSince(start);
  return out;
}

}  // namespace flowrag
