// EngineImpl: the extraction phase of Index() (after ingest and embedding):
// pending passages → extractor → GraphWriter, committed in batches; then
// dictionary linking of new names (offline), graph-text embedding and
// synonym edges. Every step resumes from what the store shows as done.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "common/hash.h"
#include "common/progress.h"
#include "engine/chat_setup.h"
#include "engine/engine_impl.h"
#include "extract/heuristic_extractor.h"
#include "extract/llm_extractor.h"
#include "extract/prompts.h"
#include "storage/graph_writer.h"
#include "storage/llm_cache.h"

namespace flowrag {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void AddWriteReport(const GraphWriteReport& g, IndexReport* r) {
  r->entities_created += g.entities_created;
  r->entities_deleted += g.entities_deleted;
  r->facts_created += g.facts_created;
  r->triples_rejected += g.triples_rejected;
}

std::vector<PassageInput> Inputs(const std::vector<Store::PendingPassage>& batch) {
  std::vector<PassageInput> in;
  in.reserve(batch.size());
  for (const auto& p : batch) in.push_back({p.passage_id, p.title, p.text, p.ordinal});
  return in;
}

using EmbedHashes = std::unordered_map<int64_t, uint64_t>;  // passage id -> embed hash

EmbedHashes HashesOf(const std::vector<Store::PendingPassage>& batch) {
  EmbedHashes hashes;
  for (const auto& p : batch) hashes.emplace(p.passage_id, p.embed_hash);
  return hashes;
}

// Whether the passage read as in `hashes` is still stored as read.
Result<bool> StillAsRead(GraphWriter& w, const EmbedHashes& hashes, int64_t passage_id) {
  auto it = hashes.find(passage_id);
  if (it == hashes.end()) return false;
  return w.PassageHolds(passage_id, it->second);
}

std::string HostName() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return host;
}

// Names a worker in its claims: host, process, extraction run of the
// process and thread number ("host:pid/run.thread").
std::string WorkerName(uint64_t run, size_t w) {
  return HostName() + ":" + std::to_string(getpid()) + "/" + std::to_string(run) + "." +
         std::to_string(w);
}

// Releases the claims of workers of this host whose process is gone (a
// killed run: a rerun need not wait for their leases). Workers of other
// hosts are left to their leases; a run that fails releases its own.
Status ReleaseDeadClaims(Store& store) {
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<std::string> holders, store.ClaimHolders());
  const std::string prefix = HostName() + ":";
  for (const std::string& worker : holders) {
    if (!worker.starts_with(prefix)) continue;
    const pid_t pid = static_cast<pid_t>(std::atol(worker.c_str() + prefix.size()));
    if (pid <= 0 || (::kill(pid, 0) != 0 && errno == ESRCH)) {
      FLOWRAG_RETURN_IF_ERROR(store.ReleaseClaims(worker));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> EngineImpl::ResolveExtractor(const IndexOptions& options) const {
  const std::string& e = options.extractor;
  if (e == "none" || e == "heuristic") return e;
  if (e == "llm" || (e == "auto" && HasChatModel(options_))) {
    FLOWRAG_ASSIGN_OR_RETURN(ExtractionPromptStyle style,
                             ParseExtractionPromptStyle(options.llm_prompt_style));
    return "llm:" + std::string(ExtractionPromptStyleName(style));
  }
  if (e == "auto") return std::string("heuristic");
  return Status::InvalidArgument("extractor \"" + e + "\": expected auto, heuristic, llm or none");
}

Status EngineImpl::RunExtraction(const IndexOptions& options, IndexReport* report,
                                 WriteGuard* guard) {
  const auto start = std::chrono::steady_clock::now();
  FLOWRAG_ASSIGN_OR_RETURN(report->extractor, ResolveExtractor(options));
  if (report->extractor == "none") return Status::Ok();
  if (report->extractor == "heuristic") {
    if (!options.dry_run) FLOWRAG_RETURN_IF_ERROR(ExtractHeuristic(options, report, guard));
  } else {
    FLOWRAG_RETURN_IF_ERROR(ExtractWithLlm(options, report));
  }
  report->extract_seconds = SecondsSince(start);
  if (options.dry_run) return Status::Ok();
  FLOWRAG_RETURN_IF_ERROR(store_->SetMeta("extractor", report->extractor));
  const auto graph_start = std::chrono::steady_clock::now();
  FLOWRAG_RETURN_IF_ERROR(
      BuildGraphExtras(options.progress, &report->graph_texts_embedded, &report->synonym_edges));
  report->graph_seconds = SecondsSince(graph_start);
  return Status::Ok();
}

Status EngineImpl::ExtractHeuristic(const IndexOptions& options, IndexReport* report,
                                    WriteGuard* guard) {
  const std::string name = "heuristic";
  HeuristicExtractor extractor;
  // Pass 1: the dictionary = the defining names (titles and their aliases)
  // of every passage in the store, in passage order: what a clean run over
  // the corpus builds, whatever earlier runs or a crashed one extracted
  // (issue 21: a rerun after a crash took the extracted passages' names
  // from their TITLE mentions, which lack the aliases, and its graph
  // differed from a clean index). Titles only: O(passages) short strings.
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<std::string> titles, store_->ExtractableTitles());
  uint64_t fingerprint_hash = Hash64("heuristic dictionary");
  for (const std::string& t : titles) fingerprint_hash = HashCombine(fingerprint_hash, Hash64(t));
  // Recorded with each extraction: a passage extracted with this very
  // dictionary needs no relinking below, whichever worker or run did it.
  const std::string fingerprint = "dictionary " + std::to_string(fingerprint_hash);
  std::vector<PassageInput> title_only;
  title_only.reserve(titles.size());
  for (std::string& t : titles) title_only.push_back({0, std::move(t), "", 0});
  const EntityDictionary dictionary =
      EntityDictionary::Build(extractor.CollectDefiningNames(title_only));

  // Pass 2: the pending passages, by claimed batches, without the store's
  // writer lock: other index runs on this store extract beside this one.
  if (guard != nullptr) guard->across_processes = WriterLock();
  Status extracted = ExtractClaimedBatches(extractor, dictionary, fingerprint, options, report);
  if (guard != nullptr) {
    FLOWRAG_ASSIGN_OR_RETURN(
        guard->across_processes,
        store_->AcquireWriterLock(std::chrono::milliseconds(options_.writer_wait_ms)));
    FLOWRAG_RETURN_IF_ERROR(CatchUpWithEmbedder());
  }
  FLOWRAG_RETURN_IF_ERROR(extracted);

  // Names not yet linked across the corpus (titles new in this run, or left
  // over by a crash) may occur in passages extracted with an older
  // dictionary. Those passages are extracted again with the full
  // dictionary, which gives exactly what a full run over the corpus would
  // (delete + re-add of a document restores its links).
  FLOWRAG_ASSIGN_OR_RETURN(auto unlinked, store_->UnlinkedTitleNames());
  if (unlinked.empty()) return CollectOrphans(report);
  std::vector<TriePattern> patterns;
  for (const auto& n : unlinked) patterns.push_back({n.surface, 0});
  const TokenTrie new_names = TokenTrie::Build(patterns);
  // Collect first: the store is locked while it streams passages, so the
  // writes happen after the scan.
  std::vector<Store::PendingPassage> stale;
  FLOWRAG_RETURN_IF_ERROR(store_->ForEachPassageContent([&](Store::PendingPassage&& p) -> Status {
    if (p.extracted_with == fingerprint) return Status::Ok();
    if (new_names.Scan(TokenizedText(p.text)).empty() &&
        new_names.Scan(TokenizedText(p.title)).empty()) {
      return Status::Ok();
    }
    stale.push_back(std::move(p));
    return Status::Ok();
  }));
  report->passages_relinked += stale.size();
  for (size_t start = 0; start < stale.size(); start += options.extract_batch_size) {
    std::vector<Store::PendingPassage> batch(
        std::make_move_iterator(stale.begin() + start),
        std::make_move_iterator(stale.begin() +
                                std::min(stale.size(), start + options.extract_batch_size)));
    FLOWRAG_ASSIGN_OR_RETURN(std::vector<PassageExtraction> out,
                             extractor.Extract(Inputs(batch), dictionary));
    GraphWriteReport g;
    FLOWRAG_RETURN_IF_ERROR(WriteExtractions(batch, out, name, &g, fingerprint));
    AddWriteReport(g, report);
  }
  FLOWRAG_RETURN_IF_ERROR(CollectOrphans(report));
  std::vector<std::string> keys;
  for (const auto& n : unlinked) keys.push_back(n.key);
  return store_->MarkNamesLinked(keys);
}

// Each worker claims a batch, extracts it and writes it, until no passage
// is pending; a worker that finds the rest claimed by others waits for them
// (or for their claims to expire). The first error stops the other workers
// of this run.
Status EngineImpl::ExtractClaimedBatches(const HeuristicExtractor& extractor,
                                         const EntityDictionary& dictionary,
                                         const std::string& fingerprint,
                                         const IndexOptions& options, IndexReport* report) {
  const std::string name = "heuristic";
  static std::atomic<uint64_t> next_run{1};
  const uint64_t run = next_run++;
  const size_t workers = std::max<size_t>(1, options.workers);
  FLOWRAG_RETURN_IF_ERROR(ReleaseDeadClaims(*store_));
  FLOWRAG_ASSIGN_OR_RETURN(int64_t pending, store_->CountPassagesPendingExtraction(name));
  Progress meter("extract", "passages", static_cast<uint64_t>(pending), options.progress);
  std::mutex mu;  // guards first, report and meter
  Status first;
  const auto fail = [&](Status st) {
    std::lock_guard<std::mutex> lock(mu);
    if (first.ok()) first = std::move(st);
  };
  const auto failed = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return !first.ok();
  };
  const auto work = [&](size_t w) {
    const std::string worker = WorkerName(run, w);
    // Claims go up in id order: below its last claim a worker finds only
    // passages done or claimed by others, except expired claims, which it
    // looks for from the start once nothing is left above.
    int64_t after = 0;
    while (!failed()) {
      if (Status st = PollInterrupt(options); !st.ok()) return fail(std::move(st));
      Result<std::vector<Store::PendingPassage>> batch = store_->ClaimPassagesForExtraction(
          name, worker, static_cast<int64_t>(options.extract_lease_seconds),
          options.extract_batch_size, after);
      if (!batch.ok()) return fail(batch.status());
      if (batch->empty() && after > 0) {
        after = 0;
        continue;
      }
      if (!batch->empty()) after = batch->back().passage_id;
      if (batch->empty()) {
        Result<int64_t> left = store_->CountPassagesPendingExtraction(name);
        if (!left.ok()) return fail(left.status());
        if (*left == 0) return;
        Status released = ReleaseDeadClaims(*store_);
        if (!released.ok()) return fail(released);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      Result<std::vector<PassageExtraction>> out = extractor.Extract(Inputs(*batch), dictionary);
      if (!out.ok()) return fail(out.status());
      GraphWriteReport g;
      Status written = WriteExtractions(*batch, *out, name, &g, fingerprint);
      if (!written.ok()) return fail(written);
      std::lock_guard<std::mutex> lock(mu);
      AddWriteReport(g, report);
      report->passages_extracted += batch->size();
      meter.Advance(batch->size());
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w) threads.emplace_back(work, w);
  work(0);
  for (std::thread& t : threads) t.join();
  meter.Finish();
  if (!first.ok()) {
    // Twice: the call that meets a lost connection fails, the next one
    // reconnects. Failing both, the claims are left to their lease.
    for (size_t w = 0; w < workers; ++w) {
      if (!store_->ReleaseClaims(WorkerName(run, w)).ok()) {
        (void)store_->ReleaseClaims(WorkerName(run, w));
      }
    }
  }
  return first;
}

// Batches leave unlinked entities for the end of the phase (GraphWriter::
// set_collect): one batch may link a name a later batch defines.
Status EngineImpl::WriteExtractions(const std::vector<Store::PendingPassage>& read,
                                    const std::vector<PassageExtraction>& out,
                                    const std::string& extractor, GraphWriteReport* report,
                                    const std::string& detail) {
  const EmbedHashes hashes = HashesOf(read);
  return store_->WriteGraph(
      [&](GraphWriter& w) -> Status {
        w.set_collect(false);
        for (const PassageExtraction& ex : out) {
          FLOWRAG_ASSIGN_OR_RETURN(bool holds, StillAsRead(w, hashes, ex.passage_id));
          if (holds) FLOWRAG_RETURN_IF_ERROR(w.ApplyPassage(ex, extractor, detail));
        }
        return Status::Ok();
      },
      report);
}

Status EngineImpl::CollectOrphans(IndexReport* report) {
  GraphWriteReport g;
  FLOWRAG_RETURN_IF_ERROR(
      store_->WriteGraph([](GraphWriter& w) { return w.CollectOrphans(); }, &g));
  AddWriteReport(g, report);
  return Status::Ok();
}

Status EngineImpl::ExtractWithLlm(const IndexOptions& options, IndexReport* report) {
  const std::string name = report->extractor;
  FLOWRAG_ASSIGN_OR_RETURN(ExtractionPromptStyle style,
                           ParseExtractionPromptStyle(options.llm_prompt_style));
  LlmExtractorOptions lo;
  lo.style = style;
  if (options.dry_run) {
    DryRunEstimate total;
    int64_t after = 0;
    while (true) {
      FLOWRAG_ASSIGN_OR_RETURN(auto batch, store_->PassagesPendingExtraction(name, after, 4096));
      if (batch.empty()) break;
      after = batch.back().passage_id;
      std::vector<ExtractionInput> in;
      for (auto& p : batch) in.push_back({p.passage_id, std::move(p.title), std::move(p.text)});
      DryRunEstimate e = EstimateCost(in, lo);
      total.passages += e.passages;
      total.calls += e.calls;
      total.prompt_tokens += e.prompt_tokens;
      total.completion_tokens_max += e.completion_tokens_max;
      total.completion_tokens_typical += e.completion_tokens_typical;
    }
    report->estimated_llm_calls = static_cast<size_t>(total.calls);
    report->estimated_prompt_tokens = static_cast<size_t>(total.prompt_tokens);
    report->estimated_completion_tokens = static_cast<size_t>(total.completion_tokens_max);
    report->messages.push_back("dry run: " + std::to_string(total.passages) +
                               " passages pending; typical completion ~" +
                               std::to_string(total.completion_tokens_typical) + " tokens");
    return Status::Ok();
  }

  StoreResponseCache cache(store_.get());
  FLOWRAG_ASSIGN_OR_RETURN(std::shared_ptr<ChatModel> client, MakeChatModel(options_, &cache));
  FLOWRAG_ASSIGN_OR_RETURN(auto extractor, LlmExtractor::Create(client.get(), lo));
  FLOWRAG_ASSIGN_OR_RETURN(int64_t pending, store_->CountPassagesPendingExtraction(name));
  Progress meter("extract (" + name + ")", "passages", static_cast<uint64_t>(pending),
                 options.progress);
  int64_t after = 0;
  while (true) {
    FLOWRAG_RETURN_IF_ERROR(PollInterrupt(options));
    FLOWRAG_ASSIGN_OR_RETURN(
        auto batch, store_->PassagesPendingExtraction(name, after, options.extract_batch_size));
    if (batch.empty()) break;
    after = batch.back().passage_id;
    const EmbedHashes hashes = HashesOf(batch);
    std::vector<ExtractionInput> in;
    for (auto& p : batch) in.push_back({p.passage_id, std::move(p.title), std::move(p.text)});
    FLOWRAG_ASSIGN_OR_RETURN(std::vector<PassageOutcome> outcomes, extractor->Extract(in));
    GraphWriteReport g;
    FLOWRAG_RETURN_IF_ERROR(store_->WriteGraph(
        [&](GraphWriter& w) -> Status {
          for (const PassageOutcome& o : outcomes) {
            FLOWRAG_ASSIGN_OR_RETURN(bool holds, StillAsRead(w, hashes, o.passage_id));
            if (!holds) continue;
            if (o.status.ok()) {
              FLOWRAG_RETURN_IF_ERROR(w.ApplyPassage(o.extraction, name));
              ++report->passages_extracted;
            } else {
              // Left pending: the next run retries it (answers received so
              // far are in the response cache).
              FLOWRAG_RETURN_IF_ERROR(w.MarkFailed(o.passage_id, name, o.status.ToString()));
              ++report->extraction_failures;
              if (report->messages.size() < 20) {
                report->messages.push_back("passage " + std::to_string(o.passage_id) + ": " +
                                           o.status.ToString());
              }
            }
            for (const std::string& r : o.rejections) {
              if (report->messages.size() < 20) {
                report->messages.push_back("passage " + std::to_string(o.passage_id) +
                                           ": rejected " + r);
              }
            }
          }
          return Status::Ok();
        },
        &g));
    AddWriteReport(g, report);
    meter.Advance(batch.size());
  }
  meter.Finish();
  return Status::Ok();
}

}  // namespace flowrag
