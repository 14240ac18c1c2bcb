#include "retrieval/ppr_retriever.h"

#include <optional>
#include <unordered_map>
#include <vector>

#include "common/stopwatch.h"
#include "retrieval/walk_ranking.h"

namespace flowrag {

Status PprOptions::Override(ParamReader& r) {
  FLOWRAG_RETURN_IF_ERROR(ReadFactSearch(r, &fact_search));
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

FactResetOptions PprOptions::Reset() const { return FactResetOptionsOf(*this, seeds); }

namespace {

// PPR from `reset` over the walk graph (without SYNONYM edges unless
// o.synonyms), by push or power iteration, then the ranking.
Result<PprStats> SolveAndRank(const Snapshot& s, const FactReset& reset, const PprOptions& o,
                              const RetrievalRequest& r, RetrievalOutput* out) {
  const WalkGraph& walk = s.graph()->walk();
  const WalkTransitions rows(walk, /*skip_synonyms=*/!o.synonyms);
  std::unordered_map<uint32_t, double> reset_weight;  // nodes are distinct
  reset_weight.reserve(reset.entries.size());
  for (const NodeWeight& w : reset.entries) reset_weight.emplace(w.node, w.weight);
  auto reset_of = [&](uint32_t u) -> double {
    auto it = reset_weight.find(u);
    return it == reset_weight.end() ? 0.0 : it->second / reset.total;
  };
  PprStats st;
  if (o.solver == "push") {
    thread_local PushSolver solver;
    PushOptions po;
    po.damping = o.damping;
    po.epsilon = o.epsilon;
    if (o.synonyms) {
      FLOWRAG_RETURN_IF_ERROR(solver.Solve(walk, reset.entries, po, &st));
    } else {
      FLOWRAG_RETURN_IF_ERROR(solver.Solve(rows, reset.entries, po, &st));
    }
    FillGraphOutput(
        s, rows, solver.touched(), [&](uint32_t u) { return solver.Score(u); }, reset_of, o.damping,
        r.top_k, o.max_nodes, out, r.explain);
    return st;
  }
  PowerOptions po;
  po.damping = o.damping;
  po.tolerance = o.tolerance;
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<double> x, PowerIteration(rows, reset.entries, po, &st));
  std::vector<uint32_t> nodes;
  for (uint32_t u = 0; u < x.size(); ++u) {
    if (x[u] > 0) nodes.push_back(u);
  }
  FillGraphOutput(
      s, rows, nodes, [&](uint32_t u) { return x[u]; }, reset_of, o.damping, r.top_k, o.max_nodes,
      out, r.explain);
  return st;
}

}  // namespace

Result<RetrievalOutput> PprRetriever::Retrieve(const Snapshot& s, const RetrievalRequest& r) const {
  const auto start = SteadyClock::now();
  std::optional<PprOptions> scratch;
  FLOWRAG_ASSIGN_OR_RETURN(const PprOptions* options, RequestOptions(r, &scratch));
  const PprOptions& o = *options;
  FLOWRAG_ASSIGN_OR_RETURN(QueryScores qs, ScoreQuery(s, r.query, /*lexical=*/true));
  const KnowledgeGraph& g = *s.graph();

  RetrievalOutput out;
  out.diagnostics.extra["query_ms"] = MillisSince(start);
  FLOWRAG_ASSIGN_OR_RETURN(FactReset reset,
                           BuildFactReset(s, r.query, qs, o.Reset(), r.chat, &out));
  if (reset.seeds.seeds.empty()) {  // no usable fact or name → dense passage retrieval
    RankDenseFallback(qs, r.top_k, &out);
    out.diagnostics.time_ms = MillisSince(start);
    return out;
  }
  for (const NodeWeight& w : reset.entries) {
    if (g.Kind(w.node) == NodeKind::kEntity) out.seeds.push_back({w.node, w.weight / reset.total});
  }
  const auto t_solve = SteadyClock::now();
  FLOWRAG_ASSIGN_OR_RETURN(PprStats st, SolveAndRank(s, reset, o, r, &out));
  out.diagnostics.extra["output_ms"] = MillisSince(t_solve) - st.time_ms;
  out.diagnostics.iterations = st.iterations;
  out.diagnostics.residual = st.residual;
  out.diagnostics.nodes_touched = st.nodes_touched;
  out.diagnostics.edges_touched = st.edges_touched;
  out.diagnostics.extra["solver_ms"] = st.time_ms;
  out.diagnostics.extra["entity_seeds"] = static_cast<double>(reset.seeds.seeds.size());
  out.diagnostics.extra["converged"] = st.converged ? 1 : 0;
  out.diagnostics.time_ms = MillisSince(start);
  return out;
}

}  // namespace flowrag
