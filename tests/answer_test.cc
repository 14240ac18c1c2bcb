// Offline answering: EM/F1 against worked examples, question profiles, the
// extractive answerer on hand-made passages, and Engine::Ask's answer object
// and citations on the demo corpus with every pipeline.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent/extractive.h"
#include "agent/question_profile.h"
#include "flowrag/engine.h"
#include "flowrag/eval.h"
#include "flowrag/json.h"
#include "test_util.h"

namespace flowrag {
namespace {

TEST(AnswerMetrics, SquadNormalisationAndBestOverGolds) {
  EXPECT_EQ(NormalizeAnswer("  The Eiffel  Tower!! "), "eiffel tower");
  EXPECT_EQ(NormalizeAnswer("An apple, a day"), "apple day");
  EXPECT_EQ(ExactMatch("the Eiffel tower", {"Louvre", "Eiffel Tower"}), 1.0);
  EXPECT_EQ(ExactMatch("Eiffel", {"Eiffel Tower"}), 0.0);
  EXPECT_EQ(ExactMatch("anything", {}), 0.0);
  // pred {port, calder, rowing, club} vs gold {port, calder}: P = 1/2, R = 1.
  EXPECT_NEAR(AnswerF1("Port Calder Rowing Club", {"Port Calder"}), 2.0 / 3.0, 1e-12);
  // Best over golds; repeated tokens count once per occurrence.
  EXPECT_NEAR(AnswerF1("new new york", {"york", "new york"}), 0.8, 1e-12);
  // HotpotQA: yes/no answers score 0 unless equal.
  EXPECT_EQ(AnswerF1("yes it is", {"yes"}), 0.0);
  EXPECT_EQ(AnswerF1("no", {"No"}), 1.0);
  EXPECT_EQ(AnswerF1("", {"x"}), 0.0);
}

TEST(QuestionProfile, TypesAndOptions) {
  EXPECT_EQ(ProfileQuestion("When did the Great Storm hit?").type, AnswerType::kDate);
  QuestionProfile year = ProfileQuestion("In what year was the bridge opened?");
  EXPECT_EQ(year.type, AnswerType::kDate);
  EXPECT_TRUE(year.year_only);
  EXPECT_EQ(ProfileQuestion("How many ships sank?").type, AnswerType::kNumber);
  EXPECT_EQ(ProfileQuestion("Who designed the lens?").type, AnswerType::kName);
  EXPECT_EQ(ProfileQuestion("Is the lens older than the bridge?").type, AnswerType::kYesNo);
  QuestionProfile choice =
      ProfileQuestion("Which club is older, Hollin Bay Athletic or Port Calder Rowing Club?");
  EXPECT_EQ(choice.type, AnswerType::kChoice);
  EXPECT_EQ(choice.options,
            (std::vector<std::string>{"Hollin Bay Athletic", "Port Calder Rowing Club"}));
  EXPECT_EQ(choice.order, -1);
  QuestionProfile aux = ProfileQuestion("Was Sammy Hagar or Renaud Garcia-Fons born first?");
  EXPECT_EQ(aux.type, AnswerType::kChoice);
  EXPECT_EQ(aux.options, (std::vector<std::string>{"Sammy Hagar", "Renaud Garcia-Fons"}));
  EXPECT_EQ(ProfileQuestion("Which film came out later, Alpha or Beta?").order, 1);
  QuestionProfile bare =
      ProfileQuestion("Which band was formed first The Exies or Circus Diablo ?");
  EXPECT_EQ(bare.options, (std::vector<std::string>{"The Exies", "Circus Diablo"}));
  EXPECT_EQ(ProfileQuestion("Who wrote Dune or Emma?").type, AnswerType::kChoice);
  EXPECT_EQ(ProfileQuestion("who wrote it or not?").type, AnswerType::kName);
  EXPECT_FALSE(ProfileQuestion("Who owns the label?").wants_demonym);
  EXPECT_TRUE(ProfileQuestion("What nationality is the director?").wants_demonym);
}

ScoredPassage P(int64_t id, std::string title, std::string text) {
  ScoredPassage p;
  p.passage_id = id;
  p.document_id = "doc" + std::to_string(id);
  p.title = std::move(title);
  p.text = std::move(text);
  return p;
}

TEST(ExtractiveAnswer, PicksTheSpanOfTheRightKindFromTheBestSentence) {
  const std::vector<ScoredPassage> ps = {
      P(1, "Polish Wedding", "Polish Wedding is a 1998 film. It was directed by Theresa Connelly."),
      P(2, "Theresa Connelly", "Theresa Connelly was born in Philadelphia on 3 May 1961.")};
  ExtractiveAnswer who = ExtractAnswer("Who directed Polish Wedding?", ps, nullptr);
  EXPECT_TRUE(who.answered);
  EXPECT_EQ(who.answer, "Theresa Connelly");
  ASSERT_FALSE(who.support.empty());
  EXPECT_EQ(who.support[0].passage, 0u);
  EXPECT_EQ(ps[0].text.substr(who.support[0].begin, who.support[0].end - who.support[0].begin),
            "It was directed by Theresa Connelly.");
  // The question's own names are never the answer.
  ExtractiveAnswer when = ExtractAnswer("When was Theresa Connelly born?", ps, nullptr);
  EXPECT_EQ(when.answer, "3 May 1961");
  ExtractiveAnswer year = ExtractAnswer("What year was Theresa Connelly born?", ps, nullptr);
  EXPECT_EQ(year.answer, "1961");
  // Excluded names are skipped.
  ExtractiveAnswer excl =
      ExtractAnswer("Who directed Polish Wedding?", ps, nullptr, {"Theresa Connelly"});
  EXPECT_NE(excl.answer, "Theresa Connelly");
}

TEST(ExtractiveAnswer, ChoiceByDatesYesNoAndLongForm) {
  const std::vector<ScoredPassage> ps = {
      P(1, "Vey propeller", "The Vey propeller was patented in 1911 by Halloran-Vey."),
      P(2, "Brannock lens", "The Brannock lens was patented in 1887 by Ivo Brannock.")};
  ExtractiveAnswer first = ExtractAnswer(
      "Which invention was patented first: the Vey propeller or the Brannock lens?", ps, nullptr);
  EXPECT_EQ(first.answer, "the Brannock lens");
  EXPECT_GT(first.confidence, 0.5);
  ExtractiveAnswer later =
      ExtractAnswer("Which was patented later, Vey propeller or Brannock lens?", ps, nullptr);
  EXPECT_EQ(later.answer, "Vey propeller");
  EXPECT_EQ(ExtractAnswer("Was the Brannock lens patented?", ps, nullptr).answer, "yes");
  ExtractiveAnswer long_form =
      ExtractAnswer("When were the propeller and the lens patented?", ps, nullptr, {}, {}, true);
  EXPECT_NE(long_form.answer.find("[1]"), std::string::npos);
  EXPECT_NE(long_form.answer.find("[2]"), std::string::npos);
  // Nothing to read: no answer.
  EXPECT_FALSE(ExtractAnswer("Who?", {}, nullptr).answered);
}

class AskTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    unsetenv("FLOWRAG_LLM_BASE_URL");
    unsetenv("FLOWRAG_LLM_MODEL");
    dir_ = new testing::TempDir();
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
  static inline testing::TempDir* dir_ = nullptr;
  static inline Engine* engine_ = nullptr;
};

// Every citation points at a passage of the answer's context, with its
// marker, and quotes that passage at the stated document offsets.
void ExpectGroundedCitations(const Answer& a) {
  ASSERT_FALSE(a.citations.empty()) << a.text;
  for (const Citation& c : a.citations) {
    ASSERT_GE(c.marker, 1);
    ASSERT_LE(static_cast<size_t>(c.marker), a.retrieval.passages.size());
    const ScoredPassage& p = a.retrieval.passages[c.marker - 1];
    EXPECT_EQ(p.passage_id, c.passage_id);
    EXPECT_EQ(p.document_id, c.document_id);
    ASSERT_GE(c.begin, p.begin);
    ASSERT_LE(c.end, p.end);
    EXPECT_EQ(p.text.substr(c.begin - p.begin, c.end - c.begin), c.quote);
  }
}

TEST_F(AskTest, SingleAnswerCitesTheSentenceThatHoldsIt) {
  auto a =
      engine_->Ask("Which invention was patented first: the Vey propeller or the Brannock lens?",
                   Options("hybrid", "single"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(NormalizeAnswer(a->text), "brannock lens");
  EXPECT_EQ(a->answerer, "extractive");
  EXPECT_EQ(a->pipeline, "single");
  EXPECT_EQ(a->steps.size(), 1u);
  EXPECT_EQ(a->usage.llm_calls, 0);
  EXPECT_TRUE(a->warnings.empty());
  ExpectGroundedCitations(*a);
  // The JSON form carries the same object.
  const std::string json = ToJson(*a);
  EXPECT_NE(json.find("\"answerer\":\"extractive\""), std::string::npos);
  EXPECT_NE(json.find("\"citations\":[{"), std::string::npos);
}

TEST_F(AskTest, EveryPipelineWithEveryMethodAnswersWithCitations) {
  const std::string q =
      "Who designed the lens of the lighthouse on the island where the Lantern "
      "Tide festival is held?";
  for (const std::string& method : Engine::Methods()) {
    for (const std::string pipeline : {"single", "cot", "decompose"}) {
      SCOPED_TRACE(method + " " + pipeline);
      auto a = engine_->Ask(q, Options(method, pipeline));
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      EXPECT_FALSE(a->text.empty());
      EXPECT_GE(a->steps.size(), 1u);
      EXPECT_LE(a->steps.size(), pipeline == "cot" ? 3u : 10u);
      EXPECT_EQ(a->retrieval.method, method);
      ExpectGroundedCitations(*a);
    }
  }
}

TEST_F(AskTest, CotFollowsABridgeEntity) {
  auto a = engine_->Ask("Who is the mother of the founder of the Lantern Tide Festival?",
                        Options("hybrid", "cot"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_GE(a->steps.size(), 2u);
  // The follow-up asks about the bridge entity the first round found (the
  // festival's founder) with the question terms it left unmatched.
  EXPECT_EQ(a->steps[1].query, a->steps[0].follow_up);
  EXPECT_NE(a->steps[0].follow_up.find("Corin Aske"), std::string::npos) << a->steps[0].follow_up;
  EXPECT_NE(a->steps[0].follow_up.find("mother"), std::string::npos);
}

TEST_F(AskTest, BadOptionsAreRejectedNamingTheField) {
  AnswerOptions o = Options("hybrid", "loop");
  auto bad = engine_->Ask("q", o);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("pipeline"), std::string::npos);
  o = Options("nosuch", "single");
  EXPECT_EQ(engine_->Ask("q", o).status().code(), StatusCode::kInvalidArgument);
  o = Options("hybrid", "single");
  o.answerer = "llm";  // no model configured
  EXPECT_EQ(engine_->Ask("q", o).status().code(), StatusCode::kFailedPrecondition);
  o.answerer = "auto";
  o.max_steps = 0;
  EXPECT_NE(engine_->Ask("q", o).status().message().find("max_steps"), std::string::npos);
  EXPECT_EQ(engine_->Ask("  ", Options("hybrid", "single")).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(AskTest, EvalWithAnswersScoresEmAndF1) {
  testing::TempDir bench;
  testing::WriteFile(bench.File("corpus.jsonl"), "");
  testing::WriteFile(
      bench.File("questions.jsonl"),
      R"({"id": "a", "question": "Which invention was patented first: the Vey propeller or the Brannock lens?", "answers": ["Brannock lens"], "gold_ids": ["brannock_lens.md"]})"
      "\n"
      R"({"id": "b", "question": "Which club is older, Hollin Bay Athletic or Port Calder Rowing Club?", "answers": ["Port Calder Rowing Club"], "gold_ids": ["organisations/port_calder_rowing_club.md"]})"
      "\n");
  auto b = LoadBenchmark(bench.path());
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EvalOptions eo;
  eo.ks = {5};
  eo.query.method = "hybrid";
  eo.answers = true;
  auto rep = Evaluate(*engine_, *b, eo);
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();
  ASSERT_EQ(rep->records.size(), 2u);
  double em = 0;
  for (const QuestionRecord& r : rep->records) {
    EXPECT_EQ(r.em, ExactMatch(r.answer, r.gold_answers));
    EXPECT_EQ(r.f1, AnswerF1(r.answer, r.gold_answers));
    EXPECT_FALSE(r.citations.empty());
    em += r.em;
  }
  EXPECT_DOUBLE_EQ(rep->em, 100.0 * em / 2.0);
  EXPECT_EQ(rep->records[0].em, 1.0);  // dated choice
  EXPECT_NE(rep->ToJson().find("\"em\""), std::string::npos);
}

}  // namespace
}  // namespace flowrag
