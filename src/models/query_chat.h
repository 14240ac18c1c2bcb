// QueryChatModel: the chat model an engine's reads use (query-time LLM
// steps, answers, the schema agent): the one EngineOptions configure
// (chat_setup.h), made on first use and its answers cached in the store
// like extraction answers (llm_cache.h); none when nothing is configured.
//
// Thread-safety: Get() may be called concurrently; the model is made once.
#ifndef FLOWRAG_MODELS_QUERY_CHAT_H_
#define FLOWRAG_MODELS_QUERY_CHAT_H_

#include <memory>
#include <mutex>

#include "flowrag/options.h"
#include "llm/chat_model.h"
#include "storage/store.h"

namespace flowrag {

class QueryChatModel {
 public:
  // `options` and `responses` must outlive this object.
  QueryChatModel(const EngineOptions& options, LlmResponseStore* responses)
      : options_(options), responses_(responses) {}

  // The model (not owned; lives as long as this object), null without one,
  // or the configuration's error (InvalidArgument naming the field or
  // variable), the same on every call.
  Result<ChatModel*> Get();

 private:
  const EngineOptions& options_;
  LlmResponseStore* responses_;
  std::once_flag once_;
  Status status_;
  std::unique_ptr<ResponseCache> cache_;
  std::shared_ptr<ChatModel> model_;
};

}  // namespace flowrag

#endif  // FLOWRAG_MODELS_QUERY_CHAT_H_
