// The PPR solvers of graph_algo/ppr.h checked against each other and an
// exact linear solve (push vs power iteration vs Gaussian elimination on
// random graphs), the push residual bound, workspace reuse, input
// validation and explanation paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "graph_algo/ppr.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

struct RandomGraph {
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> targets;
  std::vector<double> weights;
};

// n nodes, each pair joined with probability p; undirected graphs store both
// directions with the same weight. Directed graphs leave some nodes dangling.
RandomGraph MakeRandomGraph(uint32_t n, double p, bool directed, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<std::vector<std::pair<uint32_t, double>>> adj(n);
  for (uint32_t u = 0; u < n; ++u) {
    for (uint32_t v = directed ? 0 : u + 1; v < n; ++v) {
      if (u == v || unit(rng) >= p) continue;
      const double w = 0.1 + unit(rng);
      adj[u].push_back({v, w});
      if (!directed) adj[v].push_back({u, w});
    }
  }
  if (directed) {
    for (uint32_t u = 0; u < n; u += 5) adj[u].clear();  // dangling nodes
  }
  RandomGraph g;
  g.offsets.push_back(0);
  for (auto& row : adj) {
    std::sort(row.begin(), row.end());
    for (auto [v, w] : row) {
      g.targets.push_back(v);
      g.weights.push_back(w);
    }
    g.offsets.push_back(g.targets.size());
  }
  return g;
}

std::vector<NodeWeight> RandomReset(uint32_t n, size_t k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<NodeWeight> r;
  for (size_t i = 0; i < k; ++i) {
    r.push_back({static_cast<uint32_t>(rng() % n), 0.1 + (rng() % 1000) / 1000.0});
  }
  return r;
}

// Dense Gaussian elimination (partial pivoting) of (I − d·Pᵀ)x = (1 − d)·r,
// then x / Σx: the answer the solvers' `normalize` option defines.
std::vector<double> ExactPpr(const TransitionSource& g, std::span<const NodeWeight> reset_in,
                             double d) {
  const size_t n = g.num_nodes();
  auto reset = NormalizeReset(reset_in, n);
  EXPECT_TRUE(reset.ok());
  std::vector<std::vector<double>> a(n, std::vector<double>(n + 1, 0.0));
  for (size_t i = 0; i < n; ++i) a[i][i] = 1.0;
  std::vector<Transition> row;
  for (uint32_t u = 0; u < n; ++u) {
    g.Row(u, &row);
    for (const Transition& t : row) a[t.target][u] -= d * t.prob;  // (Pᵀ)[v][u] = P[u][v]
  }
  for (const NodeWeight& w : *reset) a[w.node][n] = (1 - d) * w.weight;
  for (size_t c = 0; c < n; ++c) {
    size_t piv = c;
    for (size_t i = c + 1; i < n; ++i) {
      if (std::abs(a[i][c]) > std::abs(a[piv][c])) piv = i;
    }
    std::swap(a[c], a[piv]);
    for (size_t i = 0; i < n; ++i) {
      if (i == c || a[i][c] == 0) continue;
      const double f = a[i][c] / a[c][c];
      for (size_t j = c; j <= n; ++j) a[i][j] -= f * a[c][j];
    }
  }
  std::vector<double> x(n);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += x[i] = a[i][n] / a[i][i];
  for (double& v : x) v /= sum;
  return x;
}

class SolverAgreement : public ::testing::TestWithParam<std::tuple<bool, double, uint64_t>> {};

TEST_P(SolverAgreement, PushPowerAndExactAgree) {
  const auto [directed, damping, seed] = GetParam();
  const uint32_t n = 60;
  RandomGraph rg = MakeRandomGraph(n, 0.08, directed, seed);
  auto g = CsrTransitions::Make(rg.offsets, rg.targets, rg.weights);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const auto reset = RandomReset(n, 4, seed * 7 + 1);
  const std::vector<double> exact = ExactPpr(*g, reset, damping);

  PushSolver push;
  PushOptions po;
  po.damping = damping;
  po.epsilon = 1e-13;
  PprStats ps;
  ASSERT_TRUE(push.Solve(*g, reset, po, &ps).ok());
  EXPECT_TRUE(ps.converged);
  EXPECT_LT(ps.residual, 1e-9);

  PowerOptions wo;
  wo.damping = damping;
  wo.tolerance = 1e-14;
  PprStats ws;
  auto power = PowerIteration(*g, reset, wo, &ws);
  ASSERT_TRUE(power.ok()) << power.status().ToString();
  EXPECT_TRUE(ws.converged);

  double sum_push = 0, sum_power = 0;
  for (uint32_t u = 0; u < n; ++u) {
    EXPECT_NEAR(push.Score(u), exact[u], 1e-9) << "node " << u;
    EXPECT_NEAR((*power)[u], exact[u], 1e-11) << "node " << u;
    sum_push += push.Score(u);
    sum_power += (*power)[u];
  }
  EXPECT_NEAR(sum_push, 1.0, 1e-9);  // the residual is not yet settled
  EXPECT_NEAR(sum_power, 1.0, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(RandomGraphs, SolverAgreement,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(0.5, 0.85),
                                            ::testing::Values(1u, 2u, 3u, 4u, 5u)));

// With a coarse threshold the unnormalised push estimate is within its
// reported residual of the exact (unnormalised) solution, in L1.
TEST(PushSolverTest, ResidualBoundsTheError) {
  RandomGraph rg = MakeRandomGraph(80, 0.06, false, 11);
  auto g = CsrTransitions::Make(rg.offsets, rg.targets, rg.weights);
  ASSERT_TRUE(g.ok());
  const auto reset = RandomReset(80, 3, 5);
  PowerOptions wo;
  wo.tolerance = 1e-15;
  wo.normalize = false;
  auto exact = PowerIteration(*g, reset, wo, nullptr);
  ASSERT_TRUE(exact.ok());
  for (double eps : {1e-2, 1e-3, 1e-4}) {
    PushSolver push;
    PushOptions po;
    po.epsilon = eps;
    po.normalize = false;
    PprStats st;
    ASSERT_TRUE(push.Solve(*g, reset, po, &st).ok());
    double l1 = 0;
    for (uint32_t u = 0; u < 80; ++u) l1 += std::abs((*exact)[u] - push.Score(u));
    EXPECT_LE(l1, st.residual + 1e-12) << "eps " << eps;
    EXPECT_GT(st.iterations, 0u);
  }
}

// Reusing one workspace must not leak state between solves.
TEST(PushSolverTest, WorkspaceReuseIsClean) {
  RandomGraph rg = MakeRandomGraph(50, 0.1, true, 3);
  auto g = CsrTransitions::Make(rg.offsets, rg.targets, rg.weights);
  ASSERT_TRUE(g.ok());
  PushSolver a, b;
  PushOptions po;
  ASSERT_TRUE(a.Solve(*g, RandomReset(50, 3, 1), po, nullptr).ok());
  ASSERT_TRUE(a.Solve(*g, RandomReset(50, 3, 2), po, nullptr).ok());
  ASSERT_TRUE(b.Solve(*g, RandomReset(50, 3, 2), po, nullptr).ok());
  for (uint32_t u = 0; u < 50; ++u) EXPECT_EQ(a.Score(u), b.Score(u));
}

TEST(PushSolverTest, RejectsBadInput) {
  auto g = CsrTransitions::Make({0, 1, 2}, {1, 0}, {1.0, 1.0});
  ASSERT_TRUE(g.ok());
  PushSolver push;
  PushOptions po;
  std::vector<NodeWeight> ok{{0, 1.0}};
  po.damping = 1.0;
  EXPECT_EQ(push.Solve(*g, ok, po, nullptr).code(), StatusCode::kInvalidArgument);
  po.damping = 0.5;
  std::vector<NodeWeight> out_of_range{{7, 1.0}};
  Status st = push.Solve(*g, out_of_range, po, nullptr);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("node 7"), std::string::npos) << st.message();
  std::vector<NodeWeight> zero{{0, 0.0}};
  EXPECT_EQ(push.Solve(*g, zero, po, nullptr).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(PowerIteration(*g, zero, PowerOptions{}, nullptr).ok());

  EXPECT_FALSE(CsrTransitions::Make({0, 1}, {3}, {1.0}).ok());   // target out of range
  EXPECT_FALSE(CsrTransitions::Make({0, 1}, {0}, {-1.0}).ok());  // negative weight
  EXPECT_FALSE(CsrTransitions::Make({0, 2}, {0}, {1.0}).ok());   // sizes disagree
}

// A path 0 – 1 – 2 – 3 with the reset on 0: node 3's best predecessor chain
// is the path itself.
TEST(PredecessorPathTest, FollowsTheHeaviestInflow) {
  auto g = CsrTransitions::Make({0, 1, 3, 5, 6}, {1, 0, 2, 1, 3, 2}, {1, 1, 1, 1, 1, 1});
  ASSERT_TRUE(g.ok());
  std::vector<NodeWeight> reset{{0, 1.0}};
  auto x = PowerIteration(*g, reset, PowerOptions{}, nullptr);
  ASSERT_TRUE(x.ok());
  RowCache rows(*g);
  auto path = PredecessorPath(
      rows, [&](uint32_t u) { return (*x)[u]; }, [](uint32_t u) { return u == 0 ? 1.0 : 0.0; }, 0.5,
      3, 10);
  EXPECT_EQ(path, (std::vector<uint32_t>{0, 1, 2, 3}));
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
