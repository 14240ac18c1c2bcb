#include "common/text.h"

#include <libstemmer.h>
#include <unicode/brkiter.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utext.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>

namespace flowrag {
namespace {

// English function words; content words (numbers, names, verbs) are kept.
constexpr std::array kStopwords = {
    "a",      "about",  "above", "after",  "again",   "against",    "all",        "am",
    "an",     "and",    "any",   "are",    "as",      "at",         "be",         "because",
    "been",   "before", "being", "below",  "between", "both",       "but",        "by",
    "can",    "could",  "did",   "do",     "does",    "doing",      "down",       "during",
    "each",   "few",    "for",   "from",   "further", "had",        "has",        "have",
    "having", "he",     "her",   "here",   "hers",    "herself",    "him",        "himself",
    "his",    "how",    "i",     "if",     "in",      "into",       "is",         "it",
    "its",    "itself", "just",  "me",     "more",    "most",       "my",         "myself",
    "no",     "nor",    "not",   "now",    "of",      "off",        "on",         "once",
    "only",   "or",     "other", "our",    "ours",    "ourselves",  "out",        "over",
    "own",    "same",   "she",   "should", "so",      "some",       "such",       "than",
    "that",   "the",    "their", "theirs", "them",    "themselves", "then",       "there",
    "these",  "they",   "this",  "those",  "through", "to",         "too",        "under",
    "until",  "up",     "very",  "was",    "we",      "were",       "what",       "when",
    "where",  "which",  "while", "who",    "whom",    "whose",      "why",        "will",
    "with",   "would",  "you",   "your",   "yours",   "yourself",   "yourselves", "s",
    "t",      "also",
};

const std::unordered_set<std::string_view>& StopwordSet() {
  static const auto* set =
      new std::unordered_set<std::string_view>(kStopwords.begin(), kStopwords.end());
  return *set;
}

inline bool IsWordByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

inline bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The code point at s[i] and its length in *len, or -1 with *len = 1 when the
// bytes there are not well-formed UTF-8 (stray continuation byte, truncated
// or overlong sequence, surrogate, above U+10FFFF).
int32_t DecodeUtf8(std::string_view s, size_t i, size_t* len) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char c = p[i];
  *len = 1;
  if (c < 0x80) return c;
  size_t n;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return -1;
  }
  if (i + n > s.size()) return -1;
  for (size_t k = 1; k < n; ++k) {
    if ((p[i + k] & 0xC0) != 0x80) return -1;
    cp = (cp << 6) | (p[i + k] & 0x3F);
  }
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
      cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return -1;
  }
  *len = n;
  return static_cast<int32_t>(cp);
}

// True when code point `cp` is part of a word run: ASCII letters and digits,
// and non-ASCII code points other than punctuation, symbols and spaces of the
// Latin-1, General Punctuation and CJK punctuation blocks (dashes, curly
// quotes, ellipses, no-break spaces, 、。「」) and U+FFFD.
inline bool IsAsciiAlnum(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

inline bool IsWordCodePointValue(uint32_t cp) {
  if (cp < 0x80) return IsAsciiAlnum(static_cast<unsigned char>(cp));
  if (cp <= 0xBF) return false;                    // Latin-1 punctuation and symbols
  if (cp == 0xD7 || cp == 0xF7) return false;      // × ÷
  if (cp >= 0x2000 && cp <= 0x206F) return false;  // general punctuation
  if (cp >= 0x3000 && cp <= 0x303F) return false;  // CJK punctuation
  if (cp >= 0xFF00 && cp <= 0xFF0F) return false;  // fullwidth punctuation
  if (cp == 0xFFFD) return false;                  // replacement character (ill-formed input)
  return true;
}

}  // namespace

bool IsStopword(std::string_view lower_token) { return StopwordSet().count(lower_token) > 0; }

std::string EntityKey(std::string_view name) {
  const bool ascii = std::all_of(name.begin(), name.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  std::string folded;
  if (!ascii) {
    folded = FoldCase(name);
    name = folded;
  }
  std::string key;
  key.reserve(name.size());
  bool pending_space = false;
  size_t i = 0;
  while (i < name.size()) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    size_t len = 1;
    bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (c >= 0x80) {
      const int32_t cp = DecodeUtf8(name, i, &len);
      word = cp >= 0 && IsWordCodePointValue(static_cast<uint32_t>(cp));
    }
    if (word) {
      if (pending_space && !key.empty()) key.push_back(' ');
      pending_space = false;
      if (len == 1) {
        key.push_back((c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a')
                                             : static_cast<char>(c));
      } else {
        key.append(name.substr(i, len));
      }
    } else {
      pending_space = true;
    }
    i += len;
  }
  return key;
}

std::string ToLowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

void AppendUnique(std::vector<std::string>* list, std::string item) {
  if (std::find(list->begin(), list->end(), item) == list->end()) list->push_back(std::move(item));
}

std::string StemS(std::string_view w) {
  if (w.size() > 3 && EndsWith(w, "ies") && !EndsWith(w, "eies") && !EndsWith(w, "aies")) {
    return std::string(w.substr(0, w.size() - 3)) + "y";
  }
  if (w.size() > 3 && EndsWith(w, "es") && !EndsWith(w, "aes") && !EndsWith(w, "ees") &&
      !EndsWith(w, "oes")) {
    return std::string(w.substr(0, w.size() - 1));
  }
  if (w.size() > 3 && EndsWith(w, "s") && !EndsWith(w, "us") && !EndsWith(w, "ss")) {
    return std::string(w.substr(0, w.size() - 1));
  }
  return std::string(w);
}

namespace {

// ICU's NFKC + case folding normaliser (immutable, shared by all threads).
const icu::Normalizer2* NfkcCasefold() {
  static const icu::Normalizer2* n = [] {
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* p = icu::Normalizer2::getNFKCCasefoldInstance(status);
    return U_SUCCESS(status) ? p : nullptr;
  }();
  return n;
}

// This thread's word break iterator (root locale: ICU's dictionaries for
// Chinese, Japanese, Thai, Lao, Khmer and Burmese apply whatever the locale).
icu::BreakIterator* WordBreaker() {
  thread_local std::unique_ptr<icu::BreakIterator> it = [] {
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::BreakIterator> p(
        icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), status));
    if (U_FAILURE(status)) p.reset();
    return p;
  }();
  return it.get();
}

// This thread's Snowball stemmer for `language` (nullptr when unknown).
sb_stemmer* SnowballStemmer(std::string_view language) {
  struct Deleter {
    void operator()(sb_stemmer* s) const { sb_stemmer_delete(s); }
  };
  thread_local std::map<std::string, std::unique_ptr<sb_stemmer, Deleter>, std::less<>> stemmers;
  auto it = stemmers.find(language);
  if (it == stemmers.end()) {
    const std::string name(language);
    it = stemmers.emplace(name, sb_stemmer_new(name.c_str(), "UTF_8")).first;
  }
  return it->second.get();
}

// `tok` cut to at most `max` bytes without splitting a UTF-8 sequence.
void TruncateUtf8(std::string* tok, size_t max) {
  if (tok->size() <= max) return;
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>((*tok)[end]) & 0xC0) == 0x80) --end;
  tok->resize(end);
}

// How a TokenizeInto call stems, resolved once per call.
struct StemPlan {
  enum Kind { kNone, kS, kSnowball } kind = kNone;
  sb_stemmer* snowball = nullptr;
};

StemPlan PlanStemming(const TokenizerOptions& options) {
  StemPlan plan;
  if (!options.stem || options.language == "none") return plan;
  if (options.language == kDefaultLanguage) {
    plan.kind = StemPlan::kS;
    return plan;
  }
  plan.snowball = SnowballStemmer(options.language);
  plan.kind = plan.snowball != nullptr ? StemPlan::kSnowball : StemPlan::kNone;
  return plan;
}

std::string SnowballStem(sb_stemmer* stemmer, std::string_view word) {
  const sb_symbol* stem = sb_stemmer_stem(stemmer, reinterpret_cast<const sb_symbol*>(word.data()),
                                          static_cast<int>(word.size()));
  const int length = stem == nullptr ? 0 : sb_stemmer_length(stemmer);
  // Out of memory, or a word stemmed to nothing (Porter's "s"): the word itself.
  if (length <= 0) return std::string(word);
  return std::string(reinterpret_cast<const char*>(stem), static_cast<size_t>(length));
}

// Appends `tok` unless it is a stopword, stemmed per `plan`.
inline void Emit(const std::string& tok, const TokenizerOptions& options, const StemPlan& plan,
                 std::vector<std::string>* out) {
  // A possessive "Theodred's" yields "theodred" and "s"; "s" is a stopword.
  if (options.remove_stopwords && IsStopword(tok)) return;
  switch (plan.kind) {
    case StemPlan::kS: out->push_back(StemS(tok)); break;
    case StemPlan::kSnowball: out->push_back(SnowballStem(plan.snowball, tok)); break;
    case StemPlan::kNone: out->push_back(tok); break;
  }
}

// A segment of the word break iterator, split at ASCII punctuation (NFKC
// turns fullwidth "，" into ","; ICU keeps "1,000" and "u.s" whole).
void EmitPiece(std::string_view piece, const TokenizerOptions& options, const StemPlan& plan,
               std::vector<std::string>* out) {
  size_t i = 0;
  while (i < piece.size()) {
    auto is_sep = [](char c) {
      const auto u = static_cast<unsigned char>(c);
      return u < 0x80 && !((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9'));
    };
    while (i < piece.size() && is_sep(piece[i])) ++i;
    size_t j = i;
    while (j < piece.size() && !is_sep(piece[j])) ++j;
    if (j > i) {
      std::string tok(piece.substr(i, j - i));
      TruncateUtf8(&tok, options.max_token_bytes);
      if (!tok.empty()) Emit(tok, options, plan, out);
    }
    i = j;
  }
}

// A run of word code points with at least one non-ASCII one: folded (NFKC +
// case folding), then cut into words by ICU; segments with no letter, digit
// or ideograph (rule status "none": symbols, emoji, spaces) are dropped.
void SegmentRun(std::string_view run, const TokenizerOptions& options, const StemPlan& plan,
                std::vector<std::string>* out) {
  const icu::Normalizer2* nfkc = NfkcCasefold();
  icu::BreakIterator* breaker = WordBreaker();
  UErrorCode status = U_ZERO_ERROR;
  const icu::UnicodeString source =
      icu::UnicodeString::fromUTF8(icu::StringPiece(run.data(), static_cast<int32_t>(run.size())));
  const icu::UnicodeString folded = nfkc ? nfkc->normalize(source, status) : source;
  if (U_FAILURE(status) || breaker == nullptr) {  // ICU data missing: the run as one token
    std::string tok;
    (U_FAILURE(status) ? source : folded).toUTF8String(tok);
    EmitPiece(tok, options, plan, out);
    return;
  }
  breaker->setText(folded);
  std::string piece;
  int32_t begin = breaker->first();
  for (int32_t end = breaker->next(); end != icu::BreakIterator::DONE;
       begin = end, end = breaker->next()) {
    if (breaker->getRuleStatus() < UBRK_WORD_NONE_LIMIT) continue;
    piece.clear();
    folded.tempSubStringBetween(begin, end).toUTF8String(piece);
    EmitPiece(piece, options, plan, out);
  }
}

}  // namespace

std::string FoldCase(std::string_view text) {
  const bool ascii = std::all_of(text.begin(), text.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) return ToLowerAscii(text);
  const icu::UnicodeString source =
      icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfkc = NfkcCasefold();
  std::string out;
  if (nfkc == nullptr) {
    source.toUTF8String(out);
    return out;
  }
  const icu::UnicodeString folded = nfkc->normalize(source, status);
  (U_FAILURE(status) ? source : folded).toUTF8String(out);
  return out;
}

std::string StemWord(std::string_view lower_token, std::string_view language) {
  if (language == kDefaultLanguage) return StemS(lower_token);
  if (language == "none" || lower_token.empty()) return std::string(lower_token);
  sb_stemmer* stemmer = SnowballStemmer(language);
  if (stemmer == nullptr) return std::string(lower_token);
  return SnowballStem(stemmer, lower_token);
}

std::vector<std::string> TokenizerLanguages() {
  std::vector<std::string> out = {std::string(kDefaultLanguage), "none"};
  std::vector<std::string> snowball;
  for (const char** l = sb_stemmer_list(); l != nullptr && *l != nullptr; ++l) snowball.emplace_back(*l);
  std::sort(snowball.begin(), snowball.end());
  out.insert(out.end(), snowball.begin(), snowball.end());
  return out;
}

Status ValidateLanguage(std::string_view language) {
  const std::vector<std::string> all = TokenizerLanguages();
  if (std::find(all.begin(), all.end(), language) != all.end()) return Status::Ok();
  std::string list;
  for (const std::string& l : all) list += (list.empty() ? "" : ", ") + l;
  return Status::InvalidArgument("language \"" + std::string(language.substr(0, 40)) +
                                 "\": expected one of " + list);
}

std::string TokenizerSignature(std::string_view language) {
  return "tok" + std::to_string(kTokenizerVersion) + "-" + std::string(language);
}

void TokenizeInto(std::string_view text, const TokenizerOptions& options,
                  std::vector<std::string>* out) {
  const StemPlan plan = PlanStemming(options);
  const size_t n = text.size();
  size_t i = 0;
  size_t len = 1;
  std::string tok;
  while (i < n) {
    // Skip to the next word code point (ASCII bytes without decoding).
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (!IsAsciiAlnum(c)) {
        ++i;
        continue;
      }
    } else if (const int32_t cp = DecodeUtf8(text, i, &len);
               cp < 0 || !IsWordCodePointValue(static_cast<uint32_t>(cp))) {
      i += len;
      continue;
    }
    // The run of word code points from here; ASCII-only runs take the fast path.
    const size_t begin = i;
    bool ascii = true;
    while (i < n) {
      const auto b = static_cast<unsigned char>(text[i]);
      if (b < 0x80) {
        if (!IsAsciiAlnum(b)) break;
        ++i;
        continue;
      }
      const int32_t cp = DecodeUtf8(text, i, &len);
      if (cp < 0 || !IsWordCodePointValue(static_cast<uint32_t>(cp))) break;
      ascii = false;
      i += len;
    }
    if (!ascii) {
      SegmentRun(text.substr(begin, i - begin), options, plan, out);
      continue;
    }
    tok.assign(text.data() + begin, std::min(i - begin, options.max_token_bytes));
    for (char& ch : tok) {
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    }
    Emit(tok, options, plan, out);
  }
}

std::vector<TextSpan> WordSegments(std::string_view run) {
  std::vector<TextSpan> out;
  if (run.empty()) return out;
  icu::BreakIterator* breaker = WordBreaker();
  if (breaker == nullptr || run.size() > static_cast<size_t>(INT32_MAX) || !IsValidUtf8(run)) {
    out.push_back({0, run.size()});
    return out;
  }
  UErrorCode status = U_ZERO_ERROR;
  UText* ut = utext_openUTF8(nullptr, run.data(), static_cast<int64_t>(run.size()), &status);
  if (U_FAILURE(status)) {
    out.push_back({0, run.size()});
    return out;
  }
  breaker->setText(ut, status);
  if (U_SUCCESS(status)) {
    int32_t begin = breaker->first();
    for (int32_t end = breaker->next(); end != icu::BreakIterator::DONE;
         begin = end, end = breaker->next()) {
      if (breaker->getRuleStatus() < UBRK_WORD_NONE_LIMIT) continue;
      out.push_back({static_cast<size_t>(begin), static_cast<size_t>(end)});
    }
  } else {
    out.push_back({0, run.size()});
  }
  // Detach the iterator from the text before closing it.
  icu::UnicodeString empty;
  breaker->setText(empty);
  utext_close(ut);
  return out;
}

std::vector<std::string> Tokenize(std::string_view text, const TokenizerOptions& options) {
  std::vector<std::string> out;
  out.reserve(text.size() / 6 + 1);
  TokenizeInto(text, options, &out);
  return out;
}

namespace {

// `word` (one or two ASCII letters, capitalised) precedes a period and `next`
// is the text after the following whitespace. Two capitals are an acronym or
// roman numeral that ends the sentence; a single I, V or X does when the next
// word is a function word, which no name starts with.
bool EndsSentenceDespiteShortWord(std::string_view word, std::string_view next) {
  if (word.size() == 2) return word[1] >= 'A' && word[1] <= 'Z';
  if (word != "I" && word != "V" && word != "X") return false;
  size_t n = 0;
  while (n < next.size() && n < 16 &&
         ((next[n] >= 'a' && next[n] <= 'z') || (next[n] >= 'A' && next[n] <= 'Z'))) {
    ++n;
  }
  if (n == 0 || n >= 16) return false;
  const std::string lower = ToLowerAscii(next.substr(0, n));
  return IsStopword(lower) || lower == "born" || lower == "following" || lower == "however" ||
         lower == "although" || lower == "directed";
}

}  // namespace

std::vector<TextSpan> SplitSentences(std::string_view text) {
  std::vector<TextSpan> spans;
  const size_t n = text.size();
  auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
  };
  auto push = [&](size_t b, size_t e) {
    while (b < e && is_space(text[b])) ++b;
    while (e > b && is_space(text[e - 1])) --e;
    if (e > b) spans.push_back({b, e});
  };
  size_t start = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = text[i];
    // A paragraph break, or a page break (U+000C: a PDF's pages, ingest/document.h).
    if ((c == '\n' && i + 1 < n && text[i + 1] == '\n') || c == '\f') {
      push(start, i);
      start = i + 1;
      continue;
    }
    if (c != '.' && c != '!' && c != '?') continue;
    size_t j = i + 1;
    while (j < n && (text[j] == '"' || text[j] == '\'' || text[j] == ')')) ++j;
    if (j >= n) break;
    if (!is_space(text[j])) continue;
    size_t k = j;
    while (k < n && is_space(text[k])) ++k;
    if (k >= n) break;
    unsigned char next = static_cast<unsigned char>(text[k]);
    bool starts_sentence = (next >= 'A' && next <= 'Z') || (next >= '0' && next <= '9') ||
                           next == '"' || next == '\'' || next >= 0x80;
    if (!starts_sentence) continue;
    // "Dr. Smith", "St. Maurice", "John F. Kennedy": a one- or two-letter
    // capitalised word before the period is an abbreviation, not a sentence
    // end; except two capitals ("Lothair II. She", "40 BC. The") and a
    // roman I, V or X followed by a function word ("Charles I. He").
    size_t w = i;
    while (w > start && IsWordByte(static_cast<unsigned char>(text[w - 1]))) --w;
    size_t word_len = i - w;
    if (c == '.' && word_len > 0 && word_len <= 2 && text[w] >= 'A' && text[w] <= 'Z' &&
        !EndsSentenceDespiteShortWord(text.substr(w, word_len), text.substr(k))) {
      continue;
    }
    push(start, j);
    start = k;
    i = k - 1;
  }
  push(start, n);
  return spans;
}

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string DecodePercent(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int hi = HexValue(s[i + 1]);
      const int lo = HexValue(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

bool IsValidUtf8(std::string_view s, size_t* bad_offset) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    if (i + len > n) {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) {
        if (bad_offset) *bad_offset = i;
        return false;
      }
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    bool overlong =
        (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    i += len;
  }
  return true;
}

size_t EditDistanceAtMost(std::string_view a, std::string_view b, size_t max_d) {
  const size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) > max_d) return max_d + 1;
  const size_t kFar = max_d + 1;
  // Rows i-2, i-1 and i of the DP over b's positions; only |i - j| <= max_d
  // is computed, the rest counts as beyond max_d.
  std::vector<size_t> two(m + 1, kFar), one(m + 1, kFar), row(m + 1, kFar);
  for (size_t j = 0; j <= std::min(m, max_d); ++j) one[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    std::fill(row.begin(), row.end(), kFar);
    const size_t lo = i > max_d ? i - max_d : 0, hi = std::min(m, i + max_d);
    if (lo == 0) row[0] = i;
    size_t best = lo == 0 ? row[0] : kFar;
    for (size_t j = std::max<size_t>(lo, 1); j <= hi; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t d = std::min({one[j] + 1, row[j - 1] + 1, one[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d = std::min(d, two[j - 2] + 1);
      row[j] = std::min(d, kFar);
      best = std::min(best, row[j]);
    }
    if (best > max_d) return kFar;
    std::swap(two, one);
    std::swap(one, row);
  }
  return std::min(one[m], kFar);
}

}  // namespace flowrag
