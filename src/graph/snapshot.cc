#include "graph/snapshot.h"

#include <chrono>
#include <cstring>
#include <unordered_map>

#include "graph/graph_loader.h"
#include "storage/store.h"

namespace flowrag {

std::string_view Snapshot::PassageText(uint32_t i) const {
  const SnapshotPassage& p = passages_[i];
  return std::string_view(documents_[p.document].text).substr(p.begin, p.end - p.begin);
}

Result<std::shared_ptr<const Snapshot>> Snapshot::Build(Store& store,
                                                        std::shared_ptr<Embedder> embedder,
                                                        const SnapshotOptions& options,
                                                        SnapshotBuildStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  auto snap = std::shared_ptr<Snapshot>(new Snapshot());
  std::unordered_map<int64_t, uint32_t> doc_index;
  FLOWRAG_RETURN_IF_ERROR(store.ForEachDocument([&](DocumentRow&& d) -> Status {
    doc_index.emplace(d.id, static_cast<uint32_t>(snap->documents_.size()));
    snap->documents_.push_back({d.id, std::move(d.external_id), std::move(d.title), std::move(d.text)});
    return Status::Ok();
  }));
  std::unordered_map<int64_t, uint32_t> passage_index;
  Bm25Index::Builder bm25;
  FLOWRAG_RETURN_IF_ERROR(store.ForEachPassage([&](const PassageRow& p) -> Status {
    auto it = doc_index.find(p.document_id);
    if (it == doc_index.end()) {
      return Status::Corruption(store.path() + ": passage " + std::to_string(p.id) +
                                " refers to missing document " + std::to_string(p.document_id));
    }
    const std::string& text = snap->documents_[it->second].text;
    if (p.begin > p.end || p.end > text.size()) {
      return Status::Corruption(store.path() + ": passage " + std::to_string(p.id) +
                                " has offsets [" + std::to_string(p.begin) + ", " +
                                std::to_string(p.end) + ") outside its document");
    }
    passage_index.emplace(p.id, static_cast<uint32_t>(snap->passages_.size()));
    snap->passages_.push_back({p.id, it->second, p.ordinal, p.begin, p.end});
    bm25.Add(PassageEmbedText(snap->documents_[it->second].title,
                              snap->PassageText(snap->passages_.size() - 1)));
    return Status::Ok();
  }));
  snap->bm25_ = std::move(bm25).Build();
  snap->embedder_ = std::move(embedder);
  snap->dense_model_ = options.dense_model;

  size_t missing = 0;
  FloatMatrix vectors;  // passage embeddings, rows in snapshot order
  if (!options.dense_model.empty() && !snap->passages_.empty()) {
    // Vectors arrive in passage id order, which is also snapshot order.
    std::vector<bool> have(snap->passages_.size(), false);
    FLOWRAG_RETURN_IF_ERROR(store.ForEachPassageEmbedding(
        options.dense_model, [&](int64_t passage_id, std::string_view blob) -> Status {
          if (vectors.cols == 0) {
            vectors = FloatMatrix(snap->passages_.size(), blob.size() / sizeof(float));
          }
          if (blob.size() != vectors.cols * sizeof(float)) {
            return Status::Corruption(store.path() + ": embedding of passage " +
                                      std::to_string(passage_id) + " has " +
                                      std::to_string(blob.size() / sizeof(float)) +
                                      " dimensions, expected " + std::to_string(vectors.cols));
          }
          uint32_t i = passage_index.at(passage_id);
          std::memcpy(vectors.row(i), blob.data(), blob.size());
          have[i] = true;
          return Status::Ok();
        }));
    for (bool h : have) missing += !h;
    if (vectors.cols > 0) {
      FLOWRAG_ASSIGN_OR_RETURN(snap->dense_,
                               MakeVectorIndex(vectors.cols, vectors.rows, options.vector));
      FLOWRAG_RETURN_IF_ERROR(snap->dense_->Add(vectors));
    }
  }
  const auto graph_start = std::chrono::steady_clock::now();
  GraphLoadOptions go;
  if (!snap->dense_model_.empty()) go.embedder = snap->embedder_.get();
  FLOWRAG_ASSIGN_OR_RETURN(snap->graph_,
                           LoadKnowledgeGraph(store, passage_index, vectors, go));
  if (stats) {
    stats->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stats->passages_without_vectors = missing;
    stats->graph_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - graph_start).count();
  }
  return std::shared_ptr<const Snapshot>(std::move(snap));
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
