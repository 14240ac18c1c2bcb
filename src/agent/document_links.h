// DocumentLinks: which text documents a value in a structured record names
// (schema-contracts paper D.1 GraphTraverse along link fields, §3.3
// cross-source linking). A table cell seldom spells the page it refers to
// in full: "Bathurst" for "Bathurst, New South Wales", "John Goss" for
// "John Goss (racing driver)", "Piscataway" for "Piscataway Township, New
// Jersey", or one cell naming several people.
//
// Each document title gives aliases: the title, the title before " (" (a
// disambiguator) and the title before ", " (a qualifier). A value names
//   1. every document with the value (EntityKey) as title or alias; else
//   2. the one document having an alias that begins with the value's words
//      ("piscataway" → "piscataway township"), when exactly one has; else
//   3. the documents whose titles or aliases of two words or more occur in
//      the value as whole words (leftmost-longest).
// Keys of fewer than 3 characters are never aliases.
//
// Thread-safety: immutable after construction. Memory O(titles).
// Complexity: Named() O(|value| + log titles).
#ifndef FLOWRAG_AGENT_DOCUMENT_LINKS_H_
#define FLOWRAG_AGENT_DOCUMENT_LINKS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lexical/aho_corasick.h"

namespace flowrag {

// The keys (EntityKey) of a title and its aliases, title first, unique.
std::vector<std::string> TitleAliasKeys(std::string_view title);

class DocumentLinks {
 public:
  DocumentLinks() = default;
  // `titles[d]` is the title of document d (its id is its index).
  explicit DocumentLinks(const std::vector<std::string>& titles);

  // The documents `value` names (see the header comment), ascending.
  std::vector<uint32_t> Named(std::string_view value) const;

 private:
  std::unordered_map<std::string, std::vector<uint32_t>> by_key_;  // alias key → documents
  std::vector<std::pair<std::string, uint32_t>> sorted_;           // (alias key, document), sorted
  TokenTrie multiword_;                                            // aliases of ≥ 2 words → documents
};

}  // namespace flowrag

#endif  // FLOWRAG_AGENT_DOCUMENT_LINKS_H_
