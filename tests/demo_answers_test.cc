// End to end on the demo corpus: `ask` answers the 12 questions of
// examples/demo_questions.jsonl offline (built-in embedder, extractive
// answerer, no chat model), with the single pipeline and with cot.
//
// Method: the default query method (QueryOptions{}.method, "auto": qafd on
// this graph store), and ppr, qafd, semflow and hybrid pinned the same way.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "answer_fixtures.h"
#include "flowrag/engine.h"
#include "flowrag/eval.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

struct DemoQuestion {
  std::string id, question;
  std::vector<std::string> answers;
};

std::vector<DemoQuestion> LoadDemoQuestions() {
  std::ifstream in(std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo_questions.jsonl");
  std::vector<DemoQuestion> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line);
    out.push_back({j["id"], j["question"], j["answers"].get<std::vector<std::string>>()});
  }
  return out;
}

class DemoAnswers : public testing::DemoEngineTest,
                    public ::testing::WithParamInterface<std::string> {
 protected:
  // How many of the demo questions `pipeline` answers right with `method`.
  static size_t Correct(const std::string& method, const std::string& pipeline) {
    size_t right = 0;
    for (const DemoQuestion& q : LoadDemoQuestions()) {
      auto a = engine_->Ask(q.question, Options(method, pipeline));
      EXPECT_TRUE(a.ok()) << a.status().ToString();
      if (!a.ok()) continue;
      const bool ok = ExactMatch(a->text, q.answers) == 1.0;
      right += ok;
      if (!ok) {
        std::printf("[ miss   ] %s/%s %s: \"%s\" answered \"%s\", expected \"%s\"\n",
                    method.c_str(), pipeline.c_str(), q.id.c_str(), q.question.c_str(),
                    a->text.c_str(), q.answers[0].c_str());
      }
    }
    return right;
  }
};

// 11 of 12 single, and cot at least as many; every miss is printed so a
// regression names its question.
TEST_P(DemoAnswers, ElevenOfTwelveSingleAndCotAtLeastAsMany) {
  const std::string method = GetParam().empty() ? QueryOptions{}.method : GetParam();
  std::printf("[ method ] %s%s\n", method.c_str(), GetParam().empty() ? " (the default)" : "");
  const size_t single = Correct(method, "single");
  const size_t cot = Correct(method, "cot");
  std::printf("[ demo   ] %s: single %zu/12, cot %zu/12\n", method.c_str(), single, cot);
  EXPECT_GE(single, 11u);
  EXPECT_GE(cot, single);
}

// "" = the default method.
INSTANTIATE_TEST_SUITE_P(Methods, DemoAnswers,
                         ::testing::Values("", "ppr", "qafd", "semflow", "hybrid"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           return p.param.empty() ? std::string("DefaultMethod") : p.param;
                         });

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
