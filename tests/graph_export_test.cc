// Graph export (src/export/, `flowrag export`): the demo store and a store
// holding hostile names are exported as GraphML and JSONL and read back by
// real parsers (tests/graph_export_check.py: Python's xml.etree and
// NetworkX, json line by line); counts per kind must equal the engine's
// StoreStats. Also the text cleaning, a failing stream, the GraphView's
// browsing calls and the CLI.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "backend_util.h"
#include "export/clean_text.h"
#include "flowrag/engine.h"
#include "flowrag/graph.h"
#include "storage/graph_writer.h"
#include "storage/store.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

const std::string kChecker = std::string(FLOWRAG_SOURCE_DIR) + "/tests/graph_export_check.py";

// Runs `command` (stderr joined); its output and exit status.
int RunCommand(const std::string& command, std::string* out) {
  out->clear();
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out->append(buf, n);
  const int rc = pclose(pipe);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// What the checker expects of an export of `engine`: counts from Stats().
nlohmann::json Expected(const Engine& engine, bool passages) {
  auto stats = engine.Stats();
  EXPECT_TRUE(stats.ok()) << stats.status().ToString();
  const GraphStats& g = stats->graph;
  auto count = [](const std::map<std::string, int64_t>& m, const std::string& k) -> int64_t {
    auto it = m.find(k);
    return it == m.end() ? 0 : it->second;
  };
  nlohmann::json nodes = {{"Entity", count(g.nodes, "Entity")},
                          {"EntityDescription", count(g.nodes, "EntityDescription")}};
  nlohmann::json edges = {{"RELATED_TO", count(g.edges, "RELATED_TO")},
                          {"SYNONYM", count(g.edges, "SYNONYM")},
                          {"DESCRIBES", count(g.edges, "DESCRIBES")}};
  if (passages) {
    nodes["Document"] = stats->documents;
    nodes["Passage"] = count(g.nodes, "Passage");
    edges["CONTAINS"] = count(g.nodes, "Passage");
    edges["MENTIONS"] = count(g.edges, "MENTIONS");
  }
  // Kinds with no element are simply absent from the file.
  for (auto* j : {&nodes, &edges}) {
    for (auto it = j->begin(); it != j->end();) it = it->get<int64_t>() == 0 ? j->erase(it) : ++it;
  }
  return {{"nodes", nodes}, {"edges", edges}, {"passages", passages}};
}

// Exports `engine` into dir/name; returns the report.
GraphExportReport Export(const Engine& engine, const GraphExportOptions& options,
                         const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  GraphExportReport report;
  Status st = engine.Graph().value()->Export(options, out, &report);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return report;
}

// Runs the checker in `mode`; skips the test when it exits 77.
void Check(const std::string& mode, const std::string& file, const nlohmann::json& expected,
           const TempDir& dir) {
  const std::string exp = dir.File("expected-" + mode + ".json");
  WriteFile(exp, expected.dump());
  std::string out;
  const int rc =
      RunCommand("python3 '" + kChecker + "' " + mode + " '" + file + "' '" + exp + "'", &out);
  if (rc == 77) GTEST_SKIP() << out;
  EXPECT_EQ(rc, 0) << mode << ": " << out << "\nexpected " << expected.dump();
}

class DemoExportTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    auto engine = Engine::Open(dir_->File("demo.db"));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    auto report = (*engine)->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"});
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    engine_ = engine->release();
  }
  static void TearDownTestSuite() {
    delete engine_;
    delete dir_;
  }
  static TempDir* dir_;
  static Engine* engine_;
};
TempDir* DemoExportTest::dir_ = nullptr;
Engine* DemoExportTest::engine_ = nullptr;

TEST_F(DemoExportTest, GraphMlReadsBackWithElementTree) {
  const std::string file = dir_->File("demo.graphml");
  GraphExportReport r = Export(*engine_, {}, file);
  const nlohmann::json exp = Expected(*engine_, true);
  EXPECT_GT(exp["nodes"]["Entity"].get<int64_t>(), 10);
  EXPECT_GT(exp["edges"]["RELATED_TO"].get<int64_t>(), 10);
  EXPECT_EQ(r.bytes, std::filesystem::file_size(file));
  int64_t nodes = 0, edges = 0;
  for (auto& [k, v] : exp["nodes"].items()) nodes += v.get<int64_t>();
  for (auto& [k, v] : exp["edges"].items()) edges += v.get<int64_t>();
  EXPECT_EQ(static_cast<int64_t>(r.nodes), nodes);
  EXPECT_EQ(static_cast<int64_t>(r.edges), edges);
  Check("etree", file, exp, *dir_);
}

TEST_F(DemoExportTest, GraphMlReadsBackWithNetworkX) {
  const std::string file = dir_->File("demo-nx.graphml");
  Export(*engine_, {}, file);
  Check("networkx", file, Expected(*engine_, true), *dir_);
}

TEST_F(DemoExportTest, JsonlChecksLineByLine) {
  const std::string file = dir_->File("demo.jsonl");
  GraphExportOptions o;
  o.format = GraphFormat::kJsonl;
  o.passage_text = true;
  Export(*engine_, o, file);
  Check("jsonl", file, Expected(*engine_, true), *dir_);
  // The header comes first and every passage node carries its text.
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(nlohmann::json::parse(line)["type"], "graph");
  size_t texts = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    if (j["type"] == "node" && j["kind"] == "Passage")
      texts += j.contains("text") && !j["text"].get<std::string>().empty();
  }
  EXPECT_EQ(static_cast<int64_t>(texts),
            Expected(*engine_, true)["nodes"]["Passage"].get<int64_t>());
}

TEST_F(DemoExportTest, EntitiesOnlyLeavesOutDocumentsAndPassages) {
  GraphExportOptions o;
  o.passages = false;
  const std::string file = dir_->File("entities.graphml");
  Export(*engine_, o, file);
  Check("etree", file, Expected(*engine_, false), *dir_);
  const std::string xml = ReadFile(file);
  EXPECT_EQ(xml.find(">Passage<"), std::string::npos);
  EXPECT_EQ(xml.find(">MENTIONS<"), std::string::npos);
}

TEST_F(DemoExportTest, AFailingStreamIsAnIoError) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  Status st = engine_->Graph().value()->Export({}, out, nullptr);
  EXPECT_EQ(st.code(), StatusCode::kIoError) << st.ToString();
}

TEST_F(DemoExportTest, BrowsingFindsNeighboursAndProvenance) {
  auto g = engine_->Graph().value();
  auto found = g->FindEntities("ostrel", 5);
  ASSERT_FALSE(found.empty());
  for (const auto& e : found) {
    std::string lower = e.name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_NE(lower.find("ostrel"), std::string::npos) << e.name;
  }
  // Best first: the exact name (if any) ahead of longer ones.
  auto exact = g->FindEntities(found[0].name, 3);
  ASSERT_FALSE(exact.empty());
  EXPECT_EQ(exact[0].name, found[0].name);
  EXPECT_TRUE(g->FindEntities("no such entity anywhere", 5).empty());
  EXPECT_EQ(g->FindEntities("o", 2).size(), 2u);

  // The most connected entity found: its neighbourhood, bounded.
  GraphEntityInfo hub = found[0];
  for (const auto& e : g->FindEntities("a", 100))
    if (e.facts > hub.facts) hub = e;
  NeighbourhoodOptions small;
  small.max_neighbours = 2;
  small.max_facts_per_neighbour = 1;
  auto n = g->Neighbourhood(hub.id, small);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(n->center.id, hub.id);
  EXPECT_LE(n->neighbours.size(), 2u);
  EXPECT_EQ(n->total_facts, hub.facts);
  EXPECT_EQ(n->truncated, n->total_neighbours > 2 || hub.facts > n->edges.size());
  int64_t fact = -1;
  for (const auto& e : n->edges) {
    EXPECT_TRUE(e.from == hub.id || e.to == hub.id);
    if (e.kind == "RELATED_TO") fact = e.fact;
  }
  ASSERT_GE(fact, 0) << "no fact around " << hub.name;
  auto p = g->FactPassages(fact, 10);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_FALSE(p->passages.empty());
  EXPECT_FALSE(p->passages[0].text.empty());
  EXPECT_TRUE(p->subject.id == hub.id || p->object.id == hub.id);

  EXPECT_EQ(g->Neighbourhood(-5, {}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(g->FactPassages(1 << 30, 1).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(g->FactPassages(-1, 1).status().code(), StatusCode::kNotFound);
}

TEST_F(DemoExportTest, CliWritesTheFileAndRejectsABadFormat) {
  const std::string bin = std::string(FLOWRAG_BINARY_DIR) + "/tools/flowrag";
  const std::string file = dir_->File("cli.graphml");
  std::string out;
  ASSERT_EQ(
      RunCommand("'" + bin + "' export --db '" + dir_->File("demo.db") + "' --out '" + file + "'",
                 &out),
      0)
      << out;
  EXPECT_NE(out.find("export: "), std::string::npos) << out;
  Check("etree", file, Expected(*engine_, true), *dir_);
  EXPECT_FALSE(std::filesystem::exists(file + ".tmp"));
  ASSERT_EQ(RunCommand("'" + bin + "' export -q --format jsonl --db '" + dir_->File("demo.db") +
                           "' > '" + dir_->File("cli.jsonl") + "'",
                       &out),
            0)
      << out;
  Check("jsonl", dir_->File("cli.jsonl"), Expected(*engine_, true), *dir_);
  // A pipe (or device) is written into, never replaced by a file.
  const std::string fifo = dir_->File("fifo");
  ASSERT_EQ(RunCommand("mkfifo '" + fifo + "'", &out), 0) << out;
  ASSERT_EQ(
      RunCommand("cat '" + fifo + "' > '" + dir_->File("from-fifo.graphml") + "' & '" + bin +
                     "' export -q --db '" + dir_->File("demo.db") + "' --out '" + fifo + "'; wait",
                 &out),
      0)
      << out;
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  Check("etree", dir_->File("from-fifo.graphml"), Expected(*engine_, true), *dir_);
  EXPECT_EQ(
      RunCommand("'" + bin + "' export --format gexf --db '" + dir_->File("demo.db") + "'", &out),
      2);
  EXPECT_NE(out.find("expected graphml or jsonl"), std::string::npos) << out;
  EXPECT_NE(RunCommand("'" + bin + "' export --db '" + dir_->File("missing.db") + "'", &out), 0);
  EXPECT_NE(out.find("no such store"), std::string::npos) << out;
}

// `flowrag export --db postgresql://...`: the same counts from a PostgreSQL
// workspace (skipped unless FLOWRAG_TEST_POSTGRES names a test server).
TEST(PostgresExportTest, CliExportsAWorkspace) {
  const std::string base = PostgresTestUrl();
  if (base.empty()) GTEST_SKIP() << kNoPostgresHint;
  TestWorkspaces workspaces(base);
  const std::string url = workspaces.New();
  {
    auto engine = Engine::Open(url);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    ASSERT_TRUE((*engine)->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"}).ok());
  }
  TempDir dir;
  const std::string bin = std::string(FLOWRAG_BINARY_DIR) + "/tools/flowrag";
  std::string out;
  ASSERT_EQ(
      RunCommand("'" + bin + "' export --db '" + url + "' --out '" + dir.File("pg.graphml") + "'",
                 &out),
      0)
      << out;
  EngineOptions eo;
  eo.read_only = true;
  auto engine = Engine::Open(url, eo);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Check("etree", dir.File("pg.graphml"), Expected(**engine, true), dir);
}

// A store whose graph holds names no XML or JSON writer may pass through
// as they are: markup, quotes, control characters, invalid UTF-8.
TEST(HostileExportTest, NamesAreEscapedAndCleaned) {
  TempDir dir;
  const std::string db = dir.File("hostile.db");
  {
    auto engine = Engine::Open(db);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    std::vector<DocumentInput> docs(1);
    docs[0].id = "doc <&> \"1\"";
    docs[0].title = "Title & <Co>";
    docs[0].text = "Some text about nothing in particular.";
    auto r = (*engine)->IndexDocuments(docs);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  const std::string markup = "A <b> & \"c\" 'd' ]]>";
  const std::string control = std::string("ctl\x01\x02\x1f\x7f\x0b\x0c end");
  const std::string bad = "bad \xff\xfe utf8 \xc3 \xed\xa0\x80 \xf4\x90\x80\x80 x";
  {
    auto store = Store::Open(db);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    int64_t passage = 0;
    ASSERT_TRUE((*store)
                    ->ForEachPassageContent([&](Store::PendingPassage&& p) {
                      passage = p.passage_id;
                      return Status::Ok();
                    })
                    .ok());
    PassageExtraction ex;
    ex.passage_id = passage;
    for (const std::string& name : {markup, control, bad}) {
      ExtractedEntity e;
      e.name = name;
      e.type = "TYPE <\x01>";
      ex.entities.push_back(e);
    }
    ex.triples.push_back({markup, "rel <&> \x0b\r\n\t", control});
    ex.triples.push_back({control, "r2", bad});
    GraphWriteReport gr;
    Status st =
        (*store)->WriteGraph([&](GraphWriter& w) { return w.ApplyPassage(ex, "test"); }, &gr);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  EngineOptions eo;
  eo.read_only = true;
  auto engine = Engine::Open(db, eo);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  nlohmann::json exp = Expected(**engine, true);
  ASSERT_GE(exp["nodes"]["Entity"].get<int64_t>(), 3);
  exp["names"] = {"A <b> & \"c\" 'd' ]]>", "ctl", " end", "bad ", " utf8 ", " x"};

  const std::string gml = dir.File("hostile.graphml");
  GraphExportReport r = Export(**engine, {}, gml);
  EXPECT_GT(r.replaced_characters, 0u);
  const std::string xml = ReadFile(gml);
  EXPECT_NE(xml.find("A &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos; ]]&gt;"), std::string::npos);
  for (char c : xml) {
    const unsigned char u = static_cast<unsigned char>(c);
    EXPECT_FALSE(u < 0x20 && c != '\n' && c != '\t') << "raw control byte " << int(u);
  }
  Check("etree", gml, exp, dir);
  Check("networkx", gml, exp, dir);

  GraphExportOptions o;
  o.format = GraphFormat::kJsonl;
  const std::string jl = dir.File("hostile.jsonl");
  Export(**engine, o, jl);
  Check("jsonl", jl, exp, dir);
}

TEST(CleanTextTest, InvalidUtf8BecomesReplacementCharacters) {
  size_t replaced = 0;
  EXPECT_EQ(CleanUtf8("ok é 漢 😀", &replaced), "ok é 漢 😀");
  EXPECT_EQ(replaced, 0u);
  EXPECT_EQ(CleanUtf8("a\xff"
                      "b",
                      &replaced),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(replaced, 1u);
  replaced = 0;
  // A truncated 3-byte sequence is one subpart; a surrogate (ED A0 80) three.
  EXPECT_EQ(CleanUtf8("\xE6\xBC", &replaced), "\xEF\xBF\xBD");
  EXPECT_EQ(CleanUtf8("\xED\xA0\x80", nullptr), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(CleanUtf8("\xC0\xAF", nullptr), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong
}

TEST(CleanTextTest, XmlTextEscapesMarkupAndReplacesIllegalCharacters) {
  std::string out;
  size_t replaced = 0;
  AppendXmlText(&out, "<a href=\"x\">&'</a>\r\n\t\x01\x1f\xEF\xBF\xBE", &replaced);
  EXPECT_EQ(out,
            "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;&#13;\n\t\xEF\xBF\xBD\xEF\xBF\xBD"
            "\xEF\xBF\xBD");
  EXPECT_EQ(replaced, 3u);
  // Every single byte value gives valid output (no raw control byte).
  for (int b = 0; b < 256; ++b) {
    std::string o;
    AppendXmlText(&o, std::string(1, static_cast<char>(b)), nullptr);
    for (char c : o)
      EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') << b;
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
