// Persisted snapshot parts (graph/graph_io.h): a snapshot loaded from the
// parts equals one built from the rows (every graph accessor, every array,
// every method's answers on the demo questions); damaged, stale or missing
// parts are detected and rebuilt; crafted parts never crash the reader; an
// older-format store gains its parts; inserts and deletes keep them current
// and reuse the earlier snapshot's vectors exactly. The same for a store
// whose passages are in an HNSW index (a small hnsw_threshold), whose index
// is a part of its own.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <thread>

#include "common/hash.h"
#include "engine/engine_impl.h"
#include "flowrag/engine.h"
#include "graph/graph_io.h"
#include "graph/snapshot.h"
#include "models/embedder_setup.h"
#include "retrieval/retriever.h"
#include "snapshot_compare.h"
#include "storage/store.h"
#include "test_util.h"
#include "vector/flat_index.h"
#include "vector/hnsw_index.h"
#include "vector/sparse_index.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::TempDir;
using namespace snapshot_compare;  // NOLINT(google-build-using-namespace): test helpers

const std::string kDemo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";
const char* kParts[] = {kBm25Part, kGraphRowsPart, kGraphVectorsPart, kPassageVectorsPart};
// A store of hnsw_threshold passages or more: the HNSW index holds the
// passage vectors, there is no passage vectors part.
const char* kHnswParts[] = {kBm25Part, kGraphRowsPart, kGraphVectorsPart, kPassageHnswPart};
// The demo corpus has more passages than this: its dense index is HNSW.
constexpr size_t kSmallHnswThreshold = 4;

// A SnapshotSource that is not a Store: it forwards every read to one and
// fails those it is told to with IoError, as a disk or a connection would.
// Snapshot building sees nothing else of a store (graph/snapshot.h).
class FaultySource final : public SnapshotSource {
 public:
  explicit FaultySource(Store& store) : store_(store) {}

  std::string fail_chunks_of;  // a part whose chunks cannot be read
  bool fail_facts = false;     // the facts table cannot be read
  bool fail_puts = false;      // no part can be written
  int chunk_reads = 0;

  const std::string& path() const override { return store_.path(); }
  Status ForEachDocument(const std::function<Status(DocumentRow&&)>& fn,
                         int64_t after_id) override {
    return store_.ForEachDocument(fn, after_id);
  }
  Status ForEachPassage(const std::function<Status(const PassageRow&)>& fn,
                        int64_t after_id) override {
    return store_.ForEachPassage(fn, after_id);
  }
  Result<std::pair<int64_t, int64_t>> CountDocumentsAndPassages() override {
    return store_.CountDocumentsAndPassages();
  }
  Status ForEachPassageEmbedding(std::string_view model,
                                 const std::function<Status(int64_t, std::span<const float>)>& fn,
                                 int64_t after_id) override {
    return store_.ForEachPassageEmbedding(model, fn, after_id);
  }
  Result<FloatMatrix> GetEmbeddings(std::string_view model, std::span<const uint64_t> hashes,
                                    size_t dim, std::vector<bool>* found) override {
    return store_.GetEmbeddings(model, hashes, dim, found);
  }
  Result<size_t> EmbeddingDimension(std::string_view model) override {
    return store_.EmbeddingDimension(model);
  }
  Status ForEachEntity(const std::function<Status(EntityRow&&)>& fn) override {
    return store_.ForEachEntity(fn);
  }
  Status ForEachMention(const std::function<Status(const MentionRow&)>& fn) override {
    return store_.ForEachMention(fn);
  }
  Status ForEachDescription(const std::function<Status(DescriptionRow&&)>& fn) override {
    return store_.ForEachDescription(fn);
  }
  Status ForEachFact(const std::function<Status(const FactRow&)>& fn) override {
    if (fail_facts) return Status::IoError(path() + ": injected: the facts cannot be read");
    return store_.ForEachFact(fn);
  }
  Status ForEachRelation(const std::function<Status(int64_t, std::string&&)>& fn) override {
    return store_.ForEachRelation(fn);
  }
  Status ForEachFactSource(const std::function<Status(int64_t, int64_t)>& fn) override {
    return store_.ForEachFactSource(fn);
  }
  Status ForEachSynonym(const std::function<Status(const SynonymRow&)>& fn) override {
    return store_.ForEachSynonym(fn);
  }
  Result<std::vector<EntityRow>> EntitiesByIds(const std::vector<int64_t>& ids) override {
    return store_.EntitiesByIds(ids);
  }
  Result<GraphCounts> CountGraph() override { return store_.CountGraph(); }
  Result<int64_t> Generation() override { return store_.Generation(); }
  Result<std::optional<SnapshotPartInfo>> GetSnapshotPart(std::string_view name) override {
    return store_.GetSnapshotPart(name);
  }
  Status ReadSnapshotChunk(std::string_view name, int64_t seq, uint64_t offset, void* out,
                           size_t n) override {
    ++chunk_reads;
    if (name == fail_chunks_of) {
      return Status::IoError(path() + ": injected: chunk " + std::to_string(seq) + " of part " +
                             std::string(name) + " cannot be read");
    }
    return store_.ReadSnapshotChunk(name, seq, offset, out, n);
  }
  Result<bool> PutSnapshotPart(const SnapshotPartInfo& info, const PartProducer& produce) override {
    if (fail_puts) return Status::IoError(path() + ": injected: the disk is full");
    return store_.PutSnapshotPart(info, produce);
  }
  Status DropSnapshotParts() override { return store_.DropSnapshotParts(); }

 private:
  Store& store_;
};

// The bytes of a part, read with SQLite directly.
std::string PartBytes(const std::string& db_path, const std::string& part) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT data FROM snapshot_chunks WHERE part = ? ORDER BY seq", -1, &st,
                     nullptr);
  sqlite3_bind_text(st, 1, part.c_str(), -1, SQLITE_TRANSIENT);
  std::string bytes;
  while (sqlite3_step(st) == SQLITE_ROW) {
    bytes.append(static_cast<const char*>(sqlite3_column_blob(st, 0)),
                 static_cast<size_t>(sqlite3_column_bytes(st, 0)));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return bytes;
}

void ExecSql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

// Replaces part `name` with `bytes` (a valid checksum over them), keeping
// its generation, format and key.
void RewritePart(Store& store, const std::string& name, const std::string& bytes) {
  auto info = store.GetSnapshotPart(name);
  ASSERT_TRUE(info.ok() && info->has_value()) << name;
  auto put = store.PutSnapshotPart(**info, [&](const Store::ChunkSink& emit) -> Result<uint64_t> {
    for (size_t at = 0; at < bytes.size(); at += Store::kMaxSnapshotChunk) {
      FLOWRAG_RETURN_IF_ERROR(emit(std::string_view(bytes).substr(at, Store::kMaxSnapshotChunk)));
    }
    return PartChecksum(bytes);
  });
  ASSERT_TRUE(put.ok() && *put) << name;
}

class SnapshotPersistTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // The parts themselves are tested here: a SQLite store keeps them as a
    // PostgreSQL workspace does, not a snapshot segment
    // (snapshot_segment_test covers those).
    setenv("FLOWRAG_SNAPSHOT_SEGMENTS", "off", 1);
    dir_ = new TempDir();
    auto engine = Engine::Open(dir_->File("demo.db"));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    ASSERT_TRUE((*engine)->Index({kDemo}).ok());
    // The same corpus with its passages in an HNSW index.
    EngineOptions small;
    small.hnsw_threshold = kSmallHnswThreshold;
    small.passage_ann = "hnsw";
    auto hnsw = Engine::Open(dir_->File("demo-hnsw.db"), small);
    ASSERT_TRUE(hnsw.ok()) << hnsw.status().ToString();
    ASSERT_TRUE((*hnsw)->Index({kDemo}).ok());
  }
  static void TearDownTestSuite() {
    delete dir_;
    unsetenv("FLOWRAG_SNAPSHOT_SEGMENTS");  // later suites of the same process use segments
  }

  // A private copy of the indexed demo store (of the HNSW one).
  std::string CopyOfDemo() { return CopyOf("demo.db"); }
  std::string CopyOfHnswDemo() { return CopyOf("demo-hnsw.db"); }
  std::string CopyOf(const std::string& name) {
    const std::string path = local_.File("copy-" + name);
    std::filesystem::copy_file(dir_->File(name), path);
    return path;
  }

  void ExpectDamagedPartsRebuilt(const std::string& path, const std::vector<const char*>& parts,
                                 size_t hnsw_threshold);
  void ExpectCraftedPartsDoNotCrash(const std::string& path, const std::vector<const char*>& parts,
                                    size_t hnsw_threshold);
  // `kind`: the dense index's, before and after.
  void ExpectInsertAndDeleteKeepPartsCurrent(const std::string& path,
                                             const std::vector<const char*>& parts,
                                             size_t hnsw_threshold, const char* kind);
  // Appends cross the threshold (a flat index becomes `large`, then takes
  // the second append in place) and removals cross it back; each step's
  // snapshot equals a build, and its parts load.
  void ExpectAppendAndRemoveFollowTheThreshold(bool sparse_queries, const std::string& large);

  static TempDir* dir_;
  TempDir local_;
};
TempDir* SnapshotPersistTest::dir_ = nullptr;

TEST_F(SnapshotPersistTest, IndexPersistsEveryPartAtTheStoreGeneration) {
  OpenStore s(dir_->File("demo.db"));
  const int64_t generation = s.store->Generation().value();
  EXPECT_GT(generation, 1);
  for (const char* part : kParts) {
    auto info = s.store->GetSnapshotPart(part);
    ASSERT_TRUE(info.ok() && info->has_value()) << part;
    EXPECT_EQ((*info)->generation, generation) << part;
    EXPECT_GT((*info)->bytes, 0u) << part;
  }
  // Below the threshold: no HNSW index to persist.
  auto hnsw = s.store->GetSnapshotPart(kPassageHnswPart);
  ASSERT_TRUE(hnsw.ok());
  EXPECT_FALSE(hnsw->has_value());
}

// A snapshot lent as same_text with same_text_generation is shared only
// while the store is at that generation: after another engine deleted a
// document, the build reads the text again (a follower's refresh, which
// appended the store's new documents and then rebuilt the graph while the
// delete landed, kept the deleted passage searchable under the new
// generation). Lent at any generation (a writer's case), the old text
// stays: that is what the condition is for.
TEST_F(SnapshotPersistTest, ALentTextIsSharedOnlyAtItsGeneration) {
  const std::string path = dir_->File("lent.db");
  {
    auto engine = Engine::Open(path);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    ASSERT_TRUE((*engine)->IndexDocuments({{"base", "Base", "The harbour of Port Calder."},
                                           {"zeta", "Zeta Falls", "Zeta Falls lies in Quorbitania."}})
                    .ok());
  }
  std::shared_ptr<const Snapshot> before;
  {
    OpenStore s(path);
    before = s.Build(/*use_parts=*/false);
    ASSERT_NE(before, nullptr);
    ASSERT_EQ(before->num_passages(), 2u);
  }
  {
    auto engine = Engine::Open(path);
    ASSERT_TRUE(engine.ok());
    ASSERT_TRUE((*engine)->DeleteDocument("zeta").ok());
  }
  OpenStore s(path);
  SnapshotOptions so = s.Options(/*use_parts=*/false);
  so.same_text = before;
  so.same_text_generation = before->generation();
  auto after = Snapshot::Build(*s.store, s.embedder, so);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_GT((*after)->generation(), before->generation());
  EXPECT_EQ((*after)->num_passages(), 1u);
  EXPECT_EQ((*after)->document_of(0).external_id, "base");

  so.same_text_generation = -1;
  auto lent = Snapshot::Build(*s.store, s.embedder, so);
  ASSERT_TRUE(lent.ok());
  EXPECT_EQ((*lent)->num_passages(), 2u);
}

// The parts are a cache: a write that cannot store them succeeds, its
// documents are searchable, and the failure is in the engine's statistics
// (the library prints nothing).
TEST_F(SnapshotPersistTest, APartsWriteFailureIsReportedInStatsNotAsAnError) {
  const std::string path = CopyOfDemo();
  for (const char* op : {"INSERT", "UPDATE"}) {
    ExecSql(path, std::string("CREATE TRIGGER refuse_parts_") + op + " BEFORE " + op +
                      " ON snapshot_parts BEGIN SELECT RAISE(ABORT, 'parts refused by the test'); "
                      "END;");
  }
  const std::string doc = local_.File("zq.md");
  testing::WriteFile(doc, "# Zq\n\nQuorbitania borders the Zeta sea.\n");
  auto e = Engine::Open(path);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ASSERT_TRUE((*e)->Index({doc}).ok());  // a batch run writes the parts before it returns
  QueryOptions bm25;
  bm25.method = "bm25";
  auto found = (*e)->Query("Quorbitania", bm25);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_FALSE(found->passages.empty());
  EXPECT_NE(found->passages[0].document_id.find("zq"), std::string::npos);
  auto stats = (*e)->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_NE(stats->snapshot_parts_error.find("parts refused by the test"), std::string::npos)
      << stats->snapshot_parts_error;
  EXPECT_NE(stats->snapshot_parts_error.find(path), std::string::npos);
}

TEST_F(SnapshotPersistTest, IndexPersistsTheHnswIndexAtTheStoreGeneration) {
  OpenStore s(dir_->File("demo-hnsw.db"), true, kSmallHnswThreshold);
  const int64_t generation = s.store->Generation().value();
  for (const char* part : kHnswParts) {
    auto info = s.store->GetSnapshotPart(part);
    ASSERT_TRUE(info.ok() && info->has_value()) << part;
    EXPECT_EQ((*info)->generation, generation) << part;
    EXPECT_GT((*info)->bytes, 0u) << part;
  }
  auto hnsw = s.store->GetSnapshotPart(kPassageHnswPart);
  EXPECT_EQ((*hnsw)->key, PassageHnswPartKey(s.dense_model, 16, 200, 42));
  // The HNSW index holds the vectors: no passage vectors part besides it.
  auto vectors = s.store->GetSnapshotPart(kPassageVectorsPart);
  ASSERT_TRUE(vectors.ok());
  EXPECT_FALSE(vectors->has_value());
}

TEST_F(SnapshotPersistTest, SnapshotFromPartsEqualsSnapshotFromRows) {
  OpenStore s(dir_->File("demo.db"));
  SnapshotBuildStats loaded, rebuilt;
  auto a = s.Build(/*use_parts=*/true, &loaded);
  auto b = s.Build(/*use_parts=*/false, &rebuilt);
  ASSERT_TRUE(a && b);
  ASSERT_NE(a->graph(), nullptr);
  for (const char* part : kParts) {
    EXPECT_EQ(loaded.parts[part], PartState::kLoaded) << part;
    EXPECT_EQ(rebuilt.parts[part], PartState::kRebuilt) << part;
  }
  EXPECT_TRUE(loaded.part_errors.empty());
  EXPECT_EQ(loaded.graph_texts_embedded, 0u);
  EXPECT_GT(rebuilt.graph_texts_embedded, 0u);
  ExpectSameSnapshot(*a, *b);
  ExpectSameAnswers(*a, *b);
}

// graph/ reads a store through SnapshotSource alone: over a source that
// is not a Store, a part whose chunks cannot be read (an I/O error, not
// damage) is derived from the rows instead and the snapshot equals one from
// rows; a table that cannot be read fails the build with the store's error;
// parts that cannot be written are reported and written by a later call.
TEST_F(SnapshotPersistTest, ASnapshotOverAFailingSourceRebuildsWhatItCannotRead) {
  const std::string path = CopyOfDemo();
  OpenStore s(path, /*read_only=*/false);
  auto rows = s.Build(/*use_parts=*/false);
  ASSERT_TRUE(rows);
  FaultySource source(*s.store);
  source.fail_chunks_of = kGraphRowsPart;
  SnapshotBuildStats stats;
  auto snap = Snapshot::Build(source, s.embedder, s.Options(/*use_parts=*/true), &stats);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_GT(source.chunk_reads, 0);
  EXPECT_EQ(stats.parts[kBm25Part], PartState::kLoaded);
  EXPECT_EQ(stats.parts[kPassageVectorsPart], PartState::kLoaded);
  EXPECT_EQ(stats.parts[kGraphRowsPart], PartState::kRebuilt);
  ASSERT_EQ(stats.part_errors.size(), 1u);
  EXPECT_EQ(stats.part_errors[0].rfind(kGraphRowsPart, 0), 0u) << stats.part_errors[0];
  EXPECT_NE(stats.part_errors[0].find("injected"), std::string::npos) << stats.part_errors[0];
  ExpectSameSnapshot(**snap, *rows);
  ExpectSameAnswers(**snap, *rows);

  source.fail_chunks_of.clear();
  source.fail_facts = true;
  auto failed = Snapshot::Build(source, s.embedder, s.Options(/*use_parts=*/false));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kIoError);
  EXPECT_NE(failed.status().message().find("injected"), std::string::npos);

  // A snapshot from rows has every part to write; a full disk writes none.
  source.fail_facts = false;
  source.fail_puts = true;
  SnapshotOptions persistable = s.Options(/*use_parts=*/false);
  persistable.persistable = true;
  auto fresh = Snapshot::Build(source, s.embedder, persistable);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_EQ((*fresh)->PersistParts(source).status().code(), StatusCode::kIoError);
  source.fail_puts = false;
  auto written = (*fresh)->PersistParts(source);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_EQ(*written, std::size(kParts));
}

// The HNSW index loaded from its part is the one built from the rows (same
// graph bytes), so every query answers the same; the open reads no passage
// vectors.
TEST_F(SnapshotPersistTest, HnswIndexFromPartsEqualsIndexFromRows) {
  OpenStore s(dir_->File("demo-hnsw.db"), true, kSmallHnswThreshold);
  SnapshotBuildStats loaded, rebuilt;
  auto a = s.Build(/*use_parts=*/true, &loaded);
  auto b = s.Build(/*use_parts=*/false, &rebuilt);
  ASSERT_TRUE(a && b);
  ASSERT_NE(a->dense(), nullptr);
  EXPECT_EQ(a->dense()->Kind(), "hnsw");
  EXPECT_EQ(a->dense()->Size(), a->num_passages());
  for (const char* part : kHnswParts) {
    EXPECT_EQ(loaded.parts[part], PartState::kLoaded) << part;
    EXPECT_EQ(rebuilt.parts[part], PartState::kRebuilt) << part;
  }
  EXPECT_EQ(loaded.parts.count(kPassageVectorsPart), 0u);
  EXPECT_EQ(loaded.part_errors.size(), 0u);
  ExpectSameSnapshot(*a, *b);
  ExpectSameAnswers(*a, *b);
  // Dense search straight on the two indexes, with and without a filter.
  for (const std::string& q : DemoQuestions()) {
    auto v = s.embedder->Embed(std::vector<std::string>{q});
    ASSERT_TRUE(v.ok());
    for (bool filtered : {false, true}) {
      VectorSearchParams params;
      params.k = 8;
      if (filtered) params.filter = [](uint32_t id) { return id % 3 != 0; };
      const auto x = a->dense()->Search(v->row(0), params, nullptr);
      const auto y = b->dense()->Search(v->row(0), params, nullptr);
      ASSERT_EQ(x.size(), y.size()) << q;
      for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_EQ(x[i].id, y[i].id) << q;
        EXPECT_EQ(x[i].score, y[i].score) << q;
      }
    }
  }
  // Another threshold: the part is not for a flat index.
  OpenStore flat(dir_->File("demo-hnsw.db"));
  SnapshotBuildStats stats;
  auto c = flat.Build(true, &stats);
  EXPECT_EQ(c->dense()->Kind(), "flat");
  EXPECT_EQ(stats.parts.count(kPassageHnswPart), 0u);
  // Other HNSW options: the key differs, the part is stale.
  SnapshotOptions so = s.Options(true);
  so.vector.hnsw_m = 8;
  auto d = Snapshot::Build(*s.store, s.embedder, so, &stats);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(stats.parts[kPassageHnswPart], PartState::kRebuilt);
  EXPECT_EQ(dynamic_cast<const HnswIndex*>((*d)->dense())->m(), 8u);
}

// Rewrites the last chunk of `part` with `change` applied, behind the
// store's back (as a disk or another program might).
void DamageLastChunk(const std::string& db_path, const std::string& part,
                     const std::function<void(std::string*)>& change) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(
      db, "SELECT seq, data FROM snapshot_chunks WHERE part = ?1 ORDER BY seq DESC LIMIT 1", -1,
      &st, nullptr);
  sqlite3_bind_text(st, 1, part.c_str(), -1, SQLITE_TRANSIENT);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  const int64_t seq = sqlite3_column_int64(st, 0);
  std::string data(static_cast<const char*>(sqlite3_column_blob(st, 1)),
                   static_cast<size_t>(sqlite3_column_bytes(st, 1)));
  sqlite3_finalize(st);
  change(&data);
  sqlite3_prepare_v2(db, "UPDATE snapshot_chunks SET data = ?3 WHERE part = ?1 AND seq = ?2", -1,
                     &st, nullptr);
  sqlite3_bind_text(st, 1, part.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 2, seq);
  sqlite3_bind_blob(st, 3, data.data(), static_cast<int>(data.size()), SQLITE_TRANSIENT);
  EXPECT_EQ(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

void SnapshotPersistTest::ExpectDamagedPartsRebuilt(const std::string& path,
                                                    const std::vector<const char*>& parts,
                                                    size_t hnsw_threshold) {
  struct Damage {
    const char* what;
    std::function<void(const std::string& db, const std::string& part)> apply;
    const char* error;  // a word the reason names
  };
  auto sql = [](const char* statement) {
    return [statement](const std::string& db, const std::string& part) {
      std::string s = statement;
      for (size_t at; (at = s.find("?1")) != std::string::npos;) s.replace(at, 2, "'" + part + "'");
      ExecSql(db, s);
    };
  };
  const Damage damages[] = {
      // The last byte is the high byte of a float, length or count: the
      // part may still parse (then only the checksum tells; see below).
      {"a flipped bit",
       [](const std::string& db, const std::string& part) {
         DamageLastChunk(db, part, [](std::string* d) { d->back() ^= 1; });
       },
       ""},
      {"a truncated chunk",
       [](const std::string& db, const std::string& part) {
         DamageLastChunk(db, part, [](std::string* d) { d->resize(d->size() - 3); });
       },
       "bytes"},
      {"a missing chunk", sql("DELETE FROM snapshot_chunks WHERE part = ?1 AND seq = 0"),
       "missing"},
      {"a wrong length", sql("UPDATE snapshot_parts SET bytes = bytes + 8 WHERE name = ?1"),
       "bytes"},
      {"an old generation",
       sql("UPDATE snapshot_parts SET generation = generation - 1 WHERE name = ?1"), "generation"},
      {"another format", sql("UPDATE snapshot_parts SET format = format + 1 WHERE name = ?1"),
       "format"},
      {"another key", sql("UPDATE snapshot_parts SET key = key || 'x' WHERE name = ?1"), "key"},
  };
  OpenStore reference(path, true, hnsw_threshold);
  auto rows = reference.Build(false);
  for (const char* part : parts) {
    for (const Damage& d : damages) {
      SCOPED_TRACE(std::string(part) + ": " + d.what);
      const std::string copy = local_.File(std::string("damaged-") + part + ".db");
      std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
      d.apply(copy, part);
      OpenStore s(copy, true, hnsw_threshold);
      SnapshotBuildStats stats;
      auto snap = s.Build(true, &stats);
      ASSERT_TRUE(snap);
      EXPECT_EQ(stats.parts[part], PartState::kRebuilt);
      bool named = false;
      for (const std::string& e : stats.part_errors) {
        named |= e.rfind(part, 0) == 0 && e.find(d.error) != std::string::npos;
      }
      EXPECT_TRUE(named) << (stats.part_errors.empty() ? "no error" : stats.part_errors[0]);
      ExpectSameSnapshot(*snap, *rows);
    }
  }
}

TEST_F(SnapshotPersistTest, DamagedPartsAreDetectedAndRebuilt) {
  const std::string path = CopyOfDemo();
  ExpectDamagedPartsRebuilt(path, std::vector<const char*>(std::begin(kParts), std::end(kParts)),
                            kDefaultHnswThreshold);
  OpenStore reference(path);
  auto rows = reference.Build(false);
  // A part that still parses is caught by its checksum (the vectors end with
  // a float whose exponent the flip changes), and the snapshot rebuilt
  // around it answers as one from rows.
  DamageLastChunk(path, kGraphVectorsPart, [](std::string* d) { d->back() ^= 1; });
  OpenStore s(path);
  SnapshotBuildStats stats;
  auto snap = s.Build(true, &stats);
  ASSERT_EQ(stats.part_errors.size(), 1u);
  EXPECT_NE(stats.part_errors[0].find("checksum mismatch"), std::string::npos)
      << stats.part_errors[0];
  EXPECT_EQ(stats.parts[kBm25Part], PartState::kLoaded);
  ExpectSameAnswers(*snap, *rows);
}

// The HNSW part damaged on disk, or crafted with a valid part checksum
// around a damaged or foreign index: detected (the part's framing, then
// HnswIndex::Load's own checks), the index built again from the rows.
TEST_F(SnapshotPersistTest, DamagedHnswPartIsDetectedAndRebuilt) {
  const std::string path = CopyOfHnswDemo();
  ExpectDamagedPartsRebuilt(path, {kPassageHnswPart}, kSmallHnswThreshold);

  OpenStore reference(path, true, kSmallHnswThreshold);
  auto rows = reference.Build(false);
  const std::string original = PartBytes(path, kPassageHnswPart);
  ASSERT_GT(original.size(), 64u);
  // The framing: magic, passages, passages without vectors, index bytes.
  uint64_t passages = 0;
  std::memcpy(&passages, original.data() + 8, 8);
  ASSERT_EQ(passages, rows->num_passages());
  auto with_word = [&](size_t at, uint64_t value) {
    std::string b = original;
    std::memcpy(b.data() + at, &value, 8);
    return b;
  };
  // An index built with other options, framed as the part expects.
  std::string other;
  {
    VectorIndexOptions o;
    o.hnsw_m = 8;
    auto index = HnswIndex::Create(rows->dense()->Dimension(), passages, o);
    ASSERT_TRUE(index.ok());
    FloatMatrix m(passages, rows->dense()->Dimension());
    for (uint32_t p = 0; p < passages; ++p) {
      std::memcpy(m.row(p), dynamic_cast<const HnswIndex*>(rows->dense())->Vector(p),
                  m.cols * sizeof(float));
    }
    ASSERT_TRUE((*index)->Add(m).ok());
    std::string saved;
    ASSERT_TRUE((*index)->Save(&saved).ok());
    other = original.substr(0, 24);
    const uint64_t size = saved.size();
    other.append(reinterpret_cast<const char*>(&size), 8);
    other += saved;
  }
  std::string flipped = original;
  flipped[original.size() / 2] ^= 0x10;  // inside the vectors: Load's checksum
  const struct {
    const char* what;
    std::string bytes;
    const char* error;
  } crafted[] = {
      {"a flipped byte in the index", flipped, "checksum mismatch"},
      {"another passage count", with_word(8, passages + 1), "passages"},
      {"more passages without vectors than passages", with_word(16, passages + 1),
       "without vectors"},
      {"an index longer than the part", with_word(24, original.size()), "left"},
      {"bytes after the index", original + std::string(8, '\0'), "trailing"},
      {"another magic", with_word(0, 0x31434556474646ull), "magic"},
      {"an index built with another M", other, "built with M 8"},
  };
  for (const auto& c : crafted) {
    SCOPED_TRACE(c.what);
    {
      StoreOptions so;
      so.create_if_missing = false;
      auto store = Store::Open(path, so);
      ASSERT_TRUE(store.ok());
      RewritePart(**store, kPassageHnswPart, c.bytes);
    }
    OpenStore s(path, true, kSmallHnswThreshold);
    SnapshotBuildStats stats;
    auto snap = s.Build(true, &stats);
    ASSERT_TRUE(snap);
    EXPECT_EQ(stats.parts[kPassageHnswPart], PartState::kRebuilt);
    ASSERT_EQ(stats.part_errors.size(), 1u);
    EXPECT_NE(stats.part_errors[0].find(c.error), std::string::npos) << stats.part_errors[0];
    EXPECT_EQ(stats.parts[kBm25Part], PartState::kLoaded);
    ExpectSameSnapshot(*snap, *rows);
  }
}

// Crafted parts with valid checksums (a writer's bug, a hostile file): the
// reader must reject or accept them without crashing or reading out of
// bounds (the sanitizer build runs this too).
void SnapshotPersistTest::ExpectCraftedPartsDoNotCrash(const std::string& path,
                                                       const std::vector<const char*>& parts,
                                                       size_t hnsw_threshold) {
  std::mt19937 rng(20);
  for (const char* part : parts) {
    const std::string original = PartBytes(path, part);
    ASSERT_FALSE(original.empty()) << part;
    for (int trial = 0; trial < 24; ++trial) {
      std::string bytes = original;
      switch (trial % 4) {
        case 0:  // flipped bytes
          for (int i = 0; i < 1 + trial % 7; ++i)
            bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
          break;
        case 1:  // truncated
          bytes.resize(rng() % bytes.size());
          break;
        case 2: {  // an aligned 8-byte word (often a count) made huge
          const size_t at = (rng() % (bytes.size() / 8)) * 8;
          const uint64_t huge = (uint64_t{1} << (40 + rng() % 23)) + rng();
          std::memcpy(bytes.data() + at, &huge, std::min<size_t>(8, bytes.size() - at));
          break;
        }
        default:  // a word made small (counts, offsets, ids)
          if (bytes.size() >= 16) {
            const size_t at = (rng() % (bytes.size() / 8)) * 8;
            const uint64_t small = rng() % 5;
            std::memcpy(bytes.data() + at, &small, 8);
          }
          break;
      }
      {
        StoreOptions so;
        so.create_if_missing = false;
        auto store = Store::Open(path, so);
        ASSERT_TRUE(store.ok());
        RewritePart(**store, part, bytes);
      }
      OpenStore s(path, true, hnsw_threshold);
      SnapshotBuildStats stats;
      auto snap = s.Build(true, &stats);
      ASSERT_TRUE(snap) << part << " trial " << trial;
    }
    StoreOptions so;
    so.create_if_missing = false;
    auto store = Store::Open(path, so);
    ASSERT_TRUE(store.ok());
    RewritePart(**store, part, original);
  }
}

TEST_F(SnapshotPersistTest, CraftedPartsNeverCrashTheReader) {
  ExpectCraftedPartsDoNotCrash(CopyOfDemo(),
                               std::vector<const char*>(std::begin(kParts), std::end(kParts)),
                               kDefaultHnswThreshold);
  ExpectCraftedPartsDoNotCrash(CopyOfHnswDemo(), {kPassageHnswPart}, kSmallHnswThreshold);
}

TEST_F(SnapshotPersistTest, AnOlderFormatStoreOpensAndGainsItsParts) {
  const std::string path = CopyOfDemo();
  // Format 5: no parts, no generation.
  ExecSql(path,
          "DROP TABLE snapshot_chunks; DROP TABLE snapshot_parts; DELETE FROM meta WHERE key = "
          "'generation'; UPDATE meta SET value = '5' WHERE key = 'format_version';");
  {
    EngineOptions ro;
    ro.read_only = true;
    auto e = Engine::Open(path, ro);
    ASSERT_FALSE(e.ok());  // a migration needs a writable open, as before
  }
  {
    auto e = Engine::Open(path);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    auto stats = (*e)->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->format_version, kStoreFormatVersion);
    auto r = (*e)->Query("Who founded the Lantern Tide Festival?");
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->passages.empty());
  }
  OpenStore s(path);
  EXPECT_EQ(s.store->Generation().value(), 1);
  SnapshotBuildStats stats;
  auto a = s.Build(true, &stats);
  for (const char* part : kParts) EXPECT_EQ(stats.parts[part], PartState::kLoaded) << part;
  auto b = s.Build(false);
  ExpectSameSnapshot(*a, *b);
}

// A store written before the HNSW part existed (its other parts current):
// a read-only engine's first read builds the index as before, a writable
// engine's writes the part, and later opens load it.
TEST_F(SnapshotPersistTest, AStoreWithoutTheHnswPartOpensAndGainsIt) {
  const std::string path = CopyOfHnswDemo();
  ExecSql(path,
          "DELETE FROM snapshot_chunks WHERE part = 'passage_hnsw'; "
          "DELETE FROM snapshot_parts WHERE name = 'passage_hnsw';");
  OpenStore before(path, true, kSmallHnswThreshold);
  const int64_t generation = before.store->Generation().value();
  SnapshotBuildStats stats;
  auto rows = before.Build(true, &stats);
  ASSERT_TRUE(rows);
  EXPECT_EQ(stats.parts[kPassageHnswPart], PartState::kRebuilt);
  EXPECT_TRUE(stats.part_errors.empty());  // missing is no error
  EXPECT_EQ(stats.parts[kGraphRowsPart], PartState::kLoaded);
  {
    EngineOptions ro;
    ro.read_only = true;
    ro.hnsw_threshold = kSmallHnswThreshold;
    ro.passage_ann = "hnsw";
    auto e = Engine::Open(path, ro);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    ASSERT_TRUE((*e)->Refresh().ok());
  }
  EXPECT_FALSE(before.store->GetSnapshotPart(kPassageHnswPart).value().has_value());
  {
    EngineOptions o;
    o.hnsw_threshold = kSmallHnswThreshold;
    o.passage_ann = "hnsw";
    auto e = Engine::Open(path, o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    ASSERT_TRUE((*e)->Refresh().ok());  // the first read loads (and persists) the snapshot
  }
  OpenStore after(path, true, kSmallHnswThreshold);
  EXPECT_EQ(after.store->Generation().value(), generation);
  auto info = after.store->GetSnapshotPart(kPassageHnswPart);
  ASSERT_TRUE(info.ok() && info->has_value());
  EXPECT_EQ((*info)->generation, generation);
  auto loaded = after.Build(true, &stats);
  for (const char* part : kHnswParts) EXPECT_EQ(stats.parts[part], PartState::kLoaded) << part;
  ExpectSameSnapshot(*loaded, *rows);
}

void SnapshotPersistTest::ExpectInsertAndDeleteKeepPartsCurrent(
    const std::string& path, const std::vector<const char*>& parts, size_t hnsw_threshold,
    const char* kind) {
  EngineOptions options;
  options.hnsw_threshold = hnsw_threshold;
  options.passage_ann = "hnsw";
  auto opened = Engine::Open(path, options);
  ASSERT_TRUE(opened.ok());
  std::unique_ptr<Engine> engine = std::move(opened).value();
  auto* impl = dynamic_cast<EngineImpl*>(engine.get());
  const size_t texts_before = impl->snapshot()->graph()->num_fact_texts();

  auto check = [&](const std::string& when) {
    SCOPED_TRACE(when);
    OpenStore s(path, true, hnsw_threshold);
    const int64_t generation = s.store->Generation().value();
    EXPECT_EQ(impl->snapshot()->generation(), generation);
    EXPECT_EQ(impl->snapshot()->dense()->Kind(), kind);
    // Written in the background, half a second after the last write.
    for (const char* part : parts) {
      for (int wait = 0; wait < 200; ++wait) {
        auto info = s.store->GetSnapshotPart(part);
        ASSERT_TRUE(info.ok() && info->has_value()) << part;
        if ((*info)->generation == generation) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      EXPECT_EQ((*s.store->GetSnapshotPart(part))->generation, generation) << part;
    }
    SnapshotBuildStats stats;
    auto loaded = s.Build(true, &stats);
    for (const char* part : parts) EXPECT_EQ(stats.parts[part], PartState::kLoaded) << part;
    auto rebuilt = s.Build(false);
    ExpectSameSnapshot(*loaded, *rebuilt);
    // The engine's own snapshot reused the earlier one's vectors (and dense
    // index): still equal.
    ExpectSameSnapshot(*impl->snapshot(), *rebuilt);
    ExpectSameAnswers(*impl->snapshot(), *rebuilt);
  };

  DocumentInput doc;
  doc.id = "extra/brannock_ferry.md";
  doc.title = "Brannock Ferry";
  doc.text =
      "The Brannock Ferry crosses the River Ostrel at Port Calder. It was founded by "
      "Tobias Halloran in 1881 and later run by the Halloran-Vey Line.";
  auto r = engine->IndexDocuments({doc});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const SnapshotBuildStats& after_insert = impl->snapshot()->build_stats();
  EXPECT_LT(after_insert.graph_texts_embedded, texts_before);  // only the new texts
  check("after the insert");
  auto q = engine->Query("Who founded the Brannock Ferry?");
  ASSERT_TRUE(q.ok());
  ASSERT_FALSE(q->passages.empty());
  EXPECT_EQ(q->passages[0].document_id, doc.id);

  ASSERT_TRUE(engine->DeleteDocument(doc.id).ok());
  check("after the delete");
}

TEST_F(SnapshotPersistTest, InsertAndDeleteKeepThePartsCurrent) {
  ExpectInsertAndDeleteKeepPartsCurrent(
      CopyOfDemo(), std::vector<const char*>(std::begin(kParts), std::end(kParts)),
      kDefaultHnswThreshold, "flat");
}

// The insert extends a copy of the HNSW index, the delete builds it again:
// both equal to the index built from the rows, byte for byte.
TEST_F(SnapshotPersistTest, InsertAndDeleteKeepTheHnswPartCurrent) {
  ExpectInsertAndDeleteKeepPartsCurrent(
      CopyOfHnswDemo(), std::vector<const char*>(std::begin(kHnswParts), std::end(kHnswParts)),
      kSmallHnswThreshold, "hnsw");
}

// A one-passage document whose passage vector is already in the store's
// embedding cache (as the embed phase leaves it).
DocumentWrite EmbeddedDocument(OpenStore& s, const std::string& id, const std::string& title,
                               const std::string& text, uint64_t content_hash) {
  DocumentWrite w;
  w.doc.external_id = id;
  w.doc.title = title;
  w.doc.text = text;
  w.content_hash = content_hash;
  w.chunking = "test";
  PassageWrite p;
  p.end = static_cast<uint32_t>(text.size());
  p.embed_hash = Hash64(PassageEmbedText(title, text));
  w.passages.push_back(p);
  auto v = s.embedder->Embed(std::vector<std::string>{PassageEmbedText(title, text)});
  EXPECT_TRUE(v.ok());
  if (v.ok()) {
    EXPECT_TRUE(
        s.store->PutEmbeddings(s.dense_model, std::vector<uint64_t>{p.embed_hash}, *v).ok());
  }
  return w;
}

// Documents appended to the store (stored and embedded, not yet extracted):
// Snapshot::Append extends the earlier snapshot to exactly what Build reads.
TEST_F(SnapshotPersistTest, AppendEqualsBuildAfterDocumentsAreAdded) {
  const std::string path = CopyOfDemo();
  OpenStore s(path, /*read_only=*/false);
  SnapshotOptions so;
  so.dense_model = s.dense_model;
  so.persistable = true;
  auto before = Snapshot::Build(*s.store, s.embedder, so);
  ASSERT_TRUE(before.ok());
  for (bool from_parts : {true, false}) {
    SCOPED_TRACE(from_parts ? "earlier snapshot from parts" : "earlier snapshot from rows");
    so.use_parts = from_parts;
    auto base = Snapshot::Build(*s.store, s.embedder, so);
    ASSERT_TRUE(base.ok());
    std::vector<DocumentWrite> batch;
    for (int i = 0; i < 2; ++i) {
      batch.push_back(EmbeddedDocument(
          s, "appended-" + std::to_string(i) + (from_parts ? "p" : "r"),
          "Appended " + std::to_string(i),
          "The Ostrel lighthouse keeper Mara Quill rowed to Port Calder in 1890. Storm "
          "nights followed.",
          100 + i));
    }
    ASSERT_TRUE(s.store->WriteDocuments(batch).ok());
    SnapshotBuildStats stats;
    auto appended = Snapshot::Append(*s.store, **base, &stats);
    ASSERT_TRUE(appended.ok()) << appended.status().ToString();
    EXPECT_EQ((*appended)->num_passages(), (*base)->num_passages() + 2);
    EXPECT_EQ((*appended)->generation(), s.store->Generation().value());
    EXPECT_EQ((*appended)->graph()->vectors(), (*base)->graph()->vectors());  // shared
    SnapshotOptions rows;
    rows.dense_model = s.dense_model;
    rows.use_parts = false;
    auto rebuilt = Snapshot::Build(*s.store, s.embedder, rows);
    ASSERT_TRUE(rebuilt.ok());
    ExpectSameSnapshot(**appended, **rebuilt);
    ExpectSameAnswers(**appended, **rebuilt);
    // And once more on top of the appended one.
    batch[0].doc.external_id += "-again";
    batch.resize(1);
    ASSERT_TRUE(s.store->WriteDocuments(batch).ok());
    auto twice = Snapshot::Append(*s.store, **appended);
    ASSERT_TRUE(twice.ok()) << twice.status().ToString();
    auto rebuilt_twice = Snapshot::Build(*s.store, s.embedder, rows);
    ExpectSameSnapshot(**twice, **rebuilt_twice);
  }
  // A removal is not an append.
  ASSERT_TRUE(s.store->DeleteDocument("appended-0p").ok());
  auto base = Snapshot::Build(*s.store, s.embedder, so);
  ASSERT_TRUE(s.store->DeleteDocument("appended-1p").ok());
  EXPECT_EQ(Snapshot::Append(*s.store, **base).status().code(), StatusCode::kFailedPrecondition);
  // Nor is a snapshot that kept no rows.
  so.persistable = false;
  auto plain = Snapshot::Build(*s.store, s.embedder, so);
  EXPECT_EQ(Snapshot::Append(*s.store, **plain).status().code(), StatusCode::kFailedPrecondition);
}

// Appended passages that fall in the graph's empty passage slots
// (PassageSlots) keep the earlier graph object, persisted values included;
// one past them builds the graph again. Either way the snapshot equals
// Build on the store, and so does one read back from what it persists (the
// rows' passage count corrected on write).
TEST_F(SnapshotPersistTest, AppendKeepsTheGraphWithinItsPassageSlots) {
  const std::string path = CopyOfDemo();
  OpenStore s(path, /*read_only=*/false);
  int next = 0;
  auto add_documents = [&](int n) {
    std::vector<DocumentWrite> batch;
    for (int i = 0; i < n; ++i, ++next) {
      batch.push_back(EmbeddedDocument(
          s, "slot-" + std::to_string(next), "Slot page " + std::to_string(next),
          "Keeper Mara Quill rowed page " + std::to_string(next) + " to Port Calder.", 500 + next));
    }
    ASSERT_TRUE(s.store->WriteDocuments(batch).ok());
  };
  SnapshotOptions so = s.Options(/*use_parts=*/false);
  so.persistable = true;
  auto first = Snapshot::Build(*s.store, s.embedder, so);
  ASSERT_TRUE(first.ok());
  // Up to 65 passages: 66 slots, so the 66th passage shares the graph.
  ASSERT_LT((*first)->num_passages(), 65u);
  add_documents(static_cast<int>(65 - (*first)->num_passages()));
  auto base = Snapshot::Build(*s.store, s.embedder, so);
  ASSERT_TRUE(base.ok());
  ASSERT_EQ((*base)->num_passages(), 65u);
  ASSERT_EQ((*base)->graph()->num_passages(), 66u);
  std::shared_ptr<const Snapshot> previous = *base;
  for (const bool shares : {true, false}) {
    SCOPED_TRACE(shares ? "within the slots" : "past the slots");
    add_documents(1);
    auto appended = Snapshot::Append(*s.store, *previous);
    ASSERT_TRUE(appended.ok()) << appended.status().ToString();
    EXPECT_EQ((*appended)->graph() == previous->graph(), shares);
    EXPECT_EQ((*appended)->graph()->num_passages(), shares ? 66u : 68u);
    auto rebuilt = s.Build(/*use_parts=*/false);
    ASSERT_NE(rebuilt, nullptr);
    ExpectSameSnapshot(**appended, *rebuilt);
    ExpectSameAnswers(**appended, *rebuilt);
    ASSERT_TRUE((*appended)->PersistParts(*s.store).ok());
    auto read_back = s.Build(/*use_parts=*/true);
    ASSERT_NE(read_back, nullptr);
    ExpectSameSnapshot(*read_back, *rebuilt);
    previous = *appended;
  }
}

// A document deleted from the store: Snapshot::Remove updates the earlier
// snapshot in memory to exactly what Build reads (BM25 up to term numbering).
TEST_F(SnapshotPersistTest, RemoveEqualsBuildAfterADelete) {
  const std::string path = CopyOfDemo();
  OpenStore s(path, /*read_only=*/false);
  SnapshotOptions so;
  so.dense_model = s.dense_model;
  so.persistable = true;
  auto base = Snapshot::Build(*s.store, s.embedder, so);
  ASSERT_TRUE(base.ok());
  SnapshotOptions rows;
  rows.dense_model = s.dense_model;
  rows.use_parts = false;
  // A person (their name is linked from other documents), a place, then a
  // document on top of a removed snapshot.
  for (const char* id :
       {"people/corin_aske.md", "places/port_calder.md", "lantern_tide_festival.md"}) {
    SCOPED_TRACE(id);
    ASSERT_TRUE(s.store->DeleteDocument(id).ok());
    SnapshotBuildStats stats;
    auto removed = Snapshot::Remove(*s.store, **base, id, &stats);
    ASSERT_TRUE(removed.ok()) << removed.status().ToString();
    EXPECT_EQ((*removed)->num_documents() + 1, (*base)->num_documents());
    EXPECT_EQ((*removed)->generation(), s.store->Generation().value());
    auto rebuilt = Snapshot::Build(*s.store, s.embedder, rows);
    ASSERT_TRUE(rebuilt.ok());
    ExpectSameSnapshot(**removed, **rebuilt);
    ExpectSameAnswers(**removed, **rebuilt);
    base = removed;
  }
  // Not the document the store removed: refused.
  EXPECT_EQ(Snapshot::Remove(*s.store, **base, "places/river_ostrel.md").status().code(),
            StatusCode::kFailedPrecondition);
}

// Stores one document of one passage with its embedding, as an insert does
// before its extraction.
void StoreDocument(OpenStore& s, const std::string& id, uint64_t content_hash) {
  DocumentWrite w;
  w.doc.external_id = id;
  w.doc.title = "Appended " + id;
  w.doc.text = "The Ostrel lighthouse keeper Mara Quill rowed to Port Calder in 1890 (" + id + ").";
  w.content_hash = content_hash;
  w.chunking = "test";
  PassageWrite p;
  p.end = static_cast<uint32_t>(w.doc.text.size());
  p.embed_hash = Hash64(PassageEmbedText(w.doc.title, w.doc.text));
  w.passages.push_back(p);
  auto v = s.embedder->Embed(std::vector<std::string>{PassageEmbedText(w.doc.title, w.doc.text)});
  ASSERT_TRUE(v.ok());
  ASSERT_TRUE(s.store->PutEmbeddings(s.dense_model, std::vector<uint64_t>{p.embed_hash}, *v).ok());
  ASSERT_TRUE(s.store->WriteDocuments(std::span<const DocumentWrite>(&w, 1)).ok());
}

// Append and Remove give the dense index Build would: HNSW from the
// threshold on (built from all vectors when an append crosses it, copied and
// extended after), flat again below it; each persists as the part of its
// kind.
void SnapshotPersistTest::ExpectAppendAndRemoveFollowTheThreshold(bool sparse_queries,
                                                                  const std::string& large) {
  const std::string path = CopyOfDemo();
  OpenStore s(path, /*read_only=*/false);
  s.sparse_queries = sparse_queries;
  s.hnsw_threshold = s.Build(false)->num_passages() + 1;
  SnapshotOptions so = s.Options(true);
  so.persistable = true;
  auto flat = Snapshot::Build(*s.store, s.embedder, so);
  ASSERT_TRUE(flat.ok());
  ASSERT_EQ((*flat)->dense()->Kind(), "flat");
  std::shared_ptr<const Snapshot> current = *flat;
  auto expect_as_built = [&](const std::string& kind) {
    EXPECT_EQ(current->dense()->Kind(), kind);
    EXPECT_EQ(current->generation(), s.store->Generation().value());
    auto rebuilt = s.Build(false);
    ASSERT_TRUE(rebuilt);
    EXPECT_EQ(rebuilt->dense()->Kind(), kind);
    ExpectSameSnapshot(*current, *rebuilt);
    ExpectSameAnswers(*current, *rebuilt);
    // Its parts: the index of its kind, loaded by the next open.
    auto written = current->PersistParts(*s.store);
    ASSERT_TRUE(written.ok()) << written.status().ToString();
    SnapshotBuildStats stats;
    auto loaded = s.Build(true, &stats);
    ASSERT_TRUE(loaded);
    const char* part = kind == "hnsw" ? kPassageHnswPart : kPassageVectorsPart;
    EXPECT_EQ(stats.parts[part], PartState::kLoaded) << part;
    ExpectSameSnapshot(*loaded, *rebuilt);
  };
  const std::string kinds[] = {large, large};
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE("append " + std::to_string(i));
    StoreDocument(s, "crossing-" + std::to_string(i), 200 + i);
    auto appended = Snapshot::Append(*s.store, *current);
    ASSERT_TRUE(appended.ok()) << appended.status().ToString();
    current = *appended;
    expect_as_built(kinds[i]);
  }
  const std::string after_removal[] = {large, "flat"};
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE("remove " + std::to_string(i));
    const std::string id = "crossing-" + std::to_string(1 - i);
    ASSERT_TRUE(s.store->DeleteDocument(id).ok());
    auto removed = Snapshot::Remove(*s.store, *current, id);
    ASSERT_TRUE(removed.ok()) << removed.status().ToString();
    current = *removed;
    expect_as_built(after_removal[i]);
  }
}

TEST_F(SnapshotPersistTest, AppendAndRemoveFollowTheHnswThreshold) {
  ExpectAppendAndRemoveFollowTheThreshold(/*sparse_queries=*/false, "hnsw");
}

// The same with the int8 column index the built-in embedder gets above the
// threshold: layered edits while it stays one, its vectors persisted as the
// passage_vectors part (a build encodes them again).
TEST_F(SnapshotPersistTest, AppendAndRemoveFollowTheInt8Threshold) {
  ExpectAppendAndRemoveFollowTheThreshold(/*sparse_queries=*/true, "flat-int8");
}

// An HNSW index edited by an append or a remove keeps its graph (a
// LayeredIndex over the same base, no rebuild) until its appended rows pass
// hnsw_fold_rows or all its edits pass max(hnsw_fold_rows, size / 8); the
// write that passes a bound builds the index again from its vectors, which
// is Build's index byte for byte.
TEST_F(SnapshotPersistTest, EditedHnswIndexFoldsPastItsBound) {
  const std::string path = CopyOfHnswDemo();
  OpenStore s(path, /*read_only=*/false, kSmallHnswThreshold);
  for (size_t fold_rows : {size_t{1024}, size_t{0}}) {
    SCOPED_TRACE("hnsw_fold_rows " + std::to_string(fold_rows));
    SnapshotOptions so = s.Options(false);
    so.vector.hnsw_fold_rows = fold_rows;
    so.persistable = true;
    auto base = Snapshot::Build(*s.store, s.embedder, so);
    ASSERT_TRUE(base.ok()) << base.status().ToString();
    const std::string id = "fold-" + std::to_string(fold_rows);
    StoreDocument(s, id, 300 + fold_rows);
    auto appended = Snapshot::Append(*s.store, **base);
    ASSERT_TRUE(appended.ok()) << appended.status().ToString();
    ASSERT_TRUE(s.store->DeleteDocument(id).ok());
    auto removed = Snapshot::Remove(*s.store, **appended, id);
    ASSERT_TRUE(removed.ok()) << removed.status().ToString();
    const auto* appended_index = dynamic_cast<const LayeredIndex*>((*appended)->dense());
    const auto* removed_index = dynamic_cast<const LayeredIndex*>((*removed)->dense());
    ASSERT_NE(removed_index, nullptr);  // one row of many deleted: under size / 8
    if (fold_rows > 0) {
      ASSERT_NE(appended_index, nullptr);
      EXPECT_EQ(appended_index->appended(), 1u);
      EXPECT_EQ(&appended_index->base(), (*base)->dense());  // the graph shared, not copied
      EXPECT_EQ(&removed_index->base(), (*base)->dense());
      EXPECT_EQ(removed_index->EditedRows(), 0u);  // the appended row removed
    } else {
      EXPECT_EQ(appended_index, nullptr);  // folded: one appended row is over the bound
      EXPECT_NE(dynamic_cast<const HnswIndex*>((*appended)->dense()), nullptr);
      EXPECT_EQ(&removed_index->base(), (*appended)->dense());
      EXPECT_EQ(removed_index->deleted_base_rows().size(), 1u);
    }
    auto rebuilt = s.Build(false);
    ASSERT_TRUE(rebuilt);
    ExpectSameSnapshot(**removed, *rebuilt);
    ExpectSameAnswers(**removed, *rebuilt);
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
