// The "semflow" retriever (retrieval/semflow_retriever.h): its options, and
// on the demo corpus rows that sum to one with the 0.9 / 0.1 split, the
// reset mass, push vs power iteration, determinism across runs and threads
// and named entities as seeds. The transition alone is checked in
// semflow_transition_test.cc.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <set>
#include <thread>

#include "engine/engine_impl.h"
#include "flowrag/engine.h"
#include "graph_algo/ppr.h"
#include "nlohmann/json.hpp"
#include "retrieval/seeding.h"
#include "retrieval/semflow_retriever.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::TempDir;

TEST(SemFlowOptionsTest, OverridesAndValidation) {
  std::map<std::string, std::string> p{{"semflow.lambda", "0.5"},
                                       {"semflow.down_share", "0.7"},
                                       {"semflow.direction", "false"},
                                       {"semflow.facts", "8"},
                                       {"semflow.seeds", "10"},
                                       {"semflow.passage_prior", "0.1"},
                                       {"semflow.query_similarity", "off"},
                                       {"semflow.abstractness_penalty", "no"},
                                       {"semflow.weights", "softmax"},
                                       {"semflow.entity_share", "edges"},
                                       {"semflow.relevance", "global"},
                                       {"semflow.prior_top", "7"}};
  ParamReader r(&p);
  SemFlowOptions o;
  ASSERT_TRUE(o.Override(r).ok());
  EXPECT_TRUE(r.CheckAllUsed("semflow").ok());
  EXPECT_EQ(o.lambda, 0.5);
  EXPECT_EQ(o.down_share, 0.7);
  EXPECT_FALSE(o.direction);
  EXPECT_EQ(o.facts, 8u);
  EXPECT_EQ(o.seeds, 10u);
  EXPECT_EQ(o.passage_prior, 0.1);
  EXPECT_FALSE(o.query_similarity);
  EXPECT_FALSE(o.abstractness_penalty);
  EXPECT_EQ(o.weights, "softmax");
  EXPECT_EQ(o.entity_share, "edges");
  EXPECT_EQ(o.relevance, "global");
  EXPECT_EQ(o.prior.top, 7u);
  for (auto bad : std::vector<std::pair<std::string, std::string>>{{"semflow.down_share", "1.5"},
                                                                   {"semflow.reset", "0"},
                                                                   {"semflow.lambda", "-1"},
                                                                   {"semflow.solver", "x"},
                                                                   {"semflow.direction", "maybe"},
                                                                   {"semflow.weights", "exp"},
                                                                   {"semflow.entity_share", "all"},
                                                                   {"semflow.relevance", "x"},
                                                                   {"semflow.floor", "0"}}) {
    std::map<std::string, std::string> q{bad};
    ParamReader rr(&q);
    SemFlowOptions oo;
    EXPECT_EQ(oo.Override(rr).code(), StatusCode::kInvalidArgument) << bad.first;
  }
}

// ---------------------------------------------------------------- demo corpus

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

class SemFlowDemoTest : public ::testing::Test {
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
                                     const std::map<std::string, std::string>& params = {},
                                     bool explain = false) {
    SemFlowRetriever r;
    RetrievalRequest req;
    req.query = q;
    req.top_k = k;
    req.params = &params;
    req.explain = explain;
    return r.Retrieve(*Snap(), req);
  }
  static TempDir* dir_;
  static Engine* engine_;
};
TempDir* SemFlowDemoTest::dir_ = nullptr;
Engine* SemFlowDemoTest::engine_ = nullptr;

TEST_F(SemFlowDemoTest, RowsOfTheRealGraphAreStochasticWithTheDownShare) {
  auto snap = Snap();
  const KnowledgeGraph& g = *snap->graph();
  const std::vector<double> rel(g.num_entities(), 0.5);
  SemFlowOptions o;
  SemFlowTransitions t(g, {}, rel, o.Transition());
  std::vector<Transition> row;
  size_t mixed = 0;
  for (uint32_t u = 0; u < t.num_nodes(); ++u) {
    t.Row(u, &row);
    if (row.empty()) continue;
    double sum = 0, down = 0, up = 0;
    for (const Transition& x : row) {
      sum += x.prob;
      if (x.target < g.num_passages() || u < g.num_passages()) continue;
      const double dv = g.Abstractness(x.target - g.num_passages());
      const double du = g.Abstractness(u - g.num_passages());
      (dv > du ? up : down) += x.prob;
    }
    EXPECT_NEAR(sum, 1.0, 1e-12) << u;
    if (up > 0 && down > 0) {
      ++mixed;
      EXPECT_NEAR(down / (down + up), 0.9, 1e-12) << u;
    }
  }
  EXPECT_GT(mixed, 10u);
}

TEST_F(SemFlowDemoTest, ResetMassAndGoldDocuments) {
  auto snap = Snap();
  double recall = 0;
  auto qs = LoadDemoQuestions();
  for (const DemoQuestion& q : qs) {
    auto out = Run(q.question, 5);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const auto& x = out->diagnostics.extra;
    ASSERT_TRUE(x.count("reset_entity_mass")) << q.id;
    EXPECT_NEAR(x.at("reset_entity_mass") + x.at("reset_passage_mass"), 1.0, 1e-12);
    double seeds = 0;
    for (const NodeScore& s : out->seeds) seeds += s.score;
    EXPECT_NEAR(seeds, x.at("reset_entity_mass"), 1e-12);
    EXPECT_LE(out->seeds.size(), 20u);
    std::set<std::string> got;
    for (const RankedPassage& p : out->ranked) got.emplace(snap->document_of(p.passage).external_id);
    size_t hit = 0;
    for (const std::string& d : q.gold) hit += got.count(d);
    recall += static_cast<double>(hit) / q.gold.size();
    // Paths and the subgraph only when asked for (RetrievalRequest::explain);
    // the ranking is the same either way.
    EXPECT_TRUE(out->paths.empty());
    EXPECT_TRUE(out->subgraph.empty());
    EXPECT_FALSE(out->node_scores.empty());
    if (q.id == "q02") {  // three-document bridge question
      for (const std::string& d : q.gold) EXPECT_TRUE(got.count(d)) << d;
      auto explained = Run(q.question, 5, {}, /*explain=*/true);
      ASSERT_TRUE(explained.ok());
      ASSERT_EQ(explained->ranked.size(), out->ranked.size());
      for (size_t i = 0; i < out->ranked.size(); ++i) {
        EXPECT_EQ(explained->ranked[i].passage, out->ranked[i].passage);
      }
      ASSERT_EQ(explained->paths.size(), explained->ranked.size());
      EXPECT_FALSE(explained->subgraph.empty());
    }
  }
  EXPECT_GE(recall / qs.size(), 0.8);
  // A larger passage prior moves reset mass to passages.
  auto a = Run(qs[0].question, 5);
  auto b = Run(qs[0].question, 5, {{"semflow.passage_prior", "0.5"}});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT(b->diagnostics.extra.at("reset_passage_mass"),
            a->diagnostics.extra.at("reset_passage_mass"));
}

TEST_F(SemFlowDemoTest, PushMatchesPowerAndAblationsRun) {
  for (const DemoQuestion& q : LoadDemoQuestions()) {
    auto push = Run(q.question, 5, {{"semflow.epsilon", "1e-10"}});
    auto power = Run(q.question, 5, {{"semflow.solver", "power"}, {"semflow.tolerance", "1e-13"}});
    ASSERT_TRUE(push.ok() && power.ok());
    ASSERT_EQ(push->ranked.size(), power->ranked.size());
    for (size_t i = 0; i < push->ranked.size(); ++i) {
      EXPECT_NEAR(push->ranked[i].score, power->ranked[i].score, 1e-6 * power->ranked[i].score)
          << q.id;
    }
    for (const char* off :
         {"semflow.direction", "semflow.query_similarity", "semflow.abstractness_penalty"}) {
      auto ab = Run(q.question, 5, {{off, "false"}});
      ASSERT_TRUE(ab.ok()) << off;
      EXPECT_EQ(ab->ranked.size(), push->ranked.size());
    }
  }
}

std::vector<std::pair<uint32_t, double>> Ranking(const RetrievalOutput& o) {
  std::vector<std::pair<uint32_t, double>> v;
  for (const auto& r : o.ranked) v.push_back({r.passage, r.score});
  for (const auto& n : o.node_scores) v.push_back({n.node, n.score});
  return v;
}

TEST_F(SemFlowDemoTest, DeterministicAcrossRunsAndThreads) {
  auto qs = LoadDemoQuestions();
  std::vector<std::vector<std::pair<uint32_t, double>>> expected;
  for (const auto& q : qs) {
    auto a = Run(q.question, 5), b = Run(q.question, 5);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(Ranking(*a), Ranking(*b)) << q.id;
    expected.push_back(Ranking(*a));
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
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

TEST_F(SemFlowDemoTest, EntitiesNamedInTheQueryAreSeeds) {
  auto snap = Snap();
  const KnowledgeGraph& g = *snap->graph();
  const std::string q = "Which club is older, Hollin Bay Athletic or Port Calder Rowing Club?";
  auto named = Run(q, 5);
  auto facts_only = Run(q, 5, {{"semflow.name_seeds", "false"}});
  ASSERT_TRUE(named.ok() && facts_only.ok());
  auto has_seed = [&](const RetrievalOutput& out, const std::string& name) {
    for (const NodeScore& s : out.seeds) {
      if (g.EntityName(g.LocalIndex(s.node)) == name) return true;
    }
    return false;
  };
  EXPECT_GE(named->diagnostics.extra.at("name_seeds"), 2.0);
  EXPECT_TRUE(has_seed(*named, "Hollin Bay Athletic"));
  EXPECT_TRUE(has_seed(*named, "Port Calder Rowing Club"));
  EXPECT_EQ(facts_only->diagnostics.extra.count("name_seeds"), 0u);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
