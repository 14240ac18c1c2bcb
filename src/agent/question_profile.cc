#include "agent/question_profile.h"

#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "agent/answer_lexicon.h"
#include "common/text.h"
#include "retrieval/keywords.h"

namespace flowrag {
namespace {

bool StartsWithWord(const std::string& lower, std::string_view word) {
  return lower.size() >= word.size() && lower.compare(0, word.size(), word) == 0 &&
         (lower.size() == word.size() || lower[word.size()] == ' ');
}

bool ContainsWord(const std::string& lower, std::string_view word) {
  size_t pos = 0;
  while ((pos = lower.find(word, pos)) != std::string::npos) {
    const bool left = pos == 0 || !std::isalnum(static_cast<unsigned char>(lower[pos - 1]));
    const size_t end = pos + word.size();
    const bool right = end == lower.size() || !std::isalnum(static_cast<unsigned char>(lower[end]));
    if (left && right) return true;
    pos = end;
  }
  return false;
}

std::string Trim(std::string_view s) {
  const char* ws = " \t\r\n,;:?.\"'";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return "";
  const size_t e = s.find_last_not_of(ws);
  return std::string(s.substr(b, e - b + 1));
}

// "..., A or B?" → {A, B}; the first option starts after the last comma or
// colon before " or ".
std::vector<std::string> ChoiceOptions(std::string_view q) {
  const size_t or_pos = q.rfind(" or ");
  if (or_pos == std::string_view::npos) return {};
  // "..., the orchestra that plays ..., or the institute?": the comma right
  // before " or " ends the first option, it does not start it.
  size_t head_end = or_pos;
  while (head_end > 0 && (q[head_end - 1] == ',' || q[head_end - 1] == ' ')) --head_end;
  size_t sep = q.substr(0, head_end).find_last_of(",:");
  if (sep == std::string_view::npos) {
    // "Which band was formed first The Exies or Circus Diablo?": the
    // capitalised run right before " or ".
    size_t b = or_pos;
    while (b > 0) {
      const size_t space = q.substr(0, b).find_last_of(' ');
      const size_t start = space == std::string_view::npos ? 0 : space + 1;
      if (start >= b || !std::isupper(static_cast<unsigned char>(q[start]))) break;
      b = start == 0 ? 0 : start - 1;
      sep = b;
      if (start == 0) return {};  // the whole question: not a choice
    }
    if (sep == std::string_view::npos) return {};
  }
  std::string a = Trim(q.substr(sep + 1, head_end - sep - 1));
  std::string b = Trim(q.substr(or_pos + 4));
  if (a.empty() || b.empty()) return {};
  return {a, b};
}

// "Was A or B born first?": A after the auxiliary, B the capitalised run
// after " or " (with lower-case connectors such as "of" inside it).
std::vector<std::string> AuxChoiceOptions(std::string_view q) {
  const size_t or_pos = q.find(" or ");
  const size_t first_space = q.find(' ');
  if (or_pos == std::string_view::npos || first_space >= or_pos) return {};
  std::string a = Trim(q.substr(first_space + 1, or_pos - first_space - 1));
  std::string_view rest = q.substr(or_pos + 4);
  size_t end = 0, pos = 0;
  while (pos < rest.size()) {
    size_t next = rest.find(' ', pos);
    if (next == std::string_view::npos) next = rest.size();
    std::string_view word = rest.substr(pos, next - pos);
    const bool cap = !word.empty() && (std::isupper(static_cast<unsigned char>(word[0])) ||
                                       static_cast<unsigned char>(word[0]) >= 0x80 ||
                                       std::isdigit(static_cast<unsigned char>(word[0])));
    const bool connector = word == "of" || word == "the" || word == "de" || word == "von" ||
                           word == "van" || word == "la" || word == "and";
    if (cap) {
      end = next;
    } else if (!connector) {
      break;
    }
    pos = next + 1;
  }
  std::string b = Trim(rest.substr(0, end));
  if (a.empty() || b.empty() || !std::isupper(static_cast<unsigned char>(a[0]))) return {};
  return {a, b};
}

// "Who was born first out of A and B?", "... between A and B?": {A, B}.
std::vector<std::string> PairOptions(std::string_view q) {
  const std::string lower = ToLowerAscii(q);
  for (std::string_view lead : {" out of ", " between "}) {
    const size_t at = lower.find(lead);
    if (at == std::string::npos) continue;
    const size_t start = at + lead.size();
    const size_t and_pos = lower.rfind(" and ");
    if (and_pos == std::string::npos || and_pos < start) continue;
    std::string a = Trim(q.substr(start, and_pos - start));
    std::string b = Trim(q.substr(and_pos + 5));
    if (a.empty() || b.empty() || !std::isupper(static_cast<unsigned char>(a[0]))) continue;
    return {a, b};
  }
  return {};
}

// +1 "Who lived longer", -1 "Who lived shorter" / "died younger", 0 otherwise.
int LifespanOrder(const std::string& lower) {
  if (ContainsWord(lower, "lived longer") || ContainsWord(lower, "lived the longest") ||
      ContainsWord(lower, "died older") || ContainsWord(lower, "longer life")) {
    return 1;
  }
  if (ContainsWord(lower, "lived shorter") || ContainsWord(lower, "died younger") ||
      ContainsWord(lower, "shorter life")) {
    return -1;
  }
  return 0;
}

int ChoiceOrder(const std::string& lower) {
  static const char* kEarliest[] = {"first",  "earlier", "earliest", "older",
                                    "oldest", "before",  "sooner",   "longer ago"};
  static const char* kLatest[] = {"later",    "last",        "latest",      "younger",
                                  "youngest", "more recent", "most recent", "more recently",
                                  "after",    "newer"};
  for (const char* w : kEarliest) {
    if (ContainsWord(lower, w)) return -1;
  }
  for (const char* w : kLatest) {
    if (ContainsWord(lower, w)) return 1;
  }
  return 0;
}

// The wh-phrase: "which town", "what nationality", "what is the date of
// birth" give the answer noun (and "what was the largest fleet" its
// superlative); "the man who ..." marks "man" generic (a person, not a
// content word). Returns whether the question reads "What is/was the
// <noun> ...".
bool ReadWhPhrase(const std::vector<std::string>& words, std::unordered_set<std::string>* generic,
                  QuestionProfile* p) {
  bool what_is_the = false;
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string& w = words[i];
    const std::string& next = words[i + 1];
    if ((w == "man" || w == "woman" || w == "person") &&
        (next == "who" || next == "that" || next == "whose")) {
      generic->insert(w);
    }
    if ((w != "which" && w != "what") || !p->answer_noun.empty()) continue;
    size_t k = i + 1;
    if (k + 1 < words.size() && (words[k] == "is" || words[k] == "was") && words[k + 1] == "the") {
      k += 2;
      // "what was the largest fleet": the noun after a superlative.
      if (k + 1 < words.size() && words[k].size() > 4 &&
          words[k].compare(words[k].size() - 3, 3, "est") == 0) {
        p->answer_modifier = StemS(words[k]);
        ++k;
      }
      what_is_the = true;
    }
    // "What is the name of the building ...": the building.
    if (k + 2 < words.size() && words[k] == "name" && words[k + 1] == "of") {
      k += words[k + 2] == "the" || words[k + 2] == "a" ? 3 : 2;
    }
    if (k < words.size() && !IsStopword(words[k]) && !IsQuestionWord(words[k])) {
      p->answer_noun = StemS(words[k]);
    }
  }
  return what_is_the;
}

// The question's distinct content terms: retrieval's tokens without
// question words and generic nouns.
std::vector<std::string> ContentTerms(std::string_view question,
                                      const std::unordered_set<std::string>& generic) {
  std::vector<std::string> terms;
  std::unordered_set<std::string> seen;
  for (std::string& t : Tokenize(question)) {
    // Retrieval drops "first", "known", "located" and "one" as question
    // words; an answer sentence says them ("the first curator", "located in").
    const bool content = t == "first" || t == "known" || t == "located" || t == "one";
    if ((IsQuestionWord(t) && !content) || generic.count(t) || !seen.insert(t).second) continue;
    terms.push_back(std::move(t));
  }
  return terms;
}

// A choice between named options ("X or Y", "out of A and B" with an
// order word): the options and the order asked.
bool ReadChoice(std::string_view question, const std::string& lower, QuestionProfile* p) {
  p->options = ChoiceOptions(question);
  if (p->options.empty() && (ChoiceOrder(lower) != 0 || LifespanOrder(lower) != 0)) {
    p->options = PairOptions(question);  // "the distance between A and B" is no choice
  }
  if (p->options.empty()) return false;
  p->type = AnswerType::kChoice;
  p->lifespan = LifespanOrder(lower);
  p->order = p->lifespan != 0 ? 0 : ChoiceOrder(lower);
  return true;
}

// A question opening with an auxiliary: yes/no, or a choice between the
// options it names ("Is A or B older?").
bool ReadAuxiliaryQuestion(std::string_view question, const std::string& lower,
                           QuestionProfile* p) {
  static const char* kAux[] = {"is",    "are", "was",  "were", "do",   "does",  "did",    "can",
                               "could", "has", "have", "had",  "will", "would", "should", "am"};
  for (const char* w : kAux) {
    if (!StartsWithWord(lower, w)) continue;
    p->options = AuxChoiceOptions(question);
    p->type = p->options.empty() ? AnswerType::kYesNo : AnswerType::kChoice;
    p->lifespan = p->options.empty() ? 0 : LifespanOrder(lower);
    p->order = p->options.empty() || p->lifespan != 0 ? 0 : ChoiceOrder(lower);
    p->same_nationality = p->options.empty() && ContainsWord(lower, "same") &&
                          (ContainsWord(lower, "nationality") || ContainsWord(lower, "country") ||
                           ContainsWord(lower, "citizenship"));
    return true;
  }
  return false;
}

bool ReadDateQuestion(const std::string& lower, QuestionProfile* p) {
  if (!(StartsWithWord(lower, "when") || ContainsWord(lower, "what year") ||
        ContainsWord(lower, "date of birth") || ContainsWord(lower, "date of death") ||
        ContainsWord(lower, "birthday") || ContainsWord(lower, "which year") ||
        ContainsWord(lower, "what date") || ContainsWord(lower, "in what year") ||
        ContainsWord(lower, "what decade"))) {
    return false;
  }
  p->type = AnswerType::kDate;
  p->year_only = ContainsWord(lower, "year");
  return true;
}

// "How many ...", "What is the population of ...": a number. A measure's
// noun is the attribute asked ("the largest fleet" of the company), not
// the kind of a named answer.
bool ReadNumberQuestion(const std::string& lower, bool what_is_the, QuestionProfile* p) {
  static const char* kMeasureNouns[] = {
      "population", "number", "size",   "capacity", "attendance", "fleet",  "membership",
      "workforce",  "area",   "height", "length",   "depth",      "budget", "revenue",
      "elevation",  "amount", "total",  "count",    "width",      "weight"};
  bool measure = false;
  for (const char* noun : kMeasureNouns) measure |= what_is_the && p->answer_noun == noun;
  if (measure) p->answer_noun.clear();
  if (!(measure || ContainsWord(lower, "how many") || ContainsWord(lower, "how much") ||
        ContainsWord(lower, "how long") || ContainsWord(lower, "how old") ||
        ContainsWord(lower, "how far") || ContainsWord(lower, "how tall") ||
        ContainsWord(lower, "how big") || ContainsWord(lower, "what percentage") ||
        ContainsWord(lower, "how large"))) {
    return false;
  }
  p->type = AnswerType::kNumber;
  p->counts = ContainsWord(lower, "how many");
  return true;
}

}  // namespace

bool IsDemonym(std::string_view word) { return IsDemonymWord(ToLowerAscii(word)); }

const char* AnswerTypeName(AnswerType type) {
  switch (type) {
    case AnswerType::kYesNo:
      return "yes/no";
    case AnswerType::kChoice:
      return "choice";
    case AnswerType::kDate:
      return "date";
    case AnswerType::kNumber:
      return "number";
    case AnswerType::kName:
      return "name";
    case AnswerType::kAny:
      return "any";
  }
  return "any";
}

QuestionProfile ProfileQuestion(std::string_view question) {
  QuestionProfile p;
  const std::string lower = ToLowerAscii(Trim(question));
  // Words as written, lower-case, stopwords kept: to read the wh-phrase and
  // relative clauses.
  const std::vector<std::string> words = Tokenize(lower, TokenizerOptions{false, false, 64});
  std::unordered_set<std::string> generic;  // "the man who ...": a person, not a content word
  const bool what_is_the = ReadWhPhrase(words, &generic, &p);
  p.terms = ContentTerms(question, generic);
  p.wants_demonym = ContainsWord(lower, "nationality") || ContainsWord(lower, "country") ||
                    ContainsWord(lower, "language") || ContainsWord(lower, "citizenship") ||
                    ContainsWord(lower, "ethnicity") || ContainsWord(lower, "religion");
  for (const std::string& w : words) {
    if (IsDemonymWord(w) && p.asked_nationality.empty()) p.asked_nationality = NationalityKey(w);
  }
  if (ReadChoice(question, lower, &p) || ReadAuxiliaryQuestion(question, lower, &p) ||
      ReadDateQuestion(lower, &p) || ReadNumberQuestion(lower, what_is_the, &p)) {
    return p;
  }
  static const char* kNameWords[] = {"who", "whom", "whose", "where", "which", "what"};
  for (const char* w : kNameWords) {
    if (ContainsWord(lower, w)) {
      p.type = AnswerType::kName;
      return p;
    }
  }
  return p;
}

}  // namespace flowrag
