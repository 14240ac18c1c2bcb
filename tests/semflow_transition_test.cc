// The SemFlow transition (graph_algo/semflow_transition.h): rows against
// the authors' edge weights written out independently, the per-node down
// share, the A+ self-loop at a local minimum, the walk graph's passage
// weights, the ablations (Table 4), push vs power iteration on the walk, the
// memoised push, option validation and Rel(v|q) (EntityRelevance).
#include "graph_algo/semflow_transition.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph/knowledge_graph.h"
#include "graph_algo/ppr.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

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
  const std::vector<std::pair<uint32_t, uint32_t>> mentions = {{0, 0}, {0, 1}, {0, 2},
                                                               {1, 0}, {1, 3}, {2, 4}};
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
  SemFlowTransitionOptions
      o;  // linear weights, one shared entity weight, self_loop: the authors' code
  for (const auto& rel :
       {kRel, std::vector<double>{0.9, 0.1, 0.4, 0.0, 1.0}, std::vector<double>(5, 0.0)}) {
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
  SemFlowTransitionOptions o;
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
  SemFlowTransitionOptions o;
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
  SemFlowTransitionOptions o;
  auto a = RowOf(SemFlowTransitions(g, flat, rel, o), 2);  // A: p0 (title), p1, B
  const double mean = (title + mention) / 2;
  const double total = title + mention + mean;
  EXPECT_NEAR(a[0], title / total, 1e-9);
  EXPECT_NEAR(a[1], mention / total, 1e-9);
  EXPECT_NEAR(a[3], mean / total, 1e-9);
  auto p0 = RowOf(SemFlowTransitions(g, flat, rel, o), 0);  // p0: A (title), B
  EXPECT_NEAR(p0[2], title / (title + mention), 1e-9);
  o.walk_weights = false;
  auto unit = RowOf(SemFlowTransitions(g, flat, rel, o), 2);
  EXPECT_NEAR(unit[0], 1.0 / 3, 1e-12);
  EXPECT_NEAR(unit[3], 1.0 / 3, 1e-12);
}

TEST(SemFlowTransitionsTest, EqualAbstractnessCountsAsDown) {
  auto g = SmallGraph();
  std::vector<float> flat(5, 0.4f);
  flat[3] = 0.9f;  // D above everyone
  SemFlowTransitionOptions o;
  SemFlowTransitions t(*g, flat, kRel, o);
  auto a = RowOf(t, kA);  // B, C, E equal (down), D up
  EXPECT_NEAR(a[kB] + a[kC] + a[kE], 0.9 / 3, 1e-12);
  EXPECT_NEAR(a[kD], 0.1 / 3, 1e-12);
}

TEST(SemFlowTransitionsTest, VariantsAndAblationsChangeTheWeightsAsDocumented) {
  auto g = SmallGraph();
  {  // softmax within groups (the paper leaves the mapping open)
    SemFlowTransitionOptions o;
    o.linear = false;
    auto row = RowOf(SemFlowTransitions(*g, kAbstract, kRel, o), kA);
    auto s = [&](uint32_t v) { return kRel[v - 3] - std::abs(kAbstract[v - 3] - kAbstract[0]); };
    const double z = std::exp(s(kB)) + std::exp(s(kC)) + std::exp(s(kE));
    EXPECT_NEAR(row[kB], 0.9 / 3 * std::exp(s(kB)) / z, 1e-7);
    EXPECT_NEAR(row[kE], 0.9 / 3 * std::exp(s(kE)) / z, 1e-7);
  }
  {  // every entity edge a slot like a passage edge: 4 of 6
    SemFlowTransitionOptions o;
    o.one_share = false;
    auto row = RowOf(SemFlowTransitions(*g, kAbstract, kRel, o), kA);
    EXPECT_NEAR(row[0], 1.0 / 6, 1e-12);
    EXPECT_NEAR(row[kB] + row[kC] + row[kE], 0.9 * 4 / 6, 1e-12);
  }
  {  // no direction control: one group over all four neighbours, no self-loop
    SemFlowTransitionOptions o;
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
    SemFlowTransitionOptions o;
    o.query_similarity = false;
    auto row = RowOf(SemFlowTransitions(*g, kAbstract, kRel, o), kA);
    EXPECT_NEAR(row[kB], 0.9 / 3 / 3, 1e-9);
    EXPECT_NEAR(row[kC], 0.9 / 3 / 3, 1e-9);
  }
  {  // no abstractness penalty: s = Rel (λ = 0 gives the same)
    SemFlowTransitionOptions o;
    o.abstractness_penalty = false;
    auto row = RowOf(SemFlowTransitions(*g, kAbstract, kRel, o), kA);
    SemFlowTransitionOptions l0;
    l0.lambda = 0;
    auto row0 = RowOf(SemFlowTransitions(*g, kAbstract, kRel, l0), kA);
    const double z = 1.0 + 1e-6 + 0.7;  // B, C (Rel 0 → floor), E
    EXPECT_NEAR(row[kB], 0.9 / 3 * 1.0 / z, 1e-9);
    for (auto [v, p] : row) EXPECT_NEAR(p, row0[v], 1e-15);
  }
  {  // another down share
    SemFlowTransitionOptions o;
    o.down_share = 0.6;
    auto row = RowOf(SemFlowTransitions(*g, kAbstract, kRel, o), kA);
    EXPECT_NEAR(row[kD], 0.4 / 3, 1e-12);
  }
}

// On the directed walk, push, power iteration and an exact solve agree.
TEST(SemFlowTransitionsTest, PushMatchesPowerIteration) {
  auto g = SmallGraph();
  SemFlowTransitionOptions o;
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

// Options out of range are refused by Make, naming the option; so is an
// abstractness vector of the wrong length.
TEST(SemFlowTransitionsTest, MakeValidatesItsOptions) {
  auto g = SmallGraph();
  EXPECT_TRUE(SemFlowTransitions::Make(*g, kAbstract, {}, SemFlowTransitionOptions{}).ok());
  auto refused = [&](SemFlowTransitionOptions o, std::span<const float> d, const char* word) {
    auto t = SemFlowTransitions::Make(*g, d, {}, o);
    ASSERT_FALSE(t.ok()) << word;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find(word), std::string::npos) << t.status().message();
  };
  SemFlowTransitionOptions o;
  o.lambda = -1;
  refused(o, kAbstract, "lambda");
  o = {};
  o.down_share = 1.5;
  refused(o, kAbstract, "down_share");
  o = {};
  o.floor = 0;
  refused(o, kAbstract, "floor");
  const std::vector<float> short_abstractness = {0.5f, 0.5f};
  refused(SemFlowTransitionOptions{}, short_abstractness, "abstractness");
}

// On the SemFlow walk, the memoised push computes each row once, and agrees
// with power iteration.
TEST(SemFlowTransitionsTest, MemoizedPushBuildsEachRowOnce) {
  auto g = SmallGraph();
  SemFlowTransitions t(*g, kAbstract, kRel, SemFlowTransitionOptions{});
  std::vector<NodeWeight> reset{{kA, 0.6}, {kB, 0.3}, {0, 0.05}, {2, 0.05}};
  PushSolver push;
  PushOptions po;
  po.epsilon = 1e-14;
  PprStats st;
  ASSERT_TRUE(push.SolveMemoized(t, reset, po, &st).ok());
  EXPECT_EQ(push.rows_built(), t.num_nodes());  // every node pushes, once built
  EXPECT_GT(st.iterations, push.rows_built());  // rows are read again, not rebuilt
  PowerOptions wo;
  wo.tolerance = 1e-15;
  auto power = PowerIteration(t, reset, wo, nullptr);
  ASSERT_TRUE(power.ok());
  for (uint32_t u = 0; u < t.num_nodes(); ++u) EXPECT_NEAR(push.Score(u), (*power)[u], 1e-12);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
