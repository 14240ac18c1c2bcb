// EvaluateSql (flowrag/sql.h): schema-linking precision / recall / F1 per
// method on Spider dev and Spider 2.0-lite, latency, and execution accuracy
// with a chat model.
#include "sql/sql_eval.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/text.h"
#include "llm/chat_client.h"
#include "sql/bird_data.h"
#include "sql/safe_exec.h"
#include "sql/schema_linker.h"
#include "sql/spider_data.h"
#include "sql/sql_writer.h"

namespace flowrag {
namespace {

namespace fs = std::filesystem;

struct Prf {
  double p = 0, r = 0, f1 = 0;
};

// REQUIRES: !gold.empty() (questions without gold are counted apart).
Prf Score(const std::set<std::string>& gold, const std::set<std::string>& predicted) {
  size_t hit = 0;
  for (const std::string& x : predicted) hit += gold.count(x);
  Prf s;
  s.p = predicted.empty() ? 0.0 : static_cast<double>(hit) / predicted.size();
  s.r = static_cast<double>(hit) / gold.size();
  s.f1 = s.p + s.r > 0 ? 2 * s.p * s.r / (s.p + s.r) : 0.0;
  return s;
}

std::set<std::string> Lower(const std::set<std::string>& in) {
  std::set<std::string> out;
  for (const std::string& s : in) out.insert(ToLowerAscii(s));
  return out;
}

std::set<std::string> Names(const std::vector<LinkedItem>& items) {
  std::set<std::string> out;
  for (const LinkedItem& i : items) out.insert(ToLowerAscii(i.name));
  return out;
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

// A cell as compared: integers as reals (3 = 3.0), NULL apart from the text "NULL".
std::string Cell(const SqlValue& v) {
  if (std::holds_alternative<std::monostate>(v)) return std::string("\x1eNULL");
  if (const auto* i = std::get_if<int64_t>(&v))
    return SqlValueText(SqlValue(static_cast<double>(*i)));
  return SqlValueText(v);
}

struct Accumulator {
  std::vector<Prf> tables, columns;
  std::vector<double> ms, n_tables, n_columns;
  size_t questions = 0, gold_less = 0;
  double gold_less_columns = 0;
  size_t executed = 0, correct = 0, attempted = 0, gold_errors = 0, errors = 0, truncated = 0,
         no_data = 0;
};

struct Dataset {
  std::string name;
  std::vector<SqlTask> tasks;
  // Per database: the linker and, when the data exists, the file.
  std::map<std::string, std::unique_ptr<SchemaLinker>> linkers;
  std::map<std::string, std::string> files;
};

Status LoadSpider(const std::string& dir, ChatModel* chat, Dataset* d) {
  d->name = "spider-dev";
  FLOWRAG_ASSIGN_OR_RETURN(auto schemas, LoadSpiderTables(dir + "/tables.json"));
  FLOWRAG_ASSIGN_OR_RETURN(d->tasks, LoadSpiderTasks(dir + "/dev.json", schemas));
  std::set<std::string> needed;
  for (const SqlTask& t : d->tasks) needed.insert(t.db_id);
  for (const SpiderSchema& s : schemas) {
    if (!needed.count(s.db_id)) continue;
    auto graph = std::make_shared<SchemaGraph>(SchemaFromSpider(s));
    const std::string file = dir + "/database/" + s.db_id + "/" + s.db_id + ".sqlite";
    ValueIndex values;
    if (fs::exists(file)) {
      FLOWRAG_RETURN_IF_ERROR(AddSamplesFromSqlite(file, IntrospectionOptions{}, graph.get()));
      FLOWRAG_ASSIGN_OR_RETURN(values, ValueIndex::FromSqlite(file, *graph));
      d->files[s.db_id] = file;
    } else {
      values = ValueIndex::FromSamples(*graph);
    }
    FLOWRAG_ASSIGN_OR_RETURN(
        d->linkers[s.db_id],
        SchemaLinker::Create(std::move(graph), std::move(values), nullptr, chat));
  }
  return Status::Ok();
}

Status LoadSpider2(const std::string& root, ChatModel* chat, Dataset* d) {
  d->name = "spider2-lite-local";
  FLOWRAG_ASSIGN_OR_RETURN(d->tasks, LoadSpider2LiteTasks(root));
  const fs::path dbs = fs::path(root) / "resource" / "databases" / "sqlite";
  auto key = [](std::string s) {
    s = ToLowerAscii(s);
    std::replace(s.begin(), s.end(), '-', '_');
    return s;
  };
  for (const SqlTask& t : d->tasks) {
    if (d->linkers.count(t.db_id)) continue;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dbs, ec)) {
      if (key(e.path().filename().string()) != key(t.db_id)) continue;
      FLOWRAG_ASSIGN_OR_RETURN(Spider2Database db, LoadSpider2Database(e.path().string()));
      FLOWRAG_ASSIGN_OR_RETURN(SchemaGraph g, SchemaFromSpider2(db));
      auto graph = std::make_shared<SchemaGraph>(std::move(g));
      ValueIndex values = ValueIndex::FromSamples(*graph);
      FLOWRAG_ASSIGN_OR_RETURN(
          d->linkers[t.db_id],
          SchemaLinker::Create(std::move(graph), std::move(values), nullptr, chat));
    }
    if (!d->linkers.count(t.db_id))
      return Status::NotFound(dbs.string() + ": no schema folder for " + t.db_id);
  }
  return Status::Ok();
}

Status LoadBirdDataset(const std::string& dir, ChatModel* chat, Dataset* d) {
  d->name = "bird-dev";
  FLOWRAG_ASSIGN_OR_RETURN(BirdData bird, flowrag::LoadBird(dir));
  d->tasks = std::move(bird.tasks);
  for (auto& [db, file] : bird.files) d->files[db] = file;
  std::set<std::string> needed;
  for (const SqlTask& t : d->tasks) needed.insert(t.db_id);
  for (const SpiderSchema& s : bird.schemas) {
    if (!needed.count(s.db_id)) continue;
    auto graph = std::make_shared<SchemaGraph>(SchemaFromSpider(s));
    ValueIndex values;
    auto file = d->files.find(s.db_id);
    if (file != d->files.end()) {
      FLOWRAG_RETURN_IF_ERROR(
          AddSamplesFromSqlite(file->second, IntrospectionOptions{}, graph.get()));
      FLOWRAG_ASSIGN_OR_RETURN(values, ValueIndex::FromSqlite(file->second, *graph));
    } else {
      values = ValueIndex::FromSamples(*graph);
    }
    FLOWRAG_ASSIGN_OR_RETURN(
        d->linkers[s.db_id],
        SchemaLinker::Create(std::move(graph), std::move(values), nullptr, chat));
  }
  return Status::Ok();
}

// A method as the evaluation runs it.
struct MethodSpec {
  std::string name;
  LinkMethod method;
  bool matched = false;  // bm25-matched: as many columns as qafd returns
};

Result<std::vector<MethodSpec>> ParseMethods(const std::vector<std::string>& names) {
  std::vector<MethodSpec> methods;
  for (const std::string& m : names) {
    if (m == "bm25-matched") {
      methods.push_back({m, LinkMethod::kBm25, true});
      continue;
    }
    FLOWRAG_ASSIGN_OR_RETURN(LinkMethod lm, ParseLinkMethod(m));
    methods.push_back({m, lm, false});
  }
  return methods;
}

// The chat model from the environment (null when none is configured);
// FailedPrecondition when execution needs one and there is none.
Result<std::unique_ptr<ChatModel>> EvalChatModel(const SqlEvalOptions& o) {
  std::unique_ptr<ChatModel> chat;
  if (ChatModelConfigured()) {
    FLOWRAG_ASSIGN_OR_RETURN(OpenAiChatOptions co, OpenAiChatOptionsFromEnv(OpenAiChatOptions{}));
    FLOWRAG_ASSIGN_OR_RETURN(chat, OpenAiChatClient::Create(co));
  }
  if (o.execute && chat == nullptr) {
    return Status::FailedPrecondition(
        "--execute needs a chat model: set FLOWRAG_LLM_BASE_URL and FLOWRAG_LLM_MODEL");
  }
  return chat;
}

// Execution can score only the questions whose database has a .sqlite
// file: the others are named on stderr.
void WarnMissingDatabases(const Dataset& d) {
  std::set<std::string> missing;
  size_t questions = 0;
  for (const SqlTask& t : d.tasks) {
    if (t.error.empty() && !d.files.count(t.db_id)) missing.insert(t.db_id), ++questions;
  }
  if (missing.empty()) return;
  std::string names;
  for (const std::string& m : missing) names += (names.empty() ? "" : ", ") + m;
  std::fprintf(stderr,
               "warning: %s: %zu database(s) have no .sqlite file (%s); their %zu question(s) are "
               "not executed and not in the execution accuracy (column \"no data\")\n",
               d.name.c_str(), missing.size(), names.c_str(), questions);
}

// One method's row of a dataset: macro averages over its questions.
SqlEvalRow Summarize(const std::string& dataset, const std::string& method, const Accumulator& a) {
  SqlEvalRow r;
  r.dataset = dataset;
  r.method = method;
  r.questions = a.questions;
  const double n = std::max<double>(1.0, static_cast<double>(r.questions));
  const double nt = std::max<double>(1.0, static_cast<double>(a.tables.size()));
  const double nc = std::max<double>(1.0, static_cast<double>(a.columns.size()));
  for (const Prf& x : a.tables)
    r.table_p += x.p / nt, r.table_r += x.r / nt, r.table_f1 += x.f1 / nt;
  for (const Prf& x : a.columns) {
    r.column_p += x.p / nc, r.column_r += x.r / nc, r.column_f1 += x.f1 / nc;
  }
  for (size_t i = 0; i < a.n_tables.size(); ++i) {
    r.avg_tables += a.n_tables[i] / n, r.avg_columns += a.n_columns[i] / n;
  }
  r.gold_less = a.gold_less;
  if (a.gold_less > 0) r.gold_less_columns = a.gold_less_columns / static_cast<double>(a.gold_less);
  r.p50_ms = Percentile(a.ms, 0.5);
  r.p99_ms = Percentile(a.ms, 0.99);
  if (a.attempted > 0) {
    r.exec_accuracy = static_cast<double>(a.correct) / static_cast<double>(a.attempted);
  }
  r.executed = a.executed;
  r.exec_attempted = a.attempted;
  r.exec_correct = a.correct;
  r.gold_errors = a.gold_errors;
  r.exec_errors = a.errors;
  r.truncated = a.truncated;
  r.no_data = a.no_data;
  return r;
}

// The evaluation of one dataset: every question linked by every method,
// scored against the gold tables and columns and, with `execute`, the SQL
// the chat model writes from each link run against the gold result.
class DatasetEvaluation {
 public:
  DatasetEvaluation(const SqlEvalOptions& o, const std::vector<MethodSpec>& methods,
                    ChatModel* chat, Dataset* d, std::ofstream* records)
      : o_(o), methods_(methods), chat_(chat), d_(*d), records_(*records) {
    // Rows compared per result: a higher limit than for answers; a result
    // still over it counts as a mismatch (SameExecutionResult).
    limits_ = o.ask.limits;
    limits_.max_rows = o.max_rows;
  }

  Status Run(bool quiet) {
    for (size_t i = 0; i < d_.tasks.size(); ++i) {
      if (d_.tasks[i].error.empty()) FLOWRAG_RETURN_IF_ERROR(EvaluateTask(d_.tasks[i]));
      if (!quiet && (i + 1) % 100 == 0) {
        std::fprintf(stderr, "%s: %zu/%zu questions\n", d_.name.c_str(), i + 1, d_.tasks.size());
      }
    }
    return Status::Ok();
  }

  void AppendRows(std::vector<SqlEvalRow>* rows) {
    for (const MethodSpec& spec : methods_)
      rows->push_back(Summarize(d_.name, spec.name, acc_[spec.name]));
  }

 private:
  // What a question is executed against: its database (null when it is not
  // executed) and the gold result, once per question (every method is
  // scored against it).
  struct Gold {
    bool execute = false;
    ReadOnlyDatabase* db = nullptr;
    Result<SqlResultSet> result = Status::Internal("not run");
  };

  Gold RunGold(const SqlTask& t) {
    Gold g;
    g.execute = o_.execute && d_.files.count(t.db_id);
    if (!g.execute) return g;
    auto& slot = open_[t.db_id];
    if (!slot) {
      auto opened = ReadOnlyDatabase::Open(d_.files.at(t.db_id));
      if (opened.ok()) {
        slot = std::move(opened).value();
      } else {
        g.result = opened.status();
      }
    }
    if (slot) {
      g.db = slot.get();
      g.result = g.db->Execute(t.gold_sql, limits_);
    }
    return g;
  }

  Status EvaluateTask(const SqlTask& t) {
    const SchemaLinker& linker = *d_.linkers.at(t.db_id);
    const Gold gold = RunGold(t);
    size_t qafd_columns = SIZE_MAX;  // QAFD's output size, for bm25-matched
    for (const MethodSpec& spec : methods_) {
      SchemaLinkOptions lo = o_.link;
      if (spec.matched) {
        if (qafd_columns == SIZE_MAX) {
          FLOWRAG_ASSIGN_OR_RETURN(SchemaLink q,
                                   linker.Link(t.question, LinkMethod::kQafd, o_.link));
          qafd_columns = Names(q.columns).size();
        }
        lo.top_columns = qafd_columns;
        lo.top_k = qafd_columns == 0 ? 0 : lo.top_k;
      }
      FLOWRAG_ASSIGN_OR_RETURN(SchemaLink link, linker.Link(t.question, spec.method, lo));
      if (spec.matched) link.method = spec.name;
      if (spec.method == LinkMethod::kQafd) qafd_columns = Names(link.columns).size();
      Accumulator& a = acc_[spec.name];
      nlohmann::json rec = ScoreLink(t, spec.method, link, &a);
      ScoreExecution(t, linker, spec.method, lo, gold, &a, &rec);
      if (records_) {
        records_ << rec.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      }
    }
    return Status::Ok();
  }

  // The link's scores against the gold tables and columns, counted in `a`;
  // returns the question's record.
  nlohmann::json ScoreLink(const SqlTask& t, LinkMethod m, const SchemaLink& link,
                           Accumulator* a) const {
    const auto gold_tables = Lower(t.gold.tables), gold_columns = Lower(t.gold.columns);
    const auto tables = Names(link.tables), columns = Names(link.columns);
    if (!gold_tables.empty()) a->tables.push_back(Score(gold_tables, tables));
    if (gold_columns.empty()) {
      ++a->gold_less;
      a->gold_less_columns += static_cast<double>(columns.size());
    } else {
      a->columns.push_back(Score(gold_columns, columns));
    }
    ++a->questions;
    a->ms.push_back(link.time_ms);
    a->n_tables.push_back(static_cast<double>(tables.size()));
    a->n_columns.push_back(static_cast<double>(columns.size()));
    nlohmann::json rec = {{"dataset", d_.name},
                          {"id", t.id},
                          {"db", t.db_id},
                          {"method", link.method},
                          {"question", t.question},
                          {"gold_tables", gold_tables},
                          {"gold_columns", gold_columns},
                          {"tables", tables},
                          {"columns", columns},
                          {"time_ms", link.time_ms}};
    if (m == LinkMethod::kQafd) {
      nlohmann::json scored = nlohmann::json::array();
      for (const LinkedItem& c : link.columns) scored.push_back({c.name, c.score, c.why});
      rec["column_scores"] = scored;
      rec["sources"] = link.sources.size();
      rec["scaled_sources"] = link.scaled_sources;
    }
    return rec;
  }

  // With `execute`: the chat model writes SQL from the link's schema, and
  // its result is compared with the gold one.
  void ScoreExecution(const SqlTask& t, const SchemaLinker& linker, LinkMethod m,
                      const SchemaLinkOptions& lo, const Gold& gold, Accumulator* a,
                      nlohmann::json* rec) {
    if (o_.execute && !gold.execute) {
      ++a->no_data;
      (*rec)["skipped"] = "no .sqlite file for this database";
      return;
    }
    if (!gold.execute) return;
    if (!gold.result.ok()) {
      ++a->gold_errors;  // not the model's fault: excluded from the accuracy
      (*rec)["gold_error"] = gold.result.status().ToString();
      return;
    }
    SqlAskOptions ask = o_.ask;
    ask.method = std::string(LinkMethodName(m));
    ask.link = lo;
    ask.evidence = t.evidence;
    ask.limits = limits_;
    ++a->attempted;
    Result<SqlAnswer> answer = WriteAndRunSql(*chat_, *gold.db, linker, t.question, ask);
    bool ok = false;
    if (!answer.ok()) {  // a chat error: this question is wrong, the others go on
      ++a->errors;
      (*rec)["error"] = answer.status().ToString();
      (*rec)["executed"] = false;
    } else {
      const bool ordered = ToLowerAscii(t.gold_sql).find("order by") != std::string::npos;
      const bool truncated =
          answer->executed && (answer->result.truncated || gold.result->truncated);
      if (answer->executed) ok = SameExecutionResult(*gold.result, answer->result, ordered);
      a->executed += answer->executed;
      a->truncated += truncated;
      (*rec)["sql"] = answer->sql;
      (*rec)["executed"] = answer->executed;
      if (truncated) (*rec)["truncated"] = true;
      if (!answer->executed && !answer->attempts.empty()) {
        (*rec)["error"] = answer->attempts.back().error;
      }
    }
    a->correct += ok;
    (*rec)["correct"] = ok;
  }

  const SqlEvalOptions& o_;
  const std::vector<MethodSpec>& methods_;
  ChatModel* chat_;
  Dataset& d_;
  std::ofstream& records_;
  SqlLimits limits_;
  std::map<std::string, Accumulator> acc_;
  std::map<std::string, std::unique_ptr<ReadOnlyDatabase>> open_;
};

}  // namespace

bool SameExecutionResult(const SqlResultSet& gold, const SqlResultSet& predicted, bool ordered) {
  if (gold.truncated || predicted.truncated) return false;
  if (gold.rows.empty() && predicted.rows.empty()) return true;
  if (gold.rows.size() != predicted.rows.size()) return false;
  const size_t width = gold.rows[0].size();
  for (const auto* r : {&gold, &predicted}) {
    for (const auto& row : r->rows) {
      if (row.size() != width) return false;
    }
  }
  const size_t n = gold.rows.size();
  auto cells = [&](const SqlResultSet& r) {
    std::vector<std::vector<std::string>> out(width, std::vector<std::string>(n));  // column-major
    for (size_t i = 0; i < n; ++i) {
      for (size_t c = 0; c < width; ++c) out[c][i] = Cell(r.rows[i][c]);
    }
    return out;
  };
  const auto g = cells(gold), p = cells(predicted);
  // Candidates for each gold column: predicted columns holding the same values.
  auto signature = [&](std::vector<std::string> column) {
    if (!ordered) std::sort(column.begin(), column.end());
    return column;
  };
  std::vector<std::vector<std::string>> gs, ps;
  for (size_t c = 0; c < width; ++c) gs.push_back(signature(g[c])), ps.push_back(signature(p[c]));
  std::vector<std::vector<size_t>> candidates(width);
  for (size_t i = 0; i < width; ++i) {
    for (size_t j = 0; j < width; ++j) {
      if (gs[i] == ps[j]) candidates[i].push_back(j);
    }
    if (candidates[i].empty()) return false;
  }
  auto rows_of = [&](const std::vector<std::vector<std::string>>& cols,
                     const std::vector<size_t>& order) {
    std::vector<std::string> rows(n);
    for (size_t i = 0; i < n; ++i) {
      for (size_t c : order) rows[i] += cols[c][i] + "\x1f";
    }
    if (!ordered) std::sort(rows.begin(), rows.end());
    return rows;
  };
  std::vector<size_t> identity(width);
  for (size_t c = 0; c < width; ++c) identity[c] = c;
  const std::vector<std::string> gold_rows = rows_of(g, identity);
  std::vector<size_t> perm(width);
  std::vector<bool> used(width, false);
  size_t tries = 0;
  // Depth-first over the assignments gold column i -> predicted column perm[i].
  auto search = [&](auto& self, size_t i) -> bool {
    if (i == width) return ++tries <= kMaxColumnPermutations && rows_of(p, perm) == gold_rows;
    for (size_t j : candidates[i]) {
      if (used[j]) continue;
      used[j] = true;
      perm[i] = j;
      if (self(self, i + 1)) return true;
      used[j] = false;
      if (tries >= kMaxColumnPermutations) return false;
    }
    return false;
  };
  return search(search, 0);
}

Result<std::vector<SqlEvalRow>> EvaluateSql(const SqlEvalOptions& o, bool quiet) {
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<ChatModel> chat, EvalChatModel(o));
  if (o.spider.empty() && o.spider2.empty() && o.bird.empty()) {
    return Status::InvalidArgument("sql eval: give --spider DIR, --spider2 DIR and/or --bird DIR");
  }
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<MethodSpec> methods, ParseMethods(o.methods));
  std::ofstream records;
  if (!o.records.empty()) {
    records.open(o.records);
    if (!records) return Status::IoError(o.records + ": cannot write");
  }
  std::vector<SqlEvalRow> rows;
  for (int which = 0; which < 3; ++which) {
    const std::string& dir = which == 0 ? o.spider : which == 1 ? o.spider2 : o.bird;
    if (dir.empty()) continue;
    Dataset d;
    FLOWRAG_RETURN_IF_ERROR(which == 0   ? LoadSpider(dir, chat.get(), &d)
                            : which == 1 ? LoadSpider2(dir, chat.get(), &d)
                                         : LoadBirdDataset(dir, chat.get(), &d));
    if (o.limit > 0 && d.tasks.size() > o.limit) d.tasks.resize(o.limit);
    if (o.execute && !quiet) WarnMissingDatabases(d);
    DatasetEvaluation evaluation(o, methods, chat.get(), &d, &records);
    FLOWRAG_RETURN_IF_ERROR(evaluation.Run(quiet));
    evaluation.AppendRows(&rows);
  }
  return rows;
}

}  // namespace flowrag
