// Field profiles (schema-contracts paper A.4–A.5): type, null rate,
// cardinality, uniqueness, examples and a stable id per field, plus the
// value counts structural analysis needs.
//
// Values are trimmed; empty values are nulls. Numbers are compared in a
// canonical form ("7", "7.0" and "007" are one value) so that keys written
// differently across sources still join. Pure; O(values).
#ifndef FLOWRAG_SCHEMA_FIELD_PROFILE_H_
#define FLOWRAG_SCHEMA_FIELD_PROFILE_H_

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flowrag/schema.h"

namespace flowrag {

struct ColumnProfile {
  FieldInfo info;
  size_t position = 0;  // column index in its source
  // Canonical non-null value → records holding it.
  std::unordered_map<std::string, int> counts;
  // Canonical value of each record ("" for null), in record order.
  std::vector<std::string> values;
};

// `values` are the raw cells of one column.
ColumnProfile ProfileColumn(const std::string& source, const std::string& name, size_t position,
                            const std::vector<std::string_view>& values);

// The canonical form used for comparisons (trimmed; integral numbers without
// sign noise, leading zeros or a ".0").
std::string CanonicalValue(std::string_view raw);

// Lower-case name tokens split at '_', '-', spaces and camelCase ("StuID" →
// {"stu", "id"}, "car_makers" → {"car", "makers"}).
std::vector<std::string> FieldNameTokens(std::string_view name);

// Singular form of a lower-case name token ("countries" → "country",
// "makers" → "maker", "glass" unchanged).
std::string SingularToken(const std::string& token);

// A.7.1 isIdLike: a token is id, key, uuid, guid, code, ticker, no, num,
// number, isbn or sku.
bool IsIdLikeName(std::string_view name);

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_FIELD_PROFILE_H_
