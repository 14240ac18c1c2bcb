// GET /v1/stats and GET /v1/methods.
#include <string>

#include "server/handlers.h"

namespace flowrag::server {
namespace {

// The same fields as `flowrag stats --json`.
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
  return {{"path", s.path},
          {"format_version", s.format_version},
          {"documents", s.documents},
          {"passages", s.passages},
          {"embeddings", s.embeddings},
          {"embedding_models", s.embedding_models},
          {"dense_model", s.dense_model},
          {"passages_missing_embeddings", s.passages_missing_embeddings},
          {"index_runs", s.index_runs},
          {"file_bytes", s.file_bytes},
          {"graph", std::move(graph)}};
}

}  // namespace

Reply HandleStats(const Engine& engine, std::string_view workspace) {
  Result<StoreStats> stats = engine.Stats();
  if (!stats.ok()) return ErrorReply(ErrorFromStatus(stats.status()));
  nlohmann::json body = StoreStatsJson(*stats);
  body["workspace"] = std::string(workspace);
  return OkReply(std::move(body));
}

Reply HandleMethods() {
  const AnswerOptions defaults;
  return OkReply({{"methods", Engine::Methods()},
                  {"default_method", defaults.query.method},
                  {"pipelines", {"single", "cot", "decompose"}},
                  {"answerers", {"auto", "extractive", "llm"}},
                  {"styles", {"short", "long"}},
                  {"default_top_k", defaults.query.top_k}});
}

}  // namespace flowrag::server
