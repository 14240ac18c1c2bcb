// Index runs of different corpora started on one store at the same time
// build exactly the store that running them one after the other builds
// (doc/storage.md, "Writers take turns"): documents, passages, entities
// with their types, facts, mentions and synonyms, compared by value
// (graph_dump.h). Every test runs on SQLite and on PostgreSQL.
//
// The offline extractor links names through a dictionary of every stored
// title, and another run's ingest changes that dictionary while this run's
// workers extract without the writer lock: the runs below interleave the
// three corpora's ingests with each other's extraction batches (small
// batches, two workers each), started together, staggered by a few
// milliseconds, and one started halfway through another's extraction.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backend_util.h"
#include "flowrag/engine.h"
#include "graph_dump.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

const std::string kDemo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";

// The demo corpus in three parts that name each other's titles (people
// founded organisations, were born in places, designed landmarks).
const std::vector<std::vector<std::string>>& Corpora() {
  static const std::vector<std::vector<std::string>> corpora = {
      {kDemo + "/people"},
      {kDemo + "/places"},
      {kDemo + "/organisations", kDemo + "/ostrel_regatta.md", kDemo + "/vey_propeller.md",
       kDemo + "/merrow_sea_thrift.md", kDemo + "/great_storm_of_1894.md",
       kDemo + "/lantern_tide_festival.md", kDemo + "/brannock_lens.md",
       kDemo + "/greymantle_suite.md", kDemo + "/lusk_tide_gauge.md"},
  };
  return corpora;
}

// Small batches and two workers per run: many chances for one run's
// batches to land between another's steps.
IndexOptions Interleaving() {
  IndexOptions options;
  options.workers = 2;
  options.batch_size = 2;
  options.extract_batch_size = 2;
  return options;
}

void IndexCorpus(const std::string& location, size_t corpus, const IndexOptions& options) {
  auto engine = Engine::Open(location);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  auto report = (*engine)->Index(Corpora()[corpus], options);
  ASSERT_TRUE(report.ok()) << "corpus " << corpus << ": " << report.status().ToString();
}

// The corpus a journal row names (IndexOptions sources joined by spaces).
size_t CorpusOf(const std::string& sources) {
  for (size_t c = 0; c < Corpora().size(); ++c) {
    if (sources.starts_with(Corpora()[c].front())) return c;
  }
  ADD_FAILURE() << "a run of no corpus: " << sources;
  return 0;
}

// The corpora in the order their runs began (took the writer lock): the
// journal's ids, which BeginIndexRun gives under the lock.
std::vector<size_t> RunOrder(const std::string& location) {
  auto store = Store::Open(location);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return {};
  auto runs = (*store)->RecentIndexRuns(100);
  EXPECT_TRUE(runs.ok());
  if (!runs.ok()) return {};
  std::vector<size_t> order;
  for (auto it = runs->rbegin(); it != runs->rend(); ++it) {
    EXPECT_EQ(it->status, "done") << it->sources << ": " << it->error;
    order.push_back(CorpusOf(it->sources));
  }
  return order;
}

// The graph alone: what no embedder state can change.
GraphDump WithoutSynonyms(GraphDump dump) {
  dump.synonyms.clear();
  return dump;
}

class ConcurrentIndexTest : public BackendTest {
 protected:
  // The corpora indexed one after the other, in `order`, on a SQLite store
  // (built once per order).
  const GraphDump& Serial(const std::vector<size_t>& order) {
    auto it = serial_.find(order);
    if (it != serial_.end()) return it->second;
    const std::string location = dir_.File("serial" + std::to_string(files_++) + ".db");
    for (size_t corpus : order) IndexCorpus(location, corpus, {});
    return serial_.emplace(order, Dump(location)).first->second;
  }
  // Whether the store at `location` is the serial store of its runs'
  // order; the failure message otherwise.
  ::testing::AssertionResult IsTheSerialStore(const std::string& location) {
    const std::vector<size_t> order = RunOrder(location);
    const GraphDump& want = Serial(order);
    const GraphDump got = Dump(location);
    if (got == want) return ::testing::AssertionSuccess();
    std::string runs;
    for (size_t c : order) runs += " " + std::to_string(c);
    return ::testing::AssertionFailure() << "runs in order" << runs << "\n"
                                         << DumpDifference(got, want);
  }
  // The corpora of `corpora` indexed by one thread each on a new store,
  // the i-th starting stagger·i after all are ready. Returns the store.
  std::string Concurrent(const std::vector<size_t>& corpora, std::chrono::microseconds stagger) {
    const std::string location = NewLocation();
    {
      // Creating the store is not what is raced here.
      auto engine = Engine::Open(location);
      EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    }
    std::latch ready(static_cast<std::ptrdiff_t>(corpora.size()));
    std::vector<std::thread> runs;
    for (size_t i = 0; i < corpora.size(); ++i) {
      runs.emplace_back([&, i] {
        ready.arrive_and_wait();
        std::this_thread::sleep_for(stagger * i);
        IndexCorpus(location, corpora[i], Interleaving());
      });
    }
    for (std::thread& t : runs) t.join();
    return location;
  }

  std::map<std::vector<size_t>, GraphDump> serial_;
};

// The graph (documents, passages, entities, facts, mentions) of serial runs
// does not depend on their order, nor on whether the corpora come in one
// run or several. The synonym edges do: the built-in embedder refits its
// IDF table when the corpus has doubled since the last fit
// (IndexOptions::idf_refit_growth), so which corpora the table was last
// fitted on depends on the order in which they came.
TEST_P(ConcurrentIndexTest, SerialRunsInAnyOrderBuildOneGraph) {
  if (GetParam() == Backend::kPostgres) GTEST_SKIP() << "serial stores are SQLite stores";
  const GraphDump forward = WithoutSynonyms(Serial({0, 1, 2}));
  EXPECT_FALSE(forward.entities.empty());
  EXPECT_FALSE(forward.facts.empty());
  for (const std::vector<size_t>& order : std::vector<std::vector<size_t>>{{2, 1, 0}, {1, 0, 2}}) {
    const GraphDump other = WithoutSynonyms(Serial(order));
    EXPECT_TRUE(forward == other) << DumpDifference(other, forward);
  }
  const std::string one_run = dir_.File("one_run.db");
  {
    auto engine = Engine::Open(one_run);
    ASSERT_TRUE(engine.ok());
    std::vector<std::string> all;
    for (const auto& corpus : Corpora()) all.insert(all.end(), corpus.begin(), corpus.end());
    ASSERT_TRUE((*engine)->Index(all, {}).ok());
  }
  const GraphDump whole = WithoutSynonyms(Dump(one_run));
  EXPECT_TRUE(forward == whole) << DumpDifference(whole, forward);
}

TEST_P(ConcurrentIndexTest, RunsStartedTogetherBuildTheSerialStore) {
  for (int trial = 0; trial < 3; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    EXPECT_TRUE(IsTheSerialStore(Concurrent({0, 1}, std::chrono::microseconds(0))));
    EXPECT_TRUE(IsTheSerialStore(Concurrent({2, 0, 1}, std::chrono::microseconds(0))));
  }
}

TEST_P(ConcurrentIndexTest, RunsStaggeredByMillisecondsBuildTheSerialStore) {
  for (int stagger_ms : {1, 3, 7, 15, 40}) {
    SCOPED_TRACE("staggered by " + std::to_string(stagger_ms) + " ms");
    EXPECT_TRUE(IsTheSerialStore(Concurrent({1, 2, 0}, std::chrono::milliseconds(stagger_ms))));
  }
}

// A second run starts while the first is halfway through its extraction
// (its workers have written some batches, others are still pending).
TEST_P(ConcurrentIndexTest, ARunStartedHalfwayThroughAnothersExtractionBuildsTheSerialStore) {
  for (int trial = 0; trial < 2; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const std::string location = NewLocation();
    std::latch halfway(1);
    std::atomic<bool> signalled{false};
    const auto signal = [&] {
      if (!signalled.exchange(true)) halfway.count_down();
    };
    // Polled between batches: once `wanted` of the first run's passages are
    // extracted (trial 0: a third, trial 1: about half of its 12), the
    // second run starts.
    const int64_t wanted = 4 + 2 * trial;
    std::mutex mu;  // the two workers poll at once
    std::unique_ptr<Store> watcher;
    bool reached = false;
    IndexOptions first = Interleaving();
    first.interrupt = [&]() -> Status {
      std::lock_guard<std::mutex> lock(mu);
      if (signalled) return Status::Ok();
      if (watcher == nullptr) {
        FLOWRAG_ASSIGN_OR_RETURN(watcher, Store::Open(location));
      }
      FLOWRAG_ASSIGN_OR_RETURN(Store::GraphCounts counts, watcher->CountGraph());
      if (counts.extracted_passages >= wanted) {
        reached = true;
        signal();
      }
      return Status::Ok();
    };
    std::thread places([&] {
      IndexCorpus(location, 1, first);
      signal();  // finished before (a failure to look at)
    });
    halfway.wait();
    IndexCorpus(location, 0, Interleaving());
    places.join();
    watcher.reset();
    EXPECT_TRUE(reached) << "the first run finished before the second started";
    EXPECT_TRUE(IsTheSerialStore(location));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ConcurrentIndexTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres), BackendName);

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
