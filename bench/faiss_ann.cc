#include "faiss_ann.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <exception>

#include <faiss/IVFlib.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVF.h>
#include <faiss/impl/io.h>
#include <faiss/index_factory.h>
#include <faiss/index_io.h>

namespace flowrag::bench {
namespace {
using Idx = faiss::Index::idx_t;  // Faiss 1.7.3's id type
}  // namespace

struct FaissAnn::Impl {
  std::unique_ptr<faiss::Index> index;
  faiss::IndexIVF* ivf = nullptr;    // when the index is (wraps) an IVF one
  faiss::IndexHNSW* hnsw = nullptr;  // when it is an HNSW one
};

FaissAnn::FaissAnn(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FaissAnn::~FaissAnn() = default;

std::unique_ptr<FaissAnn> FaissAnn::Build(const FloatMatrix& data, const std::string& factory,
                                          size_t train_rows, std::string* error) {
  const auto start = std::chrono::steady_clock::now();
  auto impl = std::make_unique<Impl>();
  try {
    omp_set_num_threads(omp_get_num_procs());
    const auto d = static_cast<Idx>(data.cols);
    impl->index.reset(faiss::index_factory(static_cast<int>(d), factory.c_str(),
                                           faiss::METRIC_INNER_PRODUCT));
    impl->ivf = faiss::ivflib::try_extract_index_ivf(impl->index.get());
    impl->hnsw = dynamic_cast<faiss::IndexHNSW*>(impl->index.get());
    if (!impl->index->is_trained) {
      const size_t n = std::min(train_rows, data.rows);
      const size_t step = std::max<size_t>(1, data.rows / std::max<size_t>(n, 1));
      std::vector<float> sample;
      sample.reserve(n * data.cols);
      for (size_t r = 0, taken = 0; r < data.rows && taken < n; r += step, ++taken) {
        sample.insert(sample.end(), data.row(r), data.row(r) + data.cols);
      }
      impl->index->train(static_cast<Idx>(sample.size() / data.cols), sample.data());
    }
    impl->index->add(static_cast<Idx>(data.rows), data.data.data());
    omp_set_num_threads(1);  // searches: one thread, as flowrag's queries
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
  auto ann = std::unique_ptr<FaissAnn>(new FaissAnn(std::move(impl)));
  ann->build_seconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  faiss::VectorIOWriter bytes;
  faiss::write_index(ann->impl_->index.get(), &bytes);
  ann->bytes_ = bytes.data.size();
  return ann;
}

std::vector<VectorHit> FaissAnn::Search(const float* query, size_t k, size_t setting) const {
  std::vector<float> scores(k);
  std::vector<Idx> ids(k);
  // The setting is written into the index (Faiss 1.7.3's HNSW search reads
  // its own efSearch; a wrapped IVF index its own nprobe): searches run one
  // at a time here.
  if (impl_->ivf != nullptr) impl_->ivf->nprobe = setting;
  if (impl_->hnsw != nullptr) impl_->hnsw->hnsw.efSearch = static_cast<int>(std::max(setting, k));
  faiss::SearchParameters* params = nullptr;
  impl_->index->search(1, query, static_cast<Idx>(k), scores.data(), ids.data(), params);
  std::vector<VectorHit> hits;
  for (size_t i = 0; i < k; ++i) {
    if (ids[i] >= 0) hits.push_back({static_cast<uint32_t>(ids[i]), scores[i]});
  }
  return hits;
}

const char* FaissAnn::setting_name() const {
  return impl_->ivf != nullptr ? "nprobe" : impl_->hnsw != nullptr ? "efSearch" : "-";
}

bool FaissAnn::removes_in_place() const { return impl_->ivf != nullptr; }

}  // namespace flowrag::bench
