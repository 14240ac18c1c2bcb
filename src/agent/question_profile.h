// What kind of answer a question asks for, read off its wording (offline).
//
//   kYesNo    starts with an auxiliary verb ("Is", "Are", "Did", "Do", ...)
//   kChoice   offers options: "Which film came out first, A or B?", "Who
//             was born first out of A and B?"
//   kDate     "When ...", "What year ...", "What date ..."
//   kNumber   "How many / much / long / old / far ..."
//   kName     "Who / Whom / Whose / Where / Which / What ..." (a proper noun)
//   kAny      anything else
//
// For kChoice, `options` holds the two alternatives and `order` says which
// extreme wins: -1 the earliest ("first", "older", "earlier", "before"),
// +1 the latest ("later", "last", "younger", "more recent"), 0 unknown.
// Pure and thread-safe; O(length of the question).
#ifndef FLOWRAG_AGENT_QUESTION_PROFILE_H_
#define FLOWRAG_AGENT_QUESTION_PROFILE_H_

#include <string>
#include <string_view>
#include <vector>

namespace flowrag {

enum class AnswerType { kYesNo, kChoice, kDate, kNumber, kName, kAny };

struct QuestionProfile {
  AnswerType type = AnswerType::kAny;
  bool year_only = false;            // "What year ...": the year of a date
  std::vector<std::string> options;  // kChoice
  int order = 0;                     // kChoice: -1 earliest, +1 latest, 0 unknown
  // kChoice by length of life: +1 "Who lived longer, A or B?", -1 "shorter".
  int lifespan = 0;
  // The question asks for a nationality, language or country of origin, so
  // a demonym ("American") may be the answer; otherwise one rarely is.
  bool wants_demonym = false;
  // "How many ...": a count, written without the counted word ("1,820").
  bool counts = false;
  // A yes/no question whether two entities share a nationality or country
  // ("Were A and B from the same country?"): answered by comparing them.
  bool same_nationality = false;
  // The country of a demonym the question asks about ("Are A and B both
  // American directors?", "Which singer is American, A or B?"), as
  // NationalityKey gives it; "" when none.
  std::string asked_nationality;
  // Content terms of the question (tokenised, stemmed, without stopwords,
  // question words, or a generic "man"/"woman"/"person" heading a relative
  // clause), unique, in question order.
  std::vector<std::string> terms;
  // The noun of the wh-phrase ("In which town ...", "What nationality ...":
  // "town", "nationality"), tokenised; "" when there is none. It names the
  // answer's kind, not a relation to follow.
  std::string answer_noun;
  // A superlative before it ("What was the largest fleet": "largest"): it
  // describes the answer, it relates nothing.
  std::string answer_modifier;
};

QuestionProfile ProfileQuestion(std::string_view question);

const char* AnswerTypeName(AnswerType type);

// True for nationality, people and faith adjectives written as one word
// ("American", "Chinese", "Soviet", "Catholic"), from a fixed list.
bool IsDemonym(std::string_view word);

}  // namespace flowrag

#endif  // FLOWRAG_AGENT_QUESTION_PROFILE_H_
