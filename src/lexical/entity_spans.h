// Offline entity span detection: proper-noun spans, dates and numbers.
//
// Types are what can be known without a model: "PROPER_NOUN", "DATE",
// "NUMBER" (persons, organisations and places look alike offline).
//
// Proper nouns: maximal runs of capitalised tokens, joined by whitespace, a
// hyphen ("Jean-Paul"), an apostrophe ("O'Brien"), " & " ("Pellow &
// Daughters"), an abbreviation's period ("St. Maurice", "John F. Kennedy"),
// a possessive followed by another capitalised token ("St. Maurice's Abbey"),
// or up to two lower-case connectors followed by a capitalised token ("Bank
// of England", "Boso the Elder", "Ludwig van Beethoven", "Museum of the
// City"). "and" is not a connector: "Adalbert II of Tuscany and Bertha" is
// two names far more often than "Trinidad and Tobago" is one, and known
// names with "and" are linked by the dictionary (extract/heuristic_extractor.h).
// A span never starts with a sentence-initial function word ("The", "In",
// "He", ...: IsSentenceInitialFunctionWord) at the start of a sentence or
// after an opening quote or bracket, and never with "The" anywhere: the word
// is stripped when the rest is a span, otherwise dropped ("The Brannock lens"
// → "Brannock"). A sentence-initial single word is dropped too when the
// passage writes it in lower case elsewhere ("Directed by ..." when
// "directed" occurs), and so is a lone month or weekday name. Elsewhere in
// a sentence a lone capitalised word is dropped too when it is a function
// word or written in lower case elsewhere in the passage ("If", "Cancer" in
// text without sentence punctuation: "... is cancer If the nodule ...");
// an all-capitals acronym such as "US" stays.
//
// Dates: "11 November 875", "17 October", "November 11, 875", "March 1961",
// "1961-03-15", "1960s", 4-digit years 1000–2099, shorter years after a
// temporal word ("in 928", "died 875", "between 995 and 997", "(835 –)") or
// with an era ("40 BC", "AD 875"). Numbers: digit groups ("1,820", "2.4"),
// with a currency sign, "%", a scale word ("5 million") and the lower-case
// word they count ("212 km", "1,820 seats", "17 lighthouses"); alone ("38")
// otherwise.
//
// All functions are pure and thread-safe; O(tokens) per call.
#ifndef FLOWRAG_LEXICAL_ENTITY_SPANS_H_
#define FLOWRAG_LEXICAL_ENTITY_SPANS_H_

#include <cstdint>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "lexical/aho_corasick.h"

namespace flowrag {

enum class SpanKind : uint8_t { kProperNoun, kDate, kNumber };

// "PROPER_NOUN", "DATE", "NUMBER": the ExtractedEntity::type of a span.
std::string_view SpanKindName(SpanKind kind);

struct EntitySpan {
  uint32_t begin = 0;  // [begin, end) byte offsets into the text
  uint32_t end = 0;
  uint32_t token_begin = 0;  // [token_begin, token_end) indexes into the TokenizedText
  uint32_t token_end = 0;
  SpanKind kind = SpanKind::kProperNoun;
};

struct SpanOptions {
  bool proper_nouns = true;
  bool dates = true;
  bool numbers = true;
  // Proper-noun spans shorter than this many bytes are dropped ("A", "I").
  size_t min_proper_noun_bytes = 2;
  // A proper-noun run is cut after this many tokens (runaway headings, lists
  // of capitalised words).
  size_t max_span_tokens = 10;
};

// The words a text writes in lower case somewhere (normalised forms, viewing
// `text`'s storage): evidence that a capitalised sentence-initial word is an
// ordinary word. O(tokens).
std::unordered_set<std::string_view> LowercaseWords(const TokenizedText& text);

// Detects spans in one sentence: tokens [token_begin, token_end) of `text`,
// the first of which starts the sentence. Appends to *out in text order;
// spans never overlap. `lowercase_words` (may be null) is LowercaseWords(text).
void DetectSentenceSpans(const TokenizedText& text, size_t token_begin, size_t token_end,
                         const SpanOptions& options,
                         const std::unordered_set<std::string_view>* lowercase_words,
                         std::vector<EntitySpan>* out);

// Convenience: splits `text` into sentences (SplitSentences) and detects the
// spans of each. Offsets are into `text`.
std::vector<EntitySpan> DetectEntitySpans(std::string_view text, const SpanOptions& options = {});

// True for lower-cased function words that start sentences and are not
// names on their own ("the", "in", "he", "however", "born", ...).
bool IsSentenceInitialFunctionWord(std::string_view lower_word);

// True when the token's first code point is an upper-case letter (ASCII,
// Latin-1, Latin Extended, Greek, Cyrillic). Digits and uncased scripts are false.
bool IsCapitalizedToken(std::string_view raw_token);

}  // namespace flowrag

#endif  // FLOWRAG_LEXICAL_ENTITY_SPANS_H_
