// The index run's check for damaged vectors (Store::CheckVectorSizes, issue
// 32) costs O(log n + damaged rows), not a scan of the embedding table
// (issue 34: a one-document insert at any corpus size): both databases
// answer its statement from the index embeddings_sizes (model, dim,
// length(vector)), it finds every row the scan found, and a store written
// before the index gains it at its first writable open. Each TEST_P runs on
// SQLite and on PostgreSQL (backend_util.h). tests/damaged_store_test.cc
// checks the whole index run over damaged stores.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend_util.h"
#include "sqldb/connection.h"
#include "storage/schema.h"
#include "storage/store.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

constexpr char kModel[] = "m";
constexpr char kIndex[] = "embeddings_sizes";
constexpr size_t kDim = 8;

class VectorCheckTest : public BackendTest {
 protected:
  bool Sqlite() const { return GetParam() == Backend::kSqlite; }

  std::unique_ptr<Store> Open(const std::string& location, bool read_only = false) {
    StoreOptions options;
    options.read_only = read_only;
    auto store = Store::Open(location, options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // Vectors of `dim` floats for `model` under hashes first..first+n-1.
  static void Put(Store& store, std::string_view model, uint64_t first, size_t n, size_t dim) {
    std::vector<uint64_t> hashes(n);
    for (size_t i = 0; i < n; ++i) hashes[i] = first + i;
    FloatMatrix vectors(n, dim);
    for (size_t i = 0; i < vectors.data.size(); ++i) vectors.data[i] = 0.5f;
    ASSERT_TRUE(store.PutEmbeddings(model, hashes, vectors).ok());
  }

  // SQL run on the store as an outside program would.
  std::unique_ptr<SqlConnection> Connect(const std::string& location) {
    auto conn = OpenSqlConnection(location, {});
    EXPECT_TRUE(conn.ok()) << conn.status().ToString();
    return conn.ok() ? std::move(*conn) : nullptr;
  }
  void Exec(const std::string& location, const std::string& sql) {
    auto conn = Connect(location);
    ASSERT_NE(conn, nullptr);
    ASSERT_TRUE(conn->Exec(sql).ok()) << sql;
  }

  // Whether the store has the index, from the database's catalogue.
  bool HasIndex(const std::string& location) {
    auto conn = Connect(location);
    if (conn == nullptr) return false;
    auto s = conn->Prepare(Sqlite() ? "SELECT 1 FROM sqlite_master WHERE type = 'index' AND "
                                      "name = ?"
                                    : "SELECT 1 FROM pg_catalog.pg_indexes WHERE schemaname = "
                                      "current_schema() AND indexname = ?");
    EXPECT_TRUE(s.ok());
    if (!s.ok()) return false;
    s->Bind(1, std::string_view(kIndex));
    auto row = s->Step();
    EXPECT_TRUE(row.ok());
    return row.ok() && *row;
  }

  // The plan of the check's statement for (kModel, kDim), one line per row
  // of EXPLAIN QUERY PLAN (SQLite: its `detail`) or EXPLAIN (PostgreSQL).
  std::vector<std::string> CheckPlan(const std::string& location) {
    auto conn = Connect(location);
    std::vector<std::string> lines;
    if (conn == nullptr) return lines;
    auto s = conn->Prepare(std::string(Sqlite() ? "EXPLAIN QUERY PLAN " : "EXPLAIN ") +
                           kBadVectorSizesQuery);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) return lines;
    s->Bind(1, std::string_view(kModel))
        .Bind(2, static_cast<int64_t>(kDim))
        .Bind(3, static_cast<int64_t>((kDim + 7) / 8))
        .Bind(4, static_cast<int64_t>(2 * kDim))
        .Bind(5, static_cast<int64_t>(4 * kDim));
    while (true) {
      auto row = s->Step();
      EXPECT_TRUE(row.ok()) << row.status().ToString();
      if (!row.ok() || !*row) break;
      lines.emplace_back(s->Text(Sqlite() ? 3 : 0));
    }
    return lines;
  }

  // Every read of `embeddings` in `plan` is a search of the index, one per
  // range probe: no scan of the table, its primary key or the index.
  void ExpectAnsweredFromTheIndex(const std::vector<std::string>& plan) {
    std::string all;
    for (const std::string& line : plan) all += line + "\n";
    int probes = 0;
    for (const std::string& line : plan) {
      if (Sqlite()) {
        if (line.find("embeddings") == std::string::npos) continue;
        const bool search =
            line.rfind("SEARCH embeddings USING COVERING INDEX embeddings_sizes (", 0) == 0 ||
            line.rfind("SEARCH embeddings USING INDEX embeddings_sizes (", 0) == 0;
        EXPECT_TRUE(search) << line << "\nin\n" << all;
        probes += search;
      } else {
        EXPECT_EQ(line.find("Seq Scan"), std::string::npos) << all;
        // Index Scan, Index Only Scan or (without statistics) a Bitmap
        // Index Scan whose heap scan visits the matching rows' pages only.
        const bool probe =
            line.find("Index Scan using embeddings_sizes on embeddings") != std::string::npos ||
            line.find("Index Only Scan using embeddings_sizes on embeddings") !=
                std::string::npos ||
            line.find("Bitmap Index Scan on embeddings_sizes") != std::string::npos;
        probes += probe;
      }
    }
    EXPECT_EQ(probes, 5) << all;
  }
};

TEST_P(VectorCheckTest, TheCheckIsAnsweredFromTheIndex) {
  const std::string location = NewLocation();
  {
    auto store = Open(location);
    ASSERT_NE(store, nullptr);
    // Enough rows that a scan would cost the planner more than the probes,
    // and another model's rows beside them.
    Put(*store, kModel, 1, 4096, kDim);
    Put(*store, "other", 1, 1024, 2 * kDim);
    EXPECT_TRUE(store->CheckVectorSizes(kModel, kDim).ok());
  }
  EXPECT_TRUE(HasIndex(location));
  // Without statistics, and with them (ANALYZE: what SQLite's
  // PRAGMA optimize and PostgreSQL's autovacuum gather).
  ExpectAnsweredFromTheIndex(CheckPlan(location));
  Exec(location, "ANALYZE");
  ExpectAnsweredFromTheIndex(CheckPlan(location));
}

// Rows of the model below and above the dimension, at the dimension with a
// vector of no size a vector of its dimension has (empty, between the
// float16 and the float form, longer): each range probe finds its own,
// another model's rows count for nothing, a float row (what an older build
// wrote) beside the float16 ones is no damage, and the message names the
// count and the least text hash, as the scan did.
TEST_P(VectorCheckTest, EveryDamagedRowIsCountedOnce) {
  const std::string location = NewLocation();
  auto store = Open(location);
  ASSERT_NE(store, nullptr);
  Put(*store, kModel, 100, 50, kDim);
  Put(*store, "other", 1, 10, kDim);
  ASSERT_TRUE(store->CheckVectorSizes(kModel, kDim).ok());
  // Model m's vector of text hash `hash` set to `bytes` zero bytes.
  auto zeros = [&](int bytes, int hash) {
    const std::string n = std::to_string(bytes);
    return "UPDATE embeddings SET vector = " +
           (Sqlite() ? "zeroblob(" + n + ")" : "decode(repeat('00', " + n + "), 'hex')") +
           " WHERE model = 'm' AND text_hash = " + std::to_string(hash);
  };
  std::vector<std::string> damages = {
      "UPDATE embeddings SET dim = 7 WHERE model = 'm' AND text_hash = 140",
      "UPDATE embeddings SET dim = 9 WHERE model = 'm' AND text_hash = 141",
      zeros(31, 142),
      zeros(33, 143),
      zeros(24, 147),
      zeros(32, 148),
      zeros(0, 123),
      "UPDATE embeddings SET dim = 9 WHERE model = 'other'",
  };
  if (Sqlite()) {
    // SQLite keeps any type in any column: values the integer ranges of the
    // index order before or after every integer.
    damages.push_back("UPDATE embeddings SET dim = 'eight' WHERE model = 'm' AND text_hash = 144");
    damages.push_back("UPDATE embeddings SET dim = 8.5 WHERE model = 'm' AND text_hash = 145");
    damages.push_back("UPDATE embeddings SET dim = x'08' WHERE model = 'm' AND text_hash = 146");
  }
  for (const std::string& sql : damages) Exec(location, sql);
  // Not 148 (8 floats) nor 149 (a size the sparse form may have: its bitmap
  // is checked when the vector is read).
  Exec(location,
       "UPDATE embeddings SET vector = substr(vector, 1, 15) WHERE model = 'm' AND text_hash = 149");
  const size_t damaged = Sqlite() ? 9 : 6;

  Status st = store->CheckVectorSizes(kModel, kDim);
  ASSERT_EQ(st.code(), StatusCode::kCorruption) << st.ToString();
  EXPECT_NE(st.message().find("table embeddings: " + std::to_string(damaged) +
                              " cached vectors of model m do not fit 8 coordinates (1-16 or 32 "
                              "bytes), e.g. text hash 123 (dim 8, 0 bytes); the store is damaged"),
            std::string::npos)
      << st.message();

  // The scan the check replaced counts the same rows.
  auto conn = Connect(location);
  ASSERT_NE(conn, nullptr);
  auto scan = conn->Prepare(
      "SELECT count(*), min(text_hash) FROM embeddings WHERE model = ?1 AND (dim <> ?2 OR "
      "NOT (length(vector) BETWEEN (?2 + 7) / 8 AND 2 * ?2 OR length(vector) = 4 * ?2))");
  ASSERT_TRUE(scan.ok());
  scan->Bind(1, std::string_view(kModel)).Bind(2, static_cast<int64_t>(kDim));
  ASSERT_TRUE(scan->Step().value());
  EXPECT_EQ(scan->Int(0), static_cast<int64_t>(damaged));
  EXPECT_EQ(scan->Int(1), 123);
}

// With no dimension given, the rows must have the dimension of the model's
// first row by text hash (as before the index, which orders by dim).
TEST_P(VectorCheckTest, WithoutADimensionTheFirstRowByHashSetsIt) {
  const std::string location = NewLocation();
  auto store = Open(location);
  ASSERT_NE(store, nullptr);
  Put(*store, kModel, 1, 1, kDim);
  Put(*store, kModel, 2, 3, kDim / 2);
  Status st = store->CheckVectorSizes(kModel, 0);
  ASSERT_EQ(st.code(), StatusCode::kCorruption) << st.ToString();
  EXPECT_NE(st.message().find("3 cached vectors of model m do not fit 8 coordinates (1-16 or 32 "
                              "bytes), e.g. text hash 2 (dim 4, 8 bytes)"),
            std::string::npos)
      << st.message();
  EXPECT_TRUE(store->CheckVectorSizes("none", 0).ok());  // no rows: nothing to check
}

// A store an older build wrote has no index: a read-only open leaves it so
// (and, SQLite, the file's bytes), the first writable open adds it, and
// later writable opens write nothing for it.
TEST_P(VectorCheckTest, AStoreWithoutTheIndexGainsItAtItsFirstWritableOpen) {
  const std::string location = NewLocation();
  {
    auto store = Open(location);
    ASSERT_NE(store, nullptr);
    Put(*store, kModel, 1, 4096, kDim);  // enough that PostgreSQL plans the probes
  }
  ASSERT_TRUE(HasIndex(location));  // a new store has it
  Exec(location, std::string("DROP INDEX ") + kIndex);
  if (Sqlite()) Exec(location, "PRAGMA wal_checkpoint(TRUNCATE)");
  ASSERT_FALSE(HasIndex(location));
  const std::string bytes = Sqlite() ? testing::ReadFile(location) : "";
  {
    auto reader = Open(location, /*read_only=*/true);
    ASSERT_NE(reader, nullptr);
  }
  EXPECT_FALSE(HasIndex(location));
  if (Sqlite()) {
    EXPECT_TRUE(testing::ReadFile(location) == bytes) << "a read-only open wrote";
  }
  {
    auto writer = Open(location);
    ASSERT_NE(writer, nullptr);
    EXPECT_TRUE(HasIndex(location));
    EXPECT_EQ(writer->format_version(), kStoreFormatVersion);
    Exec(location, "UPDATE embeddings SET dim = 9 WHERE text_hash = 5");
    EXPECT_EQ(writer->CheckVectorSizes(kModel, kDim).code(), StatusCode::kCorruption);
  }
  ExpectAnsweredFromTheIndex(CheckPlan(location));
  if (!Sqlite()) return;
  Exec(location, "PRAGMA wal_checkpoint(TRUNCATE)");
  const std::string with_index = testing::ReadFile(location);
  {
    auto writer = Open(location);
    ASSERT_NE(writer, nullptr);
  }
  Exec(location, "PRAGMA wal_checkpoint(TRUNCATE)");
  EXPECT_TRUE(testing::ReadFile(location) == with_index) << "a second writable open wrote";
}

// A store created at an older format (standing for one an older build
// wrote) migrates, then gains the index.
TEST(VectorCheckMigrationTest, AFormatOneStoreGainsTheIndexAfterItsMigration) {
  testing::TempDir dir;
  const std::string path = dir.File("old.db");
  {
    StoreOptions old;
    old.create_format_version = 1;
    auto store = Store::Open(path, old);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
  }
  auto conn = OpenSqlConnection(path, {});
  ASSERT_TRUE(conn.ok());
  auto has = [&]() {
    auto s = (*conn)->Prepare(
        "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'embeddings_sizes'");
    EXPECT_TRUE(s.ok() && s->Step().value());
    return s.ok() && s->Int(0) == 1;
  };
  EXPECT_FALSE(has());
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->format_version(), kStoreFormatVersion);
  EXPECT_TRUE(has());
}

INSTANTIATE_TEST_SUITE_P(Backends, VectorCheckTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres), BackendName);

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
