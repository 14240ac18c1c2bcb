// LayeredIndex (layered_index.h): deletes and appended rows over a shared
// base index.
#include "vector/layered_index.h"

#include <algorithm>
#include <cstring>

#include "vector/dot_product.h"
#include "vector/hnsw_index.h"
#include "vector/index_util.h"
#include "vector/quantized.h"

namespace flowrag {

using vector_internal::ArrayName;
using vector_internal::CorruptArray;
using vector_internal::HitBefore;

const float* StoredVector(const VectorIndex& index, uint32_t id, float* scratch) {
  if (id >= index.Size()) return nullptr;
  if (const auto* flat = dynamic_cast<const FlatIndex*>(&index)) return flat->Row(id, scratch);
  if (const auto* hnsw = dynamic_cast<const HnswIndex*>(&index)) return hnsw->Vector(id);
  if (const auto* adopted = dynamic_cast<const HnswArraysIndex*>(&index))
    return adopted->Vector(id);
  if (const auto* layered = dynamic_cast<const LayeredIndex*>(&index)) {
    return layered->Vector(id, scratch);
  }
  return nullptr;
}

bool CopyStoredVector(const VectorIndex& index, uint32_t id, float* out) {
  const float* v = StoredVector(index, id, out);
  if (v != nullptr && v != out) std::memcpy(out, v, index.Dimension() * sizeof(float));
  return v != nullptr;
}

namespace {

// The rows of `rows` (n × d, row-major) as an exact index; null when n == 0.
Result<std::unique_ptr<FlatIndex>> FlatOf(FloatMatrix&& rows) {
  if (rows.rows == 0) return std::unique_ptr<FlatIndex>();
  return FlatIndex::FromMatrix(std::move(rows));
}

// Rows of `delta` (may be null) where keep(i), then `more` (may be null).
FloatMatrix DeltaRows(const FlatIndex* delta, size_t dim, const std::vector<bool>* removed,
                      size_t first_removed, const FloatMatrix* more) {
  size_t n = 0;
  const size_t have = delta == nullptr ? 0 : delta->Size();
  for (size_t i = 0; i < have; ++i) n += removed == nullptr || !(*removed)[first_removed + i];
  FloatMatrix out(n + (more == nullptr ? 0 : more->rows), dim);
  size_t r = 0;
  for (size_t i = 0; i < have; ++i) {
    if (removed != nullptr && (*removed)[first_removed + i]) continue;
    std::memcpy(out.row(r++), delta->FloatRow(static_cast<uint32_t>(i)), dim * sizeof(float));
  }
  if (more != nullptr && more->rows > 0) {
    std::memcpy(out.row(r), more->data.data(), more->rows * dim * sizeof(float));
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<LayeredIndex>> LayeredIndex::Over(std::shared_ptr<const VectorIndex> base) {
  if (base == nullptr) return Status::InvalidArgument("layered index: no base");
  std::vector<float> scratch(base->Dimension());
  if (base->Size() > 0 && StoredVector(*base, 0, scratch.data()) == nullptr) {
    return Status::InvalidArgument("layered index: a " + base->Kind() +
                                   " base does not hold its vectors");
  }
  if (dynamic_cast<const LayeredIndex*>(base.get()) != nullptr) {
    return Status::InvalidArgument("layered index: the base is itself layered (use Of)");
  }
  return std::unique_ptr<LayeredIndex>(new LayeredIndex(std::move(base)));
}

Result<std::unique_ptr<LayeredIndex>> LayeredIndex::Of(std::shared_ptr<const VectorIndex> index) {
  const auto* layered = dynamic_cast<const LayeredIndex*>(index.get());
  if (layered == nullptr) return Over(std::move(index));
  return layered->With(FloatMatrix(0, layered->Dimension()));
}

Result<std::unique_ptr<LayeredIndex>> LayeredIndex::Without(
    const std::vector<bool>& removed) const {
  if (removed.size() != Size()) {
    return Status::InvalidArgument("layered index: removal flags for " +
                                   std::to_string(removed.size()) + " ids, the index has " +
                                   std::to_string(Size()));
  }
  auto out = std::unique_ptr<LayeredIndex>(new LayeredIndex(base_));
  // The base rows deleted before and now, ascending (a merge of two sorted lists).
  std::vector<uint32_t> now;
  const auto live = static_cast<uint32_t>(live_base());
  for (uint32_t id = 0; id < live; ++id) {
    if (removed[id]) now.push_back(BaseRow(id));
  }
  out->deleted_.resize(deleted_.size() + now.size());
  std::merge(deleted_.begin(), deleted_.end(), now.begin(), now.end(), out->deleted_.begin());
  FLOWRAG_ASSIGN_OR_RETURN(out->delta_,
                           FlatOf(DeltaRows(delta_.get(), Dimension(), &removed, live, nullptr)));
  return out;
}

Result<std::unique_ptr<LayeredIndex>> LayeredIndex::With(const FloatMatrix& rows) const {
  if (rows.rows > 0) {
    FLOWRAG_RETURN_IF_ERROR(vector_internal::ValidateRows(rows, Dimension(), Size()));
  }
  auto out = std::unique_ptr<LayeredIndex>(new LayeredIndex(base_));
  out->deleted_ = deleted_;
  FLOWRAG_ASSIGN_OR_RETURN(out->delta_,
                           FlatOf(DeltaRows(delta_.get(), Dimension(), nullptr, 0, &rows)));
  return out;
}

Status LayeredIndex::Add(const FloatMatrix& rows) {
  if (rows.rows == 0) return Status::Ok();
  FLOWRAG_RETURN_IF_ERROR(vector_internal::ValidateRows(rows, Dimension(), Size()));
  if (delta_ == nullptr) delta_ = std::make_unique<FlatIndex>(Dimension(), rows.rows);
  codes_ = std::make_unique<AppendedCodes>();
  return delta_->Add(rows);
}

const LayeredIndex::AppendedCodes& LayeredIndex::Codes() const {
  std::call_once(codes_->once, [this] {
    const size_t d = Dimension(), n = delta_->Size();
    codes_->codes.resize(n * d);
    codes_->scales.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      codes_->scales[i] = vector_internal::EncodeInt8PerVector(delta_->FloatRow(i), d,
                                                               codes_->codes.data() + i * d, 1);
    }
  });
  return *codes_;
}

uint32_t LayeredIndex::BaseRow(uint32_t id) const {
  // deleted_[j] - j is non-decreasing; the row is id + (the number of j
  // with deleted_[j] - j <= id).
  size_t lo = 0, hi = deleted_.size();
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (deleted_[mid] - mid <= id) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return static_cast<uint32_t>(id + lo);
}

uint32_t LayeredIndex::IdOfBaseRow(uint32_t row) const {
  const auto before = std::lower_bound(deleted_.begin(), deleted_.end(), row) - deleted_.begin();
  return static_cast<uint32_t>(row - before);
}

bool LayeredIndex::IsDeleted(uint32_t row) const {
  return std::binary_search(deleted_.begin(), deleted_.end(), row);
}

const float* LayeredIndex::Vector(uint32_t id, float* scratch) const {
  if (id >= Size()) return nullptr;
  const auto live = static_cast<uint32_t>(live_base());
  if (id < live) return StoredVector(*base_, BaseRow(id), scratch);
  return delta_->FloatRow(id - live);
}

FloatMatrix LayeredIndex::Vectors() const {
  FloatMatrix m(Size(), Dimension());
  for (uint32_t id = 0; id < m.rows; ++id) CopyStoredVector(*this, id, m.row(id));
  return m;
}

size_t LayeredIndex::MemoryBytes() const {
  return deleted_.capacity() * sizeof(uint32_t) + (delta_ == nullptr ? 0 : delta_->MemoryBytes());
}

std::vector<VectorHit> LayeredIndex::SearchBase(const float* query,
                                                const VectorSearchParams& params,
                                                VectorSearchStats* stats) const {
  if (live_base() == 0) return {};
  VectorSearchParams p = params;
  if (!deleted_.empty() || params.filter) {
    p.filter = [this, &params](uint32_t row) {
      if (IsDeleted(row)) return false;
      return !params.filter || params.filter(IdOfBaseRow(row));
    };
  }
  std::vector<VectorHit> hits = base_->Search(query, p, stats);
  if (!deleted_.empty()) {
    for (VectorHit& h : hits) h.id = IdOfBaseRow(h.id);
  }
  return hits;
}

std::vector<VectorHit> LayeredIndex::SearchAppended(const float* query,
                                                    const VectorSearchParams& params,
                                                    VectorSearchStats* stats) const {
  if (delta_ == nullptr) return {};
  const auto live = static_cast<uint32_t>(live_base());
  if (const auto* flat = dynamic_cast<const FlatIndex*>(base_.get()); flat != nullptr && flat->exact()) {
    VectorSearchParams p = params;
    if (params.filter) {
      p.filter = [live, &params](uint32_t row) { return params.filter(live + row); };
    }
    std::vector<VectorHit> hits = delta_->Search(query, p, stats);
    for (VectorHit& h : hits) h.id += live;
    return hits;
  }
  // Scored with the kernel an HNSW index scores its nodes with and an int8
  // flat index rescores its candidates with (a float flat index's
  // sparse-query path sums in another order), so a hit's score is the one
  // the base's kind gives (an int8 base's codes when it is asked for
  // approximate scores).
  if (!vector_internal::AllFinite(query, Dimension())) return {};
  std::vector<const float*> rows;
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < delta_->Size(); ++i) {
    if (params.filter && !params.filter(live + i)) continue;
    rows.push_back(delta_->FloatRow(i));
    ids.push_back(live + i);
  }
  std::vector<float> scores(rows.size());
  std::vector<uint32_t> dims;  // the query's non-zeros, for approximate scores
  if (!params.exact_scores && dynamic_cast<const FlatIndex*>(base_.get()) != nullptr) {
    for (uint32_t d = 0; d < Dimension(); ++d) {
      if (query[d] != 0.0f) dims.push_back(d);
    }
  }
  if (!dims.empty() && dims.size() * FlatIndex::kSparseFraction <= Dimension()) {
    // The int8 base's approximate scores (its sparse-query path), from the
    // rows encoded as a rebuild would encode them.
    const AppendedCodes& c = Codes();
    for (size_t i = 0; i < rows.size(); ++i) {
      const size_t row = ids[i] - live;
      scores[i] = FlatIndex::Int8Score(query, dims, c.scales[row],
                                       c.codes.data() + row * Dimension(), 1);
    }
  } else {
    vector_internal::DotProductGather(query, rows.data(), rows.size(), Dimension(),
                                      scores.data());
  }
  if (stats != nullptr) stats->candidates_scored += rows.size();
  vector_internal::TopK top(params.k);
  for (size_t i = 0; i < rows.size(); ++i) top.Push(ids[i], scores[i]);
  return vector_internal::DropBelow(top.Take(), params.min_score);
}

std::vector<VectorHit> LayeredIndex::Search(const float* query, const VectorSearchParams& params,
                                            VectorSearchStats* stats) const {
  std::vector<VectorHit> hits = SearchBase(query, params, stats);
  if (delta_ == nullptr) return hits;
  std::vector<VectorHit> appended = SearchAppended(query, params, stats);
  std::vector<VectorHit> merged(hits.size() + appended.size());
  std::merge(hits.begin(), hits.end(), appended.begin(), appended.end(), merged.begin(), HitBefore);
  if (merged.size() > params.k) merged.resize(params.k);
  return merged;
}

Status LayeredIndex::ExportEdits(ArraySink& sink, std::string_view prefix) const {
  FLOWRAG_ASSIGN_OR_RETURN(std::string del, ArrayName(prefix, ".del"));
  FLOWRAG_ASSIGN_OR_RETURN(std::string add, ArrayName(prefix, ".add"));
  FLOWRAG_ASSIGN_OR_RETURN(std::string longest, ArrayName(add, ".columns"));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>(del, deleted_));
  if (delta_ != nullptr) FLOWRAG_RETURN_IF_ERROR(delta_->ExportArrays(sink, add));
  return Status::Ok();
}

bool LayeredIndex::HasEdits(const ArraySource& source, std::string_view prefix) {
  return source.Has(std::string(prefix) + ".del");
}

Result<std::unique_ptr<LayeredIndex>> LayeredIndex::AdoptEdits(
    std::shared_ptr<const VectorIndex> base, const ArraySource& source, std::string_view prefix) {
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<LayeredIndex> out, Over(std::move(base)));
  FLOWRAG_ASSIGN_OR_RETURN(std::string del, ArrayName(prefix, ".del"));
  FLOWRAG_ASSIGN_OR_RETURN(std::string add, ArrayName(prefix, ".add"));
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<uint32_t> deleted,
                           vector_internal::GetArray<uint32_t>(source, del));
  const size_t n = out->base_->Size();
  for (size_t i = 0; i < deleted.size(); ++i) {
    if (deleted[i] >= n) return CorruptArray(del, "a deleted row lies outside the base");
    if (i > 0 && deleted[i] <= deleted[i - 1]) {
      return CorruptArray(del, "the deleted rows are not ascending");
    }
  }
  out->deleted_.assign(deleted.begin(), deleted.end());
  if (FlatIndex::HasArrays(source, add)) {
    FLOWRAG_ASSIGN_OR_RETURN(out->delta_, FlatIndex::AdoptArrays(source, add));
    if (out->delta_->Dimension() != out->Dimension()) {
      return CorruptArray(add, "the appended rows' dimension is not the base's");
    }
    if (out->Size() > vector_internal::kMaxVectors) {
      return CorruptArray(add, "too many appended rows");
    }
  }
  return out;
}

}  // namespace flowrag
