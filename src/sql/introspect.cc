// SQLite introspection and the Spider / Spider 2.0-lite converters of
// schema_graph.h.
#include <algorithm>
#include <cstdint>
#include <chrono>
#include <filesystem>
#include <memory>
#include <unordered_map>

#include "common/text.h"
#include "sql/safe_exec.h"
#include "sql/schema_graph.h"
#include "sql/spider_data.h"

namespace flowrag {
namespace {

std::string Quote(std::string_view id, char q) {
  std::string out(1, q);
  for (char c : id) {
    out += c;
    if (c == q) out += c;
  }
  return out + q;
}

std::string CellText(const SqlValue& v) {
  return std::holds_alternative<std::monostate>(v) ? std::string() : SqlValueText(v);
}

int64_t CellInt(const SqlValue& v) {
  const auto* i = std::get_if<int64_t>(&v);
  return i == nullptr ? 0 : *i;
}

// Limits of a catalog statement: every row, and 30 s (the catalog must be
// read whole; sampling has its own deadline).
SqlLimits CatalogLimits() {
  SqlLimits l;
  l.max_rows = SIZE_MAX;
  l.time_limit_seconds = 30.0;
  return l;
}

// Runs a catalog query on the hardened connection; errors name the database.
Result<SqlResultSet> Query(ReadOnlyDatabase& db, const std::string& where, const std::string& sql,
                           const SqlLimits& limits = CatalogLimits()) {
  Result<SqlResultSet> r = db.Execute(sql, limits);
  if (!r.ok()) return r.status().WithContext(where);
  return r;
}

// Tables, columns (generated ones included), types, primary and foreign
// keys, through the read-only introspection pragmas the query policy allows.
// Sampling reads generated columns under the query limits like any other.
Status ReadCatalog(ReadOnlyDatabase& db, const std::string& where, SchemaGraph* g) {
  FLOWRAG_ASSIGN_OR_RETURN(
      SqlResultSet tables,
      Query(db, where,
            "SELECT name, coalesce(sql, '') LIKE 'CREATE VIRTUAL%' FROM sqlite_master WHERE "
            "type='table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid"));
  std::vector<std::string> names;
  for (const auto& row : tables.rows) {
    names.push_back(CellText(row[0]));
    const uint32_t ti = g->AddTable(names.back());
    g->tables[ti].virtual_table = CellInt(row[1]) != 0;
    // table_xinfo also lists generated columns (hidden 2 virtual, 3 stored),
    // which queries can read; a virtual table's hidden columns (1) are not.
    FLOWRAG_ASSIGN_OR_RETURN(
        SqlResultSet cols, Query(db, where, "PRAGMA table_xinfo(" + Quote(names.back(), '"') + ")"));
    for (const auto& c : cols.rows) {
      if (CellInt(c[6]) == 1) continue;
      const uint32_t ci = g->AddColumn(ti, CellText(c[1]), CellText(c[2]));
      g->columns[ci].primary_key = CellInt(c[5]) > 0;
    }
  }
  for (const std::string& t : names) {
    FLOWRAG_ASSIGN_OR_RETURN(SqlResultSet fks,
                             Query(db, where, "PRAGMA foreign_key_list(" + Quote(t, '"') + ")"));
    for (const auto& fk : fks.rows) {
      const std::string to_table = CellText(fk[2]);
      std::string to_col = CellText(fk[4]);
      if (to_col.empty()) {  // REFERENCES t without a column: its primary key
        const int64_t tt = g->FindTable(to_table);
        for (uint32_t c : tt < 0 ? std::vector<uint32_t>{} : g->tables[tt].columns) {
          if (g->columns[c].primary_key) to_col = g->columns[c].name;
        }
      }
      const int64_t from = g->FindColumn(t, CellText(fk[3]));
      const int64_t to = g->FindColumn(to_table, to_col);
      if (from >= 0 && to >= 0) {  // dangling references are skipped
        g->foreign_keys.push_back({static_cast<uint32_t>(from), static_cast<uint32_t>(to)});
      }
    }
  }
  return Status::Ok();
}

// A column a join would use: a primary key or a name whose last word is
// id / key / code / no / num ("customer_id", "SalesPersonID"), but not a bare
// "id", which every table of some schemas has and which joins nothing.
bool IsKeyLike(const SchemaGraph& g, uint32_t c) {
  const std::string split = SplitIdentifier(g.columns[c].name);
  if (split == "id") return false;
  if (g.columns[c].primary_key) return true;
  const std::string last = split.substr(split.rfind(' ') == std::string::npos ? 0 : split.rfind(' ') + 1);
  return last == "id" || last == "key" || last == "code" || last == "no" || last == "num";
}

}  // namespace

void AddImpliedJoins(SchemaGraph* g) {
  // Same key-like column name in two tables, when no declared foreign key
  // already joins the pair: the edge a user would write "USING (name)" for.
  std::unordered_map<std::string, std::vector<uint32_t>> by_name;
  for (uint32_t c = 0; c < g->columns.size(); ++c) {
    if (IsKeyLike(*g, c)) by_name[ToLowerAscii(g->columns[c].name)].push_back(c);
  }
  std::vector<std::pair<uint32_t, uint32_t>> joined;
  for (const SchemaForeignKey& fk : g->foreign_keys) {
    joined.emplace_back(g->columns[fk.from].table, g->columns[fk.to].table);
  }
  auto already = [&](uint32_t a, uint32_t b) {
    for (auto [x, y] : joined) {
      if ((x == a && y == b) || (x == b && y == a)) return true;
    }
    return false;
  };
  for (const auto& [name, cols] : by_name) {
    for (size_t i = 0; i < cols.size(); ++i) {
      for (size_t j = i + 1; j < cols.size(); ++j) {
        const uint32_t ta = g->columns[cols[i]].table, tb = g->columns[cols[j]].table;
        if (ta == tb || already(ta, tb)) continue;
        // Orient towards the table where the column is the primary key.
        const bool a_pk = g->columns[cols[i]].primary_key;
        g->foreign_keys.push_back({a_pk ? cols[j] : cols[i], a_pk ? cols[i] : cols[j], true});
      }
    }
  }
}

Status AddSamplesFromSqlite(const std::string& path, const IntrospectionOptions& options,
                            SchemaGraph* g, std::vector<std::string>* warnings) {
  FLOWRAG_ASSIGN_OR_RETURN(auto db, ReadOnlyDatabase::Open(path));
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = options.deadline;
  auto late = [&] { return Clock::now() >= deadline; };
  // The statement limits: what is left of the deadline (or the catalog's 30 s).
  auto limits = [&](size_t max_rows) {
    SqlLimits l = CatalogLimits();
    l.max_rows = max_rows;
    if (deadline != Clock::time_point::max()) {
      l.time_limit_seconds = std::min(
          l.time_limit_seconds,
          std::max(1e-3, std::chrono::duration<double>(deadline - Clock::now()).count()));
    }
    return l;
  };
  size_t done = 0;  // tables fully sampled
  for (SchemaTable& t : g->tables) {
    if (late()) break;
    if (t.virtual_table) {  // its module's code, not stored rows: not counted or sampled
      ++done;
      continue;
    }
    const std::string qt = Quote(t.name, '"');
    if (options.count_rows) {
      auto count = db->Execute("SELECT COUNT(*) FROM " + qt, limits(1));
      if (!count.ok()) {
        if (late()) break;
        ++done;
        continue;  // a table of the schema file missing from the database
      }
      t.rows = CellInt(count->rows.at(0).at(0));
    }
    bool cut = false;
    for (uint32_t ci : t.columns) {
      SchemaColumn& c = g->columns[ci];
      if (options.samples_per_column == 0) break;
      if (late()) {
        cut = true;
        break;
      }
      const std::string qc = Quote(c.name, '"');
      auto rows = db->Execute("SELECT DISTINCT " + qc + " FROM " + qt + " WHERE " + qc +
                                  " IS NOT NULL AND length(" + qc + ") BETWEEN 1 AND " +
                                  std::to_string(options.max_sample_bytes) + " LIMIT " +
                                  std::to_string(options.samples_per_column),
                              limits(options.samples_per_column));
      if (!rows.ok() || rows->rows.empty()) continue;
      c.samples.clear();
      for (const auto& row : rows->rows) c.samples.push_back(CellText(row[0]));
    }
    if (cut) break;
    ++done;
  }
  if (done < g->tables.size() && warnings != nullptr) {
    warnings->push_back(path + ": the open time limit was reached while sampling; " +
                        std::to_string(g->tables.size() - done) + " of " + std::to_string(g->tables.size()) +
                        " tables have no (or partial) row counts and sample values");
  }
  return Status::Ok();
}

Result<SchemaGraph> SchemaFromSqlite(const std::string& path, const IntrospectionOptions& options,
                                     std::vector<std::string>* warnings) {
  SchemaGraph g;
  g.name = std::filesystem::path(path).stem().string();
  {
    FLOWRAG_ASSIGN_OR_RETURN(auto db, ReadOnlyDatabase::Open(path));
    FLOWRAG_RETURN_IF_ERROR(ReadCatalog(*db, path, &g));
  }
  FLOWRAG_RETURN_IF_ERROR(AddSamplesFromSqlite(path, options, &g, warnings));
  AddImpliedJoins(&g);
  g.Finalize();
  return g;
}

SchemaGraph SchemaFromSpider(const SpiderSchema& s) {
  SchemaGraph g;
  g.name = s.db_id;
  for (size_t t = 0; t < s.table_names_original.size(); ++t) g.AddTable(s.table_names_original[t]);
  std::vector<int64_t> column_index(s.columns.size(), -1);
  for (size_t i = 0; i < s.columns.size(); ++i) {
    const SpiderColumn& c = s.columns[i];
    if (c.table < 0 || static_cast<size_t>(c.table) >= g.tables.size()) continue;  // "*"
    // The natural-language name is a description when it says more than the split name.
    std::string desc = SplitIdentifier(c.name) == SplitIdentifier(c.name_original) ? "" : c.name;
    column_index[i] = g.AddColumn(static_cast<uint32_t>(c.table), c.name_original, c.type, desc);
  }
  for (int pk : s.primary_keys) {
    if (pk >= 0 && static_cast<size_t>(pk) < column_index.size() && column_index[pk] >= 0) {
      g.columns[column_index[pk]].primary_key = true;
    }
  }
  for (auto [from, to] : s.foreign_keys) {
    if (from < 0 || to < 0 || static_cast<size_t>(from) >= column_index.size() ||
        static_cast<size_t>(to) >= column_index.size() || column_index[from] < 0 || column_index[to] < 0) {
      continue;
    }
    g.foreign_keys.push_back({static_cast<uint32_t>(column_index[from]), static_cast<uint32_t>(column_index[to])});
  }
  AddImpliedJoins(&g);
  g.Finalize();
  return g;
}

Result<SchemaGraph> SchemaFromSpider2(const Spider2Database& d) {
  SchemaGraph g;
  g.name = d.name;
  // The DDL gives types, keys and declared references; run it in memory,
  // hardened (it comes from outside).
  FLOWRAG_ASSIGN_OR_RETURN(auto db, Spider2SchemaDatabase(d, /*declare_failed=*/true));
  FLOWRAG_RETURN_IF_ERROR(ReadCatalog(*db, d.folder + "/DDL.csv", &g));
  for (const Spider2Table& t : d.tables) {
    for (size_t i = 0; i < t.columns.size(); ++i) {
      const int64_t c = g.FindColumn(t.name, t.columns[i]);
      if (c < 0) continue;
      SchemaColumn& col = g.columns[c];
      if (i < t.descriptions.size()) col.description = t.descriptions[i];
      for (const auto& row : t.sample_rows) {
        if (col.samples.size() >= 3) break;
        if (i < row.size() && !row[i].empty() && row[i].size() <= 40 &&
            std::find(col.samples.begin(), col.samples.end(), row[i]) == col.samples.end()) {
          col.samples.push_back(row[i]);
        }
      }
    }
  }
  AddImpliedJoins(&g);
  g.Finalize();
  return g;
}

}  // namespace flowrag
