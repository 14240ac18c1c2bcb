#include "sql/sql_writer.h"

#include <chrono>

namespace flowrag {
namespace {

const char kSystem[] =
    "You write SQLite queries that answer questions about a database. Use only the tables and "
    "columns in the schema you are given, spelled exactly as there, and the joins it lists. "
    "Answer with exactly one SQL statement (SELECT or WITH) in a ```sql block and nothing else.";

std::string Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r\n;");
  return e == std::string_view::npos || e < b ? std::string() : std::string(s.substr(b, e - b + 1));
}

}  // namespace

std::string ExtractSql(std::string_view answer) {
  size_t fence = answer.find("```");
  while (fence != std::string_view::npos) {
    size_t body = answer.find('\n', fence);
    const size_t same_line_close = answer.find("```", fence + 3);
    if (same_line_close != std::string_view::npos && (body == std::string_view::npos || same_line_close < body)) {
      // ```sql SELECT 1``` on one line
      std::string_view inner = answer.substr(fence + 3, same_line_close - fence - 3);
      for (std::string_view tag : {"sqlite", "sql", "SQL"}) {
        if (inner.substr(0, tag.size()) == tag) {
          inner.remove_prefix(tag.size());
          break;
        }
      }
      return Trim(inner);
    }
    if (body == std::string_view::npos) break;
    const std::string_view tag = answer.substr(fence + 3, body - fence - 3);
    const size_t close = answer.find("```", body + 1);
    const std::string_view inner =
        answer.substr(body + 1, close == std::string_view::npos ? std::string_view::npos : close - body - 1);
    if (tag.empty() || Trim(tag) == "sql" || Trim(tag) == "sqlite" || Trim(tag) == "SQL") return Trim(inner);
    if (close == std::string_view::npos) break;
    fence = answer.find("```", close + 3);
  }
  return Trim(answer);
}

Result<SqlAnswer> WriteAndRunSql(ChatModel& chat, ReadOnlyDatabase& db, const SchemaLinker& linker,
                                 std::string_view question, const SqlAskOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (options.max_repairs < 0) return Status::InvalidArgument("max_repairs must be >= 0");
  SqlAnswer answer;
  answer.question = std::string(question);
  FLOWRAG_ASSIGN_OR_RETURN(LinkMethod method, ParseLinkMethod(options.method));
  FLOWRAG_ASSIGN_OR_RETURN(answer.link, linker.Link(question, method, options.link));
  answer.llm_calls = answer.link.llm_calls;
  std::string prompt = "Database schema:\n" +
                       linker.SchemaText(answer.link.tables, answer.link.columns, answer.link.joins,
                                         options.full_tables);
  if (!options.evidence.empty()) prompt += "\nExternal knowledge:\n" + options.evidence + "\n";
  prompt += "\nQuestion: " + answer.question;
  ChatRequest request;
  request.messages = {{"system", kSystem}, {"user", prompt}};
  for (int round = 0; round <= options.max_repairs; ++round) {
    ++answer.llm_calls;
    FLOWRAG_ASSIGN_OR_RETURN(ChatResponse response, chat.Complete(request));
    SqlAttempt attempt;
    attempt.sql = ExtractSql(response.content);
    answer.sql = attempt.sql;
    if (attempt.sql.empty()) {
      attempt.error = "the answer holds no SQL";
    } else {
      auto result = db.Execute(attempt.sql, options.limits);
      if (result.ok()) {
        answer.executed = true;
        answer.result = std::move(result).value();
      } else {
        attempt.error = result.status().message();
      }
    }
    answer.attempts.push_back(attempt);
    if (answer.executed) break;
    request.messages.push_back({"assistant", response.content});
    request.messages.push_back({"user", "Running that SQL failed: " + attempt.error +
                                            "\nFix it. Answer with one SQL statement in a ```sql block."});
  }
  answer.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return answer;
}

}  // namespace flowrag
