// Structural intelligence (schema-contracts paper A.7), no model involved.
//
// Identity keys (A.7.1): a field qualifies when uniq ≥ 0.95, or uniq ≥ 0.80
// with an id-like name (Eq. 4), unless it has fewer than 5 non-null values,
// an average length over 500 bytes or at most 2 distinct values; confidence
// min(0.95, 0.7 + 0.3·uniq) (Eq. 5). A source's primary key is its first
// qualifying field by (id-like name, uniqueness, column position). A source
// without one gets the best pair of fields whose combined uniqueness is
// ≥ 0.95, if any (composite key). Array paths ("tags[*]") are never keys
// but may reference one (N:M links).
//
// Foreign keys (A.7.2): a child field references a single-field identity key
// of a source when their names match exactly (normalised, and more than a
// bare "id") or
// semantically (a name token of the child, other than id/key/code/..., is a
// token of the key or of the key's source name, singular or plural), and
// their values overlap (Eq. 6 > min_overlap) with at least min_containment of
// the child's distinct values found in the key; each child field keeps its
// most confident target. Confidence min(0.95, 0.5 +
// 0.3·overlap + 0.15·[exact name]); cardinality per side: "1" when the shared
// values average ≤ 1.2 records (max ≤ 2) there, else "N". When two primary
// keys reference each other (1:1), only the direction from the smaller value
// set (ties: the later source) is kept.
//
// Pure; O(fields) for keys, O(candidate pairs · distinct values) for links.
#ifndef FLOWRAG_SCHEMA_STRUCTURAL_H_
#define FLOWRAG_SCHEMA_STRUCTURAL_H_

#include <string>
#include <vector>

#include "flowrag/schema.h"
#include "schema/field_profile.h"

namespace flowrag {

// The columns of one source, in order.
struct SourceColumns {
  std::string name;
  std::vector<ColumnProfile> columns;
};

std::vector<IdentityKey> DetectIdentityKeys(const SourceColumns& source,
                                            const SchemaOptions& options);

// `keys`: every source's identity keys (DetectIdentityKeys), any order.
std::vector<ForeignKey> DetectForeignKeys(const std::vector<SourceColumns>& sources,
                                          const std::vector<IdentityKey>& keys,
                                          const SchemaOptions& options);

// A.8.2 companion sources: a source named like another plus a suffix
// ("queries_metadata" beside "queries") is linked to it through their
// implicit shared identifier, a field of the same name whose companion values
// are at least `min_containment` base values, even when it is no identity
// key. Pairs `found` already links are left alone. Cardinality: 1:1 when the
// companion's field is unique, else N:1.
std::vector<ForeignKey> DetectCompanionLinks(const std::vector<SourceColumns>& sources,
                                             const std::vector<ForeignKey>& found,
                                             double min_containment = 0.5);

// Source hierarchy (A.7): for each foreign key whose referenced side is
// "one" and referencing side "many" (cardinality "N:1") between two sources,
// the referenced source is the parent when it has fewer records (ratio =
// child / parent records > 1). One entry per (parent, child) pair, the
// most confident key's field; ordered by the parent's depth, then as the
// keys came.
std::vector<SourceParent> DetectHierarchy(const std::vector<SourceInfo>& sources,
                                          const std::vector<ForeignKey>& foreign_keys);

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_STRUCTURAL_H_
