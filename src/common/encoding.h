// Text files in the encodings real exports come in, made UTF-8 for the
// readers (schema/csv_reader.h, schema/json_records.h, the text files of
// schema discovery), and input quoted safely in error messages.
//
// DecodeUnicodeText: a byte-order mark decides the encoding: EF BB BF
// UTF-8, FF FE 00 00 UTF-32LE, 00 00 FE FF UTF-32BE, FF FE UTF-16LE, FE FF
// UTF-16BE (UTF-32LE is tested before UTF-16LE, whose mark starts it).
// Without a mark, text whose first character is ASCII shows UTF-16 and
// UTF-32 by where its zero bytes fall in the first four (XML 1.0 Appendix
// F): xx 00 xx 00 UTF-16LE, 00 xx 00 xx UTF-16BE, xx 00 00 00 UTF-32LE,
// 00 00 00 xx UTF-32BE. Anything else is UTF-8 (or a legacy single-byte
// encoding: Utf8OrWindows1252). UTF-16 and UTF-32 become UTF-8; an
// ill-formed unit (an unpaired surrogate, a value above U+10FFFF, a unit cut
// short at the end) becomes U+FFFD and is counted.
//
// The Windows-1252 fallback (Utf8OrWindows1252) is applied by the readers
// piece by piece: per field (CSV), per line (JSON, JSONL, text), so the valid
// UTF-8 parts of a file of mixed encodings stay as they are.
//
// Thread-safety: pure functions. Complexity: linear in the input.
#ifndef FLOWRAG_COMMON_ENCODING_H_
#define FLOWRAG_COMMON_ENCODING_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/messages.h"

namespace flowrag {

enum class TextEncoding { kUtf8, kUtf16Le, kUtf16Be, kUtf32Le, kUtf32Be };

// "UTF-8", "UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE".
const char* EncodingName(TextEncoding encoding);

struct DecodedText {
  std::string text;  // UTF-8 (when the input was UTF-8 or a legacy encoding: unchanged), no BOM
  TextEncoding encoding = TextEncoding::kUtf8;
  bool bom = false;     // the encoding came from a byte-order mark
  size_t replaced = 0;  // ill-formed UTF-16/UTF-32 units replaced by U+FFFD
};

DecodedText DecodeUnicodeText(std::string_view bytes);

// Windows-1252 (Latin-1 for the five bytes it leaves undefined) to UTF-8.
std::string Windows1252ToUtf8(std::string_view bytes);

// `bytes` unchanged when it is valid UTF-8; otherwise read as Windows-1252
// and `*transcoded` (may be null) incremented.
std::string Utf8OrWindows1252(std::string_view bytes, size_t* transcoded);

// Utf8OrWindows1252 on every line of `text` (line ends kept); returns the
// number of lines read as Windows-1252. Line numbers do not change.
size_t LinesToUtf8(std::string* text);

// kMaxQuotedInputBytes, EscapeForMessage and BoundInputEchoes (input quoted
// in error messages) are public: flowrag/messages.h, included above.

// Appends the UTF-8 bytes of code point `cp` (not checked: callers pass a
// scalar value, or U+FFFD for what is not one).
void AppendUtf8(char32_t cp, std::string* out);

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_ENCODING_H_
