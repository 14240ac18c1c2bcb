// The fact channels on the demo store. BM25 (retrieval/fact_bm25.h,
// seeding.h FactSearch::kBm25): its scores against an independent BM25
// computed from the fact texts, the local channel's scores equal to the
// global search's bit for bit, seeding through it, the option, and the
// index persisted in the snapshot's segment and adopted in place equal to
// the one built. The vectors' float16 rows (retrieval/local_facts.h): their
// scores against the fact texts' float vectors rounded independently, and
// the passage lists exported and adopted equal to built.
#include "retrieval/fact_bm25.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/text.h"
#include "engine/engine_impl.h"
#include "flowrag/config.h"
#include "flowrag/engine.h"
#include "graph/snapshot_segment.h"
#include "retrieval/local_facts.h"
#include "retrieval/persistent_indexes.h"
#include "retrieval/query_scores.h"
#include "retrieval/seeding.h"
#include "segment/segment_arrays.h"
#include "snapshot_compare.h"
#include "test_util.h"
#include "vector/quantized.h"
#include "graph/graph_vectors.h"
#include "vector/half_rows_index.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::TempDir;
using namespace snapshot_compare;  // NOLINT(google-build-using-namespace): test helpers

const std::string kDemo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";

// Okapi BM25 straight from the definition (text/bm25_index.h's formula,
// k1 = 1.2, b = 0.75), in doubles, over every fact text: no postings, no
// term table.
class BruteBm25 {
 public:
  BruteBm25(const KnowledgeGraph& g, const TokenizerOptions& tokenizer) : tokenizer_(tokenizer) {
    double total = 0;
    for (uint32_t t = 0; t < g.num_fact_texts(); ++t) {
      std::map<std::string, int> tf;
      const std::vector<std::string> tokens = Tokenize(g.FactTextOf(t), tokenizer_);
      for (const std::string& w : tokens) ++tf[w];
      for (const auto& [w, n] : tf) ++df_[w];
      lengths_.push_back(tokens.size());
      total += static_cast<double>(tokens.size());
      tf_.push_back(std::move(tf));
    }
    avgdl_ = lengths_.empty() ? 1.0 : total / static_cast<double>(lengths_.size());
  }

  double Score(const std::string& query, uint32_t doc) const {
    std::set<std::string> terms;
    for (const std::string& w : Tokenize(query, tokenizer_)) terms.insert(w);
    const double n = static_cast<double>(tf_.size()), k1 = 1.2, b = 0.75;
    double score = 0;
    for (const std::string& w : terms) {
      auto it = tf_[doc].find(w);
      if (it == tf_[doc].end()) continue;
      const double df = df_.at(w), tf = it->second;
      const double idf = std::log(1.0 + (n - df + 0.5) / (df + 0.5));
      score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths_[doc] / avgdl_));
    }
    return score;
  }

  // Scores of every fact text, best first, ties by id.
  std::vector<std::pair<double, uint32_t>> Ranked(const std::string& query) const {
    std::vector<uint32_t> all(tf_.size());
    for (uint32_t t = 0; t < all.size(); ++t) all[t] = t;
    return Ranked(query, all);
  }
  // Scores of `docs`, best first, ties by id.
  std::vector<std::pair<double, uint32_t>> Ranked(const std::string& query,
                                                  const std::vector<uint32_t>& docs) const {
    std::vector<std::pair<double, uint32_t>> out;
    for (uint32_t d : docs) {
      const double s = Score(query, d);
      if (s > 0) out.push_back({s, d});
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    return out;
  }

 private:
  TokenizerOptions tokenizer_;
  std::vector<std::map<std::string, int>> tf_;
  std::map<std::string, int> df_;
  std::vector<size_t> lengths_;
  double avgdl_ = 1.0;
};

// `hits` are the brute force's best len(hits): each hit's score is its
// brute-force score (float sums: 1e-5 relative), rank by rank the same
// scores as the brute force's ranking (ties may order differently), and as
// many hits as the brute force finds up to k.
void ExpectSameAsBrute(const std::vector<FactHit>& hits,
                       const std::vector<std::pair<double, uint32_t>>& brute, const BruteBm25& ref,
                       const std::string& query, size_t k) {
  ASSERT_EQ(hits.size(), std::min(k, brute.size())) << query;
  for (size_t i = 0; i < hits.size(); ++i) {
    const double expected = ref.Score(query, hits[i].fact_text);
    EXPECT_NEAR(hits[i].score, expected, 1e-5 * expected) << query << " rank " << i;
    EXPECT_NEAR(hits[i].score, brute[i].first, 1e-5 * brute[i].first) << query << " rank " << i;
  }
}

// The same fact texts with the same scores, bit for bit.
void ExpectSameHits(const std::vector<FactHit>& a, const std::vector<FactHit>& b,
                    const std::string& query) {
  ASSERT_EQ(a.size(), b.size()) << query;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].fact_text, b[i].fact_text) << query;
    EXPECT_EQ(a[i].score, b[i].score) << query;
  }
}

class FactBm25Test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    auto e = Engine::Open(dir_->File("demo.db"));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value().release();
    ASSERT_TRUE(engine_->Index({kDemo}).ok());
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
    delete dir_;
  }
  static std::shared_ptr<const Snapshot> Snap() {
    return dynamic_cast<EngineImpl*>(engine_)->snapshot();
  }
  // Queries: the demo questions and a few fact texts' own words.
  static std::vector<std::string> Queries(const KnowledgeGraph& g) {
    std::vector<std::string> out = DemoQuestions();
    for (uint32_t t = 0; t < g.num_fact_texts(); t += std::max<size_t>(1, g.num_fact_texts() / 5)) {
      out.emplace_back(g.FactTextOf(t));
    }
    return out;
  }

  static TempDir* dir_;
  static Engine* engine_;
};
TempDir* FactBm25Test::dir_ = nullptr;
Engine* FactBm25Test::engine_ = nullptr;

TEST_F(FactBm25Test, SearchAgreesWithABruteForceBm25) {
  auto snap = Snap();
  const KnowledgeGraph& g = *snap->graph();
  auto index = FactBm25::For(*snap);
  ASSERT_NE(index, nullptr);
  ASSERT_GT(g.num_fact_texts(), 20u);
  EXPECT_EQ(index->index().num_docs(), g.num_fact_texts());
  const BruteBm25 ref(g, snap->bm25().tokenizer());
  for (const std::string& q : Queries(g)) {
    for (size_t k : {1, 5, 40}) {
      size_t scored = 0;
      const std::vector<FactHit> hits = index->Search(q, k, &scored);
      const auto brute = ref.Ranked(q);
      ExpectSameAsBrute(hits, brute, ref, q, k);
      EXPECT_EQ(scored, brute.size()) << q;  // the fact texts sharing a term
    }
  }
}

TEST_F(FactBm25Test, BestScoresCandidatesAsSearchDoes) {
  auto snap = Snap();
  const KnowledgeGraph& g = *snap->graph();
  auto index = FactBm25::For(*snap);
  ASSERT_NE(index, nullptr);
  const BruteBm25 ref(g, snap->bm25().tokenizer());
  for (const std::string& q : Queries(g)) {
    // Every third fact text, and ids past the end (never matched).
    std::vector<uint32_t> candidates;
    for (uint32_t t = 0; t < g.num_fact_texts(); t += 3) candidates.push_back(t);
    candidates.push_back(static_cast<uint32_t>(g.num_fact_texts()) + 7);
    const std::vector<FactHit> best = index->Best(candidates, q, 8);
    ExpectSameAsBrute(
        best, ref.Ranked(q, std::vector<uint32_t>(candidates.begin(), candidates.end() - 1)), ref,
        q, 8);
    // Bit for bit the scores of the whole-index search.
    std::map<uint32_t, float> all;
    for (const Bm25Hit& h : index->index().ScoreMatching(q, Bm25Params{})) all[h.doc] = h.score;
    for (const FactHit& h : best) {
      ASSERT_TRUE(all.count(h.fact_text)) << q;
      EXPECT_EQ(h.score, static_cast<double>(all[h.fact_text])) << q;
      EXPECT_EQ(h.fact_text % 3, 0u);
    }
  }
  EXPECT_TRUE(index->Best({}, "festival", 5).empty());
  EXPECT_TRUE(index->Best(std::vector<uint32_t>{0, 1, 2}, "", 5).empty());
}

// RetrieveFacts by BM25: globally the brute force's best, locally its best
// among the fact texts near the query; the vector search unchanged.
TEST_F(FactBm25Test, RetrieveFactsByBm25LocallyAndGlobally) {
  auto snap = Snap();
  const KnowledgeGraph& g = *snap->graph();
  const BruteBm25 ref(g, snap->bm25().tokenizer());
  auto local = LocalFacts::For(*snap);
  ASSERT_NE(local, nullptr);
  for (const std::string& q : DemoQuestions()) {
    auto qs = ScoreQuery(*snap, q);
    ASSERT_TRUE(qs.ok());
    const FactQuery bm25{FactSearch::kBm25, nullptr, q};
    size_t scored = 0;
    ExpectSameAsBrute(RetrieveFacts(*snap, q, *qs, 0, {}, bm25, 5, &scored), ref.Ranked(q), ref, q,
                      5);
    const std::vector<uint32_t> near = NearFactTexts(*snap, *local, q, *qs, 4, {});
    ExpectSameAsBrute(RetrieveFacts(*snap, q, *qs, 4, {}, bm25, 5, &scored), ref.Ranked(q, near),
                      ref, q, 5);
    EXPECT_EQ(scored, near.size());
    // The vector channel over the same candidates is LocalFacts::Best.
    const FactQuery vec{FactSearch::kVector, qs->query.row(0), {}};
    const std::vector<FactHit> a = RetrieveFacts(*snap, q, *qs, 4, {}, vec, 5, &scored);
    const std::vector<FactHit> b = local->Best(near, qs->query.row(0), 5);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].fact_text, b[i].fact_text);
  }
}

// The walks seed from the BM25 facts: the keywords they report are the
// fact texts RetrieveFacts finds.
TEST_F(FactBm25Test, WalksSeedFromTheBm25Facts) {
  auto snap = Snap();
  const KnowledgeGraph& g = *snap->graph();
  size_t seeded = 0;  // questions with a fact found
  for (const std::string& method : {"ppr", "qafd", "semflow"}) {
    auto r = MakeRetriever(method);
    ASSERT_TRUE(r.ok());
    for (const std::string& q : DemoQuestions()) {
      const std::map<std::string, std::string> params = {{"fact_search", "bm25"},
                                                         {method + ".fact_passages", "0"}};
      RetrievalRequest req;
      req.query = q;
      req.top_k = 5;
      req.params = &params;
      auto out = (*r)->Retrieve(*snap, req);
      ASSERT_TRUE(out.ok()) << method << ": " << out.status().ToString();
      auto qs = ScoreQuery(*snap, q);
      ASSERT_TRUE(qs.ok());
      size_t scored = 0;
      const std::vector<FactHit> hits =
          RetrieveFacts(*snap, q, *qs, 0, {}, FactQuery{FactSearch::kBm25, nullptr, q}, 5, &scored);
      seeded += hits.empty() ? 0 : 1;
      ASSERT_GE(out->keywords.size(), hits.size()) << method;
      for (size_t i = 0; i < hits.size(); ++i) {
        EXPECT_EQ(out->keywords[i], g.FactTextOf(hits[i].fact_text)) << method << ": " << q;
      }
    }
  }
  EXPECT_GE(seeded, 3 * DemoQuestions().size() / 2);
}

TEST_F(FactBm25Test, TheOptionIsSharedAndChecked) {
  auto snap = Snap();
  for (const std::string& method : {"ppr", "qafd", "semflow", "onehop"}) {
    auto r = MakeRetriever(method);
    ASSERT_TRUE(r.ok());
    RetrievalRequest req;
    req.query = "who founded the festival";
    req.top_k = 5;
    for (const char* value : {"vector", "bm25"}) {
      const std::map<std::string, std::string> params = {{"fact_search", value}};
      req.params = &params;
      EXPECT_TRUE((*r)->Retrieve(*snap, req).ok()) << method << " " << value;
    }
    const std::map<std::string, std::string> bad = {{"fact_search", "dense"}};
    req.params = &bad;
    auto out = (*r)->Retrieve(*snap, req);
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << method;
    EXPECT_NE(out.status().message().find("fact_search"), std::string::npos);
  }
  auto sa = MakeRetriever("sa");  // seeds from descriptions: no such option
  ASSERT_TRUE(sa.ok());
  const std::map<std::string, std::string> params = {{"fact_search", "bm25"}};
  RetrievalRequest req;
  req.query = "who founded the festival";
  req.params = &params;
  EXPECT_EQ((*sa)->Retrieve(*snap, req).status().code(), StatusCode::kInvalidArgument);
}

// LocalFacts scores with the graph's fact rows, the fact texts' vectors with
// each value rounded to float16: Best's scores are the dot products of those
// (computed here from the fact texts embedded again, in double) and within
// float16's error of the float ones; the ranking is theirs.
TEST_F(FactBm25Test, LocalFactRowsAreTheFactVectorsInFloat16) {
  auto snap = Snap();
  const KnowledgeGraph& g = *snap->graph();
  ASSERT_NE(dynamic_cast<const HalfRowsIndex*>(g.fact_index()), nullptr);
  std::vector<std::string> texts;
  for (uint32_t t = 0; t < g.num_fact_texts(); ++t) texts.emplace_back(g.FactTextOf(t));
  auto embedded = EmbedSparse(*snap->embedder(), texts);
  ASSERT_TRUE(embedded.ok());
  const SparseRows& rows = *embedded;
  auto local = LocalFacts::For(*snap);
  ASSERT_NE(local, nullptr);
  ASSERT_TRUE(local->has_vectors());
  std::vector<uint32_t> all(g.num_fact_texts());
  for (uint32_t t = 0; t < all.size(); ++t) all[t] = t;
  for (const std::string& q : DemoQuestions()) {
    auto qs = ScoreQuery(*snap, q);
    ASSERT_TRUE(qs.ok());
    const float* query = qs->query.row(0);
    const std::vector<FactHit> best = local->Best(all, query, all.size());
    ASSERT_FALSE(best.empty()) << q;
    std::map<uint32_t, double> rounded, exact, bound;
    for (uint32_t t = 0; t < rows.rows(); ++t) {
      for (uint64_t i = rows.offsets[t]; i < rows.offsets[t + 1]; ++i) {
        const double x = rows.values[i], qd = query[rows.dims[i]];
        rounded[t] += qd * HalfToFloat(FloatToHalf(rows.values[i]));
        exact[t] += qd * x;
        bound[t] += std::fabs(qd * x) * std::ldexp(1.0, -11);
      }
    }
    size_t positive = 0;
    for (const auto& [t, v] : rounded) positive += v > 1e-9 ? 1 : 0;
    EXPECT_EQ(best.size(), positive) << q;
    for (size_t i = 0; i < best.size(); ++i) {
      const uint32_t t = best[i].fact_text;
      EXPECT_NEAR(best[i].score, rounded[t], 1e-6) << q;
      EXPECT_NEAR(best[i].score, exact[t], bound[t] + 1e-6) << q;
      if (i > 0) EXPECT_GE(best[i - 1].score, best[i].score);
    }
  }
}

// LocalFacts persists only its passage lists (the rows are the graph's):
// adopted, they give the same candidates and scores; a fact text out of
// range is refused naming the array.
TEST_F(FactBm25Test, LocalFactsExportedAndAdoptedEqualBuilt) {
  auto snap = Snap();
  auto built = LocalFacts::For(*snap);
  ASSERT_NE(built, nullptr);
  MemoryArrays arrays;
  ASSERT_TRUE(built->ExportArrays(arrays).ok());
  EXPECT_TRUE(arrays.Has("lf.texts"));
  EXPECT_FALSE(arrays.Has("lf.halves"));
  auto adopted = LocalFacts::AdoptArrays(*snap, arrays);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  const KnowledgeGraph& g = *snap->graph();
  std::vector<uint32_t> passages(snap->num_passages());
  for (uint32_t p = 0; p < passages.size(); ++p) passages[p] = p;
  const std::vector<uint32_t> candidates = built->Candidates(g, passages, {});
  EXPECT_EQ(candidates, (*adopted)->Candidates(g, passages, {}));
  for (const std::string& q : DemoQuestions()) {
    auto qs = ScoreQuery(*snap, q);
    ASSERT_TRUE(qs.ok());
    ExpectSameHits(built->Best(candidates, qs->query.row(0), 10),
                   (*adopted)->Best(candidates, qs->query.row(0), 10), q);
  }
  std::span<std::byte> texts = arrays.MutableBytes("lf.texts");
  ASSERT_GE(texts.size(), 4u);
  const uint32_t beyond = static_cast<uint32_t>(g.num_fact_texts());
  std::memcpy(texts.data(), &beyond, 4);
  auto bad = LocalFacts::AdoptArrays(*snap, arrays);
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  EXPECT_NE(bad.status().message().find("lf.texts"), std::string::npos);
}

// flowrag.yaml sets the shared option from under any one method, under its
// own name, so every fact-seeded method reads it.
TEST_F(FactBm25Test, TheConfigSetsTheSharedOptionForEveryMethod) {
  const std::string path = dir_->File("flowrag.yaml");
  {
    std::ofstream out(path);
    out << "flowrag_config: 1\nmethods:\n  qafd: {fact_search: bm25, alpha: 20}\n";
  }
  auto config = LoadConfig(path);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const std::map<std::string, std::string> expected = {{"fact_search", "bm25"},
                                                       {"qafd.alpha", "20"}};
  EXPECT_EQ(config->method_options, expected);
  std::ofstream(path) << "flowrag_config: 1\nmethods:\n  sa: {fact_search: bm25}\n";
  EXPECT_FALSE(LoadConfig(path).ok());  // sa does not read it
}

TEST_F(FactBm25Test, ExportedAndAdoptedEqualsBuilt) {
  auto snap = Snap();
  auto built = FactBm25::For(*snap);
  ASSERT_NE(built, nullptr);
  MemoryArrays arrays;
  ASSERT_TRUE(built->ExportArrays(arrays).ok());
  for (std::string_view name : Bm25Index::ArrayNames()) {
    EXPECT_TRUE(arrays.Has("fb." + std::string(name))) << name;
    EXPECT_FALSE(arrays.Has(name)) << name;  // the passage index's names stay free
  }
  auto adopted = FactBm25::AdoptArrays(*snap, arrays);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_TRUE((*adopted)->index().borrowed());
  ExpectSameBm25(built->index(), (*adopted)->index());
  for (const std::string& q : Queries(*snap->graph())) {
    ExpectSameHits(built->Search(q, 10), (*adopted)->Search(q, 10), q);
  }
  // A posting past the last fact text is refused, naming the array.
  std::span<std::byte> docs = arrays.MutableBytes("fb.bm25.post_docs");
  ASSERT_GE(docs.size(), 4u);
  std::fill(docs.begin(), docs.begin() + 4, std::byte{0xff});
  auto bad = FactBm25::AdoptArrays(*snap, arrays);
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  EXPECT_NE(bad.status().message().find("fb.bm25.post_docs"), std::string::npos)
      << bad.status().message();
}

// The engine's segment keeps the index: a snapshot opened from it adopts it
// in place, equal to the one a snapshot from the rows builds, and answers
// with fact_search=bm25 as that one does.
TEST_F(FactBm25Test, TheSnapshotSegmentKeepsIt) {
  OpenStore s(dir_->File("demo.db"));
  SnapshotOptions so = s.Options(false);
  so.derived = PersistentQueryIndexes();
  auto rows = Snapshot::Build(*s.store, s.embedder, so);
  so.use_parts = true;
  SnapshotBuildStats stats;
  auto segment = Snapshot::Build(*s.store, s.embedder, so, &stats);
  ASSERT_TRUE(rows.ok() && segment.ok());
  ASSERT_NE((*segment)->segment(), nullptr) << "no segment beside the demo store";
  EXPECT_EQ(stats.parts[kSnapshotSegmentKind], PartState::kLoaded);
  auto built = FactBm25::For(**rows);
  auto adopted = FactBm25::For(**segment);
  ASSERT_NE(built, nullptr);
  ASSERT_NE(adopted, nullptr);
  EXPECT_FALSE(built->index().borrowed());
  EXPECT_TRUE(adopted->index().borrowed());
  EXPECT_TRUE((*segment)->DerivedErrors().empty()) << (*segment)->DerivedErrors().front();
  ExpectSameBm25(built->index(), adopted->index());
  for (const std::string& method : {"ppr", "qafd", "semflow", "onehop"}) {
    auto r = MakeRetriever(method);
    ASSERT_TRUE(r.ok());
    const std::map<std::string, std::string> params = {{"fact_search", "bm25"}};
    for (const std::string& q : DemoQuestions()) {
      RetrievalRequest req;
      req.query = q;
      req.top_k = 10;
      req.params = &params;
      auto x = (*r)->Retrieve(**rows, req);
      auto y = (*r)->Retrieve(**segment, req);
      ASSERT_TRUE(x.ok() && y.ok()) << method;
      ASSERT_EQ(x->ranked.size(), y->ranked.size()) << method;
      for (size_t i = 0; i < x->ranked.size(); ++i) {
        EXPECT_EQ(x->ranked[i].passage, y->ranked[i].passage) << method << ": " << q;
        EXPECT_EQ(x->ranked[i].score, y->ranked[i].score) << method << ": " << q;
      }
    }
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
