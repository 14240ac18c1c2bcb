// Embed, the phase of an index run after ingest (index_context.h): every
// passage whose text has no vector of the embedder's model in the
// embedding cache is embedded, IndexOptions::embed_batch_size passages per
// committed batch; equal texts share one vector and one cache row. A rerun
// resumes from the cache. Which embedder, and whether it is refitted first,
// is the engine's choice (models/embedder_setup.h).
#ifndef FLOWRAG_INDEXING_EMBED_PHASE_H_
#define FLOWRAG_INDEXING_EMBED_PHASE_H_

#include "embed/embedder.h"
#include "indexing/index_context.h"

namespace flowrag {

// Embeds the missing passages (above); ctx.report.passages_embedded and the
// journal row count the texts embedded. Errors: the embedder's, the store's,
// IndexOptions::interrupt's.
Status EmbedMissingPassages(IndexContext& ctx, Embedder& embedder);

}  // namespace flowrag

#endif  // FLOWRAG_INDEXING_EMBED_PHASE_H_
