// Embedder: turns texts into L2-normalised vectors.
//
// Implementations: the built-in hashed embedder (embed/hashed_embedder.h,
// offline, deterministic) and the OpenAI-compatible client
// (llm/openai_embedder.h). Retrieval code sees only this interface.
//
// Thread-safety: Embed() may be called concurrently from several threads.
#ifndef FLOWRAG_EMBED_EMBEDDER_H_
#define FLOWRAG_EMBED_EMBEDDER_H_

#include <span>
#include <string>

#include "common/matrix.h"
#include "flowrag/status.h"

namespace flowrag {

class Embedder {
 public:
  virtual ~Embedder() = default;

  // Identifies the model and every parameter that changes its output; it is
  // part of the embedding cache key, so two embedders with the same id must
  // produce the same vectors for the same text.
  virtual std::string ModelId() const = 0;

  // The vector dimension, or 0 while unknown (a remote model before its first
  // answer).
  virtual size_t Dimension() const = 0;

  // Embeds texts[i] into row i of the result (texts.size() x Dimension()).
  // Every row is L2-normalised (an empty text gives a zero row). Fails as a
  // whole: no partial results.
  virtual Result<FloatMatrix> Embed(std::span<const std::string> texts) = 0;

  // True when embedding is cheaper than reading a cached vector (an
  // in-process model): then short graph texts are embedded when a snapshot is
  // built instead of being stored. Passage vectors are always cached.
  virtual bool IsLocal() const { return false; }
};

}  // namespace flowrag

#endif  // FLOWRAG_EMBED_EMBEDDER_H_
