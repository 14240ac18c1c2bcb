#include "storage/graph_writer.h"

#include "storage/unix_time.h"

namespace flowrag {

Status GraphWriter::Prepare() {
  struct {
    Statement* stmt;
    const char* sql;
  } const statements[] = {
      {&find_key_, "SELECT entity_id FROM entity_keys WHERE key = ? LIMIT 1"},
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
      {&find_relation_, "SELECT id FROM relations WHERE text = ?"},
      {&insert_relation_, "INSERT INTO relations(text) VALUES (?) RETURNING id"},
      {&find_fact_,
       "SELECT id FROM facts WHERE subject_id = ? AND relation_id = ? AND object_id = ?"},
      {&insert_fact_,
       "INSERT INTO facts(subject_id, relation_id, object_id) VALUES (?, ?, ?) "
       "ON CONFLICT DO NOTHING RETURNING id"},
      {&insert_fact_source_,
       "INSERT INTO fact_sources(fact_id, passage_id) VALUES (?, ?) ON CONFLICT DO NOTHING"},
      {&mark_,
       "INSERT INTO extraction_state(passage_id, extractor, status, detail, extracted_at) "
       "VALUES (?, ?, ?, ?, ?) ON CONFLICT(passage_id) DO UPDATE SET extractor = "
       "excluded.extractor, status = excluded.status, detail = excluded.detail, "
       "extracted_at = excluded.extracted_at"},
      {&clear_keys_, "DELETE FROM entity_keys WHERE passage_id = ?"},
      {&clear_mentions_, "DELETE FROM mentions WHERE passage_id = ?"},
      {&clear_descriptions_, "DELETE FROM descriptions WHERE passage_id = ?"},
      {&clear_fact_sources_, "DELETE FROM fact_sources WHERE passage_id = ?"},
      {&entities_of_passage_, "SELECT entity_id FROM mentions WHERE passage_id = ?"},
      // Most frequent surface form, then the non-empty type a schema record
      // gave, else the most frequent one.
      {&canonical_,
       "SELECT (SELECT surface FROM mentions WHERE entity_id = ?1 GROUP BY surface "
       "ORDER BY sum(count) DESC, surface ASC LIMIT 1), "
       "(SELECT m.type FROM mentions m LEFT JOIN extraction_state x ON x.passage_id = "
       "m.passage_id AND x.extractor = 'schema' WHERE m.entity_id = ?1 AND m.type <> '' "
       "GROUP BY m.type ORDER BY max(CASE WHEN x.passage_id IS NULL THEN 0 ELSE 1 END) DESC, "
       "sum(m.count) DESC, "
       "m.type ASC LIMIT 1), "
       "(SELECT name FROM entities WHERE id = ?1), (SELECT type FROM entities WHERE id = ?1)"},
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

Status GraphWriter::ClearPassage(int64_t passage_id) {
  entities_of_passage_.Bind(1, passage_id);
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, entities_of_passage_.Step());
    if (!row) break;
    touched_.insert(entities_of_passage_.Int(0));
  }
  entities_of_passage_.Reset();
  for (Statement* s :
       {&clear_keys_, &clear_mentions_, &clear_descriptions_, &clear_fact_sources_}) {
    FLOWRAG_RETURN_IF_ERROR(s->Bind(1, passage_id).Run());
    if (conn_->Changes() > 0) {
      removed_ = true;
      if (s == &clear_keys_) key_owners_.clear();  // a key may have lost its last row
    }
  }
  return Status::Ok();
}

Result<int64_t> GraphWriter::KeyOwner(const std::string& key) {
  if (key.empty()) return int64_t{0};
  auto it = key_owners_.find(key);
  if (it != key_owners_.end()) return it->second;
  find_key_.Bind(1, key);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, find_key_.Step());
  const int64_t id = row ? find_key_.Int(0) : 0;
  find_key_.Reset();
  key_owners_.emplace(key, id);
  return id;
}

Result<int64_t> GraphWriter::Resolve(const ExtractedEntity& e) {
  FLOWRAG_ASSIGN_OR_RETURN(int64_t id, KeyOwner(EntityKey(e.name)));
  for (size_t i = 0; id == 0 && i < e.aliases.size(); ++i) {
    FLOWRAG_ASSIGN_OR_RETURN(id, KeyOwner(EntityKey(e.aliases[i])));
  }
  if (id != 0) return id;
  FLOWRAG_ASSIGN_OR_RETURN(id, insert_entity_.Bind(1, e.name).Bind(2, e.type).RunReturningId());
  ++report_.entities_created;
  report_.created_entities.insert(id);
  return id;
}

Status GraphWriter::AddEntities(const PassageExtraction& ex,
                                std::unordered_map<std::string, int64_t>* local) {
  for (const ExtractedEntity& e : ex.entities) {
    const std::string key = EntityKey(e.name);
    if (key.empty()) continue;
    FLOWRAG_ASSIGN_OR_RETURN(int64_t id, Resolve(e));
    touched_.insert(id);
    // Record every key of this entity for this passage, unless it names
    // another entity already.
    std::vector<std::pair<std::string, std::string>> keys = {{key, e.name}};
    for (const std::string& a : e.aliases) keys.emplace_back(EntityKey(a), a);
    for (const auto& [k, surface] : keys) {
      if (k.empty()) continue;
      FLOWRAG_ASSIGN_OR_RETURN(const int64_t owner, KeyOwner(k));
      if (owner != 0 && owner != id) {
        ++report_.key_conflicts;
        continue;
      }
      // Linked (non-defining) names record their keys too, so a document
      // that defines the name later in the same batch resolves to this
      // entity instead of creating a second one.
      FLOWRAG_RETURN_IF_ERROR(
          insert_key_.Bind(1, k).Bind(2, ex.passage_id).Bind(3, id).Bind(4, surface).Run());
      key_owners_[k] = id;
      local->emplace(k, id);
    }
    FLOWRAG_RETURN_IF_ERROR(upsert_mention_.Bind(1, ex.passage_id)
                                .Bind(2, id)
                                .Bind(3, e.name)
                                .Bind(4, e.type)
                                .Bind(5, int64_t{std::max(1, e.count)})
                                .Bind(6, int64_t{e.defining ? 1 : 0})
                                .Run());
    ++report_.mentions;
    if (!e.description.empty()) {
      FLOWRAG_RETURN_IF_ERROR(
          insert_description_.Bind(1, id).Bind(2, ex.passage_id).Bind(3, e.description).Run());
      report_.descriptions += conn_->Changes() > 0;
    }
  }
  return Status::Ok();
}

Result<int64_t> GraphWriter::RelationId(const std::string& text) {
  auto it = relation_ids_.find(text);
  if (it != relation_ids_.end()) return it->second;
  find_relation_.Bind(1, text);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, find_relation_.Step());
  int64_t id = row ? find_relation_.Int(0) : 0;
  find_relation_.Reset();
  if (id == 0) {
    FLOWRAG_ASSIGN_OR_RETURN(id, insert_relation_.Bind(1, text).RunReturningId());
  }
  relation_ids_.emplace(text, id);
  return id;
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
    FLOWRAG_ASSIGN_OR_RETURN(int64_t relation, RelationId(t.relation));
    FLOWRAG_ASSIGN_OR_RETURN(int64_t fact, FactId(s->second, relation, o->second));
    FLOWRAG_RETURN_IF_ERROR(insert_fact_source_.Bind(1, fact).Bind(2, ex.passage_id).Run());
    report_.fact_sources += conn_->Changes() > 0;
  }
  return Status::Ok();
}

// Inserted first: most facts are new, so one statement is the usual cost.
Result<int64_t> GraphWriter::FactId(int64_t subject, int64_t relation, int64_t object) {
  insert_fact_.Bind(1, subject).Bind(2, relation).Bind(3, object);
  FLOWRAG_ASSIGN_OR_RETURN(bool inserted, insert_fact_.Step());
  int64_t fact = inserted ? insert_fact_.Int(0) : 0;
  insert_fact_.Reset();
  if (inserted) {
    ++report_.facts_created;
    return fact;
  }
  find_fact_.Bind(1, subject).Bind(2, relation).Bind(3, object);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, find_fact_.Step());
  fact = row ? find_fact_.Int(0) : 0;
  find_fact_.Reset();
  if (fact == 0) return Status::Internal("graph: a fact neither inserted nor found");
  return fact;
}

Status GraphWriter::ApplyPassage(const PassageExtraction& ex, std::string_view extractor,
                                 std::string_view detail) {
  FLOWRAG_RETURN_IF_ERROR(ClearPassage(ex.passage_id));
  std::unordered_map<std::string, int64_t> local;
  FLOWRAG_RETURN_IF_ERROR(AddEntities(ex, &local));
  FLOWRAG_RETURN_IF_ERROR(AddTriples(ex, local));
  ++report_.passages;
  return mark_.Bind(1, ex.passage_id)
      .Bind(2, extractor)
      .Bind(3, "done")
      .Bind(4, detail)
      .Bind(5, UnixSeconds())
      .Run();
}

Status GraphWriter::AddToPassage(const PassageExtraction& ex) {
  std::unordered_map<std::string, int64_t> local;
  FLOWRAG_RETURN_IF_ERROR(AddEntities(ex, &local));
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
      .Run();
}

Status GraphWriter::Canonicalise(int64_t entity_id) {
  canonical_.Bind(1, entity_id);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, canonical_.Step());
  if (!row || canonical_.IsNull(0) || canonical_.IsNull(2)) {
    canonical_.Reset();
    return Status::Ok();  // no mentions left: collected below
  }
  std::string name(canonical_.Text(0));
  std::string type(canonical_.IsNull(1) ? "" : canonical_.Text(1));
  const bool renamed = canonical_.Text(2) != name;
  const bool retyped = canonical_.Text(3) != type;
  canonical_.Reset();
  if (!renamed && !retyped) return Status::Ok();  // one statement less per entity
  if (renamed && !report_.created_entities.count(entity_id))
    report_.renamed_entities.insert(entity_id);
  return rename_.Bind(1, name).Bind(2, type).Bind(3, entity_id).Run();
}

Status GraphWriter::Finish() {
  if (collect_ && (removed_ || !report_.created_entities.empty())) {
    FLOWRAG_RETURN_IF_ERROR(Collect());
  }
  removed_ = false;
  relation_ids_.clear();
  for (int64_t id : touched_) FLOWRAG_RETURN_IF_ERROR(Canonicalise(id));
  touched_.clear();
  return Status::Ok();
}

Status GraphWriter::Collect() {
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
  FLOWRAG_RETURN_IF_ERROR(
      conn_->Exec("DELETE FROM relations WHERE NOT EXISTS (SELECT 1 FROM facts f "
                  "WHERE f.relation_id = relations.id)"));
  // A name nobody defines any more must be linked again if it comes back.
  FLOWRAG_RETURN_IF_ERROR(
      conn_->Exec("DELETE FROM linked_names WHERE NOT EXISTS (SELECT 1 FROM "
                  "entity_keys k WHERE k.key = linked_names.key)"));
  return Status::Ok();
}

}  // namespace flowrag
