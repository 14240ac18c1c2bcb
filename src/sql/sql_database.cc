// SqlDatabase (flowrag/sql.h): a SQLite file, its schema graph and value
// index (optionally kept in a flowrag store), the linker and the safe
// executor.
#include <chrono>
#include <filesystem>

#include "llm/chat_client.h"
#include "llm/openai_embedder.h"
#include "sql/cached_embedder.h"
#include "sql/safe_exec.h"
#include "sql/schema_linker.h"
#include "sql/spider_data.h"
#include "sql/sql_writer.h"
#include "models/llm_cache.h"
#include "storage/store.h"

namespace flowrag {
namespace {

class SqlDatabaseImpl final : public SqlDatabase {
 public:
  Result<SchemaLink> Link(std::string_view question, std::string_view method,
                          const SchemaLinkOptions& options) const override {
    FLOWRAG_ASSIGN_OR_RETURN(LinkMethod m, ParseLinkMethod(method));
    return linker_->Link(question, m, options);
  }

  Result<SqlAnswer> Ask(std::string_view question, const SqlAskOptions& options) override {
    if (db_ == nullptr) return SchemaOnly();
    if (chat_ == nullptr) {
      return Status::FailedPrecondition(
          "sql ask needs a chat model: set FLOWRAG_LLM_BASE_URL and FLOWRAG_LLM_MODEL (any "
          "OpenAI-compatible endpoint); `flowrag sql link` works offline");
    }
    return WriteAndRunSql(*chat_, *db_, *linker_, question, options);
  }

  Result<SqlResultSet> Execute(std::string_view sql, const SqlLimits& limits) override {
    if (db_ == nullptr) return SchemaOnly();
    return db_->Execute(sql, limits);
  }

  static Status SchemaOnly() {
    return Status::FailedPrecondition("this schema has no data to run SQL on (opened from a schema file); "
                                      "open the SQLite database instead");
  }

  std::string SchemaJson() const override { return linker_->graph().ToJson(); }
  const std::vector<std::string>& warnings() const override { return warnings_; }
  size_t num_tables() const override { return linker_->graph().tables.size(); }
  size_t num_columns() const override { return linker_->graph().columns.size(); }

  std::unique_ptr<ReadOnlyDatabase> db_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<StoreResponseCache> cache_;
  std::unique_ptr<ChatModel> chat_;
  std::unique_ptr<SchemaLinker> linker_;
  std::vector<std::string> warnings_;
};

Result<std::string> Fingerprint(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return Status::IoError(path + ": " + ec.message());
  const auto mtime = std::filesystem::last_write_time(path, ec);
  if (ec) return Status::IoError(path + ": " + ec.message());
  return std::to_string(size) + ":" + std::to_string(mtime.time_since_epoch().count());
}

// The graph and values of `path`: from the store when its fingerprint
// matches, else introspected (and stored unless the deadline cut it short).
Status BuildSchema(const std::string& path, const SqlDatabaseOptions& o, SqlSchemaCache* store,
                   std::chrono::steady_clock::time_point deadline, SchemaGraph* graph,
                   ValueIndex* values, std::vector<std::string>* warnings) {
  std::string source, fingerprint;
  if (store != nullptr) {
    source = std::filesystem::absolute(path).lexically_normal().string();
    FLOWRAG_ASSIGN_OR_RETURN(fingerprint, Fingerprint(path));
    // The build options are part of it: another sample count is another graph.
    fingerprint += ":" + std::to_string(o.samples_per_column) + ":" + (o.value_index ? "v" : "s");
    FLOWRAG_ASSIGN_OR_RETURN(auto row, store->GetSqlSchema(source));
    if (row && row->fingerprint == fingerprint) {
      FLOWRAG_ASSIGN_OR_RETURN(*graph, SchemaGraph::FromJson(row->graph));
      FLOWRAG_ASSIGN_OR_RETURN(*values, ValueIndex::FromJson(row->value_index, graph->columns.size()));
      return Status::Ok();
    }
  }
  const size_t warned = warnings->size();
  IntrospectionOptions io;
  io.samples_per_column = o.samples_per_column;
  io.deadline = deadline;
  FLOWRAG_ASSIGN_OR_RETURN(*graph, SchemaFromSqlite(path, io, warnings));
  if (graph->tables.empty()) return Status::InvalidArgument(path + ": the database has no tables");
  if (o.value_index) {
    FLOWRAG_ASSIGN_OR_RETURN(*values, ValueIndex::FromSqlite(path, *graph, ValueIndexOptions{}, deadline, warnings));
  } else {
    *values = ValueIndex::FromSamples(*graph);
  }
  if (store != nullptr) {
    if (warnings->size() > warned) {
      warnings->push_back(path + ": the partial schema is not cached in the store");
    } else {
      FLOWRAG_RETURN_IF_ERROR(store->PutSqlSchema({source, fingerprint, graph->ToJson(), values->ToJson()}));
    }
  }
  return Status::Ok();
}

// The embedder, chat model and linker of an opened database.
Status Finish(const SqlDatabaseOptions& o, std::shared_ptr<SchemaGraph> graph, ValueIndex values,
              SqlDatabaseImpl* impl) {
  std::shared_ptr<Embedder> embedder;  // null: the hashed embedder fitted on the node texts
  std::string kind = o.embedder;
  if (kind.empty() && impl->store_ != nullptr) {  // the store's embedder
    FLOWRAG_ASSIGN_OR_RETURN(std::optional<std::string> stored, impl->store_->EmbedderKind());
    kind = stored.value_or(kHashEmbedderName);
  }
  if (kind == "openai") {
    FLOWRAG_ASSIGN_OR_RETURN(OpenAiEmbedderOptions eo, OpenAiEmbedderOptionsFromEnv(OpenAiEmbedderOptions{}));
    FLOWRAG_ASSIGN_OR_RETURN(auto remote, OpenAiEmbedder::Create(eo));
    embedder = std::move(remote);
    if (impl->store_ != nullptr) embedder = std::make_shared<CachedEmbedder>(embedder, impl->store_.get());
  } else if (!kind.empty() && kind != "hash") {
    return Status::InvalidArgument("embedder \"" + kind + "\": expected \"hash\" or \"openai\"");
  }
  if (ChatModelConfigured()) {
    FLOWRAG_ASSIGN_OR_RETURN(OpenAiChatOptions co, OpenAiChatOptionsFromEnv(OpenAiChatOptions{}));
    if (impl->store_) impl->cache_ = std::make_unique<StoreResponseCache>(impl->store_.get());
    FLOWRAG_ASSIGN_OR_RETURN(impl->chat_, OpenAiChatClient::Create(co, impl->cache_.get()));
  }
  FLOWRAG_ASSIGN_OR_RETURN(impl->linker_, SchemaLinker::Create(std::move(graph), std::move(values),
                                                                std::move(embedder), impl->chat_.get()));
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<SqlDatabase>> SqlDatabase::Open(const std::string& path,
                                                       const SqlDatabaseOptions& o) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  Clock::time_point deadline = Clock::time_point::max();
  if (o.open_time_limit_seconds > 0) {
    const auto budget = std::chrono::duration<double>(o.open_time_limit_seconds);
    if (budget < Clock::time_point::max() - start) deadline = start + std::chrono::duration_cast<Clock::duration>(budget);
  }
  auto impl = std::make_unique<SqlDatabaseImpl>();
  FLOWRAG_ASSIGN_OR_RETURN(impl->db_, ReadOnlyDatabase::Open(path));
  if (!o.store.empty()) {
    FLOWRAG_ASSIGN_OR_RETURN(impl->store_, Store::Open(o.store));
  }
  auto graph = std::make_shared<SchemaGraph>();
  ValueIndex values;
  FLOWRAG_RETURN_IF_ERROR(
      BuildSchema(path, o, impl->store_.get(), deadline, graph.get(), &values, &impl->warnings_));
  FLOWRAG_RETURN_IF_ERROR(Finish(o, std::move(graph), std::move(values), impl.get()));
  return std::unique_ptr<SqlDatabase>(std::move(impl));
}

Result<std::unique_ptr<SqlDatabase>> SqlDatabase::OpenSchema(const std::string& path,
                                                             const std::string& db_id,
                                                             const SqlDatabaseOptions& o) {
  auto impl = std::make_unique<SqlDatabaseImpl>();
  std::shared_ptr<SchemaGraph> graph;
  if (std::filesystem::is_directory(path)) {
    FLOWRAG_ASSIGN_OR_RETURN(Spider2Database d, LoadSpider2Database(path));
    FLOWRAG_ASSIGN_OR_RETURN(SchemaGraph g, SchemaFromSpider2(d));
    graph = std::make_shared<SchemaGraph>(std::move(g));
  } else {
    FLOWRAG_ASSIGN_OR_RETURN(auto schemas, LoadSpiderTables(path));
    std::string known;
    for (const SpiderSchema& s : schemas) {
      if (s.db_id == db_id) graph = std::make_shared<SchemaGraph>(SchemaFromSpider(s));
      if (known.size() < 200) known += (known.empty() ? "" : ", ") + s.db_id;
    }
    if (graph == nullptr) {
      return Status::NotFound(path + ": no schema with db_id \"" + db_id + "\" (have: " + known + ", ...)");
    }
  }
  if (graph->tables.empty()) return Status::InvalidArgument(path + ": the schema has no tables");
  ValueIndex values = ValueIndex::FromSamples(*graph);
  if (!o.store.empty()) {  // kept beside the store's other schemas (no fingerprint: always rewritten)
    FLOWRAG_ASSIGN_OR_RETURN(impl->store_, Store::Open(o.store));
    std::string source = std::filesystem::absolute(path).lexically_normal().string();
    if (!db_id.empty()) source += "#" + db_id;
    FLOWRAG_RETURN_IF_ERROR(impl->store_->PutSqlSchema({source, "", graph->ToJson(), values.ToJson()}));
  }
  FLOWRAG_RETURN_IF_ERROR(Finish(o, std::move(graph), std::move(values), impl.get()));
  return std::unique_ptr<SqlDatabase>(std::move(impl));
}

}  // namespace flowrag
