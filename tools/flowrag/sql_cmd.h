// `flowrag sql link|ask|exec|eval`: text-to-SQL from the command line
// (flowrag/sql.h).
#ifndef FLOWRAG_TOOLS_SQL_CMD_H_
#define FLOWRAG_TOOLS_SQL_CMD_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "flowrag/sql.h"
#include "flowrag/status.h"

namespace flowrag::cli {

struct SqlArgs {
  std::string db, db_id, store, question, method = "qafd", embedder;
  std::vector<std::string> sets;  // key=value link options
  bool json = false;
  double open_timeout = 30.0;  // SqlDatabaseOptions::open_time_limit_seconds
  SqlAskOptions ask;
  SqlEvalOptions eval;
  std::string format = "text";
  CLI::App* link = nullptr;
  CLI::App* ask_cmd = nullptr;
  CLI::App* exec = nullptr;
  CLI::App* eval_cmd = nullptr;
};

CLI::App* AddSqlCommand(CLI::App& app, SqlArgs* args);
Status RunSql(SqlArgs& args);

}  // namespace flowrag::cli

#endif  // FLOWRAG_TOOLS_SQL_CMD_H_
