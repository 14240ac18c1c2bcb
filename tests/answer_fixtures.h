// Shared by the answering tests: hand-made passages and an engine over the
// demo corpus (examples/demo), indexed once per test suite, offline.
#ifndef FLOWRAG_TESTS_ANSWER_FIXTURES_H_
#define FLOWRAG_TESTS_ANSWER_FIXTURES_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "flowrag/engine.h"
#include "flowrag/types.h"
#include "test_util.h"

namespace flowrag::testing {

// A retrieved passage with the given id, title and text (the whole document).
inline ScoredPassage P(int64_t id, std::string title, std::string text) {
  ScoredPassage p;
  p.passage_id = id;
  p.document_id = "doc" + std::to_string(id);
  p.title = std::move(title);
  p.text = std::move(text);
  p.end = static_cast<uint32_t>(p.text.size());
  return p;
}

// engine_: the demo corpus in a temporary store, no chat model or remote embedder.
class DemoEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    unsetenv("FLOWRAG_LLM_BASE_URL");
    unsetenv("FLOWRAG_LLM_MODEL");
    unsetenv("FLOWRAG_EMBED_BASE_URL");
    dir_ = new TempDir();
    auto e = Engine::Open(dir_->File("demo.db"));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value().release();
    ASSERT_TRUE(engine_->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"}).ok());
  }
  static void TearDownTestSuite() {
    delete engine_;
    delete dir_;
  }
  static AnswerOptions Options(const std::string& method, const std::string& pipeline) {
    AnswerOptions o;
    o.query.method = method;
    o.pipeline = pipeline;
    return o;
  }
  static inline TempDir* dir_ = nullptr;
  static inline Engine* engine_ = nullptr;
};

}  // namespace flowrag::testing

#endif  // FLOWRAG_TESTS_ANSWER_FIXTURES_H_
