// Spider 1.0 loaders: tables.json schemas (every index range-checked), dev.json
// tasks, and the gold tables/columns of a question from Spider's parsed SQL
// tree (GoldWalker). Spider 2.0-lite is in spider2_data.cc.
#include "sql/spider_data.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/encoding.h"
#include "common/text.h"
#include "sql/data_files.h"

namespace flowrag {
namespace {

using Json = nlohmann::json;

bool IsInt(const Json& v) { return v.is_number_integer(); }

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

// db_id and the table names (original and natural, as many of each; no two
// original names equal but for case: SQL names are case-insensitive, so
// "concert" and "conceRt" would be one table to the schema graph
// (SchemaGraph::FindTable), whose JSON form would then join the wrong
// tables when read back).
Status ReadTables(const Json& j, SpiderSchema* s) {
  auto db = j.find("db_id");
  if (db == j.end() || !db->is_string()) {
    return Status::InvalidArgument("db_id: expected a string");
  }
  s->db_id = db->get<std::string>();
  FLOWRAG_RETURN_IF_ERROR(StringList(j, "table_names_original", &s->table_names_original));
  FLOWRAG_RETURN_IF_ERROR(StringList(j, "table_names", &s->table_names));
  if (s->table_names.size() != s->table_names_original.size()) {
    return Status::InvalidArgument(
        "table_names: expected " + std::to_string(s->table_names_original.size()) +
        " names like table_names_original, got " + std::to_string(s->table_names.size()));
  }
  std::map<std::string, size_t> table_keys;
  for (size_t t = 0; t < s->table_names_original.size(); ++t) {
    auto [at, fresh] = table_keys.emplace(ToLowerAscii(s->table_names_original[t]), t);
    if (!fresh) {
      return Status::InvalidArgument("table_names_original[" + std::to_string(t) + "]: \"" +
                                     EscapeForMessage(s->table_names_original[t], 60) +
                                     "\" names the same table as [" + std::to_string(at->second) +
                                     "] (SQL names are case-insensitive)");
    }
  }
  return Status::Ok();
}

// The columns: [table index, name] original and natural, and their types,
// as many of each; column 0 is "*" (table -1), every other one in a table,
// no two of a table equal but for case.
Status ReadColumns(const Json& j, SpiderSchema* s) {
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
  const int num_tables = static_cast<int>(s->table_names_original.size());
  std::map<std::string, size_t> column_keys;  // "<table index>.<lower-case name>"
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
    if (!star) {
      auto [at, fresh] =
          column_keys.emplace(std::to_string(t) + "." + ToLowerAscii(original[c].second), c);
      if (!fresh) {
        return Status::InvalidArgument(
            "column_names_original[" + std::to_string(c) + "]: \"" +
            EscapeForMessage(original[c].second, 60) + "\" names the same column of table " +
            std::to_string(t) + " as [" + std::to_string(at->second) +
            "] (SQL names are case-insensitive)");
      }
    }
    s->columns.push_back({t, original[c].second, natural[c].second, types[c]});
  }
  return Status::Ok();
}

// primary_keys (column indexes; a composite key as a list of them) and
// foreign_keys ([column, column] pairs), every index in range.
Status ReadKeys(const Json& j, SpiderSchema* s) {
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
            CheckColumn(k[m], s->columns.size(), where + "[" + std::to_string(m) + "]", &c));
        s->primary_keys.push_back(c);
      }
    } else {
      int c = 0;
      FLOWRAG_RETURN_IF_ERROR(CheckColumn(k, s->columns.size(), where, &c));
      s->primary_keys.push_back(c);
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
    FLOWRAG_RETURN_IF_ERROR(CheckColumn(p[0], s->columns.size(), where + "[0]", &from));
    FLOWRAG_RETURN_IF_ERROR(CheckColumn(p[1], s->columns.size(), where + "[1]", &to));
    s->foreign_keys.emplace_back(from, to);
  }
  return Status::Ok();
}

Result<SpiderSchema> ParseSpiderSchema(const Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("expected an object");
  SpiderSchema s;
  FLOWRAG_RETURN_IF_ERROR(ReadTables(j, &s));
  FLOWRAG_RETURN_IF_ERROR(ReadColumns(j, &s));
  FLOWRAG_RETURN_IF_ERROR(ReadKeys(j, &s));
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

}  // namespace flowrag
