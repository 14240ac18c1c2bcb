#include "storage/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <functional>
#include <thread>
#include <vector>

#include "common/half.h"
#include "common/hash.h"
#include "storage/document_texts.h"
#include "store_docs.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::TempDir;
using testing::WriteFile;

using testing::Doc;

// A store at `path` holding `n` documents (text of each from `text`), its
// WAL folded back into the file and the journal mode set to DELETE, so the
// file's bytes are the whole store (for tests that damage them).
void WriteStoreFile(const std::string& path, int n, const std::function<std::string(int)>& text) {
  {
    auto s = Store::Open(path);
    ASSERT_TRUE(s.ok());
    std::vector<DocumentWrite> batch;
    for (int i = 0; i < n; ++i) batch.push_back(Doc("d" + std::to_string(i), text(i), i));
    ASSERT_TRUE((*s)->WriteDocuments(batch).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;", nullptr,
               nullptr, nullptr);
  sqlite3_close(db);
}

TEST(StoreTest, RoundTripDocumentsPassagesEmbeddings) {
  TempDir dir;
  const std::string path = dir.File("s.db");
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    std::vector<DocumentWrite> batch = {Doc("a", "alpha text", 1), Doc("b", "beta text", 2)};
    auto r = (*store)->WriteDocuments(batch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->documents_added, 2u);
    EXPECT_EQ(r->passages_added, 2u);
    FloatMatrix v(1, 3);
    v.data = {0.6f, 0.8f, 0.0f};
    std::vector<uint64_t> h = {Hash64("alpha text")};
    ASSERT_TRUE((*store)->PutEmbeddings("m", h, v).ok());
  }
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->format_version(), kStoreFormatVersion);
  std::vector<DocumentRow> docs;
  ASSERT_TRUE((*store)
                  ->ForEachDocument([&](DocumentRow&& d) {
                    docs.push_back(std::move(d));
                    return Status::Ok();
                  })
                  .ok());
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].external_id, "a");
  EXPECT_EQ(docs[0].title, "T a");
  EXPECT_EQ(docs[1].text, "beta text");
  auto hash = (*store)->DocumentHash("b");
  ASSERT_TRUE(hash.ok() && hash->has_value());
  EXPECT_EQ(**hash, 2u);
  std::vector<bool> found;
  std::vector<uint64_t> h = {Hash64("alpha text"), Hash64("beta text")};
  auto m = (*store)->GetEmbeddings("m", h, 3, &found);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(found, (std::vector<bool>{true, false}));
  EXPECT_EQ(m->row(0)[1], HalfToFloat(FloatToHalf(0.8f)));  // stored as float16
  auto missing = (*store)->PassagesMissingEmbeddings("m", 10);
  ASSERT_TRUE(missing.ok());
  ASSERT_EQ(missing->size(), 1u);
  EXPECT_EQ((*missing)[0].text, "T b\nbeta text");
}

// Issue 21: each passage's text was sliced in SQL from its whole document,
// so a document of P passages was read P times (a 4 MiB document took 61 s
// to index). Passage texts are now cut from one read of the document.
// ReleaseMemory hands the writer's page cache back (PRAGMA shrink_memory)
// and the store writes and reads as before.
TEST(StoreTest, ReleaseMemoryHandsThePageCacheBack) {
  TempDir dir;
  auto store = Store::Open(dir.File("s.db"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  std::vector<DocumentWrite> batch;
  for (int i = 0; i < 2000; ++i) {
    batch.push_back(Doc("d" + std::to_string(i), std::string(1000, 'a' + i % 26), i));
  }
  ASSERT_TRUE((*store)->WriteDocuments(batch).ok());
  const sqlite3_int64 before = sqlite3_memory_used();
  ASSERT_TRUE((*store)->ReleaseMemory().ok());
  const sqlite3_int64 after = sqlite3_memory_used();
  EXPECT_LT(after, before - (1 << 20)) << "the 2 MB of pages written stayed cached";
  const std::vector<DocumentWrite> late = {Doc("late", "late text", 9)};
  ASSERT_TRUE((*store)->WriteDocuments(late).ok());
  auto counts = (*store)->CountDocumentsAndPassages();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->first, 2001);
}

TEST(StoreTest, PassageTextsReadEachDocumentOnce) {
  TempDir dir;
  auto store = Store::Open(dir.File("s.db"));
  ASSERT_TRUE(store.ok());
  std::vector<DocumentWrite> batch;
  for (const char* id : {"big", "small"}) {
    DocumentWrite w = Doc(id, "", 7);
    w.passages.clear();
    for (int i = 0; i < 500; ++i) {
      const std::string piece = std::string(id) + " piece " + std::to_string(i) + ". ";
      PassageWrite p;
      p.ordinal = i;
      p.begin = static_cast<uint32_t>(w.doc.text.size());
      w.doc.text += piece;
      p.end = static_cast<uint32_t>(w.doc.text.size());
      p.embed_hash = Hash64(w.doc.text.substr(p.begin));
      w.passages.push_back(p);
      if (std::string(id) == "small" && i == 2) break;
    }
    batch.push_back(std::move(w));
  }
  auto written = (*store)->WriteDocuments(batch);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  std::vector<std::string> texts;
  ASSERT_TRUE((*store)
                  ->ForEachPassageText([&](const PassageToEmbed& p) {
                    texts.push_back(p.text);
                    return Status::Ok();
                  })
                  .ok());
  ASSERT_EQ(texts.size(), 503u);
  EXPECT_EQ(texts[0], "T big\nbig piece 0. ");
  EXPECT_EQ(texts[499], "T big\nbig piece 499. ");
  EXPECT_EQ(texts[502], "T small\nsmall piece 2. ");
  auto pending = (*store)->PassagesPendingExtraction("heuristic", 0, 1000);
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 503u);
  EXPECT_EQ((*pending)[250].text, "big piece 250. ");
  EXPECT_EQ((*pending)[250].document_id, "big");

  // The slicer itself: one read per document, offsets clamped as substr().
  SqlConnectionOptions read_only;
  read_only.read_only = true;
  auto conn = OpenSqlConnection(dir.File("s.db"), read_only);
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  {
    auto slicer = DocumentTexts::Prepare(**conn);
    ASSERT_TRUE(slicer.ok());
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(slicer->Slice(1, i, i + 3).ok());
    EXPECT_EQ(*slicer->Slice(1, 0, 9), "big piece");
    EXPECT_EQ(*slicer->Slice(2, -5, 5), "small");
    EXPECT_EQ(*slicer->Slice(2, 1000000, 1000005), "");
    EXPECT_EQ(slicer->documents_read(), 2u);
    EXPECT_EQ(slicer->Slice(99, 0, 1).status().code(), StatusCode::kCorruption);
  }
}

TEST(StoreTest, UnchangedDocumentsAreSkippedAndChangedOnesReplaced) {
  auto store = Store::Open(":memory:");
  ASSERT_TRUE(store.ok());
  std::vector<DocumentWrite> first = {Doc("a", "one", 1)};
  ASSERT_TRUE((*store)->WriteDocuments(first).ok());
  std::vector<DocumentWrite> again = {Doc("a", "one", 1), Doc("b", "two", 2)};
  auto r = (*store)->WriteDocuments(again);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->documents_unchanged, 1u);
  EXPECT_EQ(r->documents_added, 1u);
  std::vector<DocumentWrite> changed = {Doc("a", "one, edited", 3)};
  r = (*store)->WriteDocuments(changed);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->documents_replaced, 1u);
  auto counts = (*store)->Counts();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->documents, 2);
  EXPECT_EQ(counts->passages, 2);  // the old passage of "a" is gone
  ASSERT_TRUE((*store)->DeleteDocument("a").ok());
  EXPECT_EQ((*store)->DeleteDocument("a").code(), StatusCode::kNotFound);
  EXPECT_EQ((*store)->Counts()->passages, 1);
}

TEST(StoreTest, FailedBatchLeavesNothingBehind) {
  auto store = Store::Open(":memory:");
  ASSERT_TRUE(store.ok());
  std::vector<DocumentWrite> ok_batch = {Doc("a", "one", 1)};
  ASSERT_TRUE((*store)->WriteDocuments(ok_batch).ok());
  // Two passages with the same ordinal violate UNIQUE(document_id, ordinal).
  DocumentWrite bad = Doc("b", "two", 2);
  bad.passages.push_back(bad.passages[0]);
  std::vector<DocumentWrite> batch = {Doc("c", "three", 3), bad};
  auto r = (*store)->WriteDocuments(batch);
  ASSERT_FALSE(r.ok());
  auto counts = (*store)->Counts();
  EXPECT_EQ(counts->documents, 1);  // "c" was rolled back with "b"
  EXPECT_EQ(counts->passages, 1);
}

TEST(StoreTest, RejectsFilesThatAreNotSqlite) {
  TempDir dir;
  WriteFile(dir.File("notes.db"), std::string(5000, 'x'));
  auto s = Store::Open(dir.File("notes.db"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kCorruption);
  EXPECT_NE(s.status().message().find("notes.db"), std::string::npos);
  EXPECT_EQ(testing::ReadFile(dir.File("notes.db")), std::string(5000, 'x'));  // untouched
}

TEST(StoreTest, RejectsSqliteFilesOfOtherApplications) {
  TempDir dir;
  const std::string path = dir.File("other.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE customers(id INTEGER)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const std::string before = testing::ReadFile(path);
  auto s = Store::Open(path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kCorruption);
  EXPECT_NE(s.status().message().find("not a flowrag store"), std::string::npos);
  EXPECT_NE(s.status().message().find("customers"), std::string::npos);
  // Issue 21: the file was switched to WAL before the check. Its bytes (the
  // journal mode is in its header) stay as they were, and no WAL appears.
  EXPECT_EQ(testing::ReadFile(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

// Issue 21: two processes creating the same new store raced ("table
// documents already exists"). Threads with their own connections stand in
// for the processes: every open succeeds and the store is created once.
TEST(StoreTest, ConcurrentCreatorsOpenOneStore) {
  for (int round = 0; round < 5; ++round) {
    TempDir dir;
    const std::string path = dir.File("new.db");
    std::vector<Status> results(4);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < results.size(); ++i) {
      threads.emplace_back([&, i] { results[i] = Store::Open(path).status(); });
    }
    for (std::thread& t : threads) t.join();
    for (const Status& st : results) EXPECT_TRUE(st.ok()) << st.ToString();
    auto s = Store::Open(path);
    ASSERT_TRUE(s.ok());
    auto magic = (*s)->GetMeta("magic");
    ASSERT_TRUE(magic.ok() && magic->has_value());
    EXPECT_EQ(**magic, "flowrag");
  }
}

TEST(StoreTest, RefusesNewerFormats) {
  TempDir dir;
  const std::string path = dir.File("new.db");
  {
    auto s = Store::Open(path);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->SetMeta("format_version", "99").ok());
  }
  auto s = Store::Open(path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("99"), std::string::npos);
}

TEST(StoreTest, MigratesFormatOneAndKeepsItsData) {
  TempDir dir;
  const std::string path = dir.File("v1.db");
  {
    StoreOptions old;
    old.create_format_version = 1;
    auto s = Store::Open(path, old);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ((*s)->format_version(), 1);
  }
  // Rows as flowrag format 1 wrote them.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "INSERT INTO documents(id, external_id, title, source, content_hash, "
                         "chunking, text, indexed_at) VALUES (1, 'a', 'T', 's', 7, 'none', "
                         "'kept across migration', 0);"
                         "INSERT INTO passages(document_id, ordinal, begin_offset, end_offset, "
                         "embed_hash) VALUES (1, 0, 0, 21, 9);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);

  auto s = Store::Open(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->format_version(), kStoreFormatVersion);
  EXPECT_EQ(**(*s)->DocumentHash("a"), 7u);
  EXPECT_EQ((*s)->Counts()->passages, 1);
  EXPECT_TRUE((*s)->BeginIndexRun("x").ok());        // a table of format 2
  EXPECT_EQ((*s)->CountPassagesPendingExtraction().value(), 1);  // format 3
  auto meta = (*s)->GetMeta("format_version");
  EXPECT_EQ(**meta, std::to_string(kStoreFormatVersion));
  // The migrated store accepts new writes.
  std::vector<DocumentWrite> batch = {Doc("b", "written after migration", 8)};
  ASSERT_TRUE((*s)->WriteDocuments(batch).ok());
  // Format 6: a generation counter and (empty) snapshot parts.
  EXPECT_EQ((*s)->Generation().value(), 2);
  EXPECT_FALSE((*s)->GetSnapshotPart("bm25").value().has_value());
}

// Writes a part of `bytes` split into chunks of `chunk` bytes.
Result<bool> PutPart(Store& store, const std::string& name, int64_t generation,
                     const std::string& bytes, size_t chunk = Store::kMaxSnapshotChunk) {
  Store::SnapshotPartInfo info;
  info.name = name;
  info.generation = generation;
  info.format = 3;
  info.key = "k";
  return store.PutSnapshotPart(info, [&](const Store::ChunkSink& emit) -> Result<uint64_t> {
    for (size_t at = 0; at < bytes.size(); at += chunk) {
      FLOWRAG_RETURN_IF_ERROR(emit(std::string_view(bytes).substr(at, chunk)));
    }
    return uint64_t{77};
  });
}

TEST(StoreTest, WritesThatChangeSnapshotsBumpTheGeneration) {
  TempDir dir;
  auto s = Store::Open(dir.File("g.db"));
  ASSERT_TRUE(s.ok());
  Store& store = **s;
  int64_t g = store.Generation().value();
  EXPECT_EQ(g, 1);
  auto bumped = [&](const char* what) {
    const int64_t now = store.Generation().value();
    EXPECT_EQ(now, g + 1) << what;
    g = now;
  };
  auto unchanged = [&](const char* what) { EXPECT_EQ(store.Generation().value(), g) << what; };
  std::vector<DocumentWrite> batch = {Doc("a", "alpha", 1)};
  ASSERT_TRUE(store.WriteDocuments(batch).ok());
  bumped("documents");
  FloatMatrix v(1, 2);
  v.data = {1.0f, 0.0f};
  std::vector<uint64_t> h = {Hash64("alpha")};
  ASSERT_TRUE(store.PutEmbeddings("m", h, v).ok());
  bumped("embeddings");
  ASSERT_TRUE(store.SetDenseModel("m").ok());
  bumped("a new meta value");
  ASSERT_TRUE(store.SetDenseModel("m").ok());
  unchanged("the same meta value");
  ASSERT_TRUE(store.ReplaceSynonyms({}, {}).ok());
  unchanged("no synonyms to replace");
  ASSERT_TRUE(store.BeginIndexRun("x").ok());
  unchanged("the index run journal");
  ASSERT_TRUE(store.MarkNamesLinked({"alpha"}).ok());
  unchanged("linked names");
  ASSERT_TRUE(PutPart(store, "p", g, "bytes").value());
  unchanged("a snapshot part");
  ASSERT_TRUE(store.PutEmbedderState("hash", "state", 1).ok());
  bumped("embedder state");
  ASSERT_TRUE(store.DeleteDocument("a").ok());
  bumped("a deleted document");
  EXPECT_FALSE(store.DeleteDocument("a").ok());
  unchanged("a failed delete");
}

TEST(StoreTest, SnapshotPartsRoundTripInChunksAndOnlyForTheCurrentGeneration) {
  TempDir dir;
  auto s = Store::Open(dir.File("p.db"));
  ASSERT_TRUE(s.ok());
  Store& store = **s;
  const int64_t g = store.Generation().value();
  std::string bytes(10000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  ASSERT_TRUE(PutPart(store, "p", g, bytes, 4096).value());
  auto info = store.GetSnapshotPart("p");
  ASSERT_TRUE(info.ok() && info->has_value());
  EXPECT_EQ((*info)->generation, g);
  EXPECT_EQ((*info)->format, 3);
  EXPECT_EQ((*info)->key, "k");
  EXPECT_EQ((*info)->bytes, bytes.size());
  EXPECT_EQ((*info)->chunks, 3);
  EXPECT_EQ((*info)->checksum, 77u);
  std::string back(bytes.size(), 'x');
  for (int64_t c = 0; c < 3; ++c) {
    const size_t n = std::min<size_t>(4096, bytes.size() - c * 4096);
    ASSERT_TRUE(store.ReadSnapshotChunk("p", c, 0, back.data() + c * 4096, n).ok());
  }
  EXPECT_EQ(back, bytes);
  char part[10];
  ASSERT_TRUE(store.ReadSnapshotChunk("p", 1, 100, part, 10).ok());
  EXPECT_EQ(std::string(part, 10), bytes.substr(4196, 10));
  EXPECT_EQ(store.ReadSnapshotChunk("p", 3, 0, part, 1).code(), StatusCode::kNotFound);
  EXPECT_EQ(store.ReadSnapshotChunk("p", 2, 1800, part, 10).code(), StatusCode::kCorruption);
  // A part derived from an older generation is not written.
  EXPECT_FALSE(PutPart(store, "q", g - 1, "old").value());
  EXPECT_FALSE(store.GetSnapshotPart("q").value().has_value());
  // Replacing keeps no chunk of the old part.
  ASSERT_TRUE(PutPart(store, "p", g, "short").value());
  EXPECT_EQ((*store.GetSnapshotPart("p"))->chunks, 1);
  EXPECT_EQ(store.ReadSnapshotChunk("p", 1, 0, part, 1).code(), StatusCode::kNotFound);
  ASSERT_TRUE(store.DropSnapshotParts().ok());
  EXPECT_FALSE(store.GetSnapshotPart("p").value().has_value());
}

TEST(StoreTest, DetectsCorruptedPages) {
  TempDir dir;
  const std::string path = dir.File("c.db");
  ASSERT_NO_FATAL_FAILURE(
      WriteStoreFile(path, 200, [](int i) { return std::string(500, 'a' + i % 26); }));
  // Scribble over every page after the first.
  std::string bytes = testing::ReadFile(path);
  ASSERT_GT(bytes.size(), 8192u);
  for (size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  WriteFile(path, bytes);
  auto s = Store::Open(path);
  Status st =
      s.ok() ? (*s)->ForEachDocument([](DocumentRow&&) { return Status::Ok(); }) : s.status();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.ToString();
  EXPECT_NE(st.message().find("c.db"), std::string::npos);
}

// Zeroes the last index page of the documents table in the store at `path`;
// returns the file's new bytes.
std::string ZeroADocumentsIndexPage(const std::string& path) {
  int64_t page = 0, page_size = 0;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  // The largest index over documents: any of its pages is an index page.
  sqlite3_prepare_v2(db,
                     "SELECT rootpage, (SELECT page_size FROM pragma_page_size) FROM "
                     "sqlite_master WHERE type = 'index' AND tbl_name = 'documents' "
                     "ORDER BY rootpage DESC LIMIT 1",
                     -1, &st, nullptr);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
  page = sqlite3_column_int64(st, 0);
  page_size = sqlite3_column_int64(st, 1);
  sqlite3_finalize(st);
  sqlite3_close(db);
  EXPECT_GT(page, 1);
  std::string bytes = testing::ReadFile(path);
  std::fill(bytes.begin() + (page - 1) * page_size, bytes.begin() + page * page_size, '\0');
  WriteFile(path, bytes);
  return bytes;
}

// Sets the journal mode of the SQLite file at `path` (WAL, DELETE, ...).
void SetJournalMode(const std::string& path, const std::string& mode) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const std::string pragma = "PRAGMA journal_mode=" + mode;
  EXPECT_EQ(sqlite3_exec(db, pragma.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

// Issue 21: with one index page zeroed, `index` went on writing into the
// damaged file. A writer checks the pages before its first write and
// refuses, naming the store; the bytes stay as they were. A store already
// in WAL mode (every store once written) opens, as a reader would, and is
// refused at its first write transaction, so that a writable open does not
// read the whole file; one in another journal mode is refused at the open,
// before the switch to WAL would write its header.
TEST(StoreTest, WriterRefusesAStoreWithADamagedIndexPage) {
  TempDir dir;
  const std::string path = dir.File("c.db");
  ASSERT_NO_FATAL_FAILURE(
      WriteStoreFile(path, 300, [](int i) { return "text " + std::to_string(i); }));
  ZeroADocumentsIndexPage(path);
  SetJournalMode(path, "WAL");  // as a store is between writes
  const std::string bytes = testing::ReadFile(path);
  auto s = Store::Open(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  for (int attempt = 0; attempt < 2; ++attempt) {  // the verdict is kept
    const Status write = (*s)->DropSnapshotParts();
    EXPECT_EQ(write.code(), StatusCode::kCorruption) << write.ToString();
    EXPECT_NE(write.message().find("c.db"), std::string::npos);
    EXPECT_NE(write.message().find("damaged"), std::string::npos);
  }
  s->reset();
  EXPECT_TRUE(testing::ReadFile(path) == bytes);  // nothing written (not printed: 100 KB)

  const std::string old_journal = dir.File("d.db");
  ASSERT_NO_FATAL_FAILURE(  // left in the rollback journal's mode (DELETE)
      WriteStoreFile(old_journal, 300, [](int i) { return "text " + std::to_string(i); }));
  const std::string old_bytes = ZeroADocumentsIndexPage(old_journal);
  auto refused = Store::Open(old_journal);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("d.db"), std::string::npos);
  EXPECT_TRUE(testing::ReadFile(old_journal) == old_bytes);
}

// Issue 21: `stats` answered normally on that file. A read-only open skips
// the O(file) page check (queries read checksummed snapshot parts), but the
// first read of the damaged page is Corruption naming the store and saying
// it is damaged, not that it is a foreign file.
TEST(StoreTest, ReadsOfADamagedPageAreCorruptionNamingTheStore) {
  TempDir dir;
  const std::string path = dir.File("c.db");
  ASSERT_NO_FATAL_FAILURE(
      WriteStoreFile(path, 300, [](int i) { return "text " + std::to_string(i); }));
  const std::string bytes = ZeroADocumentsIndexPage(path);
  StoreOptions o;
  o.read_only = true;
  auto s = Store::Open(path, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto counts = (*s)->Counts();
  ASSERT_FALSE(counts.ok());
  EXPECT_EQ(counts.status().code(), StatusCode::kCorruption) << counts.status().ToString();
  EXPECT_NE(counts.status().message().find("c.db"), std::string::npos);
  EXPECT_NE(counts.status().message().find("damaged"), std::string::npos);
  EXPECT_TRUE(testing::ReadFile(path) == bytes);
}

// A dropped table is Corruption naming it (was Internal at the first query).
TEST(StoreTest, AMissingTableIsCorruptionOnOpen) {
  TempDir dir;
  const std::string path = dir.File("t.db");
  ASSERT_TRUE(Store::Open(path).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE mentions", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  for (bool read_only : {false, true}) {
    StoreOptions o;
    o.read_only = read_only;
    auto s = Store::Open(path, o);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), StatusCode::kCorruption);
    EXPECT_NE(s.status().message().find("table mentions"), std::string::npos)
        << s.status().ToString();
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
