// SchemaLookup (agent/schema_lookup.h).
#include "agent/schema_lookup.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "common/text.h"
#include "extract/aho_corasick.h"

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
std::string DateField(const SchemaIndex& index, const std::string& type, const std::set<std::string>& used) {
  std::string found;
  for (const EntityType& t : index.contract().entity_types) {
    if (t.name != type) continue;
    for (const FieldInfo& f : index.contract().structure.fields) {
      if (f.type != "date" || !t.HasSource(f.source) || used.count(f.path)) continue;
      if (std::find(t.attributes.begin(), t.attributes.end(), f.path) == t.attributes.end()) continue;
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
    if (dot != std::string::npos) decimals = std::max(decimals, static_cast<int>(v.size() - dot - 1));
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
Lookup SchemaLookup(std::string_view question, const QuestionAnalysis& a, const SchemaIndex& index) {
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
  auto asks_field = [&](const std::string& type, const std::set<std::string>& used,
                        bool strong) -> std::string {
    for (const FieldMention& f : a.fields) {
      if (f.type == type && !used.count(f.field) && !(strong && f.by_type_name)) return f.field;
    }
    return "";
  };
  Lookup best;
  size_t best_count = 0;
  bool best_has_field = false;
  std::set<std::string> best_used;
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
    std::string field = asks_field(type, used, true);
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
    best_used = used;
  }
  if (best.records.empty()) return best;
  std::set<std::string> given;  // the question's own constraint values
  for (const ValueMatch& c : a.constraints) given.insert(EntityKey(c.value));
  std::set<std::string> focus;
  for (const std::string& w : a.focus) focus.insert(StemS(w));
  auto in_focus = [&](const std::string& field) {
    for (const std::string& t : FieldStems(field)) {
      if (focus.count(t)) return true;
    }
    return false;
  };
  std::set<std::string> question_words;
  for (const std::string& w : Tokenize(question, TokenizerOptions{false, false})) {
    question_words.insert(StemS(w));
  }
  auto named_in_full = [&](const std::string& field) {
    const std::set<std::string> stems = FieldStems(field);
    return std::all_of(stems.begin(), stems.end(),
                       [&](const std::string& t) { return question_words.count(t) > 0; });
  };
  const std::string q = ToLowerAscii(question);
  const bool how_many = a.aggregate == "count";
  const bool asks_name = q.rfind("which", 0) == 0 || q.rfind("who", 0) == 0 ||
                         q.rfind("what is the name", 0) == 0 || q.rfind("name", 0) == 0;

  // Follows the relationships from the matched records to `type`.
  auto hop = [&](const std::string& type, const std::vector<uint32_t>& related,
                 std::vector<std::string> path, double c_path) {
    best.matched_type = best.type;
    best.bridge = best.records;
    best.type = type;
    best.records = related;
    best.path = std::move(path);
    best.c_path = c_path;
  };
  // The asked type differs from the matched one: the focus names it, or a
  // field of it while no field of the matched type is in focus.
  std::string target, target_field;
  const bool field_named = !best.field.empty() && named_in_full(best.field);
  if (!a.asked_type.empty() && a.asked_type != best.type && index.HasRecords(a.asked_type) &&
      !field_named) {
    target = a.asked_type;
    target_field = asks_field(target, {}, true);
  } else if (a.asked_type.empty() && (best.field.empty() || !in_focus(best.field))) {
    for (const FieldMention& f : a.fields) {
      if (f.type != best.type && !f.by_type_name && in_focus(f.field) && index.HasRecords(f.type)) {
        target = f.type;
        target_field = f.field;
        break;
      }
    }
  }
  if (!target.empty()) {
    std::vector<std::string> path;
    double c_path = 1.0;
    const std::vector<uint32_t> related = index.Related(best.records, target, 2, &path, &c_path);
    if (!related.empty()) {
      hop(target, related, std::move(path), c_path);
      best.field = target_field;
    }
  }
  // A looked-up reference the question does not ask for as such ("which
  // customer ..." looks up Order.customer_id): the records it references.
  if (best.bridge.empty() && !best.field.empty() && !field_named) {
    std::vector<uint32_t> referenced;
    std::string relation;
    double conf = 1.0;
    for (uint32_t r : best.records) {
      for (const RecordLink& l : index.LinksOf(r)) {
        if (!l.outgoing || l.field != best.field) continue;
        if (std::find(referenced.begin(), referenced.end(), l.record) == referenced.end()) {
          referenced.push_back(l.record);
        }
        relation = l.relation;
        conf = std::min(conf, l.confidence);
      }
    }
    if (!referenced.empty()) {
      hop(index.records()[referenced[0]].type, referenced, {relation}, conf);
      best.field.clear();
    }
  }
  // A time constraint on the answer records ("... order in 2022"): those
  // with a value in the question's years, when any has.
  if (!a.years.empty() && best.records.size() > 1) {
    const int lo = *std::min_element(a.years.begin(), a.years.end());
    const int hi = *std::max_element(a.years.begin(), a.years.end());
    std::vector<uint32_t> in_time;
    for (uint32_t r : best.records) {
      bool in = false;
      for (const auto& [f, v] : index.records()[r].fields) {
        for (int y : YearsIn(v)) in = in || (y >= lo && y <= hi);
      }
      if (in) in_time.push_back(r);
    }
    if (!in_time.empty()) best.records = std::move(in_time);
  }
  auto collect = [&]() {
    best.values.clear();
    std::set<std::string> seen;
    const bool names = best.field.empty() && (asks_name || !best.bridge.empty() || how_many ||
                                              (!a.asked_type.empty() && a.asked_type == best.type));
    for (uint32_t r : best.records) {
      const std::string v = best.field.empty() && !names ? "" : ValueOf(index.records()[r], best.field);
      if (v.empty() || !seen.insert(v).second) continue;
      if (given.count(EntityKey(v))) {
        best.given = v;
        continue;
      }
      best.values.push_back(v);
    }
  };
  collect();
  // The only name is the question's own ("Who placed order O4?" → "O4"):
  // the records its references lead to, when they are of one type.
  if (best.values.empty() && !best.given.empty() && best.bridge.empty() && best.field.empty()) {
    std::vector<uint32_t> referenced;
    std::set<std::string> types;
    std::string relation;
    double conf = 1.0;
    for (uint32_t r : best.records) {
      for (const RecordLink& l : index.LinksOf(r)) {
        if (!l.outgoing) continue;
        if (std::find(referenced.begin(), referenced.end(), l.record) == referenced.end()) {
          referenced.push_back(l.record);
        }
        types.insert(index.records()[l.record].type);
        relation = l.relation;
        conf = std::min(conf, l.confidence);
      }
    }
    if (types.size() == 1) {
      hop(*types.begin(), referenced, {relation}, conf);
      collect();
    }
  }
  // "How many <type> ...": the number of records of the asked type.
  if (how_many && best.field.empty() && !best.values.empty() &&
      (!best.bridge.empty() || a.asked_type == best.type)) {
    best.values = {std::to_string(best.records.size())};
    best.aggregated = true;
  }
  // "The total / average <field> of ...": over every answer record's value.
  if ((a.aggregate == "sum" || a.aggregate == "average") && !best.field.empty() && !best.values.empty()) {
    std::vector<std::string> values;
    for (uint32_t r : best.records) values.push_back(ValueOf(index.records()[r], best.field));
    const std::string v = Aggregate(values, a.aggregate);
    if (!v.empty()) {
      best.values = {v};
      best.aggregated = true;
    }
  }
  return best;
}

}  // namespace flowrag
