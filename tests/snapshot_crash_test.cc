// The snapshot segment's crash matrix (issue 34, acceptance 6): kill -9 at
// every step of a snapshot segment write, then reopen and rerun.
//
// A SQLite store keeps its derived snapshot in one snapshot segment
// (graph/snapshot_segment.h), written after each write: here after an index
// run into a new store, after an insert of one document into an indexed
// store (`flowrag index note.md`: Engine::Index writes the segment at once;
// IndexDocuments' delayed write may come once or twice depending on timing),
// after a delete (written when the engine closes), and by Engine::Compact
// migrating a store that kept snapshot parts (FLOWRAG_SNAPSHOT_SEGMENTS=off).
// A child process does the operation and stops (_exit, as kill -9: nothing
// is flushed or destroyed) at one step of that write
// (SetSnapshotWriteHookForTesting): the segment file created, its first and
// middle sections ended, all sections given, the table and header written
// (before the fsync), fsynced (before the rename), renamed, the directory
// fsynced; each step of the set's publish (the manifest, CURRENT: the commit
// point) and of its garbage collection; after the publish, after the
// collection that follows, after the store's parts are dropped. Then, in the
// parent:
//   (a) a read-only open answers every method on the demo questions exactly
//       as the uncrashed operation leaves the store: its rows are committed
//       before the write starts, so the answers are those of "just after the
//       write" at every step. What the step decides is where the snapshot
//       comes from, asserted per step: before the commit point from the rows
//       (Compact: the parts), the old segment, of an older generation, not
//       adopted; after it from the new segment. A set's first publish (a new
//       store, a migration) commits when its manifest is renamed into place:
//       without CURRENT a reader falls back to the newest valid manifest.
//       The open writes nothing (every file of the store is unchanged).
//   (b) a writable open that reruns the operation (the delete's: reads the
//       store) completes; the store then equals a clean index of the same
//       documents (content by value, BM25, dense index, graph, every method's
//       answers) for the index run and Compact, and the same operation
//       uncrashed for the insert and the delete (which differ from a clean
//       index crash or not: ExpectTheUncrashedOperationsToEqualTheirReferences);
//       the next open adopts its segment, no snapshot part is left in the
//       database and the segment directory holds exactly the current
//       manifest's files (the writable open finishes what a crash after the
//       commit point left: CompleteSnapshotSegment).
// DamagedSegmentTest, below: torn (truncated, zeroed tail) and foreign
// segment files. A byte flipped in a section and a stale segment:
// snapshot_segment_test.cc.
// Merges: the snapshot has one segment per store generation, so no
// snapshot segments are merged yet; merges (and a crash during one) are
// tested at the SegmentSet level (segment_set_test.cc, CrashMatrixTest).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/hash.h"
#include "engine/engine_impl.h"
#include "flowrag/engine.h"
#include "graph/graph_io.h"
#include "graph/snapshot.h"
#include "graph/snapshot_segment.h"
#include "graph_dump.h"
#include "segment/manifest.h"
#include "segment/segment_set.h"
#include "snapshot_compare.h"
#include "storage/store.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::InChild;
using namespace snapshot_compare;  // NOLINT(google-build-using-namespace): test helpers

const std::string kDemo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";
// The document the delete removes (it has entities and facts of its own).
constexpr char kDeleted[] = "ostrel_regatta.md";
// The document the insert adds: a file, so that a clean index of the demo
// and it together gives it the same id.
constexpr char kNoteName[] = "zz_late_note.md";
constexpr char kNoteText[] =
    "# Late Note\n\nIvo Brannock visited the Lusk tide gauge in 1902 with Selma Quist, who "
    "later sailed in the Ostrel Regatta.\n";
constexpr char kQuestion[] = "Who designed the Brannock lens?";
// The child's exit code when it stopped at the armed step.
constexpr int kStopped = 77;

// ---------------------------------------------------------------------------
// The hook (set in the child only)

// The step to stop at and at which occurrence (1-based); the file the
// child appends every step to (-1: none).
std::string armed_step;
int armed_occurrence = 0;
int occurrences = 0;
int trace_fd = -1;

void Hook(std::string_view step) {
  if (trace_fd >= 0) {
    const std::string line = std::string(step) + "\n";
    if (write(trace_fd, line.data(), line.size()) < 0) _exit(3);
  }
  if (!armed_step.empty() && step == armed_step && ++occurrences == armed_occurrence) {
    _exit(kStopped);
  }
}

// ---------------------------------------------------------------------------
// The operations and the steps

enum class Operation { kIndex, kInsert, kDelete, kCompact };

const char* OperationName(Operation op) {
  switch (op) {
    case Operation::kIndex:
      return "Index";
    case Operation::kInsert:
      return "Insert";
    case Operation::kDelete:
      return "Delete";
    case Operation::kCompact:
      return "Compact";
  }
  return "?";
}

// Whether the store had a snapshot segment before the operation (then the
// publish replaces it and the collections delete its files).
bool ReplacesASegment(Operation op) { return op == Operation::kInsert || op == Operation::kDelete; }

// Where a read-only open after the crash gets its snapshot.
enum class Source {
  // The rows (Compact: the parts); the old segment, if any, is of an older
  // generation and not adopted.
  kStore,
  // The new segment when the publish is the set's first (no CURRENT yet: a
  // read-only open falls back to the newest valid manifest, segment_set.h),
  // else as kStore: CURRENT still names the old manifest.
  kSegmentIfFirstPublish,
  // The new segment: CURRENT names its manifest.
  kSegment,
};

// One place to stop: a step of the hook, at its first, middle or last
// occurrence in the write (steps that repeat: a section, a file deleted).
struct Phase {
  const char* name;
  const char* step;
  enum Which { kFirst, kMiddle, kLast } which;
  Source source;
  // Reached only when a segment is replaced (garbage to collect).
  bool needs_garbage = false;
};

constexpr Phase kPhases[] = {
    {"FileCreated", "writer.file created", Phase::kFirst, Source::kStore},
    {"FirstSectionEnded", "writer.section ended", Phase::kFirst, Source::kStore},
    {"MiddleSectionEnded", "writer.section ended", Phase::kMiddle, Source::kStore},
    {"SectionsWritten", "writer.sections written", Phase::kFirst, Source::kStore},
    {"BeforeFsync", "writer.table written", Phase::kFirst, Source::kStore},
    {"AfterFsync", "writer.file synced", Phase::kFirst, Source::kStore},
    {"AfterRename", "writer.file renamed", Phase::kFirst, Source::kStore},
    {"DirectorySynced", "writer.directory synced", Phase::kFirst, Source::kStore},
    {"ManifestTmpWritten", "set.manifest tmp written", Phase::kFirst, Source::kStore},
    {"ManifestRenamed", "set.manifest renamed", Phase::kFirst, Source::kSegmentIfFirstPublish},
    {"CurrentTmpWritten", "set.CURRENT tmp written", Phase::kFirst, Source::kSegmentIfFirstPublish},
    {"CurrentRenamed", "set.CURRENT renamed", Phase::kFirst, Source::kSegment},
    // The publish's own collection deletes the old manifest; the one after
    // it (the old segment's lease let go) the old segment.
    {"FirstGarbageDeleted", "set.garbage file deleted", Phase::kFirst, Source::kSegment, true},
    {"LastGarbageDeleted", "set.garbage file deleted", Phase::kLast, Source::kSegment, true},
    {"Published", "snapshot.published", Phase::kFirst, Source::kSegment},
    {"Collected", "snapshot.collected", Phase::kFirst, Source::kSegment},
    {"PartsDropped", "snapshot.parts dropped", Phase::kFirst, Source::kSegment},
};

// Whether a read-only open after a crash at `phase` of `op` adopts the new
// segment.
bool FromNewSegment(Operation op, const Phase& phase) {
  return phase.source == Source::kSegment ||
         (phase.source == Source::kSegmentIfFirstPublish && !ReplacesASegment(op));
}

// Indexes `sources` into `db` (a new store); 0 on success.
int IndexInto(const std::string& db, const std::vector<std::string>& sources) {
  auto e = Engine::Open(db);
  if (!e.ok()) return 1;
  IndexOptions o;
  o.extractor = "heuristic";
  return (*e)->Index(sources, o).ok() ? 0 : 2;
}

// The operation on `db` (prepared by the suite), or its rerun after a
// crash: an index run and an insert again (finding their documents
// stored), a delete's store opened and read, Compact again. 0 on success.
int RunOperation(Operation op, const std::string& db, const std::string& note, bool rerun) {
  auto e = Engine::Open(db);
  if (!e.ok()) return 1;
  IndexOptions o;
  o.extractor = "heuristic";
  switch (op) {
    case Operation::kIndex:
      return (*e)->Index({kDemo}, o).ok() ? 0 : 2;
    case Operation::kInsert:
      // As a server would: the store read first (its segment adopted).
      if (!(*e)->Query(kQuestion).ok()) return 3;
      return (*e)->Index({note}, o).ok() ? 0 : 2;
    case Operation::kDelete:
      if (!(*e)->Query(kQuestion).ok()) return 3;
      if (rerun) return 0;  // the delete was committed before the crash
      // The segment is written when the engine closes (PartsPersister).
      return (*e)->DeleteDocument(kDeleted).ok() ? 0 : 2;
    case Operation::kCompact:
      return (*e)->Compact().ok() ? 0 : 2;
  }
  return 4;
}

// Every file below `dir` whose name starts with `prefix`, with a hash of
// its bytes. Left out: SQLite's -shm file (an index of the WAL that any
// reader may rebuild) and an empty -wal (a reader of a WAL database creates
// one when there is none); neither holds content.
std::map<std::string, uint64_t> Fingerprint(const std::string& dir, const std::string& prefix) {
  std::map<std::string, uint64_t> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string relative = fs::relative(entry.path(), dir).string();
    if (relative.rfind(prefix, 0) != 0 || !entry.is_regular_file()) continue;
    if (relative.ends_with("-shm")) continue;
    if (relative.ends_with("-wal") && entry.file_size() == 0) continue;
    out[relative] = Hash64(testing::ReadFile(entry.path().string()));
  }
  return out;
}

// The names in the segment directory `dir` that are not the current
// manifest's (CURRENT, LOCK, the manifest and the files it names), and
// the ones it names that are missing.
std::string Leftovers(const std::string& dir) {
  SegmentSetOptions o;
  o.writable = false;
  auto set = SegmentSet::Open(dir, o);
  if (!set.ok()) return set.status().ToString();
  const Manifest& m = (*set)->Current()->manifest();
  std::set<std::string> expected = {std::string(kCurrentFileName), std::string(kLockFileName),
                                    ManifestFileName(m.number)};
  for (const SegmentRecord& r : m.segments) expected.insert(r.file_name());
  std::string out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!expected.erase(name)) out += "extra " + name + "; ";
  }
  expected.erase(std::string(kLockFileName));  // only once a writer opened it
  for (const std::string& name : expected) out += "missing " + name + "; ";
  return out;
}

// A copy of the store at `from` ("": none) with its segments at `to`.
void CopyStore(const std::string& from, const std::string& to) {
  if (from.empty()) return;
  fs::copy_file(from, to);
  if (fs::exists(from + ".segments")) {
    fs::copy(from + ".segments", to + ".segments", fs::copy_options::recursive);
  }
}

// The file of the current snapshot segment in `dir` ("" when none).
std::string SegmentFileOf(const std::string& dir) {
  SegmentSetOptions o;
  o.writable = false;
  auto set = SegmentSet::Open(dir, o);
  if (!set.ok() || (*set)->Current()->segments().empty()) return "";
  return (*set)->Current()->segments()[0].reader->path();
}

// A store opened read-only as `flowrag query` opens it: its snapshot.
struct ReadOnlyEngine {
  std::unique_ptr<Engine> engine;
  std::shared_ptr<const Snapshot> snapshot;

  explicit ReadOnlyEngine(const std::string& db) {
    EngineOptions ro;
    ro.read_only = true;
    auto e = Engine::Open(db, ro);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    if (!e.ok()) return;
    engine = std::move(e).value();
    auto* impl = dynamic_cast<EngineImpl*>(engine.get());
    EXPECT_NE(impl, nullptr);
    if (impl != nullptr) snapshot = impl->snapshot();
    EXPECT_NE(snapshot, nullptr) << db;
  }
  PartState SegmentState() const {
    auto it = snapshot->build_stats().parts.find(kSnapshotSegmentKind);
    return it == snapshot->build_stats().parts.end() ? PartState::kMissing : it->second;
  }
};

struct CrashCase {
  Operation op;
  Phase phase;
};
std::vector<CrashCase> AllCases() {
  std::vector<CrashCase> out;
  for (Operation op :
       {Operation::kIndex, Operation::kInsert, Operation::kDelete, Operation::kCompact}) {
    for (const Phase& phase : kPhases) {
      if (phase.needs_garbage && !ReplacesASegment(op)) continue;
      out.push_back({op, phase});
    }
  }
  return out;
}

class SnapshotCrashTest : public ::testing::Test {
 protected:
  // Per operation: the store before it, the store after it (uncrashed),
  // the steps of its write, the store a rerun after a crash must equal and
  // a clean index of the same documents.
  struct Reference {
    std::string before;  // "" for a new store
    std::string after;
    std::vector<std::string> steps;
    std::string expected;
    std::string clean;
    std::unique_ptr<ReadOnlyEngine> after_open, expected_open;
    GraphDump expected_dump;
  };

  static void SetUpTestSuite() {
    unsetenv("FLOWRAG_SNAPSHOT_SEGMENTS");
    dir_ = new TempDir();
    note_ = new std::string(dir_->File(kNoteName));
    testing::WriteFile(*note_, kNoteText);
    const std::string demo_minus = dir_->File("demo_minus");
    fs::copy(kDemo, demo_minus, fs::copy_options::recursive);
    ASSERT_TRUE(fs::remove(demo_minus + "/" + kDeleted));

    // A store that kept snapshot parts, for Compact to migrate.
    ASSERT_EQ(InChild([] {
                setenv("FLOWRAG_SNAPSHOT_SEGMENTS", "off", 1);
                return IndexInto(dir_->File("parts.db"), {kDemo});
              }),
              0);
    refs_ = new std::map<Operation, Reference>();
    for (Operation op :
         {Operation::kIndex, Operation::kInsert, Operation::kDelete, Operation::kCompact}) {
      (*refs_)[op].after = dir_->File(std::string("op_") + OperationName(op) + ".db");
    }
    // The index run into a new store is a clean index of the demo; the
    // insert and the delete start from it.
    const std::string indexed = (*refs_)[Operation::kIndex].after;
    (*refs_)[Operation::kInsert].before = indexed;
    (*refs_)[Operation::kDelete].before = indexed;
    (*refs_)[Operation::kCompact].before = dir_->File("parts.db");
    // Each operation uncrashed, its steps traced (the index run first).
    for (auto& [op, ref] : *refs_) {
      CopyStore(ref.before, ref.after);
      const std::string trace = ref.after + ".trace";
      ASSERT_EQ(InChild([&, op = op] {
                  trace_fd = open(trace.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                  SetSnapshotWriteHookForTesting(&Hook);
                  return RunOperation(op, ref.after, *note_, /*rerun=*/false);
                }),
                0)
          << OperationName(op);
      std::string steps = testing::ReadFile(trace);
      for (size_t at = 0, end; (end = steps.find('\n', at)) != std::string::npos; at = end + 1) {
        ref.steps.push_back(steps.substr(at, end - at));
      }
    }
    // What a rerun must give: a clean index for the index run and Compact;
    // for the insert and the delete the operation uncrashed, which a clean
    // index of the same documents does not equal, crash or not (below).
    (*refs_)[Operation::kIndex].expected = (*refs_)[Operation::kIndex].clean = indexed;
    (*refs_)[Operation::kCompact].expected = (*refs_)[Operation::kCompact].clean = indexed;
    (*refs_)[Operation::kInsert].expected = (*refs_)[Operation::kInsert].after;
    (*refs_)[Operation::kDelete].expected = (*refs_)[Operation::kDelete].after;
    (*refs_)[Operation::kInsert].clean = dir_->File("clean_insert.db");
    ASSERT_EQ(InChild([] { return IndexInto(dir_->File("clean_insert.db"), {kDemo, *note_}); }), 0);
    (*refs_)[Operation::kDelete].clean = dir_->File("clean_delete.db");
    ASSERT_EQ(InChild([&] { return IndexInto(dir_->File("clean_delete.db"), {demo_minus}); }), 0);
    for (auto& [op, ref] : *refs_) {
      ref.after_open = std::make_unique<ReadOnlyEngine>(ref.after);
      ref.expected_open = std::make_unique<ReadOnlyEngine>(ref.expected);
      ASSERT_NE(ref.after_open->snapshot, nullptr);
      ASSERT_NE(ref.expected_open->snapshot, nullptr);
      ref.expected_dump = Dump(ref.expected);
    }
    ExpectTheMatrixCoversEveryStep();
    ExpectTheUncrashedOperationsToEqualTheirReferences();
  }
  static void TearDownTestSuite() {
    delete refs_;
    delete note_;
    delete dir_;
  }

  // The matrix stops at every step each operation's write takes, and each
  // write takes every step of kPhases (the garbage ones when it replaces a
  // segment), each once but for the sections and the files deleted.
  static void ExpectTheMatrixCoversEveryStep() {
    for (const auto& [op, ref] : *refs_) {
      std::map<std::string, int> seen;
      for (const std::string& s : ref.steps) ++seen[s];
      std::set<std::string> matrix;
      for (const CrashCase& c : AllCases()) {
        if (c.op == op) matrix.insert(c.phase.step);
      }
      for (const auto& [step, count] : seen) {
        EXPECT_TRUE(matrix.count(step))
            << OperationName(op) << ": " << step << " not in the matrix";
        if (step == "writer.section ended") {
          EXPECT_GT(count, 40) << OperationName(op);
        } else if (step == "set.garbage file deleted") {
          EXPECT_GE(count, 2) << OperationName(op) << ": the old manifest and segment";
        } else {
          EXPECT_EQ(count, 1) << OperationName(op) << ": " << step << " (one write)";
        }
      }
      for (const std::string& step : matrix) {
        EXPECT_TRUE(seen.count(step)) << OperationName(op) << ": " << step << " never reached";
      }
    }
  }

  // Uncrashed, Compact gives a clean index. An insert or a delete gives the
  // documents and passages of a clean index of the same documents, not its
  // vectors and graph: the built-in embedder keeps the IDF fitted on the
  // first corpus (models/embedder_setup.h: refits only past a growth), so
  // vectors and what derives from them (synonyms, abstractness) differ; a
  // delete does not extract the other passages again, so a name the
  // deleted document's title made an entity of is not a proper noun
  // entity of its own. Neither is about segments; the matrix compares a
  // rerun with the same operation uncrashed.
  static void ExpectTheUncrashedOperationsToEqualTheirReferences() {
    const Reference& compact = (*refs_)[Operation::kCompact];
    EXPECT_TRUE(Dump(compact.after) == compact.expected_dump);
    ExpectSameSnapshot(*compact.expected_open->snapshot, *compact.after_open->snapshot);
    for (Operation op : {Operation::kInsert, Operation::kDelete}) {
      const Reference& ref = (*refs_)[op];
      const GraphDump got = Dump(ref.after), clean = Dump(ref.clean);
      EXPECT_TRUE(got.documents == clean.documents) << OperationName(op);
      EXPECT_TRUE(got.passages == clean.passages) << OperationName(op);
      EXPECT_FALSE(got == clean) << OperationName(op)
                                 << " now equals a clean index: compare with it";
    }
  }

  // The occurrence of the phase's step to stop at in `op`'s write.
  static int OccurrenceOf(Operation op, const Phase& phase) {
    int count = 0;
    for (const std::string& s : (*refs_)[op].steps) count += s == phase.step;
    switch (phase.which) {
      case Phase::kFirst:
        return count > 0 ? 1 : 0;
      case Phase::kMiddle:
        return (count + 1) / 2;
      case Phase::kLast:
        return count;
    }
    return 0;
  }

  // One case of the matrix: `c.op` stopped at `c.phase`, then (a) and (b)
  // of the header.
  void StopReopenAndRerun(const CrashCase& c) {
    SCOPED_TRACE(std::string(OperationName(c.op)) + " stopped at " + c.phase.step);
    TempDir local;
    const Reference& ref = (*refs_)[c.op];
    const int occurrence = OccurrenceOf(c.op, c.phase);
    ASSERT_GT(occurrence, 0) << c.phase.step << " is not a step of " << OperationName(c.op);
    const std::string db = local.File("store.db");
    const std::string segments = db + ".segments";
    CopyStore(ref.before, db);

    // The operation, stopped at the step.
    ASSERT_EQ(InChild([&] {
                armed_step = c.phase.step;
                armed_occurrence = occurrence;
                SetSnapshotWriteHookForTesting(&Hook);
                return RunOperation(c.op, db, *note_, /*rerun=*/false);
              }),
              kStopped)
        << "the child did not stop at " << c.phase.step << " #" << occurrence;

    // (a) A read-only open answers as the operation left the store, from the
    // new segment once it is published, else from the rows (Compact: the
    // parts); it writes nothing.
    const auto files = Fingerprint(local.path(), "store.db");
    {
      ReadOnlyEngine reopened(db);
      ASSERT_NE(reopened.snapshot, nullptr);
      const SnapshotBuildStats& stats = reopened.snapshot->build_stats();
      if (FromNewSegment(c.op, c.phase)) {
        RecordProperty("read_only_open", "new segment");
        EXPECT_EQ(reopened.SegmentState(), PartState::kLoaded);
        EXPECT_NE(reopened.snapshot->segment(), nullptr);
      } else {
        RecordProperty("read_only_open", c.op == Operation::kCompact ? "parts" : "rows");
        EXPECT_EQ(reopened.SegmentState(), PartState::kMissing);
        EXPECT_EQ(reopened.snapshot->segment(), nullptr);
        if (ReplacesASegment(c.op)) {  // the old segment is there, of the old generation
          std::string errors;
          for (const std::string& e : stats.part_errors) errors += e + "; ";
          EXPECT_NE(errors.find("segment of generation"), std::string::npos) << errors;
        }
        if (c.op == Operation::kCompact) {
          auto bm25 = stats.parts.find(kBm25Part);
          ASSERT_NE(bm25, stats.parts.end());
          EXPECT_EQ(bm25->second, PartState::kLoaded);
        }
      }
      ExpectSameAnswers(*ref.after_open->snapshot, *reopened.snapshot);
    }
    EXPECT_EQ(Fingerprint(local.path(), "store.db"), files) << "the read-only open wrote";

    // (b) A writable open and the rerun complete, to the store of a clean
    // index (the insert, the delete: of the operation uncrashed) ...
    ASSERT_EQ(InChild([&] { return RunOperation(c.op, db, *note_, /*rerun=*/true); }), 0);
    const GraphDump dump = Dump(db);
    EXPECT_TRUE(dump == ref.expected_dump) << DumpDifference(dump, ref.expected_dump);
    {
      OpenStore s(db);
      EXPECT_FALSE(s.store->GetSnapshotPart(kBm25Part).value().has_value()) << "parts left";
    }
    // ... whose segment the next open adopts: the same snapshot and answers.
    ReadOnlyEngine next(db);
    ASSERT_NE(next.snapshot, nullptr);
    EXPECT_EQ(next.SegmentState(), PartState::kLoaded);
    ExpectSameSnapshot(*ref.expected_open->snapshot, *next.snapshot);
    ExpectSameAnswers(*ref.expected_open->snapshot, *next.snapshot);
    // Nothing left of the crash in the segment directory.
    EXPECT_EQ(Leftovers(segments), "");
  }

  // Under the sanitizers every third case (testing::RunsCrashPoint), shifted
  // by the operation so that the four tests stop at different phases.
  void RunEveryCase(Operation op) {
    std::vector<CrashCase> cases;
    for (const CrashCase& c : AllCases()) {
      if (c.op == op) cases.push_back(c);
    }
    for (size_t i = 0; i < cases.size(); ++i) {
      if (testing::RunsCrashPoint(i, cases.size(), static_cast<size_t>(op))) {
        StopReopenAndRerun(cases[i]);
      }
    }
    EXPECT_GE(cases.size(), 15u);
  }

  static TempDir* dir_;
  static std::string* note_;
  static std::map<Operation, Reference>* refs_;
};

TempDir* SnapshotCrashTest::dir_ = nullptr;
std::string* SnapshotCrashTest::note_ = nullptr;
std::map<Operation, SnapshotCrashTest::Reference>* SnapshotCrashTest::refs_ = nullptr;

// One test per operation, each stopping it at every step of its write in
// turn (a test per case would build the references again in each of 64
// processes under ctest).
TEST_F(SnapshotCrashTest, AnIndexRunStoppedAtEveryStep) { RunEveryCase(Operation::kIndex); }
TEST_F(SnapshotCrashTest, AnInsertStoppedAtEveryStep) { RunEveryCase(Operation::kInsert); }
TEST_F(SnapshotCrashTest, ADeleteStoppedAtEveryStep) { RunEveryCase(Operation::kDelete); }
TEST_F(SnapshotCrashTest, CompactsMigrationStoppedAtEveryStep) {
  RunEveryCase(Operation::kCompact);
}

// Torn, altered and foreign segment files, found by the set's checks (the
// manifest's length and header checksum, the section table's checksum)
// when the set opens, never read: the snapshot is built from the store
// and a writable open writes a new segment. (A byte flipped inside a
// section, found by its block checksum at adoption, and a stale segment:
// snapshot_segment_test.cc.)
class DamagedSegmentTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    unsetenv("FLOWRAG_SNAPSHOT_SEGMENTS");
    dir_ = new TempDir();
    const std::string note = dir_->File(kNoteName);
    testing::WriteFile(note, kNoteText);
    // The demo indexed, then a document inserted: a segment of each
    // generation.
    const std::string first = dir_->File("first.db");
    ASSERT_EQ(InChild([&] { return IndexInto(first, {kDemo}); }), 0);
    older_ = new std::string(dir_->File("older.seg"));
    fs::copy_file(SegmentFileOf(first + ".segments"), *older_);
    CopyStore(first, dir_->File("store.db"));
    ASSERT_EQ(InChild([&] {
                return RunOperation(Operation::kInsert, dir_->File("store.db"), note, false);
              }),
              0);
    reference_ = new ReadOnlyEngine(dir_->File("store.db"));
    ASSERT_NE(reference_->snapshot, nullptr);
    ASSERT_NE(reference_->snapshot->segment(), nullptr);
  }
  static void TearDownTestSuite() {
    delete reference_;
    delete older_;
    delete dir_;
  }

  // A copy of the store whose segment file `damage` alters: a read-only
  // open builds the snapshot from the store, equal to the segment's and
  // writing nothing; a writable open writes a new segment in its place,
  // which the next open adopts.
  void ExpectDetectedAndRebuilt(const std::function<void(const std::string& file)>& damage) {
    const std::string db = local_.File("store.db");
    CopyStore(dir_->File("store.db"), db);
    const std::string file = SegmentFileOf(db + ".segments");
    ASSERT_FALSE(file.empty());
    damage(file);
    const auto files = Fingerprint(local_.path(), "store.db");
    {
      ReadOnlyEngine reopened(db);
      ASSERT_NE(reopened.snapshot, nullptr);
      EXPECT_NE(reopened.SegmentState(), PartState::kLoaded);
      EXPECT_EQ(reopened.snapshot->segment(), nullptr);
      ExpectSameSnapshot(*reference_->snapshot, *reopened.snapshot);
      ExpectSameAnswers(*reference_->snapshot, *reopened.snapshot);
    }
    EXPECT_EQ(Fingerprint(local_.path(), "store.db"), files) << "the read-only open wrote";
    ASSERT_EQ(InChild([&] {
                auto e = Engine::Open(db);
                return e.ok() && (*e)->Query(kQuestion).ok() ? 0 : 1;
              }),
              0);
    ReadOnlyEngine next(db);
    ASSERT_NE(next.snapshot, nullptr);
    EXPECT_EQ(next.SegmentState(), PartState::kLoaded);
    ExpectSameSnapshot(*reference_->snapshot, *next.snapshot);
    EXPECT_FALSE(fs::exists(file)) << "the damaged file is still there";
    EXPECT_EQ(Leftovers(db + ".segments"), "");
  }

  static TempDir* dir_;
  static std::string* older_;  // a segment of the store's previous generation
  static ReadOnlyEngine* reference_;
  TempDir local_;
};

TempDir* DamagedSegmentTest::dir_ = nullptr;
std::string* DamagedSegmentTest::older_ = nullptr;
ReadOnlyEngine* DamagedSegmentTest::reference_ = nullptr;

// A torn write: the file cut short (its pages never reached the disk).
TEST_F(DamagedSegmentTest, ATruncatedSegmentIsNotReadAndIsRewritten) {
  ExpectDetectedAndRebuilt(
      [](const std::string& file) { fs::resize_file(file, fs::file_size(file) / 2); });
}

// A torn write that kept the length: the second half zeros (the section
// table with it).
TEST_F(DamagedSegmentTest, ASegmentWithAZeroedTailIsNotReadAndIsRewritten) {
  ExpectDetectedAndRebuilt([](const std::string& file) {
    const uintmax_t size = fs::file_size(file);
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    const std::string zeros(size - size / 2, '\0');
    f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  });
}

// Another generation's segment under the current one's name (a restored
// backup, a copy between stores): whole and valid, but not the file the
// manifest names.
TEST_F(DamagedSegmentTest, AnotherGenerationsSegmentInItsPlaceIsNotReadAndIsRewritten) {
  ExpectDetectedAndRebuilt([](const std::string& file) {
    fs::copy_file(*older_, file, fs::copy_options::overwrite_existing);
  });
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
