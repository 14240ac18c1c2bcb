#include "agent/llm_answer.h"

#include "agent/answer_stream.h"

#include <algorithm>
#include <set>

#include "common/text.h"
#include "nlohmann/json.hpp"
#include "retrieval/query_llm.h"

namespace flowrag {
namespace {

constexpr std::string_view kShortAnswer =
    "Answer the question using only the numbered context below. The answer is a single word, "
    "yes or no, or a few words naming one entity, date or quantity. Reason step by step first: "
    "work out which passages hold the facts you need, check every date comparison and "
    "calculation, then give the short answer without explanation. If the context does not "
    "contain what is needed, the answer is \"Insufficient Information\". Reply with one JSON "
    "object: {\"reasoning\": \"your step-by-step reasoning, citing passages as [n]\", "
    "\"final_answer\": \"the short answer\", \"citations\": [numbers of the passages the answer "
    "rests on]}.";

constexpr std::string_view kRelationsNote =
    " The context also lists key relationships between the entities involved; use them to "
    "connect facts across passages.";

constexpr std::string_view kLongAnswer =
    "You are a helpful assistant answering questions about the data in the numbered context. "
    "Write a response of several paragraphs that answers the question, drawing together all the "
    "relevant information in the context. Say so if you do not know; never make anything up, "
    "and include nothing the context does not support. Cite the passages each statement rests "
    "on with their numbers in brackets, like [2] or [1][3]. Use markdown, with sections where "
    "they help.";

constexpr std::string_view kReason =
    "You get a multi-hop question, whose answer combines facts from several passages, and a "
    "numbered context of short passages (and possibly key relationships and notes from earlier "
    "steps). Use only this information. Pick out the facts that matter for the question and "
    "retell them as one coherent paragraph, in full sentences, explaining how they connect. "
    "Then decide: if they are enough to answer, give the answer (a word, yes/no, or a short "
    "phrase); if something is missing, ask one specific follow-up question that would find it. "
    "Reply with one JSON object: {\"provided_context\": \"the paragraph\", \"answer_possible\": "
    "true or false, \"final_answer\": \"the answer, or empty\", \"additional_question\": \"the "
    "follow-up question, or empty\", \"citations\": [numbers of the passages used]}.";

std::string StringField(const nlohmann::json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

std::vector<int> Markers(const nlohmann::json& j, size_t limit) {
  std::set<int> out;
  auto it = j.find("citations");
  if (it != j.end() && it->is_array()) {
    for (const auto& v : *it) {
      int n = 0;
      if (v.is_number_integer()) {
        n = v.get<int>();
      } else if (v.is_string()) {
        std::vector<int> m = MarkersInText(v.get<std::string>(), limit);
        if (m.empty()) n = std::atoi(v.get<std::string>().c_str());
        out.insert(m.begin(), m.end());
      }
      if (n >= 1 && static_cast<size_t>(n) <= limit) out.insert(n);
    }
  }
  return {out.begin(), out.end()};
}

std::string UserMessage(std::string_view question, const AnswerContext& context) {
  return "Question: " + std::string(question) + "\n\nContext:\n" + FormatContext(context);
}

std::string System(std::string_view base, const AnswerContext& context) {
  std::string s(base);
  if (!context.relations.empty()) s += kRelationsNote;
  return s;
}

// At most `max_bytes` of `s`, not cutting a UTF-8 character.
std::string_view CutUtf8(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end);
}

}  // namespace

std::string FormatContext(const AnswerContext& c) {
  std::string out;
  for (size_t i = 0; i < c.passages.size(); ++i) {
    const ScoredPassage& p = c.passages[i];
    // A passage of a paged document (a PDF) says its pages: "[1] Report (p. 12): ...".
    const std::string pages = PagesLabel(p.page_first, p.page_last);
    out += "[" + std::to_string(i + 1) + "] " + (p.title.empty() ? p.document_id : p.title) +
           (pages.empty() ? "" : " (" + pages + ")") + ": " + p.text + "\n";
  }
  if (!c.relations.empty()) {
    out += "\nKey relationships:\n";
    for (const std::string& r : c.relations) out += "- " + r + "\n";
  }
  if (!c.notes.empty()) out += "\nFrom earlier steps:\n" + c.notes + "\n";
  if (!c.conversation.empty()) {
    out += "\nConversation so far (the question continues it):\n";
    const size_t first =
        c.conversation.size() > kConversationTurns ? c.conversation.size() - kConversationTurns : 0;
    for (size_t i = first; i < c.conversation.size(); ++i) {
      const ChatMessage& m = c.conversation[i];
      out += m.role + ": " + std::string(CutUtf8(m.content, kConversationTurnBytes)) + "\n";
    }
  }
  return out;
}

std::vector<int> MarkersInText(std::string_view text, size_t limit) {
  std::set<int> out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '[') continue;
    size_t j = i + 1;
    int n = 0;
    while (j < text.size() && j - i <= 4 && std::isdigit(static_cast<unsigned char>(text[j]))) {
      n = n * 10 + (text[j] - '0');
      ++j;
    }
    if (j > i + 1 && j < text.size() && text[j] == ']' && n >= 1 &&
        static_cast<size_t>(n) <= limit) {
      out.insert(n);
    }
  }
  return {out.begin(), out.end()};
}

bool IsInsufficient(std::string_view answer) {
  const std::string key = EntityKey(answer);
  return key.empty() || key == "insufficient information" || key == "insufficient info" ||
         key == "unknown" || key == "i don t know";
}

Result<LlmAnswerResult> LlmAnswerQuestion(ChatModel& chat, std::string_view question,
                                          const AnswerContext& context, std::string_view style,
                                          const TextSink* sink) {
  const size_t n = context.passages.size();
  LlmAnswerResult out;
  if (style == "long") {
    ChatRequest req;
    req.messages = {{"system", System(kLongAnswer, context)},
                    {"user", UserMessage(question, context)}};
    req.temperature = 0.0;
    req.max_tokens = 2048;
    FLOWRAG_ASSIGN_OR_RETURN(ChatResponse resp, sink != nullptr
                                                    ? chat.CompleteStreaming(req, *sink)
                                                    : chat.Complete(req));
    out.text = resp.content;
    out.answered = !IsInsufficient(resp.content);
    out.markers = MarkersInText(resp.content, n);
    return out;
  }
  JsonStringFieldStream final_answer("final_answer", sink);
  const TextSink filtered = [&final_answer](std::string_view piece) { return final_answer(piece); };
  FLOWRAG_ASSIGN_OR_RETURN(
      nlohmann::json j,
      AskJsonObject(chat, System(kShortAnswer, context), UserMessage(question, context), 1024,
                    sink != nullptr ? &filtered : nullptr));
  if (!j.contains("final_answer")) {
    return Status::InvalidArgument("model answer lacks \"final_answer\": " +
                                   j.dump().substr(0, 120));
  }
  out.text = StringField(j, "final_answer");
  out.reasoning = StringField(j, "reasoning");
  out.answered = !IsInsufficient(out.text);
  out.markers = Markers(j, n);
  if (out.markers.empty()) out.markers = MarkersInText(out.reasoning, n);
  return out;
}

Result<LlmReasonResult> LlmReason(ChatModel& chat, std::string_view question,
                                  const AnswerContext& context) {
  FLOWRAG_ASSIGN_OR_RETURN(nlohmann::json j, AskJsonObject(chat, System(kReason, context),
                                                           UserMessage(question, context), 1024));
  if (!j.contains("answer_possible")) {
    return Status::InvalidArgument("model answer lacks \"answer_possible\": " +
                                   j.dump().substr(0, 120));
  }
  LlmReasonResult out;
  const nlohmann::json& ap = j["answer_possible"];
  out.answer_possible = ap.is_boolean()
                            ? ap.get<bool>()
                            : (ap.is_string() && EntityKey(ap.get<std::string>()) == "true");
  out.summary = StringField(j, "provided_context");
  out.answer = StringField(j, "final_answer");
  out.follow_up = StringField(j, "additional_question");
  out.markers = Markers(j, context.passages.size());
  if (out.answer_possible && IsInsufficient(out.answer)) out.answer_possible = false;
  if (!out.answer_possible && out.follow_up.empty()) {
    return Status::InvalidArgument("model step neither answered nor asked a follow-up question");
  }
  return out;
}

}  // namespace flowrag
