// InduceSchema and its JSON form (include/flowrag/schema.h).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "flowrag/schema.h"
#include "schema/discovery.h"
#include "schema/exclusions.h"
#include "schema/json_records.h"
#include "schema/samples.h"
#include "schema/structural.h"

namespace flowrag {
namespace {

namespace fs = std::filesystem;

// Columns of flattened records, one per path: `columns` (a CSV header)
// first, then paths in first-seen order. A
// scalar path has one value per record ("" where absent); an array path
// ("tags[*]") every element of every record.
void ProfileRecords(const std::string& source, const std::vector<FlatRecord>& records,
                    const std::vector<std::string>& columns, SourceColumns* out) {
  std::vector<std::string> paths;
  std::unordered_map<std::string, size_t> index;
  for (const std::string& c : columns) {
    if (index.emplace(c, paths.size()).second) paths.push_back(c);
  }
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
  InducedSchema schema;
  FLOWRAG_ASSIGN_OR_RETURN(Exclusions exclusions, LoadFolderExclusions(dir, options.exclusions));
  schema.exclusion_rules = exclusions;
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<DiscoveredSource> found,
                           DiscoverSources(dir, exclusions, DiscoveryOptions{}, &schema.excluded));
  std::vector<SourceColumns> sources;
  for (const DiscoveredSource& d : found) {
    SourceInfo info;
    info.name = d.name;
    info.path = d.corpus ? fs::path(d.files.front()).parent_path().string() : d.files.front();
    info.format = d.format;
    info.corpus_files = d.corpus ? d.files.size() : 0;
    std::vector<std::string> columns;
    FLOWRAG_ASSIGN_OR_RETURN(std::vector<FlatRecord> records,
                             LoadSourceRecords(d, dir, &columns, &info.transcoded_fields));
    info.records = static_cast<int64_t>(records.size());
    info.representative = RepresentativeRecord(records);
    info.samples = DiverseSamples(records, info.representative);
    SourceColumns sc;
    sc.name = d.name;
    ProfileRecords(d.name, records, columns, &sc);
    // Excluded fields leave before anything (profiles, keys, links) sees them.
    std::erase_if(sc.columns, [&](const ColumnProfile& c) {
      if (!exclusions.ExcludesField(sc.name, c.info.path)) return false;
      schema.excluded.push_back(sc.name + "." + c.info.path);
      return true;
    });
    if (info.transcoded_fields > 0) {
      schema.warnings.push_back(info.path + ": " + std::to_string(info.transcoded_fields) +
                                (info.format == "csv" ? " fields" : " lines") +
                                " were not UTF-8 and were read as Windows-1252");
    }
    if (info.records == 0) schema.warnings.push_back(info.path + ": no records");
    for (const ColumnProfile& c : sc.columns) schema.fields.push_back(c.info);
    for (IdentityKey& k : DetectIdentityKeys(sc, options)) {
      schema.identity_keys.push_back(std::move(k));
    }
    schema.sources.push_back(std::move(info));
    sources.push_back(std::move(sc));
  }
  std::sort(schema.excluded.begin(), schema.excluded.end());
  schema.foreign_keys = DetectForeignKeys(sources, schema.identity_keys, options);
  for (ForeignKey& fk : DetectCompanionLinks(sources, schema.foreign_keys)) {
    schema.foreign_keys.push_back(std::move(fk));
  }
  schema.hierarchy = DetectHierarchy(schema.sources, schema.foreign_keys);
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
                            {"corpus_files", src.corpus_files},
                            {"representative", src.representative},
                            {"samples", src.samples},
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
                                 {"cardinality", f.cardinality},
                                 {"companion", f.companion}});
  }
  j["hierarchy"] = nlohmann::json::array();
  for (const SourceParent& p : s.hierarchy) {
    j["hierarchy"].push_back({{"parent", p.parent}, {"child", p.child}, {"via", p.via}, {"ratio", p.ratio}});
  }
  j["warnings"] = s.warnings;
  j["excluded"] = s.excluded;
  j["exclude"] = {{"files", s.exclusion_rules.files}, {"fields", s.exclusion_rules.fields}};
  j["seconds"] = s.seconds;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace flowrag
