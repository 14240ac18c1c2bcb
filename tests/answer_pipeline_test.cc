// The offline chain of thought over a scripted retriever: the follow-up
// asks about the bridge entity the graph retrieval surfaced, the final
// answer reads every round's passages, and a follow-up never replaces a
// better-supported first answer.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "agent/pipeline.h"
#include "answer_fixtures.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::P;

GraphNode Entity(std::string name, double score, bool seed = false) {
  GraphNode n;
  n.kind = "Entity";
  n.label = std::move(name);
  n.score = score;
  n.seed = seed;
  return n;
}

const std::string kQuestion =
    "In which town was the man who founded the Lantern Tide Festival born?";

// Round 1 (the question) finds the festival, which names two founders in
// two sentences; the graph's entity scores are `nodes`. A query naming a
// founder finds that founder's passage.
class ScriptedRetriever {
 public:
  explicit ScriptedRetriever(std::vector<GraphNode> nodes) : nodes_(std::move(nodes)) {}

  Result<RetrievalResult> operator()(std::string_view query, ChatModel*) {
    queries.emplace_back(query);
    RetrievalResult r;
    r.method = "scripted";
    if (query.find("Ivo Marsh") != std::string_view::npos) {
      r.passages = {
          P(2, "Ivo Marsh", "Ivo Marsh (1890\u20131950) was a sailor. He was born in Hollin Bay.")};
    } else if (query.find("Corin Aske") != std::string_view::npos) {
      r.passages = {P(3, "Corin Aske", "Corin Aske was a conductor. He was born in Wrenfield.")};
    } else {
      r.passages = {P(1, "Lantern Tide Festival",
                      "The Lantern Tide Festival is held in Port Calder. It was founded in 1947 by "
                      "the sailor Ivo Marsh. The conductor Corin Aske co-founded it.")};
      r.nodes = nodes_;
    }
    return r;
  }

  std::vector<std::string> queries;

 private:
  std::vector<GraphNode> nodes_;
};

Result<Answer> AskCot(ScriptedRetriever* retriever) {
  PipelineDeps deps;
  deps.retrieve = [retriever](std::string_view q, ChatModel* c) { return (*retriever)(q, c); };
  AnswerOptions o;
  o.pipeline = "cot";
  return RunAnswerPipeline(kQuestion, o, deps);
}

TEST(OfflineCot, FollowsTheBridgeTheGraphScoredHighest) {
  // The graph ranks Corin Aske above Ivo Marsh (seeds are the question's own
  // entities and are never bridges).
  ScriptedRetriever graph({Entity("Lantern Tide Festival", 0.9, true), Entity("Port Calder", 0.5),
                           Entity("Corin Aske", 0.3), Entity("Ivo Marsh", 0.1)});
  auto a = AskCot(&graph);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_GE(a->steps.size(), 2u);
  EXPECT_NE(a->steps[0].follow_up.find("Corin Aske"), std::string::npos) << a->steps[0].follow_up;
  EXPECT_NE(a->steps[0].follow_up.find("born"), std::string::npos) << a->steps[0].follow_up;
  EXPECT_EQ(a->steps[1].query, a->steps[0].follow_up);
  EXPECT_EQ(a->text, "Wrenfield") << a->reasoning;
  // The answer cites the founder's birthplace and the festival's founding.
  ASSERT_EQ(a->citations.size(), 2u);
  EXPECT_EQ(a->citations[0].title, "Corin Aske");
  EXPECT_EQ(a->citations[1].title, "Lantern Tide Festival");

  // The same text with the graph preferring Ivo Marsh: his birthplace.
  ScriptedRetriever other({Entity("Ivo Marsh", 0.4), Entity("Corin Aske", 0.2)});
  auto b = AskCot(&other);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_GE(b->steps.size(), 2u);
  EXPECT_NE(b->steps[0].follow_up.find("Ivo Marsh"), std::string::npos) << b->steps[0].follow_up;
  EXPECT_EQ(b->text, "Hollin Bay");
}

TEST(OfflineCot, TextRetrieversFollowTheBestLinkedName) {
  // No graph: the name the relation links best ("founded in 1947 by the
  // sailor Ivo Marsh", a passive agent) is followed.
  ScriptedRetriever text({});
  auto a = AskCot(&text);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_GE(a->steps.size(), 2u);
  EXPECT_NE(a->steps[0].follow_up.find("Ivo Marsh"), std::string::npos) << a->steps[0].follow_up;
  EXPECT_EQ(text.queries.front(), kQuestion);
}

TEST(OfflineCot, AComparisonFetchesTheBridgeAnOptionLacks) {
  // Round 1 finds both films and one director; the other director's birth
  // is one follow-up away.
  auto retrieve = [](std::string_view q, ChatModel*) -> Result<RetrievalResult> {
    RetrievalResult r;
    if (q.find("Albert Kelley") != std::string_view::npos) {
      r.passages = {P(4, "Albert Kelley",
                      "Albert Kelley (5 June 1890 \u2013 7 March 1970) was an American director.")};
    } else {
      r.passages = {
          P(1, "Stage Kisses",
            "Stage Kisses is a 1927 American drama film directed by Albert Kelley."),
          P(2, "The Lame Devil", "The Lame Devil is a 1948 French film directed by Sacha Guitry."),
          P(3, "Sacha Guitry",
            "Sacha Guitry (21 February 1885 \u2013 24 July 1957) was a French actor and "
            "director.")};
    }
    return r;
  };
  PipelineDeps deps;
  deps.retrieve = retrieve;
  AnswerOptions o;
  o.pipeline = "cot";
  const std::string q =
      "Which film has the director who was born later, Stage Kisses or The Lame Devil?";
  auto a = RunAnswerPipeline(q, o, deps);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->steps.size(), 2u);
  EXPECT_NE(a->steps[0].follow_up.find("Albert Kelley"), std::string::npos);
  EXPECT_EQ(a->text, "Stage Kisses") << a->reasoning;  // 1890 > 1885
}

TEST(OfflineCot, AFollowUpDoesNotRerouteAnAnsweredSentence) {
  // Round 1's sentence names the DJ; the cricketer it also names only
  // qualifies the album. A follow-up that brings his passage finds a
  // better-covered sentence about him, through the sentence that already
  // answered: the DJ stays (the shape of a hotpotqa-train question where
  // cot with qafd answered "England" before Reroutes).
  const std::string q =
      "Who was the DJ of the compilation album partially produced by an English cricketer born in "
      "Christchurch, New Zealand?";
  // Any follow-up finds the cricketer.
  auto retrieve = [&q](std::string_view query, ChatModel*) -> Result<RetrievalResult> {
    RetrievalResult r;
    if (query != q) {
      r.passages = {P(2, "Ben Stokes",
                      "Ben Stokes is an English cricketer. Born in Christchurch, New Zealand, he "
                      "moved to northern England at the age of 12.")};
    } else {
      r.passages = {P(1, "Hello Friends",
                      "Hello Friends is a compilation album DJ'ed by Jack Dangers, partially "
                      "produced with the cricketer Ben Stokes.")};
    }
    return r;
  };
  PipelineDeps deps;
  deps.retrieve = retrieve;
  // IDF as in the hotpotqa-train store: the cricketer's terms are rarer
  // than the album's.
  deps.idf = [](std::string_view t) {
    static const std::map<std::string_view, double> idf = {
        {"compilation", 4.2}, {"album", 2.2},     {"partially", 6.5}, {"produced", 2.5},
        {"english", 1.3},     {"cricketer", 5.4}, {"born", 1.7},      {"christchurch", 2.4},
        {"new", 1.0},         {"zealand", 2.2},   {"dj", 2.4}};
    auto it = idf.find(t);
    return it == idf.end() ? 1.0 : it->second;
  };
  AnswerOptions o;
  o.pipeline = "single";
  auto single = RunAnswerPipeline(q, o, deps);
  o.pipeline = "cot";
  auto cot = RunAnswerPipeline(q, o, deps);
  ASSERT_TRUE(single.ok() && cot.ok());
  EXPECT_EQ(single->text, "Jack Dangers");
  ASSERT_GE(cot->steps.size(), 2u);  // it did follow up
  EXPECT_EQ(cot->text, "Jack Dangers") << cot->reasoning;
}

TEST(OfflineCot, AnsweredQuestionsStopAfterOneRoundLikeSingle) {
  ScriptedRetriever text({});
  PipelineDeps deps;
  deps.retrieve = [&text](std::string_view q, ChatModel* c) { return text(q, c); };
  AnswerOptions o;
  o.pipeline = "cot";
  auto cot = RunAnswerPipeline("In what year was the Lantern Tide Festival founded?", o, deps);
  o.pipeline = "single";
  auto single = RunAnswerPipeline("In what year was the Lantern Tide Festival founded?", o, deps);
  ASSERT_TRUE(cot.ok() && single.ok());
  EXPECT_EQ(cot->text, "1947");
  EXPECT_EQ(cot->text, single->text);
  EXPECT_EQ(cot->steps.size(), 1u);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
