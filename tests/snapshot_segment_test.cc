// The snapshot segment (graph/snapshot_segment.h): an indexed SQLite store
// gets one segment beside it; a snapshot opened from it equals one built
// from the rows (every accessor and array, every method's answers on the
// demo questions) and derives nothing again (LocalFacts adopted); a damaged,
// stale or crafted segment is detected and the snapshot rebuilt from the
// store, never read out of range; writes replace the segment.
#include "graph/snapshot_segment.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <set>
#include <thread>
#include <string>
#include <vector>

#include "engine/parts_persister.h"
#include "flowrag/engine.h"
#include "graph/graph_io.h"
#include "graph/snapshot.h"
#include "graph/snapshot_documents.h"
#include "retrieval/keywords.h"
#include "retrieval/local_facts.h"
#include "segment/segment_arrays.h"
#include "segment/segment_set.h"
#include "snapshot_compare.h"
#include "storage/store.h"
#include "test_util.h"
#include "vector/flat_index.h"
#include "vector/hnsw_index.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

namespace fs = std::filesystem;
using testing::TempDir;
using namespace snapshot_compare;  // NOLINT(google-build-using-namespace): test helpers

const std::string kDemo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";

// The live segments of `dir` (read-only).
std::shared_ptr<const SegmentView> SegmentsOf(const std::string& dir) {
  SegmentSetOptions o;
  o.writable = false;
  auto set = SegmentSet::Open(dir, o);
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  return set.ok() ? (*set)->Current() : nullptr;
}

// Forwards every array, recording its name; array `damage` gets `fill` in
// every byte (its checksum is computed over the altered bytes: a crafted
// file, not a damaged one).
class CraftingSink final : public ArraySink {
 public:
  CraftingSink(ArraySink* inner, std::string damage, uint8_t fill)
      : inner_(inner), damage_(std::move(damage)), fill_(fill) {}
  Status PutBytes(std::string_view name, ArrayKind kind, size_t element_size,
                  std::span<const std::byte> bytes, bool random) override {
    names.push_back(std::string(name));
    if (name != damage_ || bytes.empty()) {
      return inner_->PutBytes(name, kind, element_size, bytes, random);
    }
    std::vector<std::byte> altered(bytes.size(), std::byte{fill_});
    return inner_->PutBytes(name, kind, element_size, altered, random);
  }
  std::vector<std::string> names;

 private:
  ArraySink* inner_;
  std::string damage_;
  uint8_t fill_;
};

// Writes `snapshot`'s segment with array `damage` crafted (CraftingSink;
// "": none) and publishes it in place of the current one; *names gets every
// array's name when not null.
void PublishSegment(const Snapshot& snapshot, const std::string& dir, const std::string& damage,
                    uint8_t fill, std::vector<std::string>* names = nullptr) {
  auto set = SegmentSet::Open(dir);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  auto base = (*set)->Current();
  auto file = (*set)->NewSegmentPath(kSnapshotSegmentKind);
  ASSERT_TRUE(file.ok());
  {
    auto writer =
        SegmentWriter::Create(file->path, kSnapshotSegmentKind, snapshot.generation(), file->id);
    ASSERT_TRUE(writer.ok());
    SegmentArraySink inner(writer->get());
    CraftingSink sink(&inner, damage, fill);
    ASSERT_TRUE(snapshot.ExportSegment(sink).ok());
    ASSERT_TRUE((*writer)->Finish().ok());
    if (names != nullptr) *names = sink.names;
  }
  SegmentEdit edit;
  edit.base = base;
  edit.generation = snapshot.generation();
  edit.add.push_back({.file = file->file, .rows = snapshot.num_passages()});
  for (const LiveSegment& old : base->segments()) edit.remove.push_back(old.record.id);
  ASSERT_TRUE((*set)->Publish(edit).ok());
}

class SnapshotSegmentTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    unsetenv("FLOWRAG_SNAPSHOT_SEGMENTS");
    dir_ = new TempDir();
    auto engine = Engine::Open(dir_->File("demo.db"));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    ASSERT_TRUE((*engine)->Index({kDemo}).ok());
  }
  static void TearDownTestSuite() { delete dir_; }

  // A private copy of the indexed demo store with its segments.
  std::string CopyOfDemo() {
    const std::string path = local_.File("copy.db");
    fs::copy_file(dir_->File("demo.db"), path);
    fs::copy(dir_->File("demo.db.segments"), path + ".segments", fs::copy_options::recursive);
    return path;
  }

  static SnapshotOptions WithLocalFacts(SnapshotOptions so) {
    so.derived = {&LocalFacts::Persistence()};
    return so;
  }
  std::shared_ptr<const Snapshot> Build(OpenStore& s, bool use_parts, SnapshotBuildStats* stats) {
    auto snap = Snapshot::Build(*s.store, s.embedder, WithLocalFacts(s.Options(use_parts)), stats);
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    return snap.ok() ? std::move(snap).value() : nullptr;
  }

  // A snapshot of `s` built from its rows and one adopted from its segment
  // (which must load), and the adopted passage index in place: the index
  // itself after "indexed", the base the later writes' edits are layered
  // over after an insert or a delete. *in_place stays null on a failure.
  void BuildFromRowsAndSegment(OpenStore& s, const std::string& step,
                               std::shared_ptr<const Snapshot>* rows,
                               std::shared_ptr<const Snapshot>* adopted,
                               const VectorIndex** in_place) {
    SnapshotBuildStats stats;
    *rows = Build(s, /*use_parts=*/false, nullptr);
    *adopted = Build(s, /*use_parts=*/true, &stats);
    ASSERT_NE(*rows, nullptr);
    ASSERT_NE(*adopted, nullptr);
    EXPECT_EQ(stats.parts[kSnapshotSegmentKind], PartState::kLoaded);
    const VectorIndex* dense = (*adopted)->dense();
    const auto* layered = dynamic_cast<const LayeredIndex*>(dense);
    EXPECT_EQ(layered != nullptr, step != "indexed");
    *in_place = layered != nullptr ? &layered->base() : dense;
  }

  static TempDir* dir_;
  TempDir local_;
};
TempDir* SnapshotSegmentTest::dir_ = nullptr;

TEST_F(SnapshotSegmentTest, IndexWritesOneSegmentAtTheStoreGeneration) {
  OpenStore s(dir_->File("demo.db"));
  EXPECT_EQ(s.store->SegmentDirectory(), dir_->File("demo.db.segments"));
  auto view = SegmentsOf(s.store->SegmentDirectory());
  ASSERT_NE(view, nullptr);
  ASSERT_EQ(view->segments().size(), 1u);
  EXPECT_EQ(view->segments()[0].record.kind, kSnapshotSegmentKind);
  EXPECT_EQ(view->generation(), s.store->Generation().value());
  // Nothing in the database: the segment replaces the parts.
  EXPECT_FALSE(s.store->GetSnapshotPart(kBm25Part).value().has_value());
}

// Writes back to back keep scheduling a newer snapshot within the
// persister's delay (engine/parts_persister.h): it still writes one,
// `max_wait` after the first.
TEST_F(SnapshotSegmentTest, APersisterWritesWhileSchedulesKeepComing) {
  OpenStore s(CopyOfDemo(), /*read_only=*/false);
  // A generation the store has no segment of yet.
  ASSERT_TRUE(s.store->DeleteDocument("people/corin_aske.md").ok());
  SnapshotOptions so = WithLocalFacts(s.Options(/*use_parts=*/false));
  so.persistable = true;
  auto snap = Snapshot::Build(*s.store, s.embedder, so);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  PartsPersister persister(s.store.get(), std::chrono::milliseconds(400), nullptr,
                           std::chrono::milliseconds(1000));
  // Every 50 ms, for at most 30 s: a persister that waits for a quiet
  // delay never writes.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!(*snap)->SegmentPublished() && std::chrono::steady_clock::now() < deadline) {
    persister.Schedule(*snap);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE((*snap)->SegmentPublished());
  EXPECT_TRUE(persister.LastError().empty()) << persister.LastError();
  auto view = SegmentsOf(s.store->SegmentDirectory());
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->generation(), (*snap)->generation());
}

TEST_F(SnapshotSegmentTest, SnapshotFromTheSegmentEqualsSnapshotFromRows) {
  OpenStore s(dir_->File("demo.db"));
  SnapshotBuildStats from_rows, from_segment;
  auto a = Build(s, /*use_parts=*/false, &from_rows);
  auto b = Build(s, /*use_parts=*/true, &from_segment);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->segment(), nullptr);
  ASSERT_NE(b->segment(), nullptr);
  EXPECT_EQ(from_segment.parts[kSnapshotSegmentKind], PartState::kLoaded);
  EXPECT_EQ(from_segment.phase_seconds.count("graph_build"), 0u);  // nothing built
  ExpectSameSnapshot(*a, *b);
  ExpectSameAnswers(*a, *b);
  // Retrieval's derived facts index and entity name matcher came from the
  // segment (a value that is absent or refused there is recorded in
  // DerivedErrors), and the matcher finds the names the built one finds.
  EXPECT_NE(LocalFacts::For(*b), nullptr);
  auto built = EntityNameMatcher::For(*a);
  auto adopted = EntityNameMatcher::For(*b);
  ASSERT_NE(built, nullptr);
  ASSERT_NE(adopted, nullptr);
  EXPECT_TRUE(b->segment()->Has("nm.t.voc.o"));
  EXPECT_TRUE(b->DerivedErrors().empty()) << b->DerivedErrors().front();
  size_t matched = 0;
  for (uint32_t p = 0; p < a->num_passages(); ++p) {
    const TokenizedText text(a->PassageText(p));
    const std::vector<TrieMatch> want = built->trie().Scan(text);
    const std::vector<TrieMatch> got = adopted->trie().Scan(text);
    ASSERT_EQ(want.size(), got.size()) << p;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(want[i].entry, got[i].entry);
      EXPECT_EQ(want[i].byte_begin, got[i].byte_begin);
      EXPECT_EQ(built->trie().payloads(want[i].entry).size(),
                adopted->trie().payloads(got[i].entry).size());
    }
    matched += want.size();
  }
  EXPECT_GT(matched, 100u);
}

// The documents and passages come from the segment (no store read), their
// views into the mapped file, and arrays that would put a passage outside
// its document or break the id order are refused by name.
TEST_F(SnapshotSegmentTest, TheDocumentsAreBorrowedFromTheSegmentAndCraftedOnesRefused) {
  OpenStore s(dir_->File("demo.db"));
  auto rows = Build(s, /*use_parts=*/false, nullptr);
  auto mapped = Build(s, /*use_parts=*/true, nullptr);
  ASSERT_NE(rows, nullptr);
  ASSERT_NE(mapped, nullptr);
  ASSERT_NE(mapped->segment(), nullptr);
  ASSERT_TRUE(HasSnapshotDocuments(*mapped->segment()));
  const SnapshotDocument& first = mapped->documents()[0];
  EXPECT_EQ(first.keep, mapped->segment()->keep());  // the mapping, not a copy
  EXPECT_FALSE(first.text.empty());

  SnapshotText built;
  built.documents = rows->documents();
  for (uint32_t p = 0; p < rows->num_passages(); ++p) built.passages.push_back(rows->passage(p));
  MemoryArrays arrays;
  SnapshotText text;
  auto export_again = [&] {
    arrays = MemoryArrays();
    ASSERT_TRUE(ExportSnapshotDocuments(built, arrays).ok());
  };
  export_again();
  ASSERT_TRUE(AdoptSnapshotDocuments(arrays, &text).ok());
  EXPECT_EQ(text.documents.size(), rows->num_documents());
  EXPECT_EQ(text.passages.size(), rows->num_passages());

  auto refused = [&](const std::string& name, size_t index, const void* value, size_t width) {
    export_again();
    std::span<std::byte> bytes = arrays.MutableBytes(name);
    EXPECT_LT(index * width, bytes.size()) << name;
    std::memcpy(bytes.data() + index * width, value, width);
    SnapshotText out;
    const Status st = AdoptSnapshotDocuments(arrays, &out);
    EXPECT_EQ(st.code(), StatusCode::kCorruption) << name;
    return st.message();
  };
  const uint32_t far = 1u << 30, many_docs = 1u << 20;
  const int64_t zero = 0;
  EXPECT_NE(refused("psg.end", 0, &far, 4).find("psg.end"), std::string::npos);
  EXPECT_NE(refused("psg.doc", 1, &many_docs, 4).find("psg.doc"), std::string::npos);
  EXPECT_NE(refused("psg.id", 1, &zero, 8).find("psg.id"), std::string::npos);
  EXPECT_NE(refused("doc.id", 1, &zero, 8).find("doc.id"), std::string::npos);
  const uint64_t past = 1u << 20;
  EXPECT_NE(refused("doc.brk.o", 1, &past, 8).find("doc.brk.o"), std::string::npos);
}

TEST_F(SnapshotSegmentTest, ADamagedSegmentIsDetectedAndReplaced) {
  const std::string path = CopyOfDemo();
  const std::string dir = path + ".segments";
  auto view = SegmentsOf(dir);
  ASSERT_EQ(view->segments().size(), 1u);
  const auto& reader = *view->segments()[0].reader;
  // An array the open verifies (the CSRs are verified row by row as they
  // are read); a copy of its place, as the reader goes.
  ASSERT_NE(reader.FindSection("kg.entity_ids"), nullptr);
  const SectionInfo section = *reader.FindSection("kg.entity_ids");
  const std::string file = reader.path();
  view.reset();
  {  // One byte in the middle of a section: its block checksum fails.
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(section.offset + section.length / 2));
    f.put('\x5a');
  }
  OpenStore s(path, /*read_only=*/false);
  SnapshotBuildStats stats;
  auto damaged = Build(s, true, &stats);
  ASSERT_NE(damaged, nullptr);
  EXPECT_EQ(stats.parts[kSnapshotSegmentKind], PartState::kCorrupt);
  EXPECT_EQ(damaged->segment(), nullptr);
  auto rows = Build(s, false, nullptr);
  ExpectSameSnapshot(*rows, *damaged);

  // Persisting the rebuilt snapshot replaces the file.
  SnapshotOptions so = WithLocalFacts(s.Options(false));
  so.persistable = true;
  auto fresh = Snapshot::Build(*s.store, s.embedder, so);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ((*fresh)->PersistParts(*s.store).value(), 1u);
  EXPECT_FALSE(fs::exists(file));  // the damaged one is gone
  SnapshotBuildStats again;
  ASSERT_NE(Build(s, true, &again), nullptr);
  EXPECT_EQ(again.parts[kSnapshotSegmentKind], PartState::kLoaded);
}

TEST_F(SnapshotSegmentTest, AWriteReplacesTheSegmentAndAStaleOneIsNotAdopted) {
  const std::string path = CopyOfDemo();
  const std::string dir = path + ".segments";
  const uint64_t before = SegmentsOf(dir)->segments()[0].record.id;
  {
    auto engine = Engine::Open(path);
    ASSERT_TRUE(engine.ok());
    ASSERT_TRUE(
        (*engine)->IndexDocuments({{"late-note", "Late", "A late note on Ada Lovelace."}}).ok());
  }  // the persister writes the new snapshot's segment when the engine closes
  OpenStore s(path);
  auto view = SegmentsOf(dir);
  ASSERT_EQ(view->segments().size(), 1u);
  EXPECT_NE(view->segments()[0].record.id, before);
  EXPECT_EQ(view->generation(), s.store->Generation().value());
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) files += entry.path().extension() == ".seg";
  EXPECT_EQ(files, 1u);  // the old segment was collected
  SnapshotBuildStats stats;
  auto snap = Build(s, true, &stats);
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ(stats.parts[kSnapshotSegmentKind], PartState::kLoaded);
  ExpectSameSnapshot(*Build(s, false, nullptr), *snap);

  // The store moves on without a new segment: the old one is not adopted.
  view.reset();
  s.store.reset();
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) "
                           "WHERE key = 'generation'",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  OpenStore moved(path);
  SnapshotBuildStats stale;
  auto rebuilt = Build(moved, true, &stale);
  ASSERT_NE(rebuilt, nullptr);
  EXPECT_EQ(stale.parts[kSnapshotSegmentKind], PartState::kMissing);
  EXPECT_EQ(rebuilt->segment(), nullptr);
  ExpectSameSnapshot(*Build(moved, false, nullptr), *rebuilt);
}

// Indexes the demo into a store at `path` with `eo`, then inserts a document
// and deletes two, each in an engine of its own (so each write extends the
// segment the open adopted); `check` runs after each step ("indexed",
// "inserted", "deleted").
void IndexInsertAndDelete(const std::string& path, const EngineOptions& eo,
                          const std::function<void(const std::string&)>& check) {
  {
    auto engine = Engine::Open(path, eo);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    ASSERT_TRUE((*engine)->Index({kDemo}).ok());
  }
  check("indexed");
  {
    auto engine = Engine::Open(path, eo);
    ASSERT_TRUE(engine.ok());
    ASSERT_TRUE(
        (*engine)->IndexDocuments({{"late-note", "Late", "A late note on Ada Lovelace."}}).ok());
  }
  check("inserted");
  {
    auto engine = Engine::Open(path, eo);
    ASSERT_TRUE(engine.ok());
    ASSERT_TRUE((*engine)->DeleteDocument("late-note").ok());
    ASSERT_TRUE((*engine)->DeleteDocument("lusk_tide_gauge.md").ok());
  }
  check("deleted");
}

// Above hnsw_threshold the segment holds the HNSW graph's arrays, searched
// in place: a snapshot from it equals one from the rows (every method's
// answers), and an insert and a delete on an engine that adopted it (the
// index converted into hnswlib for the write) leave a segment that still
// does.
TEST_F(SnapshotSegmentTest, AnHnswIndexIsSearchedInPlaceFromTheSegment) {
  constexpr size_t kThreshold = 10;
  const std::string path = local_.File("hnsw.db");
  EngineOptions eo;
  eo.hnsw_threshold = kThreshold;
  eo.passage_ann = "hnsw";
  IndexInsertAndDelete(path, eo, [&](const std::string& step) {
    SCOPED_TRACE(step);
    OpenStore s(path, /*read_only=*/true, kThreshold);
    std::shared_ptr<const Snapshot> rows, adopted;
    const VectorIndex* in_place = nullptr;
    BuildFromRowsAndSegment(s, step, &rows, &adopted, &in_place);
    ASSERT_NE(in_place, nullptr);
    ASSERT_NE(adopted->segment(), nullptr);
    EXPECT_NE(dynamic_cast<const HnswIndex*>(rows->dense()), nullptr);
    EXPECT_NE(dynamic_cast<const HnswArraysIndex*>(in_place), nullptr);
    ExpectSameSnapshot(*rows, *adopted);
    ExpectSameAnswers(*rows, *adopted);
  });
}

// Above hnsw_threshold with the built-in embedder ("auto": its queries are
// sparse) the segment holds the int8 columns beside the rows, searched in
// place: as for HNSW, a snapshot from it answers as one from the rows, and
// an insert and a delete layer their edits over the adopted base instead
// of building it again.
TEST_F(SnapshotSegmentTest, AnInt8IndexIsSearchedInPlaceFromTheSegment) {
  constexpr size_t kThreshold = 10;
  const std::string path = local_.File("int8.db");
  EngineOptions eo;
  eo.hnsw_threshold = kThreshold;
  IndexInsertAndDelete(path, eo, [&](const std::string& step) {
    SCOPED_TRACE(step);
    {
      auto engine = Engine::Open(path, eo);
      ASSERT_TRUE(engine.ok());
      auto stats = (*engine)->Stats();
      ASSERT_TRUE(stats.ok());
      EXPECT_EQ(stats->passage_index, "flat-int8");
    }
    OpenStore s(path, /*read_only=*/true, kThreshold);
    s.sparse_queries = true;
    std::shared_ptr<const Snapshot> rows, adopted;
    const VectorIndex* in_place = nullptr;
    BuildFromRowsAndSegment(s, step, &rows, &adopted, &in_place);
    ASSERT_NE(in_place, nullptr);
    const auto* built = dynamic_cast<const FlatIndex*>(rows->dense());
    ASSERT_NE(built, nullptr);
    EXPECT_EQ(built->column_copy(), FlatIndex::ColumnCopy::kInt8);
    const auto* flat = dynamic_cast<const FlatIndex*>(in_place);
    ASSERT_NE(flat, nullptr);
    EXPECT_TRUE(flat->borrowed());
    EXPECT_EQ(flat->Kind(), "flat-int8");
    ExpectSameAnswers(*rows, *adopted);
  });
}

// A segment written with an HNSW passage index (before the built-in
// embedder's stores moved to int8 columns) is stale for an open that
// chooses int8 (not damaged), built again by the next writable open, and
// adopted after.
TEST_F(SnapshotSegmentTest, AnHnswSegmentIsStaleForTheInt8IndexAndWrittenAgain) {
  constexpr size_t kThreshold = 10;
  const std::string path = local_.File("kinds.db");
  EngineOptions eo;
  eo.hnsw_threshold = kThreshold;
  eo.passage_ann = "hnsw";
  {
    auto engine = Engine::Open(path, eo);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    ASSERT_TRUE((*engine)->Index({kDemo}).ok());
  }
  auto adopted_state = [&] {
    OpenStore s(path, /*read_only=*/true, kThreshold);
    s.sparse_queries = true;
    SnapshotBuildStats stats;
    auto snap = Build(s, /*use_parts=*/true, &stats);
    EXPECT_NE(snap, nullptr);
    if (snap != nullptr) EXPECT_EQ(snap->dense()->Kind(), "flat-int8");
    return stats.parts[kSnapshotSegmentKind];
  };
  EXPECT_EQ(adopted_state(), PartState::kStale);
  eo.passage_ann = "auto";
  {
    auto engine = Engine::Open(path, eo);
    ASSERT_TRUE(engine.ok());
    ASSERT_TRUE((*engine)->Compact().ok());
  }
  EXPECT_EQ(adopted_state(), PartState::kLoaded);
}

TEST_F(SnapshotSegmentTest, AStoreWithPartsMigratesToASegmentOnCompact) {
  const std::string path = local_.File("parts.db");
  setenv("FLOWRAG_SNAPSHOT_SEGMENTS", "off", 1);
  {
    auto engine = Engine::Open(path);
    ASSERT_TRUE(engine.ok());
    ASSERT_TRUE((*engine)->Index({kDemo}).ok());
  }
  unsetenv("FLOWRAG_SNAPSHOT_SEGMENTS");
  ASSERT_FALSE(fs::exists(path + ".segments"));
  {
    OpenStore s(path);
    EXPECT_TRUE(s.store->GetSnapshotPart(kBm25Part).value().has_value());
  }
  {  // A read-only open reads the parts and writes nothing.
    EngineOptions ro;
    ro.read_only = true;
    auto engine = Engine::Open(path, ro);
    ASSERT_TRUE(engine.ok());
    ASSERT_TRUE((*engine)->Query("Who designed the Brannock lens?").ok());
    EXPECT_EQ((*engine)->Compact().code(), StatusCode::kFailedPrecondition);
  }
  EXPECT_FALSE(fs::exists(path + ".segments"));
  {
    auto engine = Engine::Open(path);
    ASSERT_TRUE(engine.ok());
    ASSERT_TRUE((*engine)->Compact().ok());
  }
  OpenStore s(path);
  EXPECT_FALSE(s.store->GetSnapshotPart(kBm25Part).value().has_value());  // dropped
  SnapshotBuildStats stats;
  auto migrated = Build(s, true, &stats);
  ASSERT_NE(migrated, nullptr);
  EXPECT_EQ(stats.parts[kSnapshotSegmentKind], PartState::kLoaded);
  auto rows = Build(s, false, nullptr);
  ExpectSameSnapshot(*rows, *migrated);
  ExpectSameAnswers(*rows, *migrated);
}

// Publishes a segment of `rows` with each array named by `crafted` filled
// with 0xff and then 0x7f bytes, and opens a snapshot from it with `open`:
// refused (rebuilt from rows), or accepted and answering every method
// without crashing.
void ExpectCraftedArraysNeverCrash(
    const std::string& path, const Snapshot& rows,
    const std::function<std::shared_ptr<const Snapshot>(SnapshotBuildStats*)>& open,
    const std::function<bool(const std::string&)>& crafted) {
  // The names of every array, from an honest write.
  std::vector<std::string> names;
  PublishSegment(rows, path + ".segments", "", 0, &names);
  ASSERT_GT(names.size(), 40u);
  for (const std::string& name : names) {
    if (!crafted(name)) continue;
    for (uint8_t fill : {uint8_t{0xff}, uint8_t{0x7f}}) {
      PublishSegment(rows, path + ".segments", name, fill);
      SnapshotBuildStats stats;
      auto snap = open(&stats);
      ASSERT_NE(snap, nullptr) << name;
      if (snap->segment() == nullptr) continue;  // refused: rebuilt from rows
      // Accepted (the values were in range): answering must not crash.
      for (const std::string& method : RetrieverNames()) {
        auto r = MakeRetriever(method);
        RetrievalRequest req;
        req.query = "Who designed the Brannock lens?";
        (void)(*r)->Retrieve(*snap, req);
      }
    }
  }
}

TEST_F(SnapshotSegmentTest, CraftedSegmentsNeverCrashTheReader) {
  const std::string path = CopyOfDemo();
  OpenStore s(path, /*read_only=*/false);
  auto rows = Build(s, false, nullptr);
  ASSERT_NE(rows, nullptr);
  ExpectCraftedArraysNeverCrash(
      path, *rows, [&](SnapshotBuildStats* stats) { return Build(s, true, stats); },
      [](const std::string&) { return true; });
}

// The same for the arrays of an int8 passage index (rows, codes, scales).
TEST_F(SnapshotSegmentTest, CraftedInt8IndexArraysNeverCrashTheReader) {
  const std::string path = CopyOfDemo();
  OpenStore s(path, /*read_only=*/false, /*threshold=*/1);
  s.sparse_queries = true;
  auto rows = Build(s, false, nullptr);
  ASSERT_NE(rows, nullptr);
  ASSERT_EQ(rows->dense()->Kind(), "flat-int8");
  ExpectCraftedArraysNeverCrash(
      path, *rows, [&](SnapshotBuildStats* stats) { return Build(s, true, stats); },
      [](const std::string& name) { return name.rfind("dense.", 0) == 0; });
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
