#include "graph/graph_io.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <span>

#include "common/checksum.h"
#include "common/hash.h"
#include "common/text.h"
#include "graph/graph_texts.h"
#include "vector/half_rows_index.h"
#include "vector/hnsw_index.h"
#include "vector/index_util.h"
#include "vector/sparse_index.h"

namespace flowrag {
namespace {

static_assert(std::endian::native == std::endian::little,
              "snapshot parts are written little-endian, as the machine holds them");

// The store's side of a part (storage/store.h SnapshotSource).
using PartInfo = SnapshotSource::SnapshotPartInfo;
using ChunkSink = SnapshotSource::ChunkSink;
constexpr size_t kChunkBytes = SnapshotSource::kMaxSnapshotChunk;

// First eight bytes of each part: catches a part written under another name.
constexpr uint64_t kBm25Magic = 0x3135324d42524646ull;     // "FFRBM251"
constexpr uint64_t kRowsMagic = 0x31574f5247524646ull;     // "FFRGROW1"
constexpr uint64_t kVectorsMagic = 0x3143455647524646ull;  // "FFRGVEC1"
constexpr uint64_t kPassagesMagic = 0x3143455650524646ull; // "FFRPVEC1"
constexpr uint64_t kHnswMagic = 0x31534e4850524646ull;     // "FFRPHNS1"

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// ---- writing

// Appends values to `out`; with a sink, every full chunk is emitted (and
// dropped) as soon as it fills, so the part is never held whole.
class PartWriter {
 public:
  explicit PartWriter(const ChunkSink* emit) : emit_(emit) {}

  Status Bytes(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    if (emit_) checksum_.Update(p, n);
    while (n > 0) {
      const size_t take = emit_ ? std::min(n, kChunkBytes - out_.size()) : n;
      out_.append(p, take);
      p += take;
      n -= take;
      if (emit_ && out_.size() == kChunkBytes) FLOWRAG_RETURN_IF_ERROR(Flush());
    }
    return Status::Ok();
  }
  Status U64(uint64_t v) { return Bytes(&v, sizeof(v)); }
  template <typename T>
  Status Array(std::span<const T> a) {
    FLOWRAG_RETURN_IF_ERROR(U64(a.size()));
    return Bytes(a.data(), a.size_bytes());
  }
  template <typename T>
  Status Array(const std::vector<T>& a) {
    return Array(std::span<const T>(a));
  }
  // count, count + 1 byte offsets, then the bytes of all strings.
  template <typename Get>
  Status Strings(size_t count, const Get& get) {
    std::vector<uint64_t> offsets(count + 1, 0);
    for (size_t i = 0; i < count; ++i) offsets[i + 1] = offsets[i] + get(i).size();
    FLOWRAG_RETURN_IF_ERROR(Array(offsets));
    for (size_t i = 0; i < count; ++i) {
      const std::string_view s = get(i);
      FLOWRAG_RETURN_IF_ERROR(Bytes(s.data(), s.size()));
    }
    return Status::Ok();
  }
  Status Strings(const std::vector<std::string>& v) {
    return Strings(v.size(), [&](size_t i) -> std::string_view { return v[i]; });
  }

  // Emits the last chunk; the checksum of everything emitted.
  Result<uint64_t> Finish() {
    if (!out_.empty()) FLOWRAG_RETURN_IF_ERROR(Flush());
    return checksum_.Final();
  }
  std::string Take() { return std::move(out_); }

 private:
  Status Flush() {
    FLOWRAG_RETURN_IF_ERROR((*emit_)(out_));
    out_.clear();
    return Status::Ok();
  }

  const ChunkSink* emit_;
  std::string out_;
  StreamChecksum checksum_;
};

// ---- reading

// Pulls a part's chunks from the store. Every read is bounded by the bytes
// the header announces, so a damaged count cannot make it allocate more
// than the part holds.
class PartReader {
 public:
  PartReader(SnapshotSource& store, PartInfo info) : store_(&store), info_(std::move(info)) {}
  // Over bytes in memory (no checksum to compare: Finish checks the length).
  PartReader(std::string name, std::string_view bytes) : memory_(bytes) {
    info_.name = std::move(name);
    info_.bytes = bytes.size();
  }

  uint64_t remaining() const { return info_.bytes - consumed_; }

  // Reads straight from the store's pages into `data` (chunks are all
  // kMaxSnapshotChunk bytes but the last), or from memory.
  Status Bytes(void* data, size_t n) {
    if (n > remaining()) return Corrupt("truncated: " + std::to_string(n) + " bytes wanted");
    char* p = static_cast<char*>(data);
    if (store_ == nullptr) {
      if (n > 0) std::memcpy(p, memory_.data() + consumed_, n);
      consumed_ += n;
      return Status::Ok();
    }
    while (n > 0) {
      const int64_t seq = static_cast<int64_t>(consumed_ / kChunkBytes);
      const uint64_t offset = consumed_ % kChunkBytes;
      const size_t take = std::min<uint64_t>(n, kChunkBytes - offset);
      if (seq >= info_.chunks) return Corrupt("missing chunk " + std::to_string(seq));
      FLOWRAG_RETURN_IF_ERROR(store_->ReadSnapshotChunk(info_.name, seq, offset, p, take));
      checksum_.Update(p, take);
      p += take;
      n -= take;
      consumed_ += take;
    }
    return Status::Ok();
  }
  Result<uint64_t> U64() {
    uint64_t v = 0;
    FLOWRAG_RETURN_IF_ERROR(Bytes(&v, sizeof(v)));
    return v;
  }
  template <typename T>
  Status Array(std::vector<T>* out) {
    FLOWRAG_ASSIGN_OR_RETURN(uint64_t n, U64());
    if (n > remaining() / sizeof(T)) return Corrupt("array of " + std::to_string(n) + " items");
    out->resize(n);
    return Bytes(out->data(), n * sizeof(T));
  }
  // An array that must hold exactly `n` items.
  template <typename T>
  Status ArrayOf(size_t n, std::vector<T>* out, const char* what) {
    FLOWRAG_RETURN_IF_ERROR(Array(out));
    if (out->size() != n) {
      return Corrupt(std::string(what) + ": " + std::to_string(out->size()) + " items, expected " +
                     std::to_string(n));
    }
    return Status::Ok();
  }
  Status Strings(std::vector<std::string>* out) {
    std::vector<uint64_t> offsets;
    FLOWRAG_RETURN_IF_ERROR(Array(&offsets));
    if (offsets.empty() || offsets.front() != 0) return Corrupt("string offsets");
    for (size_t i = 1; i < offsets.size(); ++i) {
      if (offsets[i] < offsets[i - 1]) return Corrupt("string offsets decrease");
    }
    if (offsets.back() > remaining()) return Corrupt("strings past the end");
    std::string bytes(offsets.back(), '\0');
    FLOWRAG_RETURN_IF_ERROR(Bytes(bytes.data(), bytes.size()));
    out->clear();
    out->reserve(offsets.size() - 1);
    for (size_t i = 0; i + 1 < offsets.size(); ++i) {
      out->emplace_back(bytes, offsets[i], offsets[i + 1] - offsets[i]);
    }
    return Status::Ok();
  }
  Status Magic(uint64_t want) {
    FLOWRAG_ASSIGN_OR_RETURN(uint64_t got, U64());
    return got == want ? Status::Ok() : Corrupt("wrong magic");
  }
  // Every byte read: compare the checksum.
  Status Finish() {
    if (remaining() != 0) return Corrupt(std::to_string(remaining()) + " trailing bytes");
    if (store_ == nullptr) return Status::Ok();
    const uint64_t chunks = (info_.bytes + kChunkBytes - 1) / kChunkBytes;
    if (static_cast<int64_t>(chunks) != info_.chunks) return Corrupt("chunk count");
    if (checksum_.Final() != info_.checksum) return Corrupt("checksum mismatch");
    return Status::Ok();
  }
  Status Corrupt(const std::string& what) const {
    return Status::Corruption((store_ ? store_->path() + ": " : std::string()) + "snapshot part " +
                              info_.name + ": " + what);
  }

 private:
  SnapshotSource* store_ = nullptr;
  std::string_view memory_;
  PartInfo info_;
  uint64_t consumed_ = 0;
  StreamChecksum checksum_;
};

// Opens part `name` when its header is valid; else sets read->state.
std::optional<PartInfo> ValidPart(SnapshotSource& store, const char* name, int64_t generation,
                                  int format, const std::string& key, PartRead* read) {
  auto info = store.GetSnapshotPart(name);
  if (!info.ok()) {
    read->state = PartState::kCorrupt;
    read->error = info.status().ToString();
    return std::nullopt;
  }
  if (!info->has_value()) {
    read->state = PartState::kMissing;
    return std::nullopt;
  }
  const PartInfo& i = **info;
  if (i.generation != generation || i.format != format || i.key != key) {
    read->state = PartState::kStale;
    read->error = "part of generation " + std::to_string(i.generation) + ", format " +
                  std::to_string(i.format) + ", key " + i.key + "; the store is at generation " +
                  std::to_string(generation) + ", format " + std::to_string(format) + ", key " + key;
    return std::nullopt;
  }
  return std::move(**info);
}

// Runs `parse` over a valid part; kCorrupt with the message when it or the
// final checks fail.
template <typename T>
std::optional<T> ReadPart(SnapshotSource& store, const char* name, int64_t generation, int format,
                          const std::string& key, PartRead* read,
                          const std::function<Result<T>(PartReader&)>& parse) {
  std::optional<PartInfo> info = ValidPart(store, name, generation, format, key, read);
  if (!info) return std::nullopt;
  PartReader reader(store, std::move(*info));
  Result<T> value = parse(reader);
  Status st = value.ok() ? reader.Finish() : value.status();
  if (!st.ok()) {
    read->state = PartState::kCorrupt;
    read->error = st.ToString();
    return std::nullopt;
  }
  read->state = PartState::kLoaded;
  return std::move(value).value();
}

Result<bool> WritePart(SnapshotSource& store, const char* name, int64_t generation, int format,
                       const std::string& key, const std::function<Status(PartWriter&)>& write) {
  PartInfo info;
  info.name = name;
  info.generation = generation;
  info.format = format;
  info.key = key;
  return store.PutSnapshotPart(info, [&](const ChunkSink& emit) -> Result<uint64_t> {
    PartWriter w(&emit);
    FLOWRAG_RETURN_IF_ERROR(write(w));
    return w.Finish();
  });
}

template <typename T>
Status CheckRange(const PartReader& r, const std::vector<T>& v, size_t limit, const char* what) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (static_cast<uint64_t>(v[i]) >= limit) {
      return r.Corrupt(std::string(what) + " " + std::to_string(i) + " is " +
                       std::to_string(v[i]) + ", expected < " + std::to_string(limit));
    }
  }
  return Status::Ok();
}

// ---- vectors

constexpr uint8_t kNoIndex = 0, kSparsePostings = 1, kIndexRows = 2;

Status WriteRows(PartWriter& w, const SparseRows& rows) {
  FLOWRAG_RETURN_IF_ERROR(rows.VerifyAll());  // lazily adopted rows: never copy damage
  FLOWRAG_RETURN_IF_ERROR(w.U64(rows.cols));
  FLOWRAG_RETURN_IF_ERROR(w.Array(rows.offsets.span()));
  FLOWRAG_RETURN_IF_ERROR(w.Array(rows.dims.span()));
  return w.Array(rows.values.span());
}

// Rows of `dim` columns (the embedder's dimension; 0 only for no rows).
Result<SparseRows> ReadRows(PartReader& r, size_t dim) {
  SparseRows rows;
  FLOWRAG_ASSIGN_OR_RETURN(rows.cols, r.U64());
  if (rows.cols != dim && rows.cols != 0) {
    return r.Corrupt("rows of " + std::to_string(rows.cols) + " columns, expected " +
                     std::to_string(dim));
  }
  FLOWRAG_RETURN_IF_ERROR(r.Array(&rows.offsets.Mutable()));
  FLOWRAG_RETURN_IF_ERROR(r.Array(&rows.dims.Mutable()));
  FLOWRAG_RETURN_IF_ERROR(r.Array(&rows.values.Mutable()));
  rows.offsets.Sync();  // the views follow the vectors read
  rows.dims.Sync();
  rows.values.Sync();
  Status st = ValidateSparseRows(rows);
  if (!st.ok()) return r.Corrupt(st.message());
  if (rows.cols == 0 && rows.rows() > 0) return r.Corrupt("rows without columns");
  return rows;
}

Status WriteIndex(PartWriter& w, const VectorIndex* index) {
  if (index == nullptr) return w.Bytes(&kNoIndex, 1);
  if (const auto* sparse = dynamic_cast<const SparseIndex*>(index)) {
    FLOWRAG_RETURN_IF_ERROR(sparse->VerifyLists());
    FLOWRAG_RETURN_IF_ERROR(w.Bytes(&kSparsePostings, 1));
    FLOWRAG_RETURN_IF_ERROR(w.U64(sparse->Dimension()));
    FLOWRAG_RETURN_IF_ERROR(w.U64(sparse->Size()));
    FLOWRAG_RETURN_IF_ERROR(w.Array(sparse->offsets()));
    FLOWRAG_RETURN_IF_ERROR(w.Array(sparse->deltas()));
    return w.Array(sparse->values());
  }
  // A flat index (dense-ish texts) or half rows (the fact texts): its rows;
  // reading indexes them again with IndexForRows, which chooses the same
  // kind for the same rows (the fact index: AsFactIndex, ParseVectors).
  if (const auto* half = dynamic_cast<const HalfRowsIndex*>(index)) {
    FLOWRAG_RETURN_IF_ERROR(half->VerifyAll());
  }
  const SparseRows rows = RowsOfIndex(index);
  if (rows.rows() != index->Size()) {
    return Status::FailedPrecondition("snapshot part: a " + index->Kind() +
                                      " index cannot be persisted");
  }
  FLOWRAG_RETURN_IF_ERROR(w.Bytes(&kIndexRows, 1));
  return WriteRows(w, rows);
}

Result<std::unique_ptr<VectorIndex>> ReadIndex(PartReader& r, size_t dim, size_t expected_size,
                                               const char* what) {
  uint8_t kind = 0;
  FLOWRAG_RETURN_IF_ERROR(r.Bytes(&kind, 1));
  std::unique_ptr<VectorIndex> index;
  if (kind == kNoIndex) {
    if (expected_size != 0) return r.Corrupt(std::string(what) + ": no index");
    return index;
  }
  if (kind == kSparsePostings) {
    FLOWRAG_ASSIGN_OR_RETURN(uint64_t index_dim, r.U64());
    FLOWRAG_ASSIGN_OR_RETURN(uint64_t size, r.U64());
    if (index_dim != dim || size != expected_size) {
      return r.Corrupt(std::string(what) + ": " + std::to_string(size) + " vectors of " +
                       std::to_string(index_dim) + " dimensions, expected " +
                       std::to_string(expected_size) + " of " + std::to_string(dim));
    }
    std::vector<uint64_t> offsets;
    std::vector<uint16_t> deltas;
    std::vector<float> values;
    FLOWRAG_RETURN_IF_ERROR(r.Array(&offsets));
    FLOWRAG_RETURN_IF_ERROR(r.Array(&deltas));
    FLOWRAG_RETURN_IF_ERROR(r.ArrayOf(deltas.size(), &values, "index values"));
    auto sparse = SparseIndex::FromArrays(dim, size, std::move(offsets), std::move(deltas),
                                          std::move(values));
    if (!sparse.ok()) return r.Corrupt(std::string(what) + ": " + sparse.status().message());
    index = std::move(sparse).value();
  } else if (kind == kIndexRows) {
    FLOWRAG_ASSIGN_OR_RETURN(SparseRows rows, ReadRows(r, dim));
    if (rows.rows() != expected_size) return r.Corrupt(std::string(what) + ": row count");
    auto built = IndexForRows(rows);
    if (!built.ok()) return r.Corrupt(std::string(what) + ": " + built.status().message());
    index = std::move(built).value();
  } else {
    return r.Corrupt(std::string(what) + ": unknown index kind " + std::to_string(kind));
  }
  if (index == nullptr || index->Size() != expected_size) {
    return r.Corrupt(std::string(what) + ": " + std::to_string(index ? index->Size() : 0) +
                     " vectors, expected " + std::to_string(expected_size));
  }
  return index;
}

// The graph rows part's layout (SerializeGraphRows), checked index by index.
Result<KnowledgeGraph::Input> ParseRows(PartReader& r, size_t num_passages) {
  KnowledgeGraph::Input in;
  FLOWRAG_RETURN_IF_ERROR(r.Magic(kRowsMagic));
  FLOWRAG_ASSIGN_OR_RETURN(uint64_t passages, r.U64());
  if (passages != num_passages) {
    return r.Corrupt("rows of " + std::to_string(passages) + " passages, the store has " +
                     std::to_string(num_passages));
  }
  in.num_passages = passages;
  FLOWRAG_RETURN_IF_ERROR(r.Strings(&in.entity_names));
  const size_t E = in.entity_names.size();
  FLOWRAG_RETURN_IF_ERROR(r.Strings(&in.entity_types));
  if (in.entity_types.size() != E) return r.Corrupt("entity types");
  FLOWRAG_RETURN_IF_ERROR(r.ArrayOf(E, &in.entity_ids, "entity ids"));
  std::vector<uint32_t> passage, entity;
  std::vector<float> count;
  std::vector<uint8_t> flags;
  FLOWRAG_RETURN_IF_ERROR(r.Array(&passage));
  FLOWRAG_RETURN_IF_ERROR(r.ArrayOf(passage.size(), &entity, "mention entities"));
  FLOWRAG_RETURN_IF_ERROR(r.ArrayOf(passage.size(), &count, "mention counts"));
  FLOWRAG_RETURN_IF_ERROR(r.ArrayOf(passage.size(), &flags, "mention flags"));
  FLOWRAG_RETURN_IF_ERROR(CheckRange(r, passage, passages, "mention passage"));
  FLOWRAG_RETURN_IF_ERROR(CheckRange(r, entity, E, "mention entity"));
  in.mentions.resize(passage.size());
  for (size_t i = 0; i < passage.size(); ++i) {
    in.mentions[i] = {passage[i], entity[i], count[i], (flags[i] & 1) != 0, (flags[i] & 2) != 0};
  }
  FLOWRAG_RETURN_IF_ERROR(r.Array(&in.description_entity));
  const size_t D = in.description_entity.size();
  FLOWRAG_RETURN_IF_ERROR(r.ArrayOf(D, &in.description_passage, "description passages"));
  FLOWRAG_RETURN_IF_ERROR(r.Strings(&in.description_texts));
  if (in.description_texts.size() != D) return r.Corrupt("description texts");
  FLOWRAG_RETURN_IF_ERROR(CheckRange(r, in.description_entity, E, "description entity"));
  FLOWRAG_RETURN_IF_ERROR(CheckRange(r, in.description_passage, passages, "description passage"));
  FLOWRAG_RETURN_IF_ERROR(r.Array(&in.fact_subject));
  const size_t F = in.fact_subject.size();
  FLOWRAG_RETURN_IF_ERROR(r.ArrayOf(F, &in.fact_object, "fact objects"));
  FLOWRAG_RETURN_IF_ERROR(r.ArrayOf(F, &in.fact_relation, "fact relations"));
  FLOWRAG_RETURN_IF_ERROR(r.Strings(&in.relation_texts));
  FLOWRAG_RETURN_IF_ERROR(r.ArrayOf(F, &in.fact_text, "fact texts"));
  FLOWRAG_RETURN_IF_ERROR(r.Strings(&in.fact_texts));
  FLOWRAG_RETURN_IF_ERROR(CheckRange(r, in.fact_subject, E, "fact subject"));
  FLOWRAG_RETURN_IF_ERROR(CheckRange(r, in.fact_object, E, "fact object"));
  FLOWRAG_RETURN_IF_ERROR(CheckRange(r, in.fact_relation, in.relation_texts.size(), "fact relation"));
  FLOWRAG_RETURN_IF_ERROR(CheckRange(r, in.fact_text, in.fact_texts.size(), "fact text"));
  std::vector<uint64_t> source_offsets;
  std::vector<uint32_t> sources;
  FLOWRAG_RETURN_IF_ERROR(r.ArrayOf(F + 1, &source_offsets, "fact source offsets"));
  FLOWRAG_RETURN_IF_ERROR(r.Array(&sources));
  FLOWRAG_RETURN_IF_ERROR(CheckRange(r, sources, passages, "fact source"));
  if (source_offsets.front() != 0 || source_offsets.back() != sources.size() ||
      !std::is_sorted(source_offsets.begin(), source_offsets.end())) {
    return r.Corrupt("fact source offsets");
  }
  in.fact_sources.resize(F);
  for (size_t f = 0; f < F; ++f) {
    in.fact_sources[f].assign(sources.begin() + static_cast<ptrdiff_t>(source_offsets[f]),
                              sources.begin() + static_cast<ptrdiff_t>(source_offsets[f + 1]));
  }
  std::vector<uint32_t> a, b;
  std::vector<float> similarity;
  FLOWRAG_RETURN_IF_ERROR(r.Array(&a));
  FLOWRAG_RETURN_IF_ERROR(r.ArrayOf(a.size(), &b, "synonym ends"));
  FLOWRAG_RETURN_IF_ERROR(r.ArrayOf(a.size(), &similarity, "synonym similarities"));
  FLOWRAG_RETURN_IF_ERROR(CheckRange(r, a, E, "synonym"));
  FLOWRAG_RETURN_IF_ERROR(CheckRange(r, b, E, "synonym"));
  in.synonyms.resize(a.size());
  for (size_t i = 0; i < a.size(); ++i) in.synonyms[i] = {a[i], b[i], similarity[i]};
  return in;
}

// The BM25 part's layout (WriteBm25Part).
Result<Bm25Index> ParseBm25(PartReader& r, size_t num_passages) {
  FLOWRAG_RETURN_IF_ERROR(r.Magic(kBm25Magic));
  std::vector<std::string> terms;
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> docs, tfs, lengths;
  FLOWRAG_RETURN_IF_ERROR(r.Strings(&terms));
  FLOWRAG_RETURN_IF_ERROR(r.Array(&offsets));
  FLOWRAG_RETURN_IF_ERROR(r.Array(&docs));
  FLOWRAG_RETURN_IF_ERROR(r.Array(&tfs));
  FLOWRAG_RETURN_IF_ERROR(r.ArrayOf(num_passages, &lengths, "document lengths"));
  auto index = Bm25Index::FromArrays(std::move(terms), std::move(offsets), std::move(docs),
                                     std::move(tfs), std::move(lengths));
  if (!index.ok()) return r.Corrupt(index.status().message());
  return index;
}

// The passage vectors part's layout (WritePassageVectorsPart).
Result<FloatMatrix> ParsePassageVectors(PartReader& r, size_t num_passages, size_t* missing) {
  FLOWRAG_RETURN_IF_ERROR(r.Magic(kPassagesMagic));
  FloatMatrix m;
  FLOWRAG_ASSIGN_OR_RETURN(m.rows, r.U64());
  FLOWRAG_ASSIGN_OR_RETURN(m.cols, r.U64());
  FLOWRAG_ASSIGN_OR_RETURN(uint64_t absent, r.U64());
  if (m.rows != num_passages || m.cols == 0 || m.cols > (uint64_t{1} << 20) || absent > m.rows) {
    return r.Corrupt("passage vectors " + std::to_string(m.rows) + "x" + std::to_string(m.cols) +
                     " for " + std::to_string(num_passages) + " passages");
  }
  FLOWRAG_RETURN_IF_ERROR(r.ArrayOf(m.rows * m.cols, &m.data, "passage vector values"));
  for (float v : m.data) {
    if (!std::isfinite(v)) return r.Corrupt("a passage vector value is not finite");
  }
  *missing = absent;
  return m;
}

// The passage HNSW part's layout (WritePassageHnswPart): the passage count,
// how many have no vector, then the HnswIndex::Save bytes.
Result<std::unique_ptr<HnswIndex>> ParsePassageHnsw(PartReader& r,
                                                    const VectorIndexOptions& options,
                                                    size_t num_passages, size_t dim,
                                                    size_t* missing) {
  FLOWRAG_RETURN_IF_ERROR(r.Magic(kHnswMagic));
  FLOWRAG_ASSIGN_OR_RETURN(uint64_t passages, r.U64());
  FLOWRAG_ASSIGN_OR_RETURN(uint64_t absent, r.U64());
  FLOWRAG_ASSIGN_OR_RETURN(uint64_t size, r.U64());
  if (passages != num_passages || absent > passages) {
    return r.Corrupt("an index of " + std::to_string(passages) + " passages (" +
                     std::to_string(absent) + " without vectors) for " +
                     std::to_string(num_passages) + " passages");
  }
  if (size > r.remaining()) {
    return r.Corrupt("an index of " + std::to_string(size) + " bytes, " +
                     std::to_string(r.remaining()) + " left");
  }
  std::string bytes(size, '\0');
  FLOWRAG_RETURN_IF_ERROR(r.Bytes(bytes.data(), bytes.size()));
  auto loaded = HnswIndex::Load(bytes);
  if (!loaded.ok()) return r.Corrupt(loaded.status().message());
  std::unique_ptr<HnswIndex> index = std::move(loaded).value();
  if (index->Size() != passages || (dim != 0 && index->Dimension() != dim)) {
    return r.Corrupt("an index of " + std::to_string(index->Size()) + " vectors of " +
                     std::to_string(index->Dimension()) + " dimensions, expected " +
                     std::to_string(passages) + (dim != 0 ? " of " + std::to_string(dim) : ""));
  }
  if (index->m() != options.hnsw_m || index->ef_construction() != options.hnsw_ef_construction ||
      index->seed() != options.seed) {
    return r.Corrupt("an index built with M " + std::to_string(index->m()) +
                     ", efConstruction " + std::to_string(index->ef_construction()) + ", seed " +
                     std::to_string(index->seed()) + ", expected " +
                     std::to_string(options.hnsw_m) + ", " +
                     std::to_string(options.hnsw_ef_construction) + ", " +
                     std::to_string(options.seed));
  }
  for (uint32_t i = 0; i < passages; ++i) {
    if (!vector_internal::AllFinite(index->Vector(i), index->Dimension())) {
      return r.Corrupt("the vector of passage " + std::to_string(i) + " is not finite");
    }
  }
  *missing = absent;
  return index;
}

// The graph vectors part's layout (WriteGraphVectorsPart) for `rows` under
// an embedder of dimension `dim`.
Result<GraphVectors> ParseVectors(PartReader& r, size_t dim, const KnowledgeGraph::Input& rows) {
  GraphVectors v;
  FLOWRAG_RETURN_IF_ERROR(r.Magic(kVectorsMagic));
  const size_t E = rows.entity_names.size();
  FLOWRAG_ASSIGN_OR_RETURN(v.entity_rows, ReadRows(r, dim));
  if (v.entity_rows.rows() != E) return r.Corrupt("entity rows");
  FLOWRAG_ASSIGN_OR_RETURN(v.entity_index, ReadIndex(r, dim, E, "entity index"));
  FLOWRAG_ASSIGN_OR_RETURN(v.description_index,
                           ReadIndex(r, dim, rows.description_texts.size(), "description index"));
  FLOWRAG_ASSIGN_OR_RETURN(auto facts, ReadIndex(r, dim, rows.fact_texts.size(), "fact index"));
  auto fact_index = AsFactIndex(std::move(facts));
  if (!fact_index.ok()) return r.Corrupt("fact index: " + fact_index.status().message());
  v.fact_index = std::move(fact_index).value();
  FLOWRAG_ASSIGN_OR_RETURN(v.relation_rows, ReadRows(r, dim));
  if (v.relation_rows.rows() != rows.relation_texts.size()) return r.Corrupt("relation rows");
  return v;
}

// ---- keys

// Texts that exercise the tokeniser (case, punctuation, Unicode, stopwords,
// possessives, plurals, digits) and FactText's two forms.
constexpr const char* kProbes[] = {
    "The Beatles' 1960s records \xe2\x80\x93 \xe2\x80\x9c" "Abbey Road\xe2\x80\x9d (Caf\xc3\xa9) "
    "sold 31,000,000 copies; stories, boxes and glasses of the U.S.A.",
    "Kurt Weill was born in Dessau on 2 March 1900.",
    // Segmentation, NFKC and case folding (tokeniser version 2).
    "flowrag \xe6\x98\xaf\xe4\xb8\x80\xe4\xb8\xaa\xe5\x9b\xbe\xe6\xa3\x80\xe7\xb4\xa2"
    "\xe5\xbc\x95\xe6\x93\x8e \xef\xbc\xa6\xef\xbd\x95\xef\xbd\x8c\xef\xbd\x8c "
    "\xef\xbc\x92\xef\xbc\x90\xef\xbc\x92\xef\xbc\x94 STRA\xc3\x9f\x45 \xc3\x89MILE "
    "\xe0\xb8\xa0\xe0\xb8\xb2\xe0\xb8\xa9\xe0\xb8\xb2\xe0\xb9\x84\xe0\xb8\x97\xe0\xb8\xa2",
    "S\xc3\xa3o Paulo \xe2\x80\x94 r\xc3\xa9sum\xc3\xa9 of Anna-Maria O'Neill's status",
};

}  // namespace

uint64_t PartChecksum(std::string_view bytes) {
  return StreamChecksum::Of(bytes.data(), bytes.size());
}

std::string_view PartStateName(PartState state) {
  switch (state) {
    case PartState::kLoaded: return "loaded";
    case PartState::kMissing: return "missing";
    case PartState::kStale: return "stale";
    case PartState::kCorrupt: return "corrupt";
    case PartState::kRebuilt: return "rebuilt";
  }
  return "?";
}

std::string Bm25PartKey(const TokenizerOptions& tokenizer) {
  uint64_t h = Hash64(TokenizerSignature(tokenizer.language));
  for (const char* probe : kProbes) {
    for (const std::string& t : Tokenize(probe, tokenizer)) h = HashCombine(h, Hash64(t));
  }
  return "tok-" + Hex(h);
}

std::string GraphRowsPartKey() {
  uint64_t h = 0;
  for (const char* probe : kProbes) {
    h = HashCombine(h, Hash64(EntityText(probe)));
    h = HashCombine(h, Hash64(FactText("Kurt Weill", probe, "Dessau")));
    h = HashCombine(h, Hash64(FactText("Beatles", probe, "Abbey Road")));
  }
  return "rows-" + Hex(h);
}

std::string GraphVectorsPartKey(Embedder& embedder) {
  std::vector<std::string> probes(std::begin(kProbes), std::end(kProbes));
  auto m = embedder.Embed(probes);
  const uint64_t h = m.ok() ? vector_internal::Checksum64(reinterpret_cast<const char*>(m->data.data()),
                                                          m->data.size() * sizeof(float))
                            : 0;
  return embedder.ModelId() + ":probe-" + Hex(h);
}

// ---- bm25

Result<bool> WriteBm25Part(SnapshotSource& store, int64_t generation, const Bm25Index& bm25) {
  return WritePart(store, kBm25Part, generation, kBm25PartFormat, Bm25PartKey(bm25.tokenizer()),
                   [&](PartWriter& w) -> Status {
                     FLOWRAG_RETURN_IF_ERROR(bm25.VerifyPostings());  // damage is not copied
                     FLOWRAG_RETURN_IF_ERROR(w.U64(kBm25Magic));
                     const std::vector<std::string_view> terms = bm25.Terms();
                     FLOWRAG_RETURN_IF_ERROR(
                         w.Strings(terms.size(), [&](size_t i) { return terms[i]; }));
                     FLOWRAG_RETURN_IF_ERROR(w.Array(bm25.offsets()));
                     FLOWRAG_RETURN_IF_ERROR(w.Array(bm25.posting_docs()));
                     FLOWRAG_RETURN_IF_ERROR(w.Array(bm25.posting_tfs()));
                     return w.Array(bm25.doc_lengths());
                   });
}

std::optional<Bm25Index> ReadBm25Part(SnapshotSource& store, int64_t generation,
                                      size_t num_passages, PartRead* read,
                                      const TokenizerOptions& tokenizer) {
  std::optional<Bm25Index> index =
      ReadPart<Bm25Index>(store, kBm25Part, generation, kBm25PartFormat, Bm25PartKey(tokenizer),
                          read, [&](PartReader& r) { return ParseBm25(r, num_passages); });
  if (index) index->set_tokenizer(tokenizer);
  return index;
}

Result<Bm25Index> ParseBm25Part(std::string_view bytes, size_t num_passages) {
  PartReader r(kBm25Part, bytes);
  FLOWRAG_ASSIGN_OR_RETURN(Bm25Index index, ParseBm25(r, num_passages));
  FLOWRAG_RETURN_IF_ERROR(r.Finish());
  return index;
}

// ---- passage vectors

Result<bool> WritePassageVectorsPart(SnapshotSource& store, int64_t generation,
                                     const std::string& model, const FloatMatrix& vectors,
                                     size_t missing) {
  return WritePart(store, kPassageVectorsPart, generation, kPassageVectorsFormat, model,
                   [&](PartWriter& w) -> Status {
                     FLOWRAG_RETURN_IF_ERROR(w.U64(kPassagesMagic));
                     FLOWRAG_RETURN_IF_ERROR(w.U64(vectors.rows));
                     FLOWRAG_RETURN_IF_ERROR(w.U64(vectors.cols));
                     FLOWRAG_RETURN_IF_ERROR(w.U64(missing));
                     return w.Array(vectors.data);
                   });
}

std::optional<FloatMatrix> ReadPassageVectorsPart(SnapshotSource& store, int64_t generation,
                                                  const std::string& model, size_t num_passages,
                                                  size_t* missing, PartRead* read) {
  return ReadPart<FloatMatrix>(
      store, kPassageVectorsPart, generation, kPassageVectorsFormat, model, read,
      [&](PartReader& r) { return ParsePassageVectors(r, num_passages, missing); });
}

Result<FloatMatrix> ParsePassageVectorsPart(std::string_view bytes, size_t num_passages,
                                            size_t* missing) {
  PartReader r(kPassageVectorsPart, bytes);
  FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix m, ParsePassageVectors(r, num_passages, missing));
  FLOWRAG_RETURN_IF_ERROR(r.Finish());
  return m;
}

// ---- passage HNSW index

std::string PassageHnswPartKey(const std::string& model, size_t m, size_t ef_construction,
                               uint64_t seed) {
  return model + "/hnsw:M=" + std::to_string(m) + ",efc=" + std::to_string(ef_construction) +
         ",seed=" + std::to_string(seed);
}

Result<bool> WritePassageHnswPart(SnapshotSource& store, int64_t generation,
                                  const std::string& model, const HnswIndex& index,
                                  size_t missing) {
  std::string bytes;
  FLOWRAG_RETURN_IF_ERROR(index.Save(&bytes));
  return WritePart(store, kPassageHnswPart, generation, kPassageHnswFormat,
                   PassageHnswPartKey(model, index.m(), index.ef_construction(), index.seed()),
                   [&](PartWriter& w) -> Status {
                     FLOWRAG_RETURN_IF_ERROR(w.U64(kHnswMagic));
                     FLOWRAG_RETURN_IF_ERROR(w.U64(index.Size()));
                     FLOWRAG_RETURN_IF_ERROR(w.U64(missing));
                     FLOWRAG_RETURN_IF_ERROR(w.U64(bytes.size()));
                     return w.Bytes(bytes.data(), bytes.size());
                   });
}

std::unique_ptr<HnswIndex> ReadPassageHnswPart(SnapshotSource& store, int64_t generation,
                                               const std::string& model,
                                               const VectorIndexOptions& options,
                                               size_t num_passages, size_t dim, size_t* missing,
                                               PartRead* read) {
  // *missing only once the whole part is valid.
  size_t absent = 0;
  std::optional<std::unique_ptr<HnswIndex>> index = ReadPart<std::unique_ptr<HnswIndex>>(
      store, kPassageHnswPart, generation, kPassageHnswFormat,
      PassageHnswPartKey(model, options.hnsw_m, options.hnsw_ef_construction, options.seed), read,
      [&](PartReader& r) { return ParsePassageHnsw(r, options, num_passages, dim, &absent); });
  if (!index) return nullptr;
  *missing = absent;
  return std::move(*index);
}

Result<std::unique_ptr<HnswIndex>> ParsePassageHnswPart(std::string_view bytes,
                                                        const VectorIndexOptions& options,
                                                        size_t num_passages, size_t dim,
                                                        size_t* missing) {
  PartReader r(kPassageHnswPart, bytes);
  size_t absent = 0;
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<HnswIndex> index,
                           ParsePassageHnsw(r, options, num_passages, dim, &absent));
  FLOWRAG_RETURN_IF_ERROR(r.Finish());
  *missing = absent;
  return index;
}

// ---- graph rows

std::string SerializeGraphRows(const KnowledgeGraph::Input& in) {
  PartWriter w(nullptr);  // in memory: cannot fail
  (void)w.U64(kRowsMagic);
  (void)w.U64(in.num_passages);
  (void)w.Strings(in.entity_names);
  (void)w.Strings(in.entity_types);
  (void)w.Array(in.entity_ids);
  const size_t m = in.mentions.size();
  std::vector<uint32_t> passage(m), entity(m);
  std::vector<float> count(m);
  std::vector<uint8_t> flags(m);
  for (size_t i = 0; i < m; ++i) {
    const auto& x = in.mentions[i];
    passage[i] = x.passage;
    entity[i] = x.entity;
    count[i] = x.count;
    flags[i] = static_cast<uint8_t>((x.defining ? 1 : 0) | (x.title ? 2 : 0));
  }
  (void)w.Array(passage);
  (void)w.Array(entity);
  (void)w.Array(count);
  (void)w.Array(flags);
  (void)w.Array(in.description_entity);
  (void)w.Array(in.description_passage);
  (void)w.Strings(in.description_texts);
  (void)w.Array(in.fact_subject);
  (void)w.Array(in.fact_object);
  (void)w.Array(in.fact_relation);
  (void)w.Strings(in.relation_texts);
  (void)w.Array(in.fact_text);
  (void)w.Strings(in.fact_texts);
  std::vector<uint64_t> source_offsets(in.fact_sources.size() + 1, 0);
  std::vector<uint32_t> sources;
  for (size_t f = 0; f < in.fact_sources.size(); ++f) {
    sources.insert(sources.end(), in.fact_sources[f].begin(), in.fact_sources[f].end());
    source_offsets[f + 1] = sources.size();
  }
  (void)w.Array(source_offsets);
  (void)w.Array(sources);
  const size_t s = in.synonyms.size();
  std::vector<uint32_t> a(s), b(s);
  std::vector<float> similarity(s);
  for (size_t i = 0; i < s; ++i) {
    a[i] = in.synonyms[i].a;
    b[i] = in.synonyms[i].b;
    similarity[i] = in.synonyms[i].similarity;
  }
  (void)w.Array(a);
  (void)w.Array(b);
  (void)w.Array(similarity);
  return w.Take();
}

Result<bool> WriteGraphRowsPart(SnapshotSource& store, int64_t generation, std::string_view bytes) {
  return WritePart(store, kGraphRowsPart, generation, kGraphRowsFormat, GraphRowsPartKey(),
                   [&](PartWriter& w) { return w.Bytes(bytes.data(), bytes.size()); });
}

std::optional<KnowledgeGraph::Input> ReadGraphRowsPart(SnapshotSource& store, int64_t generation,
                                                       size_t num_passages, PartRead* read) {
  return ReadPart<KnowledgeGraph::Input>(
      store, kGraphRowsPart, generation, kGraphRowsFormat, GraphRowsPartKey(), read,
      [&](PartReader& r) { return ParseRows(r, num_passages); });
}

std::optional<std::string> ReadGraphRowsPartBytes(SnapshotSource& store, int64_t generation,
                                                  PartRead* read) {
  return ReadPart<std::string>(store, kGraphRowsPart, generation, kGraphRowsFormat,
                               GraphRowsPartKey(), read, [&](PartReader& r) -> Result<std::string> {
                                 std::string bytes(r.remaining(), '\0');
                                 FLOWRAG_RETURN_IF_ERROR(r.Bytes(bytes.data(), bytes.size()));
                                 return bytes;
                               });
}

Result<KnowledgeGraph::Input> ParseGraphRows(std::string_view bytes, size_t num_passages) {
  PartReader r(kGraphRowsPart, bytes);
  FLOWRAG_ASSIGN_OR_RETURN(KnowledgeGraph::Input in, ParseRows(r, num_passages));
  FLOWRAG_RETURN_IF_ERROR(r.Finish());
  return in;
}

size_t GraphRowsPassageCount(std::string_view bytes) {
  uint64_t n = 0;
  if (bytes.size() >= 16) std::memcpy(&n, bytes.data() + 8, sizeof(n));
  return static_cast<size_t>(n);
}

Result<KnowledgeGraph::Input> ParseGraphRowsUpTo(std::string_view bytes, size_t num_passages) {
  const size_t said = GraphRowsPassageCount(bytes);
  if (said > num_passages) {
    return Status::Corruption(std::string(kGraphRowsPart) + ": rows of " + std::to_string(said) +
                              " passages, the snapshot has " + std::to_string(num_passages));
  }
  FLOWRAG_ASSIGN_OR_RETURN(KnowledgeGraph::Input in, ParseGraphRows(bytes, said));
  in.num_passages = num_passages;
  return in;
}

std::string WithPassageCount(std::string_view bytes, size_t num_passages) {
  std::string out(bytes);
  const uint64_t n = num_passages;
  if (out.size() >= 16) std::memcpy(out.data() + 8, &n, sizeof(n));
  return out;
}


// ---- graph vectors

Result<bool> WriteGraphVectorsPart(SnapshotSource& store, int64_t generation, Embedder& embedder,
                                   const GraphVectors& v) {
  if (!embedder.IsLocal()) return false;
  return WritePart(store, kGraphVectorsPart, generation, kGraphVectorsFormat,
                   GraphVectorsPartKey(embedder), [&](PartWriter& w) -> Status {
                     FLOWRAG_RETURN_IF_ERROR(w.U64(kVectorsMagic));
                     FLOWRAG_RETURN_IF_ERROR(WriteRows(w, v.entity_rows));
                     FLOWRAG_RETURN_IF_ERROR(WriteIndex(w, v.entity_index.get()));
                     FLOWRAG_RETURN_IF_ERROR(WriteIndex(w, v.description_index.get()));
                     FLOWRAG_RETURN_IF_ERROR(WriteIndex(w, v.fact_index.get()));
                     return WriteRows(w, v.relation_rows);
                   });
}

std::optional<GraphVectors> ReadGraphVectorsPart(SnapshotSource& store, int64_t generation,
                                                 Embedder& embedder,
                                                 const KnowledgeGraph::Input& rows,
                                                 PartRead* read) {
  if (!embedder.IsLocal()) {
    read->state = PartState::kMissing;
    return std::nullopt;
  }
  return ReadPart<GraphVectors>(
      store, kGraphVectorsPart, generation, kGraphVectorsFormat, GraphVectorsPartKey(embedder),
      read, [&](PartReader& r) { return ParseVectors(r, embedder.Dimension(), rows); });
}

Result<GraphVectors> ParseGraphVectorsPart(std::string_view bytes, size_t dim,
                                           const KnowledgeGraph::Input& rows) {
  PartReader r(kGraphVectorsPart, bytes);
  FLOWRAG_ASSIGN_OR_RETURN(GraphVectors v, ParseVectors(r, dim, rows));
  FLOWRAG_RETURN_IF_ERROR(r.Finish());
  return v;
}

}  // namespace flowrag
