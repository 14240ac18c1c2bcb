#include "llm/openai_embedder.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace flowrag {
namespace {

using Json = nlohmann::json;

// How much of an unexpected body an error message quotes.
constexpr size_t kSnippetBytes = 200;
// How much of a server's own error message an error message quotes.
constexpr size_t kServerMessageBytes = 1000;

// The first `max_bytes` of `body` on one line, cut at a UTF-8 boundary.
std::string Snippet(std::string_view body, size_t max_bytes = kSnippetBytes) {
  if (body.empty()) return "(empty body)";
  size_t n = std::min(body.size(), max_bytes);
  if (n < body.size()) {
    // Back off continuation bytes (10xxxxxx) so a code point is not split.
    while (n > 0 && (static_cast<unsigned char>(body[n]) & 0xC0) == 0x80) --n;
  }
  std::string out(body.substr(0, n));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  if (n < body.size()) out += "...";
  return out;
}

// The server's own explanation in an error body, in the shapes OpenAI
// ({"error": {"message": ...}}), TEI ({"error": "..."}), vLLM/FastAPI
// ({"detail": ...}) and others ({"message": ...}) use; else a snippet.
std::string ErrorDetail(std::string_view body) {
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    auto error = j.find("error");
    if (error != j.end()) {
      if (error->is_object()) {
        auto message = error->find("message");
        if (message != error->end() && message->is_string()) {
          return Snippet(message->get<std::string>(), kServerMessageBytes);
        }
      } else if (error->is_string()) {
        return Snippet(error->get<std::string>(), kServerMessageBytes);
      }
    }
    for (const char* key : {"message", "detail"}) {
      auto it = j.find(key);
      if (it != j.end() && it->is_string()) {
        return Snippet(it->get<std::string>(), kServerMessageBytes);
      }
    }
  }
  return Snippet(body);
}

std::string_view TrimView(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Milliseconds the server asked us to wait ("retry-after-ms: 250" or
// "Retry-After: 2" / "Retry-After: 1.5"), or nullopt. HTTP dates are ignored.
std::optional<double> RetryAfterMs(const HttpResponse& response) {
  if (const std::string* v = response.FindHeader("retry-after-ms")) {
    std::string_view s = TrimView(*v);
    double ms = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), ms);
    if (ec == std::errc() && end == s.data() + s.size() && ms >= 0) return ms;
  }
  if (const std::string* v = response.FindHeader("retry-after")) {
    std::string_view s = TrimView(*v);
    double seconds = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), seconds);
    if (ec == std::errc() && end == s.data() + s.size() && seconds >= 0) return seconds * 1000.0;
  }
  return std::nullopt;
}

// "an object", "a string", ... for messages about unexpected JSON.
std::string Describe(const Json& j) {
  switch (j.type()) {
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::null:
      return "null";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "a number";
    default:
      return std::string("a ") + j.type_name();
  }
}

bool IsRetryableHttpStatus(int status) { return status == 408 || status == 429 || status >= 500; }

void NormaliseRows(FloatMatrix* m) {
  for (size_t r = 0; r < m->rows; ++r) {
    float* row = m->row(r);
    double sum = 0;
    for (size_t c = 0; c < m->cols; ++c) sum += static_cast<double>(row[c]) * row[c];
    if (sum <= 0) continue;  // a zero row stays zero
    double inv = 1.0 / std::sqrt(sum);
    for (size_t c = 0; c < m->cols; ++c) row[c] = static_cast<float>(row[c] * inv);
  }
}

// Validates an embeddings response body for `n` inputs and returns the rows
// in input order (not yet normalised). Errors are bare descriptions; the
// caller adds the URL and HTTP status.
Result<FloatMatrix> ParseEmbeddings(std::string_view body, size_t n) {
  const std::string expected = "(expected {\"data\": [{\"embedding\": [numbers], \"index\": i}]})";
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::Unavailable("body is not JSON " + expected + ": " + Snippet(body));
  }
  if (!j.is_object()) {
    return Status::Unavailable("body is " + Describe(j) + ", not a JSON object " + expected + ": " +
                               Snippet(body));
  }
  auto data = j.find("data");
  if (data == j.end()) {
    auto error = j.find("error");
    if (error != j.end()) {
      return Status::Unavailable("body has an error instead of \"data\": " + ErrorDetail(body));
    }
    return Status::Unavailable("body has no \"data\" field " + expected + ": " + Snippet(body));
  }
  if (!data->is_array()) {
    return Status::Unavailable("\"data\" is " + Describe(*data) + ", expected an array " +
                               expected);
  }
  if (data->size() != n) {
    return Status::Unavailable("\"data\" has " + std::to_string(data->size()) + " items for " +
                               std::to_string(n) + " inputs");
  }
  if (n == 0) return FloatMatrix(0, 0);

  FloatMatrix out;
  std::vector<bool> seen(n, false);
  for (size_t k = 0; k < n; ++k) {
    const Json& item = (*data)[k];
    const std::string where = "data[" + std::to_string(k) + "]";
    if (!item.is_object()) {
      return Status::Unavailable(where + " is " + Describe(item) + ", expected an object " +
                                 expected);
    }
    size_t index = k;
    auto idx = item.find("index");
    if (idx != item.end() && !idx->is_null()) {
      if (!idx->is_number_integer() || idx->get<int64_t>() < 0 ||
          static_cast<uint64_t>(idx->get<int64_t>()) >= n) {
        return Status::Unavailable(where + ".index is " + idx->dump() +
                                   ", expected an integer in [0, " + std::to_string(n) + ")");
      }
      index = static_cast<size_t>(idx->get<int64_t>());
    }
    if (seen[index]) {
      return Status::Unavailable(where + ".index " + std::to_string(index) +
                                 " repeats an earlier item's index");
    }
    seen[index] = true;

    auto emb = item.find("embedding");
    if (emb == item.end()) return Status::Unavailable(where + " has no \"embedding\" " + expected);
    if (!emb->is_array()) {
      std::string hint = emb->is_string() ? " (base64-encoded?)" : "";
      return Status::Unavailable(where + ".embedding is " + Describe(*emb) + hint +
                                 ", expected an array of numbers");
    }
    if (emb->empty()) return Status::Unavailable(where + ".embedding is empty");
    if (k == 0) {
      out = FloatMatrix(n, emb->size());
    } else if (emb->size() != out.cols) {
      return Status::Unavailable(where + ".embedding has " + std::to_string(emb->size()) +
                                 " values but data[0].embedding has " + std::to_string(out.cols) +
                                 " (ragged dimensions)");
    }
    float* row = out.row(index);
    for (size_t c = 0; c < emb->size(); ++c) {
      const Json& v = (*emb)[c];
      if (!v.is_number()) {
        return Status::Unavailable(where + ".embedding[" + std::to_string(c) + "] is " + v.dump() +
                                   ", expected a number");
      }
      float f = static_cast<float>(v.get<double>());
      if (!std::isfinite(f)) {
        return Status::Unavailable(where + ".embedding[" + std::to_string(c) + "] is " + v.dump() +
                                   ", not a finite float");
      }
      row[c] = f;
    }
  }
  return out;
}

std::string TrimSlashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

std::optional<std::string> GetEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// Parses an environment variable holding an integer in [min, max].
Result<uint64_t> ParseEnvInteger(const char* name, const std::string& value, uint64_t min,
                                 uint64_t max, const char* expected) {
  std::string_view s = TrimView(value);
  uint64_t out = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || out < min || out > max) {
    return Status::InvalidArgument(std::string(name) + "=\"" + value + "\": expected " + expected);
  }
  return out;
}

Status CheckOption(bool ok, const char* field, const std::string& got, const char* expected) {
  if (ok) return Status::Ok();
  return Status::InvalidArgument(std::string("OpenAiEmbedderOptions.") + field + ": expected " +
                                 expected + ", got " + got);
}

}  // namespace

Result<OpenAiEmbedderOptions> OpenAiEmbedderOptionsFromEnv(OpenAiEmbedderOptions base) {
  constexpr uint64_t kIntMax = static_cast<uint64_t>(std::numeric_limits<int>::max());
  constexpr uint64_t kSizeMax = std::numeric_limits<size_t>::max();
  if (auto v = GetEnv("FLOWRAG_EMBED_BASE_URL")) {
    if (v->rfind("http://", 0) != 0 && v->rfind("https://", 0) != 0) {
      return Status::InvalidArgument("FLOWRAG_EMBED_BASE_URL=\"" + RedactUrl(*v) +
                                     "\": expected an http:// or https:// URL");
    }
    base.base_url = *v;
  }
  if (auto v = GetEnv("FLOWRAG_EMBED_MODEL")) {
    if (v->empty()) {
      return Status::InvalidArgument("FLOWRAG_EMBED_MODEL=\"\": expected a model name");
    }
    base.model = *v;
  }
  if (auto v = GetEnv("FLOWRAG_EMBED_API_KEY")) {
    base.api_key = *v;
  } else if (auto openai = GetEnv("OPENAI_API_KEY")) {
    base.api_key = *openai;
  }
  if (auto v = GetEnv("FLOWRAG_EMBED_BATCH")) {
    FLOWRAG_ASSIGN_OR_RETURN(
        uint64_t n, ParseEnvInteger("FLOWRAG_EMBED_BATCH", *v, 1, kSizeMax, "a positive integer"));
    base.batch_size = static_cast<size_t>(n);
  }
  if (auto v = GetEnv("FLOWRAG_EMBED_TIMEOUT_MS")) {
    FLOWRAG_ASSIGN_OR_RETURN(uint64_t n,
                             ParseEnvInteger("FLOWRAG_EMBED_TIMEOUT_MS", *v, 1, kIntMax,
                                             "a positive integer number of milliseconds"));
    base.timeout_ms = static_cast<int>(n);
  }
  if (auto v = GetEnv("FLOWRAG_EMBED_CONCURRENCY")) {
    FLOWRAG_ASSIGN_OR_RETURN(uint64_t n, ParseEnvInteger("FLOWRAG_EMBED_CONCURRENCY", *v, 1,
                                                         kSizeMax, "a positive integer"));
    base.max_concurrency = static_cast<size_t>(n);
  }
  if (auto v = GetEnv("FLOWRAG_EMBED_MAX_RETRIES")) {
    FLOWRAG_ASSIGN_OR_RETURN(uint64_t n, ParseEnvInteger("FLOWRAG_EMBED_MAX_RETRIES", *v, 0,
                                                         kIntMax, "a non-negative integer"));
    base.max_retries = static_cast<int>(n);
  }
  if (auto v = GetEnv("FLOWRAG_EMBED_DIMENSIONS")) {
    FLOWRAG_ASSIGN_OR_RETURN(uint64_t n,
                             ParseEnvInteger("FLOWRAG_EMBED_DIMENSIONS", *v, 0, kSizeMax,
                                             "a non-negative integer (0 = the model's default)"));
    base.dimensions = static_cast<size_t>(n);
  }
  return base;
}

// One request's worth of inputs and, once done, its rows.
struct OpenAiEmbedder::Batch {
  size_t number = 0;                // 0-based position among the call's batches
  std::vector<size_t> output_rows;  // row in the Embed() result for each input
  std::vector<const std::string*> texts;
  FloatMatrix rows;  // filled on success, in input order
};

// Shared by the workers of one Embed() call.
struct OpenAiEmbedder::CallState {
  size_t batch_count = 0;
  std::atomic<size_t> next{0};  // the next batch to take
  std::mutex mu;
  std::condition_variable cv;  // wakes backoff sleeps when a batch fails
  bool failed = false;         // guarded by mu
  Status error;                // guarded by mu; from the lowest-numbered failed batch
  size_t error_batch = 0;      // guarded by mu

  bool Failed() {
    std::lock_guard<std::mutex> lock(mu);
    return failed;
  }
};

// The outcome of one HTTP attempt.
struct OpenAiEmbedder::Attempt {
  Status status;  // OK: `rows` holds the normalised embeddings
  bool retryable = false;
  std::optional<double> retry_after_ms;
  FloatMatrix rows;
};

Result<std::unique_ptr<OpenAiEmbedder>> OpenAiEmbedder::Create(OpenAiEmbedderOptions options,
                                                               std::shared_ptr<HttpClient> http) {
  const OpenAiEmbedderOptions& o = options;
  std::string_view url = o.base_url;
  bool http_url = url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
  FLOWRAG_RETURN_IF_ERROR(CheckOption(http_url, "base_url", "\"" + RedactUrl(o.base_url) + "\"",
                                      "an http:// or https:// URL"));
  FLOWRAG_RETURN_IF_ERROR(CheckOption(!o.model.empty(), "model", "\"\"", "a model name"));
  FLOWRAG_RETURN_IF_ERROR(
      CheckOption(o.batch_size >= 1, "batch_size", std::to_string(o.batch_size), ">= 1"));
  FLOWRAG_RETURN_IF_ERROR(
      CheckOption(o.timeout_ms > 0, "timeout_ms", std::to_string(o.timeout_ms), "> 0"));
  FLOWRAG_RETURN_IF_ERROR(CheckOption(o.connect_timeout_ms > 0, "connect_timeout_ms",
                                      std::to_string(o.connect_timeout_ms), "> 0"));
  FLOWRAG_RETURN_IF_ERROR(
      CheckOption(o.max_retries >= 0, "max_retries", std::to_string(o.max_retries), ">= 0"));
  FLOWRAG_RETURN_IF_ERROR(CheckOption(o.initial_backoff_ms >= 0, "initial_backoff_ms",
                                      std::to_string(o.initial_backoff_ms), ">= 0"));
  FLOWRAG_RETURN_IF_ERROR(
      CheckOption(std::isfinite(o.backoff_multiplier) && o.backoff_multiplier >= 1.0,
                  "backoff_multiplier", std::to_string(o.backoff_multiplier), ">= 1"));
  FLOWRAG_RETURN_IF_ERROR(CheckOption(o.max_backoff_ms >= 0, "max_backoff_ms",
                                      std::to_string(o.max_backoff_ms), ">= 0"));
  FLOWRAG_RETURN_IF_ERROR(CheckOption(o.max_concurrency >= 1, "max_concurrency",
                                      std::to_string(o.max_concurrency), ">= 1"));
  if (http == nullptr) http = NewCurlHttpClient();
  return std::unique_ptr<OpenAiEmbedder>(new OpenAiEmbedder(std::move(options), std::move(http)));
}

OpenAiEmbedder::OpenAiEmbedder(OpenAiEmbedderOptions options, std::shared_ptr<HttpClient> http)
    : options_(std::move(options)),
      http_(std::move(http)),
      url_(TrimSlashes(options_.base_url) + "/embeddings"),
      redacted_url_(RedactUrl(url_)) {}

OpenAiEmbedder::~OpenAiEmbedder() = default;

std::string OpenAiEmbedder::ModelId() const {
  std::string id = "openai:" + options_.model;
  if (options_.dimensions > 0) id += ":d" + std::to_string(options_.dimensions);
  return id;
}

size_t OpenAiEmbedder::Dimension() const { return dimension_.load(std::memory_order_acquire); }

OpenAiEmbedderCounters OpenAiEmbedder::counters() const {
  OpenAiEmbedderCounters c;
  c.requests = requests_.load(std::memory_order_relaxed);
  c.retries = retries_.load(std::memory_order_relaxed);
  c.failures = failures_.load(std::memory_order_relaxed);
  c.texts = texts_.load(std::memory_order_relaxed);
  return c;
}

void OpenAiEmbedder::AcquireSlot() {
  std::unique_lock<std::mutex> lock(slots_mu_);
  slots_cv_.wait(lock, [this] { return slots_in_use_ < options_.max_concurrency; });
  ++slots_in_use_;
}

void OpenAiEmbedder::ReleaseSlot() {
  {
    std::lock_guard<std::mutex> lock(slots_mu_);
    --slots_in_use_;
  }
  slots_cv_.notify_one();
}

Status OpenAiEmbedder::CheckDimension(size_t dim, int http_status) {
  const std::string where = "POST " + redacted_url_ + ": HTTP " + std::to_string(http_status);
  if (options_.dimensions > 0 && dim != options_.dimensions) {
    return Status::InvalidArgument(where + " but the embeddings have " + std::to_string(dim) +
                                   " dimensions, not the requested " +
                                   std::to_string(options_.dimensions) +
                                   " (does the server support \"dimensions\"?)");
  }
  size_t expected = 0;
  if (dimension_.compare_exchange_strong(expected, dim, std::memory_order_acq_rel) ||
      expected == dim) {
    return Status::Ok();
  }
  return Status::Unavailable(where + " but the embeddings have " + std::to_string(dim) +
                             " dimensions where earlier answers had " + std::to_string(expected));
}

OpenAiEmbedder::Attempt OpenAiEmbedder::SendOnce(const Batch& batch, const std::string& body) {
  HttpRequest request;
  request.url = url_;
  request.body = body;
  request.connect_timeout_ms = options_.connect_timeout_ms;
  request.timeout_ms = options_.timeout_ms;
  request.headers.push_back("Accept: application/json");
  if (!options_.api_key.empty())
    request.headers.push_back("Authorization: Bearer " + options_.api_key);

  Attempt attempt;
  Result<HttpResponse> result = http_->Post(request);
  if (!result.ok()) {
    attempt.status = result.status();
    attempt.retryable = result.status().code() == StatusCode::kUnavailable ||
                        result.status().code() == StatusCode::kDeadlineExceeded;
    return attempt;
  }
  const HttpResponse& response = *result;
  const std::string where = "POST " + redacted_url_ + ": HTTP " + std::to_string(response.status);
  if (response.status < 200 || response.status >= 300) {
    attempt.retryable = IsRetryableHttpStatus(response.status);
    if (attempt.retryable) attempt.retry_after_ms = RetryAfterMs(response);
    std::string message = where + ": " + ErrorDetail(response.body);
    bool client_error = response.status >= 400 && response.status < 500 && !attempt.retryable;
    attempt.status = client_error ? Status::InvalidArgument(std::move(message))
                                  : Status::Unavailable(std::move(message));
    return attempt;
  }
  Result<FloatMatrix> rows = [&]() -> Result<FloatMatrix> {
    try {
      return ParseEmbeddings(response.body, batch.texts.size());
    } catch (const std::exception& e) {  // nlohmann accessors; not expected after the checks
      return Status::Unavailable(std::string("could not read body: ") + e.what());
    }
  }();
  if (!rows.ok()) {
    attempt.status = Status::Unavailable(where + " but " + rows.status().message());
    return attempt;
  }
  attempt.status = CheckDimension(rows->cols, response.status);
  if (!attempt.status.ok()) return attempt;
  attempt.rows = std::move(rows).value();
  NormaliseRows(&attempt.rows);
  return attempt;
}

Status OpenAiEmbedder::RunBatch(Batch* batch, CallState* call) {
  Json request = Json::object();
  request["model"] = options_.model;
  Json input = Json::array();
  for (const std::string* text : batch->texts) input.push_back(*text);
  request["input"] = std::move(input);
  if (options_.dimensions > 0) request["dimensions"] = options_.dimensions;
  // Invalid UTF-8 in a text becomes U+FFFD instead of failing the batch.
  const std::string body = request.dump(-1, ' ', false, Json::error_handler_t::replace);

  double backoff_ms = options_.initial_backoff_ms;
  for (int attempt_number = 0;; ++attempt_number) {
    if (attempt_number > 0) retries_.fetch_add(1, std::memory_order_relaxed);
    requests_.fetch_add(1, std::memory_order_relaxed);
    AcquireSlot();
    Attempt attempt = SendOnce(*batch, body);
    ReleaseSlot();

    if (attempt.status.ok()) {
      batch->rows = std::move(attempt.rows);
      texts_.fetch_add(batch->texts.size(), std::memory_order_relaxed);
      return Status::Ok();
    }
    if (!attempt.retryable || attempt_number >= options_.max_retries) {
      failures_.fetch_add(1, std::memory_order_relaxed);
      std::string suffix;
      if (attempt_number > 0) {
        suffix += " (gave up after " + std::to_string(attempt_number + 1) + " attempts)";
      }
      if (call->batch_count > 1) {
        suffix += " [batch " + std::to_string(batch->number + 1) + " of " +
                  std::to_string(call->batch_count) + "]";
      }
      return Status(attempt.status.code(), attempt.status.message() + suffix);
    }

    double delay_ms = attempt.retry_after_ms.value_or(backoff_ms);
    delay_ms = std::min(delay_ms, static_cast<double>(options_.max_backoff_ms));
    backoff_ms = std::min(backoff_ms * options_.backoff_multiplier,
                          static_cast<double>(options_.max_backoff_ms));
    std::unique_lock<std::mutex> lock(call->mu);
    bool failed = call->cv.wait_for(lock, std::chrono::duration<double, std::milli>(delay_ms),
                                    [call] { return call->failed; });
    if (failed) return Status::Cancelled("another batch of the same call failed");
  }
}

Result<FloatMatrix> OpenAiEmbedder::Embed(std::span<const std::string> texts) {
  if (texts.empty()) return FloatMatrix(0, Dimension());

  std::vector<Batch> batches;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (texts[i].empty()) continue;  // OpenAI rejects "", and the contract says zero row
    if (batches.empty() || batches.back().texts.size() >= options_.batch_size) {
      batches.emplace_back();
      batches.back().number = batches.size() - 1;
    }
    batches.back().texts.push_back(&texts[i]);
    batches.back().output_rows.push_back(i);
  }
  if (batches.empty()) return FloatMatrix(texts.size(), Dimension());

  CallState call;
  call.batch_count = batches.size();
  auto work = [this, &batches, &call] {
    for (;;) {
      size_t b = call.next.fetch_add(1);
      if (b >= batches.size() || call.Failed()) return;
      Status status = RunBatch(&batches[b], &call);
      if (status.ok()) continue;
      {
        std::lock_guard<std::mutex> lock(call.mu);
        if (status.code() != StatusCode::kCancelled && (call.error.ok() || b < call.error_batch)) {
          call.error = std::move(status);
          call.error_batch = b;
        }
        call.failed = true;
      }
      call.cv.notify_all();
      return;
    }
  };

  size_t worker_count = std::min(options_.max_concurrency, batches.size());
  std::vector<std::thread> workers;
  workers.reserve(worker_count - 1);
  for (size_t w = 1; w < worker_count; ++w) {
    try {
      workers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // out of threads: the ones we have (at least this one) finish the work
    }
  }
  work();
  for (std::thread& t : workers) t.join();

  if (call.failed) {
    if (!call.error.ok()) return call.error;
    return Status::Internal("POST " + redacted_url_ + ": a batch failed without an error");
  }

  size_t cols = batches.front().rows.cols;
  FloatMatrix out(texts.size(), cols);
  for (const Batch& batch : batches) {
    if (batch.rows.cols != cols || batch.rows.rows != batch.output_rows.size()) {
      return Status::Internal(
          "POST " + redacted_url_ + ": batch " + std::to_string(batch.number + 1) + " has a " +
          std::to_string(batch.rows.rows) + "x" + std::to_string(batch.rows.cols) + " result");
    }
    for (size_t k = 0; k < batch.output_rows.size(); ++k) {
      std::copy_n(batch.rows.row(k), cols, out.row(batch.output_rows[k]));
    }
  }
  return out;
}

}  // namespace flowrag
