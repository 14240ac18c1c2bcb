// DDL of every store format version and the migrations between them.
// doc/storage.md describes the same tables for people.
#ifndef FLOWRAG_STORAGE_SCHEMA_H_
#define FLOWRAG_STORAGE_SCHEMA_H_

#include <string>
#include <vector>

namespace flowrag {

// SQL that brings a store from format `version - 1` to `version` (version 1
// creates the base tables). Empty for versions this build does not know.
const std::string& SchemaStep(int version);

// The tables a store of format `version` has (those SchemaStep 1..version
// create; no step drops one), in creation order.
std::vector<std::string> TablesOfFormat(int version);

// The DDL of a PostgreSQL store at kStoreFormatVersion, run in the
// workspace's schema: the tables of TablesOfFormat(kStoreFormatVersion) with
// PostgreSQL types (BIGINT, DOUBLE PRECISION, BYTEA, text compared bytewise
// with COLLATE "C" as SQLite does). PostgreSQL stores start at the current
// format; a later format adds its step in both dialects.
const std::string& PostgresSchema();

}  // namespace flowrag

#endif  // FLOWRAG_STORAGE_SCHEMA_H_
