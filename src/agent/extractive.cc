#include "agent/extractive.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "common/text.h"
#include "extract/entity_spans.h"

namespace flowrag {
namespace {

struct ScoredSentence {
  SentenceRef ref;
  double score = 0.0;                // coverage × rank prior
  std::vector<std::string> matched;  // question terms in the sentence text
};

struct Candidate {
  std::string text;
  SpanKind kind = SpanKind::kProperNoun;
  size_t sentence = 0;  // index into the scored sentences
  double best = 0.0;
  double total = 0.0;
};

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

// Byte distance from [b, e) to the nearest occurrence of a matched term.
size_t DistanceToTerms(const std::string& lower_sentence, const std::vector<std::string>& terms,
                       size_t b, size_t e) {
  size_t best = lower_sentence.size();
  for (const std::string& t : terms) {
    for (size_t pos = lower_sentence.find(t); pos != std::string::npos;
         pos = lower_sentence.find(t, pos + 1)) {
      const size_t d = pos + t.size() <= b ? b - (pos + t.size()) : (pos >= e ? pos - e : 0);
      best = std::min(best, d);
    }
  }
  return best;
}

// A question term also matches a different form of the same word: both at
// least 5 bytes and sharing all but their last two ("director"/"directed",
// "married"/"marriage"), at this weight.
constexpr double kStemWeight = 0.8;
// A demonym answers a question that does not ask for one at this weight.
constexpr double kDemonymWeight = 0.3;

const std::string* SameStem(const std::string& term, const std::unordered_set<std::string>& words) {
  if (term.size() < 5) return nullptr;
  for (const std::string& w : words) {
    if (w.size() < 5) continue;
    const size_t need = std::max<size_t>(5, std::min(term.size(), w.size()) - 2);
    size_t common = 0;
    while (common < term.size() && common < w.size() && term[common] == w[common]) ++common;
    if (common >= need) return &w;
  }
  return nullptr;
}

class Extractor {
 public:
  Extractor(std::string_view question, const std::vector<ScoredPassage>& passages,
            const IdfFunction& idf, const std::vector<std::string>& exclude,
            const ExtractiveOptions& options)
      : question_(question),
        passages_(passages),
        options_(options),
        profile_(ProfileQuestion(question)) {
    question_key_ = " " + EntityKey(question) + " ";
    for (const std::string& t : profile_.terms) {
      const double w = idf ? std::max(idf(t), 0.1) : 1.0;
      weight_[t] = w;
      total_weight_ += w;
    }
    for (const std::string& x : exclude) excluded_.insert(EntityKey(x));
  }

  ExtractiveAnswer Run(bool long_form) {
    ScoreSentences();
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
    const ScoredSentence* support =
        FindSentence(out.support.empty() ? SentenceRef{} : out.support.front());
    if (support == nullptr) support = &sentences_.front();
    std::unordered_set<std::string> covered(support->matched.begin(), support->matched.end());
    for (const std::string& t : TitleTerms(support->ref.passage)) covered.insert(t);
    for (const std::string& t : profile_.terms) {
      if (!covered.count(t)) out.unmatched_terms.push_back(t);
    }
    for (size_t i = 0; i < sentences_.size() && out.support.size() < 5; ++i) {
      const SentenceRef& r = sentences_[i].ref;
      if (std::none_of(out.support.begin(), out.support.end(), [&](const SentenceRef& s) {
            return s.passage == r.passage && s.begin == r.begin;
          })) {
        out.support.push_back(r);
      }
    }
    return out;
  }

 private:
  std::vector<std::string> TitleTerms(size_t passage) const {
    return Tokenize(passages_[passage].title);
  }

  void ScoreSentences() {
    const size_t n = std::min(options_.max_passages, passages_.size());
    for (size_t p = 0; p < n; ++p) {
      const std::string& text = passages_[p].text;
      const std::vector<std::string> title = TitleTerms(p);
      const std::unordered_set<std::string> title_set(title.begin(), title.end());
      // A passage about an entity the question names speaks of it in every
      // sentence ("It rises at ..."): its title terms count fully.
      const std::string title_key = EntityKey(passages_[p].title);
      const double title_weight =
          !title_key.empty() && question_key_.find(" " + title_key + " ") != std::string::npos
              ? 1.0
              : options_.title_weight;
      const double prior = 1.0 / (1.0 + options_.rank_decay * static_cast<double>(p));
      for (const TextSpan& s : SplitSentences(text)) {
        if (text[s.begin] == '#') continue;  // a markdown heading: the title, counted above
        ScoredSentence ss;
        ss.ref = {p, static_cast<uint32_t>(s.begin), static_cast<uint32_t>(s.end), 0.0};
        std::unordered_set<std::string> terms;
        for (std::string& t : Tokenize(std::string_view(text).substr(s.begin, s.end - s.begin))) {
          terms.insert(std::move(t));
        }
        double matched = 0.0;
        for (const auto& [t, w] : weight_) {
          if (terms.count(t)) {
            matched += w;
            ss.matched.push_back(t);
          } else if (const std::string* form = SameStem(t, terms)) {
            matched += kStemWeight * w;
            ss.matched.push_back(*form);
          } else if (title_set.count(t)) {
            matched += title_weight * w;
          }
        }
        ss.ref.coverage = total_weight_ > 0 ? matched / total_weight_ : 0.0;
        ss.score = ss.ref.coverage * prior;
        sentences_.push_back(std::move(ss));
      }
      // Spans of this passage, assigned to sentences below.
      spans_[p] = DetectEntitySpans(text);
    }
    std::stable_sort(
        sentences_.begin(), sentences_.end(),
        [](const ScoredSentence& a, const ScoredSentence& b) { return a.score > b.score; });
  }

  bool NamedByQuestion(const std::string& text) const {
    const std::string key = EntityKey(text);
    if (key.empty() || excluded_.count(key)) return true;
    if (question_key_.find(" " + key + " ") != std::string::npos) return true;
    // Every content token already in the question.
    const std::vector<std::string> toks = Tokenize(text);
    if (toks.empty()) return true;
    return std::all_of(toks.begin(), toks.end(),
                       [&](const std::string& t) { return weight_.count(t) > 0; });
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

  // Candidates for the question's answer type and, separately, names
  // (bridges for a follow-up step).
  void RankCandidates() {
    constexpr size_t kSentencesRead = 12;
    std::map<std::string, Candidate> typed, names;
    std::unordered_set<size_t> titled;
    for (size_t i = 0; i < sentences_.size() && i < kSentencesRead; ++i) {
      const ScoredSentence& s = sentences_[i];
      if (s.score <= 0.0) break;
      const std::string& text = passages_[s.ref.passage].text;
      const std::string lower =
          ToLowerAscii(std::string_view(text).substr(s.ref.begin, s.ref.end - s.ref.begin));
      for (const EntitySpan& e : spans_[s.ref.passage]) {
        if (e.begin < s.ref.begin || e.end > s.ref.end) continue;
        std::string span = text.substr(e.begin, e.end - e.begin);
        if (NamedByQuestion(span)) continue;
        const size_t d =
            DistanceToTerms(lower, s.matched, e.begin - s.ref.begin, e.end - s.ref.begin);
        // Sentences that match the question only through their title have
        // no term to be near: a neutral factor.
        const double near =
            s.matched.empty() ? 0.8 : 0.6 + 0.4 / (1.0 + static_cast<double>(d) / 40.0);
        const double demonym = !profile_.wants_demonym && IsDemonym(span) ? kDemonymWeight : 1.0;
        AddCandidate(&typed, span, e.kind, i,
                     s.score * KindFit(profile_.type, e.kind) * near * demonym);
        if (e.kind == SpanKind::kProperNoun) AddCandidate(&names, span, e.kind, i, s.score * near);
      }
      // The passage title names what the passage is about ("Which film ...").
      if (titled.insert(s.ref.passage).second) {
        const std::string& title = passages_[s.ref.passage].title;
        if (!title.empty() && !NamedByQuestion(title)) {
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

  std::vector<std::string> Bridges() const {
    std::vector<std::string> out;
    for (const Candidate& c : names_) {
      if (out.size() == 3) break;
      out.push_back(c.text);
    }
    return out;
  }

  const ScoredSentence* FindSentence(const SentenceRef& r) const {
    for (const ScoredSentence& s : sentences_) {
      if (s.ref.passage == r.passage && s.ref.begin == r.begin && s.ref.end == r.end) return &s;
    }
    return nullptr;
  }

  std::string SentenceText(const SentenceRef& r) const {
    return passages_[r.passage].text.substr(r.begin, r.end - r.begin);
  }

  void Span(ExtractiveAnswer* out) {
    const ScoredSentence& best = sentences_.front();
    if (!typed_.empty() && KindFit(profile_.type, typed_.front().kind) >= 0.5) {
      const Candidate& c = typed_.front();
      const ScoredSentence& s = sentences_[c.sentence];
      out->answer = c.text;
      if (profile_.year_only) {
        const std::string year = YearOf(c.text);
        if (!year.empty()) out->answer = year;
      }
      out->answered = true;
      out->confidence = std::min(1.0, s.ref.coverage * KindFit(profile_.type, c.kind));
      out->support.push_back(s.ref);
      out->reasoning = std::string("a ") + AnswerTypeName(profile_.type) +
                       " question; the best-supported span is in \"" + SentenceText(s.ref) + "\"";
      return;
    }
    // No span of the right kind: the best sentence is the answer.
    out->answer = SentenceText(best.ref);
    out->answered = best.score > 0.0;
    out->confidence = 0.5 * best.ref.coverage;
    out->support.push_back(best.ref);
    out->reasoning = std::string("a ") + AnswerTypeName(profile_.type) +
                     " question; no span of that kind, so the best-supported sentence";
  }

  void YesNo(ExtractiveAnswer* out) {
    const ScoredSentence& best = sentences_.front();
    out->answer = "yes";
    out->answered = best.score > 0.0;
    out->confidence = 0.5 * best.ref.coverage;
    out->support.push_back(best.ref);
    out->reasoning = "a yes/no question; the passages mention what it asks about";
  }

  // The year a passage gives for an option: the first date of the passage's
  // best-covered sentence that has one.
  std::string OptionYear(size_t passage, SentenceRef* where) const {
    for (const ScoredSentence& s : sentences_) {
      if (s.ref.passage != passage) continue;
      for (const EntitySpan& e : spans_.at(passage)) {
        if (e.kind != SpanKind::kDate || e.begin < s.ref.begin || e.end > s.ref.end) continue;
        std::string y =
            YearOf(std::string_view(passages_[passage].text).substr(e.begin, e.end - e.begin));
        if (!y.empty()) {
          *where = s.ref;
          return y;
        }
      }
    }
    return "";
  }

  void Choice(ExtractiveAnswer* out) {
    struct Option {
      size_t passage = SIZE_MAX;  // the best-ranked passage about the option
      std::string year;
      SentenceRef where;
    };
    std::vector<Option> opts(profile_.options.size());
    const size_t n = std::min(options_.max_passages, passages_.size());
    for (size_t o = 0; o < opts.size(); ++o) {
      const std::string key = EntityKey(profile_.options[o]);
      // Prefer a passage titled by the option, then one mentioning it.
      for (int pass = 0; pass < 2 && opts[o].passage == SIZE_MAX; ++pass) {
        for (size_t p = 0; p < n; ++p) {
          const bool hit = pass == 0
                               ? EntityKey(passages_[p].title) == key
                               : (" " + EntityKey(passages_[p].text) + " ").find(" " + key + " ") !=
                                     std::string::npos;
          if (hit) {
            opts[o].passage = p;
            break;
          }
        }
      }
      if (opts[o].passage != SIZE_MAX) opts[o].year = OptionYear(opts[o].passage, &opts[o].where);
    }
    size_t pick = 0;
    const bool dated = profile_.order != 0 && opts.size() == 2 && !opts[0].year.empty() &&
                       !opts[1].year.empty() && opts[0].year != opts[1].year;
    if (dated) {
      const bool first_earlier = opts[0].year < opts[1].year;
      pick = (profile_.order < 0) == first_earlier ? 0 : 1;
      out->reasoning = "a choice question; " + profile_.options[0] + " (" + opts[0].year + ") vs " +
                       profile_.options[1] + " (" + opts[1].year + ")";
    } else {
      for (size_t o = 1; o < opts.size(); ++o) {
        if (opts[o].passage < opts[pick].passage) pick = o;
      }
      out->reasoning = "a choice question without comparable dates; the better-supported option";
    }
    out->answer = profile_.options[pick];
    out->answered = opts[pick].passage != SIZE_MAX;
    out->confidence = dated ? 0.8 : 0.3;
    if (opts[pick].passage != SIZE_MAX) {
      out->support.push_back(!opts[pick].year.empty() ? opts[pick].where
                                                      : SentenceForPassage(opts[pick].passage));
    }
  }

  SentenceRef SentenceForPassage(size_t passage) const {
    for (const ScoredSentence& s : sentences_) {
      if (s.ref.passage == passage) return s.ref;
    }
    return sentences_.front().ref;
  }

  void LongForm(ExtractiveAnswer* out) {
    std::string text;
    for (size_t i = 0; i < sentences_.size() && out->support.size() < options_.long_sentences;
         ++i) {
      const ScoredSentence& s = sentences_[i];
      if (s.score <= 0.0) break;
      if (!text.empty()) text += " ";
      text += SentenceText(s.ref) + " [" + std::to_string(s.ref.passage + 1) + "]";
      out->support.push_back(s.ref);
    }
    out->answered = !text.empty();
    out->answer = out->answered ? text : "Insufficient Information";
    out->confidence = out->answered ? sentences_.front().ref.coverage : 0.0;
    out->reasoning = "the best-supported sentences of the top passages";
  }

  std::string question_;
  const std::vector<ScoredPassage>& passages_;
  const ExtractiveOptions& options_;
  QuestionProfile profile_;
  std::string question_key_;
  std::unordered_map<std::string, double> weight_;
  double total_weight_ = 0.0;
  std::unordered_set<std::string> excluded_;
  std::vector<ScoredSentence> sentences_;
  std::unordered_map<size_t, std::vector<EntitySpan>> spans_;
  std::vector<Candidate> typed_, names_;
};

}  // namespace

ExtractiveAnswer ExtractAnswer(std::string_view question,
                               const std::vector<ScoredPassage>& passages, const IdfFunction& idf,
                               const std::vector<std::string>& exclude,
                               const ExtractiveOptions& options, bool long_form) {
  return Extractor(question, passages, idf, exclude, options).Run(long_form);
}

}  // namespace flowrag
