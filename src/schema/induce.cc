// InduceSchema and its JSON form (include/flowrag/schema.h).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "common/text.h"
#include "flowrag/schema.h"
#include "schema/csv_reader.h"
#include "schema/exclusions.h"
#include "schema/json_records.h"
#include "schema/structural.h"

namespace flowrag {
namespace {

namespace fs = std::filesystem;

bool IsRecordFile(const fs::path& p) {
  const std::string ext = ToLowerAscii(p.extension().string());
  return ext == ".csv" || ext == ".json" || ext == ".jsonl" || ext == ".ndjson";
}

// Every record file (.csv, .json, .jsonl, .ndjson) under `dir`, sorted by
// path; hidden entries are skipped.
Result<std::vector<fs::path>> RecordFiles(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound(dir + ": not a directory");
  std::vector<fs::path> out;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.empty() && name[0] == '.') {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && IsRecordFile(it->path())) out.push_back(it->path());
  }
  if (ec) return Status::IoError(dir + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

// Columns of flattened JSON records, one per path in first-seen order. A
// scalar path has one value per record ("" where absent); an array path
// ("tags[*]") every element of every record.
void ProfileRecords(const std::string& source, const std::vector<FlatRecord>& records,
                    SourceColumns* out) {
  std::vector<std::string> paths;
  std::unordered_map<std::string, size_t> index;
  for (const FlatRecord& r : records) {
    for (const auto& [path, value] : r.values) {
      if (index.emplace(path, paths.size()).second) paths.push_back(path);
    }
  }
  std::vector<std::vector<std::string_view>> values(paths.size());
  for (const FlatRecord& r : records) {
    std::vector<bool> seen(paths.size(), false);
    for (const auto& [path, value] : r.values) {
      const size_t c = index.at(path);
      const bool multi = path.find("[*]") != std::string::npos;
      if (multi || !seen[c]) values[c].emplace_back(value);
      seen[c] = true;
    }
    for (size_t c = 0; c < paths.size(); ++c) {
      if (!seen[c] && paths[c].find("[*]") == std::string::npos) values[c].emplace_back();
    }
  }
  for (size_t c = 0; c < paths.size(); ++c) {
    out->columns.push_back(ProfileColumn(source, paths[c], c, values[c]));
  }
}

}  // namespace

Result<InducedSchema> InduceSchema(const std::string& dir, const SchemaOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<fs::path> files, RecordFiles(dir));
  InducedSchema schema;
  Exclusions exclusions;
  std::string manifest = options.exclusions;
  if (manifest.empty() && fs::exists(fs::path(dir) / "flowrag_exclude.yaml")) {
    manifest = (fs::path(dir) / "flowrag_exclude.yaml").string();
  }
  if (!manifest.empty()) {
    FLOWRAG_ASSIGN_OR_RETURN(exclusions, LoadExclusions(manifest));
  }
  std::vector<SourceColumns> sources;
  for (const fs::path& file : files) {
    SourceColumns sc;
    fs::path rel = fs::relative(file, dir);
    if (exclusions.ExcludesFile(rel.generic_string())) {
      schema.excluded.push_back(rel.generic_string());
      continue;
    }
    sc.name = (rel.parent_path() / rel.stem()).generic_string();
    SourceInfo info{sc.name, file.string(), "", 0, 0};
    if (ToLowerAscii(file.extension().string()) == ".csv") {
      FLOWRAG_ASSIGN_OR_RETURN(CsvTable table, ReadCsvFile(file.string()));
      for (size_t c = 0; c < table.columns.size(); ++c) {
        std::vector<std::string_view> values;
        values.reserve(table.rows.size());
        for (const auto& row : table.rows) values.emplace_back(row[c]);
        sc.columns.push_back(ProfileColumn(sc.name, table.columns[c], c, values));
      }
      info.format = "csv";
      info.records = static_cast<int64_t>(table.rows.size());
      info.transcoded_fields = table.transcoded_fields;
    } else {
      FLOWRAG_ASSIGN_OR_RETURN(std::vector<FlatRecord> records, ReadJsonRecords(file.string()));
      ProfileRecords(sc.name, records, &sc);
      info.format = ToLowerAscii(file.extension().string()) == ".json" ? "json" : "jsonl";
      info.records = static_cast<int64_t>(records.size());
    }
    // Excluded fields leave before anything (profiles, keys, links) sees them.
    std::erase_if(sc.columns, [&](const ColumnProfile& c) {
      if (!exclusions.ExcludesField(sc.name, c.info.path)) return false;
      schema.excluded.push_back(sc.name + "." + c.info.path);
      return true;
    });
    schema.sources.push_back(info);
    if (info.transcoded_fields > 0) {
      schema.warnings.push_back(file.string() + ": " + std::to_string(info.transcoded_fields) +
                                " fields were not UTF-8 and were read as Windows-1252");
    }
    if (info.records == 0) schema.warnings.push_back(file.string() + ": no records");
    for (const ColumnProfile& c : sc.columns) schema.fields.push_back(c.info);
    for (IdentityKey& k : DetectIdentityKeys(sc, options))
      schema.identity_keys.push_back(std::move(k));
    sources.push_back(std::move(sc));
  }
  schema.foreign_keys = DetectForeignKeys(sources, schema.identity_keys, options);
  schema.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return schema;
}

std::string ToJson(const InducedSchema& s) {
  nlohmann::json j;
  j["sources"] = nlohmann::json::array();
  for (const SourceInfo& src : s.sources) {
    j["sources"].push_back({{"name", src.name},
                            {"path", src.path},
                            {"format", src.format},
                            {"records", src.records},
                            {"transcoded_fields", src.transcoded_fields}});
  }
  j["fields"] = nlohmann::json::array();
  for (const FieldInfo& f : s.fields) {
    j["fields"].push_back({{"id", f.id},
                           {"source", f.source},
                           {"path", f.path},
                           {"type", f.type},
                           {"count", f.count},
                           {"nulls", f.nulls},
                           {"distinct", f.distinct},
                           {"uniqueness", f.uniqueness},
                           {"avg_length", f.avg_length},
                           {"id_like", f.id_like},
                           {"examples", f.examples}});
  }
  j["identity_keys"] = nlohmann::json::array();
  for (const IdentityKey& k : s.identity_keys) {
    j["identity_keys"].push_back({{"source", k.source},
                                  {"fields", k.fields},
                                  {"uniqueness", k.uniqueness},
                                  {"confidence", k.confidence},
                                  {"primary", k.primary}});
  }
  j["foreign_keys"] = nlohmann::json::array();
  for (const ForeignKey& f : s.foreign_keys) {
    j["foreign_keys"].push_back({{"from", {{"source", f.from_source}, {"field", f.from_field}}},
                                 {"to", {{"source", f.to_source}, {"field", f.to_field}}},
                                 {"overlap", f.overlap},
                                 {"containment", f.containment},
                                 {"exact_name", f.exact_name},
                                 {"confidence", f.confidence},
                                 {"cardinality", f.cardinality}});
  }
  j["warnings"] = s.warnings;
  j["excluded"] = s.excluded;
  j["seconds"] = s.seconds;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace flowrag
