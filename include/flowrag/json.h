// JSON forms of the result types, as the CLI (--json), the HTTP API and the
// evaluation records write them. Field names follow the structs in types.h.
//
//   RetrievalResult: {"method", "passages": [{"passage_id", "document_id",
//     "title", "ordinal", "begin", "end", "score", "text"}], "keywords",
//     "nodes": [{"id", "kind", "label", "score", "seed"}], "edges": [{"from",
//     "to", "kind", "relation", "weight", "flow"}], "paths", "context",
//     "diagnostics": {"time_ms", ..., method-specific counters}}
//   Answer: {"question", "answer", "reasoning", "answered", "confidence",
//     "answerer", "pipeline", "citations": [{"marker", "passage_id",
//     "document_id", "title", "quote", "begin", "end"}], "steps": [{"query",
//     "answer", "summary", "follow_up", "passage_ids"}], "usage": {"llm_calls",
//     "cache_hits", "prompt_tokens", "completion_tokens", "cost_usd"},
//     "warnings", "time_ms", "retrieval": RetrievalResult}
//   StoreStats: {"path", "format_version", "documents", "passages",
//     "embeddings", "embedding_models", "dense_model", "passage_index",
//     "passages_missing_embeddings", "index_runs", "file_bytes", "graph":
//     {"nodes", "edges", "isolated_ratio", "average_degree", "degree": {"min",
//     "median", "p90", "p99", "max"}, "extracted_passages", "failed_passages",
//     "llm": {"calls", "prompt_tokens", "completion_tokens"}, "memory_bytes"}}
//
// Pure functions; compact JSON (no whitespace), UTF-8.
#ifndef FLOWRAG_JSON_H_
#define FLOWRAG_JSON_H_

#include <string>
#include <string_view>

#include "flowrag/types.h"

namespace flowrag {

std::string ToJson(const RetrievalResult& result);
std::string ToJson(const Answer& answer);
std::string ToJson(const StoreStats& stats);

// What `flowrag query --json` prints: ToJson(result)'s object with
// "question" added, indented by `indent` spaces (-1: compact), built once.
std::string QueryJson(std::string_view question, const RetrievalResult& result, int indent = -1);

}  // namespace flowrag

#endif  // FLOWRAG_JSON_H_
