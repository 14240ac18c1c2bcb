// HnswIndex on hnswlib 0.6.2. See hnsw_index.h for the design.
//
// hnswlib is included with NO_MANUAL_VECTORIZATION, which
//  - drops its SSE/AVX distance kernels (unused: the space below brings its
//    own dispatched kernel);
//  - drops its _mm_prefetch calls, which in 0.6.2 read one id past the end of
//    upper-level link lists (allocated with 1 spare byte): a heap overflow
//    that AddressSanitizer reports during addPoint;
//  - drops the non-inline cpuid/xgetbv/AVXCapable definitions in hnswlib.h,
//    which would otherwise clash at link time if a second translation unit
//    included the header.
// Keep hnswlib out of every other file all the same.
#include "vector/hnsw_index.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <mutex>
#include <queue>
#include <span>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#define NO_MANUAL_VECTORIZATION
#include <hnswlib/hnswlib.h>
#undef NO_MANUAL_VECTORIZATION

#include "common/flat_array.h"
#include "vector/dot_product.h"
#include "vector/index_util.h"

static_assert(std::endian::native == std::endian::little,
              "the HNSW buffer format is little-endian; add byte swapping for this target");

namespace flowrag {

namespace {

using hnswlib::linklistsizeint;
using hnswlib::tableint;
using Hnsw = hnswlib::HierarchicalNSW<float>;

constexpr char kMagic[8] = {'F', 'L', 'O', 'W', 'H', 'N', 'S', 'W'};
constexpr tableint kNoEntryPoint = std::numeric_limits<tableint>::max();
// Bounds used only to reject corrupt buffers before allocating for them.
constexpr size_t kMaxM = 10000;  // hnswlib caps M here too
constexpr size_t kMaxDim = size_t{1} << 24;
constexpr size_t kMaxEfConstruction = size_t{1} << 24;
// Levels are floor(-ln(U) / ln(M)) with U >= 2^-31 and M >= 2, so <= 31.
constexpr int kMaxLevel = 64;
constexpr size_t kMaxRngStateBytes = 4096;

// hnswlib space: distance = -<a, b>, using the dispatched SIMD dot product.
class NegativeDotSpace final : public hnswlib::SpaceInterface<float> {
 public:
  explicit NegativeDotSpace(size_t dim) : dim_(dim) {}
  size_t get_data_size() override { return dim_ * sizeof(float); }
  hnswlib::DISTFUNC<float> get_dist_func() override { return &Distance; }
  void* get_dist_func_param() override { return &dim_; }

 private:
  static float Distance(const void* a, const void* b, const void* dim) {
    return -DotProduct(static_cast<const float*>(a), static_cast<const float*>(b),
                       *static_cast<const size_t*>(dim));
  }
  size_t dim_;
};

template <typename T>
void Append(std::string* out, const T& v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

// Bounds-checked little-endian reader over the buffer.
class Reader {
 public:
  explicit Reader(std::string_view buf) : buf_(buf) {}
  size_t pos() const { return pos_; }
  size_t remaining() const { return buf_.size() - pos_; }

  template <typename T>
  Status Read(T* v, const char* what) {
    const char* p;
    FLOWRAG_RETURN_IF_ERROR(Bytes(sizeof(T), &p, what));
    std::memcpy(v, p, sizeof(T));
    return Status::Ok();
  }

  Status Bytes(size_t n, const char** p, const char* what) {
    if (n > remaining()) {
      return Status::Corruption("hnsw index buffer: truncated at byte " + std::to_string(pos_) +
                                " while reading " + what + " (" + std::to_string(n) +
                                " bytes needed, " + std::to_string(remaining()) + " left)");
    }
    *p = buf_.data() + pos_;
    pos_ += n;
    return Status::Ok();
  }

 private:
  std::string_view buf_;
  size_t pos_ = 0;
};

Status CheckOptions(size_t dim, size_t m, size_t ef_construction) {
  if (dim == 0) return Status::InvalidArgument("hnsw index: dim must be > 0");
  if (dim > kMaxDim) {
    return Status::InvalidArgument("hnsw index: dim " + std::to_string(dim) +
                                   " exceeds the limit of " + std::to_string(kMaxDim));
  }
  if (m < 2 || m > kMaxM) {
    return Status::InvalidArgument("hnsw index: hnsw_m must be in [2, " + std::to_string(kMaxM) +
                                   "], got " + std::to_string(m));
  }
  if (ef_construction < 1 || ef_construction > kMaxEfConstruction) {
    return Status::InvalidArgument("hnsw index: hnsw_ef_construction must be in [1, " +
                                   std::to_string(kMaxEfConstruction) + "], got " +
                                   std::to_string(ef_construction));
  }
  return Status::Ok();
}

// Returns a pool's visited list on scope exit.
class VisitedLease {
 public:
  explicit VisitedLease(hnswlib::VisitedListPool* pool)
      : pool_(pool), list_(pool->getFreeVisitedList()) {}
  ~VisitedLease() { pool_->releaseVisitedList(list_); }
  VisitedLease(const VisitedLease&) = delete;
  VisitedLease& operator=(const VisitedLease&) = delete;
  hnswlib::VisitedList* list() const { return list_; }

 private:
  hnswlib::VisitedListPool* pool_;
  hnswlib::VisitedList* list_;
};

}  // namespace

struct HnswIndex::Graph {
  explicit Graph(size_t dim) : space(dim) {}
  NegativeDotSpace space;  // must outlive `hnsw`, which points into it
  std::unique_ptr<Hnsw> hnsw;

  const float* Vector(tableint id) const {
    return reinterpret_cast<const float*>(hnsw->getDataByInternalId(id));
  }
};

namespace {

const float* VectorAt(const Hnsw& h, tableint id) {
  return reinterpret_cast<const float*>(h.getDataByInternalId(id));
}

// The graph views the search and the writers read (one implementation for
// both kinds): hnswlib's memory (HnswlibGraph) or the adopted arrays
// (HnswArraysIndex::Arrays). Each provides size(), max_level(),
// entry_point(), max_degree(), level(id), Vector(id), Links(id, level) and
// visited_pool().
class HnswlibGraph {
 public:
  explicit HnswlibGraph(const Hnsw& h) : h_(h) {}
  size_t size() const { return h_.cur_element_count; }
  int max_level() const { return h_.maxlevel_; }
  tableint entry_point() const { return h_.enterpoint_node_; }
  size_t max_degree() const { return std::max(h_.maxM0_, h_.maxM_); }
  int level(tableint id) const { return h_.element_levels_[id]; }
  const float* Vector(tableint id) const { return VectorAt(h_, id); }
  std::span<const tableint> Links(tableint id, int level) const {
    const linklistsizeint* list = h_.get_linklist_at_level(id, level);
    return {reinterpret_cast<const tableint*>(list + 1),
            h_.getListCount(const_cast<linklistsizeint*>(list))};
  }
  hnswlib::VisitedListPool* visited_pool() const { return h_.visited_list_pool_; }

 private:
  const Hnsw& h_;
};

// Scratch for scoring one adjacency list at a time.
struct ListScratch {
  explicit ListScratch(size_t max_degree) : rows(max_degree), ids(max_degree), scores(max_degree) {}
  std::vector<const float*> rows;
  std::vector<tableint> ids;
  std::vector<float> scores;
};

using Scored = std::pair<float, tableint>;

// 1. Greedy descent through the upper levels, as hnswlib's searchKnn: the
// node where level 0 starts and its score. Adds the vectors scored to
// *scored.
template <class G>
Scored GreedyDescent(const G& g, const float* query, size_t dim, ListScratch* s, size_t* scored) {
  tableint current = g.entry_point();
  float current_score = DotProduct(query, g.Vector(current), dim);
  ++*scored;
  for (int level = g.max_level(); level > 0; --level) {
    bool changed = true;
    while (changed) {
      changed = false;
      const std::span<const tableint> neighbours = g.Links(current, level);
      const size_t degree = neighbours.size();
      for (size_t j = 0; j < degree; ++j) s->rows[j] = g.Vector(neighbours[j]);
      vector_internal::DotProductGather(query, s->rows.data(), degree, dim, s->scores.data());
      *scored += degree;
      for (size_t j = 0; j < degree; ++j) {
        if (s->scores[j] > current_score) {
          current_score = s->scores[j];
          current = neighbours[j];
          changed = true;
        }
      }
    }
  }
  return {current_score, current};
}

// 2. Beam search on level 0 from `entry` with the per-call ef: the best ef
// accepted hits (those params.filter accepts), unordered. Adds the vectors
// scored to *scored.
template <class G>
std::vector<VectorHit> BeamSearch(const G& g, const float* query, size_t dim, size_t ef,
                                  const VectorSearchParams& params, Scored entry, ListScratch* s,
                                  size_t* scored) {
  const bool filtered = static_cast<bool>(params.filter);
  // Best candidate (highest score) on top, as hnswlib's candidate_set.
  std::priority_queue<Scored> candidates;
  // Worst accepted hit on top: lowest score, then highest id.
  auto worse_on_top = [](const VectorHit& a, const VectorHit& b) {
    return vector_internal::HitBefore(a, b);
  };
  std::vector<VectorHit> beam_storage;
  beam_storage.reserve(ef + 1);
  std::priority_queue<VectorHit, std::vector<VectorHit>, decltype(worse_on_top)> beam(
      worse_on_top, std::move(beam_storage));
  auto accept = [&](tableint id) { return !filtered || params.filter(id); };

  VisitedLease lease(g.visited_pool());
  hnswlib::vl_type* visited = lease.list()->mass;
  const hnswlib::vl_type tag = lease.list()->curV;

  const auto [entry_score, entry_node] = entry;
  visited[entry_node] = tag;
  candidates.emplace(entry_score, entry_node);
  if (accept(entry_node)) beam.push({entry_node, entry_score});

  while (!candidates.empty()) {
    const auto [candidate_score, node] = candidates.top();
    if (beam.size() >= ef && candidate_score < beam.top().score) break;
    candidates.pop();

    const std::span<const tableint> neighbours = g.Links(node, 0);
    const size_t degree = neighbours.size();
    size_t fresh = 0;
    for (size_t j = 0; j < degree; ++j) {
      const tableint id = neighbours[j];
      if (visited[id] == tag) continue;
      visited[id] = tag;
      s->ids[fresh] = id;
      s->rows[fresh] = g.Vector(id);
      ++fresh;
    }
    vector_internal::DotProductGather(query, s->rows.data(), fresh, dim, s->scores.data());
    *scored += fresh;
    for (size_t j = 0; j < fresh; ++j) {
      const float score = s->scores[j];
      if (beam.size() < ef || score > beam.top().score) {
        candidates.emplace(score, s->ids[j]);
        if (accept(s->ids[j])) {
          beam.push({s->ids[j], score});
          if (beam.size() > ef) beam.pop();
        }
      }
    }
  }

  std::vector<VectorHit> hits;
  hits.reserve(beam.size());
  while (!beam.empty()) {
    hits.push_back(beam.top());
    beam.pop();
  }
  return hits;
}

// The whole query (see hnsw_index.h): descent, beam, at most k hits in
// VectorIndex order.
template <class G>
std::vector<VectorHit> SearchGraph(const G& g, size_t dim, const float* query,
                                   const VectorSearchParams& params, VectorSearchStats* stats) {
  const size_t k = std::min(params.k, g.size());
  if (k == 0 || !vector_internal::AllFinite(query, dim)) return {};
  const size_t ef = std::max(params.ef_search, k);
  ListScratch scratch(g.max_degree());
  size_t scored = 0;
  const Scored entry = GreedyDescent(g, query, dim, &scratch, &scored);
  std::vector<VectorHit> hits = BeamSearch(g, query, dim, ef, params, entry, &scratch, &scored);
  std::sort(hits.begin(), hits.end(), vector_internal::HitBefore);
  if (hits.size() > k) hits.resize(k);
  if (stats != nullptr) stats->candidates_scored += scored;
  return vector_internal::DropBelow(std::move(hits), params.min_score);
}

}  // namespace

HnswIndex::HnswIndex(size_t dim, size_t m, size_t ef_construction, uint64_t seed)
    : dim_(dim),
      m_(m),
      ef_construction_(ef_construction),
      seed_(seed),
      graph_(std::make_unique<Graph>(dim)) {}

HnswIndex::~HnswIndex() = default;

Result<std::unique_ptr<HnswIndex>> HnswIndex::Create(size_t dim, size_t expected_size,
                                                     const VectorIndexOptions& options) {
  FLOWRAG_RETURN_IF_ERROR(CheckOptions(dim, options.hnsw_m, options.hnsw_ef_construction));
  std::unique_ptr<HnswIndex> index(
      new HnswIndex(dim, options.hnsw_m, options.hnsw_ef_construction, options.seed));
  const size_t capacity = std::clamp<size_t>(expected_size, 1, vector_internal::kMaxVectors);
  try {
    index->graph_->hnsw =
        std::make_unique<Hnsw>(&index->graph_->space, capacity, options.hnsw_m,
                               options.hnsw_ef_construction, static_cast<size_t>(options.seed));
  } catch (const std::exception& e) {
    return Status::Internal("hnsw index: cannot allocate for " + std::to_string(capacity) +
                            " vectors of dim " + std::to_string(dim) + ": " + e.what());
  }
  return index;
}

size_t HnswIndex::Size() const { return graph_->hnsw->cur_element_count; }

const float* HnswIndex::Vector(uint32_t id) const { return graph_->Vector(id); }

Status HnswIndex::Add(const FloatMatrix& rows) {
  FLOWRAG_RETURN_IF_ERROR(vector_internal::ValidateRows(rows, dim_, Size()));
  Hnsw& h = *graph_->hnsw;
  size_t r = 0;
  try {
    const size_t needed = h.cur_element_count + rows.rows;
    if (needed > h.max_elements_) {
      h.resizeIndex(std::min(std::max(needed, 2 * h.max_elements_), vector_internal::kMaxVectors));
    }
    for (; r < rows.rows; ++r) {
      h.addPoint(rows.row(r), static_cast<hnswlib::labeltype>(h.cur_element_count));
    }
  } catch (const std::exception& e) {
    return Status::Internal("hnsw index Add: row " + std::to_string(r) +
                            " of the batch: " + e.what());
  }
  return Status::Ok();
}

std::vector<VectorHit> HnswIndex::Search(const float* query, const VectorSearchParams& params,
                                         VectorSearchStats* stats) const {
  return SearchGraph(HnswlibGraph(*graph_->hnsw), dim_, query, params, stats);
}

std::vector<VectorHit> HnswIndex::SearchWithHnswlibForTesting(const float* query, size_t k,
                                                              size_t ef) {
  Hnsw& h = *graph_->hnsw;
  h.setEf(ef);
  auto queue = h.searchKnn(query, k);
  std::vector<VectorHit> hits;
  while (!queue.empty()) {
    hits.push_back({static_cast<uint32_t>(queue.top().second), -queue.top().first});
    queue.pop();
  }
  std::sort(hits.begin(), hits.end(), vector_internal::HitBefore);
  return hits;
}

namespace {

// The Save() format of graph view `g` (the header's layout) into *buffer.
template <class G>
void WriteSaveFormat(const G& g, size_t dim, size_t m, size_t ef_construction, uint64_t seed,
                     const std::string& rng_state, std::string* buffer) {
  const size_t count = g.size();
  size_t links = 0;
  for (size_t i = 0; i < count; ++i) {
    for (int level = 0; level <= g.level(static_cast<tableint>(i)); ++level) {
      links += 1 + g.Links(static_cast<tableint>(i), level).size();
    }
  }
  std::string& out = *buffer;
  out.clear();
  out.reserve(64 + rng_state.size() + count * (dim + 1) * sizeof(float) + links * sizeof(uint32_t) +
              sizeof(uint64_t));

  out.append(kMagic, sizeof(kMagic));
  Append(&out, HnswIndex::kFormatVersion);
  Append(&out, static_cast<uint32_t>(dim));
  Append(&out, static_cast<uint64_t>(count));
  Append(&out, static_cast<uint64_t>(m));
  Append(&out, static_cast<uint64_t>(ef_construction));
  Append(&out, static_cast<uint64_t>(seed));
  Append(&out, static_cast<int32_t>(count == 0 ? -1 : g.max_level()));
  Append(&out, static_cast<uint32_t>(count == 0 ? kNoEntryPoint : g.entry_point()));
  Append(&out, static_cast<uint32_t>(rng_state.size()));
  out.append(rng_state);
  for (size_t i = 0; i < count; ++i) {
    out.append(reinterpret_cast<const char*>(g.Vector(static_cast<tableint>(i))),
               dim * sizeof(float));
  }
  for (size_t i = 0; i < count; ++i) {
    Append(&out, static_cast<int32_t>(g.level(static_cast<tableint>(i))));
  }
  for (size_t i = 0; i < count; ++i) {
    for (int level = 0; level <= g.level(static_cast<tableint>(i)); ++level) {
      const std::span<const tableint> list = g.Links(static_cast<tableint>(i), level);
      Append(&out, static_cast<uint32_t>(list.size()));
      out.append(reinterpret_cast<const char*>(list.data()), list.size_bytes());
    }
  }
  Append(&out, vector_internal::Checksum64(out.data(), out.size()));
}

std::string RngState(const Hnsw& h) {
  std::ostringstream rng;
  rng << h.level_generator_;
  return rng.str();
}

}  // namespace

Status HnswIndex::Save(std::string* buffer) const {
  const Hnsw& h = *graph_->hnsw;
  WriteSaveFormat(HnswlibGraph(h), dim_, m_, ef_construction_, seed_, RngState(h), buffer);
  return Status::Ok();
}

namespace {

Status Corrupt(const std::string& what) { return Status::Corruption("hnsw index buffer: " + what); }

// The fields after the magic and the format version.
struct LoadHeader {
  uint32_t dim = 0, entry_point = 0, rng_size = 0;
  uint64_t count = 0, m = 0, ef_construction = 0, seed = 0;
  int32_t max_level = 0;
};

// Checks the magic, the format version and the checksum: the buffer
// without its checksum.
Result<std::string_view> CheckedBody(std::string_view buffer) {
  if (buffer.size() < sizeof(kMagic) || std::memcmp(buffer.data(), kMagic, sizeof(kMagic)) != 0) {
    return Corrupt("not a flowrag HNSW index (expected magic \"FLOWHNSW\")");
  }
  Reader reader(buffer);
  const char* skipped;
  FLOWRAG_RETURN_IF_ERROR(reader.Bytes(sizeof(kMagic), &skipped, "magic"));
  uint32_t version = 0;
  FLOWRAG_RETURN_IF_ERROR(reader.Read(&version, "format version"));
  if (version != HnswIndex::kFormatVersion) {
    return Corrupt("unsupported format version " + std::to_string(version) +
                   " (this build reads version " + std::to_string(HnswIndex::kFormatVersion) + ")");
  }
  if (buffer.size() < reader.pos() + sizeof(uint64_t)) {
    return Corrupt("truncated: " + std::to_string(buffer.size()) + " bytes");
  }
  uint64_t stored_checksum;
  std::memcpy(&stored_checksum, buffer.data() + buffer.size() - sizeof(uint64_t), sizeof(uint64_t));
  const std::string_view body = buffer.substr(0, buffer.size() - sizeof(uint64_t));
  if (vector_internal::Checksum64(body.data(), body.size()) != stored_checksum) {
    return Corrupt("checksum mismatch (" + std::to_string(buffer.size()) +
                   " bytes; truncated or modified)");
  }
  return body;
}

Result<LoadHeader> ReadLoadHeader(Reader* reader) {
  LoadHeader hd;
  FLOWRAG_RETURN_IF_ERROR(reader->Read(&hd.dim, "dim"));
  FLOWRAG_RETURN_IF_ERROR(reader->Read(&hd.count, "count"));
  FLOWRAG_RETURN_IF_ERROR(reader->Read(&hd.m, "M"));
  FLOWRAG_RETURN_IF_ERROR(reader->Read(&hd.ef_construction, "ef_construction"));
  FLOWRAG_RETURN_IF_ERROR(reader->Read(&hd.seed, "seed"));
  FLOWRAG_RETURN_IF_ERROR(reader->Read(&hd.max_level, "max level"));
  FLOWRAG_RETURN_IF_ERROR(reader->Read(&hd.entry_point, "entry point"));
  FLOWRAG_RETURN_IF_ERROR(reader->Read(&hd.rng_size, "level generator state size"));
  if (Status st = CheckOptions(hd.dim, hd.m, hd.ef_construction); !st.ok()) {
    return Corrupt("bad header: " + st.message());
  }
  if (hd.rng_size > kMaxRngStateBytes) {
    return Corrupt("level generator state of " + std::to_string(hd.rng_size) + " bytes");
  }
  return hd;
}

// Each vector's level, each in 0..kMaxLevel; the entry point must be a
// vector on the top level (none when there are no vectors).
Result<std::vector<int32_t>> ReadLevels(Reader* reader, const LoadHeader& hd) {
  const char* level_bytes;
  FLOWRAG_RETURN_IF_ERROR(reader->Bytes(hd.count * sizeof(int32_t), &level_bytes, "levels"));
  std::vector<int32_t> levels(hd.count);
  if (hd.count > 0) std::memcpy(levels.data(), level_bytes, hd.count * sizeof(int32_t));
  int32_t top_level = -1;
  for (size_t i = 0; i < hd.count; ++i) {
    if (levels[i] < 0 || levels[i] > kMaxLevel) {
      return Corrupt("vector " + std::to_string(i) + " has level " + std::to_string(levels[i]) +
                     ", expected 0.." + std::to_string(kMaxLevel));
    }
    top_level = std::max(top_level, levels[i]);
  }
  if (hd.count == 0 ? (hd.max_level != -1 || hd.entry_point != kNoEntryPoint)
                    : (hd.max_level != top_level || hd.entry_point >= hd.count ||
                       levels[hd.entry_point] != hd.max_level)) {
    return Corrupt("entry point " + std::to_string(hd.entry_point) + " at max level " +
                   std::to_string(hd.max_level) + " is inconsistent with the " +
                   std::to_string(hd.count) + " stored levels");
  }
  return levels;
}

// Nodes: vector, label and upper-level link storage. cur_element_count
// grows with them, so hnswlib's destructor frees exactly what was
// allocated.
Status CopyNodes(const char* vectors, size_t vector_bytes, const std::vector<int32_t>& levels,
                 Hnsw* hnsw) {
  Hnsw& h = *hnsw;
  const size_t count = levels.size();
  for (size_t i = 0; i < count; ++i) {
    const auto id = static_cast<tableint>(i);
    std::memset(h.data_level0_memory_ + i * h.size_data_per_element_, 0, h.size_data_per_element_);
    std::memcpy(h.getDataByInternalId(id), vectors + i * vector_bytes, vector_bytes);
    h.setExternalLabel(id, i);
    if (levels[i] > 0) {
      const size_t bytes = h.size_links_per_element_ * levels[i] + 1;
      h.linkLists_[i] = static_cast<char*>(std::malloc(bytes));
      if (h.linkLists_[i] == nullptr) {
        return Status::Internal("hnsw index Load: out of memory for links of vector " +
                                std::to_string(i));
      }
      std::memset(h.linkLists_[i], 0, bytes);
    }
    h.element_levels_[i] = levels[i];
    h.cur_element_count = i + 1;
  }
  try {
    h.label_lookup_.reserve(count);
    for (size_t i = 0; i < count; ++i) h.label_lookup_[i] = static_cast<tableint>(i);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("hnsw index Load: ") + e.what());
  }
  return Status::Ok();
}

// Links, validated as they are copied: at most the level's degree, each to
// another vector on that level.
Status CopyLinks(Reader* reader, const std::vector<int32_t>& levels, Hnsw* hnsw) {
  Hnsw& h = *hnsw;
  const size_t count = levels.size();
  for (size_t i = 0; i < count; ++i) {
    for (int32_t level = 0; level <= levels[i]; ++level) {
      uint32_t degree = 0;
      FLOWRAG_RETURN_IF_ERROR(reader->Read(&degree, "degree"));
      const size_t max_degree = level == 0 ? h.maxM0_ : h.maxM_;
      if (degree > max_degree) {
        return Corrupt("vector " + std::to_string(i) + " level " + std::to_string(level) +
                       " has degree " + std::to_string(degree) + ", at most " +
                       std::to_string(max_degree) + " allowed");
      }
      const char* link_bytes;
      FLOWRAG_RETURN_IF_ERROR(
          reader->Bytes(size_t{degree} * sizeof(tableint), &link_bytes, "neighbour ids"));
      linklistsizeint* list = h.get_linklist_at_level(static_cast<tableint>(i), level);
      auto* neighbours = reinterpret_cast<tableint*>(list + 1);
      for (uint32_t j = 0; j < degree; ++j) {
        tableint nb;
        std::memcpy(&nb, link_bytes + j * sizeof(tableint), sizeof(tableint));
        if (nb >= count || nb == i || levels[nb] < level) {
          return Corrupt("vector " + std::to_string(i) + " level " + std::to_string(level) +
                         " links to " + std::to_string(nb) +
                         ", which is not another vector on that level");
        }
        neighbours[j] = nb;
      }
      h.setListCount(list, static_cast<unsigned short>(degree));
    }
  }
  if (reader->remaining() != 0) {
    return Corrupt(std::to_string(reader->remaining()) + " unexpected bytes after the links");
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<HnswIndex>> HnswIndex::Load(std::string_view buffer) {
  FLOWRAG_ASSIGN_OR_RETURN(const std::string_view body, CheckedBody(buffer));
  Reader reader(body);
  const char* skipped;
  FLOWRAG_RETURN_IF_ERROR(reader.Bytes(sizeof(kMagic) + sizeof(uint32_t), &skipped, "header"));
  FLOWRAG_ASSIGN_OR_RETURN(const LoadHeader hd, ReadLoadHeader(&reader));
  const char* rng_bytes;
  FLOWRAG_RETURN_IF_ERROR(reader.Bytes(hd.rng_size, &rng_bytes, "level generator state"));
  const size_t vector_bytes = size_t{hd.dim} * sizeof(float);
  // Each vector takes vector_bytes + 4 (level) + 4 (degree) bytes at least;
  // checking this first bounds every allocation below by the buffer size.
  if (hd.count > reader.remaining() / (vector_bytes + 8)) {
    return Corrupt("count " + std::to_string(hd.count) + " does not fit in the " +
                   std::to_string(buffer.size()) + "-byte buffer");
  }
  const char* vectors;
  FLOWRAG_RETURN_IF_ERROR(reader.Bytes(hd.count * vector_bytes, &vectors, "vectors"));
  FLOWRAG_ASSIGN_OR_RETURN(const std::vector<int32_t> levels, ReadLevels(&reader, hd));

  VectorIndexOptions options;
  options.hnsw_m = hd.m;
  options.hnsw_ef_construction = hd.ef_construction;
  options.seed = hd.seed;
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<HnswIndex> index, Create(hd.dim, hd.count, options));
  Hnsw& h = *index->graph_->hnsw;
  FLOWRAG_RETURN_IF_ERROR(CopyNodes(vectors, vector_bytes, levels, &h));
  FLOWRAG_RETURN_IF_ERROR(CopyLinks(&reader, levels, &h));
  h.maxlevel_ = hd.max_level;
  h.enterpoint_node_ = hd.count == 0 ? kNoEntryPoint : hd.entry_point;

  std::istringstream rng(std::string(rng_bytes, hd.rng_size));
  rng >> h.level_generator_;
  if (rng.fail()) return Corrupt("unreadable level generator state");
  return index;
}

// ---- arrays out and back

struct HnswArraysIndex::Arrays {
  // The graph view (see HnswlibGraph).
  size_t size() const { return levels.size(); }
  int max_level() const { return top_level; }
  tableint entry_point() const { return entry; }
  size_t max_degree() const { return 2 * m; }
  int level(tableint id) const { return levels[id]; }
  const float* Vector(tableint id) const { return vectors.data() + size_t{id} * dim; }
  std::span<const tableint> Links(tableint id, int level) const {
    if (level == 0) {
      const uint32_t* list = level0.data() + size_t{id} * (2 * m + 1);
      return {list + 1, list[0]};
    }
    const uint64_t list = upper_nodes[id] + static_cast<uint64_t>(level) - 1;
    return {upper_targets.data() + upper_offsets[list],
            upper_offsets[list + 1] - upper_offsets[list]};
  }
  hnswlib::VisitedListPool* visited_pool() const { return pool.get(); }

  size_t dim = 0, m = 0;
  int top_level = -1;
  tableint entry = kNoEntryPoint;
  FlatArray<uint64_t> params;
  FlatArray<char> rng;
  FlatArray<float> vectors;
  FlatArray<uint8_t> levels;
  FlatArray<uint32_t> level0;
  FlatArray<uint64_t> upper_nodes;
  FlatArray<uint64_t> upper_offsets;
  FlatArray<uint32_t> upper_targets;
  std::unique_ptr<hnswlib::VisitedListPool> pool;
};

namespace {

// "<prefix>.hparams" u64[7]: dim, count, M, efConstruction, seed,
//                    max level + 1 (0 when empty), entry point
// "<prefix>.hrng"    char: the level generator's state (as in Save)
// "<prefix>.hvec"    f32 count × dim, id order
// "<prefix>.hlevel"  u8 count: each vector's level
// "<prefix>.hl0"     u32 count × (2M + 1): level-0 list of each vector,
//                    its degree then 2M slots (hnswlib's own layout)
// "<prefix>.hupn"    u64 count + 1: vector i's upper lists (levels 1..L)
//                    are lists hupn[i] .. hupn[i + 1] - 1
// "<prefix>.hupo"    u64 lists + 1: CSR offsets of those lists into
// "<prefix>.hupt"    u32: their neighbour ids
struct HnswArrayNames {
  std::string params, rng, vectors, levels, level0, upper_nodes, upper_offsets, upper_targets;
};

constexpr std::string_view kParams = ".hparams";
constexpr size_t kParamCount = 7;

Result<HnswArrayNames> HnswNamesFor(std::string_view prefix) {
  HnswArrayNames n;
  FLOWRAG_ASSIGN_OR_RETURN(n.params, vector_internal::ArrayName(prefix, kParams));
  FLOWRAG_ASSIGN_OR_RETURN(n.rng, vector_internal::ArrayName(prefix, ".hrng"));
  FLOWRAG_ASSIGN_OR_RETURN(n.vectors, vector_internal::ArrayName(prefix, ".hvec"));
  FLOWRAG_ASSIGN_OR_RETURN(n.levels, vector_internal::ArrayName(prefix, ".hlevel"));
  FLOWRAG_ASSIGN_OR_RETURN(n.level0, vector_internal::ArrayName(prefix, ".hl0"));
  FLOWRAG_ASSIGN_OR_RETURN(n.upper_nodes, vector_internal::ArrayName(prefix, ".hupn"));
  FLOWRAG_ASSIGN_OR_RETURN(n.upper_offsets, vector_internal::ArrayName(prefix, ".hupo"));
  FLOWRAG_ASSIGN_OR_RETURN(n.upper_targets, vector_internal::ArrayName(prefix, ".hupt"));
  return n;
}

// The arrays to put, however held.
struct HnswArraysOut {
  std::span<const uint64_t> params;
  std::span<const char> rng;
  std::span<const float> vectors;
  std::span<const uint8_t> levels;
  std::span<const uint32_t> level0;
  std::span<const uint64_t> upper_nodes, upper_offsets;
  std::span<const uint32_t> upper_targets;
};

Status PutArrays(ArraySink& sink, const HnswArrayNames& n, const HnswArraysOut& a) {
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint64_t>(n.params, a.params));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<char>(n.rng, a.rng));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<float>(n.vectors, a.vectors, /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint8_t>(n.levels, a.levels));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>(n.level0, a.level0, /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint64_t>(n.upper_nodes, a.upper_nodes, /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint64_t>(n.upper_offsets, a.upper_offsets, /*random=*/true));
  return sink.Put<uint32_t>(n.upper_targets, a.upper_targets, /*random=*/true);
}

// A graph view's arrays, owned (HnswIndex::ExportArrays).
struct FlattenedGraph {
  std::vector<uint64_t> params;
  std::vector<float> vectors;
  std::vector<uint8_t> levels;
  std::vector<uint32_t> level0;
  std::vector<uint64_t> upper_nodes{0}, upper_offsets{0};
  std::vector<uint32_t> upper_targets;
};

template <class G>
FlattenedGraph Flatten(const G& g, size_t dim, size_t m) {
  FlattenedGraph f;
  const size_t count = g.size(), stride = 2 * m + 1;
  f.vectors.resize(count * dim);
  f.levels.resize(count);
  f.level0.assign(count * stride, 0);
  f.upper_nodes.reserve(count + 1);
  for (size_t i = 0; i < count; ++i) {
    const auto id = static_cast<tableint>(i);
    std::memcpy(f.vectors.data() + i * dim, g.Vector(id), dim * sizeof(float));
    f.levels[i] = static_cast<uint8_t>(g.level(id));
    const std::span<const tableint> l0 = g.Links(id, 0);
    f.level0[i * stride] = static_cast<uint32_t>(l0.size());
    std::copy(l0.begin(), l0.end(), f.level0.begin() + static_cast<ptrdiff_t>(i * stride + 1));
    for (int level = 1; level <= g.level(id); ++level) {
      const std::span<const tableint> list = g.Links(id, level);
      f.upper_targets.insert(f.upper_targets.end(), list.begin(), list.end());
      f.upper_offsets.push_back(f.upper_targets.size());
    }
    f.upper_nodes.push_back(f.upper_offsets.size() - 1);
  }
  return f;
}

Status CorruptArray(const std::string& name, const std::string& what) {
  return vector_internal::CorruptArray(name, what);
}

// The parameters (names.params) into *a and the returned options.
Status AdoptParams(const ArraySource& source, const HnswArrayNames& n, HnswArraysIndex::Arrays* a,
                   size_t* count, VectorIndexOptions* options) {
  FLOWRAG_ASSIGN_OR_RETURN(a->params, vector_internal::GetArray<uint64_t>(source, n.params));
  if (a->params.size() != kParamCount) {
    return CorruptArray(n.params, std::to_string(a->params.size()) + " values, expected " +
                                      std::to_string(kParamCount));
  }
  const uint64_t dim = a->params[0], m = a->params[2], efc = a->params[3];
  if (Status st = CheckOptions(dim, m, efc); !st.ok()) return CorruptArray(n.params, st.message());
  if (dim > vector_internal::kMaxAdoptedDimension || a->params[1] > vector_internal::kMaxVectors ||
      a->params[5] > kMaxLevel + 1) {
    return CorruptArray(n.params, "dim " + std::to_string(dim) + ", count " +
                                      std::to_string(a->params[1]) + ", levels " +
                                      std::to_string(a->params[5]) + " out of range");
  }
  a->dim = dim;
  a->m = m;
  a->top_level = static_cast<int>(a->params[5]) - 1;
  a->entry = a->params[6] > kNoEntryPoint ? kNoEntryPoint - 1 : static_cast<tableint>(a->params[6]);
  *count = a->params[1];
  options->hnsw_m = m;
  options->hnsw_ef_construction = efc;
  options->seed = a->params[4];
  return Status::Ok();
}

// Levels, the maximum and the entry point.
Status AdoptLevels(const ArraySource& source, const HnswArrayNames& n, size_t count,
                   HnswArraysIndex::Arrays* a) {
  FLOWRAG_ASSIGN_OR_RETURN(a->levels, vector_internal::GetArray<uint8_t>(source, n.levels));
  if (a->levels.size() != count) {
    return CorruptArray(n.levels, std::to_string(a->levels.size()) + " levels for " +
                                      std::to_string(count) + " vectors");
  }
  int top = -1;
  for (size_t i = 0; i < count; ++i) {
    if (a->levels[i] > kMaxLevel) {
      return CorruptArray(
          n.levels, "vector " + std::to_string(i) + " at level " + std::to_string(a->levels[i]));
    }
    top = std::max(top, static_cast<int>(a->levels[i]));
  }
  const bool fits = count == 0
                        ? a->top_level == -1 && a->params[6] == kNoEntryPoint
                        : a->top_level == top && a->params[6] < count && a->levels[a->entry] == top;
  if (!fits) {
    return CorruptArray(n.params, "entry point " + std::to_string(a->params[6]) + " at level " +
                                      std::to_string(a->top_level) + " is not on the top level " +
                                      std::to_string(top) + " of " + std::to_string(count) +
                                      " vectors");
  }
  return Status::Ok();
}

// One neighbour of vector `i` on `level`: another vector on that level.
bool GoodNeighbour(const HnswArraysIndex::Arrays& a, size_t i, int level, uint32_t nb) {
  return nb < a.levels.size() && nb != i && a.levels[nb] >= level;
}

Status AdoptLevel0(const ArraySource& source, const HnswArrayNames& n, size_t count,
                   HnswArraysIndex::Arrays* a) {
  FLOWRAG_ASSIGN_OR_RETURN(a->level0, vector_internal::GetArray<uint32_t>(source, n.level0));
  const size_t stride = 2 * a->m + 1;
  if (a->level0.size() != count * stride) {
    return CorruptArray(n.level0, std::to_string(a->level0.size()) + " values for " +
                                      std::to_string(count) + " lists of " +
                                      std::to_string(stride));
  }
  for (size_t i = 0; i < count; ++i) {
    const uint32_t* list = a->level0.data() + i * stride;
    if (list[0] > 2 * a->m) {
      return CorruptArray(n.level0, "vector " + std::to_string(i) + " has degree " +
                                        std::to_string(list[0]) + ", at most " +
                                        std::to_string(2 * a->m));
    }
    for (uint32_t j = 1; j <= list[0]; ++j) {
      if (!GoodNeighbour(*a, i, 0, list[j])) {
        return CorruptArray(n.level0,
                            "vector " + std::to_string(i) + " links to " + std::to_string(list[j]));
      }
    }
  }
  return Status::Ok();
}

Status AdoptUpperLevels(const ArraySource& source, const HnswArrayNames& n, size_t count,
                        HnswArraysIndex::Arrays* a) {
  FLOWRAG_ASSIGN_OR_RETURN(a->upper_nodes,
                           vector_internal::GetArray<uint64_t>(source, n.upper_nodes));
  FLOWRAG_ASSIGN_OR_RETURN(a->upper_offsets,
                           vector_internal::GetArray<uint64_t>(source, n.upper_offsets));
  FLOWRAG_ASSIGN_OR_RETURN(a->upper_targets,
                           vector_internal::GetArray<uint32_t>(source, n.upper_targets));
  size_t lists = 0;  // one per vector and level above 0
  for (size_t i = 0; i < count; ++i) lists += a->levels[i];
  FLOWRAG_RETURN_IF_ERROR(
      vector_internal::CheckOffsets(n.upper_nodes, a->upper_nodes.span(), count, lists));
  if (a->upper_offsets.size() == lists + 1 && a->upper_offsets.back() != a->upper_targets.size()) {
    return CorruptArray(n.upper_targets, std::to_string(a->upper_targets.size()) +
                                             " ids, the offsets end at " +
                                             std::to_string(a->upper_offsets.back()));
  }
  FLOWRAG_RETURN_IF_ERROR(vector_internal::CheckOffsets(n.upper_offsets, a->upper_offsets.span(),
                                                        lists, a->upper_targets.size()));
  for (size_t i = 0; i < count; ++i) {
    if (a->upper_nodes[i + 1] - a->upper_nodes[i] != a->levels[i]) {
      return CorruptArray(n.upper_nodes,
                          "vector " + std::to_string(i) + " has " +
                              std::to_string(a->upper_nodes[i + 1] - a->upper_nodes[i]) +
                              " upper lists for level " + std::to_string(a->levels[i]));
    }
    for (int level = 1; level <= a->levels[i]; ++level) {
      const uint64_t list = a->upper_nodes[i] + static_cast<uint64_t>(level) - 1;
      if (a->upper_offsets[list + 1] - a->upper_offsets[list] > a->m) {
        return CorruptArray(n.upper_offsets, "vector " + std::to_string(i) + " level " +
                                                 std::to_string(level) + " has degree above " +
                                                 std::to_string(a->m));
      }
      for (uint64_t t = a->upper_offsets[list]; t < a->upper_offsets[list + 1]; ++t) {
        if (!GoodNeighbour(*a, i, level, a->upper_targets[t])) {
          return CorruptArray(n.upper_targets, "vector " + std::to_string(i) + " level " +
                                                   std::to_string(level) + " links to " +
                                                   std::to_string(a->upper_targets[t]));
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status HnswIndex::ExportArrays(ArraySink& sink, std::string_view prefix) const {
  FLOWRAG_ASSIGN_OR_RETURN(const HnswArrayNames names, HnswNamesFor(prefix));
  const Hnsw& h = *graph_->hnsw;
  const HnswlibGraph g(h);
  const size_t count = g.size();
  const FlattenedGraph f = Flatten(g, dim_, m_);
  const std::vector<uint64_t> params = {dim_,
                                        count,
                                        m_,
                                        ef_construction_,
                                        seed_,
                                        count == 0 ? 0 : uint64_t(g.max_level() + 1),
                                        count == 0 ? kNoEntryPoint : g.entry_point()};
  const std::string rng = RngState(h);
  return PutArrays(sink, names,
                   {params, rng, f.vectors, f.levels, f.level0, f.upper_nodes, f.upper_offsets,
                    f.upper_targets});
}

bool HnswIndex::HasArrays(const ArraySource& source, std::string_view prefix) {
  return source.Has(std::string(prefix) + std::string(kParams));
}

Result<std::unique_ptr<HnswArraysIndex>> HnswIndex::AdoptArrays(const ArraySource& source,
                                                                std::string_view prefix) {
  FLOWRAG_ASSIGN_OR_RETURN(const HnswArrayNames names, HnswNamesFor(prefix));
  auto a = std::make_unique<HnswArraysIndex::Arrays>();
  size_t count = 0;
  VectorIndexOptions options;
  FLOWRAG_RETURN_IF_ERROR(AdoptParams(source, names, a.get(), &count, &options));
  FLOWRAG_ASSIGN_OR_RETURN(a->rng, vector_internal::GetArray<char>(source, names.rng));
  if (a->rng.size() > kMaxRngStateBytes) {
    return CorruptArray(names.rng, std::to_string(a->rng.size()) + " bytes");
  }
  FLOWRAG_ASSIGN_OR_RETURN(a->vectors, vector_internal::GetArray<float>(source, names.vectors));
  if (a->vectors.size() != count * a->dim) {
    return CorruptArray(names.vectors, std::to_string(a->vectors.size()) + " floats for " +
                                           std::to_string(count) + " vectors of " +
                                           std::to_string(a->dim));
  }
  FLOWRAG_RETURN_IF_ERROR(AdoptLevels(source, names, count, a.get()));
  FLOWRAG_RETURN_IF_ERROR(AdoptLevel0(source, names, count, a.get()));
  FLOWRAG_RETURN_IF_ERROR(AdoptUpperLevels(source, names, count, a.get()));
  try {
    a->pool = std::make_unique<hnswlib::VisitedListPool>(1, static_cast<int>(count));
  } catch (const std::exception& e) {
    return Status::Internal(std::string("hnsw index AdoptArrays: ") + e.what());
  }
  const size_t dim = a->dim;
  return std::unique_ptr<HnswArraysIndex>(new HnswArraysIndex(
      dim, count, options.hnsw_m, options.hnsw_ef_construction, options.seed, std::move(a)));
}

HnswArraysIndex::HnswArraysIndex(size_t dim, size_t size, size_t m, size_t ef_construction,
                                 uint64_t seed, std::unique_ptr<Arrays> arrays)
    : dim_(dim),
      size_(size),
      m_(m),
      ef_construction_(ef_construction),
      seed_(seed),
      arrays_(std::move(arrays)) {}

HnswArraysIndex::~HnswArraysIndex() = default;

size_t HnswArraysIndex::MemoryBytes() const {
  const Arrays& a = *arrays_;
  return a.vectors.bytes() + a.levels.bytes() + a.level0.bytes() + a.upper_nodes.bytes() +
         a.upper_offsets.bytes() + a.upper_targets.bytes();
}

Status HnswArraysIndex::Add(const FloatMatrix&) {
  return Status::FailedPrecondition(
      "hnsw index adopted from arrays is read-only (ToHnswIndex() makes one to extend)");
}

std::vector<VectorHit> HnswArraysIndex::Search(const float* query, const VectorSearchParams& params,
                                               VectorSearchStats* stats) const {
  return SearchGraph(*arrays_, dim_, query, params, stats);
}

const float* HnswArraysIndex::Vector(uint32_t id) const { return arrays_->Vector(id); }

Status HnswArraysIndex::ExportArrays(ArraySink& sink, std::string_view prefix) const {
  FLOWRAG_ASSIGN_OR_RETURN(const HnswArrayNames names, HnswNamesFor(prefix));
  const Arrays& a = *arrays_;
  return PutArrays(sink, names,
                   {a.params, a.rng, a.vectors, a.levels, a.level0, a.upper_nodes, a.upper_offsets,
                    a.upper_targets});
}

Result<std::unique_ptr<HnswIndex>> HnswArraysIndex::ToHnswIndex() const {
  std::string bytes;
  WriteSaveFormat(*arrays_, dim_, m_, ef_construction_, seed_,
                  std::string(arrays_->rng.begin(), arrays_->rng.end()), &bytes);
  return HnswIndex::Load(bytes);
}

}  // namespace flowrag
