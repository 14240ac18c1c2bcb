// Options structs of include/flowrag/options.h and eval.h as plain Python
// classes with read-write fields (defaults and meanings: options.h).
#include <pybind11/stl.h>

#include "binding.h"
#include "call_scope.h"
#include "flowrag/eval.h"
#include "flowrag/options.h"

namespace flowrag::py_binding {

namespace py = pybind11;

namespace {

// `progress` from Python: True prints progress lines to stderr (as the
// CLI does), False reports none.
ProgressCallback ProgressFromPython(bool on) { return on ? StderrProgress() : ProgressCallback(); }

void BindClientOptions(py::module_& m) {
  py::class_<OpenAiChatOptions>(m, "OpenAiChatOptions",
                                "An OpenAI-compatible /v1/chat/completions endpoint.")
      .def(py::init<>())
      .def_readwrite("base_url", &OpenAiChatOptions::base_url)
      .def_readwrite("model", &OpenAiChatOptions::model)
      .def_readwrite("api_key", &OpenAiChatOptions::api_key)
      .def_readwrite("timeout_ms", &OpenAiChatOptions::timeout_ms)
      .def_readwrite("connect_timeout_ms", &OpenAiChatOptions::connect_timeout_ms)
      .def_readwrite("max_retries", &OpenAiChatOptions::max_retries)
      .def_readwrite("max_concurrency", &OpenAiChatOptions::max_concurrency);
  py::class_<OpenAiEmbedderOptions>(m, "OpenAiEmbedderOptions",
                                    "An OpenAI-compatible /v1/embeddings endpoint.")
      .def(py::init<>())
      .def_readwrite("base_url", &OpenAiEmbedderOptions::base_url)
      .def_readwrite("model", &OpenAiEmbedderOptions::model)
      .def_readwrite("api_key", &OpenAiEmbedderOptions::api_key)
      .def_readwrite("batch_size", &OpenAiEmbedderOptions::batch_size)
      .def_readwrite("timeout_ms", &OpenAiEmbedderOptions::timeout_ms)
      .def_readwrite("connect_timeout_ms", &OpenAiEmbedderOptions::connect_timeout_ms)
      .def_readwrite("max_retries", &OpenAiEmbedderOptions::max_retries)
      .def_readwrite("max_concurrency", &OpenAiEmbedderOptions::max_concurrency)
      .def_readwrite("dimensions", &OpenAiEmbedderOptions::dimensions);
}

void BindEngineOptions(py::module_& m) {
  py::class_<EngineOptions>(m, "EngineOptions", "How an Engine opens its store (options.h).")
      .def(py::init<>())
      .def_readwrite("embedder", &EngineOptions::embedder)
      .def_readwrite("custom_embedder", &EngineOptions::custom_embedder)
      .def_readwrite("openai_embedder", &EngineOptions::openai_embedder)
      .def_readwrite("chat_model", &EngineOptions::chat_model)
      .def_readwrite("openai_chat", &EngineOptions::openai_chat)
      .def_readwrite("hash_dimension", &EngineOptions::hash_dimension)
      .def_readwrite("language", &EngineOptions::language)
      .def_readwrite("hnsw_threshold", &EngineOptions::hnsw_threshold)
      .def_readwrite("passage_ann", &EngineOptions::passage_ann)
      .def_readwrite("read_only", &EngineOptions::read_only)
      .def_readwrite("writer_wait_ms", &EngineOptions::writer_wait_ms)
      .def_readwrite("follow_store", &EngineOptions::follow_store)
      .def_readwrite("follow_poll_ms", &EngineOptions::follow_poll_ms);
}

void BindIndexOptions(py::module_& m) {
  py::class_<IndexOptions>(m, "IndexOptions", "How Engine.index chunks, embeds and extracts.")
      .def(py::init<>())
      .def_property(
          "chunking",
          [](const IndexOptions& o) { return std::string(ChunkStrategyName(o.chunking.strategy)); },
          [](IndexOptions& o, const std::string& name) {
            Result<ChunkOptions::Strategy> s = ParseChunkStrategy(name);
            if (!s.ok()) RaiseStatus(s.status());
            o.chunking.strategy = *s;
          })
      .def_property(
          "window_words", [](const IndexOptions& o) { return o.chunking.window_words; },
          [](IndexOptions& o, size_t v) { o.chunking.window_words = v; })
      .def_property(
          "overlap_words", [](const IndexOptions& o) { return o.chunking.overlap_words; },
          [](IndexOptions& o, size_t v) { o.chunking.overlap_words = v; })
      .def_property(
          "max_chars", [](const IndexOptions& o) { return o.chunking.max_chars; },
          [](IndexOptions& o, size_t v) { o.chunking.max_chars = v; })
      .def_property(
          "overlap_chars", [](const IndexOptions& o) { return o.chunking.overlap_chars; },
          [](IndexOptions& o, size_t v) { o.chunking.overlap_chars = v; })
      .def_readwrite("batch_size", &IndexOptions::batch_size)
      .def_readwrite("embed_batch_size", &IndexOptions::embed_batch_size)
      .def_readwrite("idf_refit_growth", &IndexOptions::idf_refit_growth)
      .def_readwrite("refit", &IndexOptions::refit)
      .def_property(
          "progress", [](const IndexOptions& o) { return static_cast<bool>(o.progress); },
          [](IndexOptions& o, bool on) { o.progress = ProgressFromPython(on); })
      .def_readwrite("skip_bad_records", &IndexOptions::skip_bad_records)
      .def_readwrite("extractor", &IndexOptions::extractor)
      .def_readwrite("llm_prompt_style", &IndexOptions::llm_prompt_style)
      .def_readwrite("extract_batch_size", &IndexOptions::extract_batch_size)
      .def_readwrite("workers", &IndexOptions::workers)
      .def_readwrite("dry_run", &IndexOptions::dry_run);
}

void BindQueryOptions(py::module_& m) {
  py::class_<QueryOptions>(m, "QueryOptions", "Per-query method, depth and option overrides.")
      .def(py::init<>())
      .def_readwrite("method", &QueryOptions::method)
      .def_readwrite("top_k", &QueryOptions::top_k)
      .def_readwrite("params", &QueryOptions::params)
      .def_readwrite("explain", &QueryOptions::explain);
  py::class_<SchemaAgentOptions>(m, "SchemaAgentOptions", "The schema-guided agent (Ask).")
      .def(py::init<>())
      .def_readwrite("analysis", &SchemaAgentOptions::analysis)
      .def_readwrite("extension", &SchemaAgentOptions::extension)
      .def_readwrite("vector_method", &SchemaAgentOptions::vector_method)
      .def_readwrite("graph_method", &SchemaAgentOptions::graph_method)
      .def_readwrite("ood_gate", &SchemaAgentOptions::ood_gate);
  py::class_<AnswerOptions>(m, "AnswerOptions", "How Engine.ask retrieves and answers.")
      .def(py::init<>())
      .def_readwrite("query", &AnswerOptions::query)
      .def_readwrite("pipeline", &AnswerOptions::pipeline)
      .def_readwrite("schema", &AnswerOptions::schema)
      .def_readwrite("max_steps", &AnswerOptions::max_steps)
      .def_readwrite("context_passages", &AnswerOptions::context_passages)
      .def_readwrite("answerer", &AnswerOptions::answerer)
      .def_readwrite("style", &AnswerOptions::style)
      .def_readwrite("deadline_ms", &AnswerOptions::deadline_ms);
  py::class_<EvalOptions>(m, "EvalOptions", "How evaluate() runs a benchmark.")
      .def(py::init<>())
      .def_readwrite("ks", &EvalOptions::ks)
      .def_readwrite("query", &EvalOptions::query)
      .def_readwrite("limit", &EvalOptions::limit)
      .def_property(
          "progress", [](const EvalOptions& o) { return static_cast<bool>(o.progress); },
          [](EvalOptions& o, bool on) { o.progress = ProgressFromPython(on); })
      .def_readwrite("answers", &EvalOptions::answers)
      .def_readwrite("answer", &EvalOptions::answer);
}

}  // namespace

void BindOptions(py::module_& m) {
  BindClientOptions(m);
  BindEngineOptions(m);
  BindIndexOptions(m);
  BindQueryOptions(m);
}

}  // namespace flowrag::py_binding
