// The SA-RAG retriever ("sa", retrieval/sa_retriever.h): its options, and
// end to end on the demo corpus (heuristic graph, hashed embedder): gold
// documents, consistent outputs, determinism, the dense fallback, the
// relative scale, thresholds and the passage ranking. Spreading activation
// alone is checked in spreading_activation_test.cc.
#include "retrieval/sa_retriever.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/engine_impl.h"
#include "flowrag/engine.h"
#include "retrieval/text_retrievers.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::TempDir;
using testing::WriteFile;

TEST(SaOptionsTest, OverridesAndValidation) {
  std::map<std::string, std::string> p{
      {"sa.k", "3"},       {"sa.hops", "4"},    {"sa.c", "0.3"},         {"sa.tau_a", "0.6"},
      {"sa.tau_d", "0.2"}, {"sa.tau_r", "0.1"}, {"sa.max_passages", "2"}};
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
  std::shared_ptr<const Snapshot> Snap() { return dynamic_cast<EngineImpl*>(engine_)->snapshot(); }
  Result<RetrievalOutput> Run(const std::string& q, size_t k,
                              const std::map<std::string, std::string>& params = {},
                              bool explain = false) {
    RetrievalRequest req;
    req.query = q;
    req.top_k = k;
    req.params = &params;
    req.explain = explain;
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
      got.emplace(snap->document_of(p.passage).external_id);
      if (p.score > 1.0) from_activation.emplace(snap->document_of(p.passage).external_id);
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
  std::map<std::string, std::string> p{
      {"sa.c", "0"}, {"sa.tau_d", "0"}, {"sa.tau_r", "0"}, {"sa.tau_a", "0.1"}};
  const std::string q = "In which town was the man who founded the Lantern Tide Festival born?";
  auto plain = Run(q, 5, p);
  auto out = Run(q, 5, p, /*explain=*/true);
  ASSERT_TRUE(out.ok() && plain.ok()) << out.status().ToString();
  // Without explain: the same ranking, no paths or subgraph.
  ASSERT_EQ(plain->ranked.size(), out->ranked.size());
  for (size_t i = 0; i < out->ranked.size(); ++i) {
    EXPECT_EQ(plain->ranked[i].passage, out->ranked[i].passage);
  }
  EXPECT_TRUE(plain->paths.empty());
  EXPECT_TRUE(plain->subgraph.empty());
  EXPECT_EQ(plain->node_scores.size(), out->node_scores.size());
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
  for (uint32_t r = 0; r < g.num_relations(); ++r) relations.emplace(g.RelationText(r));
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
  const std::string q =
      "Which company built the research vessel of the institute that Winnie "
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
    // Every passage came from activation: > 1 + mention_weight · τa.
    EXPECT_GT(r.score, 1.25);
    EXPECT_LE(r.score, 2.1 + 1e-9);  // 1 + a + β·sim, a ≤ 1, β = 0.1
  }
  // τd = 1 keeps only a candidate that is best by both cosine and BM25.
  auto top = Run(q, 10, {{"sa.dense_fill", "false"}, {"sa.tau_d", "1"}});
  ASSERT_TRUE(top.ok());
  EXPECT_LE(top->ranked.size(), 1u);
  auto bad = Run(q, 5, {{"sa.scale", "loose"}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(SaDemoTest, ThresholdsShrinkTheResult) {
  const std::string q =
      "Which company built the research vessel of the institute that Winnie "
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

// A hand-built graph (OpenIE import) where the activation order differs
// from the similarity order. The query names Orla Venn; its link to Hask
// Mirel ("was built by the company founded by") matches the question, its
// link to Pell Durran ("shares a company office with") less so. Pell
// Durran's passage repeats the question's words, Hask Mirel's shares none:
// dense and BM25
// rank Pell's first, SA ranks Hask's first because Hask is the more
// activated entity.
TEST(SaRankingTest, ActivationOrderBeforeSimilarityOrder) {
  TempDir dir;
  WriteFile(dir.File("corpus.jsonl"),
            "{\"id\": \"p1\", \"title\": \"Orla Venn\", \"text\": \"Orla Venn is a canal.\"}\n"
            "{\"id\": \"p2\", \"title\": \"Hask Mirel\", \"text\": \"Hask Mirel carved stone "
            "arches near Tarn Ebb.\"}\n"
            "{\"id\": \"p3\", \"title\": \"Pell Durran\", \"text\": \"Pell Durran: who founded "
            "the company that built the canal is unknown.\"}\n"
            "{\"id\": \"p4\", \"title\": \"Tarn Ebb\", \"text\": \"Tarn Ebb is a village.\"}\n");
  WriteFile(dir.File("openie.jsonl"),
            "{\"id\": \"p1\", \"entities\": [\"Orla Venn\", \"Hask Mirel\", \"Pell Durran\"], "
            "\"triples\": [[\"Orla Venn\", \"was built by the company founded by\", \"Hask "
            "Mirel\"], [\"Orla Venn\", \"shares a company office with\", \"Pell Durran\"]]}\n"
            "{\"id\": \"p2\", \"entities\": [\"Hask Mirel\", \"Tarn Ebb\"], \"triples\": "
            "[[\"Hask Mirel\", \"carved arches near\", \"Tarn Ebb\"]]}\n"
            "{\"id\": \"p3\", \"entities\": [\"Pell Durran\"], \"triples\": []}\n"
            "{\"id\": \"p4\", \"entities\": [\"Tarn Ebb\"], \"triples\": []}\n");
  auto e = Engine::Open(dir.File("s.db"));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  IndexOptions io;
  io.chunking.strategy = ChunkOptions::Strategy::kNone;
  io.extractor = "none";
  ASSERT_TRUE((*e)->Index({dir.File("corpus.jsonl")}, io).ok());
  ASSERT_TRUE((*e)->ImportOpenIe(dir.File("openie.jsonl")).ok());
  auto snap = dynamic_cast<EngineImpl*>(e->get())->snapshot();
  auto index_of = [&](const std::string& id) {
    for (uint32_t p = 0; p < snap->num_passages(); ++p) {
      if (snap->document_of(p).external_id == id) return p;
    }
    return UINT32_MAX;
  };
  const uint32_t hask = index_of("p2"), pell = index_of("p3");
  const std::string q = "Who founded the company that built Orla Venn?";
  auto position = [](const RetrievalOutput& out, uint32_t p) {
    for (size_t i = 0; i < out.ranked.size(); ++i) {
      if (out.ranked[i].passage == p) return i;
    }
    return out.ranked.size();
  };
  RetrievalRequest req;
  req.query = q;
  req.top_k = 4;
  // Similarity puts Pell Durran's passage above Hask Mirel's ...
  auto dense = DenseRetriever().Retrieve(*snap, req);
  auto bm25 = Bm25Retriever().Retrieve(*snap, req);
  ASSERT_TRUE(dense.ok() && bm25.ok());
  EXPECT_LT(position(*dense, pell), position(*dense, hask));
  EXPECT_LT(position(*bm25, pell), position(*bm25, hask));
  // ... activation the other way round. Links are scored on the question
  // without the seed's name, c = 0 and τa = 0.1 let the weaker link
  // activate Pell Durran too; no fill, so only activation passages return.
  std::map<std::string, std::string> p{{"sa.c", "0"},
                                       {"sa.tau_a", "0.1"},
                                       {"sa.fire", "0.1"},
                                       {"sa.mention_weight", "1"},
                                       {"sa.dense_fill", "false"}};
  req.params = &p;
  req.explain = true;
  auto sa = SaRetriever().Retrieve(*snap, req);
  ASSERT_TRUE(sa.ok()) << sa.status().ToString();
  const KnowledgeGraph& g = *snap->graph();
  std::map<std::string, double> activation;
  for (const NodeScore& n : sa->node_scores) {
    if (g.Kind(n.node) == NodeKind::kEntity)
      activation[std::string(g.EntityName(g.LocalIndex(n.node)))] = n.score;
  }
  ASSERT_TRUE(activation.count("Hask Mirel") && activation.count("Pell Durran"));
  EXPECT_GT(activation["Hask Mirel"], activation["Pell Durran"]);
  EXPECT_GT(activation["Pell Durran"], 0.1);
  ASSERT_LT(position(*sa, pell), sa->ranked.size());
  EXPECT_LT(position(*sa, hask), position(*sa, pell));
  // Each activation passage scores 1 + its activation + 0.1 · similarity.
  for (const RankedPassage& r : sa->ranked) EXPECT_GT(r.score, 1.1);
  // Hask Mirel's path starts at the seed.
  for (const ExplanationPath& path : sa->paths) {
    if (path.passage != hask) continue;
    ASSERT_GE(path.nodes.size(), 3u);
    EXPECT_EQ(g.EntityName(g.LocalIndex(path.nodes.front())), "Orla Venn");
  }
}

// Activation passages come before the fill, in non-increasing activation
// (score − 1 − β·sim, with 0 ≤ β·sim ≤ 0.1) on every demo question.
TEST_F(SaDemoTest, PassagesFollowActivation) {
  for (const DemoQuestion& q : LoadQuestions()) {
    auto out = Run(q.question, 5);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    bool in_fill = false;
    double prev = 1e9;
    for (const RankedPassage& r : out->ranked) {
      if (r.score <= 1.0) {
        in_fill = true;
        continue;
      }
      EXPECT_FALSE(in_fill) << q.id << ": an activation passage after a filled one";
      const double activation_upper = r.score - 1.0;  // a + β·sim
      EXPECT_LE(activation_upper - 0.1, prev + 1e-9) << q.id;
      prev = activation_upper;
    }
    EXPECT_LE(out->diagnostics.extra["sa_passages"] + out->diagnostics.extra["dense_fill"], 5.0);
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
