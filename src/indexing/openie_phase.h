// OpenIE import, a write phase (index_context.h): precomputed triples (the
// benchmark openie.jsonl keyed by corpus id, or HippoRAG's
// openie_results_ner_*.json keyed by passage text; extract/openie_import.h)
// become the graph of the stored passages they match, replacing what those
// passages had, in batches of ImportOpenIeOptions::batch_size per
// transaction. Records that match no stored passage are counted and the
// first few named in the report.
#ifndef FLOWRAG_INDEXING_OPENIE_PHASE_H_
#define FLOWRAG_INDEXING_OPENIE_PHASE_H_

#include <string>

#include "flowrag/options.h"
#include "flowrag/types.h"
#include "indexing/index_context.h"

namespace flowrag {

// FailedPrecondition when the store holds no passages; the reader's errors
// name the file and record. O(passages + records).
Status ImportOpenIeTriples(const PhaseStores& stores, const std::string& path,
                           const ImportOpenIeOptions& options, ImportReport* report);

}  // namespace flowrag

#endif  // FLOWRAG_INDEXING_OPENIE_PHASE_H_
