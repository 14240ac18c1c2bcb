#include "common/text.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

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

TEST(SplitSentencesTest, PageBreaksEndSentences) {
  // A PDF's text: each page followed by U+000C (ingest/document.h).
  std::string t = "Aske ground it in 1881.\n\f\fClubs.\nThe club\fcontinued here.\n\f";
  std::vector<std::string> got;
  for (auto s : SplitSentences(t)) got.push_back(t.substr(s.begin, s.end - s.begin));
  EXPECT_EQ(got, (std::vector<std::string>{"Aske ground it in 1881.", "Clubs.", "The club",
                                           "continued here."}));
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

// EditDistanceAtMost against a full optimal-string-alignment table.
size_t FullOsaDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

TEST(EditDistanceTest, BandedDistanceEqualsTheFullTableUpToItsBound) {
  EXPECT_EQ(EditDistanceAtMost("spaish", "spanish", 1), 1u);
  EXPECT_EQ(EditDistanceAtMost("acme crop", "acme corp", 1), 1u);  // a transposition
  EXPECT_EQ(EditDistanceAtMost("glbx", "globex", 1), 2u);          // beyond: max_d + 1
  EXPECT_EQ(EditDistanceAtMost("", "", 0), 0u);
  std::mt19937 rng(11);
  for (int trial = 0; trial < 3000; ++trial) {
    auto random_word = [&] {
      std::string w(rng() % 9, 'a');
      for (char& c : w) c = static_cast<char>('a' + rng() % 3);
      return w;
    };
    const std::string a = random_word(), b = random_word();
    const size_t max_d = rng() % 4;
    const size_t full = FullOsaDistance(a, b);
    EXPECT_EQ(EditDistanceAtMost(a, b, max_d), std::min(full, max_d + 1)) << a << " / " << b << " / " << max_d;
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
