// Follow-up questions as standalone queries (followup.h): reading the
// question's references and ellipses, the candidates of earlier turns with
// their gender and number, and the rewrite; then the chat model's rewrite.
#include "agent/followup.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <optional>

#include "agent/usage_chat.h"
#include "common/encoding.h"
#include "common/text.h"
#include "lexical/aho_corasick.h"
#include "lexical/entity_spans.h"

namespace flowrag {
namespace {

// ---- Word classes ---------------------------------------------------------

bool OneOf(std::string_view w, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), w) != list.end();
}

bool IsWhWord(std::string_view w) {
  return OneOf(w, {"who", "whom", "whose", "what", "when", "where", "why", "how", "which"});
}

bool IsAuxiliary(std::string_view w) {
  return OneOf(w, {"is",    "are",    "was", "were",  "be",   "been", "am",    "do",
                   "does",  "did",    "has", "have",  "had",  "can",  "could", "will",
                   "would", "should", "may", "might", "must", "shall"});
}

bool IsPreposition(std::string_view w) {
  return OneOf(
      w, {"in",    "on",    "at",    "by",   "before",  "after", "during",  "for",    "from",
          "since", "until", "till",  "with", "without", "near",  "around",  "about",  "to",
          "into",  "of",    "under", "over", "between", "among", "through", "across", "towards"});
}

// Words a fragment of a question may lead with that make it no fragment.
bool IsImperative(std::string_view w) {
  return OneOf(w, {"tell", "describe", "explain", "list", "give", "show", "name", "summarize",
                   "summarise", "compare", "find", "define", "please"});
}

bool IsSubjectPronoun(std::string_view w) {
  return OneOf(w, {"i", "you", "we", "he", "she", "it", "they", "there", "this", "that"});
}

// Leading words that join a follow-up to the turn before: "And in 1894?".
bool IsLeadingConnective(std::string_view w) {
  return OneOf(w, {"and", "or", "but", "so", "also", "then", "ok", "okay", "well", "now"});
}

// Nouns that make a name or a lead describe a place ("River Ostrel", "is a
// fishing village"): general English, not a corpus's words.
bool IsPlaceWord(std::string_view w) {
  return OneOf(w, {"city",        "town",     "village",      "hamlet",    "river",    "stream",
                   "lake",        "sea",      "ocean",        "bay",       "gulf",     "island",
                   "isle",        "islands",  "coast",        "peninsula", "mountain", "mount",
                   "hill",        "hills",    "valley",       "county",    "province", "state",
                   "country",     "region",   "district",     "parish",    "harbour",  "harbor",
                   "port",        "street",   "road",         "square",    "park",     "forest",
                   "desert",      "cape",     "strait",       "canal",     "estuary",  "capital",
                   "suburb",      "borough",  "municipality", "commune",   "kingdom",  "republic",
                   "lighthouse",  "castle",   "cathedral",    "abbey",     "palace",   "stadium",
                   "airport",     "station",  "museum",       "garden",    "gardens",  "shire",
                   "archipelago", "headland", "moor",         "marsh",     "fjord",    "glen"});
}

// Nouns of a lead that describe a group ("is a rowing club"): "they" fits.
bool IsGroupWord(std::string_view w) {
  return OneOf(w, {"club",         "company",      "band",      "team",    "society",     "firm",
                   "organisation", "organization", "orchestra", "party",   "association", "union",
                   "group",        "family",       "dynasty",   "league",  "committee",   "council",
                   "choir",        "crew",         "brothers",  "sisters", "daughters",   "sons"});
}

// Third-person pronouns by what they agree with.
enum class Agreement { kMale, kFemale, kThing, kPlural, kPlace };

std::optional<Agreement> PronounAgreement(std::string_view w) {
  if (OneOf(w, {"he", "him", "his", "himself"})) return Agreement::kMale;
  if (OneOf(w, {"she", "her", "hers", "herself"})) return Agreement::kFemale;
  if (OneOf(w, {"it", "its", "itself"})) return Agreement::kThing;
  if (OneOf(w, {"they", "them", "their", "theirs", "themselves"})) return Agreement::kPlural;
  return std::nullopt;
}

std::string Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

// At most `max_bytes` of `s`, cut at a UTF-8 character boundary.
std::string_view Utf8Prefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut);
}

// `s` without trailing spaces and sentence punctuation ("in 1894?" → "in 1894").
std::string TrimQuestionEnd(std::string_view s) {
  std::string out = Trim(s);
  while (!out.empty() && (out.back() == '?' || out.back() == '.' || out.back() == '!' ||
                          out.back() == ' ' || out.back() == ',')) {
    out.pop_back();
  }
  return out;
}

bool StartsWithLower(std::string_view s) {
  return !s.empty() && std::islower(static_cast<unsigned char>(s[0]));
}

std::string CapitalizeFirst(std::string s) {
  if (StartsWithLower(s)) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

// The possessive of a phrase: "Ivo Brannock's", "the Hallam Hills'".
std::string Possessive(const std::string& phrase) {
  return phrase + (!phrase.empty() && phrase.back() == 's' ? "'" : "'s");
}

// ---- Tokens with their surroundings ----------------------------------------

// The word after token i, or "" when the sentence or clause ends first
// (punctuation other than an apostrophe or hyphen in between).
std::string_view NextWord(const TokenizedText& t, size_t i) {
  if (i + 1 >= t.size()) return "";
  const std::string_view gap =
      t.text().substr(t.token(i).end, t.token(i + 1).begin - t.token(i).end);
  for (char c : gap) {
    if (c != ' ' && c != '\'' && c != '-' && c != '\t') return "";
  }
  return t.norm(i + 1);
}

std::string_view PrevWord(const TokenizedText& t, size_t i) {
  if (i == 0) return "";
  const std::string_view gap =
      t.text().substr(t.token(i - 1).end, t.token(i).begin - t.token(i - 1).end);
  for (char c : gap) {
    if (c != ' ' && c != '\'' && c != '-' && c != '\t' && c != '"') return "";
  }
  return t.norm(i - 1);
}

// True when token i starts a sentence of the text.
bool StartsSentence(const TokenizedText& t, size_t i) {
  size_t at = t.token(i).begin;
  while (at > 0 && (t.text()[at - 1] == ' ' || t.text()[at - 1] == '\n' ||
                    t.text()[at - 1] == '"' || t.text()[at - 1] == '(')) {
    --at;
  }
  return at == 0 || t.text()[at - 1] == '.' || t.text()[at - 1] == '?' || t.text()[at - 1] == '!';
}

// Index of the first occurrence of `name` (NameTokens) in t at or after
// `from`, written as a name (first token capitalised or a digit); npos if none.
size_t FindName(const TokenizedText& t, const std::vector<std::string>& name, size_t from = 0,
                bool written_as_name = true) {
  if (name.empty()) return std::string::npos;
  for (size_t at = from; at + name.size() <= t.size(); ++at) {
    bool match = true;
    for (size_t k = 0; k < name.size() && match; ++k) match = t.norm(at + k) == name[k];
    if (!match) continue;
    const std::string_view raw = t.raw(at);
    if (!written_as_name || IsCapitalizedToken(raw) ||
        std::isdigit(static_cast<unsigned char>(raw[0]))) {
      return at;
    }
  }
  return std::string::npos;
}

// A title's part before " (" or ", " ("Devotion (1929 film)" → "Devotion").
std::string ShortTitle(std::string_view title) {
  const size_t cut = std::min(title.find(" ("), title.find(", "));
  return std::string(title.substr(0, cut));
}

// ---- References in a question ----------------------------------------------

enum class RefForm { kNoun, kPossessive, kLocative, kPhrase };

struct Reference {
  size_t token_begin = 0;  // tokens [token_begin, token_end) of the question
  size_t token_end = 0;
  Agreement agreement = Agreement::kThing;
  RefForm form = RefForm::kNoun;
  std::string noun;       // kPhrase: the noun ("lens")
  bool definite = false;  // "the <noun>": needs a name the noun heads
};

bool IsExpletiveIt(const TokenizedText& t, size_t i) {
  const std::string_view next = NextWord(t, i);
  const std::string_view prev = PrevWord(t, i);
  if (OneOf(next, {"take", "takes", "took", "rain", "rains", "rained", "seem", "seems", "seemed",
                   "matter", "matters", "mean", "means"})) {
    return true;
  }
  if (OneOf(prev, {"is", "was"}) &&
      OneOf(next, {"true", "possible", "likely", "known", "said", "believed", "that", "worth",
                   "necessary", "easy", "hard", "difficult", "fair", "correct"})) {
    return true;
  }
  if (OneOf(next, {"is", "was"}) && i + 2 < t.size() &&
      OneOf(t.norm(i + 2), {"said", "believed", "known", "thought", "reported", "true", "possible",
                            "likely", "claimed"})) {
    return true;
  }
  return false;
}

// "her" before a word a possessive determiner can precede ("her father").
bool HerIsPossessive(const TokenizedText& t, size_t i) {
  const std::string_view next = NextWord(t, i);
  if (next.empty() || IsPreposition(next) || IsAuxiliary(next) || IsWhWord(next)) return false;
  return !OneOf(next,
                {"and",  "or",   "a",   "an",    "the",  "as",   "than",       "then",   "first",
                 "last", "most", "up",  "out",   "off",  "back", "again",      "so",     "when",
                 "if",   "also", "too", "there", "that", "this", "personally", "herself"});
}

// A word after "this"/"that" that makes it a pronoun subject ("that
// happened", "that built") rather than a determiner ("that lens").
bool VerbLike(std::string_view w) {
  if (w.empty() || IsAuxiliary(w)) return true;
  if (w.size() > 3 && w.substr(w.size() - 2) == "ed") return true;
  return OneOf(w, {"happen", "mean", "means", "built", "made", "wrote", "written", "began", "begun",
                   "took", "taken", "became", "come", "came", "go", "went", "gone"});
}

// "this"/"that" as a pronoun or demonstrative: only after a clause's start,
// a question word, an auxiliary, a preposition or a verb in -ed (not the
// relative "the lens that was installed").
bool DemonstrativePosition(const TokenizedText& t, size_t i) {
  if (i == 0 || StartsSentence(t, i)) return true;
  const std::string_view prev = PrevWord(t, i);
  if (prev.empty()) return true;
  if (IsWhWord(prev) || IsAuxiliary(prev) || IsPreposition(prev) || IsLeadingConnective(prev)) {
    return true;
  }
  return VerbLike(prev);
}

std::vector<Reference> FindReferences(const TokenizedText& t, bool names_something) {
  std::vector<Reference> out;
  for (size_t i = 0; i < t.size(); ++i) {
    const std::string_view w = t.norm(i);
    Reference r;
    r.token_begin = i;
    r.token_end = i + 1;
    if (std::optional<Agreement> a = PronounAgreement(w)) {
      if (OneOf(w, {"himself", "herself", "itself", "themselves", "hers", "theirs"})) continue;
      if (w == "it" && IsExpletiveIt(t, i)) continue;
      r.agreement = *a;
      r.form = OneOf(w, {"his", "its", "their"}) ? RefForm::kPossessive : RefForm::kNoun;
      if (w == "her" && HerIsPossessive(t, i)) r.form = RefForm::kPossessive;
      out.push_back(r);
      continue;
    }
    if (w == "there") {
      const std::string_view next = NextWord(t, i);
      const std::string_view prev = PrevWord(t, i);
      const bool existential = OneOf(next, {"is", "are", "was", "were", "be", "been", "s"}) ||
                               OneOf(prev, {"is", "are", "was", "were", "be"});
      if (existential) continue;
      r.agreement = Agreement::kPlace;
      r.form = RefForm::kLocative;
      out.push_back(r);
      continue;
    }
    if (OneOf(w, {"this", "that", "these", "those"}) && DemonstrativePosition(t, i)) {
      const bool plural = w == "these" || w == "those";
      r.agreement = plural ? Agreement::kPlural : Agreement::kThing;
      const std::string_view next = NextWord(t, i);
      if (VerbLike(next)) {
        r.form = RefForm::kNoun;
      } else {
        r.form = RefForm::kPhrase;
        r.noun = std::string(next);
        r.token_end = i + 2;
      }
      out.push_back(r);
      continue;
    }
    // "the lighthouse" in a question that names nothing: a name it heads.
    if (w == "the" && !names_something && i + 1 < t.size()) {
      const std::string_view next = NextWord(t, i);
      const std::string_view after = i + 2 < t.size() ? NextWord(t, i + 1) : "";
      if (next.empty() || IsStopword(next) || IsWhWord(next) || !StartsWithLower(t.raw(i + 1))) {
        continue;
      }
      if (after == "of") continue;  // "the lens of X" says whose
      r.agreement = Agreement::kThing;
      r.form = RefForm::kPhrase;
      r.noun = std::string(next);
      r.definite = true;
      r.token_end = i + 2;
      out.push_back(r);
    }
  }
  return out;
}

// ---- Ellipses --------------------------------------------------------------

enum class EllipsisKind { kNone, kWh, kAbout, kNounPhrase, kModifier };

struct Ellipsis {
  EllipsisKind kind = EllipsisKind::kNone;
  size_t token_begin = 0;  // the fragment (kAbout: X) or the wh-phrase
  size_t token_end = 0;
};

bool IsHowAdverb(std::string_view w) {
  return OneOf(w, {"many", "much", "long", "old", "far", "tall", "big", "often", "large", "high",
                   "deep", "wide", "heavy", "soon", "early", "late"});
}

Ellipsis FindEllipsis(const TokenizedText& t) {
  Ellipsis e;
  size_t f = 0;
  while (f < t.size() && IsLeadingConnective(t.norm(f))) ++f;
  if (f >= t.size()) return e;
  const size_t n = t.size() - f;
  const std::string_view first = t.norm(f);
  const std::string_view second = f + 1 < t.size() ? t.norm(f + 1) : "";
  if ((first == "what" || first == "how") && (second == "about" || second == "of") && n > 2) {
    if (first == "how" && second == "of") return e;
    e.kind = EllipsisKind::kAbout;
    e.token_begin = f + 2;
    e.token_end = t.size();
    return e;
  }
  if (IsWhWord(first)) {
    const bool lone =
        n == 1 ||
        (n == 2 && ((first == "how" && IsHowAdverb(second)) ||
                    ((first == "which" || first == "what" || first == "whose") &&
                     !IsAuxiliary(second) && !IsSubjectPronoun(second)) ||
                    OneOf(second, {"exactly", "then", "so", "precisely", "again", "else"})));
    if (!lone) return e;
    e.kind = EllipsisKind::kWh;
    e.token_begin = f;
    e.token_end = OneOf(second, {"exactly", "then", "so", "precisely", "again"}) ? f + 1 : t.size();
    return e;
  }
  if (IsPreposition(first) && IsWhWord(second) && n <= 3) {  // "In which year?"
    e.kind = EllipsisKind::kWh;
    e.token_begin = f;
    e.token_end = t.size();
    return e;
  }
  if (IsAuxiliary(first) || IsImperative(first) || IsSubjectPronoun(first) || n > 8) return e;
  for (size_t i = f; i < t.size(); ++i) {
    if (IsAuxiliary(t.norm(i))) return e;  // a clause, not a fragment
  }
  const bool modifier =
      IsPreposition(first) || std::isdigit(static_cast<unsigned char>(t.raw(f)[0]));
  e.kind = modifier ? EllipsisKind::kModifier : EllipsisKind::kNounPhrase;
  e.token_begin = f;
  e.token_end = t.size();
  return e;
}

// ---- Names in a text -------------------------------------------------------

struct Mention {
  std::string key;     // EntityKey of the name
  std::string name;    // as written
  std::string phrase;  // as it may replace a pronoun: "the Brannock lens"
  std::string title;   // the passage title it names, "" for a span only
  size_t begin = 0;    // bytes in the text
  size_t end = 0;
};

// The passage titles `text` writes as names, then its capitalised spans that
// overlap none of them, in text order.
std::vector<Mention> FindMentions(std::string_view text, const std::vector<std::string>& titles) {
  const TokenizedText t(text);
  std::vector<Mention> found;
  auto overlaps = [&](size_t b, size_t e) {
    for (const Mention& m : found) {
      if (b < m.end && m.begin < e) return true;
    }
    return false;
  };
  auto add = [&](size_t b, size_t e, std::string title) {
    Mention m;
    m.begin = b;
    m.end = e;
    m.name = std::string(text.substr(b, e - b));
    m.key = EntityKey(title.empty() ? m.name : title);
    m.title = std::move(title);
    m.phrase = m.name;
    if (b >= 4 && (text.substr(b - 4, 4) == "the " || text.substr(b - 4, 4) == "The ")) {
      m.phrase = "the " + m.name;
    }
    found.push_back(std::move(m));
  };
  // Longest names first, so "Brannock lens" wins over "Brannock".
  std::vector<std::pair<std::vector<std::string>, std::string>> names;
  for (const std::string& title : titles) {
    for (const std::string& form : {title, ShortTitle(title)}) {
      std::vector<std::string> tokens = NameTokens(form);
      if (tokens.empty() || (tokens.size() == 1 && tokens[0].size() < 3)) continue;
      names.emplace_back(std::move(tokens), title);
    }
  }
  std::stable_sort(names.begin(), names.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [tokens, title] : names) {
    for (size_t at = FindName(t, tokens); at != std::string::npos;
         at = FindName(t, tokens, at + 1)) {
      const size_t b = t.token(at).begin;
      const size_t e = t.token(at + tokens.size() - 1).end;
      if (!overlaps(b, e)) add(b, e, title);
    }
  }
  for (const EntitySpan& s : DetectEntitySpans(text)) {
    if (s.kind != SpanKind::kProperNoun || overlaps(s.begin, s.end)) continue;
    // "Tell me about him": a capitalised imperative, not a name.
    const size_t first = t.FirstTokenAtOrAfter(s.begin);
    if (first < t.size() && t.token(first).end == s.end && StartsSentence(t, first) &&
        (IsImperative(t.norm(first)) || IsWhWord(t.norm(first)) || IsAuxiliary(t.norm(first)))) {
      continue;
    }
    add(s.begin, s.end, "");
  }
  std::sort(found.begin(), found.end(),
            [](const Mention& a, const Mention& b) { return a.begin < b.begin; });
  return found;
}

// ---- Who a candidate is ----------------------------------------------------

struct Profile {
  double male = 0, female = 0, thing = 0, plural = 0;  // pronoun evidence
  bool person = false;
  bool place = false;
  bool group = false;
  bool own = false;                // a passage is about it (its title)
  std::string written;             // its name as that passage writes it: "the Vey propeller"
  std::vector<std::string> lead;   // tokens describing it: its lead, an apposition
  std::vector<std::string> terms;  // Tokenize of its own passages, sorted, unique
};

enum class Hint { kNone, kPerson, kPlace };

struct Candidate {
  std::string key;
  std::string name;
  std::string phrase;
  std::string title;
  double salience = 0.0;
  Hint hint = Hint::kNone;
  bool from_title = false;  // known by a cited or searched title, not by the conversation's words
};

Candidate FromMention(const Mention& m, double salience = 1.0, Hint hint = Hint::kNone) {
  return {m.key, m.name, m.phrase, m.title, salience, hint, false};
}

// The pronoun class that dominates (at least twice the next), or nullopt.
std::optional<Agreement> Dominant(const Profile& p) {
  const std::pair<double, Agreement> all[] = {{p.male, Agreement::kMale},
                                              {p.female, Agreement::kFemale},
                                              {p.thing, Agreement::kThing},
                                              {p.plural, Agreement::kPlural}};
  double best = 0, second = 0;
  std::optional<Agreement> which;
  for (const auto& [count, a] : all) {
    if (count > best) {
      second = best;
      best = count;
      which = a;
    } else if (count > second) {
      second = count;
    }
  }
  if (best < 1 || best < 2 * second) return std::nullopt;
  return which;
}

// How well a reference agreeing with `a` fits the candidate, in [0, 1].
double Agree(Agreement a, const Profile& p, Hint hint) {
  const std::optional<Agreement> d = Dominant(p);
  // A pronoun class seen once is a hint; twice or more (a passage about it
  // sees many) is sure.
  const double seen = std::max({p.male, p.female, p.thing, p.plural});
  const double sure = std::min(1.0, 0.5 + 0.25 * seen);
  const bool gendered = d == Agreement::kMale || d == Agreement::kFemale;
  const bool person = (p.person || hint == Hint::kPerson || gendered) && !p.place;
  const bool place = p.place || (hint == Hint::kPlace && !gendered);
  switch (a) {
    case Agreement::kMale:
    case Agreement::kFemale:
      if (d == a) return sure;
      if (gendered || place || p.group) return 0.0;
      if (d == Agreement::kThing) return person ? 0.3 : 0.0;
      if (d == Agreement::kPlural) return 0.1;
      return person ? 0.6 : 0.4;
    case Agreement::kThing:
      if (place) return 1.0;
      if (person) return 0.0;
      if (d == Agreement::kThing) return sure;
      if (p.group || d == Agreement::kPlural) return 0.5;
      return 0.4;
    case Agreement::kPlural:
      if (d == Agreement::kPlural) return sure;
      if (p.group) return 0.8;
      if (person) return 0.1;
      if (place) return 0.2;
      if (d == Agreement::kThing) return 0.3;
      return 0.4;
    case Agreement::kPlace:
      if (place) return 1.0;
      if (person || p.group) return 0.0;
      if (d == Agreement::kThing) return 0.15;
      return 0.2;
  }
  return 0.0;
}

// "Name (1831–1902)", "Name (born 1950)", "Name (b. 1950)" at `at`.
bool LifeParenthesisAt(std::string_view text, size_t at) {
  while (at < text.size() && text[at] == ' ') ++at;
  if (at >= text.size() || text[at] != '(') return false;
  const std::string_view inside = text.substr(at + 1, std::min<size_t>(40, text.size() - at - 1));
  const size_t close = inside.find(')');
  const std::string_view body = inside.substr(0, close);
  if (body.rfind("born ", 0) == 0 || body.rfind("b. ", 0) == 0) return true;
  // Two numbers with a dash between: a life.
  size_t digits = 0, numbers = 0;
  bool dash = false;
  for (size_t i = 0; i < body.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(body[i]);
    if (std::isdigit(c)) {
      ++digits;
      continue;
    }
    if (digits >= 3) ++numbers;
    digits = 0;
    if (c == '-' || c == 0xE2) dash = true;  // '-' or the lead byte of '–' / '—'
  }
  if (digits >= 3) ++numbers;
  return numbers >= 2 && dash;
}

class FollowUpResolver {
 public:
  FollowUpResolver(const FollowUpLookup& lookup, const FollowUpOptions& options)
      : lookup_(lookup), options_(options) {}

  // Passages for `text` (cached; errors are no passages).
  const std::vector<ScoredPassage>& Passages(const std::string& text) {
    auto it = passages_.find(text);
    if (it != passages_.end()) return it->second;
    std::vector<ScoredPassage> found;
    if (lookup_.passages && HasNonSpace(text)) {
      Result<std::vector<ScoredPassage>> r = lookup_.passages(text, options_.lookup_passages);
      if (r.ok()) found = std::move(r).value();
    }
    return passages_.emplace(text, std::move(found)).first->second;
  }

  std::vector<std::string> TitlesFor(const std::string& text) {
    std::vector<std::string> titles;
    for (const ScoredPassage& p : Passages(text)) {
      if (!p.title.empty()) AppendUnique(&titles, p.title);
    }
    return titles;
  }

  // Names in `text`, matched against the titles a search for it finds
  // and `extra_titles`.
  std::vector<Mention> MentionsIn(const std::string& text,
                                  const std::vector<std::string>& extra_titles = {}) {
    std::vector<std::string> titles = TitlesFor(text);
    for (const std::string& t : extra_titles) AppendUnique(&titles, t);
    return FindMentions(text, titles);
  }

  const Profile& ProfileOf(const Candidate& c) {
    auto it = profiles_.find(c.key);
    if (it != profiles_.end()) return it->second;
    return profiles_.emplace(c.key, ReadProfile(c)).first->second;
  }

 private:
  Profile ReadProfile(const Candidate& c) {
    Profile p;
    const std::string& label = c.title.empty() ? c.name : c.title;
    const std::vector<std::string> name_tokens = NameTokens(c.name);
    if (!name_tokens.empty() && IsPlaceWord(name_tokens.back())) p.place = true;
    if (!name_tokens.empty() && IsGroupWord(name_tokens.back())) p.group = true;
    const std::vector<ScoredPassage>& passages = Passages(label);
    const std::string key = EntityKey(label);
    bool own_found = false;
    for (const ScoredPassage& passage : passages) {
      if (EntityKey(passage.title) != key && EntityKey(ShortTitle(passage.title)) != key) continue;
      own_found = true;
      ReadOwnPassage(passage, name_tokens, &p);
    }
    p.own = own_found;
    if (!own_found) {
      for (const ScoredPassage& passage : passages) ReadMentions(passage.text, name_tokens, &p);
    }
    // What its own passages say, for the fit of a question's words (the
    // passages that only mention it say as much about other things).
    for (const ScoredPassage& passage : passages) {
      if (EntityKey(passage.title) == key || EntityKey(ShortTitle(passage.title)) == key) {
        TokenizeInto(passage.text, {}, &p.terms);
      }
    }
    std::sort(p.terms.begin(), p.terms.end());
    p.terms.erase(std::unique(p.terms.begin(), p.terms.end()), p.terms.end());
    if (!Dominant(p) && !p.person && !p.place && !p.group && lookup_.entity_type &&
        type_calls_ < 4) {
      ++type_calls_;
      std::string type = lookup_.entity_type(label);
      std::transform(type.begin(), type.end(), type.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
      if (OneOf(type, {"PERSON", "PER", "PEOPLE", "HUMAN"})) p.person = true;
      if (OneOf(type, {"LOCATION", "LOC", "GPE", "PLACE", "CITY", "COUNTRY", "GEO", "FACILITY"})) {
        p.place = true;
      }
      if (OneOf(type, {"ORGANIZATION", "ORGANISATION", "ORG", "COMPANY", "GROUP"})) p.group = true;
    }
    return p;
  }

  // A passage about the candidate: its pronouns (a sentence-initial one
  // counting double), its lead's place and group words, a life parenthesis.
  static void ReadOwnPassage(const ScoredPassage& passage, const std::vector<std::string>& name,
                             Profile* p) {
    const TokenizedText t(passage.text);
    for (size_t i = 0; i < t.size(); ++i) {
      const std::optional<Agreement> a = PronounAgreement(t.norm(i));
      if (!a) continue;
      if (t.norm(i) == "it" && IsExpletiveIt(t, i)) continue;
      const double weight = StartsSentence(t, i) ? 2.0 : 1.0;
      switch (*a) {
        case Agreement::kMale:
          p->male += weight;
          break;
        case Agreement::kFemale:
          p->female += weight;
          break;
        case Agreement::kThing:
          p->thing += weight;
          break;
        default:
          p->plural += weight;
          break;
      }
    }
    const size_t at = FindName(t, name, 0, false);
    if (at != std::string::npos) {
      const size_t end = t.token(at + name.size() - 1).end;
      if (LifeParenthesisAt(passage.text, end)) p->person = true;
    }
    // As running text writes it: the first "the X" if there is one (a title
    // line writes "Vey Propeller", the text "the Vey propeller"), else X.
    for (size_t k = at; p->written.empty() && k != std::string::npos;
         k = FindName(t, name, k + 1, false)) {
      if (OneOf(PrevWord(t, k), {"the"}) && IsCapitalizedToken(t.raw(k))) {
        const size_t end = t.token(k + name.size() - 1).end;
        p->written = "the " + passage.text.substr(t.token(k).begin, end - t.token(k).begin);
      }
    }
    if (passage.ordinal != 0) return;
    // The lead: "X is a fishing village ...", "X was an English rowing club"
    // (the first sentence with a verb "to be": a heading line has none).
    const std::vector<TextSpan> sentences = SplitSentences(passage.text);
    for (size_t n = 0; n < sentences.size() && n < 2 && p->lead.empty(); ++n) {
      const TokenizedText lead(
          std::string_view(passage.text)
              .substr(sentences[n].begin, sentences[n].end - sentences[n].begin));
      for (size_t i = 0; i + 1 < lead.size(); ++i) {
        if (!OneOf(lead.norm(i), {"is", "was", "are", "were"})) continue;
        for (size_t k = i + 1; k < lead.size() && k <= i + 7; ++k) {
          const std::string_view w = lead.norm(k);
          p->lead.emplace_back(w);
          if (IsPlaceWord(w)) p->place = true;
          if (IsGroupWord(w)) p->group = true;
          if (OneOf(w, {"of", "in", "that", "which", "who", "and"})) break;
        }
        break;
      }
    }
  }

  // Passages that only mention the candidate: the first third-person
  // pronoun after each mention (within the next sentence), "in X" / "at X".
  static void ReadMentions(const std::string& text, const std::vector<std::string>& name,
                           Profile* p) {
    const TokenizedText t(text);
    int mentions = 0, located = 0;
    for (size_t at = FindName(t, name); at != std::string::npos;
         at = FindName(t, name, at + name.size())) {
      const size_t last = at + name.size() - 1;
      // Part of a longer name ("Merrow" in "Merrow Coast") is another name.
      if ((last + 1 < t.size() && !NextWord(t, last).empty() &&
           IsCapitalizedToken(t.raw(last + 1))) ||
          (at > 0 && !StartsSentence(t, at) && !PrevWord(t, at).empty() &&
           IsCapitalizedToken(t.raw(at - 1)))) {
        continue;
      }
      ++mentions;
      if (OneOf(PrevWord(t, at), {"in", "at", "near", "around"})) ++located;
      if (LifeParenthesisAt(text, t.token(last).end)) p->person = true;
      // An apposition describes it: "Pellow & Daughters, a glassworks in ...".
      const size_t gap_end = last + 1 < t.size() ? t.token(last + 1).begin : text.size();
      if (std::string_view(text).substr(t.token(last).end, gap_end - t.token(last).end) == ", " &&
          last + 1 < t.size() && OneOf(t.norm(last + 1), {"a", "an", "the"})) {
        for (size_t k = last + 2; k < t.size() && k <= last + 5; ++k) {
          if (!NextWord(t, k - 1).empty() || k == last + 2) p->lead.emplace_back(t.norm(k));
          if (NextWord(t, k).empty()) break;
        }
      }
      int sentences = 0;
      for (size_t i = last + 1; i < t.size() && i < last + 40; ++i) {
        if (StartsSentence(t, i) && ++sentences > 1) break;
        if (IsCapitalizedToken(t.raw(i)) && !StartsSentence(t, i)) break;  // another name
        const std::optional<Agreement> a = PronounAgreement(t.norm(i));
        if (!a || (t.norm(i) == "it" && IsExpletiveIt(t, i))) continue;
        switch (*a) {
          case Agreement::kMale:
            p->male += 1;
            break;
          case Agreement::kFemale:
            p->female += 1;
            break;
          case Agreement::kThing:
            p->thing += 1;
            break;
          default:
            p->plural += 1;
            break;
        }
        break;
      }
    }
    if (located > 0 && 2 * located >= mentions) p->place = true;
  }

  const FollowUpLookup& lookup_;
  const FollowUpOptions& options_;
  std::map<std::string, std::vector<ScoredPassage>> passages_;
  std::map<std::string, Profile> profiles_;
  int type_calls_ = 0;
};

// ---- Turns -----------------------------------------------------------------

struct Turn {
  std::string question;  // as the user wrote it
  std::string resolved;  // the standalone form
  AssistantTurn answer;
  // Filled on first use.
  bool read = false;
  std::vector<Mention> question_mentions;
  std::vector<Candidate> candidates;  // salience as if it were the last turn
  std::string answer_phrase;          // the first name the answer adds to the question
};

// The last `max_turns` user messages with the answers after them, each
// read up to `max_bytes` (its "Sources:" list: 20 titles of 200 bytes).
std::vector<Turn> TurnsOf(const std::vector<ChatMessage>& earlier, size_t max_turns,
                          size_t max_bytes) {
  size_t first = earlier.size();
  for (size_t users = 0; first > 0 && users < max_turns;) {
    --first;
    if (earlier[first].role == "user" && HasNonSpace(earlier[first].content)) ++users;
  }
  std::vector<Turn> turns;
  for (size_t i = first; i < earlier.size(); ++i) {
    const ChatMessage& m = earlier[i];
    if (m.role == "user" && HasNonSpace(m.content)) {
      Turn turn;
      turn.question = std::string(Utf8Prefix(m.content, max_bytes));
      turn.resolved = turn.question;
      turns.push_back(std::move(turn));
    } else if (m.role == "assistant" && !turns.empty() && turns.back().answer.answer.empty()) {
      AssistantTurn& a = turns.back().answer;
      a = ReadAssistantTurn(m.content);
      a.answer = std::string(Utf8Prefix(a.answer, max_bytes));
      if (a.cited_titles.size() > 20) a.cited_titles.resize(20);
      for (std::string& title : a.cited_titles) title = std::string(Utf8Prefix(title, 200));
    }
  }
  return turns;
}

// What the previous question says its answer is: "Who designed X?" a
// person, "Where ...?" a place. "Who was X?" describes X: no new person.
Hint AnswerHint(const std::string& question, const std::vector<Mention>& names) {
  const TokenizedText t(question);
  size_t f = 0;
  while (f < t.size() && IsLeadingConnective(t.norm(f))) ++f;
  if (f >= t.size()) return Hint::kNone;
  const std::string_view wh = t.norm(f);
  if (wh == "where") return Hint::kPlace;
  if (wh != "who" && wh != "whom") return Hint::kNone;
  if (f + 2 < t.size() && OneOf(t.norm(f + 1), {"is", "was", "are", "were"})) {
    for (const Mention& m : names) {
      if (m.begin == t.token(f + 2).begin) return Hint::kNone;
    }
  }
  return Hint::kPerson;
}

// ---- The rewrite -----------------------------------------------------------

class Rewriter {
 public:
  Rewriter(const FollowUpLookup& lookup, const FollowUpOptions& options)
      : resolver_(lookup, options), options_(options) {}

  QueryRewrite Run(std::string_view question, const std::vector<ChatMessage>& earlier) {
    turns_ = TurnsOf(earlier, options_.max_turns, options_.max_text_bytes);
    // Earlier questions first, each against the turns before it.
    for (size_t i = 0; i < turns_.size(); ++i) {
      QueryRewrite r = Resolve(turns_[i].question, i);
      turns_[i].resolved = r.query;
    }
    return Resolve(question, turns_.size());
  }

  // True when the question needs the conversation: a reference it does not
  // bind, an ellipsis, or no name of its own.
  bool needs_context() const { return needs_context_; }

 private:
  // `question` resolved against turns_[0, upto).
  QueryRewrite Resolve(std::string_view question, size_t upto) {
    QueryRewrite out;
    out.query = std::string(question);
    if (question.size() > options_.max_text_bytes) {
      out.reason = "longer than a follow-up: used as it is";
      return out;
    }
    const std::string q(question);
    const std::vector<Mention> own = resolver_.MentionsIn(q);
    const TokenizedText t(q);
    std::vector<Reference> refs = FindReferences(t, !own.empty());
    if (refs.size() > options_.max_references) refs.resize(options_.max_references);
    const Ellipsis ellipsis = FindEllipsis(t);
    // Pronouns a name before them in the question binds.
    std::erase_if(refs, [&](const Reference& r) { return BoundLocally(r, t, own); });
    if (upto == turns_.size())
      needs_context_ = !refs.empty() || ellipsis.kind != EllipsisKind::kNone || own.empty();
    if (upto == 0) {
      out.reason = "first turn: nothing to refer to";
      return out;
    }
    if (refs.empty() && ellipsis.kind == EllipsisKind::kNone) {
      out.reason = own.empty() ? "no reference to an earlier turn"
                               : "self-contained: names " + own.front().name;
      return out;
    }
    const std::vector<Candidate> candidates = CandidatesBefore(upto);
    // Replace references right to left so earlier offsets stay valid.
    std::string text = q;
    std::vector<ResolvedReference> resolved;
    for (size_t k = refs.size(); k-- > 0;) {
      const Reference& r = refs[k];
      const Candidate* c = Best(r, candidates, PredicateTerms(t, r));
      if (c == nullptr) continue;
      const size_t b = t.token(r.token_begin).begin;
      const size_t e = t.token(r.token_end - 1).end;
      std::string target = Replacement(r, PhraseOf(*c), t);
      if (b == t.token(0).begin || StartsSentence(t, r.token_begin))
        target = CapitalizeFirst(target);
      resolved.push_back({q.substr(b, e - b), target});
      text.replace(b, e - b, target);
    }
    std::reverse(resolved.begin(), resolved.end());
    if (ellipsis.kind != EllipsisKind::kNone) {
      std::string combined;
      if (Complete(text, ellipsis, turns_[upto - 1], &combined, &out.reason)) {
        text = std::move(combined);
      }
    }
    if (text == q) {
      if (out.reason.empty()) out.reason = "a reference no earlier name agrees with: unchanged";
      return out;
    }
    out.query = std::move(text);
    out.method = "offline";
    out.references = std::move(resolved);
    std::string why;
    for (const ResolvedReference& r : out.references) {
      why += (why.empty() ? "" : "; ") + std::string("\"") + r.text + "\" → " + r.target;
    }
    if (!out.reason.empty()) why += (why.empty() ? "" : "; ") + out.reason;
    out.reason = why;
    return out;
  }

  bool BoundLocally(const Reference& r, const TokenizedText& t, const std::vector<Mention>& own) {
    for (const Mention& m : own) {
      if (m.end > t.token(r.token_begin).begin) continue;
      if (r.form == RefForm::kPhrase) {
        const std::vector<std::string> tokens = NameTokens(m.name);
        if (!tokens.empty() && StemS(tokens.back()) == StemS(r.noun)) return true;
        continue;
      }
      if (Agree(r.agreement, resolver_.ProfileOf(FromMention(m)), Hint::kNone) >= 0.4) return true;
    }
    return false;
  }

  // The candidates of turns [0, upto), the latest counting most.
  std::vector<Candidate> CandidatesBefore(size_t upto) {
    std::vector<Candidate> all;
    double age_factor = 1.0;
    for (size_t i = upto; i-- > 0; age_factor *= 0.5) {
      for (Candidate c : CandidatesOf(turns_[i])) {
        c.salience *= age_factor;
        auto same = std::find_if(all.begin(), all.end(),
                                 [&](const Candidate& o) { return o.key == c.key; });
        if (same == all.end()) {
          all.push_back(std::move(c));
        } else if (c.salience > same->salience) {
          *same = std::move(c);  // its salience, and the phrase of that mention
        }
      }
    }
    std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
      return a.salience > b.salience;
    });
    return all;
  }

  const std::vector<Candidate>& CandidatesOf(Turn& turn) {
    if (turn.read) return turn.candidates;
    turn.read = true;
    const std::vector<std::string>& cited = turn.answer.cited_titles;
    turn.question_mentions = resolver_.MentionsIn(turn.resolved, cited);
    std::vector<std::string> titles = resolver_.TitlesFor(turn.resolved);
    for (const std::string& c : cited) AppendUnique(&titles, c);
    // A short answer is searched for too (a name the question's search misses).
    std::vector<Mention> answer_mentions;
    if (!turn.answer.answer.empty()) {
      std::vector<std::string> answer_titles = titles;
      if (turn.answer.answer.size() <= 300) {
        for (const std::string& t : resolver_.TitlesFor(turn.answer.answer)) {
          AppendUnique(&answer_titles, t);
        }
      }
      answer_mentions = FindMentions(turn.answer.answer, answer_titles);
    }
    std::vector<Candidate>& out = turn.candidates;
    auto add = [&](const Mention& m, double salience, Hint hint, bool from_title = false) {
      for (Candidate& c : out) {
        if (c.key == m.key) return;
      }
      out.push_back(FromMention(m, salience, hint));
      out.back().from_title = from_title;
    };
    const Hint answer_hint = AnswerHint(turn.resolved, turn.question_mentions);
    size_t order = 0;
    for (const Mention& m : answer_mentions) {
      const bool in_question =
          std::any_of(turn.question_mentions.begin(), turn.question_mentions.end(),
                      [&](const Mention& q) { return q.key == m.key; });
      if (in_question) continue;
      if (order == 0) turn.answer_phrase = m.phrase;
      add(m, 1.0 - 0.05 * static_cast<double>(std::min<size_t>(order, 5)),
          order == 0 ? answer_hint : Hint::kNone);
      ++order;
    }
    order = 0;
    for (const Mention& m : turn.question_mentions) {
      add(m, 0.85 - 0.05 * static_cast<double>(std::min<size_t>(order++, 5)), Hint::kNone);
    }
    auto add_title = [&](const std::string& title, double salience) {
      Mention m;
      m.name = ShortTitle(title);
      // "Berg lamp": a name headed by a common noun takes the article.
      const TokenizedText words(m.name);
      m.phrase = words.size() > 1 && StartsWithLower(words.raw(words.size() - 1)) ? "the " + m.name
                                                                                  : m.name;
      m.title = title;
      m.key = EntityKey(title);
      if (!m.key.empty()) add(m, salience, Hint::kNone, true);
    };
    for (const std::string& c : cited) add_title(c, 0.5);
    const std::vector<std::string> searched = resolver_.TitlesFor(turn.resolved);
    for (size_t i = 0; i < searched.size() && i < 2; ++i) add_title(searched[i], 0.3);
    if (out.size() > options_.max_candidates) out.resize(options_.max_candidates);
    return out;
  }

  // The content words of the question but the reference's ("When was it
  // patented?": {"patented"}).
  static std::vector<std::string> PredicateTerms(const TokenizedText& t, const Reference& r) {
    std::vector<std::string> terms;
    for (size_t i = 0; i < t.size(); ++i) {
      if (i >= r.token_begin && i < r.token_end) continue;
      TokenizeInto(t.raw(i), {}, &terms);
    }
    return terms;
  }

  // The best candidate: salience × agreement × (0.5 + the share of the
  // question's other words its passages hold), so "When was it patented?"
  // prefers the patented lamp to the village named more recently.
  const Candidate* Best(const Reference& r, const std::vector<Candidate>& candidates,
                        const std::vector<std::string>& terms) {
    const Candidate* best = nullptr;
    double best_score = 0.0;
    for (const Candidate& c : candidates) {
      double agree = 0.0;
      if (r.form == RefForm::kPhrase && !r.noun.empty()) {
        agree = NounFits(r, c) ? 1.0 : 0.0;
      } else {
        agree = Agree(r.agreement, resolver_.ProfileOf(c), c.hint);
      }
      if (agree <= 0.0) continue;
      const Profile& p = resolver_.ProfileOf(c);
      size_t held = 0;
      for (const std::string& w : terms) {
        held += std::binary_search(p.terms.begin(), p.terms.end(), w) ? 1 : 0;
      }
      const double fit = terms.empty() ? 0.0 : static_cast<double>(held) / terms.size();
      // Squared: a sure agreement is not outweighed by a guess's salience.
      const double score = c.salience * agree * agree * (0.5 + fit);
      if (score > best_score) {
        best_score = score;
        best = &c;
      }
    }
    return best;
  }

  // "that lens" fits the Brannock lens (a name the noun heads) or a thing
  // whose lead calls it so; "the lens" only the former.
  bool NounFits(const Reference& r, const Candidate& c) {
    const std::string noun = StemS(r.noun);
    const std::vector<std::string> tokens = NameTokens(c.name);
    if (tokens.size() >= 2 && StemS(tokens.back()) == noun) return true;
    if (r.definite) return false;
    const Profile& p = resolver_.ProfileOf(c);
    for (const std::string& w : p.lead) {
      if (StemS(w) == noun) return true;
    }
    return false;
  }

  // How a candidate is written in the rewrite: as the conversation wrote
  // it, or, known only by a title, as its own passage writes it ("Vey
  // Propeller" → "the Vey propeller").
  std::string PhraseOf(const Candidate& c) {
    if (!c.from_title) return c.phrase;
    const Profile& p = resolver_.ProfileOf(c);
    return p.written.empty() ? c.phrase : p.written;
  }

  // "his" → "Ivo Brannock's", "there" → "in Saltinghame", "that lens" →
  // "the Brannock lens", "he" → "Ivo Brannock".
  static std::string Replacement(const Reference& r, const std::string& phrase,
                                 const TokenizedText& t) {
    switch (r.form) {
      case RefForm::kPossessive:
        return Possessive(phrase);
      case RefForm::kLocative:
        return IsPreposition(PrevWord(t, r.token_begin)) ? phrase : "in " + phrase;
      case RefForm::kPhrase:
      case RefForm::kNoun:
        return phrase;
    }
    return phrase;
  }

  // The ellipsis `text` completed from the previous turn.
  bool Complete(const std::string& text, const Ellipsis& e, Turn& previous, std::string* out,
                std::string* reason) {
    const std::string p = TrimQuestionEnd(previous.resolved);
    if (p.empty()) return false;
    const TokenizedText t(text);
    if (e.token_begin >= t.size()) return false;
    const std::string fragment =
        TrimQuestionEnd(std::string_view(text).substr(t.token(e.token_begin).begin));
    switch (e.kind) {
      case EllipsisKind::kWh:
        CandidatesOf(previous);  // finds the answer's name
        *out = SwapWh(p,
                      TrimQuestionEnd(std::string_view(text).substr(
                          t.token(e.token_begin).begin,
                          t.token(e.token_end - 1).end - t.token(e.token_begin).begin)),
                      previous.answer_phrase);
        *reason = "the question word of \"" + p + "?\"";
        return !out->empty();
      case EllipsisKind::kModifier:
        *out = ReplaceModifier(p, fragment) + "?";
        *reason = "\"" + fragment + "\" in \"" + p + "?\"";
        return true;
      case EllipsisKind::kAbout:
      case EllipsisKind::kNounPhrase: {
        const TokenizedText x(fragment);
        if (!x.empty() &&
            (IsPreposition(x.norm(0)) || std::isdigit(static_cast<unsigned char>(x.raw(0)[0])))) {
          *out = ReplaceModifier(p, fragment) + "?";  // "how about in 1880?"
          *reason = "\"" + fragment + "\" in \"" + p + "?\"";
          return true;
        }
        *out = Substitute(p, fragment, previous) + "?";
        *reason = "\"" + fragment + "\" in place of the subject of \"" + p + "?\"";
        return true;
      }
      case EllipsisKind::kNone:
        break;
    }
    return false;
  }

  // "Where was X born" + "When" → "When was X born?"; "Who designed X" +
  // "When" → "When was X designed?"; "Did X retire" + "When" → "When did X retire?".
  // `answer`: the name the previous answer gave, which fills the place of an
  // object question's wh-word ("What did X discover" + "When" → "When did X
  // discover the Lindqvist reaction?").
  static std::string SwapWh(const std::string& p, const std::string& wh,
                            const std::string& answer) {
    const TokenizedText t(p);
    size_t f = 0;
    while (f < t.size() && IsLeadingConnective(t.norm(f))) ++f;
    if (f >= t.size()) return "";
    const std::string new_wh = CapitalizeFirst(wh);
    if (IsAuxiliary(t.norm(f))) {  // "Did X retire" → "When did X retire?"
      std::string rest = p.substr(t.token(f).begin);
      rest[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(rest[0])));
      return new_wh + " " + rest + "?";
    }
    size_t end = 0;  // the previous wh-phrase is tokens [f, end)
    if (IsWhWord(t.norm(f))) {
      end = f + 1;
    } else if (IsPreposition(t.norm(f)) && f + 1 < t.size() && IsWhWord(t.norm(f + 1))) {
      end = f + 2;
    } else {
      return new_wh + ": " + p + "?";
    }
    const std::string_view w = t.norm(end - 1);
    if (end < t.size() && w == "how" && IsHowAdverb(t.norm(end))) {
      ++end;  // "how many", then its noun: "how many lighthouses"
      if (end < t.size() && !IsAuxiliary(t.norm(end)) && OneOf(t.norm(end - 1), {"many", "much"})) {
        ++end;
      }
    } else if (end < t.size() && OneOf(w, {"which", "what", "whose"}) &&
               !IsAuxiliary(t.norm(end)) && !VerbLike(t.norm(end))) {
      ++end;  // "which town", "what year"
    }
    if (end >= t.size()) return "";
    const std::string rest = p.substr(t.token(end).begin);
    if (IsAuxiliary(t.norm(end))) {
      const bool object_question = OneOf(t.norm(f), {"what", "which", "who", "whom"});
      if (object_question && !answer.empty() && answer.size() <= 80 &&
          ToLowerAscii(wh).find(t.norm(f)) == std::string::npos) {
        return new_wh + " " + rest + " " + answer + "?";
      }
      return new_wh + " " + rest + "?";
    }
    // A subject question in the past: "Who designed the Brannock lens".
    const std::string_view verb = t.norm(end);
    const TokenizedText asked(wh);
    const bool subject_wh = !asked.empty() && OneOf(asked.norm(0), {"who", "what", "which"});
    if (!subject_wh && verb.size() > 3 && verb.substr(verb.size() - 2) == "ed" &&
        end + 1 < t.size()) {
      return new_wh + " was " + p.substr(t.token(end + 1).begin) + " " + std::string(t.raw(end)) +
             "?";
    }
    return new_wh + " " + rest + "?";
  }

  // "How many lighthouses had the lens by 1900" + "in 1894": the date with
  // its preposition replaced; without a date, added.
  static std::string ReplaceModifier(const std::string& p, const std::string& fragment) {
    for (const EntitySpan& s : DetectEntitySpans(p)) {
      if (s.kind == SpanKind::kProperNoun) continue;
      size_t b = s.begin;
      const TokenizedText t(p);
      const size_t first = t.FirstTokenAtOrAfter(s.begin);
      const TokenizedText f(fragment);
      const bool fragment_has_preposition = !f.empty() && IsPreposition(f.norm(0));
      if (first > 0 && first < t.size() && IsPreposition(t.norm(first - 1)) &&
          fragment_has_preposition) {
        b = t.token(first - 1).begin;
      }
      return p.substr(0, b) + fragment + p.substr(s.end);
    }
    return p + " " + fragment;
  }

  // "Where was Ivo Brannock born" + "Margit Vey" → "Where was Margit Vey
  // born": the previous question's name that agrees best with X.
  std::string Substitute(const std::string& p, const std::string& x, Turn& previous) {
    const std::vector<Mention> names = resolver_.MentionsIn(p, previous.answer.cited_titles);
    if (names.empty()) return p + " " + x;
    const std::vector<Mention> x_names = resolver_.MentionsIn(x);
    const Mention* target = &names.front();
    if (!x_names.empty() && names.size() > 1) {
      const Profile& xp = resolver_.ProfileOf(FromMention(x_names.front()));
      const bool x_person = Agree(Agreement::kMale, xp, Hint::kNone) >= 0.6 ||
                            Agree(Agreement::kFemale, xp, Hint::kNone) >= 0.6;
      for (const Mention& m : names) {
        const Profile& mp = resolver_.ProfileOf(FromMention(m));
        const bool m_person = Agree(Agreement::kMale, mp, Hint::kNone) >= 0.6 ||
                              Agree(Agreement::kFemale, mp, Hint::kNone) >= 0.6;
        if (m_person == x_person) {
          target = &m;
          break;
        }
      }
    }
    // The previous name's article goes with it: X brings its own, if any
    // ("the Berg lamp" → "the Lindqvist reaction", → "Ada Lindqvist").
    size_t b = target->begin;
    if (b >= 4 && ToLowerAscii(p.substr(b - 4, 4)) == "the ") b -= 4;
    return p.substr(0, b) + x + p.substr(target->end);
  }

  FollowUpResolver resolver_;
  const FollowUpOptions& options_;
  std::vector<Turn> turns_;
  bool needs_context_ = false;
};

constexpr std::string_view kRewriteSystem =
    "You turn the last question of a conversation into a standalone question for a document "
    "search. Replace each pronoun or reference (he, she, it, they, this, that, there, the one) "
    "with the name it stands for, and complete an elliptical question (\"and in 1894?\", \"what "
    "about X?\", \"when?\") from the earlier turns. Keep the user's wording and language "
    "otherwise; do not answer it and add nothing the conversation does not say. If the question "
    "already stands alone, repeat it unchanged. Reply with the question only, on one line.";

std::string CutUtf8(std::string_view s, size_t max_bytes) {
  const std::string_view cut = Utf8Prefix(s, max_bytes);
  return cut.size() == s.size() ? std::string(s) : std::string(cut) + "...";
}

}  // namespace

AssistantTurn ReadAssistantTurn(std::string_view content) {
  AssistantTurn turn;
  const size_t sources = content.find("\n\nSources:");
  const size_t searched = content.find("\n\nSearched for:");
  turn.answer = Trim(content.substr(0, std::min(sources, searched)));
  if (sources == std::string_view::npos) return turn;
  std::string_view rest = content.substr(sources + 10);
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (line.empty() && !turn.cited_titles.empty()) break;
    if (line.size() < 4 || line[0] != '[') continue;
    const size_t close = line.find("] ");
    if (close == std::string_view::npos) continue;
    std::string title = Trim(line.substr(close + 2));
    // "Title (document id)": the id in the last parentheses.
    if (!title.empty() && title.back() == ')') {
      const size_t open = title.rfind(" (");
      if (open != std::string::npos && open > 0) title.resize(open);
    }
    if (!title.empty()) AppendUnique(&turn.cited_titles, std::move(title));
  }
  return turn;
}

QueryRewrite RewriteFollowUpOffline(std::string_view question,
                                    const std::vector<ChatMessage>& earlier,
                                    const FollowUpLookup& lookup, const FollowUpOptions& options) {
  Rewriter rewriter(lookup, options);
  return rewriter.Run(question, earlier);
}

std::vector<ChatMessage> FollowUpPrompt(std::string_view question,
                                        const std::vector<ChatMessage>& earlier,
                                        const FollowUpOptions& options) {
  std::vector<const ChatMessage*> shown;
  for (const ChatMessage& m : earlier) {
    if ((m.role == "user" || m.role == "assistant") && HasNonSpace(m.content)) shown.push_back(&m);
  }
  if (shown.size() > options.prompt_turns) {
    shown.erase(shown.begin(), shown.end() - static_cast<std::ptrdiff_t>(options.prompt_turns));
  }
  std::string user = "Conversation:\n";
  for (const ChatMessage* m : shown) {
    const std::string text =
        m->role == "assistant" ? ReadAssistantTurn(m->content).answer : Trim(m->content);
    user += (m->role == "user" ? "User: " : "Assistant: ") +
            CutUtf8(text, options.prompt_message_bytes) + "\n";
  }
  user += "\nLast question: " + CutUtf8(Trim(question), options.prompt_message_bytes) +
          "\n\nStandalone question:";
  return {{"system", std::string(kRewriteSystem)}, {"user", std::move(user)}};
}

Result<std::string> ReadModelRewrite(std::string_view reply, std::string_view question,
                                     const FollowUpOptions& options) {
  std::vector<std::string> lines;
  for (size_t at = 0; at <= reply.size();) {
    size_t nl = reply.find('\n', at);
    if (nl == std::string_view::npos) nl = reply.size();
    std::string line = Trim(reply.substr(at, nl - at));
    if (!line.empty()) lines.push_back(std::move(line));
    at = nl + 1;
  }
  // A label on a line of its own: "Standalone question:".
  if (lines.size() > 1 && lines[0].size() <= 40 && lines[0].back() == ':') {
    lines.erase(lines.begin());
  }
  if (lines.empty()) return Status::InvalidArgument("the reply is empty");
  if (lines.size() > 1) {
    return Status::InvalidArgument("the reply has " + std::to_string(lines.size()) +
                                   " lines, not one question");
  }
  std::string q = std::move(lines[0]);
  const std::string lower = ToLowerAscii(q);
  for (std::string_view label : {"standalone question:", "rewritten question:", "search query:",
                                 "rewritten query:", "question:", "query:"}) {
    if (lower.rfind(label, 0) == 0) {
      q = Trim(std::string_view(q).substr(label.size()));
      break;
    }
  }
  for (const auto& [open, close] :
       std::initializer_list<std::pair<std::string_view, std::string_view>>{
           {"\"", "\""}, {"'", "'"}, {"`", "`"}, {"\u201c", "\u201d"}, {"\u00ab", "\u00bb"}}) {
    if (q.size() >= open.size() + close.size() && q.rfind(open, 0) == 0 &&
        q.compare(q.size() - close.size(), close.size(), close) == 0) {
      q = Trim(std::string_view(q).substr(open.size(), q.size() - open.size() - close.size()));
      break;
    }
  }
  if (q.empty()) return Status::InvalidArgument("the reply is empty");
  if (q[0] == '{' || q[0] == '[')
    return Status::InvalidArgument("the reply is JSON, not a question");
  if (!IsValidUtf8(q)) return Status::InvalidArgument("the reply is not valid UTF-8");
  for (unsigned char c : q) {
    if (c < 0x20 && c != '\t') return Status::InvalidArgument("the reply holds control characters");
  }
  const size_t limit = std::max(options.max_query_bytes, 2 * question.size());
  if (q.size() > limit) {
    return Status::InvalidArgument("the reply has " + std::to_string(q.size()) +
                                   " bytes, more than " + std::to_string(limit));
  }
  return q;
}

QueryRewrite RewriteFollowUp(std::string_view question, const std::vector<ChatMessage>& earlier,
                             const FollowUpLookup& lookup, ChatModel* chat,
                             const FollowUpOptions& options) {
  Rewriter rewriter(lookup, options);
  QueryRewrite offline = rewriter.Run(question, earlier);
  const bool has_turns = std::any_of(earlier.begin(), earlier.end(), [](const ChatMessage& m) {
    return (m.role == "user" || m.role == "assistant") && HasNonSpace(m.content);
  });
  if (chat == nullptr || !has_turns || !rewriter.needs_context()) return offline;
  Result<TokenPrices> prices = TokenPricesFromEnv();
  UsageChat counted(chat, prices.ok() ? *prices : TokenPrices{});
  ChatRequest request;
  request.messages = FollowUpPrompt(question, earlier, options);
  request.temperature = 0.0;
  request.max_tokens = 200;
  Result<ChatResponse> reply = counted.Complete(request);
  offline.usage = counted.tokens();
  std::string refused;
  if (!reply.ok()) {
    refused = "the chat model failed (" + EscapeForMessage(reply.status().ToString()) + ")";
  } else if (reply->finish_reason == "length") {
    refused = "the chat model's rewrite was cut off";
  } else {
    Result<std::string> q = ReadModelRewrite(reply->content, question, options);
    if (q.ok()) {
      QueryRewrite out;
      out.query = std::move(q).value();
      out.method = out.query == question ? "none" : "llm";
      out.reason = out.query == question ? "the chat model kept the question"
                                         : "rewritten by the chat model";
      out.usage = offline.usage;
      return out;
    }
    refused = "the chat model's rewrite was refused: " + std::string(q.status().message());
  }
  offline.warnings.push_back(
      "query rewrite: " + refused + "; " +
      (offline.rewritten() ? "rewritten offline instead" : "the question is used as it is"));
  return offline;
}

}  // namespace flowrag
