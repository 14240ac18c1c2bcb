// Encodings of input files (common/encoding.h).
#include "common/encoding.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>

#include "common/text.h"

namespace flowrag {
namespace {


constexpr char32_t kReplacement = 0xFFFD;

uint32_t Unit(std::string_view b, size_t at, size_t width, bool little) {
  uint32_t v = 0;
  for (size_t i = 0; i < width; ++i) {
    const uint32_t byte = static_cast<unsigned char>(b[at + (little ? width - 1 - i : i)]);
    v = (v << 8) | byte;
  }
  return v;
}

void DecodeUtf16(std::string_view b, bool little, DecodedText* out) {
  out->text.reserve(b.size());
  size_t i = 0;
  for (; i + 2 <= b.size(); i += 2) {
    const uint32_t u = Unit(b, i, 2, little);
    if (u >= 0xD800 && u < 0xDC00 && i + 4 <= b.size()) {
      const uint32_t low = Unit(b, i + 2, 2, little);
      if (low >= 0xDC00 && low < 0xE000) {
        AppendUtf8(0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00), &out->text);
        i += 2;
        continue;
      }
    }
    if (u >= 0xD800 && u < 0xE000) {  // unpaired surrogate
      AppendUtf8(kReplacement, &out->text);
      ++out->replaced;
    } else {
      AppendUtf8(u, &out->text);
    }
  }
  if (i < b.size()) {  // an odd byte at the end
    AppendUtf8(kReplacement, &out->text);
    ++out->replaced;
  }
}

void DecodeUtf32(std::string_view b, bool little, DecodedText* out) {
  out->text.reserve(b.size() / 2);
  size_t i = 0;
  for (; i + 4 <= b.size(); i += 4) {
    const uint32_t u = Unit(b, i, 4, little);
    if (u > 0x10FFFF || (u >= 0xD800 && u < 0xE000)) {
      AppendUtf8(kReplacement, &out->text);
      ++out->replaced;
    } else {
      AppendUtf8(u, &out->text);
    }
  }
  if (i < b.size()) {
    AppendUtf8(kReplacement, &out->text);
    ++out->replaced;
  }
}

// The length of the well-formed UTF-8 character at text[pos], 0 when none starts there.
size_t Utf8CharAt(std::string_view text, size_t pos) {
  const unsigned char lead = static_cast<unsigned char>(text[pos]);
  const size_t len = lead < 0x80 ? 1 : lead < 0xC2 ? 0 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : lead < 0xF5 ? 4 : 0;
  if (len == 0 || pos + len > text.size()) return 0;
  return IsValidUtf8(text.substr(pos, len)) ? len : 0;
}

}  // namespace

const char* EncodingName(TextEncoding e) {
  switch (e) {
    case TextEncoding::kUtf16Le:
      return "UTF-16LE";
    case TextEncoding::kUtf16Be:
      return "UTF-16BE";
    case TextEncoding::kUtf32Le:
      return "UTF-32LE";
    case TextEncoding::kUtf32Be:
      return "UTF-32BE";
    case TextEncoding::kUtf8:
      break;
  }
  return "UTF-8";
}

DecodedText DecodeUnicodeText(std::string_view b) {
  DecodedText out;
  auto starts = [&](std::string_view prefix) { return b.substr(0, prefix.size()) == prefix; };
  using namespace std::string_view_literals;
  size_t skip = 0;
  if (starts("\xEF\xBB\xBF"sv)) {
    skip = 3;
  } else if (starts("\xFF\xFE\x00\x00"sv)) {
    out.encoding = TextEncoding::kUtf32Le;
    skip = 4;
  } else if (starts("\x00\x00\xFE\xFF"sv)) {
    out.encoding = TextEncoding::kUtf32Be;
    skip = 4;
  } else if (starts("\xFF\xFE"sv)) {
    out.encoding = TextEncoding::kUtf16Le;
    skip = 2;
  } else if (starts("\xFE\xFF"sv)) {
    out.encoding = TextEncoding::kUtf16Be;
    skip = 2;
  } else if (b.size() >= 4) {
    // No mark: the zero bytes of an ASCII first character (XML 1.0 Appendix F).
    auto zero = [&](size_t i) { return b[i] == '\0'; };
    auto ascii = [&](size_t i) { return b[i] != '\0' && static_cast<unsigned char>(b[i]) < 0x80; };
    if (ascii(0) && zero(1) && zero(2) && zero(3)) {
      out.encoding = TextEncoding::kUtf32Le;
    } else if (zero(0) && zero(1) && zero(2) && ascii(3)) {
      out.encoding = TextEncoding::kUtf32Be;
    } else if (ascii(0) && zero(1) && !zero(2) && zero(3)) {
      out.encoding = TextEncoding::kUtf16Le;
    } else if (zero(0) && ascii(1) && zero(2) && !zero(3)) {
      out.encoding = TextEncoding::kUtf16Be;
    }
  }
  out.bom = skip > 0;
  b.remove_prefix(skip);
  switch (out.encoding) {
    case TextEncoding::kUtf8:
      out.text.assign(b);
      break;
    case TextEncoding::kUtf16Le:
    case TextEncoding::kUtf16Be:
      DecodeUtf16(b, out.encoding == TextEncoding::kUtf16Le, &out);
      break;
    case TextEncoding::kUtf32Le:
    case TextEncoding::kUtf32Be:
      DecodeUtf32(b, out.encoding == TextEncoding::kUtf32Le, &out);
      break;
  }
  return out;
}

std::string Windows1252ToUtf8(std::string_view bytes) {
  // 0x80–0x9F of Windows-1252; 0 where it leaves the byte undefined.
  static constexpr char16_t kHigh[32] = {
      0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
      0x2039, 0x0152, 0,      0x017D, 0,      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
      0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178};
  std::string out;
  out.reserve(bytes.size() + bytes.size() / 4);
  for (unsigned char b : bytes) {
    char32_t cp = b;
    if (b >= 0x80 && b < 0xA0 && kHigh[b - 0x80] != 0) cp = kHigh[b - 0x80];
    AppendUtf8(cp, &out);
  }
  return out;
}

std::string Utf8OrWindows1252(std::string_view bytes, size_t* transcoded) {
  if (IsValidUtf8(bytes)) return std::string(bytes);
  if (transcoded != nullptr) ++*transcoded;
  return Windows1252ToUtf8(bytes);
}

size_t LinesToUtf8(std::string* text) {
  if (IsValidUtf8(*text)) return 0;
  size_t transcoded = 0;
  std::string out;
  out.reserve(text->size() + text->size() / 8);
  std::string_view rest(*text);
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    const size_t len = end == std::string_view::npos ? rest.size() : end + 1;
    out += Utf8OrWindows1252(rest.substr(0, len), &transcoded);
    rest.remove_prefix(len);
  }
  *text = std::move(out);
  return transcoded;
}

std::string EscapeForMessage(std::string_view text, size_t max_bytes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[pos]);
    const size_t len = Utf8CharAt(text, pos);
    if (pos + std::max<size_t>(len, 1) > max_bytes) {
      out += "...(" + std::to_string(text.size()) + " bytes)";
      break;
    }
    if (len > 1 || (len == 1 && c >= 0x20 && c != 0x7F)) {
      out.append(text.substr(pos, len));
      pos += len;
      continue;
    }
    switch (c) {
      case '\0':
        out += "\\0";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
    }
    ++pos;
  }
  return out;
}

namespace {

// Block size of BoundInputEchoes: a common stretch of at least 2 * block - 1
// bytes holds a whole block of the input that starts at a multiple of block,
// so a stretch of more than max_bytes is found from the input's blocks.
size_t EchoBlock(size_t max_bytes) { return std::max<size_t>(1, (max_bytes + 1) / 2); }

// Polynomial hash of `bytes` (mod 2^64) and the factor that removes the first
// byte of a window of `n` bytes when rolling.
constexpr uint64_t kRollBase = 1099511628211ull;
uint64_t RollHash(std::string_view bytes) {
  uint64_t h = 0;
  for (unsigned char b : bytes) h = h * kRollBase + b;
  return h;
}
uint64_t RollPower(size_t n) {
  uint64_t p = 1;
  for (size_t i = 1; i < n; ++i) p *= kRollBase;
  return p;
}

// Marks in *cut the stretches of `message` longer than `max_bytes` that repeat
// a part of `input` (cut[i] = end of the stretch that begins at i, else 0).
void MarkEchoes(std::string_view message, std::string_view input, size_t max_bytes,
                std::vector<size_t>* cut) {
  const size_t block = EchoBlock(max_bytes);
  if (input.size() <= max_bytes || message.size() <= max_bytes) return;
  // hash → the first start in input of a block with that content: a
  // repetitive input (one byte a million times) keeps one block, the one
  // from which the longest echo extends.
  std::unordered_map<uint64_t, size_t> blocks;
  for (size_t at = 0; at + block <= input.size(); at += block) {
    blocks.emplace(RollHash(input.substr(at, block)), at);
  }
  const uint64_t power = RollPower(block);
  uint64_t h = RollHash(message.substr(0, block));
  size_t covered = 0;  // message bytes before this are inside a marked stretch
  for (size_t m = 0; m + block <= message.size(); ++m) {
    if (m > 0) {
      h = (h - static_cast<unsigned char>(message[m - 1]) * power) * kRollBase +
          static_cast<unsigned char>(message[m + block - 1]);
    }
    if (m < covered) continue;
    const auto it = blocks.find(h);
    if (it == blocks.end()) continue;
    const size_t i = it->second;
    if (message.substr(m, block) != input.substr(i, block)) continue;
    size_t begin = m, from = i;
    while (begin > covered && from > 0 && message[begin - 1] == input[from - 1]) --begin, --from;
    size_t end = m + block, to = i + block;
    while (end < message.size() && to < input.size() && message[end] == input[to]) ++end, ++to;
    // A stretch right after a marked one continues it (the input ran out at
    // that alignment, not the echo).
    const bool continues = begin == covered && covered > 0;
    if (end - begin > max_bytes || continues) {
      (*cut)[begin] = std::max((*cut)[begin], end);
      covered = end;
    }
  }
}

}  // namespace

std::string BoundInputEchoes(std::string_view message, const std::vector<std::string_view>& inputs,
                             size_t max_bytes) {
  std::vector<size_t> cut(message.size(), 0);
  bool any = false;
  for (std::string_view input : inputs) {
    MarkEchoes(message, input, max_bytes, &cut);
  }
  for (size_t end : cut) any = any || end != 0;
  if (!any) return std::string(message);
  std::string out;
  for (size_t i = 0; i < message.size();) {
    if (cut[i] == 0) {
      out += message[i++];
      continue;
    }
    size_t end = cut[i];
    // Overlapping and adjacent echoes join.
    for (size_t j = i; j <= end && j < cut.size(); ++j) end = std::max(end, cut[j]);
    out += EscapeForMessage(message.substr(i, end - i), max_bytes);
    i = end;
  }
  return out;
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace flowrag
