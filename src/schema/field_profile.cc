#include "schema/field_profile.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_set>

#include "common/hash.h"

namespace flowrag {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool IsInteger(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return !s.empty() && s.size() <= 18 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

bool IsNumber(std::string_view s) {
  if (s.empty() || s.size() > 40) return false;
  std::string buf(s);
  char* end = nullptr;
  std::strtod(buf.c_str(), &end);
  return end == buf.c_str() + buf.size() && std::any_of(buf.begin(), buf.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c));
         });
}

bool IsBoolean(std::string_view s) {
  std::string l;
  for (char c : s) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return l == "true" || l == "false" || l == "yes" || l == "no" || l == "t" || l == "f";
}

// YYYY-MM-DD or YYYY/MM/DD (optionally followed by a time), or DD/MM/YYYY.
bool IsDate(std::string_view s) {
  auto digits = [&](size_t at, size_t n) {
    if (at + n > s.size()) return false;
    for (size_t i = at; i < at + n; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    }
    return true;
  };
  if (digits(0, 4) && s.size() >= 10 && (s[4] == '-' || s[4] == '/') && digits(5, 2) &&
      s[7] == s[4] && digits(8, 2)) {
    return true;
  }
  return s.size() == 10 && digits(0, 2) && (s[2] == '/' || s[2] == '.') && digits(3, 2) &&
         s[5] == s[2] && digits(6, 4);
}

}  // namespace

std::string CanonicalValue(std::string_view raw) {
  std::string_view s = Trim(raw);
  if (IsInteger(s)) {
    const long long v = std::strtoll(std::string(s).c_str(), nullptr, 10);
    return std::to_string(v);
  }
  if (IsNumber(s) && s.find_first_of("eE") == std::string_view::npos) {
    const double d = std::strtod(std::string(s).c_str(), nullptr);
    if (d == static_cast<double>(static_cast<long long>(d)) && std::abs(d) < 1e15) {
      return std::to_string(static_cast<long long>(d));
    }
  }
  return std::string(s);
}

std::vector<std::string> FieldNameTokens(std::string_view name) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) out.push_back(std::move(cur));
    cur.clear();
  };
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (!std::isalnum(c)) {
      flush();
      continue;
    }
    // A capital after a lower-case letter or digit starts a token ("stuId");
    // so does a capital followed by lower case after capitals ("IDNumber").
    if (std::isupper(c) && !cur.empty()) {
      const unsigned char prev = static_cast<unsigned char>(name[i - 1]);
      const bool next_lower =
          i + 1 < name.size() && std::islower(static_cast<unsigned char>(name[i + 1]));
      if (std::islower(prev) || std::isdigit(prev) || (std::isupper(prev) && next_lower)) flush();
    }
    cur += static_cast<char>(std::tolower(c));
  }
  flush();
  return out;
}

std::string SingularToken(const std::string& t) {
  if (t.size() > 4 && t.compare(t.size() - 3, 3, "ies") == 0)
    return t.substr(0, t.size() - 3) + "y";
  if (t.size() > 3 && t.back() == 's' && t[t.size() - 2] != 's') return t.substr(0, t.size() - 1);
  return t;
}

bool IsIdLikeName(std::string_view name) {
  static const std::unordered_set<std::string> kWords = {
      "id", "key", "uuid", "guid", "code", "ticker", "no", "num", "number", "isbn", "sku"};
  for (const std::string& t : FieldNameTokens(name)) {
    if (kWords.count(t)) return true;
  }
  return false;
}

ColumnProfile ProfileColumn(const std::string& source, const std::string& name, size_t position,
                            const std::vector<std::string_view>& values) {
  ColumnProfile p;
  p.position = position;
  FieldInfo& f = p.info;
  f.source = source;
  f.path = name;
  f.id_like = IsIdLikeName(name);
  char id[17];
  std::snprintf(id, sizeof(id), "%016llx",
                static_cast<unsigned long long>(Hash64(source + "\x1f" + name, 0x5c4e)));
  f.id = id;
  f.count = static_cast<int64_t>(values.size());
  bool all_int = true, all_num = true, all_bool = true, all_date = true;
  double total_len = 0;
  p.values.reserve(values.size());
  for (std::string_view raw : values) {
    const std::string_view v = Trim(raw);
    if (v.empty()) {
      ++f.nulls;
      p.values.emplace_back();
      continue;
    }
    total_len += static_cast<double>(v.size());
    all_int = all_int && IsInteger(v);
    all_num = all_num && IsNumber(v);
    all_bool = all_bool && IsBoolean(v);
    all_date = all_date && IsDate(v);
    std::string c = CanonicalValue(v);
    auto [it, inserted] = p.counts.emplace(c, 0);
    ++it->second;
    if (inserted && f.examples.size() < 3) f.examples.emplace_back(v);
    p.values.push_back(std::move(c));
  }
  const int64_t non_null = f.count - f.nulls;
  f.distinct = static_cast<int64_t>(p.counts.size());
  f.uniqueness = non_null > 0 ? static_cast<double>(f.distinct) / static_cast<double>(non_null) : 0;
  f.avg_length = non_null > 0 ? total_len / static_cast<double>(non_null) : 0;
  if (non_null == 0) {
    f.type = "empty";
  } else if (all_int) {
    f.type = "integer";
  } else if (all_num) {
    f.type = "number";
  } else if (all_bool) {
    f.type = "boolean";
  } else if (all_date) {
    f.type = "date";
  } else {
    f.type = f.avg_length > 200 ? "text" : "string";
  }
  return p;
}

}  // namespace flowrag
