// How the engine picks, fits and persists its passage embedder, reading and
// writing the store's state through StoreState (storage/store_state.h).
//
// "hash" (built-in): the IDF table lives in the store's embedder state
// ("hash"), the dimension in meta "hash_dimension". "openai": configured by
// EngineOptions::openai_embedder, else from the environment
// (llm/openai_embedder.h). "custom": EngineOptions::custom_embedder, the
// caller's own. Meta "embedder" records which one the store was indexed
// with, and "dense_model" the model id whose vectors back the dense index.
// Meta "language" records the tokeniser's stemming language (BM25 and the
// hash embedder), "tokenizer" its signature, "idf_tokenizer" the signature
// the IDF table was fitted under (another one forces a refit).
#ifndef FLOWRAG_MODELS_EMBEDDER_SETUP_H_
#define FLOWRAG_MODELS_EMBEDDER_SETUP_H_

#include <memory>
#include <string>

#include "embed/embedder.h"
#include "flowrag/options.h"
#include "storage/store.h"
#include "storage/store_state.h"

namespace flowrag {

// The embedder names (kHashEmbedderName, ...) are those of meta "embedder"
// (storage/store_state.h).
inline constexpr char kHashModelFamily[] = "flowrag-hash-v1:";

// The tokeniser language of the store: the one it records in meta
// "language"; a store recording none (new, or indexed before languages were
// recorded: then "english-s") takes EngineOptions::language, else
// kDefaultLanguage. InvalidArgument for an unknown language;
// FailedPrecondition when EngineOptions::language names another language
// than the recorded one (queries must tokenise like the index did).
Result<std::string> ResolveLanguage(StoreState& state, const EngineOptions& options);

// The embedder kind to use: the option, else "custom" when
// EngineOptions::custom_embedder is set, else what the store was indexed
// with, else "hash". InvalidArgument for an unknown name, or "custom"
// asked for without an embedder.
Result<std::string> ResolveEmbedderKind(StoreState& state, const EngineOptions& options);

// Builds the embedder from the store's saved state (a hash embedder with no
// fitted IDF yet gets an empty table). "custom" without
// EngineOptions::custom_embedder (a store indexed with one, opened
// without it) gives a stand-in with the stored model id whose Embed()
// fails with FailedPrecondition: stored vectors stay usable.
Result<std::shared_ptr<Embedder>> LoadEmbedder(StoreState& state, const std::string& kind,
                                               const EngineOptions& options);

// For "hash": refits the IDF on all stored passages (read from `documents`)
// when there is none yet, when `force`, when the passage count grew by
// `growth` since the last fit, or when the table was fitted under another
// tokeniser (meta "idf_tokenizer"). A refit marks every entity's synonym
// edges pending in `graph` (their names' vectors change with the table),
// then stores the table, "idf_tokenizer" and "hash_dimension" in `state`.
// Sets *refitted. For other kinds, returns `current` unchanged. The three
// interfaces are of one store.
Result<std::shared_ptr<Embedder>> MaybeRefitEmbedder(StoreState& state, DocumentStore& documents,
                                                     GraphSink& graph, const std::string& kind,
                                                     const EngineOptions& options,
                                                     std::shared_ptr<Embedder> current, bool force,
                                                     double growth, bool* refitted);

}  // namespace flowrag

#endif  // FLOWRAG_MODELS_EMBEDDER_SETUP_H_
