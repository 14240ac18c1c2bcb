// Tokeniser throughput (src/common/text.h Tokenize with its defaults) over
// the texts of a corpus.jsonl ({"title", "text"} per line): MB/s and tokens,
// the median of --runs passes. bench/out/unicode_tokenizer.md compares the
// ASCII fast path with the code before the Unicode tokeniser (built from
// that commit's text.cc) and measures Chinese/Japanese/Thai text.
//
// Usage: tokenizer_speed CORPUS.jsonl [RUNS=7] [REPEAT=1]
//   REPEAT concatenates the corpus that many times (small corpora).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/text.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS.jsonl [RUNS] [REPEAT]\n", argv[0]);
    return 2;
  }
  const int runs = argc > 2 ? std::atoi(argv[2]) : 7;
  const int repeat = argc > 3 ? std::atoi(argv[3]) : 1;
  std::vector<std::string> texts;
  size_t bytes = 0;
  std::ifstream in(argv[1]);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;
    texts.push_back(j.value("title", "") + "\n" + j.value("text", ""));
  }
  for (const auto& t : texts) bytes += t.size();
  std::vector<double> secs;
  size_t tokens = 0;
  for (int r = 0; r < runs; ++r) {
    tokens = 0;
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < repeat; ++k) {
      for (const std::string& t : texts) tokens += flowrag::Tokenize(t).size();
    }
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(secs.begin(), secs.end());
  const double median = secs[secs.size() / 2];
  std::printf("%s: %zu texts, %.2f MB x%d, %zu tokens, median %.4f s, %.1f MB/s\n", argv[1],
              texts.size(), bytes / 1e6, repeat, tokens, median, bytes * repeat / 1e6 / median);
  return 0;
}
