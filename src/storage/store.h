// The store: flowrag's source of truth (documents, passages, embeddings,
// embedder state, the graph, index runs), a SQLite file or a PostgreSQL
// workspace. Format and layers: doc/storage.md. Callers that need one part
// of it take one of the narrow interfaces below (and StoreState,
// storage/store_state.h, for its meta values); Store implements them all,
// once, in SQL over a SqlConnection (sqldb/connection.h). Only the code that
// opens a store names Store; everything else sees an interface.
//
// Durability: every Write* call is one write transaction (SQLite: BEGIN
// IMMEDIATE ... COMMIT in WAL mode; PostgreSQL: BEGIN plus the workspace's
// advisory lock), so a crash loses at most the call in flight and the store
// always holds whole batches.
//
// Generation: every write transaction that can change what a snapshot reads
// (documents, passages, embeddings, the graph, synonyms, meta values,
// embedder state) also increments meta.generation, in the same transaction.
// Snapshot parts (format 6, storage/store_parts.cc) record the generation
// they were derived from; a part of another generation is stale. Writes that
// cannot change a snapshot (index run journal, LLM cache, SQL schemas,
// linked names, the parts themselves) leave it alone.
//
// Thread-safety: all methods are serialised by an internal mutex; a Store may
// be shared between threads. Several processes may open the same store;
// writers of a whole index run take turns through AcquireWriterLock.
#ifndef FLOWRAG_STORAGE_STORE_H_
#define FLOWRAG_STORAGE_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/matrix.h"
#include "flowrag/status.h"
#include "ingest/document.h"
#include "sqldb/connection.h"
#include "storage/store_state.h"
#include "storage/writer_lock.h"

namespace flowrag {

class GraphWriter;
struct GraphWriteReport;
struct ChatResponse;

// The format this build writes. Older files are migrated on open (a
// read-only open reads an older format when the steps since need no DDL:
// format 7's float16 vectors); newer ones are refused.
inline constexpr int kStoreFormatVersion = 7;

struct StoreOptions {
  bool create_if_missing = true;
  bool read_only = false;
  // For tests of migrations only: create new files at this older version.
  int create_format_version = kStoreFormatVersion;
};

struct PassageWrite {
  int32_t ordinal = 0;
  uint32_t begin = 0;  // UTF-8 byte offsets into the document text
  uint32_t end = 0;
  uint64_t embed_hash = 0;  // Hash64 of the text that gets embedded
};

// The SourceRecord row of a document written by schema-driven construction.
struct SourceRecordWrite {
  std::string source, file;
  int64_t line = 0;
  std::string entity_type, record_key;
  bool structured = true;  // false: a text document the extractor reads
  std::string fields;      // JSON object of the original values
};

struct DocumentWrite {
  RawDocument doc;
  std::optional<SourceRecordWrite> record;
  uint64_t content_hash = 0;
  std::string chunking;  // signature of the chunk options used
  std::vector<PassageWrite> passages;
};

struct BatchWriteReport {
  size_t documents_added = 0;
  size_t documents_replaced = 0;
  size_t documents_unchanged = 0;
  size_t passages_added = 0;
};

// A passage as the snapshot loads it.
struct PassageRow {
  int64_t id = 0;
  int64_t document_id = 0;
  int32_t ordinal = 0;
  uint32_t begin = 0;
  uint32_t end = 0;
  uint64_t embed_hash = 0;
};

struct DocumentRow {
  int64_t id = 0;
  std::string external_id;
  std::string title;
  std::string source;
  std::string text;
};

// Store's embed watermark, parsed (see Store::CurrentEmbedWatermark).
struct EmbedWatermark {
  int64_t titles_generation = 0;
  int64_t through = 0;
  std::string model;
};

struct PassageToEmbed {
  int64_t passage_id = 0;
  uint64_t embed_hash = 0;
  std::string text;  // title + "\n" + passage text
};

struct IndexRunRecord {
  int64_t id = 0;
  std::string sources;
  std::string status;  // "running", "done", "failed"
  size_t documents_added = 0, documents_replaced = 0, documents_unchanged = 0;
  size_t passages_added = 0, batches_committed = 0, passages_embedded = 0;
  std::string error;
};

struct StoreCounts {
  int64_t documents = 0;
  int64_t passages = 0;
  int64_t embeddings = 0;
  int64_t embedding_models = 0;
  int64_t index_runs = 0;
  int64_t file_bytes = 0;
  int format_version = 0;
};

// The text a passage is embedded and scored as: its document title, a
// newline, then the passage text (the title alone is not repeated when empty).
std::string PassageEmbedText(std::string_view title, std::string_view passage_text);

// Documents and their passages as index runs write them: the source of
// truth every index run starts from (snapshots read them through
// SnapshotSource).
class DocumentStore {
 public:
  virtual ~DocumentStore() = default;

  // Content hash of a stored document, if any. O(log n).
  virtual Result<std::optional<uint64_t>> DocumentHash(std::string_view external_id) = 0;

  // Writes a batch in one transaction: unknown ids are inserted, ids whose
  // content hash differs are replaced (old passages deleted), equal ones are
  // left untouched. Returns what happened.
  virtual Result<BatchWriteReport> WriteDocuments(std::span<const DocumentWrite> batch) = 0;

  // Removes a document and its passages. NotFound for an unknown id.
  virtual Status DeleteDocument(std::string_view external_id) = 0;

  // Visits every passage's embed text (title + "\n" + passage text) in id order.
  virtual Status ForEachPassageText(const std::function<Status(const PassageToEmbed&)>& fn) = 0;
  // Just the numbers of documents and of passages. O(rows).
  virtual Result<std::pair<int64_t, int64_t>> CountDocumentsAndPassages() = 0;
  // The largest passage id (0 without passages), which bounds their number
  // (ids are distinct and positive). O(log rows).
  virtual Result<int64_t> LargestPassageId() = 0;
  // Passage ids of every document (ordinal order), by external id.
  virtual Result<std::unordered_map<std::string, std::vector<int64_t>>> PassagesByDocument() = 0;
};

// Vectors by (model, text hash): what the embed phase and graph extras
// write and look up (the built-in embedder's fitted state is StoreState's;
// snapshots read the passage vectors through SnapshotSource).
class EmbeddingCache {
 public:
  virtual ~EmbeddingCache() = default;

  // Passages with an id above `after_id` whose embed_hash has no embedding
  // for `model`, in id order. A caller working through them passes the
  // last id it got: each call then starts where the last one stopped
  // instead of skipping every passage embedded so far (which made a run
  // over n passages O(n²)).
  virtual Result<std::vector<PassageToEmbed>> PassagesMissingEmbeddings(std::string_view model,
                                                                        size_t limit,
                                                                        int64_t after_id = 0) = 0;
  virtual Result<int64_t> CountPassagesMissingEmbeddings(std::string_view model) = 0;
  // Records that every passage stored now has a vector for `model`: the two
  // calls above then start after the highest passage id of now and cost
  // O(passages added since) instead of a scan of the store. The caller holds
  // the writer lock and has just found no passage missing. Writes no
  // generation (no snapshot changes). See Store's embed watermark.
  virtual Status MarkAllPassagesEmbedded(std::string_view model) = 0;

  // Stores vectors (rows of `vectors`) under (model, hashes[i]) in one
  // transaction, each as float16 when it fits (storage/vector_blob.h): a
  // lookup returns the rounded values.
  virtual Status PutEmbeddings(std::string_view model, std::span<const uint64_t> hashes,
                               const FloatMatrix& vectors) = 0;
  // Looks up cached vectors (decoded: storage/vector_blob.h); missing ones
  // are reported in *found as false.
  virtual Result<FloatMatrix> GetEmbeddings(std::string_view model,
                                            std::span<const uint64_t> hashes, size_t dim,
                                            std::vector<bool>* found) = 0;
  // Deletes cached vectors of every model except `keep_model` that no longer
  // back a passage or that belong to a superseded model with prefix `family`.
  virtual Result<int64_t> DropEmbeddingsOfFamilyExcept(std::string_view family,
                                                       std::string_view keep_model) = 0;

  // Dimension of the cached vectors of `model` (0 when there are none).
  virtual Result<size_t> EmbeddingDimension(std::string_view model) = 0;

  // Hashes of every cached vector of `model`.
  virtual Result<std::vector<uint64_t>> EmbeddingHashes(std::string_view model) = 0;

  // Corruption naming the store, the model, how many rows are damaged and
  // the one with the least text hash, when a cached vector of `model` is
  // not a vector of the `dimension` its row says (`dimension` 0:
  // what the model's first row by text hash says, the same for all): what
  // an index run checks before it writes, since it rebuilds the snapshot
  // from these vectors afterwards. O(log n + damaged rows): five range
  // probes of the index embeddings_sizes (schema.h, kBadVectorSizesQuery)
  // that read no vector (without the index: range reads of the primary key).
  virtual Status CheckVectorSizes(std::string_view model, size_t dimension) = 0;
};

// The knowledge graph as snapshots load it, in id order.
class GraphSource {
 public:
  virtual ~GraphSource() = default;

  struct EntityRow {
    int64_t id = 0;
    std::string name, type;
  };
  struct MentionRow {
    int64_t passage_id = 0, entity_id = 0;
    int64_t count = 0;
    bool defining = false;
    bool title = false;  // the passage's own title entity (type TITLE, defining)
  };
  struct DescriptionRow {
    int64_t id = 0, entity_id = 0, passage_id = 0;
    std::string text;
  };
  struct FactRow {
    int64_t id = 0, subject_id = 0, object_id = 0, relation_id = 0;
  };
  struct SynonymRow {
    int64_t a = 0, b = 0;
    double similarity = 0;
  };
  virtual Status ForEachEntity(const std::function<Status(EntityRow&&)>& fn) = 0;
  virtual Status ForEachMention(const std::function<Status(const MentionRow&)>& fn) = 0;
  virtual Status ForEachDescription(const std::function<Status(DescriptionRow&&)>& fn) = 0;
  virtual Status ForEachFact(const std::function<Status(const FactRow&)>& fn) = 0;
  // Relation texts (shared by the facts stating them), in id order.
  virtual Status ForEachRelation(
      const std::function<Status(int64_t id, std::string&& text)>& fn) = 0;
  virtual Status ForEachFactSource(
      const std::function<Status(int64_t fact, int64_t passage)>& fn) = 0;
  virtual Status ForEachSynonym(const std::function<Status(const SynonymRow&)>& fn) = 0;
  virtual Result<std::vector<EntityRow>> EntitiesByIds(const std::vector<int64_t>& ids) = 0;

  struct GraphCounts {
    int64_t entities = 0, mentions = 0, defining_mentions = 0, descriptions = 0, facts = 0,
            fact_sources = 0, synonyms = 0, extracted_passages = 0, failed_passages = 0,
            llm_calls = 0, llm_prompt_tokens = 0, llm_completion_tokens = 0;
  };
  virtual Result<GraphCounts> CountGraph() = 0;
};

// What extraction and graph finalisation write (storage/store_graph.cc).
class GraphSink {
 public:
  virtual ~GraphSink() = default;

  // Runs `body` with a GraphWriter in one transaction, then the writer's
  // garbage collection. On error nothing of the call is kept.
  virtual Status WriteGraph(const std::function<Status(GraphWriter&)>& body,
                            GraphWriteReport* report) = 0;

  struct PendingPassage {
    int64_t passage_id = 0;
    int32_t ordinal = 0;
    std::string title;
    std::string text;
    std::string document_id;  // external id of its document
    uint64_t embed_hash = 0;  // of title and text (GraphWriter::PassageHolds)
    // ForEachPassageContent: the detail its successful extraction recorded
    // (GraphWriter::ApplyPassage), empty when it has none.
    std::string extracted_with;
  };
  // Passages without a successful extraction by `extractor` (structured
  // SourceRecords excluded: the contract builds their graph), in id order,
  // starting after passage id `after`.
  virtual Result<std::vector<PendingPassage>> PassagesPendingExtraction(std::string_view extractor,
                                                                        int64_t after,
                                                                        size_t limit) = 0;
  virtual Result<int64_t> CountPassagesPendingExtraction(std::string_view extractor = "") = 0;
  // Claims up to `limit` passages pending extraction by `extractor` that no
  // other worker holds a live claim on (lowest ids above `after` first;
  // a worker passes the last id it claimed, so that it does not scan the
  // passages done before it), for `worker`
  // until now + lease_seconds, in one transaction, and returns them. A
  // passage stays pending until its extraction is written; a claim that
  // expires (its worker died) can be claimed again. Claims are
  // extraction_state rows of status "claimed" (doc/storage.md).
  virtual Result<std::vector<PendingPassage>> ClaimPassagesForExtraction(
      std::string_view extractor, std::string_view worker, int64_t lease_seconds, size_t limit,
      int64_t after = 0) = 0;
  // The workers holding live claims, and a way to drop a dead one's claims
  // at once (its passages become claimable without waiting for the lease).
  virtual Result<std::vector<std::string>> ClaimHolders() = 0;
  virtual Status ReleaseClaims(std::string_view worker) = 0;
  // The titles of the passages the extractors read, in passage id order,
  // a repeat of the previous title dropped: the input of the offline
  // extractor's dictionary; with the titles generation
  // (GraphWriter::TitlesGeneration) read before them, so a list is never
  // newer than its generation says.
  struct TitleList {
    int64_t generation = 0;
    std::vector<std::string> titles;
  };
  virtual Result<TitleList> ExtractableTitles() = 0;
  // The titles generation alone (GraphWriter::TitlesGeneration), O(1).
  virtual Result<int64_t> TitlesGeneration() = 0;
  // Every passage the extractors read (id order; not structured
  // SourceRecords), for dictionary linking.
  virtual Status ForEachPassageContent(const std::function<Status(PendingPassage&&)>& fn) = 0;

  // The keys (EntityKey) of the dictionary names every passage has been
  // extracted with a dictionary holding (MarkNamesLinked): the offline
  // extractor's relinking extracts again the passages that name any other.
  // A key no passage records any more (its document deleted) is forgotten
  // by the graph's garbage collection, so a name that comes back is linked
  // again.
  virtual Result<std::vector<std::string>> LinkedNames() = 0;
  virtual Status MarkNamesLinked(const std::vector<std::string>& keys) = 0;
  // Forgets linked keys (names that left the dictionary).
  virtual Status ForgetLinkedNames(const std::vector<std::string>& keys) = 0;

  // Entities created or renamed since their synonym edges were computed.
  virtual Result<std::vector<int64_t>> EntitiesNeedingSynonyms() = 0;
  // Replaces the synonym edges of `entities` with `edges` (a < b) and marks
  // them done, in one transaction; an entity renamed since it was read (its
  // name no longer the one given: a concurrent run's worker) stays pending,
  // so the edges of its new name are computed by a later call.
  virtual Status ReplaceSynonyms(const std::vector<GraphSource::EntityRow>& entities,
                                 const std::vector<GraphSource::SynonymRow>& edges) = 0;
  // Every entity pending again: its name's vector changed with the embedder
  // (a refit of the built-in one's IDF table), so its edges must be
  // computed again (UpdateSynonyms then compares all of them).
  virtual Status MarkAllSynonymsPending() = 0;
};

// Write runs: the writer lock they take turns with (across threads and
// processes; writer_lock.h) and their journal (`flowrag stats`).
class RunJournal {
 public:
  virtual ~RunJournal() = default;

  // The store's writer lock, held until the result is destroyed (or moved
  // from); DeadlineExceeded after `wait`.
  virtual Result<WriterLock> AcquireWriterLock(std::chrono::milliseconds wait) = 0;

  virtual Result<int64_t> BeginIndexRun(std::string_view sources) = 0;
  virtual Status UpdateIndexRun(const IndexRunRecord& run) = 0;
  virtual Result<std::vector<IndexRunRecord>> RecentIndexRuns(size_t limit) = 0;
};

// The store as a snapshot is built from it (graph/snapshot.h) and the parts
// a snapshot persists in it (graph/graph_io.h; format 6,
// storage/store_parts.cc; doc/storage.md): documents and passages, the
// passage vectors of the dense model, the knowledge graph (GraphSource),
// the cached vectors of graph texts (a remote embedder's), the generation
// and the snapshot parts. Reads only, but for the parts. All that graph/
// sees of a store: another kind of store (memory-mapped segments, a test's
// fake) implements this to serve snapshots.
class SnapshotSource : public GraphSource {
 public:
  ~SnapshotSource() override = default;

  // The location the store was opened with, for messages (a PostgreSQL URL
  // without its password).
  virtual const std::string& path() const = 0;

  // The directory of this store's snapshot segments (graph/snapshot_segment.h):
  // "<file>.segments" beside a SQLite file; "" when the store keeps none
  // (an in-memory store; a PostgreSQL workspace keeps its snapshot parts in
  // the database until segments are cached per replica). The environment
  // variable FLOWRAG_SNAPSHOT_SEGMENTS=off makes a SQLite store keep snapshot
  // parts in the database as well (for A/B measurements and the parts' own
  // tests).
  virtual std::string SegmentDirectory() const { return ""; }

  // Streams every document / passage with an id above `after_id`, in id
  // order (after_id 0: all of them).
  virtual Status ForEachDocument(const std::function<Status(DocumentRow&&)>& fn,
                                 int64_t after_id = 0) = 0;
  virtual Status ForEachPassage(const std::function<Status(const PassageRow&)>& fn,
                                int64_t after_id = 0) = 0;
  // As DocumentStore's: the numbers of documents and of passages (Append and
  // Remove check that nothing else changed).
  virtual Result<std::pair<int64_t, int64_t>> CountDocumentsAndPassages() = 0;

  // Visits (passage id, vector) for `model` in passage id order, for the
  // passages with an id above `after_id`; passages without a vector are
  // skipped. The vector is the stored one decoded (storage/vector_blob.h),
  // valid during the call; a stored vector whose bytes do not fit its
  // dimension is Corruption naming the passage.
  virtual Status ForEachPassageEmbedding(
      std::string_view model, const std::function<Status(int64_t, std::span<const float>)>& fn,
      int64_t after_id = 0) = 0;
  // As EmbeddingCache's: cached vectors of graph texts, which a remote
  // embedder's graph is built from.
  virtual Result<FloatMatrix> GetEmbeddings(std::string_view model,
                                            std::span<const uint64_t> hashes, size_t dim,
                                            std::vector<bool>* found) = 0;
  virtual Result<size_t> EmbeddingDimension(std::string_view model) = 0;

  // Opaque byte strings a snapshot derives from the store, stored in chunks.
  struct SnapshotPartInfo {
    std::string name;
    int64_t generation = 0;  // meta.generation it was derived from
    int format = 0;          // the part's own format version
    std::string key;         // what else it depends on (e.g. an embedder model id)
    uint64_t bytes = 0;
    uint64_t checksum = 0;  // computed by the writer; storage only keeps it
    int64_t chunks = 0;
  };
  // The store's change counter (0 for a store older than format 6).
  virtual Result<int64_t> Generation() = 0;
  virtual Result<std::optional<SnapshotPartInfo>> GetSnapshotPart(std::string_view name) = 0;
  // Copies `n` bytes at `offset` of chunk `seq` (0-based) of part `name`
  // into `out`, straight from the database pages (incremental blob I/O: the
  // chunk is never copied whole). NotFound when the chunk is missing,
  // Corruption when it is shorter.
  virtual Status ReadSnapshotChunk(std::string_view name, int64_t seq, uint64_t offset, void* out,
                                   size_t n) = 0;
  // `produce` emits a part's bytes chunk by chunk (each at most
  // kMaxSnapshotChunk bytes) and returns their checksum.
  using ChunkSink = std::function<Status(std::string_view chunk)>;
  using PartProducer = std::function<Result<uint64_t>(const ChunkSink& emit)>;
  static constexpr size_t kMaxSnapshotChunk = size_t{4} << 20;
  // Replaces part info.name with what `produce` emits, in one transaction,
  // if the store's generation is still info.generation (the part was derived
  // from the current data). Returns false, writing nothing, when it is not.
  // info.bytes, checksum and chunks are set from what was emitted.
  virtual Result<bool> PutSnapshotPart(const SnapshotPartInfo& info,
                                       const PartProducer& produce) = 0;
  // Deletes every part (they are rebuilt from rows on the next open).
  virtual Status DropSnapshotParts() = 0;
};

// SourceRecords of schema-driven construction (format 4, storage/store_records.cc).
class SourceRecordStore {
 public:
  virtual ~SourceRecordStore() = default;

  // SourceRecords (format 4, storage/store_records.cc), in document id order.
  struct SourceRecordRow {
    int64_t document_id = 0;
    std::string external_id;
    SourceRecordWrite record;
  };
  virtual Status ForEachSourceRecord(const std::function<Status(SourceRecordRow&&)>& fn) = 0;
  // B.7.2 counts over the graph: entities, those with a DERIVED_FROM (a
  // defining mention in a SourceRecord's passage), facts and those whose
  // endpoints both exist, entities and facts per type / relation text.
  struct SchemaGraphCounts {
    int64_t source_records = 0, entities = 0, entities_with_provenance = 0, derived_from = 0;
    int64_t edges = 0, valid_edges = 0;
    std::map<std::string, int64_t> entities_per_type, facts_per_relation;
    std::map<std::string, int64_t> text_documents_per_type;  // text SourceRecords
  };
  virtual Result<SchemaGraphCounts> CountSchemaGraph() = 0;
};

// Text-to-SQL schema graphs (format 5) for sql/.
class SqlSchemaCache {
 public:
  virtual ~SqlSchemaCache() = default;

  // Text-to-SQL schema graphs (format 5), keyed by the database path.
  struct SqlSchemaRow {
    std::string source, fingerprint, graph, value_index;  // graph/value_index: JSON
  };
  virtual Result<std::optional<SqlSchemaRow>> GetSqlSchema(std::string_view source) = 0;
  virtual Status PutSqlSchema(const SqlSchemaRow& row) = 0;  // replaces the row of `source`
};

// The LLM response cache behind StoreResponseCache (models/llm_cache.h).
class LlmResponseStore {
 public:
  virtual ~LlmResponseStore() = default;

  // LLM response cache (storage/store_llm_responses.cc).
  virtual Result<std::optional<ChatResponse>> GetCachedResponse(uint64_t key) = 0;
  virtual Status PutCachedResponse(uint64_t key, std::string_view model, std::string_view request,
                                   const ChatResponse& response) = 0;
};

// The store: every interface above and StoreState over one SqlConnection
// (a SQLite file or a PostgreSQL workspace), plus opening and counts.
// GraphSource comes with SnapshotSource.
class Store final : public DocumentStore,
                    public EmbeddingCache,
                    public GraphSink,
                    public RunJournal,
                    public SnapshotSource,
                    public SourceRecordStore,
                    public SqlSchemaCache,
                    public LlmResponseStore,
                    public StoreState {
 public:
  // Opens or creates the store at `path`: a SQLite file (":memory:" for a
  // private in-memory store) or a PostgreSQL URL (sqldb/connection.h).
  // Errors: Corruption when the file is not SQLite or the database not a
  // flowrag store (the message names the store and what was found),
  // FailedPrecondition for a newer format, IoError when unreadable, the
  // driver's errors for a server that cannot be reached.
  static Result<std::unique_ptr<Store>> Open(const std::string& path,
                                             const StoreOptions& options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // The location it was opened with (a PostgreSQL URL without its password).
  const std::string& path() const override { return path_; }
  std::string SegmentDirectory() const override;
  // A connection of its own to this store, for SqlConnection::WaitForChange
  // (every write that bumps the generation announces itself).
  Result<std::unique_ptr<SqlConnection>> OpenListener() const;
  // A read-only store of its own on the same location, for reads that must
  // see one committed state across tables (a snapshot build) while other
  // connections write. Null for a store that is one connection only
  // (":memory:").
  Result<std::unique_ptr<Store>> OpenReader() const;
  // Runs `body` in a read transaction (SqlConnection::BeginRead): every
  // read it makes sees one committed state. For a store no other thread
  // uses meanwhile (a reader from OpenReader()); `body` does not write.
  Status ReadConsistently(const std::function<Status()>& body);
  // Hands the connection's unused page cache back to the allocator
  // (SQLite's PRAGMA shrink_memory; nothing on PostgreSQL, whose cache is
  // the server's). A writer's cache grows to 64 MiB (PrepareForWrites);
  // a served store calls this once a burst of writes has settled
  // (EngineImpl::MapPublishedSegment), so that cache does not stay resident
  // between bursts. The next write reads its pages again.
  Status ReleaseMemory();
  Result<WriterLock> AcquireWriterLock(std::chrono::milliseconds wait) override {
    return WriterLock::Acquire(location_, wait);
  }
  SqlDialect dialect() const;
  int format_version() const { return format_version_; }

  // Raw meta key/value pairs (strings). Deprecated outside storage/: the
  // typed reads and writes of StoreState parse and validate each key in one
  // place. Kept for tests that damage or age a store on purpose, and for the
  // engine files until they are converted.
  Result<std::optional<std::string>> GetMeta(std::string_view key);
  // A meta value that must be a decimal integer in [min, max]: Corruption
  // naming the store and the key (quoting at most 40 bytes) when it is not.
  Result<std::optional<int64_t>> GetMetaInt(std::string_view key, int64_t min, int64_t max);
  // Writes a changed value and increments meta.generation, in one
  // transaction; the same value writes nothing.
  Status SetMeta(std::string_view key, std::string_view value);

  Result<StoreCounts> Counts();

  // ---- The interfaces (comments above).
  Result<std::optional<uint64_t>> DocumentHash(std::string_view external_id) override;
  Result<BatchWriteReport> WriteDocuments(std::span<const DocumentWrite> batch) override;
  Status DeleteDocument(std::string_view external_id) override;
  Status ForEachPassageText(const std::function<Status(const PassageToEmbed&)>& fn) override;
  Result<std::pair<int64_t, int64_t>> CountDocumentsAndPassages() override;
  Result<int64_t> LargestPassageId() override;
  Status ForEachDocument(const std::function<Status(DocumentRow&&)>& fn,
                         int64_t after_id = 0) override;
  Status ForEachPassage(const std::function<Status(const PassageRow&)>& fn,
                        int64_t after_id = 0) override;
  Result<std::unordered_map<std::string, std::vector<int64_t>>> PassagesByDocument() override;
  Result<std::vector<PassageToEmbed>> PassagesMissingEmbeddings(std::string_view model,
                                                                size_t limit,
                                                                int64_t after_id = 0) override;
  Result<int64_t> CountPassagesMissingEmbeddings(std::string_view model) override;
  Status MarkAllPassagesEmbedded(std::string_view model) override;
  Status PutEmbeddings(std::string_view model, std::span<const uint64_t> hashes,
                       const FloatMatrix& vectors) override;
  Result<FloatMatrix> GetEmbeddings(std::string_view model, std::span<const uint64_t> hashes,
                                    size_t dim, std::vector<bool>* found) override;
  Result<int64_t> DropEmbeddingsOfFamilyExcept(std::string_view family,
                                               std::string_view keep_model) override;
  Status ForEachPassageEmbedding(std::string_view model,
                                 const std::function<Status(int64_t, std::span<const float>)>& fn,
                                 int64_t after_id = 0) override;
  Result<size_t> EmbeddingDimension(std::string_view model) override;
  Result<std::vector<uint64_t>> EmbeddingHashes(std::string_view model) override;
  Status CheckVectorSizes(std::string_view model, size_t dimension) override;
  Result<std::optional<std::string>> GetEmbedderState(std::string_view name) override;
  Status PutEmbedderState(std::string_view name, std::string_view blob,
                          int64_t fitted_passages) override;
  Result<int64_t> EmbedderStateFittedPassages(std::string_view name) override;
  Status WriteGraph(const std::function<Status(GraphWriter&)>& body,
                    GraphWriteReport* report) override;
  Result<std::vector<PendingPassage>> PassagesPendingExtraction(std::string_view extractor,
                                                                int64_t after,
                                                                size_t limit) override;
  Result<int64_t> CountPassagesPendingExtraction(std::string_view extractor = "") override;
  Result<std::vector<PendingPassage>> ClaimPassagesForExtraction(std::string_view extractor,
                                                                 std::string_view worker,
                                                                 int64_t lease_seconds,
                                                                 size_t limit,
                                                                 int64_t after = 0) override;
  Result<std::vector<std::string>> ClaimHolders() override;
  Status ReleaseClaims(std::string_view worker) override;
  Result<TitleList> ExtractableTitles() override;
  Result<int64_t> TitlesGeneration() override;
  Status ForEachPassageContent(const std::function<Status(PendingPassage&&)>& fn) override;
  Result<std::vector<std::string>> LinkedNames() override;
  Status MarkNamesLinked(const std::vector<std::string>& keys) override;
  Status ForgetLinkedNames(const std::vector<std::string>& keys) override;
  Result<std::vector<int64_t>> EntitiesNeedingSynonyms() override;
  Status ReplaceSynonyms(const std::vector<EntityRow>& entities,
                         const std::vector<SynonymRow>& edges) override;
  Status MarkAllSynonymsPending() override;
  Status ForEachEntity(const std::function<Status(EntityRow&&)>& fn) override;
  Status ForEachMention(const std::function<Status(const MentionRow&)>& fn) override;
  Status ForEachDescription(const std::function<Status(DescriptionRow&&)>& fn) override;
  Status ForEachFact(const std::function<Status(const FactRow&)>& fn) override;
  Status ForEachRelation(const std::function<Status(int64_t id, std::string&& text)>& fn) override;
  Status ForEachFactSource(const std::function<Status(int64_t fact, int64_t passage)>& fn) override;
  Status ForEachSynonym(const std::function<Status(const SynonymRow&)>& fn) override;
  Result<std::vector<EntityRow>> EntitiesByIds(const std::vector<int64_t>& ids) override;
  Result<GraphCounts> CountGraph() override;
  Result<int64_t> BeginIndexRun(std::string_view sources) override;
  Status UpdateIndexRun(const IndexRunRecord& run) override;
  Result<std::vector<IndexRunRecord>> RecentIndexRuns(size_t limit) override;
  Result<int64_t> Generation() override;
  Result<std::optional<SnapshotPartInfo>> GetSnapshotPart(std::string_view name) override;
  Status ReadSnapshotChunk(std::string_view name, int64_t seq, uint64_t offset, void* out,
                           size_t n) override;
  Result<bool> PutSnapshotPart(const SnapshotPartInfo& info, const PartProducer& produce) override;
  Status DropSnapshotParts() override;
  Status ForEachSourceRecord(const std::function<Status(SourceRecordRow&&)>& fn) override;
  Result<SchemaGraphCounts> CountSchemaGraph() override;
  Result<std::optional<SqlSchemaRow>> GetSqlSchema(std::string_view source) override;
  Status PutSqlSchema(const SqlSchemaRow& row) override;
  Result<std::optional<ChatResponse>> GetCachedResponse(uint64_t key) override;
  Status PutCachedResponse(uint64_t key, std::string_view model, std::string_view request,
                           const ChatResponse& response) override;

 private:
  // StoreState's raw access: GetMeta and SetMeta.
  Result<std::optional<std::string>> ReadMeta(std::string_view key) override;
  Status WriteMeta(std::string_view key, std::string_view value) override;

  Store(std::string location, std::unique_ptr<SqlConnection> conn)
      : location_(std::move(location)), path_(conn->name()), conn_(std::move(conn)) {}
  Status Initialize(const StoreOptions& options);
  // Creates the tables and meta rows in one transaction; false when another
  // process created them first.
  Result<bool> CreateSchema(int format_version);
  // Corruption unless `names` (the file's tables) hold a meta table with the
  // flowrag magic.
  Status CheckIsStore(const std::vector<std::string>& names);
  // Reads the format version; migrates an older one when writable.
  Status CheckFormat(const StoreOptions& options);
  // Corruption naming the first table of the format missing from `names`.
  Status CheckTables(const std::vector<std::string>& names);
  Status Migrate(int from_version);
  // Creates the indexes of AddedIndexes() the store lacks (a writable open).
  Status EnsureAddedIndexes();
  Result<bool> HasIndex(std::string_view name);
  // Every write transaction of this Store: the integrity check first, when
  // the open deferred it (Initialize), then `body` between BEGIN and COMMIT.
  Status InTransaction(const std::function<Status()>& body);
  // True when the writable open may leave the driver's integrity check to
  // the first write: the file is already in WAL mode, so switching to the
  // writers' settings writes nothing.
  Result<bool> CanDeferIntegrityCheck();
  // InTransaction whose commit also increments meta.generation when the
  // body changed a row: for every write that can change what a snapshot
  // reads (see the file comment).
  Status InWriteTransaction(const std::function<Status()>& body);
  // Increments meta.generation and announces the change (inside the
  // caller's transaction: both take effect at commit).
  Status BumpGeneration();
  // meta.titles_generation (GraphWriter::TitlesGeneration) in a transaction
  // that may add, replace or delete documents: Lock first (PostgreSQL: the
  // row, before any passage row, so that it waits for the graph writes
  // holding it and no lock cycle can form), Bump once documents changed.
  Status LockTitlesGeneration();
  Status BumpTitlesGeneration();
  // The embed watermark (store_embed_watermark.cc), meta.embed_watermark =
  // "<titles generation> <passage id> <model>": every passage with an id up
  // to `through` has a vector for `model`. It holds only while
  // meta.titles_generation is the one it names. Every write of this build
  // that moves that generation (WriteDocuments, DeleteDocument) carries the
  // watermark forward, lowered below the ids of the passages it inserts
  // (SQLite reuses the ids of deleted top rows); a write by a build that does
  // not know it leaves it stale, and the next scan is a full one. An
  // unreadable value counts as none (it only saves work). EmbedWatermark
  // (above PassageToEmbed) is the parsed value.
  // The watermark when it holds for the current titles generation (mu_ held).
  Result<std::optional<EmbedWatermark>> CurrentEmbedWatermark();
  // The id up to which every passage has a vector for `model`; 0 when no
  // watermark holds for it (mu_ held).
  Result<int64_t> EmbeddedThrough(std::string_view model);
  // Writes `held` (CurrentEmbedWatermark before this transaction bumped the
  // titles generation once) for the bumped generation, lowered to
  // `max_id_before_inserts` when the transaction inserted passages.
  Status CarryEmbedWatermark(const std::optional<EmbedWatermark>& held,
                             std::optional<int64_t> max_id_before_inserts);
  // Drops the watermark unless it is `model`'s (its vectors were deleted).
  Status ForgetEmbedWatermarkUnlessOf(std::string_view model);
  // The highest passage id, 0 for none (mu_ held).
  Result<int64_t> MaxPassageId();
  // Forgets the graph contributions of `passage_ids` in `writer` (used before
  // passages are deleted) and collects what only they supported.
  Status DeletePassagesFromGraph(GraphWriter& writer, const std::vector<int64_t>& passage_ids);

  std::string location_;  // as opened (a URL keeps its password): never printed
  std::string path_;      // conn_->name(), for messages
  std::unique_ptr<SqlConnection> conn_;
  int format_version_ = 0;
  std::mutex mu_;
  // The driver's integrity check when a writable open deferred it to the
  // first write transaction (a SQLite quick_check reads the whole file: 9 s
  // for a store of 10^6 passages, which a server's first answer no longer
  // waits for): run once, its result kept.
  bool integrity_deferred_ = false;
  std::once_flag integrity_once_;
  Status integrity_;
};

}  // namespace flowrag

#endif  // FLOWRAG_STORAGE_STORE_H_
