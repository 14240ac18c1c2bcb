#include "sql/bird_data.h"

#include <filesystem>
#include <map>

#include "sql/data_files.h"
#include "sql/safe_exec.h"

namespace flowrag {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string Quoted(const std::string& name) {
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// One CREATE TABLE per table of a Spider-format schema (for gold reads when
// the database file is absent).
std::vector<std::string> SchemaDdl(const SpiderSchema& s) {
  std::vector<std::string> ddl;
  for (size_t t = 0; t < s.table_names_original.size(); ++t) {
    std::string sql = "CREATE TABLE " + Quoted(s.table_names_original[t]) + " (";
    std::vector<std::string> keys;
    bool first = true;
    for (size_t c = 1; c < s.columns.size(); ++c) {
      if (s.columns[c].table != static_cast<int>(t)) continue;
      sql += (first ? "" : ", ") + Quoted(s.columns[c].name_original);
      first = false;
      for (int k : s.primary_keys) {
        if (k == static_cast<int>(c)) keys.push_back(Quoted(s.columns[c].name_original));
      }
    }
    if (first) sql += "\"_\"";  // a table without columns still prepares
    if (!keys.empty()) {
      sql += ", PRIMARY KEY (";
      for (size_t k = 0; k < keys.size(); ++k) sql += (k ? ", " : "") + keys[k];
      sql += ")";
    }
    ddl.push_back(sql + ")");
  }
  return ddl;
}

}  // namespace

Result<std::string> BirdTablesPath(const std::string& dir) {
  std::error_code ec;
  for (const char* name : {"tables.json", "dev_tables.json"}) {
    const fs::path p = fs::path(dir) / name;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return Status::NotFound(dir + ": no tables.json or dev_tables.json");
}

Result<BirdData> LoadBird(const std::string& dir) {
  BirdData out;
  FLOWRAG_ASSIGN_OR_RETURN(std::string tables_path, BirdTablesPath(dir));
  FLOWRAG_ASSIGN_OR_RETURN(out.schemas, LoadSpiderTables(tables_path));
  std::map<std::string, const SpiderSchema*> by_id;
  for (const SpiderSchema& s : out.schemas) by_id.emplace(s.db_id, &s);

  const std::string dev = (fs::path(dir) / "dev.json").string();
  FLOWRAG_ASSIGN_OR_RETURN(Json j, ReadJsonFile(dev));
  if (!j.is_array()) return Status::InvalidArgument(dev + ": expected a list of questions");

  struct Schema {
    std::unique_ptr<ReadOnlyDatabase> db;
    std::string error;
  };
  std::map<std::string, Schema> opened;
  std::error_code ec;
  for (size_t i = 0; i < j.size(); ++i) {
    const Json& q = j[i];
    std::string where = dev + ": question " + std::to_string(i);
    if (!q.is_object()) return Status::InvalidArgument(where + ": expected an object");
    if (!q.contains("db_id") || !q["db_id"].is_string()) {
      return Status::InvalidArgument(where + ": db_id: expected a string");
    }
    SqlTask t;
    t.id = "bird-dev-" + std::to_string(i);
    t.db_id = q["db_id"].get<std::string>();
    where += " (db_id \"" + t.db_id + "\")";
    for (const char* field : {"question", "SQL"}) {
      if (!q.contains(field) || !q[field].is_string()) {
        return Status::InvalidArgument(where + ": " + field + ": expected a string");
      }
    }
    t.question = q["question"].get<std::string>();
    t.gold_sql = q["SQL"].get<std::string>();
    if (q.contains("evidence") && !q["evidence"].is_null()) {
      if (!q["evidence"].is_string()) return Status::InvalidArgument(where + ": evidence: expected a string or null");
      t.evidence = q["evidence"].get<std::string>();
    }
    auto schema = by_id.find(t.db_id);
    if (schema == by_id.end()) {
      return Status::InvalidArgument(where + ": no schema in " + tables_path + " has this db_id");
    }
    auto [it, fresh] = opened.try_emplace(t.db_id);
    if (fresh) {
      const fs::path file = fs::path(dir) / "dev_databases" / t.db_id / (t.db_id + ".sqlite");
      Result<std::unique_ptr<ReadOnlyDatabase>> db = Status::NotFound("no database file");
      if (fs::is_regular_file(file, ec)) {
        db = ReadOnlyDatabase::Open(file.string());
        if (db.ok()) out.files.emplace_back(t.db_id, file.string());
      } else {
        ReadOnlyDatabase::DdlOptions ddl;
        ddl.tables_and_indexes_only = true;
        db = ReadOnlyDatabase::FromDdl(SchemaDdl(*schema->second), ddl, nullptr);
      }
      if (db.ok()) it->second.db = std::move(db).value();
      else it->second.error = "database of " + t.db_id + ": " + db.status().ToString();
    }
    if (it->second.db == nullptr) {
      t.error = it->second.error;
    } else {
      Result<SqlReadSet> reads = it->second.db->Reads(t.gold_sql);
      if (reads.ok()) {
        t.gold.tables = std::move(reads->tables);
        t.gold.columns = std::move(reads->columns);
      } else {
        t.error = "gold SQL does not prepare: " + reads.status().ToString();
      }
    }
    out.tasks.push_back(std::move(t));
  }
  return out;
}

}  // namespace flowrag
