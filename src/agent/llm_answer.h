// The chat-model steps of answering, after SA-RAG Appendix A/B and QAFD-RAG
// A4.4 (prompts written in our own words):
//
//  * LlmAnswerQuestion, style "short" (SA-RAG Listing 1; Listing 6 when the
//    context carries relation texts): JSON {"reasoning", "final_answer",
//    "citations"}; the answer is a word, yes/no or a short phrase, or
//    "Insufficient Information".
//  * LlmAnswerQuestion, style "long" (QAFD-RAG Prompt 3): a markdown response
//    that cites passages inline as [n].
//  * LlmReason (SA-RAG Listing 2; Listing 7 with relations): one CoT step,
//    JSON {"provided_context", "answer_possible", "final_answer",
//    "additional_question", "citations"}.
//
// The context is numbered: passage n is "[n] title: text". Citations are
// closed-world: markers outside 1..n are dropped. Each call is one chat
// completion at temperature 0 (JSON mode for the JSON steps). Errors: the
// model's error, or InvalidArgument naming the missing field.
// Thread-safety: reentrant.
#ifndef FLOWRAG_AGENT_LLM_ANSWER_H_
#define FLOWRAG_AGENT_LLM_ANSWER_H_

#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"
#include "flowrag/types.h"
#include "llm/chat_model.h"

namespace flowrag {

struct AnswerContext {
  std::vector<ScoredPassage> passages;  // numbered from 1
  std::vector<std::string> relations;   // SA-RAG key relationships (τr)
  std::string notes;                    // earlier steps: summaries, sub-question answers
  // Earlier turns of a chat (AnswerOptions::conversation); the prompt shows
  // the last kConversationTurns, each cut to kConversationTurnBytes.
  std::vector<ChatMessage> conversation;
};

inline constexpr size_t kConversationTurns = 8;
inline constexpr size_t kConversationTurnBytes = 2000;

// The context as the prompts show it.
std::string FormatContext(const AnswerContext& context);

struct LlmAnswerResult {
  std::string text;
  std::string reasoning;
  bool answered = true;      // false for "Insufficient Information"
  std::vector<int> markers;  // cited passage numbers, 1-based, unique, ascending
};

// With `sink`, the answer's text goes there as the model writes it: the
// whole response (style "long"), or the final_answer field (style "short").
Result<LlmAnswerResult> LlmAnswerQuestion(ChatModel& chat, std::string_view question,
                                          const AnswerContext& context, std::string_view style,
                                          const TextSink* sink = nullptr);

struct LlmReasonResult {
  std::string summary;  // provided_context
  bool answer_possible = false;
  std::string answer;
  std::string follow_up;  // additional_question
  std::vector<int> markers;
};

Result<LlmReasonResult> LlmReason(ChatModel& chat, std::string_view question,
                                  const AnswerContext& context);

// "[n]" markers in free text, within 1..limit, unique, ascending.
std::vector<int> MarkersInText(std::string_view text, size_t limit);

// True for the "insufficient information" answers of the prompts.
bool IsInsufficient(std::string_view answer);

}  // namespace flowrag

#endif  // FLOWRAG_AGENT_LLM_ANSWER_H_
