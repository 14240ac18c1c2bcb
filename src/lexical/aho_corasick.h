// Multi-pattern matching over normalised word tokens (Aho–Corasick).
//
// Part of lexical/, the word-level tools below extraction, retrieval,
// answering and the schema agent: the offline extractor links every known
// entity name and alias wherever a passage names it, retrieval finds entity
// names in a query, the answerer and the schema agent find names in
// passages and questions.
//
// Names are matched token by token, not byte by byte: "Bank of England"
// matches "bank of England" or "Bank  of\nEngland" but not "Bank of
// Englands". Nothing is dropped or stemmed inside a name, so "The Who" needs
// both tokens.
//
// Normalisation (shared by patterns and texts): a token is a maximal run of
// ASCII letters/digits and non-ASCII code points, split by ASCII and Unicode
// punctuation exactly like the shared tokeniser (common/text.h) with
// stopword removal and stemming off; a run holding non-ASCII code points is
// cut further into ICU's words (common/text.h WordSegments: Chinese,
// Japanese and Thai by dictionary), so "张伟" matches inside "张伟是北京人"
// when ICU cuts both alike; ASCII letters are lower-cased (non-ASCII ones are
// not folded: norm keeps the raw byte length). Joined by
// single spaces, a name's tokens equal EntityKey(name) (common/text.h)
// for every name without non-ASCII punctuation ("St. Maurice's Abbey" →
// "st maurice s abbey").
#ifndef FLOWRAG_LEXICAL_AHO_CORASICK_H_
#define FLOWRAG_LEXICAL_AHO_CORASICK_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/array_io.h"
#include "common/flat_array.h"
#include "flowrag/status.h"

namespace flowrag {

// One word token: [begin, end) byte offsets into the tokenised text.
struct WordToken {
  uint32_t begin = 0;
  uint32_t end = 0;
};

// A text cut into word tokens, with the normalised form of each token.
//
// Ownership: keeps a view of `text` (the caller keeps it alive while this
// object is used) and owns a lower-cased copy. REQUIRES: text.size() < 4 GiB.
// Thread-safety: immutable after construction; safe to share.
// Complexity: construction O(|text|).
class TokenizedText {
 public:
  TokenizedText() = default;
  explicit TokenizedText(std::string_view text);

  std::string_view text() const { return text_; }
  size_t size() const { return tokens_.size(); }
  bool empty() const { return tokens_.empty(); }
  std::span<const WordToken> tokens() const { return tokens_; }
  const WordToken& token(size_t i) const { return tokens_[i]; }
  // The token as written ("Maurice").
  std::string_view raw(size_t i) const {
    return text_.substr(tokens_[i].begin, tokens_[i].end - tokens_[i].begin);
  }
  // The token normalised ("maurice"): ASCII lower-cased, same byte length as raw(i).
  std::string_view norm(size_t i) const {
    return std::string_view(lower_).substr(tokens_[i].begin, tokens_[i].end - tokens_[i].begin);
  }
  // Index of the first token that begins at or after byte `offset` (size() if none). O(log n).
  size_t FirstTokenAtOrAfter(size_t offset) const;

 private:
  std::string_view text_;
  std::string lower_;
  std::vector<WordToken> tokens_;
};

// The normalised tokens of a name ("Bank of England" → {"bank", "of", "england"}).
std::vector<std::string> NameTokens(std::string_view name);

// NameTokens joined by single spaces ("" for a name without tokens).
std::string NameKey(std::string_view name);

// A pattern to build a TokenTrie from: its text (normalised with the rules
// above) and the caller's id for it.
struct TriePattern {
  std::string_view text;
  uint32_t payload = 0;
};

// One occurrence of a pattern in a TokenizedText.
struct TrieMatch {
  uint32_t token_begin = 0;  // [token_begin, token_end) token indexes
  uint32_t token_end = 0;
  uint32_t byte_begin = 0;  // [byte_begin, byte_end) byte offsets into the text
  uint32_t byte_end = 0;
  uint32_t entry = 0;  // the distinct token sequence matched: TokenTrie::payloads(entry)
};

enum class MatchMode {
  // Non-overlapping matches, scanning left to right; at each position the
  // longest pattern starting there wins ("New York City" over "New York" and
  // "York"); the scan resumes after it.
  kLeftmostLongest,
  // Every occurrence of every pattern, overlaps included.
  kAllOverlapping,
};

// An Aho–Corasick automaton over token ids, built once from a list of
// patterns. It is a value: building a matcher for just a few new names (to
// re-link old passages when documents are added) is as cheap as the names
// are short.
//
// Patterns that normalise to the same token sequence share one entry, which
// carries all their payloads in input order. Patterns without any token
// ("", "--") are ignored.
//
// Thread-safety: immutable after Build(); Scan() may run concurrently.
// Complexity: Build O(total pattern tokens) expected; Scan O(text tokens +
// all overlapping occurrences) in both modes (the leftmost-longest selection
// is a linear sweep, not a sort).
class TokenTrie {
 public:
  TokenTrie();  // an empty matcher: matches nothing

  static TokenTrie Build(std::span<const TriePattern> patterns);

  // Appends the matches in `text` to *out, ordered by (token_begin,
  // token_end) ascending.
  void Scan(const TokenizedText& text, MatchMode mode, std::vector<TrieMatch>* out) const;
  std::vector<TrieMatch> Scan(const TokenizedText& text,
                              MatchMode mode = MatchMode::kLeftmostLongest) const;

  // Payloads of an entry, in the order their patterns were given.
  std::span<const uint32_t> payloads(uint32_t entry) const {
    return payloads_.span().subspan(payload_begin_[entry],
                                    payload_begin_[entry + 1] - payload_begin_[entry]);
  }
  // Every payload, for a caller that checks them against its ids.
  std::span<const uint32_t> all_payloads() const { return payloads_; }
  // Number of tokens of an entry's sequence.
  uint32_t entry_length(uint32_t entry) const { return depth_[entry_node_[entry]]; }

  size_t num_entries() const { return entry_node_.size(); }
  size_t num_nodes() const { return fail_.size(); }
  bool empty() const { return entry_node_.empty(); }

  // Hands the trie to `sink` as arrays named "<prefix>.<x>" (`prefix` at
  // most 24 bytes): the vocabulary (a string arena and its open-addressing
  // slots), the goto table, and the per-node and per-entry arrays.
  Status ExportArrays(ArraySink& sink, std::string_view prefix) const;
  // The trie of those arrays, borrowed in place: it scans exactly as the
  // exported one. Checks what would make a scan read out of range or loop,
  // Corruption naming the array: the vocabulary's slots (CheckStringSlots),
  // the goto table a power of two with a free slot, every id in range, each edge's child one token deeper than its
  // node, each failure and dictionary link to a shallower node, the entries'
  // payload offsets. O(nodes + slots + vocabulary), no hashing again.
  static Result<TokenTrie> AdoptArrays(const ArraySource& source, std::string_view prefix);

 private:
  friend class TrieBuilder;
  static constexpr uint32_t kNone = UINT32_MAX;

  uint32_t TokenId(std::string_view norm) const;
  uint32_t Child(uint32_t node, uint32_t token) const;
  Status CheckAdopted(std::string_view prefix) const;

  // Vocabulary: token id i is vocab_[i], looked up by vocab_slots_
  // (common/string_slots.h).
  StringArena vocab_;
  FlatArray<uint32_t> vocab_slots_;
  // Goto function: open addressing, key (node << 32 | token), linear probing.
  FlatArray<uint64_t> edge_keys_;
  FlatArray<uint32_t> edge_children_;  // kNone: a free slot
  // Per node (node 0 is the root).
  FlatArray<uint32_t> fail_;   // longest proper suffix that is a trie node
  FlatArray<uint32_t> dict_;   // nearest node on the fail chain that ends an entry
  FlatArray<uint32_t> entry_;  // entry ending at this node, kNone if none
  FlatArray<uint32_t> depth_;  // tokens from the root
  // Per entry.
  FlatArray<uint32_t> entry_node_;
  FlatArray<uint32_t> payload_begin_;  // CSR offsets into payloads_, size entries + 1
  FlatArray<uint32_t> payloads_;
};

}  // namespace flowrag

#endif  // FLOWRAG_LEXICAL_AHO_CORASICK_H_
