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
#include "retrieval/ppr_retriever.h"
#include "retrieval/qafd_graph.h"
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

TEST(FlowDiffusionTest, SharedSourceMassAndRelativeEpsilon) {
  TestGraph g = RandomGraph(60, 90, 11);
  FlowDiffusionOptions o;
  o.alpha = 2.0;
  o.source_mass = SourceMass::kShared;
  o.relative_epsilon = true;
  o.epsilon = 1e-3;
  FlowDiffusionResult r = SolveFlowDiffusion(g, {{0, 0.75}, {5, 0.25}}, o);
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

// A hand-worked walk graph: two passages, three entities.
//   p0 –title– Ada, p0 – Bell, p1 – Bell, p1 – 1901 (DATE)
//   Ada – Bell: two facts; Bell – 1901: synonym 0.9.
std::shared_ptr<const KnowledgeGraph> HandGraph() {
  KnowledgeGraph::Input in;
  in.num_passages = 2;
  in.entity_names = {"Ada", "Bell", "1901"};
  in.entity_types = {"TITLE", "PROPER_NOUN", "DATE"};
  in.entity_ids = {1, 2, 3};
  in.mentions = {{0, 0, 1, true, true}, {0, 1, 1, true}, {1, 1, 2, true}, {1, 2, 1, true}};
  in.relation_texts = {"met", "worked with"};
  in.fact_subject = {0, 0};
  in.fact_object = {1, 1};
  in.fact_relation = {0, 1};
  in.fact_texts = {"Ada met Bell", "Ada worked with Bell"};
  in.fact_text = {0, 1};
  in.fact_sources = {{0}, {0}};
  in.synonyms = {{1, 2, 0.9f}};
  auto g = KnowledgeGraph::Build(std::move(in));
  EXPECT_TRUE(g.ok());
  return *g;
}

TEST(WalkGraphTest, HandWorkedWeights) {
  auto g = HandGraph();
  const WalkGraph w = WalkGraph::Build(*g, WalkWeights{});
  // Node ids: p0 = 0, p1 = 1, Ada = 2, Bell = 3, 1901 = 4.
  auto weight = [&](uint32_t u, uint32_t v) {
    for (uint64_t i = w.Begin(u); i < w.End(u); ++i) {
      if (w.Target(i) == v) return static_cast<double>(w.Weight(i));
    }
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(weight(0, 2), 10.0);          // title link
  EXPECT_DOUBLE_EQ(weight(0, 3), 1.0);           // mention, once per pair
  EXPECT_DOUBLE_EQ(weight(1, 3), 1.0);
  EXPECT_NEAR(weight(1, 4), 0.1, 1e-7);          // literal × 0.1
  EXPECT_DOUBLE_EQ(weight(2, 3), 4.0);           // 2 facts × 2
  EXPECT_NEAR(weight(3, 4), 2 * 0.9 * 0.1, 1e-7);  // synonym × literal
  EXPECT_DOUBLE_EQ(weight(2, 4), -1.0);
  for (uint32_t u = 0; u < w.num_nodes(); ++u) {
    double sum = 0;
    for (uint64_t i = w.Begin(u); i < w.End(u); ++i) {
      sum += w.Weight(i);
      EXPECT_DOUBLE_EQ(weight(w.Target(i), u), w.Weight(i)) << "symmetric";
    }
    EXPECT_NEAR(w.RowSum(u), sum, 1e-9);
  }
  EXPECT_EQ(w.Kind(w.Begin(2) + 1), EdgeKind::kRelatedTo);  // Ada's row: p0, Bell
  WalkWeights hub;
  hub.hub_passages = 1;  // Bell is named in two passages: its edges × 1/2
  const WalkGraph h = WalkGraph::Build(*g, hub);
  EXPECT_DOUBLE_EQ(h.Weight(h.Begin(1)), 0.5);  // p1 – Bell
}

TEST(QueryAwareWalkTest, HybridWeightsOnTheStructuralWeight) {
  auto g = HandGraph();
  QafdOptions o;  // hybrid, a = 1, b = 0.25, cosine similarity (1 + cos)/2
  QueryScores scores;
  scores.num_passages = 2;
  scores.dense = {{0, 0.6f}, {1, -0.2f}};
  QueryAwareWalk walk(*g, nullptr, nullptr, nullptr, &scores, o);
  EXPECT_DOUBLE_EQ(walk.QuerySim(0), 0.5 * (1 + static_cast<double>(0.6f)));
  EXPECT_DOUBLE_EQ(walk.QuerySim(2), 0.5);  // no entity vectors: cosine 0
  std::vector<uint32_t> nodes;
  std::vector<double> weights;
  walk.WeightedNeighbors(0, &nodes, &weights);
  ASSERT_EQ(nodes, (std::vector<uint32_t>{2, 3}));
  const double s0 = walk.QuerySim(0);
  EXPECT_NEAR(weights[0], 10.0 * (1 + 0.25 * (s0 + 0.5)), 1e-9);
  EXPECT_NEAR(weights[1], 1.0 * (1 + 0.25 * (s0 + 0.5)), 1e-9);
  EXPECT_EQ(walk.KindBetween(2, 3), EdgeKind::kRelatedTo);
  EXPECT_EQ(walk.KindBetween(3, 4), EdgeKind::kSynonym);
  o.synonyms = false;
  QueryAwareWalk no_syn(*g, nullptr, nullptr, nullptr, &scores, o);
  EXPECT_EQ(no_syn.Degree(3), 3u);  // p0, p1, Ada
}

TEST(QueryAwareWeightTest, Equation5) {
  EXPECT_DOUBLE_EQ(QueryAwareWeight(EdgeWeighting::kMean, 0.3, 0.6, 0.9, 1, 0.25), 0.6);
  EXPECT_DOUBLE_EQ(QueryAwareWeight(EdgeWeighting::kProduct, 0.5, 0.5, 0.4, 1, 0.25), 0.1);
  EXPECT_DOUBLE_EQ(QueryAwareWeight(EdgeWeighting::kHybrid, 0.5, 0.4, 0.4, 1, 0.25), 0.5 * 1.2);
  EXPECT_DOUBLE_EQ(SimilarityFromCosine(SimilarityKind::kCosine, 0.0, 1), 0.5);
  EXPECT_DOUBLE_EQ(SimilarityFromCosine(SimilarityKind::kCosine, 1.0, 1), 1.0);
  EXPECT_DOUBLE_EQ(SimilarityFromCosine(SimilarityKind::kRbf, 1.0, 1), 1.0);
  EXPECT_NEAR(SimilarityFromCosine(SimilarityKind::kRbf, 0.0, 1), std::exp(-2.0), 1e-15);
  EXPECT_DOUBLE_EQ(SimilarityFromCosine(SimilarityKind::kRelu, -0.3, 1), 0.0);
  EXPECT_DOUBLE_EQ(SimilarityFromCosine(SimilarityKind::kRelu, 0.3, 1), 0.3);
}

TEST(QafdOptionsTest, OverridesAndErrors) {
  std::map<std::string, std::string> p = {
      {"qafd.seeds", "names"},          {"qafd.keyword_seeds", "10"},
      {"qafd.weights", "product"},      {"qafd.similarity", "relu"},
      {"qafd.capacity", "degree"},      {"qafd.passage_scoring", "entities"},
      {"qafd.subqueries", "true"},      {"qafd.structure", "similarity"},
      {"qafd.passage_share", "0.2"},    {"qafd.seed_power", "1"}};
  ParamReader r(&p);
  QafdOptions o;
  ASSERT_TRUE(o.Override(r).ok());
  EXPECT_EQ(o.seeds, QafdSeeds::kNames);
  EXPECT_EQ(o.keyword_seeds, 10u);
  EXPECT_EQ(o.weights, EdgeWeighting::kProduct);
  EXPECT_EQ(o.similarity, SimilarityKind::kRelu);
  EXPECT_EQ(o.capacity, CapacityKind::kDegree);
  EXPECT_EQ(o.passage_scoring, PassageScoring::kEntities);
  EXPECT_EQ(o.structure, EdgeStructure::kSimilarity);
  EXPECT_DOUBLE_EQ(o.passage_share, 0.2);
  EXPECT_DOUBLE_EQ(o.seed_power, 1.0);
  EXPECT_TRUE(o.subqueries);
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"qafd.weights", "max"}, {"qafd.seeds", "all"}, {"qafd.passage_share", "1"}}) {
    std::map<std::string, std::string> bad = {{key, value}};
    ParamReader rb(&bad);
    QafdOptions ob;
    Status st = ob.Override(rb);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << key;
    EXPECT_NE(st.message().find(key), std::string::npos) << st.message();
  }
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
  req.explain = true;
  auto out = qafd.Retrieve(*snap, req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->ranked.size(), 5u);
  EXPECT_FALSE(out->seeds.empty());
  EXPECT_FALSE(out->keywords.empty());  // the facts the seeds came from
  EXPECT_GT(out->diagnostics.iterations, 0u);
  EXPECT_GT(out->diagnostics.extra.at("converged"), 0);
  EXPECT_LT(out->diagnostics.residual, QafdOptions{}.epsilon * out->diagnostics.extra.at("injected"));
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
    EXPECT_TRUE(seeds.count(p.nodes.front())) << "path starts at a source";
  }
  bool entity_source = false;
  for (uint32_t s : seeds) entity_source |= g.Kind(s) == NodeKind::kEntity;
  EXPECT_TRUE(entity_source);
  // Without explain: the same ranking, no paths and no subgraph.
  req.explain = false;
  auto plain = qafd.Retrieve(*snap, req);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->paths.empty());
  EXPECT_TRUE(plain->subgraph.empty());
  ASSERT_EQ(plain->ranked.size(), out->ranked.size());
  for (size_t i = 0; i < out->ranked.size(); ++i) {
    EXPECT_EQ(plain->ranked[i].passage, out->ranked[i].passage);
  }
  // Scores are best first and deterministic.
  for (size_t i = 1; i < out->ranked.size(); ++i) EXPECT_GE(out->ranked[i - 1].score, out->ranked[i].score);
  auto again = qafd.Retrieve(*snap, req);
  ASSERT_TRUE(again.ok());
  for (size_t i = 0; i < out->ranked.size(); ++i) EXPECT_EQ(out->ranked[i].passage, again->ranked[i].passage);
}

// The facts mode takes the ppr retriever's reset as its sources: the same
// entity seeds with the same weights (seed_power 1), passages by the prior.
TEST_F(DemoQafdTest, FactSourcesAreThePprReset) {
  auto snap = Snap();
  const KnowledgeGraph& g = *snap->graph();
  const std::string q = "Which company built the research vessel of the institute that Winnie "
                        "Lusk directed?";
  std::map<std::string, std::string> qp = {{"qafd.seed_power", "1"}};
  QafdRetriever qafd;
  PprRetriever ppr;
  auto a = qafd.Retrieve(*snap, {q, 5, &qp});
  auto b = ppr.Retrieve(*snap, {q, 5, nullptr});
  ASSERT_TRUE(a.ok() && b.ok());
  std::map<uint32_t, double> entities;
  double passages = 0;
  for (const NodeScore& s : a->seeds) {
    if (g.Kind(s.node) == NodeKind::kEntity) {
      entities[s.node] = s.score;
    } else {
      passages += s.score;
    }
  }
  ASSERT_EQ(entities.size(), b->seeds.size());
  for (const NodeScore& s : b->seeds) EXPECT_NEAR(entities.at(s.node), s.score, 1e-12);
  EXPECT_NEAR(passages, QafdOptions{}.passage_share, 1e-9);  // the question names an entity
}

TEST_F(DemoQafdTest, EveryOptionRuns) {
  auto snap = Snap();
  QafdRetriever qafd;
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"qafd.weights", "mean"}, {"qafd.weights", "product"}, {"qafd.similarity", "rbf"},
           {"qafd.similarity", "relu"}, {"qafd.seeds", "names"}, {"qafd.structure", "similarity"},
           {"qafd.capacity", "degree"}, {"qafd.passage_scoring", "entities"},
           {"qafd.passage_scoring", "node"}, {"qafd.seed_power", "0"},
           {"qafd.subqueries", "true"}, {"qafd.synonyms", "false"}, {"qafd.alpha", "10"}}) {
    std::map<std::string, std::string> p = {{k, v}};
    auto out = qafd.Retrieve(*snap, {"Which company built the research vessel of the institute "
                                     "that Winnie Lusk directed?", 5, &p});
    ASSERT_TRUE(out.ok()) << k << "=" << v << ": " << out.status().ToString();
    EXPECT_FALSE(out->ranked.empty()) << k << "=" << v;
    EXPECT_TRUE(out->diagnostics.extra.at("converged") > 0) << k << "=" << v;
  }
  std::map<std::string, std::string> unknown = {{"qafd.nope", "1"}};
  auto bad = qafd.Retrieve(*snap, {"x", 5, &unknown});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(DemoQafdTest, SeedRatioDropsWeakSeeds) {
  auto snap = Snap();
  QafdRetriever qafd;
  const std::string q = "In which town was the man who founded the Lantern Tide Festival born?";
  std::map<std::string, std::string> all = {{"qafd.seeds", "names"}, {"qafd.seed_ratio", "0"}};
  std::map<std::string, std::string> strict = {{"qafd.seeds", "names"},
                                               {"qafd.seed_ratio", "0.9"}};
  auto a = qafd.Retrieve(*snap, {q, 5, &all});
  auto b = qafd.Retrieve(*snap, {q, 5, &strict});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_FALSE(b->seeds.empty());
  EXPECT_LT(b->seeds.size(), a->seeds.size());
  for (const NodeScore& s : b->seeds) EXPECT_GE(s.score, 0.9 * b->seeds.front().score - 1e-6);
  std::map<std::string, std::string> bad = {{"qafd.seeds", "names"}, {"qafd.seed_ratio", "1.5"}};
  EXPECT_EQ(qafd.Retrieve(*snap, {q, 5, &bad}).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(DemoQafdTest, OneHopPathsAndRegistry) {
  auto snap = Snap();
  auto m = MakeRetriever("onehop");
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(MakeRetriever("qafd").ok());
  RetrievalRequest req{"How long is the River Ostrel from its source in the Hallam Hills to the sea?", 5,
                       nullptr};
  req.explain = true;
  auto out = (*m)->Retrieve(*snap, req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_FALSE(out->ranked.empty());
  for (const ExplanationPath& p : out->paths) {  // one-hop's own tests: one_hop_test.cc
    ASSERT_FALSE(p.nodes.empty());
    EXPECT_EQ(p.nodes.back(), p.passage);
  }
  std::set<std::string> docs;
  for (const RankedPassage& p : out->ranked) docs.insert(snap->document_of(p.passage).external_id);
  EXPECT_TRUE(docs.count("places/river_ostrel.md"));
}

}  // namespace
}  // namespace flowrag
