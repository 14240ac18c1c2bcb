// Parsing of the PostgreSQL store locations the PostgreSQL driver accepts:
//
//   postgresql://user[:password]@host[:port]/dbname[?param=value&...]
//   postgres://...  (same)
//
// flowrag reads one query parameter itself, `workspace=NAME` (the schema
// the store lives in; NAME matches [A-Za-z_][A-Za-z0-9_]{0,62} and does not
// start with `pg_`, which PostgreSQL reserves), and hands the rest to libpq,
// which parses the URL itself (`host=/dir` for a Unix socket, `sslmode`,
// ...). Unless the URL sets them, the connection gets connect_timeout=10,
// client_encoding=UTF8 and fallback_application_name=PostgresApplicationName
// (the workspace shows in pg_stat_activity).
//
// Passwords never reach a message: `redacted` replaces the password of the
// user part and the value of a `password` parameter with `***`, and
// RedactPassword() scrubs them from text that libpq produced.
//
// Pure functions; thread-safe.
#ifndef FLOWRAG_SQLDB_POSTGRES_URL_H_
#define FLOWRAG_SQLDB_POSTGRES_URL_H_

#include <string>
#include <string_view>

#include "flowrag/status.h"

namespace flowrag {

struct PostgresUrl {
  // What libpq connects to: the URL without `workspace`, with the defaults
  // above added. Holds the password.
  std::string conninfo;
  // The URL as given (workspace included), password replaced by `***`.
  std::string redacted;
  // The schema: the workspace parameter, else "public".
  std::string workspace = "public";
  // The password as written in the URL (user part or parameter; raw and
  // percent-decoded), for RedactPassword. Empty when the URL has none.
  std::string password_raw;
  std::string password_decoded;
};

// InvalidArgument when `url` does not start with postgresql:// or
// postgres://, or names `workspace` twice or with a bad name (the message
// names the parameter and the redacted URL). Other syntax errors are
// libpq's to report when connecting.
Result<PostgresUrl> ParsePostgresUrl(std::string_view url);

// `text` with every occurrence of the URL's password replaced by `***`.
std::string RedactPassword(const PostgresUrl& url, std::string_view text);

// "flowrag WORKSPACE", cut to the 63 bytes the server keeps.
std::string PostgresApplicationName(std::string_view workspace);

// True when `name` is a usable workspace name (see above).
bool IsValidWorkspaceName(std::string_view name);

}  // namespace flowrag

#endif  // FLOWRAG_SQLDB_POSTGRES_URL_H_
