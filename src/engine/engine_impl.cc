#include "engine/engine_impl.h"

#include <chrono>
#include <unordered_map>

#include "common/encoding.h"
#include "engine/chat_setup.h"
#include "engine/embedder_setup.h"
#include "retrieval/params.h"
#include "sqldb/connection.h"
#include "sqldb/postgres_url.h"
#include "storage/llm_cache.h"

namespace flowrag {

Result<std::unique_ptr<Engine>> Engine::Open(const std::string& db_path,
                                             const EngineOptions& options) {
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

std::string_view ResolveMethod(const Snapshot& snapshot, std::string_view method,
                               const std::string& default_method) {
  if (method != kAutoMethod) return method;
  if (!default_method.empty()) return default_method;
  const KnowledgeGraph* g = snapshot.graph();
  const bool graph = g != nullptr && g->num_entities() > 0;
  return graph ? "qafd" : "hybrid";
}

Result<std::unique_ptr<EngineImpl>> EngineImpl::Create(const std::string& db_path,
                                                       const EngineOptions& options) {
  StoreOptions so;
  so.read_only = options.read_only;
  so.create_if_missing = !options.read_only;
  FLOWRAG_ASSIGN_OR_RETURN(auto store, Store::Open(db_path, so));
  std::unique_ptr<EngineImpl> engine(new EngineImpl(options, std::move(store)));
  for (const std::string& name : RetrieverNames()) {
    FLOWRAG_ASSIGN_OR_RETURN(auto r, MakeRetriever(name));
    engine->retrievers_.emplace(name, std::move(r));
    // The defaults this method reads (EngineOptions::default_params).
    if (options.default_params.empty()) continue;
    FLOWRAG_ASSIGN_OR_RETURN(std::vector<MethodOption> reads, Engine::MethodOptions(name));
    for (const MethodOption& o : reads) {
      auto d = options.default_params.find(o.name);
      if (d != options.default_params.end()) engine->method_defaults_[name][o.name] = d->second;
    }
  }
  if (!options.read_only) {
    // Inserts served over HTTP come in bursts: their parts are written
    // once the burst is over.
    engine->persister_ =
        std::make_unique<PartsPersister>(engine->store_.get(), std::chrono::milliseconds(500));
  }
  FLOWRAG_RETURN_IF_ERROR(engine->LoadState());
  if (options.follow_store) {
    EngineImpl* e = engine.get();
    engine->follower_ = std::make_unique<StoreFollower>(
        [e] { return e->store_->OpenListener(); }, [e] { return e->Refresh().status(); },
        std::chrono::milliseconds(options.follow_poll_ms));
  }
  return engine;
}

Result<bool> EngineImpl::Refresh() {
  std::lock_guard<std::mutex> lock(write_mu_);
  FLOWRAG_ASSIGN_OR_RETURN(int64_t generation, store_->Generation());
  const std::shared_ptr<const Snapshot> current = snapshot();
  if (!state_stale_ && current != nullptr && current->generation() == generation) return false;
  if (state_stale_ || !RefreshByAppending().ok()) FLOWRAG_RETURN_IF_ERROR(LoadState());
  return true;
}

Status EngineImpl::RefreshByAppending() {
  const std::shared_ptr<const Snapshot> current = snapshot();
  FLOWRAG_ASSIGN_OR_RETURN(auto dense_model, store_->GetMeta("dense_model"));
  if (current == nullptr || current->embedder() != embedder_.get() ||
      dense_model.value_or("") != current->dense_model()) {
    return Status::FailedPrecondition("refresh: the embedder changed");
  }
  std::shared_ptr<const Snapshot> appended = PublishAppended();
  if (appended == nullptr) return Status::FailedPrecondition("refresh: not only appended");
  // Append kept the current graph; the store's may have changed as well.
  return RebuildSnapshot(Persist::kLater, std::move(appended));
}

Status EngineImpl::LoadState() {
  constexpr int kAttempts = 5;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    FLOWRAG_ASSIGN_OR_RETURN(int64_t before, store_->Generation());
    FLOWRAG_ASSIGN_OR_RETURN(language_, ResolveLanguage(*store_, options_));
    FLOWRAG_ASSIGN_OR_RETURN(embedder_kind_, ResolveEmbedderKind(*store_, options_));
    FLOWRAG_ASSIGN_OR_RETURN(embedder_, LoadEmbedder(*store_, embedder_kind_, options_));
    FLOWRAG_RETURN_IF_ERROR(RebuildSnapshot());
    state_stale_ = snapshot()->generation() != before;
    if (!state_stale_) return Status::Ok();
  }
  return Status::Ok();  // another process keeps writing: CatchUpWithStore reloads under the lock
}

std::shared_ptr<const Snapshot> EngineImpl::snapshot() const {
  std::lock_guard<std::mutex> lock(snapshot_mu_);
  return snapshot_;
}

Status EngineImpl::RebuildSnapshot(Persist persist, std::shared_ptr<const Snapshot> same_text) {
  SnapshotOptions so;
  so.vector.hnsw_threshold = options_.hnsw_threshold;
  so.language = language_;
  FLOWRAG_ASSIGN_OR_RETURN(auto dense_model, store_->GetMeta("dense_model"));
  // Only vectors of the embedder we can embed queries with are usable.
  if (dense_model && *dense_model == embedder_->ModelId()) so.dense_model = *dense_model;
  so.persistable = persister_ != nullptr;
  so.previous = snapshot();  // its graph vectors are reused by text
  // Nothing written since (a run that found everything stored): keep it.
  // With `same_text` the graph is read again whatever the generation.
  FLOWRAG_ASSIGN_OR_RETURN(int64_t generation, store_->Generation());
  if (same_text == nullptr && so.previous != nullptr && so.previous->generation() == generation &&
      so.previous->embedder() == embedder_.get() && so.previous->dense_model() == so.dense_model) {
    // It may still have parts to write (an appended snapshot).
    if (persister_ != nullptr) {
      persister_->Schedule(so.previous);
      if (persist == Persist::kNow) persister_->Flush();
    }
    return Status::Ok();
  }
  if (same_text != nullptr && same_text->embedder() == embedder_.get()) {
    so.same_text = std::move(same_text);
  }
  std::shared_ptr<const Snapshot> snap;
  FLOWRAG_RETURN_IF_ERROR(ReadStoreConsistently([&](Store& store) -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(snap, Snapshot::Build(store, embedder_, so));
    return Status::Ok();
  }));
  so.previous.reset();
  so.same_text.reset();
  SwapSnapshot(snap);
  // Visible first, persisted after: the parts are a cache of the store.
  if (persister_ != nullptr) {
    persister_->Schedule(std::move(snap));
    if (persist == Persist::kNow) persister_->Flush();
  }
  return Status::Ok();
}

Status EngineImpl::ReadStoreConsistently(const std::function<Status(Store&)>& read) {
  std::lock_guard<std::mutex> lock(reader_mu_);
  if (!reader_opened_) {
    FLOWRAG_ASSIGN_OR_RETURN(reader_, store_->OpenReader());
    reader_opened_ = true;
  }
  if (reader_ == nullptr) return read(*store_);
  return reader_->ReadConsistently([&] { return read(*reader_); });
}

void EngineImpl::SwapSnapshot(std::shared_ptr<const Snapshot> snap) {
  std::lock_guard<std::mutex> lock(snapshot_mu_);
  snapshot_ = std::move(snap);
}

std::shared_ptr<const Snapshot> EngineImpl::PublishAppended() {
  std::shared_ptr<const Snapshot> current = snapshot();
  if (current == nullptr || current->embedder() != embedder_.get()) return nullptr;
  std::shared_ptr<const Snapshot> appended;
  Status st = ReadStoreConsistently([&](Store& store) -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(appended, Snapshot::Append(store, *current));
    return Status::Ok();
  });
  if (!st.ok()) return nullptr;  // the rebuild after extraction covers them
  SwapSnapshot(appended);
  return appended;
}

Result<EngineImpl::WriteGuard> EngineImpl::LockWriter() {
  WriteGuard guard{std::unique_lock<std::mutex>(write_mu_), {}};
  FLOWRAG_ASSIGN_OR_RETURN(guard.across_processes,
                           store_->AcquireWriterLock(
                               std::chrono::milliseconds(options_.writer_wait_ms)));
  FLOWRAG_RETURN_IF_ERROR(CatchUpWithStore());
  return guard;
}

Status EngineImpl::CheckBeforeWrite() {
  return store_->CheckVectorSizes(embedder_->ModelId(), embedder_->Dimension());
}

Status EngineImpl::CatchUpWithEmbedder() {
  FLOWRAG_ASSIGN_OR_RETURN(auto dense_model, store_->GetMeta("dense_model"));
  if (!dense_model || *dense_model == embedder_->ModelId()) return Status::Ok();
  FLOWRAG_ASSIGN_OR_RETURN(embedder_kind_, ResolveEmbedderKind(*store_, options_));
  FLOWRAG_ASSIGN_OR_RETURN(embedder_, LoadEmbedder(*store_, embedder_kind_, options_));
  return Status::Ok();
}

Status EngineImpl::CatchUpWithStore() {
  FLOWRAG_ASSIGN_OR_RETURN(int64_t generation, store_->Generation());
  const std::shared_ptr<const Snapshot> current = snapshot();
  if (!state_stale_ && current != nullptr && current->generation() == generation) {
    return Status::Ok();
  }
  return LoadState();  // under the writer lock the generation holds still
}

Status EngineImpl::DeleteDocument(std::string_view document_id) {
  if (options_.read_only) return Status::FailedPrecondition("the store is opened read-only");
  FLOWRAG_ASSIGN_OR_RETURN(WriteGuard lock, LockWriter());
  FLOWRAG_RETURN_IF_ERROR(store_->DeleteDocument(document_id));
  // The current snapshot without the document, else a rebuild.
  std::shared_ptr<const Snapshot> current = snapshot();
  if (current != nullptr && current->embedder() == embedder_.get()) {
    std::shared_ptr<const Snapshot> removed;
    Status st = ReadStoreConsistently([&](Store& store) -> Status {
      FLOWRAG_ASSIGN_OR_RETURN(removed, Snapshot::Remove(store, *current, document_id));
      return Status::Ok();
    });
    if (st.ok()) {
      SwapSnapshot(removed);
      if (persister_ != nullptr) persister_->Schedule(removed);
      return Status::Ok();
    }
  }
  return RebuildSnapshot(Persist::kLater);
}

Result<ChatModel*> EngineImpl::QueryChat() const {
  if (!HasChatModel(options_)) return static_cast<ChatModel*>(nullptr);
  std::call_once(chat_once_, [this] {
    chat_cache_ = std::make_unique<StoreResponseCache>(store_.get());
    auto model = MakeChatModel(options_, chat_cache_.get());
    if (!model.ok()) {
      chat_status_ = model.status();
      return;
    }
    chat_ = std::move(model).value();
  });
  if (!chat_status_.ok()) return chat_status_.WithContext("query chat model");
  return chat_.get();
}

Result<RetrievalResult> EngineImpl::Query(std::string_view question,
                                          const QueryOptions& options) const {
  FLOWRAG_ASSIGN_OR_RETURN(ChatModel * chat, QueryChat());
  return QueryOn(*snapshot(), question, options, chat);
}

Result<RetrievalResult> EngineImpl::QueryOn(const Snapshot& snapshot, std::string_view question,
                                            const QueryOptions& options, ChatModel* chat) const {
  const std::string method(ResolveMethod(snapshot, options.method, options_.default_method));
  auto it = retrievers_.find(method);
  if (it == retrievers_.end()) {
    std::string known;
    for (const std::string& m : Methods()) known += (known.empty() ? "" : ", ") + m;
    return Status::InvalidArgument("unknown method \"" + EscapeForMessage(method, 60) +
                                   "\" (known: " + known + ")");
  }
  if (options.top_k == 0) return Status::InvalidArgument("top_k: expected a positive number");
  const Snapshot* snap = &snapshot;
  RetrievalRequest request;
  request.query = std::string(question);
  request.top_k = options.top_k;
  std::map<std::string, std::string> params;
  const auto defaults = method_defaults_.find(method);
  if (defaults != method_defaults_.end()) {
    params = defaults->second;
    for (const auto& [k, v] : options.params) params[k] = v;  // the query's own win
  }
  request.params = defaults == method_defaults_.end() ? &options.params : &params;
  request.chat = chat;
  request.explain = options.explain;
  FLOWRAG_ASSIGN_OR_RETURN(RetrievalOutput out, it->second->Retrieve(*snap, request));
  RetrievalResult result;
  result.method = method;
  result.diagnostics = std::move(out.diagnostics);
  if (snap->graph() != nullptr) DescribeSubgraph(*snap, out, &result);
  result.passages.reserve(out.ranked.size());
  for (const RankedPassage& r : out.ranked) result.passages.push_back(snap->Scored(r.passage, r.score));
  return result;
}

namespace {

std::string NodeLabel(const Snapshot& snap, uint32_t node) {
  const KnowledgeGraph& g = *snap.graph();
  const uint32_t i = g.LocalIndex(node);
  switch (g.Kind(node)) {
    case NodeKind::kPassage:
      return snap.document_of(i).external_id + "#" + std::to_string(snap.passage(i).ordinal);
    case NodeKind::kEntity:
      return g.EntityName(i);
    case NodeKind::kDescription:
      return "description of " + g.EntityName(g.DescriptionEntity(i));
    case NodeKind::kFact:
      return g.EntityName(g.FactSubject(i)) + " / " + g.FactRelation(i).substr(0, 80) + " / " +
             g.EntityName(g.FactObject(i));
  }
  return "";
}

}  // namespace

void EngineImpl::DescribeSubgraph(const Snapshot& snap, const RetrievalOutput& out,
                                  RetrievalResult* result) const {
  constexpr size_t kMaxNodes = 150;  // what a viewer can draw
  const KnowledgeGraph& g = *snap.graph();
  std::unordered_map<uint32_t, size_t> index;  // node → position in result->nodes
  auto add = [&](uint32_t node, double score, bool seed) {
    if (node >= g.num_nodes()) return;
    auto [it, inserted] = index.emplace(node, result->nodes.size());
    if (inserted) {
      result->nodes.push_back(
          {node, std::string(NodeKindName(g.Kind(node))), NodeLabel(snap, node), score, seed});
    } else {
      GraphNode& n = result->nodes[it->second];
      n.seed |= seed;
      n.score = std::max(n.score, score);
    }
  };
  for (const NodeScore& s : out.seeds) add(s.node, s.score, true);
  for (const ExplanationPath& p : out.paths) {
    for (uint32_t n : p.nodes) add(n, 0.0, false);
  }
  for (const RankedPassage& r : out.ranked) add(r.passage, r.score, false);
  for (const NodeScore& s : out.node_scores) {
    if (result->nodes.size() >= kMaxNodes) break;
    add(s.node, s.score, false);
  }
  for (const NodeScore& s : out.node_scores) {  // scores of nodes added through paths
    auto it = index.find(s.node);
    if (it != index.end())
      result->nodes[it->second].score = std::max(result->nodes[it->second].score, s.score);
  }
  for (const TouchedEdge& e : out.subgraph) {
    if (!index.count(e.from) || !index.count(e.to)) continue;
    std::string relation;
    if (e.kind == EdgeKind::kRelatedTo) {
      // The fact behind the edge: the first RELATED_TO entry between the two.
      const Csr& rel = g.Edges(EdgeKind::kRelatedTo);
      for (uint64_t i = rel.Begin(e.from); i < rel.End(e.from); ++i) {
        if (rel.targets[i] == e.to) {
          relation = g.FactRelation(rel.attrs[i]);
          break;
        }
      }
    }
    result->edges.push_back(
        {e.from, e.to, std::string(EdgeKindName(e.kind)), relation, e.weight, e.flow});
  }
  for (const ExplanationPath& p : out.paths) {
    std::vector<std::string> labels;
    for (uint32_t n : p.nodes) labels.push_back(NodeLabel(snap, n));
    result->paths.push_back(std::move(labels));
  }
  result->keywords = out.keywords;
  result->context = out.context;
}

Result<FloatMatrix> EngineImpl::Embed(const std::vector<std::string>& texts) const {
  return snapshot()->embedder()->Embed(texts);
}

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
  FLOWRAG_ASSIGN_OR_RETURN(auto dense, store_->GetMeta("dense_model"));
  s.dense_model = dense.value_or("");
  if (!s.dense_model.empty()) {
    FLOWRAG_ASSIGN_OR_RETURN(s.passages_missing_embeddings,
                             store_->CountPassagesMissingEmbeddings(s.dense_model));
  } else {
    s.passages_missing_embeddings = c.passages;
  }
  FLOWRAG_RETURN_IF_ERROR(FillGraphStats(&s.graph));
  FLOWRAG_RETURN_IF_ERROR(FillSchemaStats(&s));
  return s;
}

}  // namespace flowrag
