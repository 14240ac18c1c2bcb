// The SQLite driver of SqlConnection: one file (or ":memory:"), opened in
// serialized mode with foreign keys on and a busy timeout; WAL once
// PrepareForWrites() runs. ReadBlobRange uses incremental blob I/O, so a
// snapshot chunk is never copied whole.
#ifndef FLOWRAG_SQLDB_SQLITE_CONNECTION_H_
#define FLOWRAG_SQLDB_SQLITE_CONNECTION_H_

#include <memory>
#include <string>
#include <string_view>

#include "sqldb/connection.h"

struct sqlite3;

namespace flowrag {

// Maps a SQLite result code to a Status: NOTADB/CORRUPT → Corruption,
// IOERR/CANTOPEN/FULL/READONLY/PERM → IoError, BUSY/LOCKED → Unavailable,
// CONSTRAINT → InvalidArgument, else Internal. The message names `path`.
Status SqliteError(sqlite3* db, int rc, std::string_view path, std::string_view what);

Result<std::unique_ptr<SqlConnection>> OpenSqliteConnection(const std::string& path,
                                                            const SqlConnectionOptions& options);

}  // namespace flowrag

#endif  // FLOWRAG_SQLDB_SQLITE_CONNECTION_H_
