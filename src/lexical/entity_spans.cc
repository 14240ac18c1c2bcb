#include "lexical/entity_spans.h"

#include <algorithm>
#include <array>
#include <string>

#include "common/text.h"

namespace flowrag {
namespace {

enum class Case : uint8_t { kUpper, kLower, kDigit, kOther };

// The first code point of `s` (U+FFFD for a malformed start).
uint32_t FirstCodePoint(std::string_view s) {
  if (s.empty()) return 0;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  if (p[0] < 0x80) return p[0];
  if ((p[0] & 0xE0) == 0xC0 && s.size() >= 2) return ((p[0] & 0x1F) << 6) | (p[1] & 0x3F);
  if ((p[0] & 0xF0) == 0xE0 && s.size() >= 3) {
    return ((p[0] & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F);
  }
  if ((p[0] & 0xF8) == 0xF0 && s.size() >= 4) {
    return ((p[0] & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F);
  }
  return 0xFFFD;
}

// Upper-case letters of the Latin, Greek and Cyrillic blocks that names use.
bool IsUpperCodePoint(uint32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return true;
  if (cp < 0xC0) return false;
  if (cp <= 0xDE) return cp != 0xD7;                             // Latin-1: À..Þ except ×
  if (cp >= 0x100 && cp <= 0x137) return cp % 2 == 0;            // Ā ā ... Ķ ķ
  if (cp >= 0x139 && cp <= 0x148) return cp % 2 == 1;            // Ĺ ĺ ... Ň ň
  if (cp >= 0x14A && cp <= 0x177) return cp % 2 == 0;            // Ŋ ŋ ... Ŷ ŷ
  if (cp == 0x178) return true;                                  // Ÿ
  if (cp >= 0x179 && cp <= 0x17E) return cp % 2 == 1;            // Ź ź ... Ž ž
  if (cp >= 0x200 && cp <= 0x233) return cp % 2 == 0;            // Ȁ ... Ș Ț ...
  if (cp == 0x386 || (cp >= 0x388 && cp <= 0x38F)) return true;  // accented Greek capitals
  if (cp >= 0x391 && cp <= 0x3AB) return cp != 0x3A2;            // Greek capitals
  if (cp >= 0x400 && cp <= 0x42F) return true;                   // Cyrillic capitals
  if (cp >= 0x460 && cp <= 0x4FF) return cp % 2 == 0;            // Cyrillic extended pairs
  if (cp >= 0x1E00 && cp <= 0x1EFF) return cp % 2 == 0;          // Latin Extended Additional
  return false;
}

Case TokenCase(std::string_view raw) {
  if (raw.empty()) return Case::kOther;
  const unsigned char c = static_cast<unsigned char>(raw[0]);
  if (c >= '0' && c <= '9') return Case::kDigit;
  if (c >= 'a' && c <= 'z') return Case::kLower;
  if (c >= 'A' && c <= 'Z') return Case::kUpper;
  const uint32_t cp = FirstCodePoint(raw);
  if (IsUpperCodePoint(cp)) return Case::kUpper;
  // Cased Latin/Greek/Cyrillic letters that are not upper-case are lower-case.
  if ((cp >= 0xDF && cp <= 0x24F) || (cp >= 0x370 && cp <= 0x4FF) ||
      (cp >= 0x1E00 && cp <= 0x1EFF)) {
    return Case::kLower;
  }
  return Case::kOther;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Two or more letters, all upper case ASCII.
bool IsAcronym(std::string_view s) {
  return s.size() >= 2 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

bool AllAsciiLetters(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
  }
  return true;
}

int DigitsValue(std::string_view s) {
  int v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Whitespace only, non-empty, not a paragraph break.
bool IsSpaceGap(std::string_view g) {
  if (g.empty() || g.find("\n\n") != std::string_view::npos) return false;
  return std::all_of(g.begin(), g.end(), IsSpace);
}

// "," or "." surrounded by optional whitespace ("November 11, 875").
bool IsCommaGap(std::string_view g) {
  size_t i = 0;
  while (i < g.size() && IsSpace(g[i])) ++i;
  if (i >= g.size() || g[i] != ',') return false;
  ++i;
  while (i < g.size() && IsSpace(g[i])) ++i;
  return i == g.size();
}

bool IsApostrophe(std::string_view g) { return g == "'" || g == "\xE2\x80\x99"; }

// An abbreviation's period, optionally followed by whitespace ("St. ", "U.").
bool IsPeriodGap(std::string_view g) {
  if (g.empty() || g[0] != '.') return false;
  return g.size() == 1 || IsSpaceGap(g.substr(1));
}

bool IsHyphenGap(std::string_view g) { return g == "-" || g == "\xE2\x80\x90"; }

// 1..12 for month names and their abbreviations, 0 otherwise.
int MonthIndex(std::string_view w) {
  static constexpr std::array<std::string_view, 12> kFull = {
      "january", "february", "march",     "april",   "may",      "june",
      "july",    "august",   "september", "october", "november", "december"};
  static constexpr std::array<std::string_view, 12> kShort = {
      "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
  for (int m = 0; m < 12; ++m) {
    if (w == kFull[m] || w == kShort[m]) return m + 1;
  }
  if (w == "sept") return 9;
  return 0;
}

bool IsFullMonthOrWeekday(std::string_view w) {
  static constexpr std::array<std::string_view, 19> kWords = {
      "january",   "february",  "march",   "april",    "may",      "june",   "july",
      "august",    "september", "october", "november", "december", "monday", "tuesday",
      "wednesday", "thursday",  "friday",  "saturday", "sunday"};
  return std::find(kWords.begin(), kWords.end(), w) != kWords.end();
}

// Capitalised abbreviations that end with a period inside a name.
bool IsNameAbbreviation(std::string_view raw) {
  if (raw.size() == 1) return raw[0] >= 'A' && raw[0] <= 'Z';
  static constexpr std::array<std::string_view, 28> kAbbrev = {
      "St",  "Ste", "Mt",   "Ft", "Dr",   "Mr",  "Mrs",  "Ms",  "Jr",  "Sr",
      "Gen", "Col", "Capt", "Lt", "Sgt",  "Rev", "Prof", "Hon", "Gov", "Sen",
      "Adm", "Maj", "Bros", "Co", "Corp", "Ave", "Fr",   "Pres"};
  return std::find(kAbbrev.begin(), kAbbrev.end(), raw) != kAbbrev.end();
}

// Lower-case words allowed inside a name between capitalised tokens. The
// second group only with hyphens ("Rostov-on-Don", "Harun al-Rashid").
bool IsConnector(std::string_view w, bool hyphenated) {
  static constexpr std::array<std::string_view, 33> kConnectors = {
      "of",  "the", "de", "du",  "des", "del", "della", "delle", "dei", "di",  "da",
      "dos", "das", "do", "von", "van", "der", "den",   "ter",   "ten", "la",  "le",
      "les", "y",   "zu", "zum", "zur", "af",  "av",    "upon",  "bin", "ibn", "bint"};
  static constexpr std::array<std::string_view, 7> kHyphenOnly = {"on", "en", "sur", "sous",
                                                                  "al", "el", "in"};
  if (std::find(kConnectors.begin(), kConnectors.end(), w) != kConnectors.end()) return true;
  return hyphenated && std::find(kHyphenOnly.begin(), kHyphenOnly.end(), w) != kHyphenOnly.end();
}

// Words after which a three-digit number is a year ("in 928", "died 875").
bool IsTemporalWord(std::string_view w) {
  static constexpr std::array<std::string_view, 14> kWords = {
      "in",    "died",   "born",    "from",  "until", "till",   "since",
      "after", "before", "between", "circa", "c",     "around", "year"};
  return std::find(kWords.begin(), kWords.end(), w) != kWords.end();
}

bool IsEra(std::string_view raw) {
  return raw == "BC" || raw == "BCE" || raw == "AD" || raw == "CE";
}

bool IsScaleWord(std::string_view w) {
  return w == "hundred" || w == "thousand" || w == "million" || w == "billion" || w == "trillion";
}

// A day of the month: 1..31, optionally with an ordinal suffix ("11th").
bool IsDay(std::string_view w) {
  size_t d = 0;
  while (d < w.size() && w[d] >= '0' && w[d] <= '9') ++d;
  if (d == 0 || d > 2) return false;
  std::string_view suffix = w.substr(d);
  if (!suffix.empty() && suffix != "st" && suffix != "nd" && suffix != "rd" && suffix != "th") {
    return false;
  }
  const int v = DigitsValue(w.substr(0, d));
  return v >= 1 && v <= 31;
}

// Detection state for one sentence.
class SentenceScanner {
 public:
  SentenceScanner(const TokenizedText& text, size_t tb, size_t te, const SpanOptions& options,
                  const std::unordered_set<std::string_view>* lowercase_words,
                  std::vector<EntitySpan>* out)
      : t_(text),
        tb_(tb),
        te_(te),
        options_(options),
        lower_(lowercase_words),
        out_(out),
        claimed_(te - tb, 0) {}

  void Run() {
    const size_t first_out = out_->size();
    if (options_.dates || options_.numbers) ScanDatesAndNumbers();
    if (options_.proper_nouns) ScanProperNouns();
    std::sort(out_->begin() + static_cast<std::ptrdiff_t>(first_out), out_->end(),
              [](const EntitySpan& a, const EntitySpan& b) { return a.begin < b.begin; });
  }

 private:
  std::string_view Norm(size_t i) const { return t_.norm(i); }
  std::string_view Raw(size_t i) const { return t_.raw(i); }
  Case CaseOf(size_t i) const { return TokenCase(Raw(i)); }
  bool Claimed(size_t i) const { return claimed_[i - tb_] != 0; }
  // Bytes between tokens a and a + 1.
  std::string_view GapAfter(size_t a) const {
    return t_.text().substr(t_.token(a).end, t_.token(a + 1).begin - t_.token(a).end);
  }
  // Bytes between the previous token (or the sentence start) and token i.
  std::string_view GapBefore(size_t i) const {
    if (i == tb_) return {};
    return GapAfter(i - 1);
  }
  bool Has(size_t i) const { return i < te_ && !Claimed(i); }

  void Emit(size_t b, size_t e, SpanKind kind, uint32_t byte_begin, uint32_t byte_end) {
    for (size_t i = b; i < e; ++i) claimed_[i - tb_] = 1;
    EntitySpan s;
    s.begin = byte_begin;
    s.end = byte_end;
    s.token_begin = static_cast<uint32_t>(b);
    s.token_end = static_cast<uint32_t>(e);
    s.kind = kind;
    if (kind == SpanKind::kDate && !options_.dates) return;
    if (kind == SpanKind::kNumber && !options_.numbers) return;
    out_->push_back(s);
  }
  void EmitTokens(size_t b, size_t e, SpanKind kind) {
    Emit(b, e, kind, t_.token(b).begin, t_.token(e - 1).end);
  }

  bool IsMonth(size_t i) const {
    return i < te_ && !Claimed(i) && CaseOf(i) == Case::kUpper && MonthIndex(Norm(i)) != 0;
  }
  // A year token after a month or day: plain digits, 1..4 of them, not the
  // start of a digit group ("1,820").
  bool IsYearAt(size_t i) const {
    if (!Has(i) || !AllDigits(Norm(i)) || Norm(i).size() > 4) return false;
    return !StartsDigitGroup(i);
  }
  bool StartsDigitGroup(size_t i) const {
    if (i + 1 >= te_) return false;
    std::string_view g = GapAfter(i);
    return (g == "," && AllDigits(Norm(i + 1)) && Norm(i + 1).size() == 3) ||
           (g == "." && AllDigits(Norm(i + 1)));
  }
  bool ContinuesDigitGroup(size_t i) const {
    if (i == tb_) return false;
    std::string_view g = GapBefore(i);
    return (g == "," || g == ".") && AllDigits(Norm(i - 1));
  }
  // The era after a year (" BC"): the token index past it.
  size_t WithEra(size_t e) const {
    if (Has(e) && IsSpaceGap(GapAfter(e - 1)) && IsEra(Raw(e))) return e + 1;
    return e;
  }
  // A lower-case word a number counts ("1,820 seats"): not a function word.
  bool IsCountedWord(size_t i) const {
    return Has(i) && IsSpaceGap(GapAfter(i - 1)) && CaseOf(i) == Case::kLower &&
           AllAsciiLetters(Raw(i)) && !IsSentenceInitialFunctionWord(Norm(i));
  }

  void ScanDatesAndNumbers() {
    size_t last_date_end = SIZE_MAX;  // token index just past the last date
    for (size_t i = tb_; i < te_; ++i) {
      if (Claimed(i)) continue;
      const size_t e = MatchDate(i, last_date_end);
      if (e > i) {
        EmitTokens(i, e, SpanKind::kDate);
        last_date_end = e;
        i = e - 1;
        continue;
      }
      if (CaseOf(i) == Case::kDigit && !ContinuesDigitGroup(i)) i = EmitNumber(i) - 1;
    }
  }

  // Returns the token index past a date starting at token i, or i.
  size_t MatchDate(size_t i, size_t last_date_end) const {
    std::string_view w = Norm(i);
    // ISO 1961-03-15.
    if (w.size() == 4 && AllDigits(w) && i + 2 < te_ && GapAfter(i) == "-" &&
        GapAfter(i + 1) == "-" && Norm(i + 1).size() == 2 && AllDigits(Norm(i + 1)) &&
        Norm(i + 2).size() == 2 && AllDigits(Norm(i + 2))) {
      const int month = DigitsValue(Norm(i + 1)), day = DigitsValue(Norm(i + 2));
      if (month >= 1 && month <= 12 && day >= 1 && day <= 31) return i + 3;
    }
    // 11 November 875 / 17 October.
    if (IsDay(w) && IsMonth(i + 1) && IsSpaceGap(GapAfter(i))) {
      size_t e = i + 2;
      if (e < te_ && IsYearAt(e) && (IsSpaceGap(GapAfter(e - 1)) || IsCommaGap(GapAfter(e - 1)))) {
        e = WithEra(e + 1);
      }
      return e;
    }
    // November 11, 875 / November 11 / March 1961 (a month abbreviation may
    // carry a period: "Nov. 11").
    if (IsMonth(i) && i + 1 < te_) {
      std::string_view g = GapAfter(i);
      const bool gap_ok = IsSpaceGap(g) || (Norm(i).size() <= 4 && IsPeriodGap(g) && g.size() > 1);
      if (gap_ok && Has(i + 1) && IsDay(Norm(i + 1)) && !StartsDigitGroup(i + 1)) {
        size_t e = i + 2;
        if (e < te_ && IsYearAt(e) && Norm(e).size() >= 3 &&
            (IsSpaceGap(GapAfter(e - 1)) || IsCommaGap(GapAfter(e - 1)))) {
          e = WithEra(e + 1);
        }
        return e;
      }
      if (gap_ok && IsYearAt(i + 1) && Norm(i + 1).size() >= 3) return WithEra(i + 2);
    }
    // AD 875.
    if (Raw(i) == "AD" && Has(i + 1) && IsSpaceGap(GapAfter(i)) && IsYearAt(i + 1)) return i + 2;
    if (CaseOf(i) != Case::kDigit || ContinuesDigitGroup(i)) return i;
    // 1960s.
    if (w.size() == 5 && w.back() == 's' && AllDigits(w.substr(0, 4))) return i + 1;
    if (!AllDigits(w) || w.size() > 4 || StartsDigitGroup(i)) return i;
    // 40 BC.
    if (const size_t e = WithEra(i + 1); e > i + 1) return e;
    const int v = DigitsValue(w);
    if (w.size() == 4 && v >= 1000 && v <= 2099) return i + 1;
    if (w.size() != 3 || IsCountedWord(i + 1)) return i;
    // A three-digit year needs context: a temporal word, an opening bracket,
    // or a date just before joined by "and", "or", "to" or a dash.
    if (i > tb_) {
      std::string_view g = GapBefore(i);
      if (IsSpaceGap(g) && IsTemporalWord(Norm(i - 1))) return i + 1;
      if (const size_t last = g.find_last_not_of(" \t");
          last != std::string_view::npos && g[last] == '(') {
        return i + 1;  // "(835 –)", "( 910 – 946)"
      }
      if (g.find("\xE2\x80\x93") != std::string_view::npos ||
          g.find('-') != std::string_view::npos) {
        if (last_date_end == i) return i + 1;
      }
      if (last_date_end == i - 1 && IsSpaceGap(g) &&
          (Norm(i - 1) == "and" || Norm(i - 1) == "or" || Norm(i - 1) == "to")) {
        return i + 1;
      }
    }
    return i;
  }

  // Emits the number starting at token i; returns the token index past it.
  size_t EmitNumber(size_t i) {
    size_t e = i + 1;
    while (StartsDigitGroup(e - 1) && Has(e)) {
      if (GapAfter(e - 1) == "." && !AllDigits(Norm(e))) break;
      ++e;
    }
    uint32_t byte_begin = t_.token(i).begin;
    uint32_t byte_end = t_.token(e - 1).end;
    // Currency sign written right before the digits.
    std::string_view before = t_.text().substr(0, byte_begin);
    for (std::string_view sign : {"$", "\xC2\xA3", "\xE2\x82\xAC"}) {
      if (before.size() >= sign.size() && before.substr(before.size() - sign.size()) == sign) {
        byte_begin -= static_cast<uint32_t>(sign.size());
        break;
      }
    }
    if (byte_end < t_.text().size() && t_.text()[byte_end] == '%') {
      ++byte_end;
    } else {
      if (Has(e) && IsSpaceGap(GapAfter(e - 1)) && IsScaleWord(Norm(e))) ++e;
      if (IsCountedWord(e)) ++e;
      byte_end = t_.token(e - 1).end;
    }
    Emit(i, e, SpanKind::kNumber, byte_begin, byte_end);
    return e;
  }

  bool IsUpperAt(size_t i) const { return Has(i) && CaseOf(i) == Case::kUpper; }

  // The token index past the proper-noun run starting at capitalised token i.
  size_t ExtendRun(size_t i) const {
    size_t last = i;
    while (last + 1 - i < options_.max_span_tokens) {
      const size_t k = last + 1;
      if (!Has(k)) break;
      std::string_view g = GapAfter(last);
      if (CaseOf(k) == Case::kUpper &&
          (IsSpaceGap(g) || IsHyphenGap(g) || IsApostrophe(g) || g == " & " ||
           (IsPeriodGap(g) && IsNameAbbreviation(Raw(last))))) {
        last = k;
        continue;
      }
      // Possessive inside a name: "St. Maurice's Abbey".
      if (Norm(k) == "s" && IsApostrophe(g) && IsUpperAt(k + 1) && IsSpaceGap(GapAfter(k)) &&
          k + 2 - i <= options_.max_span_tokens) {
        last = k + 1;
        continue;
      }
      // Up to two connectors then a capitalised token: "Bank of the West".
      size_t m = k;
      bool ok = true;
      while (m < k + 2 && Has(m) && CaseOf(m) == Case::kLower) {
        std::string_view gm = GapAfter(m - 1);
        const bool hyphen = IsHyphenGap(gm);
        if (!(IsSpaceGap(gm) || hyphen) || !IsConnector(Norm(m), hyphen)) {
          ok = false;
          break;
        }
        ++m;
      }
      if (ok && m > k && IsUpperAt(m) &&
          (IsSpaceGap(GapAfter(m - 1)) || IsHyphenGap(GapAfter(m - 1))) &&
          m + 1 - i <= options_.max_span_tokens) {
        last = m;
        continue;
      }
      break;
    }
    return last + 1;
  }

  // True when token i opens a clause: the sentence start, or right after an
  // opening quote, bracket or colon.
  bool OpensClause(size_t i) const {
    if (i == tb_) return true;
    std::string_view g = GapBefore(i);
    return g.find('"') != std::string_view::npos || g.find('(') != std::string_view::npos ||
           g.find('[') != std::string_view::npos || g.find(':') != std::string_view::npos ||
           g.find("\xE2\x80\x9C") != std::string_view::npos;
  }

  void ScanProperNouns() {
    for (size_t i = tb_; i < te_;) {
      if (!IsUpperAt(i)) {
        ++i;
        continue;
      }
      const size_t run_end = ExtendRun(i);
      size_t b = i;
      // Strip leading function words: any "The", and sentence-initial ones at
      // the start of a clause; then anything up to the next capitalised token.
      bool clause_start = OpensClause(i);
      while (b < run_end &&
             (Norm(b) == "the" || (clause_start && IsSentenceInitialFunctionWord(Norm(b))))) {
        clause_start = false;
        ++b;
        while (b < run_end && CaseOf(b) != Case::kUpper) ++b;
      }
      const size_t e = run_end;
      i = run_end;
      if (b >= e) continue;
      if (e - b == 1) {
        if (IsFullMonthOrWeekday(Norm(b))) continue;
        // A capitalised function word alone is no name, wherever it stands
        // (text without sentence punctuation: "... is cancer If the nodule
        // ..."), nor a word the passage also writes in lower case; an
        // acronym spelled like one ("US", "IT") stays.
        if (!IsAcronym(Raw(b)) &&
            (IsSentenceInitialFunctionWord(Norm(b)) ||
             (lower_ != nullptr && lower_->count(Norm(b)) > 0))) {
          continue;
        }
      }
      const uint32_t byte_begin = t_.token(b).begin, byte_end = t_.token(e - 1).end;
      if (byte_end - byte_begin < options_.min_proper_noun_bytes) continue;
      Emit(b, e, SpanKind::kProperNoun, byte_begin, byte_end);
    }
  }

  const TokenizedText& t_;
  const size_t tb_, te_;
  const SpanOptions& options_;
  const std::unordered_set<std::string_view>* lower_;
  std::vector<EntitySpan>* out_;
  std::vector<uint8_t> claimed_;  // per sentence token: inside an emitted span
};

}  // namespace

std::string_view SpanKindName(SpanKind kind) {
  switch (kind) {
    case SpanKind::kProperNoun:
      return "PROPER_NOUN";
    case SpanKind::kDate:
      return "DATE";
    case SpanKind::kNumber:
      return "NUMBER";
  }
  return "";
}

bool IsCapitalizedToken(std::string_view raw_token) { return TokenCase(raw_token) == Case::kUpper; }

bool IsSentenceInitialFunctionWord(std::string_view w) {
  if (IsStopword(w)) return true;
  static const auto* kExtra = new std::unordered_set<std::string_view>{
      "although",      "though",       "however",      "following", "according",
      "despite",       "unlike",       "like",         "among",     "amongst",
      "within",        "without",      "along",        "alongside", "around",
      "across",        "toward",       "towards",      "upon",      "since",
      "meanwhile",     "thus",         "therefore",    "moreover",  "furthermore",
      "additionally",  "nevertheless", "nonetheless",  "today",     "yesterday",
      "initially",     "eventually",   "subsequently", "finally",   "recently",
      "previously",    "formerly",     "originally",   "currently", "later",
      "earlier",       "together",     "yet",          "still",     "even",
      "every",         "another",      "either",       "neither",   "whether",
      "born",          "located",      "founded",      "directed",  "written",
      "produced",      "released",     "known",        "named",     "based",
      "situated",      "established",  "built",        "published", "formed",
      "set",           "several",      "many",         "one",       "two",
      "three",         "four",         "five",         "six",       "seven",
      "eight",         "nine",         "ten",          "besides",   "beyond",
      "near",          "via",          "whilst",       "hence",     "instead",
      "perhaps",       "indeed",       "although",     "unless",    "whereas",
      "upon",          "per",          "yes",          "oh",        "please",
      "whoever",       "whatever",     "wherever",     "whenever",  "however",
      "sometimes",     "often",        "usually",      "nearly",    "almost",
      "approximately", "about",        "only",         "much",      "little",
      "last",          "next",         "each",         "both"};
  return kExtra->count(w) > 0;
}

std::unordered_set<std::string_view> LowercaseWords(const TokenizedText& text) {
  std::unordered_set<std::string_view> words;
  for (size_t i = 0; i < text.size(); ++i) {
    if (TokenCase(text.raw(i)) == Case::kLower) words.insert(text.norm(i));
  }
  return words;
}

void DetectSentenceSpans(const TokenizedText& text, size_t token_begin, size_t token_end,
                         const SpanOptions& options,
                         const std::unordered_set<std::string_view>* lowercase_words,
                         std::vector<EntitySpan>* out) {
  if (token_begin >= token_end || token_end > text.size()) return;
  SentenceScanner(text, token_begin, token_end, options, lowercase_words, out).Run();
}

std::vector<EntitySpan> DetectEntitySpans(std::string_view text, const SpanOptions& options) {
  TokenizedText tokens(text);
  const auto lower = LowercaseWords(tokens);
  std::vector<EntitySpan> out;
  for (const TextSpan& s : SplitSentences(text)) {
    DetectSentenceSpans(tokens, tokens.FirstTokenAtOrAfter(s.begin),
                        tokens.FirstTokenAtOrAfter(s.end), options, &lower, &out);
  }
  return out;
}

}  // namespace flowrag
