// OpenAiEmbedder: an Embedder backed by any OpenAI-compatible embeddings
// endpoint (OpenAI, Ollama, vLLM, llama.cpp server, TEI, ...).
//
// For each Embed() call the non-empty texts are split into batches of
// `batch_size`, and each batch is sent as
//   POST {base_url}/embeddings  {"model": ..., "input": [...], "dimensions": ...}
// with "Authorization: Bearer <api_key>" only when a key is set. Up to
// `max_concurrency` requests are in flight at once across ALL concurrent
// Embed() calls on one embedder. Output rows follow input order whatever order
// batches finish in.
//
// Retries: transport errors, timeouts, HTTP 408, 429 and 5xx are retried up to
// `max_retries` times with exponential backoff (initial_backoff_ms, times
// backoff_multiplier per retry, capped at max_backoff_ms). A Retry-After
// header (seconds) or retry-after-ms header replaces the computed delay, still
// capped at max_backoff_ms. Other 4xx answers and malformed 2xx bodies are
// not retried. When one batch fails, batches not yet sent are skipped.
//
// Errors (messages start with "POST <url>: " and name the HTTP status and
// what was wrong; the server's error.message is quoted when the body has one):
//   InvalidArgument   a non-retryable 4xx (bad model, bad key, input too long),
//                     or the server ignored the requested "dimensions";
//   Unavailable       retries exhausted on 429/5xx/transport errors, a 2xx
//                     body that is not {"data": [{"embedding": [numbers],
//                     "index": i}, ...]} with one row per input and one
//                     dimension, or a dimension different from earlier answers;
//   DeadlineExceeded  the last attempt timed out.
//
// Thread-safety: all methods may be called concurrently.
#ifndef FLOWRAG_LLM_OPENAI_EMBEDDER_H_
#define FLOWRAG_LLM_OPENAI_EMBEDDER_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "embed/embedder.h"
#include "flowrag/models.h"
#include "flowrag/status.h"
#include "llm/http_client.h"
#include "llm/openai_common.h"

namespace flowrag {

// Overrides fields of `base` from the environment; unset variables leave the
// field alone:
//   FLOWRAG_EMBED_BASE_URL                          an http:// or https:// URL
//   FLOWRAG_EMBED_MODEL                             a non-empty model name
//   FLOWRAG_EMBED_API_KEY                           if set (even to ""), the key;
//   OPENAI_API_KEY                                  used only when the former is unset
//   FLOWRAG_EMBED_BATCH, FLOWRAG_EMBED_TIMEOUT_MS,
//   FLOWRAG_EMBED_CONCURRENCY                       positive integers
//   FLOWRAG_EMBED_DIMENSIONS                        non-negative integer
//   FLOWRAG_EMBED_MAX_RETRIES                       non-negative integer
// Setting FLOWRAG_EMBED_API_KEY="" is how to keep a global OPENAI_API_KEY from
// being sent to a local or third-party server.
// Returns InvalidArgument naming the variable and its value when a value is
// malformed, e.g. FLOWRAG_EMBED_BATCH="abc": expected a positive integer.
Result<OpenAiEmbedderOptions> OpenAiEmbedderOptionsFromEnv(OpenAiEmbedderOptions base);

// Diagnostics; totals since construction.
struct OpenAiEmbedderCounters {
  uint64_t requests = 0;  // HTTP POSTs attempted, retries included
  uint64_t retries = 0;   // attempts that repeated a failed one
  uint64_t failures = 0;  // batches given up on (each failed its Embed() call)
  uint64_t texts = 0;     // texts embedded by successful requests
};

class OpenAiEmbedder : public Embedder {
 public:
  // Validates `options` (InvalidArgument naming the field otherwise). `http`
  // is shared with the caller; nullptr means a new curl client. No request is
  // made until the first Embed().
  static Result<std::unique_ptr<OpenAiEmbedder>> Create(OpenAiEmbedderOptions options,
                                                        std::shared_ptr<HttpClient> http = nullptr);

  OpenAiEmbedder(const OpenAiEmbedder&) = delete;
  OpenAiEmbedder& operator=(const OpenAiEmbedder&) = delete;
  ~OpenAiEmbedder() override;

  // "openai:<model>", plus ":d<dimensions>" when dimensions is set.
  std::string ModelId() const override;

  // 0 until the first successful response, then the dimension it showed.
  size_t Dimension() const override;

  // Empty texts are not sent; they get zero rows. With no non-empty text no
  // request is made, and the result has Dimension() columns (0 while unknown).
  // Blocks until every batch is done or one has failed.
  Result<FloatMatrix> Embed(std::span<const std::string> texts) override;

  OpenAiEmbedderCounters counters() const;
  const OpenAiEmbedderOptions& options() const { return options_; }
  // "{base_url}/embeddings".
  const std::string& url() const { return url_; }

 private:
  struct Batch;
  struct CallState;
  struct Attempt;

  OpenAiEmbedder(OpenAiEmbedderOptions options, std::shared_ptr<HttpClient> http);

  // Runs one batch with retries; fills batch->rows or returns the final error.
  Status RunBatch(Batch* batch, CallState* call);
  // One HTTP attempt and the validation of its answer.
  Attempt SendOnce(const Batch& batch, const std::string& body);
  // Checks `dim` against the dimension seen so far (recording it if first).
  Status CheckDimension(size_t dim, int http_status);

  const OpenAiEmbedderOptions options_;
  const std::shared_ptr<HttpClient> http_;
  const std::string url_;
  const std::string redacted_url_;

  std::atomic<size_t> dimension_{0};

  llm_internal::RequestSlots slots_;  // bounds requests in flight to max_concurrency

  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> retries_{0};
  std::atomic<uint64_t> failures_{0};
  std::atomic<uint64_t> texts_{0};
};

}  // namespace flowrag

#endif  // FLOWRAG_LLM_OPENAI_EMBEDDER_H_
