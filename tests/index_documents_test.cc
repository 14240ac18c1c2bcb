// Engine::IndexDocuments: documents given directly are stored, searchable and
// replaced by id; a call with a bad document names it and stores nothing.
#include <gtest/gtest.h>

#include "flowrag/engine.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

TEST(IndexDocuments, StoresReplacesAndRejectsWholeCalls) {
  testing::TempDir dir;
  auto e = Engine::Open(dir.File("s.db"));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  Engine& engine = **e;
  auto r = engine.IndexDocuments({{"a", "Ada", "Ada Lovelace wrote the first program."},
                                  {"b", "Bob", "Bob built a bridge over the Ostrel."}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->documents_added, 2u);
  QueryOptions q;
  q.method = "bm25";
  q.top_k = 1;
  auto hit = engine.Query("first program", q);
  ASSERT_TRUE(hit.ok());
  ASSERT_EQ(hit->passages.size(), 1u);
  EXPECT_EQ(hit->passages[0].document_id, "a");

  // Same id, new text: replaced; same text again: unchanged.
  r = engine.IndexDocuments({{"a", "Ada", "Ada Lovelace described the Analytical Engine."}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->documents_replaced, 1u);
  r = engine.IndexDocuments({{"a", "Ada", "Ada Lovelace described the Analytical Engine."}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->documents_unchanged, 1u);

  // One bad document fails the call, naming it; nothing of the call is stored.
  const std::vector<std::pair<std::vector<DocumentInput>, std::string>> bad = {
      {{{"c", "", "fine text"}, {"", "", "no id"}}, "documents[1].id"},
      {{{"c", "", "fine text"}, {"d", "", "  \n"}}, "documents[1].text"},
      {{{"c", "", "fine text"}, {"c", "", "again"}}, "documents[1].id"},
      {{{"c", "", "bad \xff byte"}}, "documents[0].text"},
  };
  for (const auto& [docs, field] : bad) {
    auto st = engine.IndexDocuments(docs);
    EXPECT_EQ(st.status().code(), StatusCode::kInvalidArgument) << field;
    EXPECT_NE(st.status().message().find(field), std::string::npos) << st.status().ToString();
  }
  auto stats = engine.Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->documents, 2);
  EXPECT_TRUE(engine.DeleteDocument("b").ok());
  EXPECT_EQ(engine.Stats()->documents, 1);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
