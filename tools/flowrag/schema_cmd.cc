// `flowrag schema induce DIR`: field catalog, identity keys and foreign keys.
#include <cstdio>

#include "commands.h"
#include "flowrag/schema.h"

namespace flowrag::cli {

Status RunSchemaInduce(const std::string& dir, bool json) {
  FLOWRAG_ASSIGN_OR_RETURN(InducedSchema s, InduceSchema(dir));
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
  std::fprintf(stderr, "%zu fields profiled in %.3f s\n", s.fields.size(), s.seconds);
  return Status::Ok();
}

}  // namespace flowrag::cli
