#include "lexical/aho_corasick.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/text.h"
#include "lexical/names.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

// "text@[begin,end)" for each match, to compare readably.
std::vector<std::string> Show(const TokenizedText& t, const std::vector<TrieMatch>& ms) {
  std::vector<std::string> out;
  for (const TrieMatch& m : ms) {
    out.push_back(std::string(t.text().substr(m.byte_begin, m.byte_end - m.byte_begin)));
  }
  return out;
}

TokenTrie Build(const std::vector<std::string>& names) {
  std::vector<TriePattern> patterns;
  for (size_t i = 0; i < names.size(); ++i) {
    patterns.push_back({names[i], static_cast<uint32_t>(i)});
  }
  return TokenTrie::Build(patterns);
}

TEST(TokenizedTextTest, OffsetsAndNormalisedForms) {
  const std::string text = "St. Maurice's  Abbey—Zürich, 1,820";
  TokenizedText t(text);
  ASSERT_EQ(t.size(), 7u);
  EXPECT_EQ(t.raw(0), "St");
  EXPECT_EQ(t.norm(0), "st");
  EXPECT_EQ(t.raw(1), "Maurice");
  EXPECT_EQ(t.norm(2), "s");
  EXPECT_EQ(t.raw(3), "Abbey");  // the em dash separates
  EXPECT_EQ(t.raw(4), "Zürich");
  EXPECT_EQ(t.norm(4), "zürich");
  EXPECT_EQ(t.raw(5), "1");
  EXPECT_EQ(t.raw(6), "820");
  EXPECT_EQ(t.FirstTokenAtOrAfter(0), 0u);
  EXPECT_EQ(t.FirstTokenAtOrAfter(3), 1u);
  EXPECT_EQ(t.FirstTokenAtOrAfter(text.size()), 7u);
}

TEST(TokenizedTextTest, NameKeyAgreesWithEntityKeyAndTheTokeniser) {
  for (const char* name : {"The  Beatles!", "St. Maurice's Abbey", "Bank of England", "Zürich",
                           "Lothair II (835)", "AC/DC", "--"}) {
    EXPECT_EQ(NameKey(name), EntityKey(name)) << name;
    TokenizerOptions raw;
    raw.remove_stopwords = false;
    raw.stem = false;
    EXPECT_EQ(NameTokens(name), Tokenize(name, raw)) << name;
  }
  EXPECT_EQ(NameTokens("The Who"), (std::vector<std::string>{"the", "who"}));  // nothing dropped
}

TEST(TokenTrieTest, LeftmostLongestPrefersTheLongestAtEachStart) {
  TokenTrie trie = Build({"New York", "New York City", "York", "City Hall"});
  TokenizedText t("I moved to New York City, then to York and New York.");
  EXPECT_EQ(Show(t, trie.Scan(t)), (std::vector<std::string>{"New York City", "York", "New York"}));
}

TEST(TokenTrieTest, LeftmostWinsOverLaterLonger) {
  // "a b" starts first, so "b c d" (longer, later, overlapping) is not reported.
  TokenTrie trie = Build({"a b", "b c d", "d"});
  TokenizedText t("a b c d");
  EXPECT_EQ(Show(t, trie.Scan(t)), (std::vector<std::string>{"a b", "d"}));
  // A shorter pattern after a chosen one is still found even though a longer
  // pattern ends at the same token ("a b" ends where "b" does).
  TokenTrie trie2 = Build({"x a", "a b", "b"});
  TokenizedText t2("x a b");
  EXPECT_EQ(Show(t2, trie2.Scan(t2)), (std::vector<std::string>{"x a", "b"}));
}

TEST(TokenTrieTest, AllOverlappingReportsEveryOccurrenceByStartThenEnd) {
  TokenTrie trie = Build({"New York", "New York City", "York", "York City", "City"});
  TokenizedText t("New York City");
  auto ms = trie.Scan(t, MatchMode::kAllOverlapping);
  EXPECT_EQ(Show(t, ms),
            (std::vector<std::string>{"New York", "New York City", "York", "York City", "City"}));
  EXPECT_EQ(ms[1].token_begin, 0u);
  EXPECT_EQ(ms[1].token_end, 3u);
  EXPECT_EQ(trie.entry_length(ms[1].entry), 3u);
}

TEST(TokenTrieTest, MatchesWholeTokensOnlyAcrossAnyPunctuationAndCase) {
  TokenTrie trie = Build({"Bank of England", "England"});
  TokenizedText t("The BANK of\n england; Englands; bank-of-England.");
  auto ms = trie.Scan(t);
  EXPECT_EQ(Show(t, ms), (std::vector<std::string>{"BANK of\n england", "bank-of-England"}));
  EXPECT_EQ(ms[0].byte_begin, 4u);
  EXPECT_EQ(ms[0].token_begin, 1u);
  EXPECT_EQ(ms[0].token_end, 4u);
}

TEST(TokenTrieTest, StopwordsAreNotDroppedInsideNames) {
  TokenTrie trie = Build({"The Who"});
  TokenizedText t("the who, Who, The Who");
  EXPECT_EQ(Show(t, trie.Scan(t)), (std::vector<std::string>{"the who", "The Who"}));
}

TEST(TokenTrieTest, SameTokensShareAnEntryWithAllPayloads) {
  std::vector<TriePattern> patterns = {
      {"Lothair II", 7}, {"lothair  ii.", 3}, {"Lothair", 9}, {"LOTHAIR II", 7}};
  TokenTrie trie = TokenTrie::Build(patterns);
  EXPECT_EQ(trie.num_entries(), 2u);
  TokenizedText t("King Lothair II died.");
  auto ms = trie.Scan(t);
  ASSERT_EQ(ms.size(), 1u);
  auto p = trie.payloads(ms[0].entry);
  EXPECT_EQ(std::vector<uint32_t>(p.begin(), p.end()), (std::vector<uint32_t>{7, 3, 7}));
}

TEST(TokenTrieTest, EmptyPatternsAndEmptyTrie) {
  TokenTrie empty;
  TokenizedText t("anything at all");
  EXPECT_TRUE(empty.Scan(t).empty());
  EXPECT_TRUE(empty.empty());

  std::vector<TriePattern> patterns = {{"", 1}, {"--", 2}, {" ", 3}};
  TokenTrie none = TokenTrie::Build(patterns);
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(none.Scan(t, MatchMode::kAllOverlapping).empty());

  TokenTrie trie = Build({"at"});
  TokenizedText blank("");
  EXPECT_TRUE(trie.Scan(blank).empty());
}

TEST(TokenTrieTest, Utf8Names) {
  TokenTrie trie = Build({"Zürich", "Saint-Étienne", "東京", "Ἀθῆναι"});
  TokenizedText t("From zürich via Saint Étienne to 東京 (東京タワー) and Ἀθῆναι.");
  // Non-ASCII letters are not case-folded; a CJK run is one token.
  EXPECT_EQ(Show(t, trie.Scan(t)),
            (std::vector<std::string>{"zürich", "Saint Étienne", "東京", "Ἀθῆναι"}));
  TokenizedText upper("ZÜRICH");
  EXPECT_TRUE(trie.Scan(upper).empty());
}

TEST(TokenTrieTest, IncrementalMatcherForNewNamesOnly) {
  TokenTrie old_names = Build({"Lothair II", "Teutberga"});
  TokenTrie new_names = Build({"Boso the Elder"});
  TokenizedText t("Teutberga, daughter of Boso the Elder, married Lothair II.");
  EXPECT_EQ(Show(t, old_names.Scan(t)), (std::vector<std::string>{"Teutberga", "Lothair II"}));
  EXPECT_EQ(Show(t, new_names.Scan(t)), (std::vector<std::string>{"Boso the Elder"}));
  EXPECT_EQ(new_names.num_nodes(), 4u);  // root + 3 tokens: built from the new names alone
}

// Naive reference: every occurrence of every pattern, by brute force.
using Occurrence = std::tuple<uint32_t, uint32_t, std::vector<uint32_t>>;  // begin, end, payloads

std::vector<Occurrence> NaiveAll(const std::vector<std::string>& text,
                                 const std::vector<std::vector<std::string>>& patterns) {
  std::vector<Occurrence> out;
  for (size_t b = 0; b < text.size(); ++b) {
    for (size_t e = b + 1; e <= text.size(); ++e) {
      std::vector<uint32_t> payloads;
      for (size_t p = 0; p < patterns.size(); ++p) {
        if (patterns[p].size() == e - b && std::equal(patterns[p].begin(), patterns[p].end(),
                                                      text.begin() + static_cast<long>(b))) {
          payloads.push_back(static_cast<uint32_t>(p));
        }
      }
      if (!payloads.empty()) {
        out.emplace_back(static_cast<uint32_t>(b), static_cast<uint32_t>(e), payloads);
      }
    }
  }
  return out;
}

std::vector<Occurrence> NaiveLeftmostLongest(const std::vector<Occurrence>& all) {
  std::vector<Occurrence> out;
  uint32_t next = 0;
  for (size_t k = 0; k < all.size(); ++k) {
    const auto& [b, e, p] = all[k];
    if (b < next) continue;
    // `all` is sorted by (begin, end): take the last (longest) at this begin.
    size_t last = k;
    while (last + 1 < all.size() && std::get<0>(all[last + 1]) == b) ++last;
    out.push_back(all[last]);
    next = std::get<1>(all[last]);
    k = last;
  }
  return out;
}

std::vector<Occurrence> FromTrie(const TokenTrie& trie, const std::vector<TrieMatch>& ms) {
  std::vector<Occurrence> out;
  for (const TrieMatch& m : ms) {
    auto p = trie.payloads(m.entry);
    out.emplace_back(m.token_begin, m.token_end, std::vector<uint32_t>(p.begin(), p.end()));
  }
  return out;
}

TEST(TokenTrieTest, AgreesWithNaiveScannerOnRandomTokenStreams) {
  std::mt19937 rng(20240611);
  const std::vector<std::string> alphabet = {"a", "b", "c", "d", "é"};
  size_t total_matches = 0;
  for (int round = 0; round < 300; ++round) {
    const size_t sigma = 2 + rng() % (alphabet.size() - 1);
    std::vector<std::vector<std::string>> patterns(1 + rng() % 12);
    std::vector<TriePattern> trie_patterns;
    std::vector<std::string> texts(patterns.size());
    for (size_t p = 0; p < patterns.size(); ++p) {
      const size_t len = 1 + rng() % 4;
      for (size_t k = 0; k < len; ++k) {
        patterns[p].push_back(alphabet[rng() % sigma]);
        texts[p] += (k > 0 ? " " : "") + patterns[p].back();
      }
    }
    for (size_t p = 0; p < patterns.size(); ++p) {
      trie_patterns.push_back({texts[p], static_cast<uint32_t>(p)});
    }
    TokenTrie trie = TokenTrie::Build(trie_patterns);

    // Text tokens: mostly the alphabet, sometimes an unknown token "zz".
    std::vector<std::string> tokens(rng() % 120);
    std::string text;
    for (auto& tok : tokens) {
      tok = rng() % 10 == 0 ? "zz" : alphabet[rng() % sigma];
      text += (rng() % 3 == 0 ? ", " : " ") + (rng() % 2 ? tok : ToLowerAscii(tok));
    }
    TokenizedText t(text);
    ASSERT_EQ(t.size(), tokens.size());

    const auto all = NaiveAll(tokens, patterns);
    EXPECT_EQ(FromTrie(trie, trie.Scan(t, MatchMode::kAllOverlapping)), all) << "round " << round;
    EXPECT_EQ(FromTrie(trie, trie.Scan(t, MatchMode::kLeftmostLongest)), NaiveLeftmostLongest(all))
        << "round " << round;
    // Exported and adopted in place, it scans the same.
    MemoryArrays arrays;
    ASSERT_TRUE(trie.ExportArrays(arrays, "t").ok());
    Result<TokenTrie> adopted = TokenTrie::AdoptArrays(arrays, "t");
    ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
    EXPECT_EQ(FromTrie(*adopted, adopted->Scan(t, MatchMode::kAllOverlapping)), all);
    EXPECT_EQ(adopted->num_entries(), trie.num_entries());
    total_matches += all.size();
  }
  EXPECT_GT(total_matches, 1000u);  // the property was exercised
}

// Arrays that would make a scan read out of range or never stop are refused,
// naming the array; the trie as exported is adopted.
TEST(TokenTrieTest, CraftedArraysAreRefusedByName) {
  const TokenTrie trie = Build({"new york", "new york city", "york", "bank of england"});
  auto adopt_after = [&](const std::string& name, size_t index, uint64_t value) {
    MemoryArrays arrays;
    EXPECT_TRUE(trie.ExportArrays(arrays, "t").ok());
    std::span<std::byte> bytes = arrays.MutableBytes(name);
    const size_t width = name == "t.ekey" ? 8 : 4;
    EXPECT_LT(index * width, bytes.size()) << name;
    std::memcpy(bytes.data() + index * width, &value, width);
    return TokenTrie::AdoptArrays(arrays, "t").status();
  };
  EXPECT_TRUE(adopt_after("t.pay", 0, 0).ok());  // a payload is the caller's to check
  const uint64_t none = UINT32_MAX;
  const size_t nodes = trie.num_nodes();
  struct Case {
    const char* name;
    size_t index;
    uint64_t value;
    const char* named;  // the array the error names (the inconsistency's other side)
  };
  for (const Case& c : {Case{"t.fail", 2, 2, "t.fail"},     // a failure link to itself: a cycle
                        Case{"t.fail", 1, nodes, "t.fail"}, // out of range
                        Case{"t.dict", 2, 2, "t.dict"},     // a dictionary cycle
                        Case{"t.depth", 1, 7, "t.echild"},  // a child not one token deeper
                        Case{"t.entry", 0, 0, "t.entry"},   // the root ends an entry
                        Case{"t.enode", 0, nodes + 5, "t.entry"},  // an entry's node out of range
                        Case{"t.pbeg", 1, 1000, "t.pbeg"},  // offsets past the payloads
                        Case{"t.vslot", 0, 1000, "t.vslot"}}) {  // a token id out of range
    const Status st = adopt_after(c.name, c.index, c.value);
    EXPECT_EQ(st.code(), StatusCode::kCorruption) << c.name << " " << c.index;
    EXPECT_NE(st.message().find(c.named), std::string::npos) << c.name << ": " << st.ToString();
  }
  // A goto table without a free slot would make a lookup never stop.
  MemoryArrays full;
  ASSERT_TRUE(trie.ExportArrays(full, "t").ok());
  std::span<std::byte> children = full.MutableBytes("t.echild");
  for (size_t i = 0; i < children.size() / 4; ++i) {
    uint32_t c = 0;
    std::memcpy(&c, children.data() + 4 * i, 4);
    if (c == none) std::memcpy(children.data() + 4 * i, &nodes, 4);
  }
  EXPECT_EQ(TokenTrie::AdoptArrays(full, "t").status().code(), StatusCode::kCorruption);
}

TEST(TokenTrieTest, ByteOffsetsPointAtTheMatchedText) {
  TokenTrie trie = Build({"Port Calder", "Calder", "Halvern Sea"});
  const std::string text = "Port  Calder lies on the Halvern\tSea; calder (Port-Calder).";
  TokenizedText t(text);
  for (const TrieMatch& m : trie.Scan(t, MatchMode::kAllOverlapping)) {
    EXPECT_EQ(NameKey(text.substr(m.byte_begin, m.byte_end - m.byte_begin)),
              NameKey(std::string(
                  t.text().substr(t.token(m.token_begin).begin,
                                  t.token(m.token_end - 1).end - t.token(m.token_begin).begin))));
    EXPECT_EQ(m.byte_begin, t.token(m.token_begin).begin);
    EXPECT_EQ(m.byte_end, t.token(m.token_end - 1).end);
  }
  EXPECT_EQ(Show(t, trie.Scan(t)),
            (std::vector<std::string>{"Port  Calder", "Halvern\tSea", "calder", "Port-Calder"}));
}

// lexical/names.h: names as documents write them.
TEST(NamesTest, CollapseSpacesTrimsAndJoinsRunsOfAsciiWhitespace) {
  EXPECT_EQ(CollapseSpaces("  Bank \t of\n\nEngland \r\n"), "Bank of England");
  EXPECT_EQ(CollapseSpaces(" \t\n "), "");
  EXPECT_EQ(CollapseSpaces("St.\u00a0Maurice"), "St.\u00a0Maurice");  // not ASCII: kept
}

TEST(NamesTest, TitleAliasesAreDistinctByNameKeyAndInOrder) {
  EXPECT_EQ(TitleAliases("Theodred II (Bishop of Elmham)"),
            (std::vector<std::string>{"Theodred II"}));
  EXPECT_EQ(TitleAliases("  The   Merrow Coast "), (std::vector<std::string>{"Merrow Coast"}));
  // "the" in lower case starts an alias too; nothing is left of "The" or
  // of a title that is only a disambiguation.
  EXPECT_EQ(TitleAliases("the Who"), (std::vector<std::string>{"Who"}));
  EXPECT_TRUE(TitleAliases("The").empty());
  EXPECT_TRUE(TitleAliases("(band)").empty());
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
