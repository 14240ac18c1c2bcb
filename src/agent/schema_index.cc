// SchemaIndex (agent/schema_index.h).
#include "agent/schema_index.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/text.h"
#include "schema/field_profile.h"

namespace flowrag {
namespace {

bool HasLetter(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::isalpha(c) || c >= 0x80; });
}

// 4-digit years 1800–2100 standing alone in `text`.
void CollectYears(std::string_view text, std::vector<int>* out) {
  for (size_t i = 0; i + 4 <= text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) continue;
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j - i == 4 && (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1])))) {
      const int y = std::stoi(std::string(text.substr(i, 4)));
      if (y >= 1800 && y <= 2100) out->push_back(y);
    }
    i = j;
  }
}

// Content tokens without stemming (field names and questions alike).
std::vector<std::string> Words(std::string_view text) {
  TokenizerOptions o;
  o.stem = false;
  std::vector<std::string> out;
  for (std::string& t : Tokenize(text, o)) {
    if (t.size() >= 2 || std::isdigit(static_cast<unsigned char>(t[0]))) out.push_back(std::move(t));
  }
  return out;
}

bool IsRealtimeWord(const std::string& w) {
  static const std::set<std::string> kWords = {"today", "tonight", "currently", "latest",
                                               "yesterday", "tomorrow"};
  return kWords.count(w) > 0;
}

// Capitalised runs of the question (not its first word), e.g. "Acme Corp".
std::vector<std::pair<size_t, size_t>> ProperNounSpans(const TokenizedText& t) {
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t i = 1; i < t.size(); ++i) {
    const std::string_view w = t.raw(i);
    const bool cap = !w.empty() && std::isupper(static_cast<unsigned char>(w[0]));
    if (!cap || IsStopword(t.norm(i))) continue;
    size_t j = i + 1;
    while (j < t.size() && !t.raw(j).empty() &&
           std::isupper(static_cast<unsigned char>(t.raw(j)[0]))) {
      ++j;
    }
    spans.emplace_back(i, j);
    i = j - 1;
  }
  return spans;
}

std::string AnswerType(std::string_view question) {
  const std::string q = ToLowerAscii(question);
  auto starts = [&](std::string_view p) { return q.rfind(p, 0) == 0; };
  if (starts("how many") || starts("how much") || q.find("percentage") != std::string::npos ||
      q.find("amount") != std::string::npos || q.find("average") != std::string::npos ||
      q.find("change in") != std::string::npos || q.find("ratio") != std::string::npos) {
    return "number";
  }
  if (starts("when") || starts("what year") || starts("in what year") || starts("in which year") ||
      starts("what date")) {
    return "date";
  }
  if (starts("what are") || starts("which are") || starts("list")) return "list";
  // "Which customers ...", "What products ...": a plural noun asks for a list.
  if (starts("which ") || starts("what ")) {
    const size_t b = q.find(' ') + 1, e = q.find(' ', b);
    const std::string noun = q.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (noun.size() > 3 && noun.back() == 's' && noun[noun.size() - 2] != 's' && noun != "was" &&
        noun != "does" && noun != "is") {
      return "list";
    }
  }
  return "string";
}

}  // namespace

std::unique_ptr<SchemaIndex> SchemaIndex::Build(const SchemaContract& contract,
                                                std::vector<RecordInput> records,
                                                const Snapshot& snapshot) {
  auto index = std::unique_ptr<SchemaIndex>(new SchemaIndex());
  index->contract_ = contract;
  std::unordered_map<std::string, uint32_t> doc_of;
  for (uint32_t d = 0; d < snapshot.documents().size(); ++d) {
    doc_of.emplace(snapshot.documents()[d].external_id, d);
  }
  std::vector<std::vector<uint32_t>> passages_of(snapshot.documents().size());
  std::vector<int64_t> first_passage(snapshot.documents().size(), -1);
  for (uint32_t p = 0; p < snapshot.num_passages(); ++p) {
    const SnapshotPassage& sp = snapshot.passage(p);
    passages_of[sp.document].push_back(p);
    if (sp.ordinal == 0) first_passage[sp.document] = p;
  }
  std::set<std::pair<std::string, std::string>> text_fields;
  for (const EntityType& t : contract.entity_types) {
    for (const std::string& f : t.text_fields) text_fields.emplace(t.name, f);
  }
  std::vector<int> years;
  std::map<std::tuple<std::string, std::string, std::string>, uint32_t> value_ids;
  for (RecordInput& in : records) {
    auto d = doc_of.find(in.external_id);
    if (!in.structured) {
      if (d == doc_of.end()) continue;
      auto& passages = index->text_passages_[EntityKey(snapshot.documents()[d->second].title)];
      passages.insert(passages.end(), passages_of[d->second].begin(), passages_of[d->second].end());
      continue;
    }
    if (d == doc_of.end() || first_passage[d->second] < 0) continue;
    IndexedRecord r;
    r.passage = static_cast<uint32_t>(first_passage[d->second]);
    r.document_id = in.external_id;
    r.type = in.entity_type;
    r.name = snapshot.documents()[d->second].title;
    r.file = in.file;
    r.line = in.line;
    const nlohmann::json fields = nlohmann::json::parse(in.fields_json, nullptr, false);
    if (!fields.is_object()) continue;
    for (const auto& [k, v] : fields.items()) {
      std::string value;
      if (v.is_array()) {
        for (const auto& x : v) value += (value.empty() ? "" : ", ") + x.get<std::string>();
      } else if (v.is_string()) {
        value = v.get<std::string>();
      }
      r.fields.emplace_back(k, value);
    }
    const uint32_t id = static_cast<uint32_t>(index->records_.size());
    index->record_documents_.emplace(r.document_id, id);
    for (const auto& [field, value] : r.fields) {
      if (!value.empty() && value.size() <= 100) index->by_value_[EntityKey(value)].emplace_back(id, field);
    }
    // The entity name is a known value too ("Order 1003"), under "name"
    // unless a field holds it already.
    std::vector<std::pair<std::string, std::string>> values = r.fields;
    bool named = false;
    for (const auto& [field, value] : r.fields) named = named || value == r.name;
    if (!named) values.emplace_back("name", r.name);
    for (const auto& [field, value] : values) {
      CollectYears(value, &years);
      if (text_fields.count({r.type, field}) || value.size() > 100 || !HasLetter(value)) continue;
      auto [it, added] = value_ids.emplace(std::make_tuple(r.type, field, ToLowerAscii(value)),
                                           static_cast<uint32_t>(index->values_.size()));
      if (added) index->values_.push_back({value, field, r.type, {}});
      index->values_[it->second].records.push_back(id);
    }
    index->records_.push_back(std::move(r));
  }
  std::vector<TriePattern> patterns;
  for (uint32_t v = 0; v < index->values_.size(); ++v) {
    patterns.push_back({index->values_[v].value, v});
    index->value_keys_.push_back(ToLowerAscii(index->values_[v].value));
  }
  index->trie_ = TokenTrie::Build(patterns);
  auto add_words = [&](std::string_view name) {
    for (const std::string& w : FieldNameTokens(name)) index->vocabulary_.insert(StemS(w));
  };
  for (const SourceInfo& src : contract.structure.sources) add_words(src.name);
  for (const EntityType& t : contract.entity_types) {
    add_words(t.name);
    for (const std::string& a : t.attributes) add_words(a);
    for (const std::string& a : t.attributes) {
      if (text_fields.count({t.name, a})) continue;
      CollectYears(a, &years);
      std::vector<std::string> tokens = Words(a);
      if (!tokens.empty()) index->field_names_.push_back({t.name, a, std::move(tokens)});
    }
  }
  for (const SnapshotDocument& doc : snapshot.documents()) CollectYears(doc.text, &years);
  if (!years.empty()) {
    index->min_year_ = *std::min_element(years.begin(), years.end());
    index->max_year_ = *std::max_element(years.begin(), years.end());
  }
  return index;
}

std::vector<uint32_t> SchemaIndex::LinkedPassages(std::string_view name) const {
  auto it = text_passages_.find(EntityKey(name));
  return it == text_passages_.end() ? std::vector<uint32_t>{} : it->second;
}

std::vector<std::pair<uint32_t, std::string>> SchemaIndex::RecordsLinkingTo(
    std::string_view name) const {
  auto it = by_value_.find(EntityKey(name));
  return it == by_value_.end() ? std::vector<std::pair<uint32_t, std::string>>{} : it->second;
}

std::string SchemaIndex::FindType(std::string_view type) const {
  const std::string key = ToLowerAscii(type);
  for (const EntityType& t : contract_.entity_types) {
    if (ToLowerAscii(t.name) == key) return t.name;
  }
  return "";
}

std::string SchemaIndex::FindField(std::string_view type, std::string_view field) const {
  const std::string t = FindType(type), key = ToLowerAscii(field);
  if (t.empty()) return "";
  if (key == "name") return "name";
  for (const EntityType& et : contract_.entity_types) {
    if (et.name != t) continue;
    for (const std::string& a : et.attributes) {
      if (ToLowerAscii(a) == key) return a;
    }
  }
  return "";
}

std::vector<ValueMatch> SchemaIndex::MatchValue(std::string_view type, std::string_view field,
                                                std::string_view value) const {
  std::string t = FindType(type), f = FindField(type, field);
  const std::string key = ToLowerAscii(value);
  std::vector<ValueMatch> exact, contained;
  if (t.empty() || f.empty() || key.empty()) return {};
  // A field instance (B.3.2) is a value of its field in its source's records.
  for (const EntityType& ft : contract_.entity_types) {
    if (ft.name != t || ft.extraction_field.empty() || (f != "name" && f != ft.extraction_field)) continue;
    for (const EntityType& row : contract_.entity_types) {
      if (row.RowType() && row.HasSource(ft.source)) {
        t = row.name;
        f = ft.extraction_field;
        break;
      }
    }
  }
  for (uint32_t v = 0; v < values_.size(); ++v) {
    const KnownValue& kv = values_[v];
    // "name": the records' names, under whichever field holds them.
    const bool field_ok = kv.field == f || (f == "name" && records_[kv.records[0]].name == kv.value);
    if (kv.type != t || !field_ok) continue;
    if (value_keys_[v] == key) {
      exact.push_back({kv.value, kv.field, kv.type, kv.records, 1.0, 0, 0});
    } else if (contained.size() < 20 && value_keys_[v].find(key) != std::string::npos) {
      contained.push_back({kv.value, kv.field, kv.type, kv.records, 0.8, 0, 0});
    }
  }
  return exact.empty() ? contained : exact;
}

QuestionAnalysis SchemaIndex::AnalyzeQuestion(std::string_view question,
                                              const Snapshot& snapshot) const {
  QuestionAnalysis a;
  a.answer_type = AnswerType(question);
  const TokenizedText text(question);
  std::vector<bool> covered(text.size(), false);
  for (const TrieMatch& m : trie_.Scan(text)) {
    bool content = false;
    for (uint32_t t = m.token_begin; t < m.token_end; ++t) content = content || !IsStopword(text.norm(t));
    if (!content) continue;
    for (uint32_t t = m.token_begin; t < m.token_end; ++t) covered[t] = true;
    for (uint32_t v : trie_.payloads(m.entry)) {
      const KnownValue& kv = values_[v];
      a.constraints.push_back({kv.value, kv.field, kv.type, kv.records, 1.0, m.token_begin, m.token_end});
    }
  }
  for (const auto& [b, e] : ProperNounSpans(text)) {
    bool known = false;
    for (size_t t = b; t < e; ++t) known = known || covered[t];
    if (known) continue;
    const std::string mention = ToLowerAscii(text.text().substr(text.token(b).begin,
                                                               text.token(e - 1).end - text.token(b).begin));
    size_t found = 0;
    for (uint32_t v = 0; v < values_.size() && found < 20; ++v) {
      const size_t at = value_keys_[v].find(mention);
      if (at == std::string::npos) continue;
      const KnownValue& kv = values_[v];
      a.constraints.push_back({kv.value, kv.field, kv.type, kv.records, 0.8, b, e});
      ++found;
    }
    if (found > 0) continue;
    // Short single words ("FY", "Q3") are abbreviations more often than names.
    if (e - b < 2 && mention.size() < 5) continue;
    bool in_corpus = true;
    for (const std::string& t : Tokenize(mention)) in_corpus = in_corpus && snapshot.bm25().DocumentFrequency(t) > 0;
    if (!in_corpus) a.unknown_mentions.push_back(std::string(text.text().substr(
                        text.token(b).begin, text.token(e - 1).end - text.token(b).begin)));
  }
  std::set<std::string> question_words;
  for (std::string& w : Words(question)) question_words.insert(std::move(w));
  std::stable_sort(a.constraints.begin(), a.constraints.end(), [](const ValueMatch& x, const ValueMatch& y) {
    if (x.score != y.score) return x.score > y.score;
    return (x.token_end - x.token_begin) > (y.token_end - y.token_begin);
  });
  const std::set<std::string>& words = question_words;
  for (const std::string& w : words) a.realtime = a.realtime || IsRealtimeWord(w);
  for (const FieldName& f : field_names_) {
    size_t hit = 0;
    for (const std::string& t : f.tokens) hit += words.count(t);
    if (hit == 0) continue;
    a.fields.push_back({f.type, f.field, static_cast<double>(hit) / static_cast<double>(f.tokens.size())});
  }
  std::stable_sort(a.fields.begin(), a.fields.end(),
                   [](const FieldMention& x, const FieldMention& y) { return x.score > y.score; });
  CollectYears(question, &a.years);
  // C.2: the asked-about noun, the first content word after the question
  // word ("how many inhabitants", "which suppliers").
  const std::vector<std::string> all = Tokenize(question, TokenizerOptions{false, false});
  static const std::set<std::string> kAsk = {"what", "which", "who", "whom", "whose", "many", "much"};
  for (size_t i = 0; i + 1 < all.size(); ++i) {
    if (!kAsk.count(all[i])) continue;
    size_t j = i + 1;
    while (j < all.size() && (IsStopword(all[j]) || kAsk.count(all[j]))) ++j;
    if (j < all.size() && std::isalpha(static_cast<unsigned char>(all[j][0])) &&
        !vocabulary_.count(StemS(all[j]))) {
      bool known = false;  // a known value ("which Acme ...") is covered too
      for (const ValueMatch& m : a.constraints) known = known || ToLowerAscii(m.value).find(all[j]) != std::string::npos;
      if (!known) a.missing_concept = all[j];
    }
    break;
  }
  return a;
}

}  // namespace flowrag
