#include "agent/extractive.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "agent/answer_lexicon.h"
#include "common/text.h"
#include "lexical/aho_corasick.h"
#include "lexical/entity_spans.h"

namespace flowrag {
namespace {

// A question term also matches a different form of the same word: both at
// least 5 bytes, at most 3 apart in length, and sharing all but their last
// two ("director"/"directed", "married"/"marriage"), at this weight.
constexpr double kStemWeight = 0.8;
// A demonym answers a question that does not ask for one at this weight.
constexpr double kDemonymWeight = 0.3;
// Sentences whose spans are candidates.
constexpr size_t kSentencesRead = 12;
// A passive agent of a matched term ("built by the Halloran-Vey Line",
// "founded in 1947 by the conductor Corin Aske") counts as adjacent to it,
// however many words come between. (A bonus above adjacency, 1.1 or 1.25,
// measured 63.6 / 63.0 EM on 2wiki-train with ppr against 63.8.)
constexpr double kAgentBonus = 1.0;
// A name whose last word is a relation term of the question is what the
// question describes by that noun, a step rather than the answer.
constexpr double kDescribedName = 0.5;
// A name ending with the question's answer noun ("Santa Clara County" for
// "Which county ...") names its own kind: its nearness is multiplied by this.
constexpr double kKindNamed = 1.3;
// The parts of "A of B" names count at this factor of the whole.
constexpr double kPartFactor = 0.9;
// A term counts as matched (for bridge links and must-match terms) from this strength.
constexpr double kMatched = 0.5;
// A sentence that matches only the names of the question says nothing about
// what it asks ("Get Low is a 2014 single by Dillon Francis" for "the date
// of birth of the performer of Get Low"): its spans count at this factor.
constexpr double kUnanchored = 0.5;

double KindFit(AnswerType type, SpanKind kind) {
  switch (type) {
    case AnswerType::kDate:
      return kind == SpanKind::kDate ? 1.0 : 0.05;
    case AnswerType::kNumber:
      return kind == SpanKind::kNumber ? 1.0 : 0.05;
    case AnswerType::kName:
      return kind == SpanKind::kProperNoun ? 1.0 : 0.15;
    default:
      return kind == SpanKind::kProperNoun ? 1.0 : 0.5;
  }
}

// The first four-digit year in `s`, or "".
std::string YearOf(std::string_view s) {
  for (size_t i = 0; i + 4 <= s.size(); ++i) {
    if ((i > 0 && std::isdigit(static_cast<unsigned char>(s[i - 1]))) ||
        (i + 4 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 4])))) {
      continue;
    }
    if (std::all_of(s.begin() + i, s.begin() + i + 4,
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      return std::string(s.substr(i, 4));
    }
  }
  return "";
}

// "1,820 seats" → "1,820", "3.7 million inhabitants" → "3.7 million": the
// number without the word it counts.
std::string CountOf(const std::string& span) {
  const size_t space = span.rfind(' ');
  if (space == std::string::npos) return span;
  const std::string last = span.substr(space + 1);
  const bool scale = last == "million" || last == "billion" || last == "thousand" ||
                     last == "hundred" || last == "trillion";
  return scale ? span : span.substr(0, space);
}

bool SameStem(std::string_view term, std::string_view word) {
  if (term.size() < 5 || word.size() < 5) return false;
  // "merrowensis" is not a form of "merrow".
  if (term.size() > word.size() + 3 || word.size() > term.size() + 3) return false;
  const size_t need = std::max<size_t>(5, std::min(term.size(), word.size()) - 2);
  size_t common = 0;
  while (common < term.size() && common < word.size() && term[common] == word[common]) ++common;
  return common >= need;
}

// How strongly passage word `word` matches question term `term`.
double WordMatch(std::string_view term, std::string_view word) {
  if (term == word) return 1.0;
  if (SameStem(term, word)) return kStemWeight;
  return RelatedWordStrength(term, word);
}

// " key " search on a key padded with spaces.
bool HasKey(const std::string& padded, const std::string& key) {
  return !key.empty() && padded.find(" " + key + " ") != std::string::npos;
}

// A title's part before " (" or ", " ("Devotion (1929 film)" → "Devotion").
std::string ShortTitle(std::string_view title) {
  const size_t cut = std::min(title.find(" ("), title.find(", "));
  return std::string(title.substr(0, cut));
}

struct Hit {
  uint32_t term = 0;
  uint32_t begin = 0;  // bytes into the passage text
  uint32_t end = 0;
  double strength = 0.0;
  // An implied word (answer_lexicon.h ImplicitWords): a weak one counts as
  // this many bytes away from its value, so a value next to the written
  // word wins ("96 metres long; its span of 58 metres").
  uint32_t implicit_distance = 0;
  bool implied = false;
};
constexpr uint32_t kWeakImplicitDistance = 10;

struct Sentence {
  size_t passage = 0;
  uint32_t begin = 0;
  uint32_t end = 0;
  std::vector<Hit> hits;     // question terms the text matches (implicit words included)
  std::vector<double> text;  // per term: best hit strength
  std::string key;           // " " + EntityKey(text) + " "
  // Scoring.
  std::vector<double> cover;    // per term: what the score counts (own, or own ∪ link)
  double coverage = 0.0;        // Σ w·cover / Σ w (× chain_weight per hop)
  double score = 0.0;           // coverage × rank prior
  int hops = 0;                 // > 0: chained through a bridge
  std::vector<uint32_t> focus;  // terms candidates should be near
};

struct PassageInfo {
  std::string title_key, short_key;
  bool named = false;         // the question names its title (or `alias`)
  std::string alias;          // the question's other name for the title
  std::vector<double> title;  // per term: title match strength as counted
  std::vector<EntitySpan> spans;
  size_t first = 0, last = 0;  // its sentences: [first, last)
  double prior = 1.0;
  // A link from another sentence (the passage is about a bridge).
  std::vector<double> inherited;
  double link_score = 0.0;
  int hops = 0;
  int via = -1;              // the linking sentence
  std::vector<size_t> path;  // passages the link came through, first first
  bool described = false;    // its title ends with a relation term of the question ("... Garden")
};

struct Candidate {
  std::string text;
  SpanKind kind = SpanKind::kProperNoun;
  size_t sentence = 0;  // index into sentences_
  double best = 0.0;
  double total = 0.0;
};

// What one option of a comparison resolves to.
struct OptionValue {
  std::string value;  // the date or nationality found
  SentenceRef where;
  double score = 0.0;
  bool found = false;
  int hops = 0;                      // bridges the value was reached through
  std::vector<std::string> bridges;  // the sub-question's bridges to retrieve
};

class Extractor {
 public:
  // `required`: terms every scored sentence must cover (a sub-question's subject).
  Extractor(std::string_view question, QuestionProfile profile,
            const std::vector<ScoredPassage>& passages, const IdfFunction& idf,
            const std::vector<std::string>& exclude, const ExtractiveOptions& options,
            const std::vector<std::string>& graph_entities,
            const std::vector<std::string>& required = {})
      : question_(question),
        passages_(passages),
        idf_(idf),
        exclude_(exclude),
        options_(options),
        graph_entities_(graph_entities),
        profile_(std::move(profile)) {
    question_key_ = " " + EntityKey(question) + " ";
    if (profile_.terms.size() > 64) profile_.terms.resize(64);
    for (const std::string& t : profile_.terms) {
      weight_.push_back(idf ? std::max(idf(t), 0.1) : 1.0);
      total_weight_ += weight_.back();
    }
    required_.assign(profile_.terms.size(), false);
    for (const std::string& r : required) {
      for (size_t i = 0; i < profile_.terms.size(); ++i) {
        if (profile_.terms[i] == r) required_[i] = true;
      }
    }
    for (const std::string& x : exclude) excluded_.insert(EntityKey(x));
  }

  ExtractiveAnswer Run(bool long_form) {
    Prepare();
    ExtractiveAnswer out;
    if (sentences_.empty()) {
      out.reasoning = "no passage to read";
      return out;
    }
    RankCandidates();
    out.bridges = Bridges();
    if (long_form) {
      LongForm(&out);
    } else {
      switch (profile_.type) {
        case AnswerType::kYesNo:
          YesNo(&out);
          break;
        case AnswerType::kChoice:
          Choice(&out);
          break;
        default:
          Span(&out);
          break;
      }
    }
    const Sentence* support =
        FindSentence(out.support.empty() ? SentenceRef{} : out.support.front());
    if (support == nullptr) support = &sentences_[order_.front()];
    const bool subject_found =
        std::any_of(info_.begin(), info_.end(), [](const PassageInfo& p) { return p.named; });
    for (size_t i = 0; i < profile_.terms.size(); ++i) {
      // The answer noun ("which town") is what the answer is, and the names
      // of a subject whose passage was found are found: neither is evidence
      // still to look for.
      if (profile_.terms[i] == profile_.answer_noun && out.answered) continue;
      if (subject_[i] && subject_found) continue;
      if (support->cover.empty() || support->cover[i] < kMatched) {
        out.unmatched_terms.push_back(profile_.terms[i]);
      }
    }
    for (size_t k = 0; k < order_.size() && out.support.size() < 5; ++k) {
      const SentenceRef r = Ref(sentences_[order_[k]]);
      if (std::none_of(out.support.begin(), out.support.end(), [&](const SentenceRef& s) {
            return s.passage == r.passage && s.begin == r.begin;
          })) {
        out.support.push_back(r);
      }
    }
    return out;
  }

  // The best candidate of `kind` (a sub-question's value); nullopt if none.
  // The best candidate of `kind` (a sub-question's value); found = false
  // when there is none (bridges still say where to look).
  OptionValue BestOfKind(SpanKind kind, bool nationality) {
    Prepare();
    OptionValue v;
    if (sentences_.empty()) return v;
    RankCandidates();
    v.bridges = Bridges();
    for (const Candidate& c : typed_) {
      if (c.kind != kind) continue;
      if (nationality && NationalityKey(c.text).empty()) continue;
      const Sentence& s = sentences_[c.sentence];
      v.value = c.text;
      v.where = Ref(s);
      v.score = c.total;
      v.found = true;
      v.hops = s.hops;
      break;
    }
    return v;
  }

 private:
  size_t num_terms() const { return profile_.terms.size(); }

  SentenceRef Ref(const Sentence& s) const {
    return {s.passage, s.begin, s.end, std::min(1.0, s.coverage)};
  }

  double Weighted(const std::vector<double>& cover) const {
    double m = 0.0;
    for (size_t i = 0; i < cover.size(); ++i) m += weight_[i] * cover[i];
    return total_weight_ > 0 ? m / total_weight_ : 0.0;
  }

  // ---- Reading the passages --------------------------------------------

  void Prepare() {
    if (prepared_) return;
    prepared_ = true;
    const size_t n = std::min(options_.max_passages, passages_.size());
    info_.resize(n);
    // Subject terms: tokens of the names the question mentions (titles of
    // context passages it names, and its own capitalised spans).
    subject_.assign(num_terms(), false);
    auto mark_subject = [&](std::string_view name) {
      for (const std::string& t : Tokenize(name)) {
        for (size_t i = 0; i < num_terms(); ++i) {
          if (profile_.terms[i] == t) subject_[i] = true;
        }
      }
    };
    for (size_t p = 0; p < n; ++p) {
      PassageInfo& info = info_[p];
      info.title_key = EntityKey(passages_[p].title);
      info.short_key = EntityKey(ShortTitle(passages_[p].title));
      if (info.short_key.size() < 4) info.short_key.clear();
      // Named as a name: "place of birth" in a question is not the passage "Place of birth".
      info.named =
          (HasKey(question_key_, info.title_key) && WrittenAsName(passages_[p].title)) ||
          (HasKey(question_key_, info.short_key) && WrittenAsName(ShortTitle(passages_[p].title)));
      if (info.named) mark_subject(passages_[p].title);
      info.prior = 1.0 / (1.0 + options_.rank_decay * static_cast<double>(p));
    }
    for (const EntitySpan& e : DetectEntitySpans(question_)) {
      if (e.kind != SpanKind::kProperNoun) continue;
      const std::string name = question_.substr(e.begin, e.end - e.begin);
      mark_subject(name);
      // Another name for a passage's title: "Gus Pell" for "August Pell",
      // "Winnie Lusk" for "Edwina Lusk": the passage writes the question's
      // name and its title ends with the same word. ("River Ostrel" in the
      // Ostrel Swing Bridge's passage is a mention, not its name.)
      const std::vector<std::string> name_tokens = NameTokens(name);
      if (name_tokens.size() < 2) continue;
      const std::string name_key = EntityKey(name);
      for (size_t p = 0; p < n; ++p) {
        const std::vector<std::string> title_tokens = NameTokens(ShortTitle(passages_[p].title));
        if (info_[p].named || title_tokens.empty() || title_tokens.back() != name_tokens.back()) {
          continue;
        }
        if (HasKey(" " + EntityKey(passages_[p].text) + " ", name_key)) {
          info_[p].named = true;
          info_[p].alias = name_key;
          mark_subject(passages_[p].title);
        }
      }
    }
    relation_.assign(num_terms(), false);
    for (size_t i = 0; i < num_terms(); ++i) {
      relation_[i] = !subject_[i] && profile_.terms[i] != profile_.answer_noun &&
                     profile_.terms[i] != profile_.answer_modifier;
    }
    // Names say which passages to read; the rest says what is asked.
    total_weight_ = 0.0;
    for (size_t i = 0; i < num_terms(); ++i) {
      if (subject_[i]) weight_[i] *= options_.subject_weight;
      total_weight_ += weight_[i];
    }
    // The primary subject: the named title the question mentions first
    // ("How long is the River Ostrel from its source in the Hallam Hills?"
    // asks about the river). Other named titles count as titles of passages
    // the question does not name.
    size_t first_pos = std::string::npos;
    for (size_t p = 0; p < n; ++p) {
      if (!info_[p].named) continue;
      for (const std::string* key : {&info_[p].title_key, &info_[p].short_key, &info_[p].alias}) {
        if (key->empty()) continue;
        const size_t pos = question_key_.find(" " + *key + " ");
        if (pos < first_pos) {
          first_pos = pos;
          primary_key_ = info_[p].title_key;
        }
      }
    }
    for (size_t p = 0; p < n; ++p) ReadPassage(p);
    Link();
    Score();
  }

  void ReadPassage(size_t p) {
    PassageInfo& info = info_[p];
    const std::string& text = passages_[p].text;
    info.spans = DetectEntitySpans(text);
    // Title terms: fully when the question names the title; at title_weight
    // otherwise, except the terms of names the question mentions, which
    // this passage is not about.
    info.title.assign(num_terms(), 0.0);
    for (const std::string& w : Tokenize(passages_[p].title)) {
      for (size_t i = 0; i < num_terms(); ++i) {
        const double m = WordMatch(profile_.terms[i], w) >= kStemWeight ? 1.0 : 0.0;
        const double f = info.named && info.title_key == primary_key_ ? 1.0
                         : info.named || !subject_[i]                 ? options_.title_weight
                                                                      : 0.0;
        info.title[i] = std::max(info.title[i], m * f);
      }
    }
    if (const std::vector<std::string> head = Tokenize(ShortTitle(passages_[p].title));
        !head.empty()) {
      info.described = DescribedByQuestion(head.back());
    }
    // Words with their offsets, and the implicit words of the text.
    const TokenizedText tokens(text);
    std::vector<Hit> all_hits;
    auto add_hits = [&](std::string_view word, uint32_t b, uint32_t e, uint32_t distance,
                        bool implied) {
      for (size_t i = 0; i < num_terms(); ++i) {
        const double m = WordMatch(profile_.terms[i], word);
        if (m > 0) all_hits.push_back({static_cast<uint32_t>(i), b, e, m, distance, implied});
      }
    };
    for (size_t k = 0; k < tokens.size(); ++k) {
      const std::string_view norm = tokens.norm(k);
      if (IsStopword(norm)) continue;
      add_hits(StemS(norm), tokens.token(k).begin, tokens.token(k).end, 0, false);
    }
    for (const ImplicitWord& w : ImplicitWords(text, info.spans)) {
      add_hits(w.word, w.begin, w.end, w.strong ? 0 : kWeakImplicitDistance, true);
    }
    info.first = sentences_.size();
    for (const TextSpan& s : SplitSentences(text)) {
      if (text[s.begin] == '#') continue;  // a markdown heading: the title, counted above
      Sentence ss;
      ss.passage = p;
      ss.begin = static_cast<uint32_t>(s.begin);
      ss.end = static_cast<uint32_t>(s.end);
      ss.text.assign(num_terms(), 0.0);
      for (const Hit& h : all_hits) {
        if (h.begin < ss.begin || h.end > ss.end) continue;
        ss.hits.push_back(h);
        ss.text[h.term] = std::max(ss.text[h.term], h.strength);
      }
      ss.key = " " + EntityKey(std::string_view(text).substr(s.begin, s.end - s.begin)) + " ";
      sentences_.push_back(std::move(ss));
    }
    info.last = sentences_.size();
  }

  // True unless the question writes `name` in lower case (then it is a
  // common phrase there, "place of birth", not the name of a passage).
  bool WrittenAsName(const std::string& name) const {
    const std::vector<std::string> tokens = NameTokens(name);
    const TokenizedText q(question_);
    for (size_t at = 0; !tokens.empty() && at + tokens.size() <= q.size(); ++at) {
      bool match = true;
      for (size_t k = 0; k < tokens.size() && match; ++k) match = q.norm(at + k) == tokens[k];
      if (!match) continue;
      const std::string_view raw = q.raw(at);
      if (IsCapitalizedToken(raw) || std::isdigit(static_cast<unsigned char>(raw[0]))) return true;
      return false;
    }
    return true;
  }

  // True when `head` (a name's last token, tokenised) is a relation term of
  // the question: the name is what the question describes by that noun.
  bool DescribedByQuestion(const std::string& head) const {
    for (size_t i = 0; i < num_terms(); ++i) {
      if (relation_[i] && profile_.terms[i] == head) return true;
    }
    return false;
  }

  // Own coverage: the sentence's text and its passage's title.
  std::vector<double> Own(const Sentence& s) const {
    std::vector<double> own = s.text;
    const std::vector<double>& title = info_[s.passage].title;
    for (size_t i = 0; i < own.size(); ++i) own[i] = std::max(own[i], title[i]);
    return own;
  }

  bool TermOfName(size_t term, const std::string& name_key) const {
    return HasKey(" " + name_key + " ", profile_.terms[term]);
  }

  // Bridges: a passage about B inherits the coverage of the best sentence
  // elsewhere that mentions B and matches a relation term. Jacobi rounds, one
  // hop each.
  void Link() {
    for (size_t hop = 1; hop <= options_.max_hops; ++hop) {
      std::vector<PassageInfo> next = info_;
      bool changed = false;
      for (size_t p = 0; p < info_.size(); ++p) {
        const PassageInfo& target = info_[p];
        if (target.named || target.title_key.empty() || excluded_.count(target.title_key)) continue;
        for (size_t si = 0; si < sentences_.size(); ++si) {
          const Sentence& s1 = sentences_[si];
          const PassageInfo& from = info_[s1.passage];
          if (s1.passage == p || from.title_key == target.title_key) continue;
          if (std::find(from.path.begin(), from.path.end(), p) != from.path.end()) continue;
          if (!HasKey(s1.key, target.title_key) && !HasKey(s1.key, target.short_key)) continue;
          std::vector<double> cover = Own(s1);
          bool relation = false;
          for (size_t i = 0; i < num_terms(); ++i) {
            if (!relation_[i] ||
                TermOfName(i, target.short_key.empty() ? target.title_key : target.short_key)) {
              continue;
            }
            const double inh = from.inherited.empty() ? 0.0 : from.inherited[i];
            if (s1.text[i] >= kMatched && s1.text[i] > inh) relation = true;
          }
          if (!relation) continue;
          for (size_t i = 0; i < num_terms() && !from.inherited.empty(); ++i) {
            cover[i] = std::max(cover[i], from.inherited[i]);
          }
          const int hops = from.hops + 1;
          double score = Weighted(cover);
          for (int h = 0; h < hops; ++h) score *= options_.chain_weight;
          score *= from.prior * LinkNearness(s1, ShortTitle(passages_[p].title));
          if (score > next[p].link_score) {
            next[p].inherited = std::move(cover);
            next[p].link_score = score;
            next[p].hops = hops;
            next[p].via = static_cast<int>(si);
            next[p].path = from.path;
            next[p].path.push_back(s1.passage);
            changed = true;
          }
        }
      }
      info_ = std::move(next);
      if (!changed) break;
    }
  }

  void Score() {
    for (Sentence& s : sentences_) {
      const PassageInfo& info = info_[s.passage];
      std::vector<double> own = Own(s);
      s.cover = own;
      s.coverage = Weighted(own);
      double prior = info.prior;
      if (!info.inherited.empty()) {
        // The chain only when this sentence adds a relation term its link lacks.
        // Or when the bridge is what the question describes by a noun ("a
        // garden located in which town" and the Vessey Botanical Garden):
        // its passage is about what is asked, whatever the sentence says.
        bool adds = info.described;
        for (size_t i = 0; i < num_terms(); ++i) {
          if (relation_[i] && s.text[i] >= kMatched && s.text[i] > info.inherited[i]) adds = true;
        }
        if (adds) {
          std::vector<double> chained = own;
          for (size_t i = 0; i < num_terms(); ++i) chained[i] = std::max(own[i], info.inherited[i]);
          double c = Weighted(chained);
          for (int h = 0; h < info.hops; ++h) c *= options_.chain_weight;
          // A chain is as well ranked as the best-ranked passage it went
          // through (its anchor, usually the subject's passage).
          double link_prior = 0.0;
          for (size_t q : info.path) link_prior = std::max(link_prior, info_[q].prior);
          if (c * std::max(prior, link_prior) > s.coverage * prior) {
            s.cover = std::move(chained);
            s.coverage = c;
            s.hops = info.hops;
            prior = std::max(prior, link_prior);
          }
        }
      }
      for (size_t i = 0; i < num_terms(); ++i) {
        if (required_[i] && s.cover[i] < kMatched) s.coverage = 0.0;
      }
      s.score = s.coverage * prior;
      // Candidates sit near the terms this sentence itself contributes: for
      // a chain, the ones its link lacks (the attribute asked about B).
      for (const Hit& h : s.hits) {
        if (s.hops > 0 && !(h.strength > info.inherited[h.term])) continue;
        if (std::find(s.focus.begin(), s.focus.end(), h.term) == s.focus.end()) {
          s.focus.push_back(h.term);
        }
      }
    }
    // A bridge whose passage answers better than the sentence naming it is
    // a step of the chain, not the answer.
    for (const Sentence& s : sentences_) {
      if (s.hops > 0) {
        for (const std::string* key : {&info_[s.passage].title_key, &info_[s.passage].short_key}) {
          if (key->empty()) continue;
          double& best = chain_best_[*key];
          best = std::max(best, s.score);
        }
      }
    }
    order_.resize(sentences_.size());
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    std::stable_sort(order_.begin(), order_.end(),
                     [&](size_t a, size_t b) { return sentences_[a].score > sentences_[b].score; });
  }

  // ---- Candidates --------------------------------------------------------

  bool NamedByQuestion(const std::string& text) const {
    const std::string key = EntityKey(text);
    if (key.empty() || excluded_.count(key)) return true;
    if (HasKey(question_key_, key)) return true;
    // Every content token already in the question.
    const std::vector<std::string> toks = Tokenize(text);
    if (toks.empty()) return true;
    return std::all_of(toks.begin(), toks.end(), [&](const std::string& t) {
      return std::find(profile_.terms.begin(), profile_.terms.end(), t) != profile_.terms.end();
    });
  }

  // Title keys of the bridges a chained sentence went through, and each
  // word of their short titles ("Ben" and "Stokes" of "Ben Stokes": a text
  // calls its subject by part of the name).
  std::unordered_set<std::string> ChainTitles(const Sentence& s) const {
    std::unordered_set<std::string> out;
    size_t p = s.passage;
    for (int guard = 0; guard < 4 && !info_[p].inherited.empty(); ++guard) {
      out.insert(info_[p].title_key);
      if (!info_[p].short_key.empty()) out.insert(info_[p].short_key);
      for (std::string& w : NameTokens(ShortTitle(passages_[p].title))) {
        if (w.size() > 2) out.insert(std::move(w));
      }
      p = sentences_[info_[p].via].passage;
    }
    return out;
  }

  // True when [b, e) is the passive agent of the word ending at `word_end`:
  // "built by the Halloran-Vey Line", "founded in 1947 by the conductor X".
  static bool AgentOf(const std::string& text, uint32_t word_end, uint32_t b) {
    if (word_end > b || b - word_end > 48) return false;
    const std::vector<std::string> words = Tokenize(
        std::string_view(text).substr(word_end, b - word_end), TokenizerOptions{false, false, 64});
    const auto by = std::find(words.begin(), words.end(), "by");
    return by != words.end() && words.end() - by <= 3 && words.size() <= 6;
  }

  static double Nearness(size_t distance) {
    return 0.6 + 0.4 / (1.0 + static_cast<double>(distance) / 40.0);
  }

  // How closely a link sentence ties the bridge `name` to a relation term:
  // "directed by Melville W. Brown and starring William Cagney" links the
  // director, not the actor. Nearness of the name's first mention to the
  // nearest relation hit (1.25 for a passive agent); 0.8 when the text does
  // not write the name as the title does.
  double LinkNearness(const Sentence& s1, const std::string& name) const {
    const std::string& text = passages_[s1.passage].text;
    const std::string lower =
        ToLowerAscii(std::string_view(text).substr(s1.begin, s1.end - s1.begin));
    const size_t at = lower.find(ToLowerAscii(name));
    if (name.empty() || at == std::string::npos) return 0.8;
    const uint32_t b = s1.begin + static_cast<uint32_t>(at);
    const uint32_t e = b + static_cast<uint32_t>(name.size());
    size_t best = SIZE_MAX;
    for (const Hit& h : s1.hits) {
      if (!relation_[h.term] || h.strength < kMatched || (h.begin >= b && h.end <= e)) continue;
      if (AgentOf(text, h.end, b)) return kAgentBonus;
      best = std::min<size_t>(best, h.end <= b ? b - h.end : (h.begin >= e ? h.begin - e : 0));
    }
    return best == SIZE_MAX ? 0.8 : Nearness(best);
  }

  // Nearness of [b, e) to the sentence's focus hits, in (0, kAgentBonus].
  double Near(const Sentence& s, uint32_t b, uint32_t e) const {
    const std::string& text = passages_[s.passage].text;
    size_t best = SIZE_MAX;
    bool agent = false;
    for (const Hit& h : s.hits) {
      if (std::find(s.focus.begin(), s.focus.end(), h.term) == s.focus.end()) continue;
      // A word inside the candidate names it ("Cannes Film Festival" for
      // "film"); it is not next to it. An implied word sits on its value.
      if (!h.implied && h.begin >= b && h.end <= e) continue;
      const size_t d =
          h.implicit_distance + (h.end <= b ? b - h.end : (h.begin >= e ? h.begin - e : 0));
      best = std::min(best, d);
      agent |= AgentOf(text, h.end, b);
    }
    if (best == SIZE_MAX) {
      // Nothing to be near: a passage's lead states what it is about (the
      // kind of thing, where, when), so earlier sentences count more.
      const size_t index = static_cast<size_t>(&s - &sentences_[info_[s.passage].first]);
      return 0.8 / (1.0 + 0.1 * static_cast<double>(index));
    }
    return agent ? kAgentBonus : Nearness(best);
  }

  void AddCandidate(std::map<std::string, Candidate>* into, std::string text, SpanKind kind,
                    size_t sentence, double score) {
    if (score <= 0.0) return;
    Candidate& c = (*into)[EntityKey(text)];
    c.total += score;
    if (score > c.best) {
      c.best = score;
      c.text = std::move(text);
      c.kind = kind;
      c.sentence = sentence;
    }
  }

  // Candidates for the question's answer type and, separately, names that
  // link onwards (bridges for a follow-up step).
  void RankCandidates() {
    if (ranked_) return;
    ranked_ = true;
    std::map<std::string, Candidate> typed, names;
    std::unordered_set<size_t> titled;
    for (size_t k = 0; k < order_.size() && k < kSentencesRead; ++k) {
      const size_t i = order_[k];
      const Sentence& s = sentences_[i];
      if (s.score <= 0.0) break;
      const std::string& text = passages_[s.passage].text;
      const std::unordered_set<std::string> chain =
          s.hops > 0 ? ChainTitles(s) : std::unordered_set<std::string>{};
      bool relation = false;  // a relation term matched in the text: its names are bridges
      for (const Hit& h : s.hits) relation |= relation_[h.term] && h.strength >= kMatched;
      // A relation term among the terms candidates are measured against (a
      // described bridge's passage is anchored by its link).
      bool anchored = s.hops > 0 && info_[s.passage].described;
      for (uint32_t t : s.focus) anchored |= !subject_[t];
      const double anchor = anchored ? 1.0 : kUnanchored;
      // One span [b, e) of kind `kind`, its score times `factor`.
      auto consider = [&](uint32_t b, uint32_t e, SpanKind kind, double factor) {
        std::string span = text.substr(b, e - b);
        if (NamedByQuestion(span) || chain.count(EntityKey(span))) return;
        // A bridge its own passage goes beyond (by more than one hop's discount).
        if (auto it = chain_best_.find(EntityKey(span));
            it != chain_best_.end() && it->second >= s.score * options_.chain_weight) {
          return;
        }
        double near = Near(s, b, e) * factor;
        if (kind == SpanKind::kProperNoun) {
          // "Vessey Botanical Garden" for "a garden located in which town":
          // the garden, not the town.
          if (const std::vector<std::string> head = Tokenize(span); !head.empty()) {
            if (DescribedByQuestion(head.back())) near *= kDescribedName;
            // "Santa Clara County" for "Which county ...": of the kind asked.
            if (head.back() == profile_.answer_noun) near *= kKindNamed;
          }
        }
        // A demonym answers only questions that ask for a nationality or
        // country, and those are answered by one (or a country's name).
        const double demonym = profile_.wants_demonym
                                   ? (NationalityKey(span).empty() ? kDemonymWeight : 1.0)
                               : IsDemonym(span) ? kDemonymWeight
                                                 : 1.0;
        AddCandidate(&typed, span, kind, i,
                     s.score * KindFit(profile_.type, kind) * near * demonym * anchor);
        if (kind == SpanKind::kProperNoun && relation && demonym == 1.0) {
          AddCandidate(&names, span, kind, i, s.score * near);
        }
      };
      for (const EntitySpan& e : info_[s.passage].spans) {
        if (e.begin < s.begin || e.end > s.end) continue;
        consider(e.begin, e.end, e.kind, 1.0);
        if (e.kind != SpanKind::kProperNoun) continue;
        // "SS Marlin of the Halloran-Vey Line" may be two names: each part
        // is a candidate too, a little below the whole.
        const std::string_view span = std::string_view(text).substr(e.begin, e.end - e.begin);
        for (std::string_view sep : {" of the ", " of "}) {
          const size_t at = span.find(sep);
          if (at == std::string_view::npos) continue;
          const uint32_t right = e.begin + static_cast<uint32_t>(at + sep.size());
          if (right < e.end && std::isupper(static_cast<unsigned char>(text[right]))) {
            consider(e.begin, e.begin + static_cast<uint32_t>(at), SpanKind::kProperNoun,
                     kPartFactor);
            consider(right, e.end, SpanKind::kProperNoun, kPartFactor);
          }
          break;
        }
      }
      // The passage title names what the passage is about ("Which film ..."),
      // unless the sentence names it already (that span is the candidate).
      if (s.hops == 0 && titled.insert(s.passage).second) {
        const std::string& title = passages_[s.passage].title;
        if (!title.empty() && !IsFileLabel(title) && !NamedByQuestion(title) &&
            !HasKey(s.key, info_[s.passage].title_key)) {
          const double score = 0.8 * s.score * KindFit(profile_.type, SpanKind::kProperNoun);
          AddCandidate(&typed, title, SpanKind::kProperNoun, i, score);
        }
      }
    }
    auto rank = [&](std::map<std::string, Candidate>& m) {
      std::vector<Candidate> v;
      for (auto& [key, c] : m) v.push_back(std::move(c));
      for (Candidate& c : v) c.total = c.best + options_.repeat_weight * (c.total - c.best);
      std::stable_sort(v.begin(), v.end(),
                       [](const Candidate& a, const Candidate& b) { return a.total > b.total; });
      return v;
    };
    typed_ = rank(typed);
    names_ = rank(names);
  }

  // Names the best sentences link to with a relation term that no passage
  // of the context is about. Those whose link scores at least half the best
  // one's are plausible; among them the graph's order decides (the entity
  // the retrieval scored highest), then the text's.
  std::vector<std::string> Bridges() const {
    std::vector<const Candidate*> unresolved;
    for (const Candidate& c : names_) {
      const std::string key = EntityKey(c.text);
      const bool has_passage = std::any_of(info_.begin(), info_.end(), [&](const PassageInfo& p) {
        return p.title_key == key || p.short_key == key;
      });
      if (!has_passage) unresolved.push_back(&c);
    }
    if (unresolved.empty()) return {};
    const double floor = 0.5 * unresolved.front()->total;
    auto graph_rank = [&](const Candidate* c) {
      const std::string key = EntityKey(c->text);
      for (size_t g = 0; g < graph_entities_.size(); ++g) {
        if (EntityKey(graph_entities_[g]) == key) return g;
      }
      return graph_entities_.size();
    };
    std::stable_sort(unresolved.begin(), unresolved.end(),
                     [&](const Candidate* a, const Candidate* b) {
                       const bool pa = a->total >= floor, pb = b->total >= floor;
                       if (pa != pb) return pa;
                       return pa && graph_rank(a) < graph_rank(b);
                     });
    std::vector<std::string> out;
    for (const Candidate* c : unresolved) {
      if (out.size() == 3) break;
      out.push_back(c->text);
    }
    return out;
  }

  const Sentence* FindSentence(const SentenceRef& r) const {
    for (const Sentence& s : sentences_) {
      if (s.passage == r.passage && s.begin == r.begin && s.end == r.end) return &s;
    }
    return nullptr;
  }

  std::string SentenceText(const SentenceRef& r) const {
    return passages_[r.passage].text.substr(r.begin, r.end - r.begin);
  }

  std::string BridgeOf(const Sentence& s) const {
    return s.hops > 0 ? passages_[s.passage].title : "";
  }

  // ---- Answer kinds ------------------------------------------------------

  void Span(ExtractiveAnswer* out) {
    const Sentence& best = sentences_[order_.front()];
    if (!typed_.empty() && KindFit(profile_.type, typed_.front().kind) >= 0.5) {
      const Candidate& c = typed_.front();
      const Sentence& s = sentences_[c.sentence];
      out->answer = c.text;
      if (profile_.year_only) {
        const std::string year = YearOf(c.text);
        if (!year.empty()) out->answer = year;
      }
      if (profile_.counts && c.kind == SpanKind::kNumber) out->answer = CountOf(c.text);
      out->answered = true;
      out->confidence = std::min(1.0, s.coverage * KindFit(profile_.type, c.kind));
      out->support.push_back(Ref(s));
      // Then the links it came through, answer side first.
      for (size_t p = s.passage; s.hops > 0 && !info_[p].inherited.empty() &&
                                 out->support.size() <= static_cast<size_t>(s.hops);) {
        const Sentence& link = sentences_[info_[p].via];
        out->support.push_back(Ref(link));
        p = link.passage;
      }
      out->evidence = out->support.size();
      out->bridge_used = BridgeOf(s);
      out->reasoning = std::string("a ") + AnswerTypeName(profile_.type) + " question; ";
      if (!out->bridge_used.empty()) {
        out->reasoning += "through the bridge " + out->bridge_used + ", ";
      }
      out->reasoning += "the best-supported span is in \"" + SentenceText(Ref(s)) + "\"";
      return;
    }
    // No span of the right kind: the best sentence is the answer.
    out->answer = SentenceText(Ref(best));
    out->answered = best.score > 0.0;
    out->confidence = 0.5 * std::min(1.0, best.coverage);
    out->support.push_back(Ref(best));
    out->reasoning = std::string("a ") + AnswerTypeName(profile_.type) +
                     " question; no span of that kind, so the best-supported sentence";
  }

  // A sub-question about one entity: this question with `option` in place
  // of the compared pair, its type `type`, its subject's terms required.
  // `terms`: the sub-question's terms when given, else the question's.
  OptionValue Resolve(const std::string& option, const std::string& sub_question, AnswerType type,
                      const std::vector<std::string>& drop,
                      const std::vector<std::string>& terms = {}) {
    QuestionProfile sub = profile_;
    sub.type = type;
    sub.options.clear();
    sub.terms.clear();
    const std::vector<std::string> own = Tokenize(option);
    for (const std::string& t : terms.empty() ? profile_.terms : terms) {
      const bool mine = std::find(own.begin(), own.end(), t) != own.end();
      if (mine || std::find(drop.begin(), drop.end(), t) == drop.end()) sub.terms.push_back(t);
    }
    for (const std::string& t : own) {
      if (std::find(sub.terms.begin(), sub.terms.end(), t) == sub.terms.end())
        sub.terms.push_back(t);
    }
    // Required: the names inside the option ("the orchestra that plays at
    // the Lantern Tide Festival" → Lantern Tide Festival), else all of it.
    std::vector<std::string> required;
    for (const EntitySpan& e : DetectEntitySpans(option)) {
      if (e.kind != SpanKind::kProperNoun) continue;
      for (std::string& t : Tokenize(std::string_view(option).substr(e.begin, e.end - e.begin))) {
        required.push_back(std::move(t));
      }
    }
    if (required.empty()) required = own;
    Extractor x(sub_question, std::move(sub), passages_, idf_, exclude_, options_, graph_entities_,
                required);
    const bool nationality = type == AnswerType::kName;
    return x.BestOfKind(nationality ? SpanKind::kProperNoun : SpanKind::kDate, nationality);
  }

  // The terms of "What nationality is X?" asked within this question: its
  // terms but the demonyms it asks about, and "nationality".
  std::vector<std::string> NationalityTerms() const {
    std::vector<std::string> out;
    for (const std::string& t : profile_.terms) {
      if (!IsDemonymWord(t)) out.push_back(t);
    }
    out.push_back("nationality");
    return out;
  }

  // The question with `keep` in place of the span [b, e) holding both options.
  std::string SubQuestion(size_t b, size_t e, const std::string& keep) const {
    return question_.substr(0, b) + keep + question_.substr(e);
  }

  void YesNo(ExtractiveAnswer* out) {
    const Sentence& best = sentences_[order_.front()];
    out->answer = "yes";
    out->answered = best.score > 0.0;
    out->confidence = 0.5 * std::min(1.0, best.coverage);
    out->support.push_back(Ref(best));
    out->reasoning = "a yes/no question; the passages mention what it asks about";
    // "Are A and B from the same country?", "Are A and B both American?"
    const bool both = !profile_.asked_nationality.empty() &&
                      (" " + EntityKey(question_) + " ").find(" both ") != std::string::npos;
    if (!profile_.same_nationality && !both) return;
    const std::vector<std::string> entities = ComparedEntities();
    if (entities.size() != 2) return;
    OptionValue v[2];
    for (int k = 0; k < 2; ++k) {
      std::vector<std::string> drop = Tokenize(entities[1 - k]);
      // "Are A and B from the same country?" → "What nationality is A?"
      v[k] = Resolve(entities[k], "What nationality is " + entities[k] + "?", AnswerType::kName,
                     drop, NationalityTerms());
      if (!v[k].found) {
        out->bridges = v[k].bridges;  // where an iterative pipeline may find it
        return;
      }
    }
    const std::string k0 = NationalityKey(v[0].value), k1 = NationalityKey(v[1].value);
    const bool same = profile_.same_nationality
                          ? k0 == k1
                          : k0 == profile_.asked_nationality && k1 == profile_.asked_nationality;
    out->answer = same ? "yes" : "no";
    out->confidence = 0.7;
    out->support = {v[0].where, v[1].where};
    out->evidence = 2;
    out->reasoning = "a same-nationality question; " + entities[0] + ": " + v[0].value + ", " +
                     entities[1] + ": " + v[1].value;
  }

  // The two entities a yes/no question compares: titles of context
  // passages it names (longest first, not overlapping), then its own
  // capitalised spans, in question order.
  std::vector<std::string> ComparedEntities() const {
    struct Found {
      size_t pos;
      std::string name;
    };
    std::vector<Found> found;
    const std::string lower = " " + EntityKey(question_) + " ";
    auto overlaps = [&](size_t pos, size_t len) {
      return std::any_of(found.begin(), found.end(), [&](const Found& f) {
        const size_t flen = EntityKey(f.name).size() + 2;
        return pos < f.pos + flen && f.pos < pos + len + 2;
      });
    };
    std::vector<std::string> titles;
    for (size_t p = 0; p < info_.size(); ++p) {
      if (info_[p].named) titles.push_back(passages_[p].title);
    }
    std::stable_sort(titles.begin(), titles.end(), [](const std::string& a, const std::string& b) {
      return a.size() > b.size();
    });
    for (const std::string& t : titles) {
      for (const std::string& key : {EntityKey(t), EntityKey(ShortTitle(t))}) {
        const size_t pos = key.size() < 4 ? std::string::npos : lower.find(" " + key + " ");
        if (pos != std::string::npos && !overlaps(pos, key.size())) {
          found.push_back({pos, t});
          break;
        }
      }
    }
    for (const EntitySpan& e : DetectEntitySpans(question_)) {
      if (e.kind != SpanKind::kProperNoun) continue;
      const std::string name = question_.substr(e.begin, e.end - e.begin);
      const std::string key = EntityKey(name);
      if (!NationalityKey(key).empty()) continue;  // "both American": the value, not an entity
      const size_t pos = lower.find(" " + key + " ");
      if (pos != std::string::npos && !overlaps(pos, key.size())) found.push_back({pos, name});
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const Found& a, const Found& b) { return a.pos < b.pos; });
    std::vector<std::string> out;
    for (const Found& f : found) out.push_back(f.name);
    return out;
  }

  // The best-ranked passage about an option: titled by it, else mentioning it.
  size_t OptionPassage(const std::string& option) const {
    const std::string key = EntityKey(option);
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t p = 0; p < info_.size(); ++p) {
        const bool hit = pass == 0 ? info_[p].title_key == key
                                   : HasKey(" " + EntityKey(passages_[p].text) + " ", key);
        if (hit) return p;
      }
    }
    return SIZE_MAX;
  }

  // Dates to compare, as days since year 0 (months and days when both sides
  // have them).
  static void Comparable(DateValue* a, DateValue* b) {
    if (a->month == 0 || b->month == 0) a->month = b->month = 0;
    if (a->day == 0 || b->day == 0) a->day = b->day = 0;
  }
  static double Days(const DateValue& d) { return d.year * 372.0 + d.month * 31.0 + d.day; }

  void Choice(ExtractiveAnswer* out) {
    const std::vector<std::string>& opts = profile_.options;
    // Where the pair sits in the question, to write each option's sub-question.
    const size_t b = question_.find(opts[0]);
    const size_t last = question_.rfind(opts[1]);
    const bool placed = b != std::string::npos && last != std::string::npos && last > b;
    if ((profile_.order != 0 || profile_.lifespan != 0) && placed) {
      const size_t e = last + opts[1].size();
      OptionValue v[2];
      double key[2] = {0, 0};  // what is compared: a date, or a length of life
      std::string shown[2];
      bool ok = true;
      for (int k = 0; k < 2; ++k) {
        const std::string sub = SubQuestion(b, e, opts[k]);
        const std::vector<std::string> drop = Tokenize(opts[1 - k]);
        if (profile_.lifespan != 0) {
          // "Who lived longer?": death minus birth.
          OptionValue born = Resolve(opts[k], sub, AnswerType::kDate, drop, {"born"});
          OptionValue died = Resolve(opts[k], sub, AnswerType::kDate, drop, {"died"});
          DateValue d0 = ParseDate(born.value), d1 = ParseDate(died.value);
          Comparable(&d0, &d1);
          ok &= born.found && died.found && d0.ok() && d1.ok() && d0 < d1;
          v[k] = died;
          v[k].bridges = born.found ? died.bridges : born.bridges;
          key[k] = profile_.lifespan * (Days(d1) - Days(d0));
          shown[k] = born.value + " - " + died.value;
        } else {
          v[k] = Resolve(opts[k], sub, AnswerType::kDate, drop);
          ok &= v[k].found && ParseDate(v[k].value).ok();
          shown[k] = v[k].value;
        }
      }
      // Both values must be reached the same way: the film's own date
      // against the other film's director's birth compares nothing.
      if (ok && v[0].hops != v[1].hops) {
        out->bridges = v[v[0].hops < v[1].hops ? 0 : 1].bridges;
        ok = false;
      } else if (!ok) {
        out->bridges = v[0].found ? v[1].bridges : v[0].bridges;
      }
      if (ok && profile_.lifespan == 0) {
        DateValue d0 = ParseDate(v[0].value), d1 = ParseDate(v[1].value);
        Comparable(&d0, &d1);
        key[0] = profile_.order * Days(d0);  // the larger key wins
        key[1] = profile_.order * Days(d1);
      }
      if (ok && key[0] != key[1]) {
        const size_t pick = key[0] > key[1] ? 0 : 1;
        out->answer = opts[pick];
        out->answered = true;
        out->confidence = 0.8;
        out->support = {v[pick].where, v[1 - pick].where};
        out->evidence = 2;
        out->reasoning = "a choice question; " + opts[0] + " (" + shown[0] + ") vs " + opts[1] +
                         " (" + shown[1] + ")";
        return;
      }
    }
    // "Which singer is American, A or B?": the option of that nationality.
    if (profile_.order == 0 && profile_.lifespan == 0 && !profile_.asked_nationality.empty() &&
        placed) {
      OptionValue v[2];
      bool match[2];
      for (int k = 0; k < 2; ++k) {
        v[k] = Resolve(opts[k], "What nationality is " + opts[k] + "?", AnswerType::kName,
                       Tokenize(opts[1 - k]), NationalityTerms());
        match[k] = v[k].found && NationalityKey(v[k].value) == profile_.asked_nationality;
      }
      if (match[0] != match[1] && v[0].found && v[1].found) {
        const size_t pick = match[0] ? 0 : 1;
        out->answer = opts[pick];
        out->answered = true;
        out->confidence = 0.7;
        out->support = {v[pick].where, v[1 - pick].where};
        out->evidence = 2;
        out->reasoning = "a choice by nationality; " + opts[0] + ": " + v[0].value + ", " +
                         opts[1] + ": " + v[1].value;
        return;
      }
    }
    // Without comparable dates: the better-supported option.
    size_t pick = 0;
    size_t where[2] = {OptionPassage(opts[0]), OptionPassage(opts[1])};
    if (where[1] < where[0]) pick = 1;
    out->answer = opts[pick];
    out->answered = where[pick] != SIZE_MAX;
    out->confidence = 0.3;
    out->reasoning = "a choice question without comparable dates; the better-supported option";
    if (where[pick] != SIZE_MAX) out->support.push_back(SentenceOf(where[pick]));
  }

  SentenceRef SentenceOf(size_t passage) const {
    for (size_t i : order_) {
      if (sentences_[i].passage == passage) return Ref(sentences_[i]);
    }
    return Ref(sentences_[order_.front()]);
  }

  void LongForm(ExtractiveAnswer* out) {
    std::string text;
    for (size_t k = 0; k < order_.size() && out->support.size() < options_.long_sentences; ++k) {
      const Sentence& s = sentences_[order_[k]];
      if (s.score <= 0.0) break;
      if (!text.empty()) text += " ";
      text += SentenceText(Ref(s)) + " [" + std::to_string(s.passage + 1) + "]";
      out->support.push_back(Ref(s));
    }
    out->answered = !text.empty();
    out->answer = out->answered ? text : "Insufficient Information";
    out->confidence = out->answered ? std::min(1.0, sentences_[order_.front()].coverage) : 0.0;
    out->reasoning = "the best-supported sentences of the top passages";
  }

  std::string question_;
  const std::vector<ScoredPassage>& passages_;
  const IdfFunction& idf_;
  const std::vector<std::string>& exclude_;
  const ExtractiveOptions& options_;
  const std::vector<std::string>& graph_entities_;
  QuestionProfile profile_;
  std::string question_key_;
  std::vector<double> weight_;
  double total_weight_ = 0.0;
  std::vector<bool> required_;
  std::vector<bool> subject_;   // the term is part of a name the question mentions
  std::vector<bool> relation_;  // neither a name's term nor the answer's noun
  std::string primary_key_;     // title key of the named entity mentioned first
  // Per bridge title key: the best score of a sentence chained through it.
  std::unordered_map<std::string, double> chain_best_;
  std::unordered_set<std::string> excluded_;
  bool prepared_ = false;
  bool ranked_ = false;
  std::vector<PassageInfo> info_;
  std::vector<Sentence> sentences_;
  std::vector<size_t> order_;  // sentence indexes, best first
  std::vector<Candidate> typed_, names_;
};

}  // namespace

ExtractiveAnswer ExtractAnswer(std::string_view question,
                               const std::vector<ScoredPassage>& passages, const IdfFunction& idf,
                               const std::vector<std::string>& exclude,
                               const ExtractiveOptions& options, bool long_form,
                               const std::vector<std::string>& graph_entities) {
  return Extractor(question, ProfileQuestion(question), passages, idf, exclude, options,
                   graph_entities)
      .Run(long_form);
}

}  // namespace flowrag
