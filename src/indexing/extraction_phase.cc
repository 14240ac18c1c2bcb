#include "indexing/extraction_phase.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "common/hash.h"
#include "common/progress.h"
#include "common/text.h"
#include "extract/heuristic_extractor.h"
#include "extract/llm_extractor.h"
#include "extract/prompts.h"
#include "storage/graph_writer.h"

namespace flowrag {
namespace {

void AddWriteReport(const GraphWriteReport& g, IndexReport* r) {
  r->entities_created += g.entities_created;
  r->entities_deleted += g.entities_deleted;
  r->facts_created += g.facts_created;
  r->triples_rejected += g.triples_rejected;
}

std::vector<PassageInput> Inputs(const std::vector<GraphSink::PendingPassage>& batch) {
  std::vector<PassageInput> in;
  in.reserve(batch.size());
  for (const auto& p : batch) in.push_back({p.passage_id, p.title, p.text, p.ordinal});
  return in;
}

using EmbedHashes = std::unordered_map<int64_t, uint64_t>;  // passage id -> embed hash

EmbedHashes HashesOf(const std::vector<GraphSink::PendingPassage>& batch) {
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
Status ReleaseDeadClaims(GraphSink& store) {
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

// The offline extractor's dictionary: the defining names (titles and their
// aliases) of every passage in the store, in passage order, which is what a
// clean run over the corpus builds, whatever earlier runs or a crashed one
// extracted (issue 21: a rerun after a crash took the extracted passages'
// names from their TITLE mentions, which lack the aliases, and its graph
// differed from a clean index). Titles only: O(passages) short strings.
// `fingerprint` names it in each extraction: a passage extracted with this
// very dictionary needs no relinking, whichever worker or run did it.
// `generation`: the store's titles generation it was built at
// (GraphWriter::TitlesGeneration).
struct TitleDictionary {
  int64_t generation = 0;
  std::string fingerprint;
  std::vector<std::string> names;  // the defining names (titles, aliases) it links
  EntityDictionary dictionary;
};

Result<std::shared_ptr<const TitleDictionary>> BuildTitleDictionary(
    GraphSink& graph, const HeuristicExtractor& extractor) {
  FLOWRAG_ASSIGN_OR_RETURN(GraphSink::TitleList list, graph.ExtractableTitles());
  auto built = std::make_shared<TitleDictionary>();
  built->generation = list.generation;
  uint64_t fingerprint_hash = Hash64("heuristic dictionary");
  for (const std::string& t : list.titles) {
    fingerprint_hash = HashCombine(fingerprint_hash, Hash64(t));
  }
  built->fingerprint = "dictionary " + std::to_string(fingerprint_hash);
  std::vector<PassageInput> title_only;
  title_only.reserve(list.titles.size());
  for (std::string& t : list.titles) title_only.push_back({0, std::move(t), "", 0});
  const std::vector<KnownName> names = extractor.CollectDefiningNames(title_only);
  built->names.reserve(names.size());
  for (const KnownName& n : names) built->names.push_back(n.name);
  built->dictionary = EntityDictionary::Build(names);
  return std::shared_ptr<const TitleDictionary>(std::move(built));
}

// The dictionary a run's workers share. Another run's ingest changes the
// stored titles while this run extracts without the writer lock: a batch
// extracted with the dictionary of an older titles generation is not
// written (WriteExtractions) but extracted again with the current one, so
// every extraction written is the one a serial run would write (issue 32:
// two runs started together linked names with each other's partial
// dictionaries). Thread-safe.
class SharedTitleDictionary {
 public:
  explicit SharedTitleDictionary(const HeuristicExtractor& extractor) : extractor_(extractor) {}

  // The newest dictionary built.
  std::shared_ptr<const TitleDictionary> Current() const {
    std::lock_guard<std::mutex> lock(mu_);
    return current_;
  }
  // Builds the dictionary again unless one built since `stale` exists.
  // O(passages) when it builds.
  Result<std::shared_ptr<const TitleDictionary>> Renew(const TitleDictionary* stale,
                                                        GraphSink& graph) {
    std::lock_guard<std::mutex> lock(mu_);
    if (current_ != nullptr && current_.get() != stale) return current_;
    FLOWRAG_ASSIGN_OR_RETURN(current_, BuildTitleDictionary(graph, extractor_));
    return current_;
  }

 private:
  const HeuristicExtractor& extractor_;
  mutable std::mutex mu_;
  std::shared_ptr<const TitleDictionary> current_;
};

// Batches leave unlinked entities for the end of the phase (GraphWriter::
// set_collect): one batch may link a name a later batch defines. Passages of
// `read` that another writer replaced or deleted meanwhile are skipped.
// False, and nothing written, when the store's titles changed since
// `dictionary` was built: `out` must be extracted again.
Result<bool> WriteExtractions(GraphSink& graph, const std::vector<GraphSink::PendingPassage>& read,
                              const std::vector<PassageExtraction>& out,
                              const TitleDictionary& dictionary, GraphWriteReport* report) {
  const EmbedHashes hashes = HashesOf(read);
  bool current = true;
  FLOWRAG_RETURN_IF_ERROR(graph.WriteGraph(
      [&](GraphWriter& w) -> Status {
        // First: on PostgreSQL this holds off document writes (whose lock
        // on the row comes first too) until the transaction ends.
        FLOWRAG_ASSIGN_OR_RETURN(const int64_t generation, w.TitlesGeneration());
        current = generation == dictionary.generation;
        if (!current) return Status::Ok();
        w.set_collect(false);
        for (const PassageExtraction& ex : out) {
          FLOWRAG_ASSIGN_OR_RETURN(bool holds, StillAsRead(w, hashes, ex.passage_id));
          if (holds) {
            FLOWRAG_RETURN_IF_ERROR(w.ApplyPassage(ex, "heuristic", dictionary.fingerprint));
          }
        }
        return Status::Ok();
      },
      report));
  return current;
}

// Extracts `batch` with the current dictionary and writes it, extracting
// it again whenever the titles changed before the write.
Status ExtractAndWrite(GraphSink& graph, const HeuristicExtractor& extractor,
                       SharedTitleDictionary& dictionaries,
                       const std::vector<GraphSink::PendingPassage>& batch,
                       GraphWriteReport* report) {
  std::shared_ptr<const TitleDictionary> dictionary = dictionaries.Current();
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(std::vector<PassageExtraction> out,
                             extractor.Extract(Inputs(batch), dictionary->dictionary));
    FLOWRAG_ASSIGN_OR_RETURN(bool written,
                             WriteExtractions(graph, batch, out, *dictionary, report));
    if (written) return Status::Ok();
    FLOWRAG_ASSIGN_OR_RETURN(dictionary, dictionaries.Renew(dictionary.get(), graph));
  }
}

Status CollectOrphans(GraphSink& graph, IndexReport* report) {
  GraphWriteReport g;
  FLOWRAG_RETURN_IF_ERROR(graph.WriteGraph([](GraphWriter& w) { return w.CollectOrphans(); }, &g));
  AddWriteReport(g, report);
  return Status::Ok();
}

// Each worker claims a batch, extracts it and writes it, until no passage
// is pending; a worker that finds the rest claimed by others waits for them
// (or for their claims to expire). The first error stops the other workers
// of this run and releases their claims.
Status ExtractClaimedBatches(IndexContext& ctx, const HeuristicExtractor& extractor,
                             SharedTitleDictionary& dictionaries) {
  const std::string name = "heuristic";
  GraphSink& graph = ctx.stores.graph;
  const IndexOptions& options = ctx.options;
  static std::atomic<uint64_t> next_run{1};
  const uint64_t run = next_run++;
  const size_t workers = std::max<size_t>(1, options.workers);
  FLOWRAG_RETURN_IF_ERROR(ReleaseDeadClaims(graph));
  FLOWRAG_ASSIGN_OR_RETURN(int64_t pending, graph.CountPassagesPendingExtraction(name));
  Progress meter("extract", "passages", static_cast<uint64_t>(pending), options.progress);
  std::mutex mu;  // guards first, ctx.report and meter
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
      Result<std::vector<GraphSink::PendingPassage>> batch = graph.ClaimPassagesForExtraction(
          name, worker, static_cast<int64_t>(options.extract_lease_seconds),
          ExtractBatchSize(options, /*offline=*/true), after);
      if (!batch.ok()) return fail(batch.status());
      if (batch->empty() && after > 0) {
        after = 0;
        continue;
      }
      if (!batch->empty()) after = batch->back().passage_id;
      if (batch->empty()) {
        Result<int64_t> left = graph.CountPassagesPendingExtraction(name);
        if (!left.ok()) return fail(left.status());
        if (*left == 0) return;
        Status released = ReleaseDeadClaims(graph);
        if (!released.ok()) return fail(released);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      GraphWriteReport g;
      Status written = ExtractAndWrite(graph, extractor, dictionaries, *batch, &g);
      if (!written.ok()) return fail(written);
      std::lock_guard<std::mutex> lock(mu);
      AddWriteReport(g, &ctx.report);
      ctx.report.passages_extracted += batch->size();
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
      if (!graph.ReleaseClaims(WorkerName(run, w)).ok()) {
        (void)graph.ReleaseClaims(WorkerName(run, w));
      }
    }
  }
  return first;
}

// Names of the dictionary not yet linked across the corpus (titles new in
// this run, their aliases, or names left over by a crash) may occur in
// passages extracted with an older dictionary. Those passages are extracted
// again with the full dictionary, which gives exactly what a full run over
// the corpus would (delete and re-add of a document restores its links).
// The names are the dictionary's own, aliases included, not the keys the
// graph recorded for title entities: an alias whose key another entity
// already owned was never recorded, and the passages naming it were never
// extracted again (issue 32: "Jump", an alias of a title of the second
// corpus, stayed a proper noun in the first corpus's passages when it came
// first, and became the title's link when it came second).
// REQUIRES: the writer lock (no document write meanwhile), `dictionary`
// of the current titles.
Status RelinkNewNames(IndexContext& ctx, const HeuristicExtractor& extractor,
                      const TitleDictionary& dictionary) {
  GraphSink& graph = ctx.stores.graph;
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<std::string> linked_keys, graph.LinkedNames());
  const std::unordered_set<std::string> linked(linked_keys.begin(), linked_keys.end());
  std::vector<std::string> keys;  // of the names to link, each once
  std::vector<TriePattern> patterns;
  std::unordered_set<std::string> named;  // every key of the dictionary
  for (const std::string& name : dictionary.names) {
    std::string key = EntityKey(name);
    if (key.empty()) continue;
    const bool first = named.insert(key).second;
    if (linked.count(key) > 0) continue;
    patterns.push_back({name, 0});
    if (first) keys.push_back(std::move(key));
  }
  // Names that left the dictionary (their documents deleted) are linked
  // again if they come back.
  std::vector<std::string> gone;
  for (const std::string& k : linked_keys) {
    if (named.count(k) == 0) gone.push_back(k);
  }
  FLOWRAG_RETURN_IF_ERROR(graph.ForgetLinkedNames(gone));
  if (keys.empty()) return CollectOrphans(graph, &ctx.report);
  const TokenTrie new_names = TokenTrie::Build(patterns);
  // Collect first: the store is locked while it streams passages, so the
  // writes happen after the scan.
  std::vector<GraphSink::PendingPassage> stale;
  FLOWRAG_RETURN_IF_ERROR(graph.ForEachPassageContent([&](GraphSink::PendingPassage&& p) -> Status {
    if (p.extracted_with == dictionary.fingerprint) return Status::Ok();
    if (new_names.Scan(TokenizedText(p.text)).empty() &&
        new_names.Scan(TokenizedText(p.title)).empty()) {
      return Status::Ok();
    }
    stale.push_back(std::move(p));
    return Status::Ok();
  }));
  ctx.report.passages_relinked += stale.size();
  const size_t batch_size = ExtractBatchSize(ctx.options, /*offline=*/true);
  for (size_t start = 0; start < stale.size(); start += batch_size) {
    std::vector<GraphSink::PendingPassage> batch(
        std::make_move_iterator(stale.begin() + start),
        std::make_move_iterator(stale.begin() + std::min(stale.size(), start + batch_size)));
    FLOWRAG_ASSIGN_OR_RETURN(std::vector<PassageExtraction> out,
                             extractor.Extract(Inputs(batch), dictionary.dictionary));
    GraphWriteReport g;
    FLOWRAG_ASSIGN_OR_RETURN(bool written, WriteExtractions(graph, batch, out, dictionary, &g));
    if (!written) {
      return Status::Internal("relinking: the stored titles changed under the writer lock");
    }
    AddWriteReport(g, &ctx.report);
  }
  FLOWRAG_RETURN_IF_ERROR(CollectOrphans(graph, &ctx.report));
  return graph.MarkNamesLinked(keys);
}

// The relinking runs under the writer lock again, with the dictionary of
// the titles as they are then (another run may have added some while the
// lock was let go of): a name is marked linked only once every passage
// that names it was extracted with a dictionary that holds it.
Status ExtractHeuristic(IndexContext& ctx, const ExtractionSetup& setup) {
  HeuristicExtractor extractor;
  SharedTitleDictionary dictionaries(extractor);
  FLOWRAG_RETURN_IF_ERROR(dictionaries.Renew(nullptr, ctx.stores.graph).status());
  if (setup.let_go_of_writer_lock) setup.let_go_of_writer_lock();
  Status extracted = ExtractClaimedBatches(ctx, extractor, dictionaries);
  if (setup.retake_writer_lock) FLOWRAG_RETURN_IF_ERROR(setup.retake_writer_lock());
  FLOWRAG_RETURN_IF_ERROR(extracted);
  std::shared_ptr<const TitleDictionary> dictionary = dictionaries.Current();
  FLOWRAG_ASSIGN_OR_RETURN(const int64_t generation, ctx.stores.graph.TitlesGeneration());
  if (generation != dictionary->generation) {
    FLOWRAG_ASSIGN_OR_RETURN(dictionary, dictionaries.Renew(dictionary.get(), ctx.stores.graph));
  }
  return RelinkNewNames(ctx, extractor, *dictionary);
}

// --dry-run: what the LLM extraction of the pending passages would cost.
Status EstimateLlmExtraction(IndexContext& ctx, const std::string& name,
                             const LlmExtractorOptions& lo) {
  DryRunEstimate total;
  int64_t after = 0;
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(auto batch,
                             ctx.stores.graph.PassagesPendingExtraction(name, after, 4096));
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
  IndexReport& report = ctx.report;
  report.estimated_llm_calls = static_cast<size_t>(total.calls);
  report.estimated_prompt_tokens = static_cast<size_t>(total.prompt_tokens);
  report.estimated_completion_tokens = static_cast<size_t>(total.completion_tokens_max);
  report.messages.push_back("dry run: " + std::to_string(total.passages) +
                            " passages pending; typical completion ~" +
                            std::to_string(total.completion_tokens_typical) + " tokens");
  return Status::Ok();
}

void AddMessage(IndexReport* report, std::string message) {
  if (report->messages.size() < 20) report->messages.push_back(std::move(message));
}

// One batch's outcomes in one transaction: an extraction applied, or a
// failure recorded (the passage stays pending: the next run retries it, and
// the answers received so far are in the response cache).
Status WriteLlmOutcomes(IndexContext& ctx, const std::string& name, const EmbedHashes& hashes,
                        const std::vector<PassageOutcome>& outcomes) {
  IndexReport& report = ctx.report;
  GraphWriteReport g;
  FLOWRAG_RETURN_IF_ERROR(ctx.stores.graph.WriteGraph(
      [&](GraphWriter& w) -> Status {
        for (const PassageOutcome& o : outcomes) {
          FLOWRAG_ASSIGN_OR_RETURN(bool holds, StillAsRead(w, hashes, o.passage_id));
          if (!holds) continue;
          const std::string passage = "passage " + std::to_string(o.passage_id) + ": ";
          if (o.status.ok()) {
            FLOWRAG_RETURN_IF_ERROR(w.ApplyPassage(o.extraction, name));
            ++report.passages_extracted;
          } else {
            FLOWRAG_RETURN_IF_ERROR(w.MarkFailed(o.passage_id, name, o.status.ToString()));
            ++report.extraction_failures;
            AddMessage(&report, passage + o.status.ToString());
          }
          for (const std::string& r : o.rejections) AddMessage(&report, passage + "rejected " + r);
        }
        return Status::Ok();
      },
      &g));
  AddWriteReport(g, &report);
  return Status::Ok();
}

Status ExtractWithLlm(IndexContext& ctx, const ExtractionSetup& setup) {
  const std::string& name = setup.extractor;
  FLOWRAG_ASSIGN_OR_RETURN(ExtractionPromptStyle style,
                           ParseExtractionPromptStyle(ctx.options.llm_prompt_style));
  LlmExtractorOptions lo;
  lo.style = style;
  if (ctx.options.dry_run) return EstimateLlmExtraction(ctx, name, lo);
  if (setup.chat == nullptr) {
    return Status::FailedPrecondition("extractor " + name + ": no chat model");
  }
  FLOWRAG_ASSIGN_OR_RETURN(auto extractor, LlmExtractor::Create(setup.chat, lo));
  GraphSink& graph = ctx.stores.graph;
  FLOWRAG_ASSIGN_OR_RETURN(int64_t pending, graph.CountPassagesPendingExtraction(name));
  Progress meter("extract (" + name + ")", "passages", static_cast<uint64_t>(pending),
                 ctx.options.progress);
  int64_t after = 0;
  while (true) {
    FLOWRAG_RETURN_IF_ERROR(PollInterrupt(ctx.options));
    FLOWRAG_ASSIGN_OR_RETURN(auto batch,
                             graph.PassagesPendingExtraction(
                                 name, after, ExtractBatchSize(ctx.options, /*offline=*/false)));
    if (batch.empty()) break;
    after = batch.back().passage_id;
    const EmbedHashes hashes = HashesOf(batch);
    std::vector<ExtractionInput> in;
    for (auto& p : batch) in.push_back({p.passage_id, std::move(p.title), std::move(p.text)});
    FLOWRAG_ASSIGN_OR_RETURN(std::vector<PassageOutcome> outcomes, extractor->Extract(in));
    FLOWRAG_RETURN_IF_ERROR(WriteLlmOutcomes(ctx, name, hashes, outcomes));
    meter.Advance(batch.size());
  }
  meter.Finish();
  return Status::Ok();
}

}  // namespace

Result<std::string> ResolveExtractor(const IndexOptions& options, bool has_chat_model) {
  const std::string& e = options.extractor;
  if (e == "none" || e == "heuristic") return e;
  if (e == "llm" || (e == "auto" && has_chat_model)) {
    FLOWRAG_ASSIGN_OR_RETURN(ExtractionPromptStyle style,
                             ParseExtractionPromptStyle(options.llm_prompt_style));
    return "llm:" + std::string(ExtractionPromptStyleName(style));
  }
  if (e == "auto") return std::string("heuristic");
  return Status::InvalidArgument("extractor \"" + e + "\": expected auto, heuristic, llm or none");
}

Status ExtractPendingPassages(IndexContext& ctx, const ExtractionSetup& setup) {
  if (setup.extractor == "heuristic") {
    return ctx.options.dry_run ? Status::Ok() : ExtractHeuristic(ctx, setup);
  }
  return ExtractWithLlm(ctx, setup);
}

}  // namespace flowrag
