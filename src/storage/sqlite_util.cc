#include "storage/sqlite_util.h"

namespace flowrag {

Status SqliteError(sqlite3* db, int rc, std::string_view path, std::string_view what) {
  std::string msg(path);
  msg += ": ";
  msg += what;
  msg += ": ";
  msg += (db != nullptr) ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return Status::Corruption(msg + " (expected a flowrag SQLite store)");
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return Status::IoError(msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable(msg);
    case SQLITE_CONSTRAINT:
      return Status::InvalidArgument(msg);
    default:
      return Status::Internal(msg);
  }
}

Statement& Statement::operator=(Statement&& o) noexcept {
  if (this != &o) {
    sqlite3_finalize(stmt_);
    stmt_ = o.stmt_;
    o.stmt_ = nullptr;
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Result<Statement> Statement::Prepare(sqlite3* db, std::string_view path, std::string_view sql) {
  Statement s;
  int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &s.stmt_, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db, rc, path, "prepare \"" + std::string(sql.substr(0, 60)) + "\"");
  return s;
}

Statement& Statement::Bind(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}
Statement& Statement::BindDouble(int i, double v) {
  sqlite3_bind_double(stmt_, i, v);
  return *this;
}
Statement& Statement::Bind(int i, std::string_view v) {
  sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::BindBlob(int i, const void* data, size_t size) {
  sqlite3_bind_blob64(stmt_, i, data, size, SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::BindNull(int i) {
  sqlite3_bind_null(stmt_, i);
  return *this;
}

Result<bool> Statement::Step(std::string_view path) {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3* db = sqlite3_db_handle(stmt_);
  std::string sql = sqlite3_sql(stmt_) ? sqlite3_sql(stmt_) : "";
  return SqliteError(db, rc, path, "step \"" + sql.substr(0, 60) + "\"");
}

Status Statement::Run(std::string_view path) {
  while (true) {
    auto r = Step(path);
    if (!r.ok()) {
      Reset();
      return r.status();
    }
    if (!*r) break;
  }
  Reset();
  return Status::Ok();
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string_view Statement::Text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  return p ? std::string_view(p, sqlite3_column_bytes(stmt_, col)) : std::string_view();
}

std::string_view Statement::Blob(int col) const {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
  return p ? std::string_view(p, sqlite3_column_bytes(stmt_, col)) : std::string_view();
}

Status Exec(sqlite3* db, std::string_view path, const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    sqlite3_free(err);
    return SqliteError(db, rc, path, "exec \"" + sql.substr(0, 60) + "\"");
  }
  return Status::Ok();
}

}  // namespace flowrag
