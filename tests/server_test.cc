// The HTTP server on loopback (ephemeral ports) over copies of the demo store:
// every endpoint's success and error shapes, auth, limits, slow clients,
// workspace isolation, queries racing inserts and deletes, and /metrics.
#include "flowrag/server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "flowrag/engine.h"
#include "server/connections.h"
#include "server/routes.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using nlohmann::json;
using testing::TempDir;

constexpr char kQuestion[] = "How long is the River Ostrel?";

class ServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::signal(SIGPIPE, SIG_IGN);  // clients that hang up on purpose
    demo_dir_ = new TempDir;
    auto engine = Engine::Open(demo_dir_->File("demo.db"));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    auto report = (*engine)->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"});
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    demo_documents_ = static_cast<int64_t>(report->documents_added);
  }
  static void TearDownTestSuite() { delete demo_dir_; }

  // A copy of the demo store for one test.
  std::string DemoCopy(const std::string& name) {
    const std::string path = dir_.File(name + ".db");
    std::filesystem::copy_file(demo_dir_->File("demo.db"), path);
    return path;
  }

  std::unique_ptr<Server> Serve(ServerOptions options, std::vector<WorkspaceSpec> workspaces) {
    options.host = "127.0.0.1";
    options.port = 0;
    if (options.threads == 0) options.threads = 8;
    auto server = Server::Create(options, std::move(workspaces));
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    if (!server.ok()) return nullptr;
    Status st = (*server)->Start();
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_GT((*server)->port(), 0);
    return std::move(server).value();
  }
  std::unique_ptr<Server> ServeDemo(ServerOptions options = {}) {
    return Serve(options, {{"default", DemoCopy("default")}});
  }

  static httplib::Client Client(const Server& server) {
    httplib::Client c("127.0.0.1", server.port());
    c.set_read_timeout(60, 0);  // sanitiser builds are slow
    return c;
  }

  TempDir dir_;
  static TempDir* demo_dir_;
  static int64_t demo_documents_;
};

TempDir* ServerTest::demo_dir_ = nullptr;
int64_t ServerTest::demo_documents_ = 0;

json Body(const httplib::Result& r) {
  if (!r) return json();
  return json::parse(r->body, nullptr, /*allow_exceptions=*/false);
}

httplib::Result PostJson(httplib::Client& c, const std::string& path, const json& body) {
  return c.Post(path.c_str(), body.dump(), "application/json");
}

// Expects the stable error shape with `code` (and `field` when given).
void ExpectError(const httplib::Result& r, int status, const std::string& code,
                 const std::string& field = "") {
  ASSERT_TRUE(r) << "no response";
  EXPECT_EQ(r->status, status) << r->body;
  json j = Body(r);
  ASSERT_TRUE(j.is_object()) << r->body;
  ASSERT_TRUE(j.contains("error")) << r->body;
  EXPECT_EQ(j["error"].value("code", ""), code) << r->body;
  EXPECT_FALSE(j["error"].value("message", "").empty()) << r->body;
  if (!field.empty()) {
    EXPECT_EQ(j["error"].value("field", ""), field) << r->body;
  }
  EXPECT_NE(r->get_header_value("Content-Type").find("application/json"), std::string::npos);
}

int64_t Documents(httplib::Client& c, const std::string& prefix = "/v1") {
  auto r = c.Get((prefix + "/stats").c_str());
  if (!r || r->status != 200) return -1;
  return Body(r).value("documents", int64_t{-1});
}

// Whether a bm25 query for `word` returns a passage of document `id`.
bool Finds(httplib::Client& c, const std::string& prefix, const std::string& word,
           const std::string& id) {
  auto r = PostJson(c, prefix + "/query", {{"question", word}, {"method", "bm25"}, {"top_k", 3}});
  if (!r || r->status != 200) {
    ADD_FAILURE() << (r ? r->body : std::string("no response"));
    return false;
  }
  const json answer = Body(r);
  for (const json& p : answer["retrieval"]["passages"]) {
    if (p.value("document_id", "") == id) return true;
  }
  return false;
}

TEST(ServerRoutesTest, ParsesPathsIntoEndpointsAndWorkspaces) {
  using server::ParseRoute;
  using server::RouteKind;
  EXPECT_EQ(ParseRoute("/").kind, RouteKind::kViewer);
  EXPECT_EQ(ParseRoute("/healthz").kind, RouteKind::kHealthz);
  EXPECT_EQ(ParseRoute("/metrics").kind, RouteKind::kMetrics);
  EXPECT_EQ(ParseRoute("/v1/query").kind, RouteKind::kQuery);
  EXPECT_TRUE(ParseRoute("/v1/query").default_workspace);
  auto ws = ParseRoute("/v1/w/alpha/documents");
  EXPECT_EQ(ws.kind, RouteKind::kDocuments);
  EXPECT_FALSE(ws.default_workspace);
  EXPECT_EQ(ws.workspace, "alpha");
  auto doc = ParseRoute("/v1/w/alpha/documents/people/ada.md");
  EXPECT_EQ(doc.kind, RouteKind::kDocument);
  EXPECT_EQ(doc.document_id, "people/ada.md");
  auto page = ParseRoute("/w/alpha/");
  EXPECT_EQ(page.kind, RouteKind::kViewer);
  EXPECT_EQ(page.workspace, "alpha");
  EXPECT_EQ(ParseRoute("/w/alpha").kind, RouteKind::kViewer);
  for (const char* bad : {"/v1", "/v1/", "/v1/queryx", "/v1/documents/", "/v1/w/alpha",
                          "/v1/w//query", "/w/a/b", "/x", ""}) {
    EXPECT_EQ(ParseRoute(bad).kind, RouteKind::kUnknown) << bad;
  }
  EXPECT_TRUE(server::MethodAllowed(RouteKind::kStats, "HEAD"));
  EXPECT_FALSE(server::MethodAllowed(RouteKind::kQuery, "GET"));
  EXPECT_TRUE(server::MethodAllowed(RouteKind::kDocument, "DELETE"));
}

TEST(ServerConnectionsTest, FindsTheEndOfAHeadAndItsContentLength) {
  using server::AnnouncedContentLength;
  using server::HeadEnd;
  EXPECT_EQ(HeadEnd("GET / HTTP/1.1\r\nHost: x\r\n"), std::string_view::npos);
  EXPECT_EQ(HeadEnd("GET / HTTP/1.1\r\nHost: x\r\n\r\nbody"), 27u);
  EXPECT_EQ(HeadEnd("GET / HTTP/1.1\nHost: x\n\n"), 24u);
  EXPECT_EQ(AnnouncedContentLength("POST / HTTP/1.1\r\ncontent-LENGTH:  42 \r\n\r\n"), 42u);
  EXPECT_EQ(AnnouncedContentLength("POST / HTTP/1.1\r\nContent-Length: 1000000000000\r\n\r\n"),
            1000000000000u);
  EXPECT_EQ(AnnouncedContentLength("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n"),
            UINT64_MAX);  // saturated, still over any limit
  EXPECT_FALSE(AnnouncedContentLength("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"));
  EXPECT_FALSE(AnnouncedContentLength("POST / HTTP/1.1\r\nX-Content-Length: 5\r\n\r\n"));
  EXPECT_FALSE(AnnouncedContentLength("GET /Content-Length:5 HTTP/1.1\r\n\r\n"));
}

TEST_F(ServerTest, CreateRejectsBadWorkspacesAndStartReportsATakenPort) {
  const std::string db = DemoCopy("a");
  EXPECT_EQ(Server::Create({}, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Server::Create({}, {{"bad name", db}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Server::Create({}, {{"a", db}, {"a", db}}).status().code(),
            StatusCode::kInvalidArgument);
  ServerOptions bad_port;
  bad_port.port = 70000;
  EXPECT_EQ(Server::Create(bad_port, {{"a", db}}).status().code(), StatusCode::kInvalidArgument);

  auto first = Serve({}, {{"a", db}});
  ASSERT_NE(first, nullptr);
  ServerOptions same;
  same.port = first->port();
  auto second = Server::Create(same, {{"a", DemoCopy("b")}});
  ASSERT_TRUE(second.ok());
  Status st = (*second)->Start();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find(std::to_string(first->port())), std::string::npos) << st.message();
  (*second)->Wait();  // a server that failed to start counts as stopped
  first->Stop();
  first->Stop();  // idempotent
  first->Wait();
}

TEST_F(ServerTest, HealthMethodsStatsAndViewer) {
  auto server = ServeDemo();
  ASSERT_NE(server, nullptr);
  auto c = Client(*server);

  auto health = c.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(Body(health), json({{"status", "ok"}}));

  auto methods = c.Get("/v1/methods");
  ASSERT_TRUE(methods);
  ASSERT_EQ(methods->status, 200);
  json m = Body(methods);
  EXPECT_EQ(m["methods"], json(Engine::Methods()));
  EXPECT_EQ(m["pipelines"], json({"single", "cot", "decompose"}));

  auto stats = c.Get("/v1/stats");
  ASSERT_TRUE(stats);
  ASSERT_EQ(stats->status, 200);
  json s = Body(stats);
  EXPECT_EQ(s["documents"], demo_documents_);
  EXPECT_GT(s["passages"].get<int64_t>(), 0);
  EXPECT_EQ(s["workspace"], "default");
  EXPECT_TRUE(s["graph"]["nodes"].is_object());

  // The page is the checked-in viewer.html, byte for byte, and fetches nothing else.
  auto page = c.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->get_header_value("Content-Type").find("text/html"), std::string::npos);
  EXPECT_EQ(page->body,
            testing::ReadFile(std::string(FLOWRAG_SOURCE_DIR) + "/src/server/viewer.html"));
  EXPECT_EQ(page->body.find("http://"), page->body.find("http://www.w3.org/2000/svg"));
  EXPECT_EQ(page->body.find("https://"), std::string::npos);
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("default-src 'none'"),
            std::string::npos);
  auto ws_page = c.Get("/w/default/");
  ASSERT_TRUE(ws_page);
  EXPECT_EQ(ws_page->status, 200);
  ExpectError(c.Get("/w/nope/"), 404, "workspace_not_found", "workspace");

  auto head = c.Head("/healthz");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  auto options = c.Options("/v1/query");
  ASSERT_TRUE(options);
  EXPECT_EQ(options->status, 204);
  EXPECT_EQ(options->get_header_value("Allow"), "POST");
}

TEST_F(ServerTest, QueryAnswersWithCitationsAndTheRetrievedSubgraph) {
  auto server = ServeDemo();
  ASSERT_NE(server, nullptr);
  auto c = Client(*server);
  auto r = PostJson(c, "/v1/query", {{"question", kQuestion}, {"method", "qafd"}, {"top_k", 3}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json a = Body(r);
  EXPECT_EQ(a["question"], kQuestion);
  EXPECT_TRUE(a["answer"].is_string());
  EXPECT_EQ(a["pipeline"], "single");
  EXPECT_TRUE(a["citations"].is_array());
  for (const json& cit : a["citations"]) {
    EXPECT_TRUE(cit["passage_id"].is_number_integer());
    EXPECT_FALSE(cit["document_id"].get<std::string>().empty());
    EXPECT_TRUE(cit["quote"].is_string());
  }
  EXPECT_EQ(a["retrieval"]["method"], "qafd");
  EXPECT_EQ(a["retrieval"]["passages"].size(), 3u);
  EXPECT_GT(a["retrieval"]["nodes"].size(), 0u);
  EXPECT_TRUE(a["retrieval"]["edges"].is_array());
  EXPECT_TRUE(a["usage"].is_object());

  // Options as strings, numbers or booleans; other pipelines and answerers.
  auto opt = PostJson(c, "/v1/query",
                      {{"question", kQuestion},
                       {"method", "bm25"},
                       {"pipeline", "cot"},
                       {"max_steps", 2},
                       {"answerer", "extractive"},
                       {"options", {{"bm25.k1", 0.9}, {"bm25.b", "0.5"}}}});
  ASSERT_TRUE(opt);
  EXPECT_EQ(opt->status, 200) << opt->body;
  EXPECT_EQ(Body(opt)["pipeline"], "cot");
  EXPECT_EQ(Body(opt)["retrieval"]["method"], "bm25");
  // The workspace path of the default workspace answers the same.
  auto ws = PostJson(c, "/v1/w/default/query", {{"question", kQuestion}, {"method", "bm25"}});
  ASSERT_TRUE(ws);
  EXPECT_EQ(ws->status, 200) << ws->body;
}

TEST_F(ServerTest, BadRequestsGetTheErrorShapeAndStatus) {
  auto server = ServeDemo();
  ASSERT_NE(server, nullptr);
  auto c = Client(*server);
  auto malformed = c.Post("/v1/query", "{\"question\": \"x\",", "application/json");
  ExpectError(malformed, 400, "invalid_json");
  EXPECT_NE(Body(malformed)["error"]["message"].get<std::string>().find("(byte 18)"),
            std::string::npos)
      << malformed->body;
  ExpectError(c.Post("/v1/query", "[1, 2]", "application/json"), 400, "invalid_argument");
  ExpectError(c.Post("/v1/query", "", "application/json"), 400, "invalid_json");
  ExpectError(PostJson(c, "/v1/query", {{"method", "bm25"}}), 400, "invalid_argument", "question");
  ExpectError(PostJson(c, "/v1/query", {{"question", "   "}}), 400, "invalid_argument", "question");
  ExpectError(PostJson(c, "/v1/query", {{"question", kQuestion}, {"method", "nope"}}), 400,
              "invalid_argument", "method");
  ExpectError(
      PostJson(c, "/v1/query",
               {{"question", kQuestion}, {"method", "bm25"}, {"options", {{"bm25.zz", 1}}}}),
      400, "invalid_argument", "options");
  ExpectError(PostJson(c, "/v1/query",
                       {{"question", kQuestion}, {"method", "bm25"}, {"options", {{"x", {1}}}}}),
              400, "invalid_argument", "options");
  auto unknown = PostJson(c, "/v1/query", {{"question", kQuestion}, {"colour", "red"}});
  ExpectError(unknown, 400, "invalid_argument", "colour");
  ExpectError(PostJson(c, "/v1/query", {{"question", kQuestion}, {"top_k", 0}}), 400,
              "invalid_argument", "top_k");
  ExpectError(PostJson(c, "/v1/query", {{"question", kQuestion}, {"top_k", "5"}}), 400,
              "invalid_argument", "top_k");
  ExpectError(PostJson(c, "/v1/query", {{"question", kQuestion}, {"pipeline", "zigzag"}}), 400,
              "invalid_argument", "pipeline");
  ExpectError(PostJson(c, "/v1/query", {{"question", kQuestion}, {"analysis", "sometimes"}}), 400,
              "invalid_argument", "analysis");
  ExpectError(PostJson(c, "/v1/query", {{"question", kQuestion}, {"extension", "always"}}), 400,
              "invalid_argument", "extension");
  ExpectError(PostJson(c, "/v1/documents", {{"documents", {{{"id", "x"}}}}}), 400,
              "invalid_argument", "documents[0].text");
  ExpectError(
      PostJson(c, "/v1/documents", {{"documents", {{{"id", "x"}, {"text", "t"}, {"y", 1}}}}}), 400,
      "invalid_argument", "documents[0].y");
  ExpectError(PostJson(c, "/v1/documents", {{"documents", json::array()}}), 400, "invalid_argument",
              "documents");
  ExpectError(c.Get("/v1/nothing"), 404, "not_found");
  ExpectError(c.Get("/favicon.ico"), 404, "not_found");
  ExpectError(PostJson(c, "/v1/w/nope/query", {{"question", kQuestion}}), 404,
              "workspace_not_found", "workspace");
  auto verb = c.Get("/v1/query");
  ExpectError(verb, 405, "method_not_allowed");
  EXPECT_EQ(verb->get_header_value("Allow"), "POST");
  ExpectError(c.Delete("/v1/stats"), 405, "method_not_allowed");
  ExpectError(c.Put("/v1/documents", "{}", "application/json"), 405, "method_not_allowed");
  // Nothing of the rejected inserts was stored.
  EXPECT_EQ(Documents(c), demo_documents_);
}

TEST_F(ServerTest, InsertQueryAndDeleteDocuments) {
  auto server = ServeDemo();
  ASSERT_NE(server, nullptr);
  auto c = Client(*server);
  json docs = {{"documents",
                {{{"id", "notes/quillfeather.md"},
                  {"title", "Quillfeather Lighthouse"},
                  {"text", "The Quillfeather Lighthouse stands 31 metres tall on Skerrow Point."}},
                 {{"id", "notes/brannock.md"},
                  {"title", "Brannock Weir"},
                  {"text", "Brannock Weir was rebuilt in 1911 after the zephyrine flood."}}}}};
  auto ins = PostJson(c, "/v1/documents", docs);
  ASSERT_TRUE(ins);
  ASSERT_EQ(ins->status, 200) << ins->body;
  json rep = Body(ins);
  EXPECT_EQ(rep["documents_seen"], 2);
  EXPECT_EQ(rep["documents_added"], 2);
  EXPECT_GE(rep["passages_added"].get<int>(), 2);
  // Two documents on the demo's 40 passages do not refit the IDF embedder.
  EXPECT_EQ(rep["embedder_refitted"], false) << ins->body;
  EXPECT_EQ(Documents(c), demo_documents_ + 2);
  EXPECT_TRUE(Finds(c, "/v1", "Quillfeather", "notes/quillfeather.md"));

  // Same content again: unchanged.
  auto again = PostJson(c, "/v1/documents", docs);
  ASSERT_TRUE(again);
  EXPECT_EQ(Body(again)["documents_unchanged"], 2) << again->body;

  auto del = c.Delete("/v1/documents/notes/quillfeather.md");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 200) << del->body;
  EXPECT_EQ(Body(del), json({{"deleted", "notes/quillfeather.md"}}));
  EXPECT_FALSE(Finds(c, "/v1", "Quillfeather", "notes/quillfeather.md"));
  EXPECT_EQ(Documents(c), demo_documents_ + 1);
  ExpectError(c.Delete("/v1/documents/notes/quillfeather.md"), 404, "not_found", "id");
  ExpectError(c.Delete("/v1/documents/no-such-doc"), 404, "not_found", "id");
  EXPECT_EQ(Documents(c), demo_documents_ + 1);
}

TEST_F(ServerTest, WorkspacesAreIsolated) {
  auto server = Serve({}, {{"alpha", DemoCopy("alpha")}, {"beta", DemoCopy("beta")}});
  ASSERT_NE(server, nullptr);
  auto c = Client(*server);
  auto ins = PostJson(c, "/v1/w/alpha/documents",
                      {{"documents",
                        {{{"id", "alpha-only"},
                          {"title", "Marrowglass"},
                          {"text", "Marrowglass is made only in the alpha workspace."}}}}});
  ASSERT_TRUE(ins);
  ASSERT_EQ(ins->status, 200) << ins->body;
  EXPECT_EQ(Documents(c, "/v1/w/alpha"), demo_documents_ + 1);
  EXPECT_EQ(Documents(c, "/v1/w/beta"), demo_documents_);
  EXPECT_EQ(Documents(c, "/v1"), demo_documents_ + 1);  // the first workspace is the default
  EXPECT_TRUE(Finds(c, "/v1/w/alpha", "Marrowglass", "alpha-only"));
  EXPECT_FALSE(Finds(c, "/v1/w/beta", "Marrowglass", "alpha-only"));

  // Deleting in beta: unknown there, and a shared demo document goes only from beta.
  ExpectError(c.Delete("/v1/w/beta/documents/alpha-only"), 404, "not_found", "id");
  EXPECT_TRUE(Finds(c, "/v1/w/alpha", "Marrowglass", "alpha-only"));
  auto del = c.Delete("/v1/w/beta/documents/places/river_ostrel.md");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 200) << del->body;
  EXPECT_EQ(Documents(c, "/v1/w/beta"), demo_documents_ - 1);
  EXPECT_EQ(Documents(c, "/v1/w/alpha"), demo_documents_ + 1);
  EXPECT_TRUE(Finds(c, "/v1/w/alpha", "Ostrel Cairn Moss", "places/river_ostrel.md"));
  EXPECT_FALSE(Finds(c, "/v1/w/beta", "Ostrel Cairn Moss", "places/river_ostrel.md"));
  EXPECT_EQ(Body(c.Get("/v1/w/beta/stats"))["workspace"], "beta");
}

TEST_F(ServerTest, ConcurrentQueriesWhileInsertingAndDeleting) {
  ServerOptions options;
  options.threads = 8;
  auto server = ServeDemo(options);
  ASSERT_NE(server, nullptr);
  std::atomic<bool> writing{true};
  std::atomic<int> answered{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&, t] {
      auto c = Client(*server);
      const char* methods[] = {"bm25", "qafd", "hybrid", "ppr"};
      for (int i = 0; writing.load() || i < 2; ++i) {
        auto r =
            PostJson(c, "/v1/query",
                     {{"question", kQuestion}, {"method", methods[(t + i) % 4]}, {"top_k", 3}});
        json a = Body(r);
        if (!r || r->status != 200 || !a.is_object() || !a["answer"].is_string() ||
            !a["retrieval"]["passages"].is_array()) {
          ++failures;
          ADD_FAILURE() << (r ? std::to_string(r->status) + " " + r->body.substr(0, 300)
                              : std::string("no response"));
        } else {
          ++answered;
        }
      }
    });
  }
  auto c = Client(*server);
  constexpr int kRounds = 4;
  for (int i = 0; i < kRounds; ++i) {
    const std::string id = "live-" + std::to_string(i);
    auto ins = PostJson(c, "/v1/documents",
                        {{"documents",
                          {{{"id", id},
                            {"title", "Live " + std::to_string(i)},
                            {"text", "Zorblax" + std::to_string(i) + " appears in document " + id +
                                         " about the harbour."}}}}});
    ASSERT_TRUE(ins);
    EXPECT_EQ(ins->status, 200) << ins->body;
    EXPECT_TRUE(Finds(c, "/v1", "Zorblax" + std::to_string(i), id));
    if (i > 0) {
      auto del = c.Delete(("/v1/documents/live-" + std::to_string(i - 1)).c_str());
      ASSERT_TRUE(del);
      EXPECT_EQ(del->status, 200) << del->body;
    }
  }
  writing = false;
  for (auto& t : readers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GE(answered.load(), 8);
  // Exactly what was applied: the last document stays, the others are gone.
  EXPECT_EQ(Documents(c), demo_documents_ + 1);
  EXPECT_TRUE(Finds(c, "/v1", "Zorblax3", "live-3"));
  for (int i = 0; i < kRounds - 1; ++i) {
    EXPECT_FALSE(Finds(c, "/v1", "Zorblax" + std::to_string(i), "live-" + std::to_string(i)));
  }
}

TEST_F(ServerTest, BearerTokenGuardsTheApiButNotHealthOrPage) {
  ServerOptions options;
  options.bearer_token = "s3cret";
  auto server = ServeDemo(options);
  ASSERT_NE(server, nullptr);
  auto c = Client(*server);
  EXPECT_EQ(c.Get("/healthz")->status, 200);
  EXPECT_EQ(c.Get("/")->status, 200);
  auto none = c.Get("/v1/stats");
  ExpectError(none, 401, "unauthorized");
  EXPECT_EQ(none->get_header_value("WWW-Authenticate"), "Bearer realm=\"flowrag\"");
  ExpectError(c.Get("/metrics"), 401, "unauthorized");
  ExpectError(c.Get("/v1/stats", {{"Authorization", "Bearer wrong"}}), 401, "unauthorized");
  ExpectError(c.Get("/v1/stats", {{"Authorization", "Bearer s3cret2"}}), 401, "unauthorized");
  ExpectError(c.Get("/v1/stats", {{"Authorization", "Basic s3cret"}}), 401, "unauthorized");
  ExpectError(PostJson(c, "/v1/query", {{"question", kQuestion}}), 401, "unauthorized");
  auto ok = c.Get("/v1/stats", {{"Authorization", "Bearer s3cret"}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  auto q = c.Post("/v1/query", {{"Authorization", "Bearer s3cret"}},
                  json({{"question", kQuestion}, {"method", "bm25"}}).dump(), "application/json");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->status, 200) << q->body;
}

TEST_F(ServerTest, OversizedBodyIs413AndTheServerCarriesOn) {
  ServerOptions options;
  options.max_body_bytes = 64 * 1024;
  auto server = ServeDemo(options);
  ASSERT_NE(server, nullptr);
  auto c = Client(*server);
  const std::string big =
      json({{"question", std::string(100 * 1024, 'a')}, {"method", "bm25"}}).dump();
  ExpectError(c.Post("/v1/query", big, "application/json"), 413, "payload_too_large");
  ExpectError(c.Post("/v1/documents", big, "application/json"), 413, "payload_too_large");
  // Chunked, without a Content-Length.
  size_t sent = 0;
  auto chunked = c.Post(
      "/v1/query",
      [&](size_t, httplib::DataSink& sink) {
        if (sent < big.size()) {
          const size_t n = std::min<size_t>(16 * 1024, big.size() - sent);
          sink.write(big.data() + sent, n);
          sent += n;
        } else {
          sink.done();
        }
        return true;
      },
      "application/json");
  if (chunked) ExpectError(chunked, 413, "payload_too_large");  // or the server hung up early
  auto small = PostJson(c, "/v1/query", {{"question", kQuestion}, {"method", "bm25"}});
  ASSERT_TRUE(small);
  EXPECT_EQ(small->status, 200);
}

// A raw connection for clients that misbehave.
class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawConnection() { close(fd_); }
  bool connected() const { return connected_; }
  bool closed() const { return closed_; }
  void Send(const std::string& s) { (void)!send(fd_, s.data(), s.size(), MSG_NOSIGNAL); }
  // What the server sent within `ms` (until it closes or pauses 100 ms after data).
  std::string Receive(int ms) {
    std::string out;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, out.empty() ? 20 : 100) <= 0) {
        if (!out.empty()) break;
        continue;
      }
      char buf[4096];
      const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) {
        closed_ = true;  // the server closed (or reset) the connection
        break;
      }
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// GET path on a fresh connection; the raw response ("" when none came within 5 s).
std::string RawGet(int port, const std::string& path, const std::string& headers = "") {
  RawConnection conn(port);
  conn.Send("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers +
            "Connection: close\r\n\r\n");
  return conn.Receive(5000);
}

TEST_F(ServerTest, SlowClientsTimeOutWhileOthersAreServed) {
  ServerOptions options;
  options.read_timeout_s = 1;
  options.body_timeout_s = 2;
  auto server = ServeDemo(options);
  ASSERT_NE(server, nullptr);
  const std::string head =
      "POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Content-Length: 200\r\n\r\n";
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };

  // Stalls: sends part of the body, then nothing.
  std::string stalled_reply;
  double stalled_at = 0;
  std::thread stalled([&] {
    RawConnection conn(server->port());
    ASSERT_TRUE(conn.connected());
    conn.Send(head + "{\"question\": ");
    stalled_reply = conn.Receive(6000);
    stalled_at = elapsed();
  });
  // Trickles: one byte every 150 ms, never stalling long enough for the read timeout.
  std::string trickled_reply;
  double trickled_at = 0;
  std::thread trickle([&] {
    RawConnection conn(server->port());
    ASSERT_TRUE(conn.connected());
    conn.Send(head);
    for (int i = 0; i < 60 && trickled_reply.empty(); ++i) {
      conn.Send(" ");
      trickled_reply = conn.Receive(150);
    }
    trickled_at = elapsed();
  });

  // Meanwhile the server answers everyone else promptly.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto c = Client(*server);
  for (int i = 0; i < 3; ++i) {
    auto r = PostJson(c, "/v1/query", {{"question", kQuestion}, {"method", "bm25"}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_LT(elapsed(), 1.0) << "queries waited for the slow clients";
  stalled.join();
  trickle.join();
  EXPECT_EQ(stalled_reply.rfind("HTTP/1.1 408", 0), 0u) << stalled_reply;
  EXPECT_NE(stalled_reply.find("request_timeout"), std::string::npos) << stalled_reply;
  EXPECT_LT(stalled_at, 4.0);
  EXPECT_EQ(trickled_reply.rfind("HTTP/1.1 408", 0), 0u) << trickled_reply;
  EXPECT_GE(trickled_at, 1.9);
  EXPECT_LT(trickled_at, 5.0);
  EXPECT_EQ(c.Get("/healthz")->status, 200);
}

// More slow-header, slow-body and idle connections than worker threads:
// /healthz and queries are still answered at once, and the slow and idle
// connections are closed after their deadlines (408 for an unfinished head
// or body).
TEST_F(ServerTest, SlowHeadersBodiesAndIdleConnectionsDoNotHoldWorkers) {
  ServerOptions options;
  options.threads = 2;
  options.head_timeout_s = 1;
  options.body_timeout_s = 3;  // longer than the probes may wait
  options.keep_alive_timeout_s = 1;
  auto server = ServeDemo(options);
  ASSERT_NE(server, nullptr);
  const int port = server->port();
  const auto start = std::chrono::steady_clock::now();
  constexpr int kSlow = 6;
  constexpr int kIdle = 60;
  // Slow clients: a head byte (even ones) or, after a whole head, a body
  // byte (odd ones) every 100 ms, for at most 6 s.
  std::vector<std::string> slow_replies(kSlow);
  std::vector<double> slow_closed_at(kSlow, -1.0);
  std::vector<std::thread> slow;
  for (int i = 0; i < kSlow; ++i) {
    slow.emplace_back([&, i] {
      RawConnection conn(port);
      std::string trickled = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " +
                             std::string(100, 'a') + "\r\n\r\n";
      if (i % 2 == 1) {
        conn.Send("POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n");
        trickled = std::string(100, ' ');
      }
      for (size_t b = 0; b < trickled.size() && SecondsSince(start) < 6.0; ++b) {
        conn.Send(trickled.substr(b, 1));
        slow_replies[i] += conn.Receive(100);
        if (conn.closed()) {
          slow_closed_at[i] = SecondsSince(start);
          return;
        }
      }
    });
  }
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < kIdle; ++i) idle.push_back(std::make_unique<RawConnection>(port));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(2, 0);  // the slow clients would hold a worker for 6 s
  const auto probe = std::chrono::steady_clock::now();
  auto health = c.Get("/healthz");
  ASSERT_TRUE(health) << "no answer while slow clients were connected";
  EXPECT_EQ(health->status, 200);
  auto query = PostJson(c, "/v1/query", {{"question", kQuestion}, {"method", "bm25"}});
  ASSERT_TRUE(query);
  EXPECT_EQ(query->status, 200);
  EXPECT_LT(SecondsSince(probe), 2.0);

  for (std::thread& t : slow) t.join();
  for (int i = 0; i < kSlow; ++i) {
    EXPECT_EQ(slow_replies[i].rfind("HTTP/1.1 408", 0), 0u) << slow_replies[i];
    EXPECT_NE(slow_replies[i].find("request_timeout"), std::string::npos) << slow_replies[i];
    const double timeout = i % 2 == 0 ? 1.0 : 3.0;  // head or body
    EXPECT_GT(slow_closed_at[i], timeout - 0.1) << "slow client " << i << " was not closed";
    EXPECT_LT(slow_closed_at[i], timeout + 2.5) << "slow client " << i;
  }
  // Idle connections are closed without a word after keep_alive_timeout_s.
  for (auto& conn : idle) {
    EXPECT_EQ(conn->Receive(3000), "");
    EXPECT_TRUE(conn->closed());
  }
  EXPECT_EQ(Client(*server).Get("/healthz")->status, 200);
}

// One connection over max_connections is answered 503 at once; the server
// accepts again once connections close.
TEST_F(ServerTest, ConnectionsOverTheLimitAreRefusedAtOnce) {
  ServerOptions options;
  options.max_connections = 4;
  auto server = ServeDemo(options);
  ASSERT_NE(server, nullptr);
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(std::make_unique<RawConnection>(server->port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // accepted by now
  const auto start = std::chrono::steady_clock::now();
  const std::string refused = RawGet(server->port(), "/healthz");
  EXPECT_LT(SecondsSince(start), 2.0);
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  EXPECT_NE(refused.find("\"unavailable\""), std::string::npos) << refused;
  idle.clear();
  std::string answer;
  for (int i = 0; i < 50 && answer.rfind("HTTP/1.1 200", 0) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    answer = RawGet(server->port(), "/healthz");
  }
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  auto m = Client(*server).Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("flowrag_http_errors_total{route=\"other\",code=\"unavailable\"} 1\n"),
            std::string::npos)
      << m->body;
}

// A Content-Length over the limit is refused from the header, without
// waiting for (or reading) the body.
TEST_F(ServerTest, AnnouncedHugeBodyIs413AtOnce) {
  auto server = ServeDemo();
  ASSERT_NE(server, nullptr);
  RawConnection conn(server->port());
  const auto start = std::chrono::steady_clock::now();
  conn.Send(
      "POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Content-Length: 1000000000000\r\n\r\n{\"question\": ");
  const std::string reply = conn.Receive(5000);
  EXPECT_LT(SecondsSince(start), 3.0);  // read_timeout_s is 10
  EXPECT_EQ(reply.rfind("HTTP/1.1 413", 0), 0u) << reply;
  EXPECT_NE(reply.find("payload_too_large"), std::string::npos) << reply;
}

// A head over 64 KiB is refused with 431, complete or not.
TEST_F(ServerTest, HeadOverTheLimitIs431) {
  auto server = ServeDemo();
  ASSERT_NE(server, nullptr);
  for (const char* end : {"\r\n\r\n", "\r\n"}) {
    RawConnection conn(server->port());
    conn.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + std::string(70000, 'a') +
              end);
    const std::string reply = conn.Receive(5000);
    EXPECT_EQ(reply.rfind("HTTP/1.1 431", 0), 0u) << reply.substr(0, 200);
    EXPECT_NE(reply.find("header_too_large"), std::string::npos) << reply.substr(0, 200);
  }
  EXPECT_EQ(RawGet(server->port(), "/healthz").rfind("HTTP/1.1 200", 0), 0u);
}

// With a token configured, every /v1 path answers 401 without it, before
// routing (404), method (405) or body (411) checks; without a token those
// come in that order.
TEST_F(ServerTest, AuthComesBeforeRoutingAndBodyChecks) {
  ServerOptions options;
  options.bearer_token = "s3cret";
  auto server = ServeDemo(options);
  ASSERT_NE(server, nullptr);
  const int port = server->port();
  for (const char* path : {"/v1/nothing", "/v1/w/nope/stats", "/v1/query", "/v1/w/x%2Fstats"}) {
    const std::string get = RawGet(port, path);
    EXPECT_EQ(get.rfind("HTTP/1.1 401", 0), 0u) << path << "\n" << get;
    RawConnection put(port);
    put.Send("PUT " + std::string(path) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    const std::string reply = put.Receive(5000);
    EXPECT_EQ(reply.rfind("HTTP/1.1 401", 0), 0u) << path << "\n" << reply;
  }
  EXPECT_EQ(RawGet(port, "/v1/nothing", "Authorization: Bearer s3cret\r\n").rfind("HTTP/1.1 404", 0),
            0u);
  RawConnection put(port);
  put.Send("PUT /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer s3cret\r\n\r\n");
  const std::string reply = put.Receive(5000);
  EXPECT_EQ(reply.rfind("HTTP/1.1 405", 0), 0u) << reply;
}

// An encoded slash stays inside its path segment: /v1/w/b%2Fstats names the
// workspace "b/stats", which cannot exist, not /v1/w/b/stats.
TEST_F(ServerTest, EncodedSlashIsNotAPathSeparator) {
  auto server = Serve({}, {{"default", DemoCopy("default")}, {"b", DemoCopy("b")}});
  ASSERT_NE(server, nullptr);
  const int port = server->port();
  EXPECT_EQ(RawGet(port, "/v1/w/b/stats").rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(RawGet(port, "/v1/w/%62/stats").rfind("HTTP/1.1 200", 0), 0u);  // %62 is "b"
  for (const char* path : {"/v1/w/b%2Fstats", "/v1/w/b%2fstats", "/v1%2Fstats", "/v1/w%2Fb/stats"}) {
    const std::string reply = RawGet(port, path);
    EXPECT_EQ(reply.rfind("HTTP/1.1 404", 0), 0u) << path << "\n" << reply;
  }
  auto route = server::ParseRoute("/v1/documents/people%2Fada.md");
  EXPECT_EQ(route.kind, server::RouteKind::kDocument);
  EXPECT_EQ(route.document_id, "people/ada.md");  // an id may hold a slash
  EXPECT_EQ(server::ParseRoute("/v1/w/b%2Fstats").kind, server::RouteKind::kUnknown);
  EXPECT_EQ(server::ParseRoute("/v1/w/%62/stats").workspace, "b");
}

// A number beyond the range of a double is a 400 naming its field, wherever it is.
TEST_F(ServerTest, NumbersOutOfRangeAre400NamingTheField) {
  auto server = ServeDemo();
  ASSERT_NE(server, nullptr);
  auto c = Client(*server);
  const std::string q = "{\"question\": \"x\", \"method\": \"bm25\", ";
  ExpectError(c.Post("/v1/query", q + "\"top_k\": 1e400}", "application/json"), 400,
              "invalid_argument", "top_k");
  ExpectError(c.Post("/v1/query", q + "\"deadline_ms\": -1e400}", "application/json"), 400,
              "invalid_argument", "deadline_ms");
  ExpectError(c.Post("/v1/query", q + "\"max_steps\": 1e400}", "application/json"), 400,
              "invalid_argument", "max_steps");
  ExpectError(c.Post("/v1/query", q + "\"options\": {\"ppr.alpha\": 1E+999}}", "application/json"),
              400, "invalid_argument", "options.ppr.alpha");
  ExpectError(c.Post("/v1/documents",
                     "{\"documents\": [{\"id\": \"a\", \"text\": \"t\"}, {\"id\": 1e400}]}",
                     "application/json"),
              400, "invalid_argument", "documents[1].id");
  auto top = c.Post("/v1/query", "1e400", "application/json");
  ExpectError(top, 400, "invalid_argument");
  EXPECT_EQ(Body(top)["error"].count("field"), 0u) << top->body;
  EXPECT_EQ(Documents(c), demo_documents_);
}

// A malformed body of megabytes is quoted by a short excerpt, not echoed.
TEST_F(ServerTest, ErrorsQuoteAShortExcerptOfTheInput) {
  auto server = ServeDemo();
  ASSERT_NE(server, nullptr);
  auto c = Client(*server);
  const std::string body = "{\"question\": \"" + std::string(6 << 20, 'a');  // no closing quote
  auto r = c.Post("/v1/query", body, "application/json");
  ExpectError(r, 400, "invalid_json");
  EXPECT_LT(r->body.size(), 600u) << r->body.substr(0, 2000);
  const std::string message = Body(r)["error"].value("message", "");
  EXPECT_NE(message.find("(byte "), std::string::npos) << message;
  EXPECT_NE(message.find("...aaaa"), std::string::npos) << message;
  // Paths are quoted short too.
  auto route = c.Get(("/v1/" + std::string(6000, 'x')).c_str());
  ExpectError(route, 404, "not_found");
  EXPECT_LT(route->body.size(), 300u) << route->body;
  auto ws = c.Get(("/v1/w/" + std::string(6000, 'y') + "/stats").c_str());
  ExpectError(ws, 404, "workspace_not_found");
  EXPECT_LT(ws->body.size(), 300u) << ws->body;
}

TEST_F(ServerTest, MetricsCountTheRequestsMade) {
  auto server = ServeDemo();
  ASSERT_NE(server, nullptr);
  auto c = Client(*server);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c.Get("/healthz")->status, 200);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(c.Get("/v1/stats")->status, 200);
  EXPECT_EQ(PostJson(c, "/v1/query", {{"question", kQuestion}, {"method", "bm25"}})->status, 200);
  EXPECT_EQ(c.Post("/v1/query", "{", "application/json")->status, 400);
  EXPECT_EQ(c.Get("/nope")->status, 404);
  auto m = c.Get("/metrics");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->status, 200);
  EXPECT_NE(m->get_header_value("Content-Type").find("text/plain"), std::string::npos);
  const std::string& text = m->body;
  for (const char* line : {
           "flowrag_http_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\","
           "workspace=\"default\"} 3\n",
           "flowrag_http_requests_total{route=\"/v1/stats\",method=\"GET\",status=\"200\","
           "workspace=\"default\"} 2\n",
           "flowrag_http_requests_total{route=\"/v1/query\",method=\"POST\",status=\"200\","
           "workspace=\"default\"} 1\n",
           "flowrag_http_requests_total{route=\"/v1/query\",method=\"POST\",status=\"400\","
           "workspace=\"default\"} 1\n",
           "flowrag_http_requests_total{route=\"other\",method=\"GET\",status=\"404\","
           "workspace=\"\"} 1\n",
           "flowrag_http_request_duration_seconds_count{route=\"/v1/stats\"} 2\n",
           "flowrag_http_request_duration_seconds_bucket{route=\"/healthz\",le=\"+Inf\"} 3\n",
           "flowrag_http_errors_total{route=\"/v1/query\",code=\"invalid_json\"} 1\n",
           "flowrag_http_errors_total{route=\"other\",code=\"not_found\"} 1\n",
           "flowrag_http_requests_in_flight 1\n",
           "# TYPE flowrag_http_request_duration_seconds histogram\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << "missing: " << line << "\nin:\n" << text;
  }
  // The scrape itself is counted by the next one.
  auto again = c.Get("/metrics");
  EXPECT_NE(again->body.find("flowrag_http_requests_total{route=\"/metrics\",method=\"GET\","
                             "status=\"200\",workspace=\"default\"} 1\n"),
            std::string::npos);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
