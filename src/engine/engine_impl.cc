// EngineImpl: opening the store, the read sessions it publishes (the
// snapshot each is over, built, extended or refreshed) and the reads that
// run on the current one. Writes: engine_writes.cc; statistics:
// engine_stats.cc; the static Engine API: engine_api.cc.
#include "engine/engine_impl.h"

#include <chrono>

#include "models/embedder_setup.h"
#include "retrieval/persistent_indexes.h"

namespace flowrag {

Result<std::unique_ptr<EngineImpl>> EngineImpl::Create(const std::string& db_path,
                                                       const EngineOptions& options) {
  StoreOptions so;
  so.read_only = options.read_only;
  so.create_if_missing = !options.read_only;
  FLOWRAG_ASSIGN_OR_RETURN(auto store, Store::Open(db_path, so));
  std::unique_ptr<EngineImpl> engine(new EngineImpl(options, std::move(store)));
  FLOWRAG_ASSIGN_OR_RETURN(engine->services_, MakeSessionServices(options));
  EngineImpl* e = engine.get();
  engine->chat_ = std::make_unique<QueryChatModel>(engine->options_, engine->store_.get());
  engine->services_->chat = [e] { return e->chat_->Get(); };
  engine->services_->schema = [e] { return e->ReadSchemaInput(); };
  if (!options.read_only) {
    // Inserts served over HTTP come in bursts: their parts are written
    // once the burst is over, or 10 s into a burst that goes on.
    engine->persister_ =
        std::make_unique<PartsPersister>(engine->store_.get(), std::chrono::milliseconds(500),
                                         [e](std::shared_ptr<const Snapshot> written) {
                                           e->MapPublishedSegment(std::move(written));
                                         });
  }
  // The models now; the snapshot when the first read needs it, so a write
  // run (flowrag index) builds none before it writes.
  // (ResolveModels also reads the generation: a damaged counter is refused
  // here, like every meta value the open reads.)
  FLOWRAG_RETURN_IF_ERROR(engine->ResolveModels());
  if (options.follow_store) {
    engine->follower_ = std::make_unique<StoreFollower>(
        [e] { return e->store_->OpenListener(); }, [e] { return e->Refresh().status(); },
        std::chrono::milliseconds(options.follow_poll_ms));
  }
  return engine;
}

Result<bool> EngineImpl::Refresh() {
  std::lock_guard<std::mutex> lock(write_mu_);
  FLOWRAG_ASSIGN_OR_RETURN(int64_t generation, store_->Generation());
  const std::shared_ptr<const Snapshot> current = published_snapshot();
  if (!state_stale_ && current != nullptr && current->generation() == generation) return false;
  ForgetSchemaInput();  // another process wrote: an ingest, perhaps
  if (state_stale_ || !RefreshByAppending().ok()) FLOWRAG_RETURN_IF_ERROR(LoadState());
  return true;
}

Status EngineImpl::RefreshByAppending() {
  const std::shared_ptr<const Snapshot> current = published_snapshot();
  FLOWRAG_ASSIGN_OR_RETURN(auto dense_model, store_->DenseModel());
  if (current == nullptr || current->embedder() != embedder_.get() ||
      dense_model.value_or("") != current->dense_model()) {
    return Status::FailedPrecondition("refresh: the embedder changed");
  }
  std::shared_ptr<const Snapshot> appended = PublishAppended(/*known_appended=*/false);
  if (appended == nullptr) return Status::FailedPrecondition("refresh: not only appended");
  // Append kept the current graph; the store's may have changed as well,
  // and so may its text since Append read it (another process writes).
  return RebuildSnapshot(Persist::kLater, std::move(appended), /*text_unlocked=*/true);
}

Status EngineImpl::ResolveModels() {
  FLOWRAG_ASSIGN_OR_RETURN(models_generation_, store_->Generation());
  FLOWRAG_ASSIGN_OR_RETURN(language_, ResolveLanguage(*store_, options_));
  FLOWRAG_ASSIGN_OR_RETURN(embedder_kind_, ResolveEmbedderKind(*store_, options_));
  FLOWRAG_ASSIGN_OR_RETURN(embedder_, LoadEmbedder(*store_, embedder_kind_, options_));
  return Status::Ok();
}

Status EngineImpl::LoadState() {
  constexpr int kAttempts = 5;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    FLOWRAG_ASSIGN_OR_RETURN(int64_t before, store_->Generation());
    // The first read after Create finds the models it resolved still current.
    if (before != models_generation_) FLOWRAG_RETURN_IF_ERROR(ResolveModels());
    FLOWRAG_RETURN_IF_ERROR(RebuildSnapshot());
    state_stale_ = published_snapshot()->generation() != before;
    if (!state_stale_) return Status::Ok();
  }
  return Status::Ok();  // another process keeps writing: the next Refresh loads again
}

Result<std::shared_ptr<const ReadSession>> EngineImpl::session() const {
  if (std::shared_ptr<const ReadSession> current = published(); current != nullptr) return current;
  std::lock_guard<std::mutex> lock(write_mu_);
  if (std::shared_ptr<const ReadSession> current = published(); current != nullptr) return current;
  // The first read loads what the engine has not yet read. The engine is
  // never made const (Create hands out a mutable one); its reads are const
  // because what they see does not depend on when the snapshot was built.
  FLOWRAG_RETURN_IF_ERROR(const_cast<EngineImpl*>(this)->LoadState());
  return published();
}

std::shared_ptr<const Snapshot> EngineImpl::snapshot() const {
  Result<std::shared_ptr<const ReadSession>> current = session();
  return current.ok() ? (*current)->snapshot() : nullptr;
}

std::shared_ptr<const ReadSession> EngineImpl::published() const {
  std::lock_guard<std::mutex> lock(session_mu_);
  return session_;
}

std::shared_ptr<const Snapshot> EngineImpl::published_snapshot() const {
  std::shared_ptr<const ReadSession> current = published();
  return current != nullptr ? current->snapshot() : nullptr;
}

Result<SnapshotOptions> EngineImpl::SnapshotBuildOptions() const {
  SnapshotOptions so;
  so.vector.hnsw_threshold = options_.hnsw_threshold;
  so.vector.sparse_queries = options_.passage_ann == "auto" ? embedder_->SparseQueries()
                                                             : options_.passage_ann == "int8";
  so.language = language_;
  FLOWRAG_ASSIGN_OR_RETURN(auto dense_model, store_->DenseModel());
  // Only vectors of the embedder we can embed queries with are usable.
  if (dense_model && *dense_model == embedder_->ModelId()) so.dense_model = *dense_model;
  so.persistable = persister_ != nullptr;
  // Kept in the store's snapshot segment, adopted by the next open.
  so.derived = PersistentQueryIndexes();
  return so;
}

Status EngineImpl::RebuildSnapshot(Persist persist, std::shared_ptr<const Snapshot> same_text,
                                   bool text_unlocked) {
  const uint64_t damage = SegmentDamageCount();
  const bool damaged = damage != damage_handled_.load();
  FLOWRAG_ASSIGN_OR_RETURN(SnapshotOptions so, SnapshotBuildOptions());
  // Its graph vectors are reused by text; nothing of a damaged one is.
  if (damaged) {
    same_text.reset();
  } else {
    so.previous = published_snapshot();
  }
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
    if (text_unlocked) so.same_text_generation = same_text->generation();
    so.same_text = std::move(same_text);
  }
  std::shared_ptr<const Snapshot> snap;
  FLOWRAG_RETURN_IF_ERROR(ReadStoreConsistently([&](Store& store) -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(snap, Snapshot::Build(store, embedder_, so));
    return Status::Ok();
  }));
  so.previous.reset();
  so.same_text.reset();
  if (damaged) {
    std::lock_guard<std::mutex> lock(session_mu_);
    session_ = std::make_shared<const ReadSession>(snap, services_.get());
    damage_handled_ = damage;
  } else {
    SwapSnapshot(snap);
  }
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

std::shared_ptr<const ReadSession> EngineImpl::PublishTombstone(std::string_view document_id) {
  std::shared_ptr<const ReadSession> current = published();
  if (current == nullptr) return nullptr;
  std::shared_ptr<const ReadSession> hidden = current->WithTombstone(document_id);
  if (hidden == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(session_mu_);
  session_ = std::move(hidden);
  return current;
}

void EngineImpl::WithdrawTombstone(std::shared_ptr<const ReadSession> before) {
  if (before == nullptr) return;
  std::lock_guard<std::mutex> lock(session_mu_);
  session_ = std::move(before);
}

void EngineImpl::SwapSnapshot(std::shared_ptr<const Snapshot> snap) {
  // A snapshot that replaces a published one gets the persistent derived
  // values its queries used before they see it: they keep the earlier
  // session meanwhile instead of waiting seconds for them.
  if (std::shared_ptr<const Snapshot> current = published_snapshot(); current != nullptr) {
    snap->MakePersistentDerivedLike(*current);
  }
  auto next = std::make_shared<const ReadSession>(std::move(snap), services_.get());
  std::lock_guard<std::mutex> lock(session_mu_);
  session_ = std::move(next);
}

Result<std::optional<SessionServices::SchemaInput>> EngineImpl::ReadSchemaInput() const {
  // The epoch before the read: a write that commits during it forgets the
  // copy it makes.
  const uint64_t epoch = schema_epoch_.load();
  {
    std::lock_guard<std::mutex> lock(schema_mu_);
    if (schema_input_.has_value() && schema_input_epoch_ == epoch) return *schema_input_;
  }
  std::optional<SessionServices::SchemaInput> read;
  FLOWRAG_ASSIGN_OR_RETURN(auto yaml, store_->SchemaContractYaml());
  if (yaml) {
    SessionServices::SchemaInput input;
    FLOWRAG_ASSIGN_OR_RETURN(input.contract, ParseContract(*yaml, "schema_contract"));
    FLOWRAG_RETURN_IF_ERROR(store_->ForEachSourceRecord([&](Store::SourceRecordRow&& r) -> Status {
      input.records.push_back({std::move(r.external_id), std::move(r.record.entity_type),
                               std::move(r.record.fields), std::move(r.record.file), r.record.line,
                               r.record.structured});
      return Status::Ok();
    }));
    read = std::move(input);
  }
  std::lock_guard<std::mutex> lock(schema_mu_);
  if (schema_epoch_.load() == epoch) {
    schema_input_ = read;
    schema_input_epoch_ = epoch;
  }
  return read;
}

std::shared_ptr<const Snapshot> EngineImpl::PublishAppended(bool known_appended) {
  std::shared_ptr<const Snapshot> current = published_snapshot();
  if (current == nullptr || current->embedder() != embedder_.get()) return nullptr;
  if (SegmentDamageUnhandled()) return nullptr;  // the rebuild reads the store
  std::shared_ptr<const Snapshot> appended;
  Status st = ReadStoreConsistently([&](Store& store) -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(appended, Snapshot::Append(store, *current, nullptr, known_appended));
    return Status::Ok();
  });
  if (!st.ok()) return nullptr;  // the rebuild after extraction covers them
  SwapSnapshot(appended);
  return appended;
}

template <class Read>
auto EngineImpl::ReadChecked(const Read& read) const
    -> decltype(read(std::declval<const ReadSession&>())) {
  // Damage another read found (Stats reads every RELATED_TO row, say) is
  // handled before this read, not left to the next read that finds some.
  if (SegmentDamageUnhandled()) FLOWRAG_RETURN_IF_ERROR(RebuildAfterDamage());
  const uint64_t damage = SegmentDamageCount();
  FLOWRAG_ASSIGN_OR_RETURN(auto current, session());
  auto result = read(*current);
  if (SegmentDamageCount() == damage) return result;
  FLOWRAG_RETURN_IF_ERROR(RebuildAfterDamage());
  FLOWRAG_ASSIGN_OR_RETURN(current, session());
  return read(*current);
}

Status EngineImpl::RebuildAfterDamage() const {
  auto* self = const_cast<EngineImpl*>(this);  // as session(): see there
  std::lock_guard<std::mutex> lock(write_mu_);
  if (!SegmentDamageUnhandled()) return Status::Ok();
  return self->RebuildSnapshot(Persist::kLater);
}

Result<RetrievalResult> EngineImpl::Query(std::string_view question,
                                          const QueryOptions& options) const {
  return ReadChecked([&](const ReadSession& s) { return s.Query(question, options); });
}

Result<Answer> EngineImpl::Ask(std::string_view question, const AnswerOptions& options) const {
  return ReadChecked([&](const ReadSession& s) { return s.Ask(question, options); });
}

Result<DocumentPage> EngineImpl::ListDocuments(std::string_view cursor, size_t limit) const {
  FLOWRAG_ASSIGN_OR_RETURN(auto current, session());
  return current->ListDocuments(cursor, limit);
}

Result<StoredDocument> EngineImpl::GetDocument(std::string_view id) const {
  FLOWRAG_ASSIGN_OR_RETURN(auto current, session());
  return current->GetDocument(id);
}

Result<std::shared_ptr<const GraphView>> EngineImpl::Graph() const {
  FLOWRAG_ASSIGN_OR_RETURN(auto current, session());
  return current->Graph();
}

Result<FloatMatrix> EngineImpl::Embed(const std::vector<std::string>& texts) const {
  FLOWRAG_ASSIGN_OR_RETURN(auto current, session());
  return current->Embed(texts);
}

}  // namespace flowrag
