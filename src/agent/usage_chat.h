// UsageChat: a ChatModel that forwards to another and counts what this
// wrapper's own calls cost, so one answer's usage is exact even while other
// queries share the underlying client.
//
// Prices (USD per million tokens) come from FLOWRAG_LLM_PRICE_INPUT and
// FLOWRAG_LLM_PRICE_OUTPUT (0 when unset); cached answers cost nothing.
// Thread-safe.
#ifndef FLOWRAG_AGENT_USAGE_CHAT_H_
#define FLOWRAG_AGENT_USAGE_CHAT_H_

#include <mutex>

#include "flowrag/types.h"
#include "llm/chat_model.h"

namespace flowrag {

struct TokenPrices {
  double input_per_million = 0.0;
  double output_per_million = 0.0;
};

// InvalidArgument naming the variable when a price is not a non-negative number.
Result<TokenPrices> TokenPricesFromEnv();

class UsageChat final : public ChatModel {
 public:
  UsageChat(ChatModel* inner, TokenPrices prices) : inner_(inner), prices_(prices) {}

  std::string Model() const override { return inner_->Model(); }
  Result<ChatResponse> Complete(const ChatRequest& request) override;
  Result<ChatResponse> CompleteStreaming(const ChatRequest& request,
                                         const TextSink& sink) override;
  std::vector<Result<ChatResponse>> CompleteBatch(std::span<const ChatRequest> requests) override;
  ChatUsage usage() const override;

  TokenUsage tokens() const;

 private:
  void Count(const Result<ChatResponse>& r);

  ChatModel* inner_;
  TokenPrices prices_;
  mutable std::mutex mu_;
  TokenUsage tokens_;
  ChatUsage usage_;
};

}  // namespace flowrag

#endif  // FLOWRAG_AGENT_USAGE_CHAT_H_
