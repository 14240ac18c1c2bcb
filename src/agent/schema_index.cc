// SchemaIndex (agent/schema_index.h).
#include "agent/schema_index.h"

#include <algorithm>
#include <cctype>
#include <functional>
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
// The runs of letters of a token: "fy2019" → {"fy"}, "ifrs9" → {"ifrs"}.
std::vector<std::string> LetterRuns(std::string_view token) {
  std::vector<std::string> out;
  std::string run;
  for (char c : token) {
    if (std::isalpha(static_cast<unsigned char>(c)) || static_cast<unsigned char>(c) >= 0x80) {
      run.push_back(c);
    } else if (!run.empty()) {
      out.push_back(std::move(run));
      run.clear();
    }
  }
  if (!run.empty()) out.push_back(std::move(run));
  return out;
}

// Words of dates and reporting periods ("December", "FY", "fiscal year
// ended", "Q3"): a question's time qualifier, never a name the data lacks.
bool IsCalendarWord(std::string_view w) {
  static constexpr std::string_view kWords[] = {
      "january", "february", "march",    "april",  "may",     "june",     "july",     "august",
      "september", "october", "november", "december", "jan",   "feb",      "mar",      "apr",
      "jun",     "jul",      "aug",      "sep",    "sept",    "oct",      "nov",      "dec",
      "monday",  "tuesday",  "wednesday", "thursday", "friday", "saturday", "sunday",  "fy",
      "fiscal",  "year",     "years",    "ended",  "ending",  "quarter",  "quarters", "q",
      "h",       "ytd",      "month",    "months", "calendar", "period"};
  return std::find(std::begin(kWords), std::end(kWords), w) != std::end(kWords);
}

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

// Words of the present moment. "latest" is not one: it orders what the data
// holds ("the latest regular season title").
bool IsRealtimeWord(const std::string& w) {
  static const std::set<std::string> kWords = {"today", "tonight", "currently", "yesterday",
                                               "tomorrow"};
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

// The question words whose noun phrase names what is asked ("which
// customer", "how many orders"); "who", "where", ... take a noun only after
// a copula ("who is the supplier of ...").
const std::set<std::string>& NounQuestionWords() {
  static const std::set<std::string> k = {"what", "which", "whose", "who", "whom", "where",
                                          "when", "why", "how"};
  return k;
}

// Words that qualify the asked-about noun without naming it: aggregation,
// superlatives, time and generic adjectives ("the total amount", "the
// latest order"). Skipped in the focus phrase unless the schema uses them.
bool IsQualifier(const std::string& w) {
  static const std::set<std::string> k = {
      "total",   "overall",  "sum",      "average", "mean",      "median",    "maximum",
      "minimum", "max",      "min",      "latest",  "earliest",  "newest",    "oldest",
      "recent",  "current",  "first",    "last",    "next",      "previous",  "largest",
      "smallest", "biggest", "highest",  "lowest",  "greatest",  "least",     "best",
      "worst",   "longest",  "shortest", "top",     "bottom",    "combined",  "annual",
      "yearly",  "monthly",  "quarterly", "weekly", "daily",     "new",       "old",
      "main",    "different", "many",    "much",    "several",   "various",   "specific",
      "particular", "given", "respective", "exact", "approximate", "distinct", "unique",
      "entire",  "whole",    "full",     "net",     "gross",     "one",       "ones",
      "certain", "same",     "other",    "cumulative", "aggregate", "individual", "corresponding"};
  return k.count(w) > 0 || (w.size() > 4 && w.compare(w.size() - 2, 2, "ly") == 0);
}

// Nouns of measure and enumeration that hand the focus on through "of":
// "the number of orders", "the names of the customers".
bool IsMeasureWord(const std::string& w) {
  static const std::set<std::string> k = {
      "number", "numbers", "count",  "list",   "name",  "names",      "kind",     "kinds",
      "type",   "types",   "sort",   "sorts",  "percentage", "percent", "share",  "proportion",
      "fraction", "majority", "value", "values", "set", "group",      "amount",   "total"};
  return k.count(w) > 0;
}

// Past forms and common irregular verbs: the end of the noun phrase
// ("which customer placed ...").
bool LooksLikeVerb(const std::string& w) {
  static const std::set<std::string> k = {"made", "sold", "bought", "paid", "sent", "won", "led",
                                          "held", "built", "wrote", "written", "gave", "given",
                                          "took", "taken", "went", "came", "became", "got",
                                          "said", "told", "found", "ran", "spent", "left", "put"};
  return k.count(w) > 0 || (w.size() > 4 && w.compare(w.size() - 2, 2, "ed") == 0);
}

bool IsDeterminer(std::string_view w) {
  static const std::set<std::string, std::less<>> k = {"the", "this", "that", "these", "those", "our",
                                                       "its", "their", "his", "her", "a", "an", "your"};
  return k.count(w) > 0;
}

bool IsCopula(const std::string& w) {
  return w == "is" || w == "are" || w == "was" || w == "were" || w == "s";
}

bool IsAuxiliary(const std::string& w) {
  static const std::set<std::string> k = {"do",   "does",  "did",    "has",  "have", "had",
                                          "can",  "could", "will",   "would", "should", "may",
                                          "might", "shall", "must"};
  return k.count(w) > 0;
}

// The focus phrase (QuestionAnalysis::focus). `in_vocabulary` says whether
// a word (lower-case) is a schema word; such words are never skipped.
// `skipped` receives the qualifier and measure words passed over.
std::vector<std::string> FocusPhrase(const TokenizedText& t,
                                     const std::function<bool(const std::string&)>& in_vocabulary,
                                     std::vector<std::string>* skipped) {
  size_t i = 0;
  while (i < t.size() && !NounQuestionWords().count(std::string(t.norm(i)))) ++i;
  if (i == t.size()) {
    // Imperatives: "List the orders of ...", "Name the customer who ...".
    const std::string first = t.empty() ? "" : std::string(t.norm(0));
    if (first != "list" && first != "name" && first != "give" && first != "show") return {};
    i = 0;
  }
  const std::string wh(t.norm(i));
  size_t j = i + 1;
  auto at = [&](size_t k) { return k < t.size() ? std::string(t.norm(k)) : std::string(); };
  if (wh == "how") {
    if (at(j) != "many" && at(j) != "much") return {};  // "how long", "how old": no noun
    if (at(j) == "many") skipped->push_back("many");
    ++j;
  } else if (wh == "who" || wh == "whom" || wh == "where" || wh == "when" || wh == "why") {
    if (!IsCopula(at(j))) return {};  // "Who prefers ...": a verb follows
    ++j;
  } else if (wh == "what" || wh == "which") {
    if (IsAuxiliary(at(j))) return {};  // "What does X prefer?": the object is not named
    if (IsCopula(at(j))) ++j;
  }
  std::vector<std::string> phrase;
  bool measure_only = true;  // only measure words so far: "of" hands the focus on
  for (size_t k = j; k < t.size() && phrase.size() < 3; ++k) {
    const std::string w(t.norm(k));
    const std::string_view raw = t.raw(k);
    if (std::isdigit(static_cast<unsigned char>(w[0]))) break;
    const bool schema_word = in_vocabulary(w);
    if (IsStopword(w)) {
      if (phrase.empty() && (w != "of" || measure_only)) continue;  // "the", "of the"
      if (w == "of" && measure_only) continue;
      break;
    }
    if (k > 0 && std::isupper(static_cast<unsigned char>(raw[0])) && !schema_word) break;  // a name
    if (schema_word) {
      phrase.push_back(w);
      // "the names of the customers": a measure word hands the focus on
      // even when the schema has it (a "name" field).
      measure_only = measure_only && IsMeasureWord(w);
      continue;
    }
    if (IsMeasureWord(w)) {
      skipped->push_back(w);
      continue;
    }
    if (IsQualifier(w) || IsAuxiliary(w)) {
      if (!phrase.empty()) break;
      skipped->push_back(w);
      continue;
    }
    if (LooksLikeVerb(w)) break;
    phrase.push_back(w);
    measure_only = false;
  }
  return phrase;
}

bool Descriptive(std::string_view question) {
  const std::string q = ToLowerAscii(question);
  const std::vector<std::string> w = Tokenize(q, TokenizerOptions{false, false});
  if (w.empty()) return false;
  if (w[0] == "why" || w[0] == "explain" || w[0] == "describe") return true;
  if (w[0] == "how" && w.size() > 1 && (IsAuxiliary(w[1]) || IsCopula(w[1]))) return true;
  static const char* kPhrases[] = {"what caused", "cause of", "causes of", "reason", "consist", "comprise",
                                   "what led to", "due to what", "factors", "what is meant", "purpose of",
                                   "what does the table show", "what is the table about", "explanation"};
  for (const char* p : kPhrases) {
    if (q.find(p) != std::string::npos) return true;
  }
  return false;
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

std::vector<int> YearsIn(std::string_view text) {
  std::vector<int> out;
  CollectYears(text, &out);
  return out;
}

// Fills a SchemaIndex from the records of a snapshot: the records and text
// documents, the known values and their trie, the schema's vocabulary and
// the years the data spans. One use.
class SchemaIndex::Builder {
 public:
  Builder(const SchemaContract& contract, const Snapshot& snapshot, SchemaIndex* index)
      : contract_(contract), snapshot_(snapshot), index_(*index) {
    for (uint32_t d = 0; d < snapshot.documents().size(); ++d) {
      doc_of_.emplace(snapshot.documents()[d].external_id, d);
    }
    passages_of_.resize(snapshot.documents().size());
    first_passage_.assign(snapshot.documents().size(), -1);
    for (uint32_t p = 0; p < snapshot.num_passages(); ++p) {
      const SnapshotPassage& sp = snapshot.passage(p);
      passages_of_[sp.document].push_back(p);
      if (sp.ordinal == 0) first_passage_[sp.document] = p;
    }
    for (const EntityType& t : contract.entity_types) {
      for (const std::string& f : t.text_fields) text_fields_.emplace(t.name, f);
    }
  }

  void Run(std::vector<RecordInput> records) {
    for (RecordInput& in : records) AddInput(in);
    BuildValueTrie();
    IndexSchemaWords();
    for (uint32_t d = 0; d < snapshot_.num_documents(); ++d) {
      CollectYears(snapshot_.DocumentText(d), &years_);
    }
    if (!years_.empty()) {
      index_.min_year_ = *std::min_element(years_.begin(), years_.end());
      index_.max_year_ = *std::max_element(years_.begin(), years_.end());
    }
    index_.LinkRecords(snapshot_);
    index_.LinkTextDocuments(text_fields_);
  }

 private:
  // A text document (by its title), or a structured record with its
  // fields; inputs whose document the snapshot does not hold are skipped.
  void AddInput(const RecordInput& in) {
    auto d = doc_of_.find(in.external_id);
    if (!in.structured) {
      if (d == doc_of_.end()) return;
      const std::string title(snapshot_.documents()[d->second].title);
      index_.text_by_title_[EntityKey(title)].push_back(
          static_cast<uint32_t>(index_.text_documents_.size()));
      index_.text_documents_.push_back({title, passages_of_[d->second], {}});
      return;
    }
    if (d == doc_of_.end() || first_passage_[d->second] < 0) return;
    IndexedRecord r;
    r.passage = static_cast<uint32_t>(first_passage_[d->second]);
    r.document_id = in.external_id;
    r.type = in.entity_type;
    r.name = snapshot_.documents()[d->second].title;
    r.file = in.file;
    r.line = in.line;
    if (!ReadFields(in.fields_json, &r.fields)) return;
    const uint32_t id = static_cast<uint32_t>(index_.records_.size());
    index_.record_documents_.emplace(r.document_id, id);
    index_.record_of_passage_.emplace(r.passage, id);
    for (const auto& [field, value] : r.fields) {
      if (!value.empty() && value.size() <= 100) {
        index_.by_value_[EntityKey(value)].emplace_back(id, field);
      }
    }
    IndexKnownValues(r, id);
    index_.records_.push_back(std::move(r));
  }

  // {"field": "value" | ["v1", ...]} as (field, value) pairs, a list's
  // values joined by ", "; false when it is not a JSON object.
  static bool ReadFields(const std::string& fields_json,
                         std::vector<std::pair<std::string, std::string>>* out) {
    const nlohmann::json fields = nlohmann::json::parse(fields_json, nullptr, false);
    if (!fields.is_object()) return false;
    for (const auto& [k, v] : fields.items()) {
      std::string value;
      if (v.is_array()) {
        for (const auto& x : v) value += (value.empty() ? "" : ", ") + x.get<std::string>();
      } else if (v.is_string()) {
        value = v.get<std::string>();
      }
      out->emplace_back(k, value);
    }
    return true;
  }

  // The record's short values with a letter (not of text fields) are known
  // values of (type, field), and so is the entity name ("Order 1003"),
  // under "name" unless a field holds it already. Their years count too.
  void IndexKnownValues(const IndexedRecord& r, uint32_t id) {
    std::vector<std::pair<std::string, std::string>> values = r.fields;
    bool named = false;
    for (const auto& [field, value] : r.fields) named = named || value == r.name;
    if (!named) values.emplace_back("name", r.name);
    for (const auto& [field, value] : values) {
      CollectYears(value, &years_);
      if (text_fields_.count({r.type, field}) || value.size() > 100 || !HasLetter(value)) continue;
      auto [it, added] = value_ids_.emplace(std::make_tuple(r.type, field, ToLowerAscii(value)),
                                            static_cast<uint32_t>(index_.values_.size()));
      if (added) index_.values_.push_back({value, field, r.type, {}});
      index_.values_[it->second].records.push_back(id);
    }
  }

  void BuildValueTrie() {
    std::vector<TriePattern> patterns;
    for (uint32_t v = 0; v < index_.values_.size(); ++v) {
      patterns.push_back({index_.values_[v].value, v});
      index_.value_keys_.push_back(ToLowerAscii(index_.values_[v].value));
    }
    index_.trie_ = TokenTrie::Build(patterns);
  }

  // The words of source, type and field names: the vocabulary, each type's
  // words and head words, and the field names a question may use.
  void IndexSchemaWords() {
    auto add_words = [&](std::string_view name) {
      for (const std::string& w : FieldNameTokens(name)) index_.vocabulary_.insert(StemS(w));
    };
    for (const SourceInfo& src : contract_.structure.sources) add_words(src.name);
    for (const EntityType& t : contract_.entity_types) {
      add_words(t.name);
      std::vector<std::string> names = {t.name, t.source};
      names.insert(names.end(), t.merged_sources.begin(), t.merged_sources.end());
      for (const std::string& n : names) {
        const std::vector<std::string> tokens = FieldNameTokens(n);
        for (const std::string& w : tokens) index_.type_words_[t.name].insert(StemS(w));
        if (!tokens.empty()) index_.type_heads_.emplace(t.name, StemS(tokens.back()));
      }
      for (const std::string& a : t.attributes) add_words(a);
      for (const std::string& a : t.attributes) {
        if (text_fields_.count({t.name, a})) continue;
        CollectYears(a, &years_);
        std::vector<std::string> tokens = Words(a);
        if (!tokens.empty()) index_.field_names_.push_back({t.name, a, std::move(tokens)});
      }
    }
  }

  const SchemaContract& contract_;
  const Snapshot& snapshot_;
  SchemaIndex& index_;
  std::unordered_map<std::string, uint32_t> doc_of_;           // external id → snapshot document
  std::vector<std::vector<uint32_t>> passages_of_;             // per document
  std::vector<int64_t> first_passage_;                         // per document; -1 when none
  std::set<std::pair<std::string, std::string>> text_fields_;  // (type, field)
  std::vector<int> years_;
  std::map<std::tuple<std::string, std::string, std::string>, uint32_t> value_ids_;
};

std::unique_ptr<SchemaIndex> SchemaIndex::Build(const SchemaContract& contract,
                                                std::vector<RecordInput> records,
                                                const Snapshot& snapshot) {
  auto index = std::unique_ptr<SchemaIndex>(new SchemaIndex());
  index->contract_ = contract;
  Builder(contract, snapshot, index.get()).Run(std::move(records));
  return index;
}

void SchemaIndex::LinkTextDocuments(const std::set<std::pair<std::string, std::string>>& text_fields) {
  std::vector<std::string> titles;
  for (uint32_t d = 0; d < text_documents_.size(); ++d) {
    titles.push_back(text_documents_[d].title);
    for (uint32_t p : text_documents_[d].passages) text_document_of_passage_.emplace(p, d);
  }
  document_links_ = DocumentLinks(titles);
  for (uint32_t r = 0; r < records_.size(); ++r) {
    for (const auto& [field, value] : records_[r].fields) {
      if (value.empty() || value.size() > 200 || text_fields.count({records_[r].type, field})) continue;
      for (uint32_t d : document_links_.Named(value)) text_documents_[d].linked_from.emplace_back(r, field);
    }
  }
}

void SchemaIndex::LinkRecords(const Snapshot& snapshot) {
  links_.assign(records_.size(), {});
  for (const IndexedRecord& r : records_) record_types_.insert(r.type);
  const KnowledgeGraph* g = snapshot.graph();
  if (g == nullptr) return;
  // The entity each record defines: same type, same name (EntityKey).
  std::unordered_map<std::string, uint32_t> entity_of;
  for (uint32_t e = 0; e < g->num_entities(); ++e) {
    if (record_types_.count(std::string(g->EntityType(e)))) {
      entity_of.emplace(std::string(g->EntityType(e)) + '\x1f' + EntityKey(g->EntityName(e)), e);
    }
  }
  auto& records_of = records_of_entity_;
  for (uint32_t r = 0; r < records_.size(); ++r) {
    auto it = entity_of.find(records_[r].type + '\x1f' + EntityKey(records_[r].name));
    if (it == entity_of.end()) continue;
    records_[r].entity = it->second;
    records_of[it->second].push_back(r);
  }
  // Declared relationships by name; link fields are attributes of the subject's type.
  std::multimap<std::string, const RelationshipType*> declared;
  for (const RelationshipType& rel : contract_.relationships) declared.emplace(rel.name, &rel);
  std::set<std::pair<std::string, std::string>> attributes;  // (type, field)
  for (const EntityType& t : contract_.entity_types) {
    for (const std::string& a : t.attributes) attributes.emplace(t.name, a);
  }
  const Csr& related = g->Edges(EdgeKind::kRelatedTo);
  for (const auto& [e, recs] : records_of) {
    const uint32_t node = g->EntityNode(e);
    for (uint64_t k = related.Begin(node); k < related.End(node); ++k) {
      const uint32_t f = related.attrs[k];
      const bool outgoing = g->FactSubject(f) == e;
      const uint32_t other = outgoing ? g->FactObject(f) : g->FactSubject(f);
      auto target = records_of.find(other);
      if (other == e || target == records_of.end()) continue;
      const std::string relation(g->FactRelation(f));
      const std::string self_type(g->EntityType(e));
      const std::string other_type(g->EntityType(other));
      const std::string& subject_type = outgoing ? self_type : other_type;
      const std::string& object_type = outgoing ? other_type : self_type;
      RecordLink link;
      link.relation = relation;
      link.outgoing = outgoing;
      bool ok = false;
      for (auto [it, end] = declared.equal_range(relation); it != end; ++it) {
        const RelationshipType& rel = *it->second;
        if (rel.from == subject_type && rel.to == object_type) {
          link.field = rel.from_field;
        } else if (rel.from != object_type || rel.to != subject_type) {
          continue;
        }
        link.confidence = rel.confidence > 0 ? rel.confidence : 1.0;
        ok = true;
        break;
      }
      if (!ok && attributes.count({subject_type, relation})) {
        link.field = relation;  // a link field (B.5.1)
        ok = true;
      }
      if (!ok) continue;
      for (uint32_t r : recs) {
        for (uint32_t o : target->second) {
          link.record = o;
          const bool dup = std::any_of(links_[r].begin(), links_[r].end(), [&](const RecordLink& l) {
            return l.record == o && l.relation == link.relation && l.outgoing == link.outgoing;
          });
          if (!dup) links_[r].push_back(link);
        }
      }
    }
  }
}

const std::vector<RecordLink>& SchemaIndex::LinksOf(uint32_t r) const {
  static const std::vector<RecordLink> kNone;
  return r < links_.size() ? links_[r] : kNone;
}

bool SchemaIndex::HasRecords(std::string_view type) const {
  return record_types_.count(std::string(type)) > 0;
}

std::vector<uint32_t> SchemaIndex::Related(const std::vector<uint32_t>& from, std::string_view type,
                                           size_t max_hops, std::vector<std::string>* path,
                                           double* confidence) const {
  struct Via {
    uint32_t from;
    const RecordLink* link;
  };
  std::unordered_map<uint32_t, Via> via;  // how each reached record was reached
  std::set<uint32_t> seen(from.begin(), from.end());
  std::vector<uint32_t> frontier(from.begin(), from.end()), found;
  for (size_t hop = 0; hop < max_hops && found.empty() && !frontier.empty(); ++hop) {
    std::vector<uint32_t> next;
    for (uint32_t r : frontier) {
      for (const RecordLink& l : LinksOf(r)) {
        if (!seen.insert(l.record).second) continue;
        via.emplace(l.record, Via{r, &l});
        next.push_back(l.record);
        if (records_[l.record].type == type) found.push_back(l.record);
      }
    }
    frontier = std::move(next);
  }
  std::sort(found.begin(), found.end());
  if (!found.empty() && (path != nullptr || confidence != nullptr)) {
    std::vector<std::string> relations;
    double c = 1.0;
    for (auto it = via.find(found[0]); it != via.end(); it = via.find(it->second.from)) {
      relations.insert(relations.begin(), it->second.link->relation);
      c *= it->second.link->confidence;
    }
    if (path != nullptr) *path = std::move(relations);
    if (confidence != nullptr) *confidence = c;
  }
  return found;
}

std::vector<uint32_t> SchemaIndex::RecordsAbout(uint32_t passage, const Snapshot& snapshot) const {
  std::vector<uint32_t> out;
  if (auto it = record_of_passage_.find(passage); it != record_of_passage_.end()) out.push_back(it->second);
  if (auto it = text_document_of_passage_.find(passage); it != text_document_of_passage_.end()) {
    for (const auto& [r, field] : text_documents_[it->second].linked_from) out.push_back(r);
  }
  const KnowledgeGraph* g = snapshot.graph();
  if (g != nullptr && passage < g->num_passages()) {
    const Csr& mentions = g->Edges(EdgeKind::kMentions);
    for (uint64_t k = mentions.Begin(passage); k < mentions.End(passage); ++k) {
      const uint32_t node = mentions.targets[k];
      if (node < g->num_passages()) continue;
      auto it = records_of_entity_.find(node - static_cast<uint32_t>(g->num_passages()));
      if (it != records_of_entity_.end()) out.insert(out.end(), it->second.begin(), it->second.end());
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<uint32_t> SchemaIndex::PassagesAbout(uint32_t r, const Snapshot& snapshot) const {
  std::vector<uint32_t> out = {records_[r].passage};
  const KnowledgeGraph* g = snapshot.graph();
  if (g != nullptr && records_[r].entity != kNoEntity) {
    const Csr& mentions = g->Edges(EdgeKind::kMentions);
    const uint32_t node = g->EntityNode(records_[r].entity);
    for (uint64_t k = mentions.Begin(node); k < mentions.End(node); ++k) {
      if (mentions.targets[k] < g->num_passages()) out.push_back(mentions.targets[k]);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<uint32_t> SchemaIndex::LinkedPassages(std::string_view name) const {
  std::vector<uint32_t> out;
  for (uint32_t d : document_links_.Named(name)) {
    out.insert(out.end(), text_documents_[d].passages.begin(), text_documents_[d].passages.end());
  }
  return out;
}

std::vector<std::pair<uint32_t, std::string>> SchemaIndex::RecordsLinkingTo(
    std::string_view name) const {
  const std::string key = EntityKey(name);
  std::vector<std::pair<uint32_t, std::string>> out;
  if (auto it = by_value_.find(key); it != by_value_.end()) out = it->second;
  if (auto it = text_by_title_.find(key); it != text_by_title_.end()) {
    for (uint32_t d : it->second) {
      const auto& from = text_documents_[d].linked_from;
      out.insert(out.end(), from.begin(), from.end());
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
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

namespace {

// True when every word of `mention` is a calendar word or a number.
bool IsCalendarMention(std::string_view mention) {
  for (const std::string& token : Tokenize(mention)) {
    for (const std::string& w : LetterRuns(token)) {
      if (!IsCalendarWord(w)) return false;
    }
  }
  return true;
}

}  // namespace

size_t SchemaIndex::AddFuzzyMatches(const std::string& mention, size_t begin, size_t end,
                                    std::vector<ValueMatch>* out) const {
  if (mention.size() < kMinFuzzyLength) return 0;
  const size_t max_d = std::max<size_t>(1, mention.size() / 5);
  size_t best = max_d + 1;
  std::vector<std::pair<uint32_t, size_t>> hits;  // value, distance
  for (uint32_t v = 0; v < values_.size(); ++v) {
    const size_t d = EditDistanceAtMost(mention, value_keys_[v], max_d);
    if (d > max_d || d > best) continue;
    if (d < best) hits.clear();
    best = d;
    hits.emplace_back(v, d);
  }
  if (hits.size() > kMaxFuzzyMatches) hits.resize(kMaxFuzzyMatches);
  const double score = kFuzzyScale * (1.0 - static_cast<double>(best) / static_cast<double>(mention.size()));
  for (const auto& [v, d] : hits) {
    const KnownValue& kv = values_[v];
    out->push_back({kv.value, kv.field, kv.type, kv.records, score, begin, end});
  }
  return hits.size();
}

bool SchemaIndex::NamesNothingKnown(std::string_view mention, const Snapshot& snapshot) const {
  bool any_word = false;
  for (const std::string& token : Tokenize(mention)) {
    for (const std::string& w : LetterRuns(token)) {
      if (w.size() < 2 || IsCalendarWord(w)) continue;
      any_word = true;
      if (snapshot.bm25().DocumentFrequency(w) > 0 || vocabulary_.count(StemS(w)) > 0) return false;
    }
  }
  return any_word;
}

std::vector<bool> SchemaIndex::MatchKnownValues(const TokenizedText& text,
                                                QuestionAnalysis* a) const {
  std::vector<bool> covered(text.size(), false);
  for (const TrieMatch& m : trie_.Scan(text)) {
    bool content = false;
    for (uint32_t t = m.token_begin; t < m.token_end; ++t) {
      content = content || !IsStopword(text.norm(t));
    }
    if (!content) continue;
    for (uint32_t t = m.token_begin; t < m.token_end; ++t) covered[t] = true;
    for (uint32_t v : trie_.payloads(m.entry)) {
      const KnownValue& kv = values_[v];
      a->constraints.push_back(
          {kv.value, kv.field, kv.type, kv.records, 1.0, m.token_begin, m.token_end});
    }
  }
  return covered;
}

void SchemaIndex::MatchMention(const TokenizedText& text, size_t b, size_t e,
                               const Snapshot& snapshot, QuestionAnalysis* a) const {
  const std::string_view raw =
      text.text().substr(text.token(b).begin, text.token(e - 1).end - text.token(b).begin);
  const std::string mention = ToLowerAscii(raw);
  size_t found = 0;
  for (uint32_t v = 0; v < values_.size() && found < 20; ++v) {
    const size_t at = value_keys_[v].find(mention);
    if (at == std::string::npos) continue;
    const KnownValue& kv = values_[v];
    a->constraints.push_back({kv.value, kv.field, kv.type, kv.records, 0.8, b, e});
    ++found;
  }
  if (found == 0) found = AddFuzzyMatches(mention, b, e, &a->constraints);
  if (found > 0) {
    a->names_known = true;
    return;
  }
  // Short single words ("FY", "Q3") are abbreviations more often than names,
  // and a single word after a determiner is a defined term ("the Company",
  // "our Board").
  if (e - b < 2 && mention.size() < 5) return;
  if (e - b == 1 && b > 0 && IsDeterminer(text.norm(b - 1))) return;
  if (NamesNothingKnown(mention, snapshot)) {
    a->unknown_mentions.push_back(std::string(raw));
  } else if (!IsCalendarMention(mention)) {
    a->names_known = true;
  }
}

const std::set<std::string>& SchemaIndex::TypeWords(const std::string& type) const {
  static const std::set<std::string> kNone;
  auto it = type_words_.find(type);
  return it == type_words_.end() ? kNone : it->second;
}

void SchemaIndex::MatchFieldNames(const std::set<std::string>& words, QuestionAnalysis* a) const {
  // Field names compare singular to singular ("names" uses "name"), and
  // an abbreviated name by the word it begins ("Pos" / "position").
  std::set<std::string> stems;
  for (const std::string& w : words) stems.insert(StemS(w));
  auto named = [&](const std::string& t) {
    return stems.count(StemS(t)) > 0 ||
           std::any_of(words.begin(), words.end(),
                       [&](const std::string& w) { return NamesFieldWord(w, t); });
  };
  for (const FieldName& f : field_names_) {
    size_t hit = 0, own = 0;
    for (const std::string& t : f.tokens) {
      if (!named(t)) continue;
      ++hit;
      own += TypeWords(f.type).count(StemS(t));
    }
    if (hit == 0) continue;
    a->fields.push_back({f.type, f.field,
                         (static_cast<double>(hit) - 0.5 * static_cast<double>(own)) /
                             static_cast<double>(f.tokens.size()),
                         own == hit});
  }
  std::stable_sort(a->fields.begin(), a->fields.end(),
                   [](const FieldMention& x, const FieldMention& y) {
                     if (x.by_type_name != y.by_type_name) return !x.by_type_name;
                     return x.score > y.score;
                   });
}

void SchemaIndex::AnalyzeFocus(const TokenizedText& text, QuestionAnalysis* a) const {
  auto in_vocabulary = [&](const std::string& w) { return vocabulary_.count(StemS(w)) > 0; };
  std::vector<std::string> skipped;
  a->focus = FocusPhrase(text, in_vocabulary, &skipped);
  for (const std::string& w : skipped) {
    if (w == "many" || w == "number" || w == "count") a->aggregate = "count";
    if (w == "total" || w == "sum" || w == "combined" || w == "cumulative" || w == "aggregate") {
      a->aggregate = "sum";
    }
    if (w == "average" || w == "mean") a->aggregate = "average";
  }
  for (const std::string& w : a->focus) {
    const std::string stem = StemS(w);
    for (const auto& [type, names] : type_words_) {
      // The type's head word (its last name token) or its source's name.
      if (names.count(stem) && type_heads_.count({type, stem})) {
        a->asked_type = type;
        break;
      }
    }
    if (!a->asked_type.empty()) break;
  }
  bool known = a->focus.empty();
  for (const std::string& w : a->focus) {
    known = known || in_vocabulary(w);
    // A known value ("which Acme account") covers it too.
    for (const ValueMatch& m : a->constraints) {
      known = known || ToLowerAscii(m.value).find(w) != std::string::npos;
    }
  }
  if (!known) a->missing_concept = a->focus[0];
}

QuestionAnalysis SchemaIndex::AnalyzeQuestion(std::string_view question,
                                              const Snapshot& snapshot) const {
  QuestionAnalysis a;
  a.answer_type = AnswerType(question);
  a.descriptive = Descriptive(question);
  const TokenizedText text(question);
  const std::vector<bool> covered = MatchKnownValues(text, &a);
  for (const auto& [b, e] : ProperNounSpans(text)) {
    bool known = false;
    for (size_t t = b; t < e; ++t) known = known || covered[t];
    a.names_known = a.names_known || known;
    if (!known) MatchMention(text, b, e, snapshot, &a);
  }
  std::set<std::string> words;
  for (std::string& w : Words(question)) words.insert(std::move(w));
  std::stable_sort(a.constraints.begin(), a.constraints.end(),
                   [](const ValueMatch& x, const ValueMatch& y) {
                     if (x.score != y.score) return x.score > y.score;
                     return (x.token_end - x.token_begin) > (y.token_end - y.token_begin);
                   });
  // A word of the present the sources write too ("currently plays for") is
  // how they state a fact, not a request for live data.
  for (const std::string& w : words) {
    a.realtime = a.realtime || (IsRealtimeWord(w) && snapshot.bm25().DocumentFrequency(w) == 0);
  }
  MatchFieldNames(words, &a);
  CollectYears(question, &a.years);
  // D.2 / C.2: the phrase naming what is asked about, its entity type, and
  // whether the schema has a word for it.
  AnalyzeFocus(text, &a);
  return a;
}

bool NamesFieldWord(std::string_view word, std::string_view token) {
  if (word.empty() || token.empty()) return false;
  if (StemS(word) == StemS(token)) return true;
  const bool letters = std::all_of(token.begin(), token.end(), [](unsigned char c) { return std::isalpha(c); });
  return letters && token.size() >= 3 && word.size() >= token.size() + 2 && word.compare(0, token.size(), token) == 0;
}

}  // namespace flowrag
