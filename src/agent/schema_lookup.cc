// SchemaLookup (agent/schema_lookup.h).
#include "agent/schema_lookup.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "common/text.h"
#include "lexical/aho_corasick.h"

namespace flowrag {
namespace {

// Stemmed words of a field name.
std::set<std::string> FieldStems(const std::string& field) {
  std::set<std::string> out;
  for (const std::string& t : Tokenize(field, TokenizerOptions{false, false})) out.insert(StemS(t));
  return out;
}

// The one attribute of `type` (not in `used`) whose catalog type is a date,
// or "": what a "when" question asks of a record.
std::string DateField(const SchemaIndex& index, const std::string& type,
                      const std::set<std::string>& used) {
  std::string found;
  for (const EntityType& t : index.contract().entity_types) {
    if (t.name != type) continue;
    for (const FieldInfo& f : index.contract().structure.fields) {
      if (f.type != "date" || !t.HasSource(f.source) || used.count(f.path)) continue;
      if (std::find(t.attributes.begin(), t.attributes.end(), f.path) == t.attributes.end())
        continue;
      if (!found.empty() && found != f.path) return "";
      found = f.path;
    }
  }
  return found;
}

// The sum or average of numeric values ("1,200.50", "$300"), printed with
// the most decimals among them; "" when one is not a number.
std::string Aggregate(const std::vector<std::string>& values, const std::string& how) {
  double total = 0;
  int decimals = 0;
  size_t n = 0;
  for (const std::string& raw : values) {
    std::string v;
    for (char c : raw) {
      if (c != ',' && c != '$' && c != ' ') v.push_back(c);
    }
    if (v.empty()) continue;
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end != '\0') return "";
    const size_t dot = v.find('.');
    if (dot != std::string::npos)
      decimals = std::max(decimals, static_cast<int>(v.size() - dot - 1));
    total += x;
    ++n;
  }
  if (n == 0) return "";
  if (how == "average") {
    total /= static_cast<double>(n);
    decimals = std::max(decimals, 2);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", std::min(decimals, 6), total);
  return buf;
}

// The first field of `type` the question mentions that is not in `used`;
// `strong`: not one mentioned only by its type's name.
std::string AskedField(const QuestionAnalysis& a, const std::string& type,
                       const std::set<std::string>& used, bool strong) {
  for (const FieldMention& f : a.fields) {
    if (f.type == type && !used.count(f.field) && !(strong && f.by_type_name)) return f.field;
  }
  return "";
}

// The type whose records satisfy the most constraints (on a tie, the first
// one with an asked field), those records, and the field asked of them.
Lookup MatchConstraints(const QuestionAnalysis& a, const SchemaIndex& index) {
  struct Hit {
    std::set<std::string> fields;
    std::vector<std::string> constraints;
    double min_score = 1.0;
  };
  std::map<std::string, std::map<uint32_t, Hit>> by_type;
  for (const ValueMatch& c : a.constraints) {
    for (uint32_t r : c.records) {
      Hit& h = by_type[c.type][r];
      if (!h.fields.insert(c.field).second) continue;
      h.constraints.push_back(c.field + " = " + c.value);
      h.min_score = std::min(h.min_score, c.score);
    }
  }
  Lookup best;
  size_t best_count = 0;
  bool best_has_field = false;
  for (const auto& [type, hits] : by_type) {
    size_t most = 0;
    for (const auto& [r, h] : hits) most = std::max(most, h.fields.size());
    std::vector<uint32_t> records;
    std::set<std::string> used;
    for (const auto& [r, h] : hits) {
      if (h.fields.size() != most) continue;
      records.push_back(r);
      used.insert(h.fields.begin(), h.fields.end());
    }
    std::string field = AskedField(a, type, used, true);
    if (field.empty() && a.answer_type == "date") field = DateField(index, type, used);
    const bool has_field = !field.empty();
    if (most < best_count || (most == best_count && (best_has_field || !has_field))) continue;
    best = Lookup{};
    best.type = type;
    best.field = field;
    best.records = records;
    best.constraints = hits.at(records[0]).constraints;
    for (uint32_t r : records) best.c_node = std::min(best.c_node, hits.at(r).min_score);
    best_count = most;
    best_has_field = has_field;
  }
  return best;
}

// What the question's words say about the answer: the values it gives, its
// focus and its words (stemmed), and how it asks.
class QuestionCues {
 public:
  QuestionCues(std::string_view question, const QuestionAnalysis& a) {
    for (const ValueMatch& c : a.constraints) given_.insert(EntityKey(c.value));
    for (const std::string& w : a.focus) focus_.insert(StemS(w));
    for (const std::string& w : Tokenize(question, TokenizerOptions{false, false})) {
      words_.insert(StemS(w));
    }
    const std::string q = ToLowerAscii(question);
    how_many_ = a.aggregate == "count";
    asks_name_ = q.rfind("which", 0) == 0 || q.rfind("who", 0) == 0 ||
                 q.rfind("what is the name", 0) == 0 || q.rfind("name", 0) == 0;
  }

  // A value the question itself gave (EntityKey compared).
  bool Given(const std::string& value) const { return given_.count(EntityKey(value)) > 0; }
  // A word of the field's name is in the focus.
  bool InFocus(const std::string& field) const {
    for (const std::string& t : FieldStems(field)) {
      if (focus_.count(t)) return true;
    }
    return false;
  }
  // Every word of the field's name is in the question.
  bool NamedInFull(const std::string& field) const {
    const std::set<std::string> stems = FieldStems(field);
    return std::all_of(stems.begin(), stems.end(),
                       [&](const std::string& t) { return words_.count(t) > 0; });
  }
  bool how_many() const { return how_many_; }
  bool asks_name() const { return asks_name_; }

 private:
  std::set<std::string> given_, focus_, words_;
  bool how_many_ = false, asks_name_ = false;
};

// The answer records become `related`, of `type`, reached from the matched
// records along `path`.
void Hop(const std::string& type, const std::vector<uint32_t>& related,
         std::vector<std::string> path, double c_path, Lookup* best) {
  best->matched_type = best->type;
  best->bridge = best->records;
  best->type = type;
  best->records = related;
  best->path = std::move(path);
  best->c_path = c_path;
}

// The asked type differs from the matched one (the focus names it, or a
// field of it while no field of the matched type is in focus): the
// relationships are followed to its records, at most two hops.
void FollowToAskedType(const QuestionAnalysis& a, const SchemaIndex& index,
                       const QuestionCues& cues, bool field_named, Lookup* best) {
  std::string target, target_field;
  if (!a.asked_type.empty() && a.asked_type != best->type && index.HasRecords(a.asked_type) &&
      !field_named) {
    target = a.asked_type;
    target_field = AskedField(a, target, {}, true);
  } else if (a.asked_type.empty() && (best->field.empty() || !cues.InFocus(best->field))) {
    for (const FieldMention& f : a.fields) {
      if (f.type != best->type && !f.by_type_name && cues.InFocus(f.field) &&
          index.HasRecords(f.type)) {
        target = f.type;
        target_field = f.field;
        break;
      }
    }
  }
  if (target.empty()) return;
  std::vector<std::string> path;
  double c_path = 1.0;
  const std::vector<uint32_t> related = index.Related(best->records, target, 2, &path, &c_path);
  if (related.empty()) return;
  Hop(target, related, std::move(path), c_path, best);
  best->field = target_field;
}

// The records the answer records' outgoing links lead to (only links of
// `field` when it is not empty), in first-seen order, with the types they
// are of, the last link's relation and the least confidence.
struct Referenced {
  std::vector<uint32_t> records;
  std::set<std::string> types;
  std::string relation;
  double confidence = 1.0;
};
Referenced FollowLinks(const SchemaIndex& index, const std::vector<uint32_t>& records,
                       const std::string& field) {
  Referenced out;
  for (uint32_t r : records) {
    for (const RecordLink& l : index.LinksOf(r)) {
      if (!l.outgoing || (!field.empty() && l.field != field)) continue;
      if (std::find(out.records.begin(), out.records.end(), l.record) == out.records.end()) {
        out.records.push_back(l.record);
      }
      out.types.insert(index.records()[l.record].type);
      out.relation = l.relation;
      out.confidence = std::min(out.confidence, l.confidence);
    }
  }
  return out;
}

// A looked-up reference the question does not ask for as such ("which
// customer ..." looks up Order.customer_id): the records it references.
void ResolveReference(const SchemaIndex& index, Lookup* best) {
  const Referenced ref = FollowLinks(index, best->records, best->field);
  if (ref.records.empty()) return;
  Hop(index.records()[ref.records[0]].type, ref.records, {ref.relation}, ref.confidence, best);
  best->field.clear();
}

// A time constraint on the answer records ("... order in 2022"): those
// with a value in the question's years, when any has.
void KeepRecordsInYears(const QuestionAnalysis& a, const SchemaIndex& index, Lookup* best) {
  if (a.years.empty() || best->records.size() <= 1) return;
  const int lo = *std::min_element(a.years.begin(), a.years.end());
  const int hi = *std::max_element(a.years.begin(), a.years.end());
  std::vector<uint32_t> in_time;
  for (uint32_t r : best->records) {
    bool in = false;
    for (const auto& [f, v] : index.records()[r].fields) {
      for (int y : YearsIn(v)) in = in || (y >= lo && y <= hi);
    }
    if (in) in_time.push_back(r);
  }
  if (!in_time.empty()) best->records = std::move(in_time);
}

// The answer values: the asked field of each answer record, or their names
// when names are asked for; distinct, without the question's own values
// (the last of which is kept in `given`).
void CollectValues(const QuestionAnalysis& a, const SchemaIndex& index, const QuestionCues& cues,
                   Lookup* best) {
  best->values.clear();
  std::set<std::string> seen;
  const bool names =
      best->field.empty() && (cues.asks_name() || !best->bridge.empty() || cues.how_many() ||
                              (!a.asked_type.empty() && a.asked_type == best->type));
  for (uint32_t r : best->records) {
    const std::string v =
        best->field.empty() && !names ? "" : ValueOf(index.records()[r], best->field);
    if (v.empty() || !seen.insert(v).second) continue;
    if (cues.Given(v)) {
      best->given = v;
      continue;
    }
    best->values.push_back(v);
  }
}

// "How many <type> ...": the number of records of the asked type. "The
// total / average <field> of ...": over every answer record's value.
void AggregateValues(const QuestionAnalysis& a, const SchemaIndex& index, const QuestionCues& cues,
                     Lookup* best) {
  if (cues.how_many() && best->field.empty() && !best->values.empty() &&
      (!best->bridge.empty() || a.asked_type == best->type)) {
    best->values = {std::to_string(best->records.size())};
    best->aggregated = true;
  }
  if ((a.aggregate == "sum" || a.aggregate == "average") && !best->field.empty() &&
      !best->values.empty()) {
    std::vector<std::string> values;
    for (uint32_t r : best->records) values.push_back(ValueOf(index.records()[r], best->field));
    const std::string v = Aggregate(values, a.aggregate);
    if (!v.empty()) {
      best->values = {v};
      best->aggregated = true;
    }
  }
}

}  // namespace

std::string ValueOf(const IndexedRecord& rec, const std::string& field) {
  if (field.empty()) return rec.name;
  for (const auto& [f, v] : rec.fields) {
    if (f == field) return v;
  }
  return "";
}

// SchemaLookup (D.1): the entity type whose records satisfy the most
// constraints, those records, and the field the question asks for. When
// the question asks about another entity type (its focus names it, or a
// field of it), the schema's relationships are followed from the matched
// records to records of that type (at most two hops); a looked-up value
// that is a reference (a foreign-key field the question does not name in
// full) is resolved to the records it references. Values equal to a
// constraint the question gave are never returned.
Lookup SchemaLookup(std::string_view question, const QuestionAnalysis& a,
                    const SchemaIndex& index) {
  Lookup best = MatchConstraints(a, index);
  if (best.records.empty()) return best;
  const QuestionCues cues(question, a);
  const bool field_named = !best.field.empty() && cues.NamedInFull(best.field);
  FollowToAskedType(a, index, cues, field_named, &best);
  if (best.bridge.empty() && !best.field.empty() && !field_named) ResolveReference(index, &best);
  KeepRecordsInYears(a, index, &best);
  CollectValues(a, index, cues, &best);
  // The only name is the question's own ("Who placed order O4?" → "O4"):
  // the records its references lead to, when they are of one type.
  if (best.values.empty() && !best.given.empty() && best.bridge.empty() && best.field.empty()) {
    const Referenced ref = FollowLinks(index, best.records, "");
    if (ref.types.size() == 1) {
      Hop(*ref.types.begin(), ref.records, {ref.relation}, ref.confidence, &best);
      CollectValues(a, index, cues, &best);
    }
  }
  AggregateValues(a, index, cues, &best);
  return best;
}

}  // namespace flowrag
