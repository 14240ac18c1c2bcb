#include "retrieval/keywords.h"

#include "retrieval/persistent_indexes.h"

#include <algorithm>
#include <array>
#include <unordered_set>

#include "common/text.h"
#include "lexical/entity_spans.h"
#include "lexical/names.h"

namespace flowrag {
namespace {

constexpr std::array kQuestionWords = {
    "who",  "whom",  "whose", "what",    "which",   "when",  "where",   "why",     "how",
    "was",  "were",  "is",    "are",     "did",     "does",  "do",      "has",     "had",
    "have", "will",  "would", "can",     "could",   "many",  "much",    "name",    "tell",
    "also", "first", "same",  "both",    "either",  "older", "younger", "earlier", "later",
    "s",    "one",   "known", "located", "whether", "there"};

bool IsContentToken(std::string_view norm) {
  if (norm.empty()) return false;
  std::string lower = ToLowerAscii(norm);
  return !IsStopword(lower) && !IsQuestionWord(lower);
}

void AddUnique(std::string text, std::unordered_set<std::string>* seen,
               std::vector<std::string>* out) {
  while (!text.empty() &&
         (text.back() == '?' || text.back() == '.' || text.back() == ',' || text.back() == ' ')) {
    text.pop_back();
  }
  if (text.empty()) return;
  std::string key = NameKey(text);
  if (key.empty() || !seen->insert(key).second) return;
  out->push_back(std::move(text));
}

bool IsNumericToken(std::string_view raw) {
  return !raw.empty() &&
         std::all_of(raw.begin(), raw.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool IsQuestionWord(std::string_view lower_token) {
  static const auto* set =
      new std::unordered_set<std::string_view>(kQuestionWords.begin(), kQuestionWords.end());
  return set->count(lower_token) > 0;
}

EntityNameMatcher::EntityNameMatcher(const KnowledgeGraph& graph) {
  std::vector<TriePattern> patterns;
  patterns.reserve(graph.num_entities());
  // A document title is also named without its disambiguation: "Brand"
  // names "Brand (play)" in a question. (Patterns are views: the alias
  // strings live until the trie is built.)
  std::vector<std::pair<std::string, uint32_t>> aliases;
  for (uint32_t e = 0; e < graph.num_entities(); ++e) {
    patterns.push_back({graph.EntityName(e), e});
    if (graph.EntityType(e) != "TITLE") continue;
    for (std::string& alias : TitleAliases(graph.EntityName(e)))
      aliases.push_back({std::move(alias), e});
  }
  for (const auto& [alias, e] : aliases) patterns.push_back({alias, e});
  trie_ = TokenTrie::Build(patterns);
}

std::shared_ptr<const EntityNameMatcher> EntityNameMatcher::For(const Snapshot& snapshot) {
  if (snapshot.graph() == nullptr) return nullptr;
  return std::static_pointer_cast<const EntityNameMatcher>(
      snapshot.DerivedFromEntities(Persistence().tag, [&]() -> std::shared_ptr<const void> {
        return std::make_shared<const EntityNameMatcher>(*snapshot.graph());
      }));
}

const PersistentDerived& EntityNameMatcher::Persistence() {
  static const char kTag = 0;
  static const PersistentDerived persistence = PersistentIndexOf<EntityNameMatcher>(&kTag, "nm", 1);
  return persistence;
}

Status EntityNameMatcher::ExportArrays(ArraySink& sink) const {
  return trie_.ExportArrays(sink, "nm.t");
}

Result<std::shared_ptr<const EntityNameMatcher>> EntityNameMatcher::AdoptArrays(
    const Snapshot& snapshot, const ArraySource& source) {
  if (snapshot.graph() == nullptr) return Status::FailedPrecondition("name matcher: no graph");
  auto matcher = std::make_shared<EntityNameMatcher>();
  FLOWRAG_ASSIGN_OR_RETURN(matcher->trie_, TokenTrie::AdoptArrays(source, "nm.t"));
  const size_t entities = snapshot.graph()->num_entities();
  for (uint32_t e : matcher->trie_.all_payloads()) {
    if (e >= entities) {
      return Status::Corruption("name matcher: nm.t.pay holds entity " + std::to_string(e) +
                                " of " + std::to_string(entities));
    }
  }
  return std::shared_ptr<const EntityNameMatcher>(std::move(matcher));
}

EntityNameMatcher::EntityNameMatcher(const std::vector<std::string>& names) {
  std::vector<TriePattern> patterns;
  for (uint32_t i = 0; i < names.size(); ++i) patterns.push_back({names[i], i});
  trie_ = TokenTrie::Build(patterns);
}

QueryKeywords ExtractKeywords(std::string_view query, const EntityNameMatcher* names,
                              const KeywordOptions& options) {
  QueryKeywords out;
  std::unordered_set<std::string> seen;
  TokenizedText text(query);
  // Tokens inside a name or span keyword: not repeated as words ("Billy
  // Elliot" does not also seed "Billy" and "Elliot").
  std::vector<uint8_t> covered(text.size(), 0);

  if (options.entity_names && names != nullptr && !names->trie().empty()) {
    for (const TrieMatch& m : names->trie().Scan(text, MatchMode::kLeftmostLongest)) {
      bool content = false, capitalised = false, numeric = false;
      for (uint32_t t = m.token_begin; t < m.token_end; ++t) {
        content |= IsContentToken(text.norm(t));
        capitalised |= IsCapitalizedToken(text.raw(t));
        numeric |= IsNumericToken(text.raw(t));
      }
      const bool strong = m.token_end - m.token_begin >= 2 || capitalised || numeric;
      if (!content || !strong) continue;
      for (uint32_t e : names->trie().payloads(m.entry)) {
        out.matched_entities.push_back(e);
        if (capitalised) out.proper_entities.push_back(e);
      }
      for (uint32_t t = m.token_begin; t < m.token_end; ++t) covered[t] = 1;
      AddUnique(std::string(query.substr(m.byte_begin, m.byte_end - m.byte_begin)), &seen,
                &out.keywords);
    }
  }
  if (options.spans) {
    for (const EntitySpan& s : DetectEntitySpans(query)) {
      bool content = false;
      for (uint32_t t = s.token_begin; t < s.token_end && t < text.size(); ++t) {
        content |= IsContentToken(text.norm(t));
      }
      if (!content && s.kind == SpanKind::kProperNoun) continue;
      for (uint32_t t = s.token_begin; t < s.token_end && t < text.size(); ++t) covered[t] = 1;
      AddUnique(std::string(query.substr(s.begin, s.end - s.begin)), &seen, &out.keywords);
    }
  }
  out.low_level = out.keywords.size();
  // Content-word runs, cut at stopwords, question words and punctuation
  // other than spaces between tokens.
  std::vector<std::pair<size_t, size_t>> runs;  // [first, last] token indexes
  for (size_t i = 0; i < text.size(); ++i) {
    if (!IsContentToken(text.norm(i)) || covered[i]) continue;
    bool joined = false;
    if (!runs.empty() && runs.back().second + 1 == i) {
      std::string_view gap =
          query.substr(text.token(i - 1).end, text.token(i).begin - text.token(i - 1).end);
      joined = std::all_of(gap.begin(), gap.end(), [](char c) { return c == ' ' || c == '-'; });
    }
    if (joined) {
      runs.back().second = i;
    } else {
      runs.push_back({i, i});
    }
  }
  if (options.phrases) {
    for (auto [a, b] : runs) {
      if (b > a) {
        AddUnique(
            std::string(query.substr(text.token(a).begin, text.token(b).end - text.token(a).begin)),
            &seen, &out.keywords);
      }
    }
  }
  if (options.content_words) {
    for (auto [a, b] : runs) {
      for (size_t i = a; i <= b; ++i) AddUnique(std::string(text.raw(i)), &seen, &out.keywords);
    }
  }
  if (out.keywords.size() > options.max_keywords) out.keywords.resize(options.max_keywords);
  out.low_level = std::min(out.low_level, out.keywords.size());
  for (std::vector<uint32_t>* v : {&out.matched_entities, &out.proper_entities}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  return out;
}

std::vector<std::string> DecomposeQuery(std::string_view query) {
  TokenizedText text(query);
  struct Piece {
    size_t begin, end;  // byte range
    std::string prefix;
  };
  std::vector<Piece> pieces;
  size_t start = 0;
  std::string pending_prefix;
  auto cut = [&](size_t at, std::string next_prefix) {
    pieces.push_back({start, at, pending_prefix});
    pending_prefix = std::move(next_prefix);
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const std::string w = ToLowerAscii(text.norm(i));
    const size_t tb = text.token(i).begin;
    // ';' between tokens.
    if (i > 0) {
      std::string_view gap = query.substr(text.token(i - 1).end, tb - text.token(i - 1).end);
      if (gap.find(';') != std::string_view::npos) {
        cut(text.token(i - 1).end, "");
        start = tb;
      }
    }
    if (i == 0) continue;
    const bool conj = w == "and" || w == "but" || w == "or";
    const bool as_well_as = w == "as" && i + 2 < text.size() &&
                            ToLowerAscii(text.norm(i + 1)) == "well" &&
                            ToLowerAscii(text.norm(i + 2)) == "as";
    const bool relative =
        w == "who" || w == "which" || w == "that" || w == "whose" || w == "whom" || w == "where";
    if (conj || as_well_as) {
      cut(tb, "");
      const size_t skip = as_well_as ? 3 : 1;
      start = i + skip < text.size() ? text.token(i + skip).begin : query.size();
      i += skip - 1;
    } else if (relative) {
      // Antecedent: the content-word run right before the pronoun.
      size_t j = i;
      while (j > 0 && IsContentToken(text.norm(j - 1))) --j;
      std::string antecedent;
      if (j < i) {
        antecedent = std::string(
            query.substr(text.token(j).begin, text.token(i - 1).end - text.token(j).begin));
      }
      cut(tb, antecedent);
      start = i + 1 < text.size() ? text.token(i + 1).begin : query.size();
    }
  }
  pieces.push_back({start, query.size(), pending_prefix});

  std::vector<std::string> out;
  auto has_content = [](std::string_view s) {
    for (const std::string& t : Tokenize(s, {.remove_stopwords = true, .stem = false})) {
      if (!IsQuestionWord(t)) return true;
    }
    return false;
  };
  std::string carry;
  for (const Piece& p : pieces) {
    std::string body(query.substr(p.begin, p.end - p.begin));
    while (!body.empty() && (body.back() == ' ' || body.back() == ',' || body.back() == '?' ||
                             body.back() == '.' || body.back() == ';' || body.back() == ':')) {
      body.pop_back();
    }
    while (!body.empty() && (body.front() == ' ' || body.front() == ',')) body.erase(0, 1);
    std::string piece = p.prefix.empty() ? body : p.prefix + " " + body;
    if (!carry.empty()) piece = carry + " " + piece, carry.clear();
    if (!has_content(body)) {
      // Nothing of its own: merge into the previous piece, or carry forward.
      if (!out.empty()) {
        out.back() += " " + body;
      } else {
        carry = piece;
      }
      continue;
    }
    out.push_back(std::move(piece));
  }
  if (!carry.empty()) {
    if (out.empty())
      out.push_back(carry);
    else
      out.back() += " " + carry;
  }
  if (out.size() <= 1) return {std::string(query)};
  return out;
}

}  // namespace flowrag
