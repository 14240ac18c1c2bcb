#include "export/clean_text.h"

#include <cstdint>

namespace flowrag {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// Length of the well-formed UTF-8 sequence at text[i] (Unicode Table 3-7),
// or 0 when the bytes there are ill-formed; *cp receives its code point.
size_t SequenceAt(std::string_view text, size_t i, uint32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (b(1) < lo || b(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  }
  uint32_t v = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) v = (v << 6) | (b(k) & 0x3F);
  *cp = v;
  return n;
}

// Bytes of the ill-formed subpart at text[i] (at least 1): a lead byte and
// the continuation bytes that could still follow it.
size_t IllFormedLength(std::string_view text, size_t i) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  size_t want = c >= 0xF0 && c <= 0xF4   ? 4
                : c >= 0xE0 && c <= 0xEF ? 3
                : c >= 0xC2 && c <= 0xDF ? 2
                                         : 1;
  size_t n = 1;
  while (n < want && i + n < text.size()) {
    const unsigned char next = static_cast<unsigned char>(text[i + n]);
    if (next < 0x80 || next > 0xBF) break;
    // The second byte's narrower ranges (E0, ED, F0, F4) end the subpart.
    if (n == 1 && ((c == 0xE0 && next < 0xA0) || (c == 0xED && next > 0x9F) ||
                   (c == 0xF0 && next < 0x90) || (c == 0xF4 && next > 0x8F))) {
      break;
    }
    ++n;
  }
  return n;
}

template <typename Emit>
void ForEachCharacter(std::string_view text, size_t* replaced, Emit emit) {
  size_t i = 0;
  while (i < text.size()) {
    uint32_t cp = 0;
    const size_t n = SequenceAt(text, i, &cp);
    if (n == 0) {
      emit(0xFFFD, std::string_view(kReplacement));
      if (replaced != nullptr) ++*replaced;
      i += IllFormedLength(text, i);
      continue;
    }
    emit(cp, text.substr(i, n));
    i += n;
  }
}

}  // namespace

void AppendCleanUtf8(std::string* out, std::string_view text, size_t* replaced) {
  ForEachCharacter(text, replaced, [&](uint32_t, std::string_view bytes) { out->append(bytes); });
}

std::string CleanUtf8(std::string_view text, size_t* replaced) {
  std::string out;
  out.reserve(text.size());
  AppendCleanUtf8(&out, text, replaced);
  return out;
}

void AppendXmlText(std::string* out, std::string_view text, size_t* replaced) {
  ForEachCharacter(text, replaced, [&](uint32_t cp, std::string_view bytes) {
    switch (cp) {
      case '&':
        out->append("&amp;");
        return;
      case '<':
        out->append("&lt;");
        return;
      case '>':
        out->append("&gt;");
        return;
      case '"':
        out->append("&quot;");
        return;
      case '\'':
        out->append("&apos;");
        return;
      case '\r':
        out->append("&#13;");
        return;
      case '\t':
      case '\n':
        out->push_back(static_cast<char>(cp));
        return;
      default:
        break;
    }
    if (cp < 0x20 || cp == 0xFFFE || cp == 0xFFFF) {
      out->append(kReplacement);
      if (replaced != nullptr) ++*replaced;
      return;
    }
    out->append(bytes);
  });
}

}  // namespace flowrag
