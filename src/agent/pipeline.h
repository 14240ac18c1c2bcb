// Answer pipelines (SA-RAG Appendix A) over any retriever:
//
//  * single: retrieve once with the question, answer from the top passages.
//  * cot: up to max_steps rounds. With a chat model, each round retrieves
//    with the current query, and the reasoning step (llm_answer.h LlmReason)
//    summarises the new passages together with the previous summary and
//    either answers or asks a follow-up question, which becomes the next
//    query; the final answer is written from every passage gathered and the
//    summaries. Offline, round 1 is the single pipeline's answer. While the
//    answer's evidence leaves question terms unmatched (or its confidence is
//    below kOfflineAnswerConfidence) and the passages name a bridge entity
//    no passage is about (ExtractiveAnswer::bridges: among the plausibly
//    linked names, the one the graph retrieval scored highest, from
//    RetrievalResult::nodes), the next round retrieves with "<wh-word>
//    <answer noun> <unmatched terms> <bridge>?" and answers the question
//    again from every round's passages (round 1's first), so the extractive
//    answerer can chain through the bridge's passage. A round's answer
//    replaces the earlier one only when its confidence is higher, it rests
//    on new evidence (a passage about the bridge followed, or one the round
//    brought) and it does not reroute through the sentence the earlier
//    answer came from to a different name (that sentence named the answer;
//    the other name only qualified it): a follow-up adds evidence but cannot
//    talk the pipeline out of a better-supported answer. Measured on every
//    benchmark and method of bench/out/answers.md: cot EM ≥ single EM.
//    Plain yes/no questions answer in one round; comparisons (choice,
//    same-nationality) follow the bridge an option lacks while their
//    confidence is below kOfflineAnswerConfidence.
//  * decompose: sub-questions (LlmDecomposeQuery, offline DecomposeQuery)
//    answered in order, each retrieved with the earlier questions and answers
//    prepended; then a final retrieval with the question, and the final
//    answer from those passages and the sub-answers (offline: the last
//    sub-question's answer when there were several, else an extractive answer
//    of the question).
//
// Answer::retrieval.passages is the numbered context the final answer was
// written from ([n] = its n-th passage); steps record each round. When a
// chat-model call fails, the pipeline warns, goes on offline and answers
// extractively. A deadline stops further rounds (with a warning) and answers
// from what was gathered.
//
// Thread-safety: reentrant if `retrieve` and the chat model are.
#ifndef FLOWRAG_AGENT_PIPELINE_H_
#define FLOWRAG_AGENT_PIPELINE_H_

#include <functional>
#include <string_view>

#include "agent/answer_stream.h"
#include "agent/extractive.h"
#include "agent/usage_chat.h"
#include "flowrag/options.h"
#include "flowrag/types.h"
#include "llm/chat_model.h"

namespace flowrag {

inline constexpr double kOfflineAnswerConfidence = 0.6;

// Retrieval with the request's options; `chat` (may be null) serves the
// retriever's own LLM steps (keywords, decomposition, fact filter).
using RetrieveFunction =
    std::function<Result<RetrievalResult>(std::string_view query, ChatModel* chat)>;

struct PipelineDeps {
  RetrieveFunction retrieve;
  ChatModel* chat = nullptr;  // the configured model, or null (offline)
  IdfFunction idf;            // the store's term statistics for the extractive answerer
  TokenPrices prices;         // for Answer::usage.cost_usd
  // Streams the final answer (AnswerOptions::observer); may be null. The
  // model's final answer streams through it; Ask closes it.
  AnswerStream* stream = nullptr;
};

// options must be valid (AnswerOptions::Validate). FailedPrecondition when
// answerer = "llm" and no chat model is configured; retrieval errors pass through.
Result<Answer> RunAnswerPipeline(std::string_view question, const AnswerOptions& options,
                                 const PipelineDeps& deps);

}  // namespace flowrag

#endif  // FLOWRAG_AGENT_PIPELINE_H_
