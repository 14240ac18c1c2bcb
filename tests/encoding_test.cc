// Input encodings (common/encoding.h): byte-order marks and BOM-less UTF-16
// and UTF-32 decoded to UTF-8, ill-formed units replaced and counted, the
// Windows-1252 fallback per piece, and input quoted safely in messages.
#include "common/encoding.h"

#include <gtest/gtest.h>

#include <string>

#include "common/json_errors.h"
#include "common/text.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using namespace std::string_literals;

// "Zoë €5 😀" in UTF-8: a Latin-1 letter, a BMP symbol, a supplementary character.
const std::string kUtf8 = "Zo\xC3\xAB \xE2\x82\xAC" "5 \xF0\x9F\x98\x80";

// The same text in UTF-16 (code units 'Z' 'o' U+00EB ' ' U+20AC '5' ' ' D83D DE00).
std::string Utf16(bool little) {
  const char16_t units[] = {u'Z', u'o', 0x00EB, u' ', 0x20AC, u'5', u' ', 0xD83D, 0xDE00};
  std::string out;
  for (char16_t u : units) {
    const char hi = static_cast<char>(u >> 8), lo = static_cast<char>(u & 0xFF);
    out += little ? std::string{lo, hi} : std::string{hi, lo};
  }
  return out;
}

std::string Utf32(bool little) {
  const char32_t cps[] = {U'Z', U'o', 0x00EB, U' ', 0x20AC, U'5', U' ', 0x1F600};
  std::string out;
  for (char32_t c : cps) {
    std::string be = {static_cast<char>(c >> 24), static_cast<char>((c >> 16) & 0xFF),
                      static_cast<char>((c >> 8) & 0xFF), static_cast<char>(c & 0xFF)};
    out += little ? std::string(be.rbegin(), be.rend()) : be;
  }
  return out;
}

TEST(Encoding, ByteOrderMarksSelectTheEncoding) {
  struct Case {
    std::string bytes;
    TextEncoding encoding;
  };
  const Case cases[] = {
      {"\xEF\xBB\xBF" + kUtf8, TextEncoding::kUtf8},
      {"\xFF\xFE" + Utf16(true), TextEncoding::kUtf16Le},
      {"\xFE\xFF" + Utf16(false), TextEncoding::kUtf16Be},
      {"\xFF\xFE\x00\x00"s + Utf32(true), TextEncoding::kUtf32Le},
      {"\x00\x00\xFE\xFF"s + Utf32(false), TextEncoding::kUtf32Be},
  };
  for (const Case& c : cases) {
    const DecodedText d = DecodeUnicodeText(c.bytes);
    EXPECT_EQ(d.encoding, c.encoding) << EncodingName(c.encoding);
    EXPECT_TRUE(d.bom) << EncodingName(c.encoding);
    EXPECT_EQ(d.text, kUtf8) << EncodingName(c.encoding);
    EXPECT_EQ(d.replaced, 0u) << EncodingName(c.encoding);
  }
  // No mark: plain UTF-8 and legacy bytes pass through untouched.
  EXPECT_EQ(DecodeUnicodeText(kUtf8).text, kUtf8);
  EXPECT_EQ(DecodeUnicodeText("Zo\xEB").text, "Zo\xEB");
  EXPECT_FALSE(DecodeUnicodeText(kUtf8).bom);
  EXPECT_EQ(DecodeUnicodeText("").text, "");
}

TEST(Encoding, BomLessUtf16AndUtf32AreRecognisedByTheirZeroBytes) {
  EXPECT_EQ(DecodeUnicodeText(Utf16(true)).encoding, TextEncoding::kUtf16Le);
  EXPECT_EQ(DecodeUnicodeText(Utf16(true)).text, kUtf8);
  EXPECT_EQ(DecodeUnicodeText(Utf16(false)).encoding, TextEncoding::kUtf16Be);
  EXPECT_EQ(DecodeUnicodeText(Utf16(false)).text, kUtf8);
  EXPECT_EQ(DecodeUnicodeText(Utf32(true)).encoding, TextEncoding::kUtf32Le);
  EXPECT_EQ(DecodeUnicodeText(Utf32(false)).text, kUtf8);
  // A UTF-8 text with a NUL inside is not mistaken for UTF-16.
  EXPECT_EQ(DecodeUnicodeText("a\0bc,d"s).encoding, TextEncoding::kUtf8);
}

TEST(Encoding, IllFormedUnitsBecomeReplacementCharactersAndAreCounted) {
  // A lone high surrogate, a lone low surrogate, then an odd byte at the end.
  const std::string bytes = "\xFF\xFE" "A\0\x3D\xD8" "B\0\x00\xDC" "C"s;
  const DecodedText d = DecodeUnicodeText(bytes);
  EXPECT_EQ(d.text, "A\xEF\xBF\xBD" "B\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(d.replaced, 3u);
  EXPECT_TRUE(IsValidUtf8(d.text));
  // UTF-32 beyond U+10FFFF.
  const DecodedText big = DecodeUnicodeText("\x00\x00\xFE\xFF\x00\x11\x00\x00"s);
  EXPECT_EQ(big.text, "\xEF\xBF\xBD");
  EXPECT_EQ(big.replaced, 1u);
}

TEST(Encoding, Windows1252FallbackIsPerPiece) {
  size_t n = 0;
  EXPECT_EQ(Utf8OrWindows1252("Caf\xC3\xA9", &n), "Caf\xC3\xA9");
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(Utf8OrWindows1252("Zo\xEB \x80", &n), "Zo\xC3\xAB \xE2\x82\xAC");
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(Windows1252ToUtf8("\x81\x9F"), "\xC2\x81\xC5\xB8");  // undefined 0x81 as Latin-1
  // Lines: the UTF-8 line stays, the Windows-1252 one is converted; the
  // line count never changes.
  std::string text = "Caf\xC3\xA9\nZo\xEB\r\nplain";
  EXPECT_EQ(LinesToUtf8(&text), 1u);
  EXPECT_EQ(text, "Caf\xC3\xA9\nZo\xC3\xAB\r\nplain");
  std::string valid = kUtf8;
  EXPECT_EQ(LinesToUtf8(&valid), 0u);
  EXPECT_EQ(valid, kUtf8);
}

TEST(Encoding, MessagesNeverCarryRawNulOrInvalidBytes) {
  EXPECT_EQ(EscapeForMessage("a\0b\xFF\tc\n"s), "a\\0b\\xFF\\tc\\n");
  EXPECT_EQ(EscapeForMessage(kUtf8), kUtf8);  // valid UTF-8 is kept
  EXPECT_EQ(EscapeForMessage("\x7F\x01"), "\\x7F\\x01");
  EXPECT_EQ(EscapeForMessage(std::string(300, 'x'), 10), "xxxxxxxxxx...(300 bytes)");
  EXPECT_EQ(EscapeForMessage(std::string(10, 'x'), 10), std::string(10, 'x'));
  // Cut at a character, never inside one, and never past the limit.
  const std::string cut = EscapeForMessage("\xE2\x82\xAC\xE2\x82\xAC", 4);
  EXPECT_EQ(cut, "\xE2\x82\xAC...(6 bytes)");  // the second does not fit
  EXPECT_TRUE(IsValidUtf8(EscapeForMessage("\xC3")));
  // nlohmann's "last read" quotes the input.
  const std::string json = CleanJsonError(
      "[json.exception.parse_error.101] parse error at line 1, column 4: syntax error; last "
      "read: '\"Zo\xEB'",
      true);
  EXPECT_EQ(json, "column 4: syntax error; last read: '\"Zo\\xEB'");
}

// A boundary that prints messages made elsewhere cuts every long stretch that
// repeats its input, wherever it stands and however much of the input it is.
TEST(Encoding, BoundInputEchoesCutsLongRepeatsOfTheInput) {
  std::string input;
  for (int i = 0; input.size() < 100000; ++i) input += std::to_string(i) + ",";
  const std::string tail = input.substr(5000, 3000);
  const std::string message = "cannot open \"" + input + "\": no such file; near \"" + tail +
                              "\"; short \"" + input.substr(7, 150) + "\"";
  const std::string bounded = BoundInputEchoes(message, {"unrelated", input});
  EXPECT_LT(bounded.size(), 800u) << bounded;
  EXPECT_NE(bounded.find("cannot open \"" + input.substr(0, 200) + "...(" +
                         std::to_string(input.size()) + " bytes)\""),
            std::string::npos)
      << bounded;
  EXPECT_NE(bounded.find("near \"" + tail.substr(0, 198)), std::string::npos) << bounded;
  EXPECT_NE(bounded.find("...(3000 bytes)\""), std::string::npos) << bounded;
  // A stretch of at most 200 bytes stays as it is.
  EXPECT_NE(bounded.find("short \"" + input.substr(7, 150) + "\""), std::string::npos) << bounded;
  EXPECT_EQ(BoundInputEchoes("no echo here", {input}), "no echo here");
  // A stretch of exactly max_bytes + 1 is found at any offset.
  for (size_t at : {0u, 1u, 99u, 100u, 101u, 5555u}) {
    const std::string m = "x" + input.substr(at, 201) + "y";
    EXPECT_EQ(BoundInputEchoes(m, {input}).find(input.substr(at, 201)), std::string::npos) << at;
  }
}

// A multi-megabyte token is quoted by its last kMaxJsonExcerptBytes, where the
// error is; what the parser expected is kept after the quote.
TEST(Encoding, JsonErrorsQuoteAShortExcerpt) {
  const std::string token = "\"" + std::string(5000, 'a') + "\xE2\x82\xAC" + std::string(70, 'b');
  const std::string cut = CleanJsonError(
      "[json.exception.parse_error.101] parse error at line 1, column 5074: syntax error while "
      "parsing object key - invalid string: missing closing quote; last read: '" +
          token + "'; expected string literal",
      true);
  EXPECT_LT(cut.size(), 250u) << cut;
  // 80 bytes: 7 of the a's, the euro sign (3 bytes) and the b's.
  EXPECT_NE(cut.find("last read: '..." + std::string(7, 'a') + "\xE2\x82\xAC" +
                     std::string(70, 'b') + "'"),
            std::string::npos)
      << cut;
  EXPECT_NE(cut.find("'; expected string literal"), std::string::npos) << cut;
  EXPECT_EQ(cut.rfind("column 5074: syntax error", 0), 0u) << cut;
  // Short quotes are kept whole.
  EXPECT_EQ(CleanJsonError("[json.exception.parse_error.101] parse error at line 2, column 1: "
                           "syntax error - invalid literal; last read: 'tru'",
                           true),
            "line 2, column 1: syntax error - invalid literal; last read: 'tru'");
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
