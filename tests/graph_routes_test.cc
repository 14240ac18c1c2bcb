// The graph browser's endpoints (src/server/routes_graph.cc) on a real
// server over the demo store: entity search, neighbourhoods, the passages
// behind a fact, their status codes (400 naming the parameter, 404 for
// unknown ids, 409 for a stale generation), limits, auth and workspaces;
// the embedded cytoscape asset; the route table.
#include <gtest/gtest.h>
#include <httplib.h>

#include <csignal>
#include <nlohmann/json.hpp>

#include "flowrag/engine.h"
#include "flowrag/server.h"
#include "server/routes.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using nlohmann::json;
using testing::TempDir;

class GraphRoutesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::signal(SIGPIPE, SIG_IGN);
    dir_ = new TempDir;
    auto engine = Engine::Open(dir_->File("demo.db"));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    ASSERT_TRUE((*engine)->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"}).ok());
    engine->reset();
    ServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.threads = 4;
    options.bearer_token = "sesame";
    auto server = Server::Create(
        options, {{"default", dir_->File("demo.db")}, {"demo", dir_->File("demo.db")}});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    ASSERT_TRUE((*server)->Start().ok());
    server_ = server->release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
  }
  static httplib::Client Client(bool auth = true) {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(60, 0);
    if (auth) c.set_bearer_token_auth("sesame");
    return c;
  }
  static json Get(const std::string& path, int expect_status = 200) {
    auto c = Client();
    auto r = c.Get(path.c_str());
    EXPECT_TRUE(r) << path;
    if (!r) return json();
    EXPECT_EQ(r->status, expect_status) << path << ": " << r->body;
    return json::parse(r->body, nullptr, false);
  }
  static void ExpectError(const std::string& path, int status, const std::string& code,
                          const std::string& field) {
    json j = Get(path, status);
    ASSERT_TRUE(j.contains("error")) << path << ": " << j.dump();
    EXPECT_EQ(j["error"]["code"], code) << path << ": " << j.dump();
    EXPECT_EQ(j["error"].value("field", ""), field) << path << ": " << j.dump();
  }
  static TempDir* dir_;
  static Server* server_;
};
TempDir* GraphRoutesTest::dir_ = nullptr;
Server* GraphRoutesTest::server_ = nullptr;

TEST_F(GraphRoutesTest, SearchOpenAndProvenance) {
  json found = Get("/v1/graph/entities?q=Ostrel&limit=5");
  ASSERT_TRUE(found["entities"].is_array()) << found.dump();
  ASSERT_FALSE(found["entities"].empty());
  EXPECT_LE(found["entities"].size(), 5u);
  EXPECT_TRUE(found["generation"].is_number_integer());
  const json first = found["entities"][0];
  for (const char* k : {"id", "name", "type", "passages", "facts"})
    EXPECT_TRUE(first.contains(k)) << k;

  // The entity with most facts among a broad search.
  json many = Get("/v1/graph/entities?q=e&limit=100");
  json hub = many["entities"][0];
  for (const json& e : many["entities"])
    if (e["facts"] > hub["facts"]) hub = e;
  ASSERT_GT(hub["facts"].get<int>(), 0);
  const std::string id = std::to_string(hub["id"].get<int64_t>());
  json n = Get("/v1/graph/entities/" + id + "?neighbours=3&facts_per_neighbour=1");
  EXPECT_EQ(n["center"]["id"], hub["id"]);
  EXPECT_LE(n["neighbours"].size(), 3u);
  EXPECT_EQ(n["total_facts"], hub["facts"]);
  ASSERT_FALSE(n["edges"].empty());
  int64_t fact = -1;
  for (const json& e : n["edges"]) {
    EXPECT_TRUE(e["source"] == hub["id"] || e["target"] == hub["id"]) << e.dump();
    if (e["kind"] == "RELATED_TO") {
      fact = e["fact"];
      EXPECT_GT(e["sources"].get<int>(), 0);
    }
  }
  ASSERT_GE(fact, 0);
  const std::string gen = std::to_string(n["generation"].get<int64_t>());
  json p = Get("/v1/graph/facts/" + std::to_string(fact) + "/passages?limit=2&generation=" + gen);
  ASSERT_FALSE(p["passages"].empty()) << p.dump();
  EXPECT_LE(p["passages"].size(), 2u);
  EXPECT_FALSE(p["passages"][0]["text"].get<std::string>().empty());
  EXPECT_EQ(p["fact"]["id"], fact);
  EXPECT_TRUE(p["fact"]["subject"]["id"] == hub["id"] || p["fact"]["object"]["id"] == hub["id"]);
  // Without a generation it answers for the current one.
  Get("/v1/graph/facts/" + std::to_string(fact) + "/passages");
  // The named workspace's routes.
  json w = Get("/v1/w/demo/graph/entities/" + id);
  EXPECT_EQ(w["center"]["id"], hub["id"]);
  EXPECT_LE(w["neighbours"].size(), 40u);
}

TEST_F(GraphRoutesTest, BadParametersAreNamed) {
  ExpectError("/v1/graph/entities", 400, "invalid_argument", "q");
  ExpectError("/v1/graph/entities?q=", 400, "invalid_argument", "q");
  ExpectError("/v1/graph/entities?q=" + std::string(201, 'a'), 400, "invalid_argument", "q");
  ExpectError("/v1/graph/entities?q=a&limit=0", 400, "invalid_argument", "limit");
  ExpectError("/v1/graph/entities?q=a&limit=101", 400, "invalid_argument", "limit");
  ExpectError("/v1/graph/entities?q=a&limit=5x", 400, "invalid_argument", "limit");
  ExpectError("/v1/graph/entities/abc", 400, "invalid_argument", "id");
  ExpectError("/v1/graph/entities/-3", 400, "invalid_argument", "id");
  ExpectError("/v1/graph/entities/1?neighbours=0", 400, "invalid_argument", "neighbours");
  ExpectError("/v1/graph/entities/1?neighbours=201", 400, "invalid_argument", "neighbours");
  ExpectError("/v1/graph/entities/1?facts_per_neighbour=21", 400, "invalid_argument",
              "facts_per_neighbour");
  ExpectError("/v1/graph/facts/x/passages", 400, "invalid_argument", "id");
  ExpectError("/v1/graph/facts/0/passages?limit=51", 400, "invalid_argument", "limit");
  ExpectError("/v1/graph/facts/0/passages?generation=abc", 400, "invalid_argument", "generation");
}

TEST_F(GraphRoutesTest, UnknownIdsAreNotFoundAndStaleFactsConflict) {
  ExpectError("/v1/graph/entities/987654321", 404, "not_found", "id");
  ExpectError("/v1/graph/facts/987654321/passages", 404, "not_found", "id");
  const int64_t gen = Get("/v1/graph/entities?q=a")["generation"];
  ExpectError("/v1/graph/facts/0/passages?generation=" + std::to_string(gen + 1), 409,
              "graph_changed", "generation");
  ExpectError("/v1/w/nope/graph/entities?q=a", 404, "workspace_not_found", "workspace");
  json e = Get("/v1/graph/nothing", 404);
  EXPECT_EQ(e["error"]["code"], "not_found");
}

TEST_F(GraphRoutesTest, LimitsBoundTheAnswers) {
  json r = Get("/v1/graph/entities?q=e&limit=1");
  EXPECT_EQ(r["entities"].size(), 1u);
  EXPECT_TRUE(r["truncated"].get<bool>());
  r = Get("/v1/graph/entities?q=zzzzqqq");
  EXPECT_TRUE(r["entities"].empty());
  EXPECT_FALSE(r["truncated"].get<bool>());
}

TEST_F(GraphRoutesTest, AuthMethodsAndTheAsset) {
  auto anon = Client(false);
  auto r = anon.Get("/v1/graph/entities?q=a");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  auto c = Client();
  r = c.Post("/v1/graph/entities?q=a", "{}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "GET, HEAD");
  // The graph library: served without a token (the page loads it), from the binary.
  r = anon.Get("/assets/cytoscape.min.js");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->get_header_value("Content-Type").find("javascript"), std::string::npos);
  EXPECT_GT(r->body.size(), 100000u);
  EXPECT_NE(r->body.find("cytoscape"), std::string::npos);
  r = anon.Get("/assets/nothing.js");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  // The page may load scripts from its own origin.
  r = anon.Get("/");
  ASSERT_TRUE(r);
  EXPECT_NE(r->get_header_value("Content-Security-Policy").find("script-src 'self'"),
            std::string::npos);
  EXPECT_NE(r->body.find("/assets/cytoscape.min.js"), std::string::npos);
}

TEST(GraphRouteTableTest, ParsesTheGraphPaths) {
  using server::ParseRoute;
  using server::RouteKind;
  EXPECT_EQ(ParseRoute("/v1/graph/entities").kind, RouteKind::kGraphEntities);
  auto r = ParseRoute("/v1/w/ws/graph/entities/42");
  EXPECT_EQ(r.kind, RouteKind::kGraphEntity);
  EXPECT_EQ(r.id, "42");
  EXPECT_EQ(r.workspace, "ws");
  r = ParseRoute("/v1/graph/facts/7/passages");
  EXPECT_EQ(r.kind, RouteKind::kGraphFactPassages);
  EXPECT_EQ(r.id, "7");
  EXPECT_EQ(ParseRoute("/v1/graph/facts/7").kind, RouteKind::kUnknown);
  EXPECT_EQ(ParseRoute("/v1/graph/entities/").kind, RouteKind::kUnknown);
  EXPECT_EQ(ParseRoute("/v1/graph").kind, RouteKind::kUnknown);
  EXPECT_EQ(ParseRoute("/assets/cytoscape.min.js").kind, RouteKind::kAsset);
  EXPECT_FALSE(server::NeedsAuth(RouteKind::kAsset));
  EXPECT_TRUE(server::NeedsAuth(RouteKind::kGraphEntity));
  EXPECT_EQ(server::RouteLabel(RouteKind::kGraphFactPassages), "/v1/graph/facts/{id}/passages");
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
