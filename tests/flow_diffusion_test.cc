// Flow diffusion (QAFD-RAG §2.2–3, Algorithm 2; graph_algo/flow_diffusion.h)
// checked against an independent projected-gradient solve of the dual QP (8)
// on small graphs, its invariants (mass conservation at every push,
// termination, complementary slackness, locality), the feasibility guard,
// shared source mass and parameter validation.
#include "graph_algo/flow_diffusion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

// A small explicit weighted undirected graph.
class TestGraph final : public DiffusionGraph {
 public:
  explicit TestGraph(size_t n) : adj_(n) {}
  void AddEdge(uint32_t u, uint32_t v, double w) {
    adj_[u].push_back({v, w});
    adj_[v].push_back({u, w});
  }
  size_t num_nodes() const override { return adj_.size(); }
  void Neighbors(uint32_t u, std::vector<uint32_t>* out) const override {
    for (auto [v, w] : adj_[u]) out->push_back(v);
  }
  void WeightedNeighbors(uint32_t u, std::vector<uint32_t>* nodes,
                         std::vector<double>* weights) const override {
    ++weight_calls_[u];
    for (auto [v, w] : adj_[u]) {
      nodes->push_back(v);
      weights->push_back(w);
    }
  }
  size_t Degree(uint32_t u) const override { return adj_[u].size(); }
  const std::vector<std::pair<uint32_t, double>>& adj(uint32_t u) const { return adj_[u]; }
  mutable std::map<uint32_t, int> weight_calls_;

 private:
  std::vector<std::vector<std::pair<uint32_t, double>>> adj_;
};

TestGraph RandomGraph(size_t n, size_t extra_edges, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> w(0.1, 2.0);
  TestGraph g(n);
  for (uint32_t v = 1; v < n; ++v)
    g.AddEdge(v, std::uniform_int_distribution<uint32_t>(0, v - 1)(rng), w(rng));
  for (size_t i = 0; i < extra_edges; ++i) {
    uint32_t a = std::uniform_int_distribution<uint32_t>(0, n - 1)(rng);
    uint32_t b = std::uniform_int_distribution<uint32_t>(0, n - 1)(rng);
    if (a != b) g.AddEdge(a, b, w(rng));
  }
  return g;
}

// Independent solver: projected gradient descent on
// F(x) = ½ xᵀLx + xᵀ(T − Δ), x ≥ 0, step 1/λ with λ ≥ λ_max(L) (Gershgorin: 2·max weighted degree).
std::vector<double> SolveDualQp(const TestGraph& g, const std::vector<double>& T,
                                const std::vector<double>& delta, int iterations) {
  const size_t n = g.num_nodes();
  double lmax = 0;
  for (uint32_t u = 0; u < n; ++u) {
    double d = 0;
    for (auto [v, w] : g.adj(u)) d += w;
    lmax = std::max(lmax, 2 * d);
  }
  std::vector<double> x(n, 0.0), grad(n), y(n, 0.0), x_prev(n, 0.0);
  // Accelerated (FISTA) projected gradient for speed; still independent of the push code.
  double t = 1;
  for (int it = 0; it < iterations; ++it) {
    for (uint32_t u = 0; u < n; ++u) {
      double lx = 0;
      for (auto [v, w] : g.adj(u)) lx += w * (y[u] - y[v]);
      grad[u] = lx + T[u] - delta[u];
    }
    x_prev = x;
    for (uint32_t u = 0; u < n; ++u) x[u] = std::max(0.0, y[u] - grad[u] / lmax);
    const double t_next = (1 + std::sqrt(1 + 4 * t * t)) / 2;
    for (uint32_t u = 0; u < n; ++u) y[u] = x[u] + (t - 1) / t_next * (x[u] - x_prev[u]);
    t = t_next;
  }
  return x;
}

std::vector<double> Dense(const FlowDiffusionResult& r, const std::vector<double>& values,
                          size_t n) {
  std::vector<double> out(n, 0.0);
  for (size_t i = 0; i < r.nodes.size(); ++i) out[r.nodes[i]] = values[i];
  return out;
}

// The solver's result, which every call here expects to succeed.
FlowDiffusionResult Solve(const DiffusionGraph& g, const std::vector<FlowSource>& sources,
                          const FlowDiffusionOptions& o) {
  Result<FlowDiffusionResult> r = SolveFlowDiffusion(g, sources, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : FlowDiffusionResult{};
}

TEST(FlowDiffusionTest, MatchesDualQpSolveOnSmallGraphs) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    TestGraph g = RandomGraph(30, 25, seed);
    FlowDiffusionOptions o;
    o.alpha = 3;
    o.epsilon = 1e-10;
    o.capacity = seed % 2 ? CapacityKind::kUniform : CapacityKind::kDegree;
    o.verify_conservation = true;
    std::vector<FlowSource> src = {{0, 1.0}, {7, 0.5}};
    FlowDiffusionResult r = Solve(g, src, o);
    ASSERT_TRUE(r.converged);
    EXPECT_LT(r.residual, 1e-9);
    EXPECT_LT(r.max_conservation_error, 1e-12) << "mass conserved at every push";
    const size_t n = g.num_nodes();
    std::vector<double> T(n), delta = Dense(r, r.source, n);
    for (uint32_t v = 0; v < n; ++v) {
      T[v] = o.capacity == CapacityKind::kDegree ? static_cast<double>(g.Degree(v)) : 1.0;
    }
    EXPECT_NEAR(delta[0], o.alpha * T[0], 1e-12);
    EXPECT_NEAR(delta[7], o.alpha * T[7] * 0.5, 1e-12);
    std::vector<double> x_qp = SolveDualQp(g, T, delta, 200000);
    std::vector<double> x = Dense(r, r.x, n);
    for (uint32_t v = 0; v < n; ++v) {
      EXPECT_NEAR(x[v], x_qp[v], 1e-6 * std::max(1.0, x_qp[v]))
          << "graph " << seed << " node " << v;
    }
  }
}

TEST(FlowDiffusionTest, InvariantsAtDefaultEpsilon) {
  TestGraph g = RandomGraph(400, 600, 42);
  FlowDiffusionOptions o;  // α = 50, T = 1, ε = 0.05
  o.verify_conservation = true;
  FlowDiffusionResult r = Solve(g, {{3, 1.0}, {100, 1.0}}, o);
  EXPECT_TRUE(r.converged);
  EXPECT_LT(r.residual, o.epsilon) << "terminates with total excess < ε";
  EXPECT_LT(r.max_conservation_error, 1e-12);
  EXPECT_DOUBLE_EQ(r.injected, 100.0);
  double total = 0;
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    total += r.mass[i];
    EXPECT_GE(r.x[i], 0.0);
    // Complementary slackness: x_v > 0 ⇒ m_v = T_v up to the remaining excess.
    if (r.x[i] > 0) {
      EXPECT_NEAR(r.mass[i], r.capacity[i], o.epsilon) << r.nodes[i];
    }
    EXPECT_LE(r.mass[i], r.capacity[i] + o.epsilon);
  }
  EXPECT_NEAR(total, r.injected, 1e-9);
  // Lemma 2: the support is at most ‖Δ‖₁ / T nodes; weights were asked for at most once per node.
  size_t support = 0;
  for (double x : r.x) support += x > 0;
  EXPECT_LE(support, 100u);
  for (auto [node, calls] : g.weight_calls_) EXPECT_EQ(calls, 1);
  EXPECT_LE(g.weight_calls_.size(), support + 0u);
}

TEST(FlowDiffusionTest, SupportStaysInReachableSubgraph) {
  // Two components: {0..9} path and {10..19} path; seed in the first.
  TestGraph g(20);
  for (uint32_t v = 0; v + 1 < 10; ++v) g.AddEdge(v, v + 1, 1.0);
  for (uint32_t v = 10; v + 1 < 20; ++v) g.AddEdge(v, v + 1, 1.0);
  FlowDiffusionOptions o;
  o.alpha = 3;
  FlowDiffusionResult r = Solve(g, {{0, 1.0}}, o);
  for (uint32_t v : r.nodes) EXPECT_LT(v, 10u);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.scaled_sources, 0u);
}

TEST(FlowDiffusionTest, FeasibilityGuardOnSmallComponents) {
  // α·T = 50 > capacity of a 3-node island: the source is scaled to half the
  // island's capacity and the solve terminates.
  TestGraph g(6);
  g.AddEdge(0, 1, 1.0);
  g.AddEdge(1, 2, 1.0);
  g.AddEdge(3, 4, 1.0);
  FlowDiffusionOptions o;
  FlowDiffusionResult r = Solve(g, {{0, 1.0}, {5, 1.0}}, o);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.scaled_sources, 2u);
  EXPECT_NEAR(r.injected, 1.5 + 0.5, 1e-12);  // ½·3 on the island, ½·1 on the isolated node
  EXPECT_LT(r.residual, o.epsilon);
  for (uint32_t v : r.nodes) EXPECT_TRUE(v <= 2 || v == 5);
}

TEST(FlowDiffusionTest, DeterministicAndPushCapped) {
  TestGraph g = RandomGraph(300, 400, 7);
  FlowDiffusionOptions o;
  FlowDiffusionResult a = Solve(g, {{1, 1.0}, {2, 1.0}}, o);
  FlowDiffusionResult b = Solve(g, {{1, 1.0}, {2, 1.0}}, o);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.pushes, b.pushes);
  o.max_pushes = 5;
  FlowDiffusionResult c = Solve(g, {{1, 1.0}}, o);
  EXPECT_EQ(c.pushes, 5u);
  EXPECT_FALSE(c.converged);
  EXPECT_GT(c.residual, o.epsilon);
}

TEST(FlowDiffusionTest, SharedSourceMassAndRelativeEpsilon) {
  TestGraph g = RandomGraph(60, 90, 11);
  FlowDiffusionOptions o;
  o.alpha = 2.0;
  o.source_mass = SourceMass::kShared;
  o.relative_epsilon = true;
  o.epsilon = 1e-3;
  FlowDiffusionResult r = Solve(g, {{0, 0.75}, {5, 0.25}}, o);
  // Σ Δ = α·(T_0 + T_5) = 4, split 3 : 1 by the scales.
  ASSERT_GE(r.Find(0), 0);
  ASSERT_GE(r.Find(5), 0);
  EXPECT_DOUBLE_EQ(r.source[r.Find(0)], 3.0);
  EXPECT_DOUBLE_EQ(r.source[r.Find(5)], 1.0);
  EXPECT_DOUBLE_EQ(r.injected, 4.0);
  EXPECT_TRUE(r.converged);
  EXPECT_LT(r.residual, 1e-3 * r.injected);
  EXPECT_GT(r.edge_visits, r.pushes);  // every push visits its row
}

// Options out of range are refused before anything runs, naming the option.
TEST(FlowDiffusionTest, RejectsBadOptions) {
  TestGraph g = RandomGraph(10, 5, 3);
  auto message = [&](const FlowDiffusionOptions& o, std::vector<FlowSource> src = {{0, 1.0}}) {
    Result<FlowDiffusionResult> r = SolveFlowDiffusion(g, src, o);
    EXPECT_FALSE(r.ok());
    if (r.ok()) return std::string();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    return r.status().message();
  };
  FlowDiffusionOptions o;
  o.alpha = 0;
  EXPECT_NE(message(o).find("alpha"), std::string::npos);
  o = {};
  o.beta = -1;
  EXPECT_NE(message(o).find("beta"), std::string::npos);
  o.capacity = CapacityKind::kDegree;  // β is not read with degree capacities
  EXPECT_TRUE(SolveFlowDiffusion(g, {{0, 1.0}}, o).ok());
  o = {};
  o.epsilon = std::nan("");
  EXPECT_NE(message(o).find("epsilon"), std::string::npos);
  o = {};
  o.max_fill = 1.5;
  EXPECT_NE(message(o).find("max_fill"), std::string::npos);
  o = {};
  EXPECT_NE(message(o, {{0, 1.0}, {1, INFINITY}}).find("source[1]"), std::string::npos);
  // Sources outside the graph or without positive scale are ignored, as documented.
  Result<FlowDiffusionResult> r = SolveFlowDiffusion(g, {{99, 1.0}, {2, 0.0}}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->nodes.empty());
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
