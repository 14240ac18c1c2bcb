// Where tests put a store on each backend: a file in a temporary directory
// (SQLite), or a workspace of its own on the PostgreSQL test server named by
// FLOWRAG_TEST_POSTGRES (scripts/test.sh starts one; start your own with
//   scripts/pg_test_server.sh start /tmp/pgt
//   export FLOWRAG_TEST_POSTGRES=$(scripts/pg_test_server.sh url /tmp/pgt)
// ). Tests on PostgreSQL skip with that hint when the variable is unset.
#ifndef FLOWRAG_TESTS_BACKEND_UTIL_H_
#define FLOWRAG_TESTS_BACKEND_UTIL_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

#include "sqldb/connection.h"
#include "test_util.h"

namespace flowrag {

enum class Backend { kSqlite, kPostgres };

inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
}

inline std::string PostgresTestUrl() {
  const char* url = std::getenv("FLOWRAG_TEST_POSTGRES");
  return url != nullptr ? url : "";
}

inline constexpr char kNoPostgresHint[] =
    "FLOWRAG_TEST_POSTGRES is unset: run `scripts/pg_test_server.sh start DIR` and export the "
    "URL it prints to test the PostgreSQL backend";

// `url` with `param` added to its query.
inline std::string WithParam(const std::string& url, const std::string& param) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + param;
}

// A workspace name unique to this test and process: t<pid><suffix>_<test>.
inline std::string TestWorkspace(const std::string& suffix = "") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = "t" + std::to_string(getpid()) + suffix + "_" + info->name();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return name.substr(0, 63);
}

// PostgreSQL workspaces a test made, dropped when it goes out of scope.
class TestWorkspaces {
 public:
  explicit TestWorkspaces(std::string base_url) : base_url_(std::move(base_url)) {}
  TestWorkspaces(const TestWorkspaces&) = delete;
  TestWorkspaces& operator=(const TestWorkspaces&) = delete;
  ~TestWorkspaces() {
    if (names_.empty()) return;
    auto admin = OpenSqlConnection(base_url_, {});
    EXPECT_TRUE(admin.ok()) << admin.status().ToString();
    if (!admin.ok()) return;
    for (const std::string& ws : names_) {
      EXPECT_TRUE((*admin)->Exec("DROP SCHEMA IF EXISTS \"" + ws + "\" CASCADE").ok());
    }
  }
  // The URL of a new workspace of this test.
  std::string New() {
    names_.push_back(TestWorkspace(std::to_string(names_.size())));
    return WithParam(base_url_, "workspace=" + names_.back());
  }
  const std::string& base_url() const { return base_url_; }

 private:
  std::string base_url_;
  std::vector<std::string> names_;
};

// A test run once per backend (INSTANTIATE_TEST_SUITE_P with
// ::testing::Values(Backend::kSqlite, Backend::kPostgres), BackendName):
// skipped on PostgreSQL when no test server is named; NewLocation() gives a
// new, empty store location of the backend each time.
class BackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kPostgres && PostgresTestUrl().empty()) {
      GTEST_SKIP() << kNoPostgresHint;
    }
  }
  std::string NewLocation() {
    if (GetParam() == Backend::kSqlite) return dir_.File("s" + std::to_string(files_++) + ".db");
    return workspaces_.New();
  }

  testing::TempDir dir_;
  int files_ = 0;
  TestWorkspaces workspaces_{PostgresTestUrl()};
};

}  // namespace flowrag

#endif  // FLOWRAG_TESTS_BACKEND_UTIL_H_
