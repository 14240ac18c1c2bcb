// The closed-world field catalog (schema-contracts paper A.5) as the LLM
// discovery layer looks fields up: by stable id, by "source.path", or by a
// path of a known source; sources by name or file name.
//
// Thread-safety: const methods may be called concurrently. Pure lookups,
// O(log fields) each, except TextFields (O(fields)).
#ifndef FLOWRAG_SCHEMA_FIELD_CATALOG_H_
#define FLOWRAG_SCHEMA_FIELD_CATALOG_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flowrag/schema.h"

namespace flowrag {

// Lookups in the closed-world catalog. Keeps a pointer to `schema`, which
// must outlive it.
class FieldCatalog {
 public:
  explicit FieldCatalog(const InducedSchema& schema);
  // By id (case-insensitive), by "source.path", or, with `source`, by a path
  // of that source. Null when there is no such field.
  const FieldInfo* Resolve(std::string_view ref, std::string_view source = {}) const;
  // A source by name, or by its file name or path ("customers.csv").
  const SourceInfo* FindSource(std::string_view name) const;
  bool Has(const std::string& source, const std::string& path) const;
  // The id of a field ("" when unknown).
  std::string IdOf(const std::string& source, const std::string& path) const;
  // The "text"-typed fields of a source.
  std::vector<std::string> TextFields(const std::string& source) const;
  const InducedSchema& schema() const { return *schema_; }

 private:
  const InducedSchema* schema_;
  std::map<std::string, const FieldInfo*> by_id_;           // lower-case id
  std::map<std::string, const FieldInfo*> by_source_path_;  // "source.path"
  std::map<std::pair<std::string, std::string>, const FieldInfo*> by_pair_;
};

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_FIELD_CATALOG_H_
