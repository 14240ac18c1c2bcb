#include "lexical/names.h"

#include <algorithm>

#include "common/text.h"
#include "lexical/aho_corasick.h"

namespace flowrag {

std::string CollapseSpaces(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending = false;
  for (char c : s) {
    if (IsAsciiSpace(c)) {
      pending = !out.empty();
      continue;
    }
    if (pending) out.push_back(' ');
    pending = false;
    out.push_back(c);
  }
  return out;
}

std::vector<std::string> TitleAliases(std::string_view title) {
  const std::string t = CollapseSpaces(title);
  std::vector<std::string> forms{t};
  // Without a trailing "(...)".
  if (t.size() >= 3 && t.back() == ')') {
    const size_t open = t.rfind('(');
    if (open != std::string::npos && open > 0) {
      forms.push_back(CollapseSpaces(std::string_view(t).substr(0, open)));
    }
  }
  // Without a leading "The ".
  const size_t n = forms.size();
  for (size_t i = 0; i < n; ++i) {
    if (forms[i].size() > 4 && (forms[i].starts_with("The ") || forms[i].starts_with("the "))) {
      forms.push_back(forms[i].substr(4));
    }
  }
  std::vector<std::string> keys{NameKey(t)};
  std::vector<std::string> aliases;
  for (size_t i = 1; i < forms.size(); ++i) {
    std::string key = NameKey(forms[i]);
    if (key.empty() || std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    keys.push_back(std::move(key));
    aliases.push_back(std::move(forms[i]));
  }
  return aliases;
}

}  // namespace flowrag
