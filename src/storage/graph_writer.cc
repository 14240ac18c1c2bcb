#include "storage/graph_writer.h"

#include <functional>
#include <map>
#include <vector>

#include "storage/meta_value.h"
#include "storage/unix_time.h"

namespace flowrag {

namespace {

// Lookups by a set of values take this many at a time (unused slots repeat
// the first value): one round trip instead of one per value.
constexpr int kLookupSlots = 16;

// Runs `s` (bound) to its end, calling `row` on each row. Reset after, an
// error included.
Status StepAll(Statement& s, const std::function<void()>& row) {
  while (true) {
    Result<bool> more = s.Step();
    if (!more.ok()) {
      s.Reset();
      return more.status();
    }
    if (!*more) break;
    row();
  }
  s.Reset();
  return Status::Ok();
}

// Runs `s` (bound; a DELETE ... RETURNING an id) to its end: each id into
// *ids, *rows counting them.
Status ReadIds(Statement& s, std::set<int64_t>* ids, int64_t* rows) {
  return StepAll(s, [&] {
    ids->insert(s.Int(0));
    ++*rows;
  });
}

// "(?1, ?2, ..., ?N)".
std::string Slots(int n) {
  std::string s = "(";
  for (int i = 1; i <= n; ++i) s += (i > 1 ? ", ?" : "?") + std::to_string(i);
  return s + ")";
}

// Per entity among the slots: id, most frequent surface form, then the
// non-empty type a schema record gave, else the most frequent one; its
// current name and type. No row for an entity that is gone.
const std::string kCanonicalSql =
    "SELECT e.id, (SELECT surface FROM mentions WHERE entity_id = e.id GROUP BY surface "
    "ORDER BY sum(count) DESC, surface ASC LIMIT 1), "
    "(SELECT m.type FROM mentions m LEFT JOIN extraction_state x ON x.passage_id = "
    "m.passage_id AND x.extractor = 'schema' WHERE m.entity_id = e.id AND m.type <> '' "
    "GROUP BY m.type ORDER BY max(CASE WHEN x.passage_id IS NULL THEN 0 ELSE 1 END) DESC, "
    "sum(m.count) DESC, m.type ASC LIMIT 1), e.name, e.type FROM entities e WHERE e.id IN " +
    Slots(kLookupSlots);

// Per slot, the entity its key maps to, with the entity's current name and
// type (AddEntities). A key has a row per passage that gave it, all naming
// the same entity, so one row is read: `key IN (...)` read every row, and a
// hub's key (a year, a country) has one for a good part of the corpus.
std::string FindKeysSql() {
  std::string sql;
  for (int i = 1; i <= kLookupSlots; ++i) {
    sql += (i > 1 ? " UNION ALL " : "");
    sql += "SELECT k.key, e.id, e.name, e.type FROM (SELECT key, entity_id FROM entity_keys "
           "WHERE key = ?" + std::to_string(i) + " LIMIT 1) k JOIN entities e ON e.id = k.entity_id";
  }
  return sql;
}

const std::string kFindKeysSql = FindKeysSql();

}  // namespace

Status GraphWriter::Prepare() {
  struct {
    Statement* stmt;
    const char* sql;
  } const statements[] = {
      {&find_key_,
       "SELECT k.entity_id, e.name, e.type FROM entity_keys k JOIN entities e ON e.id = "
       "k.entity_id WHERE k.key = ? LIMIT 1"},
      {&find_keys_, kFindKeysSql.c_str()},
      {&insert_entity_, "INSERT INTO entities(name, type) VALUES (?, ?) RETURNING id"},
      {&insert_key_,
       "INSERT INTO entity_keys(key, passage_id, entity_id, surface) VALUES (?, ?, ?, ?) "
       "ON CONFLICT DO NOTHING"},
      {&upsert_mention_,
       "INSERT INTO mentions(passage_id, entity_id, surface, type, count, defining) "
       "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(passage_id, entity_id) DO UPDATE SET "
       "count = CASE WHEN excluded.count > mentions.count THEN excluded.count ELSE "
       "mentions.count END, "
       "defining = CASE WHEN excluded.defining > mentions.defining THEN excluded.defining ELSE "
       "mentions.defining END, "
       "type = CASE WHEN mentions.type = '' THEN excluded.type ELSE mentions.type END"},
      {&insert_description_,
       "INSERT INTO descriptions(entity_id, passage_id, text) VALUES (?, ?, ?) "
       "ON CONFLICT DO NOTHING"},
      // Facts name their relation by text, so that a triple is three
      // statements whose results nobody waits for (Statement::Queue). A
      // relation is inserted only when missing, as a fact only when new:
      // ids are drawn as when each was looked up first.
      {&insert_relation_,
       "INSERT INTO relations(text) SELECT CAST(?1 AS TEXT) WHERE NOT EXISTS "
       "(SELECT 1 FROM relations WHERE text = ?1)"},
      {&insert_fact_,
       "INSERT INTO facts(subject_id, relation_id, object_id) SELECT ?1, r.id, ?3 FROM "
       "relations r WHERE r.text = ?2 ON CONFLICT DO NOTHING"},
      {&insert_fact_source_,
       "INSERT INTO fact_sources(fact_id, passage_id) SELECT f.id, CAST(?4 AS BIGINT) FROM "
       "facts f JOIN relations r ON r.id = f.relation_id WHERE f.subject_id = ?1 AND "
       "r.text = ?2 AND f.object_id = ?3 ON CONFLICT DO NOTHING"},
      {&mark_,
       "INSERT INTO extraction_state(passage_id, extractor, status, detail, extracted_at) "
       "VALUES (?, ?, ?, ?, ?) ON CONFLICT(passage_id) DO UPDATE SET extractor = "
       "excluded.extractor, status = excluded.status, detail = excluded.detail, "
       "extracted_at = excluded.extracted_at"},
      {&clear_keys_, "DELETE FROM entity_keys WHERE passage_id = ?"},
      // The passage's entities as its mentions go (their names are redone).
      {&clear_mentions_, "DELETE FROM mentions WHERE passage_id = ? RETURNING entity_id"},
      {&clear_descriptions_, "DELETE FROM descriptions WHERE passage_id = ?"},
      {&clear_fact_sources_, "DELETE FROM fact_sources WHERE passage_id = ?"},
      // The same, read when Finish() collects: the facts that may be orphans.
      {&clear_fact_sources_returning_,
       "DELETE FROM fact_sources WHERE passage_id = ? RETURNING fact_id"},
      // An entity no passage defines any more (its links, keys, facts and
      // synonym edges cascade), a fact left without a source.
      {&collect_entity_,
       "DELETE FROM entities WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM mentions m WHERE "
       "m.entity_id = ?1 AND m.defining = 1)"},
      {&collect_fact_,
       "DELETE FROM facts WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM fact_sources s WHERE "
       "s.fact_id = ?1)"},
      // Most frequent surface form, then the non-empty type a schema record
      // gave, else the most frequent one.
      {&canonical_, kCanonicalSql.c_str()},
      // A new name means a new embedding: its synonym edges are recomputed.
      {&rename_,
       "UPDATE entities SET name = ?1, type = ?2, synonyms_done = CASE WHEN name = ?1 THEN "
       "synonyms_done ELSE 0 END WHERE id = ?3"},
  };
  for (const auto& s : statements) {
    FLOWRAG_ASSIGN_OR_RETURN(*s.stmt, conn_->Prepare(s.sql));
  }
  // SQLite has one writer at a time: no row lock to take (or spell).
  FLOWRAG_ASSIGN_OR_RETURN(
      passage_hash_,
      conn_->Prepare(conn_->dialect() == SqlDialect::kPostgres
                         ? "SELECT embed_hash FROM passages WHERE id = ? FOR KEY SHARE"
                         : "SELECT embed_hash FROM passages WHERE id = ?"));
  return Status::Ok();
}

Result<bool> GraphWriter::PassageHolds(int64_t passage_id, uint64_t embed_hash) {
  passage_hash_.Bind(1, passage_id);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, passage_hash_.Step());
  const bool holds = row && HashFromSql(passage_hash_.Int(0)) == embed_hash;
  passage_hash_.Reset();
  report_.passages_gone += !holds;
  return holds;
}

Result<int64_t> GraphWriter::TitlesGeneration() {
  // Prepared here, not in Prepare(): only extraction batches ask.
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare(conn_->dialect() == SqlDialect::kPostgres
                         ? "SELECT value FROM meta WHERE key = 'titles_generation' FOR SHARE"
                         : "SELECT value FROM meta WHERE key = 'titles_generation'"));
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return int64_t{0};
  return ParseMetaInt("store", "titles_generation", s.Text(0), 0, INT64_MAX);
}

Status GraphWriter::ForgetPassage(int64_t passage_id) {
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement unlink,
      conn_->Prepare("DELETE FROM linked_names WHERE key IN (SELECT k.key FROM entity_keys k JOIN "
                     "mentions m ON m.passage_id = k.passage_id AND m.entity_id = k.entity_id "
                     "WHERE k.passage_id = ? AND m.type = 'TITLE' AND m.defining = 1)"));
  FLOWRAG_RETURN_IF_ERROR(unlink.Bind(1, passage_id).Run());
  return ClearPassage(passage_id);
}

// Three statements queued and the fourth read: one round trip (two when
// Finish collects: the fact sources are read too).
Status GraphWriter::ClearPassage(int64_t passage_id) {
  const int64_t keys_before = cleared_keys_, rows_before = cleared_rows_;
  FLOWRAG_RETURN_IF_ERROR(clear_keys_.Bind(1, passage_id).Queue(&cleared_keys_));
  FLOWRAG_RETURN_IF_ERROR(clear_descriptions_.Bind(1, passage_id).Queue(&cleared_rows_));
  if (collect_) {
    FLOWRAG_RETURN_IF_ERROR(ReadIds(clear_fact_sources_returning_.Bind(1, passage_id),
                                    &unsourced_, &cleared_rows_));
  } else {
    FLOWRAG_RETURN_IF_ERROR(clear_fact_sources_.Bind(1, passage_id).Queue(&cleared_rows_));
  }
  FLOWRAG_RETURN_IF_ERROR(ReadIds(clear_mentions_.Bind(1, passage_id), &touched_, &cleared_rows_));
  if (cleared_keys_ != keys_before || cleared_rows_ != rows_before) removed_ = true;
  // A key may have lost its last row.
  if (cleared_keys_ != keys_before) key_owners_.clear();
  return Status::Ok();
}

Result<int64_t> GraphWriter::KeyOwner(const std::string& key) {
  if (key.empty()) return int64_t{0};
  auto it = key_owners_.find(key);
  if (it != key_owners_.end()) return it->second;
  find_key_.Bind(1, key);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, find_key_.Step());
  const int64_t id = row ? find_key_.Int(0) : 0;
  if (row) RememberName(id, find_key_.Text(1), find_key_.Text(2));
  find_key_.Reset();
  key_owners_.emplace(key, id);
  return id;
}

Status GraphWriter::PrefetchKeys(const PassageExtraction& ex) {
  std::vector<std::string> wanted;
  std::set<std::string> seen;
  const auto want = [&](const std::string& name) {
    std::string key = EntityKey(name);
    if (!key.empty() && !key_owners_.count(key) && seen.insert(key).second) {
      wanted.push_back(std::move(key));
    }
  };
  for (const ExtractedEntity& e : ex.entities) {
    if (EntityKey(e.name).empty()) continue;  // skipped by AddEntities
    want(e.name);
    for (const std::string& a : e.aliases) want(a);
  }
  for (size_t begin = 0; begin < wanted.size(); begin += kLookupSlots) {
    for (int i = 0; i < kLookupSlots; ++i) {
      const size_t k = begin + i < wanted.size() ? begin + i : begin;
      find_keys_.Bind(i + 1, wanted[k]);
    }
    std::unordered_map<std::string, int64_t> found;
    FLOWRAG_RETURN_IF_ERROR(StepAll(find_keys_, [&] {
      // Every row of a key names the same entity (AddEntities).
      found.emplace(std::string(find_keys_.Text(0)), find_keys_.Int(1));
      RememberName(find_keys_.Int(1), find_keys_.Text(2), find_keys_.Text(3));
    }));
    for (size_t k = begin; k < std::min(wanted.size(), begin + kLookupSlots); ++k) {
      auto it = found.find(wanted[k]);
      key_owners_.emplace(wanted[k], it == found.end() ? 0 : it->second);
    }
  }
  return Status::Ok();
}

// An entity's stored name is its most frequent surface and its type the
// preferred non-empty one (kCanonicalSql), as of the last Finish. A mention
// with that very surface, and with that type or none, only adds to the
// winners' counts, so it cannot change either; any other can. Hub entities
// (a year, a country) are mentioned by a good part of the corpus in that
// form: canonicalising them after every batch read all their mentions each
// time, which made an index run quadratic in the corpus.
void GraphWriter::RememberName(int64_t id, std::string_view name, std::string_view type) {
  if (names_.count(id) == 0) names_.emplace(id, std::make_pair(std::string(name), std::string(type)));
}

bool GraphWriter::MayRename(int64_t id, const ExtractedEntity& e) const {
  auto it = names_.find(id);
  if (it == names_.end()) return true;
  const auto& [name, type] = it->second;
  return e.name != name || (!e.type.empty() && e.type != type);
}

Result<int64_t> GraphWriter::Resolve(const ExtractedEntity& e) {
  FLOWRAG_ASSIGN_OR_RETURN(int64_t id, KeyOwner(EntityKey(e.name)));
  for (size_t i = 0; id == 0 && i < e.aliases.size(); ++i) {
    FLOWRAG_ASSIGN_OR_RETURN(id, KeyOwner(EntityKey(e.aliases[i])));
  }
  return id;
}

// Resolution runs first with stand-ins for the entities the passage
// creates (-1, -2, ...: memo and `local` hold them meanwhile); their
// inserts then go out together and their ids come back in one round trip;
// then the keys, mentions and descriptions are queued with the real ids, in
// the order a statement-by-statement write would issue them.
Status GraphWriter::AddEntities(const PassageExtraction& ex, bool cleared,
                                std::unordered_map<std::string, int64_t>* local) {
  FLOWRAG_RETURN_IF_ERROR(PrefetchKeys(ex));
  struct Planned {
    const ExtractedEntity* entity;
    int64_t id;                                            // a stand-in when < 0
    std::vector<std::pair<std::string, std::string>> keys;  // key, surface
  };
  std::vector<Planned> planned;
  std::vector<const ExtractedEntity*> created;  // stand-in -(i + 1)
  for (const ExtractedEntity& e : ex.entities) {
    const std::string key = EntityKey(e.name);
    if (key.empty()) continue;
    FLOWRAG_ASSIGN_OR_RETURN(int64_t id, Resolve(e));
    if (id == 0) {
      created.push_back(&e);
      id = -static_cast<int64_t>(created.size());
    }
    Planned p{&e, id, {}};
    // Record every key of this entity for this passage, unless it names
    // another entity already.
    std::vector<std::pair<std::string, std::string>> keys = {{key, e.name}};
    for (const std::string& a : e.aliases) keys.emplace_back(EntityKey(a), a);
    for (auto& [k, surface] : keys) {
      if (k.empty()) continue;
      FLOWRAG_ASSIGN_OR_RETURN(const int64_t owner, KeyOwner(k));
      if (owner != 0 && owner != id) {
        ++report_.key_conflicts;
        continue;
      }
      // Linked (non-defining) names record their keys too, so a document
      // that defines the name later in the same batch resolves to this
      // entity instead of creating a second one.
      key_owners_[k] = id;
      local->emplace(k, id);
      p.keys.emplace_back(std::move(k), std::move(surface));
    }
    planned.push_back(std::move(p));
  }
  std::vector<int64_t> ids(created.size(), 0);
  for (size_t i = 0; i < created.size(); ++i) {
    FLOWRAG_RETURN_IF_ERROR(
        insert_entity_.Bind(1, created[i]->name).Bind(2, created[i]->type).QueueReturningId(&ids[i]));
  }
  if (!created.empty()) FLOWRAG_RETURN_IF_ERROR(conn_->Flush());
  for (int64_t id : ids) {
    if (id <= 0) return Status::Internal("graph: an inserted entity returned no id");
    ++report_.entities_created;
    report_.created_entities.insert(id);
  }
  const auto real = [&](int64_t id) { return id < 0 ? ids[-id - 1] : id; };
  for (auto& [k, id] : *local) id = real(id);
  for (Planned& p : planned) {
    const bool created_now = p.id < 0;
    p.id = real(p.id);
    if (created_now || !cleared || MayRename(p.id, *p.entity)) touched_.insert(p.id);
    for (const auto& [k, surface] : p.keys) {
      key_owners_[k] = p.id;
      FLOWRAG_RETURN_IF_ERROR(
          insert_key_.Bind(1, k).Bind(2, ex.passage_id).Bind(3, p.id).Bind(4, surface).Queue());
    }
    const ExtractedEntity& e = *p.entity;
    FLOWRAG_RETURN_IF_ERROR(upsert_mention_.Bind(1, ex.passage_id)
                                .Bind(2, p.id)
                                .Bind(3, e.name)
                                .Bind(4, e.type)
                                .Bind(5, int64_t{std::max(1, e.count)})
                                .Bind(6, int64_t{e.defining ? 1 : 0})
                                .Queue());
    ++report_.mentions;
    if (!e.description.empty()) {
      FLOWRAG_RETURN_IF_ERROR(insert_description_.Bind(1, p.id)
                                  .Bind(2, ex.passage_id)
                                  .Bind(3, e.description)
                                  .Queue(&descriptions_inserted_));
    }
  }
  return Status::Ok();
}

Status GraphWriter::AddTriples(const PassageExtraction& ex,
                               const std::unordered_map<std::string, int64_t>& local) {
  for (const ExtractedTriple& t : ex.triples) {
    auto s = local.find(EntityKey(t.subject));
    auto o = local.find(EntityKey(t.object));
    if (s == local.end() || o == local.end() || t.relation.empty() || s->second == o->second) {
      ++report_.triples_rejected;
      continue;
    }
    if (relations_known_.insert(t.relation).second) {
      FLOWRAG_RETURN_IF_ERROR(insert_relation_.Bind(1, t.relation).Queue());
    }
    FLOWRAG_RETURN_IF_ERROR(insert_fact_.Bind(1, s->second)
                                .Bind(2, t.relation)
                                .Bind(3, o->second)
                                .Queue(&facts_inserted_));
    FLOWRAG_RETURN_IF_ERROR(insert_fact_source_.Bind(1, s->second)
                                .Bind(2, t.relation)
                                .Bind(3, o->second)
                                .Bind(4, ex.passage_id)
                                .Queue(&fact_sources_inserted_));
  }
  return Status::Ok();
}

Status GraphWriter::ApplyPassage(const PassageExtraction& ex, std::string_view extractor,
                                 std::string_view detail) {
  FLOWRAG_RETURN_IF_ERROR(ClearPassage(ex.passage_id));
  std::unordered_map<std::string, int64_t> local;
  FLOWRAG_RETURN_IF_ERROR(AddEntities(ex, /*cleared=*/true, &local));
  FLOWRAG_RETURN_IF_ERROR(AddTriples(ex, local));
  ++report_.passages;
  return mark_.Bind(1, ex.passage_id)
      .Bind(2, extractor)
      .Bind(3, "done")
      .Bind(4, detail)
      .Bind(5, UnixSeconds())
      .Queue();
}

Status GraphWriter::AddToPassage(const PassageExtraction& ex) {
  std::unordered_map<std::string, int64_t> local;
  FLOWRAG_RETURN_IF_ERROR(AddEntities(ex, /*cleared=*/false, &local));
  // Triples may also use entities the passage had before.
  for (const ExtractedTriple& t : ex.triples) {
    for (const std::string* name : {&t.subject, &t.object}) {
      const std::string key = EntityKey(*name);
      if (local.count(key)) continue;
      FLOWRAG_ASSIGN_OR_RETURN(const int64_t owner, KeyOwner(key));
      if (owner != 0) local.emplace(key, owner);
    }
  }
  return AddTriples(ex, local);
}

Status GraphWriter::MarkFailed(int64_t passage_id, std::string_view extractor,
                               std::string_view detail) {
  return mark_.Bind(1, passage_id)
      .Bind(2, extractor)
      .Bind(3, "failed")
      .Bind(4, detail)
      .Bind(5, UnixSeconds())
      .Queue();
}

// Touched entities are read kLookupSlots at a time; renames are queued and
// issued in id order.
Status GraphWriter::Canonicalise() {
  const std::vector<int64_t> ids(touched_.begin(), touched_.end());
  for (size_t begin = 0; begin < ids.size(); begin += kLookupSlots) {
    for (int i = 0; i < kLookupSlots; ++i) {
      canonical_.Bind(i + 1, ids[begin + i < ids.size() ? begin + i : begin]);
    }
    struct Names {
      std::string name, type;
      bool renamed, retyped;
    };
    std::map<int64_t, Names> changed;
    while (true) {
      Result<bool> row = canonical_.Step();
      if (!row.ok()) {
        canonical_.Reset();
        return row.status();
      }
      if (!*row) break;
      if (canonical_.IsNull(1)) continue;  // no mentions left: collected below
      Names n{std::string(canonical_.Text(1)),
              std::string(canonical_.IsNull(2) ? "" : canonical_.Text(2)), false, false};
      n.renamed = canonical_.Text(3) != n.name;
      n.retyped = canonical_.Text(4) != n.type;
      if (n.renamed || n.retyped) changed.emplace(canonical_.Int(0), std::move(n));
    }
    canonical_.Reset();
    for (const auto& [id, n] : changed) {
      if (n.renamed && !report_.created_entities.count(id)) report_.renamed_entities.insert(id);
      FLOWRAG_RETURN_IF_ERROR(rename_.Bind(1, n.name).Bind(2, n.type).Bind(3, id).Queue());
    }
  }
  return Status::Ok();
}

Status GraphWriter::Finish() {
  if (collect_ && (removed_ || !report_.created_entities.empty())) {
    FLOWRAG_RETURN_IF_ERROR(CollectTouched());
  }
  removed_ = false;
  unsourced_.clear();
  relations_known_.clear();
  FLOWRAG_RETURN_IF_ERROR(Canonicalise());
  touched_.clear();
  names_.clear();  // Canonicalise may have renamed them
  // The queued statements' counts.
  FLOWRAG_RETURN_IF_ERROR(conn_->Flush());
  report_.descriptions = static_cast<size_t>(descriptions_inserted_);
  report_.facts_created = static_cast<size_t>(facts_inserted_);
  report_.fact_sources = static_cast<size_t>(fact_sources_inserted_);
  return Status::Ok();
}

Status GraphWriter::CollectOrphans() {
  // Entities no passage defines any more (their links, keys, facts and
  // synonym edges cascade), then facts left without a source.
  FLOWRAG_RETURN_IF_ERROR(
      conn_->Exec("DELETE FROM entities WHERE NOT EXISTS (SELECT 1 FROM mentions m "
                  "WHERE m.entity_id = entities.id AND m.defining = 1)"));
  report_.entities_deleted += conn_->Changes();
  FLOWRAG_RETURN_IF_ERROR(
      conn_->Exec("DELETE FROM facts WHERE NOT EXISTS (SELECT 1 FROM fact_sources s WHERE "
                  "s.fact_id = facts.id)"));
  report_.facts_deleted += conn_->Changes();
  return CollectRelations();
}

// Only what this transaction touched can have become an orphan in it: an
// entity loses its last defining mention when a passage's mentions are
// cleared (touched_), and one created here may have none; a fact loses its
// last source when a passage's sources are cleared (unsourced_), and a fact
// whose entity goes, goes with it.
Status GraphWriter::CollectTouched() {
  std::set<int64_t> entities = touched_;
  entities.insert(report_.created_entities.begin(), report_.created_entities.end());
  int64_t entities_deleted = 0, facts_deleted = 0;
  for (int64_t id : entities) {
    FLOWRAG_RETURN_IF_ERROR(collect_entity_.Bind(1, id).Queue(&entities_deleted));
  }
  for (int64_t id : unsourced_) {
    FLOWRAG_RETURN_IF_ERROR(collect_fact_.Bind(1, id).Queue(&facts_deleted));
  }
  FLOWRAG_RETURN_IF_ERROR(conn_->Flush());
  report_.entities_deleted += entities_deleted;
  report_.facts_deleted += facts_deleted;
  return CollectRelations();
}

Status GraphWriter::CollectRelations() {
  relations_known_.clear();  // relations without facts go
  return conn_->Exec(
      "DELETE FROM relations WHERE NOT EXISTS (SELECT 1 FROM facts f "
      "WHERE f.relation_id = relations.id)");
}

}  // namespace flowrag
