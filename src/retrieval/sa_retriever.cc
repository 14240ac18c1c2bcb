#include "retrieval/sa_retriever.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <unordered_set>

#include "retrieval/keywords.h"
#include "retrieval/seeds.h"
#include "retrieval/spreading_activation.h"

namespace flowrag {
namespace {

constexpr uint32_t kNone = 0xffffffffu;

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Per-thread scratch sized to the snapshot, reset in O(1) by generation
// stamps, so a query allocates nothing proportional to the graph.
struct Scratch {
  uint32_t gen = 0;
  std::vector<uint32_t> entity_stamp, entity_local;      // per entity
  std::vector<uint32_t> relation_stamp;                  // per relation text
  std::vector<float> relation_weight;
  std::vector<uint32_t> passage_stamp;                   // per passage
  std::vector<float> passage_activation;
  std::vector<uint32_t> passage_entity;                  // local entity giving a_max

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

}  // namespace

Status SaOptions::Override(ParamReader& r) {
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.k", &k));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.hops", &hops));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.c", &c));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.tau_a", &tau_a));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.tau_d", &tau_d));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.tau_r", &tau_r));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.max_passages", &max_passages));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.max_relations", &max_relations));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.max_entities", &max_entities));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.max_nodes", &max_nodes));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.dense_fill", &dense_fill));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.all_arcs", &all_arcs));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.scale", &scale));
  FLOWRAG_RETURN_IF_ERROR(r.Read("sa.name_seeds", &name_seeds));
  if (scale != "auto" && scale != "absolute" && scale != "relative") {
    return Status::InvalidArgument("option sa.scale=\"" + scale +
                                   "\": expected auto, absolute or relative");
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
  if (max_entities == 0) return Status::InvalidArgument("option sa.max_entities: expected >= 1");
  return Status::Ok();
}

Result<RetrievalOutput> SaRetriever::Retrieve(const Snapshot& s,
                                              const RetrievalRequest& r) const {
  const auto start = std::chrono::steady_clock::now();
  ParamReader reader(r.params);
  SaOptions opt;
  FLOWRAG_RETURN_IF_ERROR(opt.Override(reader));
  FLOWRAG_RETURN_IF_ERROR(reader.CheckAllUsed(Name()));

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
  std::string q(r.query);
  FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix qm, s.embedder()->Embed(std::span<const std::string>(&q, 1)));
  if (qm.cols != s.dense()->Dimension() || qm.cols != seed_index->Dimension()) {
    return Status::FailedPrecondition("sa retrieval: query embedding has " +
                                      std::to_string(qm.cols) +
                                      " dimensions, the passage/seed indexes have " +
                                      std::to_string(s.dense()->Dimension()) + "/" +
                                      std::to_string(seed_index->Dimension()));
  }
  const float* qv = qm.row(0);

  RetrievalOutput out;
  RetrievalDiagnostics& diag = out.diagnostics;
  const size_t num_passages = s.num_passages();
  Scratch& sc = ThreadScratch();
  sc.Prepare(g.num_entities(), g.num_relations(), num_passages);
  const uint32_t gen = sc.gen;

  // ---- 1. seeds: top-k descriptions → their entities (§5.4)
  VectorSearchParams dp;
  dp.k = opt.k;
  VectorSearchStats dstats;
  std::vector<uint32_t> nodes;  // local → entity index; seeds first
  if (opt.name_seeds) {  // entities the query names come first
    KeywordOptions ko;
    ko.spans = ko.phrases = ko.content_words = false;
    for (uint32_t e : ExtractKeywords(r.query, &GraphQueryIndex::For(s)->names(), ko).matched_entities) {
      if (sc.entity_stamp[e] == gen) continue;
      sc.entity_stamp[e] = gen;
      sc.entity_local[e] = static_cast<uint32_t>(nodes.size());
      nodes.push_back(e);
    }
  }
  const size_t named_seeds = nodes.size();
  for (const VectorHit& h : seed_index->Search(qv, dp, &dstats)) {
    const uint32_t e = by_names ? h.id : g.DescriptionEntity(h.id);
    if (sc.entity_stamp[e] == gen) continue;
    sc.entity_stamp[e] = gen;
    sc.entity_local[e] = static_cast<uint32_t>(nodes.size());
    nodes.push_back(e);
  }
  const size_t num_seeds = nodes.size();
  std::vector<uint32_t> seeds_local(num_seeds);
  for (uint32_t i = 0; i < num_seeds; ++i) seeds_local[i] = i;

  // ---- 2. n-hop subgraph over RELATED_TO (§5.4)
  const Csr& rel = g.Edges(EdgeKind::kRelatedTo);
  size_t entries_scanned = 0;
  bool truncated = false;
  {
    size_t level_begin = 0;
    for (size_t hop = 0; hop < opt.hops && !truncated; ++hop) {
      const size_t level_end = nodes.size();
      if (level_begin == level_end) break;
      for (size_t i = level_begin; i < level_end && !truncated; ++i) {
        const uint32_t node = g.EntityNode(nodes[i]);
        for (uint64_t j = rel.Begin(node); j < rel.End(node); ++j) {
          ++entries_scanned;
          const uint32_t e = g.LocalIndex(rel.targets[j]);
          if (sc.entity_stamp[e] == gen) continue;
          if (nodes.size() >= opt.max_entities) {
            truncated = true;
            break;
          }
          sc.entity_stamp[e] = gen;
          sc.entity_local[e] = static_cast<uint32_t>(nodes.size());
          nodes.push_back(e);
        }
      }
      level_begin = level_end;
    }
  }
  const size_t hop_entities = nodes.size();
  // Arcs between subgraph entities, weighted by the rescaled relation cosine.
  // Default: only arcs that can carry activation (w' > 0), discovered from
  // the seeds outwards, so relation cosines are computed only around
  // entities activation can reach. sa.all_arcs: every arc (exact Algorithm 1
  // traversal order), at the cost of scoring every relation in the subgraph.
  const float c = static_cast<float>(opt.c);
  const bool relative =
      opt.scale == "relative" || (opt.scale == "auto" && s.embedder()->IsLocal());
  // Relative scale: cosines divided by the best relation cosine among the
  // seeds' own links (capped at 1), so the thresholds read as fractions of
  // the best evidence instead of absolute neural-embedding cosines.
  float link_norm = 1.0f;
  if (relative) {
    float best = 0.0f;
    for (size_t i = 0; i < num_seeds; ++i) {
      const uint32_t node = g.EntityNode(nodes[i]);
      for (uint64_t j = rel.Begin(node); j < rel.End(node); ++j) {
        best = std::max(best, g.RelationDot(g.FactRelationId(rel.attrs[j]), qv));
      }
    }
    if (best > 0.0f) link_norm = best;
  }
  size_t relations_scored = 0, positive_arcs = 0;
  auto weight_of = [&](uint32_t rid) {
    if (sc.relation_stamp[rid] != gen) {
      sc.relation_stamp[rid] = gen;
      const float cosine = std::min(1.0f, g.RelationDot(rid, qv) / link_norm);
      sc.relation_weight[rid] = RescaleLinkWeight(cosine, c);
      ++relations_scored;
    }
    return sc.relation_weight[rid];
  };
  SaGraph sg;
  std::vector<uint32_t> arc_fact;  // arc → fact index
  if (opt.all_arcs) {
    sg.offsets.assign(nodes.size() + 1, 0);
    for (uint32_t u = 0; u < nodes.size(); ++u) {
      const uint32_t node = g.EntityNode(nodes[u]);
      for (uint64_t j = rel.Begin(node); j < rel.End(node); ++j) {
        ++entries_scanned;
        const uint32_t e = g.LocalIndex(rel.targets[j]);
        if (sc.entity_stamp[e] != gen) continue;
        const uint32_t fact = rel.attrs[j];
        const float w = weight_of(g.FactRelationId(fact));
        positive_arcs += w > 0.0f;
        sg.targets.push_back(sc.entity_local[e]);
        sg.weights.push_back(w);
        arc_fact.push_back(fact);
      }
      sg.offsets[u + 1] = static_cast<uint32_t>(sg.targets.size());
    }
  } else {
    // Renumber: local ids in discovery order from the seeds over w' > 0 arcs.
    // entity_local of a subgraph entity not (yet) reached is kNone.
    for (size_t i = num_seeds; i < nodes.size(); ++i) sc.entity_local[nodes[i]] = kNone;
    nodes.resize(num_seeds);
    sg.offsets.assign(1, 0);
    for (size_t u = 0; u < nodes.size(); ++u) {  // grows while scanning
      const uint32_t node = g.EntityNode(nodes[u]);
      for (uint64_t j = rel.Begin(node); j < rel.End(node); ++j) {
        ++entries_scanned;
        const uint32_t e = g.LocalIndex(rel.targets[j]);
        if (sc.entity_stamp[e] != gen) continue;  // outside the n-hop subgraph
        const uint32_t fact = rel.attrs[j];
        const float w = weight_of(g.FactRelationId(fact));
        if (w <= 0.0f) continue;
        ++positive_arcs;
        if (sc.entity_local[e] == kNone) {
          sc.entity_local[e] = static_cast<uint32_t>(nodes.size());
          nodes.push_back(e);
        }
        sg.targets.push_back(sc.entity_local[e]);
        sg.weights.push_back(w);
        arc_fact.push_back(fact);
      }
      sg.offsets.push_back(static_cast<uint32_t>(sg.targets.size()));
    }
  }

  // ---- 3. spreading activation (§5.5, Algorithm 1)
  SaRun run = SpreadActivation(sg, seeds_local, /*track_carried=*/true);
  const float tau_a = static_cast<float>(opt.tau_a);
  std::vector<uint32_t> activated = ActivatedNodes(run, tau_a);

  // ---- 4. passages mentioning activated entities, filtered by τd
  const Csr& men = g.Edges(EdgeKind::kMentions);
  std::vector<uint32_t> candidates;
  size_t mention_entries = 0;
  for (uint32_t u : activated) {
    const uint32_t node = g.EntityNode(nodes[u]);
    const float a = run.activation[u];
    for (uint64_t j = men.Begin(node); j < men.End(node); ++j) {
      ++mention_entries;
      const uint32_t p = men.targets[j];
      if (p >= num_passages) continue;
      if (sc.passage_stamp[p] != gen) {
        sc.passage_stamp[p] = gen;
        sc.passage_activation[p] = a;
        sc.passage_entity[p] = u;
        candidates.push_back(p);
      } else if (a > sc.passage_activation[p]) {
        sc.passage_activation[p] = a;
        sc.passage_entity[p] = u;
      }
    }
  }
  const size_t sa_cap = std::min(r.top_k, opt.max_passages == 0 ? r.top_k : opt.max_passages);
  VectorSearchStats pstats;
  std::vector<RankedPassage> sa_ranked;
  if (!candidates.empty() && sa_cap > 0) {
    VectorSearchParams pp;
    pp.k = candidates.size();
    pp.min_score = relative ? 0.0f : static_cast<float>(opt.tau_d);
    pp.filter = [&sc, gen](uint32_t id) { return sc.passage_stamp[id] == gen; };
    const std::vector<VectorHit> hits = s.dense()->Search(qv, pp, &pstats);
    // Relative scale: the mean of cosine / the best candidate's cosine and
    // BM25 / the best candidate's BM25 (the lexical embedder ranks passages
    // below BM25; the same hybrid the walks' passage prior uses).
    std::unordered_map<uint32_t, double> lexical;
    double dense_norm = 1.0, lexical_norm = 0.0;
    if (relative && !hits.empty()) {
      if (hits.front().score > 0) dense_norm = hits.front().score;
      for (const Bm25Hit& b : s.bm25().Search(r.query, num_passages, Bm25Params{})) {
        if (b.doc < num_passages && sc.passage_stamp[b.doc] == gen) {
          lexical[b.doc] = b.score;
          lexical_norm = std::max(lexical_norm, static_cast<double>(b.score));
        }
      }
    }
    for (const VectorHit& h : hits) {
      double sim = h.score / dense_norm;
      if (relative && lexical_norm > 0) {
        auto it = lexical.find(h.id);
        sim = 0.5 * (sim + (it == lexical.end() ? 0.0 : it->second / lexical_norm));
      }
      if (sim < opt.tau_d) continue;
      sa_ranked.push_back({h.id, 1.0 + sc.passage_activation[h.id] * sim});
    }
    std::sort(sa_ranked.begin(), sa_ranked.end(), Better);
  }
  const size_t above_tau_d = sa_ranked.size();
  if (sa_ranked.size() > sa_cap) sa_ranked.resize(sa_cap);
  out.ranked = sa_ranked;

  // ---- 5. dense fill
  size_t filled = 0;
  if (opt.dense_fill && out.ranked.size() < r.top_k) {
    VectorSearchParams fp;
    fp.k = r.top_k;
    if (!sa_ranked.empty()) {
      fp.filter = [&sc, gen, &sa_ranked](uint32_t id) {
        if (sc.passage_stamp[id] != gen) return true;
        for (const RankedPassage& rp : sa_ranked) {
          if (rp.passage == id) return false;
        }
        return true;
      };
    }
    for (const VectorHit& h : s.dense()->Search(qv, fp, &pstats)) {
      if (out.ranked.size() >= r.top_k) break;
      out.ranked.push_back({h.id, static_cast<double>(h.score)});
      ++filled;
    }
  }

  // ---- 6. relation context: arcs between activated entities with w' > τr
  {
    const float tau_r = static_cast<float>(opt.tau_r);
    std::vector<std::pair<float, uint32_t>> rels;  // (w', relation id)
    std::unordered_set<uint32_t> seen;
    for (uint32_t u : activated) {
      for (uint32_t i = sg.offsets[u]; i < sg.offsets[u + 1]; ++i) {
        if (sg.weights[i] <= tau_r || run.activation[sg.targets[i]] <= tau_a) continue;
        const uint32_t rid = g.FactRelationId(arc_fact[i]);
        if (seen.insert(rid).second) rels.push_back({sg.weights[i], rid});
      }
    }
    std::sort(rels.begin(), rels.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    if (opt.max_relations > 0 && rels.size() > opt.max_relations) rels.resize(opt.max_relations);
    for (const auto& [w, rid] : rels) out.context.push_back(g.RelationText(rid));
  }

  // ---- outputs: seeds, node scores, subgraph, paths
  for (uint32_t i = 0; i < num_seeds; ++i) out.seeds.push_back({g.EntityNode(nodes[i]), 1.0});
  {
    std::vector<uint32_t> scored;
    for (uint32_t u = 0; u < nodes.size(); ++u) {
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
  {
    // RELATED_TO arcs that carried activation, most first (at most 4·max_nodes).
    std::vector<uint32_t> arcs;
    std::vector<uint32_t> arc_source(sg.num_arcs());
    for (uint32_t u = 0; u < nodes.size(); ++u) {
      for (uint32_t i = sg.offsets[u]; i < sg.offsets[u + 1]; ++i) {
        arc_source[i] = u;
        if (run.carried[i] > 0.0f) arcs.push_back(i);
      }
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
      out.subgraph.push_back({g.EntityNode(nodes[arc_source[i]]), g.EntityNode(nodes[sg.targets[i]]),
                              EdgeKind::kRelatedTo, sg.weights[i], run.carried[i]});
    }
    // Paths: seed → (first-activating arcs) → entity → passage.
    for (const RankedPassage& rp : sa_ranked) {
      const uint32_t u0 = sc.passage_entity[rp.passage];
      out.subgraph.push_back({g.EntityNode(nodes[u0]), rp.passage, EdgeKind::kMentions,
                              rp.score - 1.0, run.activation[u0]});
      ExplanationPath path;
      path.passage = rp.passage;
      path.score = rp.score;
      path.nodes.push_back(rp.passage);
      uint32_t u = u0;
      for (size_t guard = 0; guard <= nodes.size(); ++guard) {
        path.nodes.push_back(g.EntityNode(nodes[u]));
        const uint32_t arc = run.first_arc[u];
        if (arc == SaRun::kNoArc) break;
        u = arc_source[arc];
      }
      std::reverse(path.nodes.begin(), path.nodes.end());
      out.paths.push_back(std::move(path));
    }
  }

  diag.iterations = run.steps;
  diag.candidates_scored = dstats.candidates_scored + pstats.candidates_scored;
  diag.nodes_touched = hop_entities + candidates.size();
  diag.edges_touched = entries_scanned + mention_entries;
  diag.extra["seeds"] = static_cast<double>(num_seeds);
  diag.extra["seeds_by_name"] = by_names ? 1 : 0;
  diag.extra["named_seeds"] = static_cast<double>(named_seeds);
  diag.extra["relative_scale"] = relative ? 1 : 0;
  diag.extra["subgraph_entities"] = static_cast<double>(hop_entities);
  diag.extra["sa_entities"] = static_cast<double>(nodes.size());
  diag.extra["subgraph_arcs"] = static_cast<double>(sg.num_arcs());
  diag.extra["positive_arcs"] = static_cast<double>(positive_arcs);
  diag.extra["relations_scored"] = static_cast<double>(relations_scored);
  diag.extra["relatedto_entries_scanned"] = static_cast<double>(entries_scanned);
  diag.extra["arc_updates"] = static_cast<double>(run.arc_updates);
  diag.extra["activated"] = static_cast<double>(activated.size());
  diag.extra["candidate_passages"] = static_cast<double>(candidates.size());
  diag.extra["passages_above_tau_d"] = static_cast<double>(above_tau_d);
  diag.extra["sa_passages"] = static_cast<double>(sa_ranked.size());
  diag.extra["dense_fill"] = static_cast<double>(filled);
  diag.extra["context_relations"] = static_cast<double>(out.context.size());
  diag.extra["truncated"] = truncated ? 1.0 : 0.0;
  diag.time_ms = MillisSince(start);
  return out;
}

}  // namespace flowrag
