// The BIRD-format loader (sql/bird_data.h) on the fixture in
// tests/testdata/bird, bad copies of it, and `sql eval --bird` on it:
// gold-less questions are counted apart, bm25-matched returns QAFD's
// number of columns.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "flowrag/sql.h"
#include "sql/bird_data.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

namespace fs = std::filesystem;

const std::string kFixture = std::string(FLOWRAG_TESTDATA_DIR) + "/bird";

[[maybe_unused]] ::testing::Environment* const kOffline =
    ::testing::AddGlobalTestEnvironment(new testing::OfflineEnvironment);

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// A copy of the fixture in a temp dir whose `file` has `from` replaced by `to`.
std::string BrokenCopy(const testing::TempDir& dir, const std::string& file, const std::string& from, const std::string& to) {
  for (const char* name : {"dev.json", "dev_tables.json"}) {
    fs::copy_file(kFixture + "/" + name, dir.File(name), fs::copy_options::overwrite_existing);
  }
  std::string text = ReadAll(dir.File(file));
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  WriteAll(dir.File(file), text);
  return dir.path();
}

TEST(SqlBirdDataTest, LoadsQuestionsEvidenceAndGoldReads) {
  auto bird = LoadBird(kFixture);
  ASSERT_TRUE(bird.ok()) << bird.status().ToString();
  ASSERT_EQ(bird->schemas.size(), 1u);
  ASSERT_EQ(bird->tasks.size(), 3u);
  EXPECT_TRUE(bird->files.empty());  // no dev_databases/: gold from the tables.json DDL
  const SqlTask& count = bird->tasks[0];
  EXPECT_EQ(count.id, "bird-dev-0");
  EXPECT_EQ(count.db_id, "school_club");
  EXPECT_TRUE(count.error.empty()) << count.error;
  EXPECT_EQ(count.gold.tables, std::set<std::string>({"student"}));
  EXPECT_TRUE(count.gold.columns.empty());  // count(*) reads no column: a gold-less question
  const SqlTask& join = bird->tasks[1];
  EXPECT_EQ(join.evidence, "Bootup Baltimore refers to ClubName = 'Bootup Baltimore'");
  EXPECT_EQ(join.gold.tables, std::set<std::string>({"club", "membership", "student"}));
  EXPECT_EQ(join.gold.columns,
            std::set<std::string>({"club.ClubID", "club.ClubName", "membership.ClubID", "membership.StuID",
                                   "student.LName", "student.StuID"}));
  EXPECT_TRUE(bird->tasks[2].evidence.empty());  // no evidence field
  EXPECT_EQ(bird->tasks[2].gold.columns, std::set<std::string>({"club.ClubLocation"}));
}

TEST(SqlBirdDataTest, BadFilesNameTheFileAndTheField) {
  struct Case {
    std::string file, from, to, expect;
  } cases[] = {
      {"dev.json", "\"SQL\": \"SELECT ClubLocation FROM club\"", "\"SQL\": 5", "question 2 (db_id \"school_club\"): SQL: expected a string"},
      {"dev.json", "\"question\": \"Where is the club located?\",", "", "question 2 (db_id \"school_club\"): question: expected a string"},
      {"dev.json", "\"db_id\": \"school_club\",\n    \"question\": \"How many", "\"db_id\": 7,\n    \"question\": \"How many", "question 0: db_id: expected a string"},
      {"dev.json", "\"evidence\": \"\"", "\"evidence\": [1]", "question 0 (db_id \"school_club\"): evidence: expected a string or null"},
      {"dev.json", "\"db_id\": \"school_club\",\n    \"question\": \"Where", "\"db_id\": \"nowhere\",\n    \"question\": \"Where", "question 2 (db_id \"nowhere\"): no schema in"},
      {"dev.json", "[", "{", "dev.json"},
      {"dev_tables.json", "\"column_types\": [", "\"column_types\": 3, \"x\": [", "dev_tables.json"},
  };
  for (const Case& c : cases) {
    testing::TempDir dir;
    auto bird = LoadBird(BrokenCopy(dir, c.file, c.from, c.to));
    ASSERT_FALSE(bird.ok()) << c.to;
    EXPECT_NE(bird.status().message().find(c.file), std::string::npos) << bird.status().ToString();
    EXPECT_NE(bird.status().message().find(c.expect), std::string::npos) << bird.status().ToString();
  }
  testing::TempDir empty;
  auto none = LoadBird(empty.path());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("dev_tables.json"), std::string::npos) << none.status().ToString();
}

TEST(SqlBirdDataTest, TablesJsonIsPreferredOverDevTablesJson) {
  testing::TempDir dir;
  fs::copy_file(kFixture + "/dev.json", dir.File("dev.json"));
  fs::copy_file(kFixture + "/dev_tables.json", dir.File("tables.json"));
  WriteAll(dir.File("dev_tables.json"), "not json");
  auto path = BirdTablesPath(dir.path());
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*path, dir.File("tables.json"));
  EXPECT_TRUE(LoadBird(dir.path()).ok());
}

TEST(SqlBirdEvalTest, GoldLessQuestionsAreCountedApartAndBm25MatchesQafdSize) {
  SqlEvalOptions o;
  o.bird = kFixture;
  o.methods = {"qafd", "bm25-matched", "all"};
  auto rows = EvaluateSql(o, /*quiet=*/true);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 3u);
  for (const SqlEvalRow& r : *rows) {
    EXPECT_EQ(r.dataset, "bird-dev");
    EXPECT_EQ(r.questions, 3u);
    EXPECT_EQ(r.gold_less, 1u) << r.method;  // SELECT count(*) FROM student
  }
  const SqlEvalRow& qafd = (*rows)[0];
  const SqlEvalRow& matched = (*rows)[1];
  const SqlEvalRow& all = (*rows)[2];
  EXPECT_EQ(matched.method, "bm25-matched");
  EXPECT_LE(matched.avg_columns, qafd.avg_columns + 1e-9);
  // "all" finds every gold column of the two questions that have some: its
  // column recall is 1 only because the gold-less question is left out.
  EXPECT_DOUBLE_EQ(all.column_r, 1.0);
  EXPECT_DOUBLE_EQ(all.gold_less_columns, 9.0);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
