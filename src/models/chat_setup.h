// How the engine picks its chat model (EngineOptions, include/flowrag/
// options.h): the caller's ChatModel, else an OpenAI-compatible client on
// EngineOptions::openai_chat, else one configured by the FLOWRAG_LLM_*
// environment variables when they name a model, else none (offline).
#ifndef FLOWRAG_MODELS_CHAT_SETUP_H_
#define FLOWRAG_MODELS_CHAT_SETUP_H_

#include <memory>

#include "flowrag/options.h"
#include "llm/chat_model.h"

namespace flowrag {

// True when `options` give the engine a chat model (see above).
bool HasChatModel(const EngineOptions& options);

// The chat model: the caller's, returned as it is (not cached), else an
// OpenAI-compatible client on EngineOptions::openai_chat or the environment
// (its defaults where nothing is set: the "llm" extractor asked for one
// explicitly; callers that want a configured model only check
// HasChatModel() first). A client made here caches its answers in `cache`
// (may be null; not owned, must outlive the client). InvalidArgument naming
// the field or variable when the configuration is malformed.
Result<std::shared_ptr<ChatModel>> MakeChatModel(const EngineOptions& options,
                                                 ResponseCache* cache);

}  // namespace flowrag

#endif  // FLOWRAG_MODELS_CHAT_SETUP_H_
