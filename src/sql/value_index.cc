#include "sql/value_index.h"


#include <algorithm>
#include <cctype>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "common/encoding.h"
#include "common/json_errors.h"
#include "common/text.h"
#include "retrieval/keywords.h"
#include "sql/safe_exec.h"

namespace flowrag {
namespace {

bool HasLetter(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || static_cast<unsigned char>(c) >= 0x80;
  });
}

std::vector<std::string> Words(std::string_view key) {
  std::vector<std::string> words;
  size_t start = 0;
  while (start < key.size()) {
    size_t end = key.find(' ', start);
    if (end == std::string_view::npos) end = key.size();
    if (end > start) words.emplace_back(key.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

}  // namespace

bool IsTextType(std::string_view declared_type) {
  const std::string t = ToLowerAscii(declared_type);
  return t.empty() || t.find("char") != std::string::npos || t.find("clob") != std::string::npos ||
         t.find("text") != std::string::npos;
}

void ValueIndex::Add(std::string_view value, uint32_t column, bool numeric_ok) {
  if (value.empty() || value.size() > options_.max_value_bytes) return;
  if (!numeric_ok && !HasLetter(value)) return;
  std::string key = EntityKey(value);
  if (key.size() < 2) return;
  auto& cols = values_[std::move(key)];
  if (std::find(cols.begin(), cols.end(), column) == cols.end()) cols.push_back(column);
}

ValueIndex ValueIndex::FromSamples(const SchemaGraph& graph, const ValueIndexOptions& options) {
  ValueIndex index;
  index.options_ = options;
  for (uint32_t c = 0; c < graph.columns.size(); ++c) {
    for (const std::string& v : graph.columns[c].samples) {
      index.Add(v, c, IsTextType(graph.columns[c].type));
    }
  }
  return index;
}

Result<ValueIndex> ValueIndex::FromSqlite(const std::string& path, const SchemaGraph& graph,
                                          const ValueIndexOptions& options,
                                          std::chrono::steady_clock::time_point deadline,
                                          std::vector<std::string>* warnings) {
  using Clock = std::chrono::steady_clock;
  FLOWRAG_ASSIGN_OR_RETURN(auto db, ReadOnlyDatabase::Open(path));
  ValueIndex index;
  index.options_ = options;
  SqlLimits limits;
  limits.max_rows = options.max_values_per_column;
  constexpr double kColumnSeconds = 10.0;
  auto quote = [](std::string_view id) {
    std::string out = "\"";
    for (char c : id) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  uint32_t c = 0;
  for (; c < graph.columns.size(); ++c) {
    const Clock::time_point now = Clock::now();
    if (now >= deadline) break;
    limits.time_limit_seconds = kColumnSeconds;
    if (deadline != Clock::time_point::max()) {
      limits.time_limit_seconds =
          std::min(kColumnSeconds, std::chrono::duration<double>(deadline - now).count());
    }
    const SchemaColumn& col = graph.columns[c];
    if (graph.tables[col.table].virtual_table) continue;  // module code, not stored values
    const std::string qc = quote(col.name);
    const std::string sql = "SELECT DISTINCT " + qc + " FROM " + quote(graph.tables[col.table].name) +
                            " WHERE " + qc + " IS NOT NULL AND length(" + qc + ") <= " +
                            std::to_string(options.max_value_bytes);
    auto rows = db->Execute(sql, limits);
    if (!rows.ok()) {
      if (rows.status().code() == StatusCode::kDeadlineExceeded && Clock::now() >= deadline) break;
      continue;  // a column of the schema missing from the data, or one over its 10 s
    }
    const bool numeric_ok = IsTextType(col.type);
    for (const auto& row : rows->rows) {
      if (const auto* s = std::get_if<std::string>(&row[0])) index.Add(*s, c, numeric_ok);
    }
  }
  if (c < graph.columns.size() && warnings != nullptr) {
    warnings->push_back(path + ": the open time limit was reached while indexing values; " +
                        std::to_string(graph.columns.size() - c) + " of " +
                        std::to_string(graph.columns.size()) + " columns are not in the value index");
  }
  return index;
}

std::vector<ColumnValueMatch> ValueIndex::Find(std::string_view question) const {
  std::vector<ColumnValueMatch> out;
  if (values_.empty()) return out;
  std::vector<std::string> candidates;
  // Quoted strings first: 'A%' style patterns lose their wildcards.
  for (char q : {'"', '\''}) {
    size_t open = question.find(q);
    while (open != std::string_view::npos) {
      const size_t close = question.find(q, open + 1);
      if (close == std::string_view::npos) break;
      candidates.push_back(EntityKey(question.substr(open + 1, close - open - 1)));
      open = question.find(q, close + 1);
    }
  }
  const std::vector<std::string> words = Words(EntityKey(question));
  for (size_t n = std::min(options_.max_ngram, words.size()); n >= 1; --n) {
    for (size_t i = 0; i + n <= words.size(); ++i) {
      if (n == 1 && (words[i].size() < 3 || IsStopword(words[i]) || IsQuestionWord(words[i]))) continue;
      std::string key = words[i];
      for (size_t k = 1; k < n; ++k) key += " " + words[i + k];
      candidates.push_back(std::move(key));
    }
  }
  std::vector<std::pair<std::string, uint32_t>> seen;
  for (const std::string& key : candidates) {
    const auto it = values_.find(key);
    if (it == values_.end()) continue;
    for (uint32_t c : it->second) {
      if (std::find(seen.begin(), seen.end(), std::make_pair(key, c)) != seen.end()) continue;
      seen.emplace_back(key, c);
      out.push_back({key, c, it->second.size()});
    }
  }
  return out;
}

std::string ValueIndex::ToJson() const {
  nlohmann::json j;
  j["options"] = {options_.max_values_per_column, options_.max_value_bytes, options_.max_ngram};
  nlohmann::json values = nlohmann::json::object();
  for (const auto& [key, cols] : values_) values[key] = cols;
  j["values"] = std::move(values);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<ValueIndex> ValueIndex::FromJson(std::string_view text, size_t num_columns) {
  ValueIndex index;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    // A whole number in [0, limit]: get<size_t>() of a float or a negative
    // number is undefined behaviour or wraps, so the kind is checked first.
    auto whole = [](const nlohmann::json& v, uint64_t limit, const std::string& what) -> Result<uint64_t> {
      if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0) ||
          v.get<uint64_t>() > limit) {
        return Status::InvalidArgument("value index JSON: " + what + ": expected an integer from 0 to " +
                                       std::to_string(limit) + ", got " +
                                       (v.is_number() ? EscapeForMessage(v.dump(), 40) : DescribeJsonType(v)));
      }
      return v.get<uint64_t>();
    };
    const auto& o = j.at("options");
    uint64_t option[3];
    for (size_t i = 0; i < 3; ++i) {
      FLOWRAG_ASSIGN_OR_RETURN(option[i], whole(o.at(i), SIZE_MAX, "options[" + std::to_string(i) + "]"));
    }
    index.options_ = {option[0], option[1], option[2]};
    for (const auto& [key, cols] : j.at("values").items()) {
      auto& out = index.values_[key];
      for (const auto& c : cols) {
        FLOWRAG_ASSIGN_OR_RETURN(uint64_t column, whole(c, UINT32_MAX, "a column"));
        if (column >= num_columns) return Status::InvalidArgument("value index: column " + std::to_string(column) + " out of range");
        out.push_back(static_cast<uint32_t>(column));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument("value index JSON: " + CleanJsonError(e.what(), false));
  }
  return index;
}

}  // namespace flowrag
