// The knowledge graph end to end: offline extraction on the demo corpus,
// provenance (delete + re-add identity), abstractness, OpenIE import and
// snapshot swaps under concurrent readers.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <set>
#include <thread>

#include "engine/engine_impl.h"
#include "flowrag/engine.h"
#include "graph/knowledge_graph.h"
#include "vector/half_rows_index.h"
#include "vector/sparse_index.h"
#include "vector/flat_index.h"
#include "embed/hashed_embedder.h"
#include "graph/graph_vectors.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::TempDir;
using testing::WriteFile;

const std::string kDemo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";

EngineImpl* Impl(Engine* e) { return dynamic_cast<EngineImpl*>(e); }

// Every graph row, with ids replaced by names and passages by
// "document#ordinal", sorted: equal dumps mean equal graphs.
std::vector<std::string> DumpGraph(const std::string& db_path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  const char* queries[] = {
      "SELECT 'entity', name, type FROM entities",
      "SELECT 'key', k.key, d.external_id || '#' || p.ordinal, e.name FROM entity_keys k JOIN "
      "passages p ON p.id = k.passage_id JOIN documents d ON d.id = p.document_id JOIN entities e "
      "ON e.id = k.entity_id",
      "SELECT 'mention', d.external_id || '#' || p.ordinal, e.name, m.surface, m.type, m.count, "
      "m.defining FROM mentions m JOIN passages p ON p.id = m.passage_id JOIN documents d ON d.id "
      "= p.document_id JOIN entities e ON e.id = m.entity_id",
      "SELECT 'description', e.name, d.external_id || '#' || p.ordinal, x.text FROM descriptions "
      "x JOIN entities e ON e.id = x.entity_id JOIN passages p ON p.id = x.passage_id JOIN "
      "documents d ON d.id = p.document_id",
      "SELECT 'fact', s.name, r.text, o.name, d.external_id || '#' || p.ordinal FROM facts f JOIN "
      "relations r ON r.id = f.relation_id JOIN entities s ON s.id = f.subject_id JOIN entities o "
      "ON o.id = f.object_id JOIN fact_sources fs ON fs.fact_id = f.id JOIN passages p ON p.id = "
      "fs.passage_id JOIN documents d ON d.id = p.document_id",
      "SELECT 'synonym', min(a.name, b.name), max(a.name, b.name), round(s.similarity, 4) FROM "
      "synonyms s JOIN entities a ON a.id = s.a JOIN entities b ON b.id = s.b",
  };
  std::vector<std::string> rows;
  for (const char* q : queries) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, q, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::string row;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const unsigned char* t = sqlite3_column_text(st, c);
        row += (c ? " | " : "") + std::string(t ? reinterpret_cast<const char*>(t) : "NULL");
      }
      rows.push_back(row);
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::optional<uint32_t> FindEntity(const KnowledgeGraph& g, const std::string& name) {
  for (uint32_t e = 0; e < g.num_entities(); ++e) {
    if (g.EntityName(e) == name) return e;
  }
  return std::nullopt;
}

std::set<std::string> DocumentsMentioning(const Snapshot& s, uint32_t entity) {
  const KnowledgeGraph& g = *s.graph();
  const Csr& m = g.Edges(EdgeKind::kMentions);
  std::set<std::string> docs;
  for (uint64_t i = m.Begin(g.EntityNode(entity)); i < m.End(g.EntityNode(entity)); ++i) {
    docs.emplace(s.document_of(m.targets[i]).external_id);
  }
  return docs;
}

class DemoGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = Engine::Open(dir_.File("demo.db"));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
    auto r = engine_->Index({kDemo});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->extractor, "heuristic");
  }
  TempDir dir_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(DemoGraphTest, TitlesBecomeEntitiesWithDescriptions) {
  auto snap = Impl(engine_.get())->snapshot();
  const KnowledgeGraph* g = snap->graph();
  ASSERT_NE(g, nullptr);
  for (const char* title : {"Corin Aske", "Lantern Tide Festival", "River Ostrel",
                            "Greymantle Lighthouse", "Halloran-Vey Line"}) {
    auto e = FindEntity(*g, title);
    ASSERT_TRUE(e.has_value()) << title;
    EXPECT_EQ(g->EntityType(*e), "TITLE") << title;
  }
  EXPECT_EQ(g->num_descriptions(), 36u);  // one per document (its first sentence)
  auto ostrel = FindEntity(*g, "River Ostrel");
  bool described = false;
  for (uint32_t d = 0; d < g->num_descriptions(); ++d) {
    if (g->DescriptionEntity(d) == *ostrel) {
      described = true;
      EXPECT_NE(g->DescriptionText(d).find("principal river of the Merrow Coast"), std::string::npos);
    }
  }
  EXPECT_TRUE(described);
  // Dates and numbers are entities too.
  EXPECT_TRUE(FindEntity(*g, "212 km").has_value());
  auto stats = engine_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->graph.extracted_passages, stats->passages);
  EXPECT_GT(stats->graph.edges.at("RELATED_TO"), 100);
  EXPECT_LT(stats->graph.isolated_ratio, 0.2);
}

// lantern_tide_festival.md names its founder, whose own document is
// people/corin_aske.md: the two passages are connected only through the
// mention of "Corin Aske" (passage → entity → passage).
TEST_F(DemoGraphTest, MentionLinksDocumentsTwoHopsApart) {
  auto snap = Impl(engine_.get())->snapshot();
  const KnowledgeGraph& g = *snap->graph();
  auto aske = FindEntity(g, "Corin Aske");
  ASSERT_TRUE(aske.has_value());
  std::set<std::string> docs = DocumentsMentioning(*snap, *aske);
  EXPECT_TRUE(docs.count("people/corin_aske.md"));
  EXPECT_TRUE(docs.count("lantern_tide_festival.md"));
  // A fact joins the festival and its founder.
  auto festival = FindEntity(g, "Lantern Tide Festival");
  ASSERT_TRUE(festival.has_value());
  const Csr& rel = g.Edges(EdgeKind::kRelatedTo);
  bool related = false;
  for (uint64_t i = rel.Begin(g.EntityNode(*festival)); i < rel.End(g.EntityNode(*festival)); ++i) {
    related |= rel.targets[i] == g.EntityNode(*aske);
  }
  EXPECT_TRUE(related);
}

TEST_F(DemoGraphTest, AddingADocumentLinksOldPassagesToItsTitle) {
  // "Cairn Moss" is named in places/river_ostrel.md but has no document yet.
  auto before = Impl(engine_.get())->snapshot();
  WriteFile(dir_.File("extra/cairn_moss.md"),
            "# Cairn Moss\n\nCairn Moss is a raised peat bog in the Hallam Hills.\n");
  auto r = engine_->Index({dir_.File("extra")});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->passages_extracted, 1u);  // only the new passage is extracted
  auto snap = Impl(engine_.get())->snapshot();
  auto moss = FindEntity(*snap->graph(), "Cairn Moss");
  ASSERT_TRUE(moss.has_value());
  std::set<std::string> docs = DocumentsMentioning(*snap, *moss);
  EXPECT_TRUE(docs.count("cairn_moss.md"));
  EXPECT_TRUE(docs.count("places/river_ostrel.md"));  // relinked old passage
}

TEST_F(DemoGraphTest, DeleteAndReAddGiveTheSameGraph) {
  const std::string db = dir_.File("demo.db");
  const std::vector<std::string> before = DumpGraph(db);
  ASSERT_GT(before.size(), 1000u);
  ASSERT_TRUE(engine_->DeleteDocument("people/corin_aske.md").ok());
  const std::vector<std::string> deleted = DumpGraph(db);
  EXPECT_LT(deleted.size(), before.size());
  for (const std::string& row : deleted) {
    EXPECT_EQ(row.find("people/corin_aske.md"), std::string::npos) << row;
  }
  // Re-index the corpus: only the deleted document is new.
  auto r = engine_->Index({kDemo});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->documents_added, 1u);
  const std::vector<std::string> after = DumpGraph(db);
  EXPECT_EQ(after, before);
}

// Re-adding a title named in many passages re-extracts them in several
// batches (a regression: the writes once ran inside the store's passage scan
// and deadlocked).
TEST_F(DemoGraphTest, RelinkingManyPassagesInSmallBatches) {
  const std::string db = dir_.File("demo.db");
  const std::vector<std::string> before = DumpGraph(db);
  ASSERT_TRUE(engine_->DeleteDocument("places/port_calder.md").ok());
  IndexOptions small;
  small.extract_batch_size = 2;
  auto r = engine_->Index({kDemo}, small);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->passages_relinked, 4u);  // "Port Calder" occurs all over the corpus
  EXPECT_EQ(DumpGraph(db), before);
}

// The default extraction batch (4,096 passages offline: the demo in one
// transaction) and one passage per transaction build the same graph.
TEST_F(DemoGraphTest, TheExtractionBatchSizeDoesNotChangeTheGraph) {
  const std::string one = dir_.File("one.db");
  {
    auto e = Engine::Open(one);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    IndexOptions o;
    o.extract_batch_size = 1;
    auto r = (*e)->Index({kDemo}, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_GT(r->passages_extracted, 1u);
  }
  EXPECT_EQ(DumpGraph(one), DumpGraph(dir_.File("demo.db")));
}

TEST_F(DemoGraphTest, DeleteOfUnknownDocumentChangesNothing) {
  const std::vector<std::string> before = DumpGraph(dir_.File("demo.db"));
  Status st = engine_->DeleteDocument("no/such/doc.md");
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find("no/such/doc.md"), std::string::npos);
  EXPECT_EQ(DumpGraph(dir_.File("demo.db")), before);
}

TEST_F(DemoGraphTest, SnapshotSwapsUnderConcurrentReaders) {
  std::atomic<bool> stop{false};
  std::atomic<int> queries{0}, failures{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      QueryOptions q;
      q.method = "hybrid";
      while (!stop) {
        auto r = engine_->Query("Who founded the Lantern Tide Festival?", q);
        if (!r.ok() || r->passages.empty()) ++failures;
        auto snap = Impl(engine_.get())->snapshot();
        if (snap->graph() == nullptr || snap->graph()->num_entities() == 0) ++failures;
        ++queries;
      }
    });
  }
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(engine_->DeleteDocument("people/corin_aske.md").ok());
    ASSERT_TRUE(engine_->Index({kDemo}).ok());
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(queries.load(), 10);
}

// d_v = tr Cov(passage vectors), checked against a direct covariance matrix.
TEST(AbstractnessTest, MatchesDirectCovarianceTrace) {
  std::mt19937 rng(3);
  std::normal_distribution<float> n(0, 1);
  FloatMatrix p(6, 4);
  for (float& v : p.data) v = n(rng);
  std::vector<std::vector<uint32_t>> ep = {{0, 1, 2}, {3}, {0, 1, 2, 3, 4, 5}, {4, 5}};
  std::vector<float> raw, norm;
  ComputeAbstractness(p, ep, &raw, &norm);
  for (size_t e = 0; e < ep.size(); ++e) {
    const size_t k = ep[e].size();
    double trace = 0;
    for (size_t d = 0; d < 4; ++d) {  // Cov[d][d] with the population (1/n) estimate
      double mean = 0;
      for (uint32_t i : ep[e]) mean += p.row(i)[d];
      mean /= k;
      double var = 0;
      for (uint32_t i : ep[e]) var += (p.row(i)[d] - mean) * (p.row(i)[d] - mean);
      trace += var / k;
    }
    EXPECT_NEAR(raw[e], trace, 1e-4) << e;
  }
  EXPECT_EQ(raw[1], 0.0f);  // one passage: no spread
  // Normalised: clipped at the 1st/99th percentiles, min-max scaled.
  EXPECT_FLOAT_EQ(*std::min_element(norm.begin(), norm.end()), 0.0f);
  EXPECT_FLOAT_EQ(*std::max_element(norm.begin(), norm.end()), 1.0f);
  for (float v : norm) EXPECT_TRUE(v >= 0.0f && v <= 1.0f);
}

// OpenIE import at engine level: both formats, with bad rows and unknown passages.
TEST(OpenIeImportTest, ImportsBothFormatsAndReportsGaps) {
  TempDir dir;
  WriteFile(dir.File("corpus.jsonl"),
            "{\"id\": \"p1\", \"title\": \"Ada Morrow\", \"text\": \"Ada Morrow founded the "
            "Merrow Observatory in 1901.\"}\n"
            "{\"id\": \"p2\", \"title\": \"Merrow Observatory\", \"text\": \"The Merrow "
            "Observatory stands on Tor Eskin.\"}\n"
            "{\"id\": \"p3\", \"title\": \"Tor Eskin\", \"text\": \"Tor Eskin is a hill.\"}\n");
  auto e = Engine::Open(dir.File("s.db"));
  ASSERT_TRUE(e.ok());
  IndexOptions io;
  io.chunking.strategy = ChunkOptions::Strategy::kNone;
  io.extractor = "none";
  ASSERT_TRUE((*e)->Index({dir.File("corpus.jsonl")}, io).ok());

  WriteFile(dir.File("openie.jsonl"),
            "{\"id\": \"p1\", \"entities\": [\"Ada Morrow\", \"Merrow Observatory\", \"1901\"], "
            "\"triples\": [[\"Ada Morrow\", \"founded\", \"Merrow Observatory\"], [\"Merrow "
            "Observatory\", \"founded in\", \"1901\"], [\"broken\", \"triple\"]]}\n"
            "{\"id\": \"p2\", \"entities\": [\"Merrow Observatory\", \"Tor Eskin\"], "
            "\"triples\": [[\"Merrow Observatory\", \"stands on\", \"Tor Eskin\"]]}\n"
            "{\"id\": \"p9\", \"entities\": [\"Nobody\"], \"triples\": []}\n");
  auto r = (*e)->ImportOpenIe(dir.File("openie.jsonl"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->records_read, 3u);
  EXPECT_EQ(r->passages_matched, 2u);
  EXPECT_EQ(r->records_unmatched, 1u);         // p9 has no passage
  EXPECT_EQ(r->passages_without_record, 1u);   // p3 has no record
  EXPECT_EQ(r->triples_kept, 3u);
  EXPECT_EQ(r->triples_malformed, 1u);         // the 2-element triple
  EXPECT_EQ(r->facts_created, 3u);
  auto snap = Impl(e->get())->snapshot();
  const KnowledgeGraph& g = *snap->graph();
  EXPECT_EQ(g.num_entities(), 4u);  // Merrow Observatory resolved across passages
  EXPECT_EQ(g.num_facts(), 3u);

  // The HippoRAG format, keyed by passage text, replaces p2's graph.
  WriteFile(dir.File("openie_results_ner_test.json"),
            "{\"docs\": [{\"idx\": \"chunk-x\", \"passage\": \"Merrow Observatory\\nThe Merrow "
            "Observatory stands on Tor Eskin.\", \"extracted_entities\": [\"Merrow "
            "Observatory\", \"Tor Eskin\"], \"extracted_triples\": [[\"Tor Eskin\", \"hosts\", "
            "\"Merrow Observatory\"]]}]}");
  auto h = (*e)->ImportOpenIe(dir.File("openie_results_ner_test.json"));
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->passages_matched, 1u);
  snap = Impl(e->get())->snapshot();
  EXPECT_EQ(snap->graph()->num_facts(), 3u);  // "stands on" replaced by "hosts"

  // A malformed file fails with its line, and the graph stays as it was.
  WriteFile(dir.File("bad.jsonl"), "{\"id\": \"p1\", \"entities\": [\"X\"]\n");
  auto bad = (*e)->ImportOpenIe(dir.File("bad.jsonl"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.jsonl:1"), std::string::npos)
      << bad.status().ToString();
  EXPECT_EQ(Impl(e->get())->snapshot()->graph()->num_facts(), 3u);
}

TEST(OpenIeImportTest, BenchmarkFilesReproduceEveryPassage) {
  const std::string data = testing::SharedDataDir();
  if (data.empty()) GTEST_SKIP() << "../shared/data is absent";
  struct Case {
    const char* bench;
    size_t passages;
  } cases[] = {{"musique-train", 1890}, {"medical", 268}};
  for (const Case& c : cases) {
    TempDir dir;
    const std::string bench = data + "/bench/" + c.bench;
    auto e = Engine::Open(dir.File("s.db"));
    ASSERT_TRUE(e.ok());
    IndexOptions io;
    io.chunking.strategy = ChunkOptions::Strategy::kNone;
    io.extractor = "none";
    ASSERT_TRUE((*e)->Index({bench}, io).ok());
    auto r = (*e)->ImportOpenIe(bench + "/openie.jsonl");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->records_read, c.passages) << c.bench;
    EXPECT_EQ(r->passages_matched, c.passages) << c.bench;
    EXPECT_EQ(r->records_unmatched, 0u) << c.bench;
    EXPECT_EQ(r->passages_without_record, 0u) << c.bench;
    // Every well-formed triple is kept (malformed rows of 2 or 4 strings are
    // counted as rejected).
    EXPECT_EQ(r->triples_kept + r->triples_malformed + r->duplicate_triples, r->triples_read)
        << c.bench;
    auto stats = (*e)->Stats();
    EXPECT_EQ(stats->graph.extracted_passages, static_cast<int64_t>(c.passages));
  }
}


// EmbedGraphVectors indexes descriptions in two passes without holding their
// rows, and the facts batch by batch into float16 rows: the indexes equal
// IndexForRows (FactIndexForRows for the facts) over EmbedSparse's rows.
TEST(GraphVectorsTest, TwoPassIndexesEqualTheIndexesOfTheRows) {
  std::vector<std::string> facts, descriptions, names = {"Ada Lovelace", "Charles Babbage"};
  for (int i = 0; i < 700; ++i) {
    facts.push_back("entity " + std::to_string(i) + " founded city " + std::to_string(i * 7 % 97));
    std::string long_text;
    for (int w = 0; w < 400; ++w) long_text += "word" + std::to_string((i * 31 + w * 17) % 500) + " ";
    descriptions.push_back(long_text);
  }
  IdfTable::Builder idf;
  for (const auto& t : facts) idf.AddDocument(TokenHashes(t));
  HashedEmbedderOptions options;
  options.dimension = 512;
  HashedEmbedder embedder(options, std::make_shared<IdfTable>(std::move(idf).Build()));
  auto two_pass = EmbedGraphVectors(embedder, names, descriptions, facts, {});
  ASSERT_TRUE(two_pass.ok()) << two_pass.status().ToString();

  auto index_of_rows = [&](const std::vector<std::string>& texts) {
    auto rows = EmbedSparse(embedder, texts);
    EXPECT_TRUE(rows.ok());
    auto index = IndexForRows(*rows);
    EXPECT_TRUE(index.ok());
    return std::move(*index);
  };
  // The fact texts: their rows as float16, the same as FactIndexForRows'.
  auto fact_rows = EmbedSparse(embedder, facts);
  ASSERT_TRUE(fact_rows.ok());
  auto facts_index = FactIndexForRows(*fact_rows);
  ASSERT_TRUE(facts_index.ok());
  const auto* a = dynamic_cast<const HalfRowsIndex*>(two_pass->fact_index.get());
  const auto* b = dynamic_cast<const HalfRowsIndex*>(facts_index->get());
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(a->Size(), facts.size());
  ASSERT_EQ(b->Size(), facts.size());
  for (size_t t = 0; t < facts.size(); ++t) {
    EXPECT_TRUE(std::ranges::equal(a->Row(t).dims, b->Row(t).dims)) << t;
    EXPECT_TRUE(std::ranges::equal(a->Row(t).halves, b->Row(t).halves)) << t;
  }

  const auto descriptions_index = index_of_rows(descriptions);
  const auto* c = dynamic_cast<const FlatIndex*>(two_pass->description_index.get());
  const auto* d = dynamic_cast<const FlatIndex*>(descriptions_index.get());
  ASSERT_NE(c, nullptr);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(c->matrix().rows, descriptions.size());
  EXPECT_EQ(c->matrix().data, d->matrix().data);
  EXPECT_EQ(two_pass->entity_rows.rows(), names.size());
  EXPECT_EQ(two_pass->relation_rows.rows(), 0u);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
