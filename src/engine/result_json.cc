#include "engine/result_json.h"

#include "flowrag/json.h"

namespace flowrag {
namespace {

// "page" (the first) and "pages" ([first, last]) for a passage or citation
// of a document with pages; nothing for one without.
void AddPages(int32_t first, int32_t last, nlohmann::json* j) {
  if (first <= 0) return;
  (*j)["page"] = first;
  (*j)["pages"] = {first, std::max(first, last)};
}

}  // namespace

nlohmann::json RetrievalResultJson(const RetrievalResult& r) {
  nlohmann::json j;
  j["method"] = r.method;
  j["passages"] = nlohmann::json::array();
  for (const ScoredPassage& p : r.passages) {
    nlohmann::json pj = {{"passage_id", p.passage_id},
                         {"document_id", p.document_id},
                         {"title", p.title},
                         {"ordinal", p.ordinal},
                         {"begin", p.begin},
                         {"end", p.end},
                         {"score", p.score},
                         {"text", p.text}};
    AddPages(p.page_first, p.page_last, &pj);
    j["passages"].push_back(std::move(pj));
  }
  j["keywords"] = r.keywords;
  j["nodes"] = nlohmann::json::array();
  for (const GraphNode& n : r.nodes) {
    j["nodes"].push_back(
        {{"id", n.id}, {"kind", n.kind}, {"label", n.label}, {"score", n.score}, {"seed", n.seed}});
  }
  j["edges"] = nlohmann::json::array();
  for (const GraphEdge& e : r.edges) {
    j["edges"].push_back({{"from", e.from},
                          {"to", e.to},
                          {"kind", e.kind},
                          {"relation", e.relation},
                          {"weight", e.weight},
                          {"flow", e.flow}});
  }
  j["paths"] = r.paths;
  j["context"] = r.context;
  nlohmann::json d = {{"time_ms", r.diagnostics.time_ms},
                      {"candidates_scored", r.diagnostics.candidates_scored},
                      {"iterations", r.diagnostics.iterations},
                      {"residual", r.diagnostics.residual},
                      {"nodes_touched", r.diagnostics.nodes_touched},
                      {"edges_touched", r.diagnostics.edges_touched}};
  for (const auto& [k, v] : r.diagnostics.extra) d[k] = v;
  j["diagnostics"] = d;
  return j;
}

nlohmann::json CitationJson(const Citation& c) {
  nlohmann::json j = {{"marker", c.marker}, {"passage_id", c.passage_id},
                      {"document_id", c.document_id}, {"title", c.title},
                      {"quote", c.quote},   {"begin", c.begin},
                      {"end", c.end}};
  AddPages(c.page_first, c.page_last, &j);
  return j;
}

nlohmann::json AnswerJson(const Answer& a) {
  nlohmann::json j;
  j["question"] = a.question;
  j["answer"] = a.text;
  j["reasoning"] = a.reasoning;
  j["answered"] = a.answered;
  j["confidence"] = a.confidence;
  j["answerer"] = a.answerer;
  j["pipeline"] = a.pipeline;
  j["citations"] = nlohmann::json::array();
  for (const Citation& c : a.citations) j["citations"].push_back(CitationJson(c));
  j["steps"] = nlohmann::json::array();
  for (const AnswerStep& s : a.steps) {
    j["steps"].push_back({{"query", s.query},
                          {"answer", s.answer},
                          {"summary", s.summary},
                          {"follow_up", s.follow_up},
                          {"passage_ids", s.passage_ids}});
  }
  j["usage"] = {{"llm_calls", a.usage.llm_calls},
                {"cache_hits", a.usage.cache_hits},
                {"prompt_tokens", a.usage.prompt_tokens},
                {"completion_tokens", a.usage.completion_tokens},
                {"cost_usd", a.usage.cost_usd}};
  j["warnings"] = a.warnings;
  j["time_ms"] = a.time_ms;
  j["retrieval"] = RetrievalResultJson(a.retrieval);
  return j;
}

nlohmann::json SegmentStatsJson(const SegmentStats& s) {
  nlohmann::json files = nlohmann::json::array();
  for (const SegmentFileStats& f : s.files) {
    files.push_back({{"id", f.id},
                     {"kind", f.kind},
                     {"rows", f.rows},
                     {"deleted_rows", f.deleted_rows},
                     {"bytes", f.bytes},
                     {"level", f.level}});
  }
  return {{"directory", s.directory},
          {"manifest", s.manifest},
          {"generation", s.generation},
          {"files", std::move(files)},
          {"live_bytes", s.live_bytes},
          {"unreferenced_files", s.unreferenced_files},
          {"unreferenced_bytes", s.unreferenced_bytes},
          {"merges_pending", s.merges_pending},
          {"snapshot_source", s.snapshot_source}};
}

nlohmann::json StoreStatsJson(const StoreStats& s) {
  const GraphStats& g = s.graph;
  nlohmann::json graph = {{"nodes", g.nodes},
                          {"edges", g.edges},
                          {"isolated_ratio", g.isolated_ratio},
                          {"average_degree", g.average_degree},
                          {"degree",
                           {{"min", g.degree_min},
                            {"median", g.degree_median},
                            {"p90", g.degree_p90},
                            {"p99", g.degree_p99},
                            {"max", g.degree_max}}},
                          {"extracted_passages", g.extracted_passages},
                          {"failed_passages", g.failed_passages},
                          {"llm",
                           {{"calls", g.llm_calls},
                            {"prompt_tokens", g.llm_prompt_tokens},
                            {"completion_tokens", g.llm_completion_tokens}}},
                          {"memory_bytes", g.memory_bytes}};
  nlohmann::json out = {{"path", s.path},
          {"format_version", s.format_version},
          {"documents", s.documents},
          {"passages", s.passages},
          {"embeddings", s.embeddings},
          {"embedding_models", s.embedding_models},
          {"dense_model", s.dense_model},
          {"passage_index", s.passage_index},
          {"passages_missing_embeddings", s.passages_missing_embeddings},
          {"snapshot_parts_error", s.snapshot_parts_error},
          {"index_runs", s.index_runs},
          {"file_bytes", s.file_bytes},
          {"graph", std::move(graph)},
          {"segments", SegmentStatsJson(s.segments)}};
  if (s.schema.present) {
    const SchemaStats& c = s.schema;
    out["schema"] = {{"version", c.version},
                     {"generated_by", c.generated_by},
                     {"source_records", c.source_records},
                     {"derived_from", c.derived_from},
                     {"entity_types", c.entity_types},
                     {"entity_types_used", c.entity_types_used},
                     {"relationship_types", c.relationship_types},
                     {"relationship_types_used", c.relationship_types_used},
                     {"schema_utility", c.schema_utility},
                     {"relationship_usage", c.relationship_usage},
                     {"cross_source_utility", c.cross_source_utility},
                     {"link_validity", c.link_validity},
                     {"provenance_completeness", c.provenance_completeness},
                     {"qa_ready", c.qa_ready}};
  }
  return out;
}

std::string ToJson(const RetrievalResult& result) {
  return RetrievalResultJson(result).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ToJson(const Answer& answer) {
  return AnswerJson(answer).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string QueryJson(std::string_view question, const RetrievalResult& result, int indent) {
  nlohmann::json j = RetrievalResultJson(result);
  j["question"] = question;
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ToJson(const StoreStats& stats) {
  return StoreStatsJson(stats).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace flowrag
