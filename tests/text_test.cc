#include "common/text.h"

#include <gtest/gtest.h>

namespace flowrag {
namespace {

TEST(TokenizeTest, LowercasesDropsStopwordsAndStems) {
  EXPECT_EQ(Tokenize("The Cats of Port Calder were sailing!"),
            (std::vector<std::string>{"cat", "port", "calder", "sailing"}));
}

TEST(TokenizeTest, PossessivesAndPunctuation) {
  EXPECT_EQ(Tokenize("Theodred's consecration (995–997)."),
            (std::vector<std::string>{"theodred", "consecration", "995", "997"}));
  // Curly apostrophe behaves like the ASCII one.
  EXPECT_EQ(Tokenize("Theodred\xE2\x80\x99s"), (std::vector<std::string>{"theodred"}));
}

TEST(TokenizeTest, KeepsNonAsciiWordsWhole) {
  EXPECT_EQ(Tokenize("Zürich café"), (std::vector<std::string>{"zürich", "café"}));
}

TEST(TokenizeTest, OptionsDisableFiltering) {
  TokenizerOptions raw;
  raw.remove_stopwords = false;
  raw.stem = false;
  EXPECT_EQ(Tokenize("The boxes", raw), (std::vector<std::string>{"the", "boxes"}));
}

TEST(TokenizeTest, SameTokensForQueriesAndDocuments) {
  // BM25 relies on this: a query word matches the same word in a document.
  EXPECT_EQ(Tokenize("Where did Saw Thanda's husband die?"),
            (std::vector<std::string>{"saw", "thanda", "husband", "die"}));
}

TEST(StemSTest, HarmanRules) {
  EXPECT_EQ(StemS("stories"), "story");
  EXPECT_EQ(StemS("boxes"), "boxe");
  EXPECT_EQ(StemS("cats"), "cat");
  EXPECT_EQ(StemS("glass"), "glass");
  EXPECT_EQ(StemS("status"), "status");
  EXPECT_EQ(StemS("shoes"), "shoe");  // "oes" → drop only the s
  EXPECT_EQ(StemS("is"), "is");       // too short
}

TEST(SplitSentencesTest, SplitsAtSentenceEndsNotAbbreviations) {
  std::string t = "Dr. Ada Morrow founded it in 1901. It grew fast! Did it?  Yes.\n\nNew para";
  auto spans = SplitSentences(t);
  std::vector<std::string> got;
  for (auto s : spans) got.push_back(t.substr(s.begin, s.end - s.begin));
  EXPECT_EQ(got, (std::vector<std::string>{"Dr. Ada Morrow founded it in 1901.", "It grew fast!",
                                           "Did it?", "Yes.", "New para"}));
}

TEST(EntityKeyTest, NormalisesCaseAndPunctuation) {
  EXPECT_EQ(EntityKey("The  Beatles!"), "the beatles");
  EXPECT_EQ(EntityKey("  St. Maurice's Abbey "), "st maurice s abbey");
  EXPECT_EQ(EntityKey("Zürich"), "zürich");
  EXPECT_EQ(EntityKey("--"), "");
}

TEST(Utf8Test, DetectsMalformedSequences) {
  size_t off = 99;
  EXPECT_TRUE(IsValidUtf8("plain ascii and é and 日本", &off));
  EXPECT_FALSE(IsValidUtf8(std::string("ok\xC3", 3), &off));  // truncated
  EXPECT_EQ(off, 2u);
  EXPECT_FALSE(IsValidUtf8("a\xC0\xAF", &off));  // overlong '/'
  EXPECT_EQ(off, 1u);
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80", &off));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80", &off));  // > U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xFF", &off));
}

}  // namespace
}  // namespace flowrag
