// QAFD flow diffusion (QAFD-RAG §2.2–3, Algorithm 2) checked against an
// independent projected-gradient solve of the dual QP (8) on small graphs,
// its invariants (mass conservation at every push, termination, complementary
// slackness, locality), and the qafd / onehop retrievers end to end on the
// demo corpus.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/engine_impl.h"
#include "flowrag/engine.h"
#include "retrieval/flow_diffusion.h"
#include "retrieval/one_hop_retriever.h"
#include "retrieval/qafd_retriever.h"
#include "retrieval/retriever.h"
#include "test_util.h"

namespace flowrag {
namespace {

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
  for (uint32_t v = 1; v < n; ++v) g.AddEdge(v, std::uniform_int_distribution<uint32_t>(0, v - 1)(rng), w(rng));
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

std::vector<double> Dense(const FlowDiffusionResult& r, const std::vector<double>& values, size_t n) {
  std::vector<double> out(n, 0.0);
  for (size_t i = 0; i < r.nodes.size(); ++i) out[r.nodes[i]] = values[i];
  return out;
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
    FlowDiffusionResult r = SolveFlowDiffusion(g, src, o);
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
      EXPECT_NEAR(x[v], x_qp[v], 1e-6 * std::max(1.0, x_qp[v])) << "graph " << seed << " node " << v;
    }
  }
}

TEST(FlowDiffusionTest, InvariantsAtDefaultEpsilon) {
  TestGraph g = RandomGraph(400, 600, 42);
  FlowDiffusionOptions o;  // α = 50, T = 1, ε = 0.05
  o.verify_conservation = true;
  FlowDiffusionResult r = SolveFlowDiffusion(g, {{3, 1.0}, {100, 1.0}}, o);
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
  FlowDiffusionResult r = SolveFlowDiffusion(g, {{0, 1.0}}, o);
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
  FlowDiffusionResult r = SolveFlowDiffusion(g, {{0, 1.0}, {5, 1.0}}, o);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.scaled_sources, 2u);
  EXPECT_NEAR(r.injected, 1.5 + 0.5, 1e-12);  // ½·3 on the island, ½·1 on the isolated node
  EXPECT_LT(r.residual, o.epsilon);
  for (uint32_t v : r.nodes) EXPECT_TRUE(v <= 2 || v == 5);
}

TEST(FlowDiffusionTest, DeterministicAndPushCapped) {
  TestGraph g = RandomGraph(300, 400, 7);
  FlowDiffusionOptions o;
  FlowDiffusionResult a = SolveFlowDiffusion(g, {{1, 1.0}, {2, 1.0}}, o);
  FlowDiffusionResult b = SolveFlowDiffusion(g, {{1, 1.0}, {2, 1.0}}, o);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.pushes, b.pushes);
  o.max_pushes = 5;
  FlowDiffusionResult c = SolveFlowDiffusion(g, {{1, 1.0}}, o);
  EXPECT_EQ(c.pushes, 5u);
  EXPECT_FALSE(c.converged);
  EXPECT_GT(c.residual, o.epsilon);
}

TEST(QueryAwareWeightTest, Equation5) {
  EXPECT_DOUBLE_EQ(QueryAwareWeight(EdgeWeighting::kMean, 0.3, 0.6, 0.9, 1, 0.25), 0.6);
  EXPECT_DOUBLE_EQ(QueryAwareWeight(EdgeWeighting::kProduct, 0.5, 0.5, 0.4, 1, 0.25), 0.1);
  EXPECT_DOUBLE_EQ(QueryAwareWeight(EdgeWeighting::kHybrid, 0.5, 0.4, 0.4, 1, 0.25), 0.5 * 1.2);
  EXPECT_DOUBLE_EQ(SimilarityFromCosine(SimilarityKind::kCosine, 0.0, 1), 0.5);
  EXPECT_DOUBLE_EQ(SimilarityFromCosine(SimilarityKind::kCosine, 1.0, 1), 1.0);
  EXPECT_DOUBLE_EQ(SimilarityFromCosine(SimilarityKind::kRbf, 1.0, 1), 1.0);
  EXPECT_NEAR(SimilarityFromCosine(SimilarityKind::kRbf, 0.0, 1), std::exp(-2.0), 1e-15);
}

TEST(QafdOptionsTest, OverridesAndErrors) {
  std::map<std::string, std::string> p = {{"qafd.seeds", "10"},        {"qafd.weights", "product"},
                                          {"qafd.similarity", "rbf"},  {"qafd.capacity", "degree"},
                                          {"qafd.passage_scoring", "entities"}, {"qafd.subqueries", "true"}};
  ParamReader r(&p);
  QafdOptions o;
  ASSERT_TRUE(o.Override(r).ok());
  EXPECT_EQ(o.seeds, 10u);
  EXPECT_EQ(o.weights, EdgeWeighting::kProduct);
  EXPECT_EQ(o.similarity, SimilarityKind::kRbf);
  EXPECT_EQ(o.capacity, CapacityKind::kDegree);
  EXPECT_EQ(o.passage_scoring, PassageScoring::kEntities);
  EXPECT_TRUE(o.subqueries);
  std::map<std::string, std::string> bad = {{"qafd.weights", "max"}};
  ParamReader rb(&bad);
  QafdOptions ob;
  Status st = ob.Override(rb);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("qafd.weights"), std::string::npos);
}

// ---- end to end on the demo corpus

class DemoQafdTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir;
    auto e = Engine::Open(dir_->File("demo.db"));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value().release();
    auto r = engine_->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  static void TearDownTestSuite() {
    delete engine_;
    delete dir_;
  }
  std::shared_ptr<const Snapshot> Snap() { return dynamic_cast<EngineImpl*>(engine_)->snapshot(); }

  struct Question {
    std::string text, type;
    std::vector<std::string> gold;
  };
  static std::vector<Question> Questions() {
    std::ifstream in(std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo_questions.jsonl");
    std::vector<Question> qs;
    std::string line;
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line);
      qs.push_back({j["question"], j["type"], j["gold_docs"].get<std::vector<std::string>>()});
    }
    return qs;
  }
  // Recall@k of the gold documents over all questions.
  double Recall(const Retriever& method, size_t k, const std::map<std::string, std::string>* params) {
    auto snap = Snap();
    double found = 0, total = 0;
    for (const Question& q : Questions()) {
      RetrievalRequest req{q.text, k, params};
      auto out = method.Retrieve(*snap, req);
      EXPECT_TRUE(out.ok()) << out.status().ToString();
      if (!out.ok()) continue;
      std::set<std::string> docs;
      for (const RankedPassage& p : out->ranked) docs.insert(snap->document_of(p.passage).external_id);
      for (const std::string& gd : q.gold) found += docs.count(gd);
      total += static_cast<double>(q.gold.size());
    }
    return found / total;
  }

  static testing::TempDir* dir_;
  static Engine* engine_;
};
testing::TempDir* DemoQafdTest::dir_ = nullptr;
Engine* DemoQafdTest::engine_ = nullptr;

TEST_F(DemoQafdTest, RetrievesGoldDocumentsOfMultiHopQuestions) {
  QafdRetriever qafd;
  OneHopRetriever onehop;
  const double r_qafd = Recall(qafd, 5, nullptr);
  const double r_onehop = Recall(onehop, 5, nullptr);
  std::map<std::string, std::string> ent = {{"qafd.passage_scoring", "entities"}};
  std::map<std::string, std::string> sub = {{"qafd.subqueries", "true"}};
  const double r_ent = Recall(qafd, 5, &ent);
  const double r_sub = Recall(qafd, 5, &sub);
  std::cout << "demo Recall@5: qafd " << r_qafd << " (entities " << r_ent << ", subqueries "
            << r_sub << "), onehop " << r_onehop << "\n";
  // Floors just under the measured values (offline hashed embedder, heuristic
  // graph; 0.75, 0.67, 0.71, 0.58). Sub-queries lost a question on this small
  // corpus with seed specificity, which gains 2–4 points on every benchmark.
  EXPECT_GE(r_qafd, 0.7);
  EXPECT_GE(r_onehop, 0.6);
  EXPECT_GE(r_ent, 0.65);
  EXPECT_GE(r_sub, 0.55);
}

TEST_F(DemoQafdTest, OutputCarriesSeedsSubgraphPathsAndDiagnostics) {
  auto snap = Snap();
  const KnowledgeGraph& g = *snap->graph();
  QafdRetriever qafd;
  RetrievalRequest req{"In which town was the man who founded the Lantern Tide Festival born?", 5,
                       nullptr};
  auto out = qafd.Retrieve(*snap, req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->ranked.size(), 5u);
  EXPECT_FALSE(out->seeds.empty());
  EXPECT_LE(out->seeds.size(), 40u);
  EXPECT_FALSE(out->keywords.empty());
  EXPECT_EQ(out->keywords[0], "Lantern Tide Festival");
  EXPECT_GT(out->diagnostics.iterations, 0u);
  EXPECT_LT(out->diagnostics.residual, 0.05);
  EXPECT_GT(out->diagnostics.nodes_touched, 0u);
  EXPECT_GT(out->diagnostics.edges_touched, 0u);
  EXPECT_FALSE(out->subgraph.empty());
  for (const TouchedEdge& e : out->subgraph) {
    EXPECT_GT(e.flow, 0.0);
    EXPECT_GT(e.weight, 0.0);
  }
  std::set<uint32_t> seeds;
  for (const NodeScore& s : out->seeds) seeds.insert(s.node);
  ASSERT_EQ(out->paths.size(), out->ranked.size());
  for (size_t i = 0; i < out->paths.size(); ++i) {
    const ExplanationPath& p = out->paths[i];
    EXPECT_EQ(p.passage, out->ranked[i].passage);
    ASSERT_FALSE(p.nodes.empty());
    EXPECT_EQ(p.nodes.back(), p.passage);
    EXPECT_TRUE(seeds.count(p.nodes.front())) << "path starts at a seed";
    EXPECT_EQ(g.Kind(p.nodes.front()), NodeKind::kEntity);
  }
  // Scores are best first and deterministic.
  for (size_t i = 1; i < out->ranked.size(); ++i) EXPECT_GE(out->ranked[i - 1].score, out->ranked[i].score);
  auto again = qafd.Retrieve(*snap, req);
  ASSERT_TRUE(again.ok());
  for (size_t i = 0; i < out->ranked.size(); ++i) EXPECT_EQ(out->ranked[i].passage, again->ranked[i].passage);
}

TEST_F(DemoQafdTest, EveryOptionRuns) {
  auto snap = Snap();
  QafdRetriever qafd;
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"qafd.weights", "mean"}, {"qafd.weights", "product"}, {"qafd.similarity", "cosine"},
           {"qafd.seed_ratio", "0"},
           {"qafd.capacity", "degree"}, {"qafd.passage_scoring", "entities"},
           {"qafd.subqueries", "true"}, {"qafd.synonyms", "false"}, {"qafd.alpha", "10"}}) {
    std::map<std::string, std::string> p = {{k, v}};
    auto out = qafd.Retrieve(*snap, {"Which company built the research vessel of the institute "
                                     "that Winnie Lusk directed?", 5, &p});
    ASSERT_TRUE(out.ok()) << k << "=" << v << ": " << out.status().ToString();
    EXPECT_FALSE(out->ranked.empty()) << k << "=" << v;
    EXPECT_LT(out->diagnostics.residual, 0.05 * 4) << k << "=" << v;
  }
  std::map<std::string, std::string> unknown = {{"qafd.nope", "1"}};
  auto bad = qafd.Retrieve(*snap, {"x", 5, &unknown});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(DemoQafdTest, SeedRatioDropsWeakSeeds) {
  auto snap = Snap();
  QafdRetriever qafd;
  const std::string q = "In which town was the man who founded the Lantern Tide Festival born?";
  std::map<std::string, std::string> all = {{"qafd.seed_ratio", "0"}};
  std::map<std::string, std::string> strict = {{"qafd.seed_ratio", "0.9"}};
  auto a = qafd.Retrieve(*snap, {q, 5, &all});
  auto b = qafd.Retrieve(*snap, {q, 5, &strict});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_FALSE(b->seeds.empty());
  EXPECT_LT(b->seeds.size(), a->seeds.size());
  for (const NodeScore& s : b->seeds) EXPECT_GE(s.score, 0.9 * b->seeds.front().score - 1e-6);
  std::map<std::string, std::string> bad = {{"qafd.seed_ratio", "1.5"}};
  EXPECT_EQ(qafd.Retrieve(*snap, {q, 5, &bad}).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(DemoQafdTest, OneHopPathsAndRegistry) {
  auto snap = Snap();
  auto m = MakeRetriever("onehop");
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(MakeRetriever("qafd").ok());
  auto out = (*m)->Retrieve(*snap, {"How long is the River Ostrel from its source in the Hallam Hills to the sea?", 5, nullptr});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_FALSE(out->ranked.empty());
  std::set<uint32_t> seeds;
  for (const NodeScore& s : out->seeds) seeds.insert(s.node);
  for (const ExplanationPath& p : out->paths) {
    ASSERT_GE(p.nodes.size(), 2u);
    EXPECT_TRUE(seeds.count(p.nodes.front()));
    EXPECT_EQ(p.nodes.back(), p.passage);
  }
  std::set<std::string> docs;
  for (const RankedPassage& p : out->ranked) docs.insert(snap->document_of(p.passage).external_id);
  EXPECT_TRUE(docs.count("places/river_ostrel.md"));
}

}  // namespace
}  // namespace flowrag
