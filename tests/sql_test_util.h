// Helpers for the SQL tests: real SQLite files written with a plain
// connection, and a fixture that opens one through ReadOnlyDatabase.
#ifndef FLOWRAG_TESTS_SQL_TEST_UTIL_H_
#define FLOWRAG_TESTS_SQL_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sql/safe_exec.h"
#include "test_util.h"

namespace flowrag {

// Runs `sql` on the SQLite file `path` (created if missing) with a plain
// read-write connection; a failure is a fatal test failure.
inline void RunSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK) << path;
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string message = err != nullptr ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

// Limits for a test statement.
inline SqlLimits Limits(double seconds = 10.0, size_t max_rows = 1000) {
  SqlLimits l;
  l.time_limit_seconds = seconds;
  l.max_rows = max_rows;
  return l;
}

// The sorted file names in `dir`.
inline std::vector<std::string> DirListing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A temp dir with one SQLite file, opened with ReadOnlyDatabase::Open.
class SqliteFileTest : public ::testing::Test {
 protected:
  // Writes `sql` into dir_/name and opens it as db_.
  void MakeDatabase(const std::string& name, const std::string& sql) {
    path_ = dir_.File(name);
    ASSERT_NO_FATAL_FAILURE(RunSql(path_, sql));
    auto db = ReadOnlyDatabase::Open(path_);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
  }

  testing::TempDir dir_;
  std::string path_;
  std::unique_ptr<ReadOnlyDatabase> db_;
};

}  // namespace flowrag

#endif  // FLOWRAG_TESTS_SQL_TEST_UTIL_H_
