// The SQL agent (flowrag/sql.h Ask, sql/sql_writer.h, sql/link_llm.cc)
// against real SQLite files and a stub OpenAI chat server on loopback: the
// SQL is taken out of the model's answer as documented, the linked schema and
// the question reach the model, failed executions go back to it as a repair
// turn, writes are refused (and the file stays byte-identical) whatever the
// model answers, runaway statements stop at the time limit, Ask needs a chat
// model while Link does not, and the Prompt 5 planner's answer is validated
// against the schema (closed world) with the offline plan as fallback.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "flowrag/sql.h"
#include "sql/sql_eval.h"
#include "sql/sql_writer.h"
#include "stub_server.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// ---------------------------------------------------------------------------
// ExtractSql

TEST(ExtractSqlTest, SqlFencedBlock) {
  EXPECT_EQ(ExtractSql("```sql\nSELECT count(*) FROM singer;\n```"), "SELECT count(*) FROM singer");
  EXPECT_EQ(ExtractSql("```SQL\nSELECT 1\n```"), "SELECT 1");
  EXPECT_EQ(ExtractSql("```sqlite\r\nSELECT 2;\r\n```"), "SELECT 2");
  // Multi-line statements keep their inner line breaks.
  EXPECT_EQ(ExtractSql("```sql\nSELECT Name\nFROM singer\nWHERE Age > 30;\n```"),
            "SELECT Name\nFROM singer\nWHERE Age > 30");
}

TEST(ExtractSqlTest, BareFencedBlock) {
  EXPECT_EQ(ExtractSql("```\n  SELECT Name FROM singer  \n```"), "SELECT Name FROM singer");
  // An unclosed fence runs to the end of the answer.
  EXPECT_EQ(ExtractSql("```sql\nSELECT 3;\n"), "SELECT 3");
}

TEST(ExtractSqlTest, PlainTextWithTrailingSemicolons) {
  EXPECT_EQ(ExtractSql("SELECT Name FROM singer;"), "SELECT Name FROM singer");
  EXPECT_EQ(ExtractSql("  \n SELECT 1 ;; \n"), "SELECT 1");
  // A semicolon inside a literal is not trailing.
  EXPECT_EQ(ExtractSql("SELECT ';'"), "SELECT ';'");
}

TEST(ExtractSqlTest, ProseAroundAFence) {
  EXPECT_EQ(ExtractSql("Here is the query you need:\n```sql\nSELECT Name FROM singer "
                       "WHERE Country = 'France';\n```\nIt lists the French singers."),
            "SELECT Name FROM singer WHERE Country = 'France'");
  // A block in another language is skipped for the SQL block after it.
  EXPECT_EQ(ExtractSql("First:\n```python\nprint('x')\n```\nThen:\n```sql\nSELECT 4;\n```"),
            "SELECT 4");
}

TEST(ExtractSqlTest, NoSqlIsEmpty) {
  EXPECT_EQ(ExtractSql(""), "");
  EXPECT_EQ(ExtractSql(" \n\t "), "");
  EXPECT_EQ(ExtractSql(";"), "");
  EXPECT_EQ(ExtractSql("```sql\n```"), "");
  EXPECT_EQ(ExtractSql("```sql\n;\n```"), "");
  // Documented: without a fence the whole answer is taken as the SQL, so
  // prose is returned as is (and fails at execution, which the repair loop
  // reports back to the model).
  EXPECT_EQ(ExtractSql("I cannot answer that."), "I cannot answer that.");
}

// ---------------------------------------------------------------------------
// The database and the stub

// concert_singer, cut down from Spider: 4 tables, declared foreign keys.
constexpr char kConcertSinger[] = R"sql(
CREATE TABLE stadium (Stadium_ID INTEGER PRIMARY KEY, Location TEXT, Name TEXT, Capacity INTEGER);
CREATE TABLE singer (Singer_ID INTEGER PRIMARY KEY, Name TEXT, Country TEXT, Age INTEGER);
CREATE TABLE concert (concert_ID INTEGER PRIMARY KEY, concert_Name TEXT, Theme TEXT,
                      Stadium_ID INTEGER REFERENCES stadium(Stadium_ID), Year TEXT);
CREATE TABLE singer_in_concert (concert_ID INTEGER REFERENCES concert(concert_ID),
                                Singer_ID INTEGER REFERENCES singer(Singer_ID),
                                PRIMARY KEY (concert_ID, Singer_ID));
INSERT INTO stadium VALUES (1, 'Raith Rovers', 'Stark''s Park', 10104),
                           (2, 'Ayr United', 'Somerset Park', 11998);
INSERT INTO singer VALUES (1, 'Joe Sharp', 'Netherlands', 52), (2, 'Timbaland', 'United States', 32),
                          (3, 'Justin Brown', 'France', 29), (4, 'Rose White', 'France', 41),
                          (5, 'John Nizinik', 'France', 43), (6, 'Tribal King', 'France', 25);
INSERT INTO concert VALUES (1, 'Auditions', 'Free choice', 1, '2014'),
                           (2, 'Super bootcamp', 'Free choice 2', 2, '2014'),
                           (3, 'Home Visits', 'Bleeding Love', 2, '2015');
INSERT INTO singer_in_concert VALUES (1, 2), (1, 3), (1, 5), (2, 3), (2, 6), (3, 5), (3, 4);
)sql";

constexpr char kFrenchCount[] = "SELECT count(*) FROM singer WHERE Country = 'France'";
constexpr char kFrenchNames[] = "SELECT Name FROM singer WHERE Country = 'France' ORDER BY Name";
constexpr char kRunaway[] =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

// The planner answer of the brief: every node real except "nosuch.col".
constexpr char kPlannerJson[] = R"({"subqueries": [{"subquery": "years of the concerts of a singer",
  "source_nodes": ["singer.Name"], "target_nodes": ["concert.Year"],
  "path": "singer.Name -> singer_in_concert.Singer_ID -> concert.Year",
  "candidates": [["singer.Name", "concert.Year", 0.9], ["nosuch.col", "concert.Year", 0.5]]}]})";

void CreateDatabase(const std::string& path) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK) << path;
  char* err = nullptr;
  const int rc = sqlite3_exec(db, kConcertSinger, nullptr, nullptr, &err);
  const std::string message = err != nullptr ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

std::vector<std::string> DirListing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

bool IsPlanner(const Json& body) {
  return body.is_object() && body["messages"].size() == 1 &&
         Contains(body["messages"][0].value("content", ""), "You plan text-to-SQL queries");
}
bool IsSqlWriter(const Json& body) {
  return body.is_object() && !body["messages"].empty() &&
         body["messages"][0].value("role", "") == "system" &&
         Contains(body["messages"][0].value("content", ""), "You write SQLite queries");
}

// Names of the table lines ("name(...)") of a schema prompt.
std::set<std::string> PromptTables(const std::string& prompt) {
  std::set<std::string> out;
  size_t begin = 0;
  while (begin < prompt.size()) {
    size_t end = prompt.find('\n', begin);
    if (end == std::string::npos) end = prompt.size();
    const std::string line = prompt.substr(begin, end - begin);
    const size_t paren = line.find('(');
    if (paren != std::string::npos && paren > 0 && line.back() == ')' &&
        line.find_first_of(" :") > paren) {
      out.insert(line.substr(0, paren));
    }
    begin = end + 1;
  }
  return out;
}

std::set<std::string> Names(const std::vector<LinkedItem>& items) {
  std::set<std::string> out;
  for (const LinkedItem& i : items) out.insert(i.name);
  return out;
}

// Answers planner requests with `planner` and SQL requests with the next of
// `sql` (the last one repeats). Anything else is an HTTP 500.
class ScriptedModel {
 public:
  void Script(std::string planner, std::vector<std::string> sql) {
    std::lock_guard<std::mutex> lock(mu_);
    planner_ = std::move(planner);
    sql_ = std::move(sql);
    next_sql_ = 0;
  }
  void Serve(const Json& body, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu_);
    if (IsPlanner(body)) {
      res.set_content(testing::ChatCompletionJson(planner_).dump(), "application/json");
    } else if (IsSqlWriter(body) && !sql_.empty()) {
      const std::string& answer = sql_[std::min(next_sql_++, sql_.size() - 1)];
      res.set_content(testing::ChatCompletionJson(answer).dump(), "application/json");
    } else {
      res.status = 500;
      res.set_content(R"({"error": {"message": "unexpected request"}})", "application/json");
    }
  }

 private:
  std::mutex mu_;
  std::string planner_;
  std::vector<std::string> sql_;
  size_t next_sql_ = 0;
};

class SqlAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(stub_.ok());
    stub_.SetHandler([this](const Json& body, httplib::Response& res, int) { model_.Serve(body, res); });
    path_ = dir_.File("concert_singer.sqlite");
    CreateDatabase(path_);
    before_ = testing::ReadFile(path_);
    ASSERT_GT(before_.size(), 0u);
    mtime_ = fs::last_write_time(path_);
    listing_ = DirListing(dir_.path());
  }

  // Opens the database with the chat model pointed at the stub (or not).
  void Open(bool with_model = true) {
    if (with_model) env_.Point(stub_.BaseUrl());
    auto db = SqlDatabase::Open(path_);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
  }

  std::vector<Json> SqlRequests() {
    std::vector<Json> out;
    for (const auto& r : stub_.requests()) {
      if (IsSqlWriter(r.body)) out.push_back(r.body);
    }
    return out;
  }
  size_t PlannerRequests() {
    size_t n = 0;
    for (const auto& r : stub_.requests()) n += IsPlanner(r.body) ? 1 : 0;
    return n;
  }

  // The file has not changed (content, mtime, no side files).
  void ExpectFileUnchanged() {
    EXPECT_TRUE(testing::ReadFile(path_) == before_) << "the database file changed";
    EXPECT_EQ(fs::last_write_time(path_), mtime_);
    EXPECT_EQ(DirListing(dir_.path()), listing_);
  }

  static SqlAskOptions Offline() {  // no planner call
    SqlAskOptions o;
    o.link.llm = false;
    return o;
  }

  testing::ChatModelEnv env_;  // cleared first and last
  testing::TempDir dir_;
  ScriptedModel model_;
  testing::RecordingJsonStub stub_{"/v1/chat/completions",
                                   [](const Json&) { return Json{{"error", "no handler"}}; }};
  std::string path_, before_;
  fs::file_time_type mtime_;
  std::vector<std::string> listing_;
  std::unique_ptr<SqlDatabase> db_;
};

// ---------------------------------------------------------------------------
// End to end

TEST_F(SqlAgentTest, AskRunsTheModelsSqlWithThePlanner) {
  model_.Script(kPlannerJson, {"Sure:\n```sql\n" + std::string(kFrenchCount) + ";\n```"});
  Open();
  const std::string question = "How many singers are from France?";
  auto a = db_->Ask(question);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->question, question);
  EXPECT_EQ(a->sql, kFrenchCount);
  ASSERT_TRUE(a->executed);
  ASSERT_EQ(a->attempts.size(), 1u);
  EXPECT_EQ(a->attempts[0].sql, kFrenchCount);
  EXPECT_EQ(a->attempts[0].error, "");
  // The rows are those of the same SQL run directly.
  auto direct = db_->Execute(kFrenchCount);
  ASSERT_TRUE(direct.ok()) << direct.status().ToString();
  EXPECT_EQ(a->result.columns, direct->columns);
  EXPECT_EQ(a->result.rows, direct->rows);
  ASSERT_EQ(a->result.rows.size(), 1u);
  EXPECT_EQ(SqlValueText(a->result.rows[0][0]), "4");
  // One planner call and one SQL call, both counted.
  EXPECT_EQ(PlannerRequests(), 1u);
  const std::vector<Json> sql_requests = SqlRequests();
  ASSERT_EQ(sql_requests.size(), 1u);
  EXPECT_EQ(stub_.requests().size(), 2u);
  EXPECT_EQ(a->link.llm_calls, 1u);
  EXPECT_EQ(a->llm_calls, 2u);
  EXPECT_EQ(a->link.method, "qafd");
  // The planner's nodes were linked.
  const std::set<std::string> tables = Names(a->link.tables);
  EXPECT_TRUE(tables.count("singer") && tables.count("concert") && tables.count("singer_in_concert"))
      << ::testing::PrintToString(tables);
  // The SQL request: the linked schema (exactly the linked tables) and the question.
  ASSERT_EQ(sql_requests[0]["messages"].size(), 2u);
  const std::string user = sql_requests[0]["messages"][1]["content"];
  EXPECT_EQ(sql_requests[0]["messages"][1]["role"], "user");
  EXPECT_EQ(PromptTables(user), tables) << user;
  EXPECT_TRUE(Contains(user, "Question: " + question)) << user;
  EXPECT_TRUE(Contains(user, "Country")) << user;  // full tables: every column of singer
  EXPECT_TRUE(Contains(user, "singer_in_concert.Singer_ID = singer.Singer_ID") ||
              Contains(user, "singer.Singer_ID = singer_in_concert.Singer_ID"))
      << "join path missing:\n" << user;
  ExpectFileUnchanged();
}

TEST_F(SqlAgentTest, AskWithoutPlannerMakesOneCall) {
  model_.Script(kPlannerJson, {kFrenchNames});
  Open();
  SqlAskOptions o = Offline();
  o.evidence = "French means Country = 'France'.";
  auto a = db_->Ask("Which singers are from France?", o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(a->executed);
  ASSERT_EQ(a->attempts.size(), 1u);
  EXPECT_EQ(PlannerRequests(), 0u);
  EXPECT_EQ(stub_.requests().size(), 1u);
  EXPECT_EQ(a->link.llm_calls, 0u);
  EXPECT_EQ(a->llm_calls, 1u);
  auto direct = db_->Execute(kFrenchNames);
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(a->result.rows, direct->rows);
  ASSERT_EQ(a->result.rows.size(), 4u);
  EXPECT_EQ(SqlValueText(a->result.rows[0][0]), "John Nizinik");
  const std::vector<Json> sql_requests = SqlRequests();
  ASSERT_EQ(sql_requests.size(), 1u);
  const std::string user = sql_requests[0]["messages"][1]["content"];
  EXPECT_TRUE(PromptTables(user).count("singer")) << user;
  EXPECT_EQ(PromptTables(user), Names(a->link.tables)) << user;
  EXPECT_TRUE(Contains(user, "External knowledge:\nFrench means Country = 'France'.")) << user;
  EXPECT_TRUE(Contains(user, "Which singers are from France?")) << user;
}

// ---------------------------------------------------------------------------
// Repairs

TEST_F(SqlAgentTest, UnknownColumnIsRepairedWithTheErrorFedBack) {
  const std::string bad = "SELECT Nmae FROM singer WHERE Country = 'France' ORDER BY Nmae";
  const std::string bad_answer = "```sql\n" + bad + "\n```";
  model_.Script(kPlannerJson, {bad_answer, "```sql\n" + std::string(kFrenchNames) + "\n```"});
  Open();
  auto a = db_->Ask("Which singers are from France?", Offline());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->attempts.size(), 2u);
  EXPECT_EQ(a->attempts[0].sql, bad);
  const std::string error = a->attempts[0].error;
  EXPECT_TRUE(Contains(error, "no such column: Nmae")) << error;
  EXPECT_EQ(a->attempts[1].error, "");
  EXPECT_EQ(a->sql, kFrenchNames);
  ASSERT_TRUE(a->executed);
  auto direct = db_->Execute(kFrenchNames);
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(a->result.columns, direct->columns);
  EXPECT_EQ(a->result.rows, direct->rows);
  EXPECT_EQ(a->llm_calls, 2u);
  // The second request is the first conversation plus the model's answer and
  // the feedback turn naming the error.
  const std::vector<Json> requests = SqlRequests();
  ASSERT_EQ(requests.size(), 2u);
  const Json& first = requests[0]["messages"];
  const Json& second = requests[1]["messages"];
  ASSERT_EQ(second.size(), 4u);
  EXPECT_EQ(second[0], first[0]);
  EXPECT_EQ(second[1], first[1]);
  EXPECT_EQ(second[2]["role"], "assistant");
  EXPECT_EQ(second[2]["content"], bad_answer);
  EXPECT_EQ(second[3]["role"], "user");
  EXPECT_TRUE(Contains(second[3]["content"], error)) << second[3];
}

TEST_F(SqlAgentTest, SyntaxErrorAndEmptyAnswerAreRepaired) {
  model_.Script(kPlannerJson, {"SELEC count(*) FROM singer", "", kFrenchCount});
  Open();
  auto a = db_->Ask("How many singers are from France?", Offline());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->attempts.size(), 3u);
  EXPECT_TRUE(Contains(a->attempts[0].error, "syntax error")) << a->attempts[0].error;
  EXPECT_EQ(a->attempts[1].sql, "");
  EXPECT_EQ(a->attempts[1].error, "the answer holds no SQL");
  EXPECT_EQ(a->attempts[2].error, "");
  ASSERT_TRUE(a->executed);
  EXPECT_EQ(SqlValueText(a->result.rows.at(0).at(0)), "4");
  const std::vector<Json> requests = SqlRequests();
  ASSERT_EQ(requests.size(), 3u);
  ASSERT_EQ(requests[2]["messages"].size(), 6u);
  EXPECT_TRUE(Contains(requests[2]["messages"][5]["content"], "the answer holds no SQL"));
}

TEST_F(SqlAgentTest, RepairsStopAtMaxRepairs) {
  model_.Script(kPlannerJson, {"SELECT nosuch FROM singer"});
  Open();
  SqlAskOptions o = Offline();
  o.max_repairs = 0;
  auto a = db_->Ask("How many singers are from France?", o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_FALSE(a->executed);
  EXPECT_EQ(a->attempts.size(), 1u);
  EXPECT_EQ(SqlRequests().size(), 1u);
  EXPECT_EQ(a->sql, "SELECT nosuch FROM singer");
  EXPECT_TRUE(a->result.rows.empty());
}

// ---------------------------------------------------------------------------
// Safety through the agent

TEST_F(SqlAgentTest, WritesAreRefusedThenTheSelectRuns) {
  model_.Script(kPlannerJson, {"```sql\nDROP TABLE singer;\n```", "DELETE FROM singer", kFrenchCount});
  Open();
  SqlAskOptions o = Offline();
  o.max_repairs = 2;
  auto a = db_->Ask("How many singers are from France?", o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->attempts.size(), 3u);
  EXPECT_EQ(a->attempts[0].sql, "DROP TABLE singer");
  EXPECT_EQ(a->attempts[1].sql, "DELETE FROM singer");
  for (int i : {0, 1}) {
    EXPECT_EQ(a->attempts[i].error.rfind("refused: ", 0), 0u) << a->attempts[i].error;
  }
  EXPECT_TRUE(Contains(a->attempts[0].error, "DROP")) << a->attempts[0].error;
  EXPECT_TRUE(Contains(a->attempts[1].error, "DELETE")) << a->attempts[1].error;
  EXPECT_EQ(a->attempts[2].error, "");
  ASSERT_TRUE(a->executed);
  EXPECT_EQ(SqlValueText(a->result.rows.at(0).at(0)), "4");  // nothing was deleted
  // The refusals were fed back.
  const std::vector<Json> requests = SqlRequests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_TRUE(Contains(requests[1]["messages"][3]["content"], a->attempts[0].error));
  EXPECT_TRUE(Contains(requests[2]["messages"][5]["content"], a->attempts[1].error));
  ExpectFileUnchanged();
  db_.reset();
  ExpectFileUnchanged();
}

TEST_F(SqlAgentTest, AModelThatOnlyWritesNeverExecutes) {
  model_.Script(kPlannerJson, {"UPDATE singer SET Country = 'France'"});
  Open();
  for (int repairs : {0, 2}) {
    SqlAskOptions o = Offline();
    o.max_repairs = repairs;
    auto a = db_->Ask("Make every singer French.", o);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_FALSE(a->executed);
    ASSERT_EQ(a->attempts.size(), static_cast<size_t>(1 + repairs));
    for (const SqlAttempt& t : a->attempts) {
      EXPECT_TRUE(Contains(t.error, "refused")) << t.error;
    }
    EXPECT_EQ(a->llm_calls, static_cast<size_t>(1 + repairs));
  }
  EXPECT_EQ(SqlRequests().size(), 4u);
  auto count = db_->Execute(kFrenchCount);
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(SqlValueText(count->rows[0][0]), "4");
  db_.reset();
  ExpectFileUnchanged();
}

TEST_F(SqlAgentTest, RunawayStatementStopsAtTheTimeLimit) {
  model_.Script(kPlannerJson, {kRunaway});
  Open();
  SqlAskOptions o = Offline();
  o.max_repairs = 1;
  o.limits.time_limit_seconds = 0.3;
  const auto start = std::chrono::steady_clock::now();
  auto a = db_->Ask("Count forever.", o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_FALSE(a->executed);
  ASSERT_EQ(a->attempts.size(), 2u);
  for (const SqlAttempt& t : a->attempts) {
    EXPECT_TRUE(Contains(t.error, "time limit")) << t.error;
  }
  EXPECT_LT(seconds, 10.0);  // generous: only that it stops
  const std::vector<Json> requests = SqlRequests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_TRUE(Contains(requests[1]["messages"][3]["content"], "time limit"));
  // The connection still answers afterwards.
  auto count = db_->Execute(kFrenchCount);
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  db_.reset();
  ExpectFileUnchanged();
}

TEST_F(SqlAgentTest, ChatFailureOnTheSqlRequestIsAnError) {
  // No SQL script: the SQL request gets an HTTP 500.
  model_.Script(kPlannerJson, {});
  Open();
  auto a = db_->Ask("How many singers are from France?", Offline());
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(SqlRequests().size(), 1u);
}

// ---------------------------------------------------------------------------
// Without a chat model

TEST_F(SqlAgentTest, AskNeedsAChatModelLinkDoesNot) {
  model_.Script(kPlannerJson, {kFrenchCount});
  Open(/*with_model=*/false);
  auto a = db_->Ask("How many singers are from France?");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(a.status().message(), "FLOWRAG_LLM_BASE_URL")) << a.status().ToString();
  auto link = db_->Link("Which singers are from France?", "qafd");  // options.llm defaults to true
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  EXPECT_TRUE(Names(link->tables).count("singer")) << link->schema_text;
  EXPECT_EQ(link->llm_calls, 0u);
  for (const std::string& w : link->warnings) EXPECT_FALSE(Contains(w, "LLM")) << w;
  EXPECT_TRUE(stub_.requests().empty());
  // The model configured after Open is not picked up.
  env_.Point(stub_.BaseUrl());
  EXPECT_EQ(db_->Ask("How many singers are from France?").status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_TRUE(stub_.requests().empty());
}

// ---------------------------------------------------------------------------
// Planner (Prompt 5)

TEST_F(SqlAgentTest, PlannerSeedsAreValidatedAgainstTheSchema) {
  model_.Script(kPlannerJson, {});
  Open();
  const std::string question = "In which years did Joe Sharp sing in a concert?";
  auto link = db_->Link(question, "qafd");
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  EXPECT_EQ(link->llm_calls, 1u);
  ASSERT_EQ(stub_.requests().size(), 1u);
  // The planner request: the question, the whole schema, JSON mode.
  const Json body = stub_.requests()[0].body;
  ASSERT_TRUE(IsPlanner(body));
  const std::string prompt = body["messages"][0]["content"];
  EXPECT_TRUE(Contains(prompt, "Question: " + question)) << prompt;
  EXPECT_EQ(PromptTables(prompt),
            (std::set<std::string>{"stadium", "singer", "concert", "singer_in_concert"}))
      << prompt;
  EXPECT_EQ(body["response_format"]["type"], "json_object");
  // The plan's nodes are linked, with the join table.
  const std::set<std::string> tables = Names(link->tables);
  EXPECT_TRUE(tables.count("singer")) << ::testing::PrintToString(tables);
  EXPECT_TRUE(tables.count("concert")) << ::testing::PrintToString(tables);
  EXPECT_TRUE(tables.count("singer_in_concert")) << ::testing::PrintToString(tables);
  const std::set<std::string> columns = Names(link->columns);
  EXPECT_TRUE(columns.count("singer.Name")) << ::testing::PrintToString(columns);
  EXPECT_TRUE(columns.count("concert.Year")) << ::testing::PrintToString(columns);
  EXPECT_TRUE(columns.count("singer_in_concert.Singer_ID")) << ::testing::PrintToString(columns);
  EXPECT_EQ(link->subqueries, std::vector<std::string>{"years of the concerts of a singer"});
  EXPECT_FALSE(link->joins.empty());
  // One proposed name ("nosuch.col") is not in the schema.
  size_t dropped_warnings = 0;
  for (const std::string& w : link->warnings) {
    EXPECT_FALSE(Contains(w, "LLM seed selection failed")) << w;
    if (Contains(w, "not in the schema")) {
      ++dropped_warnings;
      EXPECT_EQ(w.rfind("1 ", 0), 0u) << w;
    }
  }
  EXPECT_EQ(dropped_warnings, 1u) << ::testing::PrintToString(link->warnings);
  // Nothing of the invented name reaches the link.
  for (const std::string& c : columns) EXPECT_FALSE(Contains(c, "nosuch")) << c;

  // options.llm = false: no planner call.
  SchemaLinkOptions offline;
  offline.llm = false;
  auto off = db_->Link(question, "qafd", offline);
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_EQ(off->llm_calls, 0u);
  EXPECT_EQ(stub_.requests().size(), 1u);
  // The baselines never call the model.
  for (const char* method : {"all", "bm25", "dense"}) {
    auto b = db_->Link(question, method);
    ASSERT_TRUE(b.ok()) << method << ": " << b.status().ToString();
    EXPECT_EQ(b->llm_calls, 0u) << method;
  }
  EXPECT_EQ(stub_.requests().size(), 1u);
}

TEST_F(SqlAgentTest, PlannerAnswerThatIsNotJsonFallsBackToTheOfflinePlan) {
  model_.Script("You should look at the singer table and the concert table.", {});
  Open();
  const std::string question = "Which singers are from France?";
  auto link = db_->Link(question, "qafd");
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  EXPECT_EQ(link->llm_calls, 1u);
  EXPECT_EQ(stub_.requests().size(), 1u);
  bool fallback = false;
  for (const std::string& w : link->warnings) {
    fallback = fallback || (Contains(w, "LLM seed selection failed") && Contains(w, "offline plan"));
  }
  EXPECT_TRUE(fallback) << ::testing::PrintToString(link->warnings);
  ASSERT_FALSE(link->tables.empty());
  EXPECT_TRUE(Names(link->tables).count("singer")) << link->schema_text;
  // The same as the offline link (apart from the calls and the warning).
  SchemaLinkOptions offline;
  offline.llm = false;
  auto off = db_->Link(question, "qafd", offline);
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(Names(link->tables), Names(off->tables));
  EXPECT_EQ(Names(link->columns), Names(off->columns));
}

TEST_F(SqlAgentTest, PlannerNamingOnlyUnknownNodesFallsBack) {
  model_.Script(R"({"subqueries": [{"subquery": "q", "source_nodes": ["artist.name"],
                    "target_nodes": ["gig.when"], "candidates": [["artist.name", "gig.when", 1]]}]})",
                {});
  Open();
  auto link = db_->Link("Which singers are from France?", "qafd");
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  EXPECT_EQ(link->llm_calls, 1u);
  bool fallback = false, dropped = false;
  for (const std::string& w : link->warnings) {
    fallback = fallback || Contains(w, "offline plan");
    dropped = dropped || Contains(w, "not in the schema");
  }
  EXPECT_TRUE(fallback) << ::testing::PrintToString(link->warnings);
  EXPECT_TRUE(dropped) << ::testing::PrintToString(link->warnings);
  EXPECT_TRUE(Names(link->tables).count("singer")) << link->schema_text;
}

TEST_F(SqlAgentTest, PlannerHttpFailureStillAnswers) {
  // The planner request fails (HTTP 500); Ask uses the offline plan and goes on.
  stub_.SetHandler([](const Json& body, httplib::Response& res, int) {
    if (IsPlanner(body)) {
      res.status = 500;
      res.set_content(R"({"error": {"message": "planner down"}})", "application/json");
      return;
    }
    res.set_content(testing::ChatCompletionJson(kFrenchCount).dump(), "application/json");
  });
  Open();
  auto a = db_->Ask("How many singers are from France?");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(a->executed);
  EXPECT_EQ(SqlValueText(a->result.rows.at(0).at(0)), "4");
  EXPECT_EQ(a->link.llm_calls, 1u);
  EXPECT_EQ(a->llm_calls, 2u);
  bool fallback = false;
  for (const std::string& w : a->link.warnings) fallback = fallback || Contains(w, "offline plan");
  EXPECT_TRUE(fallback) << ::testing::PrintToString(a->link.warnings);
  EXPECT_TRUE(Names(a->link.tables).count("singer"));
}

// Regression: when the planner's answer names no schema node and the offline
// plan takes over, the question's value matches are reported once.
TEST_F(SqlAgentTest, PlannerFallbackDoesNotDuplicateValueMatches) {
  model_.Script(R"({"subqueries": [{"subquery": "q", "source_nodes": ["artist.name"]}]})", {});
  Open();
  auto link = db_->Link("Which singers are from France?", "qafd");
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  ASSERT_FALSE(link->value_matches.empty());
  const std::set<std::string> unique(link->value_matches.begin(), link->value_matches.end());
  EXPECT_EQ(unique.size(), link->value_matches.size())
      << ::testing::PrintToString(link->value_matches);
}

// Regression: a planner answer whose "subquery" is not a string (null here)
// must not throw out of Link() and Ask().
TEST_F(SqlAgentTest, PlannerNonStringSubqueryDoesNotThrow) {
  model_.Script(R"({"subqueries": [{"subquery": null, "source_nodes": ["singer.Name"]}]})",
                {kFrenchCount});
  Open();
  EXPECT_NO_THROW({
    auto link = db_->Link("Which singers are from France?", "qafd");
    ASSERT_TRUE(link.ok()) << link.status().ToString();
    EXPECT_TRUE(Names(link->tables).count("singer"));
  });
  EXPECT_NO_THROW({
    auto a = db_->Ask("How many singers are from France?");
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_TRUE(a->executed);
  });
}

// ---------------------------------------------------------------------------
// `flowrag sql eval --execute` end to end: Spider dev's first questions
// (concert_singer), SQL from the stub, results compared with the gold SQL's.
// The stub always answers "SELECT count(*) FROM singer": right for questions
// 0 and 1 ("How many singers do we have?", "What is the total number of
// singers?"), wrong for question 2 (names, countries and ages).

TEST_F(SqlAgentTest, EvaluateScoresExecutionAgainstTheGoldResults) {
  const std::string spider = std::string(FLOWRAG_SOURCE_DIR) + "/../shared/data/spider";
  if (!fs::exists(spider + "/dev.json")) GTEST_SKIP() << "needs ../shared/data/spider";
  model_.Script(kPlannerJson, {"```sql\nSELECT count(*) FROM singer;\n```"});
  env_.Point(stub_.BaseUrl());
  SqlEvalOptions o;
  o.spider = spider;
  o.methods = {"qafd", "bm25"};
  o.limit = 3;
  o.execute = true;
  o.link.llm = false;
  auto rows = EvaluateSql(o, /*quiet=*/true);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  for (const SqlEvalRow& r : *rows) {
    EXPECT_EQ(r.dataset, "spider-dev");
    EXPECT_EQ(r.questions, 3u);
    EXPECT_EQ(r.executed, 3u) << r.method;
    EXPECT_NEAR(r.exec_accuracy, 2.0 / 3.0, 1e-9) << r.method;
    EXPECT_GT(r.table_r, 0.0);
  }
  EXPECT_EQ(SqlRequests().size(), 6u);  // 3 questions x 2 methods, no repairs
}

TEST_F(SqlAgentTest, EvaluateExecuteNeedsAChatModel) {
  SqlEvalOptions o;
  o.spider = "/nonexistent";
  o.execute = true;
  auto rows = EvaluateSql(o, true);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kFailedPrecondition);
}

// ---------------------------------------------------------------------------
// The planner's plan and the value index (Prompt 5 + value matches)

// The sources of sub-query `i` of a link.
std::set<std::string> SourcesOf(const SchemaLink& link, size_t i) {
  std::set<std::string> out;
  for (const LinkSource& x : link.sources) {
    if (x.subquery == i) out.insert(x.name);
  }
  return out;
}

std::string Describe(const SchemaLink& link) {
  std::string out = "sub-queries:";
  for (const std::string& q : link.subqueries) out += " [" + q + "]";
  out += "\nsources:";
  for (const LinkSource& x : link.sources) {
    out += " " + x.name + "@" + std::to_string(x.subquery) + "=" + std::to_string(x.mass) + "/" +
           std::to_string(x.injected);
  }
  out += "\ncolumns:";
  for (const LinkedItem& c : link.columns) out += " " + c.name + "(" + c.why + ")";
  out += "\nwarnings:";
  for (const std::string& w : link.warnings) out += " " + w;
  return out;
}

TEST_F(SqlAgentTest, ValueMatchesJoinThePlannersPlan) {
  // The model names singer.Name only; "France" is a value of singer.Country.
  model_.Script(R"({"subqueries": [{"subquery": "names of the singers", "source_nodes": ["singer.Name"],
                    "target_nodes": ["singer.Name"], "candidates": [["singer.Name", "singer.Name", 1.0]]}]})",
                {});
  Open();
  auto link = db_->Link("Names of singers from France", "qafd");
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  SCOPED_TRACE(Describe(*link));
  EXPECT_EQ(link->llm_calls, 1u);
  for (const std::string& w : link->warnings) EXPECT_FALSE(Contains(w, "offline plan")) << w;
  ASSERT_EQ(link->subqueries, std::vector<std::string>{"names of the singers"});
  // No sub-query names the value: it joins every sub-query, as a candidate and a source.
  EXPECT_EQ(SourcesOf(*link, 0), (std::set<std::string>{"singer.Name", "singer.Country"}));
  bool country = false;
  for (const LinkedItem& c : link->columns) {
    if (c.name == "singer.Country") {
      country = true;
      EXPECT_EQ(c.why, "value");
      EXPECT_GE(c.score, 0.5);
    }
  }
  EXPECT_TRUE(country);
  EXPECT_EQ(link->value_matches, std::vector<std::string>{"france → singer.Country"});
}

// A2.2.1's source mass (SchemaLinkOptions::mass = "path"): m_s = α·Σ_{j∈P}
// T_j at each pair's source. The default ("score") puts α·T·score at every
// candidate instead; these tests pin the path rule, which stays an option.
SchemaLinkOptions PathMass() {
  SchemaLinkOptions o;
  o.mass = "path";
  return o;
}

TEST_F(SqlAgentTest, ValueMatchJoinsOnlyTheSubqueryThatHoldsIt) {
  model_.Script(R"({"subqueries": [
      {"subquery": "singers from France", "source_nodes": ["singer.Name"], "target_nodes": ["singer.Singer_ID"],
       "candidates": [["singer.Name", "singer.Singer_ID", 1.0]]},
      {"subquery": "years of their concerts", "source_nodes": ["singer_in_concert.Singer_ID"],
       "target_nodes": ["concert.Year"], "candidates": [["singer_in_concert.Singer_ID", "concert.Year", 1.0]]}]})",
                {});
  Open();
  auto link = db_->Link("In which years did singers from France sing in concerts?", "qafd", PathMass());
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  SCOPED_TRACE(Describe(*link));
  ASSERT_EQ(link->subqueries.size(), 2u);
  EXPECT_EQ(SourcesOf(*link, 0), (std::set<std::string>{"singer.Name", "singer.Country"}));
  EXPECT_EQ(SourcesOf(*link, 1), (std::set<std::string>{"singer_in_concert.Singer_ID"}));
  EXPECT_TRUE(Names(link->columns).count("singer.Country"));
  // The value's source sends its mass along the path to the sub-query's
  // target: singer.Country -> singer -> singer.Singer_ID, 3 nodes, α = 10,
  // confidence value_score = 0.9 (one column holds "France").
  for (const LinkSource& x : link->sources) {
    if (x.name == "singer.Country") {
      EXPECT_NEAR(x.mass, 0.9 * 10.0 * 3.0, 1e-9);
    }
  }
}

// A schema large enough that the feasibility guard leaves the sources alone:
// alpha (72 columns) and beta (73) joined by a declared key, and gamma
// (1 column) on its own. 3 + 146 = 149 nodes, capacity T = 1 each.
constexpr size_t kMassNodes = 149;
void CreateMassDatabase(const std::string& path) {
  std::string sql = "CREATE TABLE alpha (alpha_id INTEGER PRIMARY KEY, x TEXT";
  for (int i = 0; i < 70; ++i) sql += ", f" + std::to_string(i) + " TEXT";
  sql += "); CREATE TABLE beta (beta_id INTEGER PRIMARY KEY, alpha_id INTEGER REFERENCES alpha(alpha_id), y TEXT";
  for (int i = 0; i < 70; ++i) sql += ", g" + std::to_string(i) + " TEXT";
  sql += "); CREATE TABLE gamma (z TEXT);";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

std::string OnePair(const std::string& source, const std::string& target, double confidence) {
  return Json{{"subqueries", {{{"subquery", "q"},
                               {"source_nodes", {source}},
                               {"target_nodes", {target}},
                               {"candidates", {{source, target, confidence}}}}}}}
      .dump();
}

TEST_F(SqlAgentTest, SourceMassIsAlphaTimesThePathCapacity) {
  const std::string path = dir_.File("mass.sqlite");
  CreateMassDatabase(path);
  env_.Point(stub_.BaseUrl());
  auto opened = SqlDatabase::Open(path);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  SqlDatabase& db = **opened;
  ASSERT_EQ(db.num_tables() + db.num_columns(), kMassNodes);
  auto link_with = [&](const std::string& plan, const SchemaLinkOptions& o = PathMass()) {
    model_.Script(plan, {});
    auto l = db.Link("x of alpha and y of beta", "qafd", o);
    EXPECT_TRUE(l.ok()) << l.status().ToString();
    return l.ok() ? *l : SchemaLink{};
  };
  // alpha.x -> alpha -> alpha.alpha_id -> beta.alpha_id -> beta -> beta.y:
  // |P| = 6 nodes, m_s = α·|P|·T = 60; the component (147 nodes) holds more
  // than twice that, so the guard leaves it.
  SchemaLink l = link_with(OnePair("alpha.x", "beta.y", 1.0));
  SCOPED_TRACE(Describe(l));
  ASSERT_EQ(l.sources.size(), 1u);
  EXPECT_EQ(l.sources[0].name, "alpha.x");
  EXPECT_EQ(l.sources[0].subquery, 0u);
  EXPECT_NEAR(l.sources[0].mass, 10.0 * 6 * 1.0, 1e-9);
  EXPECT_NEAR(l.sources[0].injected, l.sources[0].mass, 1e-9);
  EXPECT_EQ(l.scaled_sources, 0u);
  // The pair's confidence scales the mass; α and T are the options'.
  l = link_with(OnePair("alpha.x", "beta.y", 0.5));
  ASSERT_EQ(l.sources.size(), 1u);
  EXPECT_NEAR(l.sources[0].mass, 0.5 * 60.0, 1e-9);
  SchemaLinkOptions o = PathMass();
  o.alpha = 5.0;
  l = link_with(OnePair("alpha.x", "beta.y", 1.0), o);
  ASSERT_EQ(l.sources.size(), 1u);
  EXPECT_NEAR(l.sources[0].mass, 5.0 * 6, 1e-9);
  EXPECT_NEAR(l.sources[0].injected, 5.0 * 6, 1e-9);
  // A source and target on one column: |P| = 1.
  l = link_with(OnePair("alpha.x", "alpha.x", 1.0));
  ASSERT_EQ(l.sources.size(), 1u);
  EXPECT_NEAR(l.sources[0].mass, 10.0, 1e-9);
  // No path (gamma is on its own): m_s = Σ_{i∈V} T_i = 149, more than the
  // source's component holds, so the guard caps it at half of it (147 / 2).
  l = link_with(OnePair("alpha.x", "gamma.z", 1.0));
  ASSERT_EQ(l.sources.size(), 1u);
  EXPECT_NEAR(l.sources[0].mass, static_cast<double>(kMassNodes), 1e-9);
  EXPECT_NEAR(l.sources[0].injected, 0.5 * 147, 1e-9);
  EXPECT_EQ(l.scaled_sources, 1u);
  // α = 20 on the path: 120 needs a component of 240 nodes, so the guard scales it.
  o.alpha = 20.0;
  l = link_with(OnePair("alpha.x", "beta.y", 1.0), o);
  ASSERT_EQ(l.sources.size(), 1u);
  EXPECT_NEAR(l.sources[0].mass, 120.0, 1e-9);
  EXPECT_NEAR(l.sources[0].injected, 0.5 * 147, 1e-9);
  EXPECT_EQ(l.scaled_sources, 1u);
}

TEST_F(SqlAgentTest, FeasibilityGuardScalesSourcesOnASmallSchema) {
  // concert_singer: 19 nodes. singer.Name -> ... -> concert.Year is 9 nodes,
  // m_s = 0.9 · 10 · 9 = 81, far over the 9.5 half the graph holds.
  model_.Script(kPlannerJson, {});
  Open();
  auto link = db_->Link("In which years did a singer sing in a concert?", "qafd", PathMass());
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  SCOPED_TRACE(Describe(*link));
  ASSERT_EQ(link->sources.size(), 1u);
  EXPECT_EQ(link->sources[0].name, "singer.Name");
  EXPECT_NEAR(link->sources[0].mass, 0.9 * 10.0 * 9, 1e-9);
  EXPECT_NEAR(link->sources[0].injected, 0.5 * 19, 1e-9);
  EXPECT_EQ(link->scaled_sources, 1u);
  // α changes the mass but not what is injected: the guard caps both.
  SchemaLinkOptions o = PathMass();
  o.alpha = 50.0;
  auto other = db_->Link("In which years did a singer sing in a concert?", "qafd", o);
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(other->sources.size(), 1u);
  EXPECT_NEAR(other->sources[0].mass, 0.9 * 50.0 * 9, 1e-9);
  EXPECT_NEAR(other->sources[0].injected, 0.5 * 19, 1e-9);
  EXPECT_EQ(Names(other->columns), Names(link->columns));
}

// Schema lines of a planner prompt: table -> its listed columns.
std::map<std::string, std::set<std::string>> PromptColumns(const std::string& prompt) {
  std::map<std::string, std::set<std::string>> out;
  const size_t begin = prompt.find("Schema (");
  const size_t end = prompt.find("Do this:");
  std::string text = prompt.substr(begin, end - begin);
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(at, nl - at);
    at = nl + 1;
    const size_t paren = line.find('(');
    if (paren == std::string::npos || paren == 0 || line.back() != ')' || line.find(' ') < paren) continue;
    auto& cols = out[line.substr(0, paren)];
    const std::string body = line.substr(paren + 1, line.size() - paren - 2);
    size_t b = 0;
    while (b < body.size()) {
      size_t comma = body.find(", ", b);
      if (comma == std::string::npos) comma = body.size();
      const std::string item = body.substr(b, comma - b);
      cols.insert(item.substr(0, item.find(' ')));
      b = comma + 2;
    }
  }
  return out;
}

TEST_F(SqlAgentTest, PlannerOnALargeSchemaListsTheDenseTopColumns) {
  // 41 tables of 24 columns and a lighthouse table: 988 columns (> 800),
  // every table with a region_id (implied joins between every pair: 861).
  const std::string path = dir_.File("wide.sqlite");
  std::string sql = "BEGIN;";
  for (int t = 0; t < 41; ++t) {
    const std::string name = "t" + std::to_string(100 + t);
    sql += "CREATE TABLE " + name + " (region_id INTEGER";
    for (int c = 1; c < 24; ++c) sql += ", " + name + "_f" + std::to_string(c) + " INTEGER";
    sql += ");";
  }
  sql += "CREATE TABLE lighthouse (region_id INTEGER, altitude REAL, keeper_name TEXT, built_year INTEGER);COMMIT;";
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
  sqlite3_close(raw);
  model_.Script(R"({"subqueries": [{"subquery": "altitude of the lighthouse",
                    "source_nodes": ["lighthouse.keeper_name"], "target_nodes": ["lighthouse.altitude"]}]})",
                {});
  env_.Point(stub_.BaseUrl());
  auto opened = SqlDatabase::Open(path);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  SqlDatabase& db = **opened;
  ASSERT_EQ(db.num_columns(), 988u);
  const std::string question = "What is the altitude of the lighthouse whose keeper name is Smith?";
  auto link = db.Link(question, "qafd");
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  ASSERT_EQ(stub_.requests().size(), 1u);
  const std::string prompt = stub_.requests()[0].body["messages"][0]["content"];
  // The listed columns are the dense top 800 nodes' columns (no primary keys here).
  SchemaLinkOptions dense;
  dense.top_k = 800;
  auto top = db.Link(question, "dense", dense);
  ASSERT_TRUE(top.ok());
  std::set<std::string> expected = Names(top->columns), listed;
  for (const auto& [table, cols] : PromptColumns(prompt)) {
    for (const std::string& c : cols) listed.insert(table + "." + c);
  }
  EXPECT_EQ(listed, expected);
  EXPECT_LE(listed.size(), 800u);
  EXPECT_LT(listed.size(), 988u);
  EXPECT_TRUE(listed.count("lighthouse.altitude"));
  EXPECT_TRUE(listed.count("lighthouse.keeper_name"));
  // Joins only between listed columns, so the prompt does not grow with the
  // whole schema: the template, ~24 bytes per listed column and ~48 per join.
  size_t joins = 0, region_ids = 0;
  for (const std::string& c : listed) region_ids += Contains(c, ".region_id");
  const size_t at = prompt.find("Joins:\n");
  if (at != std::string::npos) {
    std::string rest = prompt.substr(at + 7, prompt.find("\n\nDo this:") - at - 7);
    size_t b = 0;
    while (b < rest.size()) {
      size_t nl = rest.find('\n', b);
      if (nl == std::string::npos) nl = rest.size();
      const std::string line = rest.substr(b, nl - b);
      b = nl + 1;
      const size_t eq = line.find(" = ");
      if (eq == std::string::npos) continue;
      ++joins;
      std::string left = line.substr(0, eq), right = line.substr(eq + 3);
      left.erase(0, left.find_first_not_of(' '));
      right = right.substr(0, right.find(' '));
      EXPECT_TRUE(listed.count(left)) << line;
      EXPECT_TRUE(listed.count(right)) << line;
    }
  }
  // The same-name joins are a star (k − 1 lines), not the clique (k(k − 1)/2).
  ASSERT_GT(region_ids, 2u);
  EXPECT_EQ(joins, region_ids - 1);
  EXPECT_LT(prompt.size(), 3000 + 24 * listed.size() + 48 * joins) << prompt.size();
}

// ---------------------------------------------------------------------------
// Execution accuracy: the comparison of results (sql/sql_eval.h)

SqlResultSet Result(std::vector<std::vector<SqlValue>> rows, size_t width = 0) {
  SqlResultSet r;
  if (width == 0 && !rows.empty()) width = rows[0].size();
  for (size_t c = 0; c < width; ++c) r.columns.push_back("c" + std::to_string(c));
  r.rows = std::move(rows);
  return r;
}

TEST(SameExecutionResultTest, ColumnsMatchUpToPermutation) {
  using V = SqlValue;
  const SqlResultSet gold = Result({{V("Joe"), V(int64_t{52})}, {V("Rose"), V(int64_t{41})}});
  // Columns swapped, rows in another order, names different.
  const SqlResultSet swapped = Result({{V(int64_t{41}), V("Rose")}, {V(int64_t{52}), V("Joe")}});
  EXPECT_TRUE(SameExecutionResult(gold, swapped, /*ordered=*/false));
  EXPECT_TRUE(SameExecutionResult(swapped, gold, false));
  // Integers equal their real values.
  EXPECT_TRUE(SameExecutionResult(gold, Result({{V("Rose"), V(41.0)}, {V("Joe"), V(52.0)}}), false));
  // Same column multisets, but the rows pair them differently: not the same.
  EXPECT_FALSE(SameExecutionResult(gold, Result({{V("Joe"), V(int64_t{41})}, {V("Rose"), V(int64_t{52})}}), false));
  // Two columns with equal value multisets: the search must try the other assignment.
  const SqlResultSet twins = Result({{V(int64_t{1}), V(int64_t{2}), V("a")}, {V(int64_t{2}), V(int64_t{1}), V("b")}});
  const SqlResultSet twins_perm = Result({{V("a"), V(int64_t{2}), V(int64_t{1})}, {V("b"), V(int64_t{1}), V(int64_t{2})}});
  EXPECT_TRUE(SameExecutionResult(twins, twins_perm, false));
  // A column more or less, a row more or less.
  EXPECT_FALSE(SameExecutionResult(gold, Result({{V("Joe")}, {V("Rose")}}), false));
  EXPECT_FALSE(SameExecutionResult(gold, Result({{V("Joe"), V(int64_t{52})}}), false));
  // Duplicates count (multisets, not sets).
  EXPECT_FALSE(SameExecutionResult(Result({{V("a")}, {V("a")}, {V("b")}}), Result({{V("a")}, {V("b")}, {V("b")}}), false));
  // NULL is not the text "NULL".
  EXPECT_FALSE(SameExecutionResult(Result({{V()}}), Result({{V("NULL")}}), false));
  EXPECT_TRUE(SameExecutionResult(Result({{V()}}), Result({{V()}}), false));
  // Two empty results are the same answer.
  EXPECT_TRUE(SameExecutionResult(Result({}, 2), Result({}, 1), false));
}

TEST(SameExecutionResultTest, OrderedComparesRowSequences) {
  using V = SqlValue;
  const SqlResultSet gold = Result({{V("Joe"), V(int64_t{52})}, {V("Rose"), V(int64_t{41})}});
  const SqlResultSet reversed = Result({{V("Rose"), V(int64_t{41})}, {V("Joe"), V(int64_t{52})}});
  EXPECT_TRUE(SameExecutionResult(gold, reversed, /*ordered=*/false));
  EXPECT_FALSE(SameExecutionResult(gold, reversed, /*ordered=*/true));
  // Column permutation still allowed with ORDER BY.
  EXPECT_TRUE(SameExecutionResult(gold, Result({{V(int64_t{52}), V("Joe")}, {V(int64_t{41}), V("Rose")}}), true));
}

TEST(SameExecutionResultTest, TruncatedResultsNeverMatch) {
  using V = SqlValue;
  SqlResultSet a = Result({{V(int64_t{1})}, {V(int64_t{2})}});
  SqlResultSet b = a;
  EXPECT_TRUE(SameExecutionResult(a, b, false));
  b.truncated = true;  // the same first rows, but more existed
  EXPECT_FALSE(SameExecutionResult(a, b, false));
  a.truncated = true;  // both cut at the limit: the rows beyond it are unknown
  EXPECT_FALSE(SameExecutionResult(a, b, false));
}

// ---------------------------------------------------------------------------
// `sql eval --execute` on a Spider-layout folder written here: one database
// with data ("tiny"), one listed in tables.json without a .sqlite
// ("nodata"), and questions for each rule of the execution scoring.

struct EvalQuestion {
  std::string db, question, gold, answer;  // answer "" : the stub fails (HTTP 500)
};

const std::vector<EvalQuestion>& EvalQuestions() {
  static const std::vector<EvalQuestion> q = {
      {"tiny", "How many singers are there?", "SELECT count(*) FROM singer", "SELECT count(*) FROM singer"},
      {"tiny", "List the ages and names of singers.", "SELECT Name, Age FROM singer",
       "SELECT Age AS years, Name FROM singer"},                           // permuted columns: right
      {"tiny", "Names of singers from the youngest.", "SELECT Name FROM singer ORDER BY Age",
       "SELECT Name FROM singer ORDER BY Age DESC"},                        // wrong order: wrong
      {"tiny", "Question whose gold is broken.", "SELECT nosuch FROM singer", "SELECT 1"},  // gold error
      {"tiny", "Question the model fails on.", "SELECT Name FROM singer", ""},              // chat error
      {"tiny", "All the big values.", "SELECT v FROM big", "SELECT v FROM big"},             // truncated
      {"nodata", "How many singers are there?", "SELECT count(*) FROM singer", "SELECT count(*) FROM singer"},
      {"tiny", "Names of singers.", "SELECT Name FROM singer", "SELECT Name, Age FROM singer"},  // extra column
  };
  return q;
}

// Writes tables.json, dev.json and database/tiny/tiny.sqlite under `root`.
void WriteMiniSpider(const std::string& root) {
  fs::create_directories(root + "/database/tiny");
  fs::create_directories(root + "/database/nodata");  // a folder without a .sqlite, like wta_1
  Json schemas = Json::array();
  for (const char* id : {"tiny", "nodata"}) {
    schemas.push_back({{"db_id", id},
                       {"table_names", {"singer", "big"}},
                       {"table_names_original", {"singer", "big"}},
                       {"column_names", {{-1, "*"}, {0, "singer id"}, {0, "name"}, {0, "age"}, {1, "v"}}},
                       {"column_names_original", {{-1, "*"}, {0, "Singer_ID"}, {0, "Name"}, {0, "Age"}, {1, "v"}}},
                       {"column_types", {"text", "number", "text", "number", "number"}},
                       {"primary_keys", {1}},
                       {"foreign_keys", Json::array()}});
  }
  testing::WriteFile(root + "/tables.json", schemas.dump());
  Json units = Json::array({Json::array({"table_unit", 0})});
  Json parsed = {{"from", {{"table_units", units}, {"conds", Json::array()}}},
                 {"select", {false, Json::array()}},
                 {"where", Json::array()},
                 {"groupBy", Json::array()},
                 {"having", Json::array()},
                 {"orderBy", Json::array()},
                 {"limit", nullptr},
                 {"intersect", nullptr},
                 {"union", nullptr},
                 {"except", nullptr}};
  Json dev = Json::array();
  for (const EvalQuestion& q : EvalQuestions()) {
    dev.push_back({{"db_id", q.db}, {"question", q.question}, {"query", q.gold}, {"sql", parsed}});
  }
  testing::WriteFile(root + "/dev.json", dev.dump());
  std::string sql =
      "CREATE TABLE singer (Singer_ID INTEGER PRIMARY KEY, Name TEXT, Age INTEGER);"
      "INSERT INTO singer VALUES (1, 'Joe Sharp', 52), (2, 'Rose White', 41), (3, 'Tribal King', 25);"
      "CREATE TABLE big (v INTEGER);";
  for (int i = 0; i < 10; ++i) sql += "INSERT INTO big VALUES (" + std::to_string(i) + ");";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((root + "/database/tiny/tiny.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST_F(SqlAgentTest, EvaluateExecutionCountsEachOutcome) {
  const std::string root = dir_.File("spider");
  WriteMiniSpider(root);
  std::map<std::string, std::string> answers;
  for (const EvalQuestion& q : EvalQuestions()) answers[q.question] = q.answer;
  std::mutex mu;
  std::vector<std::string> asked;
  stub_.SetHandler([&](const Json& body, httplib::Response& res, int) {
    std::string question;
    if (IsSqlWriter(body)) {
      const std::string user = body["messages"][1].value("content", "");
      const size_t at = user.find("Question: ");
      if (at != std::string::npos) question = user.substr(at + 10);
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      asked.push_back(question);
    }
    auto it = answers.find(question);
    if (it == answers.end() || it->second.empty()) {
      res.status = 500;
      res.set_content(R"({"error": {"message": "model down"}})", "application/json");
      return;
    }
    res.set_content(testing::ChatCompletionJson("```sql\n" + it->second + "\n```").dump(), "application/json");
  });
  env_.Point(stub_.BaseUrl());
  SqlEvalOptions o;
  o.spider = root;
  o.methods = {"bm25"};
  o.execute = true;
  o.max_rows = 5;  // "big" has 10 rows
  o.ask.max_repairs = 0;
  o.link.llm = false;
  o.records = dir_.File("records.jsonl");
  auto rows = EvaluateSql(o, /*quiet=*/true);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();  // the chat error did not abort the run
  ASSERT_EQ(rows->size(), 1u);
  const SqlEvalRow& r = (*rows)[0];
  EXPECT_EQ(r.questions, 8u);        // every question is scored for linking
  EXPECT_EQ(r.no_data, 1u);          // nodata: not executed, said so
  EXPECT_EQ(r.gold_errors, 1u);      // the broken gold is left out
  EXPECT_EQ(r.exec_attempted, 6u);   // 8 - no data - gold error
  EXPECT_EQ(r.exec_errors, 1u);      // the chat error
  EXPECT_EQ(r.truncated, 1u);
  EXPECT_EQ(r.executed, 5u);
  EXPECT_EQ(r.exec_correct, 2u);     // count, and the permuted columns
  EXPECT_NEAR(r.exec_accuracy, 2.0 / 6.0, 1e-12);
  {
    // The model was asked neither about the broken gold nor the question without data.
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(std::count(asked.begin(), asked.end(), "Question whose gold is broken."), 0);
    EXPECT_EQ(std::count(asked.begin(), asked.end(), "How many singers are there?"), 1);
    EXPECT_EQ(asked.size(), 6u);
  }
  // The records say what happened to each question.
  std::map<std::string, Json> records;
  std::ifstream in(o.records);
  for (std::string line; std::getline(in, line);) {
    Json j = Json::parse(line);
    records[j["id"].get<std::string>()] = j;
  }
  ASSERT_EQ(records.size(), 8u);
  EXPECT_TRUE(records["spider-dev-0"]["correct"].get<bool>());
  EXPECT_TRUE(records["spider-dev-1"]["correct"].get<bool>());
  EXPECT_FALSE(records["spider-dev-2"]["correct"].get<bool>());
  EXPECT_TRUE(records["spider-dev-3"].contains("gold_error"));
  EXPECT_TRUE(Contains(records["spider-dev-3"]["gold_error"].get<std::string>(), "nosuch"))
      << records["spider-dev-3"].dump();
  EXPECT_FALSE(records["spider-dev-3"].contains("correct"));
  EXPECT_TRUE(records["spider-dev-4"].contains("error")) << records["spider-dev-4"].dump();
  EXPECT_FALSE(records["spider-dev-4"]["executed"].get<bool>());
  EXPECT_FALSE(records["spider-dev-4"]["correct"].get<bool>());
  EXPECT_TRUE(records["spider-dev-5"].value("truncated", false)) << records["spider-dev-5"].dump();
  EXPECT_FALSE(records["spider-dev-5"]["correct"].get<bool>());
  EXPECT_TRUE(records["spider-dev-6"].contains("skipped")) << records["spider-dev-6"].dump();
  EXPECT_FALSE(records["spider-dev-7"]["correct"].get<bool>());

  // With a row limit above the table, the same answer is right.
  o.max_rows = 100;
  o.records.clear();
  rows = EvaluateSql(o, true);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ((*rows)[0].truncated, 0u);
  EXPECT_EQ((*rows)[0].exec_correct, 3u);
}

// ---------------------------------------------------------------------------
// A remote embedder with a store: node texts are embedded once; the next
// open of the same database reads their vectors from the store's cache.

TEST(SqlRemoteEmbedderTest, NodeVectorsAreCachedInTheStore) {
  testing::TempDir dir;
  const std::string path = dir.File("concert_singer.sqlite");
  CreateDatabase(path);
  // An 8-dimensional bag of hashed words per input text.
  testing::RecordingJsonStub stub("/v1/embeddings", [](const Json& body) {
    Json data = Json::array();
    int i = 0;
    for (const auto& text : body["input"]) {
      std::vector<float> v(8, 0.0f);
      const std::string s = text.get<std::string>();
      for (size_t k = 0; k < s.size(); ++k) v[static_cast<unsigned char>(s[k]) % 8] += 1.0f;
      data.push_back({{"index", i++}, {"embedding", v}});
    }
    return Json{{"data", data}, {"model", body["model"]}};
  });
  ASSERT_TRUE(stub.ok());
  setenv("FLOWRAG_EMBED_BASE_URL", stub.BaseUrl().c_str(), 1);
  setenv("FLOWRAG_EMBED_MODEL", "stub-embed", 1);
  setenv("FLOWRAG_EMBED_API_KEY", "", 1);
  auto texts_sent = [&stub] {
    size_t n = 0;
    for (const auto& r : stub.requests()) n += r.body["input"].size();
    return n;
  };
  SqlDatabaseOptions o;
  o.store = dir.File("flowrag.db");
  o.embedder = "openai";
  {
    auto db = SqlDatabase::Open(path, o);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_EQ(texts_sent(), 2 * (4 + 15));  // name and full text of 4 tables, 15 columns
    auto link = (*db)->Link("Which singers are from France?", "qafd");
    ASSERT_TRUE(link.ok()) << link.status().ToString();
    EXPECT_TRUE(Names(link->tables).count("singer"));
  }
  const size_t after_first = texts_sent();
  {
    auto db = SqlDatabase::Open(path, o);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_EQ(texts_sent(), after_first);  // every node vector came from the store
    auto link = (*db)->Link("Which singers are from France?", "qafd");
    ASSERT_TRUE(link.ok()) << link.status().ToString();
    EXPECT_EQ(texts_sent(), after_first);  // the same question's texts are cached too
  }
  for (const char* v : {"FLOWRAG_EMBED_BASE_URL", "FLOWRAG_EMBED_MODEL", "FLOWRAG_EMBED_API_KEY"}) unsetenv(v);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
