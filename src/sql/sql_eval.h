// Execution-accuracy comparison of `flowrag sql eval --execute`
// (EvaluateSql, flowrag/sql.h), exposed for tests.
//
// Two result sets are the same answer when they have the same number of
// columns and rows and some permutation of the predicted columns makes
// their rows equal: as multisets, or, when `ordered` (the gold SQL has an
// ORDER BY), as sequences. Column names are ignored (a model may alias
// differently). Cells compare by SqlValueText, integers as reals (3 = 3.0),
// NULL as NULL. A truncated result (more rows than the limit existed) is
// never the same answer: the rows beyond the limit are unknown.
//
// Cost: O(c²·r log r) for the column signatures, then at most
// kMaxColumnPermutations permutations of O(r·c log r) each (columns with
// equal value multisets are the only ones permuted; beyond the cap the
// results are reported different).
#ifndef FLOWRAG_SQL_SQL_EVAL_H_
#define FLOWRAG_SQL_SQL_EVAL_H_

#include <cstddef>

#include "flowrag/sql.h"

namespace flowrag {

inline constexpr size_t kMaxColumnPermutations = 10000;

bool SameExecutionResult(const SqlResultSet& gold, const SqlResultSet& predicted, bool ordered);

}  // namespace flowrag

#endif  // FLOWRAG_SQL_SQL_EVAL_H_
