#include "retrieval/one_hop_retriever.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "common/stopwatch.h"
#include "retrieval/fact_bm25.h"
#include "retrieval/keywords.h"
#include "retrieval/local_facts.h"
#include "retrieval/query_index.h"
#include "retrieval/query_llm.h"
#include "retrieval/query_scores.h"
#include "retrieval/seeding.h"

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
  per_item.erase(
      std::remove_if(per_item.begin(), per_item.end(), [](const auto& c) { return c.empty(); }),
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
    const double expected_d =
        static_cast<double>(max_chunks) -
        ratio * (static_cast<double>(max_chunks) - static_cast<double>(min_chunks));
    const size_t expected =
        static_cast<size_t>(std::nearbyint(expected_d));  // round half to even, as Python
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
  FLOWRAG_RETURN_IF_ERROR(ReadFactSearch(r, &fact_search));
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
    return Status::InvalidArgument("option onehop.pick=\"" + pick +
                                   "\": expected vector or weight");
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

namespace {

// One query's state, built up step by step.
struct OneHopQuery {
  OneHopQuery(const Snapshot& snapshot, const OneHopOptions& options,
              const RetrievalRequest& request)
      : s(snapshot),
        g(*snapshot.graph()),
        o(options),
        r(request),
        rel(g.Edges(EdgeKind::kRelatedTo)),
        men(g.Edges(EdgeKind::kMentions)),
        num_passages(static_cast<uint32_t>(snapshot.num_passages())) {}

  // Distinct RELATED_TO neighbours of entity e (computed once per graph).
  uint32_t Degree(uint32_t e) {
    if (!degrees) degrees = EntityDegrees(g);
    return (*degrees)[e];
  }

  // The facts joining a pair (RELATED_TO entries of a with target b).
  void FactsOf(const Relation& x, std::vector<uint32_t>* facts) {
    facts->clear();
    const uint32_t na = g.EntityNode(x.a), nb = g.EntityNode(x.b);
    const auto begin = rel.targets.begin();
    const auto last = begin + static_cast<std::ptrdiff_t>(rel.End(na));
    for (auto it = std::lower_bound(begin + static_cast<std::ptrdiff_t>(rel.Begin(na)), last, nb);
         it != last && *it == nb; ++it) {
      facts->push_back(rel.attrs[static_cast<size_t>(it - begin)]);
      ++related_entries;
    }
  }

  const Snapshot& s;
  const KnowledgeGraph& g;
  const OneHopOptions& o;
  const RetrievalRequest& r;
  const Csr& rel;
  const Csr& men;
  const uint32_t num_passages;
  std::shared_ptr<const std::vector<uint32_t>> degrees;
  // keywords
  QueryKeywords qk;
  bool local = false, global = false;
  FloatMatrix vecs;  // row 0: low-level keywords, row 1: high-level
  std::string high;  // the high-level keywords joined (the BM25 fact search's query)
  QueryScores qs;    // the query's passage cosines (and BM25 with the local channel)
  VectorSearchStats vstats;
  size_t related_entries = 0, mention_entries = 0;
  // local and global modes
  std::vector<uint32_t> local_entities, global_entities;
  std::unordered_map<uint32_t, double> cosine;  // entity → its cosine (local entities)
  std::vector<Relation> local_relations, global_relations;
  // merged within the token budgets
  std::vector<uint32_t> entities;
  std::vector<Relation> relations;
  // chunks
  std::unordered_map<uint32_t, uint32_t> chunk_entity;  // passage → entity it came from
  std::unordered_map<uint32_t, size_t> chunk_relation;  // passage → relation it came from
  std::vector<uint32_t> entity_chunks, relation_chunks;
  std::unordered_set<uint32_t> entity_chunk_set;
};

Status CheckGraph(const Snapshot& s) {
  const KnowledgeGraph* g = s.graph();
  if (g == nullptr || g->num_entities() == 0) {
    return Status::FailedPrecondition(
        "onehop: the store has no knowledge graph (run `flowrag index` with extraction first)");
  }
  if (s.dense() == nullptr || g->entity_index() == nullptr) {
    return Status::FailedPrecondition(
        "onehop: the store has no passage or entity-name vectors (run `flowrag index` first)");
  }
  return Status::Ok();
}

std::string JoinKeywords(std::vector<std::string>::const_iterator begin,
                         std::vector<std::string>::const_iterator end) {
  std::string s;
  for (auto it = begin; it != end; ++it) {
    if (!s.empty()) s += ", ";
    s += *it;
  }
  return s;
}

// Low-level (names, details) and high-level (themes) keywords, each list
// joined and embedded as one text; the query stands in for an empty list.
Status EmbedKeywords(OneHopQuery& q, RetrievalOutput* out) {
  KeywordOptions ko;
  ko.max_keywords = q.o.max_keywords;
  q.qk = KeywordsForQuery(q.r.query, &GraphQueryIndex::For(q.s)->names(), ko,
                          q.o.llm ? q.r.chat : nullptr, &out->diagnostics);
  const auto mid = q.qk.keywords.cbegin() + static_cast<std::ptrdiff_t>(q.qk.low_level);
  std::string low = JoinKeywords(q.qk.keywords.cbegin(), mid);
  const std::string high = JoinKeywords(mid, q.qk.keywords.cend());
  if (low.empty() && high.empty()) low = q.r.query;
  out->keywords = q.qk.keywords;
  q.local = q.o.mode != "global" && !low.empty();
  const bool fact_texts_searchable = q.o.fact_search == FactSearch::kBm25
                                         ? FactBm25::For(q.s) != nullptr
                                         : q.g.fact_index() != nullptr;
  q.global = q.o.mode != "local" && !high.empty() && fact_texts_searchable;
  q.high = high;
  FLOWRAG_ASSIGN_OR_RETURN(
      q.vecs, EmbedTexts(q.s, {low.empty() ? q.r.query : low, high.empty() ? q.r.query : high}));
  if (q.vecs.cols != q.g.entity_index()->Dimension()) {
    return Status::FailedPrecondition(
        "onehop: keyword embedding has " + std::to_string(q.vecs.cols) +
        " dimensions, the entity index has " + std::to_string(q.g.entity_index()->Dimension()));
  }
  return Status::Ok();
}

// Local mode: the top entities by name, their one-hop relations by (edge
// degree, weight).
void LocalMode(OneHopQuery& q, RetrievalOutput* out) {
  if (!q.local) return;
  const KnowledgeGraph& g = q.g;
  VectorSearchParams ep;
  ep.k = q.o.top_k;
  ep.min_score = static_cast<float>(q.o.min_cosine);
  for (const VectorHit& h : g.entity_index()->Search(q.vecs.row(0), ep, &q.vstats)) {
    q.local_entities.push_back(h.id);
    q.cosine[h.id] = h.score;
    out->seeds.push_back({g.EntityNode(h.id), h.score});
  }
  std::unordered_set<uint64_t> at;
  for (uint32_t e : q.local_entities) {
    const uint32_t node = g.EntityNode(e);
    for (uint64_t j = q.rel.Begin(node); j < q.rel.End(node);) {
      const uint32_t t = q.rel.targets[j];
      uint64_t end = j;
      while (end < q.rel.End(node) && q.rel.targets[end] == t) ++end;  // facts joining the pair
      q.related_entries += end - j;
      if (t != node) {
        Relation rl = MakeRelation(e, g.LocalIndex(t));
        rl.weight = static_cast<uint32_t>(end - j);
        if (at.insert(rl.Key()).second) q.local_relations.push_back(rl);
      }
      j = end;
    }
  }
  for (Relation& x : q.local_relations) x.rank = q.Degree(x.a) + q.Degree(x.b);
  std::stable_sort(q.local_relations.begin(), q.local_relations.end(),
                   [](const Relation& x, const Relation& y) {
                     return x.rank != y.rank ? x.rank > y.rank : x.weight > y.weight;
                   });
}

// The fact texts closest to the high-level keywords: among those near the
// query (seeding.h RetrieveFacts, as the walks seed), or over the whole fact
// index; by cosine (at least min_cosine) or, with fact_search=bm25, by BM25
// (every fact text sharing a word: a BM25 score has no scale a cosine
// threshold would mean anything on).
std::vector<FactHit> GlobalFactHits(OneHopQuery& q, bool local_channel) {
  const FactQuery fq{q.o.fact_search, q.vecs.row(1), q.high};
  size_t scored = 0;
  std::vector<FactHit> hits =
      RetrieveFacts(q.s, q.r.query, q.qs, local_channel ? q.o.fact_passages : 0,
                    q.qk.matched_entities, fq, q.o.top_k, &scored);
  q.vstats.candidates_scored += scored;
  if (q.o.fact_search == FactSearch::kVector) {
    std::erase_if(hits, [&](const FactHit& h) { return h.score < q.o.min_cosine; });
  }
  return hits;
}

// Global mode: relations by fact-text similarity (the first top_k pairs),
// then their entities. Scores the query's passages first when the vector
// pick or the local channel reads them.
Status GlobalMode(OneHopQuery& q) {
  const std::shared_ptr<const LocalFacts> near =
      q.global && q.o.fact_passages > 0 ? LocalFacts::For(q.s) : nullptr;
  const bool local_channel =
      near != nullptr && (q.o.fact_search == FactSearch::kBm25 || near->has_vectors());
  if (q.o.pick == "vector" || local_channel) {
    FLOWRAG_ASSIGN_OR_RETURN(q.qs, ScoreQuery(q.s, q.r.query, /*lexical=*/local_channel));
    q.vstats.candidates_scored += q.qs.candidates_scored;
  }
  if (!q.global) return Status::Ok();
  const KnowledgeGraph& g = q.g;
  std::unordered_set<uint64_t> seen;
  for (const FactHit& h : GlobalFactHits(q, local_channel)) {
    for (uint32_t f : g.FactsWithText(h.fact_text)) {
      if (q.global_relations.size() >= q.o.top_k) break;
      if (g.FactSubject(f) == g.FactObject(f)) continue;
      Relation rl = MakeRelation(g.FactSubject(f), g.FactObject(f));
      if (seen.insert(rl.Key()).second) q.global_relations.push_back(rl);
    }
    if (q.global_relations.size() >= q.o.top_k) break;
  }
  std::unordered_set<uint32_t> seen_entities;
  for (const Relation& x : q.global_relations) {
    for (uint32_t e : {x.a, x.b}) {
      if (seen_entities.insert(e).second) q.global_entities.push_back(e);
    }
  }
  return Status::Ok();
}

// Round-robin merge (local first), deduplicated, then cut to LightRAG's
// token budgets.
void MergeWithinBudgets(OneHopQuery& q) {
  const KnowledgeGraph& g = q.g;
  q.entities = RoundRobin(q.local_entities, q.global_entities,
                          [](uint32_t x) { return static_cast<uint64_t>(x); });
  q.relations =
      RoundRobin(q.local_relations, q.global_relations, [](const Relation& x) { return x.Key(); });
  const Csr& describes = g.Edges(EdgeKind::kDescribes);
  auto description_bytes = [&](uint32_t e) -> size_t {
    const uint32_t node = g.EntityNode(e);
    if (describes.Degree(node) == 0) return 0;
    return g.DescriptionText(g.LocalIndex(describes.targets[describes.Begin(node)])).size();
  };
  size_t used = 0, keep = 0;
  for (; keep < q.entities.size(); ++keep) {
    const uint32_t e = q.entities[keep];
    used += RowTokens(g.EntityName(e).size() + g.EntityType(e).size() + description_bytes(e));
    if (used > q.o.max_entity_tokens) break;
  }
  q.entities.resize(keep);
  std::vector<uint32_t> facts;
  used = 0;
  for (keep = 0; keep < q.relations.size(); ++keep) {
    const Relation& x = q.relations[keep];
    q.FactsOf(x, &facts);
    const size_t text = facts.empty() ? 0 : g.FactRelation(facts.front()).size();
    used += RowTokens(g.EntityName(x.a).size() + g.EntityName(x.b).size() + text);
    if (used > q.o.max_relation_tokens) break;
  }
  q.relations.resize(keep);
}

// The vector pick: the best int(related_chunks · items / 2) by cosine, ties
// in item order (SortedChunks lists each passage once); or the weighted
// polling.
std::vector<uint32_t> PickChunks(const OneHopQuery& q,
                                 const std::vector<std::vector<uint32_t>>& items) {
  if (q.o.pick == "weight") return PickByWeightedPolling(items, q.o.related_chunks, 1);
  std::vector<std::pair<float, uint32_t>> all;  // (cosine, position)
  std::vector<uint32_t> order;
  for (const auto& c : items) {
    for (uint32_t p : c) {
      all.push_back(
          {p < q.qs.num_passages ? q.qs.Cosine(p) : -1.0f, static_cast<uint32_t>(order.size())});
      order.push_back(p);
    }
  }
  const size_t num = std::min(all.size(), q.o.related_chunks * items.size() / 2);
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(num), all.end(),
                    [](const auto& x, const auto& y) {
                      return x.first != y.first ? x.first > y.first : x.second < y.second;
                    });
  std::vector<uint32_t> picked;
  for (size_t i = 0; i < num; ++i) picked.push_back(order[all[i].second]);
  return picked;
}

// Chunks from the kept entities (the passages mentioning them), then from
// the kept relations (the passages stating their facts) minus the entity
// chunks, each picked.
void PickEntityAndRelationChunks(OneHopQuery& q) {
  std::vector<std::vector<uint32_t>> per_entity;
  for (uint32_t e : q.entities) {
    const uint32_t node = q.g.EntityNode(e);
    std::vector<uint32_t> chunks;
    for (uint64_t j = q.men.Begin(node); j < q.men.End(node); ++j) {
      ++q.mention_entries;
      const uint32_t p = q.men.targets[j];
      if (p < q.num_passages && (chunks.empty() || chunks.back() != p)) chunks.push_back(p);
    }
    for (uint32_t p : chunks) q.chunk_entity.try_emplace(p, e);
    per_entity.push_back(std::move(chunks));
  }
  std::vector<std::vector<uint32_t>> per_relation;
  std::vector<uint32_t> facts;
  for (size_t i = 0; i < q.relations.size(); ++i) {
    q.FactsOf(q.relations[i], &facts);
    std::vector<uint32_t> chunks;
    for (uint32_t f : facts) {
      for (uint32_t p : q.g.FactSources(f)) {
        if (p < q.num_passages && std::find(chunks.begin(), chunks.end(), p) == chunks.end()) {
          chunks.push_back(p);
        }
      }
    }
    for (uint32_t p : chunks) q.chunk_relation.try_emplace(p, i);
    per_relation.push_back(std::move(chunks));
  }
  q.entity_chunks = PickChunks(q, SortedChunks(std::move(per_entity), {}, q.num_passages));
  q.entity_chunk_set.insert(q.entity_chunks.begin(), q.entity_chunks.end());
  q.relation_chunks =
      PickChunks(q, SortedChunks(std::move(per_relation), q.entity_chunk_set, q.num_passages));
}

// Entity and relation chunks round-robin, at most chunk_top_k, then the
// request's top_k (score 1/rank); node scores: the kept entities, by cosine
// for local ones, then in relation order.
void RankChunks(OneHopQuery& q, RetrievalOutput* out) {
  std::vector<uint32_t> merged = RoundRobin(q.entity_chunks, q.relation_chunks,
                                            [](uint32_t x) { return static_cast<uint64_t>(x); });
  if (q.o.chunk_top_k > 0 && merged.size() > q.o.chunk_top_k) merged.resize(q.o.chunk_top_k);
  if (merged.size() > q.r.top_k) merged.resize(q.r.top_k);
  for (size_t i = 0; i < merged.size(); ++i) {
    out->ranked.push_back({merged[i], 1.0 / static_cast<double>(i + 1)});
  }
  for (size_t i = 0; i < q.entities.size(); ++i) {
    auto it = q.cosine.find(q.entities[i]);
    const double score = it != q.cosine.end() ? it->second : 1.0 / static_cast<double>(i + 2);
    out->node_scores.push_back({q.g.EntityNode(q.entities[i]), score});
  }
  std::stable_sort(out->node_scores.begin(), out->node_scores.end(),
                   [](const NodeScore& a, const NodeScore& b) { return a.score > b.score; });
}

// With explain: the kept relations as the subgraph; a path entity →
// passage, or entity → entity → passage for a relation chunk.
void Explain(const OneHopQuery& q, RetrievalOutput* out) {
  const KnowledgeGraph& g = q.g;
  for (const Relation& x : q.relations) {
    out->subgraph.push_back({g.EntityNode(x.a), g.EntityNode(x.b), EdgeKind::kRelatedTo,
                             static_cast<double>(x.weight), static_cast<double>(x.rank)});
  }
  for (const RankedPassage& rp : out->ranked) {
    ExplanationPath path;
    path.passage = rp.passage;
    path.score = rp.score;
    if (q.entity_chunk_set.count(rp.passage)) {
      path.nodes = {g.EntityNode(q.chunk_entity.at(rp.passage))};
    } else if (auto it = q.chunk_relation.find(rp.passage); it != q.chunk_relation.end()) {
      const Relation& x = q.relations[it->second];
      path.nodes = {g.EntityNode(x.a), g.EntityNode(x.b)};
    }
    path.nodes.push_back(rp.passage);
    out->paths.push_back(std::move(path));
  }
}

void AddDiagnostics(const OneHopQuery& q, RetrievalOutput* out) {
  RetrievalDiagnostics& diag = out->diagnostics;
  diag.candidates_scored = q.vstats.candidates_scored;
  diag.nodes_touched = q.entities.size() + q.chunk_entity.size() + q.chunk_relation.size();
  diag.edges_touched = q.related_entries + q.mention_entries;
  diag.extra["local_entities"] = static_cast<double>(q.local_entities.size());
  diag.extra["global_relations"] = static_cast<double>(q.global_relations.size());
  diag.extra["entities"] = static_cast<double>(q.entities.size());
  diag.extra["relations"] = static_cast<double>(q.relations.size());
  diag.extra["entity_chunks"] = static_cast<double>(q.entity_chunks.size());
  diag.extra["relation_chunks"] = static_cast<double>(q.relation_chunks.size());
  diag.extra["low_level_keywords"] = static_cast<double>(q.qk.low_level);
  diag.extra["high_level_keywords"] = static_cast<double>(q.qk.keywords.size() - q.qk.low_level);
}

}  // namespace

Result<RetrievalOutput> OneHopRetriever::Retrieve(const Snapshot& s,
                                                  const RetrievalRequest& r) const {
  const auto start = SteadyClock::now();
  std::optional<OneHopOptions> scratch;
  FLOWRAG_ASSIGN_OR_RETURN(const OneHopOptions* options, RequestOptions(r, &scratch));
  FLOWRAG_RETURN_IF_ERROR(CheckGraph(s));
  OneHopQuery q(s, *options, r);
  RetrievalOutput out;
  FLOWRAG_RETURN_IF_ERROR(EmbedKeywords(q, &out));
  const double keywords_ms = MillisSince(start);
  LocalMode(q, &out);
  const double local_ms = MillisSince(start) - keywords_ms;
  FLOWRAG_RETURN_IF_ERROR(GlobalMode(q));
  const double global_ms = MillisSince(start) - keywords_ms - local_ms;
  MergeWithinBudgets(q);
  PickEntityAndRelationChunks(q);
  RankChunks(q, &out);
  if (r.explain) Explain(q, &out);
  AddDiagnostics(q, &out);
  RetrievalDiagnostics& diag = out.diagnostics;
  diag.extra["keywords_ms"] = keywords_ms;
  diag.extra["local_ms"] = local_ms;
  diag.extra["global_ms"] = global_ms;
  diag.time_ms = MillisSince(start);
  diag.extra["chunks_ms"] = diag.time_ms - keywords_ms - local_ms - global_ms;
  return out;
}

}  // namespace flowrag
