// SemFlowRAG's directed walk: the per-node 0.9/0.1 split, rows that sum to
// one, the only-up / only-down rule, the ablation switches (Table 4), the
// reset mass, push vs power iteration, determinism across runs and threads,
// and the demo corpus end to end.
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
#include "retrieval/fact_seeds.h"
#include "retrieval/semflow_retriever.h"
#include "test_util.h"

namespace flowrag {
namespace {

using testing::TempDir;

// A hand-made graph: passages 0..2, entities A..E (nodes 3..7).
//   facts: A–B, A–C, A–D, A–E (A is the hub), B–C, D–E
//   mentions: p0: A B C; p1: A D; p2: E
std::shared_ptr<const KnowledgeGraph> SmallGraph() {
  KnowledgeGraph::Input in;
  in.num_passages = 3;
  in.entity_names = {"A", "B", "C", "D", "E"};
  in.entity_types = std::vector<std::string>(5, "X");
  in.entity_ids = {1, 2, 3, 4, 5};
  in.mentions = {{0, 0, 1, false}, {0, 1, 1, false}, {0, 2, 1, false},
                 {1, 0, 1, false}, {1, 3, 1, false}, {2, 4, 1, false}};
  in.fact_subject = {0, 0, 0, 0, 1, 3};
  in.fact_object = {1, 2, 3, 4, 2, 4};
  in.relation_texts = {"r"};
  in.fact_relation = std::vector<uint32_t>(6, 0);
  in.fact_texts = {"f0", "f1", "f2", "f3", "f4", "f5"};
  in.fact_text = {0, 1, 2, 3, 4, 5};
  in.fact_sources = {{0}, {0}, {1}, {2}, {0}, {1}};
  auto g = KnowledgeGraph::Build(std::move(in));
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return *g;
}

constexpr uint32_t kA = 3, kB = 4, kC = 5, kD = 6, kE = 7;
// Abstractness: A 0.8 (the hub), B 0.3, C 0.5, D 0.9, E 0.1.
const std::vector<float> kAbstract = {0.8f, 0.3f, 0.5f, 0.9f, 0.1f};
const std::vector<double> kRel = {0.2, 1.0, 0.0, 0.5, 0.7};

std::map<uint32_t, double> RowOf(const TransitionSource& t, uint32_t u) {
  std::vector<Transition> row;
  t.Row(u, &row);
  std::map<uint32_t, double> m;
  for (const Transition& x : row) m[x.target] += x.prob;
  return m;
}

double Sum(const std::map<uint32_t, double>& m) {
  double s = 0;
  for (auto [k, v] : m) s += v;
  return s;
}

// The authors' code written out independently: edge weights as
// SemFlowRAG.py build_directed_edge_weights sets them on an igraph (passage
// edges 1 each way; entity edges max(Rel − λ|Δ|, 1e-6) scaled by the
// direction budget over their direction's sum; the A+ self-loop at a node
// without down-edges; isolated nodes a self-loop of 1), then each row
// normalised by its out-strength as igraph's personalized_pagerank does.
std::map<uint32_t, double> ReferenceRow(uint32_t u, const std::vector<double>& rel,
                                        const std::vector<float>& d) {
  constexpr uint32_t P = 3;
  const std::vector<std::pair<uint32_t, uint32_t>> mentions = {{0, 0}, {0, 1}, {0, 2}, {1, 0},
                                                               {1, 3}, {2, 4}};
  const std::vector<std::pair<uint32_t, uint32_t>> facts = {{0, 1}, {0, 2}, {0, 3},
                                                            {0, 4}, {1, 2}, {3, 4}};
  std::map<uint32_t, double> w;
  if (u < P) {
    for (auto [p, e] : mentions) {
      if (p == u) w[P + e] += 1.0;
    }
  } else {
    const uint32_t e = u - P;
    for (auto [p, x] : mentions) {
      if (x == e) w[p] += 1.0;
    }
    std::map<uint32_t, double> score;
    std::map<uint32_t, bool> down;
    for (auto [a, b] : facts) {
      if (a != e && b != e) continue;
      const uint32_t v = a == e ? b : a;
      score[v] = std::max(rel[v] - std::abs(d[v] - d[e]), 1e-6);
      down[v] = d[v] - d[e] <= 0;
    }
    double sd = 0, su = 0;
    for (auto [v, x] : score) (down[v] ? sd : su) += x;
    const double eff_down = (su == 0 && sd > 0) ? 1.0 : 0.9;
    const double eff_up = 0.1;
    for (auto [v, x] : score) w[P + v] += down[v] ? eff_down * x / sd : eff_up * x / su;
    if (sd == 0 && su > 0) w[u] += 0.9;
  }
  double total = 0;
  for (auto [v, x] : w) total += x;
  for (auto& [v, x] : w) x /= total;
  return w;
}

TEST(SemFlowTransitionsTest, RowsMatchTheAuthorsEdgeWeights) {
  auto g = SmallGraph();
  SemFlowOptions o;  // linear weights, entity_share=one, self_loop: the authors' code
  for (const auto& rel : {kRel, std::vector<double>{0.9, 0.1, 0.4, 0.0, 1.0},
                          std::vector<double>(5, 0.0)}) {
    SemFlowTransitions t(*g, kAbstract, rel, o);
    for (uint32_t u = 0; u < t.num_nodes(); ++u) {
      const auto got = RowOf(t, u), want = ReferenceRow(u, rel, kAbstract);
      ASSERT_EQ(got.size(), want.size()) << "node " << u;
      for (auto [v, x] : want) EXPECT_NEAR(got.at(v), x, 1e-7) << u << " → " << v;
      EXPECT_NEAR(Sum(got), 1.0, 1e-12) << "node " << u;
      EXPECT_LE(got.size(), t.Degree(u)) << "Degree is an upper bound";
    }
  }
}

// A has passages p0, p1 and entity neighbours B, C (down: 0.3, 0.5 < 0.8),
// E (down: 0.1) and D (up: 0.9). Passages get 1/3 each, the entity edges
// 1/3 together, 0.9 of it down and 0.1 up; within a group in proportion to
// max(s, 1e-6), s = Rel − λ|Δ|.
TEST(SemFlowTransitionsTest, DownShareAndLinearWeightsWithinGroups) {
  auto g = SmallGraph();
  SemFlowOptions o;
  SemFlowTransitions t(*g, kAbstract, kRel, o);
  auto row = RowOf(t, kA);
  EXPECT_NEAR(row[0], 1.0 / 3, 1e-12);
  EXPECT_NEAR(row[1], 1.0 / 3, 1e-12);
  const double share = 1.0 / 3;
  EXPECT_NEAR(row[kB] + row[kC] + row[kE], 0.9 * share, 1e-12);
  EXPECT_NEAR(row[kD], 0.1 * share, 1e-12);
  // s: B 1.0 − 0.5 = 0.5, C 0 − 0.3 → floor, E 0.7 − 0.7 → floor (float rounding aside).
  EXPECT_NEAR(row[kB], 0.9 * share, 1e-5);
  EXPECT_LT(row[kC], 1e-5);
  // Passages are unweighted: uniform over their entities.
  auto p0 = RowOf(t, 0);
  EXPECT_EQ(p0.size(), 3u);
  for (auto [v, p] : p0) EXPECT_NEAR(p, 1.0 / 3, 1e-12);
}

// E (0.1) has only up-edges (A 0.8, D 0.9): they keep 0.1 of the entity
// share and a self-loop holds 0.9 (A+), or with self_loop=false they take
// it all. D (0.9) has only down-edges (A 0.8, E 0.1): they take all of it.
TEST(SemFlowTransitionsTest, LocalMinimumKeepsMassOnASelfLoop) {
  auto g = SmallGraph();
  SemFlowOptions o;
  SemFlowTransitions t(*g, kAbstract, kRel, o);
  auto e = RowOf(t, kE);  // passage p2, entities A, D (both up), itself
  EXPECT_NEAR(e[2], 0.5, 1e-12);
  EXPECT_NEAR(e[kA] + e[kD], 0.1 * 0.5, 1e-12);
  EXPECT_NEAR(e[kE], 0.9 * 0.5, 1e-12);
  auto d = RowOf(t, kD);  // passage p1, entities A, E (both down)
  EXPECT_NEAR(d[1], 0.5, 1e-12);
  EXPECT_NEAR(d[kA] + d[kE], 0.5, 1e-12);
  EXPECT_EQ(d.count(kD), 0u);
  o.self_loop = false;
  auto e2 = RowOf(SemFlowTransitions(*g, kAbstract, kRel, o), kE);
  EXPECT_NEAR(e2[kA] + e2[kD], 0.5, 1e-12);
  EXPECT_EQ(e2.count(kE), 0u);
}

// Passage edges carry the walk graph's weights (graph/walk_graph.h): here
// p0 is A's own title passage, so A → p0 and p0 → A weigh the title weight
// and the entity edges together an average passage edge; unit edges give
// the authors' 1 each.
TEST(SemFlowTransitionsTest, PassageEdgesReadTheWalkGraphWeights) {
  KnowledgeGraph::Input in;
  in.num_passages = 2;
  in.entity_names = {"A", "B"};
  in.entity_types = {"TITLE", "X"};
  in.entity_ids = {1, 2};
  in.mentions = {{0, 0, 1, true, true}, {0, 1, 1, false}, {1, 0, 1, false}, {1, 1, 1, false}};
  in.fact_subject = {0};
  in.fact_object = {1};
  in.relation_texts = {"r"};
  in.fact_relation = {0};
  in.fact_texts = {"f"};
  in.fact_text = {0};
  in.fact_sources = {{0}};
  auto built = KnowledgeGraph::Build(std::move(in));
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const KnowledgeGraph& g = **built;
  const double title = g.walk().weights().title, mention = g.walk().weights().mention;
  ASSERT_NE(title, mention);
  const std::vector<float> flat = {0.5f, 0.5f};
  const std::vector<double> rel = {0.0, 1.0};
  SemFlowOptions o;
  auto a = RowOf(SemFlowTransitions(g, flat, rel, o), 2);  // A: p0 (title), p1, B
  const double mean = (title + mention) / 2;
  const double total = title + mention + mean;
  EXPECT_NEAR(a[0], title / total, 1e-9);
  EXPECT_NEAR(a[1], mention / total, 1e-9);
  EXPECT_NEAR(a[3], mean / total, 1e-9);
  auto p0 = RowOf(SemFlowTransitions(g, flat, rel, o), 0);  // p0: A (title), B
  EXPECT_NEAR(p0[2], title / (title + mention), 1e-9);
  o.passage_edges = "unit";
  auto unit = RowOf(SemFlowTransitions(g, flat, rel, o), 2);
  EXPECT_NEAR(unit[0], 1.0 / 3, 1e-12);
  EXPECT_NEAR(unit[3], 1.0 / 3, 1e-12);
}

TEST(SemFlowTransitionsTest, EqualAbstractnessCountsAsDown) {
  auto g = SmallGraph();
  std::vector<float> flat(5, 0.4f);
  flat[3] = 0.9f;  // D above everyone
  SemFlowOptions o;
  SemFlowTransitions t(*g, flat, kRel, o);
  auto a = RowOf(t, kA);  // B, C, E equal (down), D up
  EXPECT_NEAR(a[kB] + a[kC] + a[kE], 0.9 / 3, 1e-12);
  EXPECT_NEAR(a[kD], 0.1 / 3, 1e-12);
}

TEST(SemFlowTransitionsTest, VariantsAndAblationsChangeTheWeightsAsDocumented) {
  auto g = SmallGraph();
  {  // softmax within groups (the paper leaves the mapping open)
    SemFlowOptions o;
    o.weights = "softmax";
    auto row = RowOf(SemFlowTransitions(*g, kAbstract, kRel, o), kA);
    auto s = [&](uint32_t v) { return kRel[v - 3] - std::abs(kAbstract[v - 3] - kAbstract[0]); };
    const double z = std::exp(s(kB)) + std::exp(s(kC)) + std::exp(s(kE));
    EXPECT_NEAR(row[kB], 0.9 / 3 * std::exp(s(kB)) / z, 1e-7);
    EXPECT_NEAR(row[kE], 0.9 / 3 * std::exp(s(kE)) / z, 1e-7);
  }
  {  // every entity edge a slot like a passage edge: 4 of 6
    SemFlowOptions o;
    o.entity_share = "edges";
    auto row = RowOf(SemFlowTransitions(*g, kAbstract, kRel, o), kA);
    EXPECT_NEAR(row[0], 1.0 / 6, 1e-12);
    EXPECT_NEAR(row[kB] + row[kC] + row[kE], 0.9 * 4 / 6, 1e-12);
  }
  {  // no direction control: one group over all four neighbours, no self-loop
    SemFlowOptions o;
    o.direction = false;
    SemFlowTransitions t(*g, kAbstract, kRel, o);
    auto row = RowOf(t, kA);
    std::map<uint32_t, double> w;
    double z = 0;
    for (uint32_t v : {kB, kC, kD, kE}) {
      w[v] = std::max(kRel[v - 3] - std::abs(kAbstract[v - 3] - kAbstract[0]), 1e-6);
      z += w[v];
    }
    for (uint32_t v : {kB, kC, kD, kE}) EXPECT_NEAR(row[v], w[v] / z / 3, 1e-6);
    EXPECT_EQ(RowOf(t, kE).count(kE), 0u);
  }
  {  // no query similarity: s = −λ|Δ| ≤ 0, all at the floor: uniform within groups
    SemFlowOptions o;
    o.query_similarity = false;
    auto row = RowOf(SemFlowTransitions(*g, kAbstract, kRel, o), kA);
    EXPECT_NEAR(row[kB], 0.9 / 3 / 3, 1e-9);
    EXPECT_NEAR(row[kC], 0.9 / 3 / 3, 1e-9);
  }
  {  // no abstractness penalty: s = Rel (λ = 0 gives the same)
    SemFlowOptions o;
    o.abstractness_penalty = false;
    auto row = RowOf(SemFlowTransitions(*g, kAbstract, kRel, o), kA);
    SemFlowOptions l0;
    l0.lambda = 0;
    auto row0 = RowOf(SemFlowTransitions(*g, kAbstract, kRel, l0), kA);
    const double z = 1.0 + 1e-6 + 0.7;  // B, C (Rel 0 → floor), E
    EXPECT_NEAR(row[kB], 0.9 / 3 * 1.0 / z, 1e-9);
    for (auto [v, p] : row) EXPECT_NEAR(p, row0[v], 1e-15);
  }
  {  // another down share
    SemFlowOptions o;
    o.down_share = 0.6;
    auto row = RowOf(SemFlowTransitions(*g, kAbstract, kRel, o), kA);
    EXPECT_NEAR(row[kD], 0.4 / 3, 1e-12);
  }
}

// On the directed walk, push, power iteration and an exact solve agree.
TEST(SemFlowTransitionsTest, PushMatchesPowerIteration) {
  auto g = SmallGraph();
  SemFlowOptions o;
  SemFlowTransitions t(*g, kAbstract, kRel, o);
  std::vector<NodeWeight> reset{{kA, 0.6}, {kB, 0.3}, {0, 0.05}, {2, 0.05}};
  PushSolver push;
  PushOptions po;
  po.epsilon = 1e-14;
  ASSERT_TRUE(push.Solve(t, reset, po, nullptr).ok());
  PowerOptions wo;
  wo.tolerance = 1e-15;
  auto power = PowerIteration(t, reset, wo, nullptr);
  ASSERT_TRUE(power.ok());
  for (uint32_t u = 0; u < t.num_nodes(); ++u) EXPECT_NEAR(push.Score(u), (*power)[u], 1e-12);
}

TEST(EntityRelevanceTest, MaxOverPassagesTruncatedMinMax) {
  auto g = SmallGraph();
  // p0 0.5, p1 0.9, p2 0.1 → raw A 0.9, B 0.5, C 0.5, D 0.9, E 0.1; the 1st
  // and 99th percentiles (linear interpolation) are 0.116 and 0.9.
  auto rel = EntityRelevance(*g, {0.5f, 0.9f, 0.1f});
  ASSERT_EQ(rel.size(), 5u);
  const double lo = 0.1 + 0.04 * 0.4, hi = 0.9;
  EXPECT_NEAR(rel[0], 1.0, 1e-6);
  EXPECT_NEAR(rel[1], (0.5 - lo) / (hi - lo), 1e-6);
  EXPECT_NEAR(rel[4], 0.0, 1e-6);  // below the 1st percentile: clipped
  // A constant vector has no range: every entity 0.5.
  for (double x : EntityRelevance(*g, {0.3f, 0.3f, 0.3f})) EXPECT_EQ(x, 0.5);
}

TEST(SemFlowOptionsTest, OverridesAndValidation) {
  std::map<std::string, std::string> p{{"semflow.lambda", "0.5"},     {"semflow.down_share", "0.7"},
                                       {"semflow.direction", "false"}, {"semflow.facts", "8"},
                                       {"semflow.seeds", "10"},       {"semflow.passage_prior", "0.1"},
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
  for (auto bad : std::vector<std::pair<std::string, std::string>>{
           {"semflow.down_share", "1.5"}, {"semflow.reset", "0"}, {"semflow.lambda", "-1"},
           {"semflow.solver", "x"}, {"semflow.direction", "maybe"},
           {"semflow.weights", "exp"}, {"semflow.entity_share", "all"},
           {"semflow.relevance", "x"}, {"semflow.floor", "0"}}) {
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
  SemFlowTransitions t(g, {}, rel, o);
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
    for (const RankedPassage& p : out->ranked) got.insert(snap->document_of(p.passage).external_id);
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
    for (const char* off : {"semflow.direction", "semflow.query_similarity",
                            "semflow.abstractness_penalty"}) {
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

}  // namespace
}  // namespace flowrag
