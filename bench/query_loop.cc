// query_loop: the C++ side of bench/python_overhead.py. Opens a store
// read-only through the public Engine API, runs every question of a
// benchmark once to warm up, then `repeat` passes, timing each
// Engine::Query(question, {method, top_k}) call with steady_clock (the wall
// time a caller sees, subgraph description included). Prints one JSON
// object: {"method", "questions", "repeat", "p50_ms", "per_question_ms":
// [median over the passes, in question order], "retrieval_ms": [median
// RetrievalDiagnostics::time_ms per question]}.
//
// Usage: query_loop DB BENCH_DIR METHOD [repeat=5] [top_k=5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "flowrag/engine.h"
#include "flowrag/eval.h"

namespace flowrag {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string JsonList(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%s%.4f", i ? "," : "", v[i]);
    s += buf;
  }
  return s + "]";
}

int Run(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: query_loop DB BENCH_DIR METHOD [repeat=5] [top_k=5]\n");
    return 2;
  }
  const int repeat = argc > 4 ? std::atoi(argv[4]) : 5;
  QueryOptions q;
  q.method = argv[3];
  q.top_k = argc > 5 ? std::strtoul(argv[5], nullptr, 10) : 5;
  EngineOptions eo;
  eo.read_only = true;
  auto engine = Engine::Open(argv[1], eo);
  auto bench = LoadBenchmark(argv[2]);
  if (!engine.ok() || !bench.ok()) {
    std::fprintf(stderr, "query_loop: %s\n",
                 (!engine.ok() ? engine.status() : bench.status()).ToString().c_str());
    return 1;
  }
  const auto& questions = bench->questions;
  std::vector<std::vector<double>> wall(questions.size()), retrieval(questions.size());
  for (int pass = -1; pass < repeat; ++pass) {  // pass -1 warms up
    for (size_t i = 0; i < questions.size(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      auto r = (*engine)->Query(questions[i].question, q);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (!r.ok()) {
        std::fprintf(stderr, "query_loop: %s\n", r.status().ToString().c_str());
        return 1;
      }
      if (pass < 0) continue;
      wall[i].push_back(ms);
      retrieval[i].push_back(r->diagnostics.time_ms);
    }
  }
  std::vector<double> per_question, per_retrieval;
  for (size_t i = 0; i < questions.size(); ++i) {
    per_question.push_back(Median(wall[i]));
    per_retrieval.push_back(Median(retrieval[i]));
  }
  std::printf(
      "{\"method\": \"%s\", \"questions\": %zu, \"repeat\": %d, \"p50_ms\": %.4f, "
      "\"per_question_ms\": %s, \"retrieval_ms\": %s}\n",
      q.method.c_str(), questions.size(), repeat, Median(per_question),
      JsonList(per_question).c_str(), JsonList(per_retrieval).c_str());
  return 0;
}

}  // namespace
}  // namespace flowrag

int main(int argc, char** argv) { return flowrag::Run(argc, argv); }
