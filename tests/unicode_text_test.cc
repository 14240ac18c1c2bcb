// Unicode tokenisation (common/text.h): segmentation of Chinese, Japanese and
// Thai by ICU, NFKC and case folding, per-language stemming, entity keys and
// ill-formed UTF-8.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "common/text.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using Tokens = std::vector<std::string>;

bool Has(const Tokens& t, const std::string& w) { return std::find(t.begin(), t.end(), w) != t.end(); }

TEST(UnicodeTokenizeTest, SegmentsMixedChineseAndEnglish) {
  const Tokens t = Tokenize("flowrag 是一个图检索引擎 for RAG");
  // English words as before (the stopword "for" dropped), Chinese cut into
  // dictionary words, not one token for the whole run.
  EXPECT_EQ(t.front(), "flowrag");
  EXPECT_EQ(t.back(), "rag");
  EXPECT_FALSE(Has(t, "for"));
  EXPECT_TRUE(Has(t, "检索"));
  EXPECT_TRUE(Has(t, "引擎"));
  EXPECT_FALSE(Has(t, "是一个图检索引擎"));
  EXPECT_GE(t.size(), 6u);
}

TEST(UnicodeTokenizeTest, LatinTouchingHanIsSplit) {
  const Tokens t = Tokenize("flowrag是图检索引擎");
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t.front(), "flowrag");
  EXPECT_TRUE(Has(t, "引擎"));
}

TEST(UnicodeTokenizeTest, SegmentsJapaneseAndThai) {
  const Tokens ja = Tokenize("東京都に住んでいる山田さん");
  EXPECT_GE(ja.size(), 3u);
  EXPECT_TRUE(Has(ja, "東京"));
  const Tokens th = Tokenize("ภาษาไทยง่ายนิดเดียว");
  EXPECT_GE(th.size(), 3u);
  EXPECT_TRUE(Has(th, "ภาษา"));
  EXPECT_TRUE(Has(th, "ไทย"));
}

TEST(UnicodeTokenizeTest, CjkPunctuationSeparates) {
  const Tokens t = Tokenize("北京，上海。「广州」");
  EXPECT_EQ(t, (Tokens{"北京", "上海", "广州"}));
}

TEST(UnicodeTokenizeTest, AsciiFastPathUnchanged) {
  EXPECT_EQ(Tokenize("The Beatles' albums, Dessau's boxes!"),
            (Tokens{"beatle", "album", "dessau", "boxe"}));
  EXPECT_EQ(Tokenize("Kurt Weill was born in Dessau on 2 March 1900."),
            (Tokens{"kurt", "weill", "born", "dessau", "2", "march", "1900"}));
}

TEST(UnicodeTokenizeTest, CaseFoldingFollowsIcu) {
  // ß folds to "ss" (full case folding), so STRASSE and Straße meet.
  EXPECT_EQ(Tokenize("Straße", {.stem = false}), Tokenize("STRASSE", {.stem = false}));
  EXPECT_EQ(Tokenize("Straße", {.stem = false}), (Tokens{"strasse"}));
  // Non-ASCII capitals fold: "ÉMILE" and "émile" are one word.
  EXPECT_EQ(Tokenize("ÉMILE Zola"), Tokenize("émile zola"));
  // Turkish dotless ı stays ı; capital İ folds to i + combining dot above
  // (ICU's default, locale-independent folding), not to plain "i".
  EXPECT_EQ(Tokenize("ılık", {.stem = false}), (Tokens{"ılık"}));
  EXPECT_EQ(Tokenize("İstanbul", {.stem = false}), (Tokens{"i\xcc\x87stanbul"}));
  EXPECT_EQ(Tokenize("ΟΔΥΣΣΕΥΣ", {.stem = false}), Tokenize("οδυσσευς", {.stem = false}));
}

TEST(UnicodeTokenizeTest, NfkcFoldsFullwidthAndCompatibilityForms) {
  EXPECT_EQ(Tokenize("２０２４年"), Tokenize("2024年"));
  EXPECT_TRUE(Has(Tokenize("２０２４年"), "2024"));
  EXPECT_EQ(Tokenize("ＦｌｏｗＲＡＧ"), (Tokens{"flowrag"}));
  EXPECT_EQ(Tokenize("ｆｉｌｅ"), Tokenize("file"));
  // The ligature ﬁ and the fullwidth comma.
  EXPECT_EQ(Tokenize("\xef\xac\x81le"), Tokenize("file"));
  EXPECT_EQ(Tokenize("１，０００"), (Tokens{"1", "000"}));
  // Diacritics are kept: café and cafe are different words.
  EXPECT_NE(Tokenize("café"), Tokenize("cafe"));
  // Composed and decomposed é are one word.
  EXPECT_EQ(Tokenize("caf\xc3\xa9"), Tokenize("cafe\xcc\x81"));
}

TEST(UnicodeTokenizeTest, SymbolsAndEmojiAreNotTokens) {
  EXPECT_EQ(Tokenize("rocket 🚀 launch ★"), (Tokens{"rocket", "launch"}));
}

TEST(UnicodeTokenizeTest, StemmingPerLanguage) {
  auto stem = [](const char* text, const char* language) {
    return Tokenize(text, {.remove_stopwords = false, .language = language});
  };
  EXPECT_EQ(stem("running stories", "english-s"), (Tokens{"running", "story"}));
  EXPECT_EQ(stem("running stories", "english"), (Tokens{"run", "stori"}));
  EXPECT_EQ(stem("running stories", "none"), (Tokens{"running", "stories"}));
  EXPECT_EQ(stem("Häuser laufen", "german"), (Tokens{"haus", "lauf"}));
  EXPECT_EQ(stem("continuellement", "french"), (Tokens{"continuel"}));
  EXPECT_EQ(stem("книгами", "russian"), (Tokens{"книг"}));
  // A word Snowball stems to nothing (Porter's "s") stays itself.
  EXPECT_EQ(stem("s", "porter"), (Tokens{"s"}));
  // Chinese passes through every stemmer unchanged.
  EXPECT_EQ(stem("检索", "english"), (Tokens{"检索"}));
  // stem = false wins over the language.
  EXPECT_EQ(Tokenize("stories", {.stem = false, .language = "english"}), (Tokens{"stories"}));
}

TEST(UnicodeTokenizeTest, LanguagesValidate) {
  EXPECT_TRUE(ValidateLanguage("english-s").ok());
  EXPECT_TRUE(ValidateLanguage("none").ok());
  EXPECT_TRUE(ValidateLanguage("english").ok());
  EXPECT_TRUE(ValidateLanguage("german").ok());
  const Status bad = ValidateLanguage("klingon");
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("klingon"), std::string::npos);
  EXPECT_NE(bad.message().find("english-s"), std::string::npos);
  EXPECT_EQ(TokenizerSignature("english-s"), "tok2-english-s");
}

TEST(UnicodeTokenizeTest, IllFormedUtf8SeparatesAndNeverCrashes) {
  // A stray continuation byte, a truncated sequence, an overlong '/', a
  // surrogate: each acts as a separator; the words around survive.
  EXPECT_EQ(Tokenize("alpha\x80" "beta"), (Tokens{"alpha", "beta"}));
  EXPECT_EQ(Tokenize("alpha\xe4\xb8" "beta"), (Tokens{"alpha", "beta"}));
  EXPECT_EQ(Tokenize("alpha\xc0\xaf" "beta"), (Tokens{"alpha", "beta"}));
  EXPECT_EQ(Tokenize("alpha\xed\xa0\x80" "beta"), (Tokens{"alpha", "beta"}));
  EXPECT_EQ(Tokenize("北京\xff上海"), (Tokens{"北京", "上海"}));
  EXPECT_EQ(Tokenize(std::string("\xe4", 1)), Tokens{});
  // Random bytes: no crash, and every token is well-formed UTF-8.
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    std::string s(1 + rng() % 64, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 256);
    for (const std::string& t : Tokenize(s)) EXPECT_TRUE(IsValidUtf8(t)) << t;
    EXPECT_TRUE(IsValidUtf8(EntityKey(s)));
  }
}

TEST(UnicodeTokenizeTest, LongTokensTruncateAtCodePointBoundary) {
  std::string s;
  for (int i = 0; i < 40; ++i) s += "é";  // 80 bytes, one word
  const Tokens t = Tokenize(s);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_LE(t[0].size(), 64u);
  EXPECT_TRUE(IsValidUtf8(t[0]));
}

TEST(UnicodeEntityKeyTest, FoldsNonAsciiNames) {
  EXPECT_EQ(EntityKey("The  Beatles!"), "the beatles");  // ASCII as before
  EXPECT_EQ(EntityKey("ÉMILE ZOLA"), EntityKey("Émile Zola"));
  EXPECT_EQ(EntityKey("ÉMILE ZOLA"), "émile zola");
  EXPECT_EQ(EntityKey("ＡＢＣ　Ｃｏｒｐ．"), "abc corp");
  EXPECT_EQ(EntityKey("Straße"), "strasse");
  EXPECT_EQ(EntityKey("São Paulo — Brazil"), "são paulo brazil");
  EXPECT_EQ(EntityKey("「张伟」"), "张伟");
  EXPECT_EQ(EntityKey("Zürich\xff"), "zürich");
  EXPECT_NE(EntityKey("Zürich"), EntityKey("Zurich"));  // diacritics kept
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
