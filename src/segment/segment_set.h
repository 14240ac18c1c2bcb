// SegmentSet: the live segments of one store and their tombstones, published
// atomically (issue 34). It is the bookkeeping below the content: it knows
// segment files (segment_reader.h), row ordinals and byte sizes, never
// passages or graphs. The store (SQLite or PostgreSQL) stays the truth;
// everything here is derived and can be rebuilt from it.
//
//   FLOWRAG_ASSIGN_OR_RETURN(auto set, SegmentSet::Open(SegmentDirectoryFor(db)));
//   FLOWRAG_ASSIGN_OR_RETURN(NewSegmentFile f, set->NewSegmentPath("passages"));
//   ... SegmentWriter::Create(f.path, "passages", generation, f.id) ... Finish();
//   SegmentEdit edit;
//   edit.generation = generation;
//   edit.add.push_back({.file = f.file, .rows = rows});
//   FLOWRAG_ASSIGN_OR_RETURN(auto view, set->Publish(edit));
//   // readers: auto view = set->Current(); for (const LiveSegment& s : view->segments()) ...
//
// ## On disk
//
// One directory per store: `<store>.segments/` beside a SQLite file
// (SegmentDirectoryFor), or a local cache directory the caller names for a
// PostgreSQL store. It holds (names and byte layouts in manifest.h):
//
//   <n>.<kind>.seg          a segment (segment_format.h); n is its id
//   <n>.tombstones.seg      a tombstone set: a segment of kind "tombstones"
//                           whose header's segment_id is the segment it
//                           deletes from, with one section "rows": its
//                           deleted row ordinals, u64, strictly ascending
//   MANIFEST-<n>            manifest n: the live segments and tombstones
//   CURRENT                 "MANIFEST-<n>\n": the newest manifest
//   LOCK                    flock'd by the one writable set (below)
//   *.tmp                   a write in progress, or a crash's leftover
//
// Every file is immutable once renamed into place; file numbers (segment
// ids, tombstone files) come from one counter and are never reused for a
// published file.
//
// ## Publishing, and why a crash leaves the old or the new state
//
// Publish(edit) writes the new manifest as MANIFEST-<n>.tmp, fsyncs it,
// renames it to MANIFEST-<n> and fsyncs the directory; then writes
// CURRENT.tmp, fsyncs it, renames it over CURRENT and fsyncs the directory
// (LevelDB's SetCurrentFile). The rename of CURRENT is the commit point:
//   - before it, CURRENT names the old manifest, whose files are all still
//     there (garbage collection only ever deletes files the newest manifest
//     does not name, and runs after the commit): startup reads the old state;
//     the new manifest and the files only it names are garbage, deleted by
//     the next writable Open;
//   - after it, CURRENT names the new manifest, written and fsynced before:
//     startup reads the new state; a crash during the garbage collection
//     that follows leaves files no manifest names, deleted at the next Open.
// rename(2) replaces CURRENT atomically, so it is never absent or half
// written once it exists. Segment and tombstone files are written (tmp,
// fsync, rename, directory fsync) before the manifest that names them.
//
// ## Startup, and what is never read unverified
//
// Open reads CURRENT and loads the manifest it names: the manifest's
// checksum and fields (manifest.h), then every file it names: each segment's
// header and section table (SegmentReader::Open), its length and header
// checksum against the manifest's, and each tombstone file whole (kind, the
// segment it belongs to, its rows checksummed, ascending, below the
// segment's row count, as many as the manifest says). If CURRENT is missing
// or damaged, or its manifest or a file it names fails a check, Open falls
// back to the highest-numbered MANIFEST-* that passes them all, and if none
// does, to no segments (the caller rebuilds from the store and compares
// manifest().generation with the store's). Each rejected candidate is in
// open_notes(), a Status naming the file and what was wrong. An error of the
// OS other than a missing file (EIO, EMFILE, EACCES) fails Open instead: a
// passing failure must not make the set fall back and delete files. A
// writable Open that fell back publishes the state it chose as a new
// manifest (CURRENT is valid again), then deletes *.tmp files and garbage.
//
// ## One writer, many readers; garbage collection
//
// Writable: one process at a time per directory, by flock(2) on LOCK, held
// from Open to destruction (FailedPrecondition when another process holds
// it, or wait with `wait_for_lock`). Only a writable set publishes, hands out
// file names and deletes files; within it, Publish calls are serialised.
// Read-only sets (other processes: a `flowrag query`, a replica) read CURRENT
// at Open and at Refresh, and never change the directory.
//
// A view is pinned: it holds an open SegmentReader (a mapping) of each
// segment and tombstone file it names, and a shared flock(2) "lease" on each
// of those files. Garbage collection, after each Publish and at a writable
// Open, deletes a file only when all of these hold:
//   - it is a MANIFEST-* or <n>.<kind>.seg file (any other name is left
//     alone) not named by the newest `keep_manifests` manifests;
//   - it is no file name handed out by this set and not yet published
//     (NewSegmentPath, WriteTombstones; AbandonFile releases one);
//   - no view of this process holds it;
//   - an exclusive, non-blocking flock on it succeeds: no view of any
//     process holds a lease on it (a reader that leased the file before the
//     unlink keeps reading it: a mapping outlives the name).
// A reader of another process that read a manifest and finds one of its
// files already deleted (it loses the race between reading the manifest and
// leasing the file) reads CURRENT again and retries (`open_retries`).
// Manifests are deleted before the files they name, so no manifest on disk
// ever names a deleted file that is not garbage itself. *.tmp files are
// deleted only at a writable Open (a writer's own .tmp may be in progress).
//
// ## Merges and tombstones
//
// PlanMerges (merge_policy.h) says which segments to fold together. The
// consumer reads the plan's segments from a view `base`, writes one segment
// holding the rows of the merged segments in the order the plan lists them,
// each segment's rows in order, leaving out the rows deleted in `base`, and
// publishes an edit with `base` and one AddedSegment whose `merged_from`
// lists them. Deletes published after `base` are re-applied by Publish
// itself, atomically with the swap: the rows deleted since `base`
// (TombstonesSince) are mapped to the merged segment's ordinals
// (MergeRowMap) and become its tombstones, so a delete is never lost to a
// merge. A merge that lays rows out otherwise cannot use `merged_from`: it
// must remove the segments in an edit with `base`, whose Publish refuses
// with FailedPrecondition if their tombstones changed since `base`; it then
// re-applies TombstonesSince itself and publishes again with a newer base.
//
// ## Thread-safety
//
// Every method may be called from any thread. Current() copies a shared_ptr
// under a mutex; Publish calls are serialised among themselves and never wait
// for readers, whose views stay valid and unchanged for as long as they hold
// them. A SegmentView is immutable.
#ifndef FLOWRAG_SEGMENT_SEGMENT_SET_H_
#define FLOWRAG_SEGMENT_SEGMENT_SET_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"
#include "segment/manifest.h"
#include "segment/merge_policy.h"
#include "segment/segment_reader.h"

namespace flowrag {

// The segment directory of the SQLite store at `store_path`:
// "<store_path>.segments". InvalidArgument for a URL (a PostgreSQL store's
// cache directory is the caller's to name) or an empty path.
Result<std::string> SegmentDirectoryFor(const std::string& store_path);

// One live segment of a view.
struct LiveSegment {
  SegmentRecord record;
  // The segment, mapped. Holding this pointer holds the file's lease too.
  std::shared_ptr<const SegmentReader> reader;
  // The tombstone file, or null when no row is deleted.
  std::shared_ptr<const SegmentReader> tombstones;
  // Deleted row ordinals, strictly ascending and below record.rows,
  // verified; borrowed from `tombstones`.
  std::span<const uint64_t> deleted;

  // O(log deleted).
  bool IsDeleted(uint64_t row) const;
  uint64_t live_rows() const { return record.rows - deleted.size(); }
};

// An immutable, pinned state of the set: one manifest and its files, open.
class SegmentView {
 public:
  const Manifest& manifest() const { return manifest_; }
  uint64_t number() const { return manifest_.number; }
  int64_t generation() const { return manifest_.generation; }
  // Ascending id (the manifest's order).
  const std::vector<LiveSegment>& segments() const { return segments_; }
  // The live segment `id`, or null. O(log segments).
  const LiveSegment* Find(uint64_t id) const;

 private:
  friend class SegmentSet;
  SegmentView(Manifest manifest, std::vector<LiveSegment> segments)
      : manifest_(std::move(manifest)), segments_(std::move(segments)) {}
  Manifest manifest_;
  std::vector<LiveSegment> segments_;
};

// A file name handed out by NewSegmentPath.
struct NewSegmentFile {
  uint64_t id = 0;   // the segment id to write into its header
  std::string file;  // "<id>.<kind>.seg", the name an edit adds
  std::string path;  // directory + "/" + file: where SegmentWriter writes
};

// A tombstone file written by WriteTombstones, for SegmentEdit::tombstones.
struct TombstoneFile {
  uint64_t segment_id = 0;
  uint64_t number = 0;
  std::string file;  // "<number>.tombstones.seg"
  uint64_t deleted = 0;
};

// One publish: what changes from the newest manifest to the next.
struct SegmentEdit {
  // The view the edit was computed from. Required for `merged_from` and for
  // `tombstones`; Publish compares it with the newest manifest (above).
  std::shared_ptr<const SegmentView> base;
  // The store generation the new manifest describes; unset: unchanged.
  std::optional<int64_t> generation;

  struct AddedSegment {
    std::string file;  // a NewSegmentPath name, written and renamed into place
    // Rows it holds: the set knows no content, so it takes this on trust
    // (but for a merge, checked against its segments), and tombstones and
    // the merge policy's live bytes are measured against it.
    uint64_t rows = 0;
    // When the segment is a merge: the segments it folds, in the order their
    // rows are in it (each leaving out its rows deleted in `base`). They are
    // removed by this edit, and deletes published after `base` are carried
    // over to this segment.
    std::vector<uint64_t> merged_from;
  };
  std::vector<AddedSegment> add;
  // Segments dropped without a merge (every row deleted, or rebuilt).
  std::vector<uint64_t> remove;

  // Rows to delete: Publish unions them with the segment's tombstones in
  // the newest manifest and writes the tombstone file (under its lock, so
  // concurrent deletes never lose one another). Rows strictly ascending.
  struct RowDeletes {
    uint64_t segment_id = 0;
    std::vector<uint64_t> rows;
  };
  std::vector<RowDeletes> deletes;
  // Tombstone sets replaced whole (WriteTombstones); refused with
  // FailedPrecondition when the segment's tombstones changed since `base`.
  std::vector<TombstoneFile> tombstones;
};

// Named steps of Publish and of garbage collection, for tests that stop the
// process there (SegmentSetOptions::crash_hook).
enum class PublishStep {
  kManifestTmpWritten,  // MANIFEST-<n>.tmp written and fsynced
  kManifestRenamed,     // renamed to MANIFEST-<n>
  kCurrentTmpWritten,   // CURRENT.tmp written and fsynced
  kCurrentRenamed,      // renamed over CURRENT: the commit point
  kGcFileDeleted,       // garbage collection deleted one file
};
const char* PublishStepName(PublishStep step);

struct SegmentSetOptions {
  // Read-only: never writes, locks or deletes; Publish and the file name
  // calls fail with FailedPrecondition.
  bool writable = true;
  // Writable: block until LOCK is free instead of failing at once.
  bool wait_for_lock = false;
  // Writable: the newest manifests kept, with every file they name, for a
  // fallback when the newest is damaged (>= 1). 1 keeps only the newest:
  // after a merge the merged segments go at once.
  size_t keep_manifests = 1;
  // How often Open and Refresh read CURRENT again when a file the manifest
  // names was deleted meanwhile by another process's publish.
  int open_retries = 8;
  // Levels of added segments (SizeTier of their file's length).
  MergePolicyOptions merge;
  // Tests only: called at each step; a test's hook _exit()s there.
  std::function<void(PublishStep)> crash_hook;
};

// What one garbage collection did.
struct GcStats {
  size_t files_deleted = 0;
  uint64_t bytes_deleted = 0;
  size_t files_leased = 0;  // garbage kept: a view (of any process) holds it
  Status status;            // the first failure to delete, if any
};

class SegmentSet {
 public:
  // Opens (and when writable creates) the set in `dir` and loads its newest
  // valid state (above). Errors name the file: FailedPrecondition when
  // another process holds LOCK, IoError / NotFound from the OS (a read-only
  // Open of a missing directory is an empty set, not an error).
  static Result<std::unique_ptr<SegmentSet>> Open(const std::string& dir,
                                                  SegmentSetOptions options = {});
  ~SegmentSet();
  SegmentSet(const SegmentSet&) = delete;
  SegmentSet& operator=(const SegmentSet&) = delete;

  const std::string& dir() const { return dir_; }
  bool writable() const { return options_.writable; }
  // The newest published state; never null (number 0: none yet).
  std::shared_ptr<const SegmentView> Current() const;
  // What Open rejected before the state it loaded (each names its file).
  const std::vector<Status>& open_notes() const { return open_notes_; }

  // Read-only sets: loads the newest manifest if CURRENT names a newer one
  // than Current() (files of unchanged segments are not opened again), and
  // returns Current(). An error (CURRENT damaged, a file failing its
  // checks: no fallback here) leaves Current() as it was. A writable set
  // returns Current().
  Result<std::shared_ptr<const SegmentView>> Refresh();

  // A new, unique segment file name of `kind` (not "tombstones"), pending
  // until published or abandoned. O(1).
  Result<NewSegmentFile> NewSegmentPath(std::string_view kind);
  // Writes a tombstone file for segment `segment_id` holding exactly `rows`
  // (strictly ascending, non-empty; each below the segment's row count in
  // the newest manifest), fsynced, pending until published. O(rows).
  Result<TombstoneFile> WriteTombstones(uint64_t segment_id, std::span<const uint64_t> rows);
  // Releases a pending name whose file will not be published; the next
  // garbage collection deletes the file.
  void AbandonFile(const std::string& file);

  // Applies `edit` atomically and returns the new view (above). Checks
  // before anything is written: InvalidArgument for an edit that cannot
  // apply (an unknown or twice-named segment, a file not handed out by this
  // set or whose header disagrees with its name, rows out of range, a merge
  // whose rows do not add up), FailedPrecondition when the set changed
  // since `base` in a way the edit cannot carry over (a merged segment gone,
  // tombstones replaced meanwhile); Corruption / IoError naming the file for
  // a file that fails its checks. Errors after the commit point: the edit
  // is published (Current() shows it) and the error says so.
  // Cost: O(segments) plus opening the new files and writing the tombstone
  // files (O(deleted rows of the segments whose deletes change)), two file
  // fsyncs and two directory fsyncs, then a garbage collection.
  Result<std::shared_ptr<const SegmentView>> Publish(const SegmentEdit& edit);

  // Deletes garbage now (above); Publish runs it after each commit.
  Result<GcStats> CollectGarbage();
  // The last garbage collection's statistics.
  GcStats last_gc() const;

 private:
  struct Lease;
  class EditBuilder;

  SegmentSet(std::string dir, SegmentSetOptions options);

  Status TakeLock();
  Status CheckWritable(std::string_view what) const;
  Result<uint64_t> ReadCurrentFile() const;
  // Loads the newest valid state into current_ (Open's algorithm, above);
  // `fell_back` when it is not what CURRENT names. REQUIRES: publish_mu_.
  Status LoadNewest(bool* fell_back);
  Result<std::shared_ptr<const SegmentView>> LoadManifest(
      uint64_t number, const std::shared_ptr<const SegmentView>& reuse);
  Result<std::shared_ptr<const SegmentView>> BuildView(
      Manifest manifest, const std::shared_ptr<const SegmentView>& reuse);
  // The live segment of `record`, reusing what `reusable` has open of it.
  Result<LiveSegment> OpenLive(const SegmentRecord& record, const LiveSegment* reusable);
  Result<std::shared_ptr<const Lease>> OpenLease(const std::string& file);
  // A new file number, its file of `kind` pending.
  uint64_t AllocateNumber(std::string_view kind);
  Result<TombstoneFile> WriteTombstoneFor(uint64_t segment_id, int64_t generation,
                                          std::span<const uint64_t> rows);
  // The publish sequence (above); `committed` once CURRENT names `manifest`.
  Status WriteManifestAndCurrent(const Manifest& manifest, bool* committed);
  // REQUIRES: publish_mu_.
  Result<GcStats> CollectGarbageLocked(bool remove_tmp);
  void Hook(PublishStep step) const;
  // Forgets the leases no view holds any more. REQUIRES: files_mu_.
  void PruneLeasesLocked();
  std::string PathOf(const std::string& file) const { return dir_ + "/" + file; }

  const std::string dir_;
  const SegmentSetOptions options_;
  int lock_fd_ = -1;
  std::vector<Status> open_notes_;

  std::mutex publish_mu_;              // serialises Publish, garbage collection, Refresh
  uint64_t next_manifest_number_ = 1;  // guarded by publish_mu_
  std::vector<std::shared_ptr<const Manifest>> kept_;  // newest last; publish_mu_

  mutable std::mutex view_mu_;
  std::shared_ptr<const SegmentView> current_;  // guarded by view_mu_

  mutable std::mutex files_mu_;
  uint64_t next_file_number_ = 1;                             // guarded by files_mu_
  std::set<std::string> pending_;                             // guarded by files_mu_
  std::map<std::string, std::weak_ptr<const Lease>> leased_;  // guarded by files_mu_
  GcStats last_gc_;                                           // guarded by files_mu_
};

}  // namespace flowrag

#endif  // FLOWRAG_SEGMENT_SEGMENT_SET_H_
