#include "storage/schema.h"

#include <regex>
#include <vector>

namespace flowrag {
namespace {

// Format 1: documents, passages (offsets into their document) and the
// embedding cache.
const char kV1[] = R"sql(
CREATE TABLE IF NOT EXISTS meta(
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE documents(
  id           INTEGER PRIMARY KEY,
  external_id  TEXT NOT NULL UNIQUE,
  title        TEXT NOT NULL DEFAULT '',
  source       TEXT NOT NULL DEFAULT '',
  content_hash INTEGER NOT NULL,
  chunking     TEXT NOT NULL,
  text         TEXT NOT NULL,
  indexed_at   INTEGER NOT NULL
);
CREATE TABLE passages(
  id           INTEGER PRIMARY KEY,
  document_id  INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  ordinal      INTEGER NOT NULL,
  begin_offset INTEGER NOT NULL,
  end_offset   INTEGER NOT NULL,
  embed_hash   INTEGER NOT NULL,
  UNIQUE(document_id, ordinal)
);
CREATE INDEX passages_embed_hash ON passages(embed_hash);
CREATE TABLE embeddings(
  model     TEXT NOT NULL,
  text_hash INTEGER NOT NULL,
  dim       INTEGER NOT NULL,
  vector    BLOB NOT NULL,
  PRIMARY KEY(model, text_hash)
) WITHOUT ROWID;
)sql";

// Format 2: fitted embedder state and the index run journal.
const char kV2[] = R"sql(
CREATE TABLE embedder_state(
  name            TEXT PRIMARY KEY,
  state           BLOB NOT NULL,
  fitted_passages INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
);
CREATE TABLE index_runs(
  id                  INTEGER PRIMARY KEY,
  started_at          INTEGER NOT NULL,
  finished_at         INTEGER,
  sources             TEXT NOT NULL,
  status              TEXT NOT NULL,
  documents_added     INTEGER NOT NULL DEFAULT 0,
  documents_replaced  INTEGER NOT NULL DEFAULT 0,
  documents_unchanged INTEGER NOT NULL DEFAULT 0,
  passages_added      INTEGER NOT NULL DEFAULT 0,
  batches_committed   INTEGER NOT NULL DEFAULT 0,
  passages_embedded   INTEGER NOT NULL DEFAULT 0,
  error               TEXT NOT NULL DEFAULT ''
);
)sql";

// Format 3: the knowledge graph with provenance (doc/storage.md, "Graph").
// Every row that a passage supports references it with ON DELETE CASCADE, so
// deleting a document removes exactly its contributions; entities and facts
// left without support are collected by the graph writer.
const char kV3[] = R"sql(
CREATE TABLE entities(
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL,
  type          TEXT NOT NULL DEFAULT '',
  synonyms_done INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE entity_keys(
  key        TEXT NOT NULL,
  passage_id INTEGER NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
  entity_id  INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  surface    TEXT NOT NULL,
  PRIMARY KEY(key, passage_id)
) WITHOUT ROWID;
CREATE INDEX entity_keys_entity ON entity_keys(entity_id);
CREATE INDEX entity_keys_passage ON entity_keys(passage_id);
CREATE TABLE mentions(
  passage_id INTEGER NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
  entity_id  INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  surface    TEXT NOT NULL,
  type       TEXT NOT NULL DEFAULT '',
  count      INTEGER NOT NULL,
  defining   INTEGER NOT NULL,
  PRIMARY KEY(passage_id, entity_id)
) WITHOUT ROWID;
CREATE INDEX mentions_entity ON mentions(entity_id);
CREATE TABLE descriptions(
  id         INTEGER PRIMARY KEY,
  entity_id  INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  passage_id INTEGER NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
  text       TEXT NOT NULL,
  UNIQUE(entity_id, passage_id)
);
CREATE INDEX descriptions_passage ON descriptions(passage_id);
CREATE TABLE relations(
  id   INTEGER PRIMARY KEY,
  text TEXT NOT NULL UNIQUE
);
CREATE TABLE facts(
  id          INTEGER PRIMARY KEY,
  subject_id  INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  relation_id INTEGER NOT NULL REFERENCES relations(id),
  object_id   INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  UNIQUE(subject_id, relation_id, object_id)
);
CREATE INDEX facts_relation ON facts(relation_id);
CREATE INDEX facts_object ON facts(object_id);
CREATE TABLE fact_sources(
  fact_id    INTEGER NOT NULL REFERENCES facts(id) ON DELETE CASCADE,
  passage_id INTEGER NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
  PRIMARY KEY(fact_id, passage_id)
) WITHOUT ROWID;
CREATE INDEX fact_sources_passage ON fact_sources(passage_id);
CREATE TABLE synonyms(
  a          INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  b          INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  similarity REAL NOT NULL,
  PRIMARY KEY(a, b),
  CHECK(a < b)
) WITHOUT ROWID;
CREATE INDEX synonyms_b ON synonyms(b);
CREATE TABLE extraction_state(
  passage_id   INTEGER PRIMARY KEY REFERENCES passages(id) ON DELETE CASCADE,
  extractor    TEXT NOT NULL,
  status       TEXT NOT NULL,
  detail       TEXT NOT NULL DEFAULT '',
  extracted_at INTEGER NOT NULL
);
CREATE TABLE linked_names(
  key TEXT PRIMARY KEY
) WITHOUT ROWID;
CREATE TABLE llm_cache(
  key               INTEGER PRIMARY KEY,
  model             TEXT NOT NULL,
  request           TEXT NOT NULL,
  response          TEXT NOT NULL,
  finish_reason     TEXT NOT NULL,
  prompt_tokens     INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  created_at        INTEGER NOT NULL
);
)sql";

// Format 4: schema-driven construction. Every structured or text record a
// contract ingests is a document with one source_records row (the
// SourceRecord node, B.6); `structured` records get their graph from the
// contract, not from the extractor.
const char kV4[] = R"sql(
CREATE TABLE source_records(
  document_id INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
  source      TEXT NOT NULL,
  file        TEXT NOT NULL,
  line        INTEGER NOT NULL,
  entity_type TEXT NOT NULL,
  record_key  TEXT NOT NULL,
  structured  INTEGER NOT NULL,
  fields      TEXT NOT NULL
);
CREATE INDEX source_records_type ON source_records(entity_type);
)sql";

// Format 5: text-to-SQL schema graphs (sql/), one row per database file,
// reused while the file's fingerprint (size, modification time) holds.
const char kV5[] = R"sql(
CREATE TABLE sql_schemas(
  source      TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  graph       TEXT NOT NULL,
  value_index TEXT NOT NULL,
  built_at    INTEGER NOT NULL
);
)sql";

// Format 6: persisted snapshot parts (doc/storage.md "Snapshot parts"):
// what a snapshot derives from the store, written once per store version so
// that opening a store reads them instead of recomputing them. `generation`
// counts the store's changes (meta.generation); a part is valid only for the
// generation it was derived from. Bytes are split into chunks of at most
// 4 MiB so that neither side holds a whole part twice.
const char kV6[] = R"sql(
CREATE TABLE snapshot_parts(
  name       TEXT PRIMARY KEY,
  generation INTEGER NOT NULL,
  format     INTEGER NOT NULL,
  key        TEXT NOT NULL,
  bytes      INTEGER NOT NULL,
  checksum   INTEGER NOT NULL,
  chunks     INTEGER NOT NULL,
  built_at   INTEGER NOT NULL
);
CREATE TABLE snapshot_chunks(
  part TEXT NOT NULL,
  seq  INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY(part, seq)
);
INSERT INTO meta(key, value) VALUES ('generation', '1') ON CONFLICT DO NOTHING;
)sql";

// Format 7: embeddings.vector holds sparse float16, float16 or float values
// (storage/vector_blob.h; floats in the rows older builds wrote); older
// builds, which read every vector as floats, refuse the store instead of
// calling its vectors damaged. A new store's table is a rowid table (same
// columns, same key): in format 1's WITHOUT ROWID table a row is an index
// b-tree entry, whose payload above ~1,000 bytes (a quarter of a 4 KiB
// page) spills into an overflow page of its own, where a rowid table keeps
// a row of up to a page in its leaf (a 1 KiB sparse vector: 129 MiB at
// 10^5 passages against 447 MiB, doc/storage.md "Stored vectors"). A
// migration from format 6 keeps the table as it is (MigrationStep: copying
// it would rewrite every vector); readers do not depend on the layout. A
// read-only open reads a format-6 store as it is (kOldestReadableFormat).
const char kV7[] = R"sql(
CREATE TABLE embeddings_rowid(
  model     TEXT NOT NULL,
  text_hash INTEGER NOT NULL,
  dim       INTEGER NOT NULL,
  vector    BLOB NOT NULL,
  PRIMARY KEY(model, text_hash)
);
INSERT INTO embeddings_rowid(model, text_hash, dim, vector)
  SELECT model, text_hash, dim, vector FROM embeddings ORDER BY model, text_hash;
DROP TABLE embeddings;
ALTER TABLE embeddings_rowid RENAME TO embeddings;
)sql";

// PostgreSQL at format 7: the same tables, columns and indexes as kV1..kV7
// (and, in both dialects, the indexes of AddedIndexes()).
// INTEGER becomes BIGINT (SQLite integers are 64-bit), REAL double
// precision, BLOB bytea, an INTEGER PRIMARY KEY an identity column; text
// compares bytewise (COLLATE "C"), as in SQLite, so ORDER BY and min() pick
// the same rows on both. snapshot_chunks has an explicit `rowid` column for
// SqlConnection::ReadBlobRange, which SQLite tables have implicitly.
const char kPostgres[] = R"sql(
CREATE TABLE meta(
  key   TEXT COLLATE "C" PRIMARY KEY,
  value TEXT COLLATE "C" NOT NULL
);
CREATE TABLE documents(
  id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  external_id  TEXT COLLATE "C" NOT NULL UNIQUE,
  title        TEXT COLLATE "C" NOT NULL DEFAULT '',
  source       TEXT COLLATE "C" NOT NULL DEFAULT '',
  content_hash BIGINT NOT NULL,
  chunking     TEXT COLLATE "C" NOT NULL,
  text         TEXT COLLATE "C" NOT NULL,
  indexed_at   BIGINT NOT NULL
);
CREATE TABLE passages(
  id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  document_id  BIGINT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  ordinal      BIGINT NOT NULL,
  begin_offset BIGINT NOT NULL,
  end_offset   BIGINT NOT NULL,
  embed_hash   BIGINT NOT NULL,
  UNIQUE(document_id, ordinal)
);
CREATE INDEX passages_embed_hash ON passages(embed_hash);
CREATE TABLE embeddings(
  model     TEXT COLLATE "C" NOT NULL,
  text_hash BIGINT NOT NULL,
  dim       BIGINT NOT NULL,
  vector    BYTEA NOT NULL,
  PRIMARY KEY(model, text_hash)
);
CREATE TABLE embedder_state(
  name            TEXT COLLATE "C" PRIMARY KEY,
  state           BYTEA NOT NULL,
  fitted_passages BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL
);
CREATE TABLE index_runs(
  id                  BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  started_at          BIGINT NOT NULL,
  finished_at         BIGINT,
  sources             TEXT COLLATE "C" NOT NULL,
  status              TEXT COLLATE "C" NOT NULL,
  documents_added     BIGINT NOT NULL DEFAULT 0,
  documents_replaced  BIGINT NOT NULL DEFAULT 0,
  documents_unchanged BIGINT NOT NULL DEFAULT 0,
  passages_added      BIGINT NOT NULL DEFAULT 0,
  batches_committed   BIGINT NOT NULL DEFAULT 0,
  passages_embedded   BIGINT NOT NULL DEFAULT 0,
  error               TEXT COLLATE "C" NOT NULL DEFAULT ''
);
CREATE TABLE entities(
  id            BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  name          TEXT COLLATE "C" NOT NULL,
  type          TEXT COLLATE "C" NOT NULL DEFAULT '',
  synonyms_done BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE entity_keys(
  key        TEXT COLLATE "C" NOT NULL,
  passage_id BIGINT NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
  entity_id  BIGINT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  surface    TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY(key, passage_id)
);
CREATE INDEX entity_keys_entity ON entity_keys(entity_id);
CREATE INDEX entity_keys_passage ON entity_keys(passage_id);
CREATE TABLE mentions(
  passage_id BIGINT NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
  entity_id  BIGINT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  surface    TEXT COLLATE "C" NOT NULL,
  type       TEXT COLLATE "C" NOT NULL DEFAULT '',
  count      BIGINT NOT NULL,
  defining   BIGINT NOT NULL,
  PRIMARY KEY(passage_id, entity_id)
);
CREATE INDEX mentions_entity ON mentions(entity_id);
CREATE TABLE descriptions(
  id         BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  entity_id  BIGINT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  passage_id BIGINT NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
  text       TEXT COLLATE "C" NOT NULL,
  UNIQUE(entity_id, passage_id)
);
CREATE INDEX descriptions_passage ON descriptions(passage_id);
CREATE TABLE relations(
  id   BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  text TEXT COLLATE "C" NOT NULL UNIQUE
);
CREATE TABLE facts(
  id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  subject_id  BIGINT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  relation_id BIGINT NOT NULL REFERENCES relations(id),
  object_id   BIGINT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  UNIQUE(subject_id, relation_id, object_id)
);
CREATE INDEX facts_relation ON facts(relation_id);
CREATE INDEX facts_object ON facts(object_id);
CREATE TABLE fact_sources(
  fact_id    BIGINT NOT NULL REFERENCES facts(id) ON DELETE CASCADE,
  passage_id BIGINT NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
  PRIMARY KEY(fact_id, passage_id)
);
CREATE INDEX fact_sources_passage ON fact_sources(passage_id);
CREATE TABLE synonyms(
  a          BIGINT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  b          BIGINT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  similarity DOUBLE PRECISION NOT NULL,
  PRIMARY KEY(a, b),
  CHECK(a < b)
);
CREATE INDEX synonyms_b ON synonyms(b);
CREATE TABLE extraction_state(
  passage_id   BIGINT PRIMARY KEY REFERENCES passages(id) ON DELETE CASCADE,
  extractor    TEXT COLLATE "C" NOT NULL,
  status       TEXT COLLATE "C" NOT NULL,
  detail       TEXT COLLATE "C" NOT NULL DEFAULT '',
  extracted_at BIGINT NOT NULL
);
CREATE TABLE linked_names(
  key TEXT COLLATE "C" PRIMARY KEY
);
CREATE TABLE llm_cache(
  key               BIGINT PRIMARY KEY,
  model             TEXT COLLATE "C" NOT NULL,
  request           TEXT COLLATE "C" NOT NULL,
  response          TEXT COLLATE "C" NOT NULL,
  finish_reason     TEXT COLLATE "C" NOT NULL,
  prompt_tokens     BIGINT NOT NULL,
  completion_tokens BIGINT NOT NULL,
  created_at        BIGINT NOT NULL
);
CREATE TABLE source_records(
  document_id BIGINT PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
  source      TEXT COLLATE "C" NOT NULL,
  file        TEXT COLLATE "C" NOT NULL,
  line        BIGINT NOT NULL,
  entity_type TEXT COLLATE "C" NOT NULL,
  record_key  TEXT COLLATE "C" NOT NULL,
  structured  BIGINT NOT NULL,
  fields      TEXT COLLATE "C" NOT NULL
);
CREATE INDEX source_records_type ON source_records(entity_type);
CREATE TABLE sql_schemas(
  source      TEXT COLLATE "C" PRIMARY KEY,
  fingerprint TEXT COLLATE "C" NOT NULL,
  graph       TEXT COLLATE "C" NOT NULL,
  value_index TEXT COLLATE "C" NOT NULL,
  built_at    BIGINT NOT NULL
);
CREATE TABLE snapshot_parts(
  name       TEXT COLLATE "C" PRIMARY KEY,
  generation BIGINT NOT NULL,
  format     BIGINT NOT NULL,
  key        TEXT COLLATE "C" NOT NULL,
  bytes      BIGINT NOT NULL,
  checksum   BIGINT NOT NULL,
  chunks     BIGINT NOT NULL,
  built_at   BIGINT NOT NULL
);
CREATE TABLE snapshot_chunks(
  rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  part  TEXT COLLATE "C" NOT NULL,
  seq   BIGINT NOT NULL,
  data  BYTEA NOT NULL,
  PRIMARY KEY(part, seq)
);
INSERT INTO meta(key, value) VALUES ('generation', '1');
)sql";

}  // namespace

const char kBadVectorSizesQuery[] =
    "SELECT count(*), min(text_hash) FROM ("
    "SELECT text_hash FROM embeddings WHERE model = ?1 AND dim < ?2 "
    "UNION ALL SELECT text_hash FROM embeddings WHERE model = ?1 AND dim > ?2 "
    "UNION ALL SELECT text_hash FROM embeddings WHERE model = ?1 AND dim = ?2 AND "
    "length(vector) < ?3 "
    "UNION ALL SELECT text_hash FROM embeddings WHERE model = ?1 AND dim = ?2 AND "
    "length(vector) > ?4 AND length(vector) < ?5 "
    "UNION ALL SELECT text_hash FROM embeddings WHERE model = ?1 AND dim = ?2 AND "
    "length(vector) > ?5) AS bad";

std::span<const AddedIndex> AddedIndexes() {
  // The vector check's index, added after format 6. In a WITHOUT ROWID
  // table (SQLite, format 6) an index entry ends with the primary key, so
  // there the check's min(text_hash) reads the index alone; a format-7
  // store's rowid table and PostgreSQL read the rows of the damaged vectors
  // only.
  static const AddedIndex kIndexes[] = {
      {"embeddings_sizes",
       "CREATE INDEX embeddings_sizes ON embeddings(model, dim, length(vector))"},
  };
  return kIndexes;
}

const std::string& SchemaStep(int version) {
  static const std::vector<std::string> steps = {"", kV1, kV2, kV3, kV4, kV5, kV6, kV7};
  static const std::string empty;
  return (version > 0 && version < static_cast<int>(steps.size())) ? steps[version] : empty;
}

const std::string& PostgresSchema() {
  static const std::string ddl = kPostgres;
  return ddl;
}

std::vector<std::string> TablesOfFormat(int version) {
  // The steps' CREATE, DROP and RENAME of tables, in order.
  static const std::regex kTableDdl(
      R"((CREATE|DROP) TABLE (?:IF NOT EXISTS )?(\w+)|ALTER TABLE (\w+) RENAME TO (\w+))");
  std::vector<std::string> tables;
  for (int v = 1; v <= version; ++v) {
    const std::string& sql = SchemaStep(v);
    for (auto it = std::sregex_iterator(sql.begin(), sql.end(), kTableDdl);
         it != std::sregex_iterator(); ++it) {
      const std::smatch& m = *it;
      if (m[1] == "CREATE") {
        tables.push_back(m[2]);
      } else if (m[1] == "DROP") {
        std::erase(tables, m[2].str());
      } else {
        std::replace(tables.begin(), tables.end(), m[3].str(), m[4].str());
      }
    }
  }
  return tables;
}

const std::string& MigrationStep(int version, SqlDialect dialect) {
  static const std::string none;
  // PostgreSQL stores start at format 6, and its embeddings are a heap table
  // already; a SQLite store keeps its table (kV7): format 7 changes nothing
  // but the format number.
  if (dialect == SqlDialect::kPostgres || version == 7) return none;
  return SchemaStep(version);
}

}  // namespace flowrag
