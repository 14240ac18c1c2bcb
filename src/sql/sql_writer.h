// SQL written by a chat model from a linked schema, executed safely, with
// bounded repairs (QAFD-RAG §4.2: the SQL agent works from QAFD's ranked
// subgraph instead of exploring the schema call by call).
//
// One request: a system message (SQLite dialect, use only the listed
// schema, answer with one statement in a ```sql block) and a user message
// with the linked schema (SchemaLinker::SchemaText, full tables by
// default), the join paths, the external knowledge if any, and the
// question. The SQL is the first ```sql (or ```) block of the answer, else
// the whole answer; trailing semicolons are dropped. When executing it
// fails (syntax, unknown column, refusal, time limit), the SQL and the
// error go back to the model as the next turn, up to max_repairs times.
// Thread-safety: stateless; the database is used by one thread at a time.
#ifndef FLOWRAG_SQL_SQL_WRITER_H_
#define FLOWRAG_SQL_SQL_WRITER_H_

#include <string>
#include <string_view>

#include "flowrag/sql.h"
#include "llm/chat_model.h"
#include "sql/safe_exec.h"
#include "sql/schema_linker.h"

namespace flowrag {

// The SQL in a model's answer (see the file comment): the first sql (or
// untagged) fence, else the whole answer trimmed; empty only for an empty
// answer or an empty fence.
std::string ExtractSql(std::string_view answer);

// Links (options.method), writes, runs and repairs. Chat errors are returned
// as errors; SQL that never runs is an answer with executed = false.
Result<SqlAnswer> WriteAndRunSql(ChatModel& chat, ReadOnlyDatabase& db, const SchemaLinker& linker,
                                 std::string_view question, const SqlAskOptions& options);

}  // namespace flowrag

#endif  // FLOWRAG_SQL_SQL_WRITER_H_
