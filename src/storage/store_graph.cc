// Store: the knowledge graph tables (format 3). See store.h and
// doc/storage.md.
#include "sqldb/connection.h"
#include "storage/document_texts.h"
#include "storage/graph_writer.h"
#include "storage/meta_value.h"
#include "storage/store.h"
#include "storage/unix_time.h"

namespace flowrag {

Status Store::WriteGraph(const std::function<Status(GraphWriter&)>& body,
                         GraphWriteReport* report) {
  std::lock_guard<std::mutex> lock(mu_);
  GraphWriter writer(conn_.get());
  Status st = InWriteTransaction([&]() -> Status {
    FLOWRAG_RETURN_IF_ERROR(writer.Prepare());
    FLOWRAG_RETURN_IF_ERROR(body(writer));
    return writer.Finish();
  });
  if (st.ok() && report != nullptr) *report = writer.report();
  return st;
}

Status Store::DeletePassagesFromGraph(GraphWriter& writer,
                                      const std::vector<int64_t>& passage_ids) {
  for (int64_t p : passage_ids) FLOWRAG_RETURN_IF_ERROR(writer.ForgetPassage(p));
  return Status::Ok();
}

// Passages of structured SourceRecords get their graph from the schema
// contract: the extractors never read them.
#define FLOWRAG_NOT_STRUCTURED_SQL                                                  \
  "NOT EXISTS (SELECT 1 FROM source_records r WHERE r.document_id = p.document_id " \
  "AND r.structured = 1)"

namespace {

// A row (id, ordinal, title, document rowid, begin, end, external id,
// embed hash), its text sliced from the document (read once per document).
Result<Store::PendingPassage> ReadPendingPassage(const Statement& s, DocumentTexts& texts) {
  FLOWRAG_ASSIGN_OR_RETURN(std::string_view text, texts.Slice(s.Int(3), s.Int(4), s.Int(5)));
  return Store::PendingPassage{s.Int(0), static_cast<int32_t>(s.Int(1)), std::string(s.Text(2)),
                               std::string(text), std::string(s.Text(6)),
                               HashFromSql(s.Int(7)), {}};
}

// Passages without a successful extraction by ?2, above id ?1, with no claim
// live at ?4 when ?4 is not 0, the first ?3 in id order.
constexpr char kPendingSql[] =
    "SELECT p.id, p.ordinal, d.title, p.document_id, p.begin_offset, p.end_offset, "
    "d.external_id, p.embed_hash FROM passages p JOIN documents d ON d.id = p.document_id "
    "WHERE p.id > ?1 "
    "AND NOT EXISTS (SELECT 1 FROM extraction_state x WHERE "
    "x.passage_id = p.id AND x.status = 'done' AND x.extractor = ?2) "
    "AND (CAST(?4 AS BIGINT) = 0 OR NOT EXISTS (SELECT 1 FROM extraction_state c WHERE "
    "c.passage_id = p.id AND c.status = 'claimed' AND c.extracted_at > CAST(?4 AS BIGINT))) "
    "AND " FLOWRAG_NOT_STRUCTURED_SQL " ORDER BY p.id LIMIT ?3";

// Runs kPendingSql (statement `s`, bound) and reads its rows.
Result<std::vector<Store::PendingPassage>> ReadPending(SqlConnection& conn, Statement& s) {
  FLOWRAG_ASSIGN_OR_RETURN(DocumentTexts texts, DocumentTexts::Prepare(conn));
  std::vector<Store::PendingPassage> out;
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    FLOWRAG_ASSIGN_OR_RETURN(Store::PendingPassage p, ReadPendingPassage(s, texts));
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

Result<std::vector<Store::PendingPassage>> Store::PassagesPendingExtraction(
    std::string_view extractor, int64_t after, size_t limit) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(Statement s, conn_->Prepare(kPendingSql));
  s.Bind(1, after).Bind(2, extractor).Bind(3, static_cast<int64_t>(limit)).Bind(4, int64_t{0});
  return ReadPending(*conn_, s);
}

Result<std::vector<Store::PendingPassage>> Store::ClaimPassagesForExtraction(
    std::string_view extractor, std::string_view worker, int64_t lease_seconds, size_t limit,
    int64_t after) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PendingPassage> claimed;
  // Claims change no snapshot: no generation bump.
  FLOWRAG_RETURN_IF_ERROR(InTransaction([&]() -> Status {
    const int64_t now = UnixSeconds();
    FLOWRAG_ASSIGN_OR_RETURN(Statement s, conn_->Prepare(kPendingSql));
    s.Bind(1, after).Bind(2, extractor).Bind(3, static_cast<int64_t>(limit)).Bind(4, now);
    FLOWRAG_ASSIGN_OR_RETURN(claimed, ReadPending(*conn_, s));
    FLOWRAG_ASSIGN_OR_RETURN(
        Statement claim,
        conn_->Prepare("INSERT INTO extraction_state(passage_id, extractor, status, detail, "
                       "extracted_at) VALUES (?, ?, 'claimed', ?, ?) ON CONFLICT(passage_id) DO "
                       "UPDATE SET extractor = excluded.extractor, status = excluded.status, "
                       "detail = excluded.detail, extracted_at = excluded.extracted_at"));
    for (const PendingPassage& p : claimed) {
      FLOWRAG_RETURN_IF_ERROR(claim.Bind(1, p.passage_id)
                                  .Bind(2, extractor)
                                  .Bind(3, worker)
                                  .Bind(4, now + lease_seconds)
                                  .Queue());
    }
    return Status::Ok();
  }));
  return claimed;
}

Result<int64_t> Store::CountPassagesPendingExtraction(std::string_view extractor) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare(
          "SELECT count(*) FROM passages p WHERE NOT EXISTS (SELECT 1 "
          "FROM extraction_state x WHERE x.passage_id = p.id AND "
          "x.status = 'done' AND (?1 = '' OR x.extractor = ?1)) AND " FLOWRAG_NOT_STRUCTURED_SQL));
  s.Bind(1, extractor);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : int64_t{0};
}

Result<Store::TitleList> Store::ExtractableTitles() {
  std::lock_guard<std::mutex> lock(mu_);
  TitleList list;
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement g, conn_->Prepare("SELECT value FROM meta WHERE key = 'titles_generation'"));
  FLOWRAG_ASSIGN_OR_RETURN(bool has_generation, g.Step());
  if (has_generation) {
    FLOWRAG_ASSIGN_OR_RETURN(list.generation,
                             ParseMetaInt(path_, "titles_generation", g.Text(0), 0, INT64_MAX));
  }
  g.Reset();
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare("SELECT d.title FROM passages p JOIN documents d ON d.id = "
                     "p.document_id WHERE " FLOWRAG_NOT_STRUCTURED_SQL " ORDER BY p.id"));
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    if (list.titles.empty() || list.titles.back() != s.Text(0)) list.titles.emplace_back(s.Text(0));
  }
  return list;
}

Result<int64_t> Store::TitlesGeneration() {
  FLOWRAG_ASSIGN_OR_RETURN(std::optional<int64_t> generation,
                           GetMetaInt("titles_generation", 0, INT64_MAX));
  return generation.value_or(0);
}

Result<std::vector<std::string>> Store::ClaimHolders() {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                           conn_->Prepare("SELECT DISTINCT detail FROM extraction_state WHERE "
                                          "status = 'claimed' AND extracted_at > ?"));
  s.Bind(1, UnixSeconds());
  std::vector<std::string> workers;
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    workers.emplace_back(s.Text(0));
  }
  return workers;
}

Status Store::ReleaseClaims(std::string_view worker) {
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction([&]() -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                             conn_->Prepare("UPDATE extraction_state SET extracted_at = 0 WHERE "
                                            "status = 'claimed' AND detail = ?"));
    return s.Bind(1, worker).Run();
  });
}

Status Store::ForEachPassageContent(const std::function<Status(PendingPassage&&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare("SELECT p.id, p.ordinal, d.title, p.document_id, p.begin_offset, "
                     "p.end_offset, d.external_id, p.embed_hash, x.detail FROM passages p JOIN documents d ON "
                     "d.id = p.document_id LEFT JOIN extraction_state x ON x.passage_id = p.id "
                     "AND x.status = 'done' WHERE " FLOWRAG_NOT_STRUCTURED_SQL " ORDER BY p.id"));
  FLOWRAG_ASSIGN_OR_RETURN(DocumentTexts texts, DocumentTexts::Prepare(*conn_));
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    FLOWRAG_ASSIGN_OR_RETURN(PendingPassage p, ReadPendingPassage(s, texts));
    p.extracted_with = s.Text(8);
    FLOWRAG_RETURN_IF_ERROR(fn(std::move(p)));
  }
  return Status::Ok();
}

Result<std::vector<std::string>> Store::LinkedNames() {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(Statement s, conn_->Prepare("SELECT key FROM linked_names"));
  std::vector<std::string> out;
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.emplace_back(s.Text(0));
  }
  return out;
}

Status Store::MarkNamesLinked(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction([&]() -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(
        Statement s,
        conn_->Prepare("INSERT INTO linked_names(key) VALUES (?) ON CONFLICT DO NOTHING"));
    for (const std::string& k : keys) FLOWRAG_RETURN_IF_ERROR(s.Bind(1, k).Queue());
    return Status::Ok();
  });
}

Status Store::ForgetLinkedNames(const std::vector<std::string>& keys) {
  if (keys.empty()) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction([&]() -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                             conn_->Prepare("DELETE FROM linked_names WHERE key = ?"));
    for (const std::string& k : keys) FLOWRAG_RETURN_IF_ERROR(s.Bind(1, k).Queue());
    return Status::Ok();
  });
}

Status Store::ForEachEntity(const std::function<Status(EntityRow&&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(Statement s, conn_->Prepare("SELECT id, name, type FROM entities "
                                                       "ORDER BY id"));
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    FLOWRAG_RETURN_IF_ERROR(fn({s.Int(0), std::string(s.Text(1)), std::string(s.Text(2))}));
  }
  return Status::Ok();
}

Result<std::vector<Store::EntityRow>> Store::EntitiesByIds(const std::vector<int64_t>& ids) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(Statement s, conn_->Prepare("SELECT id, name, type FROM entities "
                                                       "WHERE id = ?"));
  std::vector<EntityRow> out;
  for (int64_t id : ids) {
    s.Bind(1, id);
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (row) out.push_back({s.Int(0), std::string(s.Text(1)), std::string(s.Text(2))});
    s.Reset();
  }
  return out;
}

Status Store::ForEachMention(const std::function<Status(const MentionRow&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare("SELECT passage_id, entity_id, count, defining, "
                     "CASE WHEN defining <> 0 AND type = 'TITLE' THEN 1 ELSE 0 END FROM mentions "
                     "ORDER BY passage_id, entity_id"));
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    FLOWRAG_RETURN_IF_ERROR(fn({s.Int(0), s.Int(1), s.Int(2), s.Int(3) != 0, s.Int(4) != 0}));
  }
  return Status::Ok();
}

Status Store::ForEachDescription(const std::function<Status(DescriptionRow&&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s, conn_->Prepare("SELECT id, entity_id, passage_id, text FROM descriptions "
                                  "ORDER BY id"));
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    FLOWRAG_RETURN_IF_ERROR(fn({s.Int(0), s.Int(1), s.Int(2), std::string(s.Text(3))}));
  }
  return Status::Ok();
}

Status Store::ForEachFact(const std::function<Status(const FactRow&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s, conn_->Prepare("SELECT id, subject_id, object_id, relation_id FROM facts "
                                  "ORDER BY id"));
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    FLOWRAG_RETURN_IF_ERROR(fn({s.Int(0), s.Int(1), s.Int(2), s.Int(3)}));
  }
  return Status::Ok();
}

Status Store::ForEachRelation(const std::function<Status(int64_t, std::string&&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                           conn_->Prepare("SELECT id, text FROM relations ORDER BY id"));
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    FLOWRAG_RETURN_IF_ERROR(fn(s.Int(0), std::string(s.Text(1))));
  }
  return Status::Ok();
}

Status Store::ForEachFactSource(const std::function<Status(int64_t, int64_t)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                           conn_->Prepare("SELECT fact_id, passage_id FROM fact_sources ORDER BY "
                                          "fact_id, passage_id"));
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    FLOWRAG_RETURN_IF_ERROR(fn(s.Int(0), s.Int(1)));
  }
  return Status::Ok();
}

Status Store::ForEachSynonym(const std::function<Status(const SynonymRow&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                           conn_->Prepare("SELECT a, b, similarity FROM synonyms ORDER BY a, b"));
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    FLOWRAG_RETURN_IF_ERROR(fn({s.Int(0), s.Int(1), s.Double(2)}));
  }
  return Status::Ok();
}

Result<std::vector<int64_t>> Store::EntitiesNeedingSynonyms() {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s, conn_->Prepare("SELECT id FROM entities WHERE synonyms_done = 0 ORDER BY id"));
  std::vector<int64_t> ids;
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    ids.push_back(s.Int(0));
  }
  return ids;
}

Status Store::MarkAllSynonymsPending() {
  std::lock_guard<std::mutex> lock(mu_);
  return InWriteTransaction([&]() -> Status {
    return conn_->Exec("UPDATE entities SET synonyms_done = 0 WHERE synonyms_done <> 0");
  });
}

Result<size_t> Store::EmbeddingDimension(std::string_view model) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                           conn_->Prepare("SELECT dim FROM embeddings WHERE model = ? LIMIT 1"));
  s.Bind(1, model);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? static_cast<size_t>(s.Int(0)) : size_t{0};
}

Result<std::vector<uint64_t>> Store::EmbeddingHashes(std::string_view model) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                           conn_->Prepare("SELECT text_hash FROM embeddings WHERE model = ?"));
  s.Bind(1, model);
  std::vector<uint64_t> out;
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(HashFromSql(s.Int(0)));
  }
  return out;
}

Status Store::ReplaceSynonyms(const std::vector<EntityRow>& entities,
                              const std::vector<SynonymRow>& edges) {
  if (entities.empty() && edges.empty()) return Status::Ok();  // nothing changes
  std::lock_guard<std::mutex> lock(mu_);
  return InWriteTransaction([&]() -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(
        Statement done,
        conn_->Prepare("UPDATE entities SET synonyms_done = 1 WHERE id = ? AND name = ?"));
    for (const EntityRow& e : entities) {
      FLOWRAG_RETURN_IF_ERROR(done.Bind(1, e.id).Bind(2, e.name).Queue());
    }
    FLOWRAG_ASSIGN_OR_RETURN(Statement del,
                             conn_->Prepare("DELETE FROM synonyms WHERE a = ?1 OR b = ?1"));
    for (const EntityRow& e : entities) FLOWRAG_RETURN_IF_ERROR(del.Bind(1, e.id).Queue());
    FLOWRAG_ASSIGN_OR_RETURN(
        Statement ins,
        conn_->Prepare("INSERT INTO synonyms(a, b, similarity) SELECT ?1, ?2, ?3 "
                       "WHERE EXISTS (SELECT 1 FROM entities WHERE id = ?1) AND EXISTS "
                       "(SELECT 1 FROM entities WHERE id = ?2) "
                       "ON CONFLICT(a, b) DO UPDATE SET similarity = excluded.similarity"));
    for (const SynonymRow& e : edges) {
      if (e.a >= e.b) return Status::InvalidArgument("synonym edge needs a < b");
      FLOWRAG_RETURN_IF_ERROR(
          ins.Bind(1, e.a).Bind(2, e.b).BindDouble(3, e.similarity).Queue());
    }
    return Status::Ok();
  });
}

Result<Store::GraphCounts> Store::CountGraph() {
  std::lock_guard<std::mutex> lock(mu_);
  GraphCounts c;
  auto scalar = [&](const char* sql) -> Result<int64_t> {
    FLOWRAG_ASSIGN_OR_RETURN(Statement s, conn_->Prepare(sql));
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    return row && !s.IsNull(0) ? s.Int(0) : int64_t{0};
  };
  FLOWRAG_ASSIGN_OR_RETURN(c.entities, scalar("SELECT count(*) FROM entities"));
  FLOWRAG_ASSIGN_OR_RETURN(c.mentions, scalar("SELECT count(*) FROM mentions"));
  FLOWRAG_ASSIGN_OR_RETURN(c.defining_mentions,
                           scalar("SELECT count(*) FROM mentions WHERE defining = 1"));
  FLOWRAG_ASSIGN_OR_RETURN(c.descriptions, scalar("SELECT count(*) FROM descriptions"));
  FLOWRAG_ASSIGN_OR_RETURN(c.facts, scalar("SELECT count(*) FROM facts"));
  FLOWRAG_ASSIGN_OR_RETURN(c.fact_sources, scalar("SELECT count(*) FROM fact_sources"));
  FLOWRAG_ASSIGN_OR_RETURN(c.synonyms, scalar("SELECT count(*) FROM synonyms"));
  FLOWRAG_ASSIGN_OR_RETURN(c.extracted_passages,
                           scalar("SELECT count(*) FROM extraction_state WHERE status = 'done'"));
  FLOWRAG_ASSIGN_OR_RETURN(c.failed_passages,
                           scalar("SELECT count(*) FROM extraction_state WHERE status = 'failed'"));
  FLOWRAG_ASSIGN_OR_RETURN(c.llm_calls, scalar("SELECT count(*) FROM llm_cache"));
  FLOWRAG_ASSIGN_OR_RETURN(c.llm_prompt_tokens, scalar("SELECT sum(prompt_tokens) FROM llm_cache"));
  FLOWRAG_ASSIGN_OR_RETURN(c.llm_completion_tokens,
                           scalar("SELECT sum(completion_tokens) FROM llm_cache"));
  return c;
}

}  // namespace flowrag
