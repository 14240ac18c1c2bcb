#include "retrieval/seeding.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>

#include "common/stopwatch.h"
#include "retrieval/fact_bm25.h"
#include "retrieval/local_facts.h"
#include "retrieval/query_index.h"
#include "retrieval/query_llm.h"

namespace flowrag {

// ---------------------------------------------------------------- keyword seeds

Result<std::vector<Seed>> SelectSeeds(const KnowledgeGraph& graph,
                                      const FloatMatrix& keyword_vectors,
                                      const SeedSelection& selection) {
  const size_t n = selection.n;
  const VectorIndex* index = graph.entity_index();
  if (index == nullptr) {
    return Status::FailedPrecondition("seed selection: the graph has no entity vectors");
  }
  if (keyword_vectors.rows > 0 && keyword_vectors.cols != index->Dimension()) {
    return Status::FailedPrecondition(
        "seed selection: keyword embeddings have " + std::to_string(keyword_vectors.cols) +
        " dimensions, the entity index has " + std::to_string(index->Dimension()));
  }
  std::unordered_map<uint32_t, Seed> best;
  const auto P = static_cast<double>(selection.num_passages > 0 ? selection.num_passages
                                                                : graph.num_passages());
  const double log_p = std::log1p(std::max(1.0, P));
  auto weight = [&](uint32_t entity) -> float {
    if (!selection.specificity) return 1.0f;
    const double df = std::max<uint32_t>(1, graph.EntityPassageCount(entity));
    return static_cast<float>(std::log1p(P / df) / log_p);
  };
  VectorSearchParams params;
  // With specificity the per-keyword top n by raw score need not contain the
  // top n by product: search deeper, then rank by the product.
  params.k = selection.specificity ? std::max<size_t>(n * 8, 256) : n;
  params.min_score = 1e-6f;
  for (size_t k = 0; k < keyword_vectors.rows; ++k) {
    for (const VectorHit& h : index->Search(keyword_vectors.row(k), params, nullptr)) {
      const float score = h.score * weight(h.id);
      auto [it, inserted] = best.try_emplace(h.id, Seed{h.id, score, static_cast<uint32_t>(k)});
      if (!inserted && score > it->second.score)
        it->second = {h.id, score, static_cast<uint32_t>(k)};
    }
  }
  for (uint32_t e : selection.named) {
    if (e < graph.num_entities()) best[e] = Seed{e, 1.0f, 0};
  }
  std::vector<Seed> seeds;
  seeds.reserve(best.size());
  for (const auto& [id, s] : best) seeds.push_back(s);
  auto better = [](const Seed& a, const Seed& b) {
    return a.score != b.score ? a.score > b.score : a.entity < b.entity;
  };
  if (seeds.size() > n) {
    std::partial_sort(seeds.begin(), seeds.begin() + static_cast<ptrdiff_t>(n), seeds.end(),
                      better);
    seeds.resize(n);
  } else {
    std::sort(seeds.begin(), seeds.end(), better);
  }
  if (!seeds.empty() && selection.min_ratio > 0) {
    const float cut = static_cast<float>(selection.min_ratio) * seeds.front().score;
    while (seeds.size() > 1 && seeds.back().score < cut) seeds.pop_back();
  }
  return seeds;
}

// ---------------------------------------------------------------- named entities

QueryKeywords QueryNames(const Snapshot& s, std::string_view query) {
  KeywordOptions ko;
  ko.spans = ko.phrases = ko.content_words = false;
  return ExtractKeywords(query, &GraphQueryIndex::For(s)->names(), ko);
}

// ---------------------------------------------------------------- fact seeds

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

Status ReadFactSearch(ParamReader& r, FactSearch* search) {
  std::string name = *search == FactSearch::kBm25 ? "bm25" : "vector";
  FLOWRAG_RETURN_IF_ERROR(r.Read(kFactSearchOption, &name));
  if (name == "vector") {
    *search = FactSearch::kVector;
  } else if (name == "bm25") {
    *search = FactSearch::kBm25;
  } else {
    return Status::InvalidArgument(std::string("option ") + kFactSearchOption + "=\"" + name +
                                   "\": expected vector or bm25");
  }
  return Status::Ok();
}

std::vector<uint32_t> NearFactTexts(const Snapshot& s, const LocalFacts& local,
                                    const std::string& query, const QueryScores& qs,
                                    size_t passages, std::span<const uint32_t> entities) {
  std::vector<uint32_t> near;
  for (const PassageWeight& w : PassagePrior(s, query, qs, PriorOptions{"hybrid", passages})) {
    near.push_back(w.passage);
  }
  return local.Candidates(*s.graph(), near, entities);
}

std::vector<FactHit> RetrieveFacts(const Snapshot& s, const std::string& query,
                                   const QueryScores& qs, size_t passages,
                                   std::span<const uint32_t> entities, const FactQuery& fq,
                                   size_t k, size_t* candidates_scored) {
  *candidates_scored = 0;
  const KnowledgeGraph* g = s.graph();
  if (g == nullptr || k == 0) return {};
  std::shared_ptr<const FactBm25> bm25;
  if (fq.search == FactSearch::kBm25) {
    bm25 = FactBm25::For(s);
    if (bm25 == nullptr) return {};
  }
  std::shared_ptr<const LocalFacts> local;
  if (passages > 0) local = LocalFacts::For(s);
  if (local != nullptr && (bm25 != nullptr || local->has_vectors())) {
    const std::vector<uint32_t> near = NearFactTexts(s, *local, query, qs, passages, entities);
    *candidates_scored = near.size();
    return bm25 != nullptr ? bm25->Best(near, fq.text, k) : local->Best(near, fq.vector, k);
  }
  if (bm25 != nullptr) return bm25->Search(fq.text, k, candidates_scored);
  const VectorIndex* index = g->fact_index();
  if (index == nullptr || index->Size() == 0) return {};
  VectorSearchParams params;
  params.k = k;
  params.min_score = 1e-9f;  // facts sharing nothing with the query are no evidence
  VectorSearchStats stats;
  std::vector<FactHit> hits;
  for (const VectorHit& h : index->Search(fq.vector, params, &stats)) {
    hits.push_back({h.id, static_cast<double>(h.score)});
  }
  *candidates_scored = stats.candidates_scored;
  return hits;
}

namespace {

// The LLM fact filter (query_llm.h LlmFilterFacts) over one triple per fact
// text (its first fact); a failing call keeps every fact.
FactFilter LlmFactFilter(const KnowledgeGraph& g, const std::string& query, ChatModel& chat,
                         size_t max_keep, RetrievalOutput* out) {
  return [&g, &query, &chat, max_keep,
          out](std::span<const FactHit> hits) -> Result<std::vector<size_t>> {
    std::vector<Triple> triples;
    for (const FactHit& h : hits) {
      const uint32_t f = g.FactsWithText(h.fact_text).front();
      triples.push_back(
          {std::string(g.EntityName(g.FactSubject(f))), std::string(g.FactRelation(f)),
           std::string(g.EntityName(g.FactObject(f)))});
    }
    auto kept = LlmFilterFacts(chat, query, triples, max_keep);
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

// Fact seeds from the facts RetrieveFacts finds for the query (local or
// global, by options.search).
Result<FactSeeds> FactSeedsOf(const Snapshot& s, const std::string& query, const QueryScores& qs,
                              const QueryKeywords& named, const FactSeedOptions& options,
                              const FactFilter& filter) {
  if (options.facts == 0 || options.seeds == 0) return FactSeeds{};
  const FactQuery fq{options.search, qs.query.row(0), query};
  size_t scored = 0;
  std::vector<FactHit> hits = RetrieveFacts(s, query, qs, options.local_passages,
                                            named.matched_entities, fq, options.facts, &scored);
  return SeedsFromHits(*s.graph(), std::move(hits), scored, options, filter);
}

// The entities the query names with a capitalised token join the seeds at
// best fact score / passage count, or keep their fact weight when higher.
// Proper names only: a phrase the query writes in lower case ("liver
// cancer", even where the graph's entity is "Liver Cancer") says less about
// where to start than the facts do; it still selects local facts.
void AddNameSeeds(const KnowledgeGraph& g, const QueryKeywords& named, bool normalized,
                  FactSeeds* fs) {
  const double best = normalized || fs->facts.empty() ? 1.0 : fs->facts.front().score;
  for (uint32_t e : named.proper_entities) {
    const double w = best / std::max<uint32_t>(1, g.EntityPassageCount(e));
    auto it = std::find_if(fs->seeds.begin(), fs->seeds.end(),
                           [&](const EntitySeed& sd) { return sd.entity == e; });
    if (it == fs->seeds.end()) {
      fs->seeds.push_back({e, w});
    } else {
      it->weight = std::max(it->weight, w);
    }
  }
  std::sort(fs->seeds.begin(), fs->seeds.end(), [](const EntitySeed& a, const EntitySeed& b) {
    return a.weight != b.weight ? a.weight > b.weight : a.entity < b.entity;
  });
  fs->named = named.proper_entities.size();
}

}  // namespace

Result<FactSeeds> SeedWalkFromFacts(const Snapshot& s, const std::string& query,
                                    const QueryScores& qs, const FactSeedOptions& options,
                                    ChatModel* chat, RetrievalOutput* out) {
  const KnowledgeGraph& g = *s.graph();
  FactFilter filter;
  if (chat != nullptr && options.fact_filter) {
    filter = LlmFactFilter(g, query, *chat, options.facts, out);
  }
  const QueryKeywords named = QueryNames(s, query);
  FLOWRAG_ASSIGN_OR_RETURN(FactSeeds fs, FactSeedsOf(s, query, qs, named, options, filter));
  for (const FactHit& f : fs.facts) out->keywords.emplace_back(g.FactTextOf(f.fact_text));
  out->diagnostics.candidates_scored = qs.candidates_scored + fs.candidates_scored;
  if (!options.name_seeds) return fs;
  AddNameSeeds(g, named, options.normalize_scores, &fs);
  out->diagnostics.extra["name_seeds"] = static_cast<double>(fs.named);
  return fs;
}

// ---------------------------------------------------------------- the fact-seeded reset

Result<FactReset> BuildFactReset(const Snapshot& s, const std::string& query, const QueryScores& qs,
                                 const FactResetOptions& o, ChatModel* chat, RetrievalOutput* out) {
  const auto start = SteadyClock::now();
  const KnowledgeGraph& g = *s.graph();
  FactSeedOptions fo;
  fo.facts = o.facts;
  fo.seeds = o.seeds;
  fo.name_seeds = o.name_seeds;
  fo.fact_filter = o.fact_filter;
  fo.normalize_scores = true;  // HippoRAG 2 normalises fact scores
  fo.local_passages = o.fact_passages;
  fo.search = o.search;
  FactReset reset;
  FLOWRAG_ASSIGN_OR_RETURN(reset.seeds, SeedWalkFromFacts(s, query, qs, fo, chat, out));
  out->diagnostics.extra["seeding_ms"] = MillisSince(start);
  if (reset.seeds.seeds.empty()) return reset;
  const auto t_prior = SteadyClock::now();
  const std::vector<PassageWeight> prior = PassagePrior(s, query, qs, o.prior);
  out->diagnostics.extra["prior_ms"] = MillisSince(t_prior);
  double entity_total = 0.0, prior_total = 0.0;
  for (const EntitySeed& e : reset.seeds.seeds) entity_total += e.weight;
  for (const PassageWeight& w : prior) prior_total += w.weight;
  // Entities share 1 − φ of the reset by weight, passages φ by prior (all
  // to the entities when no passage has a prior).
  const double share =
      prior_total > 0 ? (reset.seeds.named > 0 ? o.passage_share : o.unnamed_passage_share) : 0.0;
  for (const EntitySeed& e : reset.seeds.seeds) {
    reset.entries.push_back({g.EntityNode(e.entity), (1.0 - share) * e.weight / entity_total});
  }
  for (const PassageWeight& w : prior) {
    if (share > 0) reset.entries.push_back({w.passage, share * w.weight / prior_total});
  }
  reset.total = 1.0;
  return reset;
}

}  // namespace flowrag
