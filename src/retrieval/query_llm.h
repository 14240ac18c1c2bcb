// Query-time LLM steps of the graph retrievers, used when a chat model is
// configured (RetrievalRequest::chat); each has an offline counterpart the
// retrievers fall back to when no model is set or the call fails.
//
//  * Keywords (QAFD-RAG §2.2 g(q), A4.3 Prompt 2, LightRAG's dual-level
//    keywords): the model lists "high_level_keywords" (themes) and
//    "low_level_keywords" (entities, details) as JSON; the result is the low
//    level ones first, then the high level ones, deduplicated
//    case-insensitively, empty strings dropped. Offline: keywords.h
//    ExtractKeywords.
//  * Decomposition (QAFD-RAG §2.2 multi-subquery formulation; SA-RAG
//    Appendix A, Listing 3 rules): the smallest ordered list of single-hop
//    sub-questions, as {"subquestions": [{"id", "question"}, ...]}; ordered
//    by id, at least one (the query itself when the model returns none).
//    Offline: keywords.h DecomposeQuery.
//  * Fact filter (SemFlowRAG §3.3 and A.5.2, HippoRAG 2's recognition
//    memory): given the question and candidate triples, the model returns
//    {"fact": [[s, p, o], ...]}, at most `max_keep`; closed world: a
//    returned triple counts only if it equals a candidate (case- and
//    space-insensitively), and the result is the kept candidates' indexes in
//    candidate order. An empty result is a valid answer ("nothing
//    relevant"). Offline: no filter.
//
// The prompts are written here in our own words after the papers'; each call
// is one chat completion at temperature 0 in JSON mode. Errors: the model's
// error, or InvalidArgument naming what the answer lacked when it is not the
// expected JSON.
//
// Thread-safety: the functions are reentrant; ChatModel is thread-safe.
#ifndef FLOWRAG_RETRIEVAL_QUERY_LLM_H_
#define FLOWRAG_RETRIEVAL_QUERY_LLM_H_

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"
#include "flowrag/types.h"
#include "llm/chat_model.h"
#include "retrieval/keywords.h"

namespace flowrag {

// One chat completion at temperature 0 in JSON mode; the answer parsed (and
// repaired when cut off) as a JSON object, else InvalidArgument quoting it.
// With `sink`, the raw answer text goes there as the model writes it.
Result<nlohmann::json> AskJsonObject(ChatModel& chat, std::string system, std::string user,
                                     int max_tokens, const TextSink* sink = nullptr);

// The two lists apart (LightRAG's local and global modes read them
// separately), each deduplicated case-insensitively; InvalidArgument when
// the answer has neither key.
struct DualKeywords {
  std::vector<std::string> low, high;
};
Result<DualKeywords> LlmDualKeywords(ChatModel& chat, std::string_view query);
// Low-level then high-level, deduplicated across both.
Result<std::vector<std::string>> LlmQueryKeywords(ChatModel& chat, std::string_view query);

Result<std::vector<std::string>> LlmDecomposeQuery(ChatModel& chat, std::string_view query);

// The retrievers' entry points: the LLM step when `chat` is set, else (or
// when the call fails: extra["llm_fallback"] = 1 in `diag`) the offline one.
// Keywords keep the offline matcher's matched_entities (the query's exact
// names) either way; the LLM keywords replace the offline keyword list,
// capped at options.max_keywords, low-level first (QueryKeywords::low_level
// counts them).
QueryKeywords KeywordsForQuery(std::string_view query, const EntityNameMatcher* names,
                               const KeywordOptions& options, ChatModel* chat,
                               RetrievalDiagnostics* diag);
std::vector<std::string> SubQueriesFor(std::string_view query, ChatModel* chat,
                                       RetrievalDiagnostics* diag);

using Triple = std::array<std::string, 3>;
Result<std::vector<size_t>> LlmFilterFacts(ChatModel& chat, std::string_view query,
                                           const std::vector<Triple>& candidates, size_t max_keep);

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_QUERY_LLM_H_
