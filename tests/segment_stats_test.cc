// What Engine::Stats says of a store's segments (flowrag/types.h
// SegmentStats, segment/segment_stats.h; `flowrag stats`, /v1/stats and
// Python show the same struct): the snapshot segment an index run writes,
// whether the open mapped it, the file a reader still maps after a write
// replaced it, and nothing for a store that keeps no segments. And what a
// serving engine does once its write's segment is published: it answers
// from the mapped segment instead of the write's private snapshot
// (engine/published_segment.cc).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/result_json.h"
#include "flowrag/engine.h"
#include "segment/segment_reader.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

namespace fs = std::filesystem;
using testing::TempDir;

const std::string kDemo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";

StoreStats StatsOf(const std::string& path, bool read_only = true) {
  EngineOptions o;
  o.read_only = read_only;
  auto engine = Engine::Open(path, o);
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  if (!engine.ok()) return {};
  auto stats = (*engine)->Stats();
  EXPECT_TRUE(stats.ok()) << stats.status().ToString();
  return stats.ok() ? *stats : StoreStats{};
}

// Flips one byte in every block of section `name` of segment `file`.
void AlterEveryBlock(const fs::path& file, const std::string& name) {
  auto reader = SegmentReader::Open(file.string());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const SectionInfo* section = (*reader)->FindSection(name);
  ASSERT_NE(section, nullptr) << name;
  ASSERT_GT(section->length, 0u) << name;
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  for (uint64_t at = 0; at < section->length; at += section->block_bytes) {
    const auto where = static_cast<std::streamoff>(section->offset + at);
    f.seekg(where);
    char c = 0;
    f.get(c);
    f.seekp(where);
    f.put(static_cast<char>(c ^ 0x5a));
  }
}

// The store's one snapshot segment file.
fs::path SegmentFile(const std::string& directory) {
  for (const auto& e : fs::directory_iterator(directory)) {
    if (e.path().extension() == ".seg") return e.path();
  }
  return {};
}

class SegmentStatsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("FLOWRAG_SNAPSHOT_SEGMENTS");
    path_ = dir_.File("demo.db");
    auto engine = Engine::Open(path_);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    ASSERT_TRUE((*engine)->Index({kDemo}).ok());
  }
  TempDir dir_;
  std::string path_;
};

TEST_F(SegmentStatsTest, AnIndexedStoreShowsItsSnapshotSegmentMappedAtOpen) {
  const StoreStats s = StatsOf(path_);
  const SegmentStats& seg = s.segments;
  EXPECT_EQ(seg.directory, path_ + ".segments");
  EXPECT_GE(seg.manifest, 1u);
  ASSERT_EQ(seg.files.size(), 1u);
  const SegmentFileStats& f = seg.files[0];
  EXPECT_EQ(f.kind, "snapshot");
  EXPECT_EQ(f.rows, static_cast<uint64_t>(s.passages));
  EXPECT_EQ(f.deleted_rows, 0u);
  const fs::path file =
      fs::path(seg.directory) / (std::string(8 - std::to_string(f.id).size(), '0') +
                                 std::to_string(f.id) + ".snapshot.seg");
  ASSERT_TRUE(fs::exists(file)) << file;
  EXPECT_EQ(f.bytes, fs::file_size(file));
  EXPECT_EQ(seg.live_bytes, f.bytes);
  EXPECT_EQ(seg.unreferenced_files, 0u);
  EXPECT_EQ(seg.merges_pending, 0u);
  EXPECT_EQ(seg.snapshot_source, "segment");

  const nlohmann::json j = StoreStatsJson(s);
  EXPECT_EQ(j["segments"]["files"][0]["rows"], s.passages);
  EXPECT_EQ(j["segments"]["snapshot_source"], "segment");
  EXPECT_EQ(j["segments"]["manifest"], seg.manifest);
}

TEST_F(SegmentStatsTest, TheFileAReaderStillMapsAwaitsDeletionUntilItLetsGo) {
  const uint64_t first = StatsOf(path_).segments.files.at(0).id;
  const uint64_t first_bytes = StatsOf(path_).segments.files.at(0).bytes;
  {
    EngineOptions ro;
    ro.read_only = true;
    auto reader = Engine::Open(path_, ro);
    ASSERT_TRUE(reader.ok());
    ASSERT_TRUE((*reader)->Query("How long is the River Ostrel?").ok());  // maps segment `first`
    {
      auto writer = Engine::Open(path_);
      ASSERT_TRUE(writer.ok());
      ASSERT_TRUE(
          (*writer)->IndexDocuments({{"late-note", "Late", "A late note on the River Ostrel."}}).ok());
    }  // the persister publishes the next segment when the writer closes
    const SegmentStats during = StatsOf(path_).segments;
    ASSERT_EQ(during.files.size(), 1u);
    EXPECT_NE(during.files[0].id, first);
    EXPECT_EQ(during.unreferenced_files, 1u);
    EXPECT_EQ(during.unreferenced_bytes, first_bytes);
  }
  // The reader let go: the next writable open's collection deletes it.
  auto writer = Engine::Open(path_);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Compact().ok());
  const SegmentStats after = (*writer)->Stats()->segments;
  EXPECT_EQ(after.unreferenced_files, 0u);
  EXPECT_EQ(after.files.size(), 1u);
}

TEST_F(SegmentStatsTest, ADamagedSegmentIsReportedAndAStoreWithoutSegmentsShowsNone) {
  const SegmentStats before = StatsOf(path_).segments;
  ASSERT_EQ(before.files.size(), 1u);
  // Alter one byte in the middle of the segment: the open rebuilds the
  // snapshot from the store and says why.
  fs::path file;
  for (const auto& e : fs::directory_iterator(before.directory)) {
    if (e.path().extension() == ".seg") file = e.path();
  }
  ASSERT_FALSE(file.empty());
  AlterEveryBlock(file, "bm25.doc_lengths");  // an array the open verifies
  const SegmentStats damaged = StatsOf(path_).segments;
  EXPECT_EQ(damaged.snapshot_source.rfind("built (", 0), 0u) << damaged.snapshot_source;
  EXPECT_NE(damaged.snapshot_source.find("checksum"), std::string::npos) << damaged.snapshot_source;

  setenv("FLOWRAG_SNAPSHOT_SEGMENTS", "off", 1);
  const StoreStats off = StatsOf(dir_.File("parts.db"), /*read_only=*/false);
  unsetenv("FLOWRAG_SNAPSHOT_SEGMENTS");
  EXPECT_TRUE(off.segments.directory.empty());
  EXPECT_TRUE(off.segments.files.empty());
  EXPECT_TRUE(off.segments.snapshot_source.empty());
}

// Every method's ranked passage ids for the demo questions.
std::vector<std::vector<int64_t>> Rankings(const Engine& engine) {
  std::vector<std::vector<int64_t>> out;
  for (const char* method : {"bm25", "dense", "hybrid", "ppr", "semflow", "qafd", "sa", "onehop"}) {
    for (const char* q : {"How long is the River Ostrel?", "Who designed the Brannock lens?",
                          "Which club is older, Hollin Bay Athletic or Port Calder Rowing Club?"}) {
      QueryOptions o;
      o.method = method;
      auto r = engine.Query(q, o);
      EXPECT_TRUE(r.ok()) << method << ": " << r.status().ToString();
      std::vector<int64_t> ids;
      if (r.ok()) {
        for (const ScoredPassage& p : r->passages) ids.push_back(p.passage_id);
      }
      out.push_back(std::move(ids));
    }
  }
  return out;
}

// The arrays an open borrows lazily (the graph texts' sparse lists, an
// int8 passage index's rows and codes) are verified as queries read them:
// the open of a store whose such array is damaged maps the segment, the
// first query that reads a damaged block finds it, and the engine answers
// from a snapshot built again from the store, every later query too.
void ExpectDamageFoundByQueriesAndAnsweredAsBefore(const std::string& path,
                                                   const EngineOptions& options,
                                                   const std::vector<std::string>& arrays) {
  auto clean = Engine::Open(path, options);
  ASSERT_TRUE(clean.ok()) << clean.status().ToString();
  const std::vector<std::vector<int64_t>> expected = Rankings(**clean);
  clean->reset();
  const fs::path file = SegmentFile(path + ".segments");
  ASSERT_FALSE(file.empty());
  for (const std::string& array : arrays) AlterEveryBlock(file, array);

  const uint64_t damage_before = SegmentDamageCount();
  EngineOptions read_only = options;
  read_only.read_only = true;
  auto engine = Engine::Open(path, read_only);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  EXPECT_EQ((*engine)->Stats()->segments.snapshot_source, "segment");  // opened lazily
  EXPECT_EQ(Rankings(**engine), expected);
  EXPECT_GT(SegmentDamageCount(), damage_before);
  EXPECT_FALSE(SegmentDamageOf(file.string()).ok());
  const std::string source = (*engine)->Stats()->segments.snapshot_source;
  EXPECT_EQ(source.rfind("built (", 0), 0u) << source;
  EXPECT_NE(source.find("found damaged"), std::string::npos) << source;
  EXPECT_EQ(Rankings(**engine), expected);

  // A writable engine writes a new segment; the next open maps it.
  auto writer = Engine::Open(path, options);
  ASSERT_TRUE(writer.ok());
  EXPECT_EQ(Rankings(**writer), expected);
  ASSERT_TRUE((*writer)->Compact().ok());
  writer->reset();
  auto again = Engine::Open(path, read_only);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->Stats()->segments.snapshot_source, "segment");
  EXPECT_EQ(Rankings(**again), expected);
}

TEST_F(SegmentStatsTest, DamagedGraphTextListsAreFoundByTheQueriesThatReadThem) {
  ExpectDamageFoundByQueriesAndAnsweredAsBefore(path_, EngineOptions{},
                                                {"gv.fi.halves", "gv.ei.delta"});
}

// The fact and description texts' bytes are verified text by text as
// questions read them (KnowledgeGraph::LazyArrays).
TEST_F(SegmentStatsTest, DamagedGraphTextsAreFoundByTheQueriesThatReadThem) {
  ExpectDamageFoundByQueriesAndAnsweredAsBefore(path_, EngineOptions{},
                                                {"kg.fact_texts.b", "kg.description_texts.b"});
}

// BM25's posting lists are verified and checked list by list as questions
// read them (Bm25Index::Postings).
TEST_F(SegmentStatsTest, DamagedBm25PostingsAreFoundByTheQueriesThatReadThem) {
  ExpectDamageFoundByQueriesAndAnsweredAsBefore(path_, EngineOptions{},
                                                {"bm25.post_docs", "bm25.post_tfs"});
}

// The entity names' sparse rows (query-aware edge weights) are verified
// and checked row by row as qafd's walks read them (SparseRows::Row).
TEST_F(SegmentStatsTest, DamagedEntityRowsAreFoundByTheQueriesThatReadThem) {
  ExpectDamageFoundByQueriesAndAnsweredAsBefore(path_, EngineOptions{},
                                                {"gv.er.dims", "gv.er.vals"});
}

// The walk graph's entries are verified and checked row by row as the
// walks read them (WalkGraph::Begin).
TEST_F(SegmentStatsTest, DamagedWalkRowsAreFoundByTheQueriesThatReadThem) {
  ExpectDamageFoundByQueriesAndAnsweredAsBefore(path_, EngineOptions{},
                                                {"walk.targets", "walk.weights", "walk.kinds"});
}

// The knowledge graph's CSRs and fact arrays are verified and checked row
// by row and block by block as questions read them (Csr::Begin,
// KnowledgeGraph::FactSubject ...); of their offsets the open reads the
// first and last, so the demo's offsets, one block each, are not here.
TEST_F(SegmentStatsTest, DamagedGraphRowsAndFactsAreFoundByTheQueriesThatReadThem) {
  ExpectDamageFoundByQueriesAndAnsweredAsBefore(
      path_, EngineOptions{},
      {"kg.mentions.targets", "kg.related_to.attrs", "kg.fact_subject", "kg.fact_sources",
       "kg.facts_by_text"});
}

// A writable open borrows the graph rows a write extends without reading
// them (Snapshot::AdoptSegmentGraph, GraphRowsBytes); damaged ones are
// found by the first write, which still succeeds (the store is the truth)
// and leaves the engine answering as a clean store does.
TEST_F(SegmentStatsTest, DamagedGraphRowsAreFoundByTheFirstWriteNotByTheOpen) {
  const DocumentInput late{"late-note", "Late", "A late note on the River Ostrel."};
  const std::string clean_path = dir_.File("clean.db");
  fs::copy_file(path_, clean_path);
  fs::copy(path_ + ".segments", clean_path + ".segments", fs::copy_options::recursive);
  std::vector<std::vector<int64_t>> expected;
  {
    auto clean = Engine::Open(clean_path);
    ASSERT_TRUE(clean.ok());
    ASSERT_TRUE((*clean)->IndexDocuments({late}).ok());
    expected = Rankings(**clean);
  }
  const fs::path file = SegmentFile(path_ + ".segments");
  AlterEveryBlock(file, "rows");
  const uint64_t damage_before = SegmentDamageCount();
  auto engine = Engine::Open(path_);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  EXPECT_EQ((*engine)->Stats()->segments.snapshot_source, "segment");
  ASSERT_TRUE((*engine)->Query("How long is the River Ostrel?").ok());
  EXPECT_EQ(SegmentDamageCount(), damage_before);  // neither the open nor a query read them
  auto written = (*engine)->IndexDocuments({late});
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_GT(SegmentDamageCount(), damage_before);
  EXPECT_EQ(Rankings(**engine), expected);
}

// The documents' texts are verified range by range as questions read
// their passages (CheckedText).
TEST_F(SegmentStatsTest, DamagedDocumentTextsAreFoundByTheQueriesThatReadThem) {
  ExpectDamageFoundByQueriesAndAnsweredAsBefore(path_, EngineOptions{}, {"doc.text.b"});
}

TEST_F(SegmentStatsTest, ADamagedInt8PassageIndexIsFoundByTheQueriesThatReadIt) {
  EngineOptions int8;
  int8.hnsw_threshold = 1;  // the demo's passages get the int8 index
  int8.passage_ann = "int8";
  const std::string path = dir_.File("int8.db");
  {
    auto engine = Engine::Open(path, int8);
    ASSERT_TRUE(engine.ok());
    ASSERT_TRUE((*engine)->Index({kDemo}).ok());
    EXPECT_EQ((*engine)->Stats()->passage_index, "flat-int8");
  }
  ExpectDamageFoundByQueriesAndAnsweredAsBefore(path, int8,
                                                {"dense.codes", "dense.packed", "dense.offsets"});
}

TEST_F(SegmentStatsTest, AServingEngineAnswersFromTheSegmentItsWriteProduced) {
  auto engine = Engine::Open(path_);
  ASSERT_TRUE(engine.ok());
  ASSERT_TRUE((*engine)->Query("How long is the River Ostrel?").ok());
  EXPECT_EQ((*engine)->Stats()->segments.snapshot_source, "segment");
  ASSERT_TRUE(
      (*engine)->IndexDocuments({{"late-note", "Late", "A late note on the River Ostrel."}}).ok());
  // The insert's snapshot is built in memory (appended) ...
  EXPECT_EQ((*engine)->Stats()->segments.snapshot_source.rfind("built", 0), 0u);
  const auto appended = Rankings(**engine);
  // ... until the persister (500 ms after the write) has published its
  // segment and the engine swapped in the snapshot mapped from it. A
  // bounded wait for that event, not a timing: the bound is far above it.
  std::string source;
  for (int i = 0; i < 600 && source != "segment"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    source = (*engine)->Stats()->segments.snapshot_source;
  }
  ASSERT_EQ(source, "segment");
  const StoreStats after = *(*engine)->Stats();
  ASSERT_EQ(after.segments.files.size(), 1u);
  EXPECT_EQ(after.segments.files[0].rows, static_cast<uint64_t>(after.passages));
  EXPECT_EQ(Rankings(**engine), appended);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
