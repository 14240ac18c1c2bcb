#include "schema/structural.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>

namespace flowrag {
namespace {

bool Excluded(const FieldInfo& f, const SchemaOptions& o) {
  return f.count - f.nulls < o.min_key_values || f.avg_length > o.max_key_avg_length ||
         f.distinct < o.min_key_cardinality;
}

bool Qualifies(const FieldInfo& f, const SchemaOptions& o) {
  return f.uniqueness >= o.unique_ratio || (f.uniqueness >= o.id_like_unique_ratio && f.id_like);
}

// Array paths ("tags[*]") hold several values per record: never keys.
bool MultiValued(const ColumnProfile& c) { return c.info.path.find("[*]") != std::string::npos; }

double KeyConfidence(double uniq) { return std::min(0.95, 0.7 + 0.3 * uniq); }

bool IdToken(const std::string& t) {
  static const std::unordered_set<std::string> kWords = {"id", "key", "uuid",   "guid", "code",
                                                         "no", "num", "number", "fk",   "pk"};
  return kWords.count(t) > 0;
}

std::unordered_set<std::string> ContentTokens(const std::string& name) {
  std::unordered_set<std::string> out;
  for (const std::string& t : FieldNameTokens(name)) {
    if (!IdToken(t)) out.insert(SingularToken(t));
  }
  return out;
}

std::string Normalised(const std::string& name) {
  std::string out;
  for (const std::string& t : FieldNameTokens(name)) out += t;
  return out;
}

bool Compatible(const FieldInfo& a, const FieldInfo& b) {
  const bool a_num = a.type == "integer" || a.type == "number";
  const bool b_num = b.type == "integer" || b.type == "number";
  return a_num == b_num && a.type != "empty" && b.type != "empty" && a.type != "text";
}

// "1" when the shared values average ≤ 1.2 records (and at most 2) on this side.
std::string Side(const ColumnProfile& c, const std::vector<std::string>& shared) {
  if (shared.empty()) return "N";
  double total = 0;
  int most = 0;
  for (const std::string& v : shared) {
    const int n = c.counts.at(v);
    total += n;
    most = std::max(most, n);
  }
  return total / static_cast<double>(shared.size()) <= 1.2 && most <= 2 ? "1" : "N";
}

}  // namespace

std::vector<IdentityKey> DetectIdentityKeys(const SourceColumns& source, const SchemaOptions& o) {
  std::vector<IdentityKey> keys;
  std::vector<const ColumnProfile*> qualifying;
  for (const ColumnProfile& c : source.columns) {
    if (!MultiValued(c) && !Excluded(c.info, o) && Qualifies(c.info, o)) qualifying.push_back(&c);
  }
  std::stable_sort(qualifying.begin(), qualifying.end(),
                   [](const ColumnProfile* a, const ColumnProfile* b) {
                     if (a->info.id_like != b->info.id_like) return a->info.id_like;
                     if (a->info.uniqueness != b->info.uniqueness) {
                       return a->info.uniqueness > b->info.uniqueness;
                     }
                     return a->position < b->position;
                   });
  for (size_t i = 0; i < qualifying.size(); ++i) {
    const FieldInfo& f = qualifying[i]->info;
    keys.push_back({source.name, {f.path}, f.uniqueness, KeyConfidence(f.uniqueness), i == 0});
  }
  if (!keys.empty() || !o.composite_keys || source.columns.size() < 2) return keys;

  // Composite: the most unique pair (id-like members first), among the first 40 columns.
  const size_t n = std::min<size_t>(source.columns.size(), 40);
  const ColumnProfile* best_a = nullptr;
  const ColumnProfile* best_b = nullptr;
  double best = 0;
  int best_id = -1;
  for (size_t i = 0; i < n; ++i) {
    const ColumnProfile& a = source.columns[i];
    if (MultiValued(a)) continue;
    if (a.info.count - a.info.nulls < o.min_key_values || a.info.avg_length > o.max_key_avg_length)
      continue;
    for (size_t j = i + 1; j < n; ++j) {
      const ColumnProfile& b = source.columns[j];
      if (MultiValued(b)) continue;
      if (b.info.count - b.info.nulls < o.min_key_values ||
          b.info.avg_length > o.max_key_avg_length)
        continue;
      std::unordered_set<std::string> seen;
      size_t rows = 0;
      for (size_t r = 0; r < a.values.size(); ++r) {
        if (a.values[r].empty() || b.values[r].empty()) continue;
        ++rows;
        seen.insert(a.values[r] + "\x1f" + b.values[r]);
      }
      if (rows < static_cast<size_t>(o.min_key_values)) continue;
      const double uniq = static_cast<double>(seen.size()) / static_cast<double>(rows);
      const int ids = int(a.info.id_like) + int(b.info.id_like);
      if (uniq >= o.unique_ratio && (ids > best_id || (ids == best_id && uniq > best))) {
        best = uniq;
        best_id = ids;
        best_a = &a;
        best_b = &b;
      }
    }
  }
  if (best_a != nullptr) {
    keys.push_back(
        {source.name, {best_a->info.path, best_b->info.path}, best, KeyConfidence(best), true});
  }
  return keys;
}

namespace {

// A possible target of a foreign key: a single-field identity key's column.
struct KeyTarget {
  size_t source;
  const ColumnProfile* column;
};

std::vector<KeyTarget> KeyTargets(const std::vector<SourceColumns>& sources,
                                  const std::vector<IdentityKey>& keys) {
  std::vector<KeyTarget> targets;
  for (const IdentityKey& k : keys) {
    if (k.fields.size() != 1) continue;
    for (size_t s = 0; s < sources.size(); ++s) {
      if (sources[s].name != k.source) continue;
      for (const ColumnProfile& c : sources[s].columns) {
        if (c.info.path == k.fields[0]) targets.push_back({s, &c});
      }
    }
  }
  return targets;
}

bool IsPrimaryKey(const std::vector<IdentityKey>& keys, const std::string& source,
                  const std::string& field) {
  return std::any_of(keys.begin(), keys.end(), [&](const IdentityKey& k) {
    return k.primary && k.source == source && k.fields.size() == 1 && k.fields[0] == field;
  });
}

// The child field names the parent key: the same name (exact; a bare "id"
// on both sides says nothing, so only with content tokens), or a content
// token shared with the parent field's or its source's name (semantic).
// False when neither.
bool NamesTarget(const ColumnProfile& child, const std::unordered_set<std::string>& child_tokens,
                 const ColumnProfile& parent, const std::string& parent_source, bool* exact) {
  *exact = Normalised(child.info.path) == Normalised(parent.info.path) && !child_tokens.empty();
  if (*exact) return true;
  std::unordered_set<std::string> parent_tokens = ContentTokens(parent.info.path);
  for (const std::string& tok : ContentTokens(parent_source)) parent_tokens.insert(tok);
  for (const std::string& tok : child_tokens) {
    if (parent_tokens.count(tok) > 0) return true;
  }
  return false;
}

// The link from `child` (of source `from`) to the key column `parent` (of
// source `to`) when their values overlap enough.
std::optional<ForeignKey> ValueLink(const ColumnProfile& child, const std::string& from,
                                    const ColumnProfile& parent, const std::string& to, bool exact,
                                    const SchemaOptions& o) {
  std::vector<std::string> shared;
  for (const auto& [v, n] : child.counts) {
    if (parent.counts.count(v)) shared.push_back(v);
  }
  const double overlap = static_cast<double>(shared.size()) /
                         static_cast<double>(std::max(child.counts.size(), parent.counts.size()));
  const double containment =
      static_cast<double>(shared.size()) / static_cast<double>(child.counts.size());
  if (shared.empty() || overlap <= o.min_overlap || containment < o.min_containment) {
    return std::nullopt;
  }
  ForeignKey fk;
  fk.from_source = from;
  fk.from_field = child.info.path;
  fk.to_source = to;
  fk.to_field = parent.info.path;
  fk.overlap = overlap;
  fk.containment = containment;
  fk.exact_name = exact;
  fk.confidence = std::min(0.95, 0.5 + 0.3 * overlap + (exact ? 0.15 : 0.0));
  fk.cardinality = Side(child, shared) + ":" + Side(parent, shared);
  return fk;
}

// One link per child field: the most confident target.
void KeepMostConfident(ForeignKey fk, std::vector<ForeignKey>* out) {
  auto same_child = std::find_if(out->begin(), out->end(), [&](const ForeignKey& o) {
    return o.from_source == fk.from_source && o.from_field == fk.from_field;
  });
  if (same_child == out->end()) {
    out->push_back(std::move(fk));
  } else if (fk.confidence > same_child->confidence) {
    *same_child = std::move(fk);
  }
}

// Of two primary keys referencing each other, `fk` is the direction kept
// when its child has fewer distinct values; ties: the later source.
bool KeepsDirection(const ForeignKey& fk, const std::vector<SourceColumns>& sources) {
  size_t mine = 0, theirs = 0, my_pos = 0, their_pos = 0;
  for (size_t s = 0; s < sources.size(); ++s) {
    for (const ColumnProfile& c : sources[s].columns) {
      if (sources[s].name == fk.from_source && c.info.path == fk.from_field) {
        mine = c.counts.size();
        my_pos = s;
      }
      if (sources[s].name == fk.to_source && c.info.path == fk.to_field) {
        theirs = c.counts.size();
        their_pos = s;
      }
    }
  }
  return mine < theirs || (mine == theirs && my_pos > their_pos);
}

// A primary key references only another primary key (a 1:1 extension
// table); a primary key "referencing" a child's column is the reverse link
// seen from the wrong side. Two primary keys referencing each other: keep
// one direction.
std::vector<ForeignKey> OrientPrimaryKeyLinks(const std::vector<ForeignKey>& links,
                                              const std::vector<SourceColumns>& sources,
                                              const std::vector<IdentityKey>& keys) {
  std::vector<ForeignKey> kept;
  for (const ForeignKey& fk : links) {
    const bool from_primary = IsPrimaryKey(keys, fk.from_source, fk.from_field);
    if (from_primary && !IsPrimaryKey(keys, fk.to_source, fk.to_field)) continue;
    if (!from_primary) {
      kept.push_back(fk);
      continue;
    }
    const auto reverse = std::find_if(links.begin(), links.end(), [&](const ForeignKey& r) {
      return r.from_source == fk.to_source && r.from_field == fk.to_field &&
             r.to_source == fk.from_source && r.to_field == fk.from_field;
    });
    if (reverse == links.end() || KeepsDirection(fk, sources)) kept.push_back(fk);
  }
  return kept;
}

}  // namespace

std::vector<ForeignKey> DetectForeignKeys(const std::vector<SourceColumns>& sources,
                                          const std::vector<IdentityKey>& keys,
                                          const SchemaOptions& o) {
  const std::vector<KeyTarget> targets = KeyTargets(sources, keys);
  std::vector<ForeignKey> links;
  for (size_t s = 0; s < sources.size(); ++s) {
    for (const ColumnProfile& child : sources[s].columns) {
      if (child.counts.empty()) continue;
      const std::unordered_set<std::string> child_tokens = ContentTokens(child.info.path);
      for (const KeyTarget& t : targets) {
        const ColumnProfile& parent = *t.column;
        if (&parent == &child || !Compatible(child.info, parent.info)) continue;
        bool exact = false;
        if (!NamesTarget(child, child_tokens, parent, sources[t.source].name, &exact)) continue;
        std::optional<ForeignKey> fk =
            ValueLink(child, sources[s].name, parent, sources[t.source].name, exact, o);
        if (fk) KeepMostConfident(std::move(*fk), &links);
      }
    }
  }
  return OrientPrimaryKeyLinks(links, sources, keys);
}

std::vector<SourceParent> DetectHierarchy(const std::vector<SourceInfo>& sources,
                                          const std::vector<ForeignKey>& foreign_keys) {
  std::map<std::string, int64_t> records;
  for (const SourceInfo& s : sources) records[s.name] = s.records;
  std::vector<SourceParent> out;
  std::vector<double> confidence;
  for (const ForeignKey& fk : foreign_keys) {
    if (fk.from_source == fk.to_source || fk.cardinality != "N:1") continue;
    const int64_t child = records[fk.from_source], parent = records[fk.to_source];
    if (parent <= 0 || child <= parent) continue;
    auto same = std::find_if(out.begin(), out.end(), [&](const SourceParent& p) {
      return p.parent == fk.to_source && p.child == fk.from_source;
    });
    if (same != out.end()) {
      const size_t i = static_cast<size_t>(same - out.begin());
      if (fk.confidence > confidence[i]) {
        same->via = fk.from_field;
        confidence[i] = fk.confidence;
      }
      continue;
    }
    out.push_back({fk.to_source, fk.from_source, fk.from_field,
                   static_cast<double>(child) / static_cast<double>(parent)});
    confidence.push_back(fk.confidence);
  }
  // Depth of each parent (roots 0), for parents-first order.
  std::map<std::string, int> depth;
  for (size_t round = 0; round < out.size(); ++round) {
    for (const SourceParent& p : out) depth[p.child] = std::max(depth[p.child], depth[p.parent] + 1);
  }
  std::stable_sort(out.begin(), out.end(), [&](const SourceParent& a, const SourceParent& b) {
    return depth[a.parent] < depth[b.parent];
  });
  return out;
}

}  // namespace flowrag
