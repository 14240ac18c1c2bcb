// sql_link_latency: schema-linking latency per question (issue 7, acceptance
// 4) on a real and a synthetic schema, through the public API
// (SqlDatabase::Open, Link).
//
//   real:      a Spider database and the dev.json questions asked of it
//              (default: student_transcripts_tracking, the largest dev
//              schema: 11 tables, 56 columns);
//   synthetic: a SQLite file of T tables × C columns (default 200 × 50 =
//              10,000 columns), each table with an id primary key and a
//              foreign key to the previous table (a chain) plus a random
//              earlier table, 20 rows of text values; questions name one
//              random table's column and a value of another column.
//
// Usage: sql_link_latency SPIDER_DIR [db_id] [tables=200] [columns=50] [runs=5]
// Prints a Markdown table (bench/sql_linking.sh appends it to
// bench/out/sql_linking.md): per schema and method, the open time
// (introspection, value index, node embeddings; warnings if the open time
// limit cut it short) and the p50 / p99 link latency in ms over all
// questions, the median of `runs` runs.
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flowrag/sql.h"

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point a) { return std::chrono::duration<double, std::milli>(Clock::now() - a).count(); }

double Pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

double Median(std::vector<double> v) { return Pct(std::move(v), 0.5); }

const char* kWords[] = {"customer", "order", "product", "invoice", "region", "supplier", "employee",
                        "payment", "shipment", "account", "branch", "category", "contract", "device",
                        "event", "flight", "garage", "hotel", "item", "journal", "ledger", "member"};

std::string MakeSynthetic(size_t tables, size_t columns, std::vector<std::string>* questions) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("flowrag_sql_synthetic_" + std::to_string(::getpid()) + ".sqlite"))
                               .string();
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  std::mt19937 rng(7);
  std::string sql = "BEGIN;";
  auto table_name = [](size_t t) { return std::string(kWords[t % 22]) + "_" + std::to_string(t); };
  for (size_t t = 0; t < tables; ++t) {
    sql += "CREATE TABLE " + table_name(t) + "(id INTEGER PRIMARY KEY";
    if (t > 0) sql += ", prev_id INTEGER REFERENCES " + table_name(t - 1) + "(id)";
    if (t > 1) sql += ", link_id INTEGER REFERENCES " + table_name(rng() % (t - 1)) + "(id)";
    for (size_t c = (t > 1 ? 3 : t > 0 ? 2 : 1); c < columns; ++c) {
      sql += ", " + std::string(kWords[(t + c) % 22]) + "_attr_" + std::to_string(c) + " TEXT";
    }
    sql += ");";
  }
  sql += "COMMIT;";
  sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  sql = "BEGIN;";
  for (size_t t = 0; t < tables; ++t) {
    for (int r = 0; r < 20; ++r) {
      sql += "INSERT INTO " + table_name(t) + "(id, " + kWords[(t + columns - 1) % 22] + "_attr_" +
             std::to_string(columns - 1) + ") VALUES (" + std::to_string(r) + ", 'value" +
             std::to_string(t) + "x" + std::to_string(r) + "');";
    }
  }
  sql += "COMMIT;";
  sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(db);
  for (int q = 0; q < 100; ++q) {
    const size_t t = rng() % tables, c = 3 + rng() % (columns - 3), t2 = rng() % tables;
    questions->push_back("What is the " + std::string(kWords[(t + c) % 22]) + " attr " + std::to_string(c) +
                         " of " + kWords[t % 22] + " " + std::to_string(t) + " linked to value" +
                         std::to_string(t2) + "x" + std::to_string(q % 20) + "?");
  }
  return path;
}

int Run(const std::string& label, const std::string& path, const std::vector<std::string>& questions, int runs) {
  auto t0 = Clock::now();
  auto db = flowrag::SqlDatabase::Open(path);
  if (!db.ok()) {
    std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
    return 1;
  }
  const double open_ms = Ms(t0);
  for (const std::string& w : (*db)->warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
  for (const char* method : {"qafd", "bm25", "dense", "all"}) {
    std::vector<double> p50s, p99s;
    size_t linked_columns = 0;
    for (int r = 0; r < runs; ++r) {
      std::vector<double> ms;
      linked_columns = 0;
      for (const std::string& q : questions) {
        auto start = Clock::now();
        auto link = (*db)->Link(q, method);
        ms.push_back(Ms(start));
        if (!link.ok()) {
          std::fprintf(stderr, "%s\n", link.status().ToString().c_str());
          return 1;
        }
        linked_columns += link->columns.size();
      }
      p50s.push_back(Pct(ms, 0.5));
      p99s.push_back(Pct(ms, 0.99));
    }
    std::printf("| %s | %zu | %zu | %zu | %.0f%s | %s | %.3f | %.3f | %.1f |\n", label.c_str(), (*db)->num_tables(),
                (*db)->num_columns(), questions.size(), open_ms, (*db)->warnings().empty() ? "" : " (cut short)",
                method, Median(p50s), Median(p99s),
                static_cast<double>(linked_columns) / static_cast<double>(std::max<size_t>(1, questions.size())));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: sql_link_latency SPIDER_DIR [db_id] [tables] [columns] [runs]\n");
    return 2;
  }
  const std::string spider = argv[1];
  const std::string db_id = argc > 2 ? argv[2] : "student_transcripts_tracking";
  const size_t tables = argc > 3 ? std::stoul(argv[3]) : 200;
  const size_t columns = argc > 4 ? std::stoul(argv[4]) : 50;
  const int runs = argc > 5 ? std::stoi(argv[5]) : 5;
  std::vector<std::string> questions;
  std::ifstream in(spider + "/dev.json");
  for (const auto& q : nlohmann::json::parse(in)) {
    if (q.at("db_id") == db_id) questions.push_back(q.at("question").get<std::string>());
  }
  if (questions.empty()) {
    std::fprintf(stderr, "%s/dev.json: no question for db_id \"%s\"\n", spider.c_str(), db_id.c_str());
    return 2;
  }
  std::printf("| schema | tables | columns | questions | open ms | method | p50 ms | p99 ms | columns/q |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  if (Run(db_id, spider + "/database/" + db_id + "/" + db_id + ".sqlite", questions, runs) != 0) return 1;
  std::vector<std::string> synthetic;
  const std::string path = MakeSynthetic(tables, columns, &synthetic);
  const int rc = Run("synthetic", path, synthetic, runs);
  std::filesystem::remove(path);
  return rc;
}
