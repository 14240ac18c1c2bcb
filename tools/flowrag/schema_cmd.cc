// `flowrag schema induce DIR`: field catalog, identity keys and foreign keys.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "commands.h"
#include "flowrag/schema.h"

namespace flowrag::cli {

namespace {

Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IoError(path + ": cannot open for writing");
  out << text;
  out.close();
  if (!out) return Status::IoError(path + ": write failed");
  return Status::Ok();
}

}  // namespace

Status RunSchemaShow(const std::string& path) {
  FLOWRAG_ASSIGN_OR_RETURN(SchemaContract c, LoadContract(path));
  std::printf("%s: version %d (%s), %zu sources, %zu fields, %zu entity types, %zu relationships\n",
              path.c_str(), c.version, c.generated_by.c_str(), c.structure.sources.size(),
              c.structure.fields.size(), c.entity_types.size(), c.relationships.size());
  for (const EntityType& t : c.entity_types) {
    std::string key;
    for (const std::string& f : t.identity_key) key += (key.empty() ? "" : ", ") + f;
    const std::string how =
        t.RowType() ? "" : " [" + t.extraction + (t.extraction_field.empty() ? "" : " " + t.extraction_field) + "]";
    std::printf("  %-24s from %s%s, %zu attributes, key (%s)\n", t.name.c_str(), t.source.c_str(),
                how.c_str(), t.attributes.size(), key.c_str());
  }
  for (const RelationshipType& r : c.relationships) {
    std::printf("  (%s)-[%s]->(%s)  %s.%s = %s.%s  %s conf %.2f%s\n", r.from.c_str(), r.name.c_str(),
                r.to.c_str(), r.from.c_str(), r.from_field.c_str(), r.to.c_str(),
                r.to_field.c_str(), r.cardinality.c_str(), r.confidence,
                r.extraction.empty() ? "" : (" [" + r.extraction + "]").c_str());
  }
  return Status::Ok();
}

// --set overrides of SchemaOptions' thresholds.
static Status ApplySchemaSettings(const std::map<std::string, std::string>& settings, SchemaOptions* o) {
  const std::map<std::string, double*> reals = {{"unique_ratio", &o->unique_ratio},
                                                {"id_like_unique_ratio", &o->id_like_unique_ratio},
                                                {"max_key_avg_length", &o->max_key_avg_length},
                                                {"min_overlap", &o->min_overlap},
                                                {"min_containment", &o->min_containment}};
  const std::map<std::string, int64_t*> counts = {{"min_key_values", &o->min_key_values},
                                                  {"min_key_cardinality", &o->min_key_cardinality}};
  for (const auto& [key, value] : settings) {
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    const bool number = !value.empty() && end == value.c_str() + value.size() && std::isfinite(v) && v >= 0;
    if (key == "composite_keys") {
      if (value != "true" && value != "false") {
        return Status::InvalidArgument("--set composite_keys=" + value + ": expected true or false");
      }
      o->composite_keys = value == "true";
    } else if (auto r = reals.find(key); r != reals.end()) {
      if (!number) return Status::InvalidArgument("--set " + key + "=" + value + ": expected a number >= 0");
      *r->second = v;
    } else if (auto c = counts.find(key); c != counts.end()) {
      if (!number || v != static_cast<double>(static_cast<int64_t>(v))) {
        return Status::InvalidArgument("--set " + key + "=" + value + ": expected a whole number >= 0");
      }
      *c->second = static_cast<int64_t>(v);
    } else {
      return Status::InvalidArgument("--set " + key + ": unknown (unique_ratio, id_like_unique_ratio, "
                                     "min_key_values, max_key_avg_length, min_key_cardinality, "
                                     "composite_keys, min_overlap, min_containment)");
    }
  }
  return Status::Ok();
}

Status RunSchemaInduce(const std::string& dir, bool json, const std::string& out,
                       const std::string& exclude, const std::string& extend, bool llm,
                       double min_confidence, const std::map<std::string, std::string>& settings) {
  SchemaOptions options;
  options.exclusions = exclude;
  FLOWRAG_RETURN_IF_ERROR(ApplySchemaSettings(settings, &options));
  FLOWRAG_ASSIGN_OR_RETURN(InducedSchema s, InduceSchema(dir, options));
  SchemaContract contract = DeriveContract(s);
  if (llm) {
    std::vector<std::string> notes;
    Result<SchemaContract> discovered = DiscoverContractWithLlm(s, dir, exclude, &notes);
    for (const std::string& n : notes) std::fprintf(stderr, "llm: %s\n", n.c_str());
    if (discovered.ok()) {
      contract = std::move(*discovered);
    } else if (discovered.status().code() == StatusCode::kFailedPrecondition) {
      return discovered.status();
    } else {
      std::fprintf(stderr, "warning: %s; using the offline contract\n",
                   discovered.status().ToString().c_str());
    }
  }
  if (!extend.empty()) {
    FLOWRAG_ASSIGN_OR_RETURN(SchemaContract base, LoadContract(extend));
    ExtensionOptions eo;
    eo.min_confidence = min_confidence;
    ExtensionResult ext = ExtendContract(base, contract, eo);
    std::fprintf(stderr, "%s: version %d -> %d, %zu additions, %zu left out\n", extend.c_str(),
                 base.version, ext.contract.version, ext.added.size(), ext.left_out.size());
    for (const std::string& a : ext.added) std::fprintf(stderr, "  + %s\n", a.c_str());
    for (const std::string& a : ext.left_out) std::fprintf(stderr, "  - %s (left out)\n", a.c_str());
    contract = std::move(ext.contract);
  }
  if (!out.empty()) {
    // Write a temporary file and rename: a failed run never leaves half a contract.
    const std::string tmp = out + ".tmp";
    FLOWRAG_RETURN_IF_ERROR(WriteText(tmp, ToYaml(contract)));
    std::error_code ec;
    std::filesystem::rename(tmp, out, ec);
    if (ec) return Status::IoError(out + ": " + ec.message());
    std::fprintf(stderr, "wrote %s\n", out.c_str());
  }
  if (json) {
    std::printf("%s\n", ToJson(s).c_str());
    return Status::Ok();
  }
  std::printf("sources (%zu):\n", s.sources.size());
  for (const SourceInfo& src : s.sources) {
    std::printf("  %-32s %s, %lld records\n", src.name.c_str(), src.format.c_str(),
                static_cast<long long>(src.records));
  }
  std::printf("identity keys:\n");
  for (const IdentityKey& k : s.identity_keys) {
    std::string fields;
    for (const std::string& f : k.fields) fields += (fields.empty() ? "" : ", ") + f;
    std::printf("  %s%s(%s) uniq %.3f conf %.2f\n", k.primary ? "* " : "  ", k.source.c_str(),
                fields.c_str(), k.uniqueness, k.confidence);
  }
  std::printf("foreign keys:\n");
  for (const ForeignKey& f : s.foreign_keys) {
    std::printf("  %s.%s -> %s.%s  %s overlap %.2f conf %.2f%s\n", f.from_source.c_str(),
                f.from_field.c_str(), f.to_source.c_str(), f.to_field.c_str(),
                f.cardinality.c_str(), f.overlap, f.confidence, f.exact_name ? " (same name)" : "");
  }
  for (const std::string& w : s.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  for (const std::string& x : s.excluded) std::fprintf(stderr, "excluded: %s\n", x.c_str());
  std::fprintf(stderr, "%zu fields profiled in %.3f s\n", s.fields.size(), s.seconds);
  return Status::Ok();
}

}  // namespace flowrag::cli
