// The `flowrag` commands on a PostgreSQL store, as a user runs them: the
// real binary with a `postgresql://` URL (its own workspace on the test
// server; skipped without FLOWRAG_TEST_POSTGRES, see backend_util.h) for
// index, stats, query, ask, delete, eval and serve. A password in the URL
// never reaches the output.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "backend_util.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

const std::string kFlowrag = std::string(FLOWRAG_BINARY_DIR) + "/tools/flowrag";
const std::string kDemo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";

// Quotes `s` for /bin/sh.
std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `flowrag args...`; its stdout and stderr, and the exit code.
std::pair<std::string, int> RunFlowrag(const std::vector<std::string>& args) {
  std::string cmd = Quote(kFlowrag);
  for (const std::string& a : args) cmd += " " + Quote(a);
  cmd += " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return {"popen failed", -1};
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

// `url` with a password added to its user (`flowrag@` -> `flowrag:s3cret@`);
// the test server trusts local connections, so it is accepted and ignored.
std::string WithPassword(const std::string& url) {
  std::string u = url;
  const size_t at = u.find('@');
  if (at != std::string::npos) u.insert(at, ":s3cret-pw");
  return u;
}

class CliPostgresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (PostgresTestUrl().empty()) GTEST_SKIP() << kNoPostgresHint;
  }
  TestWorkspaces workspaces_{PostgresTestUrl()};
};

TEST_F(CliPostgresTest, EveryCommandWorksOnAPostgresStoreAndHidesThePassword) {
  const std::string db = WithPassword(workspaces_.New());
  auto [indexed, rc] = RunFlowrag({"index", kDemo, "--db", db, "--workers", "2"});
  ASSERT_EQ(rc, 0) << indexed;
  EXPECT_NE(indexed.find("36 added"), std::string::npos) << indexed;

  auto [stats, stats_rc] = RunFlowrag({"stats", "--db", db});
  ASSERT_EQ(stats_rc, 0) << stats;
  EXPECT_NE(stats.find("documents        36"), std::string::npos) << stats;
  EXPECT_NE(stats.find("***"), std::string::npos) << stats;

  auto [query, query_rc] =
      RunFlowrag({"query", "--db", db, "--method", "bm25", "River Ostrel length"});
  ASSERT_EQ(query_rc, 0) << query;
  EXPECT_NE(query.find("places/river_ostrel.md"), std::string::npos) << query;

  auto [ask, ask_rc] = RunFlowrag({"ask", "--db", db, "How long is the River Ostrel?"});
  ASSERT_EQ(ask_rc, 0) << ask;
  EXPECT_NE(ask.find("212 km"), std::string::npos) << ask;

  auto [deleted, delete_rc] = RunFlowrag({"delete", "--db", db, "places/river_ostrel.md"});
  ASSERT_EQ(delete_rc, 0) << deleted;
  auto [after, after_rc] = RunFlowrag({"stats", "--db", db});
  EXPECT_NE(after.find("documents        35"), std::string::npos) << after;
  auto [missing, missing_rc] = RunFlowrag({"delete", "--db", db, "places/river_ostrel.md"});
  EXPECT_NE(missing_rc, 0);
  EXPECT_NE(missing.find("no document"), std::string::npos) << missing;

  for (const std::string& out : {indexed, stats, query, ask, deleted, after, missing}) {
    EXPECT_EQ(out.find("s3cret-pw"), std::string::npos) << out;
  }
}

TEST_F(CliPostgresTest, EvalRunsOnAPostgresStore) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("bench/corpus.jsonl"),
                     "{\"id\":\"a\",\"title\":\"Ostrel\",\"text\":\"The River Ostrel is 212 km "
                     "long.\"}\n{\"id\":\"b\",\"title\":\"Wrenfield\",\"text\":\"Wrenfield is a "
                     "town.\"}\n");
  testing::WriteFile(
      dir.File("bench/questions.jsonl"),
      "{\"id\":\"q1\",\"question\":\"How long is the River Ostrel?\","
      "\"answers\":[\"212 km\"],\"gold_ids\":[\"a\"],\"gold_titles\":[\"Ostrel\"]}\n");
  auto [out, rc] = RunFlowrag({"eval", "--bench", dir.File("bench"), "--db", workspaces_.New(),
                               "--method", "bm25", "--k", "1"});
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("R@1=100.0"), std::string::npos) << out;
}

TEST_F(CliPostgresTest, ServeAnswersFromAPostgresStore) {
  const std::string db = WithPassword(workspaces_.New());
  ASSERT_EQ(RunFlowrag({"index", kDemo, "--db", db}).second, 0);
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 2);
    close(out[0]);
    execl(kFlowrag.c_str(), "flowrag", "serve", "--db", db.c_str(), "--port", "0", nullptr);
    _exit(127);
  }
  close(out[1]);
  std::string log;
  const int port = testing::ReadServedPort(out[0], &log);
  ASSERT_GT(port, 0) << log;
  httplib::Client client("127.0.0.1", port);
  auto res = client.Post("/v1/query", R"({"question":"River Ostrel length","method":"bm25"})",
                         "application/json");
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  char buf[512];
  while (true) {  // the rest of the log
    const ssize_t n = read(out[0], buf, sizeof(buf));
    if (n <= 0) break;
    log.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  ASSERT_TRUE(res) << log;
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_NE(res->body.find("places/river_ostrel.md"), std::string::npos) << res->body;
  EXPECT_EQ(log.find("s3cret-pw"), std::string::npos) << log;
  EXPECT_NE(log.find("***"), std::string::npos) << log;
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
