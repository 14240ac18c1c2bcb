// ChatModel: a chat completion model, as every LLM feature of flowrag sees
// it (extraction, keywords, decomposition, answers). The interface and its
// request and response types are public (include/flowrag/models.h: a caller
// may hand the engine its own); this header adds the response cache the
// built-in client writes through.
//
// Implementations: OpenAiChatClient (llm/chat_client.h). Features that need a
// model take a ChatModel* that may be null: then they use their offline path
// and say so.
//
// Thread-safety: Complete() and CompleteBatch() may be called concurrently.
#ifndef FLOWRAG_LLM_CHAT_MODEL_H_
#define FLOWRAG_LLM_CHAT_MODEL_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "flowrag/models.h"
#include "flowrag/status.h"

namespace flowrag {

// Where chat responses are cached, keyed by a hash of (model, messages,
// parameters). The store implements it (llm_cache table), so a re-run of an
// interrupted extraction replays answers instead of paying for them again.
class ResponseCache {
 public:
  virtual ~ResponseCache() = default;
  virtual Result<std::optional<ChatResponse>> Get(uint64_t key) = 0;
  virtual Status Put(uint64_t key, const std::string& model, const std::string& request_json,
                     const ChatResponse& response) = 0;
};

}  // namespace flowrag

#endif  // FLOWRAG_LLM_CHAT_MODEL_H_
