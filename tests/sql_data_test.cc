// Tests of the text-to-SQL benchmark loaders (src/sql/spider_data.h): the
// parsed-tree gold walker, the CSV reader and the DDL repair on hand-written
// inputs, then the real Spider and Spider 2.0-lite files when
// <FLOWRAG_SOURCE_DIR>/../shared/data is present (skipped otherwise).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "sql/spider_data.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Names = std::set<std::string>;

// A fresh directory under the test temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = fs::path(::testing::TempDir()) /
            ("sql_data_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string Write(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

std::string DataDir() { return std::string(FLOWRAG_SOURCE_DIR) + "/../shared/data"; }

// A three-table schema in Spider's layout (concert_singer, cut down).
SpiderSchema TinySchema() {
  SpiderSchema s;
  s.db_id = "tiny";
  s.table_names_original = {"singer", "concert", "singer_in_concert"};
  s.table_names = {"singer", "concert", "singer in concert"};
  s.columns = {{-1, "*", "*", "text"},
               {0, "Singer_ID", "singer id", "number"},    // 1
               {0, "Name", "name", "text"},                // 2
               {0, "Age", "age", "number"},                // 3
               {1, "concert_ID", "concert id", "number"},  // 4
               {1, "Year", "year", "text"},                // 5
               {2, "concert_ID", "concert id", "number"},  // 6
               {2, "Singer_ID", "singer id", "number"}};   // 7
  s.primary_keys = {1, 4};
  s.foreign_keys = {{6, 4}, {7, 1}};
  return s;
}

// process_sql.py's shape: an empty query over `tables` selecting `select`.
Json Query(std::vector<int> tables, Json select) {
  Json units = Json::array();
  for (int t : tables) units.push_back({"table_unit", t});
  return Json{{"from", {{"table_units", units}, {"conds", Json::array()}}},
              {"select", {false, select}},
              {"where", Json::array()},
              {"groupBy", Json::array()},
              {"having", Json::array()},
              {"orderBy", Json::array()},
              {"limit", nullptr},
              {"intersect", nullptr},
              {"union", nullptr},
              {"except", nullptr}};
}
Json Col(int c, int agg = 0) { return Json{agg, c, false}; }
Json Val(int c, int agg = 0) { return Json{0, Col(c, agg), nullptr}; }
Json Cond(Json val_unit, int op, Json v1) { return Json{false, op, val_unit, v1, nullptr}; }

TEST(SpiderGoldFromParsedTest, CountStarGivesTableOnly) {
  Json q = Query({0}, Json::array({Json{3, Val(0)}}));  // SELECT count(*) FROM singer
  auto gold = SpiderGoldFromParsed(q, TinySchema());
  ASSERT_TRUE(gold.ok()) << gold.status().ToString();
  EXPECT_EQ(gold->tables, Names({"singer"}));
  EXPECT_TRUE(gold->columns.empty());
}

TEST(SpiderGoldFromParsedTest, WalksEveryClauseAndNestedQuery) {
  // SELECT T2.Name, count(*) FROM singer_in_concert T1 JOIN singer T2
  //   ON T1.Singer_ID = T2.Singer_ID
  //   WHERE T2.Age > (SELECT avg(Age) FROM singer)
  //   GROUP BY T2.Singer_ID HAVING count(*) > 1 ORDER BY T2.Name
  // EXCEPT SELECT Name FROM (SELECT ... FROM concert WHERE Year = 2014)
  Json q = Query({2, 0}, Json::array({Json{0, Val(2)}, Json{3, Val(0)}}));
  q["from"]["conds"] = Json::array({Cond(Val(7), 2, Col(1))});
  Json avg_age = Query({0}, Json::array({Json{5, Val(3)}}));
  q["where"] = Json::array({Cond(Val(3), 3, avg_age)});
  q["groupBy"] = Json::array({Col(1)});
  q["having"] = Json::array({Cond(Val(0, 3), 3, 1.0)});
  q["orderBy"] = Json{"asc", Json::array({Val(2)})};
  Json inner = Query({1}, Json::array({Json{0, Val(4)}}));
  inner["where"] = Json::array({Cond(Val(5), 2, 2014.0), "and", Cond(Val(4), 3, "\"x\"")});
  Json outer = Query({}, Json::array({Json{0, Val(0)}}));
  outer["from"]["table_units"] = Json::array({Json{"sql", inner}});
  q["except"] = outer;

  auto gold = SpiderGoldFromParsed(q, TinySchema());
  ASSERT_TRUE(gold.ok()) << gold.status().ToString();
  EXPECT_EQ(gold->tables, Names({"singer", "concert", "singer_in_concert"}));
  EXPECT_EQ(gold->columns,
            Names({"singer.Name", "singer.Age", "singer.Singer_ID", "singer_in_concert.Singer_ID",
                   "concert.concert_ID", "concert.Year"}));
}

TEST(SpiderGoldFromParsedTest, BadIndexesNameThePlace) {
  Json q = Query({0, 5}, Json::array({Json{0, Val(2)}}));
  auto gold = SpiderGoldFromParsed(q, TinySchema());
  ASSERT_FALSE(gold.ok());
  EXPECT_EQ(gold.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(gold.status().message().find("sql.from.table_units[1]"), std::string::npos)
      << gold.status().message();

  q = Query({0}, Json::array({Json{0, Val(2)}}));
  q["union"] = Query({1}, Json::array({Json{0, Val(99)}}));
  gold = SpiderGoldFromParsed(q, TinySchema());
  ASSERT_FALSE(gold.ok());
  EXPECT_NE(gold.status().message().find("sql.union.select[1][0][1][1]: column index 99"),
            std::string::npos)
      << gold.status().message();

  gold = SpiderGoldFromParsed(Json::array(), TinySchema());
  EXPECT_FALSE(gold.ok());
}

TEST(LoadSpiderTablesTest, CompositeKeysFlattenAndErrorsNameTheFile) {
  TempDir dir;
  const std::string good = dir.Write("tables.json", R"([{
    "db_id": "d", "table_names": ["t"], "table_names_original": ["T"],
    "column_names": [[-1, "*"], [0, "a"], [0, "b"]],
    "column_names_original": [[-1, "*"], [0, "A"], [0, "B"]],
    "column_types": ["text", "number", "text"],
    "primary_keys": [[1, 2]], "foreign_keys": []}])");
  auto schemas = LoadSpiderTables(good);
  ASSERT_TRUE(schemas.ok()) << schemas.status().ToString();
  ASSERT_EQ(schemas->size(), 1u);
  EXPECT_EQ((*schemas)[0].primary_keys, std::vector<int>({1, 2}));
  EXPECT_EQ((*schemas)[0].QualifiedColumn(2), "T.B");
  EXPECT_EQ((*schemas)[0].columns[1].name, "a");

  const std::string broken = dir.Write("broken.json", "[{\"db_id\": \"d\",");
  auto bad = LoadSpiderTables(broken);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find(broken), std::string::npos) << bad.status().message();

  const std::string out_of_range = dir.Write("range.json", R"([{
    "db_id": "d", "table_names": ["t"], "table_names_original": ["T"],
    "column_names": [[-1, "*"], [0, "a"]], "column_names_original": [[-1, "*"], [0, "A"]],
    "column_types": ["text", "number"], "primary_keys": [], "foreign_keys": [[1, 7]]}])");
  bad = LoadSpiderTables(out_of_range);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(
      bad.status().message().find(out_of_range + ": schema 0 (db_id \"d\"): foreign_keys[0][1]"),
      std::string::npos)
      << bad.status().message();

  bad = LoadSpiderTables(dir.path() + "/missing.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);

  // Names differing only in case are one SQL name (issue 21, spider_tables_fuzz:
  // the schema graph's JSON round trip joined the wrong tables).
  const std::string same_table = dir.Write("case.json", R"([{
    "db_id": "d", "table_names": ["c", "c2"], "table_names_original": ["concert", "conceRt"],
    "column_names": [[-1, "*"]], "column_names_original": [[-1, "*"]],
    "column_types": ["text"], "primary_keys": [], "foreign_keys": []}])");
  bad = LoadSpiderTables(same_table);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("table_names_original[1]: \"conceRt\" names the same table as [0]"),
            std::string::npos)
      << bad.status().message();
  const std::string same_column = dir.Write("case2.json", R"([{
    "db_id": "d", "table_names": ["t"], "table_names_original": ["T"],
    "column_names": [[-1, "*"], [0, "a"], [0, "a2"]],
    "column_names_original": [[-1, "*"], [0, "Id"], [0, "ID"]],
    "column_types": ["text", "number", "number"], "primary_keys": [], "foreign_keys": []}])");
  bad = LoadSpiderTables(same_column);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("column_names_original[2]: \"ID\" names the same column"),
            std::string::npos)
      << bad.status().message();
}

TEST(ParseCsvRecordsTest, QuotesNewlinesAndDoubledQuotes) {
  auto r = ParseCsvRecords(
      "table_name,DDL\r\nt,\"CREATE TABLE t (\n  \"\"a b\"\" TEXT\n);\"\nu,plain\n", "x.csv");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0], std::vector<std::string>({"table_name", "DDL"}));
  EXPECT_EQ((*r)[1][1], "CREATE TABLE t (\n  \"a b\" TEXT\n);");
  EXPECT_EQ((*r)[2], std::vector<std::string>({"u", "plain"}));

  r = ParseCsvRecords("a,,\"\"\nb", "x.csv");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0], std::vector<std::string>({"a", "", ""}));
  EXPECT_EQ((*r)[1], std::vector<std::string>({"b"}));

  r = ParseCsvRecords("a,b\nc,\"open\nstill open", "x.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("x.csv:2: unterminated"), std::string::npos)
      << r.status().message();
  r = ParseCsvRecords("\"a\"b,c\n", "x.csv");
  EXPECT_FALSE(r.ok());
}

TEST(QuoteBareColumnNamesTest, QuotesPandasStyleOnly) {
  EXPECT_EQ(QuoteBareColumnNames("CREATE TABLE v (\n    index INTEGER,\n    qty_sold(kg) REAL,\n"
                                 "    Unnamed: 2 TEXT\n);"),
            "CREATE TABLE v (\n    \"index\" INTEGER,\n    \"qty_sold(kg)\" REAL,\n"
            "    \"Unnamed: 2\" TEXT\n);");
  const std::string constrained = "CREATE TABLE t (\n  id INTEGER NOT NULL,\n  name TEXT\n);";
  EXPECT_EQ(QuoteBareColumnNames(constrained), constrained);
  const std::string one_line = "CREATE TABLE t (a INT, b TEXT)";
  EXPECT_EQ(QuoteBareColumnNames(one_line), one_line);
  EXPECT_EQ(QuoteBareColumnNames("CREATE INDEX i ON t (a)"), "CREATE INDEX i ON t (a)");
}

TEST(LoadSpider2DatabaseTest, JoinsDdlAndTableJson) {
  TempDir dir;
  dir.Write(
      "DB/DDL.csv",
      "table_name,DDL\nMovie,\"CREATE TABLE Movie (\n    index INTEGER,\n    title TEXT\n);\"\n"
      "Extra,\"CREATE TABLE Extra (x INT)\"\n");
  dir.Write("DB/Movie.json", R"({"table_name": "Movie", "table_fullname": "Movie",
    "column_names": ["index", "title"], "column_types": ["INTEGER", "TEXT"],
    "description": ["", "the title, or NaN"],
    "sample_rows": [{"index": 3, "title": "Koshish"}, {"title": null},
                    {"index": NaN, "title": "NaN"}, {"index": -Infinity, "title": "x"}]})");
  auto db = LoadSpider2Database(dir.path() + "/DB");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(db->name, "DB");
  ASSERT_EQ(db->tables.size(), 2u);
  const Spider2Table& movie = db->tables[0];
  EXPECT_EQ(movie.name, "Movie");
  EXPECT_NE(movie.ddl.find("index INTEGER"), std::string::npos);
  EXPECT_EQ(movie.columns, std::vector<std::string>({"index", "title"}));
  EXPECT_EQ(movie.descriptions[1], "the title, or NaN");
  ASSERT_EQ(movie.sample_rows.size(), 4u);
  EXPECT_EQ(movie.sample_rows[0], std::vector<std::string>({"3", "Koshish"}));
  EXPECT_EQ(movie.sample_rows[1], std::vector<std::string>({"", "NULL"}));
  // Python's bare NaN/Infinity (pandas' missing values) read as null; strings keep them.
  EXPECT_EQ(movie.sample_rows[2], std::vector<std::string>({"NULL", "NaN"}));
  EXPECT_EQ(movie.sample_rows[3], std::vector<std::string>({"NULL", "x"}));
  EXPECT_TRUE(db->tables[1].columns.empty());

  dir.Write("Bad/DDL.csv", "name,sql\n");
  auto bad = LoadSpider2Database(dir.path() + "/Bad");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("DDL.csv:1"), std::string::npos);
}

TEST(LoadSpider2LiteTasksTest, MiniRootRepairsDdlAndKeepsFailures) {
  TempDir dir;
  dir.Write(
      "spider2-lite.jsonl",
      R"({"instance_id": "local001", "db": "Db-Mini", "question": "q1", "external_knowledge": "k.md"})"
      "\n"
      R"({"instance_id": "local002", "db": "Db-Mini", "question": "q2", "external_knowledge": null})"
      "\n"
      R"({"instance_id": "local003", "db": "Db-Mini", "question": "no gold", "external_knowledge": null})"
      "\n"
      R"({"instance_id": "bq001", "db": "x", "question": "cloud", "external_knowledge": null})"
      "\n");
  dir.Write("resource/documents/k.md", "knowledge text");
  dir.Write("resource/databases/sqlite/DB_MINI/DDL.csv",
            "table_name,DDL\nMovie,\"CREATE TABLE Movie (\n    index INTEGER,\n    title TEXT,\n"
            "    year TEXT\n);\"\n");
  dir.Write("evaluation_suite/gold/sql/local001.sql",
            "SELECT title FROM Movie WHERE \"index\" > 3 ORDER BY year;\n");
  dir.Write("evaluation_suite/gold/sql/local002.sql", "SELECT nope FROM Nowhere;");
  auto tasks = LoadSpider2LiteTasks(dir.path());
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  ASSERT_EQ(tasks->size(), 2u);
  const SqlTask& t1 = (*tasks)[0];
  EXPECT_EQ(t1.id, "local001");
  EXPECT_EQ(t1.db_id, "Db-Mini");
  EXPECT_EQ(t1.evidence, "knowledge text");
  EXPECT_TRUE(t1.error.empty()) << t1.error;
  EXPECT_EQ(t1.gold.tables, Names({"Movie"}));
  EXPECT_EQ(t1.gold.columns, Names({"Movie.index", "Movie.title", "Movie.year"}));
  const SqlTask& t2 = (*tasks)[1];
  EXPECT_FALSE(t2.error.empty());
  EXPECT_TRUE(t2.gold.tables.empty());
  EXPECT_TRUE(t2.gold.columns.empty());

  dir.Write("spider2-lite.jsonl",
            R"({"instance_id": "local001", "db": "Elsewhere", "question": "q"})"
            "\n");
  auto bad = LoadSpider2LiteTasks(dir.path());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("spider2-lite.jsonl:1"), std::string::npos)
      << bad.status().message();
}

// ---------------------------------------------------------------------------
// The real data.

class SpiderDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(DataDir() + "/spider/tables.json")) {
      GTEST_SKIP() << "no Spider data at " << DataDir() << "/spider";
    }
  }
};

const SpiderSchema* Find(const std::vector<SpiderSchema>& schemas, const std::string& id) {
  for (const SpiderSchema& s : schemas) {
    if (s.db_id == id) return &s;
  }
  return nullptr;
}

TEST_F(SpiderDataTest, TablesJson) {
  auto schemas = LoadSpiderTables(DataDir() + "/spider/tables.json");
  ASSERT_TRUE(schemas.ok()) << schemas.status().ToString();
  EXPECT_EQ(schemas->size(), 166u);
  size_t fks = 0;
  for (const SpiderSchema& s : *schemas) fks += s.foreign_keys.size();
  EXPECT_EQ(fks, 795u);
  const SpiderSchema* cs = Find(*schemas, "concert_singer");
  ASSERT_NE(cs, nullptr);
  EXPECT_EQ(cs->table_names_original,
            std::vector<std::string>({"stadium", "singer", "concert", "singer_in_concert"}));
  EXPECT_EQ(cs->columns[0].name_original, "*");
  EXPECT_EQ(cs->columns[0].table, -1);
  EXPECT_EQ(cs->QualifiedColumn(11), "singer.Song_Name");
}

TEST_F(SpiderDataTest, DevTasksGold) {
  auto schemas = LoadSpiderTables(DataDir() + "/spider/tables.json");
  ASSERT_TRUE(schemas.ok()) << schemas.status().ToString();
  auto tasks = LoadSpiderTasks(DataDir() + "/spider/dev.json", *schemas);
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  ASSERT_EQ(tasks->size(), 1034u);
  size_t columns = 0;
  for (const SqlTask& t : *tasks) {
    EXPECT_FALSE(t.gold.tables.empty()) << t.id << ": " << t.gold_sql;
    columns += t.gold.columns.size();
  }
  std::printf("[ spider dev ] 1034 tasks, %zu gold columns in all\n", columns);

  const SqlTask& count = (*tasks)[0];
  EXPECT_EQ(count.id, "spider-dev-0");
  EXPECT_EQ(count.db_id, "concert_singer");
  EXPECT_EQ(count.question, "How many singers do we have?");
  EXPECT_EQ(count.gold_sql, "SELECT count(*) FROM singer");
  EXPECT_EQ(count.gold.tables, Names({"singer"}));
  EXPECT_TRUE(count.gold.columns.empty());

  // SELECT T2.name, count(*) FROM concert AS T1 JOIN stadium AS T2
  //   ON T1.stadium_id = T2.stadium_id GROUP BY T1.stadium_id
  const SqlTask& join = (*tasks)[22];
  ASSERT_EQ(join.question, "Show the stadium name and the number of concerts in each stadium.");
  EXPECT_EQ(join.gold.tables, Names({"concert", "stadium"}));
  EXPECT_EQ(join.gold.columns, Names({"stadium.Name", "concert.Stadium_ID", "stadium.Stadium_ID"}));

  // SELECT name FROM stadium EXCEPT SELECT T2.name FROM concert AS T1 JOIN
  //   stadium AS T2 ON T1.stadium_id = T2.stadium_id WHERE T1.year = 2014
  const SqlTask& except = (*tasks)[31];
  ASSERT_EQ(except.question,
            "Show names for all stadiums except for stadiums having a concert in year 2014.");
  EXPECT_EQ(except.gold.tables, Names({"concert", "stadium"}));
  EXPECT_EQ(except.gold.columns,
            Names({"stadium.Name", "concert.Stadium_ID", "stadium.Stadium_ID", "concert.Year"}));

  // SELECT name FROM stadium WHERE stadium_id NOT IN (SELECT stadium_id FROM concert)
  const SqlTask& nested = (*tasks)[28];
  ASSERT_EQ(nested.question, "Show the stadium names without any concert.");
  EXPECT_EQ(nested.gold.tables, Names({"concert", "stadium"}));
  EXPECT_EQ(nested.gold.columns,
            Names({"stadium.Name", "stadium.Stadium_ID", "concert.Stadium_ID"}));
}

TEST_F(SpiderDataTest, UnknownDbIdNamesQuestion) {
  auto schemas = LoadSpiderTables(DataDir() + "/spider/tables.json");
  ASSERT_TRUE(schemas.ok());
  std::vector<SpiderSchema> only_one;
  only_one.push_back(*Find(*schemas, "concert_singer"));
  auto tasks = LoadSpiderTasks(DataDir() + "/spider/dev.json", only_one);
  ASSERT_FALSE(tasks.ok());
  EXPECT_NE(tasks.status().message().find("dev.json: question 45 (db_id \"pets_1\")"),
            std::string::npos)
      << tasks.status().message();
}

class Spider2DataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(Root() + "/spider2-lite.jsonl")) {
      GTEST_SKIP() << "no Spider 2.0-lite data at " << Root();
    }
  }
  static std::string Root() { return DataDir() + "/spider2_lite"; }
};

TEST_F(Spider2DataTest, EveryDatabaseLoads) {
  size_t databases = 0, tables = 0;
  for (const auto& entry : fs::directory_iterator(Root() + "/resource/databases/sqlite")) {
    auto db = LoadSpider2Database(entry.path().string());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ++databases;
    tables += db->tables.size();
  }
  EXPECT_EQ(databases, 30u);
  EXPECT_EQ(tables, 432u);
}

TEST_F(Spider2DataTest, Database) {
  auto db = LoadSpider2Database(Root() + "/resource/databases/sqlite/DB_IMDB");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(db->tables.size(), 13u);
  for (const Spider2Table& t : db->tables) {
    EXPECT_FALSE(t.ddl.empty()) << t.name;
    EXPECT_FALSE(t.columns.empty()) << t.name;
    EXPECT_EQ(t.types.size(), t.columns.size()) << t.name;
    for (const auto& row : t.sample_rows) EXPECT_EQ(row.size(), t.columns.size()) << t.name;
  }
}

TEST_F(Spider2DataTest, LocalTasksWithGold) {
  auto tasks = LoadSpider2LiteTasks(Root());
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  ASSERT_EQ(tasks->size(), 24u);
  size_t with_tables = 0, with_columns = 0, failed = 0;
  std::map<std::string, const SqlTask*> by_id;
  for (const SqlTask& t : *tasks) {
    by_id[t.id] = &t;
    EXPECT_FALSE(t.question.empty()) << t.id;
    EXPECT_FALSE(t.gold_sql.empty()) << t.id;
    if (!t.error.empty()) {
      ++failed;
      std::printf("[ spider2 ] %s (%s): %s\n", t.id.c_str(), t.db_id.c_str(), t.error.c_str());
    }
    std::printf("[ spider2 ] %s %s: %zu tables, %zu columns\n", t.id.c_str(), t.db_id.c_str(),
                t.gold.tables.size(), t.gold.columns.size());
    with_tables += !t.gold.tables.empty();
    with_columns += !t.gold.columns.empty();
  }
  std::printf("[ spider2 ] 24 tasks: %zu with gold tables, %zu with gold columns, %zu failed\n",
              with_tables, with_columns, failed);
  EXPECT_GE(with_columns, 20u);

  ASSERT_EQ(by_id.count("local003"), 1u);
  EXPECT_NE(by_id["local003"]->evidence.find("RFM"), std::string::npos);
  EXPECT_TRUE(by_id["local004"]->evidence.empty());
  // Db-IMDB lives in folder DB_IMDB and its DDL leaves "index" bare.
  const SqlTask& imdb = *by_id["local099"];
  EXPECT_EQ(imdb.db_id, "Db-IMDB");
  EXPECT_TRUE(imdb.error.empty()) << imdb.error;
  EXPECT_EQ(imdb.gold.tables.count("Person"), 1u);
  const SqlTask& sakila = *by_id["local197"];
  EXPECT_EQ(sakila.gold.tables, Names({"payment"}));
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
