// The read-only policy of ReadOnlyDatabase: the authorizer (which actions
// each mode allows, the refused functions, recording reads), the
// leading-keyword checks and the refusal Status. See sql_policy.h.
#include "sql/sql_policy.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <utility>

#include "common/text.h"

namespace flowrag {
namespace {

using Mode = SqlAuthorizerState::Mode;

constexpr const char kRefusedPrefix[] = "refused: ";

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool IsSchemaTable(const char* name) {
  if (name == nullptr) return false;
  std::string_view n(name);
  return EqualsIgnoreCase(n, "sqlite_master") || EqualsIgnoreCase(n, "sqlite_schema") ||
         EqualsIgnoreCase(n, "sqlite_temp_master") || EqualsIgnoreCase(n, "sqlite_temp_schema");
}

// Functions with side effects outside the query, or that run arbitrary SQL.
bool IsRefusedFunction(const char* name) {
  if (name == nullptr) return true;
  static constexpr std::string_view kRefused[] = {
      "load_extension", "readfile",   "writefile",          "edit",          "fts3_tokenizer",
      "eval",           "sha3_query", "icu_load_collation", "sqlite_dbdata",
  };
  std::string_view n(name);
  for (std::string_view r : kRefused) {
    if (EqualsIgnoreCase(n, r)) return true;
  }
  // sqlite_rename_column, sqlite_rename_table, sqlite_drop_column, ...:
  // SQLite's internal ALTER TABLE helpers.
  const std::string lower = ToLowerAscii(n);
  return lower.rfind("sqlite_rename", 0) == 0 || lower.rfind("sqlite_drop", 0) == 0;
}

std::string Str(const char* s) { return s == nullptr ? std::string() : std::string(s); }

std::string WithName(const char* verb, const char* name) {
  std::string s(verb);
  if (name != nullptr && *name != '\0') {
    s += ' ';
    s += name;
  }
  return s;
}

// "DROP TABLE t", "PRAGMA user_version", "function load_extension()".
std::string DescribeAction(int action, const char* a1, const char* a2) {
  switch (action) {
    case SQLITE_CREATE_INDEX:
      return WithName("CREATE INDEX", a1);
    case SQLITE_CREATE_TABLE:
      return WithName("CREATE TABLE", a1);
    case SQLITE_CREATE_TEMP_INDEX:
      return WithName("CREATE TEMP INDEX", a1);
    case SQLITE_CREATE_TEMP_TABLE:
      return WithName("CREATE TEMP TABLE", a1);
    case SQLITE_CREATE_TEMP_TRIGGER:
      return WithName("CREATE TEMP TRIGGER", a1);
    case SQLITE_CREATE_TEMP_VIEW:
      return WithName("CREATE TEMP VIEW", a1);
    case SQLITE_CREATE_TRIGGER:
      return WithName("CREATE TRIGGER", a1);
    case SQLITE_CREATE_VIEW:
      return WithName("CREATE VIEW", a1);
    case SQLITE_DELETE:
      return WithName("DELETE from", a1);
    case SQLITE_DROP_INDEX:
      return WithName("DROP INDEX", a1);
    case SQLITE_DROP_TABLE:
      return WithName("DROP TABLE", a1);
    case SQLITE_DROP_TEMP_INDEX:
      return WithName("DROP TEMP INDEX", a1);
    case SQLITE_DROP_TEMP_TABLE:
      return WithName("DROP TEMP TABLE", a1);
    case SQLITE_DROP_TEMP_TRIGGER:
      return WithName("DROP TEMP TRIGGER", a1);
    case SQLITE_DROP_TEMP_VIEW:
      return WithName("DROP TEMP VIEW", a1);
    case SQLITE_DROP_TRIGGER:
      return WithName("DROP TRIGGER", a1);
    case SQLITE_DROP_VIEW:
      return WithName("DROP VIEW", a1);
    case SQLITE_INSERT:
      return WithName("INSERT into", a1);
    case SQLITE_PRAGMA:
      return WithName("PRAGMA", a1);
    case SQLITE_READ:
      return WithName("reading", a1);
    case SQLITE_SELECT:
      return "SELECT";
    case SQLITE_TRANSACTION:
      return a1 != nullptr ? std::string(a1) : "a transaction";
    case SQLITE_UPDATE:
      return WithName("UPDATE of", a1);
    case SQLITE_ATTACH:
      return "ATTACH";
    case SQLITE_DETACH:
      return "DETACH";
    case SQLITE_ALTER_TABLE:
      return WithName("ALTER TABLE", a2);
    case SQLITE_REINDEX:
      return WithName("REINDEX", a1);
    case SQLITE_ANALYZE:
      return WithName("ANALYZE", a1);
    case SQLITE_CREATE_VTABLE:
      return WithName("CREATE VIRTUAL TABLE", a1);
    case SQLITE_DROP_VTABLE:
      return WithName("DROP VIRTUAL TABLE", a1);
    case SQLITE_FUNCTION:
      return "function " + Str(a2) + "()";
    case SQLITE_SAVEPOINT: {
      std::string op = Str(a1);
      if (op == "BEGIN") return WithName("SAVEPOINT", a2);
      if (op == "ROLLBACK") return WithName("ROLLBACK TO", a2);
      return WithName(op.empty() ? "SAVEPOINT" : op.c_str(), a2);  // RELEASE
    }
    case SQLITE_RECURSIVE:
      return "WITH RECURSIVE";
    case SQLITE_COPY:
      return "COPY";
  }
  return "action " + std::to_string(action);
}

bool QueryAllows(int action, const char* a1, const char* a2) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
      return true;
    case SQLITE_FUNCTION:
      return !IsRefusedFunction(a2);
    case SQLITE_UPDATE:
      // The first use of a table-valued function (json_each) on a connection
      // asks for UPDATE of sqlite_master while SQLite builds its table; no
      // code doing so survives. A real UPDATE of sqlite_master is still
      // refused by sqlite3_stmt_readonly, DEFENSIVE and query_only.
      return IsSchemaTable(a1);
    default:
      return false;
  }
}

bool DdlAllows(int action, const char* a1, const char* a2) {
  switch (action) {
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
    case SQLITE_PRAGMA:
    case SQLITE_TRANSACTION:
    case SQLITE_SAVEPOINT:
      return false;
    case SQLITE_FUNCTION:
      return !IsRefusedFunction(a2);
    default:
      return true;
  }
}

}  // namespace

int Authorize(void* arg, int action, const char* a1, const char* a2, const char* db_name,
              const char* trigger_or_view) {
  auto* state = static_cast<SqlAuthorizerState*>(arg);
  bool allowed = true;
  switch (state->mode) {
    case Mode::kInternal:
      allowed = true;
      break;
    case Mode::kDdl:
      allowed = DdlAllows(action, a1, a2);
      break;
    case Mode::kQuery:
      allowed = QueryAllows(action, a1, a2);
      break;
  }
  if (!allowed) {
    bool schema_write =
        (action == SQLITE_INSERT || action == SQLITE_UPDATE || action == SQLITE_DELETE) &&
        IsSchemaTable(a1);
    state->denials.push_back({DescribeAction(action, a1, a2), schema_write});
    return SQLITE_DENY;
  }
  if (action == SQLITE_READ && state->recording != nullptr && a1 != nullptr && !IsSchemaTable(a1)) {
    state->recording->tables.insert(a1);
    if (a2 != nullptr && *a2 != '\0') state->recording->columns.insert(std::string(a1) + "." + a2);
  }
  return SQLITE_OK;
}

size_t SkipTrivia(std::string_view s, size_t i) {
  while (i < s.size()) {
    char c = s[i];
    if (c == ';' || std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '-' && i + 1 < s.size() && s[i + 1] == '-') {
      size_t nl = s.find('\n', i);
      i = nl == std::string_view::npos ? s.size() : nl + 1;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      size_t end = s.find("*/", i + 2);
      i = end == std::string_view::npos ? s.size() : end + 2;
    } else {
      break;
    }
  }
  return i;
}

std::string LeadingKeywords(std::string_view sql) {
  auto word_at = [&](size_t& i) {
    i = SkipTrivia(sql, i);
    std::string w;
    while (i < sql.size() && (std::isalpha(static_cast<unsigned char>(sql[i])) || sql[i] == '_')) {
      w += static_cast<char>(std::toupper(static_cast<unsigned char>(sql[i])));
      ++i;
    }
    return w;
  };
  size_t i = 0;
  std::string out = word_at(i);
  if (out == "CREATE" || out == "DROP" || out == "ALTER") {
    static constexpr std::string_view kObjectWords[] = {"TEMP",  "TEMPORARY", "UNIQUE", "VIRTUAL",
                                                        "TABLE", "INDEX",     "VIEW",   "TRIGGER"};
    while (true) {
      size_t j = i;
      std::string w = word_at(j);
      if (std::find(std::begin(kObjectWords), std::end(kObjectWords), w) ==
          std::end(kObjectWords)) {
        break;
      }
      out += ' ';
      out += w;
      i = j;
    }
  }
  return out;
}

Status Refusal(const SqlAuthorizerState& state, std::string_view sql) {
  std::string what;
  for (const auto& d : state.denials) {
    if (!d.schema_write) {
      what = d.what;
      break;
    }
  }
  if (what.empty()) what = LeadingKeywords(sql);
  if (what.empty()) what = "this statement";
  std::string m = kRefusedPrefix + what + " is not allowed";
  if (state.mode == Mode::kQuery && what.rfind("function ", 0) != 0) m += " (read-only)";
  return Status::InvalidArgument(std::move(m));
}

bool IsWriteVerb(std::string_view verb) {
  static constexpr std::string_view kWriteVerbs[] = {
      "INSERT", "REPLACE", "UPDATE",   "DELETE",    "CREATE",  "DROP",    "ALTER",
      "ATTACH", "DETACH",  "PRAGMA",   "VACUUM",    "REINDEX", "ANALYZE", "BEGIN",
      "COMMIT", "END",     "ROLLBACK", "SAVEPOINT", "RELEASE"};
  std::string_view first = verb.substr(0, verb.find(' '));
  return std::find(std::begin(kWriteVerbs), std::end(kWriteVerbs), first) != std::end(kWriteVerbs);
}

bool IsReadVerb(std::string_view verb) {
  static constexpr std::string_view kReadVerbs[] = {"SELECT", "WITH", "VALUES", "EXPLAIN"};
  return std::find(std::begin(kReadVerbs), std::end(kReadVerbs), verb) != std::end(kReadVerbs);
}

bool IsSqlRefusal(const Status& status) {
  return status.code() == StatusCode::kInvalidArgument &&
         status.message().rfind(kRefusedPrefix, 0) == 0;
}

}  // namespace flowrag
