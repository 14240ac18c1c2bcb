// Snapshot parts: what a snapshot derives from the store, persisted in the
// store (table snapshot_parts, format 6; doc/storage.md "Snapshot parts") so
// that opening a store reads arrays instead of recomputing them.
// A SQLite store keeps a snapshot segment instead (graph/snapshot_segment.h),
// which holds the HNSW part's bytes as they are framed here; a PostgreSQL
// workspace (and FLOWRAG_SNAPSHOT_SEGMENTS=off) keeps these parts.
//
//   part      holds                                           key
//   "bm25"    the BM25 postings (text/bm25_index.h arrays)     tokenizer probe
//   "graph"   the graph rows as KnowledgeGraph::Build input    graph text probe
//             (entities, mentions, descriptions, facts with
//             their texts and sources, synonyms; no vectors)
//   "vectors" GraphVectors of a local embedder (sparse rows   model id + embedder
//             for entities and relations, SparseIndex          probe
//             postings for the searched kinds)
//   "passage_vectors"  the dense passage vectors in snapshot  dense model id
//             order (the embeddings table keeps them per text
//             hash: 6,119 index lookups on 2wiki); only while
//             the dense index is flat
//   "passage_hnsw"  the dense passage index when it is HNSW   dense model id +
//             (VectorIndexOptions::hnsw_threshold passages or  M, efConstruction,
//             more): HnswIndex::Save bytes (vectors, levels,   seed
//             links, level generator), which hold the vectors
//             too, so such a store has no "passage_vectors"
//
// What is persisted is what costs time to derive from rows (SQLite row
// scans, id maps, fact texts, tokenising, hashing ~282k graph texts on
// 2wiki), never what the graph's code decides: KnowledgeGraph::Build (CSR
// adjacency, walk weights, abstractness) runs on every open, from the
// persisted rows exactly as from the tables, so a change of graph semantics
// needs no format change and a loaded snapshot answers bit-identically to a
// rebuilt one (snapshot_persist_test). The exception is "passage_hnsw": its
// links are what hnswlib's insertion decides (deterministic for a seed and a
// SIMD level; HnswIndex), so a change of how the index is built needs a bump
// of kPassageHnswFormat.
//
// Validity: a part is used only when its generation equals the store's
// (meta.generation, bumped by every write that changes what a snapshot
// reads), its format equals the one below and its key equals the current
// one. The keys fingerprint the code the part depends on (the tokenizer, the
// embedder, FactText) by running it on fixed probe texts, so a change there
// invalidates old parts without a format bump. Bytes: little-endian, in
// chunks of 4 MiB; the checksum is one StreamChecksum (common/checksum.h) over
// the whole part, whatever its chunking. Reading
// checks every count against the bytes left before allocating and every
// index against its range, and verifies the checksum at the end: a damaged
// part gives Corruption (the snapshot then rebuilds from rows), never a crash
// or a wrong answer.
//
// Cost (2wiki, 6,119 passages, 45k entities, 204k facts): the parts hold
// ~30 MB of rows and ~170 MB of vectors; reading them is a few memcpys per
// array. The HNSW part is 4·n·d bytes of vectors plus ~4·(2M + 1) bytes of
// links per passage (30,000 passages of 1,024 dimensions: ~127 MB); loading
// it copies the bytes once more into hnswlib's arrays instead of inserting
// every vector again (doc/scale.md).
//
// Thread-safety: the functions share no state; the store serialises access.
#ifndef FLOWRAG_GRAPH_GRAPH_IO_H_
#define FLOWRAG_GRAPH_GRAPH_IO_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "embed/embedder.h"
#include "flowrag/status.h"
#include "graph/knowledge_graph.h"
#include "storage/store.h"
#include "text/bm25_index.h"
#include "vector/vector_index.h"

namespace flowrag {

class HnswIndex;

inline constexpr char kBm25Part[] = "bm25";
inline constexpr char kGraphRowsPart[] = "graph";
inline constexpr char kGraphVectorsPart[] = "vectors";
inline constexpr char kPassageVectorsPart[] = "passage_vectors";
inline constexpr char kPassageHnswPart[] = "passage_hnsw";
// Bump when the byte layout of a part changes.
inline constexpr int kBm25PartFormat = 1;
inline constexpr int kGraphRowsFormat = 1;
// Graph vectors: the part holds the fact texts' index as a sparse or flat
// one (a HalfRowsIndex is written as its rows), which reading turns into
// the HalfRowsIndex a fresh build makes (graph_vectors.h AsFactIndex).
// The three vector parts are at format 2 since the stored vectors they are
// built from read as float16 (storage/vector_blob.h): a part built from
// the floats before is built again, as a fresh build would.
inline constexpr int kGraphVectorsFormat = 2;
inline constexpr int kPassageVectorsFormat = 2;
// The part's own framing; the index bytes carry HnswIndex::kFormatVersion.
inline constexpr int kPassageHnswFormat = 2;

// Keys: fingerprints of the code each part depends on (see above).
// Bm25PartKey: the tokens of probe texts under `tokenizer` (its language
// included) and the tokeniser version, so postings of another language or
// tokeniser version are stale.
std::string Bm25PartKey(const TokenizerOptions& tokenizer = {});
std::string GraphRowsPartKey();
std::string GraphVectorsPartKey(Embedder& embedder);
// The dense model id and what shapes an HNSW graph besides its vectors.
std::string PassageHnswPartKey(const std::string& model, size_t m, size_t ef_construction,
                               uint64_t seed);

// What became of a part when a snapshot was opened (SnapshotBuildStats).
enum class PartState { kLoaded, kMissing, kStale, kCorrupt, kRebuilt };
std::string_view PartStateName(PartState state);

// Reading: the part when present and valid (generation, format, key), else
// nullopt with *state saying why and *error (may be null) the reason. Any
// failure while reading (store errors included) makes the part unusable,
// never the snapshot: the caller rebuilds from rows, which reports the
// store's errors if they persist.
struct PartRead {
  PartState state = PartState::kMissing;
  std::string error;
};
// The BM25 part, tokenising queries with `tokenizer` (stale when written
// under other tokeniser options).
std::optional<Bm25Index> ReadBm25Part(SnapshotSource& store, int64_t generation,
                                      size_t num_passages, PartRead* read,
                                      const TokenizerOptions& tokenizer = {});
// The rows of a graph over `num_passages` passages (entity_names empty: a
// graph without entities).
std::optional<KnowledgeGraph::Input> ReadGraphRowsPart(SnapshotSource& store, int64_t generation,
                                                       size_t num_passages, PartRead* read);
// The same part's bytes (checksum verified), for a snapshot that keeps its
// rows (SnapshotOptions::persistable); ParseGraphRows reads them.
std::optional<std::string> ReadGraphRowsPartBytes(SnapshotSource& store, int64_t generation,
                                                  PartRead* read);
// Rows from SerializeGraphRows bytes, with every check of ReadGraphRowsPart
// but the checksum. Corruption naming the violation.
Result<KnowledgeGraph::Input> ParseGraphRows(std::string_view bytes, size_t num_passages);
// Rows whose bytes may say fewer passages than `num_passages` (passages
// appended since, without graph rows of their own), read over
// `num_passages`. Corruption as ParseGraphRows, or when they say more.
Result<KnowledgeGraph::Input> ParseGraphRowsUpTo(std::string_view bytes, size_t num_passages);
// The passage count the bytes say (0 when too short to say one).
size_t GraphRowsPassageCount(std::string_view bytes);
// The bytes with their passage count replaced (passages appended without
// graph rows of their own).
std::string WithPassageCount(std::string_view bytes, size_t num_passages);

// Vectors for `rows` (counts must match them) under `embedder`'s key.
std::optional<GraphVectors> ReadGraphVectorsPart(SnapshotSource& store, int64_t generation,
                                                 Embedder& embedder,
                                                 const KnowledgeGraph::Input& rows, PartRead* read);

// The passage vectors of `num_passages` passages under dense model `model`
// (zero rows for passages without one; *missing counts them).
std::optional<FloatMatrix> ReadPassageVectorsPart(SnapshotSource& store, int64_t generation,
                                                  const std::string& model, size_t num_passages,
                                                  size_t* missing, PartRead* read);

// The passage HNSW index of `num_passages` passages under dense model
// `model`, built with `options`' hnsw_m, hnsw_ef_construction and seed (the
// key says so; the loaded index is checked against them too), of `dim`
// dimensions (0: any); *missing as above. Everything HnswIndex::Load checks,
// and every vector finite. Null when absent or unusable (*read says why).
std::unique_ptr<HnswIndex> ReadPassageHnswPart(SnapshotSource& store, int64_t generation,
                                               const std::string& model,
                                               const VectorIndexOptions& options,
                                               size_t num_passages, size_t dim, size_t* missing,
                                               PartRead* read);

// The parts' bytes in memory (as SerializeGraphRows gives them and the store
// holds them), with every check of the Read*Part functions above but the
// header's (generation, format, key) and the checksum: Corruption naming the
// violation. For tests and the fuzz targets (tests/fuzz/snapshot_fuzz.cc).
Result<Bm25Index> ParseBm25Part(std::string_view bytes, size_t num_passages);
Result<GraphVectors> ParseGraphVectorsPart(std::string_view bytes, size_t dim,
                                           const KnowledgeGraph::Input& rows);
Result<FloatMatrix> ParsePassageVectorsPart(std::string_view bytes, size_t num_passages,
                                            size_t* missing);
Result<std::unique_ptr<HnswIndex>> ParsePassageHnswPart(std::string_view bytes,
                                                        const VectorIndexOptions& options,
                                                        size_t num_passages, size_t dim,
                                                        size_t* missing);

// The checksum a part's header records for `bytes` (for tests that craft
// parts: SnapshotSource::PutSnapshotPart with any bytes and this checksum).
uint64_t PartChecksum(std::string_view bytes);

// Writing: each replaces its part if the store is still at `generation`
// (SnapshotSource::PutSnapshotPart); false when it has moved on (nothing written).
Result<bool> WriteBm25Part(SnapshotSource& store, int64_t generation, const Bm25Index& bm25);
// The rows are serialised into memory first (the caller may then move
// `rows` into Build and write the bytes later): see SerializeGraphRows.
std::string SerializeGraphRows(const KnowledgeGraph::Input& rows);
Result<bool> WriteGraphRowsPart(SnapshotSource& store, int64_t generation, std::string_view bytes);

// Serialised graph rows a persistable snapshot keeps for its writes
// (Snapshot::Append and Remove parse them): owned, or a segment's section
// borrowed unverified and verified at the first Bytes(), a write's, so that
// a writable open neither reads nor copies them (730 MB at 10^6 passages).
// Thread-safe.
class GraphRowsBytes {
 public:
  explicit GraphRowsBytes(std::string owned) : owned_(std::move(owned)) {}
  explicit GraphRowsBytes(FlatArray<char> borrowed)
      : borrowed_(std::move(borrowed)), is_borrowed_(true) {}
  // The bytes; Corruption when borrowed ones fail their checksums. O(bytes)
  // the first time, O(1) after.
  Result<std::string_view> Bytes() const {
    if (!is_borrowed_) return std::string_view(owned_);
    FLOWRAG_RETURN_IF_ERROR(borrowed_.VerifyAll());
    return std::string_view(borrowed_.data(), borrowed_.size());
  }

 private:
  std::string owned_;
  FlatArray<char> borrowed_;
  bool is_borrowed_ = false;
};
Result<bool> WritePassageVectorsPart(SnapshotSource& store, int64_t generation,
                                     const std::string& model, const FloatMatrix& vectors,
                                     size_t missing);
// The index is serialised into memory first (HnswIndex::Save: a transient
// copy of the whole index), then written in chunks.
Result<bool> WritePassageHnswPart(SnapshotSource& store, int64_t generation,
                                  const std::string& model, const HnswIndex& index, size_t missing);
// False also when the vectors are not a local embedder's (nothing to persist).
Result<bool> WriteGraphVectorsPart(SnapshotSource& store, int64_t generation, Embedder& embedder,
                                   const GraphVectors& vectors);

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_GRAPH_IO_H_
