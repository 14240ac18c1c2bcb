// The snapshot segment: everything a snapshot derives from its store, in one
// immutable segment file (segment/) that a later open maps and uses in place
// instead of reading snapshot parts through the database and rebuilding the
// graph (issue 34, first step: one segment per store generation; inserts as
// small segments and deletes as tombstones come next).
//
// Where: the store's SegmentDirectory() ("<file>.segments" beside a SQLite
// file), a SegmentSet (segment/segment_set.h) whose current manifest names
// at most one segment of kind "snapshot". A store without a directory (a
// PostgreSQL workspace, for now) keeps its snapshot parts in the database
// (graph/graph_io.h).
//
// Sections (one per array; common/array_io.h):
//   snap.format, snap.gen, snap.passages   scalars (int64)
//   snap.k.bm25, snap.k.rows, snap.k.vec,  the keys of graph_io.h (bytes;
//   snap.k.dense                           snap.k.vec with the graph vectors'
//                                          kGraphVectorsArraysFormat): a
//                                          segment whose keys differ from
//                                          the running code's is not adopted
//   doc.*, psg.*    the documents and passages (snapshot_documents.h),
//                   borrowed by an open instead of read from the store
//   bm25.*          Bm25Index::ExportArrays
//   dense.*         the passage FlatIndex, or the HNSW graph's arrays
//                   (HnswIndex::ExportArrays: dense.h*), searched in place
//                   by an HnswArraysIndex (nothing copied at open)
//   gv.*            GraphVectors of a local embedder (graph_vectors.h)
//   kg.*, walk.*    KnowledgeGraph::ExportArrays: the built graph, so an
//                   open builds nothing (abstractness, CSR, walk weights)
//   rows            the graph rows (graph_io.h SerializeGraphRows), for
//                   snapshots that Append and Remove extend
//   <name>.format,  each PersistentDerived of SnapshotOptions::derived
//   <name>.*        (retrieval's LocalFacts "lf.*", FactBm25 "fb.*", the
//                   entity name matcher "nm.*")
//
// Validity: adopted only when snap.gen equals the store's generation, the
// format and every key equal the running code's, and every structure's
// AdoptArrays accepts its arrays (each checks offsets and indexes as a
// parser does). Otherwise Snapshot::Build falls back to the parts and rows
// (SnapshotBuildStats::parts["segment"] says why) and the persister writes
// a new segment. Checksums: a section is verified whole on its adoption
// (SegmentReader::SectionBytes), but for the largest arrays (the int8
// passage index's rows and codes, the graph texts' sparse lists, LocalFacts'
// rows), which their structures borrow lazily and verify by the blocks a
// query reads (ArraySource::GetLazy); a damaged block is never read: it is
// left out, recorded, and the engine builds the snapshot again from the
// store without the file (engine/engine_impl.h "Damaged segments").
//
// Writing: WriteSnapshotSegment, off the write path (engine/parts_persister.h),
// by whichever process built the snapshot and gets the set's lock; the
// publish replaces the previous snapshot segment, which the set deletes
// once no process maps it (leases).
//
// Thread-safety: the functions share no state; a SegmentSet's lock
// serialises writers across processes.
#ifndef FLOWRAG_GRAPH_SNAPSHOT_SEGMENT_H_
#define FLOWRAG_GRAPH_SNAPSHOT_SEGMENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/array_io.h"
#include "flowrag/status.h"
#include "graph/snapshot.h"
#include "storage/store.h"

namespace flowrag {

// Bump when the set of sections or their meaning changes. 2: HNSW arrays;
// 3: passage vectors built from float16 stored vectors (storage/
// vector_blob.h), so a segment of the floats before is built again; 4: an
// int8 passage index's rows packed (vector/packed_rows.h), not floats.
inline constexpr int64_t kSnapshotSegmentFormat = 4;
inline constexpr char kSnapshotSegmentKind[] = "snapshot";

// The current snapshot segment in `dir` for store generation `generation`,
// or null with *why saying what is missing (no directory, no segment,
// another generation, a file that fails its checks).
std::shared_ptr<const ArraySource> FindSnapshotSegment(const std::string& dir, int64_t generation,
                                                       std::string* why);

// Writes `snapshot`'s segment into `dir` and publishes it, replacing the
// previous one, if the store is still at the snapshot's generation and no
// other process holds the directory's lock; then drops the store's snapshot
// parts (the segment replaces them). Returns whether it was published.
// O(bytes of the snapshot's arrays).
Result<bool> WriteSnapshotSegment(const Snapshot& snapshot, SnapshotSource& store,
                                  const std::string& dir);

// Completes what a WriteSnapshotSegment stopped by a crash after its
// publish left undone, for a writable engine whose snapshot was adopted from
// the current segment of store generation `generation` (Snapshot::
// PersistParts calls it once per such snapshot): opens `dir`'s set writable,
// which publishes again a state it fell back to (a crash before the first
// CURRENT was written) and deletes garbage (the replaced segment and
// manifest, *.tmp files); then drops the store's snapshot parts if any are
// left and the store is still at `generation`. Returns false, doing
// nothing, when another process holds the set's lock. O(files in `dir`);
// writes nothing when nothing was left.
Result<bool> CompleteSnapshotSegment(SnapshotSource& store, const std::string& dir,
                                     int64_t generation);

// Deletes the segments and manifests of `dir` that nothing maps any more
// (the set's garbage collection, by a writable open): a snapshot extended
// by an insert shares the arrays of the segment it was opened from, so the
// write that replaced that segment could not delete it; its holder calls
// this once it lets go (engine/published_segment.cc, the engine's close).
// Returns false, doing nothing, when `dir` is not a directory or another
// process holds the set's lock. O(files in `dir`).
Result<bool> CollectSnapshotSegments(const std::string& dir);

// Tests only (tests/snapshot_crash_test.cc): `hook` is called at every step
// of every WriteSnapshotSegment in this process, so that a test can stop
// the process there (_exit) and check what a reopen finds. The steps, in
// order, named by the text passed:
//   "writer.<SegmentWriteStepName>"   the segment file (segment_writer.h;
//                                     "writer.section ended" once a section)
//   "set.<PublishStepName>"           the set's publish and its garbage
//                                     collections (segment_set.h; "set.CURRENT
//                                     renamed" is the commit point)
//   "snapshot.published"              Publish returned, the old segment kept
//   "snapshot.collected"              collected again, the parts not dropped
//   "snapshot.parts dropped"          the store's snapshot parts dropped
// Null (the default) turns it off; production never sets it, so a write
// costs one atomic load. Set it while no write runs.
using SnapshotWriteHook = void (*)(std::string_view step);
void SetSnapshotWriteHookForTesting(SnapshotWriteHook hook);

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_SNAPSHOT_SEGMENT_H_
