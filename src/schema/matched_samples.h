// Matched sampling for cross-source links (schema-contracts paper A.8.1,
// Algorithm 2): records of two linked sources grouped by the link key's
// value, so the model sees for one value every record on both sides, and
// with them the real cardinality of the link (one customer, all its orders),
// which positional samples (the i-th record of each source) never show.
//
//   auto sets = MatchedSampling(fk, orders, customers);  // fk: orders → customers
//   for (const MatchedSet& m : sets) { m.value, m.from_records, m.to_records }
//
// Values are read at the foreign key's field paths (a list path "tags[*]"
// contributes every element), compared as written. Of the values both sides
// hold, at most `max_values` are chosen, spread evenly over the order in
// which they first occur in the referencing source (deterministic: the same
// inputs give the same sets). Record indexes are in source order.
// Pure; O(|from| + |to|) over the records' values.
#ifndef FLOWRAG_SCHEMA_MATCHED_SAMPLES_H_
#define FLOWRAG_SCHEMA_MATCHED_SAMPLES_H_

#include <cstddef>
#include <string>
#include <vector>

#include "flowrag/schema.h"
#include "schema/json_records.h"

namespace flowrag {

struct MatchedSet {
  std::string value;                // the shared link-key value
  std::vector<size_t> from_records;  // indexes into the referencing source's records
  std::vector<size_t> to_records;    // indexes into the referenced source's records
};

std::vector<MatchedSet> MatchedSampling(const ForeignKey& fk, const std::vector<FlatRecord>& from,
                                        const std::vector<FlatRecord>& to, size_t max_values = 5);

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_MATCHED_SAMPLES_H_
