#include "sqldb/connection.h"

#include "sqldb/postgres_connection.h"
#include "sqldb/sqlite_connection.h"

namespace flowrag {

Status Statement::Run() {
  while (true) {
    Result<bool> r = Step();
    if (!r.ok()) {
      Reset();
      return r.status();
    }
    if (!*r) break;
  }
  Reset();
  return Status::Ok();
}

Result<int64_t> Statement::RunReturningId() {
  Result<bool> row = Step();
  if (!row.ok() || !*row) {
    Reset();
    if (!row.ok()) return row.status();
    return Status::Internal("INSERT ... RETURNING gave no row");
  }
  const int64_t id = Int(0);
  FLOWRAG_RETURN_IF_ERROR(Run());
  return id;
}

bool IsPostgresLocation(std::string_view location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

Result<std::unique_ptr<SqlConnection>> OpenSqlConnection(const std::string& location,
                                                         const SqlConnectionOptions& options) {
  if (IsPostgresLocation(location)) return OpenPostgresConnection(location, options);
  return OpenSqliteConnection(location, options);
}

}  // namespace flowrag
