// EngineImpl: index runs. Index() and IndexDocuments() run the write
// phases of indexing/ in order against one IndexContext under the writer
// lock: ingest, embed (with the embedder's refit), extraction, graph
// extras; then journal the run and publish what it committed.
#include <unordered_map>

#include "common/encoding.h"
#include "common/stopwatch.h"
#include "common/text.h"
#include "engine/chat_setup.h"
#include "engine/embedder_setup.h"
#include "engine/engine_impl.h"
#include "indexing/embed_phase.h"
#include "indexing/extraction_phase.h"
#include "indexing/graph_extras.h"
#include "ingest/loaders.h"
#include "storage/llm_cache.h"

namespace flowrag {

Result<IndexReport> EngineImpl::Index(const std::vector<std::string>& sources,
                                      const IndexOptions& options) {
  std::string joined;
  for (const auto& s : sources) joined += (joined.empty() ? "" : " ") + s;
  LoadOptions load;
  load.skip_bad_records = options.skip_bad_records;
  // The loaders' skips and rejections, reported first (the library prints
  // nothing).
  std::vector<std::string> messages;
  Result<IndexReport> report = RunIndex(joined, options, [&](const DocumentSink& sink) -> Status {
    for (const std::string& source : sources) {
      LoadReport load_report;
      FLOWRAG_RETURN_IF_ERROR(LoadSource(source, load, sink, &load_report));
      messages.insert(messages.end(), load_report.messages.begin(), load_report.messages.end());
    }
    return Status::Ok();
  });
  if (report.ok()) report->messages.insert(report->messages.begin(), messages.begin(), messages.end());
  return report;
}

Result<IndexReport> EngineImpl::IndexDocuments(const std::vector<DocumentInput>& documents,
                                               const IndexOptions& options) {
  std::unordered_map<std::string_view, size_t> ids;
  for (size_t i = 0; i < documents.size(); ++i) {
    const DocumentInput& d = documents[i];
    const std::string where = "documents[" + std::to_string(i) + "]";
    if (d.id.empty()) return Status::InvalidArgument(where + ".id: expected a non-empty string");
    if (d.text.find_first_not_of(" \t\r\n") == std::string::npos) {
      return Status::InvalidArgument(where + ".text: expected non-empty text");
    }
    size_t bad = 0;
    if (!IsValidUtf8(d.text, &bad)) {
      return Status::InvalidArgument(where + ".text: invalid UTF-8 at byte " + std::to_string(bad));
    }
    if (!IsValidUtf8(d.title, &bad)) {
      return Status::InvalidArgument(where + ".title: invalid UTF-8 at byte " +
                                     std::to_string(bad));
    }
    auto [it, inserted] = ids.emplace(d.id, i);
    if (!inserted) {
      return Status::InvalidArgument(where + ".id: \"" + EscapeForMessage(d.id, 80) +
                                     "\" repeats documents[" +
                                     std::to_string(it->second) + "]");
    }
  }
  return RunIndex(
      "api:" + std::to_string(documents.size()) + " documents", options,
      [&](const DocumentSink& sink) -> Status {
        for (size_t i = 0; i < documents.size(); ++i) {
          RawDocument doc;
          doc.external_id = documents[i].id;
          doc.title = documents[i].title;
          doc.text = documents[i].text;
          doc.source = "api";
          doc.line = static_cast<int64_t>(i) + 1;
          FLOWRAG_RETURN_IF_ERROR(sink(std::move(doc)));
        }
        return Status::Ok();
      },
      /*api=*/true);
}

Result<IndexReport> EngineImpl::RunIndex(const std::string& label, const IndexOptions& options,
                                         const DocumentProducer& produce, bool api) {
  if (options_.read_only) return Status::FailedPrecondition("the store is opened read-only");
  FLOWRAG_RETURN_IF_ERROR(options.chunking.Validate());
  FLOWRAG_RETURN_IF_ERROR(ResolveExtractor(options, HasChatModel(options_)).status());
  if (options.batch_size == 0 || options.embed_batch_size == 0) {
    return Status::InvalidArgument("index: batch sizes must be positive");
  }
  FLOWRAG_ASSIGN_OR_RETURN(WriteGuard lock, LockWriter());
  FLOWRAG_RETURN_IF_ERROR(CheckBeforeWrite());
  const auto start = SteadyClock::now();
  IndexRunRecord run;
  FLOWRAG_ASSIGN_OR_RETURN(run.id, store_->BeginIndexRun(label));
  run.sources = label;
  run.status = "running";

  IndexReport report;
  IndexContext ctx{PhaseStores::Of(*store_), options, report, run};
  Status st = IngestDocuments(ctx, produce);
  report.ingest_seconds = SecondsSince(start);
  if (st.ok()) {
    const auto embed_start = SteadyClock::now();
    st = EmbedMissing(ctx);
    report.embed_seconds = SecondsSince(embed_start);
  }
  // New documents are searchable before the extraction links them.
  std::shared_ptr<const Snapshot> appended;
  if (st.ok() && api && report.documents_added > 0 && report.documents_replaced == 0 &&
      !report.embedder_refitted) {
    appended = PublishAppended();
  }
  if (st.ok()) st = RunExtraction(ctx, &lock);
  FLOWRAG_RETURN_IF_ERROR(
      FinishIndexRun(&run, st, api ? Persist::kLater : Persist::kNow, std::move(appended)));
  report.total_seconds = SecondsSince(start);
  return report;
}

Status EngineImpl::FinishIndexRun(IndexRunRecord* run, const Status& st, Persist persist,
                                  std::shared_ptr<const Snapshot> same_text) {
  run->status = st.ok() ? "done" : "failed";
  run->error = st.ok() ? "" : st.ToString();
  Status journal = store_->UpdateIndexRun(*run);
  // Whatever was committed becomes visible, even when the run failed.
  Status rebuilt = RebuildSnapshot(persist, std::move(same_text));
  FLOWRAG_RETURN_IF_ERROR(st);
  FLOWRAG_RETURN_IF_ERROR(journal);
  return rebuilt;
}

Status EngineImpl::EmbedMissing(IndexContext& ctx) {
  bool refitted = false;
  FLOWRAG_ASSIGN_OR_RETURN(
      embedder_, MaybeRefitEmbedder(*store_, *store_, *store_, embedder_kind_, options_, embedder_,
                                    ctx.options.refit, ctx.options.idf_refit_growth, &refitted));
  ctx.report.embedder_refitted = refitted;
  const std::string model = embedder_->ModelId();
  FLOWRAG_RETURN_IF_ERROR(store_->SetMeta("embedder", embedder_kind_));
  FLOWRAG_RETURN_IF_ERROR(store_->SetMeta("language", language_));
  FLOWRAG_RETURN_IF_ERROR(store_->SetMeta("tokenizer", TokenizerSignature(language_)));
  FLOWRAG_RETURN_IF_ERROR(EmbedMissingPassages(ctx, *embedder_));
  FLOWRAG_RETURN_IF_ERROR(store_->SetMeta("dense_model", model));
  // A refit supersedes the earlier model's vectors (a scan of the cache, so
  // not on every insert; rows a crash left behind go with the next refit).
  if (embedder_kind_ == kHashEmbedderName && refitted) {
    FLOWRAG_RETURN_IF_ERROR(store_->DropEmbeddingsOfFamilyExcept(kHashModelFamily, model).status());
  }
  return Status::Ok();
}

Status EngineImpl::RunExtraction(IndexContext& ctx, WriteGuard* guard) {
  const auto start = SteadyClock::now();
  IndexReport& report = ctx.report;
  FLOWRAG_ASSIGN_OR_RETURN(report.extractor, ResolveExtractor(ctx.options, HasChatModel(options_)));
  if (report.extractor == "none") return Status::Ok();
  ExtractionSetup setup;
  setup.extractor = report.extractor;
  StoreResponseCache cache(store_.get());
  std::shared_ptr<ChatModel> chat;
  if (report.extractor != "heuristic" && !ctx.options.dry_run) {
    FLOWRAG_ASSIGN_OR_RETURN(chat, MakeChatModel(options_, &cache));
    setup.chat = chat.get();
  }
  if (guard != nullptr) {
    setup.let_go_of_writer_lock = [guard] { guard->across_processes = WriterLock(); };
    setup.retake_writer_lock = [this, guard]() -> Status {
      FLOWRAG_ASSIGN_OR_RETURN(
          guard->across_processes,
          store_->AcquireWriterLock(std::chrono::milliseconds(options_.writer_wait_ms)));
      return CatchUpWithEmbedder();
    };
  }
  FLOWRAG_RETURN_IF_ERROR(ExtractPendingPassages(ctx, setup));
  report.extract_seconds = SecondsSince(start);
  if (ctx.options.dry_run) return Status::Ok();
  FLOWRAG_RETURN_IF_ERROR(store_->SetMeta("extractor", report.extractor));
  const auto graph_start = SteadyClock::now();
  FLOWRAG_RETURN_IF_ERROR(BuildGraphExtras(ctx.stores, *embedder_, ctx.options.progress,
                                           &report.graph_texts_embedded, &report.synonym_edges));
  report.graph_seconds = SecondsSince(graph_start);
  return Status::Ok();
}

}  // namespace flowrag
