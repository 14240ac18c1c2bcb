// `flowrag ask`: a grounded answer with citations.
#include <cstdio>

#include "commands.h"
#include "flowrag/engine.h"
#include "flowrag/json.h"

namespace flowrag::cli {
namespace {

void PrintAnswer(const Answer& a) {
  std::printf("%s\n", a.text.c_str());
  if (!a.citations.empty()) std::printf("\n");
  for (const Citation& c : a.citations) {
    std::printf("[%d] %s (%s): \"%s\"\n", c.marker,
                c.title.empty() ? c.document_id.c_str() : c.title.c_str(), c.document_id.c_str(),
                c.quote.c_str());
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

}  // namespace

Status RunAsk(const AskArgs& args) {
  FLOWRAG_ASSIGN_OR_RETURN(auto engine, OpenExistingStore(args.db));
  FLOWRAG_ASSIGN_OR_RETURN(Answer a, engine->Ask(args.question, args.answer));
  if (args.json) {
    std::printf("%s\n", ToJson(a).c_str());
  } else {
    PrintAnswer(a);
  }
  return Status::Ok();
}

}  // namespace flowrag::cli
