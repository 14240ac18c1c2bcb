#include "sql_cmd.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

namespace flowrag::cli {
namespace {

using Json = nlohmann::json;

Status ApplySets(const std::vector<std::string>& sets, SchemaLinkOptions* o) {
  for (const std::string& kv : sets) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) return Status::InvalidArgument("--set " + kv + ": expected key=value");
    const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
    try {
      std::map<std::string, double*> reals = {{"alpha", &o->alpha},       {"capacity", &o->capacity},
                                              {"epsilon", &o->epsilon},   {"rbf_gamma", &o->rbf_gamma},
                                              {"a", &o->a},               {"b", &o->b},
                                              {"seed_ratio", &o->seed_ratio}, {"value_score", &o->value_score},
                                              {"min_seed_score", &o->min_seed_score},
                                              {"select", &o->select}};
      std::map<std::string, size_t*> counts = {{"seeds", &o->seeds}, {"top_k", &o->top_k}, {"max_pushes", &o->max_pushes}};
      std::map<std::string, bool*> flags = {{"subqueries", &o->subqueries}, {"joins", &o->joins}, {"llm", &o->llm}};
      if (reals.count(key)) {
        *reals[key] = std::stod(value);
      } else if (counts.count(key)) {
        *counts[key] = std::stoul(value);
      } else if (flags.count(key)) {
        if (value != "true" && value != "false") return Status::InvalidArgument("--set " + kv + ": expected true or false");
        *flags[key] = value == "true";
      } else if (key == "weights") {
        o->weights = value;
      } else if (key == "similarity") {
        o->similarity = value;
      } else if (key == "sinks") {
        o->sinks = value;
      } else if (key == "mass") {
        o->mass = value;
      } else if (key == "relevance") {
        o->relevance = value;
      } else {
        return Status::InvalidArgument("--set " + kv + ": unknown link option \"" + key + "\"");
      }
    } catch (const std::exception&) {
      return Status::InvalidArgument("--set " + kv + ": not a number");
    }
  }
  return Status::Ok();
}

Json ItemsJson(const std::vector<LinkedItem>& items) {
  Json out = Json::array();
  for (const LinkedItem& i : items) out.push_back({{"name", i.name}, {"score", i.score}, {"why", i.why}});
  return out;
}

Json LinkJson(const SchemaLink& l) {
  Json joins = Json::array();
  for (const JoinEdge& j : l.joins) joins.push_back({{"from", j.from}, {"to", j.to}, {"inferred", j.inferred}});
  Json sources = Json::array();
  for (const LinkSource& x : l.sources) {
    sources.push_back({{"name", x.name}, {"subquery", x.subquery}, {"mass", x.mass}, {"injected", x.injected}});
  }
  return {{"method", l.method},         {"tables", ItemsJson(l.tables)},   {"columns", ItemsJson(l.columns)},
          {"joins", joins},             {"sources", sources},              {"scaled_sources", l.scaled_sources},
          {"subqueries", l.subqueries}, {"value_matches", l.value_matches},
          {"schema_text", l.schema_text}, {"pushes", l.pushes},            {"nodes_touched", l.nodes_touched},
          {"llm_calls", l.llm_calls},   {"time_ms", l.time_ms},            {"warnings", l.warnings}};
}

Json ResultJson(const SqlResultSet& r) {
  Json rows = Json::array();
  for (const auto& row : r.rows) {
    Json cells = Json::array();
    for (const SqlValue& v : row) {
      if (std::holds_alternative<std::monostate>(v)) cells.push_back(nullptr);
      else if (const auto* i = std::get_if<int64_t>(&v)) cells.push_back(*i);
      else if (const auto* d = std::get_if<double>(&v)) cells.push_back(*d);
      else cells.push_back(std::get<std::string>(v));
    }
    rows.push_back(std::move(cells));
  }
  return {{"columns", r.columns}, {"rows", rows}, {"truncated", r.truncated}, {"seconds", r.seconds}};
}

// JSON text of `j`; bytes that are not UTF-8 (BLOB cells, text of a
// user's file) become U+FFFD instead of throwing.
std::string JsonText(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

void PrintResult(const SqlResultSet& r) {
  std::string line;
  for (size_t i = 0; i < r.columns.size(); ++i) line += (i ? " | " : "") + r.columns[i];
  std::printf("%s\n", line.c_str());
  for (const auto& row : r.rows) {
    line.clear();
    for (size_t i = 0; i < row.size(); ++i) line += (i ? " | " : "") + SqlValueText(row[i]);
    std::printf("%s\n", line.c_str());
  }
  std::printf("(%zu row%s%s, %.1f ms)\n", r.rows.size(), r.rows.size() == 1 ? "" : "s",
              r.truncated ? ", truncated" : "", r.seconds * 1000.0);
}

void PrintLink(const SchemaLink& l) {
  std::printf("method %s: %zu tables, %zu columns, %zu joins (%.2f ms)\n", l.method.c_str(), l.tables.size(),
              l.columns.size(), l.joins.size(), l.time_ms);
  for (size_t i = 0; i < l.subqueries.size(); ++i) {
    std::printf("  sub-query %zu: %s\n", i + 1, l.subqueries[i].c_str());
    for (const LinkSource& x : l.sources) {
      if (x.subquery != i) continue;
      std::printf("    source %-40s mass %.1f", x.name.c_str(), x.mass);
      if (x.injected != x.mass) std::printf(" (%.1f after the feasibility guard)", x.injected);
      std::printf("\n");
    }
  }
  for (const std::string& v : l.value_matches) std::printf("  value: %s\n", v.c_str());
  for (const LinkedItem& t : l.tables) std::printf("  table  %-40s %.3f %s\n", t.name.c_str(), t.score, t.why.c_str());
  for (const LinkedItem& c : l.columns) std::printf("  column %-40s %.3f %s\n", c.name.c_str(), c.score, c.why.c_str());
  for (const JoinEdge& j : l.joins) {
    std::printf("  join   %s = %s%s\n", j.from.c_str(), j.to.c_str(), j.inferred ? " (same name)" : "");
  }
  for (const std::string& w : l.warnings) std::printf("  warning: %s\n", w.c_str());
  std::printf("\n%s", l.schema_text.c_str());
}

Status RunEval(SqlArgs& a) {
  FLOWRAG_RETURN_IF_ERROR(ApplySets(a.sets, &a.eval.link));
  FLOWRAG_ASSIGN_OR_RETURN(auto rows, EvaluateSql(a.eval));
  if (a.format == "json") {
    Json out = Json::array();
    for (const SqlEvalRow& r : rows) {
      out.push_back({{"dataset", r.dataset}, {"method", r.method}, {"questions", r.questions},
                     {"table_p", r.table_p}, {"table_r", r.table_r}, {"table_f1", r.table_f1},
                     {"column_p", r.column_p}, {"column_r", r.column_r}, {"column_f1", r.column_f1},
                     {"avg_tables", r.avg_tables}, {"avg_columns", r.avg_columns}, {"p50_ms", r.p50_ms},
                     {"p99_ms", r.p99_ms}, {"exec_accuracy", r.exec_accuracy}, {"exec_attempted", r.exec_attempted},
                     {"exec_correct", r.exec_correct}, {"executed", r.executed}, {"exec_errors", r.exec_errors},
                     {"truncated", r.truncated}, {"gold_errors", r.gold_errors}, {"no_data", r.no_data},
                     {"gold_less", r.gold_less}, {"gold_less_columns", r.gold_less_columns}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return Status::Ok();
  }
  // The execution columns only when execution was measured (the linking
  // table keeps its shape for bench/sql_linking.sh).
  const bool exec = std::any_of(rows.begin(), rows.end(), [](const SqlEvalRow& r) { return r.exec_accuracy >= 0 || r.no_data > 0 || r.gold_errors > 0; });
  std::printf("| dataset | method | questions | table P | table R | table F1 | column P | column R | column F1 | tables/q | columns/q | p50 ms | p99 ms | exec acc |%s\n",
              exec ? " scored | correct | executed | errors | truncated | gold errors | no data |" : "");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|%s\n", exec ? "---|---|---|---|---|---|---|" : "");
  for (const SqlEvalRow& r : rows) {
    const std::string acc = r.exec_accuracy < 0 ? "-" : std::to_string(r.exec_accuracy).substr(0, 5);
    std::printf("| %s | %s | %zu | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %.3f | %.3f | %s |",
                r.dataset.c_str(), r.method.c_str(), r.questions, r.table_p, r.table_r, r.table_f1, r.column_p,
                r.column_r, r.column_f1, r.avg_tables, r.avg_columns, r.p50_ms, r.p99_ms, acc.c_str());
    if (exec) {
      std::printf(" %zu | %zu | %zu | %zu | %zu | %zu | %zu |", r.exec_attempted, r.exec_correct, r.executed,
                  r.exec_errors, r.truncated, r.gold_errors, r.no_data);
    }
    std::printf("\n");
  }
  // Questions whose gold SQL reads no column (SELECT count(*) FROM t) are
  // not in the column scores: one line per dataset says how many there were.
  std::string last;
  for (const SqlEvalRow& r : rows) {
    if (r.dataset == last) continue;
    last = r.dataset;
    std::printf("\n%s: %zu question(s) without gold columns, left out of the column scores (columns returned on them:",
                r.dataset.c_str(), r.gold_less);
    for (const SqlEvalRow& x : rows) {
      if (x.dataset == r.dataset) std::printf(" %s %.2f", x.method.c_str(), x.gold_less_columns);
    }
    std::printf(").\n");
  }
  return Status::Ok();
}

}  // namespace

CLI::App* AddSqlCommand(CLI::App& app, SqlArgs* a) {
  auto* sql = app.add_subcommand("sql", "Text-to-SQL: schema linking (QAFD), safe execution, SQL generation");
  sql->require_subcommand(1);
  auto common = [a](CLI::App* c) {
    c->add_option("--db", a->db,
                  "SQLite database file (opened read-only); for link also a Spider tables.json (with "
                  "--db-id) or a Spider 2.0-lite schema folder (DDL.csv)")
        ->required();
    c->add_option("--db-id", a->db_id, "The schema in a tables.json");
    c->add_option("--store", a->store, "flowrag store that keeps the schema graph between runs");
    c->add_option("--embedder", a->embedder, "hash|openai (default: the store's, else hash)");
    c->add_flag("--json", a->json, "Print JSON");
    c->add_option("--open-timeout", a->open_timeout,
                  "Seconds for row counts, samples and the value index when opening a SQLite file (<= 0: no "
                  "limit); the catalog is always read whole")
        ->capture_default_str();
  };
  a->link = sql->add_subcommand("link", "Tables, columns and joins a question needs");
  common(a->link);
  a->link->add_option("question", a->question, "The question")->required();
  a->link->add_option("--method", a->method, "qafd|bm25|dense|all")->capture_default_str();
  a->link->add_option("--set", a->sets, "Link option key=value (alpha, select, seeds, top_k, ...)");
  a->ask_cmd = sql->add_subcommand("ask", "Link, write SQL with the chat model, run it read-only");
  common(a->ask_cmd);
  a->ask_cmd->add_option("question", a->question, "The question")->required();
  a->ask_cmd->add_option("--method", a->ask.method, "qafd|bm25|dense|all")->capture_default_str();
  a->ask_cmd->add_option("--repairs", a->ask.max_repairs, "Failed runs fed back to the model")->capture_default_str();
  a->ask_cmd->add_option("--evidence", a->ask.evidence, "External knowledge for the prompt");
  a->ask_cmd->add_option("--timeout", a->ask.limits.time_limit_seconds, "Seconds per statement")->capture_default_str();
  a->ask_cmd->add_option("--max-rows", a->ask.limits.max_rows, "Rows returned")->capture_default_str();
  a->ask_cmd->add_option("--set", a->sets, "Link option key=value");
  a->exec = sql->add_subcommand("exec", "Run one read-only statement under the limits");
  common(a->exec);
  a->exec->add_option("sql", a->question, "The statement")->required();
  a->exec->add_option("--timeout", a->ask.limits.time_limit_seconds, "Seconds")->capture_default_str();
  a->exec->add_option("--max-rows", a->ask.limits.max_rows, "Rows returned")->capture_default_str();
  a->exec->add_option("--max-bytes", a->ask.limits.max_result_bytes, "Bytes of the result (more: an error)")
      ->capture_default_str();
  a->eval_cmd = sql->add_subcommand("eval", "Schema-linking P/R/F1 (and execution accuracy) on Spider / Spider 2.0-lite");
  a->eval_cmd->add_option("--spider", a->eval.spider, "Spider folder (dev.json, tables.json, database/)");
  a->eval_cmd->add_option("--spider2", a->eval.spider2, "spider2_lite folder");
  a->eval_cmd->add_option("--bird", a->eval.bird,
                          "BIRD-format folder (dev.json, tables.json or dev_tables.json, dev_databases/)");
  a->eval_cmd->add_option("--method", a->eval.methods,
                          "qafd|bm25|bm25-matched|dense|all (repeatable; bm25-matched: BM25 with as many columns as "
                          "qafd per question)");
  a->eval_cmd->add_option("--limit", a->eval.limit, "First N questions per dataset");
  a->eval_cmd->add_flag("--execute", a->eval.execute, "Generate SQL with the chat model and score execution");
  a->eval_cmd->add_option("--records", a->eval.records, "Per-question JSONL");
  a->eval_cmd->add_option("--max-rows", a->eval.max_rows, "With --execute: rows compared per result (more: a mismatch)")
      ->capture_default_str();
  a->eval_cmd->add_option("--timeout", a->eval.ask.limits.time_limit_seconds, "With --execute: seconds per statement")
      ->capture_default_str();
  a->eval_cmd->add_option("--format", a->format, "text|json")->capture_default_str();
  a->eval_cmd->add_option("--set", a->sets, "Link option key=value");
  return sql;
}

Status RunSql(SqlArgs& a) {
  if (*a.eval_cmd) return RunEval(a);
  SqlDatabaseOptions so;
  so.store = a.store;
  so.embedder = a.embedder;
  so.open_time_limit_seconds = a.open_timeout;
  std::error_code ec;  // a name too long to look up is no directory
  const bool schema_only = std::filesystem::is_directory(a.db, ec) || a.db.ends_with(".json");
  FLOWRAG_ASSIGN_OR_RETURN(auto db, schema_only ? SqlDatabase::OpenSchema(a.db, a.db_id, so)
                                                : SqlDatabase::Open(a.db, so));
  for (const std::string& w : db->warnings()) std::fprintf(stderr, "flowrag: warning: %s\n", w.c_str());
  if (*a.exec) {
    FLOWRAG_ASSIGN_OR_RETURN(SqlResultSet r, db->Execute(a.question, a.ask.limits));
    if (a.json) {
      std::printf("%s\n", JsonText(ResultJson(r)).c_str());
    } else {
      PrintResult(r);
    }
    return Status::Ok();
  }
  SchemaLinkOptions link;
  FLOWRAG_RETURN_IF_ERROR(ApplySets(a.sets, &link));
  if (*a.link) {
    FLOWRAG_ASSIGN_OR_RETURN(SchemaLink l, db->Link(a.question, a.method, link));
    if (a.json) {
      std::printf("%s\n", JsonText(LinkJson(l)).c_str());
    } else {
      PrintLink(l);
    }
    return Status::Ok();
  }
  a.ask.link = link;
  FLOWRAG_ASSIGN_OR_RETURN(SqlAnswer answer, db->Ask(a.question, a.ask));
  if (a.json) {
    Json attempts = Json::array();
    for (const SqlAttempt& t : answer.attempts) attempts.push_back({{"sql", t.sql}, {"error", t.error}});
    const Json out = {{"question", answer.question}, {"sql", answer.sql}, {"executed", answer.executed},
                      {"result", ResultJson(answer.result)}, {"attempts", attempts},
                      {"link", LinkJson(answer.link)}, {"llm_calls", answer.llm_calls},
                      {"time_ms", answer.time_ms}};
    std::printf("%s\n", JsonText(out).c_str());
    return Status::Ok();
  }
  for (size_t i = 0; i < answer.attempts.size(); ++i) {
    std::printf("attempt %zu: %s\n", i + 1, answer.attempts[i].sql.c_str());
    if (!answer.attempts[i].error.empty()) std::printf("  error: %s\n", answer.attempts[i].error.c_str());
  }
  if (!answer.executed) return Status::FailedPrecondition("no SQL ran after " + std::to_string(answer.attempts.size()) + " attempts");
  PrintResult(answer.result);
  return Status::Ok();
}

}  // namespace flowrag::cli
