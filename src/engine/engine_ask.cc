// EngineImpl::Ask: the answer pipelines of agent/pipeline.h, or the
// schema-guided agent of agent/schema_agent.h, over this engine.
#include <optional>

#include "agent/answer_stream.h"
#include "agent/pipeline.h"
#include "agent/schema_agent.h"
#include "agent/schema_index.h"
#include "engine/engine_impl.h"

namespace flowrag {

Result<std::shared_ptr<const SchemaIndex>> EngineImpl::BuildSchemaIndex(
    const Snapshot& snap) const {
  FLOWRAG_ASSIGN_OR_RETURN(auto yaml, store_->GetMeta("schema_contract"));
  if (!yaml) return std::shared_ptr<const SchemaIndex>();
  FLOWRAG_ASSIGN_OR_RETURN(SchemaContract contract,
                           ParseContract(*yaml, store_->path() + ":schema_contract"));
  std::vector<RecordInput> records;
  FLOWRAG_RETURN_IF_ERROR(store_->ForEachSourceRecord([&](Store::SourceRecordRow&& r) -> Status {
    records.push_back({std::move(r.external_id), std::move(r.record.entity_type),
                       std::move(r.record.fields), std::move(r.record.file), r.record.line,
                       r.record.structured});
    return Status::Ok();
  }));
  return std::shared_ptr<const SchemaIndex>(SchemaIndex::Build(contract, std::move(records), snap));
}

Result<std::shared_ptr<const SchemaIndex>> EngineImpl::SchemaIndexFor(const Snapshot& snap) const {
  // Kept with the snapshot (null index: no contract in the store).
  struct Slot {
    std::shared_ptr<const SchemaIndex> index;
  };
  static const char kTag = 0;
  Status failed = Status::Unavailable("schema index: a concurrent query failed to build it");
  auto slot = std::static_pointer_cast<const Slot>(
      snap.Derived(&kTag, [&]() -> std::shared_ptr<const void> {
        Result<std::shared_ptr<const SchemaIndex>> built = BuildSchemaIndex(snap);
        if (!built.ok()) {
          failed = built.status();
          return nullptr;
        }
        return std::make_shared<const Slot>(Slot{std::move(built).value()});
      }));
  if (slot == nullptr) return failed;
  return slot->index;
}

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
  std::optional<AnswerStream> stream;
  if (options.observer != nullptr) stream.emplace(options.observer);
  deps.stream = stream ? &*stream : nullptr;
  FLOWRAG_ASSIGN_OR_RETURN(Answer answer, RunPipelineOf(question, options, snap, deps));
  if (stream) FLOWRAG_RETURN_IF_ERROR(stream->Close(answer));
  return answer;
}

Result<Answer> EngineImpl::RunPipelineOf(std::string_view question, const AnswerOptions& options,
                                         const std::shared_ptr<const Snapshot>& snap,
                                         const PipelineDeps& deps) const {
  std::shared_ptr<const SchemaIndex> schema;
  if (options.pipeline == "schema" || options.pipeline == "auto") {
    FLOWRAG_ASSIGN_OR_RETURN(schema, SchemaIndexFor(*snap));
  }
  if (schema != nullptr || options.pipeline == "schema") {
    SchemaAgentDeps agent;
    agent.index = schema.get();
    agent.snapshot = snap.get();
    agent.query = [&](std::string_view query, const QueryOptions& q, ChatModel* c) {
      return QueryOn(*snap, query, q, c);
    };
    agent.pipeline = deps;
    return RunSchemaAgent(question, options, agent);
  }
  AnswerOptions resolved = options;
  if (resolved.pipeline == "auto") resolved.pipeline = "single";
  return RunAnswerPipeline(question, resolved, deps);
}

}  // namespace flowrag
