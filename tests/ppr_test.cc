// The HippoRAG 2 retriever ("ppr") on the demo corpus: walk rows, gold
// documents, solver agreement, determinism across runs and threads, option
// errors, the local fact channel and the passage prior. The solvers alone
// are checked in ppr_solver_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <thread>

#include "engine/engine_impl.h"
#include "flowrag/engine.h"
#include "graph_algo/ppr.h"
#include "nlohmann/json.hpp"
#include "retrieval/local_facts.h"
#include "retrieval/ppr_retriever.h"
#include "retrieval/query_scores.h"
#include "retrieval/seeding.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::TempDir;

// ---------------------------------------------------------------- retriever on the demo

const std::string kDemo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";

struct DemoQuestion {
  std::string id, question;
  std::vector<std::string> gold;
};

std::vector<DemoQuestion> LoadDemoQuestions() {
  std::vector<DemoQuestion> qs;
  std::ifstream in(std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo_questions.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    qs.push_back({j["id"], j["question"], j["gold_docs"].get<std::vector<std::string>>()});
  }
  return qs;
}

class PprDemoTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    auto e = Engine::Open(dir_->File("demo.db"));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value().release();
    auto r = engine_->Index({kDemo});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  static void TearDownTestSuite() {
    delete engine_;
    delete dir_;
  }
  static std::shared_ptr<const Snapshot> Snap() {
    return dynamic_cast<EngineImpl*>(engine_)->snapshot();
  }
  static Result<RetrievalOutput> Run(const std::string& q, size_t k,
                                     const std::map<std::string, std::string>& params = {}) {
    PprRetriever r;
    RetrievalRequest req;
    req.query = q;
    req.top_k = k;
    req.params = &params;
    req.explain = true;
    return r.Retrieve(*Snap(), req);
  }
  static TempDir* dir_;
  static Engine* engine_;
};
TempDir* PprDemoTest::dir_ = nullptr;
Engine* PprDemoTest::engine_ = nullptr;

TEST_F(PprDemoTest, WalkRowsAreStochastic) {
  auto snap = Snap();
  for (bool skip_synonyms : {false, true}) {
    WalkTransitions graph(snap->graph()->walk(), skip_synonyms);
    std::vector<Transition> row;
    for (uint32_t u = 0; u < graph.num_nodes(); ++u) {
      graph.Row(u, &row);
      EXPECT_LE(row.size(), graph.Degree(u));
      if (row.empty()) continue;
      double sum = 0;
      for (const Transition& t : row) {
        EXPECT_GT(t.prob, 0);
        if (skip_synonyms) {
          EXPECT_NE(t.tag, static_cast<uint8_t>(EdgeKind::kSynonym));
        }
        sum += t.prob;
      }
      EXPECT_NEAR(sum, 1.0, 1e-12) << "node " << u;
    }
  }
}

// The push over the walk graph's arrays is the generic push over its rows.
TEST_F(PprDemoTest, WalkPushEqualsTheGenericPush) {
  auto snap = Snap();
  const WalkGraph& walk = snap->graph()->walk();
  const WalkTransitions rows(walk);
  std::vector<NodeWeight> reset = {{0, 0.5}, {static_cast<uint32_t>(snap->num_passages()), 0.5}};
  PushOptions po;
  po.epsilon = 1e-8;
  PushSolver fast, generic;
  PprStats a, b;
  ASSERT_TRUE(fast.Solve(walk, reset, po, &a).ok());
  ASSERT_TRUE(generic.Solve(rows, reset, po, &b).ok());
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(a.edges_touched, b.edges_touched);
  for (uint32_t u = 0; u < walk.num_nodes(); ++u) EXPECT_NEAR(fast.Score(u), generic.Score(u), 1e-12);
}

// q02 is a three-document bridge question (plant → botanist → garden → town).
TEST_F(PprDemoTest, MultiHopQuestionFindsItsGoldDocuments) {
  auto qs = LoadDemoQuestions();
  ASSERT_FALSE(qs.empty());
  auto snap = Snap();
  double recall = 0;
  for (const DemoQuestion& q : qs) {
    auto out = Run(q.question, 5);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    std::set<std::string> got;
    for (const RankedPassage& p : out->ranked) got.emplace(snap->document_of(p.passage).external_id);
    size_t hit = 0;
    for (const std::string& d : q.gold) hit += got.count(d);
    recall += static_cast<double>(hit) / q.gold.size();
    if (q.id == "q02") {
      for (const std::string& d : q.gold) EXPECT_TRUE(got.count(d)) << d << ": " << q.question;
      // Graph output: seeds, scored nodes, a subgraph and one path per passage.
      EXPECT_FALSE(out->seeds.empty());
      EXPECT_FALSE(out->node_scores.empty());
      EXPECT_FALSE(out->subgraph.empty());
      ASSERT_EQ(out->paths.size(), out->ranked.size());
      for (const ExplanationPath& p : out->paths) {
        ASSERT_FALSE(p.nodes.empty());
        EXPECT_EQ(p.nodes.back(), p.passage);
      }
      EXPECT_GT(out->diagnostics.iterations, 0u);
      EXPECT_GT(out->diagnostics.edges_touched, 0u);
    }
  }
  recall /= qs.size();
  EXPECT_GE(recall, 0.8) << "mean Recall@5 over the demo questions";
}

TEST_F(PprDemoTest, PushAndPowerIterationRankAlike) {
  for (const DemoQuestion& q : LoadDemoQuestions()) {
    auto push = Run(q.question, 5, {{"ppr.epsilon", "1e-10"}});
    auto power = Run(q.question, 5, {{"ppr.solver", "power"}, {"ppr.tolerance", "1e-13"}});
    ASSERT_TRUE(push.ok() && power.ok());
    ASSERT_EQ(push->ranked.size(), power->ranked.size());
    for (size_t i = 0; i < push->ranked.size(); ++i) {
      EXPECT_NEAR(push->ranked[i].score, power->ranked[i].score, 1e-7) << q.id << " rank " << i;
    }
  }
}

std::vector<std::pair<uint32_t, double>> Ranking(const RetrievalOutput& o) {
  std::vector<std::pair<uint32_t, double>> v;
  for (const auto& r : o.ranked) v.push_back({r.passage, r.score});
  for (const auto& n : o.node_scores) v.push_back({n.node, n.score});
  return v;
}

TEST_F(PprDemoTest, DeterministicAcrossRunsAndThreads) {
  auto qs = LoadDemoQuestions();
  std::vector<std::vector<std::pair<uint32_t, double>>> expected;
  for (const auto& q : qs) {
    auto a = Run(q.question, 5), b = Run(q.question, 5);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(Ranking(*a), Ranking(*b)) << q.id;
    expected.push_back(Ranking(*a));
  }
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 3; ++rep) {
        for (size_t i = 0; i < qs.size(); ++i) {
          const size_t j = (i + t) % qs.size();
          auto out = Run(qs[j].question, 5);
          if (!out.ok() || Ranking(*out) != expected[j]) ++mismatches;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// The local fact channel scores its candidates as the global fact index
// does, up to its float16 rows (local_facts.h: a relative error of at most
// 2^-11 per value, 1e-3 of the score allowed here): its best facts are the
// index's best among the candidates, rank by rank within that error.
TEST_F(PprDemoTest, LocalFactsAgreeWithTheFactIndex) {
  auto snap = Snap();
  const KnowledgeGraph& g = *snap->graph();
  auto local = LocalFacts::For(*snap);
  ASSERT_NE(local, nullptr);
  for (const DemoQuestion& q : LoadDemoQuestions()) {
    auto qs = ScoreQuery(*snap, q.question);
    ASSERT_TRUE(qs.ok());
    std::vector<uint32_t> passages;
    for (uint32_t p = 0; p < std::min<size_t>(8, snap->num_passages()); ++p) passages.push_back(p);
    const std::vector<uint32_t> candidates = local->Candidates(g, passages, {});
    const std::set<uint32_t> allowed(candidates.begin(), candidates.end());
    const std::vector<FactHit> best = local->Best(candidates, qs->query.row(0), 5);
    VectorSearchParams params;
    params.k = 5;
    params.min_score = 1e-9f;
    params.filter = [&](uint32_t id) { return allowed.count(id) > 0; };
    const std::vector<VectorHit> ref = g.fact_index()->Search(qs->query.row(0), params, nullptr);
    ASSERT_EQ(best.size(), ref.size()) << q.question;
    params.k = candidates.size();
    std::map<uint32_t, float> exact;  // every candidate's float score
    for (const VectorHit& h : g.fact_index()->Search(qs->query.row(0), params, nullptr)) {
      exact[h.id] = h.score;
    }
    for (size_t i = 0; i < best.size(); ++i) {
      const double tolerance = 1e-3 * std::fabs(ref[i].score) + 1e-6;
      EXPECT_NEAR(best[i].score, ref[i].score, tolerance);  // the i-th best score
      ASSERT_TRUE(exact.count(best[i].fact_text));
      EXPECT_NEAR(best[i].score, exact[best[i].fact_text], tolerance);  // its own score
    }
    for (uint32_t t : candidates) {  // every candidate is stated by a chosen passage
      bool stated = false;
      for (uint32_t f : g.FactsWithText(t)) {
        for (uint32_t p : g.FactSources(f)) stated |= p < passages.size();
      }
      EXPECT_TRUE(stated) << t;
    }
  }
}

TEST_F(PprDemoTest, OptionsAreValidated) {
  auto bad = Run("who founded the festival", 5, {{"ppr.solver", "magic"}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  auto unknown = Run("who founded the festival", 5, {{"ppr.dampnig", "0.3"}});
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("ppr.dampnig"), std::string::npos);
  auto damping = Run("who founded the festival", 5, {{"ppr.damping", "1.5"}});
  EXPECT_EQ(damping.status().code(), StatusCode::kInvalidArgument);
  // A different damping changes the scores.
  auto a = Run("who founded the Lantern Tide Festival", 5);
  auto b = Run("who founded the Lantern Tide Festival", 5, {{"ppr.damping", "0.85"}});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->ranked.front().score, b->ranked.front().score);
}

// A sparse prior as one weight per passage.
std::vector<double> Spread(const std::vector<PassageWeight>& prior, size_t n) {
  std::vector<double> all(n, 0.0);
  for (size_t i = 0; i < prior.size(); ++i) {
    EXPECT_GT(prior[i].weight, 0.0);
    if (i > 0) {
      EXPECT_LT(prior[i - 1].passage, prior[i].passage);  // ascending, distinct
    }
    all.at(prior[i].passage) = prior[i].weight;
  }
  return all;
}

// The reference: every passage's score min-max normalised, the `top` best
// kept (ties by passage index).
std::vector<double> DensePriorReference(const std::vector<float>& scores, size_t top) {
  std::vector<double> prior = MinMaxNormalize(scores);
  if (top == 0 || top >= prior.size()) return prior;
  std::vector<std::pair<double, uint32_t>> order;
  for (uint32_t p = 0; p < prior.size(); ++p) order.push_back({-prior[p], p});
  std::sort(order.begin(), order.end());
  std::vector<double> kept(prior.size(), 0.0);
  for (size_t i = 0; i < top; ++i) kept[order[i].second] = prior[order[i].second];
  return kept;
}

TEST_F(PprDemoTest, PassagePriorSourcesAndSupport) {
  auto snap = Snap();
  const std::string q = "who founded the Lantern Tide Festival";
  auto qs = ScoreQuery(*snap, q);
  ASSERT_TRUE(qs.ok()) << qs.status().ToString();
  const size_t n = snap->num_passages();
  PriorOptions o;
  o.source = "dense";
  const std::vector<double> dense = Spread(PassagePrior(*snap, q, *qs, o), n);
  EXPECT_EQ(dense, MinMaxNormalize(qs->Cosines()));
  o.source = "bm25";
  const std::vector<double> bm25 = Spread(PassagePrior(*snap, q, *qs, o), n);
  // BM25's best passage is 1, and BM25 scores are independent of the embedder.
  EXPECT_EQ(*std::max_element(bm25.begin(), bm25.end()), 1.0);
  auto top = snap->bm25().Search(q, 1, Bm25Params{});
  ASSERT_FALSE(top.empty());
  EXPECT_EQ(bm25[top[0].doc], 1.0);
  // The same with the BM25 scores computed by ScoreQuery.
  auto lexical = ScoreQuery(*snap, q, /*lexical=*/true);
  ASSERT_TRUE(lexical.ok());
  EXPECT_EQ(Spread(PassagePrior(*snap, q, *lexical, o), n), bm25);
  o.source = "hybrid";
  const std::vector<double> hybrid = Spread(PassagePrior(*snap, q, *qs, o), n);
  for (size_t p = 0; p < hybrid.size(); ++p) {
    EXPECT_NEAR(hybrid[p], 0.5 * (dense[p] + bm25[p]), 1e-12);
  }
  // top = 3 keeps the three best, unchanged, and drops the rest.
  o.top = 3;
  const std::vector<PassageWeight> kept = PassagePrior(*snap, q, *qs, o);
  ASSERT_EQ(kept.size(), 3u);
  std::vector<double> sorted = hybrid;
  std::sort(sorted.rbegin(), sorted.rend());
  for (const PassageWeight& w : kept) {
    EXPECT_EQ(w.weight, hybrid[w.passage]);
    EXPECT_GE(w.weight, sorted[2]);
  }
  // Unknown sources are rejected by the retrievers' option parsing.
  auto bad = Run(q, 5, {{"ppr.prior", "tfidf"}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("ppr.prior"), std::string::npos);
  auto narrow = Run(q, 5, {{"ppr.prior_top", "3"}});
  ASSERT_TRUE(narrow.ok()) << narrow.status().ToString();
}

// An approximate index lists only its best passages (the others count as
// cosine 0): the sparse prior equals the dense computation over every
// passage, also when a listed cosine is negative (the unlisted passages'
// 0 then normalises above 0 and every passage carries weight).
TEST_F(PprDemoTest, SparsePriorEqualsTheDenseComputation) {
  auto snap = Snap();
  const std::string q = "who founded the Lantern Tide Festival";
  auto full = ScoreQuery(*snap, q);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  const size_t n = snap->num_passages();
  ASSERT_GT(n, 6u);
  auto by_passage = [](const PassageScore& a, const PassageScore& b) {
    return a.passage < b.passage;
  };
  PriorOptions o;
  o.source = "dense";
  for (bool negative : {false, true}) {
    QueryScores qs = *full;
    std::vector<PassageScore> best = qs.dense;
    std::sort(best.begin(), best.end(), [](const PassageScore& a, const PassageScore& b) {
      return a.score != b.score ? a.score > b.score : a.passage < b.passage;
    });
    best.resize(5);
    if (negative) best.back().score = -0.25f;
    std::sort(best.begin(), best.end(), by_passage);
    qs.dense = best;
    for (size_t top : {0, 2, 5, 9}) {
      o.top = top;
      const std::vector<PassageWeight> prior = PassagePrior(*snap, q, qs, o);
      EXPECT_EQ(Spread(prior, n), DensePriorReference(qs.Cosines(), top))
          << "negative " << negative << " top " << top;
      // Without a negative cosine the five listed passages (all above 0); with
      // one, every passage but that minimum.
      if (top == 0) {
        EXPECT_EQ(prior.size(), negative ? n - 1 : 5u);
      }
    }
  }
}

// Above EngineOptions::hnsw_threshold the passage index is approximate and
// lists its best kApproximateDenseScores passages; BM25 then lists its best
// as many too (ascending by passage), so a query's prior costs the same on
// any corpus. The BM25 prior still gives the best passage weight 1 and the
// others score / best, as over the full list.
TEST(ApproximateScoresTest, Bm25ListsItsBestAsManyAsTheApproximateIndex) {
  TempDir dir;
  for (size_t threshold : {size_t{1}, size_t{100000}}) {
    EngineOptions eo;
    eo.hnsw_threshold = threshold;
    eo.passage_ann = "hnsw";
    auto e = Engine::Open(dir.File("s" + std::to_string(threshold) + ".db"), eo);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    std::vector<DocumentInput> docs;
    for (int i = 0; i < 300; ++i) {  // every passage shares "harbour"
      DocumentInput d;
      d.id = "d" + std::to_string(i);
      d.text = "The harbour of town " + std::to_string(i) + " has";
      for (int w = 0; w < i % 11; ++w) d.text += " big";  // lengths differ
      d.text += " boats and " + std::string(i % 3 == 0 ? "harbour cranes." : "cranes.");
      docs.push_back(std::move(d));
    }
    ASSERT_TRUE((*e)->IndexDocuments(docs).ok());
    auto snap = dynamic_cast<EngineImpl*>(e->get())->snapshot();
    const std::string q = "harbour cranes";
    auto qs = ScoreQuery(*snap, q, /*lexical=*/true);
    ASSERT_TRUE(qs.ok()) << qs.status().ToString();
    const bool approximate = threshold == 1;
    EXPECT_EQ(qs->approximate, approximate);
    const size_t expected = approximate ? kApproximateDenseScores : 300;
    ASSERT_EQ(qs->bm25.size(), expected);
    EXPECT_EQ(qs->dense.size(), expected);
    std::vector<Bm25Hit> best = snap->bm25().Search(q, expected, Bm25Params{});
    std::sort(best.begin(), best.end(),
              [](const Bm25Hit& a, const Bm25Hit& b) { return a.doc < b.doc; });
    for (size_t i = 0; i < expected; ++i) {
      EXPECT_EQ(qs->bm25[i].passage, best[i].doc);
      EXPECT_EQ(qs->bm25[i].score, best[i].score);
    }
    PriorOptions o;
    o.source = "bm25";
    const std::vector<PassageWeight> prior = PassagePrior(*snap, q, *qs, o);
    // Min-max over the list; the unlisted passages' 0 is the minimum when
    // the list is cut, else the lowest listed score (which normalises to 0).
    const double top = snap->bm25().Search(q, 1, Bm25Params{})[0].score;
    double low = approximate ? 0.0 : top;
    for (const Bm25Hit& h : best) low = std::min<double>(low, h.score);
    EXPECT_EQ(prior.size(), std::count_if(best.begin(), best.end(),
                                          [&](const Bm25Hit& h) { return h.score > low; }));
    for (const PassageWeight& w : prior) {
      const auto it = std::find_if(best.begin(), best.end(),
                                   [&](const Bm25Hit& h) { return h.doc == w.passage; });
      ASSERT_NE(it, best.end());
      EXPECT_NEAR(w.weight, (it->score - low) / (top - low), 1e-6);
    }
  }
}

// On a real benchmark graph (offline extraction of hotpotqa-train), push and
// power iteration return the same top-5 passages.
TEST(PprBenchTest, PushMatchesPowerOnHotpotQa) {
  const std::string bench = std::string(FLOWRAG_SOURCE_DIR) + "/../shared/data/bench/hotpotqa-train";
  if (!std::filesystem::exists(bench + "/corpus.jsonl")) {
    GTEST_SKIP() << "benchmark data not found at " << bench;
  }
  TempDir dir;
  auto e = Engine::Open(dir.File("hotpot.db"));
  ASSERT_TRUE(e.ok());
  auto engine = std::move(e).value();
  ASSERT_TRUE(engine->Index({bench}).ok());
  auto snap = dynamic_cast<EngineImpl*>(engine.get())->snapshot();
  std::ifstream in(bench + "/questions.jsonl");
  std::string line;
  PprRetriever r;
  int n = 0;
  while (std::getline(in, line) && n < 20) {
    ++n;
    const std::string q = nlohmann::json::parse(line)["question"];
    std::map<std::string, std::string> push_p{{"ppr.epsilon", "1e-8"}},
        power_p{{"ppr.solver", "power"}};
    RetrievalRequest req{q, 5, &push_p};
    auto a = r.Retrieve(*snap, req);
    req.params = &power_p;
    auto b = r.Retrieve(*snap, req);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(a->ranked.size(), b->ranked.size());
    for (size_t i = 0; i < a->ranked.size(); ++i) {
      // Scores at equal ranks (robust to near-ties swapping places).
      EXPECT_NEAR(a->ranked[i].score, b->ranked[i].score, 2e-3 * b->ranked[i].score)
          << q << " rank " << i;
    }
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
