#include "schema/proposal_merge.h"

#include <algorithm>
#include <map>
#include <set>

namespace flowrag {
namespace {

void AddUnique(std::vector<std::string>* list, const std::string& s) {
  if (!s.empty() && std::find(list->begin(), list->end(), s) == list->end()) list->push_back(s);
}

std::string Reversed(const std::string& cardinality) {
  if (cardinality == "N:1") return "1:N";
  if (cardinality == "1:N") return "N:1";
  return cardinality;
}

class Merger {
 public:
  Merger(SchemaContract c, std::vector<std::string>* log)
      : c_(std::move(c)), log_(log), offline_relationships_(c_.relationships.size()) {
    for (const FieldInfo& f : c_.structure.fields) fields_.insert({f.source, f.path});
  }

  SchemaContract Run(SchemaProposal* p) {
    std::vector<bool> row(p->entity_types.size(), false);
    for (size_t i = 0; i < p->entity_types.size(); ++i) row[i] = RowType(p->entity_types[i]);
    for (size_t i = 0; i < p->entity_types.size(); ++i) {
      if (!row[i]) AddType(p->entity_types[i]);
    }
    for (ProposedEntityType& t : p->entity_types) t.name = Final(t.name);
    std::vector<ProposedRelationshipType> kept;
    for (ProposedRelationshipType& r : p->relationships) {
      if (AddRelationship(r)) kept.push_back(std::move(r));
    }
    p->relationships = std::move(kept);
    return std::move(c_);
  }

 private:
  EntityType* Type(const std::string& name) {
    for (EntityType& t : c_.entity_types) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }
  std::string Final(const std::string& name) const {
    auto it = alias_.find(name);
    return it == alias_.end() ? name : it->second;
  }
  bool HasField(const std::string& source, const std::string& path) const {
    return fields_.count({source, path}) > 0;
  }
  std::vector<std::string> PrimaryKey(const std::string& source) const {
    for (const IdentityKey& k : c_.structure.identity_keys) {
      if (k.source == source && k.primary) return k.fields;
    }
    return {};
  }
  void Log(std::string line) { log_->push_back(std::move(line)); }

  // Names the offline type of t's source when t is its row type; true then.
  bool RowType(const ProposedEntityType& t) {
    const std::vector<std::string> pk = PrimaryKey(t.source);
    const bool row = t.extraction == "row_as_entity" ||
                     (t.extraction == "field" && pk.size() == 1 && t.extraction_field == pk[0]);
    if (!row || !claimed_.insert(t.source).second) return false;
    EntityType* base = nullptr;
    for (EntityType& e : c_.entity_types) {
      if (e.source == t.source) base = &e;
      if (base != nullptr) break;
    }
    if (base == nullptr) return false;
    for (const std::string& f : t.text_fields) AddUnique(&base->text_fields, f);
    const std::string old = base->name;
    if (t.name != old) {
      if (Type(t.name) != nullptr) {
        Log("type " + old + " of source \"" + t.source + "\" keeps its name: " + t.name +
            " is taken");
        alias_[t.name] = old;
        return true;
      }
      base->name = t.name;
      for (RelationshipType& r : c_.relationships) {
        if (r.from == old) r.from = t.name;
        if (r.to == old) r.to = t.name;
      }
      Log("type " + old + " of source \"" + t.source + "\" renamed " + t.name);
      if (!alias_.count(old)) alias_[old] = t.name;
    }
    alias_[t.name] = t.name;
    return true;
  }

  void AddType(const ProposedEntityType& t) {
    if (EntityType* have = Type(t.name)) {
      alias_[t.name] = t.name;
      if (have->source == t.source) {
        for (const std::string& a : t.attributes) AddUnique(&have->attributes, a);
        for (const std::string& a : t.text_fields) AddUnique(&have->text_fields, a);
        Log("type " + t.name + " extended by the proposal");
      } else {
        Log("type " + t.name + " (" + t.extraction + " of source \"" + t.source +
            "\") not added: the name is the type of source \"" + have->source +
            "\", which relationships naming it use");
      }
      return;
    }
    EntityType e;
    e.name = t.name;
    e.source = t.source;
    e.identity_key = t.identity_key;
    if (e.identity_key.empty() && !t.extraction_field.empty()) {
      e.identity_key = {t.extraction_field};
    }
    e.attributes = t.attributes;
    e.text_fields = t.text_fields;
    // Construction reads field and list instances; a pattern runs as the
    // store's extractor over the source's text, like llm.
    e.extraction = t.extraction == "pattern" ? "llm" : t.extraction;
    if (e.extraction == "field" || e.extraction == "nested_field") {
      e.extraction_field = t.extraction_field;
      if (e.extraction == "nested_field" && e.extraction_field.find("[*]") == std::string::npos) {
        e.extraction = "field";
      }
    }
    if (e.extraction == "row_as_entity") e.extraction = "llm";  // the source's row type is claimed
    c_.entity_types.push_back(std::move(e));
    alias_[t.name] = t.name;
    Log("type " + t.name + " added (" + t.extraction + " of source \"" + t.source + "\")");
  }

  // Adds (or names) the relationship; false when it is dropped.
  bool AddRelationship(ProposedRelationshipType& r) {
    const std::string from = Final(r.from), to = Final(r.to);
    const EntityType* ft = Type(from);
    const EntityType* tt = Type(to);
    const std::string label = "relationship " + r.from + " " + r.name + " " + r.to;
    if (ft == nullptr || tt == nullptr) {
      Log(label + " dropped: " + (ft == nullptr ? r.from : r.to) + " is not an entity type");
      return false;
    }
    r.from = from;
    r.to = to;
    for (auto [path, source] : {std::pair{&r.from_field, ft->source}, {&r.to_field, tt->source}}) {
      if (!path->empty() && !HasField(source, *path)) {
        Log(label + ": \"" + *path + "\" is not a field of source \"" + source + "\"; left out");
        path->clear();
      }
    }
    auto compatible = [](const std::string& proposed, const std::string& fk) {
      return proposed.empty() || proposed == fk;
    };
    for (size_t k = 0; k < offline_relationships_; ++k) {
      RelationshipType& fk = c_.relationships[k];
      if (fk.from == from && fk.to == to && compatible(r.from_field, fk.from_field) &&
          compatible(r.to_field, fk.to_field) && !named_.count(k)) {
        named_.insert(k);
        if (fk.name != r.name) Log("relationship " + fk.name + " renamed " + r.name);
        fk.name = r.name;
        r.from_field = fk.from_field;
        r.to_field = fk.to_field;
        if (r.cardinality.empty()) r.cardinality = fk.cardinality;
        return true;
      }
    }
    for (size_t k = 0; k < offline_relationships_; ++k) {
      const RelationshipType& fk = c_.relationships[k];
      if (fk.from == to && fk.to == from && compatible(r.from_field, fk.to_field) &&
          compatible(r.to_field, fk.from_field)) {
        r.from_field = fk.to_field;
        r.to_field = fk.from_field;
        if (r.cardinality.empty()) r.cardinality = Reversed(fk.cardinality);
        break;
      }
    }
    for (const RelationshipType& have : c_.relationships) {
      if (have.from == from && have.to == to && have.name == r.name) {
        Log(label + " already defined");
        return true;
      }
    }
    RelationshipType out;
    out.name = r.name;
    out.from = from;
    out.to = to;
    out.from_field = r.from_field;
    out.to_field = r.to_field;
    out.cardinality = r.cardinality;
    out.confidence = r.confidence;
    if (r.extraction == "semantic_extraction") out.extraction = "llm";
    c_.relationships.push_back(std::move(out));
    Log(label + " added (" + r.extraction + ")");
    return true;
  }

  SchemaContract c_;
  std::vector<std::string>* log_;
  const size_t offline_relationships_;
  std::set<std::pair<std::string, std::string>> fields_;  // (source, path)
  std::map<std::string, std::string> alias_;              // proposal name → final name
  std::set<std::string> claimed_;                         // sources whose row type is named
  std::set<size_t> named_;                                // FK relationships named by the proposal
};

}  // namespace

SchemaContract MergeProposal(SchemaContract offline, SchemaProposal* proposal,
                             std::vector<std::string>* log) {
  return Merger(std::move(offline), log).Run(proposal);
}

}  // namespace flowrag
