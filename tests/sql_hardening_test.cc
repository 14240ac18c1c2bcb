// Issue 21: SQL hardening. Unbounded functions inside one statement (7),
// untrusted Spider 2.0-lite DDL (12), untrusted database files and result
// sizes (13), read-only introspection pragmas (14). Real SQLite files in
// temporary directories.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "flowrag/sql.h"
#include "sql/bounded_functions.h"
#include "sql/safe_exec.h"
#include "sql/schema_graph.h"
#include "sql/spider_data.h"
#include "sql_test_util.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr char kFixtureSql[] = R"sql(
CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city_id INTEGER REFERENCES cities(id));
CREATE TABLE cities (id INTEGER PRIMARY KEY, name TEXT);
CREATE INDEX people_name ON people(name);
INSERT INTO cities VALUES (1, 'Paris'), (2, 'Oslo');
INSERT INTO people VALUES (1, 'Ada', 1), (2, 'Bo', 2), (3, 'Cy', 1);
)sql";

// The one value of a one-row, one-column result, as text.
std::string Scalar(ReadOnlyDatabase& db, const std::string& sql) {
  auto r = db.Execute(sql, Limits());
  if (!r.ok()) return "error: " + r.status().ToString();
  if (r->rows.size() != 1 || r->rows[0].size() != 1) return "error: not one value";
  return SqlValueText(r->rows[0][0]);
}

// The same value from SQLite's own built-in functions on a plain connection.
std::string PlainScalar(const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  sqlite3_stmt* stmt = nullptr;
  std::string out = "error";
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    const auto* text = sqlite3_column_text(stmt, 0);
    out = text == nullptr ? "NULL" : reinterpret_cast<const char*>(text);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

class SqlHardeningTest : public SqliteFileTest {
 protected:
  void SetUp() override { MakeDatabase("user.sqlite", kFixtureSql); }
};

// --- 7: unbounded work inside one function call -----------------------------

TEST_F(SqlHardeningTest, HugePrintfWidthIsRefusedWellWithinTheTimeLimit) {
  // Unbounded, SQLite 3.40 spends about a minute in this one call, where
  // neither the progress handler nor sqlite3_interrupt() reaches it.
  for (const char* sql : {"SELECT length(printf('%.*c', 2000000000, 'x'))",
                          "SELECT length(format('%*d', -2000000000, 1))",
                          "SELECT length(printf('%2000000000s', 'x'))",
                          "SELECT length(printf('%d %.*c', 1, 2000000000, 'x')) FROM people"}) {
    const auto start = Clock::now();
    auto r = db_->Execute(sql, Limits(1.0));
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    ASSERT_FALSE(r.ok()) << sql;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
    EXPECT_NE(r.status().message().find("width or precision 2000000000 is over the limit"),
              std::string::npos)
        << r.status().ToString();
    EXPECT_LT(seconds, 5.0) << sql;
  }
  // The connection is usable afterwards.
  EXPECT_EQ(Scalar(*db_, "SELECT count(*) FROM people"), "3");
}

TEST_F(SqlHardeningTest, BoundedPrintfFormatsExactlyAsSqlite) {
  for (const std::string call :
       {"printf('%5.2f|%-4s|%03d|%x|%%', 3.14159, 'ab', 7, 255)", "printf('%.*c', 3, 'x')",
        "format('%,d and %q', 1234567, 'it''s')", "printf('%s', NULL)", "printf(NULL)",
        "printf('%*.*s|', 6, 2, 'abcdef')", "printf('%lld %!.3g %e', 9, 0.5, 12.5)",
        "printf('%c%c', 'xy', 'z')", "printf('no args')", "printf('%d %d', 1)",
        "printf('%Q', NULL)", "printf('%w', 'a\"b')"}) {
    const std::string sql = "SELECT " + call;
    EXPECT_EQ(Scalar(*db_, sql), PlainScalar(sql)) << sql;
  }
  // From a table, with a NULL format.
  auto r = db_->Execute("SELECT printf('%-3s#%d', name, id) FROM people ORDER BY id", Limits());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->rows.size(), 3u);
  EXPECT_EQ(SqlValueText(r->rows[0][0]), "Ada#1");
  EXPECT_EQ(SqlValueText(r->rows[1][0]), "Bo #2");
}

TEST_F(SqlHardeningTest, InstrAndReplaceAreLinear) {
  // 4 million '0's and 2 million '0's then 'x': SQLite's own loops compare
  // the 2 MB pattern at each of 2 million places (minutes, in one
  // uninterruptible call).
  const std::string hay = "hex(zeroblob(2000000))", needle = "hex(zeroblob(1000000)) || 'x'";
  for (const std::string& sql : {"SELECT instr(" + hay + ", " + needle + ")",
                                 "SELECT length(replace(" + hay + ", " + needle + ", 'y'))"}) {
    const auto start = Clock::now();
    auto r = db_->Execute(sql, Limits(1.0));
    ASSERT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 5.0) << sql;
    EXPECT_EQ(SqlValueText(r->rows[0][0]),
              sql.find("instr") != std::string::npos ? "0" : "4000000");
  }
}

TEST_F(SqlHardeningTest, InstrAndReplaceGiveSqlitesResults) {
  for (const std::string call : {"instr('hello world', 'o')",
                                 "instr('hello', '')",
                                 "instr('', 'a')",
                                 "instr(NULL, 'a')",
                                 "instr('a', NULL)",
                                 "instr('héllo wörld', 'wö')",
                                 "instr('ééé', x'a9')",
                                 "instr(x'00010203', x'0203')",
                                 "instr(x'c3a9c3a9', x'a9c3')",
                                 "instr(12345, 34)",
                                 "instr('abc', x'63')",
                                 "instr(x'616263', 'c')",
                                 "instr('aaaa', 'aa')",
                                 "replace('hello world', 'o', '0')",
                                 "replace('aaaa', 'aa', 'b')",
                                 "replace('abc', '', 'x')",
                                 "replace('abc', 'b', '')",
                                 "replace(NULL, 'a', 'b')",
                                 "replace('abc', NULL, 'b')",
                                 "replace('abc', 'b', NULL)",
                                 "replace(12345, 3, 'x')",
                                 "replace('héllo', 'é', 'e')",
                                 "replace('abcabc', 'abc', 'abcabc')",
                                 "typeof(replace(x'6162', 'b', 'c'))",
                                 "typeof(replace(5, '', 'c'))"}) {
    const std::string sql = "SELECT " + call;
    EXPECT_EQ(Scalar(*db_, sql), PlainScalar(sql)) << sql;
  }
  auto big = db_->Execute("SELECT replace(hex(zeroblob(20000000)), '0', 'ab')", Limits());
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("too big"), std::string::npos) << big.status().ToString();
}

TEST_F(SqlHardeningTest, HeapGrowthOverTheBudgetStopsTheStatement) {
  // group_concat() keeps 50 MB (under the 64 MiB value limit) in SQLite's heap.
  const std::string sql =
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50) "
      "SELECT length(group_concat(hex(randomblob(500000)), '')) FROM c";
  SqlLimits limits = Limits();
  limits.max_memory_bytes = 10 << 20;
  auto r = db_->Execute(sql, limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("limits.max_memory_bytes"), std::string::npos)
      << r.status().ToString();
  EXPECT_EQ(Scalar(*db_, sql), "50000000");  // the default budget (1 GiB) lets it run
}

TEST(PrintfWidthsTest, ReadsWidthsAndPrecisionsInSqlitesArgumentOrder) {
  EXPECT_EQ(PrintfWidths("%.*c", {2000000000}), (std::vector<int64_t>{2000000000}));
  // A '*' takes the next argument; each conversion but %% and %n takes one.
  EXPECT_EQ(PrintfWidths("%d %*.*f %% %n%5s %.3q", {1, 7, 8, 0, 0, 0}),
            (std::vector<int64_t>{7, 8, 5, 3}));
  // The argument is read as a 32-bit int and its magnitude used.
  EXPECT_EQ(PrintfWidths("%*d", {(int64_t{1} << 32) + 5}), (std::vector<int64_t>{5}));
  EXPECT_EQ(PrintfWidths("%*d", {-40}), (std::vector<int64_t>{40}));
  EXPECT_EQ(PrintfWidths("%-08.3lld", {}), (std::vector<int64_t>{8, 3}));
  // Missing arguments are 0; an unknown conversion stops the scan.
  EXPECT_EQ(PrintfWidths("%*d", {}), (std::vector<int64_t>{0}));
  EXPECT_EQ(PrintfWidths("%5y %*d", {99}), (std::vector<int64_t>{5}));
  EXPECT_TRUE(PrintfWidths("plain %", {}).empty());
}

// --- 12: untrusted schema DDL -----------------------------------------------

// A Spider 2.0-lite folder: DDL.csv with the given (table, DDL) records.
std::string WriteSchemaFolder(const testing::TempDir& dir, const std::string& name,
                              const std::vector<std::pair<std::string, std::string>>& tables) {
  const std::string folder = dir.File(name);
  fs::create_directories(folder);
  std::string csv = "table_name,DDL\n";
  for (const auto& [table, ddl] : tables) {
    std::string quoted;
    for (char c : ddl) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    csv += table + ",\"" + quoted + "\"\n";
  }
  testing::WriteFile(folder + "/DDL.csv", csv);
  return folder;
}

TEST(Spider2DdlTest, HostileDdlIsRefusedNamingFileAndLineAndCreatesNoFile) {
  testing::TempDir dir;
  const std::string files = dir.File("out");
  fs::create_directories(files);
  const std::string ok_table = "CREATE TABLE ok (\n  id INTEGER PRIMARY KEY,\n  name TEXT\n)";
  const std::vector<std::pair<std::string, std::string>> hostile = {
      {"attach", "ATTACH '" + files + "/attached.db' AS a"},
      {"vacuum", "VACUUM INTO '" + files + "/vacuumed.db'"},
      {"leak", "CREATE TABLE leak AS SELECT fts3_tokenizer('simple') AS p"},
      {"check", "CREATE TABLE c (a CHECK (fts3_tokenizer('simple') IS NOT NULL))"},
      {"pragma", "PRAGMA writable_schema = 1"},
      {"trigger", "CREATE TRIGGER t AFTER INSERT ON ok BEGIN SELECT 1; END"},
      {"view", "CREATE VIEW v AS SELECT 1"},
      {"vtab", "CREATE VIRTUAL TABLE f USING fts4(body)"},
  };
  for (size_t i = 0; i < hostile.size(); ++i) {
    const std::string folder =
        WriteSchemaFolder(dir, "db" + std::to_string(i), {{"ok", ok_table}, hostile[i]});
    auto db = SqlDatabase::OpenSchema(folder);
    ASSERT_FALSE(db.ok()) << hostile[i].second;
    EXPECT_EQ(db.status().code(), StatusCode::kInvalidArgument);
    // The first record spans lines 2-5; the hostile one starts on line 6.
    const std::string where = folder + "/DDL.csv:6: table \"" + hostile[i].first + "\": refused: ";
    EXPECT_EQ(db.status().message().rfind(where, 0), 0u) << db.status().ToString();
  }
  EXPECT_TRUE(DirListing(files).empty()) << "a DDL statement created a file";
}

TEST(Spider2DdlTest, OrdinaryDdlStillLoads) {
  testing::TempDir dir;
  const std::string folder = WriteSchemaFolder(
      dir, "shop",
      {{"customers",
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT CHECK (length(name) > 0))"},
       {"orders",
        "CREATE TABLE orders (id INTEGER PRIMARY KEY AUTOINCREMENT, customer_id INTEGER "
        "REFERENCES customers(id), total REAL DEFAULT (round(0.0, 2)))"},
       {"orders_idx", "CREATE INDEX orders_customer ON orders(customer_id)"},
       {"pandas", "CREATE TABLE pandas (\n  index INTEGER,\n  qty_sold(kg) REAL\n)"}});
  auto d = LoadSpider2Database(folder);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->tables[1].ddl_line, 3u);
  auto g = SchemaFromSpider2(*d);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_GE(g->FindColumn("orders", "customer_id"), 0);
  EXPECT_GE(g->FindColumn("pandas", "qty_sold(kg)"), 0);
  ASSERT_FALSE(g->foreign_keys.empty());
  EXPECT_EQ(static_cast<int64_t>(g->foreign_keys[0].from), g->FindColumn("orders", "customer_id"));
  EXPECT_FALSE(g->foreign_keys[0].inferred);
}

TEST(SqlFromDdlTest, TablesAndIndexesOnlyRefusesEverythingElse) {
  ReadOnlyDatabase::DdlOptions options;
  options.skip_bad = true;
  options.tables_and_indexes_only = true;
  std::vector<Status> statuses;
  auto db = ReadOnlyDatabase::FromDdl(
      {"CREATE TABLE a (x)", "CREATE INDEX ax ON a(x)", "INSERT INTO a VALUES (1)",
       "CREATE VIEW v AS SELECT x FROM a", "CREATE TABLE b AS SELECT 1 AS y", "SELECT 1"},
      options, &statuses);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_EQ(statuses.size(), 6u);
  EXPECT_TRUE(statuses[0].ok());
  EXPECT_TRUE(statuses[1].ok());
  for (size_t i = 2; i < statuses.size(); ++i) {
    EXPECT_TRUE(IsSqlRefusal(statuses[i])) << i << ": " << statuses[i].ToString();
  }
  EXPECT_EQ(Scalar(**db, "SELECT count(*) FROM sqlite_schema"), "2");
}

// --- 13: untrusted database files and result sizes ----------------------------

TEST_F(SqlHardeningTest, EveryConnectionIsHardened) {
  std::vector<std::unique_ptr<ReadOnlyDatabase>> dbs;
  dbs.push_back(std::move(db_));
  auto ddl = ReadOnlyDatabase::FromDdl({"CREATE TABLE t (a)"});
  ASSERT_TRUE(ddl.ok()) << ddl.status().ToString();
  dbs.push_back(std::move(ddl).value());
  for (auto& db : dbs) {
    sqlite3* h = db->handle();
    int v = -1;
    sqlite3_db_config(h, SQLITE_DBCONFIG_DEFENSIVE, -1, &v);
    EXPECT_EQ(v, 1) << db->path();
    sqlite3_db_config(h, SQLITE_DBCONFIG_TRUSTED_SCHEMA, -1, &v);
    EXPECT_EQ(v, 0) << db->path();
    sqlite3_db_config(h, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, -1, &v);
    EXPECT_EQ(v, 0) << db->path();
    sqlite3_db_config(h, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, -1, &v);
    EXPECT_EQ(v, 0) << db->path();
    EXPECT_EQ(sqlite3_limit(h, SQLITE_LIMIT_ATTACHED, -1), 0);
    EXPECT_EQ(sqlite3_limit(h, SQLITE_LIMIT_LENGTH, -1), 64 << 20);
    EXPECT_EQ(sqlite3_limit(h, SQLITE_LIMIT_SQL_LENGTH, -1), 1 << 20);
    EXPECT_TRUE(sqlite3_db_readonly(h, "main") == 1 || db->path() == ":memory:");
  }
}

TEST_F(SqlHardeningTest, ResultBytesAreBounded) {
  // 100 values of 60 MB each: refused at the second, not std::bad_alloc.
  const auto start = Clock::now();
  auto big = db_->Execute(
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100) "
      "SELECT zeroblob(60000000) FROM c",
      Limits());
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(big.status().message().find("limits.max_result_bytes) after 1 rows"), std::string::npos)
      << big.status().ToString();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 10.0);

  SqlLimits small = Limits();
  small.max_result_bytes = 40;  // (8 + 3) + (8 + 2) = 21 bytes for two rows, 32 for three
  auto two = db_->Execute("SELECT name FROM people WHERE id <= 2", small);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(two->rows.size(), 2u);
  small.max_result_bytes = 30;
  auto three = db_->Execute("SELECT name FROM people", small);
  ASSERT_FALSE(three.ok());
  EXPECT_NE(three.status().message().find("after 2 rows"), std::string::npos)
      << three.status().ToString();
}

TEST_F(SqlHardeningTest, FunctionsOutsideTheAllowListAreRefused) {
  for (const char* name :
       {"fts3_tokenizer('simple')", "sqlite_version()", "changes()", "last_insert_rowid()",
        "sqlite_compileoption_get(0)", "load_extension('x')"}) {
    auto r = db_->Execute(std::string("SELECT ") + name, Limits());
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_TRUE(IsSqlRefusal(r.status())) << name << ": " << r.status().ToString();
    EXPECT_NE(r.status().message().find("is not allowed"), std::string::npos);
  }
  EXPECT_EQ(db_->Execute("SELECT fts3_tokenizer('simple')", Limits()).status().message(),
            "refused: function fts3_tokenizer() is not allowed");
  // What queries use is allowed: aggregates, windows, dates, math, JSON.
  EXPECT_EQ(
      Scalar(*db_, "SELECT group_concat(name, ',') FROM (SELECT name FROM people ORDER BY id)"),
      "Ada,Bo,Cy");
  EXPECT_EQ(
      Scalar(*db_, "SELECT max(r) FROM (SELECT row_number() OVER (ORDER BY id) AS r FROM people)"),
      "3");
  EXPECT_EQ(Scalar(*db_, "SELECT strftime('%Y', date('2024-02-29', '+1 day'))"), "2024");
  EXPECT_EQ(Scalar(*db_, "SELECT round(sqrt(16) + pow(2, 3), 1)"), "12");
  EXPECT_EQ(Scalar(*db_, "SELECT '{\"a\": [1, 2]}' ->> '$.a[1]'"), "2");
  EXPECT_EQ(Scalar(*db_, "SELECT iif(upper(substr('xy', 1, 1)) LIKE 'X', 'yes', 'no')"), "yes");
  // A view of the user's file cannot call what a query may not.
  RunSql(dir_.File("views.sqlite"), "CREATE VIEW leak AS SELECT sqlite_version() AS v;");
  auto views = ReadOnlyDatabase::Open(dir_.File("views.sqlite"));
  ASSERT_TRUE(views.ok()) << views.status().ToString();
  EXPECT_TRUE(IsSqlRefusal((*views)->Execute("SELECT v FROM leak", Limits()).status()));
}

TEST(SqlIntrospectionTest, VirtualTablesAreListedButNotCountedOrSampled) {
  testing::TempDir dir;
  const std::string path = dir.File("fts.sqlite");
  RunSql(path,
         "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);"
         "INSERT INTO notes VALUES (1, 'alpha'), (2, 'beta');"
         "CREATE VIRTUAL TABLE notes_fts USING fts4(body);"
         "INSERT INTO notes_fts VALUES ('alpha'), ('gamma');");
  const std::string before = testing::ReadFile(path);
  auto g = SchemaFromSqlite(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const int64_t notes = g->FindTable("notes"), fts = g->FindTable("notes_fts");
  ASSERT_GE(notes, 0);
  ASSERT_GE(fts, 0);
  EXPECT_EQ(g->tables[notes].rows, 2);
  EXPECT_FALSE(g->tables[notes].virtual_table);
  EXPECT_TRUE(g->tables[fts].virtual_table);
  EXPECT_EQ(g->tables[fts].rows, -1);
  const int64_t body = g->FindColumn("notes_fts", "body");
  ASSERT_GE(body, 0);
  EXPECT_TRUE(g->columns[body].samples.empty());
  EXPECT_FALSE(g->columns[g->FindColumn("notes", "body")].samples.empty());
  EXPECT_TRUE(testing::ReadFile(path) == before) << "introspection changed the user's file";
}

// Issue 21 (13): introspection reads an untrusted file's generated columns
// too. Their expressions (deterministic functions only, by SQLite's rule)
// run under the same limits as queries: a huge printf width or zeroblob is
// refused, so sampling them neither hangs, crashes, allocates gigabytes nor
// changes the file; the table is still listed with its ordinary columns
// sampled.
TEST(SqlIntrospectionTest, GeneratedColumnsRunUnderTheQueryPolicy) {
  testing::TempDir dir;
  const std::string path = dir.File("gen.sqlite");
  // Added after the rows (ALTER TABLE evaluates nothing), as a crafted file
  // would hold them.
  RunSql(path,
         "CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, name TEXT);"
         "INSERT INTO t VALUES (1, 2000000000, 'Ada'), (2, 3, 'Bo');"
         "ALTER TABLE t ADD COLUMN wide TEXT GENERATED ALWAYS AS (printf('%.*c', n, 'x')) VIRTUAL;"
         "ALTER TABLE t ADD COLUMN big BLOB GENERATED ALWAYS AS (zeroblob(n)) VIRTUAL;");
  const std::string before = testing::ReadFile(path);
  auto g = SchemaFromSqlite(path);
  if (g.ok()) {
    const int64_t t = g->FindTable("t");
    ASSERT_GE(t, 0);
    const int64_t name = g->FindColumn("t", "name");
    ASSERT_GE(name, 0);
    EXPECT_FALSE(g->columns[name].samples.empty());
    for (const char* col : {"wide", "big"}) {
      const int64_t c = g->FindColumn("t", col);
      ASSERT_GE(c, 0) << col;
      for (const std::string& v : g->columns[c].samples) {
        EXPECT_LT(v.size(), 1000u) << col;  // no 2 GB sample
      }
    }
  } else {
    EXPECT_NE(g.status().message().find("gen.sqlite"), std::string::npos) << g.status().ToString();
  }
  EXPECT_TRUE(testing::ReadFile(path) == before) << "introspection changed the user's file";
  // Queries over them are refused or bounded the same way.
  auto db = SqlDatabase::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  for (const char* sql : {"SELECT length(wide) FROM t", "SELECT big FROM t"}) {
    auto r = (*db)->Execute(sql);
    EXPECT_FALSE(r.ok()) << sql;
  }
  auto ok = (*db)->Execute("SELECT name FROM t ORDER BY id");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->rows.size(), 2u);
}

// --- 14: read-only introspection pragmas --------------------------------------

TEST_F(SqlHardeningTest, IntrospectionPragmasAreAllowedAndOthersRefused) {
  auto info = db_->Execute("PRAGMA table_info(people)", Limits());
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  ASSERT_EQ(info->rows.size(), 3u);
  EXPECT_EQ(SqlValueText(info->rows[1][1]), "name");
  for (const char* sql :
       {"PRAGMA table_xinfo(people)", "PRAGMA index_list(people)", "PRAGMA index_info(people_name)",
        "PRAGMA foreign_key_list(people)", "pragma main.TABLE_INFO('cities')",
        "SELECT name FROM pragma_table_info('cities')"}) {
    auto r = db_->Execute(sql, Limits());
    ASSERT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    EXPECT_FALSE(r->rows.empty()) << sql;
  }
  for (const char* sql : {"PRAGMA user_version", "PRAGMA integrity_check", "PRAGMA journal_mode",
                          "PRAGMA journal_mode = delete", "PRAGMA query_only = 0",
                          "PRAGMA table_list", "SELECT * FROM pragma_index_xinfo('people_name')"}) {
    auto r = db_->Execute(sql, Limits());
    ASSERT_FALSE(r.ok()) << sql;
    EXPECT_TRUE(IsSqlRefusal(r.status())) << sql << ": " << r.status().ToString();
  }
}

TEST_F(SqlHardeningTest, UserFileIsByteIdenticalAfterIntrospectionAndQueries) {
  db_.reset();
  const std::string before = testing::ReadFile(path_);
  const auto listing = DirListing(dir_.path());
  {
    auto g = SchemaFromSqlite(path_);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    auto db = SqlDatabase::Open(path_);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_TRUE((*db)->Execute("PRAGMA table_info(people)").ok());
    EXPECT_FALSE((*db)->Execute("PRAGMA journal_mode = wal").ok());
    EXPECT_FALSE((*db)->Execute("SELECT length(printf('%.*c', 2000000000, 'x'))").ok());
  }
  EXPECT_TRUE(testing::ReadFile(path_) == before) << "the user's file changed";
  EXPECT_EQ(DirListing(dir_.path()), listing);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
