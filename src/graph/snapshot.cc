#include "graph/snapshot.h"

#include <chrono>
#include <cstring>
#include <unordered_map>

#include "graph/graph_loader.h"
#include "storage/store.h"
#include "vector/flat_index.h"

namespace flowrag {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// One stored embedding per passage (zero rows where none; *missing counts
// them), rows in snapshot order.
Status ReadPassageVectors(Store& store, const std::string& model,
                          const std::unordered_map<int64_t, uint32_t>& passage_index,
                          FloatMatrix* vectors, size_t* missing) {
  // Vectors arrive in passage id order, which is also snapshot order.
  std::vector<bool> have(passage_index.size(), false);
  FLOWRAG_RETURN_IF_ERROR(store.ForEachPassageEmbedding(
      model, [&](int64_t passage_id, std::string_view blob) -> Status {
        if (vectors->cols == 0) *vectors = FloatMatrix(have.size(), blob.size() / sizeof(float));
        if (blob.size() != vectors->cols * sizeof(float)) {
          return Status::Corruption(store.path() + ": embedding of passage " +
                                    std::to_string(passage_id) + " has " +
                                    std::to_string(blob.size() / sizeof(float)) +
                                    " dimensions, expected " + std::to_string(vectors->cols));
        }
        auto it = passage_index.find(passage_id);
        if (it == passage_index.end()) return Status::Ok();  // written meanwhile: Build retries
        std::memcpy(vectors->row(it->second), blob.data(), blob.size());
        have[it->second] = true;
        return Status::Ok();
      }));
  *missing = 0;
  for (bool h : have) *missing += !h;
  return Status::Ok();
}

void Record(SnapshotBuildStats* stats, const char* part, const PartRead& read) {
  stats->parts[part] = read.state == PartState::kLoaded ? PartState::kLoaded : PartState::kRebuilt;
  if (read.state != PartState::kLoaded && read.state != PartState::kMissing) {
    stats->part_errors.push_back(std::string(part) + ": " +
                                 std::string(PartStateName(read.state)) + ": " + read.error);
  }
}

}  // namespace

std::string_view Snapshot::PassageText(uint32_t i) const {
  const SnapshotPassage& p = passages_[i];
  return std::string_view(documents_[p.document].text).substr(p.begin, p.end - p.begin);
}

Result<std::shared_ptr<const Snapshot>> Snapshot::Build(Store& store,
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
    FLOWRAG_ASSIGN_OR_RETURN(snap->stats_.generation, store.Generation());
    FLOWRAG_RETURN_IF_ERROR(snap->BuildAt(store, options, options.use_parts && attempt < kAttempts));
    FLOWRAG_ASSIGN_OR_RETURN(int64_t after, store.Generation());
    if (after != snap->stats_.generation && attempt < kAttempts) continue;
    snap->stats_.seconds = SecondsSince(start);
    if (stats != nullptr) *stats = snap->stats_;
    return std::shared_ptr<const Snapshot>(std::move(snap));
  }
}

Status Snapshot::BuildAt(Store& store, const SnapshotOptions& options, bool use_parts) {
  const int64_t generation = stats_.generation;
  auto phase_start = Clock::now();
  auto phase = [&](const char* name) {
    stats_.phase_seconds[name] = SecondsSince(phase_start);
    phase_start = Clock::now();
  };
  std::unordered_map<int64_t, uint32_t> doc_index;
  FLOWRAG_RETURN_IF_ERROR(store.ForEachDocument([&](DocumentRow&& d) -> Status {
    doc_index.emplace(d.id, static_cast<uint32_t>(documents_.size()));
    documents_.push_back({d.id, std::move(d.external_id), std::move(d.title), std::move(d.text)});
    return Status::Ok();
  }));
  std::unordered_map<int64_t, uint32_t> passage_index;
  FLOWRAG_RETURN_IF_ERROR(store.ForEachPassage([&](const PassageRow& p) -> Status {
    auto it = doc_index.find(p.document_id);
    if (it == doc_index.end()) {
      return Status::Corruption(store.path() + ": passage " + std::to_string(p.id) +
                                " refers to missing document " + std::to_string(p.document_id));
    }
    const std::string& text = documents_[it->second].text;
    if (p.begin > p.end || p.end > text.size()) {
      return Status::Corruption(store.path() + ": passage " + std::to_string(p.id) +
                                " has offsets [" + std::to_string(p.begin) + ", " +
                                std::to_string(p.end) + ") outside its document");
    }
    passage_index.emplace(p.id, static_cast<uint32_t>(passages_.size()));
    passages_.push_back({p.id, it->second, p.ordinal, p.begin, p.end});
    return Status::Ok();
  }));
  phase("documents");

  // BM25: the persisted postings, else the passage texts tokenised.
  PartRead bm25_read;
  std::optional<Bm25Index> bm25;
  if (use_parts) bm25 = ReadBm25Part(store, generation, passages_.size(), &bm25_read);
  if (bm25) {
    bm25_ = std::move(*bm25);
  } else {
    Bm25Index::Builder builder;
    for (uint32_t i = 0; i < passages_.size(); ++i) {
      builder.Add(PassageEmbedText(documents_[passages_[i].document].title, PassageText(i)));
    }
    bm25_ = std::move(builder).Build();
    persist_bm25_ = options.persistable;
  }
  Record(&stats_, kBm25Part, bm25_read);
  phase("bm25");

  // Passage vectors: the persisted matrix, else one embedding row per
  // passage. A flat index takes the matrix over (it is held once); another
  // kind copies it, and the copy lives until the graph has its abstractness.
  size_t missing = 0;
  FloatMatrix vectors;  // rows in snapshot order
  const FloatMatrix* passage_vectors = &vectors;
  if (!options.dense_model.empty() && !passages_.empty()) {
    PartRead vectors_read;
    std::optional<FloatMatrix> persisted;
    if (use_parts) {
      persisted = ReadPassageVectorsPart(store, generation, options.dense_model, passages_.size(),
                                         &missing, &vectors_read);
    }
    if (persisted) {
      vectors = std::move(*persisted);
    } else {
      FLOWRAG_RETURN_IF_ERROR(ReadPassageVectors(store, options.dense_model, passage_index, &vectors,
                                                 &missing));
    }
    if (vectors.cols > 0) {
      Record(&stats_, kPassageVectorsPart, vectors_read);
      FLOWRAG_ASSIGN_OR_RETURN(dense_, MakeVectorIndex(vectors.cols, vectors.rows, options.vector));
      if (dense_->Kind() == "flat") {
        FLOWRAG_ASSIGN_OR_RETURN(auto flat, FlatIndex::FromMatrix(std::move(vectors)));
        passage_vectors = &flat->matrix();
        dense_ = std::move(flat);
        persist_passages_ = !persisted && options.persistable;
      } else {
        FLOWRAG_RETURN_IF_ERROR(dense_->Add(vectors));
      }
    }
  }
  stats_.passages_without_vectors = missing;
  phase("passage_vectors");

  // The graph: persisted rows and vectors, else the tables (and the
  // embedder, reusing an earlier snapshot's vectors).
  const auto graph_start = Clock::now();
  PartRead rows_read, vectors_read;
  std::optional<KnowledgeGraph::Input> rows;
  if (use_parts) rows = ReadGraphRowsPart(store, generation, passages_.size(), &rows_read);
  if (!rows) {
    FLOWRAG_ASSIGN_OR_RETURN(rows, LoadGraphRows(store, passage_index));
    if (options.persistable) pending_graph_rows_ = SerializeGraphRows(*rows);
  }
  Record(&stats_, kGraphRowsPart, rows_read);
  phase("graph_rows");
  Embedder* graph_embedder = dense_model_.empty() ? nullptr : embedder_.get();
  if (!rows->entity_names.empty()) {
    std::optional<GraphVectors> vectors_part;
    // Vectors fit the rows they were persisted with: only with persisted rows.
    if (use_parts && graph_embedder != nullptr && rows_read.state == PartState::kLoaded) {
      vectors_part = ReadGraphVectorsPart(store, generation, *graph_embedder, *rows, &vectors_read);
    }
    if (vectors_part) {
      rows->vectors = std::move(*vectors_part);
    } else {
      GraphLoadOptions go;
      go.embedder = graph_embedder;
      go.vector = options.vector;
      if (options.previous != nullptr && options.previous->embedder() != nullptr) {
        go.previous = options.previous->graph();
        go.previous_model = options.previous->embedder()->ModelId();
      }
      FLOWRAG_ASSIGN_OR_RETURN(rows->vectors,
                               LoadGraphVectors(store, *rows, go, &stats_.graph_texts_embedded));
      persist_vectors_ = options.persistable && graph_embedder != nullptr &&
                         graph_embedder->IsLocal();
    }
    if (graph_embedder != nullptr && graph_embedder->IsLocal()) {
      Record(&stats_, kGraphVectorsPart, vectors_read);
    }
    phase("graph_vectors");
    rows->passage_vectors = passage_vectors;
    FLOWRAG_ASSIGN_OR_RETURN(graph_, KnowledgeGraph::Build(std::move(*rows)));
    rows.reset();  // what Build did not take
    phase("graph_build");
  }
  stats_.graph_seconds = SecondsSince(graph_start);
  return Status::Ok();
}

Result<size_t> Snapshot::PersistParts(Store& store) const {
  std::lock_guard<std::mutex> lock(persist_mu_);
  const int64_t generation = stats_.generation;
  size_t written = 0;
  // Each write checks the store's generation itself; stop at the first
  // refusal (the store has moved on: a later snapshot writes its own).
  if (persist_bm25_) {
    FLOWRAG_ASSIGN_OR_RETURN(bool ok, WriteBm25Part(store, generation, bm25_));
    if (!ok) return written;
    persist_bm25_ = false;
    ++written;
  }
  if (!pending_graph_rows_.empty()) {
    FLOWRAG_ASSIGN_OR_RETURN(bool ok, WriteGraphRowsPart(store, generation, pending_graph_rows_));
    if (!ok) return written;
    std::string().swap(pending_graph_rows_);
    ++written;
  }
  const auto* flat = dynamic_cast<const FlatIndex*>(dense_.get());
  if (persist_passages_ && flat != nullptr) {
    FLOWRAG_ASSIGN_OR_RETURN(bool ok, WritePassageVectorsPart(store, generation, dense_model_,
                                                              flat->matrix(),
                                                              stats_.passages_without_vectors));
    if (!ok) return written;
    persist_passages_ = false;
    ++written;
  }
  if (persist_vectors_ && graph_ != nullptr && embedder_ != nullptr) {
    FLOWRAG_ASSIGN_OR_RETURN(bool ok,
                             WriteGraphVectorsPart(store, generation, *embedder_, graph_->vectors()));
    if (!ok) return written;
    persist_vectors_ = false;
    ++written;
  }
  return written;
}

std::shared_ptr<const void> Snapshot::Derived(
    const void* tag, const std::function<std::shared_ptr<const void>()>& make) const {
  std::shared_ptr<DerivedEntry> entry;
  {
    std::lock_guard<std::mutex> lock(derived_mu_);
    auto& slot = derived_[tag];
    if (!slot) slot = std::make_shared<DerivedEntry>();
    entry = slot;
  }
  std::call_once(entry->once, [&] { entry->value = make(); });
  return entry->value;
}

ScoredPassage Snapshot::Scored(uint32_t i, double score) const {
  const SnapshotPassage& p = passages_[i];
  const SnapshotDocument& d = documents_[p.document];
  ScoredPassage sp;
  sp.passage_id = p.id;
  sp.document_id = d.external_id;
  sp.title = d.title;
  sp.ordinal = p.ordinal;
  sp.begin = p.begin;
  sp.end = p.end;
  sp.text = std::string(PassageText(i));
  sp.score = score;
  return sp;
}

}  // namespace flowrag
