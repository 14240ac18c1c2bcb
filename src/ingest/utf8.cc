#include "ingest/utf8.h"

namespace flowrag {

size_t Utf8SequenceLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xC2) return 0;  // continuation byte, or overlong C0/C1
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  if (lead < 0xF5) return 4;
  return 0;
}

size_t DecodeUtf8(std::string_view text, size_t pos, char32_t* cp, bool* ok) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  const unsigned char lead = s[pos];
  auto fail = [&](size_t len) {
    *cp = kReplacementCodePoint;
    if (ok != nullptr) *ok = false;
    return len;
  };
  if (lead < 0x80) {
    *cp = lead;
    if (ok != nullptr) *ok = true;
    return 1;
  }
  const size_t len = Utf8SequenceLength(lead);
  if (len == 0) return fail(1);
  // The allowed range of the second byte excludes overlongs (E0, F0),
  // surrogates (ED) and values above U+10FFFF (F4).
  unsigned char lo = 0x80, hi = 0xBF;
  if (lead == 0xE0) lo = 0xA0;
  if (lead == 0xED) hi = 0x9F;
  if (lead == 0xF0) lo = 0x90;
  if (lead == 0xF4) hi = 0x8F;
  char32_t value = lead & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
  for (size_t i = 1; i < len; ++i) {
    if (pos + i >= n) return fail(i);
    const unsigned char b = s[pos + i];
    if (i == 1 ? (b < lo || b > hi) : !IsUtf8ContinuationByte(b)) return fail(i);
    value = (value << 6) | (b & 0x3F);
  }
  *cp = value;
  if (ok != nullptr) *ok = true;
  return len;
}

std::string SanitizeUtf8(std::string_view text, size_t* replacements) {
  size_t count = 0;
  size_t bad = 0;
  std::string out;
  if (IsValidUtf8(text, &bad)) {
    out.assign(text);
  } else {
    out.reserve(text.size() + 16);
    out.append(text.substr(0, bad));
    size_t pos = bad;
    while (pos < text.size()) {
      char32_t cp;
      bool ok;
      const size_t len = DecodeUtf8(text, pos, &cp, &ok);
      if (ok) {
        out.append(text.substr(pos, len));
      } else {
        out.append(kUtf8Replacement);
        ++count;
      }
      pos += len;
    }
  }
  if (replacements != nullptr) *replacements = count;
  return out;
}

size_t CountCodePoints(std::string_view text) {
  size_t count = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    char32_t cp;
    pos += DecodeUtf8(text, pos, &cp);
    ++count;
  }
  return count;
}

bool IsUnicodeSpace(char32_t cp) {
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
  if (cp < 0x85) return false;
  switch (cp) {
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool IsBlank(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    char32_t cp;
    pos += DecodeUtf8(text, pos, &cp);
    if (!IsUnicodeSpace(cp)) return false;
  }
  return true;
}

}  // namespace flowrag
