// SQLite introspection and the Spider / Spider 2.0-lite converters of
// schema_graph.h.
#include <sqlite3.h>

#include <algorithm>
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

struct CloseDb {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using DbPtr = std::unique_ptr<sqlite3, CloseDb>;
struct FinalizeStmt {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using StmtPtr = std::unique_ptr<sqlite3_stmt, FinalizeStmt>;

std::string Quote(std::string_view id, char q) {
  std::string out(1, q);
  for (char c : id) {
    out += c;
    if (c == q) out += c;
  }
  return out + q;
}

std::string ColumnText(sqlite3_stmt* s, int i) {
  const auto* p = sqlite3_column_text(s, i);
  return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p),
                                                    sqlite3_column_bytes(s, i));
}

// Runs a catalog query; fn(row) per row. Errors name the database and query.
template <typename Fn>
Status Query(sqlite3* db, const std::string& where, const std::string& sql, Fn fn) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    return Status::InvalidArgument(where + ": " + sqlite3_errmsg(db) + " in: " + sql);
  }
  StmtPtr stmt(raw);
  for (;;) {
    const int rc = sqlite3_step(raw);
    if (rc == SQLITE_DONE) return Status::Ok();
    if (rc != SQLITE_ROW) return Status::InvalidArgument(where + ": " + sqlite3_errmsg(db) + " in: " + sql);
    fn(raw);
  }
}

// Tables, columns, types, primary and foreign keys of an open connection.
Status ReadCatalog(sqlite3* db, const std::string& where, SchemaGraph* g) {
  std::vector<std::string> names;
  FLOWRAG_RETURN_IF_ERROR(Query(db, where,
                                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE "
                                "'sqlite\\_%' ESCAPE '\\' ORDER BY rowid",
                                [&](sqlite3_stmt* s) { names.push_back(ColumnText(s, 0)); }));
  for (const std::string& t : names) {
    const uint32_t ti = g->AddTable(t);
    FLOWRAG_RETURN_IF_ERROR(Query(db, where, "PRAGMA table_info(" + Quote(t, '"') + ")",
                                  [&](sqlite3_stmt* s) {
                                    const uint32_t ci = g->AddColumn(ti, ColumnText(s, 1), ColumnText(s, 2));
                                    g->columns[ci].primary_key = sqlite3_column_int(s, 5) > 0;
                                  }));
  }
  for (const std::string& t : names) {
    FLOWRAG_RETURN_IF_ERROR(Query(db, where, "PRAGMA foreign_key_list(" + Quote(t, '"') + ")",
                                  [&](sqlite3_stmt* s) {
                                    const std::string to_table = ColumnText(s, 2);
                                    std::string to_col = ColumnText(s, 4);
                                    if (to_col.empty()) {  // REFERENCES t without a column: its primary key
                                      const int64_t tt = g->FindTable(to_table);
                                      for (uint32_t c : tt < 0 ? std::vector<uint32_t>{} : g->tables[tt].columns) {
                                        if (g->columns[c].primary_key) to_col = g->columns[c].name;
                                      }
                                    }
                                    const int64_t from = g->FindColumn(t, ColumnText(s, 3));
                                    const int64_t to = g->FindColumn(to_table, to_col);
                                    if (from >= 0 && to >= 0) {  // dangling references are skipped
                                      g->foreign_keys.push_back({static_cast<uint32_t>(from),
                                                                 static_cast<uint32_t>(to)});
                                    }
                                  }));
  }
  return Status::Ok();
}

Result<DbPtr> OpenCatalogConnection(const std::string& path) {
  // Validates the file (NotFound, not a database) with the safe opener first.
  FLOWRAG_ASSIGN_OR_RETURN(auto checked, ReadOnlyDatabase::Open(path));
  checked.reset();
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  DbPtr db(raw);
  if (rc != SQLITE_OK) return Status::IoError(path + ": cannot open: " + sqlite3_errstr(rc));
  sqlite3_exec(raw, "PRAGMA query_only=1", nullptr, nullptr, nullptr);
  return db;
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
  FLOWRAG_ASSIGN_OR_RETURN(DbPtr db, OpenCatalogConnection(path));
  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline = options.deadline;
  if (deadline != Clock::time_point::max()) {
    sqlite3_progress_handler(
        db.get(), 1000,
        [](void* at) { return Clock::now() >= *static_cast<Clock::time_point*>(at) ? 1 : 0; }, &deadline);
  }
  auto late = [&] { return Clock::now() >= deadline; };
  size_t done = 0;  // tables fully sampled
  for (SchemaTable& t : g->tables) {
    if (late()) break;
    const std::string qt = Quote(t.name, '"');
    if (options.count_rows) {
      Status st = Query(db.get(), path, "SELECT COUNT(*) FROM " + qt,
                        [&](sqlite3_stmt* s) { t.rows = sqlite3_column_int64(s, 0); });
      if (!st.ok()) {
        if (late()) break;
        ++done;
        continue;  // a table of the schema file missing from the database
      }
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
      std::vector<std::string> samples;
      Status st = Query(db.get(), path,
                        "SELECT DISTINCT " + qc + " FROM " + qt + " WHERE " + qc +
                            " IS NOT NULL AND length(" + qc + ") BETWEEN 1 AND " +
                            std::to_string(options.max_sample_bytes) + " LIMIT " +
                            std::to_string(options.samples_per_column),
                        [&](sqlite3_stmt* s) { samples.push_back(ColumnText(s, 0)); });
      if (st.ok() && !samples.empty()) c.samples = std::move(samples);
    }
    if (cut) break;
    ++done;
  }
  sqlite3_progress_handler(db.get(), 0, nullptr, nullptr);
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
    FLOWRAG_ASSIGN_OR_RETURN(DbPtr db, OpenCatalogConnection(path));
    FLOWRAG_RETURN_IF_ERROR(ReadCatalog(db.get(), path, &g));
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
  // The DDL gives types, keys and declared references; run it in memory.
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    sqlite3_close_v2(raw);
    return Status::Internal("cannot open an in-memory database");
  }
  DbPtr db(raw);
  for (const Spider2Table& t : d.tables) {
    if (sqlite3_exec(raw, t.ddl.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK &&
        sqlite3_exec(raw, QuoteBareColumnNames(t.ddl).c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
      // A DDL SQLite cannot run even with its names quoted: declare the
      // columns the JSON lists.
      std::string ddl = "CREATE TABLE " + Quote(t.name, '"') + "(";
      for (size_t i = 0; i < t.columns.size(); ++i) {
        ddl += (i ? ", " : "") + Quote(t.columns[i], '"') + " " +
               (i < t.types.size() ? Quote(t.types[i], '"') : std::string());
      }
      sqlite3_exec(raw, (ddl + ")").c_str(), nullptr, nullptr, nullptr);
    }
  }
  FLOWRAG_RETURN_IF_ERROR(ReadCatalog(raw, d.folder + "/DDL.csv", &g));
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
