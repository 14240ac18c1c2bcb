#include "agent/usage_chat.h"

#include <cstdlib>
#include <string>

namespace flowrag {
namespace {

Result<double> PriceFromEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return 0.0;
  char* end = nullptr;
  const double d = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(d >= 0.0)) {
    return Status::InvalidArgument(std::string(name) + "=\"" + v +
                                   "\": expected a non-negative number (USD per million tokens)");
  }
  return d;
}

}  // namespace

Result<TokenPrices> TokenPricesFromEnv() {
  TokenPrices p;
  FLOWRAG_ASSIGN_OR_RETURN(p.input_per_million, PriceFromEnv("FLOWRAG_LLM_PRICE_INPUT"));
  FLOWRAG_ASSIGN_OR_RETURN(p.output_per_million, PriceFromEnv("FLOWRAG_LLM_PRICE_OUTPUT"));
  return p;
}

void UsageChat::Count(const Result<ChatResponse>& r) {
  std::lock_guard<std::mutex> lock(mu_);
  ++usage_.requests;
  if (!r.ok()) {
    ++usage_.failures;
    return;
  }
  ++tokens_.llm_calls;
  tokens_.prompt_tokens += r->prompt_tokens;
  tokens_.completion_tokens += r->completion_tokens;
  usage_.prompt_tokens += r->prompt_tokens;
  usage_.completion_tokens += r->completion_tokens;
  if (r->from_cache) {
    ++tokens_.cache_hits;
    ++usage_.cache_hits;
    return;
  }
  tokens_.cost_usd += (static_cast<double>(r->prompt_tokens) * prices_.input_per_million +
                       static_cast<double>(r->completion_tokens) * prices_.output_per_million) /
                      1e6;
}

Result<ChatResponse> UsageChat::Complete(const ChatRequest& request) {
  Result<ChatResponse> r = inner_->Complete(request);
  Count(r);
  return r;
}

Result<ChatResponse> UsageChat::CompleteStreaming(const ChatRequest& request,
                                                  const TextSink& sink) {
  Result<ChatResponse> r = inner_->CompleteStreaming(request, sink);
  Count(r);
  return r;
}

std::vector<Result<ChatResponse>> UsageChat::CompleteBatch(std::span<const ChatRequest> requests) {
  std::vector<Result<ChatResponse>> out = inner_->CompleteBatch(requests);
  for (const auto& r : out) Count(r);
  return out;
}

ChatUsage UsageChat::usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return usage_;
}

TokenUsage UsageChat::tokens() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tokens_;
}

}  // namespace flowrag
