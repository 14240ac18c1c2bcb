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

// One extension of `base` by `incoming`, section by section; every
// addition is named in `added`, every one left out (C.4) in `left_out`.
// One use.
class ContractExtension {
 public:
  ContractExtension(const SchemaContract& base, const ExtensionOptions& options)
      : options_(options) {
    r_.contract = base;
  }

  ExtensionResult Run(const SchemaContract& incoming) {
    MergeExclusions(incoming.structure.exclusion_rules);
    MergeSourcesAndFields(incoming.structure);
    MergeIdentityKeys(incoming.structure.identity_keys);
    MergeForeignKeys(incoming.structure.foreign_keys);
    for (const EntityType& t : incoming.entity_types) MergeEntityType(t);
    for (const RelationshipType& rel : incoming.relationships) MergeRelationship(rel);
    SchemaContract& c = r_.contract;
    if (!r_.added.empty()) {
      ++c.version;
      c.extensions.push_back({c.version, r_.added, r_.left_out});
    }
    return std::move(r_);
  }

 private:
  // C.4: an addition with a confidence below τ is left out, and said.
  bool Below(double confidence, const std::string& what) {
    if (confidence >= options_.min_confidence) return false;
    r_.left_out.push_back(what + ": confidence " + Fixed2(confidence) + " below " +
                          Fixed2(options_.min_confidence));
    return true;
  }

  // Exclusions only ever add up: what either side excluded stays excluded.
  void MergeExclusions(const ExclusionRules& incoming) {
    ExclusionRules& rules = r_.contract.structure.exclusion_rules;
    for (const auto& [globs, kind] :
         {std::pair{&incoming.files, "file"}, {&incoming.fields, "field"}}) {
      for (const std::string& g : *globs) {
        ExclusionRules one;
        (std::string(kind) == "file" ? one.files : one.fields).push_back(g);
        if (rules.Merge(one) > 0)
          r_.added.push_back("exclusion of " + std::string(kind) + "s " + g);
      }
    }
  }

  void MergeSourcesAndFields(const InducedSchema& incoming) {
    InducedSchema& s = r_.contract.structure;
    for (const SourceInfo& src : incoming.sources) {
      if (Contains(s.sources, [&](const SourceInfo& x) { return x.name == src.name; })) continue;
      s.sources.push_back(src);
      r_.added.push_back("source " + src.name);
    }
    for (const FieldInfo& f : incoming.fields) {
      if (Contains(s.fields,
                   [&](const FieldInfo& x) { return x.source == f.source && x.path == f.path; })) {
        continue;
      }
      s.fields.push_back(f);
      r_.added.push_back("field " + f.source + "." + f.path);
    }
  }

  // A new key; secondary when its source already has a primary one. A key
  // left out is remembered, so a new type does not use it.
  void MergeIdentityKeys(const std::vector<IdentityKey>& incoming) {
    InducedSchema& s = r_.contract.structure;
    for (const IdentityKey& k : incoming) {
      if (Contains(s.identity_keys, [&](const IdentityKey& x) {
            return x.source == k.source && x.fields == k.fields;
          })) {
        continue;
      }
      const std::string what = "identity key " + k.source + "(" + k.fields.front() +
                               (k.fields.size() > 1 ? ", ..." : "") + ")";
      if (Below(k.confidence, what)) {
        keys_left_out_.emplace(k.source, k.fields);
        continue;
      }
      IdentityKey copy = k;
      // A source keeps its primary key; a new key of an existing source is secondary.
      if (Contains(s.identity_keys,
                   [&](const IdentityKey& x) { return x.source == k.source && x.primary; })) {
        copy.primary = false;
      }
      s.identity_keys.push_back(copy);
      r_.added.push_back(what);
    }
  }

  void MergeForeignKeys(const std::vector<ForeignKey>& incoming) {
    InducedSchema& s = r_.contract.structure;
    for (const ForeignKey& f : incoming) {
      auto key = std::tie(f.from_source, f.from_field, f.to_source, f.to_field);
      if (Contains(s.foreign_keys, [&](const ForeignKey& x) {
            return std::tie(x.from_source, x.from_field, x.to_source, x.to_field) == key;
          })) {
        continue;
      }
      const std::string what = "foreign key " + f.from_source + "." + f.from_field + " -> " +
                               f.to_source + "." + f.to_field;
      if (Below(f.confidence, what)) continue;
      s.foreign_keys.push_back(f);
      r_.added.push_back(what);
    }
  }

  // Entity types: a new source's type is added (renamed if its name is
  // taken by another source); an existing type only gains attributes. The
  // same type: the source's row type, the type reading the same field the
  // same way, or the llm type of that name.
  void MergeEntityType(const EntityType& t) {
    std::vector<EntityType>& types = r_.contract.entity_types;
    auto same = std::find_if(types.begin(), types.end(), [&](const EntityType& x) {
      return x.HasSource(t.source) && x.extraction == t.extraction &&
             x.extraction_field == t.extraction_field && (t.extraction != "llm" || x.name == t.name);
    });
    if (same != types.end()) {
      renamed_[t.name] = same->name;
      GrowType(t, &*same);
      return;
    }
    EntityType copy = t;
    if (keys_left_out_.count({t.source, t.identity_key})) copy.identity_key.clear();
    for (int n = 2; Contains(types, [&](const EntityType& x) { return x.name == copy.name; });
         ++n) {
      copy.name = t.name + std::to_string(n);
    }
    renamed_[t.name] = copy.name;
    r_.added.push_back("entity type " + copy.name);
    types.push_back(std::move(copy));
  }

  // An existing type gains the incoming one's new attributes and text fields.
  void GrowType(const EntityType& t, EntityType* existing) {
    for (const std::string& a : t.attributes) {
      if (std::find(existing->attributes.begin(), existing->attributes.end(), a) ==
          existing->attributes.end()) {
        existing->attributes.push_back(a);
        r_.added.push_back("attribute " + existing->name + "." + a);
      }
    }
    for (const std::string& a : t.text_fields) {
      if (std::find(existing->text_fields.begin(), existing->text_fields.end(), a) ==
          existing->text_fields.end()) {
        existing->text_fields.push_back(a);
      }
    }
  }

  // A relationship between the types as the contract names them.
  void MergeRelationship(RelationshipType rel) {
    std::vector<RelationshipType>& rels = r_.contract.relationships;
    if (renamed_.count(rel.from)) rel.from = renamed_[rel.from];
    if (renamed_.count(rel.to)) rel.to = renamed_[rel.to];
    auto key = std::tie(rel.from, rel.to, rel.from_field, rel.to_field);
    if (Contains(rels, [&](const RelationshipType& x) {
          return std::tie(x.from, x.to, x.from_field, x.to_field) == key;
        })) {
      return;
    }
    const std::string what = "relationship (" + rel.from + ")-[" + rel.name + "]->(" + rel.to + ")";
    if (Below(rel.confidence, what)) return;
    r_.added.push_back(what);
    rels.push_back(std::move(rel));
  }

  const ExtensionOptions& options_;
  ExtensionResult r_;
  std::set<std::pair<std::string, std::vector<std::string>>> keys_left_out_;  // (source, fields)
  std::map<std::string, std::string> renamed_;  // incoming type name → name in the contract
};

}  // namespace

ExtensionResult ExtendContract(const SchemaContract& base, const SchemaContract& incoming,
                               const ExtensionOptions& options) {
  return ContractExtension(base, options).Run(incoming);
}

}  // namespace flowrag
