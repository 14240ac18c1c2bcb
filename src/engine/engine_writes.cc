// EngineImpl's writes: each is an IndexRun (indexing/index_run.h), taken
// while the engine's own writes wait (write_mu_), then the publish of what
// it committed: a read session over a new snapshot.
#include "engine/engine_impl.h"
#include "graph/snapshot_segment.h"
#include "indexing/document_sources.h"

namespace flowrag {

Result<IndexReport> EngineImpl::Index(const std::vector<std::string>& sources,
                                      const IndexOptions& options) {
  std::string label;
  for (const auto& s : sources) label += (label.empty() ? "" : " ") + s;
  LoadOptions load;
  load.skip_bad_records = options.skip_bad_records;
  std::vector<std::string> messages;  // the loaders' skips, reported first
  Result<IndexReport> report = RunIndex(label, options, LoadedDocuments(sources, load, &messages));
  if (report.ok())
    report->messages.insert(report->messages.begin(), messages.begin(), messages.end());
  return report;
}

Result<IndexReport> EngineImpl::IndexDocuments(const std::vector<DocumentInput>& documents,
                                               const IndexOptions& options) {
  FLOWRAG_RETURN_IF_ERROR(ValidateDocumentInputs(documents));
  return RunIndex("api:" + std::to_string(documents.size()) + " documents", options,
                  GivenDocuments(documents), /*api=*/true);
}

Result<IndexReport> EngineImpl::RunIndex(const std::string& label, const IndexOptions& options,
                                         const DocumentProducer& produce, bool api) {
  if (options_.read_only) return Status::FailedPrecondition("the store is opened read-only");
  std::lock_guard<std::mutex> lock(write_mu_);
  FLOWRAG_RETURN_IF_ERROR(LoadCurrentSegment());
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<IndexRun> run, BeginRun());
  FLOWRAG_ASSIGN_OR_RETURN(const bool current, SessionIsCurrent());
  // New documents are searchable once stored and embedded, before the
  // extraction links them: the current snapshot extended by them, when it
  // is the store's state before this run. The snapshot published after the
  // run shares its text side (BM25, passage vectors: no rebuild of the
  // passage index, whose HNSW graph keeps the old rows).
  std::shared_ptr<const Snapshot> appended;
  const auto stored = [&](const IndexReport& r) {
    if (current && r.documents_added > 0 && r.documents_replaced == 0 && !r.embedder_refitted &&
        run->embedder() == embedder_) {
      appended = PublishAppended(/*known_appended=*/true);  // the run holds the writer lock
    }
  };
  Result<IndexReport> report = run->IndexDocuments(label, options, produce, stored);
  // New documents leave the schema contract and records as they were; a
  // replaced one may have been a record's.
  if (!api || appended == nullptr || !report.ok() || report->documents_replaced > 0) {
    ForgetSchemaInput();
  }
  // Whatever was committed becomes visible, even when the run failed.
  Status published = Publish(*run, api ? Persist::kLater : Persist::kNow, std::move(appended));
  FLOWRAG_RETURN_IF_ERROR(report.status());
  FLOWRAG_RETURN_IF_ERROR(published);
  return report;
}

Result<IngestReport> EngineImpl::Ingest(const std::string& dir, const SchemaContract& contract,
                                        const IngestOptions& options) {
  if (options_.read_only) return Status::FailedPrecondition("the store is opened read-only");
  std::lock_guard<std::mutex> lock(write_mu_);
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<IndexRun> run, BeginRun());
  Result<IngestReport> report = run->Ingest(dir, contract, options);
  ForgetSchemaInput();
  Status published = Publish(*run, Persist::kNow);
  FLOWRAG_RETURN_IF_ERROR(report.status());
  FLOWRAG_RETURN_IF_ERROR(published);
  return report;
}

Result<ImportReport> EngineImpl::ImportOpenIe(const std::string& path,
                                              const ImportOpenIeOptions& options) {
  if (options_.read_only) return Status::FailedPrecondition("the store is opened read-only");
  std::lock_guard<std::mutex> lock(write_mu_);
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<IndexRun> run, BeginRun());
  Result<ImportReport> imported = run->ImportOpenIe(path, options);
  ForgetSchemaInput();
  FLOWRAG_ASSIGN_OR_RETURN(ImportReport report, std::move(imported));
  FLOWRAG_RETURN_IF_ERROR(Publish(*run, Persist::kNow));
  return report;
}

Status EngineImpl::Compact() {
  if (persister_ == nullptr) {
    return Status::FailedPrecondition(store_->path() + ": a read-only engine writes nothing");
  }
  FLOWRAG_ASSIGN_OR_RETURN(std::shared_ptr<const ReadSession> current, session());
  persister_->Schedule(current->snapshot());
  persister_->Flush();
  const std::string error = persister_->LastError();
  if (!error.empty()) return Status::IoError(error);
  return Status::Ok();
}

Status EngineImpl::DeleteDocument(std::string_view document_id) {
  if (options_.read_only) return Status::FailedPrecondition("the store is opened read-only");
  std::lock_guard<std::mutex> lock(write_mu_);
  FLOWRAG_RETURN_IF_ERROR(LoadCurrentSegment());
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<IndexRun> run, BeginRun(IndexRun::VectorCheck::kSkip));
  FLOWRAG_ASSIGN_OR_RETURN(const bool was_current, SessionIsCurrent());
  // Visible at once: the published snapshot with the document hidden, from
  // before the store's delete (its transaction can take seconds at 10^6
  // passages, GraphWriter::Canonicalise reading the mentions of the hub
  // entities the document names) until a snapshot without the document
  // replaces it (session/tombstones.h). A delete that fails shows the
  // document again.
  std::shared_ptr<const ReadSession> before = PublishTombstone(document_id);
  Status deleted = run->DeleteDocument(document_id);
  ForgetSchemaInput();  // the document may have been a record's
  if (!deleted.ok()) {
    WithdrawTombstone(std::move(before));
    return deleted;
  }
  embedder_ = run->embedder();
  // The current snapshot without the document (when it was the store's
  // state before the delete), else a rebuild.
  std::shared_ptr<const Snapshot> current = published_snapshot();
  if (was_current && current != nullptr && current->embedder() == embedder_.get() &&
      !SegmentDamageUnhandled()) {
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
  return Publish(*run, Persist::kLater);
}

Status EngineImpl::LoadCurrentSegment() {
  if (published_snapshot() != nullptr) return Status::Ok();
  const std::string dir = store_->SegmentDirectory();
  if (dir.empty()) return Status::Ok();
  FLOWRAG_ASSIGN_OR_RETURN(const int64_t generation, store_->Generation());
  std::string why;
  if (FindSnapshotSegment(dir, generation, &why) == nullptr) return Status::Ok();
  return LoadState();
}

Result<std::unique_ptr<IndexRun>> EngineImpl::BeginRun(IndexRun::VectorCheck check) {
  return IndexRun::Begin(RunStores::Of(*store_), options_, embedder_, check);
}

Result<bool> EngineImpl::SessionIsCurrent() const {
  FLOWRAG_ASSIGN_OR_RETURN(const int64_t generation, store_->Generation());
  const std::shared_ptr<const Snapshot> current = published_snapshot();
  return !state_stale_ && current != nullptr && current->generation() == generation;
}

Status EngineImpl::Publish(const IndexRun& run, Persist persist,
                           std::shared_ptr<const Snapshot> same_text) {
  embedder_kind_ = run.embedder_kind();
  language_ = run.language();
  embedder_ = run.embedder();
  return RebuildSnapshot(persist, std::move(same_text));
}

}  // namespace flowrag
