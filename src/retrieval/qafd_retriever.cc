#include "retrieval/qafd_retriever.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "common/stopwatch.h"
#include "retrieval/keywords.h"
#include "retrieval/qafd_graph.h"
#include "retrieval/query_index.h"
#include "retrieval/query_llm.h"
#include "retrieval/seeding.h"
#include "vector/flat_index.h"

namespace flowrag {
namespace {

Status ReadEnum(ParamReader& r, std::string_view key, std::initializer_list<std::string_view> names,
                int* out) {
  std::string v;
  FLOWRAG_RETURN_IF_ERROR(r.Read(key, &v));
  if (v.empty()) return Status::Ok();
  int i = 0;
  std::string known;
  for (std::string_view n : names) {
    if (v == n) {
      *out = i;
      return Status::Ok();
    }
    known += (known.empty() ? "" : " | ") + std::string(n);
    ++i;
  }
  return Status::InvalidArgument("option " + std::string(key) + "=\"" + v + "\": expected " +
                                 known);
}

template <typename E>
Status ReadEnumAs(ParamReader& r, std::string_view key,
                  std::initializer_list<std::string_view> names, E* out) {
  int v = static_cast<int>(*out);
  FLOWRAG_RETURN_IF_ERROR(ReadEnum(r, key, names, &v));
  *out = static_cast<E>(v);
  return Status::Ok();
}

// Sources, facts mode: the fact-seeded reset vector the ppr retriever
// walks from (seeding.h BuildFactReset: fact seeds, named entities, the
// best passages by the prior).
Result<std::vector<FlowSource>> FactSources(const Snapshot& s, const QafdRun& run,
                                            const QueryScores& qs, const QafdOptions& o,
                                            ChatModel* chat, RetrievalOutput* out,
                                            std::vector<NodeScore>* seeds) {
  FLOWRAG_ASSIGN_OR_RETURN(FactReset reset, BuildFactReset(s, run.text, qs, o.Reset(), chat, out));
  std::vector<FlowSource> sources;
  if (reset.seeds.seeds.empty()) return sources;
  const KnowledgeGraph& g = *s.graph();
  // Entity sources get weight^seed_power, rescaled to the entities' share:
  // 1 keeps the fact weights, 0 gives every entity the same mass (the
  // paper's Δ_v = α·T_v); passages keep their share of the prior.
  double entity_mass = 0.0, powered = 0.0;
  for (const NodeWeight& w : reset.entries) {
    if (g.Kind(w.node) != NodeKind::kEntity) continue;
    entity_mass += w.weight;
    powered += std::pow(w.weight, o.seed_power);
  }
  for (const NodeWeight& w : reset.entries) {
    const bool entity = g.Kind(w.node) == NodeKind::kEntity;
    const double weight =
        entity ? entity_mass * std::pow(w.weight, o.seed_power) / powered : w.weight;
    sources.push_back({w.node, weight});
    seeds->push_back({w.node, weight});
  }
  return sources;
}

// Sources, names mode (Algorithm 1): keywords → N most similar entity names.
Result<std::vector<FlowSource>> NameSources(const Snapshot& s, const QafdRun& run,
                                            const QafdOptions& o, ChatModel* chat,
                                            RetrievalOutput* out, std::vector<NodeScore>* seeds) {
  const KnowledgeGraph& g = *s.graph();
  KeywordOptions ko;
  ko.max_keywords = o.max_keywords;
  QueryKeywords qk =
      KeywordsForQuery(run.text, &GraphQueryIndex::For(s)->names(), ko, chat, &out->diagnostics);
  if (qk.keywords.empty()) qk.keywords.push_back(run.text);
  FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix kw, EmbedTexts(s, qk.keywords));
  FLOWRAG_ASSIGN_OR_RETURN(
      std::vector<Seed> found,
      SelectSeeds(g, kw,
                  SeedSelection{o.keyword_seeds, o.seed_ratio, o.seed_specificity,
                                qk.matched_entities, s.num_passages()}));
  out->keywords.insert(out->keywords.end(), qk.keywords.begin(), qk.keywords.end());
  std::vector<FlowSource> sources;
  const double top = found.empty() ? 1.0 : std::max(1e-9, static_cast<double>(found[0].score));
  for (const Seed& sd : found) {
    sources.push_back({g.EntityNode(sd.entity), o.seed_weighting ? sd.score / top : 1.0});
    seeds->push_back({g.EntityNode(sd.entity), sd.score});
  }
  return sources;
}

FlowDiffusionOptions DiffusionOptions(const QafdOptions& o) {
  FlowDiffusionOptions fo;
  fo.alpha = o.alpha;
  fo.capacity = o.capacity;
  fo.epsilon = o.epsilon;
  fo.max_pushes = o.max_pushes;
  fo.source_mass = o.seeds == QafdSeeds::kFacts ? SourceMass::kShared : SourceMass::kPerCapacity;
  fo.relative_epsilon = o.seeds == QafdSeeds::kFacts;
  return fo;
}

// Sources and diffusion of one run; false when nothing seeded it.
Result<bool> DiffuseRun(const Snapshot& s, const QafdOptions& o, ChatModel* chat, QafdRun* run,
                        RetrievalOutput* out) {
  const auto start = SteadyClock::now();
  FLOWRAG_ASSIGN_OR_RETURN(run->scores, ScoreQuery(s, run->text, /*lexical=*/true));
  const QueryScores& qs = run->scores;
  out->diagnostics.extra["score_ms"] += MillisSince(start);
  std::vector<FlowSource> sources;
  if (o.seeds == QafdSeeds::kFacts) {
    FLOWRAG_ASSIGN_OR_RETURN(sources, FactSources(s, *run, qs, o, chat, out, &run->seeds));
  } else {
    FLOWRAG_ASSIGN_OR_RETURN(sources, NameSources(s, *run, o, chat, out, &run->seeds));
  }
  if (sources.empty()) return false;
  // Passage vectors for the walk's cosines below hnsw_threshold passages
  // (an exact flat index); above, the approximate index's listed scores.
  const auto* flat = dynamic_cast<const FlatIndex*>(s.dense());
  run->graph = std::make_unique<QueryAwareWalk>(
      *s.graph(), GraphQueryIndex::For(s)->entity_vectors(),
      flat != nullptr && flat->exact() ? flat : nullptr, qs.query.row(0), &qs, o);
  FlowDiffusionOptions fo = DiffusionOptions(o);
  const auto t_flow = SteadyClock::now();
  FLOWRAG_ASSIGN_OR_RETURN(run->flow, SolveFlowDiffusion(*run->graph, sources, fo));
  out->diagnostics.extra["diffusion_ms"] += MillisSince(t_flow);
  return true;
}

QafdNodes UnionOfRuns(const std::vector<QafdRun>& runs) {
  QafdNodes nodes;
  for (uint32_t k = 0; k < runs.size(); ++k) {
    const FlowDiffusionResult& f = runs[k].flow;
    for (uint32_t i = 0; i < f.nodes.size(); ++i) {
      QafdNode& st = nodes[f.nodes[i]];
      double wsum = 0.0;
      for (uint64_t j = f.adj_offsets[i]; j < f.adj_offsets[i + 1]; ++j) wsum += f.adj_weights[j];
      if (f.x[i] > st.x || (f.x[i] == st.x && f.mass[i] > st.mass)) {
        st = {f.x[i], f.mass[i], f.x[i] * wsum, k, i};
      }
    }
  }
  return nodes;
}

// Passages by x (their own node) or by Σ x of the entities they mention.
std::vector<RankedPassage> RankPassages(const KnowledgeGraph& g, const QafdNodes& nodes,
                                        PassageScoring scoring, size_t top_k) {
  std::unordered_map<uint32_t, std::pair<double, double>> score;  // passage → (x, mass)
  const Csr& m = g.Edges(EdgeKind::kMentions);
  for (const auto& [v, st] : nodes) {
    const NodeKind kind = g.Kind(v);
    if (scoring == PassageScoring::kNode && kind == NodeKind::kPassage) {
      score[v] = {st.x, st.mass};
    } else if (scoring == PassageScoring::kThroughput && kind == NodeKind::kPassage) {
      score[v] = {st.through, st.mass};
    } else if (scoring == PassageScoring::kEntities && kind == NodeKind::kEntity) {
      for (uint64_t i = m.Begin(v); i < m.End(v); ++i) {
        auto& acc = score[m.targets[i]];
        acc.first += st.x;
        acc.second += st.mass;
      }
    }
  }
  struct Item {
    uint32_t passage;
    double x, mass;
  };
  std::vector<Item> items;
  items.reserve(score.size());
  // Passages that pushed rank by their score; those that received mass
  // without filling their sink follow, by that mass.
  for (const auto& [p, xm] : score) {
    if (xm.first > 0 || xm.second > 0) items.push_back({p, xm.first, xm.second});
  }
  const size_t k = std::min(top_k, items.size());
  std::partial_sort(items.begin(), items.begin() + static_cast<ptrdiff_t>(k), items.end(),
                    [](const Item& a, const Item& b) {
                      if (a.x != b.x) return a.x > b.x;
                      if (a.mass != b.mass) return a.mass > b.mass;
                      return a.passage < b.passage;
                    });
  std::vector<RankedPassage> ranked;
  for (size_t i = 0; i < k; ++i) ranked.push_back({items[i].passage, items[i].x});
  return ranked;
}

// Fewer than top_k passages reached: the rest in dense order, at score 0.
void FillFromDense(const QueryScores& qs, size_t top_k, RetrievalOutput* out) {
  RetrievalOutput dense;
  RankDenseFallback(qs, top_k, &dense);
  std::unordered_set<uint32_t> have;
  for (const RankedPassage& p : out->ranked) have.insert(p.passage);
  size_t filled = 0;
  for (const RankedPassage& p : dense.ranked) {
    if (out->ranked.size() >= top_k) break;
    if (!have.insert(p.passage).second) continue;
    out->ranked.push_back({p.passage, 0.0});
    ++filled;
  }
  out->diagnostics.extra["dense_fill"] = static_cast<double>(filled);
}

std::vector<NodeScore> NodesByX(const QafdNodes& nodes, size_t max_nodes) {
  std::vector<NodeScore> out;
  out.reserve(nodes.size());
  for (const auto& [v, st] : nodes) {
    if (st.x > 0) out.push_back({v, st.x});
  }
  const size_t k = std::min(max_nodes, out.size());
  std::partial_sort(out.begin(), out.begin() + static_cast<ptrdiff_t>(k), out.end(),
                    [](const NodeScore& a, const NodeScore& b) {
                      return a.score != b.score ? a.score > b.score : a.node < b.node;
                    });
  out.resize(k);
  return out;
}

void AddRunDiagnostics(const QafdRun& run, RetrievalOutput* out) {
  RetrievalDiagnostics& d = out->diagnostics;
  d.iterations += run.flow.pushes;
  d.residual += run.flow.residual;
  d.edges_touched += run.flow.edge_visits;
  d.extra["weights_computed"] += static_cast<double>(run.flow.edges_touched);
  d.extra["injected"] += run.flow.injected;
  d.extra["scaled_sources"] += static_cast<double>(run.flow.scaled_sources);
  const bool converged = d.extra.count("converged") == 0 || d.extra["converged"] > 0;
  d.extra["converged"] = converged && run.flow.converged;
}

}  // namespace

double QueryAwareWeight(EdgeWeighting kind, double s_uv, double s_uq, double s_vq, double a,
                        double b) {
  switch (kind) {
    case EdgeWeighting::kMean:
      return (s_uv + s_uq + s_vq) / 3.0;
    case EdgeWeighting::kProduct:
      return s_uv * s_uq * s_vq;
    case EdgeWeighting::kHybrid:
      return s_uv * (a + b * (s_uq + s_vq));
  }
  return s_uv;
}

double SimilarityFromCosine(SimilarityKind kind, double cosine, double rbf_gamma) {
  cosine = std::clamp(cosine, -1.0, 1.0);
  switch (kind) {
    case SimilarityKind::kRbf:
      return std::exp(-2.0 * rbf_gamma * (1.0 - cosine));
    case SimilarityKind::kRelu:
      return std::max(0.0, cosine);
    case SimilarityKind::kCosine:
      break;
  }
  return 0.5 * (1.0 + cosine);
}

FactResetOptions QafdOptions::Reset() const { return FactResetOptionsOf(*this, fact_seeds); }

Status QafdOptions::Override(ParamReader& r) {
  FLOWRAG_RETURN_IF_ERROR(ReadEnumAs(r, "qafd.seeds", {"facts", "names"}, &seeds));
  FLOWRAG_RETURN_IF_ERROR(ReadFactSearch(r, &fact_search));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.facts", &facts));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.fact_seeds", &fact_seeds));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.name_seeds", &name_seeds));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.fact_filter", &fact_filter));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.passage_share", &passage_share));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.unnamed_passage_share", &unnamed_passage_share));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.fact_passages", &fact_passages));
  FLOWRAG_RETURN_IF_ERROR(prior.Override(r, "qafd"));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.keyword_seeds", &keyword_seeds));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.seed_ratio", &seed_ratio));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.seed_specificity", &seed_specificity));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.seed_weighting", &seed_weighting));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.seed_power", &seed_power));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.max_keywords", &max_keywords));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.alpha", &alpha));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.a", &a));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.b", &b));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.rbf_gamma", &rbf_gamma));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.epsilon", &epsilon));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.max_pushes", &max_pushes));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.support", &support));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.subqueries", &subqueries));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.synonyms", &synonyms));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.llm", &llm));
  FLOWRAG_RETURN_IF_ERROR(ReadEnumAs(r, "qafd.weights", {"mean", "product", "hybrid"}, &weights));
  FLOWRAG_RETURN_IF_ERROR(ReadEnumAs(r, "qafd.similarity", {"cosine", "rbf", "relu"}, &similarity));
  FLOWRAG_RETURN_IF_ERROR(ReadEnumAs(r, "qafd.structure", {"graph", "similarity"}, &structure));
  FLOWRAG_RETURN_IF_ERROR(ReadEnumAs(r, "qafd.capacity", {"uniform", "degree"}, &capacity));
  FLOWRAG_RETURN_IF_ERROR(
      ReadEnumAs(r, "qafd.passage_scoring", {"node", "entities", "throughput"}, &passage_scoring));
  if (keyword_seeds == 0)
    return Status::InvalidArgument("option qafd.keyword_seeds: expected >= 1");
  if (fact_seeds == 0) return Status::InvalidArgument("option qafd.fact_seeds: expected >= 1");
  if (!(alpha > 0)) return Status::InvalidArgument("option qafd.alpha: expected > 0");
  if (a < 0 || b < 0) return Status::InvalidArgument("option qafd.a / qafd.b: expected >= 0");
  if (!(epsilon > 0)) return Status::InvalidArgument("option qafd.epsilon: expected > 0");
  if (support < 0) return Status::InvalidArgument("option qafd.support: expected >= 0");
  if (!(passage_share >= 0 && passage_share < 1)) {
    return Status::InvalidArgument("option qafd.passage_share: expected 0 <= share < 1");
  }
  if (!(seed_ratio >= 0 && seed_ratio <= 1)) {
    return Status::InvalidArgument("option qafd.seed_ratio: expected 0 <= r <= 1");
  }
  return Status::Ok();
}

Result<RetrievalOutput> QafdRetriever::Retrieve(const Snapshot& s,
                                                const RetrievalRequest& r) const {
  const auto start = SteadyClock::now();
  std::optional<QafdOptions> scratch;
  FLOWRAG_ASSIGN_OR_RETURN(const QafdOptions* options, RequestOptions(r, &scratch));
  const QafdOptions& o = *options;
  const KnowledgeGraph* g = s.graph();
  if (g == nullptr || g->num_entities() == 0) {
    return Status::FailedPrecondition(
        "qafd: the store has no knowledge graph (run `flowrag index` with extraction first)");
  }
  RetrievalOutput out;
  ChatModel* chat = o.llm ? r.chat : nullptr;
  std::vector<QafdRun> runs;
  if (o.subqueries) {
    for (std::string& q : SubQueriesFor(r.query, chat, &out.diagnostics)) {
      runs.push_back({std::move(q), {}, {}, nullptr, {}});
    }
  }
  if (runs.empty()) runs.push_back({r.query, {}, {}, nullptr, {}});

  std::vector<QafdRun> seeded;
  for (QafdRun& run : runs) {
    FLOWRAG_ASSIGN_OR_RETURN(bool any, DiffuseRun(s, o, chat, &run, &out));
    if (!any) continue;
    AddRunDiagnostics(run, &out);
    out.seeds.insert(out.seeds.end(), run.seeds.begin(), run.seeds.end());
    seeded.push_back(std::move(run));
  }
  if (seeded.empty()) {  // nothing matched a fact or a name: the dense ranking
    FLOWRAG_ASSIGN_OR_RETURN(QueryScores qs, ScoreQuery(s, r.query));
    RankDenseFallback(qs, r.top_k, &out);
    out.diagnostics.time_ms = MillisSince(start);
    return out;
  }
  if (seeded.size() > 1) {
    for (const QafdRun& run : seeded) out.keywords.push_back("subquery: " + run.text);
  }
  const QafdNodes nodes = UnionOfRuns(seeded);
  out.diagnostics.nodes_touched = nodes.size();
  out.diagnostics.extra["subqueries"] = static_cast<double>(seeded.size());
  out.diagnostics.extra["seeds"] = static_cast<double>(out.seeds.size());
  out.ranked = RankPassages(*g, nodes, o.passage_scoring, r.top_k);
  if (out.ranked.size() < r.top_k) FillFromDense(seeded.front().scores, r.top_k, &out);
  out.node_scores = NodesByX(nodes, 150);
  out.diagnostics.candidates_scored = nodes.size();
  if (r.explain) ExplainQafd(seeded, nodes, o, &out);
  out.diagnostics.time_ms = MillisSince(start);
  return out;
}

}  // namespace flowrag
