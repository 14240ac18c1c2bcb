// vector_search_bench: query latency of FlatIndex (exact, the baseline) and
// HnswIndex on the same data, plus the dot-product kernels at each SIMD level.
//
// Workload: n clustered, L2-normalised float vectors (500 random unit centres,
// Gaussian noise of norm ~1.5, renormalised, so same-cluster cosines are ~0.3
// and others ~0: roughly the shape of text embeddings),
// n in {6,000, 100,000}, d in {256, 1024}; 200 held-out queries from the same
// distribution, k = 10. Each iteration answers one query (cycling).
//
// Counters: recall@10 against the flat index (1.0 for flat by construction),
// scored = inner products per query, build_s = one-off index build time.
// Indexes are built lazily and cached, so the first benchmark of a shape pays
// for the build (HNSW at 100k x 1024 takes minutes: single-threaded,
// deterministic insertion with M=16, ef_construction=200).
//
// Benchmarks are measurements, never assertions. Typical runs:
//   vector_search_bench --benchmark_filter=/n:6000/ --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
//   vector_search_bench --benchmark_filter='Dot'
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "synthetic_vectors.h"
#include "vector/dot_product.h"
#include "vector/flat_index.h"
#include "vector/hnsw_index.h"
#include "vector/vector_index.h"

namespace flowrag {
namespace {

using bench::Clustered;
using bench::Normalise;

constexpr size_t kQueries = 200;
constexpr size_t kK = 10;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

struct Workload {
  FloatMatrix queries;
  std::unique_ptr<FlatIndex> flat;
  double flat_build_s = 0;
  std::unique_ptr<HnswIndex> hnsw;  // built on first use
  double hnsw_build_s = 0;
  std::vector<std::set<uint32_t>> truth;  // exact top-k ids per query
  FloatMatrix data;                       // kept until the HNSW index is built
};

// Guards the workload cache: multi-threaded benchmarks call the getters from
// every thread.
std::mutex cache_mutex;

Workload& GetWorkload(size_t n, size_t d) {
  std::lock_guard<std::mutex> lock(cache_mutex);
  static std::map<std::pair<size_t, size_t>, std::unique_ptr<Workload>> cache;
  auto& slot = cache[{n, d}];
  if (slot) return *slot;
  slot = std::make_unique<Workload>();
  Workload& w = *slot;
  w.data = Clustered(n, d, 1 + n + d);
  w.queries = Clustered(kQueries, d, 7 + n + d);
  const auto start = std::chrono::steady_clock::now();
  w.flat = std::make_unique<FlatIndex>(d, n);
  if (!w.flat->Add(w.data).ok()) std::abort();
  w.flat_build_s = Seconds(start);
  VectorSearchParams params;
  params.k = kK;
  for (size_t q = 0; q < kQueries; ++q) {
    std::set<uint32_t> ids;
    for (const auto& hit : w.flat->Search(w.queries.row(q), params, nullptr)) ids.insert(hit.id);
    w.truth.push_back(std::move(ids));
  }
  return w;
}

HnswIndex& GetHnsw(Workload& w) {
  std::lock_guard<std::mutex> lock(cache_mutex);
  if (w.hnsw) return *w.hnsw;
  const auto start = std::chrono::steady_clock::now();
  VectorIndexOptions options;  // M = 16, ef_construction = 200, seed = 42
  auto made = HnswIndex::Create(w.data.cols, w.data.rows, options);
  if (!made.ok() || !(*made)->Add(w.data).ok()) std::abort();
  w.hnsw = std::move(made).value();
  w.hnsw_build_s = Seconds(start);
  std::fprintf(stderr, "built hnsw n=%zu d=%zu in %.1f s\n", w.data.rows, w.data.cols,
               w.hnsw_build_s);
  w.data = FloatMatrix();  // the indexes hold their own copies
  return *w.hnsw;
}

// Runs one query per iteration (cycling through the query set). Recall@k and
// inner products per query are measured once over the whole query set, so
// they do not depend on the iteration count.
void RunQueries(benchmark::State& state, const VectorIndex& index, const Workload& w,
                const VectorSearchParams& params) {
  size_t found = 0;
  VectorSearchStats stats;
  for (size_t q = 0; q < kQueries; ++q) {
    for (const auto& hit : index.Search(w.queries.row(q), params, &stats)) {
      found += w.truth[q].count(hit.id);
    }
  }
  size_t q = 0;
  for (auto _ : state) {
    auto hits = index.Search(w.queries.row(q), params, nullptr);
    benchmark::DoNotOptimize(hits.data());
    q = (q + 1) % kQueries;
  }
  using benchmark::Counter;
  state.counters["recall@10"] =
      Counter(static_cast<double>(found) / (kQueries * kK), Counter::kAvgThreads);
  state.counters["scored"] =
      Counter(static_cast<double>(stats.candidates_scored) / kQueries, Counter::kAvgThreads);
}

void BM_FlatSearch(benchmark::State& state) {
  Workload& w = GetWorkload(state.range(0), state.range(1));
  VectorSearchParams params;
  params.k = kK;
  RunQueries(state, *w.flat, w, params);
  state.counters["build_s"] = benchmark::Counter(w.flat_build_s, benchmark::Counter::kAvgThreads);
}

void BM_HnswSearch(benchmark::State& state) {
  Workload& w = GetWorkload(state.range(0), state.range(1));
  const HnswIndex& hnsw = GetHnsw(w);
  VectorSearchParams params;
  params.k = kK;
  params.ef_search = state.range(2);
  RunQueries(state, hnsw, w, params);
  state.counters["build_s"] = w.hnsw_build_s;
}

// Filtered search: half the ids eligible (a typical "restrict to these
// documents" query).
void BM_FlatSearchHalfFiltered(benchmark::State& state) {
  Workload& w = GetWorkload(state.range(0), state.range(1));
  VectorSearchParams params;
  params.k = kK;
  params.filter = [](uint32_t id) { return (id & 1) == 0; };
  size_t q = 0;
  for (auto _ : state) {
    auto hits = w.flat->Search(w.queries.row(q), params, nullptr);
    benchmark::DoNotOptimize(hits.data());
    q = (q + 1) % kQueries;
  }
}

// Kernel baselines: one 1024-d dot product (in L1), and a 6,000 x 1024 block
// scan (24 MiB, the flat index's inner loop), at every level the CPU has.
void BM_DotProduct(benchmark::State& state) {
  const auto level = static_cast<vector_internal::SimdLevel>(state.range(0));
  if (level > vector_internal::DetectedSimdLevel()) {
    state.SkipWithError("level not supported by this CPU");
    return;
  }
  const size_t d = state.range(1);
  FloatMatrix m = Clustered(2, d, 3);
  for (auto _ : state) {
    benchmark::DoNotOptimize(vector_internal::DotProductAt(level, m.row(0), m.row(1), d));
  }
  state.SetLabel(std::string(vector_internal::SimdLevelName(level)));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 2 * d * sizeof(float)));
}

void BM_DotProductBlock(benchmark::State& state) {
  const auto level = static_cast<vector_internal::SimdLevel>(state.range(0));
  if (level > vector_internal::DetectedSimdLevel()) {
    state.SkipWithError("level not supported by this CPU");
    return;
  }
  const size_t n = state.range(1), d = state.range(2);
  Workload& w = GetWorkload(n, d);
  std::vector<float> scores(n);
  const float* rows = w.flat->FloatRow(0);
  size_t q = 0;
  for (auto _ : state) {
    vector_internal::DotProductBlockAt(level, w.queries.row(q), rows, n, d, scores.data());
    benchmark::DoNotOptimize(scores.data());
    q = (q + 1) % kQueries;
  }
  state.SetLabel(std::string(vector_internal::SimdLevelName(level)));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * d * sizeof(float)));
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {6000, 100000}) {
    for (int64_t d : {256, 1024}) b->Args({n, d});
  }
}

void HnswShapes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {6000, 100000}) {
    for (int64_t d : {256, 1024}) {
      for (int64_t ef : {32, 128, 256}) b->Args({n, d, ef});
    }
  }
}

BENCHMARK(BM_DotProduct)->ArgsProduct({{0, 1, 2}, {256, 1024}})->ArgNames({"level", "d"});
BENCHMARK(BM_DotProductBlock)
    ->ArgsProduct({{0, 1, 2}, {6000}, {1024}})
    ->ArgNames({"level", "n", "d"})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FlatSearch)->Apply(Shapes)->ArgNames({"n", "d"})->Unit(benchmark::kMicrosecond);
// Two queries at once on the two cores: the flat scan is bound by memory
// bandwidth, which the threads share. (Google Benchmark reports wall time
// divided by the iterations of all threads, i.e. the inverse throughput; the
// latency each query sees is about twice that.)
BENCHMARK(BM_FlatSearch)
    ->Args({6000, 1024})
    ->ArgNames({"n", "d"})
    ->Threads(2)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FlatSearchHalfFiltered)
    ->Apply(Shapes)
    ->ArgNames({"n", "d"})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HnswSearch)
    ->Apply(HnswShapes)
    ->ArgNames({"n", "d", "ef"})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace flowrag
