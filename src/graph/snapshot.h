// Snapshot: the immutable in-memory view that queries read (DESIGN.md). It
// is built from the store in one pass and never changes; the engine swaps in
// a new one after writes, so readers never block and never see half a change.
//
// Holds: documents and passages (ids, offsets, texts), the BM25 inverted
// index over "title\ntext" of each passage, the dense passage vectors in a
// VectorIndex, the knowledge graph, and the embedder that embeds queries
// into the same space.
//
// Opening fast: the BM25 postings, the passage vectors (or, above the HNSW
// threshold, the passage HNSW index with its vectors), the graph rows and
// the graph's vectors are read from persisted snapshot parts when the store
// holds valid ones for its current generation (graph/graph_io.h); whatever
// is missing, stale or damaged is derived from the rows instead, and a
// snapshot built with `persistable` can then write it back (PersistParts).
// Documents and passages are always read from their rows (2wiki: 20 ms).
// A snapshot from parts and one from rows are equal: same arrays, so every
// query answers bit-identically (tests/snapshot_persist_test.cc).
//
// Measured (2wiki, 6,119 passages, 45k entities, 204k facts, 2 cores,
// release build): see doc/storage.md "Snapshot parts".
//
// Passages are addressed by a dense index 0..num_passages()-1 in store id
// order. Thread-safety: immutable after Build (PersistParts and Derived
// synchronise internally); share via shared_ptr<const Snapshot>.
#ifndef FLOWRAG_GRAPH_SNAPSHOT_H_
#define FLOWRAG_GRAPH_SNAPSHOT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/based_array.h"
#include "embed/embedder.h"
#include "flowrag/status.h"
#include "flowrag/types.h"
#include "graph/graph_io.h"
#include "graph/knowledge_graph.h"
#include "text/bm25_index.h"
#include "text/layered_bm25.h"
#include "vector/vector_index.h"

namespace flowrag {

class SnapshotSource;
class Snapshot;
class ArraySink;
class ArraySource;

// A structure an upper layer derives from a snapshot (Snapshot::Derived)
// that the snapshot's segment keeps (graph/snapshot_segment.h), so that a
// store opened from its segment adopts it in place instead of deriving it
// at its first query (retrieval's LocalFacts). The engine lists them in
// SnapshotOptions::derived; each is a static object of its layer. `make`
// reads only the snapshot's graph and its BM25 tokenizer, so a snapshot
// that keeps its predecessor's graph (Snapshot::Append) shares the value.
struct PersistentDerived {
  const void* tag = nullptr;  // the tag its Derived call uses
  // Prefix of its arrays' names (their names start with name + "."), 1-7
  // bytes, unique among those listed.
  std::string_view name;
  // Bump when what `make` computes changes: a segment of another format is
  // not adopted (the snapshot derives it instead).
  int format = 1;
  // The value (through Snapshot::Derived), or null when this snapshot has none.
  std::function<std::shared_ptr<const void>(const Snapshot&)> make;
  std::function<Status(const void* value, ArraySink& sink)> export_arrays;
  // The value from its arrays, checked as a parser checks outside bytes.
  std::function<Result<std::shared_ptr<const void>>(const Snapshot&, const ArraySource&)> adopt;
};

// A document's fields are views into what `keep` holds: its own strings
// when it was read from the store (MakeSnapshotDocument), the mapped
// segment when the snapshot adopted it (graph/snapshot_segment.h "doc.*").
// The text of an adopted document is verified only when it is read: read
// it through Snapshot::DocumentText or PassageText (its size may be read
// here).
struct SnapshotDocument {
  int64_t id = 0;
  std::string_view external_id;
  std::string_view title;
  std::string_view text;  // see above: read through Snapshot::DocumentText
  std::span<const uint32_t> page_breaks;  // PageBreaks(text) (ingest/document.h); empty: no pages
  std::shared_ptr<const void> keep;
};

// A document that owns its strings, its page breaks computed.
SnapshotDocument MakeSnapshotDocument(int64_t id, std::string external_id, std::string title,
                                      std::string text);

struct SnapshotPassage {
  int64_t id = 0;
  uint32_t document = 0;  // index into documents()
  int32_t ordinal = 0;
  uint32_t begin = 0;
  uint32_t end = 0;
};

struct SnapshotOptions {
  VectorIndexOptions vector;
  // The stemming language of BM25 (common/text.h TokenizerOptions::language):
  // documents and queries are tokenised with it; a persisted BM25 part of
  // another language is stale. Default kDefaultLanguage.
  std::string language = std::string(kDefaultLanguage);
  // Model id whose stored embeddings back the dense index ("" = no dense index).
  std::string dense_model;
  // Read persisted parts when valid (off: everything from rows).
  bool use_parts = true;
  // Keep the graph rows (serialised: 22 MB on 2wiki) so that PersistParts
  // can write what was rebuilt and Append can extend the graph.
  bool persistable = false;
  // An earlier snapshot of the same store: the graph texts it holds vectors
  // for are not embedded again (an insert embeds only its new texts).
  std::shared_ptr<const Snapshot> previous;
  // A snapshot whose documents, passages, BM25 and passage vectors are still
  // those of the store (only the graph changed since, e.g. by extraction):
  // they are shared, not read again. REQUIRES the caller to know it.
  std::shared_ptr<const Snapshot> same_text;
  // With same_text: share it only while the store is at this generation (-1:
  // at any). A caller that does not hold the store's writer lock (a
  // follower's refresh: Snapshot::Append, then this build) cannot know the
  // text is still the store's; it sets same_text's generation here, so that
  // a write landing between its reads (a delete) makes the build read the
  // text again instead of stamping the old text with the new generation.
  int64_t same_text_generation = -1;
  // What upper layers derive from the snapshot and its segment keeps (above).
  std::vector<const PersistentDerived*> derived;
};

struct SnapshotBuildStats {
  double seconds = 0.0;
  double graph_seconds = 0.0;
  size_t passages_without_vectors = 0;
  int64_t generation = 0;           // the store generation the snapshot shows
  size_t graph_texts_embedded = 0;  // graph texts embedded (not read or reused)
  // What became of each part (graph_io.h kBm25Part, ...), with the reason
  // when one could not be used.
  std::map<std::string, PartState> parts;
  std::vector<std::string> part_errors;
  // Wall seconds per phase: "documents", "bm25", "passage_vectors",
  // "graph_rows", "graph_vectors", "graph_build" (Append: "append").
  std::map<std::string, double> phase_seconds;
};

// The passages and their text indexes: shared by consecutive snapshots
// while the documents do not change. Documents and passages are read by
// value: those adopted from a segment from its arrays in place, the rest
// from chunks that a snapshot extended by Append shares with the one it
// extends (common/based_array.h).
using SnapshotDocuments = BasedArray<SnapshotDocument>;
using SnapshotPassages = BasedArray<SnapshotPassage>;
struct SnapshotText {
  // A document adopted from a segment has its text in a lazily verified
  // arena (`document_bytes`): read it through Snapshot::DocumentText or
  // PassageText (CheckedText), never through SnapshotDocument::text.
  SnapshotDocuments documents;
  FlatArray<char> document_bytes;  // the segment's doc.text bytes, lazy; empty otherwise
  SnapshotPassages passages;
  LayeredBm25 bm25;  // one layer, or a base and the appended passages
  std::shared_ptr<const VectorIndex> dense;
  size_t passages_without_vectors = 0;
};

// `view` as it may be read: a view into `text`'s lazily verified document
// bytes is verified first (empty when it fails, the damage recorded by the
// segment); any other view (a document built from the store, appended by
// an insert) is returned as it is. O(1) once its blocks were verified.
std::string_view CheckedText(const SnapshotText& text, std::string_view view);

class Snapshot {
 public:
  // Reads the store, through SnapshotSource alone (storage/store.h: all a
  // snapshot sees of a store; Store implements it). `embedder` embeds
  // queries for the dense index (may be null when options.dense_model is
  // empty).
  static Result<std::shared_ptr<const Snapshot>> Build(SnapshotSource& store,
                                                       std::shared_ptr<Embedder> embedder,
                                                       const SnapshotOptions& options,
                                                       SnapshotBuildStats* stats = nullptr);

  // `previous` extended by the documents the store gained since it was
  // built, when that is all that changed: documents appended (ids above
  // previous's), their passages and passage vectors, nothing else (an insert
  // before its extraction ran; Engine::IndexDocuments). Reads only the new
  // rows: documents, passages, BM25 postings and passage vectors are
  // extended (the BM25 postings as a tail layer after previous's, which
  // stays shared: text/layered_bm25.h); the graph is previous's, with its persistent derived values,
  // when the new passages fall in its empty passage slots (PassageSlots:
  // O(1) for it), else built again from previous's rows with the new
  // passages (no links yet), sharing previous's vectors. The dense index
  // is of the kind Build would choose for the new passage count: an HNSW
  // index keeps its graph, shared, and gets the new vectors as appended rows
  // searched exactly (vector/layered_index.h), until its edits pass
  // VectorIndexOptions::hnsw_fold_rows and it is built again from all its
  // vectors; crossing hnsw_threshold builds one from all vectors. Equal to
  // Build() on the same store (tests/snapshot_persist_test.cc), but for an
  // HNSW index, which holds the same vectors under the same ids and
  // searches them approximately (a fold equals Build's index byte for byte).
  // FailedPrecondition when it cannot (previous built without `persistable`,
  // a new passage of an old document, another dense model): then Build.
  // O(new rows + documents + postings), plus the graph's Build when the
  // slots are exceeded (once per 1/32 of growth) and the fold's build when
  // it happens.
  // `known_appended`: the caller knows nothing but appends happened since
  // previous's generation (it has held the store's writer lock since), so
  // the check that counts the store's rows (O(rows)) is skipped.
  static Result<std::shared_ptr<const Snapshot>> Append(SnapshotSource& store,
                                                        const Snapshot& previous,
                                                        SnapshotBuildStats* stats = nullptr,
                                                        bool known_appended = false);

  // `previous` without document `document_id`, which the store has just
  // deleted, when that is all that changed (Engine::DeleteDocument): the
  // remaining documents, BM25 postings (Bm25Index::Without) and passage
  // vectors are kept, the graph rows updated in memory as the store's
  // garbage collection updated the tables (graph/graph_rows_update.h; the
  // canonical names of the entities the document mentioned are read back),
  // vectors of texts that remain renumbered and new fact texts embedded.
  // A flat dense index is built again from the kept vectors; an HNSW index
  // keeps its graph with the rows marked deleted (LayeredIndex: searches
  // walk through them, never return them) until its edits pass
  // VectorIndexOptions::hnsw_fold_rows (then a full build, O(n ·
  // ef_construction · M · d · log n), no store reads). Equal to Build() on
  // the same store but for BM25's term numbering and an HNSW index's graph
  // (as Append).
  // FailedPrecondition when it cannot (not built `persistable`, passages
  // without vectors, a remote embedder, other changes): then Build.
  // O(rows + postings + Build).
  static Result<std::shared_ptr<const Snapshot>> Remove(SnapshotSource& store,
                                                        const Snapshot& previous,
                                                        std::string_view document_id,
                                                        SnapshotBuildStats* stats = nullptr);

  size_t num_passages() const { return text_->passages.size(); }
  size_t num_documents() const { return text_->documents.size(); }
  SnapshotPassage passage(uint32_t i) const { return text_->passages[i]; }
  SnapshotDocument document_of(uint32_t passage) const {
    return text_->documents[text_->passages[passage].document];
  }
  std::string_view PassageText(uint32_t i) const;
  // Document d's text: of a document adopted from a segment, verified at
  // this read (empty when its bytes fail, the damage recorded by the
  // segment); read texts through it, or PassageText, never
  // documents()[d].text. REQUIRES d < num_documents().
  std::string_view DocumentText(uint32_t d) const;
  // Passage i as the public API reports it, with `score`.
  ScoredPassage Scored(uint32_t i, double score) const;
  const SnapshotDocuments& documents() const { return text_->documents; }

  const LayeredBm25& bm25() const { return text_->bm25; }
  // Null when the store has no embeddings for the dense model.
  const VectorIndex* dense() const { return text_->dense.get(); }
  Embedder* embedder() const { return embedder_.get(); }
  // The knowledge graph; null when nothing has been extracted yet.
  const KnowledgeGraph* graph() const { return graph_.get(); }
  const std::string& dense_model() const { return dense_model_; }

  // The store generation this snapshot was built from, and how it was built.
  int64_t generation() const { return stats_.generation; }
  const SnapshotBuildStats& build_stats() const { return stats_; }

  // Writes the parts this snapshot had to rebuild (built with `persistable`)
  // to `store`, if the store is still at this snapshot's generation; else
  // writes nothing (a later snapshot will). Returns the number of parts
  // written. Safe to call from any thread, at most one write at a time;
  // repeat calls write nothing.
  // A store with a segment directory (SnapshotSource::SegmentDirectory)
  // gets one snapshot segment holding everything instead
  // (graph/snapshot_segment.h; then it returns 1), unless this snapshot
  // was itself opened from one (then it finishes what a crashed write left,
  // CompleteSnapshotSegment, and returns 0) or holds what a segment cannot
  // (an HNSW index of graph texts): then the parts as before.
  Result<size_t> PersistParts(SnapshotSource& store) const;

  // Writes every array of this snapshot into `sink` (the snapshot segment's
  // layout: graph/snapshot_segment.h), the persistent derived values made
  // first. REQUIRES FitsSegment().
  Status ExportSegment(ArraySink& sink) const;
  // False when it holds what a segment does not keep (a graph text index
  // that is neither sparse nor flat: a remote embedder's HNSW).
  bool FitsSegment() const;
  // The segment this snapshot was opened from, or null.
  const std::shared_ptr<const ArraySource>& segment() const { return segment_; }
  // True once PersistParts published this snapshot's own segment (so a
  // snapshot opened from it answers the same from mapped pages).
  bool SegmentPublished() const {
    std::lock_guard<std::mutex> lock(persist_mu_);
    return segment_written_ && segment_ == nullptr;
  }

  // Data an upper layer derives from this snapshot once and shares between
  // queries (retrieval's GraphQueryIndex), keyed by `tag` (the address of
  // something unique to the caller): `make` runs on first use, concurrent
  // first uses wait for it, and the result lives as long as the snapshot.
  // A null result (`make` failed) is not kept: the next use runs it again.
  // For a tag of SnapshotOptions::derived, a snapshot opened from its
  // segment adopts the value from the segment's arrays instead of running
  // `make` (and runs `make` when they are missing, of another format or
  // refused; DerivedErrors() says why).
  std::shared_ptr<const void> Derived(const void* tag,
                                      const std::function<std::shared_ptr<const void>()>& make) const;
  // Like Derived, for data that depends only on the graph's entities (their
  // names, types and vectors): a snapshot made by Append, whose entities are
  // those of the snapshot it extends, starts with that snapshot's values.
  // A persistent one is adopted from the segment as Derived's are.
  std::shared_ptr<const void> DerivedFromEntities(
      const void* tag, const std::function<std::shared_ptr<const void>()>& make) const;
  // Why a persistent derived value was derived again instead of adopted
  // from the segment (each names the value and the array).
  std::vector<std::string> DerivedErrors() const;
  // SnapshotOptions::derived, as built.
  const std::vector<const PersistentDerived*>& persistent_derived() const { return persistent_; }
  // Makes (or adopts) now the persistent derived values that `like`'s
  // queries used (DerivedAsked: not those only its segment export made), so
  // that no query of this snapshot waits for one: the engine calls it before
  // a snapshot replaces a published one (O(graph) for each made; nothing for
  // one shared with the snapshot Append extended). A snapshot mapped from a
  // segment that adopted a value no query reads would read its pages: on
  // 2wiki, 19 MiB more resident after 30 writes (doc/scale.md).
  void MakePersistentDerivedLike(const Snapshot& like) const;
  // True once Derived(tag) holds a value.
  bool DerivedReady(const void* tag) const;
  // True once Derived(tag) holds a value that a reader asked for, not only
  // ExportSegment (which makes every persistent value for the file): what
  // MakePersistentDerivedLike makes. A value shared by ShareGraphDerived
  // counts as asked when any snapshot sharing it was asked.
  bool DerivedAsked(const void* tag) const;

 private:
  // `make`, or for a persistent derived value (`tag` listed in
  // SnapshotOptions::derived) of a snapshot opened from a segment, its
  // arrays adopted first and `make` only when that fails.
  std::function<std::shared_ptr<const void>()> AdoptedOrMade(
      const void* tag, const std::function<std::shared_ptr<const void>()>& make) const;
  Status BuildAt(SnapshotSource& store, const SnapshotOptions& options, bool use_parts);
  // Text, dense index and graph from the store's current snapshot segment
  // (documents too: graph/snapshot_documents.h; from the rows for a segment
  // written before it kept them); false, with the reason in stats_, when there
  // is none or it cannot be adopted (graph/snapshot_segment.cc).
  Result<bool> TryAdoptSegment(SnapshotSource& store, const SnapshotOptions& options);
  // The segment adopted (AdoptSegmentText and AdoptSegmentGraph on two
  // threads, a third verifying its sections ahead), the documents from it
  // or from `store`: the store's error, else OK with the adoption's
  // outcome in `adopted`.
  Status AdoptSegmentInParallel(SnapshotSource& store, const ArraySource& segment,
                                const SnapshotOptions& options, Status* adopted);
  // The passages of a segment this snapshot's keys and format can adopt:
  // FailedPrecondition when it is stale, Corruption when damaged.
  Result<size_t> AdoptableSegmentPassages(const ArraySource& segment,
                                          const SnapshotOptions& options) const;
  // The segment's text side (BM25, the passage index) over `text`'s
  // passages, then text_ = text; and its graph side (graph vectors, the
  // knowledge graph, the graph rows) over `num_passages` into graph_ and
  // graph_rows_. Independent of each other: the open runs them on two
  // threads.
  Status AdoptSegmentText(const ArraySource& segment, const SnapshotOptions& options,
                          std::shared_ptr<SnapshotText> text);
  Status AdoptSegmentGraph(const ArraySource& segment, const SnapshotOptions& options,
                           size_t num_passages);
  Status ReadText(SnapshotSource& store, const SnapshotOptions& options, bool use_parts,
                  std::unordered_map<int64_t, uint32_t>* passage_index);
  Status BuildGraph(SnapshotSource& store, const SnapshotOptions& options, bool use_parts,
                    const std::unordered_map<int64_t, uint32_t>& passage_index);
  // The flat dense index's matrix when it holds one (built, not borrowed
  // from a segment); null for another kind or none.
  const FloatMatrix* PassageVectors() const;
  // graph_ from `rows`, abstractness from the flat index's matrix, else the
  // vectors an index holds (read in place), else `unindexed` (may be null: no passage vectors).
  Status BuildGraphFrom(KnowledgeGraph::Input&& rows, const FloatMatrix* unindexed = nullptr);
  // Append and Remove: a snapshot with previous's embedder and dense model
  // at the store's generation; Finished marks every part to be written.
  static Result<std::shared_ptr<Snapshot>> Successor(SnapshotSource& store,
                                                     const Snapshot& previous);
  static std::shared_ptr<const Snapshot> Finished(std::shared_ptr<Snapshot> snap,
                                                  std::chrono::steady_clock::time_point start,
                                                  SnapshotBuildStats* stats);

  std::shared_ptr<const SnapshotText> text_;
  std::shared_ptr<Embedder> embedder_;
  std::string dense_model_;
  // The dense index options it was built with (Append and Remove choose the
  // kind Build would).
  VectorIndexOptions vector_options_;
  std::shared_ptr<const KnowledgeGraph> graph_;
  // The graph rows (serialised, graph_io.h) when built `persistable`; they
  // may say fewer passages than the snapshot has (passages appended since,
  // without rows: ParseGraphRowsUpTo), corrected when written
  // (GraphRowsToWrite). Adopted from a segment, borrowed and verified at
  // their first use.
  std::shared_ptr<const GraphRowsBytes> graph_rows_;
  // The rows to write: their bytes, or (when they say fewer passages) a
  // copy corrected into `*corrected`. Corruption when they are damaged.
  Result<std::string_view> GraphRowsToWrite(std::string* corrected) const;
  // Append with previous's graph: previous's persistent derived values
  // (computed or not yet), which read only the graph.
  void ShareGraphDerived(const Snapshot& previous);
  SnapshotBuildStats stats_;

  // Parts to write back (PersistParts).
  mutable std::mutex persist_mu_;
  mutable bool persist_bm25_ = false, persist_passages_ = false, persist_hnsw_ = false,
               persist_rows_ = false, persist_vectors_ = false;
  mutable bool segment_written_ = false;

  struct DerivedEntry {
    std::once_flag once;
    std::shared_ptr<const void> value;
    std::atomic<bool> made{false};  // value set and not null
    std::atomic<bool> asked{false};  // a Derived call outside MakeForExport
  };
  using DerivedMap = std::map<const void*, std::shared_ptr<DerivedEntry>>;
  static std::shared_ptr<const void> DerivedIn(DerivedMap* map, std::mutex* mu, const void* tag,
                                               const std::function<std::shared_ptr<const void>()>& make);
  // p.make(*this) for ExportSegment: made and kept as a reader's call
  // would, but not marked asked (DerivedAsked).
  std::shared_ptr<const void> MakeForExport(const PersistentDerived& p) const;
  // The value of persistent entry `p` from segment_'s arrays, or null
  // (recording why in derived_errors_).
  std::shared_ptr<const void> Adopted(const PersistentDerived& p) const;

  mutable std::mutex derived_mu_;
  mutable DerivedMap derived_, entity_derived_;
  mutable std::vector<std::string> derived_errors_;  // guarded by derived_mu_
  std::vector<const PersistentDerived*> persistent_;
  // The segment this snapshot was opened from (null: built from the store).
  std::shared_ptr<const ArraySource> segment_;
};

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_SNAPSHOT_H_
