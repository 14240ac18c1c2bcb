// What the offline answerer knows about English without a model: words that
// ask for the same relation, what biography leads say without saying it,
// and how to order and compare the values it extracts.
//
//  * Related words. A question term also matches a word of its class in a
//    passage, at RelatedWordStrength ("established" asks what "founded"
//    says; "child" what "father of" says, weaker). Classes are few and
//    general: birth, death, founding, kinship, marriage, nationality.
//  * Implicit words. Encyclopaedia leads write a life as "Name (1886 –
//    1960) was an English film director": ImplicitWords marks the first
//    date of such a parenthesis as "born", the second as "died", and a
//    demonym as "nationality"/"country", a date as "date"/"year", and a
//    number by its unit ("212 km" → long, length, distance), at the
//    position of the value, so "When was X born?", "What nationality is
//    X?" and "How long is X?" find the value next to the word they ask about.
//  * Values. ParseDate orders dates ("24 August 1886" < "June 1960");
//    NationalityKey maps a demonym or a country to one key ("American" and
//    "United States" → "united states").
//
// Pure and thread-safe.
#ifndef FLOWRAG_AGENT_ANSWER_LEXICON_H_
#define FLOWRAG_AGENT_ANSWER_LEXICON_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lexical/entity_spans.h"

namespace flowrag {

// How strongly passage word `word` answers question term `term` (both
// tokenised as Tokenize does): 1 for the same word, 0.6–0.8 for a word of
// the same class, 0 otherwise.
double RelatedWordStrength(std::string_view term, std::string_view word);

// A word the text implies at [begin, end) (byte offsets into the text).
struct ImplicitWord {
  std::string word;  // tokenised form ("born", "died", "nationality", ...)
  uint32_t begin = 0;
  uint32_t end = 0;
  // A convention that states the word as surely as writing it: a life's
  // parenthesis, a demonym after "is a"/"was an". Otherwise the value only
  // could be what the word asks about (any length is "long").
  bool strong = false;
};

// The implicit words of `text` given its entity spans (DetectEntitySpans).
// O(spans).
std::vector<ImplicitWord> ImplicitWords(std::string_view text,
                                        const std::vector<EntitySpan>& spans);

// A date as (year, month, day); month/day 0 when absent. Comparable with <.
struct DateValue {
  int year = 0;
  int month = 0;
  int day = 0;
  bool ok() const { return year != 0; }
  auto operator<=>(const DateValue&) const = default;
};

// "24 August 1886", "August 24, 1886", "June 1960", "1961-03-15", "1935",
// "40 BC" (a negative year). year 0 when no year is found.
DateValue ParseDate(std::string_view text);

// The country a demonym or country name stands for, as a key
// ("American", "U.S.", "United States" → "united states"); "" when neither.
std::string NationalityKey(std::string_view name);

// True for nationality, people and faith adjectives written as one word
// ("american", "soviet", "catholic"), lower-case.
bool IsDemonymWord(std::string_view lower_word);

// True for a title that labels a file rather than naming a thing: one word
// (no space) in lower case ("table", "notes"), or mixing letters with
// digits or underscores ("p2", "doc_3", "IMG0012") — what a document gets
// when its file name stands in for a title. Such a title is never an
// answer, nor the evidence that grounds one. "Devotion", "WWII" and "1929"
// are names.
bool IsFileLabel(std::string_view title);

}  // namespace flowrag

#endif  // FLOWRAG_AGENT_ANSWER_LEXICON_H_
