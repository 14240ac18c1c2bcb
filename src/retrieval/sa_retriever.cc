#include "retrieval/sa_retriever.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "common/stopwatch.h"
#include "common/text.h"
#include "graph_algo/spreading_activation.h"
#include "retrieval/query_scores.h"
#include "retrieval/seeding.h"

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
      : g_(g), sc_(sc), nodes_(nodes), weight_of_(std::move(weight_of)), fan_out_(fan_out) {}
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

namespace {

// One query's state, built up step by step (§5.4–5.5).
struct SaQuery {
  SaQuery(const Snapshot& snapshot, const SaOptions& options, const RetrievalRequest& request,
          QueryScores scores)
      : s(snapshot),
        g(*snapshot.graph()),
        opt(options),
        r(request),
        qs(std::move(scores)),
        sc(ThreadScratch()) {
    sc.Prepare(g.num_entities(), g.num_relations(), s.num_passages());
    gen = sc.gen;
  }

  // Local id of entity e, appended to `nodes` on first sight.
  void AddNode(uint32_t e) {
    if (sc.entity_stamp[e] == gen) return;
    sc.entity_stamp[e] = gen;
    sc.entity_local[e] = static_cast<uint32_t>(nodes.size());
    nodes.push_back(e);
  }

  // w' of a relation text: its cosine with the relation query (over the
  // relative scale's norm), rescaled by c; memoised per query.
  float LinkWeight(uint32_t rid) {
    if (sc.relation_stamp[rid] != gen) {
      sc.relation_stamp[rid] = gen;
      const float cosine = std::min(1.0f, g.RelationDot(rid, rv) / link_norm);
      sc.relation_weight[rid] = RescaleLinkWeight(cosine, static_cast<float>(opt.c));
      ++relations_scored;
    }
    return sc.relation_weight[rid];
  }

  // Similarity to the query: the cosine, or with the relative scale the
  // mean of cosine and BM25 each divided by the corpus's best (the walks'
  // hybrid prior), so τd reads as a fraction of the best evidence.
  double Similarity(uint32_t p, float cosine) const {
    double sim = cosine / dense_norm;
    if (relative && lexical_norm > 0) {
      auto it = lexical.find(p);
      sim = 0.5 * (sim + (it == lexical.end() ? 0.0 : it->second / lexical_norm));
    }
    return sim;
  }

  const Snapshot& s;
  const KnowledgeGraph& g;
  const SaOptions& opt;
  const RetrievalRequest& r;
  QueryScores qs;
  Scratch& sc;
  uint32_t gen = 0;
  // 1. seeds
  std::vector<uint32_t> nodes;  // local id → entity index; seeds first
  size_t named_seeds = 0, num_seeds = 0;
  bool by_names = false;
  VectorSearchStats seed_stats;
  std::vector<float> relation_query;  // without the named entities' names
  const float* rv = nullptr;          // the query relations are scored against
  // 2. link weights
  bool relative = false;
  float link_norm = 1.0f;
  size_t norm_entries = 0, relations_scored = 0, entries_read = 0;
  // 4. passages
  std::vector<uint32_t> candidates;
  size_t mention_entries = 0;
  std::vector<float> cosines;
  std::unordered_map<uint32_t, double> lexical;  // passage → BM25 (relative scale)
  double lexical_norm = 0.0, dense_norm = 1.0;
  std::vector<RankedPassage> ranked;  // activation passages
  std::unordered_map<uint32_t, double> similarity;
  size_t above_tau_d = 0, filled = 0;
};

// The vector index seeds come from: entity descriptions, or for a graph
// without them (an imported OpenIE graph) the entity names. Preconditions:
// a knowledge graph, passage embeddings and that index.
Result<const VectorIndex*> SeedIndex(const Snapshot& s, bool* by_names) {
  const KnowledgeGraph* g = s.graph();
  if (g == nullptr || g->num_entities() == 0) {
    return Status::FailedPrecondition(
        "sa retrieval: the store has no knowledge graph (run `flowrag index` with extraction)");
  }
  if (s.dense() == nullptr || s.embedder() == nullptr) {
    return Status::FailedPrecondition(
        "sa retrieval: the store has no passage embeddings for the configured embedder "
        "(run `flowrag index` first)");
  }
  *by_names = g->description_index() == nullptr || g->num_descriptions() == 0;
  const VectorIndex* index = *by_names ? g->entity_index() : g->description_index();
  if (index == nullptr) {
    return Status::FailedPrecondition(
        "sa retrieval: the knowledge graph has no entity description or name vectors");
  }
  return index;
}

// The query relations are scored against: without the names of the
// entities it names (sa.relation_query=unnamed). Those entities are the
// seeds already; what is left says which links to follow ("the director
// of film X" -> "director of film"), and a link text that repeats the
// seed's name does not win for that alone.
Status EmbedRelationQuery(SaQuery& q) {
  q.rv = q.qs.query.row(0);
  if (q.opt.relation_query != "unnamed" || q.named_seeds == 0) return Status::Ok();
  std::string rest = q.r.query, lower = ToLowerAscii(q.r.query);
  for (size_t i = 0; i < q.named_seeds; ++i) {
    const std::string name = ToLowerAscii(q.g.EntityName(q.nodes[i]));
    if (name.empty()) continue;
    for (size_t at = lower.find(name); at != std::string::npos; at = lower.find(name, at)) {
      rest.replace(at, name.size(), std::string(name.size(), ' '));
      lower.replace(at, name.size(), std::string(name.size(), ' '));
    }
  }
  FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix rm,
                           q.s.embedder()->Embed(std::span<const std::string>(&rest, 1)));
  q.relation_query.assign(rm.row(0), rm.row(0) + rm.cols);
  q.rv = q.relation_query.data();
  return Status::Ok();
}

// 1. Seeds (§5.4): the entities the query names, then the entities of the
// top-k descriptions (or names).
Status SelectSaSeeds(const VectorIndex& seed_index, SaQuery& q) {
  if (q.opt.name_seeds) {
    for (uint32_t e : QueryNames(q.s, q.r.query).matched_entities) q.AddNode(e);
  }
  q.named_seeds = q.nodes.size();
  FLOWRAG_RETURN_IF_ERROR(EmbedRelationQuery(q));
  VectorSearchParams dp;
  dp.k = q.opt.k;
  for (const VectorHit& h : seed_index.Search(q.qs.query.row(0), dp, &q.seed_stats)) {
    q.AddNode(q.by_names ? h.id : q.g.DescriptionEntity(h.id));
  }
  q.num_seeds = q.nodes.size();
  return Status::Ok();
}

// 2. Link weights (§5.5): with the relative scale, cosines are divided by
// the best relation cosine among the seeds' own links (capped at 1), so the
// thresholds read as fractions of the best evidence instead of absolute
// neural-embedding cosines.
void ScaleLinks(SaQuery& q) {
  q.relative = q.opt.scale == "relative" || (q.opt.scale == "auto" && q.s.embedder()->IsLocal());
  if (!q.relative) return;
  const Csr& rel = q.g.Edges(EdgeKind::kRelatedTo);
  float best = 0.0f;
  for (size_t i = 0; i < q.num_seeds; ++i) {
    const uint32_t node = q.g.EntityNode(q.nodes[i]);
    for (uint64_t j = rel.Begin(node); j < rel.End(node); ++j) {
      best = std::max(best, q.g.RelationDot(q.g.FactRelationId(rel.attrs[j]), q.rv));
    }
    q.norm_entries += rel.Degree(node);
  }
  if (best > 0.0f) q.link_norm = best;
}

// 3. Spreading activation (§5.5, Algorithm 1) over the entity graph read
// on demand, from the seeds.
Result<LocalSaRun> Spread(SaQuery& q) {
  EntityArcs source(
      q.g, q.sc, q.nodes, [&q](uint32_t rid) { return q.LinkWeight(rid); }, q.opt.fan_out);
  std::vector<uint32_t> seeds(q.num_seeds);
  for (uint32_t i = 0; i < q.num_seeds; ++i) seeds[i] = i;
  SaLimits limits;
  limits.hops = q.opt.hops;
  limits.fire = static_cast<float>(q.opt.fire);
  limits.max_nodes = q.opt.max_entities;
  FLOWRAG_ASSIGN_OR_RETURN(LocalSaRun run,
                           SpreadActivationLocal(source, seeds, limits, q.r.explain));
  q.entries_read = source.entries_read();
  return run;
}

// 4a. The passages of the activated entities: those about an entity (its
// descriptions' passages, its title mentions) get its activation, those
// merely naming it mention_weight of it; each keeps its best entity.
void CollectCandidates(const LocalSaRun& run, const std::vector<uint32_t>& activated, SaQuery& q) {
  const Csr& men = q.g.Edges(EdgeKind::kMentions);
  const Csr& describes = q.g.Edges(EdgeKind::kDescribes);
  const size_t num_passages = q.s.num_passages();
  Scratch& sc = q.sc;
  auto give = [&](uint32_t p, uint32_t u, float a) {
    if (sc.passage_stamp[p] != q.gen) {
      sc.passage_stamp[p] = q.gen;
      sc.passage_activation[p] = a;
      sc.passage_entity[p] = u;
      q.candidates.push_back(p);
    } else if (a > sc.passage_activation[p]) {
      sc.passage_activation[p] = a;
      sc.passage_entity[p] = u;
    }
  };
  const float mention_weight = static_cast<float>(q.opt.mention_weight);
  for (uint32_t u : activated) {
    const uint32_t node = q.g.EntityNode(q.nodes[u]);
    const float a = run.activation[u];
    for (uint64_t j = describes.Begin(node); j < describes.End(node); ++j) {
      ++q.mention_entries;
      const uint32_t p = q.g.DescriptionPassage(q.g.LocalIndex(describes.targets[j]));
      if (p < num_passages) give(p, u, a);
    }
    uint32_t last = kNone;
    for (uint64_t j = men.Begin(node); j < men.End(node); ++j) {
      ++q.mention_entries;
      const uint32_t p = men.targets[j];
      if (p >= num_passages || p == last) continue;
      last = p;
      give(p, u, men.attrs[j] == 1 ? a : a * mention_weight);
    }
  }
}

// The cosines, and with the relative scale the BM25 scores of the best
// kLexicalDepth passages, with their norms (SaQuery::Similarity).
void ScoreSimilarity(SaQuery& q) {
  q.cosines = q.qs.Cosines();
  double best_cosine = 0.0;
  for (float x : q.cosines) best_cosine = std::max(best_cosine, static_cast<double>(x));
  q.dense_norm = q.relative && best_cosine > 0 ? best_cosine : 1.0;
  if (!q.relative) return;
  for (const Bm25Hit& b : q.s.bm25().Search(q.r.query, kLexicalDepth, Bm25Params{})) {
    if (b.doc >= q.s.num_passages()) continue;
    q.lexical[b.doc] = b.score;
    q.lexical_norm = std::max(q.lexical_norm, static_cast<double>(b.score));
  }
}

// 4b. Candidates at or above τd scored 1 + a(p) + β·sim(q, p), at most
// per_entity per activating entity and `cap` in all.
void RankCandidates(size_t cap, SaQuery& q) {
  if (!q.candidates.empty() && cap > 0) {
    for (uint32_t p : q.candidates) {
      const double sim = q.Similarity(p, p < q.cosines.size() ? q.cosines[p] : 0.0f);
      if (sim < q.opt.tau_d) continue;
      q.similarity[p] = sim;
      q.ranked.push_back({p, 1.0 + q.sc.passage_activation[p] + q.opt.beta * sim});
    }
    std::sort(q.ranked.begin(), q.ranked.end(), Better);
    if (q.opt.per_entity > 0) {
      std::unordered_map<uint32_t, size_t> taken;
      std::vector<RankedPassage> kept;
      for (const RankedPassage& rp : q.ranked) {
        if (taken[q.sc.passage_entity[rp.passage]]++ < q.opt.per_entity) kept.push_back(rp);
      }
      q.ranked = std::move(kept);
    }
  }
  q.above_tau_d = q.ranked.size();
  if (q.ranked.size() > cap) q.ranked.resize(cap);
}

// The best `depth` (score, passage) pairs, ties by passage index.
std::vector<std::pair<double, uint32_t>> BestByScore(std::vector<std::pair<double, uint32_t>> v,
                                                     size_t depth) {
  const size_t k = std::min(depth, v.size());
  std::partial_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end(),
                    [](const auto& x, const auto& y) {
                      return x.first != y.first ? x.first > y.first : x.second < y.second;
                    });
  v.resize(k);
  return v;
}

// 5. The rest of top_k by similarity: the best `fill_depth` passages by
// cosine and by BM25, below every activation passage (score ≤ 1).
void FillBySimilarity(SaQuery& q, RetrievalOutput* out) {
  if (!q.opt.dense_fill || out->ranked.size() >= q.r.top_k) return;
  std::unordered_set<uint32_t> taken;
  for (const RankedPassage& rp : q.ranked) taken.insert(rp.passage);
  const size_t depth = std::max<size_t>(q.opt.fill_depth, q.r.top_k);
  std::vector<std::pair<double, uint32_t>> by_cosine;
  by_cosine.reserve(q.cosines.size());
  for (uint32_t p = 0; p < q.cosines.size(); ++p) by_cosine.push_back({q.cosines[p], p});
  std::vector<std::pair<double, uint32_t>> by_bm25;
  for (const auto& [p, b] : q.lexical) by_bm25.push_back({b, p});
  std::vector<RankedPassage> pool;
  for (auto* list : {&by_cosine, &by_bm25}) {
    for (const auto& [score, p] : BestByScore(std::move(*list), depth)) {
      if (taken.insert(p).second) pool.push_back({p, q.Similarity(p, q.cosines[p])});
    }
  }
  std::sort(pool.begin(), pool.end(), Better);
  for (const RankedPassage& rp : pool) {
    if (out->ranked.size() >= q.r.top_k) break;
    out->ranked.push_back({rp.passage, std::min(rp.score, 1.0)});
    ++q.filled;
  }
}

// 6. Relation context (§5.5): the distinct relation texts of links between
// two activated entities with w' > τr, by w' descending.
void AddRelationContext(const LocalSaRun& run, SaQuery& q, RetrievalOutput* out) {
  const float tau_a = static_cast<float>(q.opt.tau_a);
  const float tau_r = static_cast<float>(q.opt.tau_r);
  std::vector<std::pair<float, uint32_t>> rels;  // (w', relation id)
  std::unordered_set<uint32_t> seen;
  for (uint32_t i = 0; i < run.arcs.size(); ++i) {
    const SaArc& arc = run.arcs[i];
    if (run.activation[run.arc_from[i]] <= tau_a || run.activation[arc.to] <= tau_a) continue;
    const uint32_t rid = q.g.FactRelationId(arc.tag);
    const float w = q.LinkWeight(rid);
    if (w <= tau_r) continue;
    if (seen.insert(rid).second) rels.push_back({w, rid});
  }
  std::sort(rels.begin(), rels.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  if (q.opt.max_relations > 0 && rels.size() > q.opt.max_relations) {
    rels.resize(q.opt.max_relations);
  }
  for (const auto& [w, rid] : rels) out->context.emplace_back(q.g.RelationText(rid));
}

// Seeds (score 1), node scores: the entities by activation (at most
// max_nodes), then the activation passages by score − 1.
void AddSeedsAndNodeScores(const LocalSaRun& run, const SaQuery& q, RetrievalOutput* out) {
  for (uint32_t i = 0; i < q.num_seeds; ++i)
    out->seeds.push_back({q.g.EntityNode(q.nodes[i]), 1.0});
  std::vector<uint32_t> scored;
  for (uint32_t u = 0; u < run.activation.size(); ++u) {
    if (run.activation[u] > 0.0f) scored.push_back(u);
  }
  auto by_activation = [&](uint32_t a, uint32_t b) {
    const float x = run.activation[a], y = run.activation[b];
    return x != y ? x > y : q.nodes[a] < q.nodes[b];
  };
  if (scored.size() > q.opt.max_nodes) {
    std::nth_element(scored.begin(), scored.begin() + q.opt.max_nodes, scored.end(), by_activation);
    scored.resize(q.opt.max_nodes);
  }
  std::sort(scored.begin(), scored.end(), by_activation);
  for (uint32_t u : scored) {
    out->node_scores.push_back({q.g.EntityNode(q.nodes[u]), run.activation[u]});
  }
  for (const RankedPassage& rp : q.ranked) out->node_scores.push_back({rp.passage, rp.score - 1.0});
}

// With explain: the RELATED_TO arcs that carried activation (most first, at
// most 4·max_nodes), a MENTIONS edge from each activation passage's entity,
// and paths seed → (first-activating arcs) → entity → passage.
void Explain(const LocalSaRun& run, const SaQuery& q, RetrievalOutput* out) {
  std::vector<uint32_t> arcs;
  for (uint32_t i = 0; i < run.arcs.size(); ++i) {
    if (run.carried[i] > 0.0f) arcs.push_back(i);
  }
  const size_t max_arcs = 4 * std::max<size_t>(q.opt.max_nodes, 1);
  auto by_flow = [&](uint32_t a, uint32_t b) {
    return run.carried[a] != run.carried[b] ? run.carried[a] > run.carried[b] : a < b;
  };
  if (arcs.size() > max_arcs) {
    std::nth_element(arcs.begin(), arcs.begin() + max_arcs, arcs.end(), by_flow);
    arcs.resize(max_arcs);
  }
  std::sort(arcs.begin(), arcs.end(), by_flow);
  const KnowledgeGraph& g = q.g;
  for (uint32_t i : arcs) {
    out->subgraph.push_back({g.EntityNode(q.nodes[run.arc_from[i]]),
                             g.EntityNode(q.nodes[run.arcs[i].to]), EdgeKind::kRelatedTo,
                             run.arcs[i].weight, run.carried[i]});
  }
  for (const RankedPassage& rp : q.ranked) {
    const uint32_t u0 = q.sc.passage_entity[rp.passage];
    out->subgraph.push_back({g.EntityNode(q.nodes[u0]), rp.passage, EdgeKind::kMentions,
                             q.similarity.at(rp.passage), run.activation[u0]});
    ExplanationPath path;
    path.passage = rp.passage;
    path.score = rp.score;
    path.nodes.push_back(rp.passage);
    uint32_t u = u0;
    for (size_t guard = 0; guard <= q.nodes.size(); ++guard) {
      path.nodes.push_back(g.EntityNode(q.nodes[u]));
      const uint32_t arc = run.first_arc[u];
      if (arc == SaRun::kNoArc) break;
      u = run.arc_from[arc];
    }
    std::reverse(path.nodes.begin(), path.nodes.end());
    out->paths.push_back(std::move(path));
  }
}

void AddDiagnostics(const LocalSaRun& run, size_t activated, const SaQuery& q,
                    RetrievalOutput* out) {
  RetrievalDiagnostics& diag = out->diagnostics;
  diag.iterations = run.steps;
  diag.candidates_scored = q.seed_stats.candidates_scored + q.qs.candidates_scored;
  diag.nodes_touched = q.nodes.size() + q.candidates.size();
  diag.edges_touched = run.arc_updates + q.mention_entries;
  diag.extra["seeds"] = static_cast<double>(q.num_seeds);
  diag.extra["seeds_by_name"] = q.by_names ? 1 : 0;
  diag.extra["named_seeds"] = static_cast<double>(q.named_seeds);
  diag.extra["relative_scale"] = q.relative ? 1 : 0;
  diag.extra["sa_entities"] = static_cast<double>(q.nodes.size());
  diag.extra["expansions"] = static_cast<double>(run.expansions);
  diag.extra["entities_read"] = static_cast<double>(run.nodes_read);
  diag.extra["positive_arcs"] = static_cast<double>(run.arcs.size());
  diag.extra["relations_scored"] = static_cast<double>(q.relations_scored);
  diag.extra["relatedto_entries_read"] = static_cast<double>(q.entries_read + q.norm_entries);
  diag.extra["arc_updates"] = static_cast<double>(run.arc_updates);
  diag.extra["activated"] = static_cast<double>(activated);
  diag.extra["candidate_passages"] = static_cast<double>(q.candidates.size());
  diag.extra["passages_above_tau_d"] = static_cast<double>(q.above_tau_d);
  diag.extra["sa_passages"] = static_cast<double>(q.ranked.size());
  diag.extra["dense_fill"] = static_cast<double>(q.filled);
  diag.extra["context_relations"] = static_cast<double>(out->context.size());
  diag.extra["truncated"] = run.truncated ? 1.0 : 0.0;
}

}  // namespace

Result<RetrievalOutput> SaRetriever::Retrieve(const Snapshot& s, const RetrievalRequest& r) const {
  const auto start = SteadyClock::now();
  std::optional<SaOptions> scratch;
  FLOWRAG_ASSIGN_OR_RETURN(const SaOptions* options, RequestOptions(r, &scratch));
  const SaOptions& opt = *options;
  bool by_names = false;
  FLOWRAG_ASSIGN_OR_RETURN(const VectorIndex* seed_index, SeedIndex(s, &by_names));
  // The query's cosine with every passage (query_scores.h ScoreQuery, shared
  // with the walks): the candidates' similarity and the fill read it.
  FLOWRAG_ASSIGN_OR_RETURN(QueryScores qs, ScoreQuery(s, r.query));
  if (qs.query.cols != seed_index->Dimension()) {
    return Status::FailedPrecondition(
        "sa retrieval: query embedding has " + std::to_string(qs.query.cols) +
        " dimensions, the seed index has " + std::to_string(seed_index->Dimension()));
  }
  SaQuery q(s, opt, r, std::move(qs));
  q.by_names = by_names;
  FLOWRAG_RETURN_IF_ERROR(SelectSaSeeds(*seed_index, q));
  const double seed_ms = MillisSince(start);

  ScaleLinks(q);
  FLOWRAG_ASSIGN_OR_RETURN(const LocalSaRun run, Spread(q));
  std::vector<uint32_t> activated;  // activation > τa
  for (uint32_t u = 0; u < run.activation.size(); ++u) {
    if (run.activation[u] > static_cast<float>(opt.tau_a)) activated.push_back(u);
  }
  const double spread_ms = MillisSince(start) - seed_ms;

  RetrievalOutput out;
  CollectCandidates(run, activated, q);
  ScoreSimilarity(q);
  RankCandidates(std::min(r.top_k, opt.max_passages == 0 ? r.top_k : opt.max_passages), q);
  out.ranked = q.ranked;
  const double passages_ms = MillisSince(start) - seed_ms - spread_ms;
  FillBySimilarity(q, &out);
  const double fill_ms = MillisSince(start) - seed_ms - spread_ms - passages_ms;
  AddRelationContext(run, q, &out);
  AddSeedsAndNodeScores(run, q, &out);
  if (r.explain) Explain(run, q, &out);

  AddDiagnostics(run, activated.size(), q, &out);
  RetrievalDiagnostics& diag = out.diagnostics;
  diag.extra["seed_ms"] = seed_ms;
  diag.extra["spread_ms"] = spread_ms;
  diag.extra["passages_ms"] = passages_ms;
  diag.extra["fill_ms"] = fill_ms;
  diag.time_ms = MillisSince(start);
  return out;
}

}  // namespace flowrag
