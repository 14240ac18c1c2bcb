// An index run over a damaged store stops before it writes, names what is
// damaged and leaves the store as it was (issue 32): the cached vectors a
// run rebuilds its snapshot from, overwritten in several ways. Before the
// check, such a run wrote its documents, marked itself done, then failed,
// and `stats` and `query`, which had worked, failed afterwards.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend_util.h"
#include "flowrag/engine.h"
#include "graph_dump.h"
#include "sqldb/connection.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

const std::string kDemo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";

// Ways a store's embedding blobs get overwritten (SQL run on the store by
// hand, a tool that rewrote the column, a bad restore), in each dialect.
struct Damage {
  const char* name;
  const char* sqlite;
  const char* postgres;
};
const Damage kDamages[] = {
    {"one_byte_blobs", "UPDATE embeddings SET vector = x'00'",
     "UPDATE embeddings SET vector = decode('00', 'hex')"},
    {"empty_blobs", "UPDATE embeddings SET vector = x''",
     "UPDATE embeddings SET vector = decode('', 'hex')"},
    {"one_truncated_vector",
     "UPDATE embeddings SET vector = substr(vector, 1, 8) WHERE text_hash = (SELECT "
     "min(text_hash) FROM embeddings)",
     "UPDATE embeddings SET vector = substr(vector, 1, 8) WHERE text_hash = (SELECT "
     "min(text_hash) FROM embeddings)"},
    {"wrong_dimension_column", "UPDATE embeddings SET dim = dim + 1",
     "UPDATE embeddings SET dim = dim + 1"},
};

// Rows that tell two states of a store apart, one text each.
const char* const kStateQueries[] = {
    "SELECT key || '=' || value FROM meta ORDER BY key",
    "SELECT external_id || '|' || CAST(content_hash AS TEXT) FROM documents ORDER BY external_id",
    "SELECT CAST(id AS TEXT) || '|' || CAST(embed_hash AS TEXT) FROM passages ORDER BY id",
    "SELECT model || '|' || CAST(text_hash AS TEXT) || '|' || CAST(dim AS TEXT) || '|' || "
    "CAST(length(vector) AS TEXT) FROM embeddings ORDER BY model, text_hash",
    "SELECT CAST(id AS TEXT) || '|' || status FROM index_runs ORDER BY id",
    "SELECT CAST(passage_id AS TEXT) || '|' || status FROM extraction_state ORDER BY passage_id",
    "SELECT name || '|' || CAST(generation AS TEXT) || '|' || CAST(checksum AS TEXT) FROM "
    "snapshot_parts ORDER BY name",
};

class DamagedStoreTest : public BackendTest {
 protected:
  // Damages the store as an outside program would, then (SQLite) folds the
  // write-ahead log into the file, so the file's bytes are the store's.
  void Overwrite(const std::string& location, const Damage& damage) {
    auto conn = OpenSqlConnection(location, {});
    ASSERT_TRUE(conn.ok()) << conn.status().ToString();
    const bool sqlite = GetParam() == Backend::kSqlite;
    ASSERT_TRUE((*conn)->Exec(sqlite ? damage.sqlite : damage.postgres).ok());
    if (sqlite) {
      ASSERT_TRUE((*conn)->Exec("PRAGMA wal_checkpoint(TRUNCATE)").ok());
    }
  }
  // The store's state: the file's bytes (SQLite), the rows of
  // kStateQueries and the graph by content.
  std::string State(const std::string& location) {
    std::string out = GetParam() == Backend::kSqlite ? testing::ReadFile(location) : "";
    auto conn = OpenSqlConnection(location, {});
    EXPECT_TRUE(conn.ok());
    if (!conn.ok()) return out;
    for (const char* query : kStateQueries) {
      auto s = (*conn)->Prepare(query);
      EXPECT_TRUE(s.ok()) << query;
      if (!s.ok()) continue;
      out += std::string("\n#") + query;
      while (true) {
        auto row = s->Step();
        EXPECT_TRUE(row.ok()) << query;
        if (!row.ok() || !*row) break;
        out += "\n" + std::string(s->Text(0));
      }
    }
    const GraphDump graph = Dump(location);
    for (const auto* part : {&graph.entities, &graph.facts, &graph.mentions, &graph.synonyms}) {
      for (const std::string& row : *part) out += "\n" + row;
    }
    return out;
  }

};

TEST_P(DamagedStoreTest, AnIndexRunOverDamagedVectorsStopsBeforeWritingAndNamesTheDamage) {
  for (const Damage& damage : kDamages) {
    SCOPED_TRACE(damage.name);
    const std::string location = NewLocation();
    {
      auto engine = Engine::Open(location);
      ASSERT_TRUE(engine.ok()) << engine.status().ToString();
      ASSERT_TRUE((*engine)->Index({kDemo + "/people"}).ok());
    }
    Overwrite(location, damage);
    const std::string before = State(location);
    ASSERT_FALSE(before.empty());
    {
      auto engine = Engine::Open(location);
      ASSERT_TRUE(engine.ok()) << engine.status().ToString();
      auto run = (*engine)->Index({kDemo + "/places"});
      ASSERT_FALSE(run.ok()) << "the run over damaged vectors succeeded";
      EXPECT_EQ(run.status().code(), StatusCode::kCorruption) << run.status().ToString();
      const std::string message = run.status().message();
      EXPECT_NE(message.find("table embeddings"), std::string::npos) << message;
      EXPECT_NE(message.find("damaged"), std::string::npos) << message;
      EXPECT_LT(message.size(), 600u) << message;
      // The same for a write through the API.
      auto api = (*engine)->IndexDocuments({{"new", "A New Page", "Text of a new page."}});
      ASSERT_FALSE(api.ok());
      EXPECT_EQ(api.status().code(), StatusCode::kCorruption);
    }
    EXPECT_TRUE(State(location) == before) << "the store changed";

    // What worked before still works: stats and queries read the snapshot
    // parts, which the damage did not touch.
    EngineOptions read_only;
    read_only.read_only = true;
    auto reader = Engine::Open(location, read_only);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    auto stats = (*reader)->Stats();
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    auto answer = (*reader)->Query("Who designed the Brannock lens?", {});
    ASSERT_TRUE(answer.ok()) << answer.status().ToString();
    EXPECT_FALSE(answer->passages.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, DamagedStoreTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres), BackendName);

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
