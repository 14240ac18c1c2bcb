// Text utilities shared by every module: the one tokeniser used for documents
// and queries alike (BM25, the hashed embedder, keyword matching), stopwords,
// a light English stemmer and sentence splitting.
//
// Tokenisation: ASCII letters are lower-cased; a token is a maximal run of
// ASCII letters/digits and non-ASCII code points, so accented and non-Latin
// words stay whole, except Unicode punctuation (dashes, curly quotes, no-break
// spaces), which separates tokens like ASCII punctuation does. A possessive
// "'s" leaves a lone "s", which is a stopword. All functions are pure and thread-safe; O(n) in the input.
#ifndef FLOWRAG_COMMON_TEXT_H_
#define FLOWRAG_COMMON_TEXT_H_

#include <string>
#include <string_view>
#include <vector>

namespace flowrag {

struct TokenizerOptions {
  bool remove_stopwords = true;
  bool stem = true;  // the S-stemmer below
  size_t max_token_bytes = 64;  // longer runs are truncated (URLs, base64)
};

// Lower-cased word tokens of `text`, filtered and stemmed per `options`.
std::vector<std::string> Tokenize(std::string_view text, const TokenizerOptions& options = {});

// Same, appending to `out` (avoids reallocation in hot loops).
void TokenizeInto(std::string_view text, const TokenizerOptions& options,
                  std::vector<std::string>* out);

// True for the English function words the tokeniser drops.
bool IsStopword(std::string_view lower_token);

// Harman's S-stemmer: plural endings only ("stories"→"story", "boxes"→"boxe",
// "cats"→"cat"; "glass", "status" unchanged). Conservative on purpose: it
// never merges unrelated words the way aggressive stemmers do.
std::string StemS(std::string_view lower_token);

// Normalised key of an entity name, shared by resolution and linking:
// lower-case ASCII, every run of non-alphanumeric ASCII collapsed to one
// space, trimmed ("The  Beatles!" → "the beatles"). Non-ASCII bytes are kept.
std::string EntityKey(std::string_view name);

// ASCII lower-case copy.
std::string ToLowerAscii(std::string_view s);

// ' ', '\t', '\n', '\r', '\f' or '\v'.
inline bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// True when `s` holds a character other than ' ', '\t', '\r' and '\n'.
inline bool HasNonSpace(std::string_view s) { return s.find_first_not_of(" \t\r\n") != std::string_view::npos; }

// Appends `item` unless `list` holds it already (a short list: linear scan).
void AppendUnique(std::vector<std::string>* list, std::string item);

// Splits into sentences at '.', '!' or '?' followed by whitespace and an
// upper-case letter, digit or quote, at newlines that end a paragraph and at
// page breaks (U+000C, one after each page of a PDF; ingest/document.h).
// Returns [begin, end) byte ranges with surrounding whitespace trimmed.
struct TextSpan {
  size_t begin = 0;
  size_t end = 0;
};
std::vector<TextSpan> SplitSentences(std::string_view text);

// UTF-8 validation: true when `s` is well-formed UTF-8 (no overlongs, no
// surrogates, nothing above U+10FFFF); otherwise *bad_offset is the first bad byte.
bool IsValidUtf8(std::string_view s, size_t* bad_offset = nullptr);

// `s` with each %XY (two hex digits) replaced by its byte; a '%' not followed
// by two hex digits stays as it is. '+' stays '+'. (URL paths and userinfo.)
std::string DecodePercent(std::string_view s);

// Optimal-string-alignment distance between a and b (insertions, deletions,
// substitutions and adjacent transpositions, each 1; bytes), or max_d + 1
// as soon as it exceeds max_d. O(|a| · (2·max_d + 1)).
size_t EditDistanceAtMost(std::string_view a, std::string_view b, size_t max_d);

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_TEXT_H_
