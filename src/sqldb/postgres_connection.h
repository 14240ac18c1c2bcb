// The PostgreSQL driver of SqlConnection (libpq): one schema of a database
// per store (the URL's `workspace`, default `public`).
#ifndef FLOWRAG_SQLDB_POSTGRES_CONNECTION_H_
#define FLOWRAG_SQLDB_POSTGRES_CONNECTION_H_

#include <memory>
#include <string>

#include "sqldb/connection.h"

namespace flowrag {

Result<std::unique_ptr<SqlConnection>> OpenPostgresConnection(const std::string& url,
                                                              const SqlConnectionOptions& options);

}  // namespace flowrag

#endif  // FLOWRAG_SQLDB_POSTGRES_CONNECTION_H_
