// InduceSchema and its JSON form (include/flowrag/schema.h).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "flowrag/schema.h"
#include "schema/csv_reader.h"
#include "schema/structural.h"

namespace flowrag {
namespace {

namespace fs = std::filesystem;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Every .csv file under `dir`, sorted by path.
Result<std::vector<fs::path>> CsvFiles(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound(dir + ": not a directory");
  std::vector<fs::path> out;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file() && Lower(it->path().extension().string()) == ".csv") {
      out.push_back(it->path());
    }
  }
  if (ec) return Status::IoError(dir + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Result<InducedSchema> InduceSchema(const std::string& dir, const SchemaOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<fs::path> files, CsvFiles(dir));
  InducedSchema schema;
  std::vector<SourceColumns> sources;
  for (const fs::path& file : files) {
    FLOWRAG_ASSIGN_OR_RETURN(CsvTable table, ReadCsvFile(file.string()));
    SourceColumns sc;
    fs::path rel = fs::relative(file, dir);
    sc.name = (rel.parent_path() / rel.stem()).generic_string();
    for (size_t c = 0; c < table.columns.size(); ++c) {
      std::vector<std::string_view> values;
      values.reserve(table.rows.size());
      for (const auto& row : table.rows) values.emplace_back(row[c]);
      sc.columns.push_back(ProfileColumn(sc.name, table.columns[c], c, values));
    }
    schema.sources.push_back({sc.name, file.string(), "csv",
                              static_cast<int64_t>(table.rows.size()), table.transcoded_fields});
    if (table.transcoded_fields > 0) {
      schema.warnings.push_back(file.string() + ": " + std::to_string(table.transcoded_fields) +
                                " fields were not UTF-8 and were read as Windows-1252");
    }
    if (table.rows.empty()) schema.warnings.push_back(file.string() + ": no records");
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
  j["seconds"] = s.seconds;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace flowrag
