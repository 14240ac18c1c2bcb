#include "retrieval/fact_seeds.h"

#include "extract/entity_spans.h"
#include "retrieval/keywords.h"
#include "retrieval/local_facts.h"
#include "vector/flat_index.h"
#include "retrieval/query_llm.h"
#include "retrieval/seeds.h"

#include <algorithm>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>

namespace flowrag {
Result<FactSeeds> SeedsFromFacts(const KnowledgeGraph& g, const float* query,
                                 const FactSeedOptions& o, const FactFilter& filter) {
  const VectorIndex* index = g.fact_index();
  if (index == nullptr || index->Size() == 0) {
    return Status::FailedPrecondition(
        "fact seeds: the graph has no fact vectors (index with an extractor first)");
  }
  if (o.facts == 0 || o.seeds == 0) return FactSeeds{};
  VectorSearchParams params;
  params.k = o.facts;
  params.min_score = 1e-9f;  // facts sharing nothing with the query are no evidence
  VectorSearchStats stats;
  std::vector<FactHit> hits;
  for (const VectorHit& h : index->Search(query, params, &stats)) {
    hits.push_back({h.id, static_cast<double>(h.score)});
  }
  return SeedsFromHits(g, std::move(hits), stats.candidates_scored, o, filter);
}

Result<FactSeeds> SeedsFromHits(const KnowledgeGraph& g, std::vector<FactHit> hits,
                                size_t candidates_scored, const FactSeedOptions& o,
                                const FactFilter& filter) {
  FactSeeds out;
  out.facts = std::move(hits);
  out.candidates_scored = candidates_scored;
  if (!out.facts.empty() && filter) {
    FLOWRAG_ASSIGN_OR_RETURN(std::vector<size_t> kept, filter(out.facts));
    std::vector<FactHit> facts;
    for (size_t i : kept) {
      if (i < out.facts.size()) facts.push_back(out.facts[i]);
    }
    out.facts = std::move(facts);
  }
  if (out.facts.empty()) return out;
  if (o.normalize_scores) {
    const double top = out.facts.front().score;
    for (FactHit& f : out.facts) f.score /= top;
  }

  struct Acc {
    double sum = 0.0;
    uint32_t count = 0;
    uint32_t last_text = UINT32_MAX;  // counts an entity once per fact text
  };
  std::unordered_map<uint32_t, Acc> acc;
  std::vector<uint32_t> order;  // first-seen order, for a deterministic scan
  for (size_t i = 0; i < out.facts.size(); ++i) {
    const FactHit& hit = out.facts[i];
    if (hit.fact_text >= g.num_fact_texts()) continue;
    for (uint32_t f : g.FactsWithText(hit.fact_text)) {
      for (uint32_t e : {g.FactSubject(f), g.FactObject(f)}) {
        auto [it, inserted] = acc.try_emplace(e);
        if (inserted) order.push_back(e);
        Acc& a = it->second;
        if (a.last_text == static_cast<uint32_t>(i)) continue;
        a.last_text = static_cast<uint32_t>(i);
        const double freq = std::max<uint32_t>(1, g.EntityPassageCount(e));
        a.sum += hit.score / freq;
        ++a.count;
      }
    }
  }
  out.seeds.reserve(order.size());
  for (uint32_t e : order) {
    const Acc& a = acc[e];
    out.seeds.push_back({e, a.sum / a.count});
  }
  std::sort(out.seeds.begin(), out.seeds.end(), [](const EntitySeed& a, const EntitySeed& b) {
    return a.weight != b.weight ? a.weight > b.weight : a.entity < b.entity;
  });
  if (out.seeds.size() > o.seeds) out.seeds.resize(o.seeds);
  return out;
}

Result<QueryScores> ScoreQuery(const Snapshot& s, const std::string& query, bool lexical) {
  if (s.graph() == nullptr) {
    return Status::FailedPrecondition(
        "graph retrieval: the store has no knowledge graph (run `flowrag index` with an "
        "extractor first)");
  }
  if (s.dense() == nullptr || s.embedder() == nullptr) {
    return Status::FailedPrecondition(
        "graph retrieval: the store has no passage embeddings for the configured embedder "
        "(run `flowrag index` first)");
  }
  QueryScores out;
  FLOWRAG_ASSIGN_OR_RETURN(out.query, s.embedder()->Embed(std::span<const std::string>(&query, 1)));
  if (out.query.rows != 1 || out.query.cols != s.dense()->Dimension()) {
    return Status::FailedPrecondition("graph retrieval: query embedding has " +
                                      std::to_string(out.query.cols) +
                                      " dimensions, passage index has " +
                                      std::to_string(s.dense()->Dimension()));
  }
  const VectorIndex* facts = s.graph()->fact_index();
  if (facts != nullptr && facts->Dimension() != out.query.cols) {
    return Status::FailedPrecondition("graph retrieval: query embedding has " +
                                      std::to_string(out.query.cols) +
                                      " dimensions, fact index has " +
                                      std::to_string(facts->Dimension()));
  }
  out.passage_scores.assign(s.num_passages(), 0.0f);
  if (const auto* flat = dynamic_cast<const FlatIndex*>(s.dense());
      flat != nullptr && flat->Size() == s.num_passages()) {
    flat->ScoreAll(out.query.row(0), out.passage_scores);  // no ranking needed
    out.candidates_scored = flat->Size();
  } else {
    VectorSearchParams params;
    params.k = std::min(s.dense()->Size(), kApproximateDenseScores);
    VectorSearchStats stats;
    for (const VectorHit& h : s.dense()->Search(out.query.row(0), params, &stats)) {
      if (h.id < out.passage_scores.size()) out.passage_scores[h.id] = h.score;
    }
    out.candidates_scored = stats.candidates_scored;
  }
  if (lexical) out.bm25_scores = Bm25Scores(s, query);
  return out;
}

std::vector<double> MinMaxNormalize(const std::vector<float>& values) {
  std::vector<double> out(values.size(), 0.0);
  if (values.empty()) return out;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const double range = static_cast<double>(*hi) - *lo;
  if (!(range > 0)) return out;
  for (size_t i = 0; i < values.size(); ++i) out[i] = (values[i] - *lo) / range;
  return out;
}

Status PriorOptions::Override(ParamReader& r, const std::string& prefix) {
  FLOWRAG_RETURN_IF_ERROR(r.Read(prefix + ".prior", &source));
  FLOWRAG_RETURN_IF_ERROR(r.Read(prefix + ".prior_top", &top));
  if (source != "dense" && source != "bm25" && source != "hybrid") {
    return Status::InvalidArgument("option " + prefix + ".prior=\"" + source +
                                   "\": expected dense, bm25 or hybrid");
  }
  return Status::Ok();
}

std::vector<float> Bm25Scores(const Snapshot& s, const std::string& query) {
  std::vector<float> bm25(std::max(s.num_passages(), s.bm25().num_docs()), 0.0f);
  s.bm25().ScoreAll(query, Bm25Params{}, bm25);
  bm25.resize(s.num_passages());
  return bm25;
}

std::vector<double> PassagePrior(const Snapshot& s, const std::string& query,
                                 const QueryScores& qs, const PriorOptions& o) {
  std::vector<double> prior;
  if (o.source != "bm25") prior = MinMaxNormalize(qs.passage_scores);
  if (o.source != "dense") {
    std::vector<double> lexical = MinMaxNormalize(
        qs.bm25_scores.empty() ? Bm25Scores(s, query) : qs.bm25_scores);
    if (prior.empty()) {
      prior = std::move(lexical);
    } else {
      for (size_t p = 0; p < prior.size(); ++p) prior[p] = 0.5 * (prior[p] + lexical[p]);
    }
  }
  if (o.top > 0 && o.top < prior.size()) {
    std::vector<double> sorted = prior;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(o.top - 1),
                     sorted.end(), std::greater<double>());
    const double cut = sorted[o.top - 1];
    // Ties at the cut are broken by passage index, so exactly `top` stay.
    size_t above = 0;
    for (double v : prior) above += v > cut;
    size_t ties_left = o.top - above;
    for (double& v : prior) {
      if (v > cut) continue;
      if (v == cut && ties_left > 0) {
        --ties_left;
        continue;
      }
      v = 0.0;
    }
  }
  return prior;
}

Result<FactSeeds> SeedWalkFromFacts(const Snapshot& s, const std::string& query,
                                    const QueryScores& qs, const FactSeedOptions& options,
                                    ChatModel* chat, RetrievalOutput* out) {
  const KnowledgeGraph& g = *s.graph();
  FactFilter filter;
  if (chat != nullptr && options.fact_filter) {
    filter = [&](std::span<const FactHit> hits) -> Result<std::vector<size_t>> {
      std::vector<Triple> triples;  // one triple per fact text: its first fact
      for (const FactHit& h : hits) {
        const uint32_t f = g.FactsWithText(h.fact_text).front();
        triples.push_back({g.EntityName(g.FactSubject(f)), g.FactRelation(f),
                           g.EntityName(g.FactObject(f))});
      }
      auto kept = LlmFilterFacts(*chat, query, triples, options.facts);
      std::vector<size_t> all(hits.size());
      for (size_t i = 0; i < all.size(); ++i) all[i] = i;
      if (!kept.ok()) {
        out->diagnostics.extra["llm_fallback"] = 1;
        return all;
      }
      out->diagnostics.extra["facts_filtered_out"] = static_cast<double>(hits.size() - kept->size());
      return std::move(kept).value();
    };
  }
  KeywordOptions ko;
  ko.spans = ko.phrases = ko.content_words = false;
  const QueryKeywords named = ExtractKeywords(query, &GraphQueryIndex::For(s)->names(), ko);
  FactSeeds fs;
  std::shared_ptr<const LocalFacts> local;
  if (options.local_passages > 0) local = LocalFacts::For(s);
  if (local != nullptr) {
    std::vector<uint32_t> passages;
    const PriorOptions near{"hybrid", options.local_passages};
    const std::vector<double> prior = PassagePrior(s, query, qs, near);
    for (uint32_t p = 0; p < prior.size(); ++p) {
      if (prior[p] > 0) passages.push_back(p);
    }
    const std::vector<uint32_t> candidates =
        local->Candidates(g, passages, named.matched_entities);
    if (options.facts > 0 && options.seeds > 0) {
      FLOWRAG_ASSIGN_OR_RETURN(fs, SeedsFromHits(g, local->Best(candidates, qs.query.row(0),
                                                                 options.facts),
                                                 candidates.size(), options, filter));
    }
  } else if (g.fact_index() != nullptr) {
    FLOWRAG_ASSIGN_OR_RETURN(fs, SeedsFromFacts(g, qs.query.row(0), options, filter));
  }
  for (const FactHit& f : fs.facts) out->keywords.push_back(g.FactTextOf(f.fact_text));
  out->diagnostics.candidates_scored = qs.candidates_scored + fs.candidates_scored;
  if (!options.name_seeds) return fs;

  // Proper names only: a phrase the query writes in lower case ("liver
  // cancer", even where the graph's entity is "Liver Cancer") says less
  // about where to start than the facts do; it still selects local facts.
  const double best =
      options.normalize_scores || fs.facts.empty() ? 1.0 : fs.facts.front().score;
  for (uint32_t e : named.proper_entities) {
    const double w = best / std::max<uint32_t>(1, g.EntityPassageCount(e));
    auto it = std::find_if(fs.seeds.begin(), fs.seeds.end(),
                           [&](const EntitySeed& sd) { return sd.entity == e; });
    if (it == fs.seeds.end()) {
      fs.seeds.push_back({e, w});
    } else {
      it->weight = std::max(it->weight, w);
    }
  }
  std::sort(fs.seeds.begin(), fs.seeds.end(), [](const EntitySeed& a, const EntitySeed& b) {
    return a.weight != b.weight ? a.weight > b.weight : a.entity < b.entity;
  });
  fs.named = named.proper_entities.size();
  out->diagnostics.extra["name_seeds"] = static_cast<double>(fs.named);
  return fs;
}

void RankDenseFallback(const QueryScores& qs, size_t top_k, RetrievalOutput* out) {
  std::vector<RankedPassage> all;
  all.reserve(qs.passage_scores.size());
  for (uint32_t p = 0; p < qs.passage_scores.size(); ++p) all.push_back({p, qs.passage_scores[p]});
  const size_t k = std::min(top_k, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(),
                    [](const RankedPassage& a, const RankedPassage& b) {
                      return a.score != b.score ? a.score > b.score : a.passage < b.passage;
                    });
  all.resize(k);
  out->ranked = std::move(all);
  out->diagnostics.extra["fallback_dense"] = 1;
}

}  // namespace flowrag
