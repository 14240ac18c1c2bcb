// PlanConstruction (schema/construct.h).
#include "schema/construct.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_map>

#include "common/encoding.h"
#include "common/text.h"
#include "ingest/chunker.h"
#include "schema/discovery.h"
#include "schema/exclusions.h"
#include "schema/field_profile.h"
#include "schema/json_records.h"

namespace flowrag {
namespace {

// The source's row type (its records' entities).
const EntityType* TypeOfSource(const SchemaContract& c, const std::string& source) {
  for (const EntityType& t : c.entity_types) {
    if (t.RowType() && t.HasSource(source)) return &t;
  }
  return nullptr;
}

const EntityType* TypeNamed(const SchemaContract& c, const std::string& name) {
  for (const EntityType& t : c.entity_types) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// The source's field and nested_field types (B.3.2).
std::vector<const EntityType*> FieldTypesOfSource(const SchemaContract& c,
                                                  const std::string& source) {
  std::vector<const EntityType*> out;
  for (const EntityType& t : c.entity_types) {
    if ((t.extraction == "field" || t.extraction == "nested_field") && t.HasSource(source)) {
      out.push_back(&t);
    }
  }
  return out;
}

const FieldInfo* Field(const SchemaContract& c, const std::string& source,
                       const std::string& path) {
  for (const FieldInfo& f : c.structure.fields) {
    if (f.source == source && f.path == path) return &f;
  }
  return nullptr;
}

// B.2: parents before children: the contract's source hierarchy (A.7),
// and every source referenced through a foreign key; sources in a cycle of
// keys, or unrelated, keep their contract order, except that a hierarchy
// parent goes before its children.
std::vector<std::string> HierarchyOrder(const SchemaContract& c) {
  std::vector<std::string> names;
  for (const SourceInfo& s : c.structure.sources) names.push_back(s.name);
  std::map<std::string, std::set<std::string>> parents, hierarchy_parents;
  for (const ForeignKey& fk : c.structure.foreign_keys) {
    if (fk.from_source != fk.to_source) parents[fk.from_source].insert(fk.to_source);
  }
  for (const SourceParent& p : c.structure.hierarchy) {
    if (p.parent == p.child) continue;
    parents[p.child].insert(p.parent);
    hierarchy_parents[p.child].insert(p.parent);
  }
  std::vector<std::string> order;
  std::set<std::string> placed;
  while (order.size() < names.size()) {
    bool progressed = false;
    for (const std::string& n : names) {
      if (placed.count(n)) continue;
      bool ready = true;
      for (const std::string& p : parents[n]) ready = ready && (placed.count(p) || p == n);
      if (!ready) continue;
      order.push_back(n);
      placed.insert(n);
      progressed = true;
    }
    if (!progressed) {
      // A cycle: the first remaining source whose hierarchy parents are
      // placed, else the first remaining source.
      std::string next;
      for (const std::string& n : names) {
        if (placed.count(n)) continue;
        bool ready = true;
        for (const std::string& p : hierarchy_parents[n]) ready = ready && placed.count(p);
        if (ready) {
          next = n;
          break;
        }
        if (next.empty()) next = n;
      }
      order.push_back(next);
      placed.insert(next);
    }
  }
  return order;
}

bool NameLike(const std::string& path) {
  for (const std::string& t : FieldNameTokens(path)) {
    if (t == "name" || t == "title" || t == "label" || t == "entity") return true;
  }
  return false;
}

// The field whose value names a record's entity ("" when none fits: the
// entity is "<Type> <key>"): a string name/title/label field, else a string
// identity key that is not an id code, else the most unique short string
// field that is neither id-like nor a foreign key.
std::string NameField(const SchemaContract& c, const EntityType& t, const std::string& source) {
  std::set<std::string> references;
  for (const ForeignKey& fk : c.structure.foreign_keys) {
    if (fk.from_source == source) references.insert(fk.from_field);
  }
  std::vector<const FieldInfo*> fields;
  for (const std::string& a : t.attributes) {
    const FieldInfo* f = Field(c, source, a);
    if (f && f->type == "string" && a.find("[*]") == std::string::npos) fields.push_back(f);
  }
  for (const FieldInfo* f : fields) {
    if (NameLike(f->path)) return f->path;
  }
  if (t.identity_key.size() == 1) {
    const FieldInfo* f = Field(c, source, t.identity_key[0]);
    if (f && f->type == "string" && !f->id_like) return f->path;
  }
  const FieldInfo* best = nullptr;
  for (const FieldInfo* f : fields) {
    if (f->id_like || references.count(f->path) || f->avg_length > 80 || f->uniqueness < 0.8)
      continue;
    if (!best || f->uniqueness > best->uniqueness) best = f;
  }
  return best ? best->path : "";
}

std::string Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

// Readable relation text of a field ("home_town" → "home town").
std::string FieldPhrase(const std::string& path) {
  std::string out;
  for (const std::string& t : FieldNameTokens(path)) out += (out.empty() ? "" : " ") + t;
  return out.empty() ? path : out;
}

struct SourceRecords {
  const EntityType* type = nullptr;
  const SourceInfo* info = nullptr;
  std::vector<FlatRecord> records;
  std::vector<size_t> planned;  // index into plan.records per record
};

// Renders one structured record and cuts its passages.
PlannedRecord RenderRecord(const EntityType& type, const std::string& source, const FlatRecord& r,
                           const std::string& name, const std::string& key,
                           const std::set<std::string>& catalog, const ChunkOptions& chunking) {
  PlannedRecord p;
  p.source = source;
  p.file = r.file;
  p.line = r.line;
  // A .json file may hold several records on one line: its records are
  // numbered ("file#3"); CSV rows and JSONL lines are cited by line.
  const bool numbered = r.file.size() > 5 && r.file.compare(r.file.size() - 5, 5, ".json") == 0;
  p.document_id =
      numbered ? r.file + "#" + std::to_string(r.index) : r.file + ":" + std::to_string(r.line);
  p.entity_type = type.name;
  p.key = key;
  p.title = name;
  const std::set<std::string> text_fields(type.text_fields.begin(), type.text_fields.end());
  nlohmann::json fields = nlohmann::json::object();
  std::string head = type.name + ": " + name + "\n";
  std::vector<std::pair<std::string, std::string>> texts;
  for (const auto& [path, value] : r.values) {
    if (!catalog.count(path)) continue;
    std::string v = Trim(value);
    if (v.empty()) continue;
    if (fields.contains(path)) {
      if (!fields[path].is_array()) fields[path] = nlohmann::json::array({fields[path]});
      fields[path].push_back(v);
    } else {
      fields[path] = v;
    }
    if (text_fields.count(path)) {
      texts.emplace_back(path, std::move(v));
    } else {
      head += path + ": " + v + "\n";
    }
  }
  p.fields_json = fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  p.text = head;
  p.passages.emplace_back(0, static_cast<uint32_t>(head.size()) - 1);  // without the last newline
  for (const auto& [path, v] : texts) {
    p.text += "\n" + path + ":\n";
    const uint32_t base = static_cast<uint32_t>(p.text.size());
    p.text += v + "\n";
    for (const Chunk& c : ChunkText(v, chunking))
      p.passages.emplace_back(base + c.begin, base + c.end);
  }
  return p;
}

PlannedRecord RenderText(const EntityType& type, const std::string& source, const FlatRecord& r,
                         const ChunkOptions& chunking) {
  PlannedRecord p;
  p.source = source;
  p.file = r.file;
  p.line = 0;
  p.document_id = r.file;
  p.entity_type = type.name;
  p.text_document = true;
  std::string title;
  for (const auto& [path, value] : r.values) {
    if (path == "title") title = value;
    if (path == "text") p.text = value;
  }
  if (title.empty()) {
    const std::string stem = r.file.substr(r.file.find_last_of('/') + 1);
    title = stem.substr(0, stem.find_last_of('.'));
    std::replace(title.begin(), title.end(), '_', ' ');
  }
  p.title = title;
  p.fields_json = nlohmann::json({{"path", r.file}, {"title", title}}).dump();
  for (const Chunk& c : ChunkText(p.text, chunking)) p.passages.emplace_back(c.begin, c.end);
  return p;
}

// Stage 2 (B.4.2): single-linkage clusters of names at cosine ≥ threshold;
// returns each name's representative (the first of its cluster).
Result<std::vector<size_t>> ClusterNames(const std::vector<std::string>& names, double threshold,
                                         const NameEmbedder& embed) {
  std::vector<size_t> parent(names.size());
  std::iota(parent.begin(), parent.end(), 0);
  FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix v, embed(names));
  auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (size_t i = 0; i < names.size(); ++i) {
    for (size_t j = i + 1; j < names.size(); ++j) {
      double dot = 0;
      for (size_t d = 0; d < v.cols; ++d) dot += v.row(i)[d] * v.row(j)[d];
      if (dot < threshold) continue;
      const size_t a = find(i), b = find(j);
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
  }
  for (size_t i = 0; i < names.size(); ++i) parent[i] = find(i);
  return parent;
}

// B.5.2: links between a record's entity and its field instances, and
// between instances, by the contract's relationships between their types.
template <typename Add>
void LinkFieldInstances(const SchemaContract& c, const EntityType& row, const PlannedRecord& p,
                        const Add& add) {
  struct Node {
    std::string name;
    const EntityType* type;
  };
  std::vector<Node> nodes = {{"", &row}};
  for (const PlannedEntity& d : p.derived) nodes.push_back({d.name, TypeNamed(c, d.type)});
  for (size_t a = 1; a < nodes.size(); ++a) {
    bool linked = false;
    for (size_t b = 0; b < nodes.size(); ++b) {
      if (a == b) continue;
      for (const RelationshipType& r : c.relationships) {
        if (r.extraction == "llm") continue;  // B.5.3: only where the model says so
        const bool forward = r.from == nodes[a].type->name && r.to == nodes[b].type->name;
        const bool backward = r.from == nodes[b].type->name && r.to == nodes[a].type->name;
        if (!forward && !backward) continue;
        if (b > 0 && !forward) continue;  // a pair of instances is visited both ways
        const std::string& field = nodes[a].type->extraction_field;
        const double confidence = r.from_field == field || r.to_field == field ? 1.0 : 0.9;
        if (forward) {
          add(PlannedLink{r.name, b == 0 ? p.title : nodes[b].name, confidence, nodes[a].name});
        } else {
          add(PlannedLink{r.name, nodes[a].name, confidence, ""});
        }
        if (b == 0) linked = true;
      }
    }
    if (!linked)
      add(PlannedLink{FieldPhrase(nodes[a].type->extraction_field), nodes[a].name, 1.0, ""});
  }
}

// All exclusions in force: what induction excluded (the contract's rules),
// the folder's manifest when there is one, and the caller's: more
// exclusions never leak data.
Result<Exclusions> ConstructionExclusions(const std::string& dir, const SchemaContract& contract,
                                          const ConstructionOptions& options) {
  Exclusions exclusions = contract.structure.exclusion_rules;
  FLOWRAG_ASSIGN_OR_RETURN(Exclusions folder, LoadFolderExclusions(dir, ""));
  exclusions.Merge(folder);
  if (!options.exclusions.empty()) {
    FLOWRAG_ASSIGN_OR_RETURN(Exclusions extra, LoadExclusions(options.exclusions));
    exclusions.Merge(extra);
  }
  return exclusions;
}

// Fields other records refer to (source → fields): the targets of foreign
// keys and of relationships with a to_field into a row type. Their values
// are indexed for the joins.
std::map<std::string, std::set<std::string>> JoinFields(const SchemaContract& contract) {
  std::map<std::string, std::set<std::string>> join_fields;
  for (const ForeignKey& fk : contract.structure.foreign_keys) {
    join_fields[fk.to_source].insert(fk.to_field);
  }
  for (const RelationshipType& r : contract.relationships) {
    const EntityType* to = TypeNamed(contract, r.to);
    if (r.to_field.empty() || !to || !to->RowType() || r.extraction == "llm") continue;
    join_fields[to->source].insert(r.to_field);
    for (const std::string& m : to->merged_sources) join_fields[m].insert(r.to_field);
  }
  return join_fields;
}

// Each record's display name (the name field's value, else "<Type> <key or
// index>") and identity key (the key fields' values joined by '|'; "" when
// one is missing).
void RecordNamesAndKeys(const EntityType& t, const std::string& name_field,
                        const std::vector<FlatRecord>& records, std::vector<std::string>* names,
                        std::vector<std::string>* keys) {
  names->assign(records.size(), "");
  keys->assign(records.size(), "");
  for (size_t i = 0; i < records.size(); ++i) {
    const FlatRecord& r = records[i];
    std::string display;
    std::vector<std::string> key_parts(t.identity_key.size());
    for (const auto& [path, value] : r.values) {
      if (path == name_field && display.empty()) display = Trim(value);
      for (size_t k = 0; k < t.identity_key.size(); ++k) {
        if (path == t.identity_key[k] && key_parts[k].empty()) key_parts[k] = Trim(value);
      }
    }
    std::string& key = (*keys)[i];
    bool complete = !key_parts.empty();
    for (const std::string& k : key_parts) {
      complete = complete && !k.empty();
      key += (key.empty() ? "" : "|") + k;
    }
    if (!complete) key.clear();
    if (display.empty()) display = t.name + " " + (key.empty() ? std::to_string(r.index) : key);
    (*names)[i] = display;
  }
}

// Stage 1 (B.4.1): one entity per identity key; a display name shared by
// different keys gets its key appended so the entities stay apart. Returns
// the number of records merged into an earlier one.
size_t MergeByKey(const std::vector<std::string>& keys, std::vector<std::string>* names) {
  size_t merged = 0;
  std::unordered_map<std::string, std::string> entity_of_key;
  std::unordered_map<std::string, std::set<std::string>> keys_of_name;
  for (size_t i = 0; i < names->size(); ++i) {
    if (!keys[i].empty()) keys_of_name[(*names)[i]].insert(keys[i]);
  }
  for (size_t i = 0; i < names->size(); ++i) {
    if (keys[i].empty()) continue;
    std::string& name = (*names)[i];
    auto [it, inserted] = entity_of_key.emplace(keys[i], name);
    if (!inserted) {
      ++merged;
    } else if (keys_of_name[name].size() > 1) {
      it->second = name + " (" + keys[i] + ")";
    }
    name = it->second;
  }
  return merged;
}

// Turns a contract and a folder into a ConstructionPlan, in three steps:
// load the sources' records (LoadSources), plan each record's entity and
// field instances (PlanEntities) and then its links (PlanLinks), which need
// every entity's name. One use.
class ConstructionPlanner {
 public:
  ConstructionPlanner(const std::string& dir, const SchemaContract& contract,
                      const ConstructionOptions& options, const NameEmbedder& embed)
      : dir_(dir), contract_(contract), options_(options), embed_(embed) {}

  Result<ConstructionPlan> Run() {
    FLOWRAG_RETURN_IF_ERROR(LoadSources());
    join_fields_ = JoinFields(contract_);
    FLOWRAG_RETURN_IF_ERROR(PlanEntities());
    PlanLinks();
    return std::move(plan_);
  }

 private:
  // Matches the contract's sources to the folder's files and reads their
  // records, without the excluded fields.
  Status LoadSources() {
    FLOWRAG_ASSIGN_OR_RETURN(Exclusions exclusions,
                             ConstructionExclusions(dir_, contract_, options_));
    std::vector<std::string> excluded, unclaimed;
    FLOWRAG_ASSIGN_OR_RETURN(
        std::vector<DiscoveredSource> found,
        MatchContractSources(dir_, contract_.structure.sources, exclusions, &excluded, &unclaimed));
    for (const std::string& f : unclaimed) {
      plan_.warnings.push_back(
          f + ": in no source of the contract (extend it: schema induce --extend); skipped");
    }
    plan_.source_order = HierarchyOrder(contract_);
    for (const std::string& name : plan_.source_order) {
      FLOWRAG_RETURN_IF_ERROR(LoadSource(name, found, exclusions));
    }
    return Status::Ok();
  }

  Status LoadSource(const std::string& name, const std::vector<DiscoveredSource>& found,
                    const Exclusions& exclusions) {
    SourceRecords& s = loaded_[name];
    const DiscoveredSource* files = nullptr;
    for (size_t k = 0; k < contract_.structure.sources.size(); ++k) {
      if (contract_.structure.sources[k].name != name) continue;
      s.info = &contract_.structure.sources[k];
      files = &found[k];
    }
    s.type = TypeOfSource(contract_, name);
    if (!s.type) {
      plan_.warnings.push_back("contract: source \"" + name + "\" has no entity type; skipped");
      return Status::Ok();
    }
    if (files->files.empty()) {
      if (files->excluded_files == 0) {
        return Status::NotFound(dir_ + ": contract source \"" + name + "\" (" + s.info->path +
                                ") is not in the folder");
      }
      plan_.warnings.push_back("source \"" + name + "\": all its files are excluded; skipped");
      s.type = nullptr;
      return Status::Ok();
    }
    std::vector<std::string> columns;
    size_t transcoded = 0;
    FLOWRAG_ASSIGN_OR_RETURN(s.records, LoadSourceRecords(*files, dir_, &columns, &transcoded));
    // Excluded fields leave before anything (names, keys, links, text) sees them.
    for (FlatRecord& r : s.records) {
      std::erase_if(r.values,
                    [&](const auto& v) { return exclusions.ExcludesField(name, v.first); });
    }
    return Status::Ok();
  }

  // Entities: names, then stage 1 (identity key) and stage 2 (embedding)
  // merges; each record rendered with its field instances.
  Status PlanEntities() {
    for (const std::string& name : plan_.source_order) {
      SourceRecords& s = loaded_[name];
      if (!s.type) continue;
      if (s.info->format == "text") {
        PlanTextRecords(name, &s);
      } else {
        FLOWRAG_RETURN_IF_ERROR(PlanStructuredRecords(name, &s));
      }
    }
    return Status::Ok();
  }

  void PlanTextRecords(const std::string& name, SourceRecords* s) {
    for (const FlatRecord& r : s->records) {
      s->planned.push_back(plan_.records.size());
      plan_.records.push_back(RenderText(*s->type, name, r, options_.chunking));
      const std::string& title = plan_.records.back().title;
      name_index_.emplace(EntityKey(title), std::make_pair(name, title));
    }
  }

  Status PlanStructuredRecords(const std::string& name, SourceRecords* s) {
    const EntityType& t = *s->type;
    const std::set<std::string> catalog(t.attributes.begin(), t.attributes.end());
    std::vector<std::string> names, keys;
    RecordNamesAndKeys(t, NameField(contract_, t, name), s->records, &names, &keys);
    plan_.merged_by_key += MergeByKey(keys, &names);
    FLOWRAG_RETURN_IF_ERROR(MergeByEmbedding(t, &names));
    const std::vector<const EntityType*> field_types = FieldTypesOfSource(contract_, name);
    for (size_t i = 0; i < s->records.size(); ++i) {
      s->planned.push_back(plan_.records.size());
      plan_.records.push_back(
          RenderRecord(t, name, s->records[i], names[i], keys[i], catalog, options_.chunking));
      name_index_.emplace(EntityKey(names[i]), std::make_pair(name, names[i]));
      AddFieldInstances(name, field_types, s->records[i], &plan_.records.back());
      IndexJoinValues(name, t, s->records[i], names[i]);
    }
    return Status::Ok();
  }

  // Stage 2 (B.4.2): only types without an identity key; names whose
  // embeddings are close merge into their cluster's first.
  Status MergeByEmbedding(const EntityType& t, std::vector<std::string>* names) {
    if (!t.identity_key.empty() || !(options_.dedup_similarity > 0) || !embed_ || names->empty()) {
      return Status::Ok();
    }
    std::vector<std::string> distinct;
    std::unordered_map<std::string, size_t> pos;
    for (const std::string& n : *names) {
      if (pos.emplace(n, distinct.size()).second) distinct.push_back(n);
    }
    if (distinct.size() > options_.max_cluster_entities) {
      plan_.warnings.push_back(
          t.name + ": " + std::to_string(distinct.size()) +
          " entities without an identity key: embedding deduplication skipped");
      return Status::Ok();
    }
    FLOWRAG_ASSIGN_OR_RETURN(std::vector<size_t> rep,
                             ClusterNames(distinct, options_.dedup_similarity, embed_));
    for (std::string& n : *names) {
      const std::string& to = distinct[rep[pos.at(n)]];
      if (to != n) {
        ++plan_.merged_by_embedding;
        n = to;
      }
    }
    return Status::Ok();
  }

  // The record's field and nested_field instances (B.3.2): one entity per
  // type and value key across the folder, DERIVED_FROM each record naming it.
  void AddFieldInstances(const std::string& source,
                         const std::vector<const EntityType*>& field_types, const FlatRecord& r,
                         PlannedRecord* p) {
    for (const EntityType* ft : field_types) {
      for (const auto& [path, value] : r.values) {
        if (path != ft->extraction_field) continue;
        const std::string v = Trim(value), key = EntityKey(v);
        if (v.empty() || v.size() > 200 || key == EntityKey(p->title)) continue;
        auto [it, added] = instances_[ft->name].emplace(key, v);
        plan_.derived_entities += added;
        const PlannedEntity e{it->second, ft->name};
        if (std::none_of(p->derived.begin(), p->derived.end(),
                         [&](const PlannedEntity& d) { return d.name == e.name; })) {
          p->derived.push_back(e);
          name_index_.emplace(EntityKey(e.name), std::make_pair(source, e.name));
        }
      }
    }
  }

  // The record's values of the fields others join on, by canonical value.
  void IndexJoinValues(const std::string& source, const EntityType& t, const FlatRecord& r,
                       const std::string& entity) {
    for (const auto& [path, value] : r.values) {
      if (!join_fields_[source].count(path)) continue;
      const std::string v = CanonicalValue(value);
      if (!v.empty()) key_index_[t.name][path].emplace(v, entity);
    }
  }

  // Relationships: foreign keys (Algorithm 5) and link fields (B.5.1).
  void PlanLinks() {
    for (const std::string& name : plan_.source_order) {
      SourceRecords& s = loaded_[name];
      if (!s.type || s.info->format == "text") continue;
      const std::map<std::string, const RelationshipType*> fk_of_field = KeyRelationships(*s.type);
      for (size_t i = 0; i < s.records.size(); ++i) {
        LinkRecord(name, *s.type, fk_of_field, s.records[i], &plan_.records[s.planned[i]]);
      }
    }
  }

  // The relationships from `type` into row types by a key field (field →
  // relationship).
  std::map<std::string, const RelationshipType*> KeyRelationships(const EntityType& type) const {
    std::map<std::string, const RelationshipType*> fk_of_field;
    for (const RelationshipType& r : contract_.relationships) {
      const EntityType* to = TypeNamed(contract_, r.to);
      if (r.from == type.name && to && to->RowType() && r.extraction != "llm") {
        fk_of_field[r.from_field] = &r;
      }
    }
    return fk_of_field;
  }

  void LinkRecord(const std::string& source, const EntityType& type,
                  const std::map<std::string, const RelationshipType*>& fk_of_field,
                  const FlatRecord& r, PlannedRecord* p) {
    std::set<std::tuple<std::string, std::string, std::string>> seen;
    auto add = [&](PlannedLink l) {
      const std::string& subject = l.subject.empty() ? p->title : l.subject;
      if (l.target == subject || !seen.emplace(subject, l.relation, l.target).second) return;
      p->links.push_back(std::move(l));
      ++plan_.links;
    };
    LinkFieldInstances(contract_, type, *p, add);
    for (const auto& [path, value] : r.values) {
      const std::string v = Trim(value);
      if (v.empty()) continue;
      auto fk = fk_of_field.find(path);
      if (fk != fk_of_field.end()) {
        const RelationshipType& rel = *fk->second;
        const auto& index = key_index_[rel.to][rel.to_field];
        auto hit = index.find(CanonicalValue(v));
        if (hit == index.end()) {
          Unresolved(p->file + ":" + std::to_string(p->line) + ": " + EscapeForMessage(path) +
                     ": \"" + EscapeForMessage(v) + "\" matches no " + rel.to + "." + rel.to_field +
                     " (reference dropped)");
        } else {
          add({rel.name, hit->second, rel.confidence, ""});
        }
        continue;
      }
      const FieldInfo* f = Field(contract_, source, path);
      if (!f || f->type != "string" || v.size() > 200) continue;
      auto hit = name_index_.find(EntityKey(v));
      if (hit != name_index_.end() && hit->second.first != source) {
        add({FieldPhrase(path), hit->second.second, 1.0, ""});
      }
    }
  }

  // A reference that matches nothing: counted, and warned about up to
  // max_warnings.
  void Unresolved(const std::string& message) {
    ++plan_.unresolved_links;
    if (plan_.warnings.size() < options_.max_warnings) plan_.warnings.push_back(message);
  }

  const std::string& dir_;
  const SchemaContract& contract_;
  const ConstructionOptions& options_;
  const NameEmbedder& embed_;
  ConstructionPlan plan_;
  std::map<std::string, SourceRecords> loaded_;
  std::map<std::string, std::set<std::string>> join_fields_;  // source → referenced fields
  // EntityKey of an entity name → (source, name), for link fields.
  std::unordered_map<std::string, std::pair<std::string, std::string>> name_index_;
  // key_index_[type][field][canonical value] → entity name, for foreign keys.
  std::map<std::string, std::map<std::string, std::unordered_map<std::string, std::string>>>
      key_index_;
  // Field instances: type → EntityKey of the value → name (the first surface form).
  std::map<std::string, std::unordered_map<std::string, std::string>> instances_;
};

}  // namespace

Result<ConstructionPlan> PlanConstruction(const std::string& dir, const SchemaContract& contract,
                                          const ConstructionOptions& options,
                                          const NameEmbedder& embed) {
  return ConstructionPlanner(dir, contract, options, embed).Run();
}

}  // namespace flowrag
