// Helpers shared by the clients of OpenAI-compatible endpoints
// (OpenAiChatClient, OpenAiEmbedder) and by code that reports on the JSON
// they return: quoting bodies in error messages, reading the server's own
// error text and Retry-After, classifying one HTTP attempt, exponential
// backoff, validating the option fields both clients share and reading them
// from FLOWRAG_<PREFIX>_* environment variables.
//
// Private to src/: not part of the public API. The functions are pure and
// thread-safe unless stated otherwise; error message texts are part of the
// clients' contract (tests compare them), so change them with care.
#ifndef FLOWRAG_LLM_OPENAI_COMMON_H_
#define FLOWRAG_LLM_OPENAI_COMMON_H_

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "flowrag/status.h"
#include "llm/http_client.h"

namespace flowrag::llm_internal {

// How much of an unexpected body an error message quotes.
inline constexpr size_t kSnippetBytes = 200;
// How much of a server's own error message an error message quotes.
inline constexpr size_t kServerMessageBytes = 1000;

// The first `max_bytes` of `body` on one line (control bytes become spaces),
// cut at a UTF-8 boundary, with "..." when cut; "(empty body)" when empty.
std::string Snippet(std::string_view body, size_t max_bytes = kSnippetBytes);

// The server's own explanation in an error body, in the shapes OpenAI
// ({"error": {"message": ...}}), Ollama, TGI and TEI ({"error": "..."}),
// vLLM/FastAPI ({"detail": ...}) and others ({"message": ...}) use; else a
// snippet of the body.
std::string ErrorDetail(std::string_view body);

// `s` without leading and trailing spaces and tabs.
std::string_view TrimSpaceTab(std::string_view s);

// Milliseconds the server asked us to wait ("retry-after-ms: 250" or
// "Retry-After: 2" / "Retry-After: 1.5"), or nullopt. HTTP dates, negative
// and non-finite values are ignored.
std::optional<double> RetryAfterMs(const HttpResponse& response);

// "an object", "an array", "a string", "a boolean", "null", "a number" for
// messages about unexpected JSON.
std::string DescribeJson(const nlohmann::json& j);

// 408, 429 and 5xx: worth another attempt.
bool IsRetryableHttpStatus(int status);

// `url` without trailing slashes.
std::string TrimSlashes(std::string url);

// "POST <redacted_url>: HTTP <status>", the start of every message about a
// response.
std::string PostWhere(std::string_view redacted_url, int http_status);

// A JSON POST to `url` with "Accept: application/json" and, when `api_key` is
// not empty, "Authorization: Bearer <api_key>".
HttpRequest JsonPostRequest(const std::string& url, const std::string& body, int connect_timeout_ms,
                            int timeout_ms, const std::string& api_key);

// The failure part of one HTTP attempt; each client's Attempt extends it with
// the parsed answer.
struct AttemptStatus {
  Status status;  // OK: the attempt succeeded
  bool retryable = false;
  std::optional<double> retry_after_ms;  // set only for retryable HTTP statuses
};

// Checks the transport result and the HTTP status of one POST. Returns true
// for a 2xx response (the caller parses the body). Otherwise fills *attempt
// and returns false: transport errors keep their status and are retryable
// when kUnavailable or kDeadlineExceeded; a non-2xx status becomes
// "POST <url>: HTTP <status>: <server detail>", InvalidArgument for a
// non-retryable 4xx and Unavailable otherwise.
bool CheckHttpResult(const Result<HttpResponse>& result, std::string_view redacted_url,
                     AttemptStatus* attempt);

// Runs `parse()` (which returns Result<T>) and prefixes its error with
// "<where> but "; an exception from the JSON accessors becomes "could not read
// body: ...".
template <typename T, typename Parse>
Result<T> ParseResponseBody(const std::string& where, Parse&& parse) {
  Result<T> parsed = [&]() -> Result<T> {
    try {
      return parse();
    } catch (const std::exception& e) {  // nlohmann accessors; not expected after the checks
      return Status::Unavailable(std::string("could not read body: ") + e.what());
    }
  }();
  if (!parsed.ok()) return Status::Unavailable(where + " but " + parsed.status().message());
  return parsed;
}

// The next exponential backoff base: backoff_ms * multiplier, capped.
inline double NextBackoffMs(double backoff_ms, double multiplier, int max_backoff_ms) {
  return std::min(backoff_ms * multiplier, static_cast<double>(max_backoff_ms));
}

// " (gave up after N attempts)" after a retry (`attempt_number` > 0, 0-based),
// else "".
std::string GaveUpSuffix(int attempt_number);

// Bounds the requests in flight: Acquire() blocks while `limit` are held.
// Thread-safe.
class RequestSlots {
 public:
  explicit RequestSlots(size_t limit) : limit_(limit) {}
  RequestSlots(const RequestSlots&) = delete;
  RequestSlots& operator=(const RequestSlots&) = delete;

  void Acquire();
  void Release();

  // Holds one slot for its lifetime.
  class Lease {
   public:
    explicit Lease(RequestSlots* slots) : slots_(slots) { slots_->Acquire(); }
    ~Lease() { slots_->Release(); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

   private:
    RequestSlots* slots_;
  };

 private:
  const size_t limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t in_use_ = 0;  // guarded by mu_
};

// Runs `work` on the calling thread and on up to `threads` - 1 more, then
// joins them. If no more threads can be started, the ones running (at least
// the calling one) finish the work, so `work` must take items until none are
// left.
template <typename Work>
void RunOnThreads(size_t threads, const Work& work) {
  std::vector<std::thread> workers;
  if (threads > 1) workers.reserve(threads - 1);
  for (size_t w = 1; w < threads; ++w) {
    try {
      workers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // out of threads: the ones we have (at least this one) finish the work
    }
  }
  work();
  for (std::thread& t : workers) t.join();
}

// The value of environment variable `name`, or nullopt when unset.
std::optional<std::string> GetEnv(const char* name);

// Parses an environment variable holding an integer in [min, max]; the error
// reads `<name>="<value>": expected <expected>`.
Result<uint64_t> ParseEnvInteger(const std::string& name, const std::string& value, uint64_t min,
                                 uint64_t max, const char* expected);

// InvalidArgument "<options_type>.<field>: expected <expected>, got <got>"
// unless `ok`.
Status CheckOption(bool ok, const char* options_type, const char* field, const std::string& got,
                   const char* expected);

// The option fields OpenAiChatOptions and OpenAiEmbedderOptions share. The
// checks and environment variables come in two groups so that each client
// keeps its own fields (e.g. batch_size) between them, in its documented
// order.

// Checks base_url (an http:// or https:// URL) and model (not empty).
template <typename Options>
Status CheckEndpointOptions(const Options& o, const char* options_type) {
  std::string_view url = o.base_url;
  bool http_url = url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
  FLOWRAG_RETURN_IF_ERROR(CheckOption(http_url, options_type, "base_url",
                                      "\"" + RedactUrl(o.base_url) + "\"",
                                      "an http:// or https:// URL"));
  return CheckOption(!o.model.empty(), options_type, "model", "\"\"", "a model name");
}

// Checks the timeouts, retry and backoff fields and max_concurrency.
template <typename Options>
Status CheckTransportOptions(const Options& o, const char* options_type) {
  FLOWRAG_RETURN_IF_ERROR(CheckOption(o.timeout_ms > 0, options_type, "timeout_ms",
                                      std::to_string(o.timeout_ms), "> 0"));
  FLOWRAG_RETURN_IF_ERROR(CheckOption(o.connect_timeout_ms > 0, options_type, "connect_timeout_ms",
                                      std::to_string(o.connect_timeout_ms), "> 0"));
  FLOWRAG_RETURN_IF_ERROR(CheckOption(o.max_retries >= 0, options_type, "max_retries",
                                      std::to_string(o.max_retries), ">= 0"));
  FLOWRAG_RETURN_IF_ERROR(CheckOption(o.initial_backoff_ms >= 0, options_type, "initial_backoff_ms",
                                      std::to_string(o.initial_backoff_ms), ">= 0"));
  FLOWRAG_RETURN_IF_ERROR(
      CheckOption(std::isfinite(o.backoff_multiplier) && o.backoff_multiplier >= 1.0, options_type,
                  "backoff_multiplier", std::to_string(o.backoff_multiplier), ">= 1"));
  FLOWRAG_RETURN_IF_ERROR(CheckOption(o.max_backoff_ms >= 0, options_type, "max_backoff_ms",
                                      std::to_string(o.max_backoff_ms), ">= 0"));
  return CheckOption(o.max_concurrency >= 1, options_type, "max_concurrency",
                     std::to_string(o.max_concurrency), ">= 1");
}

// Reads <prefix>BASE_URL, <prefix>MODEL and <prefix>API_KEY (else
// OPENAI_API_KEY) into `o`, e.g. with prefix "FLOWRAG_LLM_".
template <typename Options>
Status ReadEndpointEnv(const std::string& prefix, Options* o) {
  if (auto v = GetEnv((prefix + "BASE_URL").c_str())) {
    if (v->rfind("http://", 0) != 0 && v->rfind("https://", 0) != 0) {
      return Status::InvalidArgument(prefix + "BASE_URL=\"" + RedactUrl(*v) +
                                     "\": expected an http:// or https:// URL");
    }
    o->base_url = *v;
  }
  if (auto v = GetEnv((prefix + "MODEL").c_str())) {
    if (v->empty()) return Status::InvalidArgument(prefix + "MODEL=\"\": expected a model name");
    o->model = *v;
  }
  if (auto v = GetEnv((prefix + "API_KEY").c_str())) {
    o->api_key = *v;
  } else if (auto openai = GetEnv("OPENAI_API_KEY")) {
    o->api_key = *openai;
  }
  return Status::Ok();
}

// Reads <prefix>TIMEOUT_MS, <prefix>CONCURRENCY and <prefix>MAX_RETRIES.
template <typename Options>
Status ReadTransportEnv(const std::string& prefix, Options* o) {
  constexpr uint64_t kIntMax = static_cast<uint64_t>(std::numeric_limits<int>::max());
  constexpr uint64_t kSizeMax = std::numeric_limits<size_t>::max();
  if (auto v = GetEnv((prefix + "TIMEOUT_MS").c_str())) {
    FLOWRAG_ASSIGN_OR_RETURN(uint64_t n,
                             ParseEnvInteger(prefix + "TIMEOUT_MS", *v, 1, kIntMax,
                                             "a positive integer number of milliseconds"));
    o->timeout_ms = static_cast<int>(n);
  }
  if (auto v = GetEnv((prefix + "CONCURRENCY").c_str())) {
    FLOWRAG_ASSIGN_OR_RETURN(
        uint64_t n, ParseEnvInteger(prefix + "CONCURRENCY", *v, 1, kSizeMax, "a positive integer"));
    o->max_concurrency = static_cast<size_t>(n);
  }
  if (auto v = GetEnv((prefix + "MAX_RETRIES").c_str())) {
    FLOWRAG_ASSIGN_OR_RETURN(uint64_t n, ParseEnvInteger(prefix + "MAX_RETRIES", *v, 0, kIntMax,
                                                         "a non-negative integer"));
    o->max_retries = static_cast<int>(n);
  }
  return Status::Ok();
}

}  // namespace flowrag::llm_internal

#endif  // FLOWRAG_LLM_OPENAI_COMMON_H_
