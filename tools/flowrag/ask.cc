// `flowrag ask`: a grounded answer with citations.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "flowrag/engine.h"
#include "flowrag/json.h"

namespace flowrag::cli {
namespace {

// --stream: the text goes to stdout as it comes; the rest of the answer
// follows once it is whole.
class PrintingObserver final : public AnswerObserver {
 public:
  bool OnRetrieval(const RetrievalResult&) override { return true; }
  bool OnText(std::string_view piece) override {
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
    printed_ += piece;
    return true;
  }
  const std::string& printed() const { return printed_; }

 private:
  std::string printed_;
};

// `printed`: the text already on stdout (--stream); the final text is
// printed again only when it differs (the model failed midway).
void PrintAnswer(const Answer& a, const std::string* printed = nullptr) {
  if (printed == nullptr) {
    std::printf("%s\n", a.text.c_str());
  } else if (*printed != a.text) {
    std::printf("\n(final answer) %s\n", a.text.c_str());
  } else {
    std::printf("\n");
  }
  if (!a.citations.empty()) std::printf("\n");
  for (const Citation& c : a.citations) {
    // "[1] Annual report (report.pdf p. 12): "..."" for a paged document.
    const std::string pages = PagesLabel(c.page_first, c.page_last);
    std::string quote = c.quote;
    for (char& ch : quote) {
      if (ch == '\f') ch = ' ';
    }
    std::printf("[%d] %s (%s%s%s): \"%s\"\n", c.marker,
                c.title.empty() ? c.document_id.c_str() : c.title.c_str(), c.document_id.c_str(),
                pages.empty() ? "" : " ", pages.c_str(), quote.c_str());
  }
  if (a.steps.size() > 1) {
    std::printf("\nsteps:\n");
    for (size_t i = 0; i < a.steps.size(); ++i) {
      const AnswerStep& s = a.steps[i];
      std::printf("  %zu. %s", i + 1, s.query.c_str());
      if (!s.answer.empty()) std::printf(" -> %s", s.answer.c_str());
      if (!s.follow_up.empty()) std::printf(" (next: %s)", s.follow_up.c_str());
      std::printf("\n");
    }
  }
  for (const std::string& w : a.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  std::fprintf(stderr, "%s, %s pipeline over %s, confidence %.2f, %.1f ms", a.answerer.c_str(),
               a.pipeline.c_str(), a.retrieval.method.c_str(), a.confidence, a.time_ms);
  if (a.usage.llm_calls > 0) {
    std::fprintf(stderr, ", %lld LLM calls (%lld cached), %lld+%lld tokens, $%.4f",
                 static_cast<long long>(a.usage.llm_calls),
                 static_cast<long long>(a.usage.cache_hits),
                 static_cast<long long>(a.usage.prompt_tokens),
                 static_cast<long long>(a.usage.completion_tokens), a.usage.cost_usd);
  }
  std::fprintf(stderr, "\n");
}

// --questions: each line {"id": ..., "question": ...}; the answers go to
// stdout as JSON lines in the same order, each with the question's "id".
Status AskMany(const Engine& engine, const AskArgs& args) {
  std::ifstream in(args.questions);
  if (!in) return Status::NotFound(args.questions + ": cannot open the questions file");
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = args.questions + ":" + std::to_string(n);
    nlohmann::json q = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (q.is_discarded() || !q.is_object()) return Status::InvalidArgument(where + ": expected a JSON object");
    if (!q.contains("question") || !q["question"].is_string()) {
      return Status::InvalidArgument(where + ": question: expected a string");
    }
    FLOWRAG_ASSIGN_OR_RETURN(Answer a, engine.Ask(q["question"].get<std::string>(), args.answer));
    nlohmann::json out = nlohmann::json::parse(ToJson(a));
    out["id"] = q.contains("id") ? q["id"] : nlohmann::json(n);
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
  return Status::Ok();
}

}  // namespace

Status RunAsk(const AskArgs& args) {
  FLOWRAG_ASSIGN_OR_RETURN(auto engine, OpenExistingStore(args.db));
  if (!args.questions.empty()) return AskMany(*engine, args);
  if (args.question.empty()) return Status::InvalidArgument("ask: give a question or --questions FILE");
  if (args.stream && !args.json) {
    PrintingObserver printer;
    AnswerOptions options = args.answer;
    options.observer = &printer;
    FLOWRAG_ASSIGN_OR_RETURN(Answer a, engine->Ask(args.question, options));
    PrintAnswer(a, &printer.printed());
    return Status::Ok();
  }
  FLOWRAG_ASSIGN_OR_RETURN(Answer a, engine->Ask(args.question, args.answer));
  if (args.json) {
    std::printf("%s\n", ToJson(a).c_str());
  } else {
    PrintAnswer(a);
  }
  return Status::Ok();
}

}  // namespace flowrag::cli
