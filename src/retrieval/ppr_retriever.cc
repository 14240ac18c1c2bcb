#include "retrieval/ppr_retriever.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "common/stopwatch.h"
#include "retrieval/fact_seeds.h"
#include "retrieval/seeds.h"

namespace flowrag {
namespace {

constexpr uint8_t Tag(EdgeKind k) { return static_cast<uint8_t>(k); }

bool ScoreBefore(const NodeScore& a, const NodeScore& b) {
  return a.score != b.score ? a.score > b.score : a.node < b.node;
}

}  // namespace

Status PprOptions::Override(ParamReader& r) {
  FLOWRAG_RETURN_IF_ERROR(r.Read("ppr.damping", &damping));
  FLOWRAG_RETURN_IF_ERROR(r.Read("ppr.facts", &facts));
  FLOWRAG_RETURN_IF_ERROR(r.Read("ppr.seeds", &seeds));
  FLOWRAG_RETURN_IF_ERROR(r.Read("ppr.name_seeds", &name_seeds));
  FLOWRAG_RETURN_IF_ERROR(r.Read("ppr.fact_filter", &fact_filter));
  FLOWRAG_RETURN_IF_ERROR(r.Read("ppr.passage_share", &passage_share));
  FLOWRAG_RETURN_IF_ERROR(r.Read("ppr.fact_passages", &fact_passages));
  FLOWRAG_RETURN_IF_ERROR(r.Read("ppr.unnamed_passage_share", &unnamed_passage_share));
  FLOWRAG_RETURN_IF_ERROR(r.Read("ppr.synonyms", &synonyms));
  FLOWRAG_RETURN_IF_ERROR(r.Read("ppr.solver", &solver));
  FLOWRAG_RETURN_IF_ERROR(r.Read("ppr.epsilon", &epsilon));
  FLOWRAG_RETURN_IF_ERROR(r.Read("ppr.tolerance", &tolerance));
  FLOWRAG_RETURN_IF_ERROR(r.Read("ppr.max_nodes", &max_nodes));
  FLOWRAG_RETURN_IF_ERROR(prior.Override(r, "ppr"));
  if (!(damping >= 0 && damping < 1)) {
    return Status::InvalidArgument("option ppr.damping: expected 0 <= d < 1");
  }
  if (!(passage_share >= 0 && passage_share < 1)) {
    return Status::InvalidArgument("option ppr.passage_share: expected 0 <= share < 1");
  }
  if (!(unnamed_passage_share >= 0 && unnamed_passage_share < 1)) {
    return Status::InvalidArgument("option ppr.unnamed_passage_share: expected 0 <= share < 1");
  }
  if (solver != "push" && solver != "power") {
    return Status::InvalidArgument("option ppr.solver=\"" + solver + "\": expected push or power");
  }
  if (!(epsilon > 0)) return Status::InvalidArgument("option ppr.epsilon: expected > 0");
  if (!(tolerance > 0)) return Status::InvalidArgument("option ppr.tolerance: expected > 0");
  return Status::Ok();
}

// ---------------------------------------------------------------- graph


// ---------------------------------------------------------------- output

void FillGraphOutput(const Snapshot& s, const TransitionSource& graph,
                     const std::vector<uint32_t>& scored_nodes,
                     const std::function<double(uint32_t)>& score,
                     const std::function<double(uint32_t)>& reset, double damping, size_t top_k,
                     size_t max_nodes, RetrievalOutput* out, bool explain) {
  const uint32_t num_passages = static_cast<uint32_t>(s.num_passages());
  std::vector<NodeScore> passages, nodes;
  nodes.reserve(scored_nodes.size());
  for (uint32_t u : scored_nodes) {
    const double x = score(u);
    if (!(x > 0)) continue;
    nodes.push_back({u, x});
    if (u < num_passages) passages.push_back({u, x});
  }
  auto top = [](std::vector<NodeScore>* v, size_t k) {
    k = std::min(k, v->size());
    std::partial_sort(v->begin(), v->begin() + static_cast<std::ptrdiff_t>(k), v->end(),
                      ScoreBefore);
    v->resize(k);
  };
  top(&passages, top_k);
  top(&nodes, max_nodes);
  for (const NodeScore& p : passages) out->ranked.push_back({p.node, p.score});
  out->node_scores = nodes;
  if (!explain) return;

  constexpr size_t kMaxPathNodes = 6;
  RowCache rows(graph);
  std::unordered_set<uint32_t> members;
  for (const NodeScore& n : nodes) members.insert(n.node);
  for (const NodeScore& p : passages) {
    ExplanationPath path;
    path.passage = p.node;
    path.score = p.score;
    path.nodes = PredecessorPath(rows, score, reset, damping, p.node, kMaxPathNodes);
    for (uint32_t n : path.nodes) members.insert(n);
    out->paths.push_back(std::move(path));
  }
  for (const NodeScore& sd : out->seeds) members.insert(sd.node);

  std::vector<uint32_t> sorted(members.begin(), members.end());
  std::sort(sorted.begin(), sorted.end());
  std::unordered_map<uint32_t, size_t> at;  // target → index in the merged row
  for (uint32_t u : sorted) {
    const double xu = score(u);
    std::vector<Transition> merged;
    at.clear();
    for (const Transition& t : rows.Get(u)) {
      if (!members.count(t.target)) continue;
      auto [it, inserted] = at.try_emplace(t.target, merged.size());
      if (inserted) {
        merged.push_back(t);
      } else {
        merged[it->second].prob += t.prob;
      }
    }
    std::sort(merged.begin(), merged.end(),
              [](const Transition& a, const Transition& b) { return a.target < b.target; });
    for (const Transition& t : merged) {
      out->subgraph.push_back({u, t.target, static_cast<EdgeKind>(t.tag), t.prob,
                               damping * xu * t.prob});
    }
  }
}

// ---------------------------------------------------------------- retriever

Result<PprReset> BuildPprReset(const Snapshot& s, const std::string& query, const QueryScores& qs,
                               const PprOptions& o, ChatModel* chat, RetrievalOutput* out) {
  const auto start = SteadyClock::now();
  const KnowledgeGraph& g = *s.graph();
  FactSeedOptions fo;
  fo.facts = o.facts;
  fo.seeds = o.seeds;
  fo.name_seeds = o.name_seeds;
  fo.fact_filter = o.fact_filter;
  fo.normalize_scores = true;  // HippoRAG 2 normalises fact scores
  fo.local_passages = o.fact_passages;
  PprReset reset;
  FLOWRAG_ASSIGN_OR_RETURN(reset.seeds, SeedWalkFromFacts(s, query, qs, fo, chat, out));
  out->diagnostics.extra["seeding_ms"] = MillisSince(start);
  if (reset.seeds.seeds.empty()) return reset;
  const auto t_prior = SteadyClock::now();
  const std::vector<PassageWeight> prior = PassagePrior(s, query, qs, o.prior);
  out->diagnostics.extra["prior_ms"] = MillisSince(t_prior);
  double entity_total = 0.0, prior_total = 0.0;
  for (const EntitySeed& e : reset.seeds.seeds) entity_total += e.weight;
  for (const PassageWeight& w : prior) prior_total += w.weight;
  // Entities share 1 − φ of the reset by weight, passages φ by prior (all
  // to the entities when no passage has a prior).
  const double share =
      prior_total > 0 ? (reset.seeds.named > 0 ? o.passage_share : o.unnamed_passage_share) : 0.0;
  for (const EntitySeed& e : reset.seeds.seeds) {
    reset.entries.push_back({g.EntityNode(e.entity), (1.0 - share) * e.weight / entity_total});
  }
  for (const PassageWeight& w : prior) {
    if (share > 0) reset.entries.push_back({w.passage, share * w.weight / prior_total});
  }
  reset.total = 1.0;
  return reset;
}

Result<RetrievalOutput> PprRetriever::Retrieve(const Snapshot& s, const RetrievalRequest& r) const {
  const auto start = SteadyClock::now();
  std::optional<PprOptions> scratch;
  FLOWRAG_ASSIGN_OR_RETURN(const PprOptions* options, RequestOptions(r, &scratch));
  const PprOptions& o = *options;
  FLOWRAG_ASSIGN_OR_RETURN(QueryScores qs, ScoreQuery(s, r.query, /*lexical=*/true));
  const KnowledgeGraph& g = *s.graph();

  RetrievalOutput out;
  out.diagnostics.extra["query_ms"] = MillisSince(start);
  FLOWRAG_ASSIGN_OR_RETURN(PprReset pr, BuildPprReset(s, r.query, qs, o, r.chat, &out));
  if (pr.seeds.seeds.empty()) {  // no usable fact or name → dense passage retrieval
    RankDenseFallback(qs, r.top_k, &out);
    out.diagnostics.time_ms = MillisSince(start);
    return out;
  }
  const std::vector<NodeWeight>& reset = pr.entries;
  const double total = pr.total;
  std::unordered_map<uint32_t, double> reset_weight;  // nodes are distinct
  reset_weight.reserve(reset.size());
  for (const NodeWeight& w : reset) reset_weight.emplace(w.node, w.weight);
  auto reset_of = [&](uint32_t u) -> double {
    auto it = reset_weight.find(u);
    return it == reset_weight.end() ? 0.0 : it->second / total;
  };
  for (const NodeWeight& w : reset) {
    if (g.Kind(w.node) == NodeKind::kEntity) out.seeds.push_back({w.node, w.weight / total});
  }

  const WalkGraph& walk = g.walk();
  const WalkTransitions rows(walk, /*skip_synonyms=*/!o.synonyms);
  PprStats st;
  const auto t_solve = SteadyClock::now();
  if (o.solver == "push") {
    thread_local PushSolver solver;
    PushOptions po;
    po.damping = o.damping;
    po.epsilon = o.epsilon;
    if (o.synonyms) {
      FLOWRAG_RETURN_IF_ERROR(solver.Solve(walk, reset, po, &st));
    } else {
      FLOWRAG_RETURN_IF_ERROR(solver.Solve(rows, reset, po, &st));
    }
    FillGraphOutput(s, rows, solver.touched(), [&](uint32_t u) { return solver.Score(u); },
                    reset_of, o.damping, r.top_k, o.max_nodes, &out, r.explain);
  } else {
    PowerOptions po;
    po.damping = o.damping;
    po.tolerance = o.tolerance;
    FLOWRAG_ASSIGN_OR_RETURN(std::vector<double> x, PowerIteration(rows, reset, po, &st));
    std::vector<uint32_t> nodes;
    for (uint32_t u = 0; u < x.size(); ++u) {
      if (x[u] > 0) nodes.push_back(u);
    }
    FillGraphOutput(s, rows, nodes, [&](uint32_t u) { return x[u]; }, reset_of, o.damping,
                    r.top_k, o.max_nodes, &out, r.explain);
  }
  out.diagnostics.extra["output_ms"] = MillisSince(t_solve) - st.time_ms;
  out.diagnostics.iterations = st.iterations;
  out.diagnostics.residual = st.residual;
  out.diagnostics.nodes_touched = st.nodes_touched;
  out.diagnostics.edges_touched = st.edges_touched;
  out.diagnostics.extra["solver_ms"] = st.time_ms;
  out.diagnostics.extra["entity_seeds"] = static_cast<double>(pr.seeds.seeds.size());
  out.diagnostics.extra["converged"] = st.converged ? 1 : 0;
  out.diagnostics.time_ms = MillisSince(start);
  return out;
}

}  // namespace flowrag
