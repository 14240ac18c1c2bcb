// DocumentLinks (agent/document_links.h).
#include "agent/document_links.h"

#include <algorithm>
#include <set>

#include "common/text.h"

namespace flowrag {

std::vector<std::string> TitleAliasKeys(std::string_view title) {
  std::vector<std::string> out;
  auto add = [&](std::string_view s) {
    std::string key = EntityKey(s);
    if (key.size() >= 3 && std::find(out.begin(), out.end(), key) == out.end()) out.push_back(std::move(key));
  };
  add(title);
  for (std::string_view cut : {" (", ", "}) {
    const size_t at = title.find(cut);
    if (at != std::string_view::npos && at > 0) add(title.substr(0, at));
  }
  return out;
}

DocumentLinks::DocumentLinks(const std::vector<std::string>& titles) {
  std::vector<std::string> multiword_keys;
  std::vector<uint32_t> multiword_docs;
  for (uint32_t d = 0; d < titles.size(); ++d) {
    for (std::string& key : TitleAliasKeys(titles[d])) {
      by_key_[key].push_back(d);
      sorted_.emplace_back(key, d);
      if (key.find(' ') != std::string::npos) {
        multiword_keys.push_back(std::move(key));
        multiword_docs.push_back(d);
      }
    }
  }
  std::sort(sorted_.begin(), sorted_.end());
  std::vector<TriePattern> patterns;
  for (size_t i = 0; i < multiword_keys.size(); ++i) patterns.push_back({multiword_keys[i], multiword_docs[i]});
  multiword_ = TokenTrie::Build(patterns);
}

std::vector<uint32_t> DocumentLinks::Named(std::string_view value) const {
  const std::string key = EntityKey(value);
  if (key.size() < 3) return {};
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    std::set<uint32_t> docs(it->second.begin(), it->second.end());
    return {docs.begin(), docs.end()};
  }
  // 2. A unique alias beginning with the value's words.
  const std::string prefix = key + " ";
  std::set<uint32_t> starting;
  for (auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::make_pair(prefix, uint32_t{0}));
       it != sorted_.end() && it->first.compare(0, prefix.size(), prefix) == 0 && starting.size() < 2; ++it) {
    starting.insert(it->second);
  }
  if (starting.size() == 1) return {*starting.begin()};
  // 3. Titles of two words or more written in the value.
  std::set<uint32_t> mentioned;
  const TokenizedText text(value);
  for (const TrieMatch& m : multiword_.Scan(text)) {
    for (uint32_t d : multiword_.payloads(m.entry)) mentioned.insert(d);
  }
  return {mentioned.begin(), mentioned.end()};
}

}  // namespace flowrag
