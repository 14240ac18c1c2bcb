// Query keywords and sub-queries, offline (QAFD-RAG §2.2: the keyword map
// g : Q → 2^W; §2.2 "Extension to Multi-Subquery Formulation").
//
// The paper obtains keywords and sub-queries by prompting an LLM (A4.3,
// Prompt 5). This module is the deterministic offline path DESIGN.md asks
// for; a ChatModel-based path can be layered on top later (it would produce
// the same two outputs).
//
// Keywords, in this order, deduplicated case-insensitively:
//   1. known entity names found in the query (token trie over the graph's
//      entity names, leftmost-longest; a match must contain a capitalised
//      or numeric token, or have at least two tokens, and not consist of
//      stopwords only, so the entity "Film" does not fire on "film");
//   2. proper-noun, date and number spans (extract/entity_spans.h);
//   (tokens inside 1–2 are not repeated by 3–4: "Billy Elliot" does not also
//   give "Billy" and "Elliot", which would seed every Billy and Elliot)
//   3. noun-phrase-like runs: maximal runs of two or more consecutive
//      content words ("football club", "research vessel");
//   4. content words: tokens that are neither stopwords nor question or
//      auxiliary words.
//
// Sub-queries: the query is cut at coordinating conjunctions ("and", "but",
// "or", ";", "as well as") and before relative pronouns ("who", "which",
// "that", "whose", "whom", "where") that do not start the query; a relative
// clause is prefixed with its antecedent (the content-word run just before
// the pronoun), so "the director of the film that won the award" gives
// "the director of the film" and "film won the award". Pieces with no
// content word are merged into their neighbour. One piece → {query}.
//
// Thread-safety: the functions are pure; EntityNameMatcher is immutable
// after construction. Complexity: O(query tokens) per call (plus the trie
// scan); building the matcher is O(total entity-name tokens).
#ifndef FLOWRAG_RETRIEVAL_KEYWORDS_H_
#define FLOWRAG_RETRIEVAL_KEYWORDS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graph/knowledge_graph.h"
#include "graph/snapshot.h"
#include "lexical/aho_corasick.h"

namespace flowrag {

// Token trie over a graph's entity names (payload = entity index).
class EntityNameMatcher {
 public:
  EntityNameMatcher() = default;
  explicit EntityNameMatcher(const KnowledgeGraph& graph);
  // The matcher of `snapshot`'s graph (Snapshot::DerivedFromEntities),
  // adopted from its segment when it keeps one (Persistence: "nm.*"), else
  // built (1.5 s for 10^6 entity names, doc/scale.md). Null without a graph.
  static std::shared_ptr<const EntityNameMatcher> For(const Snapshot& snapshot);
  static const PersistentDerived& Persistence();
  // The trie's arrays under "nm.t" (TokenTrie::ExportArrays).
  Status ExportArrays(ArraySink& sink) const;
  // Those arrays borrowed (TokenTrie::AdoptArrays' checks), each payload an
  // entity of `snapshot`'s graph: Corruption naming the array otherwise.
  static Result<std::shared_ptr<const EntityNameMatcher>> AdoptArrays(const Snapshot& snapshot,
                                                                      const ArraySource& source);
  // For tests: names[i] gets payload i.
  explicit EntityNameMatcher(const std::vector<std::string>& names);

  const TokenTrie& trie() const { return trie_; }

 private:
  TokenTrie trie_;
};

struct KeywordOptions {
  bool entity_names = true;
  bool spans = true;
  bool phrases = true;
  bool content_words = true;
  // At most this many keywords are returned (the first ones, in the order above).
  size_t max_keywords = 24;
};

struct QueryKeywords {
  std::vector<std::string> keywords;
  // The first `low_level` keywords come from steps 1–2 (names, spans): the
  // specific entities and details LightRAG calls low-level keywords; the
  // rest (phrases, content words) stand for its high-level keywords.
  size_t low_level = 0;
  // Entity indexes whose names occur in the query (from the matcher).
  std::vector<uint32_t> matched_entities;
  // The subset the query writes as a proper name: its match holds a
  // capitalised token ("Liver Cancer" matched by "liver cancer" is not).
  std::vector<uint32_t> proper_entities;
};

// `names` may be null (no known-name matching).
QueryKeywords ExtractKeywords(std::string_view query, const EntityNameMatcher* names,
                              const KeywordOptions& options = {});

// Offline decomposition into sub-queries (see the file comment). Always
// returns at least one element.
std::vector<std::string> DecomposeQuery(std::string_view query);

// True for question and auxiliary words that are not stopwords of the shared
// tokeniser but carry no content in a question ("which", "whose", "was", "did").
bool IsQuestionWord(std::string_view lower_token);

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_KEYWORDS_H_
