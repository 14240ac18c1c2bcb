// Sample selection for schema discovery (schema-contracts paper A.4.2–A.4.3).
//
// Representative record r* (Eq. 2): the highest
//   score(r) = 10·|non-null fields of r| + b_rich(r) + b_pos(r),
// b_rich = +50 when the record's text exceeds 1,000 characters, −30 below
// 100; b_pos = +10 in the middle 60% of the source; ties go to the earliest.
// Diverse samples: the first, middle and last records, then, while the token
// budget lasts (≈ 4 characters per token), the record that adds the most
// fields not yet covered (coverage-adaptive; sources over 2,000 records
// are scanned with a stride), r* excluded.
// Pure; O(records · fields).
#ifndef FLOWRAG_SCHEMA_SAMPLES_H_
#define FLOWRAG_SCHEMA_SAMPLES_H_

#include <cstddef>
#include <vector>

#include "schema/json_records.h"

namespace flowrag {

struct SampleOptions {
  size_t token_budget = 8000;  // A.4.3: ~8K tokens for the diverse samples
  size_t chars_per_token = 4;
};

// Index of r*, or -1 when there are no records.
long RepresentativeRecord(const std::vector<FlatRecord>& records);

// Indexes of the diverse samples, in selection order.
std::vector<size_t> DiverseSamples(const std::vector<FlatRecord>& records, long representative,
                                   const SampleOptions& options = {});

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_SAMPLES_H_
