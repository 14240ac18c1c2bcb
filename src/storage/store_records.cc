// Store: SourceRecords (format 4), the schema-quality counts and the
// text-to-SQL schema graphs (format 5). See store.h
// and doc/storage.md.
#include "sqldb/connection.h"
#include "storage/store.h"
#include "storage/unix_time.h"

namespace flowrag {

Status Store::ForEachSourceRecord(const std::function<Status(SourceRecordRow&&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s, conn_->Prepare("SELECT r.document_id, d.external_id, r.source, r.file, r.line, "
                                  "r.entity_type, r.record_key, r.structured, r.fields FROM "
                                  "source_records r JOIN documents d ON d.id = r.document_id "
                                  "ORDER BY r.document_id"));
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    SourceRecordRow r;
    r.document_id = s.Int(0);
    r.external_id = std::string(s.Text(1));
    r.record.source = std::string(s.Text(2));
    r.record.file = std::string(s.Text(3));
    r.record.line = s.Int(4);
    r.record.entity_type = std::string(s.Text(5));
    r.record.record_key = std::string(s.Text(6));
    r.record.structured = s.Int(7) != 0;
    r.record.fields = std::string(s.Text(8));
    FLOWRAG_RETURN_IF_ERROR(fn(std::move(r)));
  }
  return Status::Ok();
}

Result<std::unordered_map<std::string, std::vector<int64_t>>> Store::PassagesByDocument() {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s, conn_->Prepare("SELECT d.external_id, p.id FROM passages p JOIN documents d ON "
                                  "d.id = p.document_id ORDER BY p.document_id, p.ordinal"));
  std::unordered_map<std::string, std::vector<int64_t>> out;
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out[std::string(s.Text(0))].push_back(s.Int(1));
  }
  return out;
}

Result<Store::SchemaGraphCounts> Store::CountSchemaGraph() {
  std::lock_guard<std::mutex> lock(mu_);
  SchemaGraphCounts c;
  auto scalar = [&](const char* sql) -> Result<int64_t> {
    FLOWRAG_ASSIGN_OR_RETURN(Statement s, conn_->Prepare(sql));
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    return row && !s.IsNull(0) ? s.Int(0) : int64_t{0};
  };
  auto grouped = [&](const char* sql, std::map<std::string, int64_t>* out) -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(Statement s, conn_->Prepare(sql));
    while (true) {
      FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) return Status::Ok();
      (*out)[std::string(s.Text(0))] = s.Int(1);
    }
  };
  // A DERIVED_FROM edge: an entity defined by a passage of a SourceRecord.
  static constexpr char kDerived[] =
      "SELECT DISTINCT m.entity_id, p.document_id FROM mentions m JOIN passages p ON p.id = "
      "m.passage_id JOIN source_records r ON r.document_id = p.document_id WHERE m.defining = 1";
  FLOWRAG_ASSIGN_OR_RETURN(c.source_records, scalar("SELECT count(*) FROM source_records"));
  FLOWRAG_ASSIGN_OR_RETURN(c.entities, scalar("SELECT count(*) FROM entities"));
  FLOWRAG_ASSIGN_OR_RETURN(
      c.entities_with_provenance,
      scalar((std::string("SELECT count(DISTINCT entity_id) FROM (") + kDerived + ") AS derived").c_str()));
  FLOWRAG_ASSIGN_OR_RETURN(
      c.derived_from, scalar((std::string("SELECT count(*) FROM (") + kDerived + ") AS derived").c_str()));
  // Edges: RELATED_TO (facts, which also need a source passage) and MENTIONS.
  FLOWRAG_ASSIGN_OR_RETURN(int64_t facts, scalar("SELECT count(*) FROM facts"));
  FLOWRAG_ASSIGN_OR_RETURN(int64_t mentions, scalar("SELECT count(*) FROM mentions"));
  FLOWRAG_ASSIGN_OR_RETURN(
      int64_t valid_facts,
      scalar("SELECT count(*) FROM facts f WHERE EXISTS (SELECT 1 FROM entities e WHERE e.id = "
             "f.subject_id) AND EXISTS (SELECT 1 FROM entities e WHERE e.id = f.object_id) AND "
             "EXISTS (SELECT 1 FROM fact_sources s JOIN passages p ON p.id = s.passage_id WHERE "
             "s.fact_id = f.id)"));
  FLOWRAG_ASSIGN_OR_RETURN(
      int64_t valid_mentions,
      scalar("SELECT count(*) FROM mentions m WHERE EXISTS (SELECT 1 FROM entities e WHERE e.id = "
             "m.entity_id) AND EXISTS (SELECT 1 FROM passages p WHERE p.id = m.passage_id)"));
  c.edges = facts + mentions;
  c.valid_edges = valid_facts + valid_mentions;
  FLOWRAG_RETURN_IF_ERROR(
      grouped("SELECT type, count(*) FROM entities GROUP BY type", &c.entities_per_type));
  FLOWRAG_RETURN_IF_ERROR(grouped(
      "SELECT entity_type, count(*) FROM source_records WHERE structured = 0 GROUP BY entity_type",
      &c.text_documents_per_type));
  FLOWRAG_RETURN_IF_ERROR(
      grouped("SELECT r.text, count(*) FROM facts f JOIN relations r ON r.id = f.relation_id WHERE "
              "length(r.text) <= 64 GROUP BY r.text",
              &c.facts_per_relation));
  return c;
}

Result<std::optional<Store::SqlSchemaRow>> Store::GetSqlSchema(std::string_view source) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare("SELECT fingerprint, graph, value_index FROM sql_schemas WHERE source = ?"));
  s.Bind(1, source);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<SqlSchemaRow>();
  return std::optional<SqlSchemaRow>(SqlSchemaRow{std::string(source), std::string(s.Text(0)),
                                                  std::string(s.Text(1)), std::string(s.Text(2))});
}

Status Store::PutSqlSchema(const SqlSchemaRow& r) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare("INSERT INTO sql_schemas(source, fingerprint, graph, value_index, "
                     "built_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(source) DO UPDATE "
                     "SET fingerprint = excluded.fingerprint, graph = excluded.graph, "
                     "value_index = excluded.value_index, built_at = excluded.built_at"));
  s.Bind(1, r.source)
      .Bind(2, r.fingerprint)
      .Bind(3, r.graph)
      .Bind(4, r.value_index)
      .Bind(5, UnixSeconds());
  return s.Run();
}

}  // namespace flowrag
