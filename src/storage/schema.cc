#include "storage/schema.h"

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

}  // namespace

const std::string& SchemaStep(int version) {
  static const std::vector<std::string> steps = {"", kV1, kV2};
  static const std::string empty;
  return (version > 0 && version < static_cast<int>(steps.size())) ? steps[version] : empty;
}

}  // namespace flowrag
