#include "retrieval/qafd_retriever.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <unordered_map>

#include "retrieval/keywords.h"
#include "retrieval/query_llm.h"
#include "retrieval/seeds.h"
#include "vector/flat_index.h"

namespace flowrag {
namespace {

constexpr double kStabiliser = 1e-10;  // QAFD-RAG A2.2.1

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// The snapshot graph as a DiffusionGraph with query-aware weights.
class QueryGraph final : public DiffusionGraph {
 public:
  QueryGraph(const Snapshot& s, const GraphQueryIndex& qi, const float* query,
             const QafdOptions& o)
      : g_(*s.graph()), entity_vectors_(qi.entity_vectors()), query_(query), o_(o) {
    passages_ = dynamic_cast<const FlatIndex*>(s.dense());
    if (passages_ != nullptr && (query_ == nullptr || passages_->Dimension() != dim())) {
      passages_ = nullptr;
    }
    kinds_.push_back(&g_.Edges(EdgeKind::kRelatedTo));
    if (o.synonyms) kinds_.push_back(&g_.Edges(EdgeKind::kSynonym));
    if (o.passage_scoring == PassageScoring::kNode) kinds_.push_back(&g_.Edges(EdgeKind::kMentions));
    qsim_.assign(g_.num_nodes(), std::nanf(""));
    scratch_.assign(dim(), 0.0f);
  }

  size_t num_nodes() const override { return g_.num_nodes(); }

  size_t Degree(uint32_t u) const override {
    size_t d = 0;
    for (const Csr* c : kinds_) d += c->Degree(u);
    return d;
  }

  void Neighbors(uint32_t u, std::vector<uint32_t>* out) const override {
    for (const Csr* c : kinds_) {
      for (uint64_t i = c->Begin(u); i < c->End(u); ++i) out->push_back(c->targets[i]);
    }
  }

  void WeightedNeighbors(uint32_t u, std::vector<uint32_t>* nodes,
                         std::vector<double>* weights) const override {
    const double s_uq = QuerySim(u);
    const bool u_entity = g_.Kind(u) == NodeKind::kEntity;
    const float* u_dense = nullptr;
    const SparseRows* ev = entity_vectors_;
    if (u_entity && ev != nullptr) {
      const uint32_t e = g_.LocalIndex(u);
      for (uint64_t k = ev->offsets[e]; k < ev->offsets[e + 1]; ++k) scratch_[ev->dims[k]] = ev->values[k];
      u_dense = scratch_.data();
    } else if (!u_entity && passages_ != nullptr) {
      u_dense = passages_->Row(u);
    }
    for (const Csr* c : kinds_) {
      for (uint64_t i = c->Begin(u); i < c->End(u); ++i) {
        const uint32_t v = c->targets[i];
        double cos_uv = 0.0;
        if (u_dense != nullptr && ev != nullptr && g_.Kind(v) == NodeKind::kEntity) {
          cos_uv = ev->Dot(g_.LocalIndex(v), u_dense);
        } else if (u_entity && ev != nullptr && passages_ != nullptr) {
          cos_uv = ev->Dot(g_.LocalIndex(u), passages_->Row(v));
        }
        const double s_uv = SimilarityFromCosine(o_.similarity, cos_uv, o_.rbf_gamma);
        nodes->push_back(v);
        weights->push_back(QueryAwareWeight(o_.weights, s_uv, s_uq, QuerySim(v), o_.a, o_.b) +
                           kStabiliser);
      }
    }
    if (u_entity && ev != nullptr) {
      const uint32_t e = g_.LocalIndex(u);
      for (uint64_t k = ev->offsets[e]; k < ev->offsets[e + 1]; ++k) scratch_[ev->dims[k]] = 0.0f;
    }
  }

  // Similarity in [0,1] of node v with the query (cached).
  double QuerySim(uint32_t v) const {
    float& c = qsim_[v];
    if (std::isnan(c)) {
      double cos = 0.0;
      if (query_ != nullptr) {
        if (g_.Kind(v) == NodeKind::kEntity) {
          if (entity_vectors_ != nullptr) cos = entity_vectors_->Dot(g_.LocalIndex(v), query_);
        } else if (g_.Kind(v) == NodeKind::kPassage && passages_ != nullptr) {
          cos = DotProduct(passages_->Row(v), query_, dim());
        }
      }
      c = static_cast<float>(SimilarityFromCosine(o_.similarity, cos, o_.rbf_gamma));
    }
    return c;
  }

  EdgeKind KindBetween(uint32_t u, uint32_t v) const {
    if (g_.Kind(u) != NodeKind::kEntity || g_.Kind(v) != NodeKind::kEntity) return EdgeKind::kMentions;
    const Csr& syn = g_.Edges(EdgeKind::kSynonym);
    if (o_.synonyms && std::binary_search(syn.targets.begin() + static_cast<ptrdiff_t>(syn.Begin(u)),
                                          syn.targets.begin() + static_cast<ptrdiff_t>(syn.End(u)), v)) {
      const Csr& rel = g_.Edges(EdgeKind::kRelatedTo);
      if (!std::binary_search(rel.targets.begin() + static_cast<ptrdiff_t>(rel.Begin(u)),
                              rel.targets.begin() + static_cast<ptrdiff_t>(rel.End(u)), v)) {
        return EdgeKind::kSynonym;
      }
    }
    return EdgeKind::kRelatedTo;
  }

 private:
  size_t dim() const {
    return entity_vectors_ != nullptr ? entity_vectors_->cols
                                      : (passages_ != nullptr ? passages_->Dimension() : 0);
  }

  const KnowledgeGraph& g_;
  const SparseRows* entity_vectors_;
  const FlatIndex* passages_ = nullptr;
  const float* query_;
  const QafdOptions& o_;
  std::vector<const Csr*> kinds_;
  mutable std::vector<float> qsim_;
  mutable std::vector<float> scratch_;
};

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
  return Status::InvalidArgument("option " + std::string(key) + "=\"" + v + "\": expected " + known);
}

struct SubqueryRun {
  std::string text;
  std::vector<std::string> keywords;
  std::vector<uint32_t> named;  // entities the sub-query names
  std::vector<Seed> seeds;
  FlowDiffusionResult flow;
};

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
  if (kind == SimilarityKind::kRbf) return std::exp(-2.0 * rbf_gamma * (1.0 - cosine));
  return 0.5 * (1.0 + cosine);
}

Status QafdOptions::Override(ParamReader& r) {
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.seeds", &seeds));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.alpha", &alpha));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.a", &a));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.b", &b));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.rbf_gamma", &rbf_gamma));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.epsilon", &epsilon));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.max_pushes", &max_pushes));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.support", &support));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.subqueries", &subqueries));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.synonyms", &synonyms));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.seed_weighting", &seed_weighting));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.max_keywords", &max_keywords));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.seed_ratio", &seed_ratio));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.llm", &llm));
  FLOWRAG_RETURN_IF_ERROR(r.Read("qafd.seed_specificity", &seed_specificity));
  int w = static_cast<int>(weights), s = static_cast<int>(similarity),
      c = static_cast<int>(capacity), p = static_cast<int>(passage_scoring);
  FLOWRAG_RETURN_IF_ERROR(ReadEnum(r, "qafd.weights", {"mean", "product", "hybrid"}, &w));
  FLOWRAG_RETURN_IF_ERROR(ReadEnum(r, "qafd.similarity", {"cosine", "rbf"}, &s));
  FLOWRAG_RETURN_IF_ERROR(ReadEnum(r, "qafd.capacity", {"uniform", "degree"}, &c));
  FLOWRAG_RETURN_IF_ERROR(ReadEnum(r, "qafd.passage_scoring", {"node", "entities"}, &p));
  weights = static_cast<EdgeWeighting>(w);
  similarity = static_cast<SimilarityKind>(s);
  capacity = static_cast<CapacityKind>(c);
  passage_scoring = static_cast<PassageScoring>(p);
  if (seeds == 0) return Status::InvalidArgument("option qafd.seeds: expected >= 1");
  if (!(alpha > 0)) return Status::InvalidArgument("option qafd.alpha: expected > 0");
  if (a < 0 || b < 0) return Status::InvalidArgument("option qafd.a / qafd.b: expected >= 0");
  if (!(epsilon > 0)) return Status::InvalidArgument("option qafd.epsilon: expected > 0");
  if (support < 0) return Status::InvalidArgument("option qafd.support: expected >= 0");
  if (!(seed_ratio >= 0 && seed_ratio <= 1)) {
    return Status::InvalidArgument("option qafd.seed_ratio: expected 0 <= r <= 1");
  }
  if (!(rbf_gamma > 0)) return Status::InvalidArgument("option qafd.rbf_gamma: expected > 0");
  return Status::Ok();
}

Result<RetrievalOutput> QafdRetriever::Retrieve(const Snapshot& s,
                                                const RetrievalRequest& r) const {
  const auto start = std::chrono::steady_clock::now();
  ParamReader reader(r.params);
  QafdOptions o;
  FLOWRAG_RETURN_IF_ERROR(o.Override(reader));
  FLOWRAG_RETURN_IF_ERROR(reader.CheckAllUsed(Name()));
  const KnowledgeGraph* g = s.graph();
  if (g == nullptr || g->num_entities() == 0) {
    return Status::FailedPrecondition(
        "qafd: the store has no knowledge graph (run `flowrag index` with extraction first)");
  }
  std::shared_ptr<const GraphQueryIndex> qi = GraphQueryIndex::For(s);

  // ---- sub-queries, keywords, embeddings (one Embed call for everything)
  RetrievalOutput out;
  ChatModel* chat = o.llm ? r.chat : nullptr;
  std::vector<SubqueryRun> runs;
  if (o.subqueries) {
    for (std::string& q : SubQueriesFor(r.query, chat, &out.diagnostics)) {
      runs.push_back({std::move(q), {}, {}, {}, {}});
    }
  } else {
    runs.push_back({r.query, {}, {}, {}, {}});
  }
  KeywordOptions ko;
  ko.max_keywords = o.max_keywords;
  std::vector<std::string> texts;
  for (SubqueryRun& run : runs) {
    QueryKeywords qk = KeywordsForQuery(run.text, &qi->names(), ko, chat, &out.diagnostics);
    run.keywords = std::move(qk.keywords);
    run.named = std::move(qk.matched_entities);
    if (run.keywords.empty()) run.keywords.push_back(run.text);
    texts.push_back(run.text);
    texts.insert(texts.end(), run.keywords.begin(), run.keywords.end());
  }
  FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix vectors, EmbedTexts(s, texts));
  const double keywords_ms = MillisSince(start);
  double seeds_ms = 0, diffusion_ms = 0;

  FlowDiffusionOptions fo;
  fo.alpha = o.alpha;
  fo.capacity = o.capacity;
  fo.epsilon = o.epsilon;
  fo.max_pushes = o.max_pushes;

  size_t row = 0;
  std::vector<QueryGraph*> graphs;
  std::vector<std::unique_ptr<QueryGraph>> owned;
  for (SubqueryRun& run : runs) {
    const float* qv = vectors.row(row);
    FloatMatrix kw;
    kw.rows = run.keywords.size();
    kw.cols = vectors.cols;
    kw.data.assign(vectors.row(row + 1), vectors.row(row + 1) + kw.rows * kw.cols);
    row += 1 + run.keywords.size();
    auto t_seeds = std::chrono::steady_clock::now();
    FLOWRAG_ASSIGN_OR_RETURN(run.seeds, SelectSeeds(*g, kw, SeedSelection{o.seeds, o.seed_ratio, o.seed_specificity, run.named}));
    seeds_ms += MillisSince(t_seeds);
    std::vector<FlowSource> sources;
    const double top = run.seeds.empty() ? 1.0 : std::max(1e-9, static_cast<double>(run.seeds[0].score));
    for (const Seed& sd : run.seeds) {
      sources.push_back({g->EntityNode(sd.entity), o.seed_weighting ? sd.score / top : 1.0});
    }
    owned.push_back(std::make_unique<QueryGraph>(s, *qi, qv, o));
    auto t_flow = std::chrono::steady_clock::now();
    run.flow = SolveFlowDiffusion(*owned.back(), sources, fo);
    diffusion_ms += MillisSince(t_flow);
    for (const Seed& sd : run.seeds) out.seeds.push_back({g->EntityNode(sd.entity), sd.score});
    out.keywords.insert(out.keywords.end(), run.keywords.begin(), run.keywords.end());
    out.diagnostics.iterations += run.flow.pushes;
    out.diagnostics.residual += run.flow.residual;
    out.diagnostics.edges_touched += run.flow.edges_touched;
    out.diagnostics.extra["injected"] += run.flow.injected;
    out.diagnostics.extra["scaled_sources"] += static_cast<double>(run.flow.scaled_sources);
    out.diagnostics.extra["converged"] = (out.diagnostics.extra.count("converged") == 0 ||
                                          out.diagnostics.extra["converged"] > 0) &&
                                         run.flow.converged;
  }
  if (runs.size() > 1) {
    for (const SubqueryRun& run : runs) out.keywords.push_back("subquery: " + run.text);
  }
  out.diagnostics.extra["subqueries"] = static_cast<double>(runs.size());
  out.diagnostics.extra["seeds"] = static_cast<double>(out.seeds.size());
  out.diagnostics.extra["query_index_build_s"] = qi->build_seconds();
  out.diagnostics.extra["keywords_ms"] = keywords_ms;
  out.diagnostics.extra["seeds_ms"] = seeds_ms;
  out.diagnostics.extra["diffusion_ms"] = diffusion_ms;

  // ---- union over sub-queries (Eq. 10): x(v) = max_k x^(k)(v)
  struct NodeState {
    double x = 0, mass = 0;
    uint32_t run = 0, entry = 0;
  };
  std::unordered_map<uint32_t, NodeState> nodes;
  size_t total_entries = 0;
  for (const SubqueryRun& run : runs) total_entries += run.flow.nodes.size();
  nodes.reserve(total_entries);
  for (uint32_t k = 0; k < runs.size(); ++k) {
    const FlowDiffusionResult& f = runs[k].flow;
    for (uint32_t i = 0; i < f.nodes.size(); ++i) {
      NodeState& st = nodes[f.nodes[i]];
      if (f.x[i] > st.x || (f.x[i] == st.x && f.mass[i] > st.mass)) st = {f.x[i], f.mass[i], k, i};
    }
  }
  out.diagnostics.nodes_touched = nodes.size();
  {
    struct Item {
      double x, mass;
      uint32_t node;
    };
    std::vector<Item> items;
    items.reserve(nodes.size());
    for (const auto& [v, st] : nodes) items.push_back({st.x, st.mass, v});
    std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
      if (a.x != b.x) return a.x > b.x;
      return a.mass != b.mass ? a.mass > b.mass : a.node < b.node;
    });
    out.node_scores.reserve(items.size());
    for (const Item& it : items) out.node_scores.push_back({it.node, it.x});
  }

  // ---- passages
  struct PassageScore {
    uint32_t passage;
    double x, mass;
    uint32_t via;  // node the path ends at before the passage
  };
  std::vector<PassageScore> ps;
  if (o.passage_scoring == PassageScoring::kNode) {
    for (const auto& [v, st] : nodes) {
      if (g->Kind(v) == NodeKind::kPassage) ps.push_back({v, st.x, st.mass, v});
    }
  } else {
    std::unordered_map<uint32_t, PassageScore> acc;
    const Csr& m = g->Edges(EdgeKind::kMentions);
    for (const auto& [v, st] : nodes) {
      if (g->Kind(v) != NodeKind::kEntity) continue;
      for (uint64_t i = m.Begin(v); i < m.End(v); ++i) {
        auto [it, inserted] = acc.try_emplace(m.targets[i], PassageScore{m.targets[i], 0, 0, v});
        it->second.x += st.x;
        it->second.mass += st.mass;
        if (st.x > nodes[it->second.via].x) it->second.via = v;
      }
    }
    for (const auto& [p, sc] : acc) ps.push_back(sc);
  }
  out.diagnostics.candidates_scored = ps.size();
  auto better = [](const PassageScore& a, const PassageScore& b) {
    if (a.x != b.x) return a.x > b.x;
    if (a.mass != b.mass) return a.mass > b.mass;
    return a.passage < b.passage;
  };
  const size_t k = std::min(r.top_k, ps.size());
  std::partial_sort(ps.begin(), ps.begin() + static_cast<ptrdiff_t>(k), ps.end(), better);
  ps.resize(k);
  for (const PassageScore& p : ps) out.ranked.push_back({p.passage, p.x});

  // ---- explanation paths: follow the largest inflow back to a seed
  for (const PassageScore& p : ps) {
    ExplanationPath path;
    path.passage = p.passage;
    path.score = p.x;
    std::vector<uint32_t> rev;
    if (p.via != p.passage) rev.push_back(p.passage);
    uint32_t v = p.via;
    const uint32_t run = nodes[v].run;
    const FlowDiffusionResult& f = runs[run].flow;
    for (size_t guard = 0; guard < 64; ++guard) {
      if (std::find(rev.begin(), rev.end(), v) != rev.end()) break;
      rev.push_back(v);
      auto it = nodes.find(v);
      // The walk uses this run's entries; `nodes` holds the best run's, so
      // look the entry up in the run when they differ.
      ptrdiff_t e = (it != nodes.end() && it->second.run == run) ? static_cast<ptrdiff_t>(it->second.entry)
                                                                 : f.Find(v);
      if (e < 0 || f.source[e] > 0 || f.parent[e] == UINT32_MAX) break;
      v = f.parent[e];
    }
    path.nodes.assign(rev.rbegin(), rev.rend());
    out.paths.push_back(std::move(path));
  }

  // ---- subgraph: edges with flow f_uv = w_uv (x_u − x_v) out of the support
  std::unordered_map<uint64_t, TouchedEdge> edges;
  for (uint32_t k2 = 0; k2 < runs.size(); ++k2) {
    const FlowDiffusionResult& f = runs[k2].flow;
    std::unordered_map<uint32_t, double> xs;
    if (runs.size() > 1) {
      for (uint32_t i = 0; i < f.nodes.size(); ++i) xs.emplace(f.nodes[i], f.x[i]);
    }
    for (uint32_t i = 0; i < f.nodes.size(); ++i) {
      if (f.x[i] <= o.support) continue;
      const uint32_t u = f.nodes[i];
      for (uint64_t j = f.adj_offsets[i]; j < f.adj_offsets[i + 1]; ++j) {
        const uint32_t v = f.adj_nodes[j];
        double xv = 0.0;
        if (runs.size() > 1) {
          auto it = xs.find(v);
          if (it != xs.end()) xv = it->second;
        } else {
          auto it = nodes.find(v);
          if (it != nodes.end()) xv = it->second.x;
        }
        if (xv >= f.x[i]) continue;
        const double flow = f.adj_weights[j] * (f.x[i] - xv);
        const uint64_t key = (static_cast<uint64_t>(u) << 32) | v;
        auto [it, inserted] = edges.try_emplace(key, TouchedEdge{u, v, EdgeKind::kMentions, 0, 0});
        if (inserted) it->second.kind = owned[k2]->KindBetween(u, v);
        it->second.weight += f.adj_weights[j];
        it->second.flow += flow;
      }
    }
  }
  for (const auto& [key, e] : edges) out.subgraph.push_back(e);
  std::sort(out.subgraph.begin(), out.subgraph.end(), [](const TouchedEdge& a, const TouchedEdge& b) {
    if (a.flow != b.flow) return a.flow > b.flow;
    return a.from != b.from ? a.from < b.from : a.to < b.to;
  });
  out.diagnostics.extra["subgraph_edges"] = static_cast<double>(out.subgraph.size());
  if (out.subgraph.size() > o.max_subgraph_edges) out.subgraph.resize(o.max_subgraph_edges);
  out.diagnostics.time_ms = MillisSince(start);
  return out;
}

}  // namespace flowrag
