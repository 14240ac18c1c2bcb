// The segment set (src/segment/segment_set.h, manifest.h, tombstones.h,
// merge_policy.h): publish and read round trips, pinned views, the crash
// matrix (a child process stopped at each named step of Publish and of its
// garbage collection, then the state reopened must be exactly the old or the
// new one), damaged CURRENT, manifests, segments and tombstone files falling
// back, garbage collection against views held in this process and in
// another one, deletes carried over a merge, the merge policy against hand
// computed plans and a convergence property, and 8 threads publishing and
// reading at once.
//
// Test segments hold one section "keys": a unique u64 per row, so the live
// content of a view is the keys of its rows not deleted, and a lost or
// misplaced delete shows as a wrong key.
#include "segment/segment_set.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "segment/manifest.h"
#include "segment/merge_policy.h"
#include "segment/segment_reader.h"
#include "segment/segment_writer.h"
#include "segment/tombstones.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

namespace fs = std::filesystem;

using testing::ReadFile;
using testing::WriteFile;

void FlipByte(const std::string& path, size_t at) {
  std::string bytes = ReadFile(path);
  ASSERT_LT(at, bytes.size()) << path;
  bytes[at] ^= 0x20;
  WriteFile(path, bytes);
}

bool Contains(const Status& st, const std::string& text) {
  return st.message().find(text) != std::string::npos;
}

std::set<std::string> Files(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

std::vector<uint64_t> Range(uint64_t from, uint64_t to) {
  std::vector<uint64_t> v(to - from);
  std::iota(v.begin(), v.end(), from);
  return v;
}

SegmentSetOptions ReadOnly() {
  SegmentSetOptions options;
  options.writable = false;
  return options;
}

std::unique_ptr<SegmentSet> OpenSet(const std::string& dir, SegmentSetOptions options = {}) {
  auto set = SegmentSet::Open(dir, std::move(options));
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  return set.ok() ? std::move(*set) : nullptr;
}

// Writes a segment of `kind` whose rows hold `keys` and returns the edit
// entry that adds it.
SegmentEdit::AddedSegment WriteKeys(SegmentSet& set, const std::vector<uint64_t>& keys,
                                    const std::string& kind = "rows") {
  auto f = set.NewSegmentPath(kind);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  if (!f.ok()) return {};
  auto w = SegmentWriter::Create(f->path, kind, 1, f->id);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  if (!w.ok()) return {};
  EXPECT_TRUE((*w)->AddSection("keys", keys).ok());
  EXPECT_TRUE((*w)->Finish().ok());
  return {f->file, keys.size(), {}};
}

std::vector<uint64_t> Keys(const LiveSegment& s) {
  auto keys = s.reader->Section<uint64_t>("keys");
  EXPECT_TRUE(keys.ok()) << keys.status().ToString();
  if (!keys.ok()) return {};
  return std::vector<uint64_t>(keys->begin(), keys->end());
}

// The keys of a segment's rows that are not deleted, in row order.
std::vector<uint64_t> LiveKeys(const LiveSegment& s) {
  std::vector<uint64_t> out;
  const std::vector<uint64_t> keys = Keys(s);
  for (uint64_t row = 0; row < keys.size(); ++row) {
    if (!s.IsDeleted(row)) out.push_back(keys[row]);
  }
  return out;
}

std::vector<uint64_t> LiveKeys(const SegmentView& v) {
  std::vector<uint64_t> out;
  for (const LiveSegment& s : v.segments()) {
    const std::vector<uint64_t> keys = LiveKeys(s);
    out.insert(out.end(), keys.begin(), keys.end());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Everything a view says but its manifest number: generation, and per
// segment its id, kind, rows, level, keys and deleted rows.
std::string Describe(const SegmentView& v) {
  std::string out = "generation " + std::to_string(v.generation()) + ";";
  for (const LiveSegment& s : v.segments()) {
    out += " " + std::to_string(s.record.id) + ":" + s.record.kind + ":" +
           std::to_string(s.record.rows) + ":L" + std::to_string(s.record.level) + " keys";
    for (uint64_t k : Keys(s)) out += " " + std::to_string(k);
    out += " deleted";
    for (uint64_t r : s.deleted) out += " " + std::to_string(r);
    out += ";";
  }
  return out;
}

// The files a view's manifest names, with CURRENT, LOCK and the manifest.
std::set<std::string> ReferencedFiles(const SegmentView& v) {
  std::set<std::string> names = {"CURRENT", "LOCK", ManifestFileName(v.number())};
  for (const LiveSegment& s : v.segments()) {
    names.insert(s.record.file_name());
    if (s.record.tombstones.number != 0) {
      names.insert(SegmentFileName(s.record.tombstones.number, kTombstoneKind));
    }
  }
  return names;
}

class SegmentSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    root_ = tmp_.path();
    dir_ = (root_ / "store.db.segments").string();
  }

  // Segments 1 (keys 0-9, row 2 deleted), 2 (keys 10-14) and 3 (keys
  // 20-24), generation 1, published in two manifests.
  void BuildStateA(const std::string& dir) {
    auto set = OpenSet(dir);
    ASSERT_TRUE(set);
    SegmentEdit add;
    add.generation = 1;
    add.add = {WriteKeys(*set, Range(0, 10)), WriteKeys(*set, Range(10, 15)),
               WriteKeys(*set, Range(20, 25))};
    ASSERT_TRUE(set->Publish(add).ok());
    SegmentEdit del;
    del.deletes = {{1, {2}}};
    ASSERT_TRUE(set->Publish(del).ok());
  }

  testing::TempDir tmp_;
  fs::path root_;
  std::string dir_;
};

// ---------------------------------------------------------------------------
// The manifest format

Manifest SampleManifest() {
  Manifest m;
  m.number = 7;
  m.generation = -3;
  m.next_file_number = 40;
  m.segments.push_back({3, "passages", 4096, 0x1234, 100, 2, {}});
  m.segments.push_back({9, "graph.csr", 128, 0xfeed, 5, 0, {21, 200, 0xbeef, 5}});
  m.segments.push_back({30, "p", 1 << 20, 7, 8, 63, {39, 192, 1, 1}});
  return m;
}

TEST(ManifestTest, EncodesAndParsesCanonically) {
  const Manifest m = SampleManifest();
  const std::string bytes = EncodeManifest(m);
  EXPECT_EQ(bytes.size(), 64u + 3 * 96 + 8);
  auto parsed = ParseManifest(bytes, "M");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, m);
  EXPECT_EQ(EncodeManifest(*parsed), bytes);
  EXPECT_EQ(parsed->Find(9)->tombstones.number, 21u);
  EXPECT_EQ(parsed->Find(10), nullptr);
  auto empty = ParseManifest(EncodeManifest(Manifest{1, 0, 1, {}}), "M");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->segments.empty());
}

TEST(ManifestTest, EveryBitFlipAndTruncationIsCorruptionNamingTheFile) {
  const std::string bytes = EncodeManifest(SampleManifest());
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; bit += 3) {
      std::string damaged = bytes;
      damaged[i] ^= static_cast<char>(1 << bit);
      auto parsed = ParseManifest(damaged, "dir/MANIFEST-00000007");
      ASSERT_FALSE(parsed.ok()) << "byte " << i << " bit " << bit;
      EXPECT_EQ(parsed.status().code(), StatusCode::kCorruption);
      EXPECT_TRUE(Contains(parsed.status(), "dir/MANIFEST-00000007"));
    }
  }
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_EQ(ParseManifest(bytes.substr(0, n), "M").status().code(), StatusCode::kCorruption);
  }
}

// Manifests whose checksum is right but whose fields break a rule.
TEST(ManifestTest, FieldsThatBreakTheRulesAreRefusedWithAValidChecksum) {
  auto refused = [](Manifest m, const std::string& expected) {
    std::string bytes = EncodeManifest(m);
    auto parsed = ParseManifest(bytes, "M");
    ASSERT_FALSE(parsed.ok()) << expected;
    EXPECT_TRUE(Contains(parsed.status(), expected)) << parsed.status().ToString();
  };
  Manifest m = SampleManifest();
  std::swap(m.segments[0], m.segments[1]);
  refused(m, "do not ascend");
  m = SampleManifest();
  m.segments[1].tombstones.number = 3;  // a segment's number
  refused(m, "named twice");
  m = SampleManifest();
  m.next_file_number = 30;
  refused(m, "outside");
  m = SampleManifest();
  m.segments[0].tombstones.deleted = 0;
  m.segments[0].tombstones.file_bytes = 200;
  refused(m, "tombstone fields without a file");
  m = SampleManifest();
  m.segments[1].tombstones.deleted = 6;
  refused(m, "deleted rows of 5");
  m = SampleManifest();
  m.segments[2].file_bytes = 100;
  refused(m, "segment of 100 bytes");
  m = SampleManifest();
  m.number = 0;
  refused(m, "manifest number 0");
  // A kind no data segment may have: the encoder asserts on it, so craft it.
  std::string bytes = EncodeManifest(SampleManifest());
  std::memcpy(bytes.data() + 64 + 8, "tombstones", 10);
  std::memset(bytes.data() + 64 + 18, 0, 14);
  const uint64_t sum = ManifestChecksum(std::string_view(bytes).substr(0, bytes.size() - 8));
  std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);
  EXPECT_TRUE(Contains(ParseManifest(bytes, "M").status(), "kind"));
}

TEST(ManifestTest, FileNamesAndCurrentAreCanonical) {
  EXPECT_EQ(ManifestFileName(7), "MANIFEST-00000007");
  EXPECT_EQ(ManifestFileName(123456789012), "MANIFEST-123456789012");
  EXPECT_EQ(ParseManifestFileName("MANIFEST-00000007"), 7u);
  EXPECT_EQ(ParseManifestFileName("MANIFEST-123456789012"), 123456789012u);
  for (const char* bad : {"MANIFEST-7", "MANIFEST-000000007", "MANIFEST-0000000x", "MANIFEST-",
                          "manifest-00000007", "MANIFEST-00000007.tmp"}) {
    EXPECT_FALSE(ParseManifestFileName(bad)) << bad;
  }
  EXPECT_EQ(SegmentFileName(12, "graph.csr"), "00000012.graph.csr.seg");
  auto f = ParseSegmentFileName("00000012.graph.csr.seg");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->number, 12u);
  EXPECT_EQ(f->kind, "graph.csr");
  for (const char* bad : {"12.rows.seg", "00000012..seg", "00000012.Rows.seg",
                          "00000012.rows.seg.tmp", "00000012.rows", "notes.txt"}) {
    EXPECT_FALSE(ParseSegmentFileName(bad)) << bad;
  }
  EXPECT_EQ(EncodeCurrent(5), "MANIFEST-00000005\n");
  EXPECT_EQ(*ParseCurrent("MANIFEST-00000005\n", "C"), 5u);
  for (const char* bad : {"MANIFEST-00000005", "MANIFEST-0000\n", "MANIFEST-00000005\n\n",
                          "MANIFEST-00000000\n", ""}) {
    auto n = ParseCurrent(bad, "dir/CURRENT");
    ASSERT_FALSE(n.ok()) << bad;
    EXPECT_EQ(n.status().code(), StatusCode::kCorruption);
    EXPECT_TRUE(Contains(n.status(), "dir/CURRENT"));
  }
}

// ---------------------------------------------------------------------------
// Publishing and reading

TEST_F(SegmentSetTest, SegmentDirectoryIsBesideTheStoreFile) {
  EXPECT_EQ(*SegmentDirectoryFor("/data/x.db"), "/data/x.db.segments");
  for (const char* bad : {"", ":memory:", "postgresql://u@h/db", "file:x.db?mode=ro"}) {
    EXPECT_EQ(SegmentDirectoryFor(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST_F(SegmentSetTest, PublishesAndReadsBackAcrossReopens) {
  {
    auto set = OpenSet(dir_);
    ASSERT_TRUE(set);
    EXPECT_TRUE(fs::is_directory(dir_));  // created on demand
    EXPECT_EQ(set->Current()->number(), 0u);
    EXPECT_TRUE(set->Current()->segments().empty());
    EXPECT_TRUE(set->open_notes().empty());

    SegmentEdit edit;
    edit.generation = 5;
    edit.add = {WriteKeys(*set, Range(0, 10)), WriteKeys(*set, Range(100, 103), "other")};
    auto v1 = set->Publish(edit);
    ASSERT_TRUE(v1.ok()) << v1.status().ToString();
    EXPECT_EQ((*v1)->number(), 1u);
    EXPECT_EQ((*v1)->generation(), 5);
    ASSERT_EQ((*v1)->segments().size(), 2u);
    const LiveSegment& first = (*v1)->segments()[0];
    EXPECT_EQ(first.record.kind, "rows");
    EXPECT_EQ(first.record.rows, 10u);
    EXPECT_EQ(first.record.file_bytes, fs::file_size(dir_ + "/" + first.record.file_name()));
    EXPECT_EQ(first.record.level, 0u);
    EXPECT_EQ(first.reader->info().segment_id, first.record.id);
    EXPECT_EQ(Keys(first), Range(0, 10));
    EXPECT_EQ(set->Current(), *v1);

    SegmentEdit del;
    del.deletes = {{first.record.id, {1, 4}}};
    auto v2 = set->Publish(del);
    ASSERT_TRUE(v2.ok()) << v2.status().ToString();
    EXPECT_EQ((*v2)->number(), 2u);
    EXPECT_EQ((*v2)->generation(), 5);  // unchanged when the edit says none
    const LiveSegment* s = (*v2)->Find(first.record.id);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(std::vector<uint64_t>(s->deleted.begin(), s->deleted.end()),
              (std::vector<uint64_t>{1, 4}));
    EXPECT_TRUE(s->IsDeleted(4));
    EXPECT_FALSE(s->IsDeleted(5));
    EXPECT_EQ(s->live_rows(), 8u);
    EXPECT_EQ(s->record.tombstones.deleted, 2u);
    EXPECT_EQ(s->reader.get(), first.reader.get());  // an unchanged segment is not reopened
    // Deletes union with what is deleted already.
    SegmentEdit more;
    more.deletes = {{first.record.id, {0, 4, 9}}};
    auto v3 = set->Publish(more);
    ASSERT_TRUE(v3.ok());
    const LiveSegment* t = (*v3)->Find(first.record.id);
    EXPECT_EQ(std::vector<uint64_t>(t->deleted.begin(), t->deleted.end()),
              (std::vector<uint64_t>{0, 1, 4, 9}));
    // The replaced tombstones stay while a view holds them, then go.
    const std::string replaced =
        dir_ + "/" + SegmentFileName(s->record.tombstones.number, kTombstoneKind);
    EXPECT_TRUE(fs::exists(replaced));
    *v1 = nullptr;
    *v2 = nullptr;
    ASSERT_TRUE(set->CollectGarbage().ok());
    EXPECT_FALSE(fs::exists(replaced));
    EXPECT_EQ(Files(dir_), ReferencedFiles(**v3));
  }
  auto reopened = OpenSet(dir_);
  ASSERT_TRUE(reopened);
  EXPECT_TRUE(reopened->open_notes().empty());
  EXPECT_EQ(reopened->Current()->number(), 3u);
  EXPECT_EQ(LiveKeys(*reopened->Current()),
            (std::vector<uint64_t>{2, 3, 5, 6, 7, 8, 100, 101, 102}));
  const std::string described = Describe(*reopened->Current());
  reopened.reset();
  auto read_only = OpenSet(dir_, ReadOnly());
  ASSERT_TRUE(read_only);
  EXPECT_EQ(Describe(*read_only->Current()), described);
  EXPECT_EQ(read_only->Publish({}).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(read_only->NewSegmentPath("rows").status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(SegmentSetTest, OneWritableSetPerDirectoryReadersAlongside) {
  auto writer = OpenSet(dir_);
  ASSERT_TRUE(writer);
  auto second = SegmentSet::Open(dir_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(second.status(), dir_ + "/LOCK")) << second.status().ToString();
  auto reader = OpenSet(dir_, ReadOnly());
  ASSERT_TRUE(reader);
  SegmentEdit edit;
  edit.add = {WriteKeys(*writer, Range(0, 3))};
  ASSERT_TRUE(writer->Publish(edit).ok());
  EXPECT_EQ(reader->Current()->number(), 0u);  // until it refreshes
  auto refreshed = reader->Refresh();
  ASSERT_TRUE(refreshed.ok()) << refreshed.status().ToString();
  EXPECT_EQ((*refreshed)->number(), 1u);
  EXPECT_EQ(LiveKeys(**refreshed), Range(0, 3));
  writer.reset();
  EXPECT_TRUE(OpenSet(dir_));  // the lock went with the writer
  // A read-only set of a directory that does not exist is empty.
  auto none = OpenSet((root_ / "missing").string(), ReadOnly());
  ASSERT_TRUE(none);
  EXPECT_EQ(none->Current()->number(), 0u);
  EXPECT_FALSE(fs::exists(root_ / "missing"));
}

TEST_F(SegmentSetTest, ViewsStayPinnedAcrossPublishes) {
  auto set = OpenSet(dir_);
  ASSERT_TRUE(set);
  SegmentEdit add;
  add.add = {WriteKeys(*set, Range(0, 5)), WriteKeys(*set, Range(5, 10))};
  ASSERT_TRUE(set->Publish(add).ok());
  const std::shared_ptr<const SegmentView> pinned = set->Current();
  const std::string before = Describe(*pinned);
  SegmentEdit change;
  change.remove = {1};
  change.deletes = {{2, {0}}};
  change.generation = 9;
  auto after = set->Publish(change);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  SegmentEdit more;
  more.add = {WriteKeys(*set, Range(10, 12))};
  ASSERT_TRUE(set->Publish(more).ok());
  // The pinned view is unchanged and its removed segment still reads.
  EXPECT_EQ(Describe(*pinned), before);
  EXPECT_EQ(pinned->number(), 1u);
  EXPECT_EQ(LiveKeys(*pinned), Range(0, 10));
  EXPECT_TRUE(pinned->Find(1)->reader->VerifyAll().ok());
  EXPECT_EQ(LiveKeys(*set->Current()), (std::vector<uint64_t>{6, 7, 8, 9, 10, 11}));
}

TEST_F(SegmentSetTest, EditsThatCannotApplyAreRefusedBeforeAnythingIsWritten) {
  auto set = OpenSet(dir_);
  ASSERT_TRUE(set);
  SegmentEdit add;
  add.add = {WriteKeys(*set, Range(0, 5))};
  ASSERT_TRUE(set->Publish(add).ok());
  const std::set<std::string> files = Files(dir_);
  auto code = [&](const SegmentEdit& e) { return set->Publish(e).status().code(); };
  SegmentEdit e;
  e.remove = {7};
  EXPECT_EQ(code(e), StatusCode::kInvalidArgument);
  e = {};
  e.remove = {1, 1};
  EXPECT_EQ(code(e), StatusCode::kInvalidArgument);
  e = {};
  e.deletes = {{1, {3, 2}}};
  EXPECT_EQ(code(e), StatusCode::kInvalidArgument);
  e = {};
  e.deletes = {{1, {5}}};  // row 5 of 5
  EXPECT_EQ(code(e), StatusCode::kInvalidArgument);
  e = {};
  e.deletes = {{1, {0}}, {1, {1}}};
  EXPECT_EQ(code(e), StatusCode::kInvalidArgument);
  e = {};
  e.remove = {1};
  e.deletes = {{1, {0}}};
  EXPECT_EQ(code(e), StatusCode::kInvalidArgument);
  e = {};
  e.add = {{"00000099.rows.seg", 1, {}}};  // never handed out
  EXPECT_EQ(code(e), StatusCode::kInvalidArgument);
  e = {};
  e.add = {{set->Current()->segments()[0].record.file_name(), 5, {}}};  // published already
  EXPECT_EQ(code(e), StatusCode::kInvalidArgument);
  auto unwritten = set->NewSegmentPath("rows");
  ASSERT_TRUE(unwritten.ok());
  e = {};
  e.add = {{unwritten->file, 1, {}}};
  auto missing = set->Publish(e);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(missing.status(), unwritten->file)) << missing.status().ToString();
  set->AbandonFile(unwritten->file);
  e = {};
  e.add = {{"x", 1, {1}}};
  EXPECT_EQ(code(e), StatusCode::kInvalidArgument);  // a merge without base
  // A segment whose header disagrees with its name.
  auto misnamed = set->NewSegmentPath("rows");
  ASSERT_TRUE(misnamed.ok());
  {
    auto w = SegmentWriter::Create(misnamed->path, "rows", 1, misnamed->id + 100);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Finish().ok());
  }
  e = {};
  e.add = {{misnamed->file, 0, {}}};
  EXPECT_EQ(code(e), StatusCode::kInvalidArgument);
  set->AbandonFile(misnamed->file);
  EXPECT_EQ(set->Current()->number(), 1u);
  ASSERT_TRUE(set->CollectGarbage().ok());
  EXPECT_EQ(Files(dir_), files);  // the abandoned file is garbage now
  EXPECT_EQ(set->NewSegmentPath("tombstones").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(set->NewSegmentPath("Rows").status().code(), StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------
// Merges and tombstones

TEST_F(SegmentSetTest, MergeRowMapAndTombstonesSince) {
  BuildStateA(dir_);
  auto set = OpenSet(dir_);
  ASSERT_TRUE(set);
  const auto base = set->Current();
  const uint64_t sources[] = {1, 2};
  auto map = MergeRowMap::Build(*base, sources);
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(map->merged_rows(), 14u);  // 9 live rows of 1, 5 of 2
  EXPECT_EQ(map->Map(1, 0), 0u);
  EXPECT_EQ(map->Map(1, 2), std::nullopt);  // deleted in base
  EXPECT_EQ(map->Map(1, 3), 2u);
  EXPECT_EQ(map->Map(1, 9), 8u);
  EXPECT_EQ(map->Map(2, 0), 9u);
  EXPECT_EQ(map->Map(2, 4), 13u);
  EXPECT_EQ(map->Map(2, 5), std::nullopt);
  EXPECT_EQ(map->Map(3, 0), std::nullopt);
  EXPECT_EQ(map->MapRows(1, std::vector<uint64_t>{2}).status().code(),
            StatusCode::kInvalidArgument);
  const uint64_t twice[] = {1, 1};
  EXPECT_EQ(MergeRowMap::Build(*base, twice).status().code(), StatusCode::kInvalidArgument);

  SegmentEdit del;
  del.deletes = {{1, {0, 5}}, {2, {4}}};
  auto now = set->Publish(del);
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(*TombstonesSince(*base, **now, 1), (std::vector<uint64_t>{0, 5}));
  EXPECT_EQ(*TombstonesSince(*base, **now, 2), (std::vector<uint64_t>{4}));
  EXPECT_TRUE(TombstonesSince(*base, **now, 3)->empty());
  // Backwards (base is the later view): rows deleted in "base" are not in "now".
  EXPECT_EQ(TombstonesSince(**now, *base, 1).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(TombstonesSince(*base, **now, 8).status().code(), StatusCode::kFailedPrecondition);
}

// A merge publishes atomically against deletes published while it ran:
// they are carried to the merged segment's rows.
TEST_F(SegmentSetTest, AMergeCarriesOverDeletesPublishedWhileItRan) {
  BuildStateA(dir_);
  auto set = OpenSet(dir_);
  ASSERT_TRUE(set);
  const auto base = set->Current();
  // The consumer's merge: segments 1 and 2, their live rows at base.
  std::vector<uint64_t> merged_keys = LiveKeys(*base->Find(1));
  const std::vector<uint64_t> second = LiveKeys(*base->Find(2));
  merged_keys.insert(merged_keys.end(), second.begin(), second.end());
  SegmentEdit merge;
  merge.base = base;
  merge.add = {WriteKeys(*set, merged_keys)};
  merge.add[0].merged_from = {1, 2};
  // Meanwhile: deletes of keys 5 (segment 1 row 5), 10 and 14 (segment 2
  // rows 0 and 4), and 22 (segment 3, not merged).
  SegmentEdit del;
  del.deletes = {{1, {5}}, {2, {0, 4}}, {3, {2}}};
  ASSERT_TRUE(set->Publish(del).ok());
  auto merged = set->Publish(merge);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  const LiveSegment& m = (*merged)->segments()[1];
  ASSERT_EQ((*merged)->segments().size(), 2u);
  EXPECT_EQ(m.record.rows, 14u);
  EXPECT_EQ(std::vector<uint64_t>(m.deleted.begin(), m.deleted.end()),
            (std::vector<uint64_t>{4, 9, 13}));
  EXPECT_EQ(LiveKeys(**merged),
            (std::vector<uint64_t>{0, 1, 3, 4, 6, 7, 8, 9, 11, 12, 13, 20, 21, 23, 24}));
  // And from disk.
  set.reset();
  auto reopened = OpenSet(dir_, ReadOnly());
  EXPECT_EQ(LiveKeys(*reopened->Current()), LiveKeys(**merged));
}

TEST_F(SegmentSetTest, MergesAndReplacementsThatRacedAreRefused) {
  BuildStateA(dir_);
  auto set = OpenSet(dir_);
  ASSERT_TRUE(set);
  const auto base = set->Current();
  // Rows that do not add up.
  SegmentEdit wrong;
  wrong.base = base;
  wrong.add = {WriteKeys(*set, Range(0, 13))};
  wrong.add[0].merged_from = {1, 2};
  auto refused = set->Publish(wrong);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(refused.status(), "14 live rows")) << refused.status().ToString();
  // A tombstone replacement written against base, after a delete: refused.
  auto replacement = set->WriteTombstones(1, std::vector<uint64_t>{2, 3});
  ASSERT_TRUE(replacement.ok()) << replacement.status().ToString();
  SegmentEdit del;
  del.deletes = {{1, {7}}};
  ASSERT_TRUE(set->Publish(del).ok());
  const auto after_delete = set->Current();
  SegmentEdit replace;
  replace.base = base;
  replace.tombstones = {*replacement};
  auto stale = set->Publish(replace);
  EXPECT_EQ(stale.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(stale.status(), "changed since")) << stale.status().ToString();
  // Against the newest view it applies: the set is replaced whole.
  replace.base = set->Current();
  auto replaced = set->Publish(replace);
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  const LiveSegment* s = (*replaced)->Find(1);
  EXPECT_EQ(std::vector<uint64_t>(s->deleted.begin(), s->deleted.end()),
            (std::vector<uint64_t>{2, 3}));
  // A merge whose segment was removed meanwhile.
  SegmentEdit gone;
  gone.base = set->Current();
  gone.add = {WriteKeys(*set, Range(0, 13))};
  gone.add[0].merged_from = {1, 2};
  SegmentEdit drop;
  drop.remove = {2};
  ASSERT_TRUE(set->Publish(drop).ok());
  EXPECT_EQ(set->Publish(gone).status().code(), StatusCode::kFailedPrecondition);
  // A merge based on a view where row 7 was deleted, which the replacement
  // undeleted: its merged segment lacks a live row, so it is refused.
  SegmentEdit undeleted;
  undeleted.base = after_delete;
  undeleted.add = {WriteKeys(*set, Range(0, 8))};
  undeleted.add[0].merged_from = {1};
  auto refused_undelete = set->Publish(undeleted);
  EXPECT_EQ(refused_undelete.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(refused_undelete.status(), "replaced"))
      << refused_undelete.status().ToString();
  // Based on the first view (row 2 deleted; now 2 and 3), it applies: row 3
  // is carried over as merged row 2.
  SegmentEdit late;
  late.base = base;
  late.add = {WriteKeys(*set, Range(0, 9))};
  late.add[0].merged_from = {1};
  auto carried = set->Publish(late);
  ASSERT_TRUE(carried.ok()) << carried.status().ToString();
  const LiveSegment& m = (*carried)->segments().back();
  EXPECT_EQ(std::vector<uint64_t>(m.deleted.begin(), m.deleted.end()), (std::vector<uint64_t>{2}));
}

// ---------------------------------------------------------------------------
// The crash matrix

// The edit the crash matrix publishes, from state A: a delete (segment 1
// row 5) published while a merge of segments 1 and 2 ran, then the merge
// (which carries it), a delete of segment 3 row 1 and generation 2. `arm`
// is called before the last publish.
Status PublishMatrixEdit(SegmentSet& set, const std::function<void()>& arm) {
  const auto base = set.Current();
  std::vector<uint64_t> keys = LiveKeys(*base->Find(1));
  const std::vector<uint64_t> second = LiveKeys(*base->Find(2));
  keys.insert(keys.end(), second.begin(), second.end());
  SegmentEdit merge;
  merge.base = base;
  merge.add = {WriteKeys(set, keys)};
  merge.add[0].merged_from = {1, 2};
  merge.deletes = {{3, {1}}};
  merge.generation = 2;
  SegmentEdit del;
  del.deletes = {{1, {5}}};
  FLOWRAG_RETURN_IF_ERROR(set.Publish(del).status());
  arm();
  return set.Publish(merge).status();
}

class CrashMatrixTest : public SegmentSetTest, public ::testing::WithParamInterface<PublishStep> {};

TEST_P(CrashMatrixTest, AReopenSeesExactlyTheOldOrTheNewState) {
  const PublishStep step = GetParam();
  BuildStateA(dir_);
  // The new state, from a copy of the directory published without a crash.
  const std::string reference = (root_ / "reference").string();
  fs::copy(dir_, reference);
  std::string old_state, new_state;
  {
    auto set = OpenSet(reference);
    ASSERT_TRUE(set);
    std::string before;
    ASSERT_TRUE(PublishMatrixEdit(*set, [&] { before = Describe(*set->Current()); }).ok());
    old_state = before;
    new_state = Describe(*set->Current());
  }
  ASSERT_NE(old_state, new_state);

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto armed = std::make_shared<std::atomic<bool>>(false);
    SegmentSetOptions options;
    options.crash_hook = [armed, step](PublishStep at) {
      if (*armed && at == step) _exit(77);
    };
    auto set = SegmentSet::Open(dir_, options);
    if (!set.ok()) _exit(2);
    Status st = PublishMatrixEdit(**set, [&] { *armed = true; });
    _exit(st.ok() ? 0 : 3);  // the hook did not stop it
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 77) << PublishStepName(step);

  const bool committed =
      step == PublishStep::kCurrentRenamed || step == PublishStep::kGcFileDeleted;
  const std::string& expected = committed ? new_state : old_state;
  {
    // A reader sees the state without changing the directory.
    const std::set<std::string> files = Files(dir_);
    auto reader = OpenSet(dir_, ReadOnly());
    ASSERT_TRUE(reader);
    EXPECT_TRUE(reader->open_notes().empty()) << reader->open_notes()[0].ToString();
    EXPECT_EQ(Describe(*reader->Current()), expected) << PublishStepName(step);
    EXPECT_EQ(Files(dir_), files);
  }
  auto set = OpenSet(dir_);
  ASSERT_TRUE(set);
  EXPECT_EQ(Describe(*set->Current()), expected) << PublishStepName(step);
  // The writable open removed the crash's leftovers: temporary files, the
  // unpublished manifest and segment, the merged-away files.
  EXPECT_EQ(Files(dir_), ReferencedFiles(*set->Current())) << PublishStepName(step);
  // And the set goes on: manifest numbers only grow.
  const uint64_t number = set->Current()->number();
  SegmentEdit del;
  del.deletes = {{3, {4}}};
  auto next = set->Publish(del);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_GT((*next)->number(), number);
  if (!committed) {
    // The crashed publish used manifest number 4; it is never reused.
    EXPECT_GT((*next)->number(), 4u);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryStep, CrashMatrixTest,
                         ::testing::Values(PublishStep::kManifestTmpWritten,
                                           PublishStep::kManifestRenamed,
                                           PublishStep::kCurrentTmpWritten,
                                           PublishStep::kCurrentRenamed,
                                           PublishStep::kGcFileDeleted),
                         [](const ::testing::TestParamInfo<PublishStep>& info) {
                           std::string name = PublishStepName(info.param);
                           std::replace(name.begin(), name.end(), ' ', '_');
                           return name;
                         });

// ---------------------------------------------------------------------------
// Damage and fallback

TEST_F(SegmentSetTest, ADamagedOrMissingCurrentFallsBackToTheNewestManifest) {
  BuildStateA(dir_);
  std::string expected;
  {
    auto set = OpenSet(dir_, ReadOnly());
    expected = Describe(*set->Current());
  }
  const std::string current = dir_ + "/CURRENT";
  for (const std::string& damage : {std::string("MANIFEST-0000"), std::string("garbage\n"),
                                    std::string("MANIFEST-00000009\n"), std::string()}) {
    if (damage.empty()) {
      fs::remove(current);
    } else {
      WriteFile(current, damage);
    }
    auto reader = OpenSet(dir_, ReadOnly());
    ASSERT_TRUE(reader);
    EXPECT_EQ(Describe(*reader->Current()), expected) << damage;
    ASSERT_EQ(reader->open_notes().size(), 1u) << damage;
    EXPECT_TRUE(Contains(reader->open_notes()[0], "CURRENT") ||
                Contains(reader->open_notes()[0], "MANIFEST-00000009"))
        << reader->open_notes()[0].ToString();
  }
  // A writable open repairs CURRENT: the next open needs no fallback.
  {
    auto set = OpenSet(dir_);
    ASSERT_TRUE(set);
    EXPECT_EQ(Describe(*set->Current()), expected);
    EXPECT_EQ(set->open_notes().size(), 1u);
    EXPECT_EQ(Files(dir_), ReferencedFiles(*set->Current()));
  }
  auto again = OpenSet(dir_, ReadOnly());
  EXPECT_TRUE(again->open_notes().empty());
  EXPECT_EQ(Describe(*again->Current()), expected);
}

TEST_F(SegmentSetTest, ADamagedNewestManifestFallsBackToTheOneBefore) {
  SegmentSetOptions keep2;
  keep2.keep_manifests = 2;
  std::string older;
  uint64_t newest = 0;
  {
    auto set = OpenSet(dir_, keep2);
    SegmentEdit add;
    add.add = {WriteKeys(*set, Range(0, 4)), WriteKeys(*set, Range(4, 8))};
    ASSERT_TRUE(set->Publish(add).ok());
    older = Describe(*set->Current());
    SegmentEdit change;
    change.remove = {1};
    change.deletes = {{2, {3}}};
    auto v = set->Publish(change);
    ASSERT_TRUE(v.ok());
    newest = (*v)->number();
    // The previous manifest and the segment only it names are kept.
    EXPECT_TRUE(fs::exists(dir_ + "/" + ManifestFileName(newest - 1)));
    EXPECT_TRUE(fs::exists(dir_ + "/" + SegmentFileName(1, "rows")));
  }
  const std::string newest_path = dir_ + "/" + ManifestFileName(newest);
  FlipByte(newest_path, 70);
  auto reader = OpenSet(dir_, ReadOnly());
  ASSERT_TRUE(reader);
  EXPECT_EQ(Describe(*reader->Current()), older);
  ASSERT_EQ(reader->open_notes().size(), 1u);
  EXPECT_EQ(reader->open_notes()[0].code(), StatusCode::kCorruption);
  EXPECT_TRUE(Contains(reader->open_notes()[0], newest_path)) << reader->open_notes()[0].ToString();
}

TEST_F(SegmentSetTest, DamagedSegmentsAndTombstonesAreNeverReadTheSetStartsEmpty) {
  // Each damage, on a fresh copy of state A: the only manifest is refused,
  // so the set has no segments and the notes name the file.
  struct Damage {
    std::string file;
    std::function<void(const std::string&)> apply;
  };
  const std::vector<Damage> damages = {
      {SegmentFileName(2, "rows"), [](const std::string& p) { FlipByte(p, 70); }},  // header
      {SegmentFileName(2, "rows"), [](const std::string& p) { fs::resize_file(p, 100); }},
      {SegmentFileName(2, "rows"), [](const std::string& p) { fs::remove(p); }},
      // A segment replaced by another valid one: its header checksum differs.
      {SegmentFileName(3, "rows"),
       [](const std::string& p) {
         auto w = SegmentWriter::Create(p, "rows", 1, 3);
         ASSERT_TRUE(w.ok());
         ASSERT_TRUE((*w)->AddSection("keys", Range(0, 5)).ok());
         ASSERT_TRUE((*w)->Finish().ok());
       }},
      // The tombstone file (number 4): its rows section (at 128), its header.
      {SegmentFileName(4, kTombstoneKind), [](const std::string& p) { FlipByte(p, 128); }},
      {SegmentFileName(4, kTombstoneKind), [](const std::string& p) { FlipByte(p, 20); }},
  };
  for (size_t i = 0; i < damages.size(); ++i) {
    const std::string dir = (root_ / ("damaged" + std::to_string(i))).string();
    BuildStateA(dir);
    ASSERT_TRUE(fs::exists(dir + "/" + damages[i].file)) << damages[i].file;
    damages[i].apply(dir + "/" + damages[i].file);
    auto reader = OpenSet(dir, ReadOnly());
    ASSERT_TRUE(reader);
    EXPECT_TRUE(reader->Current()->segments().empty()) << i;
    ASSERT_FALSE(reader->open_notes().empty()) << i;
    EXPECT_TRUE(Contains(reader->open_notes()[0], dir + "/" + damages[i].file))
        << i << ": " << reader->open_notes()[0].ToString();
    // A writable open publishes the empty state and deletes what it cannot
    // trust.
    auto set = OpenSet(dir);
    ASSERT_TRUE(set);
    EXPECT_TRUE(set->Current()->segments().empty());
    EXPECT_EQ(Files(dir), ReferencedFiles(*set->Current())) << i;
    EXPECT_GT(set->Current()->number(), 2u);
  }
}

TEST_F(SegmentSetTest, AnAllDamagedDirectoryIsEmptyAndNumbersStillGrow) {
  BuildStateA(dir_);
  FlipByte(dir_ + "/" + ManifestFileName(2), 30);
  fs::remove(dir_ + "/CURRENT");
  auto set = OpenSet(dir_);
  ASSERT_TRUE(set);
  EXPECT_TRUE(set->Current()->segments().empty());
  EXPECT_EQ(set->open_notes().size(), 2u);  // CURRENT, MANIFEST-00000002
  SegmentEdit add;
  add.add = {WriteKeys(*set, Range(0, 2))};
  auto v = set->Publish(add);
  ASSERT_TRUE(v.ok());
  EXPECT_GT((*v)->number(), 2u);
  EXPECT_EQ((*v)->segments()[0].record.id, 5u);  // file numbers 1-4 are not reused
}

// ---------------------------------------------------------------------------
// Garbage collection

TEST_F(SegmentSetTest, GarbageCollectionNeverDeletesAFileAHeldViewMaps) {
  auto set = OpenSet(dir_);
  ASSERT_TRUE(set);
  SegmentEdit add;
  add.add = {WriteKeys(*set, Range(0, 5)), WriteKeys(*set, Range(5, 10))};
  ASSERT_TRUE(set->Publish(add).ok());
  SegmentEdit del;
  del.deletes = {{1, {0}}};
  ASSERT_TRUE(set->Publish(del).ok());
  std::shared_ptr<const SegmentView> held = set->Current();
  const std::string seg1 = dir_ + "/" + SegmentFileName(1, "rows");
  const std::string tomb = dir_ + "/" + SegmentFileName(3, kTombstoneKind);
  ASSERT_TRUE(fs::exists(tomb));
  // A reader that kept only one segment's reader keeps that file too.
  std::shared_ptr<const SegmentReader> kept_reader = held->Find(2)->reader;
  SegmentEdit drop;
  drop.remove = {1, 2};
  ASSERT_TRUE(set->Publish(drop).ok());
  EXPECT_TRUE(fs::exists(seg1));
  EXPECT_TRUE(fs::exists(tomb));
  EXPECT_GE(set->last_gc().files_leased, 3u);
  held.reset();
  auto gc = set->CollectGarbage();
  ASSERT_TRUE(gc.ok());
  EXPECT_FALSE(fs::exists(seg1));
  EXPECT_FALSE(fs::exists(tomb));
  EXPECT_TRUE(fs::exists(kept_reader->path()));
  EXPECT_EQ(gc->files_deleted, 2u);
  EXPECT_EQ(Keys(LiveSegment{{}, kept_reader, nullptr, {}}), Range(5, 10));
  kept_reader.reset();
  ASSERT_TRUE(set->CollectGarbage().ok());
  EXPECT_EQ(Files(dir_), ReferencedFiles(*set->Current()));
}

// A view held by another process leases its files: the writer's garbage
// collection keeps them until that process lets go.
TEST_F(SegmentSetTest, GarbageCollectionKeepsFilesLeasedByAnotherProcess) {
  BuildStateA(dir_);
  int ready[2], done[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(done), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto reader = SegmentSet::Open(dir_, ReadOnly());
    if (!reader.ok() || (*reader)->Current()->segments().size() != 3) _exit(2);
    std::shared_ptr<const SegmentView> held = (*reader)->Current();
    char c = 'r';
    if (write(ready[1], &c, 1) != 1) _exit(3);
    if (read(done[0], &c, 1) != 1) _exit(4);
    // The files are still there and read as before.
    if (LiveKeys(*held).size() != 19) _exit(5);
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  const std::string seg2 = dir_ + "/" + SegmentFileName(2, "rows");
  {
    auto set = OpenSet(dir_);
    ASSERT_TRUE(set);
    SegmentEdit drop;
    drop.remove = {2};
    ASSERT_TRUE(set->Publish(drop).ok());
    EXPECT_TRUE(fs::exists(seg2));
    EXPECT_EQ(set->last_gc().files_leased, 1u);
    ASSERT_EQ(write(done[1], "d", 1), 1);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    auto gc = set->CollectGarbage();
    ASSERT_TRUE(gc.ok());
    EXPECT_EQ(gc->files_deleted, 1u);
    EXPECT_FALSE(fs::exists(seg2));
  }
  for (int fd : {ready[0], ready[1], done[0], done[1]}) close(fd);
}

TEST_F(SegmentSetTest, GarbageCollectionLeavesUnknownAndPendingFilesAlone) {
  BuildStateA(dir_);
  WriteFile(dir_ + "/notes.txt", "mine");
  WriteFile(dir_ + "/00000077.rows.seg.tmp", "a crashed write");
  WriteFile(dir_ + "/MANIFEST-00000009.tmp", "a crashed publish");
  WriteFile(dir_ + "/00000078.rows.seg", "an unpublished segment");
  {
    // A reader changes nothing.
    auto reader = OpenSet(dir_, ReadOnly());
    EXPECT_TRUE(fs::exists(dir_ + "/00000077.rows.seg.tmp"));
    EXPECT_TRUE(fs::exists(dir_ + "/00000078.rows.seg"));
  }
  auto set = OpenSet(dir_);
  ASSERT_TRUE(set);
  EXPECT_FALSE(fs::exists(dir_ + "/00000077.rows.seg.tmp"));
  EXPECT_FALSE(fs::exists(dir_ + "/MANIFEST-00000009.tmp"));
  EXPECT_FALSE(fs::exists(dir_ + "/00000078.rows.seg"));
  EXPECT_TRUE(fs::exists(dir_ + "/notes.txt"));
  // File numbers continue past every file seen.
  const SegmentEdit::AddedSegment pending = WriteKeys(*set, Range(0, 2));
  EXPECT_EQ(pending.file, SegmentFileName(79, "rows"));
  SegmentEdit del;
  del.deletes = {{3, {0}}};
  ASSERT_TRUE(set->Publish(del).ok());
  EXPECT_TRUE(fs::exists(dir_ + "/" + pending.file));  // pending: not garbage
  set->AbandonFile(pending.file);
  ASSERT_TRUE(set->CollectGarbage().ok());
  EXPECT_FALSE(fs::exists(dir_ + "/" + pending.file));
  EXPECT_TRUE(fs::exists(dir_ + "/notes.txt"));
}

// ---------------------------------------------------------------------------
// The merge policy

MergeCandidate Seg(uint64_t id, uint64_t bytes, std::string kind = "a", uint64_t rows = 100,
                   uint64_t deleted = 0) {
  return MergeCandidate{id, std::move(kind), bytes, rows, deleted};
}

std::vector<std::vector<uint64_t>> Groups(const std::vector<PlannedMerge>& plan) {
  std::vector<std::vector<uint64_t>> out;
  for (const PlannedMerge& m : plan) out.push_back(m.segments);
  return out;
}

TEST(MergePolicyTest, SizeTiers) {
  MergePolicyOptions o;
  o.floor_segment_bytes = 100;
  o.merge_factor = 4;
  EXPECT_EQ(SizeTier(0, o), 0u);
  EXPECT_EQ(SizeTier(100, o), 0u);
  EXPECT_EQ(SizeTier(101, o), 1u);
  EXPECT_EQ(SizeTier(400, o), 1u);
  EXPECT_EQ(SizeTier(401, o), 2u);
  EXPECT_EQ(SizeTier(1600, o), 2u);
  EXPECT_EQ(SizeTier(UINT64_MAX, o), 29u);  // 100 * 4^28 < 2^64 <= 100 * 4^29
  const MergePolicyOptions d;
  EXPECT_EQ(SizeTier(2 << 20, d), 0u);
  EXPECT_EQ(SizeTier(20 << 20, d), 1u);
  EXPECT_EQ(SizeTier((20 << 20) + 1, d), 2u);
}

TEST(MergePolicyTest, HandComputedPlans) {
  MergePolicyOptions o;
  o.floor_segment_bytes = 100;
  o.merge_factor = 4;
  o.max_segment_bytes = 10000;
  o.deletes_ratio = 0.5;
  const std::vector<MergeCandidate> segments = {
      // Tier 0 of kind a: 1-5 and 15 (live 10 of 20 bytes): the four
      // smallest by live bytes (1, 15, 2, 3) merge; 4 and 5 wait.
      Seg(1, 10),
      Seg(2, 20),
      Seg(3, 30),
      Seg(4, 40),
      Seg(5, 50),
      Seg(15, 20, "a", 10, 5),
      // Tier 1 of kind a ((100, 400]): four segments merge.
      Seg(6, 150),
      Seg(7, 200),
      Seg(8, 300),
      Seg(9, 390),
      // Too large to merge (8000 live bytes > 10000 / 2) but 60% deleted:
      // rewritten alone.
      Seg(10, 20000, "a", 100, 60),
      // Kind b merges apart from kind a.
      Seg(11, 10, "b"),
      Seg(12, 10, "b"),
      Seg(13, 10, "b"),
      Seg(14, 10, "b"),
      // Kind c, tier 3 ((1600, 6400]): four of 3000 would make 12000 >
      // 10000, so three merge (9000) and one waits.
      Seg(21, 3000, "c"),
      Seg(22, 3000, "c"),
      Seg(23, 3000, "c"),
      Seg(24, 3000, "c"),
      // Kind d: below the merge factor, 40% deleted (under 50%): nothing.
      Seg(31, 10, "d", 10, 4),
      Seg(32, 10, "d"),
  };
  const std::vector<PlannedMerge> plan = PlanMerges(segments, o);
  EXPECT_EQ(Groups(plan), (std::vector<std::vector<uint64_t>>{
                              {1, 2, 3, 15}, {6, 7, 8, 9}, {11, 12, 13, 14}, {21, 22, 23}, {10}}));
  ASSERT_EQ(plan.size(), 5u);
  EXPECT_EQ(plan[0].live_bytes, 10u + 10 + 20 + 30);
  EXPECT_EQ(plan[0].live_rows, 100u + 5 + 100 + 100);
  EXPECT_EQ(plan[0].tier, 0u);
  EXPECT_EQ(plan[1].live_bytes, 1040u);
  EXPECT_EQ(plan[1].tier, 2u);
  EXPECT_EQ(plan[3].live_bytes, 9000u);
  EXPECT_EQ(plan[4].reason, PlannedMerge::Reason::kDeletes);
  EXPECT_EQ(plan[4].live_bytes, 8000u);
  EXPECT_EQ(plan[0].reason, PlannedMerge::Reason::kTier);
  // Busy segments are left out: tier 1 of kind a has three left.
  const std::vector<PlannedMerge> busy = PlanMerges(segments, o, {7, 15});
  EXPECT_EQ(Groups(busy), (std::vector<std::vector<uint64_t>>{
                              {1, 2, 3, 4}, {11, 12, 13, 14}, {21, 22, 23}, {10}}));
  // Nothing to do for few segments.
  EXPECT_TRUE(PlanMerges(std::vector<MergeCandidate>{Seg(1, 10), Seg(2, 10)}, o).empty());
}

TEST_F(SegmentSetTest, PlanMergesReadsAViewsSizesAndTombstones) {
  auto set = OpenSet(dir_);
  ASSERT_TRUE(set);
  SegmentEdit add;
  for (int i = 0; i < 3; ++i) add.add.push_back(WriteKeys(*set, Range(10 * i, 10 * i + 10)));
  ASSERT_TRUE(set->Publish(add).ok());
  SegmentEdit del;
  del.deletes = {{3, {0, 1, 2, 3, 4, 5}}};
  auto v = set->Publish(del);
  ASSERT_TRUE(v.ok());
  MergePolicyOptions o;
  o.merge_factor = 2;
  const std::vector<PlannedMerge> plan = PlanMerges(**v, o);
  // Segment 3 has 40% of its bytes live: the two smallest (3, then 1) merge.
  EXPECT_EQ(Groups(plan), (std::vector<std::vector<uint64_t>>{{1, 3}}));
  EXPECT_EQ(plan[0].live_rows, 14u);
}

// Random segment sets planned and applied until the plan is empty: every
// merge keeps the bounds, the loop converges, and what is left cannot merge.
TEST(MergePolicyTest, RepeatedPlanningAndApplyingConvergesWithinTheBounds) {
  std::mt19937_64 rng(34);
  for (int trial = 0; trial < 200; ++trial) {
    MergePolicyOptions o;
    o.merge_factor = 2 + rng() % 11;
    o.floor_segment_bytes = 1 + rng() % 1000;
    o.max_segment_bytes = o.floor_segment_bytes * (2 + rng() % 5000);
    o.deletes_ratio = 0.1 + (rng() % 90) / 100.0;
    std::vector<MergeCandidate> segments;
    uint64_t next_id = 1;
    const size_t n = rng() % 300;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t rows = 1 + rng() % 1000;
      const uint64_t deleted = rng() % 4 == 0 ? rng() % (rows + 1) : 0;
      const uint64_t bytes = 1 + rng() % (o.max_segment_bytes * (rng() % 8 == 0 ? 2 : 1));
      segments.push_back(Seg(next_id++, bytes, rng() % 5 == 0 ? "b" : "a", rows, deleted));
    }
    int rounds = 0;
    for (;; ++rounds) {
      ASSERT_LT(rounds, 1000) << "no convergence in trial " << trial;
      const std::vector<PlannedMerge> plan = PlanMerges(segments, o);
      if (plan.empty()) break;
      std::map<uint64_t, MergeCandidate> by_id;
      for (const MergeCandidate& c : segments) by_id[c.id] = c;
      std::set<uint64_t> seen;
      for (const PlannedMerge& m : plan) {
        ASSERT_FALSE(m.segments.empty());
        ASSERT_TRUE(std::is_sorted(m.segments.begin(), m.segments.end()));
        uint64_t live_bytes = 0;
        for (uint64_t id : m.segments) {
          ASSERT_TRUE(seen.insert(id).second) << "segment in two merges";
          ASSERT_EQ(by_id.at(id).kind, by_id.at(m.segments[0]).kind);
          const MergeCandidate& c = by_id.at(id);
          live_bytes += c.rows == 0 ? c.file_bytes : c.file_bytes * (c.rows - c.deleted) / c.rows;
        }
        ASSERT_EQ(m.live_bytes, live_bytes);
        if (m.reason == PlannedMerge::Reason::kTier) {
          ASSERT_GE(m.segments.size(), 2u);
          ASSERT_LE(m.segments.size(), o.merge_factor);
          ASSERT_LE(m.live_bytes, o.max_segment_bytes);
        } else {
          ASSERT_EQ(m.segments.size(), 1u);
          const MergeCandidate& c = by_id.at(m.segments[0]);
          ASSERT_GE(static_cast<double>(c.deleted), o.deletes_ratio * c.rows);
        }
      }
      // Apply: each merge becomes one segment of its live bytes and rows.
      std::vector<MergeCandidate> next;
      for (const MergeCandidate& c : segments) {
        if (!seen.count(c.id)) next.push_back(c);
      }
      for (const PlannedMerge& m : plan) {
        next.push_back(Seg(next_id++, m.live_bytes, by_id.at(m.segments[0]).kind, m.live_rows));
      }
      segments = std::move(next);
    }
    // Converged: no segment over the deletes ratio; in every tier fewer
    // than merge_factor mergeable segments.
    std::map<std::pair<std::string, uint32_t>, size_t> tiers;
    for (const MergeCandidate& c : segments) {
      ASSERT_FALSE(c.deleted > 0 && c.deleted >= o.deletes_ratio * c.rows);
      const uint64_t live =
          c.rows == 0 ? c.file_bytes : c.file_bytes * (c.rows - c.deleted) / c.rows;
      if (live <= o.max_segment_bytes / 2) ++tiers[{c.kind, SizeTier(live, o)}];
    }
    for (const auto& [tier, count] : tiers) ASSERT_LT(count, o.merge_factor);
  }
}

// ---------------------------------------------------------------------------
// Concurrency

// Eight threads: two add segments, one deletes rows by key, one merges what
// the policy plans, four read views and check them. At the end the live
// keys are exactly those added and not deleted, in memory and from disk.
TEST_F(SegmentSetTest, ConcurrentPublishersAndReadersUnderEightThreads) {
  auto set = OpenSet(dir_);
  ASSERT_TRUE(set);
  constexpr int kAddsPerThread = 40;
  constexpr uint64_t kRowsPerSegment = 8;
  std::mutex mu;
  std::vector<uint64_t> added_keys;  // guarded by mu
  std::set<uint64_t> deleted_keys;   // guarded by mu
  std::atomic<int> adders_done{0};
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::atomic<int> merges{0}, deletes{0}, reads{0};
  auto fail = [&](const std::string& what) {
    ++failures;
    ADD_FAILURE() << what;
  };

  auto adder = [&](uint64_t thread) {
    for (int i = 0; i < kAddsPerThread; ++i) {
      const uint64_t first = (thread * kAddsPerThread + i) * kRowsPerSegment;
      SegmentEdit e;
      e.add = {WriteKeys(*set, Range(first, first + kRowsPerSegment))};
      auto v = set->Publish(e);
      if (!v.ok()) return fail(v.status().ToString());
      std::lock_guard<std::mutex> lock(mu);
      for (uint64_t k = first; k < first + kRowsPerSegment; ++k) added_keys.push_back(k);
    }
    ++adders_done;
  };
  auto deleter = [&] {
    std::mt19937_64 rng(7);
    while (adders_done < 2 || deletes < 60) {
      uint64_t key;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (added_keys.size() <= deleted_keys.size()) continue;
        key = added_keys[rng() % added_keys.size()];
        if (!deleted_keys.insert(key).second) continue;
      }
      // Find the key's row in the newest view and delete it; a merge may
      // move it meanwhile: then look again.
      for (int attempt = 0;; ++attempt) {
        if (attempt > 100) return fail("key " + std::to_string(key) + " never deleted");
        const auto view = set->Current();
        SegmentEdit e;
        e.base = view;
        for (const LiveSegment& s : view->segments()) {
          const std::vector<uint64_t> keys = Keys(s);
          auto at = std::find(keys.begin(), keys.end(), key);
          if (at != keys.end()) e.deletes = {{s.record.id, {uint64_t(at - keys.begin())}}};
        }
        if (e.deletes.empty()) return fail("key " + std::to_string(key) + " not found");
        auto v = set->Publish(e);
        if (v.ok()) break;
        if (v.status().code() != StatusCode::kFailedPrecondition) {
          return fail(v.status().ToString());
        }
      }
      ++deletes;
    }
  };
  auto merger = [&] {
    MergePolicyOptions o;
    o.merge_factor = 3;
    o.floor_segment_bytes = 1;
    o.max_segment_bytes = 1 << 20;
    o.deletes_ratio = 0.25;
    while (!stop) {
      const auto base = set->Current();
      const std::vector<PlannedMerge> plan = PlanMerges(*base, o);
      if (plan.empty()) {
        std::this_thread::yield();
        continue;
      }
      std::vector<uint64_t> keys;
      for (uint64_t id : plan[0].segments) {
        const std::vector<uint64_t> live = LiveKeys(*base->Find(id));
        keys.insert(keys.end(), live.begin(), live.end());
      }
      SegmentEdit e;
      e.base = base;
      e.add = {WriteKeys(*set, keys)};
      e.add[0].merged_from = plan[0].segments;
      auto v = set->Publish(e);
      if (!v.ok()) return fail(v.status().ToString());
      ++merges;
    }
  };
  auto reader = [&] {
    uint64_t last = 0;
    while (!stop) {
      const auto view = set->Current();
      if (view->number() < last) return fail("manifest numbers went back");
      last = view->number();
      for (const LiveSegment& s : view->segments()) {
        if (s.reader->info().segment_id != s.record.id) return fail("wrong segment");
        if (!fs::exists(s.reader->path())) return fail("a held file was deleted");
        if (s.tombstones && !fs::exists(s.tombstones->path())) return fail("tombstones deleted");
        if (s.deleted.size() != s.record.tombstones.deleted) return fail("deleted count");
        if (Keys(s).size() != s.record.rows) return fail("row count");
      }
      ++reads;
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(adder, 0);
  threads.emplace_back(adder, 1);
  threads.emplace_back(deleter);
  threads.emplace_back(merger);
  for (int i = 0; i < 4; ++i) threads.emplace_back(reader);
  threads[0].join();
  threads[1].join();
  threads[2].join();
  stop = true;
  for (size_t i = 3; i < threads.size(); ++i) threads[i].join();
  ASSERT_EQ(failures, 0);
  EXPECT_GT(merges, 0);
  EXPECT_GE(deletes, 60);
  EXPECT_GT(reads, 0);
  std::vector<uint64_t> expected;
  for (uint64_t k : added_keys) {
    if (!deleted_keys.count(k)) expected.push_back(k);
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(expected.size(), 2 * kAddsPerThread * kRowsPerSegment - deleted_keys.size());
  EXPECT_EQ(LiveKeys(*set->Current()), expected);
  ASSERT_TRUE(set->CollectGarbage().ok());
  EXPECT_EQ(Files(dir_), ReferencedFiles(*set->Current()));
  set.reset();
  auto reopened = OpenSet(dir_, ReadOnly());
  EXPECT_EQ(LiveKeys(*reopened->Current()), expected);
  RecordProperty("merges", merges.load());
  RecordProperty("deletes", deletes.load());
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
