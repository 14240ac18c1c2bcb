#include "ingest/html_text.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <unordered_map>

#include "common/encoding.h"

namespace flowrag {
namespace {

// ---------------------------------------------------------------------------
// Characters.

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHtmlSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

bool EqualsLower(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != lower[i]) return false;
  }
  return true;
}

// windows-1252's 0x80-0x9F; 0 marks the five undefined bytes.
constexpr std::array<char16_t, 32> kCp1252High = {
    0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0,      0x017D, 0,      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178};

// ---------------------------------------------------------------------------
// Character references.

const std::unordered_map<std::string_view, char32_t>& NamedReferences() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string_view, char32_t>{
        {"amp", '&'},       {"lt", '<'},        {"gt", '>'},        {"quot", '"'},
        {"apos", '\''},     {"OElig", 0x152},   {"oelig", 0x153},   {"Scaron", 0x160},
        {"scaron", 0x161},  {"Yuml", 0x178},    {"fnof", 0x192},    {"circ", 0x2C6},
        {"tilde", 0x2DC},   {"ensp", 0x2002},   {"emsp", 0x2003},   {"thinsp", 0x2009},
        {"zwnj", 0x200C},   {"zwj", 0x200D},    {"lrm", 0x200E},    {"rlm", 0x200F},
        {"ndash", 0x2013},  {"mdash", 0x2014},  {"lsquo", 0x2018},  {"rsquo", 0x2019},
        {"sbquo", 0x201A},  {"ldquo", 0x201C},  {"rdquo", 0x201D},  {"bdquo", 0x201E},
        {"dagger", 0x2020}, {"Dagger", 0x2021}, {"bull", 0x2022},   {"hellip", 0x2026},
        {"permil", 0x2030}, {"prime", 0x2032},  {"Prime", 0x2033},  {"lsaquo", 0x2039},
        {"rsaquo", 0x203A}, {"oline", 0x203E},  {"frasl", 0x2044},  {"euro", 0x20AC},
        {"trade", 0x2122},  {"larr", 0x2190},   {"uarr", 0x2191},   {"rarr", 0x2192},
        {"darr", 0x2193},   {"harr", 0x2194},   {"rArr", 0x21D2},   {"hArr", 0x21D4},
        {"forall", 0x2200}, {"part", 0x2202},   {"exist", 0x2203},  {"empty", 0x2205},
        {"nabla", 0x2207},  {"isin", 0x2208},   {"notin", 0x2209},  {"sum", 0x2211},
        {"minus", 0x2212},  {"lowast", 0x2217}, {"radic", 0x221A},  {"prop", 0x221D},
        {"infin", 0x221E},  {"and", 0x2227},    {"or", 0x2228},     {"cap", 0x2229},
        {"cup", 0x222A},    {"int", 0x222B},    {"there4", 0x2234}, {"sim", 0x223C},
        {"cong", 0x2245},   {"asymp", 0x2248},  {"ne", 0x2260},     {"equiv", 0x2261},
        {"le", 0x2264},     {"ge", 0x2265},     {"sub", 0x2282},    {"sup", 0x2283},
        {"alpha", 0x3B1},   {"beta", 0x3B2},    {"gamma", 0x3B3},   {"delta", 0x3B4},
        {"epsilon", 0x3B5}, {"lambda", 0x3BB},  {"mu", 0x3BC},      {"pi", 0x3C0},
        {"sigma", 0x3C3},   {"tau", 0x3C4},     {"phi", 0x3C6},     {"omega", 0x3C9},
        {"Delta", 0x394},   {"Sigma", 0x3A3},   {"Omega", 0x3A9},   {"Pi", 0x3A0},
        {"loz", 0x25CA},    {"spades", 0x2660}, {"clubs", 0x2663},  {"hearts", 0x2665},
        {"diams", 0x2666}};
    // HTML 4's Latin-1 names, U+00A0..U+00FF in order.
    static constexpr std::array<std::string_view, 96> kLatin1 = {
        "nbsp",   "iexcl",  "cent",   "pound",  "curren", "yen",    "brvbar", "sect",   "uml",
        "copy",   "ordf",   "laquo",  "not",    "shy",    "reg",    "macr",   "deg",    "plusmn",
        "sup2",   "sup3",   "acute",  "micro",  "para",   "middot", "cedil",  "sup1",   "ordm",
        "raquo",  "frac14", "frac12", "frac34", "iquest", "Agrave", "Aacute", "Acirc",  "Atilde",
        "Auml",   "Aring",  "AElig",  "Ccedil", "Egrave", "Eacute", "Ecirc",  "Euml",   "Igrave",
        "Iacute", "Icirc",  "Iuml",   "ETH",    "Ntilde", "Ograve", "Oacute", "Ocirc",  "Otilde",
        "Ouml",   "times",  "Oslash", "Ugrave", "Uacute", "Ucirc",  "Uuml",   "Yacute", "THORN",
        "szlig",  "agrave", "aacute", "acirc",  "atilde", "auml",   "aring",  "aelig",  "ccedil",
        "egrave", "eacute", "ecirc",  "euml",   "igrave", "iacute", "icirc",  "iuml",   "eth",
        "ntilde", "ograve", "oacute", "ocirc",  "otilde", "ouml",   "divide", "oslash", "ugrave",
        "uacute", "ucirc",  "uuml",   "yacute", "thorn",  "yuml"};
    for (size_t i = 0; i < kLatin1.size(); ++i) t->emplace(kLatin1[i], 0xA0 + i);
    return t;
  }();
  return *table;
}

// Decodes the reference starting at text[pos] == '&'. On success appends the
// character and returns the bytes consumed; returns 0 (nothing appended) when
// no reference starts there.
size_t DecodeReference(std::string_view text, size_t pos, std::string* out) {
  size_t i = pos + 1;
  if (i < text.size() && text[i] == '#') {
    ++i;
    const bool hex = i < text.size() && (text[i] == 'x' || text[i] == 'X');
    if (hex) ++i;
    const size_t digits_start = i;
    uint32_t value = 0;
    bool overflow = false;
    while (i < text.size()) {
      const char c = text[i];
      int d;
      if (IsDigit(c)) {
        d = c - '0';
      } else if (hex && Lower(c) >= 'a' && Lower(c) <= 'f') {
        d = Lower(c) - 'a' + 10;
      } else {
        break;
      }
      if (value > 0x10FFFF) {
        overflow = true;  // keep consuming digits, the value is already invalid
      } else {
        value = value * (hex ? 16 : 10) + static_cast<uint32_t>(d);
      }
      ++i;
    }
    if (i == digits_start) return 0;
    if (i < text.size() && text[i] == ';') ++i;
    char32_t cp = value;
    if (overflow || value == 0 || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) {
      cp = 0xFFFD;
    } else if (value >= 0x80 && value <= 0x9F) {
      cp = kCp1252High[value - 0x80] != 0 ? kCp1252High[value - 0x80] : value;
    }
    AppendUtf8(cp, out);
    return i - pos;
  }
  constexpr size_t kMaxName = 16;
  while (i < text.size() && i - pos - 1 < kMaxName && (IsAlpha(text[i]) || IsDigit(text[i]))) ++i;
  if (i == pos + 1 || i >= text.size() || text[i] != ';') return 0;
  const auto& table = NamedReferences();
  auto it = table.find(text.substr(pos + 1, i - pos - 1));
  if (it == table.end()) return 0;
  // A no-break space reads as a space (it is one to the tokeniser anyway).
  AppendUtf8(it->second == 0xA0 ? U' ' : it->second, out);
  return i + 1 - pos;
}

// ---------------------------------------------------------------------------
// Element classes.

enum class Break { kNone = 0, kSpace = 1, kLine = 2, kParagraph = 3 };

Break BreakOf(std::string_view name) {
  static const auto* table =
      new std::unordered_map<std::string_view, Break>{{"p", Break::kParagraph},
                                                      {"h1", Break::kParagraph},
                                                      {"h2", Break::kParagraph},
                                                      {"h3", Break::kParagraph},
                                                      {"h4", Break::kParagraph},
                                                      {"h5", Break::kParagraph},
                                                      {"h6", Break::kParagraph},
                                                      {"pre", Break::kParagraph},
                                                      {"blockquote", Break::kParagraph},
                                                      {"ul", Break::kParagraph},
                                                      {"ol", Break::kParagraph},
                                                      {"dl", Break::kParagraph},
                                                      {"table", Break::kParagraph},
                                                      {"section", Break::kParagraph},
                                                      {"article", Break::kParagraph},
                                                      {"header", Break::kParagraph},
                                                      {"footer", Break::kParagraph},
                                                      {"nav", Break::kParagraph},
                                                      {"aside", Break::kParagraph},
                                                      {"main", Break::kParagraph},
                                                      {"figure", Break::kParagraph},
                                                      {"form", Break::kParagraph},
                                                      {"fieldset", Break::kParagraph},
                                                      {"details", Break::kParagraph},
                                                      {"address", Break::kParagraph},
                                                      {"hr", Break::kParagraph},
                                                      {"listing", Break::kParagraph},
                                                      {"body", Break::kParagraph},
                                                      {"div", Break::kLine},
                                                      {"li", Break::kLine},
                                                      {"dt", Break::kLine},
                                                      {"dd", Break::kLine},
                                                      {"tr", Break::kLine},
                                                      {"caption", Break::kLine},
                                                      {"figcaption", Break::kLine},
                                                      {"summary", Break::kLine},
                                                      {"legend", Break::kLine},
                                                      {"option", Break::kLine},
                                                      {"br", Break::kLine},
                                                      {"textarea", Break::kLine},
                                                      {"td", Break::kSpace},
                                                      {"th", Break::kSpace}};
  auto it = table->find(name);
  return it == table->end() ? Break::kNone : it->second;
}

// Elements dropped with their content.
bool IsDropped(std::string_view name) {
  return name == "script" || name == "style" || name == "noscript" || name == "template" ||
         name == "svg" || name == "math";
}

bool IsPreformatted(std::string_view name) {
  return name == "pre" || name == "textarea" || name == "listing";
}

// ---------------------------------------------------------------------------
// Output with collapsed whitespace and pending breaks.

class TextBuilder {
 public:
  void RequestBreak(Break b) {
    if (static_cast<int>(b) > static_cast<int>(pending_)) pending_ = b;
  }
  // Visible text (references already decoded by the caller).
  void Append(std::string_view s, bool preformatted) {
    for (char c : s) {
      if (c == '\0') continue;
      if (!preformatted && IsHtmlSpace(c)) {
        RequestBreak(Break::kSpace);
        continue;
      }
      if (preformatted && (c == '\n' || c == '\r' || c == '\f')) {
        if (c == '\n') newlines_ += 1;
        continue;
      }
      Flush();
      out_.push_back(c);
    }
  }
  // The text, without leading or trailing whitespace (which <pre> can leave).
  std::string Take() {
    size_t end = out_.size();
    while (end > 0 && IsHtmlSpace(out_[end - 1])) --end;
    size_t begin = 0;
    while (begin < end && IsHtmlSpace(out_[begin])) ++begin;
    out_.resize(end);
    out_.erase(0, begin);
    return std::move(out_);
  }

 private:
  void Flush() {
    if (!out_.empty()) {
      if (newlines_ > 0) {
        out_.append(std::min<size_t>(newlines_, 2), '\n');
      } else if (pending_ == Break::kParagraph) {
        out_.append("\n\n");
      } else if (pending_ == Break::kLine) {
        out_.push_back('\n');
      } else if (pending_ == Break::kSpace) {
        out_.push_back(' ');
      }
    }
    pending_ = Break::kNone;
    newlines_ = 0;
  }
  std::string out_;
  Break pending_ = Break::kNone;
  size_t newlines_ = 0;  // kept line breaks inside <pre>
};

// At most `max` bytes of `s`, cut before a UTF-8 code point.
std::string_view TruncateUtf8(std::string_view s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut);
}

constexpr size_t kMaxTitleBytes = 512;

// Collapses whitespace of a title: trimmed, runs become one space, at most
// kMaxTitleBytes.
std::string CollapseSpaces(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (IsHtmlSpace(c) || c == '\0') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out.push_back(' ');
    space = false;
    out.push_back(c);
    if (out.size() > kMaxTitleBytes) break;
  }
  return std::string(TruncateUtf8(out, kMaxTitleBytes));
}

// Decodes references in raw text (no tags), appending to *out.
void DecodeText(std::string_view text, std::string* out) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t amp = text.find('&', i);
    if (amp == std::string_view::npos) {
      out->append(text.substr(i));
      return;
    }
    out->append(text.substr(i, amp - i));
    const size_t used = DecodeReference(text, amp, out);
    if (used == 0) {
      out->push_back('&');
      i = amp + 1;
    } else {
      i = amp + used;
    }
  }
}

// ---------------------------------------------------------------------------
// The tokenizer.

class HtmlReader {
 public:
  explicit HtmlReader(std::string_view html) : in_(html) {}

  HtmlText Run() {
    while (pos_ < in_.size()) {
      const size_t lt = in_.find('<', pos_);
      const size_t text_end = lt == std::string_view::npos ? in_.size() : lt;
      EmitText(in_.substr(pos_, text_end - pos_));
      pos_ = text_end;
      if (pos_ < in_.size()) ReadMarkup();
    }
    HtmlText result;
    result.title = CollapseSpaces(title_);
    if (result.title.empty()) result.title = CollapseSpaces(h1_);
    result.text = out_.Take();
    return result;
  }

 private:
  void EmitText(std::string_view raw) {
    if (raw.empty()) return;
    decoded_.clear();
    DecodeText(raw, &decoded_);
    out_.Append(decoded_, pre_depth_ > 0);
    if (in_h1_ && !h1_done_ && h1_.size() < 4 * kMaxTitleBytes) h1_.append(decoded_);
  }

  // in_[pos_] == '<'.
  void ReadMarkup() {
    const std::string_view rest = in_.substr(pos_);
    if (rest.substr(0, 4) == "<!--") {
      pos_ = SkipPast(pos_ + 4, "-->");
      return;
    }
    if (rest.substr(0, 9) == "<![CDATA[") {
      pos_ = SkipPast(pos_ + 9, "]]>");
      return;
    }
    if (rest.size() >= 2 && (rest[1] == '!' || rest[1] == '?')) {
      pos_ = SkipPast(pos_ + 2, ">");
      return;
    }
    const bool end_tag = rest.size() >= 2 && rest[1] == '/';
    const size_t name_start = pos_ + (end_tag ? 2 : 1);
    if (name_start >= in_.size() || !IsAlpha(in_[name_start])) {
      if (end_tag && name_start < in_.size()) {  // "</ >" and the like: a bogus comment
        pos_ = SkipPast(name_start, ">");
        return;
      }
      EmitText("<");  // not markup
      ++pos_;
      return;
    }
    size_t name_end = name_start;
    while (name_end < in_.size() && !IsHtmlSpace(in_[name_end]) && in_[name_end] != '/' &&
           in_[name_end] != '>') {
      ++name_end;
    }
    name_.clear();
    for (size_t i = name_start; i < name_end && name_.size() < 16; ++i) name_ += Lower(in_[i]);
    if (name_end - name_start > 16) name_ += '~';  // no known element has a longer name
    const size_t tag_end = SkipAttributes(name_end);
    const bool self_closing = tag_end >= 2 && in_[tag_end - 1] == '>' && in_[tag_end - 2] == '/';
    pos_ = tag_end;
    if (end_tag) {
      EndTag(name_);
    } else {
      StartTag(name_, self_closing);
    }
  }

  void StartTag(const std::string& name, bool self_closing) {
    if (name == "title") {
      const size_t close = FindEndTag(pos_, "title");
      if (!title_seen_) {
        title_seen_ = true;
        DecodeText(TruncateUtf8(in_.substr(pos_, close - pos_), 4 * kMaxTitleBytes), &title_);
      }
      pos_ = SkipPast(close, ">");
      return;
    }
    if (IsDropped(name)) {
      if (!self_closing || name == "svg" || name == "math") {
        if (self_closing) return;  // <svg/>: an empty foreign element
        pos_ = SkipPast(FindEndTag(pos_, name), ">");
      }
      return;
    }
    out_.RequestBreak(BreakOf(name));
    if (IsPreformatted(name) && !self_closing) ++pre_depth_;
    if (name == "h1" && !h1_done_) in_h1_ = true;
  }

  void EndTag(const std::string& name) {
    out_.RequestBreak(BreakOf(name));
    if (IsPreformatted(name) && pre_depth_ > 0) --pre_depth_;
    if (name == "h1" && in_h1_) {
      in_h1_ = false;
      if (!CollapseSpaces(h1_).empty()) h1_done_ = true;
    }
  }

  // The end of the tag whose attributes start at `i`: just past its '>' (or
  // the end of input). Quoted values may hold '>'.
  size_t SkipAttributes(size_t i) {
    while (i < in_.size()) {
      const char c = in_[i];
      if (c == '>') return i + 1;
      if ((c == '"' || c == '\'') && i > 0 && (in_[i - 1] == '=' || IsHtmlSpace(in_[i - 1]))) {
        const size_t close = FindQuote(c, i + 1);
        if (close == std::string_view::npos) {
          // Never closed: the tag ends at the next '>' after all.
          const size_t gt = in_.find('>', i + 1);
          return gt == std::string_view::npos ? in_.size() : gt + 1;
        }
        i = close + 1;
        continue;
      }
      ++i;
    }
    return in_.size();
  }

  // The next `quote` at or after `from`; remembers when there is none, so a
  // page of unclosed quotes is not searched to its end again and again.
  size_t FindQuote(char quote, size_t from) {
    size_t& none_after = quote == '"' ? no_dquote_from_ : no_squote_from_;
    if (from >= none_after) return std::string_view::npos;
    const size_t at = in_.find(quote, from);
    if (at == std::string_view::npos) none_after = std::min(none_after, from);
    return at;
  }

  // Position of "</name" (ASCII case-insensitive, followed by a space, '/'
  // or '>' or the end) at or after `from`, or the end of input.
  size_t FindEndTag(size_t from, std::string_view name) const {
    size_t i = from;
    while (true) {
      const size_t lt = in_.find("</", i);
      if (lt == std::string_view::npos) return in_.size();
      const size_t n = lt + 2;
      if (n + name.size() <= in_.size() && EqualsLower(in_.substr(n, name.size()), name)) {
        const size_t after = n + name.size();
        if (after == in_.size() || IsHtmlSpace(in_[after]) || in_[after] == '/' ||
            in_[after] == '>') {
          return lt;
        }
      }
      i = lt + 2;
    }
  }

  // Just past the first `terminator` at or after `from`, or the end of input.
  size_t SkipPast(size_t from, std::string_view terminator) const {
    if (from >= in_.size()) return in_.size();
    const size_t at = in_.find(terminator, from);
    return at == std::string_view::npos ? in_.size() : at + terminator.size();
  }

  std::string_view in_;
  size_t pos_ = 0;
  TextBuilder out_;
  std::string decoded_;
  std::string name_;
  std::string title_;
  bool title_seen_ = false;
  std::string h1_;
  bool in_h1_ = false;
  bool h1_done_ = false;
  int pre_depth_ = 0;
  size_t no_dquote_from_ = std::string_view::npos;
  size_t no_squote_from_ = std::string_view::npos;
};

}  // namespace

HtmlText ExtractHtmlText(std::string_view html) { return HtmlReader(html).Run(); }

std::string DeclaredHtmlCharset(std::string_view html) {
  std::string head;
  for (char c : html.substr(0, 1024)) head += Lower(c);
  size_t at = 0;
  while ((at = head.find("charset", at)) != std::string::npos) {
    size_t i = at + 7;
    at = i;
    while (i < head.size() && IsHtmlSpace(head[i])) ++i;
    if (i >= head.size() || head[i] != '=') continue;
    ++i;
    while (i < head.size() && (IsHtmlSpace(head[i]) || head[i] == '"' || head[i] == '\'')) ++i;
    size_t end = i;
    while (end < head.size() && (IsAlpha(head[end]) || IsDigit(head[end]) || head[end] == '-' ||
                                 head[end] == '_' || head[end] == ':' || head[end] == '.')) {
      ++end;
    }
    if (end > i) return head.substr(i, end - i);
  }
  return "";
}

bool IsWindows1252Label(std::string_view charset) {
  static constexpr std::array<std::string_view, 12> kLabels = {
      "windows-1252", "cp1252", "x-cp1252", "iso-8859-1", "iso8859-1",      "iso_8859-1",
      "latin1",       "l1",     "us-ascii", "ascii",      "ansi_x3.4-1968", "iso-ir-100"};
  return std::find(kLabels.begin(), kLabels.end(), charset) != kLabels.end();
}

}  // namespace flowrag
