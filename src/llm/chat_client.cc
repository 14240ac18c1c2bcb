#include "llm/chat_client.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "common/hash.h"
#include "llm/chat_stream.h"
#include "llm/openai_common.h"

namespace flowrag {
namespace {

using Json = nlohmann::json;
using llm_internal::DescribeJson;
using llm_internal::ErrorDetail;
using llm_internal::kServerMessageBytes;
using llm_internal::Snippet;

// Bump when the canonical request JSON changes shape: old cache entries then
// simply stop matching instead of answering a different question.
constexpr int kCanonicalVersion = 1;
// Retry-After delays get up to this fraction added, so that clients told the
// same delay do not all come back at the same instant.
constexpr double kRetryAfterJitter = 0.1;
// Seed of the per-client jitter RNG (fixed: delays are reproducible).
constexpr uint64_t kJitterSeed = 0x5eed'c4a7'0000'0001ULL;
constexpr const char* kExpectedShape =
    "(expected {\"choices\": [{\"message\": {\"content\": \"...\"}, \"finish_reason\": ...}]})";

// Dumps as compact JSON; invalid UTF-8 becomes U+FFFD instead of throwing.
std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// Number of UTF-8 code points (bytes that are not continuation bytes).
int64_t CodePoints(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The usual rule of thumb for English text with GPT tokenisers: about four
// characters per token. Used only when the server reports no usage.
int64_t EstimateTokens(int64_t chars) { return (chars + 3) / 4; }

int64_t EstimatePromptTokens(const ChatRequest& request) {
  int64_t chars = 0;
  for (const ChatMessage& m : request.messages) chars += CodePoints(m.content);
  return EstimateTokens(chars);
}

// Reads usage.<field>: a non-negative integer, or absent/null (then nullopt).
Result<std::optional<int64_t>> UsageField(const Json& usage, const char* field) {
  auto it = usage.find(field);
  if (it == usage.end() || it->is_null()) return std::optional<int64_t>();
  if (it->is_number_unsigned() &&
      it->get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return std::optional<int64_t>(static_cast<int64_t>(it->get<uint64_t>()));
  }
  return Status::Unavailable(std::string("usage.") + field + " is " + Snippet(it->dump()) +
                             ", expected a non-negative integer");
}

// Validates a chat completions body and returns the answer. Errors are bare
// descriptions; the caller adds the URL and HTTP status.
Result<ChatResponse> ParseChatResponse(std::string_view body, const ChatRequest& request) {
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::Unavailable(std::string("body is not JSON ") + kExpectedShape + ": " +
                               Snippet(body));
  }
  if (!j.is_object()) {
    return Status::Unavailable("body is " + DescribeJson(j) + ", not a JSON object " +
                               kExpectedShape + ": " + Snippet(body));
  }
  auto choices = j.find("choices");
  if (choices == j.end()) {
    if (j.contains("error")) {
      return Status::Unavailable("body has an error instead of \"choices\": " + ErrorDetail(body));
    }
    return Status::Unavailable(std::string("body has no \"choices\" field ") + kExpectedShape +
                               ": " + Snippet(body));
  }
  if (!choices->is_array()) {
    return Status::Unavailable("\"choices\" is " + DescribeJson(*choices) + ", expected an array " +
                               kExpectedShape);
  }
  if (choices->empty()) return Status::Unavailable("\"choices\" is empty");
  const Json& choice = choices->front();
  if (!choice.is_object()) {
    return Status::Unavailable("choices[0] is " + DescribeJson(choice) + ", expected an object " +
                               kExpectedShape);
  }

  ChatResponse out;
  auto finish = choice.find("finish_reason");
  if (finish != choice.end() && !finish->is_null()) {
    if (!finish->is_string()) {
      return Status::Unavailable("choices[0].finish_reason is " + Snippet(finish->dump()) +
                                 ", expected a string");
    }
    out.finish_reason = finish->get<std::string>();
  }

  auto message = choice.find("message");
  if (message == choice.end()) {
    std::string hint = choice.contains("text") ? " (a /completions answer, not a chat one?)" : "";
    return Status::Unavailable("choices[0] has no \"message\"" + hint + " " + kExpectedShape);
  }
  if (!message->is_object()) {
    return Status::Unavailable("choices[0].message is " + DescribeJson(*message) +
                               ", expected an object " + kExpectedShape);
  }
  auto content = message->find("content");
  if (content == message->end()) {
    return Status::Unavailable("choices[0].message has no \"content\" " +
                               std::string(kExpectedShape));
  }
  if (content->is_string()) {
    out.content = content->get<std::string>();
  } else if (content->is_null() && out.finish_reason == "length") {
    out.content.clear();  // the budget ran out before any answer text
  } else if (content->is_null()) {
    std::string why =
        "choices[0].message.content is null (finish_reason \"" + out.finish_reason + "\")";
    auto refusal = message->find("refusal");
    if (refusal != message->end() && refusal->is_string()) {
      why += ": the model refused: " + Snippet(refusal->get<std::string>(), kServerMessageBytes);
    } else if (message->contains("tool_calls")) {
      why += ": the model answered with tool_calls";
    }
    return Status::Unavailable(std::move(why));
  } else {
    return Status::Unavailable("choices[0].message.content is " + DescribeJson(*content) +
                               ", expected a string");
  }

  std::optional<int64_t> prompt_tokens;
  std::optional<int64_t> completion_tokens;
  auto usage = j.find("usage");
  if (usage != j.end() && !usage->is_null()) {
    if (!usage->is_object()) {
      return Status::Unavailable("\"usage\" is " + DescribeJson(*usage) + ", expected an object");
    }
    FLOWRAG_ASSIGN_OR_RETURN(prompt_tokens, UsageField(*usage, "prompt_tokens"));
    FLOWRAG_ASSIGN_OR_RETURN(completion_tokens, UsageField(*usage, "completion_tokens"));
  }
  // Servers that report no usage (some llama.cpp and proxy setups) get the
  // ceil(chars / 4) estimate, so cost reports stay roughly right.
  out.prompt_tokens = prompt_tokens.value_or(EstimatePromptTokens(request));
  out.completion_tokens = completion_tokens.value_or(EstimateTokens(CodePoints(out.content)));
  return out;
}

// The answer a ChatStreamReader read, with estimated usage where the server
// reported none.
Result<ChatResponse> StreamedResponse(ChatStreamReader& stream, const ChatRequest& request) {
  FLOWRAG_ASSIGN_OR_RETURN(ChatResponse out, stream.Finish());
  if (!stream.usage_reported()) {
    out.prompt_tokens = EstimatePromptTokens(request);
    out.completion_tokens = EstimateTokens(CodePoints(out.content));
  }
  return out;
}

Status ValidateRequest(const ChatRequest& request) {
  if (request.messages.empty()) {
    return Status::InvalidArgument("ChatRequest.messages: expected at least one message");
  }
  for (size_t i = 0; i < request.messages.size(); ++i) {
    if (request.messages[i].role.empty()) {
      return Status::InvalidArgument("ChatRequest.messages[" + std::to_string(i) +
                                     "].role: expected \"system\", \"user\" or \"assistant\", "
                                     "got \"\"");
    }
  }
  if (request.max_tokens < 1) {
    return Status::InvalidArgument("ChatRequest.max_tokens: expected >= 1, got " +
                                   std::to_string(request.max_tokens));
  }
  if (!std::isfinite(request.temperature) || request.temperature < 0) {
    return Status::InvalidArgument("ChatRequest.temperature: expected a finite number >= 0, got " +
                                   std::to_string(request.temperature));
  }
  return Status::Ok();
}

Json MessagesJson(const ChatRequest& request) {
  Json messages = Json::array();
  for (const ChatMessage& m : request.messages) {
    messages.push_back({{"role", m.role}, {"content", m.content}});
  }
  return messages;
}

}  // namespace

Result<OpenAiChatOptions> OpenAiChatOptionsFromEnv(OpenAiChatOptions base) {
  FLOWRAG_RETURN_IF_ERROR(llm_internal::ReadEndpointEnv("FLOWRAG_LLM_", &base));
  FLOWRAG_RETURN_IF_ERROR(llm_internal::ReadTransportEnv("FLOWRAG_LLM_", &base));
  return base;
}

bool ChatModelConfigured() {
  return std::getenv("FLOWRAG_LLM_BASE_URL") != nullptr ||
         std::getenv("FLOWRAG_LLM_MODEL") != nullptr;
}

std::string CanonicalChatRequestJson(std::string_view model, const ChatRequest& request) {
  // nlohmann's default object type is a std::map: keys come out sorted.
  Json j = Json::object();
  j["v"] = kCanonicalVersion;
  j["model"] = std::string(model);
  j["messages"] = MessagesJson(request);
  // -0.0 and 0.0 ask the same question.
  j["temperature"] = request.temperature == 0 ? 0.0 : request.temperature;
  j["max_tokens"] = request.max_tokens;
  j["json_mode"] = request.json_mode;
  return Dump(j);
}

uint64_t ChatCacheKey(std::string_view model, const ChatRequest& request) {
  return Hash64(CanonicalChatRequestJson(model, request));
}

// The outcome of one HTTP attempt.
struct OpenAiChatClient::Attempt : llm_internal::AttemptStatus {
  ChatResponse response;  // the validated answer when `status` is OK
  bool emitted = false;   // text went to the sink: not to be retried
};

Result<std::unique_ptr<OpenAiChatClient>> OpenAiChatClient::Create(
    OpenAiChatOptions options, ResponseCache* cache, std::shared_ptr<HttpClient> http) {
  constexpr const char* kOptionsType = "OpenAiChatOptions";
  FLOWRAG_RETURN_IF_ERROR(llm_internal::CheckEndpointOptions(options, kOptionsType));
  FLOWRAG_RETURN_IF_ERROR(llm_internal::CheckTransportOptions(options, kOptionsType));
  if (http == nullptr) http = NewCurlHttpClient();
  return std::unique_ptr<OpenAiChatClient>(
      new OpenAiChatClient(std::move(options), cache, std::move(http)));
}

OpenAiChatClient::OpenAiChatClient(OpenAiChatOptions options, ResponseCache* cache,
                                   std::shared_ptr<HttpClient> http)
    : options_(std::move(options)),
      cache_(cache),
      http_(std::move(http)),
      url_(llm_internal::TrimSlashes(options_.base_url) + "/chat/completions"),
      redacted_url_(RedactUrl(url_)),
      slots_(options_.max_concurrency),
      jitter_rng_(kJitterSeed) {}

OpenAiChatClient::~OpenAiChatClient() = default;

std::string OpenAiChatClient::Model() const { return options_.model; }

ChatUsage OpenAiChatClient::usage() const {
  ChatUsage u;
  u.requests = requests_.load(std::memory_order_relaxed);
  u.cache_hits = cache_hits_.load(std::memory_order_relaxed);
  u.retries = retries_.load(std::memory_order_relaxed);
  u.failures = failures_.load(std::memory_order_relaxed);
  u.prompt_tokens = prompt_tokens_.load(std::memory_order_relaxed);
  u.completion_tokens = completion_tokens_.load(std::memory_order_relaxed);
  return u;
}

void OpenAiChatClient::RecordTokens(const ChatResponse& response) {
  prompt_tokens_.fetch_add(response.prompt_tokens, std::memory_order_relaxed);
  completion_tokens_.fetch_add(response.completion_tokens, std::memory_order_relaxed);
}

OpenAiChatClient::Attempt OpenAiChatClient::SendOnce(const std::string& body,
                                                     const ChatRequest& request,
                                                     const TextSink* sink) {
  HttpRequest http_request = llm_internal::JsonPostRequest(
      url_, body, options_.connect_timeout_ms, options_.timeout_ms, options_.api_key);
  std::optional<ChatStreamReader> stream;
  if (sink != nullptr) {
    stream.emplace(sink);
    http_request.headers.front() = "Accept: text/event-stream";
    http_request.on_body = [&stream](std::string_view piece) { return stream->Feed(piece); };
  }

  Attempt attempt;
  Result<HttpResponse> result = [&] {
    llm_internal::RequestSlots::Lease slot(&slots_);
    return http_->Post(http_request);
  }();
  attempt.emitted = stream && stream->emitted();
  // The reader stopped the transfer: the sink cancelled, or the stream is
  // malformed (not retried, as a malformed body is not).
  if (stream && !result.ok() && result.status().code() == StatusCode::kCancelled) {
    attempt.status = stream->Finish().status();
    return attempt;
  }
  if (!llm_internal::CheckHttpResult(result, redacted_url_, &attempt)) return attempt;
  const std::string where = llm_internal::PostWhere(redacted_url_, result->status);
  Result<ChatResponse> parsed = llm_internal::ParseResponseBody<ChatResponse>(where, [&] {
    return stream && stream->saw_events() ? StreamedResponse(*stream, request)
                                          : ParseChatResponse(result->body, request);
  });
  if (!parsed.ok()) {
    attempt.status = parsed.status();
    return attempt;
  }
  // A server that ignored "stream" answered with one JSON body.
  if (stream && !stream->saw_events() && !parsed->content.empty() && !(*sink)(parsed->content)) {
    attempt.status = Status::Cancelled("chat completion: the reader stopped");
    return attempt;
  }
  attempt.response = std::move(parsed).value();
  return attempt;
}

double OpenAiChatClient::RetryDelayMs(double backoff_ms, const Attempt& attempt) {
  double u = 0;
  {
    std::lock_guard<std::mutex> lock(jitter_mu_);
    u = std::uniform_real_distribution<double>(0.0, 1.0)(jitter_rng_);
  }
  double delay = attempt.retry_after_ms ? *attempt.retry_after_ms * (1.0 + kRetryAfterJitter * u)
                                        : backoff_ms * (0.5 + 0.5 * u);
  return std::min(delay, static_cast<double>(options_.max_backoff_ms));
}

Result<ChatResponse> OpenAiChatClient::SendWithRetries(const std::string& body,
                                                       const ChatRequest& request,
                                                       const TextSink* sink) {
  double backoff_ms = options_.initial_backoff_ms;  // RetryDelayMs() caps it
  for (int attempt_number = 0;; ++attempt_number) {
    if (attempt_number > 0) retries_.fetch_add(1, std::memory_order_relaxed);
    requests_.fetch_add(1, std::memory_order_relaxed);
    Attempt attempt = SendOnce(body, request, sink);
    if (attempt.status.ok()) return std::move(attempt.response);
    if (!attempt.retryable || attempt.emitted || attempt_number >= options_.max_retries) {
      return Status(attempt.status.code(),
                    attempt.status.message() + llm_internal::GaveUpSuffix(attempt_number));
    }
    double delay_ms = RetryDelayMs(backoff_ms, attempt);
    backoff_ms = llm_internal::NextBackoffMs(backoff_ms, options_.backoff_multiplier,
                                             options_.max_backoff_ms);
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(delay_ms));
  }
}

Result<ChatResponse> OpenAiChatClient::CompleteUncounted(const ChatRequest& request,
                                                         const TextSink* sink) {
  FLOWRAG_RETURN_IF_ERROR(ValidateRequest(request));
  const std::string canonical = CanonicalChatRequestJson(options_.model, request);
  const uint64_t key = Hash64(canonical);

  if (cache_ != nullptr) {
    Result<std::optional<ChatResponse>> cached = cache_->Get(key);
    if (!cached.ok()) return cached.status().WithContext("response cache");
    if (cached->has_value()) {
      ChatResponse response = std::move(**cached);
      response.from_cache = true;
      cache_hits_.fetch_add(1, std::memory_order_relaxed);
      RecordTokens(response);
      if (sink != nullptr && !response.content.empty() && !(*sink)(response.content)) {
        return Status::Cancelled("chat completion: the reader stopped");
      }
      return response;
    }
  }

  Json body = Json::object();
  body["model"] = options_.model;
  body["messages"] = MessagesJson(request);
  body["temperature"] = request.temperature;
  body["max_tokens"] = request.max_tokens;
  if (request.json_mode) body["response_format"] = {{"type", "json_object"}};
  if (sink != nullptr) {
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
  }
  FLOWRAG_ASSIGN_OR_RETURN(ChatResponse response, SendWithRetries(Dump(body), request, sink));
  RecordTokens(response);

  if (cache_ != nullptr) {
    Status put = cache_->Put(key, options_.model, canonical, response);
    if (!put.ok() && !put_failure_logged_.exchange(true)) {
      // The answer is good and already paid for: return it. Only the replay
      // on a re-run is lost, so this is worth one line, not a failure.
      std::fprintf(stderr,
                   "flowrag: %s: could not store a chat response in the cache (%s); answers are "
                   "still returned, further cache write failures are not reported\n",
                   redacted_url_.c_str(), put.ToString().c_str());
    }
  }
  return response;
}

Result<ChatResponse> OpenAiChatClient::Complete(const ChatRequest& request) {
  return CompleteCounted(request, nullptr);
}

Result<ChatResponse> OpenAiChatClient::CompleteStreaming(const ChatRequest& request,
                                                         const TextSink& sink) {
  return CompleteCounted(request, &sink);
}

Result<ChatResponse> OpenAiChatClient::CompleteCounted(const ChatRequest& request,
                                                       const TextSink* sink) {
  Result<ChatResponse> result = [&]() -> Result<ChatResponse> {
    try {
      return CompleteUncounted(request, sink);
    } catch (const std::exception& e) {  // bad_alloc and the like; nothing else throws
      return Status::Internal("POST " + redacted_url_ + ": " + e.what());
    }
  }();
  if (!result.ok()) failures_.fetch_add(1, std::memory_order_relaxed);
  return result;
}

std::vector<Result<ChatResponse>> OpenAiChatClient::CompleteBatch(
    std::span<const ChatRequest> requests) {
  std::vector<std::optional<Result<ChatResponse>>> slots(requests.size());
  std::atomic<size_t> next{0};
  auto work = [this, &requests, &slots, &next] {
    for (;;) {
      size_t i = next.fetch_add(1);
      if (i >= requests.size()) return;
      slots[i].emplace(Complete(requests[i]));
    }
  };

  // Threads only wait on the network; the shared slots bound the requests in
  // flight, so more threads than max_concurrency would only queue.
  llm_internal::RunOnThreads(std::min(options_.max_concurrency, requests.size()), work);

  std::vector<Result<ChatResponse>> results;
  results.reserve(requests.size());
  for (std::optional<Result<ChatResponse>>& slot : slots) results.push_back(std::move(*slot));
  return results;
}

}  // namespace flowrag
