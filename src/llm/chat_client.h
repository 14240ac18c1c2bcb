// OpenAiChatClient: a ChatModel backed by any OpenAI-compatible chat
// completions endpoint (OpenAI, Ollama, vLLM, llama.cpp server, ...).
//
// Each Complete() sends
//   POST {base_url}/chat/completions
//   {"model": ..., "messages": [{"role": ..., "content": ...}, ...],
//    "temperature": ..., "max_tokens": ...,
//    "response_format": {"type": "json_object"}}   (only when json_mode)
// with "Authorization: Bearer <api_key>" only when a key is set, and returns
// choices[0].message.content, choices[0].finish_reason and
// usage.prompt_tokens / usage.completion_tokens. When the server reports no
// usage, token counts are estimated as ceil(characters / 4) (characters are
// UTF-8 code points; prompt = all message contents, completion = the answer).
// A response cut off by max_tokens (finish_reason "length") is returned as
// is, not as an error: callers decide what truncated output means. A null
// content is accepted only then (as ""), e.g. when a reasoning model spent
// its whole budget before answering.
//
// Response cache: with a ResponseCache, each request is first looked up by
// ChatCacheKey(model, request); a hit is returned with from_cache = true
// without any HTTP call, and every successful answer is stored afterwards
// (truncated ones included: the key contains max_tokens, so a caller that
// retries with a larger budget makes a new request). A failing Get() fails
// the call; a failing Put() after a successful answer does not (the answer is
// returned; the first such failure per client is logged to stderr).
//
// Retries: transport errors, timeouts, HTTP 408, 429 and 5xx are retried up to
// `max_retries` times. The delay before retry k (k = 1, 2, ...) is
// b_k = min(initial_backoff_ms * backoff_multiplier^(k-1), max_backoff_ms)
// scaled by a jitter factor drawn uniformly from [0.5, 1) ("equal jitter",
// from a per-client RNG with a fixed seed, so runs are reproducible). A
// Retry-After (seconds) or retry-after-ms header replaces b_k, plus up to 10%
// jitter, still capped at max_backoff_ms. Other 4xx answers and malformed 2xx
// bodies are not retried. Backoff sleeps do not hold a concurrency slot.
//
// Concurrency: at most `max_concurrency` HTTP requests are in flight at once
// across ALL concurrent Complete() / CompleteBatch() callers of one client.
//
// Errors (HTTP ones start with "POST <url>: " and name the HTTP status and
// what was wrong; the server's error.message is quoted when the body has one):
//   InvalidArgument   a malformed ChatRequest (no messages, empty role,
//                     max_tokens < 1, temperature not finite or negative), or
//                     a non-retryable 4xx (bad model, bad key, context too
//                     long);
//   Unavailable       retries exhausted on 429/5xx/transport errors, or a 2xx
//                     body that is not {"choices": [{"message": {"content":
//                     "..."}, "finish_reason": ...}], "usage": {...}};
//   DeadlineExceeded  the last attempt timed out;
//   any code          a ResponseCache::Get() error, prefixed with
//                     "response cache: ".
//
// Thread-safety: all methods may be called concurrently. The client does not
// own the ResponseCache, which must outlive it and allow concurrent calls.
#ifndef FLOWRAG_LLM_CHAT_CLIENT_H_
#define FLOWRAG_LLM_CHAT_CLIENT_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/models.h"
#include "flowrag/status.h"
#include "llm/chat_model.h"
#include "llm/http_client.h"
#include "llm/openai_common.h"

namespace flowrag {

// Overrides fields of `base` from the environment; unset variables leave the
// field alone:
//   FLOWRAG_LLM_BASE_URL      an http:// or https:// URL
//   FLOWRAG_LLM_MODEL         a non-empty model name
//   FLOWRAG_LLM_API_KEY       if set (even to ""), the key;
//   OPENAI_API_KEY            used only when the former is unset
//   FLOWRAG_LLM_TIMEOUT_MS    positive integer (milliseconds)
//   FLOWRAG_LLM_CONCURRENCY   positive integer
//   FLOWRAG_LLM_MAX_RETRIES   non-negative integer
// Setting FLOWRAG_LLM_API_KEY="" is how to keep a global OPENAI_API_KEY from
// being sent to a local or third-party server.
// Returns InvalidArgument naming the variable and its value when a value is
// malformed, e.g. FLOWRAG_LLM_CONCURRENCY="abc": expected a positive integer.
Result<OpenAiChatOptions> OpenAiChatOptionsFromEnv(OpenAiChatOptions base);

// True when FLOWRAG_LLM_BASE_URL or FLOWRAG_LLM_MODEL is set (even to ""):
// the user asked for a chat model, so features use it instead of their
// offline path. An empty value then fails in OpenAiChatOptionsFromEnv()
// rather than silently falling back to offline mode.
bool ChatModelConfigured();

// The canonical JSON of what determines a chat answer, as stored beside
// cached responses (ResponseCache::Put's request_json):
//   {"json_mode":b,"max_tokens":n,"messages":[{"content":..,"role":..}],
//    "model":..,"temperature":x,"v":1}
// Keys are sorted and there is no whitespace, so equal requests give equal
// bytes. Invalid UTF-8 in a string becomes U+FFFD (as in the request body).
std::string CanonicalChatRequestJson(std::string_view model, const ChatRequest& request);

// The response cache key: Hash64 of CanonicalChatRequestJson(). Part of the
// store format (llm_cache): it must never change for a given input.
uint64_t ChatCacheKey(std::string_view model, const ChatRequest& request);

class OpenAiChatClient : public ChatModel {
 public:
  // Validates `options` (InvalidArgument naming the field otherwise). `cache`
  // may be null (no caching); it is not owned and must outlive the client.
  // `http` is shared with the caller; nullptr means a new curl client. No
  // request is made until the first Complete().
  static Result<std::unique_ptr<OpenAiChatClient>> Create(
      OpenAiChatOptions options, ResponseCache* cache = nullptr,
      std::shared_ptr<HttpClient> http = nullptr);

  OpenAiChatClient(const OpenAiChatClient&) = delete;
  OpenAiChatClient& operator=(const OpenAiChatClient&) = delete;
  ~OpenAiChatClient() override;

  // options().model.
  std::string Model() const override;

  // Blocks for up to about (max_retries + 1) * timeout_ms plus backoff.
  Result<ChatResponse> Complete(const ChatRequest& request) override;

  // Complete() with "stream": true (and stream_options.include_usage): each
  // piece of text goes to `sink` as the server sends it. Retried like
  // Complete() only until the first piece has arrived. A cache hit, or a
  // server that answers with a plain JSON body, hands over the whole text
  // at once. A sink returning false aborts the transfer (Cancelled).
  Result<ChatResponse> CompleteStreaming(const ChatRequest& request,
                                         const TextSink& sink) override;

  // Runs the requests on up to max_concurrency threads (the calling thread
  // included); results[i] answers requests[i], each with its own status.
  std::vector<Result<ChatResponse>> CompleteBatch(std::span<const ChatRequest> requests) override;

  // Totals since construction. Each counter is exact; a snapshot taken while
  // calls run may mix counters from before and after one of them.
  //   requests   HTTP POSTs attempted, retries included;
  //   retries    attempts that repeated a failed one;
  //   failures   Complete() calls (batch items included) that returned an error;
  //   cache_hits answers served from the cache;
  //   tokens     of answers returned, cache hits included (estimated when the
  //              server reported no usage).
  ChatUsage usage() const override;

  const OpenAiChatOptions& options() const { return options_; }
  // "{base_url}/chat/completions".
  const std::string& url() const { return url_; }

 private:
  struct Attempt;

  OpenAiChatClient(OpenAiChatOptions options, ResponseCache* cache,
                   std::shared_ptr<HttpClient> http);

  // Complete() (`sink` null) or CompleteStreaming(), counting failures.
  Result<ChatResponse> CompleteCounted(const ChatRequest& request, const TextSink* sink);
  Result<ChatResponse> CompleteUncounted(const ChatRequest& request, const TextSink* sink);
  // Sends `body` with retries; returns the validated answer or the final error.
  Result<ChatResponse> SendWithRetries(const std::string& body, const ChatRequest& request,
                                       const TextSink* sink);
  // One HTTP attempt and the validation of its answer; with a sink, the
  // answer is read as a stream and handed over as it arrives.
  Attempt SendOnce(const std::string& body, const ChatRequest& request, const TextSink* sink);
  // The delay before the next retry, given the current exponential base.
  double RetryDelayMs(double backoff_ms, const Attempt& attempt);
  void RecordTokens(const ChatResponse& response);

  const OpenAiChatOptions options_;
  ResponseCache* const cache_;  // not owned; may be null
  const std::shared_ptr<HttpClient> http_;
  const std::string url_;
  const std::string redacted_url_;

  llm_internal::RequestSlots slots_;  // bounds requests in flight to max_concurrency

  std::mutex jitter_mu_;
  std::mt19937_64 jitter_rng_;  // guarded by jitter_mu_

  std::atomic<bool> put_failure_logged_{false};

  std::atomic<int64_t> requests_{0};
  std::atomic<int64_t> cache_hits_{0};
  std::atomic<int64_t> retries_{0};
  std::atomic<int64_t> failures_{0};
  std::atomic<int64_t> prompt_tokens_{0};
  std::atomic<int64_t> completion_tokens_{0};
};

}  // namespace flowrag

#endif  // FLOWRAG_LLM_CHAT_CLIENT_H_
