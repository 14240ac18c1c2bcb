#include "graph/snapshot_segment.h"

#include "graph/snapshot_documents.h"

#include <atomic>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "graph/graph_io.h"
#include "segment/segment_arrays.h"
#include "segment/segment_set.h"
#include "segment/segment_writer.h"
#include "vector/flat_index.h"
#include "vector/hnsw_index.h"
#include "vector/layered_index.h"

namespace flowrag {

namespace {

// The keys a segment is valid under, as the running code computes them for
// a snapshot of this configuration (graph_io.h's part keys).
std::map<std::string, std::string> KeysFor(Embedder* embedder, const std::string& dense_model,
                                           const std::string& language) {
  TokenizerOptions tokenizer;
  tokenizer.language = language;
  std::map<std::string, std::string> keys;
  keys["snap.k.bm25"] = Bm25PartKey(tokenizer);
  keys["snap.k.rows"] = GraphRowsPartKey();
  keys["snap.k.dense"] = dense_model;
  // The vectors' layout is in the key too: a segment whose graph vectors
  // another format wrote is rebuilt, as a part of that format would be.
  keys["snap.k.vec"] = (embedder != nullptr && !dense_model.empty() && embedder->IsLocal()
                            ? GraphVectorsPartKey(*embedder) + ":"
                            : std::string()) +
                       "arrays-" + std::to_string(kGraphVectorsArraysFormat);
  return keys;
}

Status PutString(ArraySink& sink, std::string_view name, std::string_view value) {
  return sink.Put<char>(name, std::span<const char>(value.data(), value.size()));
}

Result<std::string> GetString(const ArraySource& source, std::string_view name) {
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<char> bytes, source.Get<char>(name));
  return std::string(bytes.begin(), bytes.end());
}

// The adopted vectors answer for the graph's texts, in the embedder's space:
// a search returns ids below the graph's counts, and a dot product reads
// only dimensions the query has.
Status CheckVectorsFit(const KnowledgeGraph& g, const Embedder* embedder) {
  const GraphVectors& v = *g.vectors();
  const size_t dim = embedder != nullptr ? embedder->Dimension() : 0;
  auto rows_fit = [&](const SparseRows& rows, size_t count) {
    return rows.rows() == 0 || (rows.rows() == count && rows.cols == dim);
  };
  auto index_fits = [&](const VectorIndex* index, size_t count) {
    return index == nullptr || (index->Size() == count && index->Dimension() == dim);
  };
  if (!rows_fit(v.entity_rows, g.num_entities()) || !rows_fit(v.relation_rows, g.num_relations()) ||
      !index_fits(v.entity_index.get(), g.num_entities()) ||
      !index_fits(v.description_index.get(), g.num_descriptions()) ||
      !index_fits(v.fact_index.get(), g.num_fact_texts())) {
    return Status::Corruption("segment: the graph vectors do not fit the graph or the embedder");
  }
  return Status::Ok();
}

}  // namespace

std::shared_ptr<const ArraySource> FindSnapshotSegment(const std::string& dir, int64_t generation,
                                                       std::string* why) {
  if (dir.empty()) {
    *why = "the store keeps no segments";
    return nullptr;
  }
  SegmentSetOptions options;
  options.writable = false;
  Result<std::unique_ptr<SegmentSet>> set = SegmentSet::Open(dir, options);
  if (!set.ok()) {
    *why = set.status().ToString();
    return nullptr;
  }
  std::shared_ptr<const SegmentView> view = (*set)->Current();
  for (const LiveSegment& segment : view->segments()) {
    if (segment.record.kind != kSnapshotSegmentKind) continue;
    if (Status damage = SegmentDamageOf(segment.reader->path()); !damage.ok()) {
      *why = "found damaged by a query: " + damage.ToString();
      return nullptr;
    }
    if (view->generation() != generation || segment.reader->info().generation != generation) {
      *why = "segment of generation " + std::to_string(segment.reader->info().generation) +
             ", store at " + std::to_string(generation);
      return nullptr;
    }
    return std::make_shared<SegmentArraySource>(segment.reader);
  }
  *why = "no snapshot segment";
  return nullptr;
}

namespace {

// A passage index's arrays under "dense": its own, or a layered index's
// base and edits (vector/layered_index.h).
Status ExportDense(const VectorIndex& dense, ArraySink& sink) {
  if (const auto* flat = dynamic_cast<const FlatIndex*>(&dense)) {
    return flat->ExportArrays(sink, "dense");
  }
  if (const auto* hnsw = dynamic_cast<const HnswIndex*>(&dense)) {
    return hnsw->ExportArrays(sink, "dense");
  }
  if (const auto* adopted = dynamic_cast<const HnswArraysIndex*>(&dense)) {
    return adopted->ExportArrays(sink, "dense");
  }
  if (const auto* layered = dynamic_cast<const LayeredIndex*>(&dense)) {
    FLOWRAG_RETURN_IF_ERROR(ExportDense(layered->base(), sink));
    return layered->ExportEdits(sink, "dense");
  }
  return Status::Ok();  // another kind is not kept: an open derives it again
}

}  // namespace

bool Snapshot::FitsSegment() const {
  return graph_ == nullptr || ExportableGraphVectors(*graph_->vectors());
}

Status Snapshot::ExportSegment(ArraySink& sink) const {
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<int64_t>("snap.format", kSnapshotSegmentFormat));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<int64_t>("snap.gen", stats_.generation));
  FLOWRAG_RETURN_IF_ERROR(
      sink.PutScalar<int64_t>("snap.passages", static_cast<int64_t>(num_passages())));
  for (const auto& [name, key] :
       KeysFor(embedder_.get(), dense_model_, text_->bm25.tokenizer().language)) {
    FLOWRAG_RETURN_IF_ERROR(PutString(sink, name, key));
  }
  FLOWRAG_RETURN_IF_ERROR(ExportSnapshotDocuments(*text_, sink));
  FLOWRAG_RETURN_IF_ERROR(text_->bm25.Flat()->ExportArrays(sink));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<int64_t>(
      "dense.missing", static_cast<int64_t>(text_->passages_without_vectors)));
  if (text_->dense != nullptr) FLOWRAG_RETURN_IF_ERROR(ExportDense(*text_->dense, sink));
  if (graph_ != nullptr) {
    FLOWRAG_RETURN_IF_ERROR(ExportGraphVectors(*graph_->vectors(), sink, "gv"));
    FLOWRAG_RETURN_IF_ERROR(graph_->ExportArrays(sink));
  }
  if (graph_rows_ != nullptr) {
    std::string corrected;
    FLOWRAG_ASSIGN_OR_RETURN(std::string_view rows, GraphRowsToWrite(&corrected));
    FLOWRAG_RETURN_IF_ERROR(PutString(sink, "rows", rows));
  }
  for (const PersistentDerived* p : persistent_) {
    std::shared_ptr<const void> value = MakeForExport(*p);
    if (value == nullptr) continue;
    FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<int64_t>(std::string(p->name) + ".format", p->format));
    FLOWRAG_RETURN_IF_ERROR(p->export_arrays(value.get(), sink));
  }
  return Status::Ok();
}

Result<size_t> Snapshot::AdoptableSegmentPassages(const ArraySource& segment,
                                                  const SnapshotOptions& options) const {
  FLOWRAG_ASSIGN_OR_RETURN(int64_t format, segment.GetScalar<int64_t>("snap.format"));
  FLOWRAG_ASSIGN_OR_RETURN(int64_t passages, segment.GetScalar<int64_t>("snap.passages"));
  if (format != kSnapshotSegmentFormat) {
    return Status::FailedPrecondition("segment format " + std::to_string(format));
  }
  if (passages < 0) return Status::Corruption("segment of " + std::to_string(passages) + " passages");
  for (const auto& [name, key] : KeysFor(embedder_.get(), dense_model_, options.language)) {
    FLOWRAG_ASSIGN_OR_RETURN(std::string stored, GetString(segment, name));
    if (stored != key) return Status::FailedPrecondition("segment is stale (" + name + ")");
  }
  return static_cast<size_t>(passages);
}

Status Snapshot::AdoptSegmentText(const ArraySource& segment, const SnapshotOptions& options,
                                  std::shared_ptr<SnapshotText> text) {
  const size_t P = text->passages.size();
  TokenizerOptions tokenizer;
  tokenizer.language = options.language;
  FLOWRAG_ASSIGN_OR_RETURN(Bm25Index bm25, Bm25Index::AdoptArrays(segment, P, tokenizer));
  text->bm25 = LayeredBm25(std::move(bm25));
  FLOWRAG_ASSIGN_OR_RETURN(int64_t missing, segment.GetScalar<int64_t>("dense.missing"));
  if (missing < 0 || missing > static_cast<int64_t>(P)) {
    return Status::Corruption("segment: dense.missing out of range");
  }
  if (!options.dense_model.empty() && P > 0) {
    const size_t dim = embedder_ != nullptr ? embedder_->Dimension() : 0;
    // The index searched in place over the segment's arrays, with the
    // deletes and appended rows of the writes since it was built.
    std::shared_ptr<const VectorIndex> dense;
    // A segment of another kind (written before the kind the options
    // choose changed: HNSW before the int8 columns) is stale, not damaged.
    const bool hnsw = ChoosesHnsw(options.vector, P);
    if (!(hnsw ? HnswIndex::HasArrays(segment, "dense") : FlatIndex::HasArrays(segment, "dense"))) {
      return Status::FailedPrecondition("segment is stale (dense index kind)");
    }
    if (hnsw) {
      FLOWRAG_ASSIGN_OR_RETURN(std::shared_ptr<const HnswArraysIndex> base,
                               HnswIndex::AdoptArrays(segment, "dense"));
      if (base->m() != options.vector.hnsw_m ||
          base->ef_construction() != options.vector.hnsw_ef_construction ||
          base->seed() != options.vector.seed) {
        return Status::FailedPrecondition("segment is stale (dense.hparams)");
      }
      dense = std::move(base);
    } else {
      FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<FlatIndex> base,
                               FlatIndex::AdoptArrays(segment, "dense"));
      const auto wanted = ChoosesInt8Columns(options.vector, P) ? FlatIndex::ColumnCopy::kInt8
                                                                : FlatIndex::ColumnCopy::kFloat;
      if (base->column_copy() != wanted) {
        return Status::FailedPrecondition("segment is stale (dense column copy)");
      }
      dense = std::move(base);
    }
    if (LayeredIndex::HasEdits(segment, "dense")) {
      FLOWRAG_ASSIGN_OR_RETURN(dense, LayeredIndex::AdoptEdits(dense, segment, "dense"));
    }
    if (dense->Size() != P || (dim != 0 && dense->Dimension() != dim)) {
      return Status::Corruption("segment: the dense index does not fit the passages");
    }
    text->dense = std::move(dense);
    text->passages_without_vectors = static_cast<size_t>(missing);
  }
  stats_.passages_without_vectors = text->passages_without_vectors;
  text_ = std::move(text);
  return Status::Ok();
}

Status Snapshot::AdoptSegmentGraph(const ArraySource& segment, const SnapshotOptions& options,
                                   size_t num_passages) {
  const size_t P = num_passages;
  if (segment.Has("kg.format")) {
    FLOWRAG_ASSIGN_OR_RETURN(GraphVectors vectors, AdoptGraphVectors(segment, "gv"));
    FLOWRAG_ASSIGN_OR_RETURN(
        graph_, KnowledgeGraph::AdoptArrays(
                    segment, P, std::make_shared<const GraphVectors>(std::move(vectors))));
    FLOWRAG_RETURN_IF_ERROR(CheckVectorsFit(*graph_, embedder_.get()));
  }
  if (options.persistable) {  // verified at their first use, a write's
    FLOWRAG_ASSIGN_OR_RETURN(FlatArray<char> rows, segment.GetLazy<char>("rows"));
    graph_rows_ = std::make_shared<const GraphRowsBytes>(std::move(rows));
  }
  return Status::Ok();
}

namespace {

std::atomic<SnapshotWriteHook> write_hook{nullptr};

}  // namespace

void SetSnapshotWriteHookForTesting(SnapshotWriteHook hook) { write_hook.store(hook); }

namespace {

// A writable open that does not wait for another process's lock, reporting
// its steps to the test hook.
SegmentSetOptions WritableSetOptions() {
  SegmentSetOptions options;
  options.writable = true;
  options.wait_for_lock = false;
  if (const SnapshotWriteHook hook = write_hook.load(); hook != nullptr) {
    options.crash_hook = [hook](PublishStep step) {
      hook(std::string("set.") + PublishStepName(step));
    };
  }
  return options;
}

}  // namespace

Result<bool> WriteSnapshotSegment(const Snapshot& snapshot, SnapshotSource& store,
                                  const std::string& dir) {
  const SegmentSetOptions options = WritableSetOptions();
  SegmentWriterOptions writer_options;
  const SnapshotWriteHook hook = write_hook.load();
  if (hook != nullptr) {
    writer_options.crash_hook = [hook](SegmentWriteStep step) {
      hook(std::string("writer.") + SegmentWriteStepName(step));
    };
  }
  const auto step = [hook](std::string_view name) {
    if (hook != nullptr) hook(name);
  };
  Result<std::unique_ptr<SegmentSet>> set = SegmentSet::Open(dir, options);
  if (set.status().code() == StatusCode::kFailedPrecondition) return false;  // another writer
  if (!set.ok()) return set.status();
  FLOWRAG_ASSIGN_OR_RETURN(int64_t generation, store.Generation());
  if (generation != snapshot.generation()) return false;
  std::shared_ptr<const SegmentView> base = (*set)->Current();
  FLOWRAG_ASSIGN_OR_RETURN(NewSegmentFile file, (*set)->NewSegmentPath(kSnapshotSegmentKind));
  {
    FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<SegmentWriter> writer,
                             SegmentWriter::Create(file.path, kSnapshotSegmentKind, generation,
                                                   file.id, writer_options));
    SegmentArraySink sink(writer.get());
    Status written = snapshot.ExportSegment(sink);
    if (written.ok()) written = writer->Finish();
    if (!written.ok()) {
      (*set)->AbandonFile(file.file);
      return written;
    }
  }
  SegmentEdit edit;
  edit.base = base;
  edit.generation = generation;
  SegmentEdit::AddedSegment added;
  added.file = file.file;
  added.rows = snapshot.num_passages();
  edit.add.push_back(std::move(added));
  for (const LiveSegment& old : base->segments()) edit.remove.push_back(old.record.id);
  FLOWRAG_RETURN_IF_ERROR((*set)->Publish(edit).status());
  step("snapshot.published");
  // The publish's own collection ran while `base` still mapped the old
  // segment (a lease): collect again without it. A reader elsewhere keeps
  // the file until it lets go; a later publish deletes it then.
  edit = SegmentEdit();
  base.reset();
  FLOWRAG_RETURN_IF_ERROR((*set)->CollectGarbage().status());
  step("snapshot.collected");
  // The segment replaces the parts: a store written before segments (or
  // with FLOWRAG_SNAPSHOT_SEGMENTS=off) keeps no second copy.
  FLOWRAG_RETURN_IF_ERROR(store.DropSnapshotParts());
  step("snapshot.parts dropped");
  return true;
}

Result<bool> CollectSnapshotSegments(const std::string& dir) {
  std::error_code error;
  if (dir.empty() || !std::filesystem::is_directory(dir, error)) return false;
  Result<std::unique_ptr<SegmentSet>> set = SegmentSet::Open(dir, WritableSetOptions());
  if (set.status().code() == StatusCode::kFailedPrecondition) return false;  // another writer
  if (!set.ok()) return set.status();
  return true;  // the writable open collected
}

Result<bool> CompleteSnapshotSegment(SnapshotSource& store, const std::string& dir,
                                     int64_t generation) {
  SegmentSetOptions options;
  options.writable = true;
  options.wait_for_lock = false;
  // The writable open does the set's part: a fallback published, garbage
  // and temporary files deleted.
  Result<std::unique_ptr<SegmentSet>> set = SegmentSet::Open(dir, options);
  if (set.status().code() == StatusCode::kFailedPrecondition) return false;  // another writer
  if (!set.ok()) return set.status();
  bool parts_left = false;
  for (const char* part :
       {kBm25Part, kGraphRowsPart, kGraphVectorsPart, kPassageVectorsPart, kPassageHnswPart}) {
    FLOWRAG_ASSIGN_OR_RETURN(std::optional<SnapshotSource::SnapshotPartInfo> info,
                             store.GetSnapshotPart(part));
    parts_left = parts_left || info.has_value();
  }
  if (!parts_left) return true;
  FLOWRAG_ASSIGN_OR_RETURN(int64_t current, store.Generation());
  if (current != generation) return true;  // a later snapshot's write drops them
  FLOWRAG_RETURN_IF_ERROR(store.DropSnapshotParts());
  return true;
}

}  // namespace flowrag
