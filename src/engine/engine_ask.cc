// EngineImpl::Ask: the answer pipelines of agent/pipeline.h over this engine.
#include "agent/pipeline.h"
#include "engine/engine_impl.h"

namespace flowrag {

Result<Answer> EngineImpl::Ask(std::string_view question, const AnswerOptions& options) const {
  FLOWRAG_RETURN_IF_ERROR(options.Validate());
  if (question.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::InvalidArgument("question: expected a non-empty question");
  }
  FLOWRAG_ASSIGN_OR_RETURN(ChatModel * chat, QueryChat());
  // One snapshot for every round: an insert or delete in between swaps the
  // engine's snapshot but not this answer's evidence.
  const std::shared_ptr<const Snapshot> snap = snapshot();
  PipelineDeps deps;
  deps.retrieve = [&](std::string_view query, ChatModel* c) {
    return QueryOn(*snap, query, options.query, c);
  };
  deps.chat = chat;
  deps.idf = [&](std::string_view term) { return snap->bm25().Idf(term); };
  if (chat != nullptr) {
    FLOWRAG_ASSIGN_OR_RETURN(deps.prices, TokenPricesFromEnv());
  }
  return RunAnswerPipeline(question, options, deps);
}

}  // namespace flowrag
