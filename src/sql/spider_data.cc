#include "sql/spider_data.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <utility>

#include "common/file_reader.h"
#include "common/json_errors.h"
#include "sql/safe_exec.h"

namespace flowrag {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

Result<std::string> ReadText(const std::string& path) {
  FLOWRAG_ASSIGN_OR_RETURN(FilePtr file, OpenFile(path));
  std::string out;
  char block[1 << 16];
  while (true) {
    const size_t n = std::fread(block, 1, sizeof(block), file.get());
    out.append(block, n);
    if (n < sizeof(block)) {
      if (std::ferror(file.get())) return OsError(path, "read failed", errno != 0 ? errno : EIO);
      break;
    }
  }
  if (out.compare(0, 3, "\xEF\xBB\xBF") == 0) out.erase(0, 3);
  return out;
}

Result<Json> ParseJson(std::string_view text, const std::string& where, bool single_line) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(where + ": invalid JSON (" +
                                   CleanJsonError(e.what(), single_line) + ")");
  }
}

Result<Json> ReadJsonFile(const std::string& path) {
  FLOWRAG_ASSIGN_OR_RETURN(std::string text, ReadText(path));
  return ParseJson(text, path, /*single_line=*/false);
}

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Python's json.dump writes NaN, Infinity and -Infinity (pandas' missing
// values in Spider 2.0 sample rows); strict JSON has no such literals. They
// become null outside strings; everything else is kept byte for byte.
std::string NonFiniteToNull(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (i == 0 || !IsWordChar(text[i - 1])) {
      bool replaced = false;
      for (std::string_view word : {"NaN", "Infinity", "-Infinity"}) {
        const size_t end = i + word.size();
        if (text.substr(i, word.size()) == word && (end == text.size() || !IsWordChar(text[end]))) {
          out += "null";
          i = end - 1;
          replaced = true;
          break;
        }
      }
      if (replaced) continue;
    }
    out += c;
  }
  return out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsInt(const Json& v) { return v.is_number_integer(); }

// A list of strings, or an error "<field>: expected a list of strings".
Status StringList(const Json& obj, const char* field, std::vector<std::string>* out) {
  auto it = obj.find(field);
  if (it == obj.end() || !it->is_array()) {
    return Status::InvalidArgument(std::string(field) + ": expected a list of strings");
  }
  out->clear();
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string()) {
      return Status::InvalidArgument(std::string(field) + "[" + std::to_string(i) +
                                     "]: expected a string");
    }
    out->push_back((*it)[i].get<std::string>());
  }
  return Status::Ok();
}

// A [table index, name] list as in column_names(_original).
Status ColumnPairs(const Json& obj, const char* field,
                   std::vector<std::pair<int, std::string>>* out) {
  auto it = obj.find(field);
  if (it == obj.end() || !it->is_array()) {
    return Status::InvalidArgument(std::string(field) + ": expected a list of [table index, name]");
  }
  out->clear();
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& p = (*it)[i];
    if (!p.is_array() || p.size() != 2 || !IsInt(p[0]) || !p[1].is_string()) {
      return Status::InvalidArgument(std::string(field) + "[" + std::to_string(i) +
                                     "]: expected [table index, name]");
    }
    out->emplace_back(p[0].get<int>(), p[1].get<std::string>());
  }
  return Status::Ok();
}

Status CheckColumn(const Json& v, size_t num_columns, const std::string& where, int* out) {
  if (!IsInt(v)) return Status::InvalidArgument(where + ": expected a column index");
  const int64_t c = v.get<int64_t>();
  if (c < 0 || c >= static_cast<int64_t>(num_columns)) {
    return Status::InvalidArgument(where + ": column index " + std::to_string(c) +
                                   " out of range (" + std::to_string(num_columns) + " columns)");
  }
  *out = static_cast<int>(c);
  return Status::Ok();
}

Result<SpiderSchema> ParseSpiderSchema(const Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("expected an object");
  SpiderSchema s;
  auto db = j.find("db_id");
  if (db == j.end() || !db->is_string()) {
    return Status::InvalidArgument("db_id: expected a string");
  }
  s.db_id = db->get<std::string>();
  FLOWRAG_RETURN_IF_ERROR(StringList(j, "table_names_original", &s.table_names_original));
  FLOWRAG_RETURN_IF_ERROR(StringList(j, "table_names", &s.table_names));
  if (s.table_names.size() != s.table_names_original.size()) {
    return Status::InvalidArgument(
        "table_names: expected " + std::to_string(s.table_names_original.size()) +
        " names like table_names_original, got " + std::to_string(s.table_names.size()));
  }
  std::vector<std::pair<int, std::string>> original, natural;
  FLOWRAG_RETURN_IF_ERROR(ColumnPairs(j, "column_names_original", &original));
  FLOWRAG_RETURN_IF_ERROR(ColumnPairs(j, "column_names", &natural));
  std::vector<std::string> types;
  FLOWRAG_RETURN_IF_ERROR(StringList(j, "column_types", &types));
  if (natural.size() != original.size() || types.size() != original.size()) {
    return Status::InvalidArgument(
        "column_names/column_types: expected as many entries as column_names_original (" +
        std::to_string(original.size()) + "), got " + std::to_string(natural.size()) + " and " +
        std::to_string(types.size()));
  }
  const int num_tables = static_cast<int>(s.table_names_original.size());
  for (size_t c = 0; c < original.size(); ++c) {
    const int t = original[c].first;
    const bool star = c == 0;
    const bool bad = star ? t != -1 : (t < 0 || t >= num_tables || natural[c].first != t);
    if (bad) {
      return Status::InvalidArgument(
          "column_names_original[" + std::to_string(c) + "]: table index " + std::to_string(t) +
          (star ? ": expected -1 for column 0 (\"*\")"
                : ": expected a table index in [0, " + std::to_string(num_tables) +
                      ") matching column_names"));
    }
    s.columns.push_back({t, original[c].second, natural[c].second, types[c]});
  }
  auto pk = j.find("primary_keys");
  if (pk == j.end() || !pk->is_array()) {
    return Status::InvalidArgument("primary_keys: expected a list of column indexes");
  }
  for (size_t i = 0; i < pk->size(); ++i) {
    const Json& k = (*pk)[i];
    const std::string where = "primary_keys[" + std::to_string(i) + "]";
    if (k.is_array()) {  // a composite key
      for (size_t m = 0; m < k.size(); ++m) {
        int c = 0;
        FLOWRAG_RETURN_IF_ERROR(
            CheckColumn(k[m], s.columns.size(), where + "[" + std::to_string(m) + "]", &c));
        s.primary_keys.push_back(c);
      }
    } else {
      int c = 0;
      FLOWRAG_RETURN_IF_ERROR(CheckColumn(k, s.columns.size(), where, &c));
      s.primary_keys.push_back(c);
    }
  }
  auto fk = j.find("foreign_keys");
  if (fk == j.end() || !fk->is_array()) {
    return Status::InvalidArgument("foreign_keys: expected a list of [column, column] pairs");
  }
  for (size_t i = 0; i < fk->size(); ++i) {
    const Json& p = (*fk)[i];
    const std::string where = "foreign_keys[" + std::to_string(i) + "]";
    if (!p.is_array() || p.size() != 2) {
      return Status::InvalidArgument(where + ": expected a [column, column] pair");
    }
    int from = 0, to = 0;
    FLOWRAG_RETURN_IF_ERROR(CheckColumn(p[0], s.columns.size(), where + "[0]", &from));
    FLOWRAG_RETURN_IF_ERROR(CheckColumn(p[1], s.columns.size(), where + "[1]", &to));
    s.foreign_keys.emplace_back(from, to);
  }
  return s;
}

// ---------------------------------------------------------------------------
// Spider's parsed SQL (process_sql.py):
//   sql       {select: [distinct, [[agg, val_unit]...]], from: {table_units:
//             [["table_unit", t] | ["sql", sql]...], conds: condition}, where:
//             condition, groupBy: [col_unit...], having: condition, orderBy:
//             [] | ["asc"|"desc", [val_unit...]], limit, intersect|union|except:
//             sql | null}
//   condition [cond_unit, "and"|"or", cond_unit, ...]
//   cond_unit [not, op, val_unit, val1, val2]
//   val_unit  [unit_op, col_unit, col_unit | null]
//   col_unit  [agg, column, distinct]
//   val       number | string | sql | col_unit | null
class GoldWalker {
 public:
  GoldWalker(const SpiderSchema& schema, LinkingGold* out) : schema_(schema), out_(out) {}

  Status Sql(const Json& sql, const std::string& at) {
    if (!sql.is_object()) return Bad(at, "expected a parsed query object");
    if (++depth_ > kMaxDepth) return Bad(at, "queries nested too deeply");
    const Json& from = Field(sql, "from");
    if (!from.is_object()) return Bad(at + ".from", "expected an object");
    const Json& units = Field(from, "table_units");
    if (!units.is_array()) return Bad(at + ".from.table_units", "expected a list");
    for (size_t i = 0; i < units.size(); ++i) {
      const std::string where = at + ".from.table_units[" + std::to_string(i) + "]";
      const Json& u = units[i];
      if (!u.is_array() || u.size() != 2 || !u[0].is_string()) {
        return Bad(where, "expected [\"table_unit\", index] or [\"sql\", query]");
      }
      if (u[0] == "table_unit") {
        const int64_t t = IsInt(u[1]) ? u[1].get<int64_t>() : -1;
        if (t < 0 || t >= static_cast<int64_t>(schema_.table_names_original.size())) {
          return Bad(where, "table index " + u[1].dump() + " out of range (" +
                                std::to_string(schema_.table_names_original.size()) + " tables)");
        }
        out_->tables.insert(schema_.table_names_original[static_cast<size_t>(t)]);
      } else if (u[0] == "sql") {
        FLOWRAG_RETURN_IF_ERROR(Sql(u[1], where + "[1]"));
      } else {
        return Bad(where, "unknown table unit type " + u[0].dump());
      }
    }
    FLOWRAG_RETURN_IF_ERROR(Condition(Field(from, "conds"), at + ".from.conds"));

    const Json& select = Field(sql, "select");
    if (!select.is_array() || select.size() != 2 || !select[1].is_array()) {
      return Bad(at + ".select", "expected [distinct, [[agg, val_unit]...]]");
    }
    for (size_t i = 0; i < select[1].size(); ++i) {
      const std::string where = at + ".select[1][" + std::to_string(i) + "]";
      const Json& item = select[1][i];
      if (!item.is_array() || item.size() != 2) return Bad(where, "expected [agg, val_unit]");
      FLOWRAG_RETURN_IF_ERROR(ValUnit(item[1], where + "[1]"));
    }
    FLOWRAG_RETURN_IF_ERROR(Condition(Field(sql, "where"), at + ".where"));
    const Json& group = Field(sql, "groupBy");
    if (!group.is_null()) {
      if (!group.is_array()) return Bad(at + ".groupBy", "expected a list of col_units");
      for (size_t i = 0; i < group.size(); ++i) {
        FLOWRAG_RETURN_IF_ERROR(ColUnit(group[i], at + ".groupBy[" + std::to_string(i) + "]"));
      }
    }
    FLOWRAG_RETURN_IF_ERROR(Condition(Field(sql, "having"), at + ".having"));
    const Json& order = Field(sql, "orderBy");
    if (!order.is_null() && !(order.is_array() && order.empty())) {
      if (!order.is_array() || order.size() != 2 || !order[1].is_array()) {
        return Bad(at + ".orderBy", "expected [] or [\"asc\"|\"desc\", [val_unit...]]");
      }
      for (size_t i = 0; i < order[1].size(); ++i) {
        FLOWRAG_RETURN_IF_ERROR(
            ValUnit(order[1][i], at + ".orderBy[1][" + std::to_string(i) + "]"));
      }
    }
    for (const char* op : {"intersect", "union", "except"}) {
      const Json& other = Field(sql, op);
      if (!other.is_null()) FLOWRAG_RETURN_IF_ERROR(Sql(other, at + "." + op));
    }
    --depth_;
    return Status::Ok();
  }

 private:
  static constexpr int kMaxDepth = 64;

  static const Json& Field(const Json& obj, const char* name) {
    static const Json kNull;
    auto it = obj.find(name);
    return it == obj.end() ? kNull : *it;
  }
  static Status Bad(const std::string& at, const std::string& what) {
    return Status::InvalidArgument(at + ": " + what);
  }

  Status Condition(const Json& cond, const std::string& at) {
    if (cond.is_null()) return Status::Ok();
    if (!cond.is_array()) return Bad(at, "expected a list of cond_units and \"and\"/\"or\"");
    for (size_t i = 0; i < cond.size(); ++i) {
      const Json& c = cond[i];
      if (c.is_string()) continue;  // "and" / "or"
      const std::string where = at + "[" + std::to_string(i) + "]";
      if (!c.is_array() || c.size() != 5)
        return Bad(where, "expected [not, op, val_unit, val1, val2]");
      FLOWRAG_RETURN_IF_ERROR(ValUnit(c[2], where + "[2]"));
      FLOWRAG_RETURN_IF_ERROR(Value(c[3], where + "[3]"));
      FLOWRAG_RETURN_IF_ERROR(Value(c[4], where + "[4]"));
    }
    return Status::Ok();
  }

  Status Value(const Json& v, const std::string& at) {
    if (v.is_object()) return Sql(v, at);
    if (v.is_array()) return ColUnit(v, at);  // a column on the right (joins)
    return Status::Ok();                      // literal or null
  }

  Status ValUnit(const Json& v, const std::string& at) {
    if (!v.is_array() || v.size() != 3) return Bad(at, "expected [unit_op, col_unit, col_unit]");
    FLOWRAG_RETURN_IF_ERROR(ColUnit(v[1], at + "[1]"));
    return ColUnit(v[2], at + "[2]");
  }

  Status ColUnit(const Json& v, const std::string& at) {
    if (v.is_null()) return Status::Ok();
    if (!v.is_array() || v.size() != 3 || !IsInt(v[1])) {
      return Bad(at, "expected [agg, column index, distinct]");
    }
    const int64_t c = v[1].get<int64_t>();
    if (c < 0 || c >= static_cast<int64_t>(schema_.columns.size())) {
      return Bad(at, "column index " + std::to_string(c) + " out of range (" +
                         std::to_string(schema_.columns.size()) + " columns)");
    }
    if (c != 0) out_->columns.insert(schema_.QualifiedColumn(static_cast<int>(c)));
    return Status::Ok();
  }

  const SpiderSchema& schema_;
  LinkingGold* out_;
  int depth_ = 0;
};

// ---------------------------------------------------------------------------
// Spider 2.0-lite

std::string CellText(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "NULL";
  return v.dump();
}

Result<Spider2Table> ParseSpider2TableJson(const Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("expected an object");
  Spider2Table t;
  auto name = j.find("table_name");
  if (name == j.end() || !name->is_string()) {
    return Status::InvalidArgument("table_name: expected a string");
  }
  t.name = name->get<std::string>();
  FLOWRAG_RETURN_IF_ERROR(StringList(j, "column_names", &t.columns));
  if (j.contains("column_types")) FLOWRAG_RETURN_IF_ERROR(StringList(j, "column_types", &t.types));
  if (j.contains("description") && !j["description"].is_null()) {
    FLOWRAG_RETURN_IF_ERROR(StringList(j, "description", &t.descriptions));
  }
  if (t.types.size() > t.columns.size() || t.descriptions.size() > t.columns.size()) {
    return Status::InvalidArgument("column_types/description: more entries than column_names (" +
                                   std::to_string(t.columns.size()) + ")");
  }
  t.types.resize(t.columns.size());
  t.descriptions.resize(t.columns.size());
  auto rows = j.find("sample_rows");
  if (rows != j.end() && !rows->is_null()) {
    if (!rows->is_array()) return Status::InvalidArgument("sample_rows: expected a list");
    for (size_t r = 0; r < rows->size(); ++r) {
      const Json& row = (*rows)[r];
      std::vector<std::string> cells(t.columns.size());
      if (row.is_object()) {  // {column: value}
        for (size_t c = 0; c < t.columns.size(); ++c) {
          auto it = row.find(t.columns[c]);
          if (it != row.end()) cells[c] = CellText(*it);
        }
      } else if (row.is_array() && row.size() == t.columns.size()) {
        for (size_t c = 0; c < row.size(); ++c) cells[c] = CellText(row[c]);
      } else {
        return Status::InvalidArgument("sample_rows[" + std::to_string(r) +
                                       "]: expected an object keyed by column or a list of " +
                                       std::to_string(t.columns.size()) + " values");
      }
      t.sample_rows.push_back(std::move(cells));
    }
  }
  return t;
}

bool IsBareTypeName(std::string_view word) {
  static const std::set<std::string> kTypes = {
      "integer", "int",     "bigint",   "smallint",  "tinyint", "mediumint", "text",
      "real",    "float",   "double",   "numeric",   "decimal", "num",       "boolean",
      "bool",    "date",    "datetime", "timestamp", "time",    "blob",      "json",
      "jsonb",   "varchar", "char",     "string"};
  return kTypes.count(Lower(word)) > 0;
}

std::string_view Trim(std::string_view s) {
  const char* kSpace = " \t\r\n";
  const size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

// "Db-IMDB" and "DB_IMDB" both become "db_imdb".
std::string FolderKey(std::string_view name) {
  std::string k = Lower(name);
  std::replace(k.begin(), k.end(), '-', '_');
  return k;
}

// The gold SQL as one statement: trailing blanks and semicolons removed.
std::string_view StatementText(std::string_view sql) {
  sql = Trim(sql);
  while (!sql.empty() && sql.back() == ';') sql = Trim(sql.substr(0, sql.size() - 1));
  return sql;
}

// The DDL of `db` as SQLite will take it: pandas-style statements that fail
// alone are replaced by their quoted form.
std::vector<std::string> SchemaDdl(const Spider2Database& db) {
  std::vector<std::string> ddl;
  for (const Spider2Table& t : db.tables) {
    if (Trim(t.ddl).empty()) continue;
    std::string quoted = QuoteBareColumnNames(t.ddl);
    if (quoted != t.ddl && !ReadOnlyDatabase::FromDdl({t.ddl}).ok()) {
      ddl.push_back(std::move(quoted));
    } else {
      ddl.push_back(t.ddl);
    }
  }
  return ddl;
}

}  // namespace

std::string SpiderSchema::QualifiedColumn(int column) const {
  const SpiderColumn& c = columns[static_cast<size_t>(column)];
  return table_names_original[static_cast<size_t>(c.table)] + "." + c.name_original;
}

Result<std::vector<SpiderSchema>> LoadSpiderTables(const std::string& tables_json) {
  FLOWRAG_ASSIGN_OR_RETURN(Json j, ReadJsonFile(tables_json));
  if (!j.is_array()) {
    return Status::InvalidArgument(tables_json + ": expected a list of schemas");
  }
  std::vector<SpiderSchema> out;
  out.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    Result<SpiderSchema> s = ParseSpiderSchema(j[i]);
    if (!s.ok()) {
      std::string where = tables_json + ": schema " + std::to_string(i);
      if (j[i].is_object() && j[i].contains("db_id") && j[i]["db_id"].is_string()) {
        where += " (db_id \"" + j[i]["db_id"].get<std::string>() + "\")";
      }
      return s.status().WithContext(where);
    }
    out.push_back(std::move(s).value());
  }
  return out;
}

Result<LinkingGold> SpiderGoldFromParsed(const nlohmann::json& sql, const SpiderSchema& schema) {
  LinkingGold gold;
  GoldWalker walker(schema, &gold);
  FLOWRAG_RETURN_IF_ERROR(walker.Sql(sql, "sql"));
  return gold;
}

Result<std::vector<SqlTask>> LoadSpiderTasks(const std::string& dev_json,
                                             const std::vector<SpiderSchema>& schemas) {
  std::map<std::string, const SpiderSchema*> by_id;
  for (const SpiderSchema& s : schemas) by_id.emplace(s.db_id, &s);
  FLOWRAG_ASSIGN_OR_RETURN(Json j, ReadJsonFile(dev_json));
  if (!j.is_array()) return Status::InvalidArgument(dev_json + ": expected a list of questions");
  std::vector<SqlTask> out;
  out.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    const Json& q = j[i];
    std::string where = dev_json + ": question " + std::to_string(i);
    if (!q.is_object()) return Status::InvalidArgument(where + ": expected an object");
    for (const char* field : {"db_id", "question", "query"}) {
      if (!q.contains(field) || !q[field].is_string()) {
        return Status::InvalidArgument(where + ": " + field + ": expected a string");
      }
    }
    SqlTask t;
    t.id = "spider-dev-" + std::to_string(i);
    t.db_id = q["db_id"].get<std::string>();
    t.question = q["question"].get<std::string>();
    t.gold_sql = q["query"].get<std::string>();
    where += " (db_id \"" + t.db_id + "\")";
    auto schema = by_id.find(t.db_id);
    if (schema == by_id.end()) {
      return Status::InvalidArgument(where + ": no schema has this db_id");
    }
    if (!q.contains("sql")) return Status::InvalidArgument(where + ": sql: missing parsed query");
    Result<LinkingGold> gold = SpiderGoldFromParsed(q["sql"], *schema->second);
    if (!gold.ok()) return gold.status().WithContext(where);
    t.gold = std::move(gold).value();
    out.push_back(std::move(t));
  }
  return out;
}

Result<std::vector<std::vector<std::string>>> ParseCsvRecords(std::string_view text,
                                                              const std::string& path) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  size_t line = 1;
  size_t i = 0;
  const size_t n = text.size();
  if (n == 0) return records;
  while (true) {
    // At the start of a field.
    if (i < n && text[i] == '"') {
      const size_t open_line = line;
      ++i;
      while (true) {
        if (i >= n) {
          return Status::InvalidArgument(path + ":" + std::to_string(open_line) +
                                         ": unterminated quoted field");
        }
        const char c = text[i++];
        if (c == '"') {
          if (i < n && text[i] == '"') {
            field += '"';
            ++i;
          } else {
            break;
          }
        } else {
          if (c == '\n') ++line;
          field += c;
        }
      }
      if (i < n && text[i] == '\r' && i + 1 < n && text[i + 1] == '\n') ++i;
      if (i < n && text[i] != ',' && text[i] != '\n') {
        return Status::InvalidArgument(path + ":" + std::to_string(line) +
                                       ": expected ',' or end of line after a closing quote");
      }
    } else {
      while (i < n && text[i] != ',' && text[i] != '\n') field += text[i++];
      if (!field.empty() && field.back() == '\r' && (i >= n || text[i] == '\n')) field.pop_back();
    }
    record.push_back(std::move(field));
    field.clear();
    if (i < n && text[i] == ',') {
      ++i;
      continue;
    }
    // End of record: '\n' or end of text.
    records.push_back(std::move(record));
    record.clear();
    if (i >= n) break;
    ++i;  // '\n'
    ++line;
    if (i >= n) break;  // a trailing newline ends the last record
  }
  return records;
}

std::string QuoteBareColumnNames(std::string_view create_table) {
  const size_t open = create_table.find('(');
  const size_t close = create_table.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::string(create_table);
  }
  const std::string_view head = Trim(create_table.substr(0, open));
  if (Lower(head.substr(0, 12)) != "create table") return std::string(create_table);
  const std::string_view body = create_table.substr(open + 1, close - open - 1);
  std::string out(create_table.substr(0, open + 1));
  size_t start = 0;
  bool any = false;
  while (start <= body.size()) {
    size_t end = body.find('\n', start);
    if (end == std::string_view::npos) end = body.size();
    const std::string_view raw = body.substr(start, end - start);
    std::string_view item = Trim(raw);
    if (!item.empty()) {
      const bool comma = item.back() == ',';
      if (comma) item = Trim(item.substr(0, item.size() - 1));
      const size_t space = item.find_last_of(" \t");
      if (space == std::string_view::npos) return std::string(create_table);
      const std::string_view name = Trim(item.substr(0, space));
      const std::string_view type = item.substr(space + 1);
      if (name.empty() || name.find(',') != std::string_view::npos || !IsBareTypeName(type)) {
        return std::string(create_table);
      }
      const size_t indent = raw.find_first_not_of(" \t");
      out += raw.substr(0, indent);
      if (name.front() == '"' || name.front() == '`' || name.front() == '[') {
        out += name;
      } else {
        out += '"';
        for (char c : name) {
          if (c == '"') out += '"';
          out += c;
        }
        out += '"';
      }
      out += ' ';
      out += type;
      if (comma) out += ',';
      any = true;
    } else {
      out += raw;
    }
    if (end < body.size()) out += '\n';
    start = end + 1;
  }
  if (!any) return std::string(create_table);
  out += create_table.substr(close);
  return out;
}

Result<Spider2Database> LoadSpider2Database(const std::string& folder) {
  Spider2Database db;
  db.folder = folder;
  db.name = fs::path(folder).filename().string();
  if (db.name.empty()) db.name = fs::path(folder).parent_path().filename().string();
  const std::string ddl_path = (fs::path(folder) / "DDL.csv").string();
  FLOWRAG_ASSIGN_OR_RETURN(std::string ddl_text, ReadText(ddl_path));
  FLOWRAG_ASSIGN_OR_RETURN(auto records, ParseCsvRecords(ddl_text, ddl_path));
  if (records.empty() || records[0].size() < 2 || Lower(Trim(records[0][0])) != "table_name" ||
      Lower(Trim(records[0][1])) != "ddl") {
    return Status::InvalidArgument(ddl_path + ":1: expected the header \"table_name,DDL\"");
  }
  std::map<std::string, size_t> index;  // table name -> position in db.tables
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != 2) {
      return Status::InvalidArgument(ddl_path + ": record " + std::to_string(r + 1) +
                                     ": expected 2 fields (table_name, DDL), got " +
                                     std::to_string(records[r].size()));
    }
    Spider2Table t;
    t.name = records[r][0];
    t.ddl = records[r][1];
    if (index.count(t.name) == 0) {
      index[t.name] = db.tables.size();
      db.tables.push_back(std::move(t));
    }
  }
  std::vector<fs::path> jsons;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".json") jsons.push_back(it->path());
  }
  if (ec) return Status::IoError(folder + ": cannot list: " + ec.message());
  std::sort(jsons.begin(), jsons.end());
  for (const fs::path& p : jsons) {
    FLOWRAG_ASSIGN_OR_RETURN(std::string text, ReadText(p.string()));
    FLOWRAG_ASSIGN_OR_RETURN(Json j, ParseJson(NonFiniteToNull(text), p.string(), false));
    Result<Spider2Table> t = ParseSpider2TableJson(j);
    if (!t.ok()) return t.status().WithContext(p.string());
    auto at = index.find(t->name);
    if (at == index.end()) {
      index[t->name] = db.tables.size();
      db.tables.push_back(std::move(t).value());
    } else {
      Spider2Table& dst = db.tables[at->second];
      std::string ddl = std::move(dst.ddl);
      dst = std::move(t).value();
      dst.ddl = std::move(ddl);
    }
  }
  return db;
}

Result<std::vector<SqlTask>> LoadSpider2LiteTasks(const std::string& spider2_root) {
  const fs::path root(spider2_root);
  const fs::path sqlite_dir = root / "resource" / "databases" / "sqlite";
  const fs::path gold_dir = root / "evaluation_suite" / "gold" / "sql";
  const fs::path docs_dir = root / "resource" / "documents";

  std::map<std::string, std::string> folders;  // FolderKey -> folder name
  std::error_code ec;
  for (fs::directory_iterator it(sqlite_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory()) {
      const std::string name = it->path().filename().string();
      folders.emplace(FolderKey(name), name);
    }
  }
  if (ec) return Status::NotFound(sqlite_dir.string() + ": cannot list: " + ec.message());

  const std::string jsonl = (root / "spider2-lite.jsonl").string();
  FLOWRAG_ASSIGN_OR_RETURN(std::string text, ReadText(jsonl));

  struct Schema {
    std::unique_ptr<ReadOnlyDatabase> db;
    std::string error;
  };
  std::map<std::string, Schema> schemas;  // by folder name

  std::vector<SqlTask> out;
  size_t line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line = Trim(std::string_view(text).substr(start, end - start));
    start = end + 1;
    ++line_no;
    if (line.empty()) continue;
    const std::string where = jsonl + ":" + std::to_string(line_no);
    FLOWRAG_ASSIGN_OR_RETURN(Json j, ParseJson(line, where, /*single_line=*/true));
    if (!j.is_object()) return Status::InvalidArgument(where + ": expected a JSON object");
    for (const char* field : {"instance_id", "db", "question"}) {
      if (!j.contains(field) || !j[field].is_string()) {
        return Status::InvalidArgument(where + ": " + field + ": expected a string");
      }
    }
    SqlTask t;
    t.id = j["instance_id"].get<std::string>();
    if (t.id.rfind("local", 0) != 0) continue;
    const fs::path gold_path = gold_dir / (t.id + ".sql");
    if (!fs::is_regular_file(gold_path, ec)) continue;  // no public gold SQL
    t.db_id = j["db"].get<std::string>();
    t.question = j["question"].get<std::string>();
    FLOWRAG_ASSIGN_OR_RETURN(t.gold_sql, ReadText(gold_path.string()));
    const Json& knowledge = j.contains("external_knowledge") ? j["external_knowledge"] : Json();
    if (knowledge.is_string() && !knowledge.get<std::string>().empty()) {
      FLOWRAG_ASSIGN_OR_RETURN(t.evidence,
                               ReadText((docs_dir / knowledge.get<std::string>()).string()));
    } else if (!knowledge.is_null() && !knowledge.is_string()) {
      return Status::InvalidArgument(where + ": external_knowledge: expected a string or null");
    }
    auto folder = folders.find(FolderKey(t.db_id));
    if (folder == folders.end()) {
      return Status::NotFound(where + ": db \"" + t.db_id + "\": no folder under " +
                              sqlite_dir.string());
    }
    auto [it, fresh] = schemas.try_emplace(folder->second);
    Schema& schema = it->second;
    if (fresh) {
      FLOWRAG_ASSIGN_OR_RETURN(Spider2Database db,
                               LoadSpider2Database((sqlite_dir / folder->second).string()));
      Result<std::unique_ptr<ReadOnlyDatabase>> built =
          ReadOnlyDatabase::FromDdl(SchemaDdl(db), /*skip_bad=*/true);
      if (built.ok()) {
        schema.db = std::move(built).value();
      } else {
        schema.error = "schema of " + folder->second + ": " + built.status().ToString();
      }
    }
    if (schema.db == nullptr) {
      t.error = schema.error;
    } else {
      Result<SqlReadSet> reads = schema.db->Reads(StatementText(t.gold_sql));
      if (reads.ok()) {
        t.gold.tables = std::move(reads->tables);
        t.gold.columns = std::move(reads->columns);
      } else {
        t.error = "gold SQL does not prepare: " + reads.status().ToString();
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace flowrag
