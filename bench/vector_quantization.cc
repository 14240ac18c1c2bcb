// vector_quantization: compressed passage vectors on a benchmark (issue 34),
// measured against float32 exact search (src/vector/quantized.h).
//
// Opens a store (`flowrag index <bench>/corpus.jsonl --chunking none`), takes
// its stored passage vectors (the snapshot's dense index: the embedding
// cache's vectors) and embeds the questions with the store's embedder. Then,
// per representation, ranks every question's passages and reports:
//   - recall@10 against float32 exact (|top10 ∩ float top10| / 10), and
//     tie-aware (hits scoring within 1e-4 of the exact 10th score count);
//   - passage R@2 / R@5 on the gold passages for `dense`, and for `hybrid`
//     reproduced as src/retrieval/text_retrievers.cc fuses it (BM25 top-100
//     and dense top-100, reciprocal rank fusion with k = 60, ties by id);
//   - bytes per passage of the vectors;
//   - search time per question (median; the embedding of the question
//     excluded, measured once separately), single-threaded.
// Representations: float32 (FlatIndex), fp16, int8 per vector, int8 per
// dimension (QuantizedFlatIndex), int8 per vector with exact rescoring of the
// top k·r (r = 2, 4; the float vectors from memory), and the exact sparse
// form (SparseIndex over the non-zeros).
//
// --project D: the same study on dense D-dimensional vectors made from the
// stored ones by a Gaussian random projection (and renormalised), queries
// projected alike: a stand-in for a dense remote embedder that keeps the
// benchmark's relevance structure (inner products preserved up to the
// Johnson-Lindenstrauss error), not a real model's distribution.
//
// --synthetic N: N clustered unit vectors (as bench/vector_search_bench.cc) of
// --dim dimensions and 200 queries instead of a store (recall@10 only).
//
// Without --bench, the queries are the titles of 200 passages spread over
// the store (recall@10 against float32 only); --flat opens the store with an
// exact flat index whatever its size (no HNSW build at the open); --int8
// with the int8 column index whatever its size (a writable open: it
// writes the store's segment again; use a copy).
//
// A store whose passage index is approximate adds a row for that index as
// queries search it (HNSW: at each --ef, default the queries' 128; int8
// columns: at rescore factors 1, 2 and 4, the default 2), against float32
// exact over the same stored vectors; --ann-only measures
// that row alone (no compressed copies: at 10^6 passages they need ~10 GiB
// more).
//
// --faiss "FACTORY:S1,S2;FACTORY:..." adds Faiss indexes built here from the
// stored vectors (bench/faiss_ann.h; only in a build that found Faiss): per
// factory string ("IVF1024,SQ8", "HNSW32,SQ8"), trained on --faiss-train
// rows (default 100000), one row per search setting (nprobe or efSearch),
// with its build time, size and whether a delete needs a rebuild on stderr.
//
// Usage: vector_quantization --db STORE [--bench DIR] [--project 1536] [--flat | --int8] [--ann-only]
//        [--ef 64,128,256] [--hnsw M,EF_CONSTRUCTION] [--faiss SPECS [--faiss-train N]]
// --hnsw measures an HNSW index built here from the stored vectors (the
// projected ones with --project) with those parameters instead of the
// store's (single-threaded, as a snapshot builds it).
//        vector_quantization --synthetic 100000 --dim 1024
// Prints markdown table rows. A measurement, never an assertion.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/engine_impl.h"
#include "flowrag/engine.h"
#include "graph/snapshot.h"
#include "nlohmann/json.hpp"
#include "synthetic_vectors.h"
#include "vector/flat_index.h"
#include "vector/hnsw_index.h"
#include "vector/layered_index.h"
#include "vector/quantized.h"
#include "vector/sparse_index.h"
#include "vector/sparse_rows.h"
#ifdef FLOWRAG_HAVE_FAISS
#include "faiss_ann.h"
#endif

namespace flowrag {
namespace {

using bench::Clustered;
using bench::Normalise;

constexpr size_t kK = 10;
constexpr size_t kDepth = 100;  // hybrid's candidates per list (HybridOptions)
constexpr double kRrfK = 60.0;  // HybridOptions::rrf_k
// The ranking depth `flowrag eval` asks for: max(ks) = 10 times
// EvalOptions::depth_factor = 3 (gold keys are counted distinct).
constexpr size_t kEvalDepth = 30;

int Fail(const std::string& m) {
  std::fprintf(stderr, "vector_quantization: %s\n", m.c_str());
  return 1;
}

double Micros(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - since)
      .count();
}

// "64,128,256" as numbers.
std::vector<size_t> ParseList(const std::string& list) {
  std::vector<size_t> out;
  for (size_t at = 0; at < list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    out.push_back(std::stoul(list.substr(at, comma - at)));
    at = comma + 1;
  }
  return out;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// One question: its text, gold ids (passage level) or titles (document level).
struct Question {
  std::string text;
  std::set<std::string> gold;
};

// A ranking function: the top `k` ids of a query vector.
using Ranker = std::function<std::vector<VectorHit>(const float* q, size_t k)>;

struct Representation {
  std::string name;
  double bytes_per_passage = 0;
  Ranker rank;
};

struct Row {
  double recall10 = 0, tied10 = 0, dense_r2 = 0, dense_r5 = 0, hybrid_r2 = 0, hybrid_r5 = 0, p50_us = 0;
};

// What the gold is compared with for each passage: its document's external
// id (passage level) or title (document level).
struct Corpus {
  std::vector<std::string> keys;
  std::vector<std::vector<uint32_t>> bm25;  // per question, BM25 top kDepth
  bool has_gold = false;
};

// As src/eval/evaluate.cc's RecallAtK: the first k distinct keys of the
// ranking (a passage repeating a key does not use up a rank), then the share
// of the gold found among them.
double GoldRecall(const std::vector<uint32_t>& ranked, size_t k, const Question& q,
                  const Corpus& c) {
  if (q.gold.empty()) return 0;
  std::set<std::string> top;
  for (uint32_t p : ranked) {
    if (top.size() >= k) break;
    top.insert(c.keys[p]);
  }
  size_t found = 0;
  for (const std::string& g : q.gold) found += top.count(g);
  return static_cast<double>(found) / static_cast<double>(q.gold.size());
}

std::vector<uint32_t> Fuse(const std::vector<uint32_t>& lexical,
                           const std::vector<VectorHit>& semantic) {
  std::unordered_map<uint32_t, double> fused;
  for (size_t r = 0; r < lexical.size(); ++r) fused[lexical[r]] += 1.0 / (kRrfK + r + 1.0);
  for (size_t r = 0; r < semantic.size(); ++r) fused[semantic[r].id] += 1.0 / (kRrfK + r + 1.0);
  std::vector<std::pair<uint32_t, double>> v(fused.begin(), fused.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<uint32_t> out;
  for (size_t i = 0; i < std::min<size_t>(kEvalDepth, v.size()); ++i) out.push_back(v[i].first);
  return out;
}

// The float32 exact top 10 of each query, and its 10th score.
struct Reference {
  std::vector<std::vector<uint32_t>> ids;
  std::vector<float> kth;
};

// A hit within this much of the exact 10th score counts as found by the
// tie-aware recall (ann-benchmarks' k-nn recall counts a result within
// 1e-3 of the k-th true distance): frame words shared by many passages make
// many exact ties, among which any choice is as good.
constexpr float kTieEpsilon = 1e-4f;

Row Measure(const Representation& rep, const FloatMatrix& queries,
            const std::vector<Question>& questions, const Corpus& corpus,
            const Reference& reference) {
  Row row;
  std::vector<double> times;
  const size_t nq = queries.rows;
  for (size_t qi = 0; qi < nq; ++qi) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<VectorHit> top = rep.rank(queries.row(qi), kK);
    times.push_back(Micros(start));
    std::set<uint32_t> ref(reference.ids[qi].begin(), reference.ids[qi].end());
    size_t hit = 0, tied = 0;
    for (const VectorHit& h : top) {
      hit += ref.count(h.id);
      tied += h.score >= reference.kth[qi] - kTieEpsilon;
    }
    row.recall10 += ref.empty() ? 1.0 : static_cast<double>(hit) / ref.size();
    row.tied10 += ref.empty() ? 1.0 : static_cast<double>(std::min(tied, ref.size())) / ref.size();
    if (corpus.has_gold) {
      std::vector<uint32_t> deep;
      for (const VectorHit& h : rep.rank(queries.row(qi), kEvalDepth)) deep.push_back(h.id);
      row.dense_r2 += GoldRecall(deep, 2, questions[qi], corpus);
      row.dense_r5 += GoldRecall(deep, 5, questions[qi], corpus);
      const auto fused = Fuse(corpus.bm25[qi], rep.rank(queries.row(qi), kDepth));
      row.hybrid_r2 += GoldRecall(fused, 2, questions[qi], corpus);
      row.hybrid_r5 += GoldRecall(fused, 5, questions[qi], corpus);
    }
  }
  const double n = static_cast<double>(std::max<size_t>(nq, 1));
  row.recall10 /= n;
  row.tied10 /= n;
  row.dense_r2 = 100 * row.dense_r2 / n;
  row.dense_r5 = 100 * row.dense_r5 / n;
  row.hybrid_r2 = 100 * row.hybrid_r2 / n;
  row.hybrid_r5 = 100 * row.hybrid_r5 / n;
  row.p50_us = Median(times);
  return row;
}

// --faiss: factory strings, each with its search settings.
struct FaissSpecs {
  std::vector<std::pair<std::string, std::vector<size_t>>> specs;
  size_t train_rows = 100000;
};

// "IVF1024,SQ8:8,32;HNSW32,SQ8:64" as specs; empty with *error set when malformed.
FaissSpecs ParseFaiss(const std::string& text, std::string* error) {
  FaissSpecs out;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find(';', at), text.size());
    const std::string spec = text.substr(at, end - at);
    const size_t colon = spec.rfind(':');
    if (colon == std::string::npos || colon + 1 == spec.size()) {
      *error = "--faiss " + spec + ": FACTORY:SETTING,SETTING";
      return {};
    }
    out.specs.push_back({spec.substr(0, colon), ParseList(spec.substr(colon + 1))});
    at = end + 1;
  }
  return out;
}

#ifdef FLOWRAG_HAVE_FAISS
using FaissIndexes = std::vector<std::unique_ptr<bench::FaissAnn>>;
// Builds each Faiss index of `faiss` over `data` into *kept and adds one
// representation per setting to *reps; the error, or empty.
std::string AddFaiss(const FloatMatrix& data, const FaissSpecs& faiss,
                     FaissIndexes* kept,
                     std::vector<Representation>* reps) {
  for (const auto& [factory, settings] : faiss.specs) {
    std::string error;
    auto ann = bench::FaissAnn::Build(data, factory, faiss.train_rows, &error);
    if (ann == nullptr) return "faiss " + factory + ": " + error;
    std::fprintf(stderr, "faiss %s: built in %.1f s, %.0f bytes per vector, delete %s\n",
                 factory.c_str(), ann->build_seconds(),
                 static_cast<double>(ann->bytes()) / static_cast<double>(data.rows),
                 ann->removes_in_place() ? "in place (remove_ids)" : "needs a rebuild");
    const bench::FaissAnn* index = ann.get();
    for (size_t setting : settings) {
      reps->push_back({"faiss " + factory + " (" + index->setting_name() + " " +
                           std::to_string(setting) + ")",
                       static_cast<double>(index->bytes()) / static_cast<double>(data.rows),
                       [index, setting](const float* q, size_t k) {
                         return index->Search(q, k, setting);
                       }});
    }
    kept->push_back(std::move(ann));
  }
  return {};
}
#else
using FaissIndexes = std::vector<int>;
std::string AddFaiss(const FloatMatrix&, const FaissSpecs&, FaissIndexes*,
                     std::vector<Representation>*) {
  return "--faiss: this build did not find Faiss (Debian libfaiss-dev)";
}
#endif

struct Indexes {
  std::unique_ptr<FlatIndex> f32;
  std::unique_ptr<QuantizedFlatIndex> fp16, int8, int8_dim;
  std::unique_ptr<VectorIndex> sparse;
  SparseRows sparse_rows;
};

// Builds every representation of `data` (rows = passages) and prints one
// markdown row each. Returns the index build times on stderr.
// `ann`: the store's own index or one built here (null for none, named by
// `ann_label`), measured at each ef_search of `ann_ef`; `ann_only`: only
// that one against float32 exact.
int Study(const std::string& label, FloatMatrix data, const FloatMatrix& queries,
          const std::vector<Question>& questions, const Corpus& corpus, bool with_sparse,
          const VectorIndex* ann = nullptr, bool ann_only = false,
          const std::vector<size_t>& ann_ef = {VectorSearchParams().ef_search},
          const std::string& ann_label = "the store's index", const FaissSpecs& faiss = {}) {
  const size_t n = data.rows, d = data.cols;
  Indexes ix;
  std::vector<Representation> faiss_reps;
  FaissIndexes faiss_indexes;  // what faiss_reps search
  if (!faiss.specs.empty()) {
    if (const std::string error = AddFaiss(data, faiss, &faiss_indexes, &faiss_reps); !error.empty()) {
      return Fail(error);
    }
  }
  auto t = std::chrono::steady_clock::now();
  ix.fp16 = std::make_unique<QuantizedFlatIndex>(d, QuantizedFormat::kFloat16);
  ix.int8 = std::make_unique<QuantizedFlatIndex>(d, QuantizedFormat::kInt8PerVector);
  ix.int8_dim = std::make_unique<QuantizedFlatIndex>(d, QuantizedFormat::kInt8PerDimension);
  with_sparse = with_sparse && !ann_only;
  const std::vector<QuantizedFlatIndex*> encoded =
      ann_only ? std::vector<QuantizedFlatIndex*>{}
               : std::vector<QuantizedFlatIndex*>{ix.fp16.get(), ix.int8.get(), ix.int8_dim.get()};
  for (QuantizedFlatIndex* q : encoded) {
    t = std::chrono::steady_clock::now();
    if (Status s = q->Add(data); !s.ok()) return Fail(s.ToString());
    std::fprintf(stderr, "%s: encoded %s in %.2f s\n", label.c_str(), q->Kind().c_str(),
                 Micros(t) / 1e6);
  }
  if (with_sparse) {
    t = std::chrono::steady_clock::now();
    ix.sparse_rows = SparseRows::FromMatrix(data);
    auto sparse = SparseIndex::FromRows(ix.sparse_rows);
    if (!sparse.ok()) return Fail(sparse.status().ToString());
    ix.sparse = std::move(sparse).value();
    std::fprintf(stderr, "%s: sparse index in %.2f s, density %.4f\n", label.c_str(),
                 Micros(t) / 1e6, ix.sparse_rows.Density());
  }
  FloatMatrix copy = data;  // the exact vectors the rescoring reads
  auto flat = FlatIndex::FromMatrix(std::move(data));
  if (!flat.ok()) return Fail(flat.status().ToString());
  ix.f32 = std::move(flat).value();

  auto ranker = [](const VectorIndex* index) -> Ranker {
    return [index](const float* q, size_t k) {
      VectorSearchParams p;
      p.k = k;
      return index->Search(q, p, nullptr);
    };
  };
  const QuantizedFlatIndex::ExactVectors exact = [&copy](std::span<const uint32_t> ids,
                                                         FloatMatrix* out) {
    *out = FloatMatrix(ids.size(), copy.cols);
    for (size_t i = 0; i < ids.size(); ++i) {
      std::copy(copy.row(ids[i]), copy.row(ids[i]) + copy.cols, out->row(i));
    }
    return Status::Ok();
  };
  auto rescored = [&](size_t r) -> Ranker {
    return [&ix, &exact, r](const float* q, size_t k) {
      VectorSearchParams p;
      p.k = k;
      auto hits = ix.int8->SearchRescored(q, p, r, exact, nullptr);
      return hits.ok() ? *hits : std::vector<VectorHit>{};
    };
  };
  const double dd = static_cast<double>(d);
  std::vector<Representation> reps = {{"float32 exact (reference)", 4 * dd, ranker(ix.f32.get())}};
  if (!ann_only) {
    reps.insert(reps.end(),
                {{"fp16 exact", 2 * dd, ranker(ix.fp16.get())},
                 {"int8 per-vector exact", dd + 4, ranker(ix.int8.get())},
                 {"int8 per-dimension exact", dd + 8 * dd / n, ranker(ix.int8_dim.get())},
                 {"int8 per-vector + float rescoring r=2", dd + 4, rescored(2)},
                 {"int8 per-vector + float rescoring r=4", dd + 4, rescored(4)}});
  }
  if (ann != nullptr && ann->Kind() == "flat-int8") {
    const std::pair<size_t, float> settings[] = {{1, 1.0f}, {2, 1.0f}, {4, 1.0f}, {2, 0.9f},
                                                 {4, 0.9f}, {8, 0.9f}, {4, 0.8f}, {8, 0.8f}};
    for (const auto& [r, mass] : settings) {
      char name[96];
      std::snprintf(name, sizeof name, " (flat-int8, rescore %zu, scan mass %.1f)", r, mass);
      reps.push_back({ann_label + name,
                      static_cast<double>(ann->MemoryBytes()) / static_cast<double>(n),
                      [ann, r, mass](const float* q, size_t k) {
                        VectorSearchParams p;
                        p.k = k;
                        p.rescore = r;
                        p.scan_mass = mass;
                        return ann->Search(q, p, nullptr);
                      }});
    }
  } else if (ann != nullptr && ann->Kind() != "flat") {
    for (size_t ef : ann_ef) {
      reps.push_back({ann_label + " (" + ann->Kind() + ", ef_search " + std::to_string(ef) + ")",
                      static_cast<double>(ann->MemoryBytes()) / static_cast<double>(n),
                      [ann, ef](const float* q, size_t k) {
                        VectorSearchParams p;
                        p.k = k;
                        p.ef_search = ef;
                        return ann->Search(q, p, nullptr);
                      }});
    }
  }
  reps.insert(reps.end(), faiss_reps.begin(), faiss_reps.end());
  if (with_sparse) {
    const double nnz = static_cast<double>(ix.sparse_rows.nonzeros()) / n;
    reps.push_back(
        {"sparse exact (u32 dim + f32 value, CSR)", 8 * nnz + 8, ranker(ix.sparse.get())});
  }
  // The reference: float32 exact top-10.
  Reference reference;
  for (size_t qi = 0; qi < queries.rows; ++qi) {
    std::vector<uint32_t> ids;
    const std::vector<VectorHit> top = reps[0].rank(queries.row(qi), kK);
    for (const VectorHit& h : top) ids.push_back(h.id);
    reference.ids.push_back(std::move(ids));
    reference.kth.push_back(top.empty() ? 0.0f : top.back().score);
  }
  for (const Representation& rep : reps) {
    const Row r = Measure(rep, queries, questions, corpus, reference);
    if (corpus.has_gold) {
      std::printf("| %s | %s | %.0f | %.3f | %.3f | %.1f | %.1f | %.1f | %.1f | %.0f |\n",
                  label.c_str(), rep.name.c_str(), rep.bytes_per_passage, r.recall10, r.tied10,
                  r.dense_r2, r.dense_r5,
                  r.hybrid_r2, r.hybrid_r5, r.p50_us);
    } else {
      std::printf("| %s | %s | %.0f | %.3f | %.3f | %.0f |\n", label.c_str(), rep.name.c_str(),
                  rep.bytes_per_passage, r.recall10, r.tied10, r.p50_us);
    }
    std::fflush(stdout);
  }
  if (with_sparse) {
    const double nnz = static_cast<double>(ix.sparse_rows.nonzeros()) / n;
    std::fprintf(stderr,
                 "%s: %zu passages, %zu dims, mean non-zeros %.1f (%.1f%%); sparse sizes per "
                 "passage: u32+f32 %.0f B, u16+f16 %.0f B, u16+int8 %.0f B (+4 scale)\n",
                 label.c_str(), n, d, nnz, 100 * nnz / dd, 8 * nnz + 8, 4 * nnz + 8, 3 * nnz + 8);
    size_t qnnz = 0;
    for (size_t i = 0; i < queries.rows * queries.cols; ++i) qnnz += queries.data[i] != 0.0f;
    std::fprintf(stderr, "%s: mean query non-zeros %.1f\n", label.c_str(),
                 static_cast<double>(qnnz) / std::max<size_t>(queries.rows, 1));
  }
  return 0;
}

FloatMatrix Project(const FloatMatrix& m, const FloatMatrix& r) {
  // out = m · rᵀ, rows renormalised. r: out_dim × in_dim.
  FloatMatrix out(m.rows, r.rows);
  for (size_t i = 0; i < m.rows; ++i) {
    const float* x = m.row(i);
    float* y = out.row(i);
    for (size_t j = 0; j < r.rows; ++j) y[j] = DotProduct(x, r.row(j), m.cols);
    Normalise(y, r.rows);
  }
  return out;
}

int Main(int argc, char** argv) {
  std::string db, bench;
  size_t project = 0, synthetic = 0, dim = 1024;
  bool flat_open = false, ann_only = false, int8_open = false;
  std::vector<size_t> ann_ef = {VectorSearchParams().ef_search};
  std::vector<size_t> rebuild;  // --hnsw M,EF_CONSTRUCTION
  FaissSpecs faiss;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--db") {
      db = next();
    } else if (a == "--bench") {
      bench = next();
    } else if (a == "--project") {
      project = std::stoul(next());
    } else if (a == "--synthetic") {
      synthetic = std::stoul(next());
    } else if (a == "--dim") {
      dim = std::stoul(next());
    } else if (a == "--flat") {
      flat_open = true;
    } else if (a == "--int8") {
      int8_open = true;
    } else if (a == "--ann-only") {
      ann_only = true;
    } else if (a == "--ef") {
      ann_ef = ParseList(next());
    } else if (a == "--faiss") {
      std::string error;
      const size_t train = faiss.train_rows;
      faiss = ParseFaiss(next(), &error);
      faiss.train_rows = train;
      if (!error.empty()) return Fail(error);
    } else if (a == "--faiss-train") {
      faiss.train_rows = std::stoul(next());
    } else if (a == "--hnsw") {
      rebuild = ParseList(next());
      if (rebuild.size() != 2) return Fail("--hnsw M,EF_CONSTRUCTION");
    } else {
      return Fail("unknown argument " + a);
    }
  }
  if (synthetic > 0) {
    const auto t = std::chrono::steady_clock::now();
    FloatMatrix data = Clustered(synthetic, dim, 1 + synthetic + dim);
    const FloatMatrix queries = Clustered(200, dim, 7 + synthetic + dim);
    std::fprintf(stderr, "generated in %.1f s\n", Micros(t) / 1e6);
    Corpus corpus;
    return Study("synthetic " + std::to_string(synthetic) + "x" + std::to_string(dim),
                 std::move(data), queries, {}, corpus, false, nullptr, false,
                 {VectorSearchParams().ef_search}, "", faiss);
  }
  if (db.empty()) {
    return Fail(
        "usage: vector_quantization --db STORE --bench DIR [--project D] | "
        "--synthetic N [--dim D]");
  }
  EngineOptions options;
  if (flat_open) options.hnsw_threshold = std::numeric_limits<size_t>::max();
  if (int8_open) {  // the int8 index at any size (the open writes its segment)
    options.hnsw_threshold = 1;
    options.passage_ann = "int8";
  }
  auto engine = Engine::Open(db, options);
  if (!engine.ok()) return Fail(engine.status().ToString());
  if (auto r = (*engine)->Refresh(); !r.ok()) return Fail(r.status().ToString());
  const auto snap = dynamic_cast<EngineImpl*>(engine->get())->snapshot();
  if (snap == nullptr || snap->dense() == nullptr || snap->embedder() == nullptr) {
    return Fail(db + ": no passage vectors");
  }
  // The stored vectors.
  const VectorIndex& dense = *snap->dense();
  FloatMatrix data(dense.Size(), dense.Dimension());
  for (uint32_t i = 0; i < data.rows; ++i) {
    if (!CopyStoredVector(dense, i, data.row(i))) {
      return Fail("the " + dense.Kind() + " index keeps no vectors to read");
    }
  }
  // Questions and gold.
  const std::string name = bench.empty() ? db.substr(db.find_last_of('/') + 1)
                                         : bench.substr(bench.find_last_of('/') + 1);
  bool document_level = false;
  if (!bench.empty()) {
    std::ifstream meta(bench + "/meta.json");
    if (meta) {
      const auto j = nlohmann::json::parse(meta);
      document_level = j.value("gold_level", "").rfind("document", 0) == 0;
    }
  }
  Corpus corpus;
  corpus.has_gold = !bench.empty();
  for (uint32_t p = 0; p < snap->num_passages(); ++p) {
    const SnapshotDocument& doc = snap->document_of(p);
    corpus.keys.emplace_back(document_level ? doc.title : doc.external_id);
  }
  std::vector<Question> questions;
  std::vector<std::string> texts;
  if (bench.empty()) {
    // No questions: the titles of 200 passages spread over the store.
    const size_t step = std::max<size_t>(1, snap->num_passages() / 200);
    for (uint32_t p = 0; p < snap->num_passages() && texts.size() < 200; p += step) {
      texts.emplace_back(snap->document_of(p).title);
      questions.push_back({texts.back(), {}});
    }
  } else {
    std::ifstream in(bench + "/questions.jsonl");
    if (!in) return Fail(bench + "/questions.jsonl: cannot open");
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      const auto j = nlohmann::json::parse(line);
      Question q;
      q.text = j["question"];
      for (const auto& g : j[document_level ? "gold_titles" : "gold_ids"]) {
        q.gold.insert(g.get<std::string>());
      }
      texts.push_back(q.text);
      questions.push_back(std::move(q));
    }
  }
  auto t = std::chrono::steady_clock::now();
  auto embedded = snap->embedder()->Embed(texts);
  if (!embedded.ok()) return Fail(embedded.status().ToString());
  std::fprintf(stderr, "%s: embedded %zu questions, %.0f us each\n", name.c_str(), texts.size(),
               Micros(t) / static_cast<double>(texts.size()));
  for (const Question& q : questions) {
    std::vector<uint32_t> ids;
    for (const Bm25Hit& h : snap->bm25().Search(q.text, kDepth, Bm25Params{})) ids.push_back(h.doc);
    corpus.bm25.push_back(std::move(ids));
  }
  std::string label = name;
  if (project > 0) {
    std::mt19937_64 rng(2024);
    std::normal_distribution<float> normal;
    FloatMatrix r(project, data.cols);
    for (float& x : r.data) x = normal(rng);
    *embedded = Project(*embedded, r);
    data = Project(data, r);
    label += " (projected to " + std::to_string(project) + "-d)";
  }
  // --hnsw: an HNSW index with other parameters, built here from the
  // stored (or projected) vectors, in place of the store's.
  std::unique_ptr<VectorIndex> rebuilt;
  if (!rebuild.empty()) {
    VectorIndexOptions vo;
    vo.hnsw_m = rebuild[0];
    vo.hnsw_ef_construction = rebuild[1];
    auto made = HnswIndex::Create(data.cols, data.rows, vo);
    if (!made.ok()) return Fail(made.status().ToString());
    t = std::chrono::steady_clock::now();
    if (Status st = (*made)->Add(data); !st.ok()) return Fail(st.ToString());
    std::fprintf(stderr, "%s: HNSW M %zu, ef_construction %zu built in %.1f s\n", label.c_str(),
                 vo.hnsw_m, vo.hnsw_ef_construction, Micros(t) / 1e6);
    rebuilt = std::move(made).value();
  }
  if (project > 0 && rebuilt == nullptr) {  // the store's index is of the other vectors
    return Study(label, std::move(data), *embedded, questions, corpus, false, nullptr, ann_only,
                 ann_ef, "", faiss);
  }
  const VectorIndex* ann = rebuilt != nullptr ? rebuilt.get() : &dense;
  const std::string ann_label =
      rebuilt == nullptr ? "the store's index"
                         : "built here, M " + std::to_string(rebuild[0]) + ", ef_construction " +
                               std::to_string(rebuild[1]);
  return Study(label, std::move(data), *embedded, questions, corpus, project == 0, ann, ann_only,
               ann_ef, ann_label, faiss);
}

}  // namespace
}  // namespace flowrag

int main(int argc, char** argv) { return flowrag::Main(argc, argv); }
