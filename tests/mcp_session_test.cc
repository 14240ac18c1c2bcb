// McpSession (src/mcp/session.h) over a real engine on a temporary store:
// JSON-RPC framing (parse errors, invalid requests, notifications, batches,
// unknown methods), initialize's version negotiation, the tools and their
// errors, resources with a cursor, the stdio line transport (oversize lines,
// end of input) and the Streamable HTTP checks of src/server/routes_mcp.cc.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "flowrag/engine.h"
#include "mcp/jsonrpc.h"
#include "mcp/resources.h"
#include "mcp/session.h"
#include "mcp/stdio.h"
#include "server/handlers.h"
#include "server/routes.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using nlohmann::json;

class McpSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto engine = Engine::Open(dir_.File("store.db"));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    auto report = engine_->IndexDocuments({
        {"places/ostrel.md", "River Ostrel",
         "The River Ostrel is 212 km long. It rises in the Greymantle hills."},
        {"people/corin aske?.md", "Corin Aske",
         "Corin Aske founded the Lantern Tide Festival. He was born in Wrenfield."},
        {"wrenfield.md", "Wrenfield", "Wrenfield is a market town on the River Ostrel."},
    });
    ASSERT_TRUE(report.ok()) << report.status().ToString();
  }

  // One request through a fresh session; the parsed response.
  json Call(const std::string& method, const json& params, mcp::McpSessionOptions options = {}) {
    mcp::McpSession session(*engine_, std::move(options));
    json request = {{"jsonrpc", "2.0"}, {"id", 7}, {"method", method}, {"params", params}};
    mcp::McpReply reply = session.Handle(request.dump());
    EXPECT_TRUE(reply.body.has_value());
    return json::parse(reply.body.value_or("null"));
  }
  json Tool(const std::string& name, const json& args) {
    return Call("tools/call", {{"name", name}, {"arguments", args}});
  }

  testing::TempDir dir_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(McpSessionTest, InitializeNegotiatesTheProtocolVersion) {
  mcp::McpSession session(*engine_);
  for (const char* version : {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) {
    json r = json::parse(*session
                              .Handle(json({{"jsonrpc", "2.0"},
                                            {"id", 1},
                                            {"method", "initialize"},
                                            {"params",
                                             {{"protocolVersion", version},
                                              {"capabilities", json::object()},
                                              {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}})
                                          .dump())
                              .body);
    EXPECT_EQ(r["result"]["protocolVersion"], version);
    EXPECT_EQ(session.protocol_version(), version);
    EXPECT_TRUE(r["result"]["capabilities"].contains("tools"));
    EXPECT_TRUE(r["result"]["capabilities"].contains("resources"));
    EXPECT_EQ(r["result"]["serverInfo"]["name"], "flowrag");
  }
  EXPECT_EQ(session.client_name(), "t");
  json r = Call("initialize", {{"protocolVersion", "1999-01-01"}});
  EXPECT_EQ(r["result"]["protocolVersion"], "2025-11-25");  // ours; the client decides
  r = Call("initialize", json::object());
  EXPECT_EQ(r["error"]["code"], mcp::kInvalidParams);
  EXPECT_EQ(r["error"]["data"]["field"], "protocolVersion");
  EXPECT_FALSE(session.initialized());
  EXPECT_FALSE(session.Handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").body);
  EXPECT_TRUE(session.initialized());
}

TEST_F(McpSessionTest, MalformedMessagesGetJsonRpcErrors) {
  mcp::McpSession session(*engine_);
  mcp::McpReply reply = session.Handle(R"({"jsonrpc":"2.0","id":1,"method":"ping")");
  ASSERT_TRUE(reply.body);
  EXPECT_TRUE(reply.malformed);
  json r = json::parse(*reply.body);
  EXPECT_EQ(r["error"]["code"], mcp::kParseError);
  EXPECT_TRUE(r["id"].is_null());
  EXPECT_NE(r["error"]["message"].get<std::string>().find("byte"), std::string::npos);

  for (const char* bad :
       {R"({"id":1,"method":"ping"})", R"({"jsonrpc":"1.0","id":1,"method":"ping"})",
        R"({"jsonrpc":"2.0","id":1,"method":5})", R"({"jsonrpc":"2.0","id":null,"method":"ping"})",
        R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})", R"("ping")", "[]"}) {
    reply = session.Handle(bad);
    ASSERT_TRUE(reply.body) << bad;
    EXPECT_TRUE(reply.malformed) << bad;
    EXPECT_EQ(json::parse(*reply.body)["error"]["code"], mcp::kInvalidRequest) << bad;
  }
  // The id survives when it is readable.
  r = json::parse(*session.Handle(R"({"jsonrpc":"1.0","id":"x","method":"ping"})").body);
  EXPECT_EQ(r["id"], "x");
  // params must be an object.
  r = json::parse(
      *session.Handle(R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":[1]})").body);
  EXPECT_EQ(r["error"]["code"], mcp::kInvalidParams);
  EXPECT_EQ(r["error"]["data"]["field"], "params");
  // Deep nesting is refused before parsing, not a crash.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  r = json::parse(*session.Handle(deep).body);
  EXPECT_EQ(r["error"]["code"], mcp::kInvalidRequest);
  // Invalid UTF-8 is a parse error.
  r = json::parse(*session.Handle("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}").body);
  EXPECT_EQ(r["error"]["code"], mcp::kParseError);
}

TEST_F(McpSessionTest, UnknownMethodAndNotifications) {
  mcp::McpSession session(*engine_);
  json r =
      json::parse(*session.Handle(R"({"jsonrpc":"2.0","id":"a","method":"prompts/list"})").body);
  EXPECT_EQ(r["id"], "a");
  EXPECT_EQ(r["error"]["code"], mcp::kMethodNotFound);
  EXPECT_EQ(r["error"]["data"]["method"], "prompts/list");
  // Notifications, known or not, and responses get nothing back.
  EXPECT_FALSE(session.Handle(R"({"jsonrpc":"2.0","method":"notifications/whatever"})").body);
  EXPECT_FALSE(
      session
          .Handle(
              R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})")
          .body);
  EXPECT_FALSE(session.Handle(R"({"jsonrpc":"2.0","id":9,"result":{}})").body);
  r = json::parse(*session.Handle(R"({"jsonrpc":"2.0","id":3,"method":"ping"})").body);
  EXPECT_EQ(r, json::parse(R"({"jsonrpc":"2.0","id":3,"result":{}})"));
}

TEST_F(McpSessionTest, BatchesAnswerTheirRequestsInOrder) {
  mcp::McpSession session(*engine_);
  mcp::McpReply reply = session.Handle(
      R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},)"
      R"({"jsonrpc":"2.0","id":2,"method":"nope"},{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-03-26"}},7])");
  ASSERT_TRUE(reply.body);
  EXPECT_FALSE(reply.malformed);
  json r = json::parse(*reply.body);
  ASSERT_TRUE(r.is_array());
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0]["id"], 1);
  EXPECT_TRUE(r[0].contains("result"));
  EXPECT_EQ(r[1]["error"]["code"], mcp::kMethodNotFound);
  EXPECT_EQ(r[2]["error"]["code"], mcp::kInvalidRequest);  // initialize in a batch
  EXPECT_EQ(r[3]["error"]["code"], mcp::kInvalidRequest);  // 7 is no message
  EXPECT_TRUE(session.initialized());
  EXPECT_FALSE(session.Handle(R"([{"jsonrpc":"2.0","method":"notifications/initialized"}])").body);
  mcp::McpSessionOptions small;
  small.max_batch = 2;
  mcp::McpSession limited(*engine_, small);
  reply = limited.Handle(
      R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}])");
  EXPECT_TRUE(reply.malformed);
  EXPECT_EQ(json::parse(*reply.body)["error"]["code"], mcp::kInvalidRequest);
}

TEST_F(McpSessionTest, ToolsListDescribesEveryTool) {
  json r = Call("tools/list", json::object());
  std::vector<std::string> names;
  for (const json& t : r["result"]["tools"]) {
    names.push_back(t["name"]);
    EXPECT_EQ(t["inputSchema"]["type"], "object") << t.dump();
    EXPECT_FALSE(t["description"].get<std::string>().empty());
    EXPECT_TRUE(t.contains("outputSchema")) << t["name"];
  }
  EXPECT_EQ(names, (std::vector<std::string>{"query", "ask", "index_text", "delete", "stats"}));
  EXPECT_EQ(r["result"]["tools"][0]["inputSchema"]["required"], json::array({"question"}));

  mcp::McpSessionOptions old;
  old.protocol_version = "2024-11-05";
  old.allow_writes = false;
  r = Call("tools/list", json::object(), old);
  ASSERT_EQ(r["result"]["tools"].size(), 3u);
  EXPECT_FALSE(r["result"]["tools"][0].contains("outputSchema"));
}

TEST_F(McpSessionTest, QueryReturnsPassagesAsTextAndStructuredContent) {
  json r = Tool("query",
                {{"question", "How long is the River Ostrel?"}, {"method", "bm25"}, {"top_k", 2}});
  const json& result = r["result"];
  ASSERT_FALSE(result["isError"].get<bool>()) << r.dump();
  const json& passages = result["structuredContent"]["passages"];
  ASSERT_EQ(passages.size(), 2u);
  EXPECT_EQ(passages[0]["document_id"], "places/ostrel.md");
  EXPECT_EQ(passages[0]["title"], "River Ostrel");
  EXPECT_EQ(passages[0]["uri"], "flowrag://documents/places/ostrel.md");
  EXPECT_GT(passages[0]["score"].get<double>(), 0.0);
  const std::string text = result["content"][0]["text"];
  EXPECT_NE(text.find("212 km"), std::string::npos);
  EXPECT_NE(text.find("places/ostrel.md"), std::string::npos);
  EXPECT_EQ(result["content"][1]["type"], "resource_link");
  // Per-query options pass through; an unknown one is the engine's error.
  r = Tool("query", {{"question", "Ostrel"}, {"method", "bm25"}, {"params", {{"bm25.k1", 0.9}}}});
  EXPECT_FALSE(r["result"]["isError"].get<bool>()) << r.dump();
  r = Tool("query", {{"question", "Ostrel"}, {"method", "bm25"}, {"params", {{"bm25.nope", 1}}}});
  EXPECT_TRUE(r["result"]["isError"].get<bool>());
  EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("bm25.nope"),
            std::string::npos);
}

TEST_F(McpSessionTest, WrongArgumentsAreToolErrorsNamingTheField) {
  struct Case {
    const char* tool;
    json args;
    const char* names;
  };
  const std::vector<Case> cases = {
      {"query", {{"question", "x"}, {"top_k", "ten"}}, "query: top_k:"},
      {"query", {{"question", "x"}, {"top_k", 0}}, "query: top_k:"},
      {"query", {{"question", "x"}, {"top_k", 2.5}}, "query: top_k:"},
      {"query", {{"top_k", 3}}, "query: question:"},
      {"query", {{"question", "   "}}, "query: question:"},
      {"query", {{"question", "x"}, {"method", "nope"}}, "query: method:"},
      {"query", {{"question", "x"}, {"colour", "red"}}, "query: colour:"},
      {"query", {{"question", "x"}, {"params", {{"a", {1}}}}}, "query: params.a:"},
      {"ask", {{"question", "x"}, {"pipeline", "loop"}}, "ask: pipeline:"},
      {"index_text", {{"id", "a"}}, "index_text: text:"},
      {"index_text",
       {{"documents", {{{"id", "a"}, {"text", 5}}}}},
       "index_text: documents[0].text:"},
      {"index_text", {{"documents", json::array()}}, "index_text: documents:"},
      {"delete", {{"ids", "a"}}, "delete: ids:"},
      {"delete", {{"ids", {"a", 3}}}, "delete: ids[1]:"},
      {"stats", {{"verbose", true}}, "stats: verbose:"},
  };
  for (const Case& c : cases) {
    json r = Tool(c.tool, c.args);
    ASSERT_TRUE(r.contains("result")) << r.dump();
    EXPECT_TRUE(r["result"]["isError"].get<bool>()) << c.args.dump();
    const std::string text = r["result"]["content"][0]["text"];
    EXPECT_EQ(text.rfind(c.names, 0), 0u) << text;
  }
}

TEST_F(McpSessionTest, UnknownToolAndMalformedCallsAreProtocolErrors) {
  json r = Tool("no_such_tool", json::object());
  EXPECT_EQ(r["error"]["code"], mcp::kInvalidParams);
  EXPECT_EQ(r["error"]["data"]["tool"], "no_such_tool");
  EXPECT_NE(r["error"]["message"].get<std::string>().find("no_such_tool"), std::string::npos);
  r = Call("tools/call", {{"arguments", json::object()}});
  EXPECT_EQ(r["error"]["data"]["field"], "name");
  r = Call("tools/call", {{"name", "query"}, {"arguments", "x"}});
  EXPECT_EQ(r["error"]["data"]["field"], "arguments");
  mcp::McpSessionOptions read_only;
  read_only.allow_writes = false;
  r = Call("tools/call", {{"name", "delete"}, {"arguments", {{"ids", {"wrenfield.md"}}}}},
           read_only);
  EXPECT_EQ(r["error"]["code"], mcp::kInvalidParams);
  EXPECT_TRUE(engine_->GetDocument("wrenfield.md").ok());
}

TEST_F(McpSessionTest, IndexTextAskAndDelete) {
  json r =
      Tool("index_text", {{"documents",
                           {{{"id", "quarry"},
                             {"title", "Zephyr Quarry"},
                             {"text", "The Zephyr Quarry produced blue slate until 1932."}}}}});
  ASSERT_FALSE(r["result"]["isError"].get<bool>()) << r.dump();
  EXPECT_EQ(r["result"]["structuredContent"]["documents_added"], 1);
  r = Tool("query", {{"question", "Zephyr Quarry slate"}, {"method", "bm25"}, {"top_k", 1}});
  EXPECT_EQ(r["result"]["structuredContent"]["passages"][0]["document_id"], "quarry");

  r = Tool("ask", {{"question", "Where was Corin Aske born?"}, {"pipeline", "single"}});
  ASSERT_FALSE(r["result"]["isError"].get<bool>()) << r.dump();
  EXPECT_NE(r["result"]["structuredContent"]["answer"].get<std::string>().find("Wrenfield"),
            std::string::npos)
      << r.dump();
  EXPECT_FALSE(r["result"]["structuredContent"]["citations"].empty());

  // An unknown id fails the call and deletes nothing.
  r = Tool("delete", {{"ids", {"quarry", "missing"}}});
  EXPECT_TRUE(r["result"]["isError"].get<bool>());
  EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("\"missing\""),
            std::string::npos);
  EXPECT_TRUE(engine_->GetDocument("quarry").ok());
  r = Tool("delete", {{"ids", {"quarry"}}});
  ASSERT_FALSE(r["result"]["isError"].get<bool>()) << r.dump();
  EXPECT_EQ(r["result"]["structuredContent"]["deleted"], json::array({"quarry"}));
  EXPECT_EQ(engine_->GetDocument("quarry").status().code(), StatusCode::kNotFound);

  r = Tool("stats", json::object());
  EXPECT_EQ(r["result"]["structuredContent"]["documents"], 3);
}

TEST_F(McpSessionTest, ResourcesPageWithACursorAndRead) {
  mcp::McpSessionOptions options;
  options.page_size = 2;
  json r = Call("resources/list", json::object(), options);
  const json first = r["result"];
  ASSERT_EQ(first["resources"].size(), 2u);
  ASSERT_TRUE(first.contains("nextCursor"));
  EXPECT_EQ(first["resources"][0]["name"], "River Ostrel");
  EXPECT_EQ(first["resources"][0]["mimeType"], "text/plain");
  r = Call("resources/list", {{"cursor", first["nextCursor"]}}, options);
  ASSERT_EQ(r["result"]["resources"].size(), 1u);
  EXPECT_FALSE(r["result"].contains("nextCursor"));
  EXPECT_EQ(r["result"]["resources"][0]["uri"], "flowrag://documents/wrenfield.md");

  const std::string uri = first["resources"][1]["uri"];
  EXPECT_EQ(uri, "flowrag://documents/people/corin%20aske%3F.md");
  r = Call("resources/read", {{"uri", uri}});
  EXPECT_EQ(r["result"]["contents"][0]["text"],
            "Corin Aske founded the Lantern Tide Festival. He was born in Wrenfield.");
  EXPECT_EQ(r["result"]["contents"][0]["mimeType"], "text/plain");

  r = Call("resources/list", {{"cursor", "garbage"}});
  EXPECT_EQ(r["error"]["code"], mcp::kInvalidParams);
  EXPECT_EQ(r["error"]["data"]["field"], "cursor");
  r = Call("resources/read", {{"uri", "flowrag://documents/missing"}});
  EXPECT_EQ(r["error"]["code"], mcp::kResourceNotFound);
  r = Call("resources/read", {{"uri", "file:///etc/passwd"}});
  EXPECT_EQ(r["error"]["code"], mcp::kInvalidParams);
  EXPECT_EQ(r["error"]["data"]["field"], "uri");
  r = Call("resources/templates/list", json::object());
  EXPECT_EQ(r["result"]["resourceTemplates"][0]["uriTemplate"], "flowrag://documents/{id}");
}

TEST(McpRoutes, McpIsAPostRouteOfEveryWorkspace) {
  using server::RouteKind;
  EXPECT_EQ(server::ParseRoute("/mcp").kind, RouteKind::kMcp);
  EXPECT_EQ(server::ParseRoute("/v1/mcp").kind, RouteKind::kMcp);
  const server::Route ws = server::ParseRoute("/v1/w/wiki/mcp");
  EXPECT_EQ(ws.kind, RouteKind::kMcp);
  EXPECT_FALSE(ws.default_workspace);
  EXPECT_EQ(ws.workspace, "wiki");
  EXPECT_EQ(server::ParseRoute("/mcp/x").kind, RouteKind::kUnknown);
  EXPECT_TRUE(server::MethodAllowed(RouteKind::kMcp, "POST"));
  EXPECT_FALSE(server::MethodAllowed(RouteKind::kMcp, "GET"));     // no SSE stream: 405
  EXPECT_FALSE(server::MethodAllowed(RouteKind::kMcp, "DELETE"));  // no sessions: 405
  EXPECT_TRUE(server::NeedsAuth(RouteKind::kMcp));
  EXPECT_EQ(server::RouteLabel(RouteKind::kMcp), "/v1/mcp");
}

TEST(McpDocumentUri, RoundTripsAnyId) {
  for (const std::string& id : std::vector<std::string>{"a", "people/ada.md", "100% sure?#x",
                                                        "naïve é", std::string("\x01\xff", 2)}) {
    EXPECT_EQ(mcp::DocumentIdOfUri(mcp::DocumentUri(id)), id);
  }
  EXPECT_EQ(mcp::DocumentIdOfUri("flowrag://documents/a%2Fb"), "a/b");
  EXPECT_FALSE(mcp::DocumentIdOfUri("flowrag://documents/"));
  EXPECT_FALSE(mcp::DocumentIdOfUri("flowrag://documents/%zz"));
  EXPECT_FALSE(mcp::DocumentIdOfUri("flowrag://documents/%4"));
  EXPECT_FALSE(mcp::DocumentIdOfUri("http://documents/a"));
}

// ServeLines over an in-memory input, `chunk` bytes per read.
std::string Serve(Engine& engine, const std::string& input, size_t max_line,
                  std::vector<std::string>* log, size_t chunk = 7) {
  mcp::McpSession session(engine);
  size_t at = 0;
  auto read = [&](char* buf, size_t n) -> long {
    const size_t k = std::min({n, chunk, input.size() - at});
    std::copy_n(input.data() + at, k, buf);
    at += k;
    return static_cast<long>(k);
  };
  std::string out;
  mcp::StdioOptions options;
  options.max_line_bytes = max_line;
  options.log = [log](const std::string& line) { log->push_back(line); };
  Status st = mcp::ServeLines(
      session, read,
      [&out](std::string_view s) {
        out.append(s);
        return true;
      },
      options);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

std::vector<json> Lines(const std::string& out) {
  std::vector<json> lines;
  size_t start = 0;
  while (start < out.size()) {
    const size_t nl = out.find('\n', start);
    lines.push_back(json::parse(out.substr(start, nl - start)));
    start = nl + 1;
  }
  return lines;
}

TEST_F(McpSessionTest, StdioSkipsAnOversizeLineAndKeepsServing) {
  const std::string ping1 = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  const std::string huge = R"({"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":")" +
                           std::string(5000, 'x') + "\"}}";
  const std::string input = ping1 + "\r\n\n" + huge + "\n" + "not json\n" +
                            R"({"jsonrpc":"2.0","method":"notifications/initialized"})" + "\n" +
                            R"({"jsonrpc":"2.0","id":3,"method":"ping"})";  // no final newline
  std::vector<std::string> log;
  const std::vector<json> lines = Lines(Serve(*engine_, input, 1000, &log));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0]["id"], 1);
  EXPECT_EQ(lines[1]["error"]["code"], mcp::kInvalidRequest);
  EXPECT_TRUE(lines[1]["id"].is_null());
  const std::string message = lines[1]["error"]["message"];
  EXPECT_NE(message.find("line 3"), std::string::npos) << message;
  EXPECT_NE(message.find("longer than 1000 bytes"), std::string::npos) << message;
  EXPECT_LT(message.size(), 300u);
  EXPECT_EQ(lines[2]["error"]["code"], mcp::kParseError);
  EXPECT_EQ(lines[3]["id"], 3);
  ASSERT_EQ(log.size(), 2u);  // the oversize line and the parse error
  EXPECT_NE(log[0].find("line 3"), std::string::npos);
}

TEST_F(McpSessionTest, StdioEndsCleanlyOnEmptyInputAndOnAHugeLastLine) {
  std::vector<std::string> log;
  EXPECT_EQ(Serve(*engine_, "", 100, &log), "");
  const std::vector<json> lines =
      Lines(Serve(*engine_, std::string(100000, '{'), 100, &log, 65536));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["error"]["code"], mcp::kInvalidRequest);
}

TEST_F(McpSessionTest, StdioStopsWhenTheOutputIsGone) {
  mcp::McpSession session(*engine_);
  const std::string input = R"({"jsonrpc":"2.0","id":1,"method":"ping"})"
                            "\n";
  size_t at = 0;
  auto read = [&](char* buf, size_t n) -> long {
    const size_t k = std::min(n, input.size() - at);
    std::copy_n(input.data() + at, k, buf);
    at += k;
    return static_cast<long>(k);
  };
  Status st = mcp::ServeLines(session, read, [](std::string_view) { return false; }, {});
  EXPECT_EQ(st.code(), StatusCode::kIoError);
}

TEST_F(McpSessionTest, HttpBindingChecksHeadersAndAnswersNotificationsWith202) {
  server::McpHttpRequest request;
  const std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  request.body = ping;
  request.content_type = "application/json";
  request.accept = "application/json, text/event-stream";
  request.host = "127.0.0.1:8080";
  server::McpHttpReply reply = server::HandleMcp(*engine_, request);
  EXPECT_EQ(reply.http_status, 200);
  EXPECT_EQ(json::parse(reply.body)["result"], json::object());

  const std::string note = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";
  request.body = note;
  reply = server::HandleMcp(*engine_, request);
  EXPECT_EQ(reply.http_status, 202);
  EXPECT_TRUE(reply.body.empty());

  request.body = "{";
  EXPECT_EQ(server::HandleMcp(*engine_, request).http_status, 400);
  request.body = ping;

  server::McpHttpRequest r = request;
  r.content_type = "text/plain";
  EXPECT_EQ(server::HandleMcp(*engine_, r).http_status, 415);
  r = request;
  r.origin = "http://evil.example";
  EXPECT_EQ(server::HandleMcp(*engine_, r).http_status, 403);
  r.origin = "http://127.0.0.1:8080";
  EXPECT_EQ(server::HandleMcp(*engine_, r).http_status, 200);
  r = request;
  r.accept = "text/event-stream";
  EXPECT_EQ(server::HandleMcp(*engine_, r).http_status, 406);
  r = request;
  r.protocol_version = "2000-01-01";
  reply = server::HandleMcp(*engine_, r);
  EXPECT_EQ(reply.http_status, 400);
  EXPECT_NE(reply.body.find("2025-06-18"), std::string::npos);
  // The header's revision decides the result's shape.
  const std::string list = R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})";
  r = request;
  r.body = list;
  r.protocol_version = "2024-11-05";
  EXPECT_FALSE(json::parse(server::HandleMcp(*engine_, r).body)["result"]["tools"][0].contains(
      "outputSchema"));
  r.protocol_version = "2025-06-18";
  EXPECT_TRUE(json::parse(server::HandleMcp(*engine_, r).body)["result"]["tools"][0].contains(
      "outputSchema"));
  r.read_only = true;
  EXPECT_EQ(json::parse(server::HandleMcp(*engine_, r).body)["result"]["tools"].size(), 3u);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
