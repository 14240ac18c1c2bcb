// Reading a store built by Engine::Ingest directly (doc/storage.md), for the
// schema construction tests: SQL rows, facts, entity types, DERIVED_FROM
// documents and record fields; and the offline contract of a folder.
#ifndef FLOWRAG_TESTS_SCHEMA_STORE_UTIL_H_
#define FLOWRAG_TESTS_SCHEMA_STORE_UTIL_H_

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <set>
#include <string>
#include <vector>

#include "flowrag/engine.h"
#include "flowrag/schema.h"

namespace flowrag::testing {

// The offline contract of a folder: InduceSchema, then DeriveContract.
inline Result<SchemaContract> ContractOf(const std::string& dir) {
  FLOWRAG_ASSIGN_OR_RETURN(InducedSchema schema, InduceSchema(dir));
  return DeriveContract(schema);
}

// A field / nested_field entity type (B.3.2) of `source` reading `field`.
inline EntityType InstanceType(const std::string& name, const std::string& source,
                               const std::string& method, const std::string& field) {
  EntityType t;
  t.name = name;
  t.source = source;
  if (method == "field") t.identity_key = {field};
  t.attributes = {field};
  t.extraction = method;
  t.extraction_field = field;
  return t;
}

// Offline whatever the environment configures (no chat model).
inline IngestOptions Offline() {
  IngestOptions o;
  o.index.extractor = "heuristic";
  return o;
}

inline const EntityType* TypeOf(const SchemaContract& c, const std::string& source) {
  for (const EntityType& t : c.entity_types) {
    if (t.source == source) return &t;
  }
  return nullptr;
}

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// ---- Reading the store directly (doc/storage.md) --------------------------------

using Rows = std::vector<std::vector<std::string>>;

inline Rows Sql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  Rows rows;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db) << "\n"
      << sql;
  while (st && sqlite3_step(st) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      const unsigned char* t = sqlite3_column_text(st, c);
      row.push_back(t ? reinterpret_cast<const char*>(t) : "NULL");
    }
    rows.push_back(std::move(row));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return rows;
}

inline int64_t Count(const std::string& db_path, const std::string& sql) {
  Rows r = Sql(db_path, sql);
  EXPECT_EQ(r.size(), 1u) << sql;
  return r.empty() ? -1 : std::stoll(r[0][0]);
}

inline std::string Quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// Subject, relation and object of every fact.
inline std::set<std::vector<std::string>> Facts(const std::string& db) {
  Rows r = Sql(db,
               "SELECT s.name, r.text, o.name FROM facts f JOIN relations r ON r.id = "
               "f.relation_id JOIN entities s ON s.id = f.subject_id JOIN entities o ON o.id = "
               "f.object_id");
  return {r.begin(), r.end()};
}

// The type of the entity called `name`, "" when there is none.
inline std::string EntityTypeOf(const std::string& db, const std::string& name) {
  Rows r = Sql(db, "SELECT type FROM entities WHERE name = " + Quoted(name));
  return r.empty() ? "" : r[0][0];
}

// The first column of every row.
inline std::set<std::string> Column(const std::string& db, const std::string& sql) {
  std::set<std::string> out;
  for (const auto& row : Sql(db, sql)) out.insert(row[0]);
  return out;
}

// Documents ("file:line") whose first passage defines the entity `name`:
// its DERIVED_FROM edges.
inline std::set<std::string> DerivedFrom(const std::string& db, const std::string& name) {
  return Column(db,
                "SELECT d.external_id FROM mentions m JOIN entities e ON e.id = m.entity_id JOIN "
                "passages p ON p.id = m.passage_id JOIN documents d ON d.id = p.document_id JOIN "
                "source_records r ON r.document_id = d.id WHERE m.defining = 1 AND e.name = " +
                    Quoted(name));
}

// Entities mentioned by the passages of document `external_id`.
inline std::set<std::string> MentionedIn(const std::string& db, const std::string& external_id) {
  return Column(db,
                "SELECT e.name FROM mentions m JOIN entities e ON e.id = m.entity_id JOIN "
                "passages p ON p.id = m.passage_id JOIN documents d ON d.id = p.document_id "
                "WHERE d.external_id = " +
                    Quoted(external_id));
}

// The original field values (JSON) of the record stored as `external_id`.
inline std::string RecordFields(const std::string& db, const std::string& external_id) {
  Rows r = Sql(db,
               "SELECT r.fields FROM source_records r JOIN documents d ON d.id = r.document_id "
               "WHERE d.external_id = " +
                   Quoted(external_id));
  EXPECT_EQ(r.size(), 1u) << external_id;
  return r.empty() ? "" : r[0][0];
}

}  // namespace flowrag::testing

#endif  // FLOWRAG_TESTS_SCHEMA_STORE_UTIL_H_
