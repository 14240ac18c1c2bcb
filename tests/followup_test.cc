// The follow-up rewriter (agent/followup.h) on conversations over a small
// corpus of its own (not the demo's): pronouns, possessives, "there",
// demonstratives, ellipses, gender and number cues, three turns, questions
// that must stay as they are; the chat model's rewrite, validated, with the
// offline fallback; reading an assistant message's "Sources:" list.
#include "agent/followup.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "common/text.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

struct Doc {
  const char* title;
  const char* text;
};

// People of both genders, things, a place and a club; the pronouns their
// passages use are what the rewriter reads.
const std::vector<Doc>& Corpus() {
  static const std::vector<Doc> docs = {
      {"Ada Lindqvist",
       "Ada Lindqvist (1850–1921) was a chemist. Born in Norrvik, she studied at the University "
       "of Uppsala. She discovered the Lindqvist reaction in 1889. Her brother Karl Lindqvist was "
       "a "
       "painter."},
      {"Lindqvist reaction",
       "The Lindqvist reaction is a method for making blue dyes. It was first described in 1889 "
       "by Ada Lindqvist. It uses copper salts and is still taught today."},
      {"Karl Lindqvist",
       "Karl Lindqvist (1848–1910) was a painter. He was born in Norrvik and painted its harbour "
       "many times. His best-known work is Winter Harbour. He died in Stockholm."},
      {"Norrvik",
       "Norrvik is a fishing town on the east coast. It has a harbour, a church and a small "
       "museum. The painter Karl Lindqvist worked in Norrvik for most of his life."},
      {"Winter Harbour",
       "Winter Harbour is an oil painting by Karl Lindqvist, completed in 1894. It hangs in the "
       "National Gallery in Stockholm."},
      {"Otto Berg",
       "Otto Berg (1830–1899) was an engineer who designed the Berg lamp. He was born in Tornby, "
       "the son of a miner. He retired in 1890 and died in Tornby."},
      {"Berg lamp",
       "The Berg lamp is a safety lamp for miners designed by Otto Berg. It was patented in 1861. "
       "By 1880 it was used in 40 mines, and by 1890 in 120 mines. The lamps were made by Sandvik "
       "& Sons, a foundry in Tornby."},
      {"Lindqvist Prize",
       "# Lindqvist Prize\n\nThe Lindqvist prize is an award for young chemists named after Ada "
       "Lindqvist. It is given every two years by the University of Uppsala."},
      {"Tornby",
       "Tornby is a mining village in the hills. It grew around the copper mine opened in 1790. "
       "The engineer Otto Berg was born in Tornby."},
      {"Tornby Rowing Club",
       "The Tornby Rowing Club is a rowing club founded in 1872 by miners. They race on the river "
       "every summer and their boathouse stands below the bridge."},
  };
  return docs;
}

// A keyword search over Corpus(): passages ranked by the question's terms
// they hold (a title's terms count double).
FollowUpLookup CorpusLookup(std::atomic<int>* searches = nullptr) {
  FollowUpLookup lookup;
  lookup.passages = [searches](std::string_view text,
                               size_t k) -> Result<std::vector<ScoredPassage>> {
    if (searches != nullptr) ++*searches;
    const std::vector<std::string> terms = Tokenize(text);
    std::vector<ScoredPassage> out;
    int64_t id = 0;
    for (const Doc& d : Corpus()) {
      ++id;
      const std::vector<std::string> title = Tokenize(d.title);
      const std::vector<std::string> body = Tokenize(d.text);
      double score = 0;
      for (const std::string& t : terms) {
        score += 2.0 * static_cast<double>(std::count(title.begin(), title.end(), t));
        score += std::count(body.begin(), body.end(), t) > 0 ? 1.0 : 0.0;
      }
      if (score <= 0) continue;
      ScoredPassage p;
      p.passage_id = id;
      p.document_id = d.title;
      p.title = d.title;
      p.text = d.text;
      p.score = score;
      out.push_back(std::move(p));
    }
    std::stable_sort(out.begin(), out.end(), [](const ScoredPassage& a, const ScoredPassage& b) {
      return a.score > b.score;
    });
    if (out.size() > k) out.resize(k);
    return out;
  };
  return lookup;
}

using Turns = std::vector<ChatMessage>;

// An assistant message as the chat endpoint writes it.
ChatMessage Assistant(const std::string& answer, std::vector<std::string> sources = {}) {
  std::string content = answer;
  if (!sources.empty()) {
    content += "\n\nSources:";
    for (size_t i = 0; i < sources.size(); ++i) {
      content += "\n[" + std::to_string(i + 1) + "] " + sources[i] + " (docs/" + std::to_string(i) +
                 ".md)";
    }
  }
  return {"assistant", content};
}

ChatMessage User(const std::string& text) { return {"user", text}; }

std::string Rewrite(const std::string& question, const Turns& earlier,
                    const FollowUpLookup& lookup = CorpusLookup()) {
  return RewriteFollowUpOffline(question, earlier, lookup).query;
}

const Turns& LampDesigner() {
  static const Turns turns = {{"system", "Answer from the documents."},
                              User("Who designed the Berg lamp?"),
                              Assistant("Otto Berg", {"Berg lamp", "Otto Berg"})};
  return turns;
}

TEST(FollowUpTest, APronounBecomesThePersonThePreviousAnswerNamed) {
  const QueryRewrite r =
      RewriteFollowUpOffline("Where was he born?", LampDesigner(), CorpusLookup());
  EXPECT_EQ(r.query, "Where was Otto Berg born?");
  EXPECT_EQ(r.method, "offline");
  ASSERT_EQ(r.references.size(), 1u);
  EXPECT_EQ(r.references[0].text, "he");
  EXPECT_EQ(r.references[0].target, "Otto Berg");
  EXPECT_NE(r.reason.find("Otto Berg"), std::string::npos) << r.reason;
}

TEST(FollowUpTest, ItBindsToTheThingNotThePerson) {
  EXPECT_EQ(Rewrite("When was it patented?", LampDesigner()), "When was the Berg lamp patented?");
  EXPECT_EQ(Rewrite("It was used in how many mines?", LampDesigner()),
            "The Berg lamp was used in how many mines?");
}

TEST(FollowUpTest, PossessivesTakeTheName) {
  const Turns turns = {User("Who discovered the Lindqvist reaction?"),
                       Assistant("Ada Lindqvist", {"Lindqvist reaction", "Ada Lindqvist"})};
  EXPECT_EQ(Rewrite("Who was her brother?", turns), "Who was Ada Lindqvist's brother?");
  EXPECT_EQ(Rewrite("What does its method make?", turns),
            "What does the Lindqvist reaction's method make?");
}

TEST(FollowUpTest, GenderDecidesBetweenAManAndAWoman) {
  // The answer (a man) is the most recent name, but "she" can only be Ada.
  const Turns turns = {User("Who was the brother of Ada Lindqvist?"),
                       Assistant("Karl Lindqvist", {"Ada Lindqvist", "Karl Lindqvist"})};
  EXPECT_EQ(Rewrite("Where did she study?", turns), "Where did Ada Lindqvist study?");
  EXPECT_EQ(Rewrite("Where did he die?", turns), "Where did Karl Lindqvist die?");
  EXPECT_EQ(Rewrite("What is his best-known work?", turns),
            "What is Karl Lindqvist's best-known work?");
}

TEST(FollowUpTest, AReferenceNothingAgreesWithStaysAsItIs) {
  // Only a man and a lamp were mentioned: "she" binds to neither.
  const QueryRewrite r =
      RewriteFollowUpOffline("Where was she born?", LampDesigner(), CorpusLookup());
  EXPECT_EQ(r.query, "Where was she born?");
  EXPECT_EQ(r.method, "none");
}

TEST(FollowUpTest, ThereIsThePlaceThePreviousAnswerNamed) {
  const Turns turns = {User("Where was Karl Lindqvist born?"),
                       Assistant("Norrvik", {"Karl Lindqvist"})};
  EXPECT_EQ(Rewrite("What did he paint there?", turns),
            "What did Karl Lindqvist paint in Norrvik?");
  // Existential "there" is no reference.
  EXPECT_EQ(Rewrite("Is there a museum in Norrvik?", turns), "Is there a museum in Norrvik?");
}

TEST(FollowUpTest, TheyPrefersAGroup) {
  const Turns turns = {User("When was the Tornby Rowing Club founded?"),
                       Assistant("1872", {"Tornby Rowing Club"})};
  EXPECT_EQ(Rewrite("Where do they race?", turns), "Where do the Tornby Rowing Club race?");
}

TEST(FollowUpTest, DemonstrativeAndDefiniteNounPhrasesNameTheThing) {
  EXPECT_EQ(Rewrite("When was that lamp patented?", LampDesigner()),
            "When was the Berg lamp patented?");
  EXPECT_EQ(Rewrite("When was the lamp patented?", LampDesigner()),
            "When was the Berg lamp patented?");
  // A noun no name of the conversation has stays.
  EXPECT_EQ(Rewrite("Who owned the mine?", LampDesigner()), "Who owned the mine?");
}

TEST(FollowUpTest, ANameKnownOnlyByItsTitleIsWrittenAsItsPassageWritesIt) {
  // The answer names nothing; the cited title does ("Lindqvist Prize"),
  // and its passage writes "the Lindqvist prize".
  const Turns turns = {User("What is named after Ada Lindqvist?"),
                       Assistant("an award for young chemists", {"Lindqvist Prize"})};
  EXPECT_EQ(Rewrite("How often is it given?", turns), "How often is the Lindqvist prize given?");
}

TEST(FollowUpTest, AnAppositionTellsWhatANameIs) {
  // "Sandvik & Sons, a foundry in Tornby": "that foundry" is Sandvik & Sons.
  const Turns turns = {User("Who made the Berg lamps?"),
                       Assistant("Sandvik & Sons", {"Berg lamp"})};
  EXPECT_EQ(Rewrite("Where is that foundry?", turns), "Where is Sandvik & Sons?");
}

TEST(FollowUpTest, EllipsesAreCompletedFromThePreviousQuestion) {
  const Turns by_year = {User("How many mines used the Berg lamp by 1890?"),
                         Assistant("120", {"Berg lamp"})};
  EXPECT_EQ(Rewrite("And in 1880?", by_year), "How many mines used the Berg lamp in 1880?");

  const Turns born = {User("Where was Ada Lindqvist born?"),
                      Assistant("Norrvik", {"Ada Lindqvist"})};
  EXPECT_EQ(Rewrite("What about Otto Berg?", born), "Where was Otto Berg born?");
  EXPECT_EQ(Rewrite("And Karl Lindqvist?", born), "Where was Karl Lindqvist born?");
  EXPECT_EQ(Rewrite("When?", born), "When was Ada Lindqvist born?");
  EXPECT_EQ(Rewrite("And her brother?", born), "Where was Ada Lindqvist's brother born?");

  EXPECT_EQ(Rewrite("When?", LampDesigner()), "When was the Berg lamp designed?");
  EXPECT_EQ(Rewrite("And the Lindqvist reaction?", LampDesigner()),
            "Who designed the Lindqvist reaction?");
}

TEST(FollowUpTest, SelfContainedQuestionsAreLeftUnchanged) {
  for (const std::string q :
       {"Where was Karl Lindqvist born?", "Who designed the Berg lamp and when was it patented?",
        "Where was Ada Lindqvist born, and where did she study?",
        "Is it true that Otto Berg was born in Tornby?",
        "How long did it take to build the Tornby mine?",
        "Which painting hangs in the National Gallery?"}) {
    const QueryRewrite r = RewriteFollowUpOffline(q, LampDesigner(), CorpusLookup());
    EXPECT_EQ(r.query, q);
    EXPECT_EQ(r.method, "none") << q << ": " << r.reason;
  }
  // The first turn has nothing to refer to.
  EXPECT_EQ(Rewrite("Where was he born?", {{"system", "Be brief."}}), "Where was he born?");
}

TEST(FollowUpTest, ThreeTurnsCarryTheSubjectThroughAnEarlierFollowUp) {
  Turns turns = LampDesigner();
  turns.push_back(User("Where was he born?"));  // resolved to Otto Berg first
  turns.push_back(Assistant("Tornby", {"Otto Berg", "Tornby"}));
  EXPECT_EQ(Rewrite("When did he retire?", turns), "When did Otto Berg retire?");
  EXPECT_EQ(Rewrite("What was mined there?", turns), "What was mined in Tornby?");
  EXPECT_EQ(Rewrite("When was it patented?", turns), "When was the Berg lamp patented?");
}

TEST(FollowUpTest, WithoutTheStoreTheAnswersWhWordStillGuides) {
  // No search: "Who" made the answer a person, so "he" binds to it.
  const Turns turns = {User("Who painted Winter Harbour?"), Assistant("Karl Lindqvist")};
  EXPECT_EQ(Rewrite("Where was he born?", turns, FollowUpLookup{}),
            "Where was Karl Lindqvist born?");
}

TEST(FollowUpTest, TheGraphsEntityTypeIsACue) {
  // Names the passages say nothing about: the type decides.
  FollowUpLookup lookup;
  lookup.entity_type = [](std::string_view name) -> std::string {
    return name == "Mira Holt" ? "PERSON" : name == "Kestrel Point" ? "LOCATION" : "";
  };
  const Turns turns = {User("Which survey did Mira Holt lead at Kestrel Point?"),
                       Assistant("The Tide Survey")};
  EXPECT_EQ(Rewrite("What else did she lead?", turns, lookup), "What else did Mira Holt lead?");
  EXPECT_EQ(Rewrite("Who else worked there?", turns, lookup), "Who else worked in Kestrel Point?");
}

TEST(FollowUpTest, ReadsTheAnswerAndItsSources) {
  const AssistantTurn t = ReadAssistantTurn(
      "Ivo Brannock\n\nSources:\n[1] Brannock Lens (brannock_lens.md)\n[2] Devotion (1929 film) "
      "(films/devotion.md)\n[3] notes.md\n\nSearched for: Who designed the Brannock lens?");
  EXPECT_EQ(t.answer, "Ivo Brannock");
  EXPECT_EQ(t.cited_titles,
            (std::vector<std::string>{"Brannock Lens", "Devotion (1929 film)", "notes.md"}));
  EXPECT_EQ(ReadAssistantTurn("Just text.").answer, "Just text.");
}

// A chat model that answers every call with `reply` (or fails) and counts calls.
class FixedChat final : public ChatModel {
 public:
  explicit FixedChat(Result<std::string> reply, std::string finish = "stop")
      : reply_(std::move(reply)), finish_(std::move(finish)) {}
  std::string Model() const override { return "test:fixed"; }
  Result<ChatResponse> Complete(const ChatRequest& request) override {
    ++calls;
    last = request;
    if (!reply_.ok()) return reply_.status();
    ChatResponse r;
    r.content = *reply_;
    r.finish_reason = finish_;
    r.prompt_tokens = 50;
    r.completion_tokens = 9;
    return r;
  }
  int calls = 0;
  ChatRequest last;

 private:
  Result<std::string> reply_;
  std::string finish_;
};

TEST(FollowUpTest, TheChatModelRewritesAndItsReplyIsRead) {
  FixedChat chat(std::string("Standalone question: \"Where was Otto Berg born?\""));
  const QueryRewrite r =
      RewriteFollowUp("Where was he born?", LampDesigner(), CorpusLookup(), &chat);
  EXPECT_EQ(r.query, "Where was Otto Berg born?");
  EXPECT_EQ(r.method, "llm");
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.usage.llm_calls, 1);
  EXPECT_EQ(r.usage.prompt_tokens, 50);
  ASSERT_EQ(chat.calls, 1);
  ASSERT_EQ(chat.last.messages.size(), 2u);
  const std::string& prompt = chat.last.messages[1].content;
  EXPECT_NE(prompt.find("User: Who designed the Berg lamp?"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("Assistant: Otto Berg\n"), std::string::npos) << prompt;  // no Sources list
  EXPECT_NE(prompt.find("Last question: Where was he born?"), std::string::npos) << prompt;
}

TEST(FollowUpTest, ABadOrFailedModelRewriteFallsBackOfflineWithAWarning) {
  const std::vector<std::pair<Result<std::string>, std::string>> cases = {
      {std::string(R"({"final_answer": "Tornby"})"), "JSON"},
      {std::string("   "), "empty"},
      {std::string("Where was Otto Berg born?\nI replaced the pronoun."), "lines"},
      {std::string(5000, 'x'), "bytes"},
      {Status::Unavailable("connection refused"), "failed"},
  };
  for (const auto& [reply, why] : cases) {
    FixedChat chat(reply);
    const QueryRewrite r =
        RewriteFollowUp("Where was he born?", LampDesigner(), CorpusLookup(), &chat);
    EXPECT_EQ(r.query, "Where was Otto Berg born?") << why;
    EXPECT_EQ(r.method, "offline") << why;
    ASSERT_EQ(r.warnings.size(), 1u) << why;
    EXPECT_NE(r.warnings[0].find(why), std::string::npos) << r.warnings[0];
    EXPECT_NE(r.warnings[0].find("rewritten offline"), std::string::npos) << r.warnings[0];
  }
  FixedChat cut(std::string("Where was Otto"), "length");
  const QueryRewrite r =
      RewriteFollowUp("Where was he born?", LampDesigner(), CorpusLookup(), &cut);
  EXPECT_EQ(r.query, "Where was Otto Berg born?");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("cut off"), std::string::npos) << r.warnings[0];
}

TEST(FollowUpTest, TheModelIsNotAskedForASelfContainedQuestionOrAFirstTurn) {
  FixedChat chat(std::string("something else"));
  QueryRewrite r =
      RewriteFollowUp("Where was Karl Lindqvist born?", LampDesigner(), CorpusLookup(), &chat);
  EXPECT_EQ(r.query, "Where was Karl Lindqvist born?");
  r = RewriteFollowUp("Where was he born?", {{"system", "Be brief."}}, CorpusLookup(), &chat);
  EXPECT_EQ(r.query, "Where was he born?");
  EXPECT_EQ(chat.calls, 0);
  // A question without a name of its own may lean on the conversation: asked.
  r = RewriteFollowUp("Who owned the mine?", LampDesigner(), CorpusLookup(), &chat);
  EXPECT_EQ(chat.calls, 1);
  EXPECT_EQ(r.query, "something else");
}

TEST(FollowUpTest, ReadModelRewriteStripsLabelsAndQuotes) {
  EXPECT_EQ(*ReadModelRewrite("Question: 'Who was Ada?'", "Who was she?"), "Who was Ada?");
  EXPECT_EQ(*ReadModelRewrite("Standalone question:\n\u201cWho was Ada?\u201d\n", "q"),
            "Who was Ada?");
  EXPECT_FALSE(ReadModelRewrite("[1, 2]", "q").ok());
  EXPECT_FALSE(ReadModelRewrite("a\x01"
                                "b",
                                "q")
                   .ok());
}

TEST(FollowUpTest, LongConversationsReadOnlyTheLastTurns) {
  // Twenty earlier turns about Ada, then one about Otto Berg: "he" is Otto,
  // and only the last max_turns turns are searched.
  Turns turns;
  for (int i = 0; i < 20; ++i) {
    turns.push_back(User("What did Ada Lindqvist discover?"));
    turns.push_back(Assistant("the Lindqvist reaction", {"Ada Lindqvist"}));
  }
  turns.push_back(User("Who designed the Berg lamp?"));
  turns.push_back(Assistant("Otto Berg", {"Berg lamp", "Otto Berg"}));
  std::atomic<int> searches{0};
  EXPECT_EQ(Rewrite("Where was he born?", turns, CorpusLookup(&searches)),
            "Where was Otto Berg born?");
  EXPECT_LT(searches.load(), 40);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
