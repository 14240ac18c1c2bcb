// Spider 2.0-lite loaders (the local SQLite part): a database folder (DDL.csv
// and per-table .json files), the tasks with public gold SQL and their gold
// read sets, and the CSV / pandas-DDL helpers they need. Spider 1.0 is in
// spider_data.cc.
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/text.h"
#include "sql/data_files.h"
#include "sql/safe_exec.h"
#include "sql/spider_data.h"

namespace flowrag {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

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
  return kTypes.count(ToLowerAscii(word)) > 0;
}

std::string_view Trim(std::string_view s) {
  const char* kSpace = " \t\r\n";
  const size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

// "Db-IMDB" and "DB_IMDB" both become "db_imdb".
std::string FolderKey(std::string_view name) {
  std::string k = ToLowerAscii(name);
  std::replace(k.begin(), k.end(), '-', '_');
  return k;
}

// The gold SQL as one statement: trailing blanks and semicolons removed.
std::string_view StatementText(std::string_view sql) {
  sql = Trim(sql);
  while (!sql.empty() && sql.back() == ';') sql = Trim(sql.substr(0, sql.size() - 1));
  return sql;
}

std::string QuoteIdentifier(std::string_view id) {
  std::string out = "\"";
  for (char c : id) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

// CREATE TABLE of `t` from its JSON column names and types.
std::string DeclaredFromJson(const Spider2Table& t) {
  std::string ddl = "CREATE TABLE " + QuoteIdentifier(t.name) + "(";
  for (size_t i = 0; i < t.columns.size(); ++i) {
    ddl += (i ? ", " : "") + QuoteIdentifier(t.columns[i]) + " " +
           (i < t.types.size() ? QuoteIdentifier(t.types[i]) : std::string());
  }
  return ddl + ")";
}

// The first refusal among `statuses` as the folder's error, naming the
// DDL.csv line of its table.
Status FirstRefusal(const Spider2Database& db, const std::vector<const Spider2Table*>& tables,
                    const std::vector<Status>& statuses) {
  for (size_t i = 0; i < statuses.size() && i < tables.size(); ++i) {
    if (!IsSqlRefusal(statuses[i])) continue;
    return Status::InvalidArgument((fs::path(db.folder) / "DDL.csv").string() + ":" +
                                   std::to_string(tables[i]->ddl_line) + ": table \"" +
                                   tables[i]->name + "\": " + statuses[i].message());
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<ReadOnlyDatabase>> Spider2SchemaDatabase(const Spider2Database& db,
                                                                bool declare_failed) {
  std::vector<const Spider2Table*> tables;
  std::vector<std::string> ddl;
  for (const Spider2Table& t : db.tables) {
    if (Trim(t.ddl).empty()) continue;
    tables.push_back(&t);
    ddl.push_back(t.ddl);
  }
  ReadOnlyDatabase::DdlOptions options;
  options.skip_bad = true;
  options.tables_and_indexes_only = true;
  std::vector<Status> statuses;
  // Up to three rounds: as written, with bare names quoted, from the JSON.
  for (int round = 0;; ++round) {
    FLOWRAG_ASSIGN_OR_RETURN(auto built, ReadOnlyDatabase::FromDdl(ddl, options, &statuses));
    FLOWRAG_RETURN_IF_ERROR(FirstRefusal(db, tables, statuses));
    bool retry = false;
    for (size_t i = 0; i < ddl.size() && round < 2; ++i) {
      if (statuses[i].ok()) continue;
      std::string next = round == 0 ? QuoteBareColumnNames(ddl[i]) : ddl[i];
      if (next == ddl[i] && declare_failed) next = DeclaredFromJson(*tables[i]);
      retry = retry || next != ddl[i];
      ddl[i] = std::move(next);
    }
    if (!retry) return built;
  }
}

Result<std::vector<std::vector<std::string>>> ParseCsvRecords(
    std::string_view text, const std::string& path, std::vector<size_t>* record_lines) {
  std::vector<std::vector<std::string>> records;
  if (record_lines != nullptr) record_lines->clear();
  size_t record_line = 1;
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
    if (record_lines != nullptr) record_lines->push_back(record_line);
    record.clear();
    if (i >= n) break;
    ++i;  // '\n'
    ++line;
    record_line = line;
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
  if (ToLowerAscii(head.substr(0, 12)) != "create table") return std::string(create_table);
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
  std::vector<size_t> lines;
  FLOWRAG_ASSIGN_OR_RETURN(auto records, ParseCsvRecords(ddl_text, ddl_path, &lines));
  if (records.empty() || records[0].size() < 2 ||
      ToLowerAscii(Trim(records[0][0])) != "table_name" ||
      ToLowerAscii(Trim(records[0][1])) != "ddl") {
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
    t.ddl_line = lines[r];
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
      const size_t ddl_line = dst.ddl_line;
      dst = std::move(t).value();
      dst.ddl = std::move(ddl);
      dst.ddl_line = ddl_line;
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
          Spider2SchemaDatabase(db, /*declare_failed=*/false);
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
