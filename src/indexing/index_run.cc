#include "indexing/index_run.h"

#include <chrono>

#include "common/stopwatch.h"
#include "common/text.h"
#include "indexing/embed_phase.h"
#include "indexing/extraction_phase.h"
#include "indexing/graph_extras.h"
#include "indexing/openie_phase.h"
#include "models/chat_setup.h"
#include "models/embedder_setup.h"
#include "models/llm_cache.h"

namespace flowrag {

Result<std::unique_ptr<IndexRun>> IndexRun::Begin(RunStores stores, const EngineOptions& engine,
                                                  std::shared_ptr<Embedder> current,
                                                  VectorCheck check) {
  std::unique_ptr<IndexRun> run(new IndexRun(stores, engine));
  FLOWRAG_ASSIGN_OR_RETURN(run->lock_, stores.phases.journal.AcquireWriterLock(
                                           std::chrono::milliseconds(engine.writer_wait_ms)));
  FLOWRAG_RETURN_IF_ERROR(run->SettleEmbedder(std::move(current)));
  // The run rebuilds snapshots from the cached vectors after its writes: a
  // damaged one must stop it before them (issue 32).
  if (check == VectorCheck::kScan) {
    FLOWRAG_RETURN_IF_ERROR(stores.phases.embeddings.CheckVectorSizes(
        run->embedder_->ModelId(), run->embedder_->Dimension()));
  }
  return run;
}

Status IndexRun::SettleEmbedder(std::shared_ptr<Embedder> current) {
  FLOWRAG_ASSIGN_OR_RETURN(language_, ResolveLanguage(stores_.state, engine_));
  FLOWRAG_ASSIGN_OR_RETURN(embedder_kind_, ResolveEmbedderKind(stores_.state, engine_));
  FLOWRAG_ASSIGN_OR_RETURN(std::optional<std::string> dense, stores_.state.DenseModel());
  if (current != nullptr && (!dense || *dense == current->ModelId())) {
    embedder_ = std::move(current);  // the same object: snapshots compare it by identity
    return Status::Ok();
  }
  FLOWRAG_ASSIGN_OR_RETURN(embedder_, LoadEmbedder(stores_.state, embedder_kind_, engine_));
  return Status::Ok();
}

Status IndexRun::RetakeWriterLock() {
  FLOWRAG_ASSIGN_OR_RETURN(lock_, stores_.phases.journal.AcquireWriterLock(
                                      std::chrono::milliseconds(engine_.writer_wait_ms)));
  return SettleEmbedder(embedder_);
}

Status IndexRun::BeginJournal(const std::string& label, IndexRunRecord* run) {
  FLOWRAG_ASSIGN_OR_RETURN(run->id, stores_.phases.journal.BeginIndexRun(label));
  run->sources = label;
  run->status = "running";
  return Status::Ok();
}

Status IndexRun::FinishJournal(IndexRunRecord* run, const Status& st) {
  run->status = st.ok() ? "done" : "failed";
  run->error = st.ok() ? "" : st.ToString();
  Status journal = stores_.phases.journal.UpdateIndexRun(*run);
  FLOWRAG_RETURN_IF_ERROR(st);
  return journal;
}

Status IndexRun::Embed(IndexContext& ctx) {
  bool refitted = false;
  FLOWRAG_ASSIGN_OR_RETURN(
      embedder_, MaybeRefitEmbedder(stores_.state, stores_.phases.documents, stores_.phases.graph,
                                    embedder_kind_, engine_, embedder_, ctx.options.refit,
                                    ctx.options.idf_refit_growth, &refitted));
  ctx.report.embedder_refitted = refitted;
  const std::string model = embedder_->ModelId();
  FLOWRAG_RETURN_IF_ERROR(stores_.state.SetEmbedderKind(embedder_kind_));
  FLOWRAG_RETURN_IF_ERROR(stores_.state.SetLanguage(language_));
  FLOWRAG_RETURN_IF_ERROR(stores_.state.SetTokenizer(TokenizerSignature(language_)));
  FLOWRAG_RETURN_IF_ERROR(EmbedMissingPassages(ctx, *embedder_));
  FLOWRAG_RETURN_IF_ERROR(stores_.state.SetDenseModel(model));
  // A refit supersedes the earlier model's vectors (a scan of the cache, so
  // not on every insert; rows a crash left behind go with the next refit).
  if (embedder_kind_ == kHashEmbedderName && refitted) {
    FLOWRAG_RETURN_IF_ERROR(
        stores_.phases.embeddings.DropEmbeddingsOfFamilyExcept(kHashModelFamily, model).status());
  }
  return Status::Ok();
}

Status IndexRun::GraphExtras(IndexContext& ctx) {
  const auto start = SteadyClock::now();
  size_t texts = 0, synonyms = 0;
  FLOWRAG_RETURN_IF_ERROR(
      BuildGraphExtras(ctx.stores, *embedder_, ctx.options.progress, &texts, &synonyms));
  ctx.report.graph_texts_embedded += texts;
  ctx.report.synonym_edges += synonyms;
  ctx.report.graph_seconds += SecondsSince(start);
  return Status::Ok();
}

Status IndexRun::Extract(IndexContext& ctx, bool share_lock) {
  const auto start = SteadyClock::now();
  IndexReport& report = ctx.report;
  FLOWRAG_ASSIGN_OR_RETURN(report.extractor, ResolveExtractor(ctx.options, HasChatModel(engine_)));
  if (report.extractor == "none") return Status::Ok();
  ExtractionSetup setup;
  setup.extractor = report.extractor;
  StoreResponseCache cache(&stores_.responses);
  std::shared_ptr<ChatModel> chat;
  if (report.extractor != "heuristic" && !ctx.options.dry_run) {
    FLOWRAG_ASSIGN_OR_RETURN(chat, MakeChatModel(engine_, &cache));
    setup.chat = chat.get();
  }
  if (share_lock) {
    setup.let_go_of_writer_lock = [this] { lock_ = WriterLock(); };
    setup.retake_writer_lock = [this] { return RetakeWriterLock(); };
  }
  FLOWRAG_RETURN_IF_ERROR(ExtractPendingPassages(ctx, setup));
  report.extract_seconds = SecondsSince(start);
  if (ctx.options.dry_run) return Status::Ok();
  FLOWRAG_RETURN_IF_ERROR(stores_.state.SetExtractor(report.extractor));
  return GraphExtras(ctx);
}

Result<IndexReport> IndexRun::IndexDocuments(
    const std::string& label, const IndexOptions& options, const DocumentProducer& produce,
    const std::function<void(const IndexReport&)>& stored) {
  FLOWRAG_RETURN_IF_ERROR(options.chunking.Validate());
  FLOWRAG_RETURN_IF_ERROR(ResolveExtractor(options, HasChatModel(engine_)).status());
  if (options.batch_size == 0 || options.embed_batch_size == 0) {
    return Status::InvalidArgument("index: batch sizes must be positive");
  }
  const auto start = SteadyClock::now();
  IndexRunRecord run;
  FLOWRAG_RETURN_IF_ERROR(BeginJournal(label, &run));
  IndexReport report;
  IndexContext ctx{stores_.phases, options, report, run};
  Status st = IngestDocuments(ctx, produce);
  report.ingest_seconds = SecondsSince(start);
  if (st.ok()) {
    const auto embed_start = SteadyClock::now();
    st = Embed(ctx);
    report.embed_seconds = SecondsSince(embed_start);
  }
  if (st.ok() && stored) stored(report);
  if (st.ok()) st = Extract(ctx);
  FLOWRAG_RETURN_IF_ERROR(FinishJournal(&run, st));
  report.total_seconds = SecondsSince(start);
  return report;
}

Result<ImportReport> IndexRun::ImportOpenIe(const std::string& path,
                                            const ImportOpenIeOptions& options) {
  const auto start = SteadyClock::now();
  ImportReport report;
  FLOWRAG_RETURN_IF_ERROR(ImportOpenIeTriples(stores_.phases, path, options, &report));
  size_t embedded = 0;
  FLOWRAG_RETURN_IF_ERROR(BuildGraphExtras(stores_.phases, *embedder_, options.progress, &embedded,
                                           &report.synonym_edges));
  FLOWRAG_RETURN_IF_ERROR(stores_.state.SetExtractor("openie"));
  report.seconds = SecondsSince(start);
  return report;
}

Status IndexRun::DeleteDocument(std::string_view document_id) {
  return stores_.phases.documents.DeleteDocument(document_id);
}

}  // namespace flowrag
