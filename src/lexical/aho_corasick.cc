#include "lexical/aho_corasick.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <unordered_map>

#include "common/hash.h"
#include "common/string_slots.h"
#include "common/text.h"

namespace flowrag {
namespace {

// Length of the UTF-8 sequence starting with `c` (1 for ASCII and stray
// bytes). Same rules as the shared tokeniser (common/text.cc), so token
// boundaries agree with Tokenize().
inline size_t SequenceLength(unsigned char c) {
  if (c >= 0xF0 && c < 0xF8) return 4;
  if (c >= 0xE0) return 3;
  if (c >= 0xC0) return 2;
  return 1;
}

// True when the code point at text[i] (of length len) belongs to a word:
// ASCII letters and digits and non-ASCII code points other than Latin-1
// symbols, general punctuation and CJK/fullwidth punctuation.
inline bool IsWordCodePoint(std::string_view text, size_t i, size_t len) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data()) + i;
  if (len == 1) {
    const unsigned char c = p[0];
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  }
  if (i + len > text.size()) return false;
  uint32_t cp = 0;
  if (len == 2) cp = ((p[0] & 0x1F) << 6) | (p[1] & 0x3F);
  if (len == 3) cp = ((p[0] & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F);
  if (len == 4) return true;
  if (cp >= 0x80 && cp <= 0xBF) return false;
  if (cp == 0xD7 || cp == 0xF7) return false;
  if (cp >= 0x2000 && cp <= 0x206F) return false;
  if (cp >= 0x3000 && cp <= 0x303F) return false;
  if (cp >= 0xFF00 && cp <= 0xFF0F) return false;
  return true;
}

void CutTokens(std::string_view text, std::vector<WordToken>* out) {
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    size_t len = SequenceLength(static_cast<unsigned char>(text[i]));
    if (!IsWordCodePoint(text, i, len)) {
      i += std::min(len, n - i);
      continue;
    }
    const size_t begin = i;
    bool ascii = true;
    while (i < n) {
      len = SequenceLength(static_cast<unsigned char>(text[i]));
      if (!IsWordCodePoint(text, i, len)) break;
      ascii = ascii && len == 1;
      i += len;
    }
    if (ascii) {
      out->push_back({static_cast<uint32_t>(begin), static_cast<uint32_t>(i)});
      continue;
    }
    // A run with non-ASCII letters: ICU's words ("张伟是北京人" → 张伟 是 北京 人).
    for (const TextSpan& w : WordSegments(text.substr(begin, i - begin))) {
      out->push_back({static_cast<uint32_t>(begin + w.begin), static_cast<uint32_t>(begin + w.end)});
    }
  }
}

}  // namespace

TokenizedText::TokenizedText(std::string_view text) : text_(text), lower_(ToLowerAscii(text)) {
  assert(text.size() < std::numeric_limits<uint32_t>::max());
  tokens_.reserve(text.size() / 5 + 1);
  CutTokens(text, &tokens_);
}

size_t TokenizedText::FirstTokenAtOrAfter(size_t offset) const {
  auto it = std::lower_bound(tokens_.begin(), tokens_.end(), offset,
                             [](const WordToken& t, size_t off) { return t.begin < off; });
  return static_cast<size_t>(it - tokens_.begin());
}

std::vector<std::string> NameTokens(std::string_view name) {
  TokenizedText t(name);
  std::vector<std::string> out;
  out.reserve(t.size());
  for (size_t i = 0; i < t.size(); ++i) out.emplace_back(t.norm(i));
  return out;
}

std::string NameKey(std::string_view name) {
  TokenizedText t(name);
  std::string key;
  key.reserve(name.size());
  for (size_t i = 0; i < t.size(); ++i) {
    if (i > 0) key.push_back(' ');
    key.append(t.norm(i));
  }
  return key;
}

namespace {

constexpr uint32_t kFree = UINT32_MAX;
constexpr uint64_t kNoKey = std::numeric_limits<uint64_t>::max();

// The child of `node` by `token` in a goto table (kFree when none).
// REQUIRES: a power-of-two table with a free slot.
uint32_t FindChild(std::span<const uint64_t> keys, std::span<const uint32_t> children,
                   uint32_t node, uint32_t token) {
  const uint64_t key = (static_cast<uint64_t>(node) << 32) | token;
  const size_t mask = keys.size() - 1;
  for (size_t slot = Mix64(key) & mask;; slot = (slot + 1) & mask) {
    if (keys[slot] == key) return children[slot];
    if (children[slot] == kFree) return kFree;
  }
}

}  // namespace

// Builds a trie in growable vectors (Build), then hands them to it.
class TrieBuilder {
 public:
  TrieBuilder() {
    edge_keys_.assign(16, kNoKey);
    edge_children_.assign(16, kFree);
  }

  // The id of a normalised token, added when new.
  uint32_t Token(std::string_view norm) {
    auto it = vocab_.find(norm);
    if (it == vocab_.end()) {
      it = vocab_.emplace(std::string(norm), static_cast<uint32_t>(tokens_.size())).first;
      tokens_.push_back(&it->first);
    }
    return it->second;
  }
  uint32_t Child(uint32_t node, uint32_t token) const {
    return FindChild(edge_keys_, edge_children_, node, token);
  }
  uint32_t AddChild(uint32_t node, uint32_t token);
  TokenTrie Finish(const std::vector<std::pair<uint32_t, uint32_t>>& entry_payload,
                   const std::vector<uint32_t>& parent, const std::vector<uint32_t>& via);

  std::vector<uint32_t> fail_{0}, dict_{kFree}, entry_{kFree}, depth_{0}, entry_node_;

 private:
  void GrowEdges();

  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return Hash64(s); }
  };
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> vocab_;
  std::vector<const std::string*> tokens_;  // by id
  std::vector<uint64_t> edge_keys_;
  std::vector<uint32_t> edge_children_;
  size_t num_edges_ = 0;
};

void TrieBuilder::GrowEdges() {
  std::vector<uint64_t> keys(edge_keys_.size() * 2, kNoKey);
  std::vector<uint32_t> children(edge_keys_.size() * 2, kFree);
  const size_t mask = keys.size() - 1;
  for (size_t i = 0; i < edge_keys_.size(); ++i) {
    if (edge_children_[i] == kFree) continue;
    size_t slot = Mix64(edge_keys_[i]) & mask;
    while (children[slot] != kFree) slot = (slot + 1) & mask;
    keys[slot] = edge_keys_[i];
    children[slot] = edge_children_[i];
  }
  edge_keys_ = std::move(keys);
  edge_children_ = std::move(children);
}

uint32_t TrieBuilder::AddChild(uint32_t node, uint32_t token) {
  if (uint32_t c = Child(node, token); c != kFree) return c;
  if ((num_edges_ + 1) * 2 > edge_keys_.size()) GrowEdges();
  const uint32_t child = static_cast<uint32_t>(fail_.size());
  fail_.push_back(0);
  dict_.push_back(kFree);
  entry_.push_back(kFree);
  depth_.push_back(depth_[node] + 1);
  const uint64_t key = (static_cast<uint64_t>(node) << 32) | token;
  const size_t mask = edge_keys_.size() - 1;
  size_t slot = Mix64(key) & mask;
  while (edge_children_[slot] != kFree) slot = (slot + 1) & mask;
  edge_keys_[slot] = key;
  edge_children_[slot] = child;
  ++num_edges_;
  return child;
}

TokenTrie TrieBuilder::Finish(const std::vector<std::pair<uint32_t, uint32_t>>& entry_payload,
                              const std::vector<uint32_t>& parent,
                              const std::vector<uint32_t>& via) {
  // Payload lists per entry (counting sort keeps the input order).
  const size_t entries = entry_node_.size();
  std::vector<uint32_t> payload_begin(entries + 1, 0), payloads(entry_payload.size());
  for (const auto& [e, payload] : entry_payload) ++payload_begin[e + 1];
  for (size_t e = 0; e < entries; ++e) payload_begin[e + 1] += payload_begin[e];
  std::vector<uint32_t> fill(payload_begin.begin(), payload_begin.end() - 1);
  for (const auto& [e, payload] : entry_payload) payloads[fill[e]++] = payload;

  // Failure and dictionary links in breadth-first order (nodes by depth).
  const size_t nodes = fail_.size();
  uint32_t max_depth = 0;
  for (uint32_t d : depth_) max_depth = std::max(max_depth, d);
  std::vector<uint32_t> by_depth_begin(max_depth + 2, 0);
  for (uint32_t d : depth_) ++by_depth_begin[d + 1];
  for (size_t d = 0; d <= max_depth; ++d) by_depth_begin[d + 1] += by_depth_begin[d];
  std::vector<uint32_t> order(nodes);
  for (uint32_t v = 0; v < nodes; ++v) order[by_depth_begin[depth_[v]]++] = v;
  for (uint32_t v : order) {
    if (v == 0) continue;
    const uint32_t p = parent[v];
    uint32_t f = 0;
    if (p != 0) {
      for (uint32_t s = fail_[p];; s = fail_[s]) {
        if (uint32_t c = Child(s, via[v]); c != kFree) {
          f = c;
          break;
        }
        if (s == 0) break;
      }
    }
    fail_[v] = f;
    dict_[v] = entry_[f] != kFree ? f : dict_[f];
  }

  // The vocabulary as an arena in id order and its slots.
  TokenTrie trie;
  StringArena vocab;
  for (const std::string* token : tokens_) vocab.Append(*token);
  trie.vocab_slots_ = BuildStringSlots(vocab);
  trie.vocab_ = std::move(vocab);
  trie.edge_keys_ = std::move(edge_keys_);
  trie.edge_children_ = std::move(edge_children_);
  trie.fail_ = std::move(fail_);
  trie.dict_ = std::move(dict_);
  trie.entry_ = std::move(entry_);
  trie.depth_ = std::move(depth_);
  trie.entry_node_ = std::move(entry_node_);
  trie.payload_begin_ = std::move(payload_begin);
  trie.payloads_ = std::move(payloads);
  return trie;
}

TokenTrie::TokenTrie()
    : edge_keys_(std::vector<uint64_t>(16, kNoKey)),
      edge_children_(std::vector<uint32_t>(16, kNone)),
      fail_(std::vector<uint32_t>{0}),
      dict_(std::vector<uint32_t>{kNone}),
      entry_(std::vector<uint32_t>{kNone}),
      depth_(std::vector<uint32_t>{0}),
      payload_begin_(std::vector<uint32_t>{0}) {}

uint32_t TokenTrie::TokenId(std::string_view norm) const {
  static_assert(kNone == kNoString);
  return FindString(vocab_slots_, vocab_, norm);
}

uint32_t TokenTrie::Child(uint32_t node, uint32_t token) const {
  return FindChild(edge_keys_, edge_children_, node, token);
}

TokenTrie TokenTrie::Build(std::span<const TriePattern> patterns) {
  TrieBuilder b;
  std::vector<uint32_t> parent{0}, via{kNone};               // per node: parent and incoming token
  std::vector<std::pair<uint32_t, uint32_t>> entry_payload;  // (entry, payload) in input order
  entry_payload.reserve(patterns.size());
  for (const TriePattern& p : patterns) {
    TokenizedText tokens(p.text);
    if (tokens.empty()) continue;
    uint32_t node = 0;
    for (size_t i = 0; i < tokens.size(); ++i) {
      const uint32_t token = b.Token(tokens.norm(i));
      const size_t before = b.fail_.size();
      const uint32_t next = b.AddChild(node, token);
      if (b.fail_.size() != before) {
        parent.push_back(node);
        via.push_back(token);
      }
      node = next;
    }
    if (b.entry_[node] == kNone) {
      b.entry_[node] = static_cast<uint32_t>(b.entry_node_.size());
      b.entry_node_.push_back(node);
    }
    entry_payload.emplace_back(b.entry_[node], p.payload);
  }
  return b.Finish(entry_payload, parent, via);
}

namespace {

struct TrieArrayNames {
  std::string vocab, slots, keys, children, fail, dict, entry, depth, entry_node, payload_begin,
      payloads;
};

Result<TrieArrayNames> TrieNames(std::string_view prefix) {
  if (prefix.empty() || prefix.size() > 24) {
    return Status::InvalidArgument("token trie arrays: prefix of 1-24 bytes");
  }
  const std::string p(prefix);
  return TrieArrayNames{p + ".voc",  p + ".vslot", p + ".ekey",  p + ".echild",
                        p + ".fail", p + ".dict",  p + ".entry", p + ".depth",
                        p + ".enode", p + ".pbeg", p + ".pay"};
}

Status Bad(const std::string& name, const std::string& what) {
  return Status::Corruption("token trie array " + name + ": " + what);
}

// A power-of-two open-addressing table with at least one free slot.
Status CheckTable(const std::string& name, std::span<const uint32_t> slots) {
  if (slots.empty() || (slots.size() & (slots.size() - 1)) != 0) {
    return Bad(name, std::to_string(slots.size()) + " slots, not a power of two");
  }
  if (std::find(slots.begin(), slots.end(), kFree) == slots.end()) return Bad(name, "no free slot");
  return Status::Ok();
}

}  // namespace

Status TokenTrie::ExportArrays(ArraySink& sink, std::string_view prefix) const {
  FLOWRAG_ASSIGN_OR_RETURN(const TrieArrayNames n, TrieNames(prefix));
  FLOWRAG_RETURN_IF_ERROR(sink.PutStrings(n.vocab, vocab_));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>(n.slots, vocab_slots_.span(), /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint64_t>(n.keys, edge_keys_.span(), /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>(n.children, edge_children_.span(), /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>(n.fail, fail_.span(), /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>(n.dict, dict_.span(), /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>(n.entry, entry_.span(), /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>(n.depth, depth_.span(), /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>(n.entry_node, entry_node_.span(), /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>(n.payload_begin, payload_begin_.span(), true));
  return sink.Put<uint32_t>(n.payloads, payloads_.span(), /*random=*/true);
}

Result<TokenTrie> TokenTrie::AdoptArrays(const ArraySource& source, std::string_view prefix) {
  FLOWRAG_ASSIGN_OR_RETURN(const TrieArrayNames n, TrieNames(prefix));
  TokenTrie t;
  FLOWRAG_ASSIGN_OR_RETURN(t.vocab_, source.GetStrings(n.vocab));
  FLOWRAG_ASSIGN_OR_RETURN(t.vocab_slots_, source.Get<uint32_t>(n.slots));
  FLOWRAG_ASSIGN_OR_RETURN(t.edge_keys_, source.Get<uint64_t>(n.keys));
  FLOWRAG_ASSIGN_OR_RETURN(t.edge_children_, source.Get<uint32_t>(n.children));
  FLOWRAG_ASSIGN_OR_RETURN(t.fail_, source.Get<uint32_t>(n.fail));
  FLOWRAG_ASSIGN_OR_RETURN(t.dict_, source.Get<uint32_t>(n.dict));
  FLOWRAG_ASSIGN_OR_RETURN(t.entry_, source.Get<uint32_t>(n.entry));
  FLOWRAG_ASSIGN_OR_RETURN(t.depth_, source.Get<uint32_t>(n.depth));
  FLOWRAG_ASSIGN_OR_RETURN(t.entry_node_, source.Get<uint32_t>(n.entry_node));
  FLOWRAG_ASSIGN_OR_RETURN(t.payload_begin_, source.Get<uint32_t>(n.payload_begin));
  FLOWRAG_ASSIGN_OR_RETURN(t.payloads_, source.Get<uint32_t>(n.payloads));
  FLOWRAG_RETURN_IF_ERROR(t.CheckAdopted(prefix));
  return t;
}

Status TokenTrie::CheckAdopted(std::string_view prefix) const {
  const TrieArrayNames n = *TrieNames(prefix);
  if (std::string what = CheckStringSlots(vocab_slots_, vocab_.size()); !what.empty()) {
    return Bad(n.slots, what);
  }
  const size_t nodes = fail_.size();
  if (nodes == 0 || nodes >= kNone || dict_.size() != nodes || entry_.size() != nodes ||
      depth_.size() != nodes || depth_[0] != 0 || fail_[0] != 0) {
    return Bad(n.fail, "per-node arrays of different lengths, or no root");
  }
  FLOWRAG_RETURN_IF_ERROR(CheckTable(n.children, edge_children_));
  if (edge_keys_.size() != edge_children_.size()) return Bad(n.keys, "not one key per slot");
  for (size_t i = 0; i < edge_keys_.size(); ++i) {
    const uint32_t child = edge_children_[i];
    if (child == kNone) continue;
    const uint64_t node = edge_keys_[i] >> 32;
    if (node >= nodes || child == 0 || child >= nodes || depth_[child] != depth_[node] + 1) {
      return Bad(n.children, "slot " + std::to_string(i) + ": not a child one token deeper");
    }
  }
  const size_t entries = entry_node_.size();
  for (size_t v = 1; v < nodes; ++v) {
    if (fail_[v] >= nodes || depth_[fail_[v]] >= depth_[v]) {
      return Bad(n.fail, "node " + std::to_string(v) + ": not a shallower node");
    }
    if (dict_[v] != kNone && (dict_[v] >= nodes || depth_[dict_[v]] >= depth_[v])) {
      return Bad(n.dict, "node " + std::to_string(v) + ": not a shallower node");
    }
  }
  for (size_t v = 0; v < nodes; ++v) {
    if (entry_[v] != kNone && (entry_[v] >= entries || entry_node_[entry_[v]] != v)) {
      return Bad(n.entry, "node " + std::to_string(v) + ": not its entry's node");
    }
  }
  if (dict_[0] != kNone || entry_[0] != kNone) return Bad(n.entry, "the root ends an entry");
  for (size_t e = 0; e < entries; ++e) {
    if (entry_node_[e] >= nodes || entry_[entry_node_[e]] != e) {
      return Bad(n.entry_node, "entry " + std::to_string(e) + ": not its node's entry");
    }
  }
  if (payload_begin_.size() != entries + 1 || payload_begin_[0] != 0 ||
      payload_begin_[entries] != payloads_.size()) {
    return Bad(n.payload_begin, "offsets do not span the payloads");
  }
  for (size_t e = 0; e < entries; ++e) {
    if (payload_begin_[e + 1] < payload_begin_[e]) return Bad(n.payload_begin, "decreasing");
  }
  return Status::Ok();
}

void TokenTrie::Scan(const TokenizedText& text, MatchMode mode, std::vector<TrieMatch>* out) const {
  if (empty() || text.empty()) return;
  const size_t n = text.size();
  // Raw occurrences as (start token, end token, entry), produced by end position.
  std::vector<TrieMatch> found;
  uint32_t state = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t token = TokenId(text.norm(i));
    if (token == kNone) {
      state = 0;
      continue;
    }
    for (;;) {
      if (uint32_t c = Child(state, token); c != kNone) {
        state = c;
        break;
      }
      if (state == 0) break;
      state = fail_[state];
    }
    for (uint32_t v = entry_[state] != kNone ? state : dict_[state]; v != kNone; v = dict_[v]) {
      TrieMatch m;
      m.token_end = static_cast<uint32_t>(i + 1);
      m.token_begin = m.token_end - depth_[v];
      m.entry = entry_[v];
      found.push_back(m);
    }
  }
  if (found.empty()) return;

  auto finish = [&](TrieMatch m) {
    m.byte_begin = text.token(m.token_begin).begin;
    m.byte_end = text.token(m.token_end - 1).end;
    out->push_back(m);
  };
  if (mode == MatchMode::kLeftmostLongest) {
    // Longest occurrence per start token, then a left-to-right sweep.
    std::vector<uint32_t> best(n, kNone);  // index into `found`
    for (uint32_t k = 0; k < found.size(); ++k) {
      uint32_t& b = best[found[k].token_begin];
      if (b == kNone || found[k].token_end > found[b].token_end) b = k;
    }
    for (size_t s = 0; s < n;) {
      if (best[s] == kNone) {
        ++s;
        continue;
      }
      finish(found[best[s]]);
      s = found[best[s]].token_end;
    }
    return;
  }
  // All occurrences: a stable counting sort by start token keeps, within a
  // start, the production order, which is by increasing end.
  std::vector<uint32_t> start_begin(n + 1, 0);
  for (const TrieMatch& m : found) ++start_begin[m.token_begin + 1];
  for (size_t s = 0; s < n; ++s) start_begin[s + 1] += start_begin[s];
  std::vector<uint32_t> sorted(found.size());
  for (uint32_t k = 0; k < found.size(); ++k) sorted[start_begin[found[k].token_begin]++] = k;
  out->reserve(out->size() + found.size());
  for (uint32_t k : sorted) finish(found[k]);
}

std::vector<TrieMatch> TokenTrie::Scan(const TokenizedText& text, MatchMode mode) const {
  std::vector<TrieMatch> out;
  Scan(text, mode, &out);
  return out;
}

}  // namespace flowrag
