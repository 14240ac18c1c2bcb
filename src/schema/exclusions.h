// The exclusion manifest (schema-contracts paper A.3): files and fields
// removed before anything reads the data.
//
//   exclude:
//     files: ["raw/*.tmp.csv", "secrets.csv"]   # fnmatch globs on the path relative to the folder
//     fields: ["users.password", "*.ssn"]       # fnmatch globs on "source.field"
//
// Errors name the manifest, line and entry. Pure.
#ifndef FLOWRAG_SCHEMA_EXCLUSIONS_H_
#define FLOWRAG_SCHEMA_EXCLUSIONS_H_

#include <string>
#include <vector>

#include "flowrag/schema.h"
#include "flowrag/status.h"

namespace flowrag {

using Exclusions = ExclusionRules;  // include/flowrag/schema.h

Result<Exclusions> LoadExclusions(const std::string& path);

// The manifest `path`, or when it is empty the folder's
// "flowrag_exclude.yaml" if there is one, or no exclusions.
Result<Exclusions> LoadFolderExclusions(const std::string& dir, const std::string& path);

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_EXCLUSIONS_H_
