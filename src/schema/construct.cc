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
std::vector<const EntityType*> FieldTypesOfSource(const SchemaContract& c, const std::string& source) {
  std::vector<const EntityType*> out;
  for (const EntityType& t : c.entity_types) {
    if ((t.extraction == "field" || t.extraction == "nested_field") && t.HasSource(source)) {
      out.push_back(&t);
    }
  }
  return out;
}

const FieldInfo* Field(const SchemaContract& c, const std::string& source, const std::string& path) {
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
    if (f->id_like || references.count(f->path) || f->avg_length > 80 || f->uniqueness < 0.8) continue;
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
                           const std::string& name,
                           const std::string& key, const std::set<std::string>& catalog,
                           const ChunkOptions& chunking) {
  PlannedRecord p;
  p.source = source;
  p.file = r.file;
  p.line = r.line;
  // A .json file may hold several records on one line: its records are
  // numbered ("file#3"); CSV rows and JSONL lines are cited by line.
  const bool numbered = r.file.size() > 5 && r.file.compare(r.file.size() - 5, 5, ".json") == 0;
  p.document_id = numbered ? r.file + "#" + std::to_string(r.index) : r.file + ":" + std::to_string(r.line);
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
    for (const Chunk& c : ChunkText(v, chunking)) p.passages.emplace_back(base + c.begin, base + c.end);
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
    if (!linked) add(PlannedLink{FieldPhrase(nodes[a].type->extraction_field), nodes[a].name, 1.0, ""});
  }
}

}  // namespace

Result<ConstructionPlan> PlanConstruction(const std::string& dir, const SchemaContract& contract,
                                          const ConstructionOptions& options,
                                          const NameEmbedder& embed) {
  ConstructionPlan plan;
  // What induction excluded (the contract's rules), the folder's manifest
  // when there is one, and the caller's: more exclusions never leak data.
  Exclusions exclusions = contract.structure.exclusion_rules;
  FLOWRAG_ASSIGN_OR_RETURN(Exclusions folder, LoadFolderExclusions(dir, ""));
  exclusions.Merge(folder);
  if (!options.exclusions.empty()) {
    FLOWRAG_ASSIGN_OR_RETURN(Exclusions extra, LoadExclusions(options.exclusions));
    exclusions.Merge(extra);
  }
  std::vector<std::string> excluded, unclaimed;
  FLOWRAG_ASSIGN_OR_RETURN(
      std::vector<DiscoveredSource> found,
      MatchContractSources(dir, contract.structure.sources, exclusions, &excluded, &unclaimed));
  for (const std::string& f : unclaimed) {
    plan.warnings.push_back(f + ": in no source of the contract (extend it: schema induce --extend); skipped");
  }

  plan.source_order = HierarchyOrder(contract);
  std::map<std::string, SourceRecords> loaded;
  for (const std::string& name : plan.source_order) {
    SourceRecords& s = loaded[name];
    const DiscoveredSource* files = nullptr;
    for (size_t k = 0; k < contract.structure.sources.size(); ++k) {
      if (contract.structure.sources[k].name != name) continue;
      s.info = &contract.structure.sources[k];
      files = &found[k];
    }
    s.type = TypeOfSource(contract, name);
    if (!s.type) {
      plan.warnings.push_back("contract: source \"" + name + "\" has no entity type; skipped");
      continue;
    }
    if (files->files.empty()) {
      if (files->excluded_files == 0) {
        return Status::NotFound(dir + ": contract source \"" + name + "\" (" + s.info->path +
                                ") is not in the folder");
      }
      plan.warnings.push_back("source \"" + name + "\": all its files are excluded; skipped");
      s.type = nullptr;
      continue;
    }
    std::vector<std::string> columns;
    size_t transcoded = 0;
    FLOWRAG_ASSIGN_OR_RETURN(s.records, LoadSourceRecords(*files, dir, &columns, &transcoded));
    // Excluded fields leave before anything (names, keys, links, text) sees them.
    for (FlatRecord& r : s.records) {
      std::erase_if(r.values, [&](const auto& v) { return exclusions.ExcludesField(name, v.first); });
    }
  }

  // Entities: names, then stage 1 (identity key) and stage 2 (embedding) merges.
  // name_index: EntityKey of an entity name → (source, name), for link fields.
  std::unordered_map<std::string, std::pair<std::string, std::string>> name_index;
  // key_index[type][field][canonical value] → entity name, for foreign keys.
  std::map<std::string, std::map<std::string, std::unordered_map<std::string, std::string>>> key_index;
  std::map<std::string, std::set<std::string>> join_fields;  // source → referenced fields
  for (const ForeignKey& fk : contract.structure.foreign_keys) join_fields[fk.to_source].insert(fk.to_field);
  for (const RelationshipType& r : contract.relationships) {
    const EntityType* to = TypeNamed(contract, r.to);
    if (r.to_field.empty() || !to || !to->RowType() || r.extraction == "llm") continue;
    join_fields[to->source].insert(r.to_field);
    for (const std::string& m : to->merged_sources) join_fields[m].insert(r.to_field);
  }
  // Field instances: type → EntityKey of the value → name (the first surface form).
  std::map<std::string, std::unordered_map<std::string, std::string>> instances;

  for (const std::string& name : plan.source_order) {
    SourceRecords& s = loaded[name];
    if (!s.type) continue;
    const EntityType& t = *s.type;
    if (s.info->format == "text") {
      for (const FlatRecord& r : s.records) {
        s.planned.push_back(plan.records.size());
        plan.records.push_back(RenderText(t, name, r, options.chunking));
        name_index.emplace(EntityKey(plan.records.back().title), std::make_pair(name, plan.records.back().title));
      }
      continue;
    }
    std::set<std::string> catalog(t.attributes.begin(), t.attributes.end());
    const std::string name_field = NameField(contract, t, name);
    std::vector<std::string> names(s.records.size()), keys(s.records.size());
    for (size_t i = 0; i < s.records.size(); ++i) {
      const FlatRecord& r = s.records[i];
      std::string display;
      std::vector<std::string> key_parts(t.identity_key.size());
      for (const auto& [path, value] : r.values) {
        if (path == name_field && display.empty()) display = Trim(value);
        for (size_t k = 0; k < t.identity_key.size(); ++k) {
          if (path == t.identity_key[k] && key_parts[k].empty()) key_parts[k] = Trim(value);
        }
      }
      bool complete = !key_parts.empty();
      for (const std::string& k : key_parts) {
        complete = complete && !k.empty();
        keys[i] += (keys[i].empty() ? "" : "|") + k;
      }
      if (!complete) keys[i].clear();
      if (display.empty()) display = t.name + " " + (keys[i].empty() ? std::to_string(r.index) : keys[i]);
      names[i] = display;
    }
    // Stage 1: one entity per key; a display name shared by different keys
    // gets its key appended so the entities stay apart.
    std::unordered_map<std::string, std::string> entity_of_key;
    std::unordered_map<std::string, std::set<std::string>> keys_of_name;
    for (size_t i = 0; i < names.size(); ++i) {
      if (!keys[i].empty()) keys_of_name[names[i]].insert(keys[i]);
    }
    for (size_t i = 0; i < names.size(); ++i) {
      if (keys[i].empty()) continue;
      auto [it, inserted] = entity_of_key.emplace(keys[i], names[i]);
      if (!inserted) {
        ++plan.merged_by_key;
      } else if (keys_of_name[names[i]].size() > 1) {
        it->second = names[i] + " (" + keys[i] + ")";
      }
      names[i] = it->second;
    }
    // Stage 2: only types without an identity key.
    if (t.identity_key.empty() && options.dedup_similarity > 0 && embed && !names.empty()) {
      std::vector<std::string> distinct;
      std::unordered_map<std::string, size_t> pos;
      for (const std::string& n : names) {
        if (pos.emplace(n, distinct.size()).second) distinct.push_back(n);
      }
      if (distinct.size() > options.max_cluster_entities) {
        plan.warnings.push_back(t.name + ": " + std::to_string(distinct.size()) +
                                " entities without an identity key: embedding deduplication skipped");
      } else {
        FLOWRAG_ASSIGN_OR_RETURN(std::vector<size_t> rep,
                                 ClusterNames(distinct, options.dedup_similarity, embed));
        for (std::string& n : names) {
          const std::string& to = distinct[rep[pos.at(n)]];
          if (to != n) {
            ++plan.merged_by_embedding;
            n = to;
          }
        }
      }
    }
    const std::vector<const EntityType*> field_types = FieldTypesOfSource(contract, name);
    for (size_t i = 0; i < s.records.size(); ++i) {
      s.planned.push_back(plan.records.size());
      plan.records.push_back(
          RenderRecord(t, name, s.records[i], names[i], keys[i], catalog, options.chunking));
      name_index.emplace(EntityKey(names[i]), std::make_pair(name, names[i]));
      PlannedRecord& p = plan.records.back();
      for (const EntityType* ft : field_types) {
        for (const auto& [path, value] : s.records[i].values) {
          if (path != ft->extraction_field) continue;
          const std::string v = Trim(value), key = EntityKey(v);
          if (v.empty() || v.size() > 200 || key == EntityKey(p.title)) continue;
          auto [it, added] = instances[ft->name].emplace(key, v);
          plan.derived_entities += added;
          const PlannedEntity e{it->second, ft->name};
          if (std::none_of(p.derived.begin(), p.derived.end(),
                           [&](const PlannedEntity& d) { return d.name == e.name; })) {
            p.derived.push_back(e);
            name_index.emplace(EntityKey(e.name), std::make_pair(name, e.name));
          }
        }
      }
      for (const auto& [path, value] : s.records[i].values) {
        if (join_fields[name].count(path)) {
          const std::string v = CanonicalValue(value);
          if (!v.empty()) key_index[t.name][path].emplace(v, names[i]);
        }
      }
    }
  }

  // Relationships: foreign keys (Algorithm 5) and link fields (B.5.1).
  auto warn = [&](const std::string& message) {
    ++plan.unresolved_links;
    if (plan.warnings.size() < options.max_warnings) plan.warnings.push_back(message);
  };
  for (const std::string& name : plan.source_order) {
    SourceRecords& s = loaded[name];
    if (!s.type || s.info->format == "text") continue;
    std::map<std::string, const RelationshipType*> fk_of_field;
    for (const RelationshipType& r : contract.relationships) {
      const EntityType* to = TypeNamed(contract, r.to);
      if (r.from == s.type->name && to && to->RowType() && r.extraction != "llm") {
        fk_of_field[r.from_field] = &r;
      }
    }
    for (size_t i = 0; i < s.records.size(); ++i) {
      PlannedRecord& p = plan.records[s.planned[i]];
      std::set<std::tuple<std::string, std::string, std::string>> seen;
      auto add = [&](PlannedLink l) {
        const std::string& subject = l.subject.empty() ? p.title : l.subject;
        if (l.target == subject || !seen.emplace(subject, l.relation, l.target).second) return;
        p.links.push_back(std::move(l));
        ++plan.links;
      };
      LinkFieldInstances(contract, *s.type, p, add);
      for (const auto& [path, value] : s.records[i].values) {
        const std::string v = Trim(value);
        if (v.empty()) continue;
        auto fk = fk_of_field.find(path);
        if (fk != fk_of_field.end()) {
          const RelationshipType& r = *fk->second;
          const auto& index = key_index[r.to][r.to_field];
          auto hit = index.find(CanonicalValue(v));
          if (hit == index.end()) {
            warn(p.file + ":" + std::to_string(p.line) + ": " + EscapeForMessage(path) + ": \"" +
                 EscapeForMessage(v) + "\" matches no " + r.to + "." + r.to_field +
                 " (reference dropped)");
          } else {
            add({r.name, hit->second, r.confidence, ""});
          }
          continue;
        }
        const FieldInfo* f = Field(contract, name, path);
        if (!f || f->type != "string" || v.size() > 200) continue;
        auto hit = name_index.find(EntityKey(v));
        if (hit != name_index.end() && hit->second.first != name) {
          add({FieldPhrase(path), hit->second.second, 1.0, ""});
        }
      }
    }
  }
  return plan;
}

}  // namespace flowrag
