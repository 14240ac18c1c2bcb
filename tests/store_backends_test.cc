// The store's conformance suite: every TEST_P runs on SQLite (a temporary
// file) and on PostgreSQL (a workspace of the test server named by
// FLOWRAG_TEST_POSTGRES; skipped when unset, see backend_util.h). The store
// contract of store.h must hold the same on both, and the engine must build
// the same graph and answer the same on both.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "backend_util.h"
#include "common/hash.h"
#include "flowrag/engine.h"
#include "graph_dump.h"
#include "llm/chat_model.h"
#include "sqldb/postgres_url.h"
#include "storage/graph_writer.h"
#include "storage/store.h"
#include "store_docs.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

const std::string kDemo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";

using testing::Doc;
using testing::InChild;

class StoreBackendTest : public BackendTest {
 protected:
  std::unique_ptr<Store> OpenStore(const std::string& location, const StoreOptions& options = {}) {
    auto store = Store::Open(location, options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }
};

TEST_P(StoreBackendTest, CreatesReopensAndRefusesForeignDatabases) {
  const std::string location = NewLocation();
  {
    auto store = OpenStore(location);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->format_version(), kStoreFormatVersion);
    auto counts = store->Counts();
    ASSERT_TRUE(counts.ok());
    EXPECT_EQ(counts->documents, 0);
    EXPECT_GT(counts->file_bytes, 0);
  }
  StoreOptions read_only;
  read_only.read_only = true;
  EXPECT_NE(OpenStore(location, read_only), nullptr);

  // Another application's database: refused, and left as it was.
  const std::string foreign = NewLocation();
  {
    auto conn = OpenSqlConnection(foreign, {});
    ASSERT_TRUE(conn.ok()) << conn.status().ToString();
    ASSERT_TRUE((*conn)->Exec("CREATE TABLE customers(id BIGINT)").ok());
  }
  auto refused = Store::Open(foreign);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("not a flowrag store"), std::string::npos);
  auto conn = OpenSqlConnection(foreign, {});
  ASSERT_TRUE(conn.ok());
  auto tables = (*conn)->TableNames();
  ASSERT_TRUE(tables.ok());
  EXPECT_EQ(*tables, std::vector<std::string>{"customers"});
}

TEST_P(StoreBackendTest, DocumentsAreAddedSkippedReplacedAndDeleted) {
  auto store = OpenStore(NewLocation());
  ASSERT_NE(store, nullptr);
  const int64_t g0 = *store->Generation();
  std::vector<DocumentWrite> first = {Doc("a", "alpha text", 1), Doc("b", "beta text", 2)};
  auto r1 = store->WriteDocuments(first);
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_EQ(r1->documents_added, 2u);
  EXPECT_EQ(r1->passages_added, 2u);
  const int64_t g1 = *store->Generation();
  EXPECT_GT(g1, g0);

  std::vector<DocumentWrite> again = {Doc("a", "alpha text", 1), Doc("b", "beta, new", 3)};
  auto r2 = store->WriteDocuments(again);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->documents_unchanged, 1u);
  EXPECT_EQ(r2->documents_replaced, 1u);
  EXPECT_EQ(*store->DocumentHash("b"), std::optional<uint64_t>(3));
  EXPECT_EQ(*store->DocumentHash("zz"), std::nullopt);

  std::vector<std::string> texts;
  ASSERT_TRUE(store
                  ->ForEachPassageText([&](const PassageToEmbed& p) {
                    texts.push_back(p.text);
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(texts, (std::vector<std::string>{"T a\nalpha text", "T b\nbeta, new"}));

  const int64_t g2 = *store->Generation();
  std::vector<DocumentWrite> same = {Doc("a", "alpha text", 1)};
  ASSERT_TRUE(store->WriteDocuments(same).ok());
  EXPECT_EQ(*store->Generation(), g2);  // a no-op changes no snapshot

  EXPECT_EQ(store->DeleteDocument("nope").code(), StatusCode::kNotFound);
  ASSERT_TRUE(store->DeleteDocument("a").ok());
  std::vector<std::string> ids;
  ASSERT_TRUE(store
                  ->ForEachDocument([&](DocumentRow&& d) {
                    ids.push_back(d.external_id);
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(ids, std::vector<std::string>{"b"});
  auto counts = store->CountDocumentsAndPassages();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(*counts, std::make_pair(int64_t{1}, int64_t{1}));
  // The largest passage id: b's passage, written after a's (deleted).
  int64_t largest = 0;
  ASSERT_TRUE(store
                  ->ForEachPassage([&](const PassageRow& p) {
                    largest = std::max(largest, p.id);
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_GE(largest, 2);
  EXPECT_EQ(store->LargestPassageId().value(), largest);
  ASSERT_TRUE(store->DeleteDocument("b").ok());
  EXPECT_EQ(store->LargestPassageId().value(), 0);
}

TEST_P(StoreBackendTest, EmbeddingsAndEmbedderStateRoundTrip) {
  auto store = OpenStore(NewLocation());
  ASSERT_NE(store, nullptr);
  std::vector<DocumentWrite> docs = {Doc("a", "alpha", 1), Doc("b", "beta", 2)};
  ASSERT_TRUE(store->WriteDocuments(docs).ok());
  EXPECT_EQ(*store->CountPassagesMissingEmbeddings("m-v1"), 2);

  FloatMatrix vectors(2, 3);
  for (size_t i = 0; i < 6; ++i) vectors.data[i] = 0.5f * static_cast<float>(i) - 1.0f;
  const std::vector<uint64_t> hashes = {Hash64("alpha"), 0xF000000000000001ull};
  ASSERT_TRUE(store->PutEmbeddings("m-v1", hashes, vectors).ok());
  EXPECT_EQ(*store->CountPassagesMissingEmbeddings("m-v1"), 1);
  EXPECT_EQ(*store->EmbeddingDimension("m-v1"), 3u);
  auto stored_hashes = store->EmbeddingHashes("m-v1");
  ASSERT_TRUE(stored_hashes.ok());
  EXPECT_EQ(std::set<uint64_t>(stored_hashes->begin(), stored_hashes->end()),
            std::set<uint64_t>(hashes.begin(), hashes.end()));

  std::vector<bool> found;
  const std::vector<uint64_t> wanted = {0xF000000000000001ull, 7};
  auto got = store->GetEmbeddings("m-v1", wanted, 3, &found);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(found, (std::vector<bool>{true, false}));
  EXPECT_FLOAT_EQ(got->row(0)[2], vectors.row(1)[2]);

  // A newer model of the family supersedes the older one's vectors.
  ASSERT_TRUE(store->PutEmbeddings("m-v2", hashes, vectors).ok());
  EXPECT_EQ(*store->DropEmbeddingsOfFamilyExcept("m-", "m-v2"), 2);
  EXPECT_EQ(*store->EmbeddingDimension("m-v1"), 0u);

  const std::string blob("\x00\x01\xff idf", 7);
  ASSERT_TRUE(store->PutEmbedderState("hash", blob, 41).ok());
  ASSERT_TRUE(store->PutEmbedderState("hash", blob + "!", 42).ok());
  EXPECT_EQ(*store->GetEmbedderState("hash"), std::optional<std::string>(blob + "!"));
  EXPECT_EQ(*store->EmbedderStateFittedPassages("hash"), 42);
  EXPECT_EQ(*store->EmbedderStateFittedPassages("other"), -1);
}

// The embed watermark (Store::EmbedWatermark): a finished embed phase
// marks every passage embedded, later scans start after it, a write that
// reuses the id of a deleted passage lowers it, and a write that does not
// carry it (an older build's) leaves it stale.
TEST_P(StoreBackendTest, EmbedWatermarkSkipsEmbeddedPassagesAndSurvivesIdReuse) {
  auto store = OpenStore(NewLocation());
  ASSERT_NE(store, nullptr);
  auto embed_all = [&](const std::string& model) {
    auto todo = store->PassagesMissingEmbeddings(model, 100);
    ASSERT_TRUE(todo.ok()) << todo.status().ToString();
    std::vector<uint64_t> hashes;
    for (const PassageToEmbed& p : *todo) hashes.push_back(p.embed_hash);
    FloatMatrix vectors(hashes.size(), 2);
    if (!hashes.empty()) {
      ASSERT_TRUE(store->PutEmbeddings(model, hashes, vectors).ok());
    }
    ASSERT_TRUE(store->MarkAllPassagesEmbedded(model).ok());
  };
  std::vector<DocumentWrite> docs = {Doc("a", "alpha", 1), Doc("b", "beta", 2),
                                     Doc("c", "gamma", 3)};
  ASSERT_TRUE(store->WriteDocuments(docs).ok());
  embed_all("m");
  EXPECT_EQ(*store->CountPassagesMissingEmbeddings("m"), 0);
  EXPECT_EQ(*store->CountPassagesMissingEmbeddings("other"), 3);

  // "c" holds the highest id; SQLite gives it to "d".
  ASSERT_TRUE(store->DeleteDocument("c").ok());
  std::vector<DocumentWrite> more = {Doc("d", "delta", 4)};
  ASSERT_TRUE(store->WriteDocuments(more).ok());
  auto missing = store->PassagesMissingEmbeddings("m", 10);
  ASSERT_TRUE(missing.ok());
  ASSERT_EQ(missing->size(), 1u);
  EXPECT_EQ((*missing)[0].embed_hash, Hash64("delta"));
  embed_all("m");
  EXPECT_EQ(*store->CountPassagesMissingEmbeddings("m"), 0);

  // A passage left without a vector below the watermark (a broken caller)
  // is skipped: proof that the scan starts after it...
  std::vector<DocumentWrite> unembedded = {Doc("e", "epsilon", 5)};
  ASSERT_TRUE(store->WriteDocuments(unembedded).ok());
  ASSERT_TRUE(store->MarkAllPassagesEmbedded("m").ok());
  EXPECT_EQ(*store->CountPassagesMissingEmbeddings("m"), 0);
  // ...until a write that does not carry the watermark moves the titles
  // generation: the next scan is a full one.
  const int64_t titles = *store->TitlesGeneration();
  ASSERT_TRUE(store->SetMeta("titles_generation", std::to_string(titles + 1)).ok());
  EXPECT_EQ(*store->CountPassagesMissingEmbeddings("m"), 1);
  embed_all("m");
  EXPECT_TRUE(store->GetMeta("embed_watermark")->has_value());
  // An unreadable value counts as none: every passage is looked at again.
  std::vector<DocumentWrite> skipped = {Doc("g", "eta", 7)};
  ASSERT_TRUE(store->WriteDocuments(skipped).ok());
  ASSERT_TRUE(store->MarkAllPassagesEmbedded("m").ok());
  ASSERT_EQ(*store->CountPassagesMissingEmbeddings("m"), 0);
  const std::string held = store->GetMeta("embed_watermark")->value();
  for (const char* damaged : {"", "7", "x 9 m", "1 -3 m", "99999999999999999999 1 m", "1 2 "}) {
    SCOPED_TRACE(damaged);
    ASSERT_TRUE(store->SetMeta("embed_watermark", damaged).ok());
    EXPECT_EQ(*store->CountPassagesMissingEmbeddings("m"), 1);
    ASSERT_TRUE(store->SetMeta("embed_watermark", held).ok());
  }
  embed_all("m");

  // Dropping a model's vectors drops its watermark.
  ASSERT_TRUE(store->DropEmbeddingsOfFamilyExcept("m", "m2").ok());
  EXPECT_FALSE(store->GetMeta("embed_watermark")->has_value());
  EXPECT_EQ(*store->CountPassagesMissingEmbeddings("m"), 5);
}

TEST_P(StoreBackendTest, SnapshotPartsAreReadByRangeAndRefusedWhenStale) {
  auto store = OpenStore(NewLocation());
  ASSERT_NE(store, nullptr);
  const int64_t generation = *store->Generation();
  const std::string first(Store::kMaxSnapshotChunk, 'x');
  const std::string second = "tail bytes";
  Store::SnapshotPartInfo info;
  info.name = "graph";
  info.generation = generation;
  info.format = 3;
  info.key = "model-1";
  auto put = store->PutSnapshotPart(info, [&](const Store::ChunkSink& emit) -> Result<uint64_t> {
    FLOWRAG_RETURN_IF_ERROR(emit(first));
    FLOWRAG_RETURN_IF_ERROR(emit(second));
    return uint64_t{0xABCDEF0123456789ull};
  });
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_TRUE(*put);
  auto part = store->GetSnapshotPart("graph");
  ASSERT_TRUE(part.ok() && part->has_value());
  EXPECT_EQ((*part)->chunks, 2);
  EXPECT_EQ((*part)->bytes, first.size() + second.size());
  EXPECT_EQ((*part)->checksum, 0xABCDEF0123456789ull);
  EXPECT_EQ((*part)->key, "model-1");

  char buf[5] = {};
  ASSERT_TRUE(store->ReadSnapshotChunk("graph", 1, 5, buf, 5).ok());
  EXPECT_EQ(std::string(buf, 5), "bytes");
  EXPECT_EQ(store->ReadSnapshotChunk("graph", 1, 8, buf, 5).code(), StatusCode::kCorruption);
  EXPECT_EQ(store->ReadSnapshotChunk("graph", 2, 0, buf, 1).code(), StatusCode::kNotFound);

  // Derived from data that has changed since: nothing is written.
  std::vector<DocumentWrite> docs = {Doc("a", "alpha", 1)};
  ASSERT_TRUE(store->WriteDocuments(docs).ok());
  info.key = "model-2";
  auto stale = store->PutSnapshotPart(info, [&](const Store::ChunkSink& emit) -> Result<uint64_t> {
    FLOWRAG_RETURN_IF_ERROR(emit("new"));
    return uint64_t{1};
  });
  ASSERT_TRUE(stale.ok());
  EXPECT_FALSE(*stale);
  EXPECT_EQ((*store->GetSnapshotPart("graph"))->key, "model-1");
  ASSERT_TRUE(store->DropSnapshotParts().ok());
  EXPECT_FALSE(store->GetSnapshotPart("graph")->has_value());
}

TEST_P(StoreBackendTest, JournalCachesAndMetaRoundTrip) {
  auto store = OpenStore(NewLocation());
  ASSERT_NE(store, nullptr);
  auto run = store->BeginIndexRun("docs/");
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  IndexRunRecord record;
  record.id = *run;
  record.sources = "docs/";
  record.status = "done";
  record.documents_added = 3;
  record.error = "";
  ASSERT_TRUE(store->UpdateIndexRun(record).ok());
  auto runs = store->RecentIndexRuns(5);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].status, "done");
  EXPECT_EQ((*runs)[0].documents_added, 3u);

  ChatResponse response;
  response.content = "Paris";
  response.finish_reason = "stop";
  response.prompt_tokens = 11;
  response.completion_tokens = 2;
  ASSERT_TRUE(store->PutCachedResponse(0x8000000000000000ull, "m", "{}", response).ok());
  response.content = "Lyon";
  ASSERT_TRUE(store->PutCachedResponse(0x8000000000000000ull, "m", "{}", response).ok());
  auto cached = store->GetCachedResponse(0x8000000000000000ull);
  ASSERT_TRUE(cached.ok() && cached->has_value());
  EXPECT_EQ((*cached)->content, "Lyon");
  EXPECT_EQ((*cached)->prompt_tokens, 11);

  ASSERT_TRUE(store->SetSchemaContractYaml("v: 1").ok());
  const int64_t generation = *store->Generation();
  ASSERT_TRUE(store->SetSchemaContractYaml("v: 1").ok());
  EXPECT_EQ(*store->Generation(), generation);  // the same value changes nothing
  EXPECT_EQ(*store->SchemaContractYaml(), std::optional<std::string>("v: 1"));

  ASSERT_TRUE(store->PutSqlSchema({"db.sqlite", "f1", "{}", "[]"}).ok());
  ASSERT_TRUE(store->PutSqlSchema({"db.sqlite", "f2", "{\"t\":1}", "[]"}).ok());
  auto schema = store->GetSqlSchema("db.sqlite");
  ASSERT_TRUE(schema.ok() && schema->has_value());
  EXPECT_EQ((*schema)->fingerprint, "f2");
  EXPECT_EQ((*schema)->graph, "{\"t\":1}");
}

void IndexDemo(const std::string& location, const IndexOptions& options = {}) {
  auto engine = Engine::Open(location);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  auto report = (*engine)->Index({kDemo}, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
}

GraphDump IndexAndDump(const std::string& location, bool delete_one) {
  {
    auto engine = Engine::Open(location);
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    if (!engine.ok()) return {};
    auto report = (*engine)->Index({kDemo});
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    if (delete_one) {
      EXPECT_TRUE((*engine)->DeleteDocument("places/river_ostrel.md").ok());
    }
  }
  return Dump(location);
}

std::vector<std::string> TopPassages(const Engine& engine, const std::string& method) {
  QueryOptions q;
  q.method = method;
  auto result = engine.Query("Which river does the bridge in Port Calder cross?", q);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  std::vector<std::string> ids;
  if (result.ok()) {
    for (const ScoredPassage& p : result->passages) ids.push_back(p.document_id);
  }
  return ids;
}

std::vector<std::string> TopPassages(const std::string& location, const std::string& method) {
  EngineOptions read_only;
  read_only.read_only = true;
  auto engine = Engine::Open(location, read_only);
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  return engine.ok() ? TopPassages(**engine, method) : std::vector<std::string>{};
}

// StoreState's typed writes store each key's text as the raw meta rows
// always held it (the format is unchanged), bump the generation only for a
// changed value, and read back what the raw rows of an older writer hold.
TEST_P(StoreBackendTest, StoreStateKeepsEachKeysTextAndBumpsTheGeneration) {
  auto store = OpenStore(NewLocation());
  ASSERT_NE(store, nullptr);
  StoreState& state = *store;
  struct Key {
    const char* key;
    std::function<Status()> write;
    const char* text;  // what the meta row holds afterwards
  };
  const std::vector<Key> keys = {
      {"embedder", [&] { return state.SetEmbedderKind("openai"); }, "openai"},
      {"dense_model", [&] { return state.SetDenseModel("m-1"); }, "m-1"},
      {"hash_dimension", [&] { return state.SetHashDimension(512); }, "512"},
      {"language", [&] { return state.SetLanguage("german"); }, "german"},
      {"tokenizer", [&] { return state.SetTokenizer("tok2-german"); }, "tok2-german"},
      {"idf_tokenizer", [&] { return state.SetIdfTokenizer("tok2-german"); }, "tok2-german"},
      {"extractor", [&] { return state.SetExtractor("heuristic"); }, "heuristic"},
      {"schema_contract", [&] { return state.SetSchemaContractYaml("version: 2\n"); },
       "version: 2\n"},
  };
  for (const Key& k : keys) {
    const int64_t before = *store->Generation();
    ASSERT_TRUE(k.write().ok()) << k.key;
    EXPECT_EQ(*store->Generation(), before + 1) << k.key;
    EXPECT_EQ(*store->GetMeta(k.key), std::optional<std::string>(k.text)) << k.key;
    ASSERT_TRUE(k.write().ok()) << k.key;
    EXPECT_EQ(*store->Generation(), before + 1) << k.key << ": the same value again";
  }
  EXPECT_EQ(*state.EmbedderKind(), std::optional<std::string>("openai"));
  EXPECT_EQ(*state.HashDimension(), std::optional<size_t>(512));
  EXPECT_EQ(*state.Language(), std::optional<std::string>("german"));
  EXPECT_EQ(*state.Extractor(), std::optional<std::string>("heuristic"));

  // Rows an older version wrote read through the typed interface; one no
  // write would store is Corruption naming the store and the key.
  ASSERT_TRUE(store->SetMeta("hash_dimension", "64").ok());
  EXPECT_EQ(*state.HashDimension(), std::optional<size_t>(64));
  ASSERT_TRUE(store->SetMeta("hash_dimension", "64k").ok());
  Status damaged = state.HashDimension().status();
  EXPECT_EQ(damaged.code(), StatusCode::kCorruption);
  EXPECT_NE(damaged.message().find(store->path() + ": meta.hash_dimension"), std::string::npos)
      << damaged.ToString();
  // A refused write leaves the row as it was.
  EXPECT_EQ(state.SetLanguage("klingon").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*store->GetMeta("language"), std::optional<std::string>("german"));
}

TEST_P(StoreBackendTest, EngineBuildsTheSameGraphAndAnswersAsOnSqlite) {
  const std::string reference = dir_.File("reference.db");
  const std::string location = NewLocation();
  const GraphDump expected = IndexAndDump(reference, /*delete_one=*/false);
  const GraphDump got = IndexAndDump(location, /*delete_one=*/false);
  ASSERT_GT(expected.entities.size(), 100u);
  EXPECT_EQ(got.documents, expected.documents);
  EXPECT_EQ(got.passages, expected.passages);
  EXPECT_EQ(got.entities, expected.entities);
  EXPECT_EQ(got.facts, expected.facts);
  EXPECT_EQ(got.mentions, expected.mentions);
  for (const std::string method : {"bm25", "hybrid", "ppr", "qafd", "semflow", "sa"}) {
    EXPECT_EQ(TopPassages(location, method), TopPassages(reference, method)) << method;
  }

  // Delete by provenance: the same graph is left on both.
  const std::string reference2 = dir_.File("reference2.db");
  const GraphDump expected_after = IndexAndDump(reference2, /*delete_one=*/true);
  EXPECT_TRUE(IndexAndDump(NewLocation(), /*delete_one=*/true) == expected_after);
  EXPECT_LT(expected_after.entities.size(), expected.entities.size());
}

// Parallel indexing: workers of one run, and runs of two engines at once
// (as two processes would), claim batches of the extraction; the graph is
// the one a single worker builds.
TEST_P(StoreBackendTest, ParallelWorkersBuildTheSameGraphAsOne) {
  const GraphDump expected = IndexAndDump(dir_.File("reference.db"), /*delete_one=*/false);
  IndexOptions parallel;
  parallel.workers = 3;
  parallel.extract_batch_size = 4;
  const std::string one_run = NewLocation();
  IndexDemo(one_run, parallel);
  EXPECT_TRUE(Dump(one_run) == expected);

  const std::string fresh = NewLocation();
  std::thread other([&] { IndexDemo(fresh, parallel); });
  IndexDemo(fresh, parallel);
  other.join();
  EXPECT_TRUE(Dump(fresh) == expected);
}

// A worker that died holding a claim (another host: only its lease can
// tell) delays its batch until the lease ends; then the batch is claimed
// again and the graph is whole.
// An extraction runs outside the writer lock: by its write, another writer
// may have replaced its passage (SQLite may even have given the id to the
// new passage) or deleted it. Such a passage no longer holds.
TEST_P(StoreBackendTest, APassageReplacedOrDeletedSinceItWasReadNoLongerHolds) {
  auto store = OpenStore(NewLocation());
  ASSERT_NE(store, nullptr);
  std::vector<DocumentWrite> first = {Doc("a", "alpha text", 1), Doc("b", "beta text", 2)};
  ASSERT_TRUE(store->WriteDocuments(first).ok());
  auto read = store->PassagesPendingExtraction("heuristic", 0, 10);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 2u);
  std::vector<DocumentWrite> replaced = {Doc("b", "beta, new", 3)};
  ASSERT_TRUE(store->WriteDocuments(replaced).ok());
  auto reread = store->PassagesPendingExtraction("heuristic", 0, 10);
  ASSERT_TRUE(reread.ok());
  ASSERT_EQ(reread->size(), 2u);
  GraphWriteReport report;
  std::vector<bool> holds;
  ASSERT_TRUE(store
                  ->WriteGraph(
                      [&](GraphWriter& w) -> Status {
                        for (const auto* batch : {&*read, &*reread}) {
                          for (const Store::PendingPassage& p : *batch) {
                            FLOWRAG_ASSIGN_OR_RETURN(bool h,
                                                     w.PassageHolds(p.passage_id, p.embed_hash));
                            holds.push_back(h);
                          }
                        }
                        return Status::Ok();
                      },
                      &report)
                  .ok());
  EXPECT_EQ(holds, (std::vector<bool>{true, false, true, true}));
  EXPECT_EQ(report.passages_gone, 1u);

  ASSERT_TRUE(store->DeleteDocument("a").ok());
  ASSERT_TRUE(store
                  ->WriteGraph(
                      [&](GraphWriter& w) -> Status {
                        FLOWRAG_ASSIGN_OR_RETURN(
                            bool h, w.PassageHolds((*read)[0].passage_id, (*read)[0].embed_hash));
                        EXPECT_FALSE(h);
                        return Status::Ok();
                      },
                      &report)
                  .ok());
  EXPECT_EQ(report.passages_gone, 1u);
}

// The canonical name and type of every entity, computed from its mentions
// here (independently of GraphWriter's SQL): the most frequent surface,
// ties to the bytewise smaller; the non-empty type of a schema passage
// first, then the most frequent, ties to the smaller; "" without one.
std::map<int64_t, std::pair<std::string, std::string>> CanonicalNamesFromMentions(
    SqlConnection& conn) {
  std::set<int64_t> schema_passages;
  auto schema = conn.Prepare("SELECT passage_id FROM extraction_state WHERE extractor = 'schema'");
  EXPECT_TRUE(schema.ok());
  auto next = [](Statement& st) {
    Result<bool> row = st.Step();
    EXPECT_TRUE(row.ok()) << row.status().ToString();
    return row.ok() && *row;
  };
  while (schema.ok() && next(*schema)) schema_passages.insert(schema->Int(0));
  struct Tally {
    std::map<std::string, int64_t> surfaces;
    std::map<std::string, std::pair<int, int64_t>> types;  // type -> (from schema, count)
  };
  std::map<int64_t, Tally> tallies;
  auto mentions = conn.Prepare("SELECT entity_id, surface, type, count, passage_id FROM mentions");
  EXPECT_TRUE(mentions.ok());
  while (mentions.ok() && next(*mentions)) {
    Tally& t = tallies[mentions->Int(0)];
    const int64_t count = mentions->Int(3);
    t.surfaces[std::string(mentions->Text(1))] += count;
    const std::string type(mentions->Text(2));
    if (type.empty()) continue;
    auto& [from_schema, sum] = t.types[type];
    from_schema = std::max(from_schema, schema_passages.count(mentions->Int(4)) ? 1 : 0);
    sum += count;
  }
  std::map<int64_t, std::pair<std::string, std::string>> out;
  for (const auto& [id, t] : tallies) {
    std::string name, type;
    int64_t best = -1;
    for (const auto& [surface, sum] : t.surfaces) {  // ascending: the first of equal sums wins
      if (sum > best) std::tie(best, name) = std::make_tuple(sum, surface);
    }
    std::pair<int, int64_t> best_type{-1, -1};
    for (const auto& [ty, rank] : t.types) {
      if (rank > best_type) std::tie(best_type, type) = std::make_tuple(rank, ty);
    }
    out[id] = {name, type};
  }
  return out;
}

// After every write, each stored entity carries the canonical name and type
// of its current mentions, whichever writes skipped recomputing them
// (GraphWriter::MayRename): random extractions of a few entities in varying
// case, types and counts, re-extractions, additions to a passage and schema
// extractions, one transaction at a time.
TEST_P(StoreBackendTest, StoredNamesAreTheCanonicalNamesOfTheMentionsAfterEveryWrite) {
  const std::string location = NewLocation();
  auto store = OpenStore(location);
  ASSERT_NE(store, nullptr);
  std::vector<DocumentWrite> docs;
  for (int i = 0; i < 12; ++i) docs.push_back(Doc("d" + std::to_string(i), "text", 10 + i));
  ASSERT_TRUE(store->WriteDocuments(docs).ok());
  auto passages = store->PassagesPendingExtraction("heuristic", 0, 100);
  ASSERT_TRUE(passages.ok());
  ASSERT_EQ(passages->size(), 12u);
  auto conn = OpenSqlConnection(location, {});
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();

  const std::vector<std::string> bases = {"Alpha", "Bravo", "Charlie"};
  const std::vector<std::string> types = {"", "ORG", "PERSON"};
  std::mt19937 rng(7);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto variant = [&](const std::string& base) {
    std::string s = base;
    switch (pick(4)) {
      case 0:
        for (char& c : s) c = static_cast<char>(std::tolower(c));
        break;
      case 1:
        for (char& c : s) c = static_cast<char>(std::toupper(c));
        break;
      default:
        break;  // as written, twice as likely
    }
    return s;
  };
  size_t renamed_checks = 0;
  for (int round = 0; round < 80; ++round) {
    const int64_t passage = (*passages)[pick(passages->size())].passage_id;
    PassageExtraction ex;
    ex.passage_id = passage;
    for (size_t i = 0, n = 1 + pick(3); i < n; ++i) {
      ExtractedEntity e;
      e.name = variant(bases[pick(bases.size())]);
      e.type = types[pick(types.size())];
      e.count = 1 + static_cast<int>(pick(3));
      ex.entities.push_back(std::move(e));
    }
    const size_t how = pick(10);
    GraphWriteReport report;
    ASSERT_TRUE(store
                    ->WriteGraph(
                        [&](GraphWriter& w) -> Status {
                          if (how == 0) return w.AddToPassage(ex);
                          return w.ApplyPassage(ex, how == 1 ? "schema" : "heuristic");
                        },
                        &report)
                    .ok());
    const auto want = CanonicalNamesFromMentions(**conn);
    std::map<int64_t, std::pair<std::string, std::string>> got;
    ASSERT_TRUE(store
                    ->ForEachEntity([&](GraphSource::EntityRow&& e) {
                      got[e.id] = {e.name, e.type};
                      return Status::Ok();
                    })
                    .ok());
    for (const auto& [id, names] : want) {
      ASSERT_TRUE(got.count(id)) << "round " << round << ": entity " << id;
      EXPECT_EQ(got[id], names) << "round " << round << ": entity " << id;
      ++renamed_checks;
    }
  }
  EXPECT_GT(renamed_checks, 80u);
}

TEST_P(StoreBackendTest, ADeadWorkersBatchIsClaimedAgainAfterItsLease) {
  const GraphDump expected = IndexAndDump(dir_.File("reference.db"), /*delete_one=*/false);
  const std::string location = NewLocation();
  IndexOptions none;
  none.extractor = "none";
  IndexDemo(location, none);
  {
    auto store = OpenStore(location);
    ASSERT_NE(store, nullptr);
    auto claimed = store->ClaimPassagesForExtraction("heuristic", "elsewhere:1/0", 2, 8);
    ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
    EXPECT_EQ(claimed->size(), 8u);
    auto again = store->ClaimPassagesForExtraction("heuristic", "elsewhere:2/0", 60, 100);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->size(), 32u);  // the other 32 of the 40 passages
    ASSERT_TRUE(store->ReleaseClaims("elsewhere:2/0").ok());
    auto holders = store->ClaimHolders();
    ASSERT_TRUE(holders.ok());
    EXPECT_EQ(*holders, std::vector<std::string>{"elsewhere:1/0"});
  }
  IndexDemo(location);
  EXPECT_TRUE(Dump(location) == expected);
}

// Whether a BM25 query for `token` returns document `doc_id` within 20 s
// (`want` true) or stops returning it (`want` false).
bool VisibleWithin20s(const Engine& engine, const std::string& token, const std::string& doc_id,
                      bool want) {
  QueryOptions q;
  q.method = "bm25";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    auto result = engine.Query(token, q);
    bool found = false;
    if (result.ok()) {
      for (const ScoredPassage& p : result->passages) found |= p.document_id == doc_id;
    }
    if (found == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST_P(StoreBackendTest, AFollowingEngineSeesAnotherEnginesWrites) {
  const std::string location = NewLocation();
  auto writer = Engine::Open(location);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE((*writer)->IndexDocuments({{"base", "Base", "The harbour of Port Calder."}}).ok());
  EngineOptions follow;
  follow.follow_store = true;
  follow.follow_poll_ms = 50;
  auto replica = Engine::Open(location, follow);
  ASSERT_TRUE(replica.ok()) << replica.status().ToString();
  ASSERT_TRUE((*replica)->Refresh().ok());  // loads the snapshot (unless the follower did)
  EXPECT_FALSE(*(*replica)->Refresh());     // nothing new yet

  ASSERT_TRUE(
      (*writer)->IndexDocuments({{"zeta", "Zeta Falls", "Zeta Falls lies in Quorbitania."}}).ok());
  EXPECT_TRUE(VisibleWithin20s(**replica, "Quorbitania", "zeta", true));
  ASSERT_TRUE((*writer)->DeleteDocument("zeta").ok());
  EXPECT_TRUE(VisibleWithin20s(**replica, "Quorbitania", "zeta", false));

  if (GetParam() == Backend::kPostgres) {
    // The follower's connection is cut: it reconnects and catches up.
    auto admin = OpenSqlConnection(PostgresTestUrl(), {});
    ASSERT_TRUE(admin.ok());
    auto cut = (*admin)->Prepare(
        "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
        "query = 'LISTEN flowrag' AND application_name = ?) AS cut");
    ASSERT_TRUE(cut.ok());
    auto url = ParsePostgresUrl(location);
    ASSERT_TRUE(url.ok());
    ASSERT_TRUE(*cut->Bind(1, PostgresApplicationName(url->workspace)).Step());
    EXPECT_GE(cut->Int(0), 1);
    ASSERT_TRUE(
        (*writer)->IndexDocuments({{"eta", "Eta Pool", "Eta Pool lies in Vendrossia."}}).ok());
    EXPECT_TRUE(VisibleWithin20s(**replica, "Vendrossia", "eta", true));
  }
}

// A replica that refreshes after another engine's insert (its text
// appended, the graph read again) answers as a fresh open of the store.
TEST_P(StoreBackendTest, ARefreshedReplicaAnswersAsAFreshOpen) {
  const std::string location = NewLocation();
  auto writer = Engine::Open(location);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE((*writer)->Index({kDemo}).ok());
  auto replica = Engine::Open(location);
  ASSERT_TRUE(replica.ok()) << replica.status().ToString();
  ASSERT_TRUE((*writer)
                  ->IndexDocuments({{"ferry", "Calder Ferry",
                                     "The Calder Ferry crosses the Ostrel river at Port Calder; "
                                     "Ivo Brannock ran it."}})
                  .ok());
  auto refreshed = (*replica)->Refresh();
  ASSERT_TRUE(refreshed.ok()) << refreshed.status().ToString();
  EXPECT_TRUE(*refreshed);
  EXPECT_FALSE(*(*replica)->Refresh());
  QueryOptions bm25;
  bm25.method = "bm25";
  auto found = (*replica)->Query("Calder Ferry", bm25);
  ASSERT_TRUE(found.ok());
  ASSERT_FALSE(found->passages.empty());
  EXPECT_EQ(found->passages[0].document_id, "ferry");
  for (const std::string method : {"bm25", "dense", "ppr", "qafd", "semflow", "sa"}) {
    EXPECT_EQ(TopPassages(**replica, method), TopPassages(location, method)) << method;
  }
}

// Two engines writing one document again and again at the same time: the
// store ends with one version of it, whole (its passages, graph and
// vectors), as a clean index of that version alone.
TEST_P(StoreBackendTest, TwoWritersOfOneDocumentLeaveOneWholeVersion) {
  const std::string location = NewLocation();
  const auto version = [](int writer, int round) {
    const std::string token = "zq" + std::to_string(writer) + "x" + std::to_string(round);
    return DocumentInput{"same", "Harbour Log",
                         "Marta Vell kept the Harbour Log of Port Calder; entry " + token +
                             " names the Ostrel river."};
  };
  std::vector<std::string> written[2];
  std::thread threads[2];
  for (int w = 0; w < 2; ++w) {
    threads[w] = std::thread([&, w] {
      auto engine = Engine::Open(location);
      ASSERT_TRUE(engine.ok()) << engine.status().ToString();
      for (int round = 0; round < 5; ++round) {
        const DocumentInput doc = version(w, round);
        auto report = (*engine)->IndexDocuments({doc});
        ASSERT_TRUE(report.ok()) << report.status().ToString();
        written[w].push_back(doc.text);
      }
    });
  }
  for (std::thread& t : threads) t.join();

  auto engine = Engine::Open(location);
  ASSERT_TRUE(engine.ok());
  auto stats = (*engine)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->documents, 1);
  // The version that won: the one whose token the store finds.
  QueryOptions bm25;
  bm25.method = "bm25";
  std::string winner;
  for (int w = 0; w < 2; ++w) {
    for (int round = 0; round < 5; ++round) {
      const DocumentInput doc = version(w, round);
      auto found = (*engine)->Query(doc.text.substr(doc.text.find("zq"), 6), bm25);
      ASSERT_TRUE(found.ok());
      if (!found->passages.empty()) {
        EXPECT_TRUE(winner.empty()) << "two versions stored";
        winner = doc.text;
      }
    }
  }
  ASSERT_FALSE(winner.empty());
  const std::string clean = dir_.File("clean.db");
  {
    auto reference = Engine::Open(clean);
    ASSERT_TRUE(reference.ok());
    ASSERT_TRUE((*reference)->IndexDocuments({{"same", "Harbour Log", winner}}).ok());
  }
  EXPECT_TRUE(Dump(location) == Dump(clean));
}

int IndexInChild(const std::string& location, const IndexOptions& options) {
  auto engine = Engine::Open(location);
  return engine.ok() && (*engine)->Index({kDemo}, options).ok() ? 0 : 1;
}

// A run of three workers killed with SIGKILL at points spread over it
// (ingest, embedding, claimed extraction batches, finalisation): a rerun
// completes the index to the graph of a clean run, nothing lost or
// duplicated; the dead run's claims go at once (its process is gone).
TEST_P(StoreBackendTest, AParallelRunKilledAnywhereThenARerunEqualsACleanIndex) {
  const GraphDump expected = IndexAndDump(dir_.File("reference.db"), /*delete_one=*/false);
  IndexOptions parallel;
  parallel.workers = 3;
  parallel.batch_size = 4;
  parallel.extract_batch_size = 4;
  const std::string timed = NewLocation();
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(InChild([&] { return IndexInChild(timed, parallel); }), 0);
  const auto run = std::chrono::steady_clock::now() - start;
  int killed = 0;
  for (double at : {0.05, 0.2, 0.4, 0.6, 0.8, 0.95}) {
    const std::string location = NewLocation();
    const int code = InChild([&] { return IndexInChild(location, parallel); },
                             std::chrono::duration_cast<std::chrono::microseconds>(run * at));
    EXPECT_TRUE(code == 128 + SIGKILL || code == 0) << "exit " << code;  // 0: done before
    killed += code == 128 + SIGKILL;
    IndexDemo(location, parallel);
    EXPECT_TRUE(Dump(location) == expected) << "killed at " << at << " of the run";
  }
  EXPECT_GE(killed, 3);
}

// The server drops the index run's connections again and again (as a
// restart does): the run completes or fails naming the store, and a rerun
// completes the index to the graph of a clean run.
TEST_P(StoreBackendTest, ConnectionsCutMidIndexThenARerunEqualsACleanIndex) {
  if (GetParam() != Backend::kPostgres) GTEST_SKIP() << "PostgreSQL connections";
  const GraphDump expected = IndexAndDump(dir_.File("reference.db"), /*delete_one=*/false);
  const std::string location = NewLocation();
  auto url = ParsePostgresUrl(location);
  ASSERT_TRUE(url.ok());
  auto admin = OpenSqlConnection(PostgresTestUrl(), {});
  ASSERT_TRUE(admin.ok());
  auto cut = (*admin)->Prepare(
      "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
      "application_name = ?) AS cut");
  ASSERT_TRUE(cut.ok());
  IndexOptions parallel;
  parallel.workers = 3;
  parallel.batch_size = 4;
  parallel.extract_batch_size = 4;
  std::atomic<bool> done{false};
  Status outcome;
  std::thread indexer([&] {
    auto engine = Engine::Open(location);
    outcome = engine.ok() ? (*engine)->Index({kDemo}, parallel).status() : engine.status();
    done = true;
  });
  int64_t cuts = 0;
  while (!done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
    cut->Bind(1, PostgresApplicationName(url->workspace));
    ASSERT_TRUE(*cut->Step());
    cuts += cut->Int(0);
    cut->Reset();
  }
  indexer.join();
  EXPECT_GT(cuts, 0);
  if (!outcome.ok()) {
    EXPECT_NE(outcome.message().find(url->redacted), std::string::npos) << outcome.ToString();
  }
  IndexDemo(location, parallel);
  EXPECT_TRUE(Dump(location) == expected);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreBackendTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres), BackendName);

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
