#include "sqldb/postgres_connection.h"

namespace flowrag {

// Placeholder until the libpq driver lands in this file.
Result<std::unique_ptr<SqlConnection>> OpenPostgresConnection(const std::string& url,
                                                              const SqlConnectionOptions&) {
  (void)url;
  return Status::FailedPrecondition("PostgreSQL stores are not available in this build");
}

}  // namespace flowrag
