// Text utilities shared by every module: the one tokeniser used for documents
// and queries alike (BM25, the hashed embedder, keyword matching), stopwords,
// stemming, entity keys and sentence splitting. doc/text.md describes the
// rules and the measurements behind the defaults.
//
// Tokenisation (version kTokenizerVersion): the text is cut into runs of word
// code points (ASCII letters/digits and non-ASCII code points other than
// punctuation, symbols and spaces: dashes, curly quotes, no-break spaces and
// CJK punctuation separate tokens like ASCII punctuation does).
//  * A run of ASCII only (the fast path, most of English): lower-cased, one
//    token. A possessive "'s" leaves a lone "s", which is a stopword.
//  * Any other run: Unicode-normalised with NFKC and case folding (ICU's
//    nfkc_cf: "ＡＢＣ１２" → "abc12", "Straße" → "strasse", "İ" → "i̇"), then
//    cut by ICU's word break iterator, which segments Chinese and Japanese
//    with its dictionary and Thai, Lao, Khmer and Myanmar with theirs;
//    pieces without a letter, digit or ideograph (symbols, emoji) are dropped,
//    and ASCII punctuation that NFKC produced ("１，０" → "1,0") splits a piece.
//    Diacritics are kept ("café" ≠ "cafe"): see doc/text.md.
//  * Bytes that are not well-formed UTF-8 separate tokens, like punctuation;
//    they are never part of a token and never fail.
// Tokens longer than max_token_bytes are truncated (at a code point boundary).
// Then stopwords (English function words) are dropped and the rest stemmed
// per TokenizerOptions::language.
// All functions are pure and thread-safe (ICU and Snowball state is per
// thread); O(n) in the input.
#ifndef FLOWRAG_COMMON_TEXT_H_
#define FLOWRAG_COMMON_TEXT_H_

#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"

namespace flowrag {

// Bumped whenever any language's token stream changes; part of everything
// persisted that depends on tokens (the BM25 snapshot part's key, the hashed
// embedder's model id, the store's "tokenizer" meta), so a store written by
// an older tokeniser rebuilds what it must.
// 1: ASCII-only lower-casing, whole non-ASCII runs; 2: this file's rules.
inline constexpr int kTokenizerVersion = 2;

// The stemming language of a store when none is configured: "english-s",
// today's plural-only S-stemmer, which measured better than Snowball's
// English (Porter2) on the English benchmarks (bench/out/unicode_tokenizer.md).
inline constexpr std::string_view kDefaultLanguage = "english-s";

struct TokenizerOptions {
  bool remove_stopwords = true;
  bool stem = true;  // stem per `language`
  size_t max_token_bytes = 64;  // longer runs are truncated (URLs, base64)
  // Stemmer: "english-s" (StemS below), "none" (no stemming), or a Snowball
  // algorithm ("english", "porter", "german", "french", "russian", ...: see
  // TokenizerLanguages()). Default kDefaultLanguage.
  std::string language = std::string(kDefaultLanguage);
};

// Ok for "english-s", "none" and every Snowball algorithm; otherwise
// InvalidArgument listing the choices.
Status ValidateLanguage(std::string_view language);

// The accepted languages: "english-s", "none", then Snowball's, sorted.
std::vector<std::string> TokenizerLanguages();

// "tok<version>-<language>": names the token stream a store was built with.
std::string TokenizerSignature(std::string_view language);

// `lower_token` stemmed per `language` ("english-s": StemS; "none": as is;
// Snowball otherwise; an unknown language: as is).
std::string StemWord(std::string_view lower_token, std::string_view language);

// NFKC with Unicode case folding (ICU nfkc_cf) of `text`; ASCII-only text is
// only lower-cased (same result, no ICU call). Ill-formed UTF-8 becomes U+FFFD.
std::string FoldCase(std::string_view text);

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
// space, trimmed ("The  Beatles!" → "the beatles"). A name with non-ASCII
// characters is first folded (FoldCase: NFKC + case folding, so "ＡＢＣ",
// "abc" and "ABC" share a key, as do "Émile" and "émile"); non-ASCII
// punctuation and symbols then separate words like ASCII punctuation, and
// ill-formed UTF-8 bytes do too. Diacritics are kept. Chinese, Japanese and
// Thai names are not segmented: a key compares whole names.
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

// The words of `run` as ICU's word break iterator (root locale: dictionary
// segmentation of Chinese, Japanese, Thai, Lao, Khmer, Burmese) cuts it,
// [begin, end) byte offsets into `run`, without the segments of spaces,
// punctuation and symbols. No normalisation: the offsets index `run` as
// given. Ill-formed UTF-8 or ICU unavailable: the whole run as one span.
// For callers that need byte spans of the original text (extract/
// aho_corasick.h); Tokenize does its own. O(|run|).
std::vector<TextSpan> WordSegments(std::string_view run);

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
