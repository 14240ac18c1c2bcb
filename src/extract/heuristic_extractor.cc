#include "extract/heuristic_extractor.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <unordered_set>
#include <utility>

#include "common/text.h"
#include "lexical/names.h"

namespace flowrag {
namespace {

// Cuts `s` to at most `max` bytes at a UTF-8 code point boundary.
std::string CapUtf8(std::string s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  s.resize(cut);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// A markdown heading line ("# August Pell") at the start of a sentence: the
// heading text and the rest after its newline.
std::pair<std::string_view, std::string_view> SplitHeading(std::string_view s) {
  if (s.empty() || s[0] != '#') return {{}, s};
  size_t nl = s.find('\n');
  std::string_view heading = s.substr(0, nl);
  std::string_view rest = nl == std::string_view::npos ? std::string_view() : s.substr(nl + 1);
  size_t h = 0;
  while (h < heading.size() && (heading[h] == '#' || IsAsciiSpace(heading[h]))) ++h;
  return {heading.substr(h), rest};
}

// Bit i set when token i (i < 64) of a name is capitalised and must be
// capitalised in the text too; a leading "The" need not be ("the Who").
uint64_t CapitalMask(const TokenizedText& t) {
  uint64_t mask = 0;
  for (size_t i = 0; i < t.size() && i < 64; ++i) {
    if (i == 0 && t.norm(0) == "the") continue;
    if (IsCapitalizedToken(t.raw(i))) mask |= uint64_t{1} << i;
  }
  return mask;
}

std::string JoinNorms(const TokenizedText& t, size_t b, size_t e) {
  std::string key;
  for (size_t i = b; i < e; ++i) {
    if (i > b) key.push_back(' ');
    key.append(t.norm(i));
  }
  return key;
}

bool IsLiteralType(std::string_view type) { return type == "DATE" || type == "NUMBER"; }

// Tokens of a name, a leading "the" aside.
size_t ContentTokens(std::string_view name) {
  TokenizedText t(name);
  return t.size() - (t.size() > 1 && t.norm(0) == "the" ? 1 : 0);
}

}  // namespace

// ---------------------------------------------------------------------------
// EntityDictionary

EntityDictionary EntityDictionary::Build(std::span<const KnownName> names) {
  EntityDictionary d;
  std::unordered_map<std::string, uint32_t> entity_by_key;
  std::unordered_set<std::string> seen;  // name key + '\x1f' + entity index
  std::vector<TriePattern> patterns;
  patterns.reserve(names.size());
  for (const KnownName& n : names) {
    std::string_view canonical = n.canonical.empty() ? n.name : n.canonical;
    std::string ckey = NameKey(canonical);
    if (ckey.empty()) continue;
    TokenizedText tokens(n.name);
    if (tokens.empty()) continue;
    auto [it, inserted] = entity_by_key.emplace(ckey, static_cast<uint32_t>(d.entities_.size()));
    if (inserted) {
      d.entities_.push_back({CollapseSpaces(canonical), std::move(ckey), n.type});
    } else if (d.entities_[it->second].type.empty()) {
      d.entities_[it->second].type = n.type;
    }
    std::string nkey = JoinNorms(tokens, 0, tokens.size());
    if (!seen.insert(nkey + '\x1f' + std::to_string(it->second)).second) continue;
    const auto index = static_cast<uint32_t>(d.names_.size());
    d.names_.push_back({it->second, CapitalMask(tokens), static_cast<uint32_t>(tokens.size())});
    const bool linkable = !(tokens.size() == 1 && (nkey.size() < 2 || IsStopword(nkey)));
    d.names_by_key_[std::move(nkey)].push_back(index);
    if (linkable) patterns.push_back({n.name, index});
  }
  d.matcher_ = TokenTrie::Build(patterns);
  return d;
}

std::vector<std::string_view> EntityDictionary::Lookup(std::string_view name) const {
  std::vector<std::string_view> out;
  auto it = names_by_key_.find(NameKey(name));
  if (it == names_by_key_.end()) return out;
  for (uint32_t n : it->second) out.push_back(entities_[names_[n].entity].name);
  return out;
}

// ---------------------------------------------------------------------------
// One passage.

class HeuristicPassageRun {
 public:
  HeuristicPassageRun(const HeuristicExtractorOptions& options, const PassageInput& passage,
                      bool delta)
      : options_(options), passage_(passage), delta_(delta), tokens_(passage.text) {
    sentences_ = SplitSentences(passage.text);
    sentence_tokens_.reserve(sentences_.size());
    sentence_of_token_.assign(tokens_.size(), 0);
    covered_.assign(tokens_.size(), 0);
    for (uint32_t s = 0; s < sentences_.size(); ++s) {
      const size_t b = tokens_.FirstTokenAtOrAfter(sentences_[s].begin);
      const size_t e = tokens_.FirstTokenAtOrAfter(sentences_[s].end);
      sentence_tokens_.emplace_back(b, e);
      for (size_t i = b; i < e; ++i) sentence_of_token_[i] = s;
    }
    title_ = CollapseSpaces(passage.title);
    title_key_ = NameKey(title_);
    if (!title_key_.empty()) {
      title_aliases_ = TitleAliases(title_);
      title_keys_.push_back(title_key_);
      for (const std::string& a : title_aliases_) title_keys_.push_back(NameKey(a));
      Ent t;
      t.key = title_key_;
      t.name = title_;
      t.type = "TITLE";
      t.defining = true;
      entities_.push_back(std::move(t));
      entity_by_key_.emplace(title_key_, 0);
    }
  }

  PassageExtraction Run(const EntityDictionary* base, const EntityDictionary* added,
                        HeuristicExtractStats* stats) {
    DetectSpans();
    FindTitle();
    if (base != nullptr && options_.link_dictionary) Link(*base, /*is_new=*/false, stats);
    AddSpans();
    if (added != nullptr) Link(*added, /*is_new=*/true, stats);
    return Assemble(stats);
  }

 private:
  struct Ent {
    std::string key;
    std::string name;
    std::string type;
    std::vector<std::string> aliases;
    int count = 0;
    bool defining = false;
    bool is_new = false;
    uint32_t first = UINT32_MAX;  // byte offset of the first occurrence
  };
  struct Occ {
    uint32_t begin = 0;
    uint32_t end = 0;
    uint32_t entity = 0;
    uint32_t sentence = 0;
  };

  static uint64_t RangeKey(uint32_t b, uint32_t e) { return (uint64_t{b} << 32) | e; }

  void Cover(uint32_t tb, uint32_t te) {
    for (uint32_t i = tb; i < te; ++i) covered_[i] = 1;
  }

  // A token-level match [tb, te) is a mention when it stays in one sentence,
  // every capitalised token of the name is capitalised in the text, and it is
  // not a lone sentence-initial function word. A match is not a mention when
  // a longer proper-noun span continues it with a capitalised token ("Juan
  // Carlos" in "Juan Carlos Real Ruiz"); "Lothair II" in "Lothair II of
  // Lotharingia" and "Edward the Confessor" in "King Edward the Confessor"
  // are. A name of one content token (a leading "the" aside) is more
  // ambiguous still: it is not a mention inside any longer proper-noun span
  // ("Los" in "Los Angeles", "Princess" in "Princess Diana"), nor, unless it
  // is the passage's own title, at a sentence start when the passage writes
  // the word in lower case elsewhere ("Run by volunteers, ... run").
  bool AcceptMatch(uint32_t tb, uint32_t te, uint64_t capitalised, bool own_title) const {
    if (sentence_of_token_[tb] != sentence_of_token_[te - 1]) return false;
    for (uint32_t k = 0; k < te - tb && k < 64; ++k) {
      if (((capitalised >> k) & 1) != 0 && !IsCapitalizedToken(tokens_.raw(tb + k))) return false;
    }
    const bool sentence_start = tb == sentence_tokens_[sentence_of_token_[tb]].first;
    if (te - tb == 1 && sentence_start && IsSentenceInitialFunctionWord(tokens_.norm(tb))) {
      return false;
    }
    const int32_t last_span = span_of_token_[te - 1];
    if (last_span >= 0 && spans_[last_span].token_end > te && IsCapitalizedToken(tokens_.raw(te))) {
      return false;
    }
    const uint32_t lead = (te - tb > 1 && tokens_.norm(tb) == "the") ? 1 : 0;
    if (te - tb - lead == 1) {
      const uint32_t c = tb + lead;
      const int32_t span = span_of_token_[c];
      if (span >= 0 && (spans_[span].token_begin < tb || spans_[span].token_end > te)) {
        return false;
      }
      if (!own_title && sentence_start && lowercase_words_.count(tokens_.norm(c)) > 0) {
        return false;
      }
    }
    return true;
  }

  uint32_t EntityFor(const std::string& key, std::string_view name, std::string_view type,
                     bool defining, bool is_new) {
    auto [it, inserted] = entity_by_key_.emplace(key, static_cast<uint32_t>(entities_.size()));
    if (inserted) {
      Ent e;
      e.key = key;
      e.name = std::string(name);
      e.type = std::string(type);
      e.defining = defining;
      e.is_new = is_new;
      entities_.push_back(std::move(e));
    } else {
      entities_[it->second].defining |= defining;
    }
    return it->second;
  }

  void AddOcc(uint32_t entity, uint32_t tb, uint32_t byte_begin, uint32_t byte_end) {
    occs_.push_back({byte_begin, byte_end, entity, sentence_of_token_[tb]});
    Ent& e = entities_[entity];
    ++e.count;
    e.first = std::min(e.first, byte_begin);
    std::string surface = CollapseSpaces(passage_.text.substr(byte_begin, byte_end - byte_begin));
    if (NameKey(surface) != e.key && surface != e.name &&
        std::find(e.aliases.begin(), e.aliases.end(), surface) == e.aliases.end()) {
      e.aliases.push_back(std::move(surface));
    }
  }

  bool IsTitleKey(std::string_view key) const {
    return std::find(title_keys_.begin(), title_keys_.end(), key) != title_keys_.end();
  }

  // Occurrences of the passage's own title and its aliases, leftmost-longest.
  // O(tokens · title tokens).
  void FindTitle() {
    if (title_key_.empty() || tokens_.empty()) return;
    std::vector<TokenizedText> forms;
    forms.emplace_back(title_);
    for (const std::string& a : title_aliases_) forms.emplace_back(a);
    std::stable_sort(
        forms.begin(), forms.end(),
        [](const TokenizedText& a, const TokenizedText& b) { return a.size() > b.size(); });
    std::vector<uint64_t> masks;
    for (const TokenizedText& f : forms) masks.push_back(CapitalMask(f));
    const size_t n = tokens_.size();
    for (size_t i = 0; i < n;) {
      size_t matched = 0;
      for (size_t f = 0; f < forms.size() && matched == 0; ++f) {
        const TokenizedText& form = forms[f];
        const size_t len = form.size();
        if (len == 0 || i + len > n) continue;
        bool equal = true;
        for (size_t k = 0; k < len && equal; ++k) equal = tokens_.norm(i + k) == form.norm(k);
        if (!equal) continue;
        const auto tb = static_cast<uint32_t>(i), te = static_cast<uint32_t>(i + len);
        if (!AcceptMatch(tb, te, masks[f], /*own_title=*/true)) continue;
        const uint32_t bb = tokens_.token(tb).begin, be = tokens_.token(te - 1).end;
        AddOcc(0, tb, bb, be);
        Cover(tb, te);
        linked_.insert(RangeKey(bb, be));
        matched = len;
      }
      i += matched > 0 ? matched : 1;
    }
  }

  void Link(const EntityDictionary& dict, bool is_new, HeuristicExtractStats* stats) {
    if (dict.matcher_.empty()) return;
    std::vector<uint32_t> candidates;
    for (const TrieMatch& m : dict.matcher_.Scan(tokens_, MatchMode::kLeftmostLongest)) {
      if (linked_.count(RangeKey(m.byte_begin, m.byte_end)) > 0) continue;
      candidates.clear();
      for (uint32_t payload : dict.matcher_.payloads(m.entry)) {
        const EntityDictionary::Name& name = dict.names_[payload];
        if (!AcceptMatch(m.token_begin, m.token_end, name.capitalised, /*own_title=*/false)) {
          continue;
        }
        if (std::find(candidates.begin(), candidates.end(), name.entity) == candidates.end()) {
          candidates.push_back(name.entity);
        }
      }
      if (candidates.empty()) continue;
      // The passage's own title: counted as the title entity.
      bool own = false;
      for (uint32_t c : candidates) own |= IsTitleKey(dict.entities_[c].key);
      if (own) {
        if (!is_new) AddOcc(0, m.token_begin, m.byte_begin, m.byte_end);
        Cover(m.token_begin, m.token_end);
        linked_.insert(RangeKey(m.byte_begin, m.byte_end));
        continue;
      }
      // A name that is some entity's canonical name means that entity.
      const std::string surface_key = JoinNorms(tokens_, m.token_begin, m.token_end);
      auto exact = std::find_if(candidates.begin(), candidates.end(),
                                [&](uint32_t c) { return dict.entities_[c].key == surface_key; });
      if (exact != candidates.end()) candidates = {*exact};
      if (candidates.size() > options_.max_alias_candidates) continue;
      for (uint32_t c : candidates) {
        const EntityDictionary::Entity& target = dict.entities_[c];
        const uint32_t e = EntityFor(target.key, target.name, target.type, false, is_new);
        AddOcc(e, m.token_begin, m.byte_begin, m.byte_end);
        if (stats != nullptr && (!delta_ || is_new)) ++stats->linked_mentions;
      }
      Cover(m.token_begin, m.token_end);
      linked_.insert(RangeKey(m.byte_begin, m.byte_end));
    }
  }

  // Detects the spans of every sentence; they become entities in AddSpans()
  // after the links, which they must not duplicate.
  void DetectSpans() {
    lowercase_words_ = LowercaseWords(tokens_);
    for (const auto& [b, e] : sentence_tokens_) {
      DetectSentenceSpans(tokens_, b, e, options_.spans, &lowercase_words_, &spans_);
    }
    span_of_token_.assign(tokens_.size(), -1);
    for (size_t k = 0; k < spans_.size(); ++k) {
      if (spans_[k].kind != SpanKind::kProperNoun) continue;
      for (uint32_t i = spans_[k].token_begin; i < spans_[k].token_end; ++i) {
        span_of_token_[i] = static_cast<int32_t>(k);
      }
    }
  }

  void AddSpans() {
    for (const EntitySpan& s : spans_) {
      // Inside a linked name ("Gaby" and "True Story" of the title "Gaby: A
      // True Story"): a fragment, not an entity. Spans that extend a linked
      // name ("Emperor Lothair I" around "Lothair I") stay.
      bool inside = true;
      for (uint32_t i = s.token_begin; i < s.token_end && inside; ++i) inside = covered_[i] != 0;
      if (inside) continue;
      std::string key = JoinNorms(tokens_, s.token_begin, s.token_end);
      if (key.empty()) continue;
      if (IsTitleKey(key)) {
        AddOcc(0, s.token_begin, s.begin, s.end);
        continue;
      }
      std::string surface = CollapseSpaces(passage_.text.substr(s.begin, s.end - s.begin));
      const uint32_t e = EntityFor(key, surface, SpanKindName(s.kind), true, false);
      AddOcc(e, s.token_begin, s.begin, s.end);
    }
  }

  // The title passage's description: its first sentence that is not a
  // heading and not the bare title.
  std::string Description() const {
    for (const TextSpan& s : sentences_) {
      auto [heading, rest] = SplitHeading(passage_.text.substr(s.begin, s.end - s.begin));
      std::string text = CollapseSpaces(rest);
      if (text.empty() || NameKey(text).empty() || NameKey(text) == title_key_) continue;
      return CapUtf8(std::move(text), options_.max_description_bytes);
    }
    return "";
  }

  std::string RelationText(uint32_t s) const {
    auto [heading, rest] = SplitHeading(
        passage_.text.substr(sentences_[s].begin, sentences_[s].end - sentences_[s].begin));
    std::string text = CollapseSpaces(rest);
    if (text.empty()) text = CollapseSpaces(heading);
    return CapUtf8(std::move(text), options_.max_relation_bytes);
  }

  PassageExtraction Assemble(HeuristicExtractStats* stats) {
    PassageExtraction out;
    out.passage_id = passage_.passage_id;
    const bool titled = !title_key_.empty();
    // Entities: the title first, then by first occurrence (creation order on ties).
    std::vector<uint32_t> order(entities_.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin() + (titled ? 1 : 0), order.end(), [&](uint32_t a, uint32_t b) {
      return entities_[a].first < entities_[b].first;
    });
    for (uint32_t i : order) {
      Ent& e = entities_[i];
      if (delta_ && !e.is_new) continue;
      ExtractedEntity x;
      x.name = e.name;
      x.type = e.type;
      x.aliases = std::move(e.aliases);
      x.count = std::max(e.count, 1);
      x.defining = e.defining;
      if (titled && i == 0 && passage_.ordinal == 0) x.description = Description();
      if (stats != nullptr) {
        ++stats->entities;
        if (x.defining) ++stats->defining_entities;
      }
      out.entities.push_back(std::move(x));
    }
    if (out.entities.empty() && delta_) return out;

    // Facts: entity pairs per sentence.
    std::stable_sort(occs_.begin(), occs_.end(), [](const Occ& a, const Occ& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
    });
    std::vector<uint32_t> in_sentence;
    std::vector<size_t> first_occ;  // per in_sentence entry: its first occurrence in occs_
    for (size_t k = 0; k < occs_.size();) {
      const uint32_t s = occs_[k].sentence;
      const size_t sentence_first = k;
      in_sentence.clear();
      first_occ.clear();
      for (; k < occs_.size() && occs_[k].sentence == s; ++k) {
        const uint32_t e = occs_[k].entity;
        if (in_sentence.size() < options_.max_entities_per_sentence &&
            std::find(in_sentence.begin(), in_sentence.end(), e) == in_sentence.end()) {
          in_sentence.push_back(e);
          first_occ.push_back(k);
        }
      }
      EmitPairs(s, sentence_first, &in_sentence, &first_occ, &out);
    }
    if (stats != nullptr) stats->triples += out.triples.size();
    return out;
  }

  void EmitPairs(uint32_t s, size_t sentence_first, std::vector<uint32_t>* ents,
                 std::vector<size_t>* first_occ, PassageExtraction* out) const {
    if (!title_key_.empty() && options_.title_pairs &&
        std::find(ents->begin(), ents->end(), 0u) == ents->end()) {
      ents->insert(ents->begin(), 0u);
      first_occ->insert(first_occ->begin(), SIZE_MAX);  // not in this sentence
    }
    if (ents->size() < 2) return;
    const bool phrase = options_.relation == HeuristicExtractorOptions::Relation::kPhrase;
    std::string sentence;
    for (size_t i = 0; i < ents->size(); ++i) {
      for (size_t j = i + 1; j < ents->size(); ++j) {
        const Ent& a = entities_[(*ents)[i]];
        const Ent& b = entities_[(*ents)[j]];
        if (!options_.pair_literals && IsLiteralType(a.type) && IsLiteralType(b.type)) continue;
        if (delta_ && !a.is_new && !b.is_new) continue;
        // Proximity: the title pairs with everything; others only within the window.
        if (options_.pair_window > 0 && j - i > options_.pair_window && (*ents)[i] != 0 &&
            (*ents)[j] != 0) {
          continue;
        }
        std::string relation;
        if (phrase) {
          // The phrase that introduces whichever of the two comes later.
          const size_t oa = (*first_occ)[i], ob = (*first_occ)[j];
          const size_t later = oa == SIZE_MAX ? ob : std::max(oa, ob);
          relation = RelationPhrase(s, sentence_first, later);
        }
        if (relation.empty()) {
          if (sentence.empty()) sentence = RelationText(s);
          relation = sentence;
        }
        out->triples.push_back({a.name, std::move(relation), b.name});
      }
    }
  }

  // Relation phrase for the occurrence occs_[k] of sentence s (whose
  // occurrences start at occs_[first]): the last `max_relation_words` words
  // of the text between the previous occurrence and this one ("... film
  // directed by" before "Guido Brignone"). A gap of list separators only
  // (", ", " and ") is skipped back over the previous occurrence, so each
  // item of "starring A, B and C" gets "starring". With no words before it,
  // the first words after it up to the next occurrence. Empty when neither
  // exists (the caller then uses the sentence).
  std::string RelationPhrase(uint32_t s, size_t first, size_t k) const {
    const size_t sentence_begin = sentences_[s].begin;
    const size_t sentence_end = sentences_[s].end;
    for (size_t pos = k;; --pos) {
      size_t gap_begin = pos > first ? occs_[pos - 1].end : sentence_begin;
      gap_begin = std::min<size_t>(std::max(gap_begin, sentence_begin), occs_[pos].begin);
      std::string words = ContentWords(gap_begin, occs_[pos].begin, /*last=*/true);
      if (!words.empty()) return words;
      if (pos == first) break;
    }
    size_t gap_end = sentence_end;
    for (size_t n = k + 1; n < occs_.size() && occs_[n].sentence == s; ++n) {
      if (occs_[n].begin >= occs_[k].end) {
        gap_end = occs_[n].begin;
        break;
      }
    }
    return ContentWords(std::min<size_t>(occs_[k].end, gap_end), gap_end, /*last=*/false);
  }

  // The last (or first) max_relation_words whitespace-separated words of
  // text[b, e), trimmed of list punctuation at both ends; empty when the
  // range holds no word with a letter or digit other than "and"/"or".
  std::string ContentWords(size_t b, size_t e, bool last) const {
    std::vector<std::string_view> words;
    std::string_view text(passage_.text);
    size_t i = b;
    while (i < e) {
      while (i < e && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
      size_t j = i;
      while (j < e && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j > i) words.push_back(text.substr(i, j - i));
      i = j;
    }
    auto trim = [](std::string_view w) {
      while (!w.empty() && std::ispunct(static_cast<unsigned char>(w.front()))) w.remove_prefix(1);
      while (!w.empty() && std::ispunct(static_cast<unsigned char>(w.back()))) w.remove_suffix(1);
      return w;
    };
    // Drop separator words at both ends.
    auto separator = [&](std::string_view w) {
      w = trim(w);
      return w.empty() || w == "and" || w == "or";
    };
    while (!words.empty() && separator(words.back())) words.pop_back();
    size_t from = 0;
    while (from < words.size() && separator(words[from])) ++from;
    if (from >= words.size()) return "";
    const size_t n = std::min(options_.max_relation_words, words.size() - from);
    const size_t lo = last ? words.size() - n : from;
    std::string out;
    for (size_t w = lo; w < lo + n; ++w) {
      std::string_view x = words[w];
      if (w == lo) x = trim(x);
      if (w + 1 == lo + n) x = trim(x);
      if (x.empty()) continue;
      if (!out.empty()) out += ' ';
      out += x;
    }
    return CapUtf8(std::move(out), options_.max_relation_bytes);
  }

  const HeuristicExtractorOptions& options_;
  const PassageInput& passage_;
  const bool delta_;
  TokenizedText tokens_;
  std::vector<TextSpan> sentences_;
  std::vector<std::pair<size_t, size_t>> sentence_tokens_;  // token range per sentence
  std::vector<uint32_t> sentence_of_token_;
  std::string title_;
  std::string title_key_;
  std::vector<std::string> title_aliases_;  // TitleAliases(title_)
  std::vector<std::string> title_keys_;     // NameKey of the title and of each alias
  std::vector<Ent> entities_;               // entities_[0] is the title when titled
  std::unordered_map<std::string, uint32_t> entity_by_key_;
  std::vector<Occ> occs_;
  std::unordered_set<uint64_t> linked_;  // byte ranges taken by title and dictionary matches
  std::vector<uint8_t> covered_;         // per token: inside a title or dictionary match
  std::unordered_set<std::string_view> lowercase_words_;  // LowercaseWords(tokens_)
  std::vector<EntitySpan> spans_;                         // detected, in text order
  std::vector<int32_t> span_of_token_;  // per token: its proper-noun span in spans_, or -1
};

// ---------------------------------------------------------------------------
// HeuristicExtractor

Result<HeuristicExtractor> HeuristicExtractor::Create(HeuristicExtractorOptions options) {
  auto bad = [](std::string field, std::string expected) {
    return Status::InvalidArgument("heuristic extractor options: " + field + " must be " +
                                   expected);
  };
  if (options.max_entities_per_sentence < 2) return bad("max_entities_per_sentence", ">= 2");
  if (options.max_relation_bytes < 16) return bad("max_relation_bytes", ">= 16");
  if (options.max_relation_words < 1) return bad("max_relation_words", ">= 1");
  if (options.max_description_bytes < 16) return bad("max_description_bytes", ">= 16");
  if (options.max_alias_candidates < 1) return bad("max_alias_candidates", ">= 1");
  if (options.spans.max_span_tokens < 1) return bad("spans.max_span_tokens", ">= 1");
  return HeuristicExtractor(std::move(options));
}

std::vector<KnownName> HeuristicExtractor::CollectDefiningNames(
    std::span<const PassageInput> passages) const {
  std::vector<KnownName> names;
  std::unordered_set<std::string> seen;
  for (const PassageInput& p : passages) {
    std::string title = CollapseSpaces(p.title);
    if (NameKey(title).empty() || !seen.insert(title).second) continue;
    names.push_back({title, title, "TITLE"});
    if (!options_.title_aliases) continue;
    // A disambiguated title whose base is one word ("Princess (2010 film)")
    // does not lend that word to linking: it names too many other things.
    const bool disambiguated = title.back() == ')';
    for (std::string& alias : TitleAliases(title)) {
      if (disambiguated && ContentTokens(alias) < 2) continue;
      names.push_back({std::move(alias), title, "TITLE"});
    }
  }
  return names;
}

Result<std::vector<PassageExtraction>> HeuristicExtractor::Run(
    std::span<const PassageInput> passages, const EntityDictionary* base,
    const EntityDictionary* added, HeuristicExtractStats* stats) const {
  const auto start = std::chrono::steady_clock::now();
  HeuristicExtractStats local;
  std::vector<PassageExtraction> out;
  out.reserve(added == nullptr ? passages.size() : 0);
  for (const PassageInput& p : passages) {
    size_t bad = 0;
    if (!IsValidUtf8(p.title, &bad)) {
      return Status::InvalidArgument("passage " + std::to_string(p.passage_id) +
                                     ": title is not valid UTF-8 at byte " + std::to_string(bad));
    }
    if (!IsValidUtf8(p.text, &bad)) {
      return Status::InvalidArgument("passage " + std::to_string(p.passage_id) +
                                     ": text is not valid UTF-8 at byte " + std::to_string(bad));
    }
    ++local.passages;
    PassageExtraction x =
        HeuristicPassageRun(options_, p, added != nullptr).Run(base, added, &local);
    if (added != nullptr && x.entities.empty()) continue;
    out.push_back(std::move(x));
  }
  local.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (stats != nullptr) *stats = local;
  return out;
}

Result<std::vector<PassageExtraction>> HeuristicExtractor::Extract(
    std::span<const PassageInput> passages, const EntityDictionary& dictionary,
    HeuristicExtractStats* stats) const {
  return Run(passages, &dictionary, nullptr, stats);
}

Result<std::vector<PassageExtraction>> HeuristicExtractor::ExtractCorpus(
    std::span<const PassageInput> passages, HeuristicExtractStats* stats) const {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<KnownName> names = CollectDefiningNames(passages);
  const EntityDictionary dictionary = EntityDictionary::Build(names);
  auto out = Run(passages, &dictionary, nullptr, stats);
  if (stats != nullptr) {
    stats->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return out;
}

Result<std::vector<PassageExtraction>> HeuristicExtractor::LinkNewNames(
    std::span<const PassageInput> passages, const EntityDictionary& new_names,
    const EntityDictionary* known, HeuristicExtractStats* stats) const {
  if (!options_.link_dictionary) {
    if (stats != nullptr) *stats = HeuristicExtractStats{};
    return std::vector<PassageExtraction>{};
  }
  return Run(passages, known, &new_names, stats);
}

}  // namespace flowrag
