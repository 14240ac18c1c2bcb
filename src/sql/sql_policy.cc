// The read-only policy of ReadOnlyDatabase: the authorizer (which actions
// each mode allows, the allowed functions and pragmas, recording reads), the
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

// The functions a statement may call (the allow list of sql_policy.h), lower
// case and sorted for binary search. Anything else, including functions a
// later SQLite or an extension adds, is refused.
// clang-format off
constexpr std::string_view kAllowedFunctions[] = {
    "->", "->>", "abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "avg",
    "ceil", "ceiling", "char", "coalesce", "concat", "concat_ws", "cos", "cosh", "count",
    "cume_dist", "current_date", "current_time", "current_timestamp", "date", "datetime",
    "degrees", "dense_rank", "exp", "first_value", "floor", "format", "glob", "group_concat",
    "hex", "ifnull", "iif", "instr", "json", "json_array", "json_array_length", "json_extract",
    "json_group_array", "json_group_object", "json_insert", "json_object", "json_patch",
    "json_quote", "json_remove", "json_replace", "json_set", "json_type", "json_valid",
    "julianday", "lag", "last_value", "lead", "length", "like", "likelihood", "likely", "ln",
    "log", "log10", "log2", "lower", "ltrim", "max", "min", "mod", "nth_value", "ntile",
    "nullif", "octet_length", "percent_rank", "pi", "pow", "power", "printf", "quote",
    "radians", "random", "randomblob", "rank", "replace", "round", "row_number", "rtrim",
    "sign", "sin", "sinh", "sqrt", "strftime", "string_agg", "substr", "substring", "sum",
    "tan", "tanh", "time", "timediff", "total", "trim", "trunc", "typeof", "unhex", "unicode",
    "unixepoch", "unlikely", "upper", "zeroblob",
};
// clang-format on

// The read-only introspection pragmas (also as pragma_<name> table-valued
// functions), sorted.
constexpr std::string_view kAllowedPragmas[] = {
    "foreign_key_list", "index_info", "index_list", "table_info", "table_xinfo",
};

static_assert(std::is_sorted(std::begin(kAllowedFunctions), std::end(kAllowedFunctions)));
static_assert(std::is_sorted(std::begin(kAllowedPragmas), std::end(kAllowedPragmas)));

template <size_t N>
bool InSortedList(const std::string_view (&list)[N], const char* name) {
  if (name == nullptr) return false;
  const std::string lower = ToLowerAscii(name);
  return std::binary_search(std::begin(list), std::end(list), std::string_view(lower));
}

bool IsAllowedFunction(const char* name) { return InSortedList(kAllowedFunctions, name); }

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
      return IsAllowedFunction(a2);
    case SQLITE_PRAGMA:
      return IsAllowedPragma(a1);
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

// The writes SQLite makes to the schema table while it creates a table or
// index (and sqlite_sequence for AUTOINCREMENT).
bool IsSchemaBookkeeping(int action, const char* a1) {
  switch (action) {
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
      return IsSchemaTable(a1) || (a1 != nullptr && EqualsIgnoreCase(a1, "sqlite_sequence"));
    default:
      return false;
  }
}

// kSchemaDdl: CREATE TABLE and CREATE INDEX only.
bool SchemaDdlAllows(int action, const char* a1, const char* a2) {
  switch (action) {
    case SQLITE_CREATE_TABLE:
    case SQLITE_CREATE_INDEX:
    case SQLITE_READ:     // CREATE INDEX reads its table's columns
    case SQLITE_REINDEX:  // ... and fills the index as a REINDEX does
      return true;
    case SQLITE_FUNCTION:  // CHECK constraints, index expressions
      return IsAllowedFunction(a2);
    default:
      return IsSchemaBookkeeping(action, a1);
  }
}

// kDdl: also views and sample rows (INSERT ... VALUES / SELECT).
bool DdlAllows(int action, const char* a1, const char* a2) {
  switch (action) {
    case SQLITE_CREATE_VIEW:
    case SQLITE_INSERT:
    case SQLITE_SELECT:
    case SQLITE_RECURSIVE:
      return true;
    default:
      return SchemaDdlAllows(action, a1, a2);
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
    case Mode::kSchemaDdl:
      allowed = SchemaDdlAllows(action, a1, a2);
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
  if (action == SQLITE_PRAGMA && state->mode == Mode::kQuery) state->allowed_pragma = true;
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

bool IsAllowedPragma(const char* name) { return InSortedList(kAllowedPragmas, name); }

bool IsReadVerb(std::string_view verb) {
  static constexpr std::string_view kReadVerbs[] = {"SELECT", "WITH", "VALUES", "EXPLAIN"};
  return std::find(std::begin(kReadVerbs), std::end(kReadVerbs), verb) != std::end(kReadVerbs);
}

bool IsSqlRefusal(const Status& status) {
  return status.code() == StatusCode::kInvalidArgument &&
         status.message().rfind(kRefusedPrefix, 0) == 0;
}

}  // namespace flowrag
