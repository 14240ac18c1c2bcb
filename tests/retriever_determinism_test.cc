// Every registered method gives the same ranking, scores and diagnostics
// counters run after run and from concurrent threads (the retrievers keep
// per-thread workspaces and the per-graph query index is built once).
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "flowrag/engine.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

struct Ranking {
  std::vector<int64_t> passages;
  std::vector<double> scores;
  size_t nodes_touched = 0, edges_touched = 0;
  bool operator==(const Ranking&) const = default;
};

std::vector<std::string> DemoQuestions() {
  std::ifstream in(std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo_questions.jsonl");
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line)["question"]);
  }
  return out;
}

TEST(RetrieverDeterminismTest, EveryMethodAcrossRunsAndThreads) {
  testing::TempDir dir;
  auto e = Engine::Open(dir.File("demo.db"));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  std::unique_ptr<Engine> engine = std::move(e).value();
  ASSERT_TRUE(engine->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"}).ok());
  const std::vector<std::string> questions = DemoQuestions();
  ASSERT_GE(questions.size(), 5u);

  auto run = [&](const std::string& method, const std::string& q) -> Ranking {
    QueryOptions o;
    o.method = method;
    o.top_k = 10;
    auto r = engine->Query(q, o);
    if (!r.ok()) return {};
    Ranking k;
    for (const ScoredPassage& p : r->passages) {
      k.passages.push_back(p.passage_id);
      k.scores.push_back(p.score);
    }
    k.nodes_touched = r->diagnostics.nodes_touched;
    k.edges_touched = r->diagnostics.edges_touched;
    return k;
  };
  for (const std::string& method : Engine::Methods()) {
    std::vector<Ranking> expected;
    for (const std::string& q : questions) {
      expected.push_back(run(method, q));
      ASSERT_FALSE(expected.back().passages.empty()) << method << ": " << q;
      EXPECT_EQ(run(method, q), expected.back()) << method << " (second run): " << q;
    }
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (size_t i = 0; i < questions.size(); ++i) {
          const size_t j = (i + static_cast<size_t>(t)) % questions.size();
          if (!(run(method, questions[j]) == expected[j])) ++mismatches;
        }
      });
    }
    for (std::thread& th : threads) th.join();
    EXPECT_EQ(mismatches.load(), 0) << method;
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
