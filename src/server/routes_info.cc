// GET /v1/stats and GET /v1/methods.
#include <string>

#include "engine/result_json.h"
#include "server/handlers.h"

namespace flowrag::server {
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
