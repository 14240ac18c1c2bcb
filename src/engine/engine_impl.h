// EngineImpl: the Engine of include/flowrag/engine.h over one Store.
//
// Writes: an index run takes the writer lock, runs the write phases of
// indexing/ (ingest, embed, extraction, graph extras; Ingest adds the schema
// records) against one IndexContext, journals the run and publishes a read
// session over a snapshot of what they committed. Each phase commits in
// batches and resumes from what the store holds, so a crash anywhere
// leaves a store the next run completes. Reads: every read runs on the
// current ReadSession (session/read_session.h), which owns its immutable
// snapshot and everything derived from it; a call holds its session, so a
// publish never waits for reads.
#ifndef FLOWRAG_ENGINE_ENGINE_IMPL_H_
#define FLOWRAG_ENGINE_ENGINE_IMPL_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "embed/embedder.h"
#include "engine/parts_persister.h"
#include "engine/store_follower.h"
#include "flowrag/engine.h"
#include "graph/snapshot.h"
#include "indexing/index_context.h"
#include "indexing/index_run.h"
#include "indexing/ingest_phase.h"
#include "ingest/document.h"
#include "models/query_chat.h"
#include "segment/segment_reader.h"
#include "retrieval/retriever.h"
#include "session/read_session.h"
#include "storage/store.h"

namespace flowrag {

struct ConstructionPlan;

class EngineImpl final : public Engine {
 public:
  static Result<std::unique_ptr<EngineImpl>> Create(const std::string& db_path,
                                                    const EngineOptions& options);
  // Finishes the pending segment write, lets go of the snapshot and
  // deletes the segments it was the last to map (CollectSnapshotSegments).
  ~EngineImpl() override;

  Result<IndexReport> Index(const std::vector<std::string>& sources,
                            const IndexOptions& options) override;
  Result<IndexReport> IndexDocuments(const std::vector<DocumentInput>& documents,
                                     const IndexOptions& options) override;
  Result<IngestReport> Ingest(const std::string& dir, const SchemaContract& contract,
                              const IngestOptions& options) override;
  Result<ImportReport> ImportOpenIe(const std::string& path,
                                    const ImportOpenIeOptions& options) override;
  Status DeleteDocument(std::string_view document_id) override;
  Result<RetrievalResult> Query(std::string_view question,
                                const QueryOptions& options) const override;
  Result<Answer> Ask(std::string_view question, const AnswerOptions& options) const override;
  Result<StoreStats> Stats() const override;
  Result<DocumentPage> ListDocuments(std::string_view cursor, size_t limit) const override;
  Result<StoredDocument> GetDocument(std::string_view id) const override;
  Result<std::shared_ptr<const GraphView>> Graph() const override;
  Result<FloatMatrix> Embed(const std::vector<std::string>& texts) const override;
  Result<bool> Refresh() override;
  Status Compact() override;  // engine_writes.cc

  // The current read session, loaded from the store on the first call
  // (the error of that load, then again on the next call; it takes
  // write_mu_, so it waits for a write in progress); its snapshot, null when
  // the load failed.
  Result<std::shared_ptr<const ReadSession>> session() const;
  std::shared_ptr<const Snapshot> snapshot() const;

 private:
  EngineImpl(EngineOptions options, std::unique_ptr<Store> store)
      : options_(std::move(options)), store_(std::move(store)) {}

  // How the parts of a new snapshot are written: before returning (batch
  // runs, opening) or by the background persister (API inserts and deletes).
  enum class Persist { kNow, kLater };
  // New documents become visible as soon as they are stored and embedded
  // (Snapshot::Append), and are linked into the graph when their
  // extraction is done. `api`: documents given directly (IndexDocuments),
  // whose snapshot is written by the background persister.
  Result<IndexReport> RunIndex(const std::string& label, const IndexOptions& options,
                               const DocumentProducer& produce, bool api = false);
  // A write into a store whose snapshot this engine has not read yet (a
  // CLI run) starts from the store's snapshot segment when that is current:
  // mapping it costs its header and table, and the write then extends the
  // snapshot (Append, Remove) instead of building every index again from
  // the rows (at 10^5 passages, an HNSW build of minutes). Nothing when a
  // snapshot is published or no segment is current. REQUIRES: write_mu_.
  Status LoadCurrentSegment();
  // A write run: the writer lock, the embedder (indexing/index_run.h).
  // REQUIRES: write_mu_ held.
  Result<std::unique_ptr<IndexRun>> BeginRun(
      IndexRun::VectorCheck check = IndexRun::VectorCheck::kScan);
  // Takes the run's embedder and publishes a session over a snapshot of
  // what it committed (even after a failure); `same_text`: see
  // RebuildSnapshot. REQUIRES: write_mu_ held.
  Status Publish(const IndexRun& run, Persist persist,
                 std::shared_ptr<const Snapshot> same_text = nullptr);
  // Whether the current session's snapshot is the store's state now (no
  // other process wrote since): the incremental publishes (Append, Remove)
  // extend it only then.
  Result<bool> SessionIsCurrent() const;
  Status FillSchemaStats(StoreStats* stats) const;  // engine_stats.cc
  // The store's segment directory, and whether `snapshot` was mapped from it.
  Status FillSegmentStats(const Snapshot& snapshot, SegmentStats* stats) const;
  // Builds and swaps in a snapshot of the store (unless nothing changed
  // since the current one): graph texts the current snapshot embedded are
  // reused; `same_text` (when only the graph changed since it was built)
  // lends its documents, BM25 and passage vectors, and the graph is read
  // again. `text_unlocked`: the caller holds no writer lock, so `same_text`
  // is lent only while the store is still at its generation
  // (SnapshotOptions::same_text_generation).
  Status RebuildSnapshot(Persist persist = Persist::kNow,
                         std::shared_ptr<const Snapshot> same_text = nullptr,
                         bool text_unlocked = false);
  // Swaps in the current snapshot extended by the documents just appended
  // (Snapshot::Append); returns it, or null when it could not (then the
  // next RebuildSnapshot covers them). `known_appended`: an index run that
  // holds the writer lock since the published snapshot's generation
  // (Snapshot::Append skips counting the rows).
  std::shared_ptr<const Snapshot> PublishAppended(bool known_appended);
  // Refresh() when the store only gained documents since the current
  // snapshot, with the same embedder: their text is swapped in at once
  // (PublishAppended), then the graph is read again beside it, so a
  // replica neither waits for nor rereads the whole text.
  // FailedPrecondition when it cannot (then LoadState).
  Status RefreshByAppending();
  // The session published last and its snapshot, without loading (null
  // before the first read or write).
  std::shared_ptr<const ReadSession> published() const;
  std::shared_ptr<const Snapshot> published_snapshot() const;
  // Publishes a read session over `snap`; when it replaces one, after
  // making the persistent derived values the replaced snapshot held
  // (Snapshot::MakePersistentDerivedLike: the writer pays for them, not the
  // next query).
  void SwapSnapshot(std::shared_ptr<const Snapshot> snap);
  // Damaged segments: the indexes a snapshot adopts from a segment verify
  // their largest arrays as queries read them, so a torn or altered block
  // can first be found by a query (segment_reader.h SegmentDamageCount;
  // the block reads as zeros or an empty list, never as its bytes). The
  // engine then builds its snapshot again from the store, which refuses
  // the damaged file (FindSnapshotSegment), derives nothing from the
  // damaged snapshot, and runs the read once more on the new one; a
  // writable engine's persister writes a new segment. Damage found in
  // another engine of this process rebuilds this one too (rare; a file's
  // damage is process-wide).
  // True when a segment was found damaged since this engine last rebuilt.
  bool SegmentDamageUnhandled() const { return SegmentDamageCount() != damage_handled_.load(); }
  // `read` on the current session; again on a rebuilt one when a segment
  // was found damaged meanwhile; on a rebuilt one from the start when
  // damage found before (by a read that is not checked, such as Stats) is
  // not handled yet.
  template <class Read>
  auto ReadChecked(const Read& read) const
      -> decltype(read(std::declval<const ReadSession&>()));
  // The rebuild (above), unless another thread did it. Takes write_mu_.
  Status RebuildAfterDamage() const;
  // Publishes the current session with document `document_id` (being
  // deleted from the store) hidden and returns the session it replaced;
  // null, publishing nothing, when no session holds the document. REQUIRES
  // write_mu_ held (no other publish between the read and the swap).
  std::shared_ptr<const ReadSession> PublishTombstone(std::string_view document_id);
  // Publishes `before` again in place of the session PublishTombstone made
  // (a delete that failed). REQUIRES write_mu_ held.
  void WithdrawTombstone(std::shared_ptr<const ReadSession> before);
  // The options every snapshot of this engine is built with.
  Result<SnapshotOptions> SnapshotBuildOptions() const;
  // The persister published `written`'s segment: when `written` is still
  // the current snapshot, publishes one opened from the segment instead
  // (published_segment.cc).
  void MapPublishedSegment(std::shared_ptr<const Snapshot> written);
  // SessionServices::schema: the store's contract and its records, read
  // once and kept (schema_input_) until a write or refresh that may change
  // them calls ForgetSchemaInput after its commit. This engine's inserts of
  // new documents keep them: the first query on the snapshot an insert
  // publishes would otherwise wait for the store while the insert's
  // extraction holds it (90 ms at 10^5 passages, doc/scale.md).
  Result<std::optional<SessionServices::SchemaInput>> ReadSchemaInput() const;
  void ForgetSchemaInput() { schema_epoch_.fetch_add(1); }

  // Runs `read` (a snapshot build) against one committed state of the
  // store: the reader (Store::OpenReader, opened on first use) in a read
  // transaction, else the store itself (":memory:"). Without it another
  // process's extraction could commit between the tables a build reads.
  Status ReadStoreConsistently(const std::function<Status(Store&)>& read);

  EngineOptions options_;
  std::unique_ptr<Store> store_;
  std::mutex reader_mu_;  // guards reader_, reader_opened_ and reads through them
  std::unique_ptr<Store> reader_;
  bool reader_opened_ = false;
  std::string embedder_kind_;
  std::string language_;  // the tokeniser's stemming language (ResolveLanguage)
  std::shared_ptr<Embedder> embedder_;
  // The reads' chat model (SessionServices::chat), made on first use.
  std::unique_ptr<QueryChatModel> chat_;

  // The tokeniser's language and the embedder, from the options and the
  // store's state (models/embedder_setup.h), as of models_generation_.
  Status ResolveModels();
  int64_t models_generation_ = -1;
  // The embedder and a snapshot read at one generation of the store: retried
  // while another process writes in between (state_stale_ when it kept
  // writing: the next Refresh or write loads again).
  Status LoadState();
  bool state_stale_ = false;
  // Writes (index runs, ingest, import, delete) and refreshes take turns
  // within the process; across processes the IndexRun's writer lock orders
  // the writes.
  // The first read's load (session()) takes it too.
  mutable std::mutex write_mu_;
  std::unique_ptr<SessionServices> services_;  // shared by every session
  // SegmentDamageCount() when the snapshot was last built without the
  // segments found damaged (at creation: none of this engine's yet).
  std::atomic<uint64_t> damage_handled_{SegmentDamageCount()};
  // ReadSchemaInput's copy, valid while schema_epoch_ is schema_input_epoch_.
  std::atomic<uint64_t> schema_epoch_{0};
  mutable std::mutex schema_mu_;  // guards the two below
  mutable std::optional<std::optional<SessionServices::SchemaInput>> schema_input_;
  mutable uint64_t schema_input_epoch_ = 0;
  mutable std::mutex session_mu_;
  std::shared_ptr<const ReadSession> session_;
  // Declared after store_: destroyed (and flushed) before it.
  std::unique_ptr<PartsPersister> persister_;
  // Declared last: stopped before anything it refreshes is destroyed.
  std::unique_ptr<StoreFollower> follower_;
};

}  // namespace flowrag

#endif  // FLOWRAG_ENGINE_ENGINE_IMPL_H_
