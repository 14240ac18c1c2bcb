// IndexRun::Ingest: schema-driven construction (schema-contracts paper,
// Appendix B) into the store: the plan (schema/construct.h, and the chat
// model's entity types and relationships when configured), then the write
// phases, each resumable: record documents, embeddings, extraction of text
// documents, the record graph, graph extras (indexing/schema_records.h).
#include <set>

#include "common/stopwatch.h"
#include "common/text.h"
#include "indexing/extraction_phase.h"
#include "indexing/index_run.h"
#include "indexing/schema_records.h"
#include "models/chat_setup.h"
#include "schema/construct.h"
#include "schema/llm_entities.h"
#include "schema/llm_relations.h"
#include "models/llm_cache.h"

namespace flowrag {

// The construction plan of the folder's records under `contract`
// (schema/construct.h) and the chat model's additions; its counts go to
// *report.
Result<ConstructionPlan> IndexRun::PlanIngest(const std::string& dir,
                                              const SchemaContract& contract,
                                              const IngestOptions& options,
                                              IngestReport* report) {
  ConstructionOptions plan_options;
  plan_options.exclusions = options.exclusions;
  plan_options.chunking = options.index.chunking;
  plan_options.dedup_similarity = options.dedup_similarity;
  std::shared_ptr<Embedder> embedder = embedder_;
  NameEmbedder embed = [embedder](const std::vector<std::string>& names) {
    return embedder->Embed(names);
  };
  FLOWRAG_ASSIGN_OR_RETURN(ConstructionPlan plan, PlanConstruction(dir, contract, plan_options, embed));
  FLOWRAG_RETURN_IF_ERROR(PlanLlmExtraction(contract, options, &plan, report));
  report->source_order = plan.source_order;
  report->merged_by_key = plan.merged_by_key;
  report->merged_by_embedding = plan.merged_by_embedding;
  report->field_entities = plan.derived_entities;
  report->links = plan.links;
  report->unresolved_links = plan.unresolved_links;
  report->warnings = plan.warnings;
  std::set<std::string> entity_names;
  for (const PlannedRecord& r : plan.records) {
    (r.text_document ? report->text_documents : report->records) += 1;
    if (!r.text_document) entity_names.insert(EntityKey(r.title));  // as the store resolves names
  }
  report->entities = entity_names.size();
  return plan;
}

Result<IngestReport> IndexRun::Ingest(const std::string& dir, const SchemaContract& contract,
                                      const IngestOptions& options) {
  FLOWRAG_RETURN_IF_ERROR(options.index.chunking.Validate());
  FLOWRAG_RETURN_IF_ERROR(ResolveExtractor(options.index, HasChatModel(engine_)).status());
  if (options.index.batch_size == 0) {
    return Status::InvalidArgument("ingest: the batch size must be positive");
  }
  const auto start = SteadyClock::now();
  IngestReport report;
  FLOWRAG_ASSIGN_OR_RETURN(ConstructionPlan plan, PlanIngest(dir, contract, options, &report));
  report.plan_seconds = SecondsSince(start);

  IndexRunRecord run;
  FLOWRAG_RETURN_IF_ERROR(BeginJournal("schema:" + dir, &run));
  IndexReport& ix = report.index;
  IndexContext ctx{stores_.phases, options.index, ix, run};
  auto phases = [&]() -> Status {
    FLOWRAG_RETURN_IF_ERROR(stores_.state.SetSchemaContractYaml(ToYaml(contract)));
    FLOWRAG_RETURN_IF_ERROR(WriteRecordDocuments(ctx, plan, options, &report));
    ix.ingest_seconds = SecondsSince(start);
    const auto embed_start = SteadyClock::now();
    FLOWRAG_RETURN_IF_ERROR(Embed(ctx));
    ix.embed_seconds = SecondsSince(embed_start);
    // The writer lock is kept through the extraction: the record graph
    // written after it links the text documents to the records.
    FLOWRAG_RETURN_IF_ERROR(Extract(ctx, /*share_lock=*/false));
    const auto graph_start = SteadyClock::now();
    FLOWRAG_RETURN_IF_ERROR(WriteRecordGraph(ctx, plan, &report));
    // Entity vectors and synonyms for the record entities too.
    FLOWRAG_RETURN_IF_ERROR(GraphExtras(ctx));
    report.graph_seconds = SecondsSince(graph_start);
    return Status::Ok();
  };
  FLOWRAG_RETURN_IF_ERROR(FinishJournal(&run, phases()));
  report.total_seconds = ix.total_seconds = SecondsSince(start);
  return report;
}

// Algorithm 3 / B.3.3 and B.5.3 with the indexing chat model (the
// extractor "llm", or "auto" with a model configured): instances of llm
// entity types, then relationships declared `extraction: llm` (which may
// connect them), before anything is written. Answers are cached in the
// store, so a resumed run asks again for nothing. Without a model both are
// skipped, with a warning.
Status IndexRun::PlanLlmExtraction(const SchemaContract& contract, const IngestOptions& options,
                                   ConstructionPlan* plan, IngestReport* report) {
  const bool types = !LlmEntityTypes(contract).empty(), relations = HasLlmRelationships(contract);
  if (!types && !relations) return Status::Ok();
  FLOWRAG_ASSIGN_OR_RETURN(std::string extractor,
                           ResolveExtractor(options.index, HasChatModel(engine_)));
  if (extractor.rfind("llm", 0) != 0 || options.index.dry_run) {
    const std::string what = types && relations ? "entity types and relationships" : types ? "entity types" : "relationships";
    plan->warnings.push_back(what + " extracted by llm (Algorithm 3, B.5.3) were not extracted: " +
                             (options.index.dry_run ? "dry run" : "no chat model is used (extractor " + extractor + ")"));
    return Status::Ok();
  }
  StoreResponseCache cache(&stores_.responses);
  FLOWRAG_ASSIGN_OR_RETURN(std::shared_ptr<ChatModel> client, MakeChatModel(engine_, &cache));
  const LlmEntityReport e = ExtractLlmEntities(contract, plan, *client);
  const LlmRelationReport r = ExtractLlmRelationships(contract, plan, *client);
  report->llm_entities = e.entities;
  report->llm_links = r.added;
  report->llm_calls = e.calls + r.calls;
  if (e.failed_calls + r.failed_calls > 0) {
    plan->warnings.push_back(std::to_string(e.failed_calls + r.failed_calls) + " of " +
                             std::to_string(report->llm_calls) +
                             " LLM extraction calls failed or were unreadable; what they would have found is missing");
  }
  if (r.over_cap > 0) {
    plan->warnings.push_back(std::to_string(r.over_cap) +
                             " records past the cap of LLM relationship calls per source were not asked");
  }
  return Status::Ok();
}

}  // namespace flowrag
