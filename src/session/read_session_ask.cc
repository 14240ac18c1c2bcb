// ReadSession::Ask: the answer pipelines of agent/pipeline.h, or the
// schema-guided agent of agent/schema_agent.h, every round against this
// session's snapshot.
#include <optional>

#include "agent/answer_stream.h"
#include "agent/pipeline.h"
#include "agent/schema_agent.h"
#include "agent/usage_chat.h"
#include "session/read_session.h"

namespace flowrag {

Result<std::shared_ptr<const SchemaIndex>> ReadSession::SchemaIndexOf() const {
  // Kept with the snapshot (a null index: no contract in the store).
  struct Slot {
    std::shared_ptr<const SchemaIndex> index;
  };
  static const char kTag = 0;
  Status failed = Status::Unavailable("schema index: a concurrent query failed to build it");
  auto slot = std::static_pointer_cast<const Slot>(
      snapshot_->Derived(&kTag, [&]() -> std::shared_ptr<const void> {
        std::shared_ptr<const SchemaIndex> index;
        if (services_->schema) {
          Result<std::optional<SessionServices::SchemaInput>> input = services_->schema();
          if (!input.ok()) {
            failed = input.status();
            return nullptr;
          }
          if (*input) {
            index = SchemaIndex::Build((*input)->contract, std::move((*input)->records), *snapshot_);
          }
        }
        return std::make_shared<const Slot>(Slot{std::move(index)});
      }));
  if (slot == nullptr) return failed;
  return slot->index;
}

Result<Answer> ReadSession::Ask(std::string_view question, const AnswerOptions& options) const {
  FLOWRAG_RETURN_IF_ERROR(options.Validate());
  if (question.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::InvalidArgument("question: expected a non-empty question");
  }
  ChatModel* chat = nullptr;
  if (services_->chat) {
    FLOWRAG_ASSIGN_OR_RETURN(chat, services_->chat());
  }
  PipelineDeps deps;
  deps.retrieve = [&](std::string_view query, ChatModel* c) {
    return QueryWith(query, options.query, c);
  };
  deps.chat = chat;
  deps.idf = [&](std::string_view term) { return snapshot_->bm25().Idf(term); };
  if (chat != nullptr) {
    FLOWRAG_ASSIGN_OR_RETURN(deps.prices, TokenPricesFromEnv());
  }
  std::optional<AnswerStream> stream;
  if (options.observer != nullptr) stream.emplace(options.observer);
  deps.stream = stream ? &*stream : nullptr;

  std::shared_ptr<const SchemaIndex> schema;
  if (options.pipeline == "schema" || options.pipeline == "auto") {
    FLOWRAG_ASSIGN_OR_RETURN(schema, SchemaIndexOf());
  }
  const auto run = [&]() -> Result<Answer> {
    if (schema != nullptr || options.pipeline == "schema") {
      SchemaAgentDeps agent;
      agent.index = schema.get();
      agent.snapshot = snapshot_.get();
      agent.query = [&](std::string_view query, const QueryOptions& q, ChatModel* c) {
        return QueryWith(query, q, c);
      };
      agent.pipeline = deps;
      return RunSchemaAgent(question, options, agent);
    }
    AnswerOptions resolved = options;
    if (resolved.pipeline == "auto") resolved.pipeline = "single";
    return RunAnswerPipeline(question, resolved, deps);
  };
  FLOWRAG_ASSIGN_OR_RETURN(Answer answer, run());
  if (stream) FLOWRAG_RETURN_IF_ERROR(stream->Close(answer));
  return answer;
}

}  // namespace flowrag
