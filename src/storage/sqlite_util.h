// Thin RAII helpers over the SQLite C API, private to storage/.
//
// Every error becomes a Status whose message names the database file and the
// statement that failed. Thread-safety: none; the owner serialises access.
#ifndef FLOWRAG_STORAGE_SQLITE_UTIL_H_
#define FLOWRAG_STORAGE_SQLITE_UTIL_H_

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "flowrag/status.h"

namespace flowrag {

// Maps a SQLite result code to a Status: NOTADB/CORRUPT → Corruption,
// IOERR/CANTOPEN/FULL → IoError, BUSY/LOCKED → Unavailable, else Internal.
Status SqliteError(sqlite3* db, int rc, std::string_view path, std::string_view what);

// A prepared statement. Bind indexes are 1-based as in SQLite.
class Statement {
 public:
  Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& o) noexcept : stmt_(o.stmt_) { o.stmt_ = nullptr; }
  Statement& operator=(Statement&& o) noexcept;
  ~Statement();

  static Result<Statement> Prepare(sqlite3* db, std::string_view path, std::string_view sql);

  Statement& Bind(int i, int64_t v);
  Statement& BindDouble(int i, double v);
  Statement& Bind(int i, std::string_view v);
  Statement& BindBlob(int i, const void* data, size_t size);
  Statement& BindNull(int i);

  // Runs one step: Result true when a row is available, false when done.
  Result<bool> Step(std::string_view path);
  // Runs to completion, ignoring rows.
  Status Run(std::string_view path);
  void Reset();

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string_view Text(int col) const;
  std::string_view Blob(int col) const;
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// Executes one or more statements without results.
Status Exec(sqlite3* db, std::string_view path, const std::string& sql);

// Stores a 64-bit unsigned hash in SQLite's signed INTEGER, bit for bit.
inline int64_t HashToSql(uint64_t h) { return static_cast<int64_t>(h); }
inline uint64_t HashFromSql(int64_t v) { return static_cast<uint64_t>(v); }

}  // namespace flowrag

#endif  // FLOWRAG_STORAGE_SQLITE_UTIL_H_
