// PartsPersister: writes what a new snapshot had to rebuild off the write
// path (Snapshot::PersistParts): a SQLite store's snapshot segment
// (graph/snapshot_segment.h), a PostgreSQL workspace's snapshot parts.
//
// Rewriting the parts costs a fraction of a second (2wiki: ~190 MB), so
// inserts and deletes served over HTTP must not wait for it, nor write them
// after every one of a burst. Schedule() remembers the latest snapshot; a
// background thread writes its parts once `delay` has passed without a newer
// one, or `max_wait` after the first snapshot of the burst was scheduled,
// whichever comes first: a burst of writes with short pauses would
// otherwise postpone it for as long as it lasts, and a crash then would
// leave the next open to rebuild the whole snapshot from the rows. (Under
// writes strictly back to back the store has usually moved on by the time
// the write comes due, and a snapshot's segment is written only for its
// own generation: at 10^6 passages the segment was written at the end.)
// Only the latest matters: an older
// snapshot's parts describe a generation the store has left, and
// SnapshotSource::PutSnapshotPart would refuse them anyway. A process that
// stops before the delay loses nothing but speed: the next open derives
// what is missing from the rows.
//
// After the background thread published a snapshot's segment, it hands the
// snapshot to `on_published` (the engine then maps the segment in place of
// the snapshot's private arrays: EngineImpl::MapPublishedSegment). Flush()
// and the destructor's last write do not: a process that writes and exits
// has no use for it.
//
// Thread-safety: all methods may be called from any thread. The destructor
// writes what is pending, then joins the thread.
#ifndef FLOWRAG_ENGINE_PARTS_PERSISTER_H_
#define FLOWRAG_ENGINE_PARTS_PERSISTER_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "graph/snapshot.h"
#include "storage/store.h"

namespace flowrag {

class PartsPersister {
 public:
  using Published = std::function<void(std::shared_ptr<const Snapshot>)>;
  // `store` is not owned and must outlive the persister; `on_published` may
  // be null.
  PartsPersister(SnapshotSource* store, std::chrono::milliseconds delay,
                 Published on_published = nullptr,
                 std::chrono::milliseconds max_wait = std::chrono::seconds(10))
      : store_(store),
        delay_(delay),
        max_wait_(std::max(delay, max_wait)),
        on_published_(std::move(on_published)) {}
  ~PartsPersister();
  PartsPersister(const PartsPersister&) = delete;
  PartsPersister& operator=(const PartsPersister&) = delete;

  // Writes `snapshot`'s parts after the delay, unless a newer one comes
  // (but at most max_wait after the oldest pending schedule).
  void Schedule(std::shared_ptr<const Snapshot> snapshot);
  // Writes the pending snapshot's parts now, on the calling thread.
  void Flush();
  // The last write's failure ("" after a success or before any write).
  std::string LastError() const;

 private:
  void Run();
  void Write(const Snapshot& snapshot);

  SnapshotSource* store_;
  const std::chrono::milliseconds delay_, max_wait_;
  const Published on_published_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string last_error_;  // guarded by mu_
  std::shared_ptr<const Snapshot> pending_;
  std::chrono::steady_clock::time_point due_;
  std::chrono::steady_clock::time_point latest_due_;  // max_wait after the burst's first
  bool stop_ = false;
  std::thread thread_;  // started by the first Schedule()
};

}  // namespace flowrag

#endif  // FLOWRAG_ENGINE_PARTS_PERSISTER_H_
