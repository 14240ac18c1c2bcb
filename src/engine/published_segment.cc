// EngineImpl::MapPublishedSegment: the memory of a served store stays that
// of one mapped snapshot, however many writes it serves (issue 34).
//
// A write publishes a snapshot built in private memory (Snapshot::Append,
// Remove or Build: BM25, vectors and graph as owned arrays, about 1.3× the
// segment's size on 2wiki). Once the persister has published that
// snapshot's segment, a snapshot opened from the segment answers exactly
// the same (tests/snapshot_segment_test.cc) from mapped file pages, which
// other processes share and the kernel may evict. So the persister's thread
// opens it and, if nothing newer was published meanwhile, swaps it in; the
// private snapshot goes when its last query ends, and its pages are handed
// back to the system (malloc_trim) instead of staying in the allocator,
// with the writer connection's SQLite page cache (Store::ReleaseMemory).
// Then the segment the private snapshot still mapped is deleted, as it is
// when the engine closes (~EngineImpl).
//
// Measured on the 2wiki store (bench/server_writes_rss.py, 20 inserts and
// deletes under `flowrag serve`): see doc/scale.md.
#include <malloc.h>

#include <optional>

#include "engine/engine_impl.h"
#include "graph/snapshot_segment.h"

namespace flowrag {

void EngineImpl::MapPublishedSegment(std::shared_ptr<const Snapshot> written) {
  std::optional<SnapshotOptions> options;
  std::shared_ptr<Embedder> embedder;
  {
    // A write in progress publishes a newer snapshot (and later its
    // segment): never wait for it on the persister's thread.
    std::unique_lock<std::mutex> lock(write_mu_, std::try_to_lock);
    if (!lock.owns_lock() || published_snapshot() != written) return;
    Result<SnapshotOptions> so = SnapshotBuildOptions();
    if (!so.ok()) return;
    options = std::move(so).value();
    embedder = embedder_;
  }
  // Opened, and given the derived values queries used, holding neither the
  // write lock nor the engine's reader (a reader of its own): an insert
  // meanwhile does not wait for it (hundreds of ms at 10^5 passages: the
  // documents' rows, the sections' checksums, the adopted indexes).
  Result<std::unique_ptr<Store>> reader = store_->OpenReader();
  if (!reader.ok() || *reader == nullptr) return;
  std::shared_ptr<const Snapshot> mapped;
  Status built = (*reader)->ReadConsistently([&]() -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(mapped, Snapshot::Build(**reader, embedder, *options));
    return Status::Ok();
  });
  // Only a snapshot of the same generation mapped from the segment is worth
  // the swap (one rebuilt from rows would cost what it is meant to save).
  if (!built.ok() || mapped->segment() == nullptr ||
      mapped->generation() != written->generation()) {
    return;
  }
  mapped->MakePersistentDerivedLike(*written);
  {
    std::unique_lock<std::mutex> lock(write_mu_, std::try_to_lock);
    if (!lock.owns_lock() || published_snapshot() != written) return;
    SwapSnapshot(std::move(mapped));
    (void)store_->ReleaseMemory();  // no write holds its pages now
  }
  written.reset();
#ifdef __GLIBC__
  ::malloc_trim(0);
#endif
  // The private snapshot may have shared arrays of the segment its
  // predecessor was opened from (Snapshot::Append), which the write's
  // collection therefore kept: delete it now unless a query still maps it
  // (then the next write's collection does).
  (void)CollectSnapshotSegments(store_->SegmentDirectory());
}

EngineImpl::~EngineImpl() {
  follower_.reset();
  persister_.reset();  // writes the pending segment
  {
    std::lock_guard<std::mutex> lock(session_mu_);
    session_.reset();
  }
  if (!options_.read_only && store_ != nullptr) {
    (void)CollectSnapshotSegments(store_->SegmentDirectory());
  }
}

}  // namespace flowrag
