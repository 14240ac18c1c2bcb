// The write phases of indexing/ run against a small context (an
// IndexContext over one store's interfaces), without the engine: each
// phase's own contract, and that the phases in the engine's order build
// what Engine::Index builds. Every test runs on SQLite and on PostgreSQL
// (skipped without FLOWRAG_TEST_POSTGRES, see backend_util.h).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "backend_util.h"
#include "embed/hashed_embedder.h"
#include "models/embedder_setup.h"
#include "flowrag/engine.h"
#include "indexing/embed_phase.h"
#include "indexing/extraction_phase.h"
#include "indexing/graph_extras.h"
#include "indexing/ingest_phase.h"
#include "storage/store.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

const std::string kDemo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";

RawDocument Raw(const std::string& id, const std::string& title, const std::string& text) {
  RawDocument d;
  d.external_id = id;
  d.title = title;
  d.text = text;
  d.source = "test";
  return d;
}

DocumentProducer Produce(const std::vector<RawDocument>& docs) {
  return [docs](const DocumentSink& sink) -> Status {
    for (RawDocument d : docs) FLOWRAG_RETURN_IF_ERROR(sink(std::move(d)));
    return Status::Ok();
  };
}

class IndexingPhasesTest : public BackendTest {
 protected:
  std::unique_ptr<Store> NewStore() {
    auto store = Store::Open(NewLocation());
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }
  // One run's context over `store`, journalled as a run of its own.
  struct Run {
    IndexReport report;
    IndexRunRecord record;
  };
  IndexContext Context(Store& store, const IndexOptions& options, Run* run) {
    auto id = store.BeginIndexRun("test");
    EXPECT_TRUE(id.ok());
    run->record.id = id.ok() ? *id : 0;
    run->record.status = "running";
    return IndexContext{PhaseStores::Of(store), options, run->report, run->record};
  }
  // The context refers to the options: they must outlive it.
  IndexContext Context(Store& store, IndexOptions&& options, Run* run) = delete;

};

TEST_P(IndexingPhasesTest, IngestWritesBatchesJournalsThemAndSkipsUnchangedDocuments) {
  auto store = NewStore();
  ASSERT_NE(store, nullptr);
  std::vector<RawDocument> docs;
  for (int i = 0; i < 5; ++i) {
    docs.push_back(Raw("d" + std::to_string(i), "Title " + std::to_string(i),
                       "Text of document number " + std::to_string(i) + "."));
  }
  IndexOptions options;
  options.batch_size = 2;
  std::vector<size_t> batches;
  options.after_batch = [&](size_t n) {
    batches.push_back(n);
    return Status::Ok();
  };
  Run first;
  IndexContext ctx = Context(*store, options, &first);
  ASSERT_TRUE(IngestDocuments(ctx, Produce(docs)).ok());
  EXPECT_EQ(first.report.documents_added, 5u);
  EXPECT_EQ(first.report.passages_added, 5u);
  EXPECT_EQ(batches, (std::vector<size_t>{1, 2, 3}));
  auto runs = store->RecentIndexRuns(1);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].documents_added, 5u);
  EXPECT_EQ((*runs)[0].batches_committed, 3u);

  // Again, one document changed: only that one is written.
  docs[3].text = "Another text.";
  Run second;
  batches.clear();
  IndexContext again = Context(*store, options, &second);
  ASSERT_TRUE(IngestDocuments(again, Produce(docs)).ok());
  EXPECT_EQ(second.report.documents_unchanged, 4u);
  EXPECT_EQ(second.report.documents_replaced, 1u);
  EXPECT_EQ(second.report.documents_added, 0u);
  EXPECT_EQ(batches, (std::vector<size_t>{1}));
  auto counts = store->CountDocumentsAndPassages();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->first, 5);
  EXPECT_EQ(counts->second, 5);
}

TEST_P(IndexingPhasesTest, AnInterruptStopsIngestWithWholeBatchesStored) {
  auto store = NewStore();
  ASSERT_NE(store, nullptr);
  std::vector<RawDocument> docs;
  for (int i = 0; i < 150; ++i) {
    docs.push_back(Raw("d" + std::to_string(i), "T", "Words " + std::to_string(i)));
  }
  IndexOptions options;
  options.batch_size = 64;
  int polls = 0;
  // Polled before documents 0, 64 and 128: the second poll comes after the
  // first batch of 64 was committed.
  options.interrupt = [&] { return ++polls < 2 ? Status::Ok() : Status::Cancelled("stop"); };
  Run run;
  IndexContext ctx = Context(*store, options, &run);
  const Status st = IngestDocuments(ctx, Produce(docs));
  EXPECT_EQ(st.code(), StatusCode::kCancelled) << st.ToString();
  auto counts = store->CountDocumentsAndPassages();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->first, 64);
  EXPECT_EQ(run.report.batches_committed, 1u);
}

TEST_P(IndexingPhasesTest, EmbedPhaseEmbedsEachMissingTextOnceAndResumesFromTheCache) {
  auto store = NewStore();
  ASSERT_NE(store, nullptr);
  IndexOptions options;
  options.embed_batch_size = 2;
  Run run;
  IndexContext ctx = Context(*store, options, &run);
  // d0 and d1 have the same title and text: one vector between them.
  ASSERT_TRUE(IngestDocuments(ctx, Produce({Raw("d0", "Same", "Same words here."),
                                            Raw("d1", "Same", "Same words here."),
                                            Raw("d2", "Other", "Other words."),
                                            Raw("d3", "More", "More words.")}))
                  .ok());
  HashedEmbedder embedder(HashedEmbedderOptions{}, std::make_shared<IdfTable>());
  ASSERT_TRUE(EmbedMissingPassages(ctx, embedder).ok());
  EXPECT_EQ(run.report.passages_embedded, 3u);
  EXPECT_EQ(run.record.passages_embedded, 3u);
  auto missing = store->CountPassagesMissingEmbeddings(embedder.ModelId());
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(*missing, 0);

  Run rerun;
  IndexContext again = Context(*store, options, &rerun);
  ASSERT_TRUE(EmbedMissingPassages(again, embedder).ok());
  EXPECT_EQ(rerun.report.passages_embedded, 0u);
}

// The embed phase pages through the passages with a cursor: a page starts
// after the last passage of the one before (each page's passages have their
// vectors by then), so a run over n passages reads each once, not O(n²).
TEST_P(IndexingPhasesTest, MissingEmbeddingsArePagedAfterTheCursor) {
  auto store = NewStore();
  ASSERT_NE(store, nullptr);
  const IndexOptions options;  // outlives the context, which refers to it
  Run run;
  IndexContext ctx = Context(*store, options, &run);
  std::vector<RawDocument> docs;
  for (int i = 0; i < 5; ++i) docs.push_back(Raw("d" + std::to_string(i), "T", "Text " + std::to_string(i)));
  ASSERT_TRUE(IngestDocuments(ctx, Produce(docs)).ok());
  auto first = store->PassagesMissingEmbeddings("m", 2);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 2u);
  auto rest = store->PassagesMissingEmbeddings("m", 10, first->back().passage_id);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 3u);
  EXPECT_GT(rest->front().passage_id, first->back().passage_id);
  EXPECT_TRUE(store->PassagesMissingEmbeddings("m", 10, rest->back().passage_id)->empty());
}

// The phases in the engine's order, run on a bare store, build the graph
// Engine::Index builds from the same corpus.
TEST_P(IndexingPhasesTest, PhasesInTheEnginesOrderBuildTheEnginesGraph) {
  auto reference = NewStore();
  ASSERT_NE(reference, nullptr);
  const std::string reference_path = reference->path();
  reference.reset();
  {
    auto engine = Engine::Open(reference_path);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    IndexOptions io;
    io.extractor = "heuristic";
    ASSERT_TRUE((*engine)->Index({kDemo}, io).ok());
  }
  auto indexed = Store::Open(reference_path);
  ASSERT_TRUE(indexed.ok());
  // The embedder the engine fitted on the corpus, so that synonyms compare.
  auto embedder = LoadEmbedder(**indexed, "hash", EngineOptions{});
  ASSERT_TRUE(embedder.ok()) << embedder.status().ToString();

  auto store = NewStore();
  ASSERT_NE(store, nullptr);
  IndexOptions options;
  Run run;
  IndexContext ctx = Context(*store, options, &run);
  ASSERT_TRUE(IngestDocuments(ctx, [](const DocumentSink& sink) {
                return LoadSource(kDemo, LoadOptions{}, sink);
              }).ok());
  ASSERT_TRUE(EmbedMissingPassages(ctx, **embedder).ok());
  ExtractionSetup setup;
  setup.extractor = "heuristic";
  ASSERT_TRUE(ExtractPendingPassages(ctx, setup).ok());
  size_t texts = 0, synonyms = 0;
  ASSERT_TRUE(BuildGraphExtras(ctx.stores, **embedder, {}, &texts, &synonyms).ok());
  EXPECT_GT(run.report.passages_extracted, 0u);
  EXPECT_GT(run.report.entities_created, 0u);

  auto want = (*indexed)->CountGraph();
  auto got = store->CountGraph();
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_GT(want->entities, 0);
  EXPECT_EQ(got->entities, want->entities);
  EXPECT_EQ(got->mentions, want->mentions);
  EXPECT_EQ(got->facts, want->facts);
  EXPECT_EQ(got->fact_sources, want->fact_sources);
  EXPECT_EQ(got->synonyms, want->synonyms);
  EXPECT_EQ(got->extracted_passages, want->extracted_passages);
  auto names = [](Store& s) {
    std::set<std::string> out;
    EXPECT_TRUE(s.ForEachEntity([&](GraphSource::EntityRow&& e) {
                   out.insert(e.name + "|" + e.type);
                   return Status::Ok();
                 }).ok());
    return out;
  };
  EXPECT_EQ(names(*store), names(**indexed));
}

TEST(IndexingPhasesResolveTest, ExtractorNamesResolveOrAreRefused) {
  IndexOptions options;
  EXPECT_EQ(*ResolveExtractor(options, false), "heuristic");
  EXPECT_EQ(*ResolveExtractor(options, true), "llm:openie");
  options.extractor = "none";
  EXPECT_EQ(*ResolveExtractor(options, true), "none");
  options.extractor = "llm";
  options.llm_prompt_style = "sarag";
  EXPECT_EQ(*ResolveExtractor(options, false), "llm:sa-rag");
  options.extractor = "spacy";
  const auto bad = ResolveExtractor(options, false);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("spacy"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Backends, IndexingPhasesTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres), BackendName);

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
