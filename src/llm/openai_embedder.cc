#include "llm/openai_embedder.h"

#include <algorithm>
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

#include "llm/openai_common.h"

namespace flowrag {
namespace {

using Json = nlohmann::json;
using llm_internal::DescribeJson;
using llm_internal::ErrorDetail;
using llm_internal::Snippet;

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
    return Status::Unavailable("body is " + DescribeJson(j) + ", not a JSON object " + expected +
                               ": " + Snippet(body));
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
    return Status::Unavailable("\"data\" is " + DescribeJson(*data) + ", expected an array " +
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
      return Status::Unavailable(where + " is " + DescribeJson(item) + ", expected an object " +
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
      return Status::Unavailable(where + ".embedding is " + DescribeJson(*emb) + hint +
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

}  // namespace

Result<OpenAiEmbedderOptions> OpenAiEmbedderOptionsFromEnv(OpenAiEmbedderOptions base) {
  constexpr uint64_t kSizeMax = std::numeric_limits<size_t>::max();
  const std::string prefix = "FLOWRAG_EMBED_";
  FLOWRAG_RETURN_IF_ERROR(llm_internal::ReadEndpointEnv(prefix, &base));
  if (auto v = llm_internal::GetEnv("FLOWRAG_EMBED_BATCH")) {
    FLOWRAG_ASSIGN_OR_RETURN(uint64_t n,
                             llm_internal::ParseEnvInteger("FLOWRAG_EMBED_BATCH", *v, 1, kSizeMax,
                                                           "a positive integer"));
    base.batch_size = static_cast<size_t>(n);
  }
  FLOWRAG_RETURN_IF_ERROR(llm_internal::ReadTransportEnv(prefix, &base));
  if (auto v = llm_internal::GetEnv("FLOWRAG_EMBED_DIMENSIONS")) {
    FLOWRAG_ASSIGN_OR_RETURN(uint64_t n, llm_internal::ParseEnvInteger(
                                             "FLOWRAG_EMBED_DIMENSIONS", *v, 0, kSizeMax,
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
struct OpenAiEmbedder::Attempt : llm_internal::AttemptStatus {
  FloatMatrix rows;  // the normalised embeddings when `status` is OK
};

Result<std::unique_ptr<OpenAiEmbedder>> OpenAiEmbedder::Create(OpenAiEmbedderOptions options,
                                                               std::shared_ptr<HttpClient> http) {
  constexpr const char* kOptionsType = "OpenAiEmbedderOptions";
  FLOWRAG_RETURN_IF_ERROR(llm_internal::CheckEndpointOptions(options, kOptionsType));
  FLOWRAG_RETURN_IF_ERROR(llm_internal::CheckOption(options.batch_size >= 1, kOptionsType,
                                                    "batch_size",
                                                    std::to_string(options.batch_size), ">= 1"));
  FLOWRAG_RETURN_IF_ERROR(llm_internal::CheckTransportOptions(options, kOptionsType));
  if (http == nullptr) http = NewCurlHttpClient();
  return std::unique_ptr<OpenAiEmbedder>(new OpenAiEmbedder(std::move(options), std::move(http)));
}

OpenAiEmbedder::OpenAiEmbedder(OpenAiEmbedderOptions options, std::shared_ptr<HttpClient> http)
    : options_(std::move(options)),
      http_(std::move(http)),
      url_(llm_internal::TrimSlashes(options_.base_url) + "/embeddings"),
      redacted_url_(RedactUrl(url_)),
      slots_(options_.max_concurrency) {}

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

Status OpenAiEmbedder::CheckDimension(size_t dim, int http_status) {
  const std::string where = llm_internal::PostWhere(redacted_url_, http_status);
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
  const HttpRequest request = llm_internal::JsonPostRequest(url_, body, options_.connect_timeout_ms,
                                                            options_.timeout_ms, options_.api_key);

  Attempt attempt;
  Result<HttpResponse> result = http_->Post(request);
  if (!llm_internal::CheckHttpResult(result, redacted_url_, &attempt)) return attempt;
  Result<FloatMatrix> rows = llm_internal::ParseResponseBody<FloatMatrix>(
      llm_internal::PostWhere(redacted_url_, result->status),
      [&] { return ParseEmbeddings(result->body, batch.texts.size()); });
  if (!rows.ok()) {
    attempt.status = rows.status();
    return attempt;
  }
  attempt.status = CheckDimension(rows->cols, result->status);
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
    Attempt attempt = [&] {
      llm_internal::RequestSlots::Lease slot(&slots_);
      return SendOnce(*batch, body);
    }();

    if (attempt.status.ok()) {
      batch->rows = std::move(attempt.rows);
      texts_.fetch_add(batch->texts.size(), std::memory_order_relaxed);
      return Status::Ok();
    }
    if (!attempt.retryable || attempt_number >= options_.max_retries) {
      failures_.fetch_add(1, std::memory_order_relaxed);
      std::string suffix = llm_internal::GaveUpSuffix(attempt_number);
      if (call->batch_count > 1) {
        suffix += " [batch " + std::to_string(batch->number + 1) + " of " +
                  std::to_string(call->batch_count) + "]";
      }
      return Status(attempt.status.code(), attempt.status.message() + suffix);
    }

    double delay_ms = attempt.retry_after_ms.value_or(backoff_ms);
    delay_ms = std::min(delay_ms, static_cast<double>(options_.max_backoff_ms));
    backoff_ms = llm_internal::NextBackoffMs(backoff_ms, options_.backoff_multiplier,
                                             options_.max_backoff_ms);
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

  llm_internal::RunOnThreads(std::min(options_.max_concurrency, batches.size()), work);

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
