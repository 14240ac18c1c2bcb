// Monotonic schema extension (schema-contracts paper Appendix C.4–C.6),
// with the confidence filter of C.4 / §3.4 (ExtensionOptions::min_confidence).
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "flowrag/schema.h"

namespace flowrag {
namespace {

template <typename T, typename Key>
bool Contains(const std::vector<T>& v, const Key& key) {
  return std::any_of(v.begin(), v.end(), [&](const T& x) { return key(x); });
}

std::string Fixed2(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", x);
  return buf;
}

}  // namespace

ExtensionResult ExtendContract(const SchemaContract& base, const SchemaContract& incoming,
                               const ExtensionOptions& options) {
  ExtensionResult r;
  r.contract = base;
  SchemaContract& c = r.contract;
  InducedSchema& s = c.structure;
  std::vector<std::string>& added = r.added;
  // C.4: an addition with a confidence below τ is left out, and said.
  auto below = [&](double confidence, const std::string& what) {
    if (confidence >= options.min_confidence) return false;
    r.left_out.push_back(what + ": confidence " + Fixed2(confidence) + " below " +
                         Fixed2(options.min_confidence));
    return true;
  };
  std::set<std::pair<std::string, std::vector<std::string>>> keys_left_out;  // (source, fields)

  // Exclusions only ever add up: what either side excluded stays excluded.
  for (const auto& [globs, kind] :
       {std::pair{&incoming.structure.exclusion_rules.files, "file"},
        {&incoming.structure.exclusion_rules.fields, "field"}}) {
    for (const std::string& g : *globs) {
      ExclusionRules one;
      (std::string(kind) == "file" ? one.files : one.fields).push_back(g);
      if (s.exclusion_rules.Merge(one) > 0) added.push_back("exclusion of " + std::string(kind) + "s " + g);
    }
  }
  for (const SourceInfo& src : incoming.structure.sources) {
    if (Contains(s.sources, [&](const SourceInfo& x) { return x.name == src.name; })) continue;
    s.sources.push_back(src);
    added.push_back("source " + src.name);
  }
  for (const FieldInfo& f : incoming.structure.fields) {
    if (Contains(s.fields,
                 [&](const FieldInfo& x) { return x.source == f.source && x.path == f.path; }))
      continue;
    s.fields.push_back(f);
    added.push_back("field " + f.source + "." + f.path);
  }
  for (const IdentityKey& k : incoming.structure.identity_keys) {
    if (Contains(s.identity_keys, [&](const IdentityKey& x) {
          return x.source == k.source && x.fields == k.fields;
        }))
      continue;
    const std::string what = "identity key " + k.source + "(" + k.fields.front() +
                             (k.fields.size() > 1 ? ", ..." : "") + ")";
    if (below(k.confidence, what)) {
      keys_left_out.emplace(k.source, k.fields);
      continue;
    }
    IdentityKey copy = k;
    // A source keeps its primary key; a new key of an existing source is secondary.
    if (Contains(s.identity_keys,
                 [&](const IdentityKey& x) { return x.source == k.source && x.primary; })) {
      copy.primary = false;
    }
    s.identity_keys.push_back(copy);
    added.push_back(what);
  }
  for (const ForeignKey& f : incoming.structure.foreign_keys) {
    auto key = std::tie(f.from_source, f.from_field, f.to_source, f.to_field);
    if (Contains(s.foreign_keys, [&](const ForeignKey& x) {
          return std::tie(x.from_source, x.from_field, x.to_source, x.to_field) == key;
        })) {
      continue;
    }
    const std::string what = "foreign key " + f.from_source + "." + f.from_field + " -> " +
                             f.to_source + "." + f.to_field;
    if (below(f.confidence, what)) continue;
    s.foreign_keys.push_back(f);
    added.push_back(what);
  }
  // Entity types: a new source's type is added (renamed if its name is
  // taken by another source); an existing type only gains attributes.
  std::map<std::string, std::string> renamed;  // incoming type name → name in the contract
  for (const EntityType& t : incoming.entity_types) {
    // The same type: the source's row type, the type reading the same field
    // the same way, or the llm type of that name.
    auto same_source = std::find_if(c.entity_types.begin(), c.entity_types.end(), [&](const EntityType& x) {
      return x.HasSource(t.source) && x.extraction == t.extraction &&
             x.extraction_field == t.extraction_field && (t.extraction != "llm" || x.name == t.name);
    });
    if (same_source != c.entity_types.end()) {
      renamed[t.name] = same_source->name;
      for (const std::string& a : t.attributes) {
        if (std::find(same_source->attributes.begin(), same_source->attributes.end(), a) ==
            same_source->attributes.end()) {
          same_source->attributes.push_back(a);
          added.push_back("attribute " + same_source->name + "." + a);
        }
      }
      for (const std::string& a : t.text_fields) {
        if (std::find(same_source->text_fields.begin(), same_source->text_fields.end(), a) ==
            same_source->text_fields.end()) {
          same_source->text_fields.push_back(a);
        }
      }
      continue;
    }
    EntityType copy = t;
    if (keys_left_out.count({t.source, t.identity_key})) copy.identity_key.clear();
    for (int n = 2;
         Contains(c.entity_types, [&](const EntityType& x) { return x.name == copy.name; }); ++n) {
      copy.name = t.name + std::to_string(n);
    }
    renamed[t.name] = copy.name;
    added.push_back("entity type " + copy.name);
    c.entity_types.push_back(std::move(copy));
  }
  for (RelationshipType rel : incoming.relationships) {
    if (renamed.count(rel.from)) rel.from = renamed[rel.from];
    if (renamed.count(rel.to)) rel.to = renamed[rel.to];
    auto key = std::tie(rel.from, rel.to, rel.from_field, rel.to_field);
    if (Contains(c.relationships, [&](const RelationshipType& x) {
          return std::tie(x.from, x.to, x.from_field, x.to_field) == key;
        })) {
      continue;
    }
    const std::string what = "relationship (" + rel.from + ")-[" + rel.name + "]->(" + rel.to + ")";
    if (below(rel.confidence, what)) continue;
    added.push_back(what);
    c.relationships.push_back(std::move(rel));
  }
  if (!added.empty()) {
    ++c.version;
    c.extensions.push_back({c.version, added, r.left_out});
  }
  return r;
}

}  // namespace flowrag
