// ChatModel: an OpenAI-compatible chat completion endpoint, as every LLM
// feature of flowrag sees it (extraction, keywords, decomposition, answers).
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

#include "flowrag/status.h"

namespace flowrag {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

struct ChatRequest {
  std::vector<ChatMessage> messages;
  double temperature = 0.0;
  int max_tokens = 2048;
  // Ask for a JSON object (OpenAI "response_format": {"type": "json_object"}).
  bool json_mode = false;
};

struct ChatResponse {
  std::string content;
  std::string finish_reason;  // "stop", "length" (cut off), ...
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  bool from_cache = false;
};

// Totals since construction, for diagnostics and cost reports.
struct ChatUsage {
  int64_t requests = 0;      // HTTP requests sent (retries included)
  int64_t cache_hits = 0;
  int64_t retries = 0;
  int64_t failures = 0;
  int64_t prompt_tokens = 0;  // of answers received (cache hits included)
  int64_t completion_tokens = 0;
};

class ChatModel {
 public:
  virtual ~ChatModel() = default;
  // Model name, part of the response cache key.
  virtual std::string Model() const = 0;
  virtual Result<ChatResponse> Complete(const ChatRequest& request) = 0;
  // Completes several requests with up to the client's concurrency limit;
  // results[i] answers requests[i]. One failure does not fail the others.
  virtual std::vector<Result<ChatResponse>> CompleteBatch(std::span<const ChatRequest> requests) = 0;
  virtual ChatUsage usage() const = 0;
};

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
