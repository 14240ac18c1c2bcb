// UTF-8 repair and decoding used by the loaders and chunkers. Validation
// (IsValidUtf8) lives in common/text.h and is re-exported here.
//
// "Valid UTF-8" follows RFC 3629 / Unicode §3.9: no overlong forms, no
// surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no truncated
// sequences. Ill-formed input is measured in "maximal subparts" (Unicode
// §3.9, "U+FFFD substitution of maximal subparts", the practice of WHATWG
// and most decoders): each maximal subpart becomes one U+FFFD.
//
// Thread-safety: pure functions. Complexity: linear in the input.
#ifndef FLOWRAG_INGEST_UTF8_H_
#define FLOWRAG_INGEST_UTF8_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "common/text.h"  // IsValidUtf8(text, bad_offset)

namespace flowrag {

// The UTF-8 encoding of U+FEFF (byte order mark) and U+FFFD (replacement).
inline constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
inline constexpr std::string_view kUtf8Replacement = "\xEF\xBF\xBD";
inline constexpr char32_t kReplacementCodePoint = 0xFFFD;

// True for bytes 10xxxxxx, which never start a code point.
inline bool IsUtf8ContinuationByte(unsigned char b) { return (b & 0xC0) == 0x80; }

// Total length of the sequence a lead byte announces (1..4), or 0 when the
// byte cannot start a well-formed sequence (continuation bytes, C0, C1,
// F5..FF).
size_t Utf8SequenceLength(unsigned char lead);

// Decodes the code point that starts at text[pos]. REQUIRES: pos < text.size().
// On success stores the code point in *cp and returns its length (1..4). On
// ill-formed input stores U+FFFD and returns the length of the maximal
// ill-formed subpart (>= 1), so a loop `pos += DecodeUtf8(...)` always
// advances and never splits a well-formed code point. `*ok` (optional) tells
// the two cases apart.
size_t DecodeUtf8(std::string_view text, size_t pos, char32_t* cp, bool* ok = nullptr);

// Returns `text` with every maximal ill-formed subpart replaced by U+FFFD
// (EF BF BD); valid input is returned unchanged. When replacements is
// non-null it receives the number of substitutions made.
std::string SanitizeUtf8(std::string_view text, size_t* replacements = nullptr);

// The number of code points in `text`, counting each maximal ill-formed
// subpart as one (as it would be after SanitizeUtf8).
size_t CountCodePoints(std::string_view text);

// Whitespace as Python's str.isspace() / str.split() define it: U+0009..U+000D,
// U+001C..U+001F, U+0020, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028,
// U+2029, U+202F, U+205F, U+3000.
bool IsUnicodeSpace(char32_t cp);

// True when `text` holds no code point other than IsUnicodeSpace ones (an
// empty string is blank).
bool IsBlank(std::string_view text);

// `text` without a leading byte order mark.
inline std::string_view StripUtf8Bom(std::string_view text) {
  return text.substr(0, kUtf8Bom.size()) == kUtf8Bom ? text.substr(kUtf8Bom.size()) : text;
}

}  // namespace flowrag

#endif  // FLOWRAG_INGEST_UTF8_H_
