// The qafd retriever's parts (the walk graph's weights, the query-aware
// weights of Eq. 5, its options) and the qafd / onehop retrievers end to end
// on the demo corpus. The flow diffusion solver alone is checked in
// flow_diffusion_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/engine_impl.h"
#include "flowrag/engine.h"
#include "graph_algo/flow_diffusion.h"
#include "retrieval/one_hop_retriever.h"
#include "retrieval/ppr_retriever.h"
#include "retrieval/qafd_graph.h"
#include "retrieval/qafd_retriever.h"
#include "retrieval/retriever.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

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

// VisitNeighbors reads the walk row in place in Neighbors' order, with and
// without synonyms, and stops at the first false (the feasibility guard's
// early exit, which spares it listing a hub's every neighbour).
TEST(QueryAwareWalkTest, VisitNeighborsFollowsNeighborsAndStopsWhenAsked) {
  auto g = HandGraph();
  QueryScores scores;
  scores.num_passages = 2;
  for (bool synonyms : {true, false}) {
    QafdOptions o;
    o.synonyms = synonyms;
    QueryAwareWalk walk(*g, nullptr, nullptr, nullptr, &scores, o);
    for (uint32_t u = 0; u < walk.num_nodes(); ++u) {
      std::vector<uint32_t> listed, visited;
      walk.Neighbors(u, &listed);
      EXPECT_TRUE(walk.VisitNeighbors(u, [&](uint32_t v) {
        visited.push_back(v);
        return true;
      }));
      EXPECT_EQ(visited, listed) << u;
      if (listed.size() < 2) continue;
      visited.clear();
      EXPECT_FALSE(walk.VisitNeighbors(u, [&](uint32_t v) {
        visited.push_back(v);
        return visited.size() < 2;
      }));
      EXPECT_EQ(visited, std::vector<uint32_t>(listed.begin(), listed.begin() + 2)) << u;
    }
  }
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
      for (const RankedPassage& p : out->ranked) docs.emplace(snap->document_of(p.passage).external_id);
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
  for (const RankedPassage& p : out->ranked) docs.emplace(snap->document_of(p.passage).external_id);
  EXPECT_TRUE(docs.count("places/river_ostrel.md"));
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
