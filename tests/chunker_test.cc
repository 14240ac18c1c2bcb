#include "ingest/chunker.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ingest/utf8.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using Strategy = ChunkOptions::Strategy;
using Span = std::pair<size_t, size_t>;  // [begin, end) bytes

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}
#define EXPECT_CONTAINS(text, part) EXPECT_TRUE(Contains((text), (part)))

ChunkOptions Window(size_t window, size_t overlap) {
  ChunkOptions o;
  o.strategy = Strategy::kWordWindow;
  o.window_words = window;
  o.overlap_words = overlap;
  return o;
}

ChunkOptions Boundary(size_t threshold, size_t max_chars, size_t overlap) {
  ChunkOptions o;
  o.strategy = Strategy::kBoundary;
  o.boundary_threshold_chars = threshold;
  o.max_chars = max_chars;
  o.overlap_chars = overlap;
  return o;
}

// Reference word splitting (Python's str.split()): maximal runs of code
// points that are not whitespace.
std::vector<Span> ReferenceWords(std::string_view text) {
  std::vector<Span> words;
  size_t pos = 0;
  bool in = false;
  size_t begin = 0;
  while (pos < text.size()) {
    char32_t cp;
    const size_t len = DecodeUtf8(text, pos, &cp);
    if (IsUnicodeSpace(cp)) {
      if (in) words.push_back({begin, pos});
      in = false;
    } else if (!in) {
      in = true;
      begin = pos;
    }
    pos += len;
  }
  if (in) words.push_back({begin, text.size()});
  return words;
}

size_t Chars(std::string_view s) { return CountCodePoints(s); }

// The invariants every strategy guarantees.
void CheckCommonInvariants(std::string_view text, const std::vector<Chunk>& chunks) {
  for (size_t i = 0; i < chunks.size(); ++i) {
    const Chunk& c = chunks[i];
    ASSERT_EQ(c.index, static_cast<int32_t>(i));
    ASSERT_LT(c.begin, c.end) << "chunk " << i;
    ASSERT_LE(c.end, text.size());
    ASSERT_EQ(c.text, text.substr(c.begin, c.end - c.begin)) << "chunk " << i;
    ASSERT_FALSE(IsUtf8ContinuationByte(static_cast<unsigned char>(text[c.begin])))
        << "chunk " << i << " starts inside a code point";
    if (c.end < text.size()) {
      ASSERT_FALSE(IsUtf8ContinuationByte(static_cast<unsigned char>(text[c.end])))
          << "chunk " << i << " ends inside a code point";
    }
    if (IsValidUtf8(text)) {
      ASSERT_TRUE(IsValidUtf8(c.text)) << "chunk " << i;
    }
    if (i > 0) {
      ASSERT_GT(c.begin, chunks[i - 1].begin);
      ASSERT_GT(c.end, chunks[i - 1].end);
    }
  }
}

// "w0 w1 ... w{n-1}" with assorted whitespace between words.
std::string NumberedWords(size_t n, std::vector<Span>* spans) {
  static const char* const kSeparators[] = {" ", "\n", "  ", "\t", " \n\n ", "\xC2\xA0"};
  std::string text = "  ";
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) text += kSeparators[i % 6];
    const size_t begin = text.size();
    text += "w" + std::to_string(i);
    if (i % 7 == 3) text += "\xC3\xA9";  // some multi-byte words
    spans->push_back({begin, text.size()});
  }
  text += "\n";
  return text;
}

// Sentences of ordinary words until at least `min_chars` long; ends with '.'.
std::string Sentences(size_t min_chars, const std::string& seed) {
  static const char* const kWords[] = {"river", "stone",  "lamp",   "garden", "north", "quiet",
                                       "table", "letter", "window", "harbor", "music", "winter"};
  std::string s;
  size_t k = seed.size();
  while (s.size() < min_chars) {
    if (!s.empty()) s += ' ';
    std::string sentence = seed;
    for (int i = 0; i < 5; ++i) sentence += std::string(" ") + kWords[(k++ * 7) % 12];
    s += sentence + ".";
  }
  return s;
}

// ---------------------------------------------------------------------------

TEST(ChunkerTest, BlankTextGivesNoChunks) {
  for (Strategy s : {Strategy::kNone, Strategy::kWordWindow, Strategy::kBoundary}) {
    ChunkOptions o = Boundary(0, 10, 2);  // threshold 0: the long-text path
    o.strategy = s;
    EXPECT_TRUE(ChunkText("", o).empty());
    EXPECT_TRUE(ChunkText(" \n\t\r\n\xE3\x80\x80\xC2\xA0 ", o).empty());
  }
}

TEST(ChunkerTest, NoneKeepsTheWholeTextUntrimmed) {
  ChunkOptions o;
  o.strategy = Strategy::kNone;
  const std::string text = "  two words \n";
  auto chunks = ChunkText(text, o);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].begin, 0u);
  EXPECT_EQ(chunks[0].end, text.size());
  EXPECT_EQ(chunks[0].text, text);
}

TEST(WordWindowTest, ShortTextIsOneTrimmedChunk) {
  std::vector<Span> spans;
  const std::string text = NumberedWords(500, &spans);
  auto chunks = ChunkText(text, ChunkOptions{});  // defaults: 500 / 200
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].begin, spans.front().first);
  EXPECT_EQ(chunks[0].end, spans.back().second);
  CheckCommonInvariants(text, chunks);

  auto one = ChunkText("  single  ", ChunkOptions{});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].text, "single");
  EXPECT_EQ(one[0].begin, 2u);
}

// The brief's example: 1,200 words, 500/200.
TEST(WordWindowTest, ExactBoundariesFor1200Words) {
  std::vector<Span> spans;
  const std::string text = NumberedWords(1200, &spans);
  auto chunks = ChunkText(text, Window(500, 200));
  CheckCommonInvariants(text, chunks);
  const std::vector<std::pair<size_t, size_t>> expected = {
      {0, 499}, {300, 799}, {600, 1099}, {700, 1199}};
  ASSERT_EQ(chunks.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(chunks[i].begin, spans[expected[i].first].first) << i;
    EXPECT_EQ(chunks[i].end, spans[expected[i].second].second) << i;
    EXPECT_EQ(ReferenceWords(chunks[i].text).size(), 500u) << i;
  }
  EXPECT_EQ(chunks[0].text.substr(0, 3), "w0\n");
  EXPECT_EQ(chunks.back().text.substr(chunks.back().text.size() - 5), "w1199");
}

TEST(WordWindowTest, CountsAroundTheEdges) {
  struct Case {
    size_t words;
    std::vector<size_t> starts;  // first word of each chunk
  };
  const std::vector<Case> cases = {
      {1, {0}},
      {500, {0}},
      {501, {0, 1}},
      {800, {0, 300}},
      {801, {0, 300, 301}},
      {1100, {0, 300, 600}},
      {1101, {0, 300, 600, 601}},
  };
  for (const Case& c : cases) {
    std::vector<Span> spans;
    const std::string text = NumberedWords(c.words, &spans);
    auto chunks = ChunkText(text, Window(500, 200));
    ASSERT_EQ(chunks.size(), c.starts.size()) << c.words << " words";
    for (size_t i = 0; i < chunks.size(); ++i) {
      EXPECT_EQ(chunks[i].begin, spans[c.starts[i]].first) << c.words << " words, chunk " << i;
      const size_t last = std::min(c.starts[i] + 500, c.words) - 1;
      EXPECT_EQ(chunks[i].end, spans[last].second) << c.words << " words, chunk " << i;
    }
    EXPECT_EQ(chunks.back().end, spans.back().second);
  }
}

TEST(WordWindowTest, OverlapIsExactExceptForTheFinalWindow) {
  for (size_t n : {37u, 100u, 257u, 1000u}) {
    for (auto [w, o] : std::vector<std::pair<size_t, size_t>>{{10, 3}, {10, 0}, {10, 9}, {7, 1}}) {
      std::vector<Span> spans;
      const std::string text = NumberedWords(n, &spans);
      auto chunks = ChunkText(text, Window(w, o));
      CheckCommonInvariants(text, chunks);
      // Map chunk offsets back to word indexes.
      std::vector<std::pair<size_t, size_t>> ranges;
      for (const Chunk& c : chunks) {
        size_t first = 0, last = 0;
        for (size_t i = 0; i < spans.size(); ++i) {
          if (spans[i].first == c.begin) first = i;
          if (spans[i].second == c.end) last = i;
        }
        ASSERT_EQ(last - first + 1, w) << "every window has exactly W words";
        ranges.push_back({first, last});
      }
      for (size_t i = 1; i < ranges.size(); ++i) {
        const size_t shared = ranges[i - 1].second + 1 - ranges[i].first;
        if (i + 1 < ranges.size()) {
          EXPECT_EQ(shared, o) << n << " words, W=" << w << " O=" << o;
        } else {
          EXPECT_GE(shared, o);
          EXPECT_LT(shared, w);
        }
      }
      EXPECT_EQ(ranges.front().first, 0u);
      EXPECT_EQ(ranges.back().second, n - 1);
    }
  }
}

TEST(WordWindowTest, UnicodeWhitespaceSeparatesWords) {
  // U+3000, U+00A0, U+2003 and U+0085 separate words; U+200B (zero width) does not.
  const std::string text =
      "\xE6\x97\xA5\xE6\x9C\xAC\xE3\x80\x80\xF0\x9F\x99\x82\xC2\xA0"
      "caf\xC3\xA9\xE2\x80\x83"
      "a\xE2\x80\x8B"
      "b\xC2\x85z";
  auto chunks = ChunkText(text, Window(2, 1));
  CheckCommonInvariants(text, chunks);
  ASSERT_EQ(chunks.size(), 4u);  // 5 words: 日本 🙂 café a<ZWSP>b z
  EXPECT_EQ(chunks[0].text, "\xE6\x97\xA5\xE6\x9C\xAC\xE3\x80\x80\xF0\x9F\x99\x82");
  EXPECT_EQ(chunks[2].text,
            "caf\xC3\xA9\xE2\x80\x83"
            "a\xE2\x80\x8B"
            "b");
  EXPECT_EQ(chunks[3].text,
            "a\xE2\x80\x8B"
            "b\xC2\x85z");
}

// ---------------------------------------------------------------------------
// Boundary strategy.

TEST(BoundaryTest, DocumentsUnderTheThresholdStayWhole) {
  // 9,000 characters: above max_chars but under the 10,000 threshold.
  std::string text = "  " + Sentences(9000, "Short");
  text.resize(9002);
  ChunkOptions o;
  o.strategy = Strategy::kBoundary;
  auto chunks = ChunkText(text, o);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].begin, 2u);
  EXPECT_EQ(chunks[0].end, ReferenceWords(text).back().second);
}

TEST(BoundaryTest, PrefersSectionHeaders) {
  // Window for the first cut: [100, 200] characters. A paragraph break, a
  // heading and sentence ends all fall inside it; the heading wins.
  const std::string a = Sentences(110, "First");
  const std::string b = Sentences(30, "Then");
  const std::string text = a + "\n\n" + b + "\n# Heading Two\n" + Sentences(400, "After");
  const size_t heading = text.find("# Heading");
  ASSERT_GT(heading, 100u);
  ASSERT_LT(heading, 200u);
  auto chunks = ChunkText(text, Boundary(100, 200, 20));
  CheckCommonInvariants(text, chunks);
  ASSERT_GE(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].begin, 0u);
  EXPECT_EQ(chunks[0].end, heading - 1);  // trailing newline trimmed
  // The next chunk overlaps by at most 20 characters, from a word start.
  EXPECT_LT(chunks[1].begin, heading);
  EXPECT_GE(chunks[1].begin, heading - 20);
  EXPECT_EQ(text[chunks[1].begin - 1], ' ');
  EXPECT_CONTAINS(chunks[1].text, "# Heading Two");
}

TEST(BoundaryTest, HtmlHeadingsCount) {
  const std::string a = Sentences(120, "Intro");
  const std::string text =
      a + "\n\nMore words here. <h2 class=\"x\">Section</h2> " + Sentences(400, "Body");
  const size_t h2 = text.find("<h2");
  ASSERT_LT(h2, 200u);
  auto chunks = ChunkText(text, Boundary(100, 200, 30));
  CheckCommonInvariants(text, chunks);
  EXPECT_EQ(chunks[0].end, h2 - 1);
  EXPECT_CONTAINS(chunks[1].text, "<h2 class=\"x\">Section");
}

TEST(BoundaryTest, PrefersParagraphsOverSentences) {
  const std::string a = Sentences(105, "Opening");
  const std::string text = a + "\n\n" + Sentences(500, "Second");
  auto chunks = ChunkText(text, Boundary(100, 200, 20));
  CheckCommonInvariants(text, chunks);
  ASSERT_GE(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].text, a);
  // Later chunks of the single long paragraph end at sentence ends.
  for (size_t i = 1; i + 1 < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i].text.back(), '.') << chunks[i].text;
    EXPECT_LE(Chars(chunks[i].text), 200u);
  }
}

TEST(BoundaryTest, HeadingInsideCodeFenceIsNotASection) {
  const std::string a = Sentences(102, "Code");
  const std::string text =
      a + "\n\nSome code:\n```\n# not a heading\nx = 1\n```\n" + Sentences(400, "Rest");
  ASSERT_LT(text.find("# not"), 200u);
  auto chunks = ChunkText(text, Boundary(100, 200, 20));
  CheckCommonInvariants(text, chunks);
  EXPECT_EQ(chunks[0].text, a);  // the paragraph break, not the '#' line
}

TEST(BoundaryTest, SpeakerTurnsAreDiscourseBoundaries) {
  std::string text;
  const char* const kSpeakers[] = {"Alice", "Bob", "Dr. Smith", "Q"};
  for (int i = 0; i < 12; ++i) {
    text +=
        std::string(kSpeakers[i % 4]) + ": I went to the market. It was fine and then we left\n";
  }
  auto chunks = ChunkText(text, Boundary(100, 200, 20));
  CheckCommonInvariants(text, chunks);
  ASSERT_GE(chunks.size(), 3u);
  for (size_t i = 0; i + 1 < chunks.size(); ++i) {
    EXPECT_EQ(text.substr(chunks[i].end, 1), "\n") << "chunk " << i << " ends mid-turn";
    EXPECT_TRUE(chunks[i].text.size() >= 4 &&
                chunks[i].text.substr(chunks[i].text.size() - 4) == "left")
        << chunks[i].text;
  }
}

TEST(BoundaryTest, SentenceEndsBeatWordEnds) {
  const std::string text = Sentences(2000, "Plain");
  auto chunks = ChunkText(text, Boundary(100, 300, 40));
  CheckCommonInvariants(text, chunks);
  for (size_t i = 0; i + 1 < chunks.size(); ++i) EXPECT_EQ(chunks[i].text.back(), '.');
  // Without punctuation the cut falls at a word end.
  std::string words;
  for (int i = 0; i < 400; ++i) words += "word" + std::to_string(i) + " ";
  auto plain = ChunkText(words, Boundary(100, 300, 40));
  CheckCommonInvariants(words, plain);
  for (const Chunk& c : plain) {
    EXPECT_LE(Chars(c.text), 300u);
    EXPECT_TRUE(c.end == words.size() || words[c.end] == ' ');
    EXPECT_TRUE(c.begin == 0 || words[c.begin - 1] == ' ');
  }
}

TEST(BoundaryTest, HardCutInsideALongToken) {
  const std::string text(1000, 'x');
  auto chunks = ChunkText(text, Boundary(100, 200, 50));
  CheckCommonInvariants(text, chunks);
  const std::vector<Span> expected = {{0, 200},   {150, 350}, {300, 500}, {450, 650},
                                      {600, 800}, {750, 950}, {900, 1000}};
  ASSERT_EQ(chunks.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(chunks[i].begin, expected[i].first);
    EXPECT_EQ(chunks[i].end, expected[i].second);
  }
}

TEST(BoundaryTest, MultiByteTextIsNeverSplitMidCodePoint) {
  // 3-byte and 4-byte characters without any space: hard cuts only.
  for (const std::string& unit :
       {std::string("\xE6\x97\xA5"), std::string("\xF0\x9F\x99\x82"), std::string("a\xC3\xA9")}) {
    std::string text;
    for (int i = 0; i < 700; ++i) text += unit;
    auto chunks = ChunkText(text, Boundary(100, 200, 50));
    CheckCommonInvariants(text, chunks);
    for (const Chunk& c : chunks) EXPECT_LE(Chars(c.text), 200u);
    EXPECT_EQ(Chars(chunks[0].text), 200u);
    EXPECT_EQ(chunks.back().end, text.size());
    auto window = ChunkText(text, Window(1, 0));
    ASSERT_EQ(window.size(), 1u);
    EXPECT_EQ(window[0].text, text);
  }
}

TEST(BoundaryTest, CjkSentenceEnds) {
  std::string text;
  for (int i = 0; i < 150; ++i) {
    text +=
        "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE6\x96\x87\xE3\x81\xA7\xE3\x81\x99"
        "\xE3\x80\x82";  // 日本語の文です。
  }
  auto chunks = ChunkText(text, Boundary(100, 200, 30));
  CheckCommonInvariants(text, chunks);
  ASSERT_GT(chunks.size(), 5u);
  for (size_t i = 0; i + 1 < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i].text.substr(chunks[i].text.size() - 3), "\xE3\x80\x82");
    EXPECT_LE(Chars(chunks[i].text), 200u);
  }
}

TEST(BoundaryTest, MaxCharsAndOverlapOnDefaultsForALongDocument) {
  std::string text;
  for (int s = 0; s < 40; ++s) {
    text += "## Section " + std::to_string(s) + "\n\n" + Sentences(1200 + 97 * (s % 7), "Para") +
            "\n\n" + Sentences(900, "More") + "\n\n";
  }
  ChunkOptions o;
  o.strategy = Strategy::kBoundary;
  auto chunks = ChunkText(text, o);
  CheckCommonInvariants(text, chunks);
  ASSERT_GT(chunks.size(), 5u);
  for (size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_LE(Chars(chunks[i].text), 8000u);
    if (i > 0 && chunks[i].begin < chunks[i - 1].end) {
      EXPECT_LE(Chars(std::string_view(text).substr(chunks[i].begin,
                                                    chunks[i - 1].end - chunks[i].begin)),
                500u);
    }
  }
  // Section headers are preferred: every chunk but the last ends right before one.
  for (size_t i = 0; i + 1 < chunks.size(); ++i) {
    EXPECT_EQ(text.compare(text.find_first_not_of(" \n", chunks[i].end), 3, "## "), 0) << i;
  }
}

// ---------------------------------------------------------------------------
// Property test: random texts, random options, fixed seed.

std::string RandomText(std::mt19937& rng) {
  static const char* const kTokens[] = {"alpha",
                                        "beta",
                                        "Gamma",
                                        "delta.",
                                        "eps!",
                                        "zeta?",
                                        "\"quoted.\"",
                                        "caf\xC3\xA9",
                                        "x",
                                        "(see",
                                        "it).",
                                        "\xE6\x97\xA5\xE6\x9C\xAC",
                                        "\xE4\xB8\xAD\xE3\x80\x82",
                                        "\xF0\x9F\x99\x82",
                                        "Bob:",
                                        "<h2>",
                                        "#",
                                        "##",
                                        "e.g.",
                                        "\xE2\x80\xA6",
                                        "```"};
  static const char* const kSeparators[] = {" ",  " ",    "  ",       "\n",           "\n\n",
                                            "\t", "\r\n", "\xC2\xA0", "\xE3\x80\x80", "\n# "};
  std::string text;
  const size_t n = rng() % 400;
  if (rng() % 4 == 0) text += "  ";
  for (size_t i = 0; i < n; ++i) {
    if (rng() % 50 == 0) {
      text += std::string(1 + rng() % 300, static_cast<char>('a' + rng() % 26));  // long token
    } else {
      text += kTokens[rng() % (sizeof(kTokens) / sizeof(kTokens[0]))];
    }
    text += kSeparators[rng() % (sizeof(kSeparators) / sizeof(kSeparators[0]))];
  }
  return text;
}

TEST(ChunkerPropertyTest, RandomTextsRoundTripAndKeepTheirContracts) {
  std::mt19937 rng(20240607);
  for (int iter = 0; iter < 400; ++iter) {
    const std::string text = RandomText(rng);
    SCOPED_TRACE("iteration " + std::to_string(iter) + ", " + std::to_string(text.size()) +
                 " bytes");
    const std::vector<Span> words = ReferenceWords(text);

    // kNone.
    ChunkOptions none;
    none.strategy = Strategy::kNone;
    auto whole = ChunkText(text, none);
    ASSERT_EQ(whole.size(), words.empty() ? 0u : 1u);
    CheckCommonInvariants(text, whole);

    // kWordWindow against a direct computation of the windows.
    const size_t w = 1 + rng() % 40;
    const size_t o = rng() % w;
    auto windows = ChunkText(text, Window(w, o));
    CheckCommonInvariants(text, windows);
    std::vector<Span> expected;
    if (!words.empty() && words.size() <= w) {
      expected.push_back({words.front().first, words.back().second});
    } else if (!words.empty()) {
      size_t s = 0;
      for (; s + w < words.size(); s += w - o)
        expected.push_back({words[s].first, words[s + w - 1].second});
      expected.push_back({words[words.size() - w].first, words.back().second});
    }
    ASSERT_EQ(windows.size(), expected.size()) << "W=" << w << " O=" << o;
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(windows[i].begin, expected[i].first);
      ASSERT_EQ(windows[i].end, expected[i].second);
    }

    // kBoundary.
    const size_t max_chars = 1 + rng() % 150;
    const size_t overlap = rng() % max_chars;
    const size_t threshold = rng() % 3 == 0 ? rng() % 400 : 0;
    auto chunks = ChunkText(text, Boundary(threshold, max_chars, overlap));
    CheckCommonInvariants(text, chunks);
    if (words.empty()) {
      ASSERT_TRUE(chunks.empty());
      continue;
    }
    ASSERT_FALSE(chunks.empty());
    ASSERT_EQ(chunks.front().begin, words.front().first);
    ASSERT_EQ(chunks.back().end, words.back().second);
    if (Chars(text) <= threshold) {
      ASSERT_EQ(chunks.size(), 1u);
      continue;
    }
    std::vector<bool> covered(text.size(), false);
    for (size_t i = 0; i < chunks.size(); ++i) {
      const Chunk& c = chunks[i];
      ASSERT_LE(Chars(c.text), max_chars) << "chunk " << i;
      char32_t cp;
      DecodeUtf8(text, c.begin, &cp);
      ASSERT_FALSE(IsUnicodeSpace(cp)) << "chunk " << i << " starts with whitespace";
      if (i > 0 && c.begin < chunks[i - 1].end) {
        ASSERT_LE(Chars(std::string_view(text).substr(c.begin, chunks[i - 1].end - c.begin)),
                  overlap)
            << "chunk " << i << " overlaps too much";
      }
      for (size_t b = c.begin; b < c.end; ++b) covered[b] = true;
    }
    for (const Span& word : words) {
      for (size_t b = word.first; b < word.second; ++b) ASSERT_TRUE(covered[b]) << "byte " << b;
    }
  }
}

// ---------------------------------------------------------------------------
// Options.

TEST(ChunkOptionsTest, ValidateNamesTheField) {
  EXPECT_TRUE(ChunkOptions{}.Validate().ok());
  ChunkOptions o;
  o.window_words = 0;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(o.Validate().message(), "ChunkOptions.window_words is 0");
  o = {};
  o.overlap_words = 500;
  EXPECT_EQ(o.Validate().message(),
            "ChunkOptions.overlap_words (500) must be less than window_words (500)");
  o = {};
  o.max_chars = 0;
  EXPECT_CONTAINS(o.Validate().message(), "ChunkOptions.max_chars is 0");
  o = {};
  o.overlap_chars = 9000;
  EXPECT_EQ(o.Validate().message(),
            "ChunkOptions.overlap_chars (9000) must be less than max_chars (8000)");
  o = {};
  o.boundary_threshold_chars = size_t{1} << 40;
  EXPECT_CONTAINS(o.Validate().message(),
                  "ChunkOptions.boundary_threshold_chars (1099511627776) is too large");
  o = {};
  o.strategy = static_cast<Strategy>(7);
  EXPECT_CONTAINS(o.Validate().message(), "ChunkOptions.strategy: unknown value 7");
}

TEST(ChunkOptionsTest, InvalidOptionsAreClampedNotFatal) {
  ChunkOptions o = Window(0, 5);  // treated as window 1, overlap 0
  auto chunks = ChunkText("a b c", o);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[2].text, "c");
  o = Boundary(0, 0, 3);  // max 1, overlap 0
  chunks = ChunkText("ab cd", o);
  ASSERT_EQ(chunks.size(), 4u);
  CheckCommonInvariants("ab cd", chunks);
}

TEST(ChunkOptionsTest, NamesParsingAndSignature) {
  for (Strategy s : {Strategy::kNone, Strategy::kWordWindow, Strategy::kBoundary}) {
    auto parsed = ParseChunkStrategy(std::string(ChunkStrategyName(s)));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, s);
  }
  auto bad = ParseChunkStrategy("sentences");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "unknown chunking strategy \"sentences\": expected none, window or boundary");
  ChunkOptions o;
  EXPECT_EQ(o.Signature(), "window/v1:500:200");
  o.strategy = Strategy::kBoundary;
  EXPECT_EQ(o.Signature(), "boundary/v1:10000:8000:500");
  o.strategy = Strategy::kNone;
  EXPECT_EQ(o.Signature(), "none/v1");
}

// ---------------------------------------------------------------------------
// Scale: linear behaviour on large inputs (the assertions are on results; the
// timings are printed).

TEST(ChunkerScaleTest, LargeInputs) {
  std::string text;
  text.reserve(8 << 20);
  int section = 0;
  while (text.size() < (8u << 20)) {
    text += "# Section " + std::to_string(section++) + "\n\n" + Sentences(3000, "Body") + "\n\n";
  }
  const std::string token(4 << 20, 'z');  // one 4 MiB word: hard cuts only
  // Overlap max - 1 advances one character per chunk: the output is 1,000
  // times the input, so keep that input small.
  const std::string small_token(16 << 10, 'z');
  for (const auto& [name, input, options] :
       std::vector<std::tuple<std::string, const std::string*, ChunkOptions>>{
           {"8 MiB markdown, boundary", &text, Boundary(10000, 8000, 500)},
           {"8 MiB markdown, 500/200 words", &text, Window(500, 200)},
           {"4 MiB token, boundary", &token, Boundary(10000, 8000, 500)},
           {"16 KiB token, boundary 1000/999", &small_token, Boundary(0, 1000, 999)}}) {
    const auto start = std::chrono::steady_clock::now();
    auto chunks = ChunkText(*input, options);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    ASSERT_FALSE(chunks.empty());
    EXPECT_EQ(chunks.back().end, input->find_last_not_of(" \n") + 1) << name;
    std::printf("%-32s %7zu chunks in %8.1f ms\n", name.c_str(), chunks.size(), ms);
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
