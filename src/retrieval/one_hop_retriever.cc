#include "retrieval/one_hop_retriever.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <unordered_map>

#include "retrieval/keywords.h"
#include "retrieval/query_llm.h"
#include "retrieval/seeds.h"

namespace flowrag {

Status OneHopOptions::Override(ParamReader& r) {
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.seeds", &seeds));
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.neighbor_weight", &neighbor_weight));
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.max_neighbors", &max_neighbors));
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.max_keywords", &max_keywords));
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.seed_ratio", &seed_ratio));
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.llm", &llm));
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.seed_specificity", &seed_specificity));
  if (!(seed_ratio >= 0 && seed_ratio <= 1)) {
    return Status::InvalidArgument("option onehop.seed_ratio: expected 0 <= r <= 1");
  }
  if (seeds == 0) return Status::InvalidArgument("option onehop.seeds: expected >= 1");
  if (neighbor_weight < 0) {
    return Status::InvalidArgument("option onehop.neighbor_weight: expected >= 0");
  }
  return Status::Ok();
}

Result<RetrievalOutput> OneHopRetriever::Retrieve(const Snapshot& s,
                                                  const RetrievalRequest& r) const {
  const auto start = std::chrono::steady_clock::now();
  ParamReader reader(r.params);
  OneHopOptions o;
  FLOWRAG_RETURN_IF_ERROR(o.Override(reader));
  FLOWRAG_RETURN_IF_ERROR(reader.CheckAllUsed(Name()));
  const KnowledgeGraph* g = s.graph();
  if (g == nullptr || g->num_entities() == 0) {
    return Status::FailedPrecondition(
        "onehop: the store has no knowledge graph (run `flowrag index` with extraction first)");
  }
  std::shared_ptr<const GraphQueryIndex> qi = GraphQueryIndex::For(s);
  KeywordOptions ko;
  ko.max_keywords = o.max_keywords;
  RetrievalOutput out;
  QueryKeywords qk =
      KeywordsForQuery(r.query, &qi->names(), ko, o.llm ? r.chat : nullptr, &out.diagnostics);
  out.keywords = std::move(qk.keywords);
  if (out.keywords.empty()) out.keywords.push_back(r.query);
  FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix kw, EmbedTexts(s, out.keywords));
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<Seed> seeds, SelectSeeds(*g, kw, SeedSelection{o.seeds, o.seed_ratio, o.seed_specificity, qk.matched_entities}));

  // Entity node → (score contribution, node it came from).
  struct Reach {
    double score = 0;
    uint32_t from = UINT32_MAX;  // the seed for a neighbour; itself for a seed
    bool seed = false;
  };
  std::unordered_map<uint32_t, Reach> reached;
  for (const Seed& sd : seeds) {
    const uint32_t v = g->EntityNode(sd.entity);
    out.seeds.push_back({v, sd.score});
    reached[v] = {sd.score, v, true};
  }
  const Csr& rel = g->Edges(EdgeKind::kRelatedTo);
  size_t edges = 0;
  std::vector<std::pair<uint32_t, uint32_t>> counts;  // (neighbour, facts)
  for (const Seed& sd : seeds) {
    const uint32_t v = g->EntityNode(sd.entity);
    counts.clear();
    for (uint64_t i = rel.Begin(v); i < rel.End(v); ++i) {
      ++edges;
      if (!counts.empty() && counts.back().first == rel.targets[i]) {
        ++counts.back().second;
      } else {
        counts.push_back({rel.targets[i], 1});
      }
    }
    if (counts.size() > o.max_neighbors) {
      std::partial_sort(counts.begin(), counts.begin() + static_cast<ptrdiff_t>(o.max_neighbors),
                        counts.end(), [](const auto& a, const auto& b) {
                          return a.second != b.second ? a.second > b.second : a.first < b.first;
                        });
      counts.resize(o.max_neighbors);
    }
    for (const auto& [n, c] : counts) {
      Reach& rc = reached[n];
      if (rc.seed) continue;
      if (sd.score > rc.score) rc = {sd.score, v, false};
      out.subgraph.push_back({v, n, EdgeKind::kRelatedTo, static_cast<double>(c), sd.score});
    }
  }

  struct PassageScore {
    double score = 0;
    uint32_t best_entity = UINT32_MAX;
    double best = -1;
    double best_seed = 0, best_neighbor = 0;
    uint32_t count = 0;
  };
  std::unordered_map<uint32_t, PassageScore> ps;
  const Csr& m = g->Edges(EdgeKind::kMentions);
  for (const auto& [v, rc] : reached) {
    const double contribution = rc.seed ? rc.score : o.neighbor_weight * rc.score;
    for (uint64_t i = m.Begin(v); i < m.End(v); ++i) {
      PassageScore& p = ps[m.targets[i]];
      const double c = contribution * (1.0 + std::log(std::max(1.0f, m.weights[i])));
      if (rc.seed) p.best_seed = std::max(p.best_seed, c);
      else p.best_neighbor = std::max(p.best_neighbor, c);
      ++p.count;
      if (contribution > p.best || (contribution == p.best && v < p.best_entity)) {
        p.best = contribution;
        p.best_entity = v;
      }
      ++edges;
    }
  }
  for (const auto& [v, rc] : reached) {
    out.node_scores.push_back({v, rc.seed ? rc.score : o.neighbor_weight * rc.score});
  }
  std::sort(out.node_scores.begin(), out.node_scores.end(), [](const NodeScore& a, const NodeScore& b) {
    return a.score != b.score ? a.score > b.score : a.node < b.node;
  });
  for (auto& [p, sc] : ps) sc.score = sc.best_seed + sc.best_neighbor + 1e-3 * sc.count;
  std::vector<std::pair<uint32_t, PassageScore>> ranked(ps.begin(), ps.end());
  auto better = [](const auto& a, const auto& b) {
    return a.second.score != b.second.score ? a.second.score > b.second.score : a.first < b.first;
  };
  const size_t k = std::min(r.top_k, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<ptrdiff_t>(k), ranked.end(), better);
  ranked.resize(k);
  for (const auto& [p, sc] : ranked) {
    out.ranked.push_back({p, sc.score});
    ExplanationPath path;
    path.passage = p;
    path.score = sc.score;
    const Reach& rc = reached[sc.best_entity];
    if (!rc.seed) path.nodes.push_back(rc.from);
    path.nodes.push_back(sc.best_entity);
    path.nodes.push_back(p);
    out.paths.push_back(std::move(path));
  }
  out.diagnostics.candidates_scored = ps.size();
  out.diagnostics.nodes_touched = reached.size() + ps.size();
  out.diagnostics.edges_touched = edges;
  out.diagnostics.extra["seeds"] = static_cast<double>(seeds.size());
  out.diagnostics.time_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace flowrag
