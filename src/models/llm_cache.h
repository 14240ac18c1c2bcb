// StoreResponseCache: the store's llm_cache table behind the ResponseCache
// interface of llm/chat_model.h, so a re-run (after a crash or on a grown
// corpus) replays every answer already paid for. Token counts are kept with
// each answer; `flowrag stats` sums them as the extraction cost so far.
//
// Thread-safety: safe to share (the store serialises access).
#ifndef FLOWRAG_MODELS_LLM_CACHE_H_
#define FLOWRAG_MODELS_LLM_CACHE_H_

#include "llm/chat_model.h"
#include "storage/store.h"

namespace flowrag {

class StoreResponseCache final : public ResponseCache {
 public:
  explicit StoreResponseCache(LlmResponseStore* store) : store_(store) {}  // not owned
  Result<std::optional<ChatResponse>> Get(uint64_t key) override;
  Status Put(uint64_t key, const std::string& model, const std::string& request_json,
             const ChatResponse& response) override;

 private:
  LlmResponseStore* store_;
};

}  // namespace flowrag

#endif  // FLOWRAG_MODELS_LLM_CACHE_H_
