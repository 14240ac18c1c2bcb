// The static part of the public Engine API (include/flowrag/engine.h):
// opening an engine, store locations, the methods and their options.
#include "engine/engine_impl.h"
#include "retrieval/params.h"
#include "sqldb/postgres_url.h"

namespace flowrag {

Result<std::unique_ptr<Engine>> Engine::Open(const std::string& db_path,
                                             const EngineOptions& options) {
  if (options.passage_ann != "auto" && options.passage_ann != "hnsw" &&
      options.passage_ann != "int8") {
    return Status::InvalidArgument("EngineOptions::passage_ann: expected \"auto\", \"hnsw\" or "
                                   "\"int8\", got \"" + options.passage_ann.substr(0, 40) + "\"");
  }
  FLOWRAG_ASSIGN_OR_RETURN(auto impl, EngineImpl::Create(db_path, options));
  return std::unique_ptr<Engine>(std::move(impl));
}

bool IsDatabaseUrl(std::string_view location) { return IsPostgresLocation(location); }

std::string DisplayLocation(const std::string& location) {
  if (!IsPostgresLocation(location)) return location;
  Result<PostgresUrl> url = ParsePostgresUrl(location);
  return url.ok() ? url->redacted : "postgresql://(an invalid URL)";
}

std::vector<std::string> Engine::Methods() {
  std::vector<std::string> names{std::string(kAutoMethod)};
  for (std::string& n : RetrieverNames()) names.push_back(std::move(n));
  return names;
}

Result<std::vector<MethodOption>> Engine::MethodOptions(std::string_view method) {
  if (method == kAutoMethod) {
    return Status::InvalidArgument(
        "method \"auto\" resolves per store (qafd with a graph, else hybrid): ask for one of "
        "those");
  }
  FLOWRAG_ASSIGN_OR_RETURN(auto retriever, MakeRetriever(method));
  std::vector<MethodOption> options;
  ParamReader catalog(&options);
  FLOWRAG_RETURN_IF_ERROR(retriever->ReadOptions(catalog));
  return options;
}

}  // namespace flowrag
