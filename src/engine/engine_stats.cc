// EngineImpl::Stats: the store's counts, the current session's graph, and
// for a store built by Ingest() the schema and KG quality metrics of the
// schema-contracts paper (B.7.1 Eq. 7–8 are GraphStats; B.7.2 blocks A–C
// in FillSchemaStats).
#include <set>

#include "engine/engine_impl.h"
#include "graph/snapshot_segment.h"
#include "segment/segment_stats.h"

namespace flowrag {

Result<StoreStats> EngineImpl::Stats() const {
  FLOWRAG_ASSIGN_OR_RETURN(StoreCounts c, store_->Counts());
  StoreStats s;
  s.path = store_->path();
  s.format_version = c.format_version;
  s.documents = c.documents;
  s.passages = c.passages;
  s.embeddings = c.embeddings;
  s.embedding_models = c.embedding_models;
  s.file_bytes = c.file_bytes;
  s.index_runs = c.index_runs;
  FLOWRAG_ASSIGN_OR_RETURN(auto dense, store_->DenseModel());
  s.dense_model = dense.value_or("");
  if (!s.dense_model.empty()) {
    FLOWRAG_ASSIGN_OR_RETURN(s.passages_missing_embeddings,
                             store_->CountPassagesMissingEmbeddings(s.dense_model));
  } else {
    s.passages_missing_embeddings = c.passages;
  }
  FLOWRAG_ASSIGN_OR_RETURN(Store::GraphCounts g, store_->CountGraph());
  s.graph.extracted_passages = g.extracted_passages;
  s.graph.failed_passages = g.failed_passages;
  s.graph.llm_calls = g.llm_calls;
  s.graph.llm_prompt_tokens = g.llm_prompt_tokens;
  s.graph.llm_completion_tokens = g.llm_completion_tokens;
  if (persister_ != nullptr) s.snapshot_parts_error = persister_->LastError();
  FLOWRAG_ASSIGN_OR_RETURN(auto current, session());
  const VectorIndex* passages = current->snapshot()->dense();
  s.passage_index = passages != nullptr ? passages->Kind() : "";
  current->FillGraphStats(&s.graph);
  FLOWRAG_RETURN_IF_ERROR(FillSegmentStats(*current->snapshot(), &s.segments));
  FLOWRAG_RETURN_IF_ERROR(FillSchemaStats(&s));
  return s;
}

Status EngineImpl::FillSegmentStats(const Snapshot& snapshot, SegmentStats* stats) const {
  const std::string dir = store_->SegmentDirectory();
  if (dir.empty()) return Status::Ok();
  FLOWRAG_ASSIGN_OR_RETURN(*stats, ReadSegmentStats(dir));
  const SnapshotBuildStats& built = snapshot.build_stats();
  auto it = built.parts.find(kSnapshotSegmentKind);
  if (it != built.parts.end() && it->second == PartState::kLoaded) {
    stats->snapshot_source = "segment";
    return Status::Ok();
  }
  stats->snapshot_source = "built";
  const std::string prefix = std::string(kSnapshotSegmentKind) + ": ";
  for (const std::string& error : built.part_errors) {
    if (error.rfind(prefix, 0) == 0) stats->snapshot_source += " (" + error.substr(prefix.size()) + ")";
  }
  return Status::Ok();
}

Status EngineImpl::FillSchemaStats(StoreStats* stats) const {
  FLOWRAG_ASSIGN_OR_RETURN(std::optional<std::string> yaml, store_->SchemaContractYaml());
  if (!yaml) return Status::Ok();
  FLOWRAG_ASSIGN_OR_RETURN(SchemaContract contract,
                           ParseContract(*yaml, store_->path() + ":schema_contract"));
  FLOWRAG_ASSIGN_OR_RETURN(SourceRecordStore::SchemaGraphCounts c, store_->CountSchemaGraph());
  SchemaStats& s = stats->schema;
  s.present = true;
  s.version = contract.version;
  s.generated_by = contract.generated_by;
  s.source_records = c.source_records;
  s.derived_from = c.derived_from;
  s.entity_types = static_cast<int64_t>(contract.entity_types.size());
  for (const EntityType& t : contract.entity_types) {
    // A text type is realised by its documents (the passages are its nodes).
    if (c.entities_per_type.count(t.name) || c.text_documents_per_type.count(t.name)) {
      ++s.entity_types_used;
    }
  }
  s.relationship_types = static_cast<int64_t>(contract.relationships.size());
  std::set<std::pair<std::string, std::string>> joined;
  std::map<std::string, std::string> source_of;
  for (const EntityType& t : contract.entity_types) source_of[t.name] = t.source;
  for (const RelationshipType& r : contract.relationships) {
    auto it = c.facts_per_relation.find(r.name);
    if (it != c.facts_per_relation.end() && it->second > 0) ++s.relationship_types_used;
    std::string a = source_of[r.from], b = source_of[r.to];
    if (a != b) joined.insert(std::minmax(a, b));
  }
  auto ratio = [](int64_t num, int64_t den) {
    return den > 0 ? static_cast<double>(num) / static_cast<double>(den) : 1.0;
  };
  const int64_t n = static_cast<int64_t>(contract.structure.sources.size());
  s.schema_utility = ratio(s.entity_types_used, s.entity_types);
  s.relationship_usage = ratio(s.relationship_types_used, s.relationship_types);
  s.cross_source_utility = n > 1 ? ratio(static_cast<int64_t>(joined.size()), n * (n - 1) / 2) : 0.0;
  s.link_validity = ratio(c.valid_edges, c.edges);
  s.provenance_completeness = ratio(c.entities_with_provenance, c.entities);
  s.qa_ready = stats->graph.isolated_ratio < 0.3 && stats->graph.average_degree >= 2.0;
  stats->graph.nodes["SourceRecord"] = c.source_records;
  stats->graph.edges["DERIVED_FROM"] = c.derived_from;
  return Status::Ok();
}

}  // namespace flowrag
