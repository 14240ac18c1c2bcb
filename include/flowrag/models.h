// The models an engine uses, as interfaces a caller can implement: the
// Embedder (texts → vectors) and the ChatModel (messages → text), and the
// options of the built-in OpenAI-compatible clients for both.
//
// An Engine takes its models from EngineOptions (options.h): a caller's own
// implementation (EngineOptions::custom_embedder, ::chat_model; the Python
// package wraps Python callables this way), else the built-in hashed
// embedder or an OpenAI-compatible endpoint configured by
// EngineOptions::openai_embedder / ::openai_chat or, when those are unset,
// by the FLOWRAG_EMBED_* / FLOWRAG_LLM_* environment variables.
//
// Implementations inside flowrag: HashedEmbedder (embed/hashed_embedder.h),
// OpenAiEmbedder (llm/openai_embedder.h), OpenAiChatClient
// (llm/chat_client.h).
//
// Thread-safety: an implementation must allow every method to be called
// concurrently from several threads (index workers, concurrent queries).
#ifndef FLOWRAG_MODELS_H_
#define FLOWRAG_MODELS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/matrix.h"
#include "flowrag/status.h"

namespace flowrag {

// Turns texts into L2-normalised vectors.
class Embedder {
 public:
  virtual ~Embedder() = default;

  // Identifies the model and every parameter that changes its output; it is
  // part of the embedding cache key, so two embedders with the same id must
  // produce the same vectors for the same text.
  virtual std::string ModelId() const = 0;

  // The vector dimension, or 0 while unknown (a remote model before its first
  // answer).
  virtual size_t Dimension() const = 0;

  // Embeds texts[i] into row i of the result (texts.size() x Dimension()).
  // Every row is L2-normalised (an empty text gives a zero row). Fails as a
  // whole: no partial results.
  virtual Result<FloatMatrix> Embed(std::span<const std::string> texts) = 0;

  // True when embedding is cheaper than reading a cached vector (an
  // in-process model): then short graph texts are embedded when a snapshot is
  // built instead of being stored. Passage vectors are always cached.
  virtual bool IsLocal() const { return false; }

  // True when a question's vector is mostly zeros (the built-in hashed
  // embedder's: 10-15% of its dimensions): then a large passage index is an
  // exact scan of an int8 dimension-major copy instead of HNSW
  // (VectorIndexOptions::sparse_queries). False for dense models.
  virtual bool SparseQueries() const { return false; }
};

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

// Receives the text of an answer as the model produces it (in pieces, in
// order; together they are ChatResponse::content). Returning false cancels
// the completion: CompleteStreaming then returns Cancelled.
using TextSink = std::function<bool(std::string_view piece)>;

// A chat completion model, as every LLM feature of flowrag sees it
// (extraction, keywords, decomposition, answers). Features that need a
// model take a ChatModel* that may be null: then they use their offline
// path and say so. A failing Complete() makes the feature fall back the same
// way (query-time steps, answers) or counts the passage as failed
// (extraction, retried by the next index run).
class ChatModel {
 public:
  virtual ~ChatModel() = default;
  // Model name, part of the response cache key and of Answer::answerer.
  virtual std::string Model() const = 0;
  virtual Result<ChatResponse> Complete(const ChatRequest& request) = 0;
  // Completes several requests; results[i] answers requests[i]. One failure
  // does not fail the others. The default runs them one after another on
  // the calling thread; the HTTP client runs up to its concurrency limit.
  virtual std::vector<Result<ChatResponse>> CompleteBatch(std::span<const ChatRequest> requests) {
    std::vector<Result<ChatResponse>> out;
    out.reserve(requests.size());
    for (const ChatRequest& r : requests) out.push_back(Complete(r));
    return out;
  }
  // Complete(), handing the answer's text to `sink` as it arrives (an
  // OpenAI-compatible client asks its endpoint to stream). The default
  // completes, then hands over the whole text at once. The result is what
  // Complete() would return; Cancelled when `sink` returned false.
  virtual Result<ChatResponse> CompleteStreaming(const ChatRequest& request,
                                                 const TextSink& sink) {
    Result<ChatResponse> r = Complete(request);
    if (r.ok() && !r->content.empty() && !sink(r->content)) {
      return Status::Cancelled("chat completion: the reader stopped");
    }
    return r;
  }
  // Totals since construction; the default reports nothing.
  virtual ChatUsage usage() const { return {}; }
};

// The built-in client of an OpenAI-compatible /v1/chat/completions endpoint
// (llm/chat_client.h has the protocol, retries and errors).
struct OpenAiChatOptions {
  // Without the trailing "/chat/completions"; a trailing '/' is ignored.
  // Ollama: "http://localhost:11434/v1"; llama.cpp server: "http://localhost:8080/v1".
  std::string base_url = "https://api.openai.com/v1";
  std::string model = "gpt-4o-mini";
  std::string api_key;              // empty: no Authorization header (local servers)
  int timeout_ms = 120000;          // per request, whole transfer, > 0
  int connect_timeout_ms = 5000;    // per request, > 0
  int max_retries = 4;              // retries after the first attempt, >= 0
  int initial_backoff_ms = 500;     // base delay before the first retry, >= 0
  double backoff_multiplier = 2.0;  // >= 1
  int max_backoff_ms = 20000;       // cap on any delay, Retry-After included, >= 0
  size_t max_concurrency = 4;       // requests in flight per client, >= 1
};

// The built-in client of an OpenAI-compatible /v1/embeddings endpoint
// (llm/openai_embedder.h has the protocol, retries and errors).
struct OpenAiEmbedderOptions {
  // Without the trailing "/embeddings"; a trailing '/' is ignored.
  // Ollama: "http://localhost:11434/v1"; llama.cpp server: "http://localhost:8080/v1".
  std::string base_url = "https://api.openai.com/v1";
  std::string model = "text-embedding-3-small";
  std::string api_key;              // empty: no Authorization header (local servers)
  size_t batch_size = 64;           // inputs per request, >= 1
  int timeout_ms = 30000;           // per request, whole transfer, > 0
  int connect_timeout_ms = 5000;    // per request, > 0
  int max_retries = 4;              // retries after the first attempt, >= 0
  int initial_backoff_ms = 200;     // delay before the first retry, >= 0
  double backoff_multiplier = 2.0;  // >= 1
  int max_backoff_ms = 10000;       // cap on any delay, Retry-After included, >= 0
  size_t max_concurrency = 4;       // requests in flight per embedder, >= 1
  size_t dimensions = 0;            // 0 = model default; else sent as "dimensions"
};

}  // namespace flowrag

#endif  // FLOWRAG_MODELS_H_
