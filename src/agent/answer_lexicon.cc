#include "agent/answer_lexicon.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "common/text.h"

namespace flowrag {
namespace {

// Word classes: a question term and a passage word of the same class match
// at the class strength. Tokenised (lower-case, S-stemmed) forms.
struct WordClass {
  double strength;
  std::vector<std::string_view> words;
};

const std::vector<WordClass>& WordClasses() {
  static const auto* classes = new std::vector<WordClass>{
      {0.8, {"born", "birth", "birthplace", "birthday", "native"}},
      {0.8, {"died", "death", "die", "dead", "deathplace", "killed"}},
      {0.8,
       {"founded", "founder", "established", "formed", "created", "founding", "started",
        "establishment", "inception"}},
      {0.8, {"married", "marry", "husband", "wife", "spouse", "widow", "widower"}},
      {0.8, {"nationality", "citizenship", "country", "citizen"}},
      // "Who is the child of X?" reads "X was the father of Y": weaker, as
      // "mother" asked and "father" written are different people.
      {0.6, {"child", "children", "son", "daughter", "father", "mother", "parent", "kid"}},
      {0.8, {"director", "directed", "direct", "directing", "filmmaker"}},
      {0.8, {"performer", "performed", "singer", "sung", "sang", "recorded", "artist", "band"}},
      {0.8, {"composer", "composed", "wrote", "written", "writer", "author"}},
  };
  return *classes;
}

struct Nation {
  std::string_view demonym;
  std::string_view country;  // "" for faiths and empires without one country
};

// Demonyms and the countries they name (IsDemonym reads the same table).
constexpr Nation kNations[] = {
    {"american", "united states"},
    {"british", "united kingdom"},
    {"english", "united kingdom"},
    {"scottish", "united kingdom"},
    {"welsh", "united kingdom"},
    {"irish", "ireland"},
    {"french", "france"},
    {"german", "germany"},
    {"italian", "italy"},
    {"spanish", "spain"},
    {"portuguese", "portugal"},
    {"dutch", "netherlands"},
    {"belgian", "belgium"},
    {"swiss", "switzerland"},
    {"austrian", "austria"},
    {"swedish", "sweden"},
    {"norwegian", "norway"},
    {"danish", "denmark"},
    {"finnish", "finland"},
    {"icelandic", "iceland"},
    {"russian", "russia"},
    {"polish", "poland"},
    {"czech", "czech republic"},
    {"slovak", "slovakia"},
    {"hungarian", "hungary"},
    {"romanian", "romania"},
    {"bulgarian", "bulgaria"},
    {"greek", "greece"},
    {"turkish", "turkey"},
    {"serbian", "serbia"},
    {"croatian", "croatia"},
    {"slovene", "slovenia"},
    {"slovenian", "slovenia"},
    {"bosnian", "bosnia and herzegovina"},
    {"ukrainian", "ukraine"},
    {"belarusian", "belarus"},
    {"lithuanian", "lithuania"},
    {"latvian", "latvia"},
    {"estonian", "estonia"},
    {"georgian", "georgia"},
    {"armenian", "armenia"},
    {"chinese", "china"},
    {"japanese", "japan"},
    {"korean", "korea"},
    {"vietnamese", "vietnam"},
    {"thai", "thailand"},
    {"indian", "india"},
    {"pakistani", "pakistan"},
    {"bangladeshi", "bangladesh"},
    {"iranian", "iran"},
    {"persian", "iran"},
    {"iraqi", "iraq"},
    {"syrian", "syria"},
    {"lebanese", "lebanon"},
    {"israeli", "israel"},
    {"egyptian", "egypt"},
    {"moroccan", "morocco"},
    {"algerian", "algeria"},
    {"tunisian", "tunisia"},
    {"nigerian", "nigeria"},
    {"kenyan", "kenya"},
    {"ethiopian", "ethiopia"},
    {"mexican", "mexico"},
    {"canadian", "canada"},
    {"brazilian", "brazil"},
    {"argentine", "argentina"},
    {"argentinian", "argentina"},
    {"chilean", "chile"},
    {"colombian", "colombia"},
    {"peruvian", "peru"},
    {"venezuelan", "venezuela"},
    {"cuban", "cuba"},
    {"australian", "australia"},
    {"filipino", "philippines"},
    {"indonesian", "indonesia"},
    {"malaysian", "malaysia"},
    {"soviet", "soviet union"},
    {"new zealand", "new zealand"},
    {"south african", "south africa"},
    {"roman", ""},
    {"byzantine", ""},
    {"ottoman", ""},
    {"prussian", ""},
    {"bavarian", ""},
    {"catholic", ""},
    {"protestant", ""},
    {"muslim", ""},
    {"christian", ""},
    {"jewish", ""},
    {"african", ""},
    {"european", ""},
    {"asian", ""},
    {"latin", ""},
    {"arab", ""},
    {"arabic", ""},
};

// Country names written other ways.
constexpr std::pair<std::string_view, std::string_view> kCountryAliases[] = {
    {"usa", "united states"},
    {"us", "united states"},
    {"u s", "united states"},
    {"united states of america", "united states"},
    {"america", "united states"},
    {"uk", "united kingdom"},
    {"great britain", "united kingdom"},
    {"britain", "united kingdom"},
    {"england", "united kingdom"},
    {"scotland", "united kingdom"},
    {"wales", "united kingdom"},
    {"ussr", "soviet union"},
    {"south korea", "korea"},
    {"republic of ireland", "ireland"},
    {"people s republic of china", "china"},
    {"holland", "netherlands"},
};

int MonthOf(std::string_view lower) {
  static constexpr std::string_view kMonths[] = {"january",   "february", "march",    "april",
                                                 "may",       "june",     "july",     "august",
                                                 "september", "october",  "november", "december"};
  for (int m = 0; m < 12; ++m) {
    if (lower == kMonths[m] ||
        (lower.size() >= 3 && lower.size() <= 4 && kMonths[m].substr(0, 3) == lower.substr(0, 3))) {
      return m + 1;
    }
  }
  return 0;
}

// What a number's unit measures: "212 km" answers "How long ...?".
struct Unit {
  std::vector<std::string_view> units;
  std::vector<std::string_view> words;
};

const std::vector<Unit>& Units() {
  static const auto* units = new std::vector<Unit>{
      {{"km",    "kilometre", "kilometer", "kilometres", "kilometers",  "metre",
        "meter", "metres",    "meters",    "m",          "mile",        "miles",
        "mi",    "feet",      "foot",      "ft",         "yard",        "yards",
        "inch",  "inches",    "cm",        "centimetre", "centimetres", "mm"},
       {"long", "length", "far", "distance", "tall", "high", "height", "wide", "width", "deep",
        "depth"}},
      {{"year", "years", "month", "months", "week", "weeks", "day", "days", "hour", "hours",
        "minute", "minutes", "second", "seconds", "decade", "decades"},
       {"long", "duration", "old", "age", "time"}},
      {{"people", "inhabitants", "residents", "persons", "population"},
       {"population", "people", "inhabitant", "resident"}},
      {{"hectare", "hectares", "acre", "acres", "km2", "sq", "square"},
       {"area", "big", "large", "size"}},
      {{"dollars", "dollar", "pounds", "euros", "usd"}, {"cost", "price", "worth", "much"}},
      {{"kg", "kilograms", "tonnes", "tons", "pounds", "lb"}, {"weight", "heavy", "much"}},
  };
  return *units;
}

bool IsDash(std::string_view text, size_t i, size_t* len) {
  if (text.compare(i, 3, "\u2013") == 0 || text.compare(i, 3, "\u2014") == 0) {
    *len = 3;
    return true;
  }
  if (text[i] == '-') {
    *len = 1;
    return true;
  }
  return false;
}

}  // namespace

double RelatedWordStrength(std::string_view term, std::string_view word) {
  if (term == word) return 1.0;
  double best = 0.0;
  for (const WordClass& c : WordClasses()) {
    const bool t = std::find(c.words.begin(), c.words.end(), term) != c.words.end();
    if (t && std::find(c.words.begin(), c.words.end(), word) != c.words.end()) {
      best = std::max(best, c.strength);
    }
  }
  return best;
}

std::vector<ImplicitWord> ImplicitWords(std::string_view text,
                                        const std::vector<EntitySpan>& spans) {
  std::vector<ImplicitWord> out;
  for (size_t i = 0; i < spans.size(); ++i) {
    const EntitySpan& a = spans[i];
    if (a.kind == SpanKind::kProperNoun) {
      const std::string key = EntityKey(text.substr(a.begin, a.end - a.begin));
      if (!NationalityKey(key).empty()) {
        // "X is a New Zealand illustrator ... by British author Y": the
        // demonym right after "is a"/"was an" is the subject's.
        const std::vector<std::string> before =
            Tokenize(text.substr(a.begin >= 12 ? a.begin - 12 : 0, a.begin >= 12 ? 12 : a.begin),
                     TokenizerOptions{false, false, 64});
        const bool apposed =
            !before.empty() && (before.back() == "a" || before.back() == "an") &&
            before.size() >= 2 &&
            (before[before.size() - 2] == "is" || before[before.size() - 2] == "was");
        for (const char* w : {"nationality", "country", "citizenship"}) {
          out.push_back({w, a.begin, a.end, apposed});
        }
      }
      continue;
    }
    if (a.kind == SpanKind::kNumber) {
      out.push_back({"number", a.begin, a.end});
      const std::string_view span = text.substr(a.begin, a.end - a.begin);
      const size_t space = span.rfind(' ');
      const std::string unit = ToLowerAscii(
          space == std::string_view::npos ? std::string_view() : span.substr(space + 1));
      if (span.back() == '%') out.push_back({"percentage", a.begin, a.end});
      if (span.front() == '$') out.push_back({"cost", a.begin, a.end});
      for (const Unit& u : Units()) {
        if (std::find(u.units.begin(), u.units.end(), unit) == u.units.end()) continue;
        for (std::string_view w : u.words) out.push_back({std::string(w), a.begin, a.end});
      }
      continue;
    }
    if (a.kind != SpanKind::kDate) continue;
    out.push_back({"date", a.begin, a.end});
    out.push_back({"year", a.begin, a.end});
    // "(D1 – D2)" or "(born D1)": a life. The parenthesis opens before D1
    // with nothing but "c.", "born" or a place-free prefix in between.
    const size_t open = text.rfind('(', a.begin);
    if (open == std::string_view::npos || a.begin - open > 40) continue;
    if (text.substr(open, a.begin - open).find(')') != std::string_view::npos) continue;
    const size_t close = text.find(')', a.end);
    if (close == std::string_view::npos) continue;
    // The second date of the same parenthesis, after a dash.
    // The next date of the same parenthesis ("(born 8 November 1913 in
    // Salz, Germany – d. 28 March 2003)": places may come between).
    const EntitySpan* second = nullptr;
    size_t j = i + 1;
    while (j < spans.size() && spans[j].end <= close && spans[j].kind != SpanKind::kDate) ++j;
    if (j < spans.size() && spans[j].kind == SpanKind::kDate && spans[j].end <= close) {
      second = &spans[j];
    }
    bool dash = false;
    if (second != nullptr) {
      for (size_t k = a.end; k < second->begin; ++k) {
        size_t len = 0;
        if (IsDash(text, k, &len)) dash = true;
      }
    } else {
      // "(1909 –)" or "(c. 1466 – 29 June 1520)" with the first part not a
      // span: a dash right after the date still marks a birth.
      for (size_t k = a.end; k < close && k < a.end + 4; ++k) {
        size_t len = 0;
        if (IsDash(text, k, &len)) dash = true;
      }
    }
    if (!dash) continue;
    out.push_back({"born", a.begin, a.end, true});
    out.push_back({"birth", a.begin, a.end, true});
    if (second != nullptr) {
      for (const char* w : {"died", "death", "die"})
        out.push_back({w, second->begin, second->end, true});
      i = static_cast<size_t>(second - spans.data());
    }
  }
  return out;
}

DateValue ParseDate(std::string_view text) {
  DateValue d;
  std::vector<std::string> words = Tokenize(text, TokenizerOptions{false, false, 64});
  // ISO 1961-03-15 tokenises to three numbers.
  int numbers[3] = {0, 0, 0};
  size_t n_numbers = 0;
  bool bc = false;
  for (const std::string& w : words) {
    if (w == "bc" || w == "bce") bc = true;
    if (int m = MonthOf(w);
        m != 0 && d.month == 0 && !std::isdigit(static_cast<unsigned char>(w[0]))) {
      d.month = m;
      continue;
    }
    if (!w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        })) {
      if (n_numbers < 3 && w.size() <= 4) numbers[n_numbers++] = std::stoi(w);
    }
  }
  for (size_t i = 0; i < n_numbers; ++i) {
    const int v = numbers[i];
    if (d.year == 0 && (v > 31 || (n_numbers == 1 && d.month == 0))) {
      d.year = v;
    } else if (v >= 1 && v <= 31 && d.day == 0 && d.month != 0) {
      d.day = v;
    } else if (v >= 1 && v <= 12 && d.month == 0 && d.year != 0) {
      d.month = v;  // ISO month
    } else if (v >= 1 && v <= 31 && d.day == 0 && d.year != 0) {
      d.day = v;
    }
  }
  if (bc) d.year = -d.year;
  return d;
}

std::string NationalityKey(std::string_view name) {
  const std::string key = EntityKey(name);
  if (key.empty()) return "";
  static const auto* map = [] {
    auto* m = new std::unordered_map<std::string_view, std::string_view>;
    for (const Nation& n : kNations) {
      if (!n.country.empty()) {
        m->emplace(n.demonym, n.country);
        m->emplace(n.country, n.country);
      }
    }
    for (const auto& [alias, country] : kCountryAliases) m->emplace(alias, country);
    return m;
  }();
  auto it = map->find(key);
  return it == map->end() ? "" : std::string(it->second);
}

bool IsDemonymWord(std::string_view lower_word) {
  static const auto* set = [] {
    auto* s = new std::unordered_map<std::string_view, bool>;
    for (const Nation& n : kNations) s->emplace(n.demonym, true);
    return s;
  }();
  return set->count(lower_word) > 0;
}

bool IsFileLabel(std::string_view title) {
  bool upper = false, lower = false, digit = false;
  for (unsigned char c : title) {
    if (std::isspace(c) || c >= 0x80) return false;  // several words, or another script
    if (c == '_') return true;
    upper = upper || std::isupper(c);
    lower = lower || std::islower(c);
    digit = digit || std::isdigit(c);
  }
  if (digit) return upper || lower;  // "p2", "IMG0012"; "1929" is a year
  return lower && !upper;            // "table"; "Devotion" and "WWII" are names
}

}  // namespace flowrag
