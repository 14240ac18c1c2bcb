// Offline answering: EM/F1 against worked examples, question profiles, the
// extractive answerer on hand-made passages, and Engine::Ask's answer object
// and citations on the demo corpus with every pipeline.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent/answer_lexicon.h"
#include "agent/extractive.h"
#include "agent/question_profile.h"
#include "answer_fixtures.h"
#include "flowrag/engine.h"
#include "flowrag/eval.h"
#include "flowrag/json.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

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

using testing::P;

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

// A title can be the answer ("Which film ..." of a passage about it), but
// not a file name standing in for one.
TEST(ExtractiveAnswer, AFileNameTitleIsNeverTheAnswer) {
  EXPECT_TRUE(IsFileLabel("p2"));
  EXPECT_TRUE(IsFileLabel("table"));
  EXPECT_TRUE(IsFileLabel("doc_3"));
  EXPECT_TRUE(IsFileLabel("IMG0012"));
  EXPECT_FALSE(IsFileLabel("Devotion"));
  EXPECT_FALSE(IsFileLabel("WWII"));
  EXPECT_FALSE(IsFileLabel("1929"));
  EXPECT_FALSE(IsFileLabel("Devotion (1929 film)"));
  const std::string text = "It is a 1929 film directed by Robert Milton.";
  const ExtractiveAnswer named =
      ExtractAnswer("Which film did Robert Milton direct?", {P(1, "Devotion", text)}, nullptr);
  EXPECT_EQ(named.answer, "Devotion");
  const ExtractiveAnswer file =
      ExtractAnswer("Which film did Robert Milton direct?", {P(1, "p2", text)}, nullptr);
  EXPECT_NE(file.answer, "p2");
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

// The viewer's own screenshot answered "How long is the River Ostrel?" with
// the swing bridge's "96 metres" (its sentence says "long", its title
// "Ostrel") while the river's passage says 212 km: the question names the
// river, so the bridge's title does not speak for it, and "212 km" is a
// length ("runs for 212 km" implies "long").
const ScoredPassage kRiver = P(
    1, "River Ostrel",
    "The River Ostrel is the principal river of the Merrow Coast. It rises at Cairn Moss, a peat "
    "bog high in the Hallam Hills, and runs for 212 km before entering the Halvern Sea at Port "
    "Calder. The estuary is crossed at Port Calder by the Ostrel Swing Bridge.");
const ScoredPassage kSwingBridge = P(
    2, "Ostrel Swing Bridge",
    "The Ostrel Swing Bridge carries the coast road across the mouth of the River Ostrel in Port "
    "Calder. Opened in 1961, it replaced a chain ferry. The bridge is 96 metres long; its central "
    "steel span of 58 metres pivots on a single pier.");

TEST(ExtractiveAnswer, AnswersAboutTheEntityTheQuestionNames) {
  for (const auto& ps : {std::vector<ScoredPassage>{kRiver, kSwingBridge},
                         std::vector<ScoredPassage>{kSwingBridge, kRiver}}) {
    SCOPED_TRACE(ps[0].title + " ranked first");
    for (const char* q : {"How long is the River Ostrel?",
                          "How long is the River Ostrel from its source in the Hallam Hills to "
                          "the sea?"}) {
      ExtractiveAnswer a = ExtractAnswer(q, ps, nullptr);
      EXPECT_EQ(a.answer, "212 km") << q << ": " << a.reasoning;
    }
    // And the bridge's length when the question names the bridge.
    EXPECT_EQ(ExtractAnswer("How long is the Ostrel Swing Bridge?", ps, nullptr).answer,
              "96 metres");
  }
}

const ScoredPassage kFestival = P(
    3, "Lantern Tide Festival",
    "The Lantern Tide Festival is held in Port Calder every September. It was founded in 1947 by "
    "the conductor Corin Aske as a celebration of the river and the sea.");
const ScoredPassage kAske = P(
    4, "Corin Aske",
    "Corin Aske (1902\u20131979) was a composer and conductor. He was born in Wrenfield, the son "
    "of a church organist. He founded the Merrow Coast Philharmonic.");

TEST(ExtractiveAnswer, FollowsTheBridgeEntityToItsPassage) {
  const std::string q = "In which town was the man who founded the Lantern Tide Festival born?";
  // The festival's passage names Corin Aske as its founder; his passage
  // says where he was born.
  ExtractiveAnswer a = ExtractAnswer(q, {kFestival, kAske}, nullptr);
  EXPECT_EQ(a.answer, "Wrenfield") << a.reasoning;
  EXPECT_EQ(a.bridge_used, "Corin Aske");
  // It rests on both sentences: the answer's and the link's.
  ASSERT_EQ(a.evidence, 2u);
  EXPECT_EQ(a.support[0].passage, 1u);
  EXPECT_EQ(a.support[1].passage, 0u);
  // Without the bridge's passage the festival's own town is not offered as
  // the birthplace of its founder; the bridge is named for a follow-up.
  ExtractiveAnswer partial = ExtractAnswer(q, {kFestival}, nullptr);
  ASSERT_FALSE(partial.bridges.empty());
  EXPECT_EQ(partial.bridges[0], "Corin Aske");
  EXPECT_FALSE(partial.unmatched_terms.empty());
  // A date asked of the bridge: his birth year, from "(1902–1979)".
  EXPECT_EQ(ExtractAnswer("In what year was the founder of the Lantern Tide Festival born?",
                          {kFestival, kAske}, nullptr)
                .answer,
            "1902");
}

TEST(ExtractiveAnswer, GraphEntitiesOrderTheBridgesOffered) {
  const std::vector<ScoredPassage> ps = {
      P(1, "Greymantle Suite",
        "The Greymantle Suite was composed by Corin Aske and first conducted by Ivo Marsh.")};
  const std::string q = "Where was the man who composed the Greymantle Suite born?";
  ExtractiveAnswer text_only = ExtractAnswer(q, ps, nullptr);
  ASSERT_GE(text_only.bridges.size(), 1u);
  EXPECT_EQ(text_only.bridges[0], "Corin Aske");
  // The graph scored Ivo Marsh above Corin Aske: it is offered first.
  ExtractiveAnswer graph = ExtractAnswer(q, ps, nullptr, {}, {}, false, {"Ivo Marsh", "Corin Aske"});
  ASSERT_EQ(graph.bridges.size(), 2u);
  EXPECT_EQ(graph.bridges[0], "Ivo Marsh");
}

TEST(ExtractiveAnswer, ComparesOptionsThroughTheirBridges) {
  const std::vector<ScoredPassage> ps = {
      P(1, "Stage Kisses", "Stage Kisses is a 1927 American silent drama film directed by Albert Kelley."),
      P(2, "The Lame Devil", "The Lame Devil is a 1948 French film directed by Sacha Guitry."),
      P(3, "Albert Kelley", "Albert Kelley (5 June 1890 \u2013 7 March 1970) was an American film director."),
      P(4, "Sacha Guitry", "Sacha Guitry (21 February 1885 \u2013 24 July 1957) was a French actor and director.")};
  // The films' own dates say 1927 < 1948; the directors' births say otherwise.
  ExtractiveAnswer later = ExtractAnswer(
      "Which film has the director who was born later, Stage Kisses or The Lame Devil?", ps, nullptr);
  EXPECT_EQ(later.answer, "Stage Kisses") << later.reasoning;
  EXPECT_EQ(later.evidence, 2u);
  EXPECT_EQ(ExtractAnswer("Which film came out first, Stage Kisses or The Lame Devil?", ps, nullptr)
                .answer,
            "Stage Kisses");
  // Same nationality: compared, not assumed.
  EXPECT_EQ(ExtractAnswer("Were Albert Kelley and Sacha Guitry of the same nationality?", ps,
                          nullptr)
                .answer,
            "no");
  EXPECT_EQ(ExtractAnswer("Are the directors of film Stage Kisses and film The Lame Devil from "
                          "the same country?",
                          ps, nullptr)
                .answer,
            "no");
  const std::vector<ScoredPassage> both = {
      P(1, "Albert Kelley", "Albert Kelley was an American film director."),
      P(2, "Ruth Lane", "Ruth Lane (born 1901) is an American actress.")};
  EXPECT_EQ(ExtractAnswer("Were Albert Kelley and Ruth Lane from the same country?", both, nullptr)
                .answer,
            "yes");
}

TEST(ExtractiveAnswer, ComparesLivesNationalitiesAndPairs) {
  const std::vector<ScoredPassage> ps = {
      P(1, "Ludwig Elsbett",
        "Ludwig Elsbett( born November 8, 1913 in Salz, Germany \u2013 d. March 28, 2003) was a "
        "German engineer."),
      P(2, "Pamela Rymer",
        "Pamela Rymer( January 16, 1941 \u2013 September 21, 2011) was an American judge.")};
  // 89 years against 70: the lifespans, not the birth or death dates alone.
  EXPECT_EQ(ExtractAnswer("Who lived longer, Ludwig Elsbett or Pamela Rymer?", ps, nullptr).answer,
            "Ludwig Elsbett");
  EXPECT_EQ(ExtractAnswer("Who was born first out of Pamela Rymer and Ludwig Elsbett?", ps, nullptr)
                .answer,
            "Ludwig Elsbett");
  EXPECT_EQ(ExtractAnswer("Are Ludwig Elsbett and Pamela Rymer both American?", ps, nullptr).answer,
            "no");
  EXPECT_EQ(
      ExtractAnswer("Which lawyer is American, Ludwig Elsbett or Pamela Rymer?", ps, nullptr).answer,
      "Pamela Rymer");
  // "between" without a comparison is no choice.
  EXPECT_NE(ProfileQuestion("What is the distance between Salz and Munich?").type,
            AnswerType::kChoice);
}

TEST(ExtractiveAnswer, AComparisonMissingABridgeNamesIt) {
  // One film's director has a passage, the other's does not: the film's own
  // date is not compared with a director's birth; the missing director is
  // offered as the bridge to retrieve.
  const std::vector<ScoredPassage> ps = {
      P(1, "Stage Kisses", "Stage Kisses is a 1927 American silent drama film directed by Albert Kelley."),
      P(2, "The Lame Devil", "The Lame Devil is a 1948 French film directed by Sacha Guitry."),
      P(3, "Sacha Guitry", "Sacha Guitry (21 February 1885 \u2013 24 July 1957) was a French actor and director.")};
  ExtractiveAnswer a = ExtractAnswer(
      "Which film has the director who was born later, Stage Kisses or The Lame Devil?", ps, nullptr);
  EXPECT_LT(a.confidence, 0.6);
  ASSERT_FALSE(a.bridges.empty());
  EXPECT_EQ(a.bridges[0], "Albert Kelley");
}

TEST(ExtractiveAnswer, CountsWithoutTheCountedWord) {
  const std::vector<ScoredPassage> ps = {
      P(1, "Tidehall", "The main auditorium seats 1,820 people, and a smaller recital room holds 240.")};
  EXPECT_EQ(ExtractAnswer("How many seats does the main auditorium of Tidehall have?", ps, nullptr)
                .answer,
            "1,820");
}

using AskTest = testing::DemoEngineTest;

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
      EXPECT_EQ(a->retrieval.method, method == "auto" ? "qafd" : method);  // a graph store
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

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
