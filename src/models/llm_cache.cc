#include "models/llm_cache.h"

namespace flowrag {

Result<std::optional<ChatResponse>> StoreResponseCache::Get(uint64_t key) {
  return store_->GetCachedResponse(key);
}

Status StoreResponseCache::Put(uint64_t key, const std::string& model,
                               const std::string& request_json, const ChatResponse& response) {
  return store_->PutCachedResponse(key, model, request_json, response);
}

}  // namespace flowrag
