#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sql/safe_exec.h"
#include "sql/spider_data.h"
#include "sql_test_util.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

namespace fs = std::filesystem;

// people(10 rows), cities(3), lives(10), a view and an index.
constexpr char kFixtureSql[] = R"sql(
CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER,
                     score REAL, photo BLOB);
CREATE TABLE cities (id INTEGER PRIMARY KEY, name TEXT, country TEXT);
CREATE TABLE lives (person_id INTEGER, city_id INTEGER);
CREATE INDEX people_age ON people(age);
CREATE VIEW adults AS SELECT name FROM people WHERE age >= 30;
INSERT INTO people
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10)
  SELECT i, 'person' || i, 10 + 5 * i, i / 4.0, x'00ff' FROM n;
INSERT INTO cities VALUES (1, 'Paris', 'FR'), (2, 'Lyon', 'FR'), (3, 'Oslo', 'NO');
INSERT INTO lives SELECT id, 1 + id % 3 FROM people;
)sql";


// Statements that write or change state, each with a word its refusal names.
std::vector<std::pair<std::string, std::string>> WriteStatements(const testing::TempDir& dir) {
  return {
      {"INSERT INTO people(name) VALUES ('x')", "INSERT"},
      {"REPLACE INTO people(id, name) VALUES (1, 'x')", "INSERT"},
      {"INSERT INTO people(name) SELECT name FROM people RETURNING id", "INSERT"},
      {"WITH x AS (SELECT 'y') INSERT INTO people(name) SELECT * FROM x", "INSERT"},
      {"UPDATE people SET age = 1", "UPDATE"},
      {"DELETE FROM people", "DELETE"},
      {"DELETE FROM nosuch", "DELETE"},
      {"UPDATE sqlite_master SET sql = 'x'", "UPDATE"},
      {"CREATE TABLE z (a)", "CREATE TABLE"},
      {"CREATE TEMP TABLE z (a)", "CREATE TEMP TABLE"},
      {"CREATE INDEX z ON people(name)", "CREATE INDEX"},
      {"CREATE VIEW z AS SELECT 1", "CREATE VIEW"},
      {"CREATE TRIGGER z AFTER INSERT ON people BEGIN SELECT 1; END", "CREATE TRIGGER"},
      {"CREATE VIRTUAL TABLE z USING fts5(a)", "CREATE VIRTUAL TABLE"},
      {"DROP TABLE people", "DROP TABLE"},
      {"DROP TABLE IF EXISTS nosuch", "DROP TABLE"},
      {"DROP VIEW adults", "DROP VIEW"},
      {"DROP INDEX people_age", "DROP INDEX"},
      {"ALTER TABLE people ADD COLUMN z TEXT", "ALTER TABLE"},
      {"ALTER TABLE people RENAME TO z", "ALTER TABLE"},
      {"ATTACH DATABASE '" + dir.File("attached.db") + "' AS other", "ATTACH"},
      {"DETACH DATABASE main", "DETACH"},
      {"PRAGMA user_version = 5", "PRAGMA user_version"},
      {"PRAGMA journal_mode = wal", "PRAGMA journal_mode"},
      {"PRAGMA query_only = 0", "PRAGMA query_only"},
      {"PRAGMA writable_schema = 1", "PRAGMA writable_schema"},
      {"PRAGMA integrity_check", "PRAGMA integrity_check"},
      {"PRAGMA cache_size = 0", "PRAGMA cache_size"},
      {"SELECT * FROM pragma_index_xinfo('people_age')", "PRAGMA index_xinfo"},
      {"VACUUM", "VACUUM"},
      {"VACUUM INTO '" + dir.File("copy.db") + "'", "VACUUM"},
      {"BEGIN", "BEGIN"},
      {"BEGIN IMMEDIATE", "BEGIN"},
      {"COMMIT", "COMMIT"},
      {"END", "COMMIT"},
      {"ROLLBACK", "ROLLBACK"},
      {"SAVEPOINT s", "SAVEPOINT"},
      {"RELEASE s", "RELEASE"},
      {"REINDEX", "REINDEX"},
      {"REINDEX people", "REINDEX"},
      {"ANALYZE", "ANALYZE"},
      {"SELECT load_extension('/nonexistent/libevil')", "load_extension"},
  };
}

class SqlExecTest : public SqliteFileTest {
 protected:
  void SetUp() override { MakeDatabase("fixture.db", kFixtureSql); }
};

TEST_F(SqlExecTest, SelectReturnsColumnsAndTypedRows) {
  auto r = db_->Execute(
      "SELECT id, name, score, photo, NULL AS missing FROM people WHERE id <= 2 ORDER BY id",
      Limits());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->columns, (std::vector<std::string>{"id", "name", "score", "photo", "missing"}));
  ASSERT_EQ(r->rows.size(), 2u);
  EXPECT_FALSE(r->truncated);
  EXPECT_GE(r->seconds, 0.0);
  const auto& row = r->rows[0];
  ASSERT_EQ(row.size(), 5u);
  EXPECT_EQ(std::get<int64_t>(row[0]), 1);
  EXPECT_EQ(std::get<std::string>(row[1]), "person1");
  EXPECT_DOUBLE_EQ(std::get<double>(row[2]), 0.25);
  EXPECT_EQ(std::get<std::string>(row[3]), std::string("\x00\xff", 2));  // BLOB bytes
  EXPECT_TRUE(std::holds_alternative<std::monostate>(row[4]));
  EXPECT_EQ(SqlValueText(r->rows[1][1]), "person2");
}

TEST_F(SqlExecTest, JoinsAggregatesAndSchemaReadsWork) {
  auto r = db_->Execute(
      "SELECT c.name, count(*) AS n FROM people p JOIN lives l ON l.person_id = p.id "
      "JOIN cities c ON c.id = l.city_id GROUP BY c.name ORDER BY c.name",
      Limits());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->rows.size(), 3u);
  EXPECT_EQ(SqlValueText(r->rows[0][0]), "Lyon");  // ids 1, 4, 7, 10
  EXPECT_EQ(SqlValueText(r->rows[0][1]), "4");

  auto tables =
      db_->Execute("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name", Limits());
  ASSERT_TRUE(tables.ok()) << tables.status().ToString();
  ASSERT_EQ(tables->rows.size(), 3u);
  EXPECT_EQ(SqlValueText(tables->rows[0][0]), "cities");

  auto view = db_->Execute("SELECT count(*) FROM adults", Limits());
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(SqlValueText(view->rows[0][0]), "7");  // ages 15..60 step 5, >= 30

  auto plan = db_->Execute("EXPLAIN QUERY PLAN SELECT name FROM people WHERE age > 40", Limits());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_FALSE(plan->rows.empty());
  auto values = db_->Execute("VALUES (1, 'a'), (2, 'b')", Limits());
  ASSERT_TRUE(values.ok()) << values.status().ToString();
  EXPECT_EQ(values->rows.size(), 2u);

  // A table-valued function, on its first use on this connection.
  auto json = db_->Execute("SELECT sum(value) FROM json_each('[1, 2, 39]')", Limits());
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(SqlValueText(json->rows[0][0]), "42");
}

TEST(SqlValueTextTest, FormatsEachKind) {
  EXPECT_EQ(SqlValueText(SqlValue{}), "NULL");
  EXPECT_EQ(SqlValueText(SqlValue{int64_t{-9007199254740993}}), "-9007199254740993");
  EXPECT_EQ(SqlValueText(SqlValue{0.1}), "0.1");
  EXPECT_EQ(SqlValueText(SqlValue{1.0 / 3.0}), "0.333333333333333");
  EXPECT_EQ(SqlValueText(SqlValue{2.0}), "2");
  EXPECT_EQ(SqlValueText(SqlValue{std::string("a b")}), "a b");
}

TEST_F(SqlExecTest, RowLimitTruncates) {
  auto r = db_->Execute("SELECT id FROM people ORDER BY id", Limits(10.0, 3));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->rows.size(), 3u);
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(SqlValueText(r->rows[2][0]), "3");

  auto exact = db_->Execute("SELECT id FROM people", Limits(10.0, 10));
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->rows.size(), 10u);
  EXPECT_FALSE(exact->truncated);  // exactly max_rows rows: nothing was cut

  auto none = db_->Execute("SELECT id FROM people", Limits(10.0, 0));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->rows.empty());
  EXPECT_TRUE(none->truncated);
}

TEST_F(SqlExecTest, WritesAndStateChangesAreRefused) {
  for (const auto& [sql, name] : WriteStatements(dir_)) {
    auto r = db_->Execute(sql, Limits());
    ASSERT_FALSE(r.ok()) << sql;
    EXPECT_TRUE(IsSqlRefusal(r.status())) << sql << " → " << r.status().ToString();
    EXPECT_NE(r.status().message().find(name), std::string::npos)
        << sql << " → " << r.status().ToString();
    // pragma_table_info() asks for its PRAGMA only when it runs; Reads()
    // only prepares, so it lets that one through (harmlessly).
    if (sql.find("pragma_") != std::string::npos) continue;
    auto reads = db_->Reads(sql);
    EXPECT_FALSE(reads.ok()) << sql;
  }
  auto attach = db_->Execute("ATTACH 'x.db' AS x", Limits());
  EXPECT_EQ(attach.status().message(), "refused: ATTACH is not allowed (read-only)");
  // Nothing was applied.
  auto count = db_->Execute("SELECT count(*) FROM people", Limits());
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  EXPECT_EQ(SqlValueText(count->rows[0][0]), "10");
  EXPECT_FALSE(fs::exists(dir_.File("attached.db")));
  EXPECT_FALSE(fs::exists(dir_.File("copy.db")));
}

TEST_F(SqlExecTest, OnlyOneStatementRuns) {
  for (const char* sql : {"SELECT 1; DROP TABLE people", "SELECT 1; SELECT 2",
                          "SELECT 1 /* c */ ; -- c\n SELECT 2"}) {
    auto r = db_->Execute(sql, Limits());
    ASSERT_FALSE(r.ok()) << sql;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("one statement"), std::string::npos)
        << r.status().ToString();
  }
  // A NUL byte ends SQLite's view of the text; what follows must not be ignored.
  auto nul = db_->Execute(std::string("SELECT 1\0DROP TABLE people", 26), Limits());
  EXPECT_FALSE(nul.ok());

  // Trailing semicolons and comments are fine.
  auto ok = db_->Execute("SELECT 1;; -- done\n /* really */ ;\n", Limits());
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(SqlValueText(ok->rows[0][0]), "1");

  for (const char* sql : {"", "  ", "-- only a comment", ";"}) {
    auto empty = db_->Execute(sql, Limits());
    ASSERT_FALSE(empty.ok()) << '"' << sql << '"';
    EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST_F(SqlExecTest, RunawayQueriesStopAtTheTimeLimit) {
  const double kLimit = 0.3;
  for (const char* sql :
       {"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
        "SELECT count(*) FROM people a, people b, people c, people d, people e, people f, "
        "people g, people h, people i, people j"}) {
    auto start = std::chrono::steady_clock::now();
    auto r = db_->Execute(sql, Limits(kLimit));
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_FALSE(r.ok()) << sql;
    EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().ToString();
    EXPECT_GE(seconds, kLimit * 0.99);  // it ran until the deadline, not less
    EXPECT_LT(seconds, 5.0);            // generous: only that it stops
  }
  // The connection is usable afterwards.
  auto after = db_->Execute("SELECT count(*) FROM people", Limits());
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(SqlValueText(after->rows[0][0]), "10");
}

TEST_F(SqlExecTest, TimeLimitMustBePositive) {
  EXPECT_EQ(db_->Execute("SELECT 1", Limits(0.0)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(db_->Execute("SELECT 1", Limits(-1.0)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(db_->Execute("SELECT 1", Limits(std::nan(""))).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(db_->Execute("SELECT 1", Limits(1e300)).ok());  // capped, no overflow
  EXPECT_TRUE(db_->Execute("SELECT 1", Limits(INFINITY)).ok());
}

TEST_F(SqlExecTest, SideEffectFunctionsAreRefused) {
  auto r = db_->Execute("SELECT load_extension('/nonexistent/libevil')", Limits());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "refused: function load_extension() is not allowed");
  // Not compiled into the library here, but refused or unknown either way.
  for (const char* sql : {"SELECT readfile('/etc/passwd')", "SELECT writefile('/tmp/x', 'y')",
                          "SELECT fts3_tokenizer('simple')", "SELECT edit('x')"}) {
    EXPECT_FALSE(db_->Execute(sql, Limits()).ok()) << sql;
  }
}

TEST_F(SqlExecTest, RuntimeErrorsAreInvalidArgument) {
  auto r = db_->Execute("SELECT * FROM nosuch", Limits());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(IsSqlRefusal(r.status()));
  EXPECT_NE(r.status().message().find("no such table: nosuch"), std::string::npos);
  auto big = db_->Execute("SELECT length(zeroblob(1000000000))", Limits());
  EXPECT_FALSE(big.ok());  // over the value size cap
}

TEST_F(SqlExecTest, DatabaseFileIsByteIdenticalAfterwards) {
  db_.reset();
  const std::string before = testing::ReadFile(path_);
  ASSERT_GT(before.size(), 0u);
  const auto mtime = fs::last_write_time(path_);
  const auto listing = DirListing(dir_.path());
  {
    auto db = ReadOnlyDatabase::Open(path_);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    for (const auto& [sql, name] : WriteStatements(dir_)) {
      EXPECT_FALSE((*db)->Execute(sql, Limits()).ok()) << sql;
    }
    EXPECT_TRUE((*db)->Execute("SELECT * FROM people, cities", Limits()).ok());
    EXPECT_FALSE((*db)
                     ->Execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                               "SELECT max(x) FROM c",
                               Limits(0.2))
                     .ok());
    EXPECT_TRUE((*db)->Reads("SELECT name FROM people").ok());
  }
  EXPECT_TRUE(testing::ReadFile(path_) == before) << "the database file changed";
  EXPECT_EQ(fs::last_write_time(path_), mtime);
  EXPECT_EQ(DirListing(dir_.path()), listing);  // no journal, attached or vacuumed file
}

TEST(SqlOpenTest, MissingFileIsNotFound) {
  testing::TempDir dir;
  auto r = ReadOnlyDatabase::Open(dir.File("nope.db"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("nope.db"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.File("nope.db")));  // not created either
}

TEST(SqlOpenTest, NonDatabasesAreInvalidArgument) {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; i < 200; ++i) text += "id,name\n1,hello world\n";
  testing::WriteFile(dir.File("text.db"), text);

  std::mt19937 rng(7);
  std::string noise(8192, '\0');
  for (char& c : noise) c = static_cast<char>(rng() & 0xff);
  testing::WriteFile(dir.File("random.db"), noise);

  RunSql(dir.File("real.db"), kFixtureSql);
  const std::string real = testing::ReadFile(dir.File("real.db"));
  ASSERT_GT(real.size(), 100u);
  testing::WriteFile(dir.File("truncated-header.db"), real.substr(0, 50));
  testing::WriteFile(dir.File("truncated-page.db"), real.substr(0, 1000));
  testing::WriteFile(dir.File("empty.db"), "");

  for (const char* name :
       {"text.db", "random.db", "truncated-header.db", "truncated-page.db", "empty.db"}) {
    auto r = ReadOnlyDatabase::Open(dir.File(name));
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
    EXPECT_EQ(r.status().message().rfind(dir.File(name) + ": not a SQLite database", 0), 0u)
        << r.status().ToString();
  }
  auto directory = ReadOnlyDatabase::Open(dir.path());
  EXPECT_EQ(directory.status().code(), StatusCode::kInvalidArgument);
}

TEST(SqlOpenTest, OddCharactersInThePathAreNotUriSyntax) {
  testing::TempDir dir;
  const std::string path = dir.File("my db?mode=rwc#%41.sqlite");
  RunSql(path, kFixtureSql);
  auto db = ReadOnlyDatabase::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ((*db)->path(), path);
  auto r = (*db)->Execute("SELECT count(*) FROM cities", Limits());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(SqlValueText(r->rows[0][0]), "3");
  EXPECT_TRUE(IsSqlRefusal((*db)->Execute("DELETE FROM cities", Limits()).status()));
}

TEST(SqlOpenTest, WalModeFileOpensAndStaysUnchanged) {
  testing::TempDir dir;
  const std::string path = dir.File("wal.db");
  RunSql(path, "PRAGMA journal_mode=wal; CREATE TABLE t (a); INSERT INTO t VALUES (1), (2);");
  const std::string before = testing::ReadFile(path);
  auto db = ReadOnlyDatabase::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto r = (*db)->Execute("SELECT sum(a) FROM t", Limits());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(SqlValueText(r->rows[0][0]), "3");
  db->reset();
  EXPECT_TRUE(testing::ReadFile(path) == before);
}

TEST_F(SqlExecTest, ReadsOfAJoinResolveAliases) {
  auto r = db_->Reads(
      "SELECT p.name, c.name FROM people AS p JOIN lives l ON l.person_id = p.id "
      "JOIN cities c ON c.id = l.city_id WHERE c.country = 'FR'");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tables, (std::set<std::string>{"cities", "lives", "people"}));
  EXPECT_EQ(r->columns,
            (std::set<std::string>{"cities.country", "cities.id", "cities.name", "lives.city_id",
                                   "lives.person_id", "people.id", "people.name"}));
}

TEST_F(SqlExecTest, ReadsOfCountStarIsTableOnly) {
  auto r = db_->Reads("SELECT count(*) FROM lives");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tables, (std::set<std::string>{"lives"}));
  EXPECT_TRUE(r->columns.empty());
}

TEST_F(SqlExecTest, ReadsOfSubqueriesCtesAndViewsReachBaseTables) {
  auto sub =
      db_->Reads("SELECT old.name FROM (SELECT name, age FROM people WHERE age > 30) AS old");
  ASSERT_TRUE(sub.ok()) << sub.status().ToString();
  EXPECT_EQ(sub->tables, (std::set<std::string>{"people"}));
  EXPECT_EQ(sub->columns, (std::set<std::string>{"people.age", "people.name"}));

  auto cte =
      db_->Reads("WITH old AS (SELECT name FROM people WHERE age > 30) SELECT count(*) FROM old");
  ASSERT_TRUE(cte.ok()) << cte.status().ToString();
  EXPECT_EQ(cte->tables, (std::set<std::string>{"people"}));  // no "old"
  EXPECT_EQ(cte->columns, (std::set<std::string>{"people.age", "people.name"}));

  auto view = db_->Reads("SELECT name FROM adults");
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->tables, (std::set<std::string>{"adults", "people"}));
  EXPECT_TRUE(view->columns.count("adults.name"));
  EXPECT_TRUE(view->columns.count("people.age"));

  auto schema = db_->Reads("SELECT name FROM sqlite_master, json_each('[1]')");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_TRUE(schema->tables.empty());
  EXPECT_TRUE(schema->columns.empty());
}

TEST_F(SqlExecTest, ReadsDoesNotRunTheStatement) {
  auto start = std::chrono::steady_clock::now();
  auto r = db_->Reads(
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
      "SELECT count(*) FROM c, people WHERE people.id = c.x");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tables, (std::set<std::string>{"people"}));
  EXPECT_LT(seconds, 2.0);  // an endless query: only preparing can be this quick

  EXPECT_EQ(db_->Reads("SELECT 1; SELECT 2").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(db_->Reads("SELECT nosuch FROM people").status().code(), StatusCode::kInvalidArgument);
}

TEST(SqlFromDdlTest, BadStatementFailsOrIsSkipped) {
  const std::vector<std::string> ddl = {
      "CREATE TABLE a (id INTEGER PRIMARY KEY, name TEXT)",
      "CREATE TABLE b (id INT AUTO_INCREMENT, a_id INT) ENGINE=InnoDB",  // MySQL dialect
      "CREATE TABLE c (x TEXT, a_id INT REFERENCES a(id))",
      "CREATE VIEW av AS SELECT name FROM a",
  };
  size_t skipped = 99;
  auto strict = ReadOnlyDatabase::FromDdl(ddl, false, &skipped);
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(strict.status().message().rfind("ddl[1] ", 0), 0u) << strict.status().ToString();
  EXPECT_NE(strict.status().message().find("syntax error"), std::string::npos);

  auto db = ReadOnlyDatabase::FromDdl(ddl, true, &skipped);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(skipped, 1u);
  EXPECT_EQ((*db)->path(), ":memory:");
  auto reads = (*db)->Reads("SELECT a.name, c.x FROM a JOIN c ON c.a_id = a.id");
  ASSERT_TRUE(reads.ok()) << reads.status().ToString();
  EXPECT_EQ(reads->tables, (std::set<std::string>{"a", "c"}));
  EXPECT_EQ(reads->columns, (std::set<std::string>{"a.id", "a.name", "c.a_id", "c.x"}));
  auto rows = (*db)->Execute("SELECT count(*) FROM av", Limits());
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(SqlValueText(rows->rows[0][0]), "0");
  EXPECT_FALSE((*db)->Execute("SELECT * FROM b", Limits()).ok());  // skipped

  // The same read-only policy as a file.
  for (const char* sql : {"INSERT INTO a(name) VALUES ('x')", "CREATE TABLE z (a)",
                          "PRAGMA query_only = 0", "DROP VIEW av", "BEGIN"}) {
    EXPECT_TRUE(IsSqlRefusal((*db)->Execute(sql, Limits()).status())) << sql;
  }
}

TEST(SqlFromDdlTest, ElementsAreAtomicAndFileEffectsRefused) {
  testing::TempDir dir;
  const std::vector<std::string> ddl = {
      "CREATE TABLE d (x); CREATE TABLE d (y)",  // second fails: first is undone
      "ATTACH '" + dir.File("attached.db") + "' AS other",
      "VACUUM INTO '" + dir.File("vacuumed.db") + "'",
      "SELECT load_extension('/nonexistent/libevil')",
      "PRAGMA query_only = 0",
      "COMMIT",
      "RELEASE flowrag_ddl",
      "CREATE TABLE e (x); INSERT INTO e VALUES (1), (2); -- sample rows",
      "",
  };
  size_t skipped = 0;
  auto db = ReadOnlyDatabase::FromDdl(ddl, true, &skipped);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(skipped, 7u);
  EXPECT_FALSE(fs::exists(dir.File("attached.db")));
  EXPECT_FALSE(fs::exists(dir.File("vacuumed.db")));
  auto tables = (*db)->Execute("SELECT name FROM sqlite_schema ORDER BY name", Limits());
  ASSERT_TRUE(tables.ok()) << tables.status().ToString();
  ASSERT_EQ(tables->rows.size(), 1u);
  EXPECT_EQ(SqlValueText(tables->rows[0][0]), "e");
  auto e = (*db)->Execute("SELECT sum(x) FROM e", Limits());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(SqlValueText(e->rows[0][0]), "3");

  auto attach = ReadOnlyDatabase::FromDdl({ddl[1]});
  ASSERT_FALSE(attach.ok());
  EXPECT_NE(attach.status().message().find("refused: ATTACH is not allowed"), std::string::npos)
      << attach.status().ToString();
}

// The policy refuses no real read: every Spider dev gold query whose
// database ships runs under the default limits and returns what a plain
// read-write connection returns.
TEST(SpiderGoldTest, EveryGoldQueryRunsAndMatchesAPlainConnection) {
  const std::string spider = std::string(FLOWRAG_SOURCE_DIR) + "/../shared/data/spider";
  if (!fs::exists(spider + "/dev.json")) GTEST_SKIP() << "needs ../shared/data/spider";
  auto schemas = LoadSpiderTables(spider + "/tables.json");
  ASSERT_TRUE(schemas.ok()) << schemas.status().ToString();
  auto tasks = LoadSpiderTasks(spider + "/dev.json", *schemas);
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  size_t ran = 0;
  for (const SqlTask& t : *tasks) {
    const std::string file = spider + "/database/" + t.db_id + "/" + t.db_id + ".sqlite";
    if (!fs::exists(file)) continue;
    auto db = ReadOnlyDatabase::Open(file);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    SqlLimits limits;
    limits.max_rows = 100000;
    auto safe = (*db)->Execute(t.gold_sql, limits);
    ASSERT_TRUE(safe.ok()) << t.id << ": " << t.gold_sql << ": " << safe.status().ToString();
    // The same statement on an ordinary connection: same number of rows.
    sqlite3* plain = nullptr;
    ASSERT_EQ(sqlite3_open_v2(file.c_str(), &plain, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(plain, t.gold_sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << t.gold_sql;
    size_t rows = 0;
    while (sqlite3_step(stmt) == SQLITE_ROW) ++rows;
    sqlite3_finalize(stmt);
    sqlite3_close(plain);
    EXPECT_EQ(safe->rows.size(), rows) << t.id << ": " << t.gold_sql;
    EXPECT_FALSE(safe->truncated);
    ++ran;
  }
  EXPECT_EQ(ran, 972u);  // 1,034 questions minus wta_1's 62 (no database file)
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
