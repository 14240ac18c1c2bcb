// Schema records, the write phases of Engine::Ingest (schema-contracts
// paper, Appendix B) around the shared ones (index_context.h). The plan
// (schema/construct.h) is made before; then:
//   documents: every planned record is a document with its source_records
//     row, written in the same transaction, in batches; records stored with
//     the same hash are skipped, records gone from the contract's sources
//     deleted;
//   (embedding and extraction of text documents: embed_phase.h,
//     extraction_phase.h)
//   graph: record entities (DERIVED_FROM: defined by the record's first
//     passage, mentioned by its text chunks), then their relationships, then
//     record names found in text passages. Each batch is one transaction
//     and is rewritten whole on every run, so a crash between the passes is
//     repaired by the next run; an edge to an entity that does not exist is
//     collected with it (link validity stays 100%).
#ifndef FLOWRAG_INDEXING_SCHEMA_RECORDS_H_
#define FLOWRAG_INDEXING_SCHEMA_RECORDS_H_

#include "flowrag/schema.h"
#include "indexing/index_context.h"
#include "schema/construct.h"

namespace flowrag {

// Writes the plan's records as documents (above), IndexOptions::batch_size
// per transaction; with IngestOptions::remove_missing, deletes the stored
// records of the plan's sources that it no longer has
// (report->records_removed). Counts go to ctx.report (= report->index).
Status WriteRecordDocuments(IndexContext& ctx, const ConstructionPlan& plan,
                            const IngestOptions& options, IngestReport* report);

// Writes the plan's entities and links into the graph (above), in
// transactions of IndexOptions::extract_batch_size records;
// report->text_mentions counts record names found in text passages.
Status WriteRecordGraph(IndexContext& ctx, const ConstructionPlan& plan, IngestReport* report);

}  // namespace flowrag

#endif  // FLOWRAG_INDEXING_SCHEMA_RECORDS_H_
