// Keywords, sub-queries and seed selection (QAFD-RAG §2.2 g(q), Algorithm 1,
// Eq. 1–2): offline keyword extraction and decomposition on example
// questions, and the seeds against a brute-force Eq. 1–2 on the demo graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "engine/engine_impl.h"
#include "flowrag/engine.h"
#include "retrieval/keywords.h"
#include "retrieval/query_index.h"
#include "retrieval/query_scores.h"
#include "retrieval/seeding.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(KeywordsTest, KnownNamesSpansPhrasesAndContentWords) {
  EntityNameMatcher names(std::vector<std::string>{"Lantern Tide Festival", "Film", "Corin Aske"});
  QueryKeywords k = ExtractKeywords(
      "In which town was the man who founded the Lantern Tide Festival born? A film question.",
      &names);
  ASSERT_FALSE(k.keywords.empty());
  EXPECT_EQ(k.keywords[0], "Lantern Tide Festival");  // known names first
  EXPECT_EQ(k.matched_entities, std::vector<uint32_t>{0});  // "film" (lower-case, one token) is not a name hit
  EXPECT_TRUE(Has(k.keywords, "town"));
  EXPECT_TRUE(Has(k.keywords, "founded"));
  EXPECT_TRUE(Has(k.keywords, "film"));
  EXPECT_FALSE(Has(k.keywords, "which"));
  EXPECT_FALSE(Has(k.keywords, "was"));
  EXPECT_FALSE(Has(k.keywords, "the"));
  // Deduplicated case-insensitively.
  std::set<std::string> keys;
  for (const auto& w : k.keywords) EXPECT_TRUE(keys.insert(NameKey(w)).second) << w;
}

// A name matches however the query writes it, but is a proper name (a seed
// of its own in the walks) only where the query capitalises it.
TEST(KeywordsTest, ProperEntitiesAreTheNamesTheQueryCapitalises) {
  EntityNameMatcher names(std::vector<std::string>{"Liver Cancer", "Cirrhosis"});
  QueryKeywords lower = ExtractKeywords("What is a major risk factor for liver cancer?", &names);
  EXPECT_EQ(lower.matched_entities, std::vector<uint32_t>{0});
  EXPECT_TRUE(lower.proper_entities.empty());
  QueryKeywords upper = ExtractKeywords("Does Cirrhosis lead to Liver Cancer?", &names);
  EXPECT_EQ(upper.matched_entities, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(upper.proper_entities, (std::vector<uint32_t>{0, 1}));
}

// A document title also names its entity without its disambiguation.
TEST(KeywordsTest, TitleAliasesNameTheirEntity) {
  KnowledgeGraph::Input in;
  in.num_passages = 1;
  in.entity_names = {"Brand (play)", "Henrik Ibsen"};
  in.entity_types = {"TITLE", "PROPER_NOUN"};
  in.entity_ids = {1, 2};
  in.mentions = {{0, 0, 1, true, true}, {0, 1, 1, true}};
  auto g = KnowledgeGraph::Build(std::move(in));
  ASSERT_TRUE(g.ok());
  const EntityNameMatcher names(**g);
  QueryKeywords k = ExtractKeywords("What country was the author of Brand a citizen of?", &names);
  EXPECT_EQ(k.matched_entities, std::vector<uint32_t>{0});
  // Lower case, it is the common word.
  EXPECT_TRUE(ExtractKeywords("Which brand of beer?", &names).matched_entities.empty());
}

TEST(KeywordsTest, PhrasesAndNumbers) {
  QueryKeywords k = ExtractKeywords(
      "Which company built the research vessel of the institute that Winnie Lusk directed in 1894?",
      nullptr);
  EXPECT_TRUE(Has(k.keywords, "Winnie Lusk"));
  EXPECT_TRUE(Has(k.keywords, "research vessel"));
  EXPECT_TRUE(Has(k.keywords, "1894"));
  EXPECT_TRUE(Has(k.keywords, "company"));
  EXPECT_TRUE(Has(k.keywords, "institute"));
}

TEST(KeywordsTest, MaxKeywords) {
  KeywordOptions o;
  o.max_keywords = 2;
  EXPECT_EQ(ExtractKeywords("alpha beta gamma delta epsilon", nullptr, o).keywords.size(), 2u);
  EXPECT_TRUE(ExtractKeywords("", nullptr).keywords.empty());
  EXPECT_TRUE(ExtractKeywords("who is the one?", nullptr).keywords.empty());
}

TEST(DecomposeTest, RelativeClausesAndConjunctions) {
  auto q = DecomposeQuery("Which company built the research vessel of the institute that Winnie Lusk directed?");
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0], "Which company built the research vessel of the institute");
  EXPECT_EQ(q[1], "institute Winnie Lusk directed");

  q = DecomposeQuery("Which club is older, Hollin Bay Athletic or Port Calder Rowing Club?");
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0], "Which club is older, Hollin Bay Athletic");
  EXPECT_EQ(q[1], "Port Calder Rowing Club");

  q = DecomposeQuery("In which town was the man who founded the Lantern Tide Festival born?");
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[1], "man founded the Lantern Tide Festival born");

  // Nothing to split.
  q = DecomposeQuery("How long is the River Ostrel?");
  EXPECT_EQ(q, std::vector<std::string>{"How long is the River Ostrel?"});
  // A conjunction joining nothing of substance is merged back.
  q = DecomposeQuery("Who wrote it and when?");
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(DecomposeQuery("").size(), 1u);
}

class DemoSeedsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = Engine::Open(dir_.File("demo.db"));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
    auto r = engine_->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    snap_ = dynamic_cast<EngineImpl*>(engine_.get())->snapshot();
    ASSERT_NE(snap_->graph(), nullptr);
  }
  testing::TempDir dir_;
  std::unique_ptr<Engine> engine_;
  std::shared_ptr<const Snapshot> snap_;
};

TEST_F(DemoSeedsTest, SeedsMatchBruteForceEq1And2) {
  const KnowledgeGraph& g = *snap_->graph();
  std::vector<std::string> names;
  for (uint32_t e = 0; e < g.num_entities(); ++e) names.emplace_back(g.EntityName(e));
  auto ev = EmbedTexts(*snap_, names);
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  for (const char* q : {"In which town was the man who founded the Lantern Tide Festival born?",
                        "Which company built the research vessel of the institute that Winnie Lusk directed?",
                        "How long is the River Ostrel from its source in the Hallam Hills to the sea?"}) {
    auto kws = ExtractKeywords(q, &GraphQueryIndex::For(*snap_)->names()).keywords;
    ASSERT_FALSE(kws.empty());
    auto kv = EmbedTexts(*snap_, kws);
    ASSERT_TRUE(kv.ok());
    for (size_t n : {1u, 5u, 40u}) {
      auto seeds = SelectSeeds(g, *kv, n);
      ASSERT_TRUE(seeds.ok()) << seeds.status().ToString();
      // Brute force: score(v) = max_i <e_qi, e_v>, top n, ties by index, > 0.
      std::vector<std::pair<float, uint32_t>> all;
      for (uint32_t e = 0; e < g.num_entities(); ++e) {
        float best = -2;
        for (size_t i = 0; i < kv->rows; ++i) {
          float d = 0;
          for (size_t c = 0; c < kv->cols; ++c) d += kv->row(i)[c] * ev->row(e)[c];
          best = std::max(best, d);
        }
        if (best > 1e-6f) all.push_back({best, e});
      }
      std::sort(all.begin(), all.end(), [](auto& a, auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
      });
      all.resize(std::min(all.size(), n));
      ASSERT_EQ(seeds->size(), all.size()) << q;
      for (size_t i = 0; i < all.size(); ++i) {
        EXPECT_NEAR((*seeds)[i].score, all[i].first, 1e-4) << q << " #" << i;
        // Same set up to float ties: the seed's brute-force score equals the rank-i score.
        float d = -2;
        for (size_t k = 0; k < kv->rows; ++k) {
          float s = 0;
          for (size_t c = 0; c < kv->cols; ++c) s += kv->row(k)[c] * ev->row((*seeds)[i].entity)[c];
          d = std::max(d, s);
        }
        EXPECT_NEAR(d, all[i].first, 1e-4);
      }
    }
    // The named entity is the top seed.
    auto seeds = SelectSeeds(g, *kv, 3);
    ASSERT_TRUE(seeds.ok());
    ASSERT_FALSE(seeds->empty());
    EXPECT_NEAR((*seeds)[0].score, 1.0, 1e-3) << q << ": " << g.EntityName((*seeds)[0].entity);
  }
}

TEST_F(DemoSeedsTest, SpecificityRatioAndNamedEntities) {
  const KnowledgeGraph& g = *snap_->graph();
  const char* q = "How long is the River Ostrel from its source in the Hallam Hills to the sea?";
  QueryKeywords qk = ExtractKeywords(q, &GraphQueryIndex::For(*snap_)->names());
  ASSERT_GE(qk.matched_entities.size(), 2u);
  auto kv = EmbedTexts(*snap_, qk.keywords);
  ASSERT_TRUE(kv.ok());
  auto plain = SelectSeeds(g, *kv, 40);
  SeedSelection sel;
  sel.n = 40;
  sel.specificity = true;
  auto spec = SelectSeeds(g, *kv, sel);
  ASSERT_TRUE(plain.ok() && spec.ok());
  // Each specific score is the raw Eq. 1 score times ln(1 + P/df) / ln(1 + P).
  std::map<uint32_t, float> raw;
  for (uint32_t e = 0; e < g.num_entities(); ++e) raw[e] = 0;
  auto deep = SelectSeeds(g, *kv, g.num_entities());
  ASSERT_TRUE(deep.ok());
  for (const Seed& s : *deep) raw[s.entity] = s.score;
  const double log_p = std::log1p(static_cast<double>(g.num_passages()));
  for (const Seed& s : *spec) {
    const double df = std::max<uint32_t>(1, g.EntityPassageCount(s.entity));
    EXPECT_NEAR(s.score, raw[s.entity] * std::log1p(g.num_passages() / df) / log_p, 1e-5);
  }
  // Named entities are seeds at score 1 and survive the ratio cut; weaker
  // seeds below 0.9 × best are gone.
  sel.min_ratio = 0.9;
  sel.named = qk.matched_entities;
  auto named = SelectSeeds(g, *kv, sel);
  ASSERT_TRUE(named.ok());
  std::set<uint32_t> got;
  for (const Seed& s : *named) {
    got.insert(s.entity);
    EXPECT_GE(s.score, 0.9f * (*named)[0].score - 1e-6f);
  }
  for (uint32_t e : qk.matched_entities) EXPECT_TRUE(got.count(e)) << g.EntityName(e);
  EXPECT_LT(named->size(), plain->size());
}

TEST_F(DemoSeedsTest, QueryIndexIsCachedAndMatchesGraph) {
  auto a = GraphQueryIndex::For(*snap_);
  auto b = GraphQueryIndex::For(*snap_);
  EXPECT_EQ(a.get(), b.get());
  ASSERT_NE(a->entity_vectors(), nullptr);
  EXPECT_EQ(a->entity_vectors()->rows(), snap_->graph()->num_entities());
  QueryKeywords k = ExtractKeywords("Who founded the Lantern Tide Festival?", &a->names());
  ASSERT_FALSE(k.matched_entities.empty());
  EXPECT_EQ(snap_->graph()->EntityName(k.matched_entities[0]), "Lantern Tide Festival");
}

TEST_F(DemoSeedsTest, DimensionMismatchIsAnError) {
  FloatMatrix bad;
  bad.rows = 1;
  bad.cols = 3;
  bad.data = {1, 0, 0};
  auto s = SelectSeeds(*snap_->graph(), bad, 5);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
