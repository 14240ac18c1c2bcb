#include "graph/snapshot.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <unordered_map>

#include "common/array_io.h"
#include "common/stopwatch.h"
#include "graph/graph_loader.h"
#include "graph/graph_vectors.h"
#include "graph/graph_rows_update.h"
#include "graph/snapshot_documents.h"
#include "graph/snapshot_segment.h"
#include "ingest/document.h"
#include "segment/segment_arrays.h"
#include "storage/store.h"
#include "vector/flat_index.h"
#include "vector/hnsw_index.h"
#include "vector/layered_index.h"

namespace flowrag {

SnapshotDocument MakeSnapshotDocument(int64_t id, std::string external_id, std::string title,
                                      std::string text) {
  struct Owned {
    std::string external_id, title, text;
    std::vector<uint32_t> page_breaks;
  };
  auto owned = std::make_shared<Owned>();
  owned->page_breaks = PageBreaks(text);
  owned->external_id = std::move(external_id);
  owned->title = std::move(title);
  owned->text = std::move(text);
  SnapshotDocument d;
  d.id = id;
  d.external_id = owned->external_id;
  d.title = owned->title;
  d.text = owned->text;
  d.page_breaks = owned->page_breaks;
  d.keep = std::move(owned);
  return d;
}
namespace {

using Clock = SteadyClock;

// Phase timings into SnapshotBuildStats::phase_seconds.
class Phases {
 public:
  explicit Phases(SnapshotBuildStats* stats) : stats_(stats) {}
  void Done(const char* name) {
    stats_->phase_seconds[name] = SecondsSince(start_);
    start_ = Clock::now();
  }

 private:
  SnapshotBuildStats* stats_;
  Clock::time_point start_ = Clock::now();
};

void Record(SnapshotBuildStats* stats, const char* part, const PartRead& read) {
  stats->parts[part] = read.state == PartState::kLoaded ? PartState::kLoaded : PartState::kRebuilt;
  if (read.state != PartState::kLoaded && read.state != PartState::kMissing) {
    stats->part_errors.push_back(std::string(part) + ": " + std::string(PartStateName(read.state)) +
                                 ": " + read.error);
  }
}

// Adds the documents and passages with ids above those `text` holds (all of
// them for an empty `text`); `passage_index` (when not null) maps the new
// passages' store ids to their snapshot indexes. Corruption for a passage of an unknown document
// or with offsets outside it; FailedPrecondition for a new passage of an
// old document (when `text` was not empty: not an append).
Status ReadDocuments(SnapshotSource& store, SnapshotText* text,
                     std::unordered_map<int64_t, uint32_t>* passage_index) {
  const int64_t last_document = text->documents.empty() ? 0 : text->documents.back().id;
  const int64_t last_passage = text->passages.empty() ? 0 : text->passages.back().id;
  const size_t first_new_document = text->documents.size();
  std::unordered_map<int64_t, uint32_t> doc_index;
  FLOWRAG_RETURN_IF_ERROR(store.ForEachDocument(
      [&](DocumentRow&& d) -> Status {
        doc_index.emplace(d.id, static_cast<uint32_t>(text->documents.size()));
        text->documents.push_back(MakeSnapshotDocument(d.id, std::move(d.external_id),
                                                       std::move(d.title), std::move(d.text)));
        return Status::Ok();
      },
      last_document));
  return store.ForEachPassage(
      [&](const PassageRow& p) -> Status {
        auto it = doc_index.find(p.document_id);
        if (it == doc_index.end()) {
          if (first_new_document > 0) {
            return Status::FailedPrecondition(store.path() + ": passage " + std::to_string(p.id) +
                                              " was added to an existing document");
          }
          return Status::Corruption(store.path() + ": passage " + std::to_string(p.id) +
                                    " refers to missing document " + std::to_string(p.document_id));
        }
        const std::string_view body = text->documents[it->second].text;
        if (p.begin > p.end || p.end > body.size()) {
          return Status::Corruption(store.path() + ": passage " + std::to_string(p.id) +
                                    " has offsets [" + std::to_string(p.begin) + ", " +
                                    std::to_string(p.end) + ") outside its document");
        }
        if (passage_index != nullptr) {
          passage_index->emplace(p.id, static_cast<uint32_t>(text->passages.size()));
        }
        text->passages.push_back({p.id, it->second, p.ordinal, p.begin, p.end});
        return Status::Ok();
      },
      last_passage);
}

std::string_view TextOf(const SnapshotText& text, uint32_t i) {
  const SnapshotPassage& p = text.passages[i];
  return CheckedText(text, text.documents[p.document].text.substr(p.begin, p.end - p.begin));
}

// Adds passages [from, end) to a BM25 builder.
void AddToBm25(const SnapshotText& text, uint32_t from, Bm25Index::Builder* builder) {
  for (uint32_t i = from; i < text.passages.size(); ++i) {
    builder->Add(
        PassageEmbedText(text.documents[text.passages[i].document].title, TextOf(text, i)));
  }
}

// One stored embedding per passage with a store id in `passage_index`, into
// rows [first_row, ...) of *vectors (zero rows where none; *missing counts
// them), rows in snapshot order. `vectors` may be empty (its width comes
// from the first vector) or already hold the earlier rows.
Status ReadPassageVectors(SnapshotSource& store, const std::string& model,
                          const std::unordered_map<int64_t, uint32_t>& passage_index,
                          int64_t after_id, size_t num_rows, FloatMatrix* vectors,
                          size_t* missing) {
  const size_t first_row = vectors->rows;
  if (vectors->cols > 0) {
    vectors->data.resize(num_rows * vectors->cols, 0.0f);
    vectors->rows = num_rows;
  }
  std::vector<bool> have(num_rows, false);
  FLOWRAG_RETURN_IF_ERROR(store.ForEachPassageEmbedding(
      model,
      [&](int64_t passage_id, std::span<const float> vector) -> Status {
        if (vectors->cols == 0) *vectors = FloatMatrix(num_rows, vector.size());
        if (vector.size() != vectors->cols) {
          return Status::Corruption(store.path() + ": the cached embedding of passage " +
                                    std::to_string(passage_id) + " has " +
                                    std::to_string(vector.size()) + " coordinates, expected " +
                                    std::to_string(vectors->cols) + " (the store is damaged)");
        }
        auto it = passage_index.find(passage_id);
        if (it == passage_index.end()) return Status::Ok();  // written meanwhile: Build retries
        std::copy(vector.begin(), vector.end(), vectors->row(it->second));
        have[it->second] = true;
        return Status::Ok();
      },
      after_id));
  for (size_t i = first_row; i < num_rows; ++i) *missing += !have[i];
  return Status::Ok();
}

// The dense index over `vectors`: a flat index takes the matrix over (it is
// held once); another kind copies it.
Result<std::unique_ptr<VectorIndex>> DenseIndex(FloatMatrix&& vectors,
                                                const VectorIndexOptions& options) {
  FLOWRAG_ASSIGN_OR_RETURN(auto index, MakeVectorIndex(vectors.cols, vectors.rows, options));
  if (const auto* empty = dynamic_cast<const FlatIndex*>(index.get())) {
    FLOWRAG_ASSIGN_OR_RETURN(auto flat,
                             FlatIndex::FromMatrix(std::move(vectors), empty->column_copy()));
    return std::unique_ptr<VectorIndex>(std::move(flat));
  }
  FLOWRAG_RETURN_IF_ERROR(index->Add(vectors));
  return index;
}

// True for an HNSW index, built (HnswIndex), adopted from a snapshot
// segment (HnswArraysIndex) or edited (a LayeredIndex over one of these).
bool IsHnsw(const VectorIndex* index) {
  if (const auto* layered = dynamic_cast<const LayeredIndex*>(index)) {
    return IsHnsw(&layered->base());
  }
  return dynamic_cast<const HnswIndex*>(index) != nullptr ||
         dynamic_cast<const HnswArraysIndex*>(index) != nullptr;
}

// The FlatIndex of `index` or of the base it is layered over; null for
// another kind.
const FlatIndex* FlatBase(const VectorIndex* index) {
  if (const auto* layered = dynamic_cast<const LayeredIndex*>(index)) {
    return FlatBase(&layered->base());
  }
  return dynamic_cast<const FlatIndex*>(index);
}

bool HoldsVectors(const VectorIndex& index) {
  return FlatBase(&index) != nullptr || IsHnsw(&index);
}

// KnowledgeGraph::Input::previous_rows of a graph over `rows` passages
// whose first `same` are an earlier graph's first `same`.
std::vector<uint32_t> RowsUpTo(size_t same, size_t rows) {
  std::vector<uint32_t> map(rows, KnowledgeGraph::kNoRow);
  for (size_t r = 0; r < same; ++r) map[r] = static_cast<uint32_t>(r);
  return map;
}

// KnowledgeGraph::Input::previous_rows of a graph over the passages of an
// earlier one not `removed`, in their order.
std::vector<uint32_t> KeptRows(const std::vector<bool>& removed) {
  std::vector<uint32_t> map;
  for (size_t r = 0; r < removed.size(); ++r) {
    if (!removed[r]) map.push_back(static_cast<uint32_t>(r));
  }
  return map;
}

// The vectors an index that holds them (HoldsVectors) holds, as the matrix
// they were added from.
FloatMatrix VectorsOf(const VectorIndex& index) {
  if (const auto* layered = dynamic_cast<const LayeredIndex*>(&index)) return layered->Vectors();
  FloatMatrix m(index.Size(), index.Dimension());
  for (uint32_t i = 0; i < m.rows; ++i) CopyStoredVector(index, i, m.row(i));
  return m;
}

// True when HNSW index `index` was built with `options`' M, efConstruction
// and seed (so Load + Add continues it as a build would).
template <class H>
bool BuiltWith(const H& index, const VectorIndexOptions& options) {
  return index.m() == options.hnsw_m && index.ef_construction() == options.hnsw_ef_construction &&
         index.seed() == options.seed;
}

bool HnswBuiltWith(const VectorIndex* index, const VectorIndexOptions& options) {
  if (const auto* layered = dynamic_cast<const LayeredIndex*>(index)) {
    return HnswBuiltWith(&layered->base(), options);
  }
  if (const auto* hnsw = dynamic_cast<const HnswIndex*>(index)) return BuiltWith(*hnsw, options);
  if (const auto* adopted = dynamic_cast<const HnswArraysIndex*>(index)) {
    return BuiltWith(*adopted, options);
  }
  return false;
}

// True when the passage index `old` takes edits as a LayeredIndex (an
// insert or delete in O(change)) for `rows` passages: an HNSW index built
// with `options`' parameters, or a FlatIndex with int8 columns, where
// `options` choose that kind.
bool EditsInPlace(const VectorIndexOptions& options, size_t rows, const VectorIndex* old) {
  if (ChoosesHnsw(options, rows)) return HnswBuiltWith(old, options);
  const FlatIndex* flat = FlatBase(old);
  return ChoosesInt8Columns(options, rows) && flat != nullptr &&
         flat->column_copy() == FlatIndex::ColumnCopy::kInt8;
}

// `index`, or the index built again from its vectors once its edits pass
// options.hnsw_fold_rows (VectorIndexOptions): a query scans the appended
// rows and walks past the deleted ones, so the write that passes the bound
// pays the build.
Result<std::shared_ptr<const VectorIndex>> FoldedWhenEdited(std::unique_ptr<LayeredIndex> index,
                                                            const VectorIndexOptions& options) {
  const size_t bound = std::max(options.hnsw_fold_rows, index->Size() / 8);
  if (index->appended() <= options.hnsw_fold_rows && index->EditedRows() <= bound) {
    return std::shared_ptr<const VectorIndex>(std::move(index));
  }
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<VectorIndex> built,
                           DenseIndex(index->Vectors(), options));
  return std::shared_ptr<const VectorIndex>(std::move(built));
}

// The dense index over the vectors of `old` (flat or HNSW, may be null) and
// of the passages in `passage_index` (store ids above `after_id`, snapshot
// indexes first_new..num_rows-1), of the kind `options` chooses for num_rows
// vectors: an index that takes edits in place (EditsInPlace: HNSW, int8
// columns) gets the new rows as appended rows of a LayeredIndex over the
// same base (O(new rows), no copy), folded by
// FoldedWhenEdited; otherwise the index is built from all rows, as Build
// would. Null when no passage has a vector.
Result<std::shared_ptr<const VectorIndex>> ExtendedDenseIndex(
    SnapshotSource& store, const std::string& model, const VectorIndexOptions& options,
    const std::shared_ptr<const VectorIndex>& old,
    const std::unordered_map<int64_t, uint32_t>& passage_index, int64_t after_id, size_t first_new,
    size_t num_rows, size_t* missing) {
  if (EditsInPlace(options, num_rows, old.get())) {
    std::unordered_map<int64_t, uint32_t> new_rows;
    for (const auto& [id, row] : passage_index) {
      new_rows.emplace(id, static_cast<uint32_t>(row - first_new));
    }
    FloatMatrix added(0, old->Dimension());
    FLOWRAG_RETURN_IF_ERROR(ReadPassageVectors(store, model, new_rows, after_id,
                                               num_rows - first_new, &added, missing));
    FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<LayeredIndex> layered, LayeredIndex::Of(old));
    FLOWRAG_ASSIGN_OR_RETURN(layered, layered->With(added));
    return FoldedWhenEdited(std::move(layered), options);
  }
  FloatMatrix vectors;
  const auto* flat = dynamic_cast<const FlatIndex*>(old.get());
  if (flat != nullptr && flat->holds_floats()) {
    vectors = flat->matrix();
  } else if (old != nullptr && HoldsVectors(*old)) {  // HNSW, packed rows, or layered edits
    vectors = VectorsOf(*old);
  }
  FLOWRAG_RETURN_IF_ERROR(
      ReadPassageVectors(store, model, passage_index, after_id, num_rows, &vectors, missing));
  if (vectors.cols == 0) return std::shared_ptr<const VectorIndex>();
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<VectorIndex> built,
                           DenseIndex(std::move(vectors), options));
  return std::shared_ptr<const VectorIndex>(std::move(built));
}

}  // namespace

std::string_view Snapshot::PassageText(uint32_t i) const { return TextOf(*text_, i); }

std::string_view Snapshot::DocumentText(uint32_t d) const {
  return CheckedText(*text_, text_->documents[d].text);
}

const FloatMatrix* Snapshot::PassageVectors() const {
  const auto* flat = dynamic_cast<const FlatIndex*>(text_->dense.get());
  // A borrowed or packed index has no matrix: matrix() would copy every vector.
  return flat != nullptr && !flat->borrowed() && flat->holds_floats() ? &flat->matrix() : nullptr;
}

Result<std::shared_ptr<const Snapshot>> Snapshot::Build(SnapshotSource& store,
                                                        std::shared_ptr<Embedder> embedder,
                                                        const SnapshotOptions& options,
                                                        SnapshotBuildStats* stats) {
  // Parts belong to one generation and rows are read table by table: when
  // another process writes meanwhile, build again (the last try from rows
  // only, as a snapshot always was).
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    const auto start = Clock::now();
    auto snap = std::shared_ptr<Snapshot>(new Snapshot());
    snap->embedder_ = embedder;
    snap->dense_model_ = options.dense_model;
    snap->vector_options_ = options.vector;
    snap->persistent_ = options.derived;
    FLOWRAG_ASSIGN_OR_RETURN(snap->stats_.generation, store.Generation());
    FLOWRAG_RETURN_IF_ERROR(
        snap->BuildAt(store, options, options.use_parts && attempt < kAttempts));
    FLOWRAG_ASSIGN_OR_RETURN(int64_t after, store.Generation());
    if (after != snap->stats_.generation && attempt < kAttempts) continue;
    snap->stats_.seconds = SecondsSince(start);
    if (stats != nullptr) *stats = snap->stats_;
    return std::shared_ptr<const Snapshot>(std::move(snap));
  }
}

Status Snapshot::BuildAt(SnapshotSource& store, const SnapshotOptions& options, bool use_parts) {
  std::unordered_map<int64_t, uint32_t> passage_index;
  const Snapshot* same = options.same_text.get();
  const bool same_generation =
      options.same_text_generation < 0 || options.same_text_generation == stats_.generation;
  if (same != nullptr && same_generation && same->dense_model_ == dense_model_ &&
      same->text_->bm25.tokenizer().language == options.language) {
    text_ = same->text_;
    for (uint32_t i = 0; i < text_->passages.size(); ++i)
      passage_index.emplace(text_->passages[i].id, i);
    stats_.passages_without_vectors = text_->passages_without_vectors;
    // Parts are tied to a generation: the same content is written again.
    persist_bm25_ = persist_passages_ = persist_hnsw_ = options.persistable;
  } else {
    if (use_parts) {
      FLOWRAG_ASSIGN_OR_RETURN(bool adopted, TryAdoptSegment(store, options));
      if (adopted) return Status::Ok();
    }
    FLOWRAG_RETURN_IF_ERROR(ReadText(store, options, use_parts, &passage_index));
  }
  return BuildGraph(store, options, use_parts, passage_index);
}

namespace {

// Starts a thread that verifies ahead the sections of `segment` that an
// open adopts (SegmentReader::VerifyAhead) until `stop` is set: not the
// derived values' sections, adopted at their first use, nor the graph rows
// (verified at a write's first use), nor the arrays borrowed lazily (the
// vector indexes', the graph's, BM25's postings, the documents' texts:
// verified as queries read them). Not joinable for a source that is no segment.
std::thread VerifyAheadOf(const ArraySource& segment, const SnapshotOptions& options,
                          const std::atomic<bool>& stop) {
  const auto* source = dynamic_cast<const SegmentArraySource*>(&segment);
  if (source == nullptr) return std::thread();
  std::vector<std::string> lazy = LazyGraphVectorArrays("gv");
  for (std::string& name : FlatIndex::LazyArrays("dense")) lazy.push_back(std::move(name));
  for (std::string& name : KnowledgeGraph::LazyArrays()) lazy.push_back(std::move(name));
  for (std::string& name : Bm25Index::LazyArrays()) lazy.push_back(std::move(name));
  for (std::string& name : LazySnapshotDocumentArrays()) lazy.push_back(std::move(name));
  lazy.emplace_back("rows");
  auto wanted = [&options, lazy = std::move(lazy)](std::string_view name) {
    if (std::find(lazy.begin(), lazy.end(), name) != lazy.end()) return false;
    for (const PersistentDerived* p : options.derived) {
      if (name.size() > p->name.size() && name.starts_with(p->name) &&
          name[p->name.size()] == '.') {
        return false;
      }
    }
    return true;
  };
  return std::thread([&reader = source->reader(), &stop, wanted] {
    reader.VerifyAhead(stop, wanted);
  });
}

}  // namespace

// Three threads: one verifies the sections ahead (each is verified once,
// by whichever thread reaches it first), one adopts the graph side, and
// this one reads the documents from the store and adopts the text side.
Status Snapshot::AdoptSegmentInParallel(SnapshotSource& store, const ArraySource& segment,
                                        const SnapshotOptions& options, Status* adopted) {
  const Result<size_t> passages = AdoptableSegmentPassages(segment, options);
  if (!passages.ok()) {
    *adopted = passages.status();
    return Status::Ok();
  }
  const auto start = Clock::now();
  std::atomic<bool> adopted_all{false};
  std::thread verifier = VerifyAheadOf(segment, options, adopted_all);
  Status graph_adopted;
  std::thread graph([&] { graph_adopted = AdoptSegmentGraph(segment, options, *passages); });
  auto text = std::make_shared<SnapshotText>();
  // The documents from the segment, or (one written before it kept them)
  // from the store; no passage index: an adopted snapshot builds nothing
  // that needs one.
  Status read;
  if (HasSnapshotDocuments(segment)) {
    *adopted = AdoptSnapshotDocuments(segment, text.get());
  } else {
    read = ReadDocuments(store, text.get(), nullptr);
  }
  stats_.phase_seconds["documents"] = SecondsSince(start);
  if (read.ok() && adopted->ok() && text->passages.size() != *passages) {
    *adopted = Status::Corruption("segment of " + std::to_string(*passages) +
                                  " passages, store has " + std::to_string(text->passages.size()));
  } else if (read.ok() && adopted->ok()) {
    *adopted = AdoptSegmentText(segment, options, std::move(text));
  }
  graph.join();
  adopted_all = true;
  if (verifier.joinable()) verifier.join();
  if (adopted->ok()) *adopted = graph_adopted;
  return read;
}

Result<bool> Snapshot::TryAdoptSegment(SnapshotSource& store, const SnapshotOptions& options) {
  const std::string dir = store.SegmentDirectory();
  if (dir.empty()) return false;
  std::string why;
  std::shared_ptr<const ArraySource> segment = FindSnapshotSegment(dir, stats_.generation, &why);
  if (segment == nullptr) {
    stats_.parts[kSnapshotSegmentKind] = PartState::kMissing;
    stats_.part_errors.push_back(std::string(kSnapshotSegmentKind) + ": " + why);
    return false;
  }
  Phases phase(&stats_);
  Status adopted;
  FLOWRAG_RETURN_IF_ERROR(AdoptSegmentInParallel(store, *segment, options, &adopted));
  if (!adopted.ok()) {
    text_.reset();
    graph_.reset();
    graph_rows_.reset();
    stats_.parts[kSnapshotSegmentKind] =
        adopted.code() == StatusCode::kFailedPrecondition ? PartState::kStale : PartState::kCorrupt;
    stats_.part_errors.push_back(std::string(kSnapshotSegmentKind) + ": " + adopted.ToString());
    return false;
  }
  segment_ = std::move(segment);
  stats_.parts[kSnapshotSegmentKind] = PartState::kLoaded;
  phase.Done("segment");
  return true;
}

Status Snapshot::ReadText(SnapshotSource& store, const SnapshotOptions& options, bool use_parts,
                          std::unordered_map<int64_t, uint32_t>* passage_index) {
  const int64_t generation = stats_.generation;
  Phases phase(&stats_);
  auto text = std::make_shared<SnapshotText>();
  FLOWRAG_RETURN_IF_ERROR(ReadDocuments(store, text.get(), passage_index));
  phase.Done("documents");

  // BM25: the persisted postings, else the passage texts tokenised.
  PartRead bm25_read;
  std::optional<Bm25Index> bm25;
  TokenizerOptions tokenizer;
  tokenizer.language = options.language;
  if (use_parts)
    bm25 = ReadBm25Part(store, generation, text->passages.size(), &bm25_read, tokenizer);
  if (bm25) {
    text->bm25 = LayeredBm25(std::move(*bm25));
  } else {
    Bm25Index::Builder builder(tokenizer);
    AddToBm25(*text, 0, &builder);
    text->bm25 = LayeredBm25(std::move(builder).Build());
    persist_bm25_ = options.persistable;
  }
  Record(&stats_, kBm25Part, bm25_read);
  phase.Done("bm25");

  // The dense index: of hnsw_threshold passages and more, the persisted
  // HNSW index (it holds the vectors: nothing else is read); else the
  // vectors, from the persisted matrix or one embedding row per passage,
  // indexed.
  const size_t P = text->passages.size();
  if (!options.dense_model.empty() && P > 0) {
    const bool hnsw = ChoosesHnsw(options.vector, P);
    PartRead hnsw_read;
    if (hnsw && use_parts) {
      const size_t dim = embedder_ != nullptr ? embedder_->Dimension() : 0;
      text->dense = ReadPassageHnswPart(store, generation, options.dense_model, options.vector, P,
                                        dim, &text->passages_without_vectors, &hnsw_read);
      if (text->dense != nullptr) Record(&stats_, kPassageHnswPart, hnsw_read);
    }
    if (text->dense == nullptr) {
      PartRead vectors_read;
      std::optional<FloatMatrix> persisted;
      size_t persisted_missing = 0;  // only once the part is valid
      if (use_parts) {
        persisted = ReadPassageVectorsPart(store, generation, options.dense_model, P,
                                           &persisted_missing, &vectors_read);
      }
      FloatMatrix vectors;
      if (persisted) {
        vectors = std::move(*persisted);
        text->passages_without_vectors = persisted_missing;
      } else {
        FLOWRAG_RETURN_IF_ERROR(ReadPassageVectors(store, options.dense_model, *passage_index, 0, P,
                                                   &vectors, &text->passages_without_vectors));
      }
      if (vectors.cols > 0) {
        Record(&stats_, kPassageVectorsPart, vectors_read);
        if (hnsw) Record(&stats_, kPassageHnswPart, hnsw_read);
        FLOWRAG_ASSIGN_OR_RETURN(text->dense, DenseIndex(std::move(vectors), options.vector));
        persist_passages_ = !persisted && options.persistable;
        persist_hnsw_ = hnsw && options.persistable;
      }
    }
  }
  stats_.passages_without_vectors = text->passages_without_vectors;
  phase.Done("passage_vectors");
  text_ = std::move(text);
  return Status::Ok();
}

Status Snapshot::BuildGraph(SnapshotSource& store, const SnapshotOptions& options, bool use_parts,
                            const std::unordered_map<int64_t, uint32_t>& passage_index) {
  // The graph: persisted rows and vectors, else the tables (and the
  // embedder, reusing an earlier snapshot's vectors).
  const int64_t generation = stats_.generation;
  const auto graph_start = Clock::now();
  Phases phase(&stats_);
  const size_t P = text_->passages.size();
  PartRead rows_read, vectors_read;
  std::optional<KnowledgeGraph::Input> rows;
  if (use_parts && options.persistable) {
    // Kept as bytes too (Append extends them).
    if (std::optional<std::string> bytes = ReadGraphRowsPartBytes(store, generation, &rows_read)) {
      auto parsed = ParseGraphRows(*bytes, P);
      if (parsed.ok()) {
        rows = std::move(parsed).value();
        graph_rows_ = std::make_shared<const GraphRowsBytes>(std::move(*bytes));
      } else {
        rows_read = {PartState::kCorrupt, parsed.status().ToString()};
      }
    }
  } else if (use_parts) {
    rows = ReadGraphRowsPart(store, generation, P, &rows_read);
  }
  if (!rows) {
    FLOWRAG_ASSIGN_OR_RETURN(rows, LoadGraphRows(store, passage_index));
    if (options.persistable) {
      graph_rows_ = std::make_shared<const GraphRowsBytes>(SerializeGraphRows(*rows));
      persist_rows_ = true;
    }
  }
  Record(&stats_, kGraphRowsPart, rows_read);
  phase.Done("graph_rows");
  Embedder* graph_embedder = dense_model_.empty() ? nullptr : embedder_.get();
  if (!rows->entity_names.empty()) {
    std::optional<GraphVectors> vectors_part;
    // Vectors fit the rows they were persisted with: only with persisted rows.
    if (use_parts && graph_embedder != nullptr && rows_read.state == PartState::kLoaded) {
      vectors_part = ReadGraphVectorsPart(store, generation, *graph_embedder, *rows, &vectors_read);
    }
    if (vectors_part) {
      rows->vectors = std::make_shared<const GraphVectors>(std::move(*vectors_part));
    } else {
      GraphLoadOptions go;
      go.embedder = graph_embedder;
      go.vector = options.vector;
      // Only a snapshot that has graph vectors (it had a dense model, so a
      // graph embedder) can lend them: one built while the store's dense
      // model was another's (a concurrent run had just refitted the
      // embedder) has rows without vectors.
      if (options.previous != nullptr && options.previous->embedder() != nullptr &&
          !options.previous->dense_model().empty()) {
        go.previous = options.previous->graph();
        go.previous_model = options.previous->embedder()->ModelId();
      }
      FLOWRAG_ASSIGN_OR_RETURN(GraphVectors vectors,
                               LoadGraphVectors(store, *rows, go, &stats_.graph_texts_embedded));
      rows->vectors = std::make_shared<const GraphVectors>(std::move(vectors));
      persist_vectors_ =
          options.persistable && graph_embedder != nullptr && graph_embedder->IsLocal();
    }
    if (graph_embedder != nullptr && graph_embedder->IsLocal()) {
      Record(&stats_, kGraphVectorsPart, vectors_read);
    }
    phase.Done("graph_vectors");
    FloatMatrix unindexed;
    if (text_->dense != nullptr && !HoldsVectors(*text_->dense)) {
      // A dense index that keeps no vectors to read back: abstractness from
      // the rows.
      size_t missing = 0;
      FLOWRAG_RETURN_IF_ERROR(
          ReadPassageVectors(store, dense_model_, passage_index, 0, P, &unindexed, &missing));
    }
    const Snapshot* same = options.same_text.get();
    if (same != nullptr && same->text_ == text_ && same->graph_ != nullptr) {
      // The same passages with the same vectors: its abstractness holds
      // for every entity whose passages are the same.
      rows->previous = same->graph_.get();
      rows->previous_rows = RowsUpTo(P, P);
    }
    FLOWRAG_RETURN_IF_ERROR(BuildGraphFrom(std::move(*rows), &unindexed));
    rows.reset();  // what Build did not take
    phase.Done("graph_build");
  }
  stats_.graph_seconds = SecondsSince(graph_start);
  return Status::Ok();
}

Status Snapshot::BuildGraphFrom(KnowledgeGraph::Input&& rows, const FloatMatrix* unindexed) {
  const VectorIndex* dense = text_->dense.get();
  if (const FloatMatrix* matrix = PassageVectors()) {
    rows.passage_vectors = matrix;
  } else if (dense != nullptr && HoldsVectors(*dense)) {
    // An HNSW index's vectors, read in place, or packed rows decoded.
    rows.passage_vectors = PassageVectorRows(
        dense->Size(), dense->Dimension(),
        [dense](uint32_t p, float* scratch) { return StoredVector(*dense, p, scratch); });
  } else {
    rows.passage_vectors = unindexed;
  }
  FLOWRAG_ASSIGN_OR_RETURN(graph_, KnowledgeGraph::Build(std::move(rows)));
  return Status::Ok();
}

Result<std::shared_ptr<Snapshot>> Snapshot::Successor(SnapshotSource& store,
                                                      const Snapshot& previous) {
  auto snap = std::shared_ptr<Snapshot>(new Snapshot());
  snap->embedder_ = previous.embedder_;
  snap->dense_model_ = previous.dense_model_;
  snap->vector_options_ = previous.vector_options_;
  snap->persistent_ = previous.persistent_;
  FLOWRAG_ASSIGN_OR_RETURN(snap->stats_.generation, store.Generation());
  return snap;
}

std::shared_ptr<const Snapshot> Snapshot::Finished(std::shared_ptr<Snapshot> snap,
                                                   std::chrono::steady_clock::time_point start,
                                                   SnapshotBuildStats* stats) {
  // Everything it holds is of the new generation: every part is written.
  snap->persist_bm25_ = snap->persist_passages_ = snap->persist_hnsw_ = snap->persist_rows_ =
      snap->persist_vectors_ = true;
  snap->stats_.seconds = SecondsSince(start);
  if (stats != nullptr) *stats = snap->stats_;
  return snap;
}

Result<std::shared_ptr<const Snapshot>> Snapshot::Append(SnapshotSource& store,
                                                         const Snapshot& previous,
                                                         SnapshotBuildStats* stats,
                                                         bool known_appended) {
  const auto start = Clock::now();
  const std::shared_ptr<const VectorIndex>& old_dense = previous.text_->dense;
  if ((previous.graph_ != nullptr && previous.graph_rows_ == nullptr) ||
      (old_dense != nullptr && !HoldsVectors(*old_dense))) {
    return Status::FailedPrecondition("snapshot: cannot append to this snapshot");
  }
  FLOWRAG_ASSIGN_OR_RETURN(std::shared_ptr<Snapshot> snap, Successor(store, previous));
  Phases phase(&snap->stats_);

  // Documents and passages: the earlier ones, then the new rows.
  auto text = std::make_shared<SnapshotText>();
  text->documents = previous.text_->documents;
  text->document_bytes = previous.text_->document_bytes;
  text->passages = previous.text_->passages;
  text->passages_without_vectors = previous.text_->passages_without_vectors;
  const auto first_new = static_cast<uint32_t>(text->passages.size());
  const int64_t last_passage = text->passages.empty() ? 0 : text->passages.back().id;
  std::unordered_map<int64_t, uint32_t> passage_index;
  FLOWRAG_RETURN_IF_ERROR(ReadDocuments(store, text.get(), &passage_index));
  const auto P = static_cast<uint32_t>(text->passages.size());
  // Nothing removed meanwhile (ids only grow, so equal counts mean that).
  if (!known_appended) {
    FLOWRAG_ASSIGN_OR_RETURN(auto counts, store.CountDocumentsAndPassages());
    if (counts.first != static_cast<int64_t>(text->documents.size()) || counts.second != P) {
      return Status::FailedPrecondition("snapshot: documents were removed, not only appended");
    }
  }

  // BM25: the earlier postings, the new passages' as a layer after them.
  Bm25Index::Builder builder(previous.text_->bm25.tokenizer());
  AddToBm25(*text, first_new, &builder);
  text->bm25 = LayeredBm25::Appended(previous.text_->bm25, std::move(builder).Build());

  // Passage vectors: the earlier index with the new rows.
  if (!snap->dense_model_.empty() && P > 0) {
    FLOWRAG_ASSIGN_OR_RETURN(
        text->dense, ExtendedDenseIndex(store, snap->dense_model_, snap->vector_options_, old_dense,
                                        passage_index, last_passage, first_new, P,
                                        &text->passages_without_vectors));
  }
  snap->stats_.passages_without_vectors = text->passages_without_vectors;
  snap->text_ = std::move(text);

  // The graph: the earlier one when the new passages fall in its empty
  // slots, else the earlier rows over more passages with the earlier
  // vectors; and what was derived from its entities.
  {
    std::lock_guard<std::mutex> lock(previous.derived_mu_);
    snap->entity_derived_ = previous.entity_derived_;
  }
  snap->graph_rows_ = previous.graph_rows_;  // no new rows (their count is corrected on write)
  if (previous.graph_ != nullptr && PassageSlots(P) == previous.graph_->num_passages()) {
    snap->graph_ = previous.graph_;
    snap->ShareGraphDerived(previous);
  } else if (previous.graph_ != nullptr) {
    FLOWRAG_ASSIGN_OR_RETURN(std::string_view rows, previous.graph_rows_->Bytes());
    FLOWRAG_ASSIGN_OR_RETURN(KnowledgeGraph::Input in, ParseGraphRowsUpTo(rows, P));
    in.vectors = previous.graph_->vectors();
    in.previous = previous.graph_.get();
    in.previous_rows = RowsUpTo(first_new, P);
    FLOWRAG_RETURN_IF_ERROR(snap->BuildGraphFrom(std::move(in)));
  }
  phase.Done("append");
  return Finished(std::move(snap), start, stats);
}

namespace {

// The text side without the passages of document `doc`; the dense index
// of the kind `options` chooses for them: an index that takes edits in
// place (EditsInPlace) with the rows deleted, else built again from the
// kept vectors.
Result<std::shared_ptr<SnapshotText>> TextWithout(const SnapshotText& old, uint32_t doc,
                                                  const std::vector<bool>& removed,
                                                  const VectorIndexOptions& options) {
  auto text = std::make_shared<SnapshotText>();
  text->documents.reserve(old.documents.size() - 1);
  text->document_bytes = old.document_bytes;
  for (uint32_t d = 0; d < old.documents.size(); ++d) {
    if (d != doc) text->documents.push_back(old.documents[d]);
  }
  for (uint32_t p = 0; p < old.passages.size(); ++p) {
    if (removed[p]) continue;
    SnapshotPassage passage = old.passages[p];
    if (passage.document > doc) --passage.document;
    text->passages.push_back(passage);
  }
  text->bm25 = LayeredBm25::Without(old.bm25, removed);
  // As Build: no dense index without passages. An HNSW or int8 index that
  // stays one keeps its base with the rows deleted (LayeredIndex: no
  // rebuild).
  if (old.dense != nullptr && !text->passages.empty() &&
      EditsInPlace(options, text->passages.size(), old.dense.get())) {
    FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<LayeredIndex> layered, LayeredIndex::Of(old.dense));
    FLOWRAG_ASSIGN_OR_RETURN(layered, layered->Without(removed));
    FLOWRAG_ASSIGN_OR_RETURN(text->dense, FoldedWhenEdited(std::move(layered), options));
  } else if (old.dense != nullptr && !text->passages.empty()) {
    FloatMatrix kept(text->passages.size(), old.dense->Dimension());
    size_t row = 0;
    for (uint32_t p = 0; p < old.passages.size(); ++p) {
      if (!removed[p]) CopyStoredVector(*old.dense, p, kept.row(row++));
    }
    FLOWRAG_ASSIGN_OR_RETURN(text->dense, DenseIndex(std::move(kept), options));
  }
  return text;
}

}  // namespace

Result<std::shared_ptr<const Snapshot>> Snapshot::Remove(SnapshotSource& store,
                                                         const Snapshot& previous,
                                                         std::string_view document_id,
                                                         SnapshotBuildStats* stats) {
  const auto start = Clock::now();
  const SnapshotText& old = *previous.text_;
  Embedder* embedder = previous.dense_model_.empty() ? nullptr : previous.embedder_.get();
  if ((previous.graph_ != nullptr &&
       (previous.graph_rows_ == nullptr || embedder == nullptr || !embedder->IsLocal())) ||
      (old.dense != nullptr && !HoldsVectors(*old.dense)) || old.passages_without_vectors > 0) {
    return Status::FailedPrecondition("snapshot: cannot remove from this snapshot");
  }
  uint32_t doc = 0;
  while (doc < old.documents.size() && old.documents[doc].external_id != document_id) ++doc;
  if (doc == old.documents.size()) {
    return Status::FailedPrecondition("snapshot: no document " + std::string(document_id));
  }
  std::vector<bool> removed(old.passages.size(), false);
  size_t removed_passages = 0;
  for (uint32_t p = 0; p < old.passages.size(); ++p) {
    removed[p] = old.passages[p].document == doc;
    removed_passages += removed[p];
  }
  // Nothing else changed (the engine holds the write lock; another process
  // could have written meanwhile).
  FLOWRAG_ASSIGN_OR_RETURN(auto counts, store.CountDocumentsAndPassages());
  if (counts.first + 1 != static_cast<int64_t>(old.documents.size()) ||
      counts.second + static_cast<int64_t>(removed_passages) !=
          static_cast<int64_t>(old.passages.size())) {
    return Status::FailedPrecondition("snapshot: the store changed beyond the removal");
  }

  FLOWRAG_ASSIGN_OR_RETURN(std::shared_ptr<Snapshot> snap, Successor(store, previous));
  Phases phase(&snap->stats_);
  FLOWRAG_ASSIGN_OR_RETURN(auto text, TextWithout(old, doc, removed, snap->vector_options_));
  snap->text_ = std::move(text);
  phase.Done("text");

  if (previous.graph_ != nullptr) {
    FLOWRAG_ASSIGN_OR_RETURN(std::string_view rows_before, previous.graph_rows_->Bytes());
    FLOWRAG_ASSIGN_OR_RETURN(KnowledgeGraph::Input before,
                             ParseGraphRowsUpTo(rows_before, old.passages.size()));
    GraphRowsRemoval removal = RemovePassages(std::move(before), removed);
    KnowledgeGraph::Input& rows = removal.rows;
    // Canonical names are the store's to recompute: read them back.
    std::vector<int64_t> ids;
    for (uint32_t e : removal.touched) ids.push_back(rows.entity_ids[e]);
    FLOWRAG_ASSIGN_OR_RETURN(std::vector<GraphSource::EntityRow> current, store.EntitiesByIds(ids));
    if (current.size() != ids.size()) {
      return Status::FailedPrecondition("snapshot: entities changed beyond the removal");
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      rows.entity_names[removal.touched[i]] = std::move(current[i].name);
      rows.entity_types[removal.touched[i]] = std::move(current[i].type);
    }
    AssignFactTexts(&rows);
    phase.Done("graph_rows");
    snap->graph_rows_ = std::make_shared<const GraphRowsBytes>(SerializeGraphRows(rows));
    if (!rows.entity_names.empty()) {
      GraphLoadOptions go;
      go.embedder = embedder;
      if (!previous.dense_model().empty()) {  // it has graph vectors (see Build)
        go.previous = previous.graph_.get();
        go.previous_model = embedder->ModelId();
      }
      FLOWRAG_ASSIGN_OR_RETURN(
          GraphVectors vectors,
          LoadGraphVectors(store, rows, go, &snap->stats_.graph_texts_embedded));
      rows.vectors = std::make_shared<const GraphVectors>(std::move(vectors));
      phase.Done("graph_vectors");
      rows.previous = previous.graph_.get();
      rows.previous_rows = KeptRows(removed);
      FLOWRAG_RETURN_IF_ERROR(snap->BuildGraphFrom(std::move(rows)));
      phase.Done("graph_build");
    }
  }
  return Finished(std::move(snap), start, stats);
}

Result<size_t> Snapshot::PersistParts(SnapshotSource& store) const {
  std::lock_guard<std::mutex> lock(persist_mu_);
  const int64_t generation = stats_.generation;
  // A snapshot not opened from a segment writes one (from rows, or from the
  // parts of a store written before segments: its migration), once.
  const std::string dir = store.SegmentDirectory();
  if (!dir.empty() && segment_ == nullptr && !segment_written_ && FitsSegment()) {
    FLOWRAG_ASSIGN_OR_RETURN(bool published, WriteSnapshotSegment(*this, store, dir));
    if (!published) return 0;  // the store moved on, or another process writes
    segment_written_ = true;
    persist_bm25_ = persist_passages_ = persist_hnsw_ = persist_rows_ = persist_vectors_ = false;
    return 1;
  }
  // Opened from its segment: finish what a write stopped after its publish
  // left (garbage, the parts of a migrated store), once.
  if (!dir.empty() && segment_ != nullptr && !segment_written_) {
    FLOWRAG_ASSIGN_OR_RETURN(segment_written_, CompleteSnapshotSegment(store, dir, generation));
    return 0;
  }
  size_t written = 0;
  // Each write checks the store's generation itself; stop at the first
  // refusal (the store has moved on: a later snapshot writes its own).
  auto write = [&](bool* pending, const std::function<Result<bool>()>& put) -> Result<bool> {
    if (!*pending) return true;
    FLOWRAG_ASSIGN_OR_RETURN(bool ok, put());
    if (ok) {
      *pending = false;
      ++written;
    }
    return ok;
  };
  FLOWRAG_ASSIGN_OR_RETURN(bool ok, write(&persist_bm25_, [&] {
                             return WriteBm25Part(store, generation, *text_->bm25.Flat());
                           }));
  if (!ok) return written;
  const FloatMatrix* vectors = PassageVectors();
  FloatMatrix held;  // a borrowed or edited flat index's vectors, as a build holds them
  if (vectors == nullptr && persist_passages_ && text_->dense != nullptr &&
      !IsHnsw(text_->dense.get()) && HoldsVectors(*text_->dense)) {
    held = VectorsOf(*text_->dense);
    vectors = &held;
  }
  if (vectors == nullptr) persist_passages_ = false;
  FLOWRAG_ASSIGN_OR_RETURN(ok, write(&persist_passages_, [&] {
                             return WritePassageVectorsPart(store, generation, dense_model_,
                                                            *vectors,
                                                            text_->passages_without_vectors);
                           }));
  if (!ok) return written;
  const auto* hnsw = dynamic_cast<const HnswIndex*>(text_->dense.get());
  // An index adopted from a segment, for its part; an edited one built
  // again from its vectors (the part is what Build would make).
  std::unique_ptr<HnswIndex> converted;
  if (const auto* adopted = dynamic_cast<const HnswArraysIndex*>(text_->dense.get());
      adopted != nullptr && persist_hnsw_) {
    FLOWRAG_ASSIGN_OR_RETURN(converted, adopted->ToHnswIndex());
    hnsw = converted.get();
  } else if (const auto* layered = dynamic_cast<const LayeredIndex*>(text_->dense.get());
             layered != nullptr && persist_hnsw_) {
    FLOWRAG_ASSIGN_OR_RETURN(
        converted, HnswIndex::Create(layered->Dimension(), layered->Size(), vector_options_));
    FLOWRAG_RETURN_IF_ERROR(converted->Add(layered->Vectors()));
    hnsw = converted.get();
  }
  if (hnsw == nullptr) persist_hnsw_ = false;
  FLOWRAG_ASSIGN_OR_RETURN(ok, write(&persist_hnsw_, [&] {
                             return WritePassageHnswPart(store, generation, dense_model_, *hnsw,
                                                         text_->passages_without_vectors);
                           }));
  if (!ok) return written;
  if (graph_rows_ == nullptr) persist_rows_ = false;
  FLOWRAG_ASSIGN_OR_RETURN(ok, write(&persist_rows_, [&]() -> Result<bool> {
                             std::string corrected;
                             FLOWRAG_ASSIGN_OR_RETURN(std::string_view rows,
                                                      GraphRowsToWrite(&corrected));
                             return WriteGraphRowsPart(store, generation, rows);
                           }));
  if (!ok) return written;
  if (graph_ == nullptr || embedder_ == nullptr) persist_vectors_ = false;
  FLOWRAG_ASSIGN_OR_RETURN(ok, write(&persist_vectors_, [&] {
                             return WriteGraphVectorsPart(store, generation, *embedder_,
                                                          *graph_->vectors());
                           }));
  return written;
}

namespace {
// Set on the thread of ExportSegment while it makes a persistent value.
thread_local bool t_making_for_export = false;
}  // namespace

std::shared_ptr<const void> Snapshot::MakeForExport(const PersistentDerived& p) const {
  t_making_for_export = true;
  std::shared_ptr<const void> value = p.make(*this);
  t_making_for_export = false;
  return value;
}

std::shared_ptr<const void> Snapshot::DerivedIn(
    DerivedMap* map, std::mutex* mu, const void* tag,
    const std::function<std::shared_ptr<const void>()>& make) {
  std::shared_ptr<DerivedEntry> entry;
  {
    std::lock_guard<std::mutex> lock(*mu);
    auto& slot = (*map)[tag];
    if (!slot) slot = std::make_shared<DerivedEntry>();
    entry = slot;
  }
  if (!t_making_for_export) entry->asked.store(true, std::memory_order_relaxed);
  std::call_once(entry->once, [&] {
    entry->value = make();
    entry->made.store(entry->value != nullptr, std::memory_order_release);
  });
  if (entry->value == nullptr) {
    // Not kept: the next use tries again.
    std::lock_guard<std::mutex> lock(*mu);
    auto it = map->find(tag);
    if (it != map->end() && it->second == entry) map->erase(it);
  }
  return entry->value;
}

std::shared_ptr<const void> Snapshot::Derived(
    const void* tag, const std::function<std::shared_ptr<const void>()>& make) const {
  return DerivedIn(&derived_, &derived_mu_, tag, AdoptedOrMade(tag, make));
}

std::function<std::shared_ptr<const void>()> Snapshot::AdoptedOrMade(
    const void* tag, const std::function<std::shared_ptr<const void>()>& make) const {
  const PersistentDerived* persistent = nullptr;
  for (const PersistentDerived* p : persistent_) {
    if (p->tag == tag) persistent = p;
  }
  if (persistent == nullptr || segment_ == nullptr) return make;
  return [this, persistent, &make]() -> std::shared_ptr<const void> {
    std::shared_ptr<const void> adopted = Adopted(*persistent);
    return adopted != nullptr ? adopted : make();
  };
}

std::shared_ptr<const void> Snapshot::Adopted(const PersistentDerived& p) const {
  const std::string format_name = std::string(p.name) + ".format";
  std::string error;
  if (!segment_->Has(format_name)) {
    error = "absent";
  } else {
    Result<int64_t> format = segment_->GetScalar<int64_t>(format_name);
    if (!format.ok()) {
      error = format.status().ToString();
    } else if (*format != p.format) {
      error = "format " + std::to_string(*format) + ", not " + std::to_string(p.format);
    } else {
      Result<std::shared_ptr<const void>> value = p.adopt(*this, *segment_);
      if (value.ok() && *value != nullptr) return *value;
      error = value.ok() ? "nothing adopted" : value.status().ToString();
    }
  }
  std::lock_guard<std::mutex> lock(derived_mu_);
  derived_errors_.push_back(std::string(p.name) + ": " + error);
  return nullptr;
}

std::vector<std::string> Snapshot::DerivedErrors() const {
  std::lock_guard<std::mutex> lock(derived_mu_);
  return derived_errors_;
}

void Snapshot::MakePersistentDerivedLike(const Snapshot& like) const {
  for (const PersistentDerived* p : persistent_) {
    if (like.DerivedAsked(p->tag)) p->make(*this);
  }
}

bool Snapshot::DerivedAsked(const void* tag) const {
  std::lock_guard<std::mutex> lock(derived_mu_);
  auto it = derived_.find(tag);
  return it != derived_.end() && it->second->made.load(std::memory_order_acquire) &&
         it->second->asked.load(std::memory_order_relaxed);
}

bool Snapshot::DerivedReady(const void* tag) const {
  std::lock_guard<std::mutex> lock(derived_mu_);
  auto it = derived_.find(tag);
  return it != derived_.end() && it->second->made.load(std::memory_order_acquire);
}

void Snapshot::ShareGraphDerived(const Snapshot& previous) {
  std::scoped_lock lock(previous.derived_mu_, derived_mu_);
  for (const PersistentDerived* p : persistent_) {
    auto it = previous.derived_.find(p->tag);
    if (it != previous.derived_.end()) derived_[p->tag] = it->second;
  }
}

Result<std::string_view> Snapshot::GraphRowsToWrite(std::string* corrected) const {
  FLOWRAG_ASSIGN_OR_RETURN(std::string_view rows, graph_rows_->Bytes());
  if (GraphRowsPassageCount(rows) == num_passages()) return rows;
  *corrected = WithPassageCount(rows, num_passages());
  return std::string_view(*corrected);
}

std::shared_ptr<const void> Snapshot::DerivedFromEntities(
    const void* tag, const std::function<std::shared_ptr<const void>()>& make) const {
  return DerivedIn(&entity_derived_, &derived_mu_, tag, AdoptedOrMade(tag, make));
}

ScoredPassage Snapshot::Scored(uint32_t i, double score) const {
  const SnapshotPassage& p = text_->passages[i];
  const SnapshotDocument& d = text_->documents[p.document];
  ScoredPassage sp;
  sp.passage_id = p.id;
  sp.document_id = d.external_id;
  sp.title = d.title;
  sp.ordinal = p.ordinal;
  sp.begin = p.begin;
  sp.end = p.end;
  const PageSpan pages = PagesOfSpan(d.page_breaks, p.begin, p.end);
  sp.page_first = pages.first;
  sp.page_last = pages.last;
  sp.text = std::string(PassageText(i));
  sp.score = score;
  return sp;
}

}  // namespace flowrag
