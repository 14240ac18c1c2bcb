// Tombstones (session/tombstones.h): a session that hides a deleted
// document of its snapshot, as the engine publishes between a delete's
// commit and the snapshot without the document.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "flowrag/engine.h"
#include "session/read_session.h"
#include "snapshot_compare.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

const std::string kDemo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";
const char kQuestion[] = "Which engineer designed the tide gauge at Lusk harbour?";

class TombstonesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    const std::string path = dir_->File("demo.db");
    {
      auto engine = Engine::Open(path);
      ASSERT_TRUE(engine.ok()) << engine.status().ToString();
      ASSERT_TRUE((*engine)->Index({kDemo}).ok());
    }
    snapshot_compare::OpenStore store(path);
    snapshot_ = new std::shared_ptr<const Snapshot>(store.Build(/*use_parts=*/false));
    auto services = MakeSessionServices(EngineOptions{});
    ASSERT_TRUE(services.ok()) << services.status().ToString();
    services_ = services->release();
  }
  static void TearDownTestSuite() {
    delete snapshot_;
    delete services_;
    delete dir_;
  }

  static RetrievalResult Query(const ReadSession& session, const std::string& method) {
    QueryOptions options;
    options.method = method;
    options.explain = true;
    auto result = session.Query(kQuestion, options);
    EXPECT_TRUE(result.ok()) << method << ": " << result.status().ToString();
    return result.ok() ? std::move(result).value() : RetrievalResult();
  }

  static testing::TempDir* dir_;
  static std::shared_ptr<const Snapshot>* snapshot_;
  static SessionServices* services_;
};

testing::TempDir* TombstonesTest::dir_ = nullptr;
std::shared_ptr<const Snapshot>* TombstonesTest::snapshot_ = nullptr;
SessionServices* TombstonesTest::services_ = nullptr;

TEST_F(TombstonesTest, AHiddenDocumentLeavesEveryReadAndQueriesKeepTheirTopK) {
  ASSERT_NE(*snapshot_, nullptr);
  const ReadSession session(*snapshot_, services_);
  const std::string hidden_id = Query(session, "bm25").passages.at(0).document_id;
  std::shared_ptr<const ReadSession> hidden = session.WithTombstone(hidden_id);
  ASSERT_NE(hidden, nullptr);
  EXPECT_EQ(hidden->snapshot(), session.snapshot());  // nothing rebuilt

  for (const std::string method : {"bm25", "dense", "hybrid", "qafd", "ppr", "semflow", "sa"}) {
    SCOPED_TRACE(method);
    const RetrievalResult before = Query(session, method);
    const RetrievalResult after = Query(*hidden, method);
    std::vector<std::string> kept;
    for (const ScoredPassage& p : before.passages) {
      if (p.document_id != hidden_id) kept.push_back(p.document_id + "#" + std::to_string(p.ordinal));
    }
    std::vector<std::string> got;
    for (const ScoredPassage& p : after.passages) {
      EXPECT_NE(p.document_id, hidden_id);
      got.push_back(p.document_id + "#" + std::to_string(p.ordinal));
    }
    EXPECT_LT(kept.size(), before.passages.size()) << "the document was not retrieved";
    // Asked for more, so the top k are still full.
    EXPECT_EQ(after.passages.size(), before.passages.size());
    if (method == "bm25" || method == "dense") {
      // A text ranking is the same ranking without the document.
      ASSERT_LE(kept.size(), got.size());
      EXPECT_EQ(std::vector<std::string>(got.begin(), got.begin() + kept.size()), kept);
    }
    for (const GraphNode& n : after.nodes) {
      if (n.kind != "Passage") continue;
      EXPECT_NE(n.label.substr(0, hidden_id.size() + 1), hidden_id + "#");
    }
  }

  EXPECT_EQ(hidden->GetDocument(hidden_id).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(session.GetDocument(hidden_id).ok());
  auto listed = hidden->ListDocuments("", 1000);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->documents.size(), (*snapshot_)->num_documents() - 1);
  for (const StoredDocument& d : listed->documents) EXPECT_NE(d.id, hidden_id);
}

TEST_F(TombstonesTest, TombstonesAddUpAndAnUnknownDocumentHidesNothing) {
  const ReadSession session(*snapshot_, services_);
  EXPECT_EQ(session.WithTombstone("no-such-document.md"), nullptr);
  const SnapshotDocuments& docs = (*snapshot_)->documents();
  ASSERT_GE(docs.size(), 2u);
  auto one = session.WithTombstone(docs[0].external_id);
  ASSERT_NE(one, nullptr);
  auto two = one->WithTombstone(docs[1].external_id);
  ASSERT_NE(two, nullptr);
  auto listed = two->ListDocuments("", 1000);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->documents.size(), docs.size() - 2);
  EXPECT_EQ(two->GetDocument(docs[0].external_id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(two->GetDocument(docs[1].external_id).status().code(), StatusCode::kNotFound);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
