#include "lexical/aho_corasick.h"

#include <algorithm>
#include <cassert>
#include <limits>

#include "common/hash.h"
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

size_t TokenTrie::StringHash::operator()(std::string_view s) const { return Hash64(s); }

TokenTrie::TokenTrie() : fail_{0}, dict_{kNone}, entry_{kNone}, depth_{0}, payload_begin_{0} {
  edge_keys_.assign(16, std::numeric_limits<uint64_t>::max());
  edge_children_.assign(16, kNone);
}

uint32_t TokenTrie::TokenId(std::string_view norm) const {
  auto it = vocab_.find(norm);
  return it == vocab_.end() ? kNone : it->second;
}

uint32_t TokenTrie::Child(uint32_t node, uint32_t token) const {
  const uint64_t key = (static_cast<uint64_t>(node) << 32) | token;
  const size_t mask = edge_keys_.size() - 1;
  for (size_t slot = Mix64(key) & mask;; slot = (slot + 1) & mask) {
    if (edge_keys_[slot] == key) return edge_children_[slot];
    if (edge_children_[slot] == kNone) return kNone;
  }
}

void TokenTrie::GrowEdges() {
  std::vector<uint64_t> keys(edge_keys_.size() * 2, std::numeric_limits<uint64_t>::max());
  std::vector<uint32_t> children(edge_keys_.size() * 2, kNone);
  const size_t mask = keys.size() - 1;
  for (size_t i = 0; i < edge_keys_.size(); ++i) {
    if (edge_children_[i] == kNone) continue;
    size_t slot = Mix64(edge_keys_[i]) & mask;
    while (children[slot] != kNone) slot = (slot + 1) & mask;
    keys[slot] = edge_keys_[i];
    children[slot] = edge_children_[i];
  }
  edge_keys_ = std::move(keys);
  edge_children_ = std::move(children);
}

uint32_t TokenTrie::AddChild(uint32_t node, uint32_t token) {
  if (uint32_t c = Child(node, token); c != kNone) return c;
  if ((num_edges_ + 1) * 2 > edge_keys_.size()) GrowEdges();
  const uint32_t child = static_cast<uint32_t>(fail_.size());
  fail_.push_back(0);
  dict_.push_back(kNone);
  entry_.push_back(kNone);
  depth_.push_back(depth_[node] + 1);
  const uint64_t key = (static_cast<uint64_t>(node) << 32) | token;
  const size_t mask = edge_keys_.size() - 1;
  size_t slot = Mix64(key) & mask;
  while (edge_children_[slot] != kNone) slot = (slot + 1) & mask;
  edge_keys_[slot] = key;
  edge_children_[slot] = child;
  ++num_edges_;
  return child;
}

TokenTrie TokenTrie::Build(std::span<const TriePattern> patterns) {
  TokenTrie trie;
  std::vector<uint32_t> parent{0}, via{kNone};               // per node: parent and incoming token
  std::vector<std::pair<uint32_t, uint32_t>> entry_payload;  // (entry, payload) in input order
  entry_payload.reserve(patterns.size());
  for (const TriePattern& p : patterns) {
    TokenizedText tokens(p.text);
    if (tokens.empty()) continue;
    uint32_t node = 0;
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string_view norm = tokens.norm(i);
      auto it = trie.vocab_.find(norm);
      if (it == trie.vocab_.end()) {
        it =
            trie.vocab_.emplace(std::string(norm), static_cast<uint32_t>(trie.vocab_.size())).first;
      }
      const size_t before = trie.fail_.size();
      const uint32_t next = trie.AddChild(node, it->second);
      if (trie.fail_.size() != before) {
        parent.push_back(node);
        via.push_back(it->second);
      }
      node = next;
    }
    if (trie.entry_[node] == kNone) {
      trie.entry_[node] = static_cast<uint32_t>(trie.entry_node_.size());
      trie.entry_node_.push_back(node);
    }
    entry_payload.emplace_back(trie.entry_[node], p.payload);
  }

  // Payload lists per entry (counting sort keeps the input order).
  const size_t entries = trie.entry_node_.size();
  trie.payload_begin_.assign(entries + 1, 0);
  for (const auto& [e, payload] : entry_payload) ++trie.payload_begin_[e + 1];
  for (size_t e = 0; e < entries; ++e) trie.payload_begin_[e + 1] += trie.payload_begin_[e];
  trie.payloads_.resize(entry_payload.size());
  std::vector<uint32_t> fill(trie.payload_begin_.begin(), trie.payload_begin_.end() - 1);
  for (const auto& [e, payload] : entry_payload) trie.payloads_[fill[e]++] = payload;

  // Failure and dictionary links in breadth-first order (nodes by depth).
  const size_t nodes = trie.fail_.size();
  uint32_t max_depth = 0;
  for (uint32_t d : trie.depth_) max_depth = std::max(max_depth, d);
  std::vector<uint32_t> by_depth_begin(max_depth + 2, 0);
  for (uint32_t d : trie.depth_) ++by_depth_begin[d + 1];
  for (size_t d = 0; d <= max_depth; ++d) by_depth_begin[d + 1] += by_depth_begin[d];
  std::vector<uint32_t> order(nodes);
  for (uint32_t v = 0; v < nodes; ++v) order[by_depth_begin[trie.depth_[v]]++] = v;
  for (uint32_t v : order) {
    if (v == 0) continue;
    const uint32_t p = parent[v];
    uint32_t f = 0;
    if (p != 0) {
      for (uint32_t s = trie.fail_[p];; s = trie.fail_[s]) {
        if (uint32_t c = trie.Child(s, via[v]); c != kNone) {
          f = c;
          break;
        }
        if (s == 0) break;
      }
    }
    trie.fail_[v] = f;
    trie.dict_[v] = trie.entry_[f] != kNone ? f : trie.dict_[f];
  }
  return trie;
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
