#include "retrieval/one_hop_retriever.h"

#include <algorithm>
#include <optional>
#include <cmath>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "common/stopwatch.h"
#include "retrieval/fact_seeds.h"
#include "retrieval/keywords.h"
#include "retrieval/local_facts.h"
#include "retrieval/query_llm.h"
#include "retrieval/seeds.h"

namespace flowrag {
namespace {

// Distinct RELATED_TO neighbours per entity (LightRAG's node degree on its
// merged, undirected graph), computed once per graph. Cached for the last
// few graphs by address and size fingerprint, as GraphQueryIndex does.
std::shared_ptr<const std::vector<uint32_t>> EntityDegrees(const KnowledgeGraph& g) {
  struct Entry {
    const KnowledgeGraph* graph;
    size_t nodes, entries;
    std::shared_ptr<const std::vector<uint32_t>> degrees;
  };
  static std::mutex mu;
  static std::vector<Entry> cache;
  const Csr& rel = g.Edges(EdgeKind::kRelatedTo);
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const Entry& e : cache) {
      if (e.graph == &g && e.nodes == g.num_nodes() && e.entries == rel.num_entries()) {
        return e.degrees;
      }
    }
  }
  auto degrees = std::make_shared<std::vector<uint32_t>>(g.num_entities(), 0);
  for (uint32_t e = 0; e < g.num_entities(); ++e) {
    const uint32_t node = g.EntityNode(e);
    uint32_t d = 0, last = 0xffffffffu;
    for (uint64_t j = rel.Begin(node); j < rel.End(node); ++j) {
      if (rel.targets[j] != last && rel.targets[j] != node) ++d;
      last = rel.targets[j];
    }
    (*degrees)[e] = d;
  }
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 4) cache.erase(cache.begin());
  cache.push_back({&g, g.num_nodes(), rel.num_entries(), degrees});
  return degrees;
}

// An entity pair (entity indexes, a < b).
struct Relation {
  uint32_t a = 0, b = 0;
  uint32_t rank = 0;    // edge degree
  uint32_t weight = 0;  // facts joining the pair
  uint64_t Key() const { return (static_cast<uint64_t>(a) << 32) | b; }
};

Relation MakeRelation(uint32_t x, uint32_t y) { return x < y ? Relation{x, y} : Relation{y, x}; }

// LightRAG's round-robin merge: a[0], b[0], a[1], b[1], ..., each item once
// (by key), the first occurrence kept.
template <typename T, typename KeyOf>
std::vector<T> RoundRobin(const std::vector<T>& a, const std::vector<T>& b, const KeyOf& key) {
  std::vector<T> out;
  std::unordered_set<uint64_t> seen;
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    if (i < a.size() && seen.insert(key(a[i])).second) out.push_back(a[i]);
    if (i < b.size() && seen.insert(key(b[i])).second) out.push_back(b[i]);
  }
  return out;
}

// Tokens of a context row, estimated at one per 4 bytes plus the JSON keys.
size_t RowTokens(size_t bytes) { return bytes / 4 + 10; }

// The passages a chunk list comes from, per item, with LightRAG's
// occurrence ordering: a passage is kept for the first item naming it;
// each item's passages ordered by how many items name them (stable).
std::vector<std::vector<uint32_t>> SortedChunks(std::vector<std::vector<uint32_t>> per_item,
                                                const std::unordered_set<uint32_t>& excluded,
                                                size_t num_passages) {
  // Per-thread occurrence counts by passage, cleared after use.
  thread_local std::vector<uint32_t> count;
  thread_local std::vector<uint32_t> touched;
  if (count.size() < num_passages) count.resize(num_passages, 0);
  touched.clear();
  for (auto& chunks : per_item) {
    std::vector<uint32_t> kept;
    for (uint32_t p : chunks) {
      if (excluded.count(p)) continue;
      if (count[p]++ == 0) {
        touched.push_back(p);
        kept.push_back(p);
      }
    }
    chunks = std::move(kept);
  }
  for (auto& chunks : per_item) {
    std::stable_sort(chunks.begin(), chunks.end(),
                     [&](uint32_t x, uint32_t y) { return count[x] > count[y]; });
  }
  for (uint32_t p : touched) count[p] = 0;
  per_item.erase(std::remove_if(per_item.begin(), per_item.end(),
                                [](const auto& c) { return c.empty(); }),
                 per_item.end());
  return per_item;
}

}  // namespace

std::vector<uint32_t> PickByWeightedPolling(const std::vector<std::vector<uint32_t>>& items,
                                            size_t max_chunks, size_t min_chunks) {
  std::vector<uint32_t> out;
  if (items.empty()) return out;
  const size_t n = items.size();
  if (n == 1) {
    const auto& c = items[0];
    out.assign(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(std::min(max_chunks, c.size())));
    return out;
  }
  std::vector<size_t> used(n, 0);
  size_t remaining = 0;
  for (size_t i = 0; i < n; ++i) {
    const double ratio = static_cast<double>(i) / static_cast<double>(n - 1);
    const double expected_d = static_cast<double>(max_chunks) -
                              ratio * (static_cast<double>(max_chunks) - static_cast<double>(min_chunks));
    const size_t expected = static_cast<size_t>(std::nearbyint(expected_d));  // round half to even, as Python
    const size_t actual = std::min(expected, items[i].size());
    out.insert(out.end(), items[i].begin(), items[i].begin() + static_cast<std::ptrdiff_t>(actual));
    used[i] = actual;
    remaining += expected - actual;
  }
  for (size_t r = 0; r < remaining; ++r) {
    bool allocated = false;
    for (size_t i = 0; i < n && !allocated; ++i) {
      if (used[i] < items[i].size()) {
        out.push_back(items[i][used[i]++]);
        allocated = true;
      }
    }
    if (!allocated) break;
  }
  return out;
}

Status OneHopOptions::Override(ParamReader& r) {
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.mode", &mode));
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.top_k", &top_k));
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.chunk_top_k", &chunk_top_k));
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.related_chunks", &related_chunks));
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.pick", &pick));
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.min_cosine", &min_cosine));
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.fact_passages", &fact_passages));
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.max_entity_tokens", &max_entity_tokens));
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.max_relation_tokens", &max_relation_tokens));
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.max_keywords", &max_keywords));
  FLOWRAG_RETURN_IF_ERROR(r.Read("onehop.llm", &llm));
  if (mode != "local" && mode != "global" && mode != "hybrid") {
    return Status::InvalidArgument("option onehop.mode=\"" + mode +
                                   "\": expected local, global or hybrid");
  }
  if (pick != "vector" && pick != "weight") {
    return Status::InvalidArgument("option onehop.pick=\"" + pick + "\": expected vector or weight");
  }
  if (top_k == 0) return Status::InvalidArgument("option onehop.top_k: expected >= 1");
  if (related_chunks == 0) {
    return Status::InvalidArgument("option onehop.related_chunks: expected >= 1");
  }
  if (!(min_cosine >= -1 && min_cosine <= 1)) {
    return Status::InvalidArgument("option onehop.min_cosine: expected -1..1");
  }
  return Status::Ok();
}

Result<RetrievalOutput> OneHopRetriever::Retrieve(const Snapshot& s,
                                                  const RetrievalRequest& r) const {
  const auto start = SteadyClock::now();
  std::optional<OneHopOptions> scratch;
  FLOWRAG_ASSIGN_OR_RETURN(const OneHopOptions* options, RequestOptions(r, &scratch));
  const OneHopOptions& o = *options;
  const KnowledgeGraph* gp = s.graph();
  if (gp == nullptr || gp->num_entities() == 0) {
    return Status::FailedPrecondition(
        "onehop: the store has no knowledge graph (run `flowrag index` with extraction first)");
  }
  const KnowledgeGraph& g = *gp;
  if (s.dense() == nullptr || g.entity_index() == nullptr) {
    return Status::FailedPrecondition(
        "onehop: the store has no passage or entity-name vectors (run `flowrag index` first)");
  }
  const uint32_t P = static_cast<uint32_t>(s.num_passages());
  RetrievalOutput out;
  RetrievalDiagnostics& diag = out.diagnostics;

  // ---- keywords: low-level (names, details) and high-level (themes)
  std::shared_ptr<const GraphQueryIndex> qi = GraphQueryIndex::For(s);
  KeywordOptions ko;
  ko.max_keywords = o.max_keywords;
  QueryKeywords qk =
      KeywordsForQuery(r.query, &qi->names(), ko, o.llm ? r.chat : nullptr, &diag);
  auto join = [](auto begin, auto end) {
    std::string s;
    for (auto it = begin; it != end; ++it) {
      if (!s.empty()) s += ", ";
      s += *it;
    }
    return s;
  };
  const auto mid = qk.keywords.begin() + static_cast<std::ptrdiff_t>(qk.low_level);
  std::string low = join(qk.keywords.begin(), mid), high = join(mid, qk.keywords.end());
  if (low.empty() && high.empty()) low = r.query;
  out.keywords = qk.keywords;
  const bool local = o.mode != "global" && !low.empty();
  const bool global = o.mode != "local" && !high.empty() && g.fact_index() != nullptr;
  FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix vecs, EmbedTexts(s, {low.empty() ? r.query : low,
                                                           high.empty() ? r.query : high}));
  if (vecs.cols != g.entity_index()->Dimension()) {
    return Status::FailedPrecondition("onehop: keyword embedding has " + std::to_string(vecs.cols) +
                                      " dimensions, the entity index has " +
                                      std::to_string(g.entity_index()->Dimension()));
  }
  VectorSearchStats vstats;
  size_t related_entries = 0, mention_entries = 0;
  const Csr& rel = g.Edges(EdgeKind::kRelatedTo);
  const Csr& men = g.Edges(EdgeKind::kMentions);
  std::shared_ptr<const std::vector<uint32_t>> degree_ptr;
  auto degree = [&](uint32_t e) {
    if (!degree_ptr) degree_ptr = EntityDegrees(g);
    return (*degree_ptr)[e];
  };

  const double keywords_ms = MillisSince(start);
  // ---- local: top entities, their one-hop relations by (edge degree, weight)
  std::vector<uint32_t> local_entities;
  std::unordered_map<uint32_t, double> cosine;  // entity → its cosine (local entities)
  std::vector<Relation> local_relations;
  if (local) {
    VectorSearchParams ep;
    ep.k = o.top_k;
    ep.min_score = static_cast<float>(o.min_cosine);
    for (const VectorHit& h : g.entity_index()->Search(vecs.row(0), ep, &vstats)) {
      local_entities.push_back(h.id);
      cosine[h.id] = h.score;
      out.seeds.push_back({g.EntityNode(h.id), h.score});
    }
    std::unordered_set<uint64_t> at;
    for (uint32_t e : local_entities) {
      const uint32_t node = g.EntityNode(e);
      for (uint64_t j = rel.Begin(node); j < rel.End(node);) {
        const uint32_t t = rel.targets[j];
        uint64_t end = j;
        while (end < rel.End(node) && rel.targets[end] == t) ++end;  // facts joining the pair
        related_entries += end - j;
        if (t != node) {
          Relation rl = MakeRelation(e, g.LocalIndex(t));
          rl.weight = static_cast<uint32_t>(end - j);
          if (at.insert(rl.Key()).second) local_relations.push_back(rl);
        }
        j = end;
      }
    }
    for (Relation& x : local_relations) x.rank = degree(x.a) + degree(x.b);
    std::stable_sort(local_relations.begin(), local_relations.end(),
                     [](const Relation& x, const Relation& y) {
                       return x.rank != y.rank ? x.rank > y.rank : x.weight > y.weight;
                     });
  }

  const double local_ms = MillisSince(start) - keywords_ms;
  // ---- global: relations by fact-text similarity, then their entities
  std::vector<Relation> global_relations;
  std::vector<uint32_t> global_entities;
  QueryScores qs;  // the query's passage cosines (and BM25 with the local channel)
  const bool local_channel = global && o.fact_passages > 0 && LocalFacts::For(s) != nullptr;
  if (o.pick == "vector" || local_channel) {
    FLOWRAG_ASSIGN_OR_RETURN(qs, ScoreQuery(s, r.query, /*lexical=*/local_channel));
    vstats.candidates_scored += qs.candidates_scored;
  }
  if (global) {
    // The fact texts closest to the keywords: among those of the best prior
    // passages and the named entities (retrieval/local_facts.h, as the walks
    // seed), or over the whole fact index.
    std::vector<FactHit> hits;
    if (local_channel) {
      std::shared_ptr<const LocalFacts> local = LocalFacts::For(s);
      std::vector<uint32_t> passages;
      for (const PassageWeight& w :
           PassagePrior(s, r.query, qs, PriorOptions{"hybrid", o.fact_passages})) {
        passages.push_back(w.passage);
      }
      const std::vector<uint32_t> candidates = local->Candidates(g, passages, qk.matched_entities);
      vstats.candidates_scored += candidates.size();
      for (const FactHit& h : local->Best(candidates, vecs.row(1), o.top_k)) {
        if (h.score >= o.min_cosine) hits.push_back(h);
      }
    } else {
      VectorSearchParams fp;
      fp.k = o.top_k;
      fp.min_score = static_cast<float>(o.min_cosine);
      for (const VectorHit& h : g.fact_index()->Search(vecs.row(1), fp, &vstats)) {
        hits.push_back({h.id, h.score});
      }
    }
    std::unordered_set<uint64_t> seen;
    for (const FactHit& h : hits) {
      for (uint32_t f : g.FactsWithText(h.fact_text)) {
        if (global_relations.size() >= o.top_k) break;
        if (g.FactSubject(f) == g.FactObject(f)) continue;
        Relation rl = MakeRelation(g.FactSubject(f), g.FactObject(f));
        if (seen.insert(rl.Key()).second) global_relations.push_back(rl);
      }
      if (global_relations.size() >= o.top_k) break;
    }
    std::unordered_set<uint32_t> seen_entities;
    for (const Relation& x : global_relations) {
      for (uint32_t e : {x.a, x.b}) {
        if (seen_entities.insert(e).second) global_entities.push_back(e);
      }
    }
  }

  const double global_ms = MillisSince(start) - keywords_ms - local_ms;
  // ---- round-robin merge (local first), deduplicated
  auto id = [](uint32_t x) { return static_cast<uint64_t>(x); };
  std::vector<uint32_t> entities = RoundRobin(local_entities, global_entities, id);
  std::vector<Relation> relations =
      RoundRobin(local_relations, global_relations, [](const Relation& x) { return x.Key(); });
  // ---- token budgets
  const Csr& describes = g.Edges(EdgeKind::kDescribes);
  auto description_bytes = [&](uint32_t e) -> size_t {
    const uint32_t node = g.EntityNode(e);
    if (describes.Degree(node) == 0) return 0;
    return g.DescriptionText(g.LocalIndex(describes.targets[describes.Begin(node)])).size();
  };
  // The facts joining a pair (RELATED_TO entries of a with target b).
  auto facts_of = [&](const Relation& x, std::vector<uint32_t>* facts) {
    facts->clear();
    const uint32_t na = g.EntityNode(x.a), nb = g.EntityNode(x.b);
    auto first = std::lower_bound(rel.targets.begin() + static_cast<std::ptrdiff_t>(rel.Begin(na)),
                                  rel.targets.begin() + static_cast<std::ptrdiff_t>(rel.End(na)), nb);
    for (auto it = first; it != rel.targets.begin() + static_cast<std::ptrdiff_t>(rel.End(na)) &&
                          *it == nb;
         ++it) {
      facts->push_back(rel.attrs[static_cast<size_t>(it - rel.targets.begin())]);
      ++related_entries;
    }
  };
  {
    size_t used = 0, keep = 0;
    for (; keep < entities.size(); ++keep) {
      const uint32_t e = entities[keep];
      used += RowTokens(g.EntityName(e).size() + g.EntityType(e).size() + description_bytes(e));
      if (used > o.max_entity_tokens) break;
    }
    entities.resize(keep);
  }
  std::vector<uint32_t> facts;
  {
    size_t used = 0, keep = 0;
    for (; keep < relations.size(); ++keep) {
      const Relation& x = relations[keep];
      facts_of(x, &facts);
      const size_t text = facts.empty() ? 0 : g.FactRelation(facts.front()).size();
      used += RowTokens(g.EntityName(x.a).size() + g.EntityName(x.b).size() + text);
      if (used > o.max_relation_tokens) break;
    }
    relations.resize(keep);
  }

  // ---- chunks from entities, then from relations (minus the entity chunks)
  std::unordered_map<uint32_t, uint32_t> chunk_entity;  // passage → entity it came from
  std::vector<std::vector<uint32_t>> per_entity;
  for (uint32_t e : entities) {
    const uint32_t node = g.EntityNode(e);
    std::vector<uint32_t> chunks;
    for (uint64_t j = men.Begin(node); j < men.End(node); ++j) {
      ++mention_entries;
      const uint32_t p = men.targets[j];
      if (p < P && (chunks.empty() || chunks.back() != p)) chunks.push_back(p);
    }
    for (uint32_t p : chunks) chunk_entity.try_emplace(p, e);
    per_entity.push_back(std::move(chunks));
  }
  std::unordered_map<uint32_t, size_t> chunk_relation;  // passage → relation it came from
  std::vector<std::vector<uint32_t>> per_relation;
  for (size_t i = 0; i < relations.size(); ++i) {
    facts_of(relations[i], &facts);
    std::vector<uint32_t> chunks;
    for (uint32_t f : facts) {
      for (uint32_t p : g.FactSources(f)) {
        if (p < P && std::find(chunks.begin(), chunks.end(), p) == chunks.end()) chunks.push_back(p);
      }
    }
    for (uint32_t p : chunks) chunk_relation.try_emplace(p, i);
    per_relation.push_back(std::move(chunks));
  }
  // The vector pick's cosines: the query's with every passage (fact_seeds.h
  // ScoreQuery, one scan shared with the other graph methods).
  auto pick = [&](const std::vector<std::vector<uint32_t>>& items) {
    if (o.pick == "weight") return PickByWeightedPolling(items, o.related_chunks, 1);
    // Vector: the best int(related_chunks · items / 2) by cosine, ties in
    // item order (SortedChunks lists each passage once).
    std::vector<std::pair<float, uint32_t>> all;  // (cosine, position)
    std::vector<uint32_t> order;
    for (const auto& c : items) {
      for (uint32_t p : c) {
        all.push_back({p < qs.num_passages ? qs.Cosine(p) : -1.0f,
                       static_cast<uint32_t>(order.size())});
        order.push_back(p);
      }
    }
    const size_t num = std::min(all.size(), o.related_chunks * items.size() / 2);
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(num), all.end(),
                      [](const auto& x, const auto& y) {
                        return x.first != y.first ? x.first > y.first : x.second < y.second;
                      });
    std::vector<uint32_t> picked;
    for (size_t i = 0; i < num; ++i) picked.push_back(order[all[i].second]);
    return picked;
  };
  const std::vector<uint32_t> entity_chunks = pick(SortedChunks(std::move(per_entity), {}, P));
  const std::unordered_set<uint32_t> entity_chunk_set(entity_chunks.begin(), entity_chunks.end());
  const std::vector<uint32_t> relation_chunks =
      pick(SortedChunks(std::move(per_relation), entity_chunk_set, P));

  std::vector<uint32_t> merged = RoundRobin(entity_chunks, relation_chunks, id);
  if (o.chunk_top_k > 0 && merged.size() > o.chunk_top_k) merged.resize(o.chunk_top_k);
  if (merged.size() > r.top_k) merged.resize(r.top_k);
  for (size_t i = 0; i < merged.size(); ++i) {
    out.ranked.push_back({merged[i], 1.0 / static_cast<double>(i + 1)});
  }

  // ---- outputs
  for (size_t i = 0; i < entities.size(); ++i) {
    auto it = cosine.find(entities[i]);
    const double score = it != cosine.end() ? it->second : 1.0 / static_cast<double>(i + 2);
    out.node_scores.push_back({g.EntityNode(entities[i]), score});
  }
  std::stable_sort(out.node_scores.begin(), out.node_scores.end(),
                   [](const NodeScore& a, const NodeScore& b) { return a.score > b.score; });
  if (r.explain) {
    for (const Relation& x : relations) {
      out.subgraph.push_back({g.EntityNode(x.a), g.EntityNode(x.b), EdgeKind::kRelatedTo,
                              static_cast<double>(x.weight), static_cast<double>(x.rank)});
    }
    for (const RankedPassage& rp : out.ranked) {
      ExplanationPath path;
      path.passage = rp.passage;
      path.score = rp.score;
      if (entity_chunk_set.count(rp.passage)) {
        path.nodes = {g.EntityNode(chunk_entity.at(rp.passage))};
      } else if (auto it = chunk_relation.find(rp.passage); it != chunk_relation.end()) {
        const Relation& x = relations[it->second];
        path.nodes = {g.EntityNode(x.a), g.EntityNode(x.b)};
      }
      path.nodes.push_back(rp.passage);
      out.paths.push_back(std::move(path));
    }
  }
  diag.candidates_scored = vstats.candidates_scored;
  diag.nodes_touched = entities.size() + chunk_entity.size() + chunk_relation.size();
  diag.edges_touched = related_entries + mention_entries;
  diag.extra["local_entities"] = static_cast<double>(local_entities.size());
  diag.extra["global_relations"] = static_cast<double>(global_relations.size());
  diag.extra["entities"] = static_cast<double>(entities.size());
  diag.extra["relations"] = static_cast<double>(relations.size());
  diag.extra["entity_chunks"] = static_cast<double>(entity_chunks.size());
  diag.extra["relation_chunks"] = static_cast<double>(relation_chunks.size());
  diag.extra["low_level_keywords"] = static_cast<double>(qk.low_level);
  diag.extra["high_level_keywords"] = static_cast<double>(qk.keywords.size() - qk.low_level);
  diag.extra["keywords_ms"] = keywords_ms;
  diag.extra["local_ms"] = local_ms;
  diag.extra["global_ms"] = global_ms;
  diag.time_ms = MillisSince(start);
  diag.extra["chunks_ms"] = diag.time_ms - keywords_ms - local_ms - global_ms;
  return out;
}

}  // namespace flowrag
