// `flowrag ingest DIR --schema FILE --db STORE [--exclude MANIFEST]`: schema-driven
// construction.
#include <cstdio>

#include "commands.h"
#include "flowrag/engine.h"
#include "flowrag/schema.h"

namespace flowrag::cli {

Status RunIngest(const IngestArgs& args) {
  SchemaContract contract;
  if (args.schema.empty()) {  // induce the offline contract on the fly
    SchemaOptions so;
    so.exclusions = args.exclude;
    FLOWRAG_ASSIGN_OR_RETURN(InducedSchema s, InduceSchema(args.dir, so));
    contract = DeriveContract(s);
  } else {
    FLOWRAG_ASSIGN_OR_RETURN(contract, LoadContract(args.schema));
  }
  IngestOptions options;
  options.exclusions = args.exclude;
  options.index.extractor = args.extractor;
  if (!args.quiet) options.index.progress = StderrProgress();
  FLOWRAG_ASSIGN_OR_RETURN(auto engine, Engine::Open(args.db, args.engine));
  FLOWRAG_ASSIGN_OR_RETURN(IngestReport r, engine->Ingest(args.dir, contract, options));
  for (const std::string& w : r.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (args.quiet) return Status::Ok();
  std::string order;
  for (const std::string& s : r.source_order) order += (order.empty() ? "" : " -> ") + s;
  std::printf("sources          %s\n", order.c_str());
  std::printf("records          %zu structured, %zu text documents, %zu removed\n", r.records,
              r.text_documents, r.records_removed);
  std::printf("documents        %zu added, %zu replaced, %zu unchanged; %zu passages, %zu embedded\n",
              r.index.documents_added, r.index.documents_replaced, r.index.documents_unchanged,
              r.index.passages_added, r.index.passages_embedded);
  std::printf("entities         %zu from records (%zu merged by key, %zu by name similarity), "
              "%zu field and llm instances\n",
              r.entities, r.merged_by_key, r.merged_by_embedding, r.field_entities);
  std::printf("relationships    %zu links (%zu by the LLM), %zu unresolved references dropped, "
              "%zu text mentions\n",
              r.links, r.llm_links, r.unresolved_links, r.text_mentions);
  if (r.llm_calls > 0) {
    std::printf("llm              %zu calls: %zu instances of llm types, %zu links\n", r.llm_calls,
                r.llm_entities, r.llm_links);
  }
  std::printf("extraction       %s: %zu text passages\n", r.index.extractor.c_str(),
              r.index.passages_extracted);
  std::printf("time             plan %.3f s, graph %.3f s, total %.3f s (%.2f ms per record)\n",
              r.plan_seconds, r.graph_seconds, r.total_seconds,
              1000.0 * r.total_seconds / std::max<size_t>(1, r.records + r.text_documents));
  return Status::Ok();
}

}  // namespace flowrag::cli
