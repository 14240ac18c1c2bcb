#include "vector/sparse_index.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "vector/index_util.h"

namespace flowrag {
namespace {

// Counts per dimension → CSR offsets (counts[d] becomes offsets[d + 1]).
void PrefixSums(std::vector<uint64_t>* offsets) {
  for (size_t d = 1; d < offsets->size(); ++d) (*offsets)[d] += (*offsets)[d - 1];
}

}  // namespace

Status ValidateSparseRows(const SparseRows& rows) {
  FLOWRAG_RETURN_IF_ERROR(rows.VerifyAll());  // lazily adopted rows: their bytes first
  if (rows.offsets.empty() || rows.offsets[0] != 0 || rows.offsets.back() != rows.dims.size() ||
      rows.dims.size() != rows.values.size() ||
      !std::is_sorted(rows.offsets.begin(), rows.offsets.end())) {
    return Status::InvalidArgument("sparse rows: offsets do not span the arrays");
  }
  if (rows.rows() > vector_internal::kMaxVectors) {
    return Status::InvalidArgument("sparse index: more than " +
                                   std::to_string(vector_internal::kMaxVectors) + " vectors");
  }
  for (size_t r = 0; r < rows.rows(); ++r) {
    for (uint64_t i = rows.offsets[r]; i < rows.offsets[r + 1]; ++i) {
      if (rows.dims[i] >= rows.cols || !std::isfinite(rows.values[i]) ||
          (i > rows.offsets[r] && rows.dims[i - 1] >= rows.dims[i])) {
        return Status::InvalidArgument("sparse rows: row " + std::to_string(r) + ": dimension " +
                                       std::to_string(rows.dims[i]) + " of " +
                                       std::to_string(rows.cols) +
                                       " out of range or order, or a non-finite value");
      }
    }
  }
  return Status::Ok();
}

double Density(const FloatMatrix& m) {
  if (m.data.empty()) return 0.0;
  size_t nz = 0;
  for (float v : m.data) nz += v != 0.0f;
  return static_cast<double>(nz) / static_cast<double>(m.data.size());
}

namespace {

// Entries a posting takes when its id is `gap` past the previous posting of
// its list (past 0 for the first): the skips, then itself.
inline uint64_t EntriesFor(uint32_t gap) { return 1 + gap / SparseIndex::kSkip; }

}  // namespace

SparseIndex::TwoPassBuilder::TwoPassBuilder(size_t dim)
    : dim_(dim), offsets_(dim + 1, 0), last_(dim, 0) {}

namespace {

Status CheckRow(size_t row, size_t dim, std::span<const uint32_t> dims,
                std::span<const float> values) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= dim || (i > 0 && dims[i - 1] >= dims[i]) ||
        (!values.empty() && !std::isfinite(values[i]))) {
      return Status::InvalidArgument("sparse rows: row " + std::to_string(row) + ": dimension " +
                                     std::to_string(dims[i]) + " of " + std::to_string(dim) +
                                     " out of range or order, or a non-finite value");
    }
  }
  return Status::Ok();
}

}  // namespace

Status SparseIndex::TwoPassBuilder::CountRow(std::span<const uint32_t> dims) {
  if (filling_) return Status::Internal("sparse index builder: CountRow after FillRow");
  if (counted_ >= vector_internal::kMaxVectors) {
    return Status::InvalidArgument("sparse index: more than " +
                                   std::to_string(vector_internal::kMaxVectors) + " vectors");
  }
  FLOWRAG_RETURN_IF_ERROR(CheckRow(counted_, dim_, dims, {}));
  const auto r = static_cast<uint32_t>(counted_++);
  for (uint32_t d : dims) {
    offsets_[d + 1] += EntriesFor(r - last_[d]);
    last_[d] = r;
  }
  nonzeros_ += dims.size();
  return Status::Ok();
}

Status SparseIndex::TwoPassBuilder::StartFilling() {
  filling_ = true;
  PrefixSums(&offsets_);
  deltas_.resize(offsets_.back());
  values_.resize(offsets_.back());
  next_.assign(offsets_.begin(), offsets_.end() - 1);
  std::fill(last_.begin(), last_.end(), 0);
  return Status::Ok();
}

Status SparseIndex::TwoPassBuilder::FillRow(std::span<const uint32_t> dims,
                                            std::span<const float> values) {
  if (!filling_) FLOWRAG_RETURN_IF_ERROR(StartFilling());
  if (dims.size() != values.size()) {
    return Status::InvalidArgument("sparse rows: row " + std::to_string(filled_) +
                                   ": dimensions and values differ in number");
  }
  FLOWRAG_RETURN_IF_ERROR(CheckRow(filled_, dim_, dims, values));
  if (filled_ >= counted_) {
    return Status::Internal("sparse index builder: more rows filled than counted");
  }
  const auto r = static_cast<uint32_t>(filled_++);
  for (size_t i = 0; i < dims.size(); ++i) {
    const uint32_t d = dims[i];
    uint32_t gap = r - last_[d];
    if (next_[d] + EntriesFor(gap) > offsets_[d + 1]) {
      return Status::Internal("sparse index builder: row " + std::to_string(r) +
                              " differs between the two passes");
    }
    for (; gap >= kSkip; gap -= kSkip) {
      deltas_[next_[d]] = kSkip;
      values_[next_[d]++] = 0.0f;
    }
    deltas_[next_[d]] = static_cast<uint16_t>(gap);
    values_[next_[d]++] = values[i];
    last_[d] = r;
  }
  return Status::Ok();
}

Result<std::unique_ptr<SparseIndex>> SparseIndex::TwoPassBuilder::Finish() {
  if (!filling_) FLOWRAG_RETURN_IF_ERROR(StartFilling());
  for (size_t d = 0; d < dim_; ++d) {
    if (filled_ != counted_ || next_[d] != offsets_[d + 1]) {
      return Status::Internal(
          "sparse index builder: the second pass's rows differ from the first's");
    }
  }
  return Of(dim_, counted_, nonzeros_, std::move(offsets_), std::move(deltas_), std::move(values_));
}

std::unique_ptr<SparseIndex> SparseIndex::Of(size_t dim, size_t size, size_t nonzeros,
                                             FlatArray<uint64_t> offsets,
                                             FlatArray<uint16_t> deltas, FlatArray<float> values) {
  auto index = std::make_unique<SparseIndex>(dim);
  index->size_ = size;
  index->nonzeros_ = nonzeros;
  index->offsets_ = std::move(offsets);
  index->deltas_ = std::move(deltas);
  index->values_ = std::move(values);
  return index;
}

Result<std::unique_ptr<SparseIndex>> SparseIndex::FromRows(const SparseRows& rows) {
  if (rows.cols == 0) return Status::InvalidArgument("sparse index: dim must be > 0");
  FLOWRAG_RETURN_IF_ERROR(ValidateSparseRows(rows));
  TwoPassBuilder builder(rows.cols);
  auto dims_of = [&](size_t r) {
    return rows.dims.span().subspan(rows.offsets[r], rows.RowNonZeros(r));
  };
  for (size_t r = 0; r < rows.rows(); ++r) FLOWRAG_RETURN_IF_ERROR(builder.CountRow(dims_of(r)));
  for (size_t r = 0; r < rows.rows(); ++r) {
    FLOWRAG_RETURN_IF_ERROR(builder.FillRow(
        dims_of(r), rows.values.span().subspan(rows.offsets[r], rows.RowNonZeros(r))));
  }
  return builder.Finish();
}

namespace {

// The names of an index's arrays: "<prefix>.dim" etc. (ExportArrays), or,
// for FromArrays, words for its messages.
struct ArrayNames {
  std::string dim, size, off, delta, vals;
};

Result<ArrayNames> NamesFor(std::string_view prefix) {
  ArrayNames names;
  FLOWRAG_ASSIGN_OR_RETURN(names.delta, vector_internal::ArrayName(prefix, ".delta"));  // longest
  names.dim = std::string(prefix) + ".dim";
  names.size = std::string(prefix) + ".size";
  names.off = std::string(prefix) + ".off";
  names.vals = std::string(prefix) + ".vals";
  return names;
}

// The lists' meaning: offsets spanning the entries of `dim` lists, as many
// values as deltas, each list's ids strictly ascending and < size, values
// finite. Sets *nonzeros. Corruption naming the array. O(entries + dim).
Status CheckLists(size_t dim, size_t size, std::span<const uint64_t> offsets,
                  std::span<const uint16_t> deltas, std::span<const float> values,
                  const ArrayNames& names, size_t* nonzeros) {
  using vector_internal::CorruptArray;
  FLOWRAG_RETURN_IF_ERROR(vector_internal::CheckOffsets(names.off, offsets, dim, deltas.size()));
  if (values.size() != deltas.size()) {
    return CorruptArray(names.vals, std::to_string(values.size()) + " values for " +
                                        std::to_string(deltas.size()) + " entries");
  }
  *nonzeros = 0;
  for (size_t d = 0; d < dim; ++d) {
    uint64_t id = 0, last = 0;
    bool first = true;
    for (uint64_t i = offsets[d]; i < offsets[d + 1]; ++i) {
      id += deltas[i];
      if (deltas[i] == SparseIndex::kSkip) continue;
      if (id >= size || (!first && id <= last)) {
        return CorruptArray(names.delta, "entry " + std::to_string(i) + " of dimension " +
                                             std::to_string(d) + ": id " + std::to_string(id) +
                                             " out of range or order (" + std::to_string(size) +
                                             " vectors)");
      }
      if (!std::isfinite(values[i])) {
        return CorruptArray(names.vals, "entry " + std::to_string(i) + " of dimension " +
                                            std::to_string(d) + " is not finite");
      }
      first = false;
      last = id;
      ++*nonzeros;
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<SparseIndex>> SparseIndex::FromArrays(size_t dim, size_t size,
                                                             std::vector<uint64_t> offsets,
                                                             std::vector<uint16_t> deltas,
                                                             std::vector<float> values) {
  auto bad = [](const std::string& what) {
    return Status::Corruption("sparse index arrays: " + what);
  };
  if (dim == 0 || offsets.size() != dim + 1) {
    return bad("expected " + std::to_string(dim + 1) + " offsets");
  }
  if (size > vector_internal::kMaxVectors) return bad("size " + std::to_string(size));
  ArrayNames names;
  names.off = "sparse index arrays: offsets";
  names.delta = "sparse index arrays: deltas";
  names.vals = "sparse index arrays: values";
  size_t nonzeros = 0;
  FLOWRAG_RETURN_IF_ERROR(CheckLists(dim, size, offsets, deltas, values, names, &nonzeros));
  return Of(dim, size, nonzeros, std::move(offsets), std::move(deltas), std::move(values));
}

Status SparseIndex::ExportArrays(ArraySink& sink, std::string_view prefix) const {
  FLOWRAG_ASSIGN_OR_RETURN(const ArrayNames names, NamesFor(prefix));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<uint64_t>(names.dim, dim_));
  FLOWRAG_RETURN_IF_ERROR(VerifyLists());
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<uint64_t>(names.size, size_));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint64_t>(names.off, offsets_.span(), /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint16_t>(names.delta, deltas_.span()));
  return sink.Put<float>(names.vals, values_.span());
}

Result<std::unique_ptr<SparseIndex>> SparseIndex::AdoptArrays(const ArraySource& source,
                                                              std::string_view prefix) {
  FLOWRAG_ASSIGN_OR_RETURN(const ArrayNames names, NamesFor(prefix));
  FLOWRAG_ASSIGN_OR_RETURN(const uint64_t dim,
                           vector_internal::GetScalar<uint64_t>(source, names.dim));
  FLOWRAG_ASSIGN_OR_RETURN(const uint64_t size,
                           vector_internal::GetScalar<uint64_t>(source, names.size));
  if (dim == 0 || dim > vector_internal::kMaxAdoptedDimension) {
    return vector_internal::CorruptArray(names.dim, std::to_string(dim) + " dimensions");
  }
  if (size > vector_internal::kMaxVectors) {
    return vector_internal::CorruptArray(names.size, std::to_string(size) + " vectors");
  }
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<uint64_t> offsets,
                           vector_internal::GetArray<uint64_t>(source, names.off));
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<uint16_t> deltas,
                           vector_internal::GetArray<uint16_t>(source, names.delta, /*lazily=*/true));
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<float> values,
                           vector_internal::GetArray<float>(source, names.vals, /*lazily=*/true));
  if (!deltas.lazy() || !values.lazy()) {  // verified: check every list now
    FLOWRAG_RETURN_IF_ERROR(deltas.VerifyAll());
    FLOWRAG_RETURN_IF_ERROR(values.VerifyAll());
    size_t nonzeros = 0;
    FLOWRAG_RETURN_IF_ERROR(CheckLists(dim, size, offsets, deltas, values, names, &nonzeros));
    return Of(dim, size, nonzeros, std::move(offsets), std::move(deltas), std::move(values));
  }
  // Lazily: the offsets now, each list at its first read (CheckList).
  FLOWRAG_RETURN_IF_ERROR(vector_internal::CheckOffsets(names.off, offsets, dim, deltas.size()));
  if (values.size() != deltas.size()) {
    return vector_internal::CorruptArray(names.vals, std::to_string(values.size()) +
                                                         " values for " +
                                                         std::to_string(deltas.size()) + " entries");
  }
  // Non-zeros: the entries, skips included (NonZeros(): counting postings
  // would read every list).
  const size_t entries = deltas.size();
  std::unique_ptr<SparseIndex> index =
      Of(dim, size, entries, std::move(offsets), std::move(deltas), std::move(values));
  index->lists_ = std::make_shared<const CheckedOnce>(dim);
  index->list_names_ = names.delta;
  return index;
}

std::vector<std::string> SparseIndex::LazyArrays(std::string_view prefix) {
  return {std::string(prefix) + ".delta", std::string(prefix) + ".vals"};
}

bool SparseIndex::ListChecked(size_t d) const {
  return lists_->Passed(
      d, [&] { return CheckList(d); }, [&](const Status& s) { deltas_.ReportDamage(s); });
}

Status SparseIndex::CheckList(size_t d) const {
  const uint64_t first = offsets_[d], count = offsets_[d + 1] - first;
  FLOWRAG_RETURN_IF_ERROR(deltas_.Verify(first, count));
  FLOWRAG_RETURN_IF_ERROR(values_.Verify(first, count));
  uint64_t id = 0, last = 0;
  bool any = false;
  for (uint64_t i = first; i < first + count; ++i) {
    id += deltas_[i];
    if (deltas_[i] == kSkip) continue;
    if (id >= size_ || (any && id <= last) || !std::isfinite(values_[i])) {
      return vector_internal::CorruptArray(
          list_names_, "entry " + std::to_string(i) + " of dimension " + std::to_string(d) +
                           ": id " + std::to_string(id) + " out of range or order (" +
                           std::to_string(size_) + " vectors), or its value not finite");
    }
    any = true;
    last = id;
  }
  return Status::Ok();
}

Status SparseIndex::VerifyLists() const {
  if (lists_ == nullptr) return Status::Ok();
  for (size_t d = 0; d < dim_; ++d) {
    if (!ListChecked(d)) return CheckList(d);
  }
  return Status::Ok();
}

namespace {

// Appends posting (id, v) to a list whose last posting is *last (0 before
// the first): its id gap, bridged by skip entries.
void PushPosting(uint32_t id, float v, uint32_t* last, std::vector<uint16_t>* deltas,
                 std::vector<float>* values) {
  uint32_t gap = id - *last;
  for (; gap >= SparseIndex::kSkip; gap -= SparseIndex::kSkip) {
    deltas->push_back(SparseIndex::kSkip);
    values->push_back(0.0f);
  }
  deltas->push_back(static_cast<uint16_t>(gap));
  values->push_back(v);
  *last = id;
}

// How many of old's vectors `old_of_new` keeps in place, when it keeps a
// prefix of them and then only takes fresh rows (an insert's graph texts);
// nullopt for any other remapping.
std::optional<size_t> KeptPrefix(std::span<const int64_t> old_of_new, size_t old_size) {
  size_t kept = 0;
  while (kept < old_of_new.size() && kept < old_size &&
         old_of_new[kept] == static_cast<int64_t>(kept)) {
    ++kept;
  }
  for (size_t i = kept; i < old_of_new.size(); ++i) {
    if (old_of_new[i] >= 0) return std::nullopt;
  }
  return kept;
}

}  // namespace

std::unique_ptr<SparseIndex> SparseIndex::KeepPrefixAndAppend(const SparseIndex& old,
                                                              size_t kept,
                                                              const SparseIndex& fresh) {
  auto index = std::make_unique<SparseIndex>(old.dim_);
  index->size_ = kept + fresh.size_;
  std::vector<uint64_t> offsets(old.dim_ + 1, 0);
  std::vector<uint16_t> deltas;
  std::vector<float> values;
  deltas.reserve(old.deltas_.size() + fresh.deltas_.size());
  values.reserve(old.values_.size() + fresh.values_.size());
  for (size_t d = 0; d < old.dim_; ++d) {
    // Old's entries up to its last posting below `kept`, as they are.
    uint32_t id = 0, last = 0;
    uint64_t end = old.offsets_[d];
    const uint64_t stop = old.ListReadable(d) ? old.offsets_[d + 1] : end;  // damaged: empty
    for (uint64_t i = old.offsets_[d]; i < stop; ++i) {
      id += old.deltas_[i];
      if (id >= kept) break;
      if (old.deltas_[i] != kSkip) {
        end = i + 1;
        last = id;
        ++index->nonzeros_;
      }
    }
    const uint64_t begin = old.offsets_[d];
    deltas.insert(deltas.end(), old.deltas_.begin() + begin, old.deltas_.begin() + end);
    values.insert(values.end(), old.values_.begin() + begin, old.values_.begin() + end);
    fresh.ForEachPosting(d, [&](uint32_t fresh_id, float v) {
      PushPosting(static_cast<uint32_t>(kept) + fresh_id, v, &last, &deltas, &values);
      ++index->nonzeros_;
    });
    offsets[d + 1] = deltas.size();
  }
  index->offsets_ = std::move(offsets);
  index->deltas_ = std::move(deltas);
  index->values_ = std::move(values);
  return index;
}

Result<std::unique_ptr<SparseIndex>> SparseIndex::Remap(const SparseIndex& old,
                                                        std::span<const int64_t> old_of_new,
                                                        const SparseRows& fresh) {
  // The new ids of each old vector (CSR: an old vector may be kept more than
  // once, e.g. two entities of the same name), and of each fresh row.
  std::vector<uint32_t> new_begin(old.size_ + 1, 0), new_ids;
  std::vector<uint32_t> fresh_ids;
  for (size_t i = 0; i < old_of_new.size(); ++i) {
    const int64_t o = old_of_new[i];
    if (o < 0) {
      fresh_ids.push_back(static_cast<uint32_t>(i));
    } else if (static_cast<uint64_t>(o) >= old.size_) {
      return Status::InvalidArgument("sparse index remap: vector " + std::to_string(i) +
                                     " refers to old vector " + std::to_string(o));
    } else {
      ++new_begin[o + 1];
    }
  }
  if (fresh_ids.size() != fresh.rows() || (fresh.rows() > 0 && fresh.cols != old.dim_)) {
    return Status::InvalidArgument("sparse index remap: " + std::to_string(fresh.rows()) +
                                   " fresh rows of " + std::to_string(fresh.cols) +
                                   " dimensions for " + std::to_string(fresh_ids.size()) +
                                   " new vectors of " + std::to_string(old.dim_));
  }
  FLOWRAG_RETURN_IF_ERROR(ValidateSparseRows(fresh));
  SparseIndex fresh_lists(old.dim_);
  if (fresh.rows() > 0) {
    FLOWRAG_ASSIGN_OR_RETURN(auto built, FromRows(fresh));
    fresh_lists = std::move(*built);
  }
  if (std::optional<size_t> kept = KeptPrefix(old_of_new, old.size_)) {
    return KeepPrefixAndAppend(old, *kept, fresh_lists);
  }
  for (size_t o = 0; o < old.size_; ++o) new_begin[o + 1] += new_begin[o];
  new_ids.resize(new_begin.back());
  {
    std::vector<uint32_t> next(new_begin.begin(), new_begin.end() - 1);
    for (size_t i = 0; i < old_of_new.size(); ++i) {
      if (old_of_new[i] >= 0) new_ids[next[old_of_new[i]]++] = static_cast<uint32_t>(i);
    }
  }
  auto index = std::make_unique<SparseIndex>(old.dim_);
  index->size_ = old_of_new.size();
  std::vector<uint64_t> offsets(old.dim_ + 1, 0);
  std::vector<uint16_t> deltas;
  std::vector<float> values;
  deltas.reserve(old.deltas_.size() + fresh_lists.deltas_.size());
  values.reserve(old.values_.size() + fresh_lists.values_.size());
  std::vector<std::pair<uint32_t, float>> list;
  for (size_t d = 0; d < old.dim_; ++d) {
    list.clear();
    old.ForEachPosting(d, [&](uint32_t id, float v) {
      for (uint32_t k = new_begin[id]; k < new_begin[id + 1]; ++k) list.emplace_back(new_ids[k], v);
    });
    if (fresh.rows() > 0) {
      fresh_lists.ForEachPosting(
          d, [&](uint32_t id, float v) { list.emplace_back(fresh_ids[id], v); });
    }
    if (!std::is_sorted(list.begin(), list.end(),
                        [](const auto& a, const auto& b) { return a.first < b.first; })) {
      std::sort(list.begin(), list.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    uint32_t last = 0;
    for (const auto& [id, v] : list) PushPosting(id, v, &last, &deltas, &values);
    index->nonzeros_ += list.size();
    offsets[d + 1] = deltas.size();
  }
  index->offsets_ = std::move(offsets);
  index->deltas_ = std::move(deltas);
  index->values_ = std::move(values);
  return index;
}

Status SparseIndex::Add(const FloatMatrix& rows) {
  FLOWRAG_RETURN_IF_ERROR(vector_internal::ValidateRows(rows, dim_, size_));
  SparseRows all = Rows();
  for (size_t r = 0; r < rows.rows; ++r) all.Append(rows.row(r));
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<SparseIndex> merged, FromRows(all));
  *this = std::move(*merged);
  return Status::Ok();
}

SparseRows SparseIndex::Rows() const {
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> dims;
  std::vector<float> values;
  Transpose(&offsets, &dims, &values);
  SparseRows rows;
  rows.cols = dim_;
  rows.offsets = std::move(offsets);
  rows.dims = std::move(dims);
  rows.values = std::move(values);
  return rows;
}

std::vector<VectorHit> SparseIndex::Search(const float* query, const VectorSearchParams& params,
                                           VectorSearchStats* stats) const {
  const size_t k = std::min(params.k, size_);
  if (k == 0 || !vector_internal::AllFinite(query, dim_)) return {};
  size_t postings = 0;
  for (size_t d = 0; d < dim_; ++d) {
    if (query[d] != 0.0f) postings += offsets_[d + 1] - offsets_[d];
  }
  thread_local std::vector<float> scores;
  if (scores.size() < size_) scores.resize(size_, 0.0f);  // all zero between calls
  vector_internal::TopK top(k);
  size_t scored = 0;
  auto offer = [&](uint32_t id) {
    const float v = scores[id];
    scores[id] = 0.0f;
    if (v < params.min_score || (top.full() && v < top.worst().score)) return;
    if (params.filter && !params.filter(id)) return;
    ++scored;
    top.Push(id, v);
  };
  if (postings >= size_ / 4) {
    // Long lists (the hashed embedder's character n-grams): accumulate, then
    // scan every id; an id no list touched scores 0, as it should.
    float* acc = scores.data();
    for (size_t d = 0; d < dim_; ++d) {
      const float q = query[d];
      if (q == 0.0f) continue;
      ForEachPosting(d, [&](uint32_t id, float value) { acc[id] += q * value; });
    }
    for (uint32_t id = 0; id < size_; ++id) offer(id);
  } else {
    // Short lists: track the touched ids and scan only those.
    thread_local std::vector<uint32_t> touched;
    thread_local std::vector<uint8_t> seen;
    touched.clear();
    if (seen.size() < size_) seen.resize(size_, 0);
    for (size_t d = 0; d < dim_; ++d) {
      const float q = query[d];
      if (q == 0.0f) continue;
      ForEachPosting(d, [&](uint32_t id, float value) {
        if (!seen[id]) {
          seen[id] = 1;
          touched.push_back(id);
        }
        scores[id] += q * value;
      });
    }
    for (uint32_t id : touched) {
      seen[id] = 0;
      offer(id);
    }
    // Vectors sharing no dimension with the query score exactly 0: they
    // belong in the result when fewer than k vectors overlap the query or
    // some overlap scored below 0. Ascending ids, so the first zeros win ties.
    std::sort(touched.begin(), touched.end());
    size_t t = 0;
    for (uint32_t id = 0;
         params.min_score <= 0.0f && id < size_ && (!top.full() || top.worst().score < 0.0f);
         ++id) {
      while (t < touched.size() && touched[t] < id) ++t;
      if ((t < touched.size() && touched[t] == id) || (params.filter && !params.filter(id))) {
        continue;
      }
      top.Push(id, 0.0f);
    }
  }
  if (stats != nullptr) stats->candidates_scored += scored;
  return top.Take();
}

}  // namespace flowrag
