// The one-hop baseline (LightRAG's local and global modes): the weighted
// polling pick against hand-worked allocations, and both modes on a small
// hand-built graph (an OpenIE import, so the entities and relations are
// exactly the ones written here).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "engine/engine_impl.h"
#include "flowrag/engine.h"
#include "retrieval/one_hop_retriever.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::TempDir;
using testing::WriteFile;

std::vector<uint32_t> Range(uint32_t from, uint32_t n) {
  std::vector<uint32_t> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = from + i;
  return v;
}

// LightRAG's pick_by_weighted_polling: a linear gradient of quotas from max
// to min, Python rounding (half to even), unused quota to the first items
// that still have chunks.
TEST(WeightedPollingTest, LinearGradientAndSpill) {
  EXPECT_TRUE(PickByWeightedPolling({}, 5).empty());
  // One item: its first max chunks.
  EXPECT_EQ(PickByWeightedPolling({Range(0, 9)}, 5), Range(0, 5));
  // Five items, max 5, min 1: quotas 5, 4, 3, 2, 1.
  std::vector<std::vector<uint32_t>> five;
  for (uint32_t i = 0; i < 5; ++i) five.push_back(Range(100 * i, 10));
  std::vector<uint32_t> want;
  for (uint32_t i = 0; i < 5; ++i) {
    for (uint32_t j = 0; j < 5 - i; ++j) want.push_back(100 * i + j);
  }
  EXPECT_EQ(PickByWeightedPolling(five, 5), want);
  // Three items, max 4: quotas 4, round(2.5) = 2, 1.
  std::vector<std::vector<uint32_t>> three = {Range(0, 9), Range(10, 9), Range(20, 9)};
  EXPECT_EQ(PickByWeightedPolling(three, 4),
            (std::vector<uint32_t>{0, 1, 2, 3, 10, 11, 20}));
  // The first item has 2 chunks for a quota of 5: the 3 left over go, one
  // per round, to the first item with chunks left (the second).
  std::vector<std::vector<uint32_t>> spill = {Range(0, 2), Range(10, 9), Range(20, 9)};
  EXPECT_EQ(PickByWeightedPolling(spill, 5),
            (std::vector<uint32_t>{0, 1, 10, 11, 12, 20, 13, 14, 15}));
}

// Issue 21 (server_request_fuzz): option errors quote at most 60 bytes of a
// value or name, and list at most ten unknown names, whatever the request.
TEST(ParamReaderTest, ErrorsQuoteShortExcerpts) {
  std::string big(5001, '9');
  big.back() = 'x';
  std::map<std::string, std::string> p{{"onehop.top_k", big}};
  const std::string long_name(200, 'k');
  for (int i = 0; i < 30; ++i) p[long_name + std::to_string(i)] = "1";
  ParamReader r(&p);
  OneHopOptions o;
  Status st = o.Override(r);
  ASSERT_FALSE(st.ok());
  EXPECT_LT(st.message().size(), 200u) << st.message();
  EXPECT_NE(st.message().find("onehop.top_k=\"999"), std::string::npos) << st.message();
  st = r.CheckAllUsed("onehop");
  ASSERT_FALSE(st.ok());
  EXPECT_LT(st.message().size(), 1000u);
  EXPECT_NE(st.message().find("and 20 more"), std::string::npos) << st.message();
}

TEST(OneHopOptionsTest, OverridesAndValidation) {
  std::map<std::string, std::string> p{{"onehop.mode", "global"}, {"onehop.top_k", "7"},
                                       {"onehop.pick", "weight"}, {"onehop.min_cosine", "0"}};
  ParamReader r(&p);
  OneHopOptions o;
  ASSERT_TRUE(o.Override(r).ok());
  EXPECT_TRUE(r.CheckAllUsed("onehop").ok());
  EXPECT_EQ(o.mode, "global");
  EXPECT_EQ(o.top_k, 7u);
  EXPECT_EQ(o.pick, "weight");
  for (auto [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"onehop.mode", "mix"}, {"onehop.pick", "x"}, {"onehop.top_k", "0"},
           {"onehop.related_chunks", "0"}, {"onehop.min_cosine", "2"}}) {
    std::map<std::string, std::string> bad{{key, value}};
    ParamReader br(&bad);
    OneHopOptions bo;
    EXPECT_EQ(bo.Override(br).code(), StatusCode::kInvalidArgument) << key;
  }
}

// Four passages: Maren Holt founded the Kessel Observatory, which studies
// comets; Vela Crane organised a kite festival at Dunmore Field.
class OneHopGraphTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    WriteFile(dir_->File("corpus.jsonl"),
              "{\"id\": \"p1\", \"title\": \"Maren Holt\", \"text\": \"Maren Holt founded the "
              "Kessel Observatory in 1902.\"}\n"
              "{\"id\": \"p2\", \"title\": \"Kessel Observatory\", \"text\": \"The Kessel "
              "Observatory studies comets.\"}\n"
              "{\"id\": \"p3\", \"title\": \"Dunmore Field\", \"text\": \"Dunmore Field hosts "
              "an annual kite festival.\"}\n"
              "{\"id\": \"p4\", \"title\": \"Vela Crane\", \"text\": \"Vela Crane organised the "
              "kite festival at Dunmore Field.\"}\n");
    WriteFile(dir_->File("openie.jsonl"),
              "{\"id\": \"p1\", \"entities\": [\"Maren Holt\", \"Kessel Observatory\"], "
              "\"triples\": [[\"Maren Holt\", \"founded\", \"Kessel Observatory\"]]}\n"
              "{\"id\": \"p2\", \"entities\": [\"Kessel Observatory\", \"comets\"], "
              "\"triples\": [[\"Kessel Observatory\", \"studies\", \"comets\"]]}\n"
              "{\"id\": \"p3\", \"entities\": [\"Dunmore Field\", \"kite festival\"], "
              "\"triples\": [[\"Dunmore Field\", \"hosts\", \"kite festival\"]]}\n"
              "{\"id\": \"p4\", \"entities\": [\"Vela Crane\", \"Dunmore Field\"], "
              "\"triples\": [[\"Vela Crane\", \"organised the kite festival at\", \"Dunmore "
              "Field\"]]}\n");
    auto e = Engine::Open(dir_->File("s.db"));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value().release();
    IndexOptions io;
    io.chunking.strategy = ChunkOptions::Strategy::kNone;
    io.extractor = "none";
    ASSERT_TRUE(engine_->Index({dir_->File("corpus.jsonl")}, io).ok());
    ASSERT_TRUE(engine_->ImportOpenIe(dir_->File("openie.jsonl")).ok());
  }
  static void TearDownTestSuite() {
    delete engine_;
    delete dir_;
  }
  std::shared_ptr<const Snapshot> Snap() { return dynamic_cast<EngineImpl*>(engine_)->snapshot(); }
  Result<RetrievalOutput> Run(const std::string& q, std::map<std::string, std::string> params,
                              bool explain = false) {
    RetrievalRequest req;
    req.query = q;
    req.top_k = 4;
    req.params = &params;
    req.explain = explain;
    return OneHopRetriever().Retrieve(*Snap(), req);
  }
  std::vector<std::string> Ids(const RetrievalOutput& out) {
    std::vector<std::string> ids;
    for (const RankedPassage& p : out.ranked) ids.emplace_back(Snap()->document_of(p.passage).external_id);
    return ids;
  }
  static TempDir* dir_;
  static Engine* engine_;
};
TempDir* OneHopGraphTest::dir_ = nullptr;
Engine* OneHopGraphTest::engine_ = nullptr;

constexpr const char* kQuestion = "What does the observatory that Maren Holt founded study?";

// Local: the low-level keyword (the name) finds Maren Holt; its chunk and
// its one-hop relation's chunk come back, nothing about the kite festival.
TEST_F(OneHopGraphTest, LocalModeFollowsTheNamedEntitysOneHopRelations) {
  auto out = Run(kQuestion, {{"onehop.mode", "local"}}, /*explain=*/true);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::vector<std::string> ids = Ids(*out);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.front(), "p1");
  for (const std::string& id : ids) EXPECT_TRUE(id == "p1" || id == "p2") << id;
  EXPECT_GE(out->diagnostics.extra["low_level_keywords"], 1.0);
  EXPECT_EQ(out->diagnostics.extra["global_relations"], 0.0);
  const KnowledgeGraph& g = *Snap()->graph();
  ASSERT_FALSE(out->seeds.empty());
  EXPECT_EQ(g.EntityName(g.LocalIndex(out->seeds.front().node)), "Maren Holt");
  // The local relations: Maren Holt – Kessel Observatory.
  bool founded = false;
  for (const TouchedEdge& e : out->subgraph) {
    const std::set<std::string> ends = {std::string(g.EntityName(g.LocalIndex(e.from))),
                                        std::string(g.EntityName(g.LocalIndex(e.to)))};
    founded |= ends == std::set<std::string>{"Maren Holt", "Kessel Observatory"};
  }
  EXPECT_TRUE(founded);
  ASSERT_EQ(out->paths.size(), out->ranked.size());
  for (const ExplanationPath& p : out->paths) EXPECT_EQ(p.nodes.back(), p.passage);
}

// Global: the high-level keywords ("observatory", "study", ...) match the
// fact texts of the two observatory relations; their passages come back.
TEST_F(OneHopGraphTest, GlobalModeFindsRelationsByTheirText) {
  auto out = Run(kQuestion, {{"onehop.mode", "global"}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::vector<std::string> ids = Ids(*out);
  EXPECT_EQ(out->diagnostics.extra["local_entities"], 0.0);
  EXPECT_GE(out->diagnostics.extra["global_relations"], 1.0);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "p2"), ids.end());
  for (const std::string& id : ids) EXPECT_TRUE(id == "p1" || id == "p2") << id;
  EXPECT_TRUE(out->paths.empty());  // explain off
}

// Hybrid (the default) merges both; the weight pick gives the same set here.
TEST_F(OneHopGraphTest, HybridMergesLocalAndGlobal) {
  for (const char* pick : {"vector", "weight"}) {
    auto out = Run(kQuestion, {{"onehop.pick", pick}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const std::vector<std::string> ids = Ids(*out);
    ASSERT_GE(ids.size(), 2u) << pick;
    EXPECT_EQ(std::set<std::string>(ids.begin(), ids.begin() + 2),
              (std::set<std::string>{"p1", "p2"}))
        << pick;
    for (size_t i = 1; i < out->ranked.size(); ++i) {
      EXPECT_LT(out->ranked[i].score, out->ranked[i - 1].score);
    }
  }
  // A question about the festival goes the other way.
  auto kite = Run("Who organised the kite festival at Dunmore Field?", {});
  ASSERT_TRUE(kite.ok());
  const std::vector<std::string> ids = Ids(*kite);
  ASSERT_FALSE(ids.empty());
  EXPECT_TRUE(ids.front() == "p3" || ids.front() == "p4") << ids.front();
  EXPECT_EQ(std::find(ids.begin(), ids.end(), "p2"), ids.end());
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
