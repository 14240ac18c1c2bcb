#include "retrieval/sa_retriever.h"

#include <algorithm>
#include <optional>
#include <cmath>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "common/stopwatch.h"
#include "common/text.h"
#include "graph_algo/spreading_activation.h"
#include "retrieval/fact_seeds.h"
#include "retrieval/keywords.h"
#include "retrieval/seeds.h"

namespace flowrag {
namespace {

constexpr uint32_t kNone = 0xffffffffu;
// BM25 scores read for the similarity: the best this many passages; a
// passage below them counts 0 on the lexical side (its score is a small
// fraction of the best's). Sorting every matching passage cost a third of
// the query on 2wiki.
constexpr size_t kLexicalDepth = 300;

// Per-thread scratch sized to the snapshot, reset in O(1) by generation
// stamps, so a query allocates nothing proportional to the graph.
struct Scratch {
  uint32_t gen = 0;
  std::vector<uint32_t> entity_stamp, entity_local;  // per entity
  std::vector<uint32_t> relation_stamp;              // per relation text
  std::vector<float> relation_weight;
  std::vector<uint32_t> passage_stamp;  // per passage
  std::vector<float> passage_activation;
  std::vector<uint32_t> passage_entity;  // local entity with the highest activation

  void Prepare(size_t entities, size_t relations, size_t passages) {
    if (++gen == 0) {  // wrapped: clear every stamp once
      std::fill(entity_stamp.begin(), entity_stamp.end(), 0);
      std::fill(relation_stamp.begin(), relation_stamp.end(), 0);
      std::fill(passage_stamp.begin(), passage_stamp.end(), 0);
      gen = 1;
    }
    if (entity_stamp.size() < entities) {
      entity_stamp.resize(entities, 0);
      entity_local.resize(entities, 0);
    }
    if (relation_stamp.size() < relations) {
      relation_stamp.resize(relations, 0);
      relation_weight.resize(relations, 0.0f);
    }
    if (passage_stamp.size() < passages) {
      passage_stamp.resize(passages, 0);
      passage_activation.resize(passages, 0.0f);
      passage_entity.resize(passages, 0);
    }
  }
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

bool Better(const RankedPassage& a, const RankedPassage& b) {
  return a.score != b.score ? a.score > b.score : a.passage < b.passage;
}

// The query's entity graph read on demand: local ids in discovery order
// (seeds first), arcs = RELATED_TO entries (one per fact) whose rescaled
// relation weight w' is positive.
class EntityArcs final : public SaArcSource {
 public:
  EntityArcs(const KnowledgeGraph& g, Scratch& sc, std::vector<uint32_t>& nodes,
             std::function<float(uint32_t)> weight_of, size_t fan_out)
      : g_(g),
        sc_(sc),
        nodes_(nodes),
        weight_of_(std::move(weight_of)),
        fan_out_(fan_out) {}
  size_t num_nodes() const override { return nodes_.size(); }
  void Arcs(uint32_t u, bool may_discover, std::vector<SaArc>* out) override {
    const Csr& rel = g_.Edges(EdgeKind::kRelatedTo);
    const uint32_t node = g_.EntityNode(nodes_[u]);
    // Fan-out constraint: a node linked by more facts than fan_out spreads
    // fan_out / degree of what it would.
    float scale = 1.0f;
    const size_t degree = rel.Degree(node);
    if (fan_out_ > 0 && degree > fan_out_) {
      scale *= static_cast<float>(fan_out_) / static_cast<float>(degree);
    }
    for (uint64_t j = rel.Begin(node); j < rel.End(node); ++j) {
      ++entries_read_;
      const uint32_t fact = rel.attrs[j];
      const float w = weight_of_(g_.FactRelationId(fact)) * scale;
      if (w <= 0.0f) continue;
      const uint32_t e = g_.LocalIndex(rel.targets[j]);
      uint32_t local;
      if (sc_.entity_stamp[e] == sc_.gen) {
        local = sc_.entity_local[e];
      } else {
        if (!may_discover) continue;
        sc_.entity_stamp[e] = sc_.gen;
        local = sc_.entity_local[e] = static_cast<uint32_t>(nodes_.size());
        nodes_.push_back(e);
      }
      if (local == u) continue;
      out->push_back({local, w, fact});
    }
  }
  size_t entries_read() const { return entries_read_; }

 private:
  const KnowledgeGraph& g_;
  Scratch& sc_;
  std::vector<uint32_t>& nodes_;
  std::function<float(uint32_t)> weight_of_;
  size_t fan_out_;
  size_t entries_read_ = 0;
};

}  // namespace

Status SaOptions::Override(ParamReader& r) {
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.k", &k));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.hops", &hops));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.c", &c));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.tau_a", &tau_a));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.tau_d", &tau_d));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.tau_r", &tau_r));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.fire", &fire));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.beta", &beta));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.mention_weight", &mention_weight));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.relation_query", &relation_query));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.fill_depth", &fill_depth));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.per_entity", &per_entity));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.fan_out", &fan_out));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.max_passages", &max_passages));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.max_relations", &max_relations));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.max_entities", &max_entities));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.max_nodes", &max_nodes));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.dense_fill", &dense_fill));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.scale", &scale));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.name_seeds", &name_seeds));
  if (scale != "auto" && scale != "absolute" && scale != "relative") {
    return Status::InvalidArgument("option sa.scale=\"" + scale +
                                   "\": expected auto, absolute or relative");
  }
  if (relation_query != "query" && relation_query != "unnamed") {
    return Status::InvalidArgument("option sa.relation_query=\"" + relation_query +
                                   "\": expected query or unnamed");
  }
  if (k == 0) return Status::InvalidArgument("option sa.k: expected >= 1");
  if (!(c >= 0.0 && c < 1.0)) return Status::InvalidArgument("option sa.c: expected 0 <= c < 1");
  if (!(tau_a >= 0.0 && tau_a < 1.0)) {
    return Status::InvalidArgument("option sa.tau_a: expected 0 <= tau_a < 1");
  }
  if (!(tau_d >= -1.0 && tau_d <= 1.0)) {
    return Status::InvalidArgument("option sa.tau_d: expected -1..1");
  }
  if (!(tau_r >= 0.0 && tau_r <= 1.0)) {
    return Status::InvalidArgument("option sa.tau_r: expected 0..1");
  }
  if (!(fire >= 0.0 && fire <= 1.0)) {
    return Status::InvalidArgument("option sa.fire: expected 0..1");
  }
  if (!(mention_weight >= 0.0 && mention_weight <= 1.0)) {
    return Status::InvalidArgument("option sa.mention_weight: expected 0..1");
  }
  if (!(beta >= 0.0)) return Status::InvalidArgument("option sa.beta: expected >= 0");
  if (max_entities == 0) return Status::InvalidArgument("option sa.max_entities: expected >= 1");
  return Status::Ok();
}

Result<RetrievalOutput> SaRetriever::Retrieve(const Snapshot& s,
                                              const RetrievalRequest& r) const {
  const auto start = SteadyClock::now();
  std::optional<SaOptions> scratch;
  FLOWRAG_ASSIGN_OR_RETURN(const SaOptions* options, RequestOptions(r, &scratch));
  const SaOptions& opt = *options;

  const KnowledgeGraph* gp = s.graph();
  if (gp == nullptr || gp->num_entities() == 0) {
    return Status::FailedPrecondition(
        "sa retrieval: the store has no knowledge graph (run `flowrag index` with extraction)");
  }
  const KnowledgeGraph& g = *gp;
  if (s.dense() == nullptr || s.embedder() == nullptr) {
    return Status::FailedPrecondition(
        "sa retrieval: the store has no passage embeddings for the configured embedder "
        "(run `flowrag index` first)");
  }
  // Seeds come from entity descriptions; a graph without them (an imported
  // OpenIE graph) seeds from the entity names instead.
  const bool by_names = g.description_index() == nullptr || g.num_descriptions() == 0;
  const VectorIndex* seed_index = by_names ? g.entity_index() : g.description_index();
  if (seed_index == nullptr) {
    return Status::FailedPrecondition(
        "sa retrieval: the knowledge graph has no entity description or name vectors");
  }
  // The query's cosine with every passage (fact_seeds.h ScoreQuery, shared
  // with the walks): the candidates' similarity and the fill read it.
  FLOWRAG_ASSIGN_OR_RETURN(QueryScores qs, ScoreQuery(s, r.query));
  if (qs.query.cols != seed_index->Dimension()) {
    return Status::FailedPrecondition("sa retrieval: query embedding has " +
                                      std::to_string(qs.query.cols) +
                                      " dimensions, the seed index has " +
                                      std::to_string(seed_index->Dimension()));
  }
  const float* qv = qs.query.row(0);

  RetrievalOutput out;
  RetrievalDiagnostics& diag = out.diagnostics;
  const size_t num_passages = s.num_passages();
  Scratch& sc = ThreadScratch();
  sc.Prepare(g.num_entities(), g.num_relations(), num_passages);
  const uint32_t gen = sc.gen;

  // ---- 1. seeds: entities the query names, then top-k descriptions → their entities (§5.4)
  VectorSearchParams dp;
  dp.k = opt.k;
  VectorSearchStats dstats;
  std::vector<uint32_t> nodes;  // local → entity index; seeds first
  auto add_node = [&](uint32_t e) {
    if (sc.entity_stamp[e] == gen) return;
    sc.entity_stamp[e] = gen;
    sc.entity_local[e] = static_cast<uint32_t>(nodes.size());
    nodes.push_back(e);
  };
  if (opt.name_seeds) {
    KeywordOptions ko;
    ko.spans = ko.phrases = ko.content_words = false;
    for (uint32_t e :
         ExtractKeywords(r.query, &GraphQueryIndex::For(s)->names(), ko).matched_entities) {
      add_node(e);
    }
  }
  const size_t named_seeds = nodes.size();
  // The query relations are scored against: without the names of the
  // entities it names (sa.relation_query=unnamed). Those entities are the
  // seeds already; what is left says which links to follow ("the director
  // of film X" -> "director of film"), and a link text that repeats the
  // seed's name does not win for that alone.
  std::vector<float> relation_query;
  const float* rv = qv;
  if (opt.relation_query == "unnamed" && named_seeds > 0) {
    std::string rest = r.query, lower = ToLowerAscii(r.query);
    for (size_t i = 0; i < named_seeds; ++i) {
      const std::string name = ToLowerAscii(g.EntityName(nodes[i]));
      if (name.empty()) continue;
      for (size_t at = lower.find(name); at != std::string::npos; at = lower.find(name, at)) {
        rest.replace(at, name.size(), std::string(name.size(), ' '));
        lower.replace(at, name.size(), std::string(name.size(), ' '));
      }
    }
    FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix rm,
                             s.embedder()->Embed(std::span<const std::string>(&rest, 1)));
    relation_query.assign(rm.row(0), rm.row(0) + rm.cols);
    rv = relation_query.data();
  }
  for (const VectorHit& h : seed_index->Search(qv, dp, &dstats)) {
    add_node(by_names ? h.id : g.DescriptionEntity(h.id));
  }
  const size_t num_seeds = nodes.size();
  std::vector<uint32_t> seeds_local(num_seeds);
  for (uint32_t i = 0; i < num_seeds; ++i) seeds_local[i] = i;

  const double seed_ms = MillisSince(start);
  // ---- 2. link weights: rescaled relation cosines (§5.5), computed on demand
  const Csr& rel = g.Edges(EdgeKind::kRelatedTo);
  const float c = static_cast<float>(opt.c);
  const bool relative =
      opt.scale == "relative" || (opt.scale == "auto" && s.embedder()->IsLocal());
  // Relative scale: cosines divided by the best relation cosine among the
  // seeds' own links (capped at 1), so the thresholds read as fractions of
  // the best evidence instead of absolute neural-embedding cosines.
  float link_norm = 1.0f;
  size_t norm_entries = 0;
  if (relative) {
    float best = 0.0f;
    for (size_t i = 0; i < num_seeds; ++i) {
      const uint32_t node = g.EntityNode(nodes[i]);
      for (uint64_t j = rel.Begin(node); j < rel.End(node); ++j) {
        best = std::max(best, g.RelationDot(g.FactRelationId(rel.attrs[j]), rv));
      }
      norm_entries += rel.Degree(node);
    }
    if (best > 0.0f) link_norm = best;
  }
  size_t relations_scored = 0;
  auto weight_of = [&](uint32_t rid) {
    if (sc.relation_stamp[rid] != gen) {
      sc.relation_stamp[rid] = gen;
      const float cosine = std::min(1.0f, g.RelationDot(rid, rv) / link_norm);
      sc.relation_weight[rid] = RescaleLinkWeight(cosine, c);
      ++relations_scored;
    }
    return sc.relation_weight[rid];
  };

  // ---- 3. spreading activation (§5.5, Algorithm 1), local
  EntityArcs source(g, sc, nodes, weight_of, opt.fan_out);
  SaLimits limits;
  limits.hops = opt.hops;
  limits.fire = static_cast<float>(opt.fire);
  limits.max_nodes = opt.max_entities;
  FLOWRAG_ASSIGN_OR_RETURN(const LocalSaRun run,
                           SpreadActivationLocal(source, seeds_local, limits, r.explain));
  const float tau_a = static_cast<float>(opt.tau_a);
  std::vector<uint32_t> activated;
  for (uint32_t u = 0; u < run.activation.size(); ++u) {
    if (run.activation[u] > tau_a) activated.push_back(u);
  }

  const double spread_ms = MillisSince(start) - seed_ms;
  // ---- 4. passages of activated entities, by activation, filtered by τd
  const Csr& men = g.Edges(EdgeKind::kMentions);
  const Csr& describes = g.Edges(EdgeKind::kDescribes);
  std::vector<uint32_t> candidates;
  size_t mention_entries = 0;
  auto give = [&](uint32_t p, uint32_t u, float a) {
    if (sc.passage_stamp[p] != gen) {
      sc.passage_stamp[p] = gen;
      sc.passage_activation[p] = a;
      sc.passage_entity[p] = u;
      candidates.push_back(p);
    } else {
      if (a > sc.passage_activation[p]) {
        sc.passage_activation[p] = a;
        sc.passage_entity[p] = u;
      }
    }
  };
  const float mention_weight = static_cast<float>(opt.mention_weight);
  for (uint32_t u : activated) {
    const uint32_t node = g.EntityNode(nodes[u]);
    const float a = run.activation[u];
    // Passages about the entity (its descriptions' passages, its title
    // mentions) carry its full activation; passages merely naming it a part.
    for (uint64_t j = describes.Begin(node); j < describes.End(node); ++j) {
      ++mention_entries;
      const uint32_t p = g.DescriptionPassage(g.LocalIndex(describes.targets[j]));
      if (p < num_passages) give(p, u, a);
    }
    uint32_t last = kNone;
    for (uint64_t j = men.Begin(node); j < men.End(node); ++j) {
      ++mention_entries;
      const uint32_t p = men.targets[j];
      if (p >= num_passages || p == last) continue;
      last = p;
      give(p, u, men.attrs[j] == 1 ? a : a * mention_weight);
    }
  }
  const size_t sa_cap = std::min(r.top_k, opt.max_passages == 0 ? r.top_k : opt.max_passages);
  // Similarity to the query: the cosine, or with the relative scale the
  // mean of cosine and BM25 each divided by the corpus's best (the walks'
  // hybrid prior), so τd reads as a fraction of the best evidence.
  std::unordered_map<uint32_t, double> lexical;
  double best_cosine = 0.0, lexical_norm = 0.0;
  const std::vector<float> cosines = qs.Cosines();
  for (float x : cosines) best_cosine = std::max(best_cosine, static_cast<double>(x));
  const double dense_norm = relative && best_cosine > 0 ? best_cosine : 1.0;
  if (relative) {
    for (const Bm25Hit& b : s.bm25().Search(r.query, kLexicalDepth, Bm25Params{})) {
      if (b.doc >= num_passages) continue;
      lexical[b.doc] = b.score;
      lexical_norm = std::max(lexical_norm, static_cast<double>(b.score));
    }
  }
  auto similarity_of = [&](uint32_t p, float cosine) {
    double sim = cosine / dense_norm;
    if (relative && lexical_norm > 0) {
      auto it = lexical.find(p);
      sim = 0.5 * (sim + (it == lexical.end() ? 0.0 : it->second / lexical_norm));
    }
    return sim;
  };
  std::vector<RankedPassage> sa_ranked;
  std::unordered_map<uint32_t, double> similarity;
  if (!candidates.empty() && sa_cap > 0) {
    for (uint32_t p : candidates) {
      const double sim = similarity_of(p, p < cosines.size() ? cosines[p] : 0.0f);
      if (sim < opt.tau_d) continue;
      similarity[p] = sim;
      sa_ranked.push_back({p, 1.0 + sc.passage_activation[p] + opt.beta * sim});
    }
    std::sort(sa_ranked.begin(), sa_ranked.end(), Better);
    if (opt.per_entity > 0) {  // at most per_entity passages per activating entity
      std::unordered_map<uint32_t, size_t> taken;
      std::vector<RankedPassage> kept;
      for (const RankedPassage& rp : sa_ranked) {
        if (taken[sc.passage_entity[rp.passage]]++ < opt.per_entity) kept.push_back(rp);
      }
      sa_ranked = std::move(kept);
    }
  }
  const size_t above_tau_d = sa_ranked.size();
  if (sa_ranked.size() > sa_cap) sa_ranked.resize(sa_cap);
  out.ranked = sa_ranked;

  const double passages_ms = MillisSince(start) - seed_ms - spread_ms;
  // ---- 5. fill: the rest of top_k by similarity (the best `fill_depth`
  // passages by cosine and by BM25), below every activation passage.
  size_t filled = 0;
  if (opt.dense_fill && out.ranked.size() < r.top_k) {
    std::unordered_set<uint32_t> taken;
    for (const RankedPassage& rp : sa_ranked) taken.insert(rp.passage);
    const size_t depth = std::max<size_t>(opt.fill_depth, r.top_k);
    // The best `depth` passages by a score (ties by passage index).
    auto best = [depth](std::vector<std::pair<double, uint32_t>> v) {
      const size_t k = std::min(depth, v.size());
      std::partial_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end(),
                        [](const auto& x, const auto& y) {
                          return x.first != y.first ? x.first > y.first : x.second < y.second;
                        });
      v.resize(k);
      return v;
    };
    std::vector<std::pair<double, uint32_t>> by_cosine;
    by_cosine.reserve(cosines.size());
    for (uint32_t p = 0; p < cosines.size(); ++p) by_cosine.push_back({cosines[p], p});
    std::vector<std::pair<double, uint32_t>> by_bm25;
    for (const auto& [p, b] : lexical) by_bm25.push_back({b, p});
    std::vector<RankedPassage> pool;
    for (const auto* list : {&by_cosine, &by_bm25}) {
      for (const auto& [score, p] : best(*list)) {
        if (taken.insert(p).second) pool.push_back({p, similarity_of(p, cosines[p])});
      }
    }
    std::sort(pool.begin(), pool.end(), Better);
    for (const RankedPassage& rp : pool) {
      if (out.ranked.size() >= r.top_k) break;
      out.ranked.push_back({rp.passage, std::min(rp.score, 1.0)});
      ++filled;
    }
  }

  const double fill_ms = MillisSince(start) - seed_ms - spread_ms - passages_ms;
  // ---- 6. relation context: arcs between activated entities with w' > τr
  {
    const float tau_r = static_cast<float>(opt.tau_r);
    std::vector<std::pair<float, uint32_t>> rels;  // (w', relation id)
    std::unordered_set<uint32_t> seen;
    for (uint32_t i = 0; i < run.arcs.size(); ++i) {
      const SaArc& arc = run.arcs[i];
      if (run.activation[run.arc_from[i]] <= tau_a || run.activation[arc.to] <= tau_a) continue;
      const uint32_t rid = g.FactRelationId(arc.tag);
      const float w = weight_of(rid);
      if (w <= tau_r) continue;
      if (seen.insert(rid).second) rels.push_back({w, rid});
    }
    std::sort(rels.begin(), rels.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    if (opt.max_relations > 0 && rels.size() > opt.max_relations) rels.resize(opt.max_relations);
    for (const auto& [w, rid] : rels) out.context.push_back(g.RelationText(rid));
  }

  // ---- outputs: seeds, node scores; with explain the subgraph and paths
  for (uint32_t i = 0; i < num_seeds; ++i) out.seeds.push_back({g.EntityNode(nodes[i]), 1.0});
  {
    std::vector<uint32_t> scored;
    for (uint32_t u = 0; u < run.activation.size(); ++u) {
      if (run.activation[u] > 0.0f) scored.push_back(u);
    }
    auto by_activation = [&](uint32_t a, uint32_t b) {
      const float x = run.activation[a], y = run.activation[b];
      return x != y ? x > y : nodes[a] < nodes[b];
    };
    if (scored.size() > opt.max_nodes) {
      std::nth_element(scored.begin(), scored.begin() + opt.max_nodes, scored.end(),
                       by_activation);
      scored.resize(opt.max_nodes);
    }
    std::sort(scored.begin(), scored.end(), by_activation);
    for (uint32_t u : scored) out.node_scores.push_back({g.EntityNode(nodes[u]), run.activation[u]});
    for (const RankedPassage& rp : sa_ranked) out.node_scores.push_back({rp.passage, rp.score - 1.0});
  }
  if (r.explain) {
    // RELATED_TO arcs that carried activation, most first (at most 4·max_nodes).
    std::vector<uint32_t> arcs;
    for (uint32_t i = 0; i < run.arcs.size(); ++i) {
      if (run.carried[i] > 0.0f) arcs.push_back(i);
    }
    const size_t max_arcs = 4 * std::max<size_t>(opt.max_nodes, 1);
    auto by_flow = [&](uint32_t a, uint32_t b) {
      return run.carried[a] != run.carried[b] ? run.carried[a] > run.carried[b] : a < b;
    };
    if (arcs.size() > max_arcs) {
      std::nth_element(arcs.begin(), arcs.begin() + max_arcs, arcs.end(), by_flow);
      arcs.resize(max_arcs);
    }
    std::sort(arcs.begin(), arcs.end(), by_flow);
    for (uint32_t i : arcs) {
      out.subgraph.push_back({g.EntityNode(nodes[run.arc_from[i]]),
                              g.EntityNode(nodes[run.arcs[i].to]), EdgeKind::kRelatedTo,
                              run.arcs[i].weight, run.carried[i]});
    }
    // Paths: seed → (first-activating arcs) → entity → passage.
    for (const RankedPassage& rp : sa_ranked) {
      const uint32_t u0 = sc.passage_entity[rp.passage];
      out.subgraph.push_back({g.EntityNode(nodes[u0]), rp.passage, EdgeKind::kMentions,
                              similarity[rp.passage], run.activation[u0]});
      ExplanationPath path;
      path.passage = rp.passage;
      path.score = rp.score;
      path.nodes.push_back(rp.passage);
      uint32_t u = u0;
      for (size_t guard = 0; guard <= nodes.size(); ++guard) {
        path.nodes.push_back(g.EntityNode(nodes[u]));
        const uint32_t arc = run.first_arc[u];
        if (arc == SaRun::kNoArc) break;
        u = run.arc_from[arc];
      }
      std::reverse(path.nodes.begin(), path.nodes.end());
      out.paths.push_back(std::move(path));
    }
  }

  diag.iterations = run.steps;
  diag.candidates_scored = dstats.candidates_scored + qs.candidates_scored;
  diag.nodes_touched = nodes.size() + candidates.size();
  diag.edges_touched = run.arc_updates + mention_entries;
  diag.extra["seeds"] = static_cast<double>(num_seeds);
  diag.extra["seeds_by_name"] = by_names ? 1 : 0;
  diag.extra["named_seeds"] = static_cast<double>(named_seeds);
  diag.extra["relative_scale"] = relative ? 1 : 0;
  diag.extra["sa_entities"] = static_cast<double>(nodes.size());
  diag.extra["expansions"] = static_cast<double>(run.expansions);
  diag.extra["entities_read"] = static_cast<double>(run.nodes_read);
  diag.extra["positive_arcs"] = static_cast<double>(run.arcs.size());
  diag.extra["relations_scored"] = static_cast<double>(relations_scored);
  diag.extra["relatedto_entries_read"] = static_cast<double>(source.entries_read() + norm_entries);
  diag.extra["arc_updates"] = static_cast<double>(run.arc_updates);
  diag.extra["activated"] = static_cast<double>(activated.size());
  diag.extra["candidate_passages"] = static_cast<double>(candidates.size());
  diag.extra["passages_above_tau_d"] = static_cast<double>(above_tau_d);
  diag.extra["sa_passages"] = static_cast<double>(sa_ranked.size());
  diag.extra["dense_fill"] = static_cast<double>(filled);
  diag.extra["context_relations"] = static_cast<double>(out.context.size());
  diag.extra["truncated"] = run.truncated ? 1.0 : 0.0;
  diag.extra["seed_ms"] = seed_ms;
  diag.extra["spread_ms"] = spread_ms;
  diag.extra["passages_ms"] = passages_ms;
  diag.extra["fill_ms"] = fill_ms;
  diag.time_ms = MillisSince(start);
  return out;
}

}  // namespace flowrag
