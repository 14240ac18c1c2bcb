// Bounded replacements of SQLite built-in functions whose cost is not
// bounded by the value-size limit and that cannot be interrupted: one call
// runs inside a single VM step, where neither the progress handler nor
// sqlite3_interrupt() reaches it. Internal to sql/.
//
// printf() and format(): SQLite 3.40 repeats "%.*c" one character at a time
// for the whole precision even after the result has outgrown
// SQLITE_LIMIT_LENGTH, so printf('%.*c', 2000000000, 'x') runs for about a
// minute. The replacement reads the width and precision of every conversion
// (digits or '*' arguments, in SQLite's order) and fails the call when one is
// larger than `max_width` ("printf(): width or precision 2000000000 is over
// the limit of 67108864"); otherwise the built-in printf formats the
// arguments, on a private in-memory connection, so output is exactly
// SQLite's.
//
// Thread-safety: the functions belong to the connection they are installed
// on and run on its thread.
#ifndef FLOWRAG_SQL_BOUNDED_FUNCTIONS_H_
#define FLOWRAG_SQL_BOUNDED_FUNCTIONS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"

struct sqlite3;

namespace flowrag {

// Registers the bounded printf() and format() and the linear instr() and
// replace() on `db` (SQLITE_INNOCUOUS and deterministic, like the built-ins). The helper connection
// is opened on the first call and closed with `db`. Internal on a failure to register.
Status InstallBoundedFunctions(sqlite3* db, int64_t max_width);

// The widths and precisions of a printf() format, in argument order: a
// literal number, or the value of the integer argument a '*' takes
// (`int_args[i]` is argument i + 1 of printf, i.e. the one after the
// format; missing arguments are 0, as in SQLite). Stops at an unknown
// conversion, where SQLite stops formatting. Exposed for tests. O(format).
std::vector<int64_t> PrintfWidths(std::string_view format, const std::vector<int64_t>& int_args);

}  // namespace flowrag

#endif  // FLOWRAG_SQL_BOUNDED_FUNCTIONS_H_
