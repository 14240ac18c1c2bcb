// SA-RAG spreading activation: Algorithm 1 on hand-worked graphs, the link
// weight rescaling, thresholds, and the "sa" retriever end to end on the demo
// corpus (heuristic graph, hashed embedder).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/engine_impl.h"
#include "flowrag/engine.h"
#include "retrieval/sa_retriever.h"
#include "retrieval/spreading_activation.h"
#include "retrieval/text_retrievers.h"
#include "test_util.h"

namespace flowrag {
namespace {

using testing::TempDir;

// Undirected links become two arcs, (a→b) then (b→a), in link order.
SaGraph Undirected(size_t n, std::vector<std::tuple<uint32_t, uint32_t, float>> links) {
  std::vector<SaGraph::Arc> arcs;
  for (auto [a, b, w] : links) {
    arcs.push_back({a, b, w});
    arcs.push_back({b, a, w});
  }
  return SaGraph::FromArcs(n, arcs);
}

// A=0, B=1, C=2, D=3, E=4 (isolated). Links A–B .5, B–C .6, A–D .9, D–C .5.
// Arcs per source, in order: A:[B .5, D .9]  B:[A .5, C .6]  C:[B .6, D .5]
// D:[A .9, C .5].  Seed A.
//   a = (1, 0, 0, 0, 0), Q = [A]
//   pop A: a_B = min(1, 0 + .5·1) = .5 (push B); a_D = .9 (push D)      Q=[B,D]
//   pop B: a_A = min(1, 1 + .5·.5) = 1 (visited); a_C = .6·.5 = .3 (push C)  Q=[D,C]
//   pop D: a_A = 1; a_C = .3 + .5·.9 = .75 (push C again)               Q=[C,C]
//   pop C: a_B = min(1, .5 + .6·.75) = .95; a_D = min(1, .9 + .5·.75) = 1
//   pop C: already visited → skip
// Result: A=1, B=.95, C=.75, D=1, E=0; 4 expansions, 8 arc updates.
TEST(SpreadActivationTest, HandWorkedSingleSeed) {
  SaGraph g = Undirected(5, {{0, 1, 0.5f}, {1, 2, 0.6f}, {0, 3, 0.9f}, {3, 2, 0.5f}});
  const uint32_t seeds[] = {0};
  SaRun run = SpreadActivation(g, seeds, /*track_carried=*/true);
  ASSERT_EQ(run.activation.size(), 5u);
  EXPECT_FLOAT_EQ(run.activation[0], 1.0f);
  EXPECT_FLOAT_EQ(run.activation[1], 0.95f);
  EXPECT_FLOAT_EQ(run.activation[2], 0.75f);
  EXPECT_FLOAT_EQ(run.activation[3], 1.0f);
  EXPECT_FLOAT_EQ(run.activation[4], 0.0f);
  EXPECT_EQ(run.steps, 4u);
  EXPECT_EQ(run.arc_updates, 8u);
  // First-activating arcs: B and D from A, C from B (A's arcs are 0,1; B's 2,3).
  EXPECT_EQ(run.first_arc[0], SaRun::kNoArc);
  EXPECT_EQ(g.targets[run.first_arc[1]], 1u);
  EXPECT_LT(run.first_arc[1], g.offsets[1]);  // an arc of A
  EXPECT_EQ(run.first_arc[2], g.offsets[1] + 1);  // B → C
  EXPECT_EQ(run.first_arc[4], SaRun::kNoArc);
  // Carried activation: A→B .5 then C→B .45; D→C .45; C→D capped at .1.
  EXPECT_FLOAT_EQ(run.carried[0], 0.5f);                  // A→B
  EXPECT_FLOAT_EQ(run.carried[g.offsets[2]], 0.45f);      // C→B
  EXPECT_NEAR(run.carried[g.offsets[2] + 1], 0.1f, 1e-6);  // C→D (cap)
  EXPECT_EQ(ActivatedNodes(run, 0.5f), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(ActivatedNodes(run, 0.8f), (std::vector<uint32_t>{0, 1, 3}));
}

// Path 0 –.2– 1 –.2– 2, seeds [0, 2]; visited is reset per seed, so the
// second pass re-propagates from the first seed's side.
//   seed 0: a0 = 1; pop 0: a1 = .2; pop 1: a0 = 1, a2 = .04; pop 2: a1 = .2 + .2·.04 = .208
//   seed 2: a2 = 1; pop 2: a1 = .208 + .2 = .408; pop 1: a0 = 1, a2 = 1 (cap), push 0;
//           pop 0: a1 = .408 + .2·1 = .608
// Result: (1, .608, 1).
TEST(SpreadActivationTest, HandWorkedTwoSeedsResetVisited) {
  SaGraph g = Undirected(3, {{0, 1, 0.2f}, {1, 2, 0.2f}});
  const uint32_t seeds[] = {0, 2};
  SaRun run = SpreadActivation(g, seeds);
  EXPECT_FLOAT_EQ(run.activation[0], 1.0f);
  EXPECT_NEAR(run.activation[1], 0.608f, 1e-6);
  EXPECT_FLOAT_EQ(run.activation[2], 1.0f);
  EXPECT_EQ(run.steps, 6u);
  EXPECT_TRUE(run.carried.empty());
  // Duplicate and out-of-range seeds are ignored.
  const uint32_t dup[] = {0, 2, 0, 7};
  SaRun again = SpreadActivation(g, dup);
  EXPECT_EQ(again.activation, run.activation);
  EXPECT_EQ(again.steps, run.steps);
}

TEST(SpreadActivationTest, ThresholdIsStrict) {
  SaGraph g = Undirected(3, {{0, 1, 0.5f}, {1, 2, 0.0f}});
  const uint32_t seeds[] = {0};
  SaRun run = SpreadActivation(g, seeds);
  EXPECT_FLOAT_EQ(run.activation[1], 0.5f);  // exactly τa: not activated
  EXPECT_FLOAT_EQ(run.activation[2], 0.0f);  // reached through a 0-weight arc: nothing carried
  EXPECT_EQ(run.steps, 3u);                  // ... but traversed, as in Algorithm 1
  EXPECT_EQ(ActivatedNodes(run, 0.5f), std::vector<uint32_t>{0});
  EXPECT_EQ(ActivatedNodes(run, 0.49f), (std::vector<uint32_t>{0, 1}));
}

TEST(SpreadActivationTest, EmptyInputs) {
  SaGraph empty;
  EXPECT_TRUE(SpreadActivation(empty, {}).activation.empty());
  SaGraph g = Undirected(2, {{0, 1, 1.0f}});
  SaRun run = SpreadActivation(g, {});
  EXPECT_EQ(run.activation, (std::vector<float>{0.0f, 0.0f}));
}

// w' = (w − c)/(1 − c), clipped at 0 (SA-RAG §5.5, c = 0.4).
TEST(SpreadActivationTest, Rescaling) {
  EXPECT_FLOAT_EQ(RescaleLinkWeight(1.0f, 0.4f), 1.0f);
  EXPECT_NEAR(RescaleLinkWeight(0.7f, 0.4f), 0.5f, 1e-6);
  EXPECT_NEAR(RescaleLinkWeight(0.55f, 0.4f), 0.25f, 1e-6);
  EXPECT_FLOAT_EQ(RescaleLinkWeight(0.4f, 0.4f), 0.0f);
  EXPECT_FLOAT_EQ(RescaleLinkWeight(0.1f, 0.4f), 0.0f);   // clipped, no inhibition
  EXPECT_FLOAT_EQ(RescaleLinkWeight(-0.3f, 0.4f), 0.0f);
  EXPECT_FLOAT_EQ(RescaleLinkWeight(0.3f, 0.0f), 0.3f);   // c = 0: identity
  EXPECT_FLOAT_EQ(RescaleLinkWeight(std::nanf(""), 0.4f), 0.0f);
}

TEST(SaOptionsTest, OverridesAndValidation) {
  std::map<std::string, std::string> p{{"sa.k", "3"},       {"sa.hops", "4"},
                                       {"sa.c", "0.3"},     {"sa.tau_a", "0.6"},
                                       {"sa.tau_d", "0.2"}, {"sa.tau_r", "0.1"},
                                       {"sa.max_passages", "2"}};
  ParamReader r(&p);
  SaOptions o;
  ASSERT_TRUE(o.Override(r).ok());
  EXPECT_TRUE(r.CheckAllUsed("sa").ok());
  EXPECT_EQ(o.k, 3u);
  EXPECT_EQ(o.hops, 4u);
  EXPECT_DOUBLE_EQ(o.c, 0.3);
  EXPECT_DOUBLE_EQ(o.tau_a, 0.6);
  EXPECT_DOUBLE_EQ(o.tau_d, 0.2);
  EXPECT_DOUBLE_EQ(o.tau_r, 0.1);
  EXPECT_EQ(o.max_passages, 2u);
  for (auto [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"sa.c", "1"}, {"sa.k", "0"}, {"sa.tau_a", "1.5"}, {"sa.tau_r", "-1"}, {"sa.k", "x"}}) {
    std::map<std::string, std::string> bad{{key, value}};
    ParamReader br(&bad);
    SaOptions bo;
    Status st = bo.Override(br);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << key << "=" << value;
    EXPECT_NE(st.message().find(key), std::string::npos) << st.message();
  }
}

// ---- the retriever on the demo corpus

const std::string kDemo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";

struct DemoQuestion {
  std::string id, question, type;
  std::vector<std::string> gold;
};

std::vector<DemoQuestion> LoadQuestions() {
  std::ifstream in(std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo_questions.jsonl");
  std::vector<DemoQuestion> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    out.push_back({j["id"], j["question"], j["type"], j["gold_docs"]});
  }
  return out;
}

class SaDemoTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    auto e = Engine::Open(dir_->File("demo.db"));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value().release();
    auto r = engine_->Index({kDemo});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->extractor, "heuristic");
  }
  static void TearDownTestSuite() {
    delete engine_;
    delete dir_;
  }
  std::shared_ptr<const Snapshot> Snap() {
    return dynamic_cast<EngineImpl*>(engine_)->snapshot();
  }
  Result<RetrievalOutput> Run(const std::string& q, size_t k,
                              const std::map<std::string, std::string>& params = {}) {
    RetrievalRequest req;
    req.query = q;
    req.top_k = k;
    req.params = &params;
    return SaRetriever().Retrieve(*Snap(), req);
  }
  static TempDir* dir_;
  static Engine* engine_;
};
TempDir* SaDemoTest::dir_ = nullptr;
Engine* SaDemoTest::engine_ = nullptr;

TEST_F(SaDemoTest, RegisteredAsSa) {
  auto r = MakeRetriever("sa");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->Name(), "sa");
}

// Multi-hop questions: the gold documents come back in the top 5. Reported
// per question; the bar is the measured recall of this version (see the
// commit message), so a regression shows.
TEST_F(SaDemoTest, MultiHopQuestionsRetrieveGoldDocuments) {
  auto snap = Snap();
  double recall_sum = 0.0;
  size_t n = 0, activation_hits = 0, gold_total = 0;
  for (const DemoQuestion& q : LoadQuestions()) {
    if (q.type == "single") continue;
    auto out = Run(q.question, 5);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    std::set<std::string> got;
    std::set<std::string> from_activation;
    for (const RankedPassage& p : out->ranked) {
      got.insert(snap->document_of(p.passage).external_id);
      if (p.score > 1.0) from_activation.insert(snap->document_of(p.passage).external_id);
    }
    size_t hit = 0;
    for (const std::string& g : q.gold) {
      hit += got.count(g);
      activation_hits += from_activation.count(g);
    }
    gold_total += q.gold.size();
    recall_sum += static_cast<double>(hit) / q.gold.size();
    ++n;
    std::printf("%s R@5=%zu/%zu seeds=%.0f activated=%.0f sa=%.0f fill=%.0f ctx=%zu\n",
                q.id.c_str(), hit, q.gold.size(), out->diagnostics.extra["seeds"],
                out->diagnostics.extra["activated"], out->diagnostics.extra["sa_passages"],
                out->diagnostics.extra["dense_fill"], out->context.size());
  }
  ASSERT_GT(n, 5u);
  const double recall = recall_sum / n;
  std::printf("multi-hop demo Recall@5 = %.3f over %zu questions; %zu/%zu gold via activation\n",
              recall, n, activation_hits, gold_total);
  EXPECT_GE(recall, 0.75);
}

TEST_F(SaDemoTest, OutputsAreConsistent) {
  auto snap = Snap();
  const KnowledgeGraph& g = *snap->graph();
  // Looser thresholds so that the activation path is exercised end to end.
  std::map<std::string, std::string> p{{"sa.c", "0"}, {"sa.tau_d", "0"}, {"sa.tau_r", "0"},
                                       {"sa.tau_a", "0.1"}};
  auto out = Run("In which town was the man who founded the Lantern Tide Festival born?", 5, p);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->ranked.size(), 5u);
  ASSERT_FALSE(out->seeds.empty());
  EXPECT_LE(out->seeds.size(), 10u);
  std::set<uint32_t> seeds;
  for (const NodeScore& s : out->seeds) {
    EXPECT_EQ(g.Kind(s.node), NodeKind::kEntity);
    EXPECT_EQ(s.score, 1.0);
    seeds.insert(s.node);
  }
  for (size_t i = 1; i < out->ranked.size(); ++i) {
    EXPECT_GE(out->ranked[i - 1].score, out->ranked[i].score);
  }
  // node_scores: entities by activation, best first, in (0, 1].
  double prev = 2.0;
  for (const NodeScore& s : out->node_scores) {
    if (g.Kind(s.node) != NodeKind::kEntity) break;
    EXPECT_LE(s.score, prev);
    EXPECT_GT(s.score, 0.0);
    EXPECT_LE(s.score, 1.0);
    prev = s.score;
  }
  // Paths: seed first, entities joined by RELATED_TO, then the passage.
  const Csr& rel = g.Edges(EdgeKind::kRelatedTo);
  size_t activation_passages = 0;
  for (const RankedPassage& r : out->ranked) activation_passages += r.score > 1.0;
  ASSERT_GT(activation_passages, 0u);
  ASSERT_EQ(out->paths.size(), activation_passages);
  for (const ExplanationPath& path : out->paths) {
    ASSERT_GE(path.nodes.size(), 2u);
    EXPECT_TRUE(seeds.count(path.nodes.front()));
    EXPECT_EQ(path.nodes.back(), path.passage);
    for (size_t i = 0; i + 2 < path.nodes.size(); ++i) {
      const uint32_t a = path.nodes[i], b = path.nodes[i + 1];
      bool linked = false;
      for (uint64_t j = rel.Begin(a); j < rel.End(a); ++j) linked |= rel.targets[j] == b;
      EXPECT_TRUE(linked) << "no RELATED_TO edge on the path";
    }
    const uint32_t last_entity = path.nodes[path.nodes.size() - 2];
    const Csr& men = g.Edges(EdgeKind::kMentions);
    bool mentions = false;
    for (uint64_t j = men.Begin(last_entity); j < men.End(last_entity); ++j) {
      mentions |= men.targets[j] == path.passage;
    }
    EXPECT_TRUE(mentions);
  }
  // Subgraph arcs carried activation; context texts are relation texts.
  ASSERT_FALSE(out->subgraph.empty());
  for (const TouchedEdge& e : out->subgraph) EXPECT_GT(e.flow, 0.0);
  EXPECT_FALSE(out->context.empty());
  std::set<std::string> relations;
  for (uint32_t r = 0; r < g.num_relations(); ++r) relations.insert(g.RelationText(r));
  for (const std::string& c : out->context) EXPECT_TRUE(relations.count(c)) << c;
  EXPECT_GT(out->diagnostics.iterations, 0u);
  EXPECT_GT(out->diagnostics.nodes_touched, 0u);
  EXPECT_GT(out->diagnostics.edges_touched, 0u);
}

TEST_F(SaDemoTest, Deterministic) {
  const std::string q =
      "The composer of the Greymantle Suite founded an orchestra. How many seats does the main "
      "auditorium of that orchestra's permanent home have?";
  std::map<std::string, std::string> p{{"sa.c", "0"}, {"sa.tau_d", "0"}};
  auto a = Run(q, 5, p);
  auto b = Run(q, 5, p);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->ranked.size(), b->ranked.size());
  for (size_t i = 0; i < a->ranked.size(); ++i) {
    EXPECT_EQ(a->ranked[i].passage, b->ranked[i].passage);
    EXPECT_EQ(a->ranked[i].score, b->ranked[i].score);
  }
  ASSERT_EQ(a->node_scores.size(), b->node_scores.size());
  for (size_t i = 0; i < a->node_scores.size(); ++i) {
    EXPECT_EQ(a->node_scores[i].node, b->node_scores[i].node);
    EXPECT_EQ(a->node_scores[i].score, b->node_scores[i].score);
  }
  EXPECT_EQ(a->context, b->context);
  EXPECT_EQ(a->diagnostics.iterations, b->diagnostics.iterations);
}

// With τd = 1 nothing passes the passage filter: the result is the dense
// ranking, in full.
TEST_F(SaDemoTest, FallsBackToDenseRanking) {
  const std::string q = "Which club is older, Hollin Bay Athletic or Port Calder Rowing Club?";
  auto sa = Run(q, 5, {{"sa.tau_d", "1"}, {"sa.scale", "absolute"}});
  ASSERT_TRUE(sa.ok()) << sa.status().ToString();
  RetrievalRequest req;
  req.query = q;
  req.top_k = 5;
  auto dense = DenseRetriever().Retrieve(*Snap(), req);
  ASSERT_TRUE(dense.ok());
  ASSERT_EQ(sa->ranked.size(), dense->ranked.size());
  for (size_t i = 0; i < sa->ranked.size(); ++i) {
    EXPECT_EQ(sa->ranked[i].passage, dense->ranked[i].passage);
    EXPECT_NEAR(sa->ranked[i].score, dense->ranked[i].score, 1e-6);
  }
  EXPECT_EQ(sa->diagnostics.extra["dense_fill"], 5.0);
  EXPECT_TRUE(sa->paths.empty());
  // Without the fill, nothing comes back.
  auto none = Run(q, 5, {{"sa.tau_d", "1"}, {"sa.dense_fill", "false"}, {"sa.scale", "absolute"}});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->ranked.empty());
  // sa.max_passages caps the activation part; the fill completes top_k without duplicates.
  auto capped = Run(q, 5, {{"sa.c", "0"}, {"sa.tau_d", "0"}, {"sa.max_passages", "2"}});
  ASSERT_TRUE(capped.ok());
  ASSERT_EQ(capped->ranked.size(), 5u);
  std::set<uint32_t> distinct;
  size_t activation = 0;
  for (const RankedPassage& r : capped->ranked) {
    distinct.insert(r.passage);
    activation += r.score > 1.0;
  }
  EXPECT_EQ(distinct.size(), 5u);
  EXPECT_LE(activation, 2u);
}

TEST_F(SaDemoTest, RelativeScaleReadsThresholdsAsFractionsOfTheBest) {
  const std::string q = "Which company built the research vessel of the institute that Winnie "
                        "Lusk directed?";
  auto relative = Run(q, 10, {{"sa.dense_fill", "false"}});  // auto: the hashed embedder is local
  auto absolute = Run(q, 10, {{"sa.dense_fill", "false"}, {"sa.scale", "absolute"}});
  ASSERT_TRUE(relative.ok() && absolute.ok());
  EXPECT_EQ(relative->diagnostics.extra["relative_scale"], 1.0);
  EXPECT_EQ(absolute->diagnostics.extra["relative_scale"], 0.0);
  // Relative weights are cosines divided by at most the seeds' best one, so
  // at least as many arcs clear c.
  EXPECT_GE(relative->diagnostics.extra["positive_arcs"],
            absolute->diagnostics.extra["positive_arcs"]);
  ASSERT_FALSE(relative->ranked.empty());
  for (const RankedPassage& r : relative->ranked) {
    EXPECT_GT(r.score, 1.0);   // every passage came from activation
    EXPECT_LE(r.score, 2.0 + 1e-9);
  }
  // τd = 1 keeps only a candidate that is best by both cosine and BM25.
  auto top = Run(q, 10, {{"sa.dense_fill", "false"}, {"sa.tau_d", "1"}});
  ASSERT_TRUE(top.ok());
  EXPECT_LE(top->ranked.size(), 1u);
  auto bad = Run(q, 5, {{"sa.scale", "loose"}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(SaDemoTest, ThresholdsShrinkTheResult) {
  const std::string q = "Which company built the research vessel of the institute that Winnie "
                        "Lusk directed?";
  auto loose = Run(q, 10, {{"sa.c", "0"}, {"sa.tau_a", "0.05"}, {"sa.tau_r", "0"}});
  auto strict = Run(q, 10, {{"sa.c", "0"}, {"sa.tau_a", "0.95"}, {"sa.tau_r", "0.5"}});
  ASSERT_TRUE(loose.ok() && strict.ok());
  EXPECT_GE(loose->diagnostics.extra["activated"], strict->diagnostics.extra["activated"]);
  EXPECT_GE(loose->diagnostics.extra["candidate_passages"],
            strict->diagnostics.extra["candidate_passages"]);
  EXPECT_GE(loose->context.size(), strict->context.size());
  // Larger c only lowers the weights, so it can only lower activations.
  auto high_c = Run(q, 10, {{"sa.c", "0.8"}, {"sa.tau_a", "0.05"}});
  ASSERT_TRUE(high_c.ok());
  EXPECT_LE(high_c->diagnostics.extra["positive_arcs"], loose->diagnostics.extra["positive_arcs"]);
  // Unknown keys are rejected.
  auto bad = Run(q, 5, {{"sa.nope", "1"}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

// The default adjacency keeps only arcs that can carry activation; the
// exact traversal (sa.all_arcs) also walks the 0-weight arcs, which changes
// the expansion order and so some activations (the activated count differs
// on 9 of 12 demo questions at c = 0.1), but on the demo not the returned
// passages nor the relation context.
TEST_F(SaDemoTest, CarryingArcsMatchExactTraversal) {
  for (const DemoQuestion& q : LoadQuestions()) {
    std::map<std::string, std::string> p{{"sa.c", "0.1"}, {"sa.tau_d", "0"}, {"sa.tau_a", "0.3"}};
    auto fast = Run(q.question, 5, p);
    p["sa.all_arcs"] = "true";
    auto exact = Run(q.question, 5, p);
    ASSERT_TRUE(fast.ok() && exact.ok());
    ASSERT_EQ(fast->ranked.size(), exact->ranked.size()) << q.id;
    for (size_t i = 0; i < fast->ranked.size(); ++i) {
      EXPECT_EQ(fast->ranked[i].passage, exact->ranked[i].passage) << q.id;
      EXPECT_NEAR(fast->ranked[i].score, exact->ranked[i].score, 1e-5) << q.id;
    }
    std::printf("%s activated: carrying arcs %.0f, all arcs %.0f\n", q.id.c_str(),
                fast->diagnostics.extra["activated"], exact->diagnostics.extra["activated"]);
    EXPECT_EQ(fast->context, exact->context) << q.id;
    EXPECT_LE(fast->diagnostics.extra["relations_scored"],
              exact->diagnostics.extra["relations_scored"]);
  }
}

}  // namespace
}  // namespace flowrag
