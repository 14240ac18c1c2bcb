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
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#define NO_MANUAL_VECTORIZATION
#include <hnswlib/hnswlib.h>
#undef NO_MANUAL_VECTORIZATION

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

// Scratch for scoring one adjacency list at a time.
struct ListScratch {
  explicit ListScratch(const Hnsw& h)
      : rows(std::max(h.maxM0_, h.maxM_)), ids(rows.size()), scores(rows.size()) {}
  std::vector<const float*> rows;
  std::vector<tableint> ids;
  std::vector<float> scores;
};

using Scored = std::pair<float, tableint>;

// 1. Greedy descent through the upper levels, as hnswlib's searchKnn: the
// node where level 0 starts and its score. Adds the vectors scored to
// *scored.
Scored GreedyDescent(const Hnsw& h, const float* query, size_t dim, ListScratch* s,
                     size_t* scored) {
  tableint current = h.enterpoint_node_;
  float current_score = DotProduct(query, VectorAt(h, current), dim);
  ++*scored;
  for (int level = h.maxlevel_; level > 0; --level) {
    bool changed = true;
    while (changed) {
      changed = false;
      const linklistsizeint* list = h.get_linklist(current, level);
      const size_t degree = h.getListCount(const_cast<linklistsizeint*>(list));
      const auto* neighbours = reinterpret_cast<const tableint*>(list + 1);
      for (size_t j = 0; j < degree; ++j) s->rows[j] = VectorAt(h, neighbours[j]);
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
std::vector<VectorHit> BeamSearch(const Hnsw& h, const float* query, size_t dim, size_t ef,
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

  VisitedLease lease(h.visited_list_pool_);
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

    const linklistsizeint* list = h.get_linklist0(node);
    const size_t degree = h.getListCount(const_cast<linklistsizeint*>(list));
    const auto* neighbours = reinterpret_cast<const tableint*>(list + 1);
    size_t fresh = 0;
    for (size_t j = 0; j < degree; ++j) {
      const tableint id = neighbours[j];
      if (visited[id] == tag) continue;
      visited[id] = tag;
      s->ids[fresh] = id;
      s->rows[fresh] = VectorAt(h, id);
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
  const Hnsw& h = *graph_->hnsw;
  const size_t n = h.cur_element_count;
  const size_t k = std::min(params.k, n);
  if (k == 0 || !vector_internal::AllFinite(query, dim_)) return {};
  const size_t ef = std::max(params.ef_search, k);
  ListScratch scratch(h);
  size_t scored = 0;
  const Scored entry = GreedyDescent(h, query, dim_, &scratch, &scored);
  std::vector<VectorHit> hits = BeamSearch(h, query, dim_, ef, params, entry, &scratch, &scored);
  std::sort(hits.begin(), hits.end(), vector_internal::HitBefore);
  if (hits.size() > k) hits.resize(k);
  if (stats != nullptr) stats->candidates_scored += scored;
  return vector_internal::DropBelow(std::move(hits), params.min_score);
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

Status HnswIndex::Save(std::string* buffer) const {
  const Hnsw& h = *graph_->hnsw;
  const size_t count = h.cur_element_count;
  std::ostringstream rng;
  rng << h.level_generator_;
  const std::string rng_state = rng.str();

  size_t links = 0;
  for (size_t i = 0; i < count; ++i) {
    for (int level = 0; level <= h.element_levels_[i]; ++level) {
      links += 1 + h.getListCount(h.get_linklist_at_level(static_cast<tableint>(i), level));
    }
  }
  std::string& out = *buffer;
  out.clear();
  out.reserve(64 + rng_state.size() + count * (dim_ + 1) * sizeof(float) +
              links * sizeof(uint32_t) + sizeof(uint64_t));

  out.append(kMagic, sizeof(kMagic));
  Append(&out, kFormatVersion);
  Append(&out, static_cast<uint32_t>(dim_));
  Append(&out, static_cast<uint64_t>(count));
  Append(&out, static_cast<uint64_t>(m_));
  Append(&out, static_cast<uint64_t>(ef_construction_));
  Append(&out, static_cast<uint64_t>(seed_));
  Append(&out, static_cast<int32_t>(count == 0 ? -1 : h.maxlevel_));
  Append(&out, static_cast<uint32_t>(count == 0 ? kNoEntryPoint : h.enterpoint_node_));
  Append(&out, static_cast<uint32_t>(rng_state.size()));
  out.append(rng_state);
  for (size_t i = 0; i < count; ++i) {
    out.append(h.getDataByInternalId(static_cast<tableint>(i)), dim_ * sizeof(float));
  }
  for (size_t i = 0; i < count; ++i) Append(&out, static_cast<int32_t>(h.element_levels_[i]));
  for (size_t i = 0; i < count; ++i) {
    for (int level = 0; level <= h.element_levels_[i]; ++level) {
      const linklistsizeint* list = h.get_linklist_at_level(static_cast<tableint>(i), level);
      const uint32_t degree = h.getListCount(const_cast<linklistsizeint*>(list));
      Append(&out, degree);
      out.append(reinterpret_cast<const char*>(list + 1), degree * sizeof(tableint));
    }
  }
  Append(&out, vector_internal::Checksum64(out.data(), out.size()));
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

}  // namespace flowrag
