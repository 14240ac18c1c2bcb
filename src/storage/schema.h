// DDL of every store format version and the migrations between them.
// doc/storage.md describes the same tables for people.
#ifndef FLOWRAG_STORAGE_SCHEMA_H_
#define FLOWRAG_STORAGE_SCHEMA_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sqldb/connection.h"

namespace flowrag {

// SQL that brings a SQLite store from format `version - 1` to `version`
// (version 1 creates the base tables). Empty for versions this build does
// not know.
const std::string& SchemaStep(int version);
// The SQL a migration to `version` runs in `dialect`: SchemaStep for SQLite
// but for format 7, which a migration only numbers (kV7); for PostgreSQL
// (stores start at format 6) nothing so far.
const std::string& MigrationStep(int version, SqlDialect dialect);

// The oldest format this build reads as it is, without a migration (a
// read-only open): the steps since change no column a read depends on
// (format 7: float16 vectors, which readers decode beside the floats of
// format 6, and the embeddings table's storage).
inline constexpr int kOldestReadableFormat = 6;

// The tables a store of format `version` has (those SchemaStep 1..version
// create and leave, under their last names), in creation order.
std::vector<std::string> TablesOfFormat(int version);

// The DDL of a PostgreSQL store at kStoreFormatVersion, run in the
// workspace's schema: the tables of TablesOfFormat(kStoreFormatVersion) with
// PostgreSQL types (BIGINT, DOUBLE PRECISION, BYTEA, text compared bytewise
// with COLLATE "C" as SQLite does). PostgreSQL stores start at the current
// format; a later format adds its step in both dialects.
const std::string& PostgresSchema();

// An index added to the schema without a format change: every build reads
// and writes a store with or without it (SQLite and PostgreSQL keep it up to
// date for any writer), and no query needs it to be right, only to be fast.
// A new store is created with it; a store without it (written by an older
// build) gains it at its first writable open (Store::EnsureAddedIndexes), in
// one transaction. A read-only open never writes it.
struct AddedIndex {
  std::string_view name;
  // CREATE INDEX, the same text in both dialects.
  std::string_view ddl;
};
std::span<const AddedIndex> AddedIndexes();

// The index run's check for damaged vectors (Store::CheckVectorSizes): the
// number and the least text_hash of the rows of model ?1 whose `dim` is not
// ?2 or whose vector has a size no form of a ?2-vector has
// (storage/vector_blob.h): below ?3 (the sparse form's bitmap), between ?4
// (float16s) and ?5 (floats), or above ?5. Five range probes of the index
// embeddings_sizes (model, dim, length(vector)): dim below, dim above, and
// the three ranges at dim; neither database reads a vector or
// more index entries than the damaged rows'. (PostgreSQL's length(bytea) is
// octet_length.)
// tests/vector_check_test.cc checks both databases' plans.
extern const char kBadVectorSizesQuery[];

}  // namespace flowrag

#endif  // FLOWRAG_STORAGE_SCHEMA_H_
