#include "extract/heuristic_extractor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/text.h"
#include "lexical/entity_spans.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

// ---------------------------------------------------------------------------
// Span detection on real sentences.

std::vector<std::string> Spans(const std::string& text, const SpanOptions& options = {}) {
  std::vector<std::string> out;
  for (const EntitySpan& s : DetectEntitySpans(text, options)) {
    out.push_back(std::string(SpanKindName(s.kind)) + ":" + text.substr(s.begin, s.end - s.begin));
  }
  return out;
}

struct SpanCase {
  const char* text;
  std::vector<std::string> expected;
};

// Text without sentence punctuation (PDF extractions): a lone capitalised
// function word, or a word the text also writes in lower case, is no name.
TEST(EntitySpansTest, LoneCapitalisedCommonWordsAreNoNames) {
  const std::vector<std::string> got = Spans(
      "your team may assess if the nodule is cancer If the nodule is unlikely Cancer your US "
      "doctor at Mayo Clinic will wait");
  EXPECT_EQ(got, (std::vector<std::string>{"PROPER_NOUN:US", "PROPER_NOUN:Mayo Clinic"}));
}

TEST(EntitySpansTest, RealSentences) {
  const std::vector<SpanCase> cases = {
      {"Teutberga( died 11 November 875) was a queen of Lotharingia by marriage to Lothair II.",
       {"PROPER_NOUN:Teutberga", "DATE:11 November 875", "PROPER_NOUN:Lotharingia",
        "PROPER_NOUN:Lothair II"}},
      {"She was a daughter of Bosonid Boso the Elder and sister of Hucbert, the lay- abbot of "
       "St. Maurice's Abbey.",
       {"PROPER_NOUN:Bosonid Boso the Elder", "PROPER_NOUN:Hucbert",
        "PROPER_NOUN:St. Maurice's Abbey"}},
      {"Theodred II was a medieval Bishop of Elmham.",
       {"PROPER_NOUN:Theodred II", "PROPER_NOUN:Bishop of Elmham"}},
      {"The date of Theodred's consecration unknown, but the date of his death was sometime "
       "between 995 and 997.",
       {"PROPER_NOUN:Theodred", "DATE:995", "DATE:997"}},
      {"He succeeded his elder brother, Guy, as count and duke of Lucca and margrave of Tuscany "
       "on his death in 928 or 929 without heirs.",
       {"PROPER_NOUN:Guy", "PROPER_NOUN:Lucca", "PROPER_NOUN:Tuscany", "DATE:928", "DATE:929"}},
      {"In 931, before 17 October, Hugh, King of Italy, disowned and removed Lambert.",
       {"DATE:931", "DATE:17 October", "PROPER_NOUN:Hugh", "PROPER_NOUN:King of Italy",
        "PROPER_NOUN:Lambert"}},
      {"Lothair II (835 –) was the king of Lotharingia from 855 until his death.",
       {"PROPER_NOUN:Lothair II", "DATE:835", "PROPER_NOUN:Lotharingia", "DATE:855"}},
      {"He was the second son of Emperor Lothair I and Ermengarde of Tours.",
       {"PROPER_NOUN:Emperor Lothair I", "PROPER_NOUN:Ermengarde of Tours"}},
      {"Lambert( died after 938) was the second son of Adalbert II of Tuscany and Bertha.",
       {"PROPER_NOUN:Lambert", "DATE:938", "PROPER_NOUN:Adalbert II of Tuscany",
        "PROPER_NOUN:Bertha"}},
      {"Boritzer was first published in 1963 at the age of 13 when he wrote an essay at Wade "
       "Junior High School in the Bronx, New York on the assassination of John F. Kennedy.",
       {"PROPER_NOUN:Boritzer", "DATE:1963", "NUMBER:13", "PROPER_NOUN:Wade Junior High School",
        "PROPER_NOUN:Bronx", "PROPER_NOUN:New York", "PROPER_NOUN:John F. Kennedy"}},
      {"The series is now also translated into 15 languages.", {"NUMBER:15 languages"}},
      {"It weighed 2.4 tonnes and was made by Pellow & Daughters, a glassworks in Port Calder.",
       {"NUMBER:2.4 tonnes", "PROPER_NOUN:Pellow & Daughters", "PROPER_NOUN:Port Calder"}},
      {"The stadium has 1,820 seats and lies 212 km from Paris.",
       {"NUMBER:1,820 seats", "NUMBER:212 km", "PROPER_NOUN:Paris"}},
      {"It opened on November 11, 1961 and closed on 1999-03-15, in the 1960s.",
       {"DATE:November 11, 1961", "DATE:1999-03-15", "DATE:1960s"}},
      {"Ludwig van Beethoven visited the Bank of England in March 1961 with $5 million.",
       {"PROPER_NOUN:Ludwig van Beethoven", "PROPER_NOUN:Bank of England", "DATE:March 1961",
        "NUMBER:$5 million"}},
      {"The Brannock lens is a rotating lighthouse optic invented by Ivo Brannock.",
       {"PROPER_NOUN:Brannock", "PROPER_NOUN:Ivo Brannock"}},
      {"Sparta was ruled by him from 369 to 309 BC, and the turnout was 38%.",
       {"PROPER_NOUN:Sparta", "DATE:369", "DATE:309 BC", "NUMBER:38%"}},
      {"Born in Saint-Étienne, Jean-Paul O'Brien moved to Rostov-on-Don in the Soviet Union.",
       {"PROPER_NOUN:Saint-Étienne", "PROPER_NOUN:Jean-Paul O'Brien", "PROPER_NOUN:Rostov-on-Don",
        "PROPER_NOUN:Soviet Union"}},
      {"In the summer, Guy and Lambert met on Monday in Paris.",
       {"PROPER_NOUN:Guy", "PROPER_NOUN:Lambert", "PROPER_NOUN:Paris"}},
  };
  for (const SpanCase& c : cases) {
    EXPECT_EQ(Spans(c.text), c.expected) << c.text;
  }
}

TEST(EntitySpansTest, SentenceInitialWordsAndOptions) {
  // "Directed" is written in lower case elsewhere in the passage: not a name.
  EXPECT_EQ(Spans("Directed by Harry Beaumont. It was directed well."),
            (std::vector<std::string>{"PROPER_NOUN:Harry Beaumont"}));
  // A lone month is not an entity; "The" alone is dropped.
  EXPECT_EQ(Spans("The film opened in November."), std::vector<std::string>{});
  // Options switch kinds off; min length drops one-letter spans.
  SpanOptions names_only;
  names_only.dates = false;
  names_only.numbers = false;
  EXPECT_EQ(Spans("In 1961 Pell rowed 212 km to Port Calder.", names_only),
            (std::vector<std::string>{"PROPER_NOUN:Pell", "PROPER_NOUN:Port Calder"}));
  SpanOptions longer;
  longer.min_proper_noun_bytes = 5;
  EXPECT_EQ(Spans("Guy met Lambert.", longer), (std::vector<std::string>{"PROPER_NOUN:Lambert"}));
}

TEST(SentenceSplitTest, RomanNumeralsAndInitials) {
  auto split = [](const std::string& t) {
    std::vector<std::string> out;
    for (TextSpan s : SplitSentences(t)) out.push_back(t.substr(s.begin, s.end - s.begin));
    return out;
  };
  EXPECT_EQ(split("He married Lothair II. She was a daughter of Boso."),
            (std::vector<std::string>{"He married Lothair II.", "She was a daughter of Boso."}));
  EXPECT_EQ(split("He served Charles I. He died young."),
            (std::vector<std::string>{"He served Charles I.", "He died young."}));
  EXPECT_EQ(split("It fell in 40 BC. The son ruled."),
            (std::vector<std::string>{"It fell in 40 BC.", "The son ruled."}));
  EXPECT_EQ(split("John F. Kennedy and Robert I. Chen met T. V. Chandran at St. Maurice."),
            (std::vector<std::string>{
                "John F. Kennedy and Robert I. Chen met T. V. Chandran at St. Maurice."}));
}

// ---------------------------------------------------------------------------
// The extractor on mini documents.

struct Doc {
  int64_t id;
  std::string title;
  std::string text;
  int32_t ordinal = 0;
};

std::vector<PassageInput> Inputs(const std::vector<Doc>& docs) {
  std::vector<PassageInput> in;
  for (const Doc& d : docs) in.push_back({d.id, d.title, d.text, d.ordinal});
  return in;
}

const ExtractedEntity* Find(const PassageExtraction& x, std::string_view name) {
  for (const ExtractedEntity& e : x.entities) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

bool HasTriple(const PassageExtraction& x, std::string_view s, std::string_view o,
               std::string_view relation_prefix = "") {
  for (const ExtractedTriple& t : x.triples) {
    if (t.subject == s && t.object == o && t.relation.starts_with(relation_prefix)) return true;
  }
  return false;
}

std::string Dump(const std::vector<PassageExtraction>& xs) {
  std::ostringstream os;
  for (const PassageExtraction& x : xs) {
    os << "P" << x.passage_id << "\n";
    for (const ExtractedEntity& e : x.entities) {
      os << "  E " << e.name << " | " << e.type << " | " << e.count << " | " << e.defining << " | "
         << e.description << " |";
      for (const std::string& a : e.aliases) os << " ~" << a;
      os << "\n";
    }
    for (const ExtractedTriple& t : x.triples) {
      os << "  T " << t.subject << " -> " << t.object << " : " << t.relation << "\n";
    }
  }
  return os.str();
}

const std::vector<Doc>& MiniCorpus() {
  static const std::vector<Doc> docs = {
      {1, "Teutberga",
       "Teutberga( died 11 November 875) was a queen of Lotharingia by marriage to Lothair II. "
       "She was a daughter of Bosonid Boso the Elder and sister of Hucbert, the lay- abbot of "
       "St. Maurice's Abbey."},
      {2, "Lothair II",
       "Lothair II (835 –) was the king of Lotharingia from 855 until his death. He was the "
       "second son of Emperor Lothair I and Ermengarde of Tours. He was married to Teutberga "
       "(died 875), daughter of Boso the Elder."},
      {3, "Lothair II",
       "In 857 he tried to divorce his wife in order to marry his mistress Waldrada.", 1},
      {4, "Theodred II (Bishop of Elmham)",
       "Theodred II was a medieval Bishop of Elmham. The date of Theodred's consecration "
       "unknown, but the date of his death was sometime between 995 and 997."},
      {5, "Elmham", "A list of bishops of Elmham includes Theodred II and others."},
      {6, "Hope", "Hope is a 1997 song. Everyone spoke of the hope of peace; they sang Hope."},
  };
  return docs;
}

TEST(HeuristicExtractorTest, TitleEntityDescriptionAndSpans) {
  HeuristicExtractor ex;
  auto out = ex.ExtractCorpus(Inputs(MiniCorpus()));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 6u);
  const PassageExtraction& p1 = (*out)[0];
  EXPECT_EQ(p1.passage_id, 1);
  ASSERT_FALSE(p1.entities.empty());
  const ExtractedEntity& title = p1.entities[0];
  EXPECT_EQ(title.name, "Teutberga");
  EXPECT_EQ(title.type, "TITLE");
  EXPECT_TRUE(title.defining);
  EXPECT_EQ(title.count, 1);
  EXPECT_EQ(title.description,
            "Teutberga( died 11 November 875) was a queen of Lotharingia by marriage to Lothair "
            "II.");
  const ExtractedEntity* date = Find(p1, "11 November 875");
  ASSERT_NE(date, nullptr);
  EXPECT_EQ(date->type, "DATE");
  EXPECT_TRUE(date->defining);
  const ExtractedEntity* abbey = Find(p1, "St. Maurice's Abbey");
  ASSERT_NE(abbey, nullptr);
  EXPECT_EQ(abbey->type, "PROPER_NOUN");
  EXPECT_EQ(Find(p1, "She"), nullptr);

  // Every passage of a titled document carries the title entity; only the
  // title passage (ordinal 0) describes it.
  const PassageExtraction& p3 = (*out)[2];
  ASSERT_FALSE(p3.entities.empty());
  EXPECT_EQ(p3.entities[0].name, "Lothair II");
  EXPECT_TRUE(p3.entities[0].defining);
  EXPECT_EQ(p3.entities[0].description, "");
  EXPECT_TRUE((*out)[1].entities[0].description.starts_with("Lothair II (835 –) was the "));

  // Entities after the title are in order of first occurrence.
  std::vector<std::string> names;
  for (const ExtractedEntity& e : p1.entities) names.push_back(e.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"Teutberga", "11 November 875", "Lotharingia", "Lothair II",
                                      "Bosonid Boso the Elder", "Hucbert", "St. Maurice's Abbey"}));
}

TEST(HeuristicExtractorTest, DictionaryLinksOtherDocumentsSubjects) {
  HeuristicExtractor ex;
  auto out = ex.ExtractCorpus(Inputs(MiniCorpus()));
  ASSERT_TRUE(out.ok());
  // Passage 1 names "Lothair II", the subject of document 2: a non-defining
  // link to that title entity, not a second entity.
  const ExtractedEntity* lothair = Find((*out)[0], "Lothair II");
  ASSERT_NE(lothair, nullptr);
  EXPECT_FALSE(lothair->defining);
  EXPECT_EQ(lothair->type, "TITLE");
  // And passage 2 names Teutberga.
  const ExtractedEntity* teutberga = Find((*out)[1], "Teutberga");
  ASSERT_NE(teutberga, nullptr);
  EXPECT_FALSE(teutberga->defining);
  EXPECT_EQ(teutberga->count, 1);
  // Its own title mentioned in the text counts as the title entity.
  EXPECT_EQ((*out)[1].entities[0].name, "Lothair II");
  EXPECT_EQ((*out)[1].entities[0].count, 1);
  // A title's alias without the disambiguation links to the canonical title,
  // with the surface form as an alias.
  const ExtractedEntity* theodred = Find((*out)[4], "Theodred II (Bishop of Elmham)");
  ASSERT_NE(theodred, nullptr) << Dump(*out);
  EXPECT_FALSE(theodred->defining);
  EXPECT_EQ(theodred->aliases, (std::vector<std::string>{"Theodred II"}));
  EXPECT_EQ(Find((*out)[4], "Theodred II"), nullptr);
  // In its own passage the alias is the title entity.
  const PassageExtraction& p4 = (*out)[3];
  EXPECT_EQ(p4.entities[0].name, "Theodred II (Bishop of Elmham)");
  EXPECT_EQ(p4.entities[0].count, 1);
  EXPECT_EQ(p4.entities[0].aliases, (std::vector<std::string>{"Theodred II"}));
  EXPECT_EQ(Find(p4, "Theodred II"), nullptr);
  // "Bishop of Elmham" is a span; "Elmham" inside it is not re-linked... but
  // the separate title "Elmham" links wherever it stands alone.
  EXPECT_NE(Find(p4, "Bishop of Elmham"), nullptr);
  // A capitalised name links only where the text capitalises it: "Hope"
  // (passage 6's own title) counts "Hope is" and "sang Hope", not "the hope of".
  EXPECT_EQ((*out)[5].entities[0].name, "Hope");
  EXPECT_EQ((*out)[5].entities[0].count, 2);
}

TEST(HeuristicExtractorTest, SentenceCooccurrenceTriples) {
  HeuristicExtractorOptions sentence_relations;
  sentence_relations.relation = HeuristicExtractorOptions::Relation::kSentence;
  sentence_relations.pair_window = 0;  // every pair
  auto ex = HeuristicExtractor::Create(sentence_relations);
  ASSERT_TRUE(ex.ok());
  auto out = ex->ExtractCorpus(Inputs(MiniCorpus()));
  ASSERT_TRUE(out.ok());
  const PassageExtraction& p1 = (*out)[0];
  const std::string s1 =
      "Teutberga( died 11 November 875) was a queen of Lotharingia by marriage to Lothair II.";
  const std::string s2 =
      "She was a daughter of Bosonid Boso the Elder and sister of Hucbert, the lay- abbot of "
      "St. Maurice's Abbey.";
  // Pairs in sentence order: subject earlier, object later, relation = the sentence.
  EXPECT_TRUE(HasTriple(p1, "Teutberga", "Lothair II", s1));
  EXPECT_TRUE(HasTriple(p1, "11 November 875", "Lotharingia", s1));
  EXPECT_TRUE(HasTriple(p1, "Lotharingia", "Lothair II", s1));
  EXPECT_FALSE(HasTriple(p1, "Lothair II", "Lotharingia"));
  // The second sentence does not name Teutberga, but the passage is about
  // her: title pairs.
  EXPECT_TRUE(HasTriple(p1, "Teutberga", "Hucbert", s2));
  EXPECT_TRUE(HasTriple(p1, "Bosonid Boso the Elder", "St. Maurice's Abbey", s2));
  // Sentence 1 has 4 entities (6 pairs), sentence 2 has 3 plus the title (6 pairs).
  EXPECT_EQ(p1.triples.size(), 12u) << Dump(*out);
  for (const ExtractedTriple& t : p1.triples) {
    EXPECT_TRUE(t.relation == s1 || t.relation == s2);
  }
  // Two literals are not paired: "995" and "997" in passage 4.
  EXPECT_FALSE(HasTriple((*out)[3], "995", "997"));
  EXPECT_TRUE(HasTriple((*out)[3], "Theodred II (Bishop of Elmham)", "995"));

  HeuristicExtractorOptions with_literals;
  with_literals.pair_window = 0;
  with_literals.pair_literals = true;
  with_literals.title_pairs = false;
  auto ex2 = HeuristicExtractor::Create(with_literals);
  ASSERT_TRUE(ex2.ok());
  auto out2 = ex2->ExtractCorpus(Inputs(MiniCorpus()));
  ASSERT_TRUE(out2.ok());
  EXPECT_TRUE(HasTriple((*out2)[3], "995", "997"));
  EXPECT_FALSE(HasTriple((*out2)[0], "Teutberga", "Hucbert"));
}

// By default entities pair with their neighbour in the sentence; the title
// entity pairs with all of them.
TEST(HeuristicExtractorTest, ProximityPairsNeighboursAndTheTitleWithAll) {
  HeuristicExtractor ex;
  auto out = ex.ExtractCorpus(Inputs(MiniCorpus()));
  ASSERT_TRUE(out.ok());
  const PassageExtraction& p1 = (*out)[0];
  // Sentence 1: Teutberga, 11 November 875, Lotharingia, Lothair II.
  EXPECT_TRUE(HasTriple(p1, "11 November 875", "Lotharingia"));
  EXPECT_TRUE(HasTriple(p1, "Lotharingia", "Lothair II"));
  EXPECT_FALSE(HasTriple(p1, "11 November 875", "Lothair II"));
  EXPECT_TRUE(HasTriple(p1, "Teutberga", "Lothair II"));  // the title with all
  // Sentence 2: Bosonid Boso the Elder, Hucbert, St. Maurice's Abbey.
  EXPECT_TRUE(HasTriple(p1, "Bosonid Boso the Elder", "Hucbert"));
  EXPECT_FALSE(HasTriple(p1, "Bosonid Boso the Elder", "St. Maurice's Abbey"));
  EXPECT_TRUE(HasTriple(p1, "Teutberga", "St. Maurice's Abbey"));
  // 3 + 2 title pairs in sentence 1, 2 + 3 in sentence 2.
  EXPECT_EQ(p1.triples.size(), 10u) << Dump(*out);
}

TEST(HeuristicExtractorTest, PhraseRelationsNameWhatLinksThePair) {
  // The default relation is the phrase introducing the later mention: the
  // same pairs as with sentence relations, told apart by their link words.
  HeuristicExtractorOptions all_pairs;
  all_pairs.pair_window = 0;
  auto ex = *HeuristicExtractor::Create(all_pairs);
  auto out = ex.ExtractCorpus(Inputs(MiniCorpus()));
  ASSERT_TRUE(out.ok());
  const PassageExtraction& p1 = (*out)[0];
  EXPECT_EQ(p1.triples.size(), 12u) << Dump(*out);
  EXPECT_TRUE(HasTriple(p1, "Teutberga", "Lotharingia", "was a queen of")) << Dump(*out);
  EXPECT_TRUE(HasTriple(p1, "Teutberga", "Lothair II", "by marriage to")) << Dump(*out);
  // Title pair in a sentence that does not name the title: the object's phrase.
  EXPECT_TRUE(HasTriple(p1, "Teutberga", "Bosonid Boso the Elder", "She was a daughter of"))
      << Dump(*out);
  EXPECT_TRUE(HasTriple(p1, "Teutberga", "Hucbert", "sister of")) << Dump(*out);
  for (const ExtractedTriple& t : p1.triples) {
    EXPECT_FALSE(t.relation.empty());
    EXPECT_LE(std::count(t.relation.begin(), t.relation.end(), ' '), 7) << t.relation;
  }

  // A list shares the phrase before its first item; "and" and commas are
  // not relations.
  std::vector<Doc> docs = {
      {1, "Devotion", "Devotion is a film directed by Guido Brignone and starring Marcella Albani, "
                      "Hans Melzer and Hans Schlettow."}};
  auto film = ex.Extract(Inputs(docs), EntityDictionary());
  ASSERT_TRUE(film.ok());
  const PassageExtraction& f = (*film)[0];
  EXPECT_TRUE(HasTriple(f, "Devotion", "Guido Brignone", "is a film directed by")) << Dump(*film);
  for (const char* actor : {"Marcella Albani", "Hans Melzer", "Hans Schlettow"}) {
    EXPECT_TRUE(HasTriple(f, "Devotion", actor, "starring")) << actor << "\n" << Dump(*film);
    EXPECT_FALSE(HasTriple(f, "Devotion", actor, "and")) << actor;
  }
  // Nothing before the first mention: the words after it.
  std::vector<Doc> lead = {{1, "", "Ada Lovelace worked with Charles Babbage."}};
  auto after = ex.Extract(Inputs(lead), EntityDictionary());
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(HasTriple((*after)[0], "Ada Lovelace", "Charles Babbage", "worked with"))
      << Dump(*after);
}

TEST(HeuristicExtractorTest, CapsEntitiesPerSentenceAndRelationBytes) {
  std::string names;
  for (const char* n :
       {"Ada", "Bea", "Cal", "Dov", "Eli", "Fay", "Gus", "Hal", "Ivo", "Jon", "Kai", "Lev"}) {
    names += std::string(n) + ", ";
  }
  std::string sentence = "They met " + names + "and the rest";
  while (sentence.size() < 400) sentence += " of the ünïcödé crowd";
  sentence += ".";
  std::vector<Doc> docs = {{1, "", sentence}};
  HeuristicExtractorOptions sentence_relations;
  sentence_relations.relation = HeuristicExtractorOptions::Relation::kSentence;
  sentence_relations.pair_window = 0;  // every pair
  auto ex = HeuristicExtractor::Create(sentence_relations);
  ASSERT_TRUE(ex.ok());
  auto out = ex->Extract(Inputs(docs), EntityDictionary());
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].entities.size(), 12u) << Dump(*out);
  EXPECT_EQ((*out)[0].triples.size(), 28u);  // the first 8 entities: 8·7/2 pairs
  for (const ExtractedTriple& t : (*out)[0].triples) {
    EXPECT_LE(t.relation.size(), 300u);
    EXPECT_GT(t.relation.size(), 280u);
    EXPECT_TRUE(IsValidUtf8(t.relation));
    for (const char* late : {"Ivo", "Jon", "Kai", "Lev"}) {  // beyond the first 8
      EXPECT_NE(t.subject, late);
      EXPECT_NE(t.object, late);
    }
  }
}

TEST(HeuristicExtractorTest, DeterministicOutput) {
  HeuristicExtractor ex;
  auto a = ex.ExtractCorpus(Inputs(MiniCorpus()));
  auto b = ex.ExtractCorpus(Inputs(MiniCorpus()));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Dump(*a), Dump(*b));
  // Building the dictionary from the same names in another order gives the same links.
  auto names = ex.CollectDefiningNames(Inputs(MiniCorpus()));
  std::reverse(names.begin(), names.end());
  auto c = ex.Extract(Inputs(MiniCorpus()), EntityDictionary::Build(names));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(Dump(*a), Dump(*c));
}

TEST(HeuristicExtractorTest, CollectDefiningNamesAndDictionary) {
  HeuristicExtractor ex;
  auto names = ex.CollectDefiningNames(Inputs(MiniCorpus()));
  std::vector<std::string> got;
  for (const KnownName& n : names) got.push_back(n.name + "=>" + n.canonical + ":" + n.type);
  EXPECT_EQ(got, (std::vector<std::string>{
                     "Teutberga=>Teutberga:TITLE", "Lothair II=>Lothair II:TITLE",
                     "Theodred II (Bishop of Elmham)=>Theodred II (Bishop of Elmham):TITLE",
                     "Theodred II=>Theodred II (Bishop of Elmham):TITLE", "Elmham=>Elmham:TITLE",
                     "Hope=>Hope:TITLE"}));
  EXPECT_EQ(TitleAliases("The Merrow Coast"), (std::vector<std::string>{"Merrow Coast"}));
  EXPECT_EQ(TitleAliases("The Who (band)"),
            (std::vector<std::string>{"The Who", "Who (band)", "Who"}));
  EXPECT_TRUE(TitleAliases("Port Calder").empty());

  EntityDictionary dict = EntityDictionary::Build(names);
  EXPECT_EQ(dict.num_entities(), 5u);
  EXPECT_EQ(dict.num_names(), 6u);
  EXPECT_EQ(dict.Lookup("theodred  II"),
            (std::vector<std::string_view>{"Theodred II (Bishop of Elmham)"}));
  EXPECT_TRUE(dict.Lookup("Boso").empty());
}

TEST(HeuristicExtractorTest, AmbiguousAliasesAndFunctionWordNames) {
  std::vector<KnownName> names = {{"John Smith (actor)", "", "TITLE"},
                                  {"John Smith", "John Smith (actor)", "TITLE"},
                                  {"John Smith (footballer)", "", "TITLE"},
                                  {"John Smith", "John Smith (footballer)", "TITLE"},
                                  {"It", "", "TITLE"},
                                  {"The Who", "", "TITLE"},
                                  {"Merrow Coast", "The Merrow Coast", "TITLE"}};
  EntityDictionary dict = EntityDictionary::Build(names);
  std::vector<Doc> docs = {
      {1, "", "It was John Smith who sang with the Who on the Merrow Coast."},
  };
  HeuristicExtractor ex;
  auto out = ex.Extract(Inputs(docs), dict);
  ASSERT_TRUE(out.ok());
  const PassageExtraction& x = (*out)[0];
  // Both John Smiths (an ambiguous alias links to every candidate, up to 3).
  EXPECT_NE(Find(x, "John Smith (actor)"), nullptr) << Dump(*out);
  EXPECT_NE(Find(x, "John Smith (footballer)"), nullptr);
  EXPECT_EQ(Find(x, "John Smith"), nullptr);
  // A leading "The" need not be capitalised; "It" is never linked.
  EXPECT_NE(Find(x, "The Who"), nullptr);
  EXPECT_EQ(Find(x, "It"), nullptr);
  EXPECT_NE(Find(x, "The Merrow Coast"), nullptr);

  HeuristicExtractorOptions strict;
  strict.max_alias_candidates = 1;
  auto ex1 = HeuristicExtractor::Create(strict);
  ASSERT_TRUE(ex1.ok());
  auto out1 = ex1->Extract(Inputs(docs), dict);
  ASSERT_TRUE(out1.ok());
  EXPECT_EQ(Find((*out1)[0], "John Smith (actor)"), nullptr);
  // Unlinked, the name is still a detected span of its own.
  EXPECT_NE(Find((*out1)[0], "John Smith"), nullptr);
}

TEST(HeuristicExtractorTest, LinkNewNamesAddsOnlyNewMentions) {
  const std::vector<Doc> old_docs = {
      {1, "Teutberga",
       "Teutberga( died 11 November 875) was a queen of Lotharingia by marriage to Lothair II. "
       "She was a daughter of Bosonid Boso the Elder and sister of Hucbert, the lay- abbot of "
       "St. Maurice's Abbey."},
      {2, "Hucbert", "Hucbert was a Frankish abbot and a brother of Teutberga."},
      {3, "Lotharingia", "Lotharingia was a medieval kingdom."},
  };
  const std::vector<Doc> new_docs = {
      {10, "Boso the Elder", "Boso the Elder was a Frankish count."},
      {11, "Lothair II", "Lothair II was the king of Lotharingia."},
  };
  HeuristicExtractor ex;
  auto old_names = ex.CollectDefiningNames(Inputs(old_docs));
  auto new_names = ex.CollectDefiningNames(Inputs(new_docs));
  EntityDictionary old_dict = EntityDictionary::Build(old_names);
  EntityDictionary new_dict = EntityDictionary::Build(new_names);

  auto delta = ex.LinkNewNames(Inputs(old_docs), new_dict, &old_dict);
  ASSERT_TRUE(delta.ok());
  // Only passage 1 names a new subject. "Lothair II" is already a detected
  // span there (same key): not repeated. "Boso the Elder" is new.
  ASSERT_EQ(delta->size(), 1u) << Dump(*delta);
  const PassageExtraction& d = (*delta)[0];
  EXPECT_EQ(d.passage_id, 1);
  ASSERT_EQ(d.entities.size(), 1u) << Dump(*delta);
  EXPECT_EQ(d.entities[0].name, "Boso the Elder");
  EXPECT_FALSE(d.entities[0].defining);
  EXPECT_EQ(d.entities[0].type, "TITLE");
  for (const ExtractedTriple& t : d.triples) {
    EXPECT_TRUE(t.subject == "Boso the Elder" || t.object == "Boso the Elder");
  }
  EXPECT_TRUE(HasTriple(d, "Teutberga", "Boso the Elder"));
  EXPECT_TRUE(
      HasTriple(d, "Boso the Elder", "Hucbert"));  // Hucbert: a link of the known dictionary

  // The delta agrees with a full extraction over old and new names.
  std::vector<KnownName> all = old_names;
  all.insert(all.end(), new_names.begin(), new_names.end());
  auto full = ex.Extract(Inputs(old_docs), EntityDictionary::Build(all));
  ASSERT_TRUE(full.ok());
  const ExtractedEntity* boso = Find((*full)[0], "Boso the Elder");
  ASSERT_NE(boso, nullptr);
  EXPECT_EQ(boso->count, d.entities[0].count);
  for (const ExtractedTriple& t : d.triples) {
    EXPECT_TRUE(HasTriple((*full)[0], t.subject, t.object, t.relation))
        << t.subject << " " << t.object;
  }
  size_t full_boso_triples = 0;
  for (const ExtractedTriple& t : (*full)[0].triples) {
    full_boso_triples += t.subject == "Boso the Elder" || t.object == "Boso the Elder";
  }
  EXPECT_EQ(full_boso_triples, d.triples.size());

  // Without the known dictionary, pairs with old links are not produced but
  // the new mention is.
  auto delta2 = ex.LinkNewNames(Inputs(old_docs), new_dict);
  ASSERT_TRUE(delta2.ok());
  ASSERT_EQ(delta2->size(), 1u);
  EXPECT_EQ((*delta2)[0].entities.size(), 1u);
  // Old passages that mention nothing new give nothing; an empty dictionary gives nothing.
  auto none = ex.LinkNewNames(Inputs(old_docs), EntityDictionary());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(HeuristicExtractorTest, RejectsBadInputAndOptions) {
  HeuristicExtractor ex;
  std::string bad = "Lothair \xC3";
  std::vector<PassageInput> in = {{42, "Title", bad, 0}};
  auto out = ex.Extract(in, EntityDictionary());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("passage 42"), std::string::npos);
  EXPECT_NE(out.status().message().find("byte 8"), std::string::npos);

  HeuristicExtractorOptions o;
  o.max_entities_per_sentence = 1;
  auto created = HeuristicExtractor::Create(o);
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.status().message().find("max_entities_per_sentence"), std::string::npos);
  o = {};
  o.max_relation_bytes = 3;
  EXPECT_FALSE(HeuristicExtractor::Create(o).ok());

  // Empty and untitled passages are fine.
  std::vector<PassageInput> empty = {{1, "", "", 0}, {2, "Only Title", "", 0}};
  auto e = ex.Extract(empty, EntityDictionary());
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE((*e)[0].entities.empty());
  ASSERT_EQ((*e)[1].entities.size(), 1u);
  EXPECT_EQ((*e)[1].entities[0].name, "Only Title");
  EXPECT_TRUE((*e)[1].triples.empty());
}

// Random texts from tricky fragments (and, for span detection, random bytes):
// no crash, spans in bounds and ordered, triples name listed entities.
TEST(HeuristicExtractorTest, RandomFragmentsStayWellFormed) {
  const std::vector<std::string> fragments = {
      "Lothair", "II",   "the", "The", "of",     "Bank", "England",  ". ",        "? ",    " ",
      "  ",      "\n\n", "(",   ")",   "( died", "11",   "November", "875",       "1,820", "2.4",
      "seats",   "'s",   "’s",  "-",   "–",      "&",    "$",        "%",         "St.",   "F.",
      "Ædgyth",  "東京", "In",  "He",  "\"",     ":",    "BC",       "1961-03-15"};
  std::mt19937 rng(99);
  std::vector<KnownName> names;
  for (int k = 0; k < 30; ++k) {
    std::string n;
    for (size_t w = 1 + rng() % 3; w > 0; --w) n += fragments[rng() % fragments.size()] + " ";
    names.push_back({n, "", "TITLE"});
  }
  EntityDictionary dict = EntityDictionary::Build(names);
  EntityDictionary extra =
      EntityDictionary::Build(std::vector<KnownName>(names.begin(), names.begin() + 5));
  HeuristicExtractor ex;
  for (int round = 0; round < 300; ++round) {
    std::string text, title;
    for (size_t w = rng() % 60; w > 0; --w) {
      text += fragments[rng() % fragments.size()];
      if (rng() % 2) text += " ";
    }
    for (size_t w = rng() % 3; w > 0; --w) title += fragments[rng() % fragments.size()] + " ";
    for (const EntitySpan& sp : DetectEntitySpans(text)) {
      ASSERT_LE(sp.begin, sp.end);
      ASSERT_LE(sp.end, text.size());
    }
    std::string bytes(rng() % 80, ' ');
    for (char& c : bytes) c = static_cast<char>(rng() % 256);
    for (const EntitySpan& sp : DetectEntitySpans(bytes)) ASSERT_LE(sp.end, bytes.size());

    std::vector<PassageInput> in = {{round, title, text, static_cast<int32_t>(rng() % 2)}};
    auto out = ex.Extract(in, dict);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    auto delta = ex.LinkNewNames(in, extra, &dict);
    ASSERT_TRUE(delta.ok());
    for (const auto* xs : {&*out, &*delta}) {
      for (const PassageExtraction& x : *xs) {
        // Delta triples pair new names with the passage's other entities: all
        // of them are entities of the full extraction.
        std::set<std::string> known;
        for (const ExtractedEntity& e : (*out)[0].entities) {
          ASSERT_FALSE(e.name.empty());
          ASSERT_TRUE(IsValidUtf8(e.name));
          ASSERT_GE(e.count, 1);
          known.insert(e.name);
        }
        for (const ExtractedTriple& t : x.triples) {
          ASSERT_TRUE(known.count(t.subject) && known.count(t.object))
              << t.subject << " / " << t.object;
          ASSERT_NE(t.subject, t.object);
          ASSERT_TRUE(IsValidUtf8(t.relation));
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// The demo corpus: markdown documents that name each other's subjects.

TEST(HeuristicExtractorTest, DemoCorpusLinksAcrossDocuments) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(FLOWRAG_SOURCE_DIR) / "examples" / "demo";
  std::vector<std::string> titles, texts;
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.path().extension() == ".md") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GT(files.size(), 20u);
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    std::string title = text.substr(2, text.find('\n') - 2);
    titles.push_back(title);
    texts.push_back(text);
  }
  std::vector<PassageInput> in;
  for (size_t i = 0; i < files.size(); ++i) {
    in.push_back({static_cast<int64_t>(i + 1), titles[i], texts[i], 0});
  }
  HeuristicExtractor ex;
  HeuristicExtractStats stats;
  auto out = ex.ExtractCorpus(in, &stats);
  ASSERT_TRUE(out.ok());
  size_t linked = 0;
  for (size_t i = 0; i < out->size(); ++i) {
    const PassageExtraction& x = (*out)[i];
    ASSERT_FALSE(x.entities.empty());
    EXPECT_EQ(x.entities[0].name, titles[i]);
    // The heading is skipped: the description is the first real sentence.
    EXPECT_FALSE(x.entities[0].description.empty()) << titles[i];
    EXPECT_NE(x.entities[0].description[0], '#') << titles[i];
    bool any = false;
    for (const ExtractedEntity& e : x.entities) any |= !e.defining;
    linked += any;
  }
  EXPECT_GE(linked * 10, out->size() * 8) << "most demo documents name another document";
  // The Brannock Lens article links its inventor's and its lighthouse's articles.
  for (size_t i = 0; i < out->size(); ++i) {
    if (titles[i] != "Brannock Lens") continue;
    const ExtractedEntity* ivo = Find((*out)[i], "Ivo Brannock");
    ASSERT_NE(ivo, nullptr);
    EXPECT_FALSE(ivo->defining);
    EXPECT_NE(Find((*out)[i], "Greymantle Lighthouse"), nullptr);
    EXPECT_NE(Find((*out)[i], "Port Calder"), nullptr);
    EXPECT_TRUE(HasTriple((*out)[i], "Brannock Lens", "Ivo Brannock"));
    EXPECT_EQ((*out)[i].entities[0].description.substr(0, 45),
              "The Brannock lens is a rotating lighthouse op");
  }
}

// ---------------------------------------------------------------------------
// The 2wiki benchmark corpus (6,119 passages), when present.

// Whitespace runs collapsed to one space, trimmed: how entity names are spelled.
std::string CollapseForTest(const std::string& s) {
  std::istringstream in(s);
  std::string word, out;
  while (in >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

TEST(HeuristicExtractorTest, TwoWikiCorpusSanityAndSpeed) {
  const std::string path = FLOWRAG_SOURCE_DIR "/../shared/data/bench/2wiki/corpus.jsonl";
  std::ifstream in(path);
  if (!in) GTEST_SKIP() << "no 2wiki corpus at " << path;
  struct Row {
    std::string title, text;
  };
  std::vector<Row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    rows.push_back({j.at("title").get<std::string>(), j.at("text").get<std::string>()});
  }
  ASSERT_GT(rows.size(), 6000u);
  std::vector<PassageInput> inputs;
  for (size_t i = 0; i < rows.size(); ++i) {
    inputs.push_back({static_cast<int64_t>(i + 1), rows[i].title, rows[i].text, 0});
  }
  std::map<std::string, size_t> title_count;
  for (const Row& r : rows) ++title_count[r.title];

  HeuristicExtractor ex;
  HeuristicExtractStats stats;
  const auto start = std::chrono::steady_clock::now();
  auto out = ex.ExtractCorpus(inputs, &stats);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), rows.size());

  size_t linking = 0, with_triples = 0, described = 0;
  std::set<std::string> linked_titles;
  for (size_t i = 0; i < out->size(); ++i) {
    const PassageExtraction& x = (*out)[i];
    ASSERT_FALSE(x.entities.empty());
    ASSERT_EQ(x.entities[0].name, CollapseForTest(rows[i].title));
    ASSERT_EQ(x.entities[0].type, "TITLE");
    ASSERT_TRUE(x.entities[0].defining);
    described += !x.entities[0].description.empty();
    bool any = false;
    for (const ExtractedEntity& e : x.entities) {
      if (!e.defining) {
        any = true;
        linked_titles.insert(e.name);
      }
    }
    linking += any;
    with_triples += !x.triples.empty();
  }
  std::printf(
      "2wiki: %zu passages in %.3f s (%.0f passages/s); %zu entities (%zu defining), %zu linked "
      "mentions, %zu triples; %zu passages link another document (%.1f%%), %zu distinct titles "
      "linked\n",
      rows.size(), seconds, rows.size() / seconds, stats.entities, stats.defining_entities,
      stats.linked_mentions, stats.triples, linking, 100.0 * linking / rows.size(),
      linked_titles.size());
  EXPECT_GE(described * 100, rows.size() * 95);
  EXPECT_GE(with_triples * 100, rows.size() * 95);
  // 2wiki passages come in question groups that name each other's subjects.
  EXPECT_GE(linking * 100, rows.size() * 30);
  EXPECT_LT(stats.triples, rows.size() * 60);  // bounded by the per-sentence cap
#ifdef NDEBUG
  EXPECT_LT(seconds, 10.0);
#endif
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
