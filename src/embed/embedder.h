// Embedder: turns texts into L2-normalised vectors. The interface is public
// (include/flowrag/models.h: a caller may hand the engine its own); this
// header stays for the modules that include it by its old name.
//
// Implementations: the built-in hashed embedder (embed/hashed_embedder.h,
// offline, deterministic) and the OpenAI-compatible client
// (llm/openai_embedder.h). Retrieval code sees only this interface.
#ifndef FLOWRAG_EMBED_EMBEDDER_H_
#define FLOWRAG_EMBED_EMBEDDER_H_

#include "common/matrix.h"
#include "flowrag/models.h"

#endif  // FLOWRAG_EMBED_EMBEDDER_H_
