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

bool IsPostgresLocation(std::string_view location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

Result<std::unique_ptr<SqlConnection>> OpenSqlConnection(const std::string& location,
                                                         const SqlConnectionOptions& options) {
  if (IsPostgresLocation(location)) return OpenPostgresConnection(location, options);
  return OpenSqliteConnection(location, options);
}

}  // namespace flowrag
