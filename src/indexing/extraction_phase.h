// Extraction, the phase of an index run after embedding (index_context.h):
// passages pending for the extractor → extractor → GraphWriter, committed in
// batches.
//
// The offline ("heuristic") extractor first builds its name dictionary from
// every stored title, then its workers claim batches of pending passages
// for a lease (GraphSink::ClaimPassagesForExtraction), so that concurrent
// index runs on one store, in this process or others, share them; then it
// extracts again the older passages that name a title new to the corpus,
// and collects entities nothing links. The LLM extractor works through the
// pending passages in batches; a passage whose answer fails stays pending
// for the next run. Every step resumes from what the store shows as done:
// a rerun after a crash gives the graph of a clean run.
#ifndef FLOWRAG_INDEXING_EXTRACTION_PHASE_H_
#define FLOWRAG_INDEXING_EXTRACTION_PHASE_H_

#include <functional>
#include <string>

#include "flowrag/models.h"
#include "indexing/index_context.h"

namespace flowrag {

// The extractor IndexOptions::extractor names: "none", "heuristic" or
// "llm:<prompt style>"; "auto" is the LLM one when `has_chat_model`.
// InvalidArgument for an unknown name or prompt style.
Result<std::string> ResolveExtractor(const IndexOptions& options, bool has_chat_model);

struct ExtractionSetup {
  std::string extractor;      // ResolveExtractor's answer, not "none"
  ChatModel* chat = nullptr;  // "llm:*" (unless a dry run): the model that extracts; not owned
  // The offline extractor's claimed batches run without the store's
  // cross-process writer lock (other runs extract beside them): called
  // before and after them. Either may be empty (nothing to let go of).
  std::function<void()> let_go_of_writer_lock;
  std::function<Status()> retake_writer_lock;
};

// Extracts every passage pending for setup.extractor (above); with
// IndexOptions::dry_run, the LLM extractor only estimates its calls and
// tokens into the report. Counts go to ctx.report. Errors: the store's,
// the model's setup, IndexOptions::interrupt's; the first worker error
// stops the other workers and releases their claims.
Status ExtractPendingPassages(IndexContext& ctx, const ExtractionSetup& setup);

}  // namespace flowrag

#endif  // FLOWRAG_INDEXING_EXTRACTION_PHASE_H_
