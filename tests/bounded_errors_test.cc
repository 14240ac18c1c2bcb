// Every error of the HTTP API, MCP, the CLI and `config check` quotes at most
// kMaxQuotedInputBytes (200) of its input and names no file of the server
// (issue 32, item 2), whatever field the input came in: a 1 MiB value goes
// into every string field of every route of the route table (as
// /openapi.json describes it), every argument of every MCP tool (as
// tools/list describes them), every option of every CLI command that takes
// a value (as `--help` lists them; 100 KB, the most one argument can be) and
// every value and key of flowrag.yaml. Also: a streamed request that is
// wrong is refused like an unstreamed one, before any event (item 3), and
// heads whose body length is ambiguous are refused (item 6).
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/text.h"
#include "flowrag/engine.h"
#include "flowrag/server.h"
#include "mcp/tools.h"
#include "server/openapi.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using nlohmann::json;

constexpr size_t kMaxQuoted = 200;           // kMaxQuotedInputBytes
constexpr size_t kMaxErrorBytes = 2048;      // a whole error, generously
constexpr size_t kBodyValueBytes = 1 << 20;  // a value in a JSON body
// A value in a path, query string or header: heads are at most 64 KiB and
// request targets 8 KiB, so a longer one is refused before any handler.
constexpr size_t kHeadValueBytes = 6000;
constexpr size_t kCliValueBytes = 100000;  // Linux allows 128 KiB per argument

// The fillers: a two-byte character in JSON bodies (a cut must not split
// it), an ASCII letter where the value goes into a URL or a command line.
const std::string kWide = "\xC3\xA9";  // é
const std::string kNarrow = "q";

std::string Filler(const std::string& unit, size_t bytes) {
  std::string out;
  out.reserve(bytes);
  while (out.size() + unit.size() <= bytes) out += unit;
  return out;
}

// The longest stretch of `text` made of `unit` repeated, in bytes.
size_t LongestRun(std::string_view text, std::string_view unit) {
  size_t best = 0, run = 0;
  for (size_t i = 0; i + unit.size() <= text.size();) {
    if (text.substr(i, unit.size()) == unit) {
      run += unit.size();
      best = std::max(best, run);
      i += unit.size();
    } else {
      run = 0;
      ++i;
    }
  }
  return best;
}

// The checks of one error, wherever it came from.
void ExpectBounded(const std::string& what, const std::string& error, const std::string& unit,
                   const std::string& server_dir) {
  EXPECT_LE(LongestRun(error, unit), kMaxQuoted) << what << ": " << error.substr(0, 800);
  EXPECT_LE(error.size(), kMaxErrorBytes) << what << ": " << error.substr(0, 800);
  if (!server_dir.empty()) {
    EXPECT_EQ(error.find(server_dir), std::string::npos) << what << ": " << error;
  }
  EXPECT_TRUE(IsValidUtf8(error)) << what;
}

// ---------------------------------------------------------------------------
// JSON Schema walking: the fields of a request schema, and a value set at a
// field with whatever around it the schema asks for.

class Schemas {
 public:
  explicit Schemas(json components) : components_(std::move(components)) {}

  const json& Resolve(const json& schema) const {
    if (schema.is_object() && schema.contains("$ref")) {
      const std::string ref = schema["$ref"];
      return components_.at(ref.substr(ref.rfind('/') + 1));
    }
    return schema;
  }

  // A small instance: required properties, consts, one item of a
  // non-empty array.
  json Example(const json& raw) const {
    const json& schema = Resolve(raw);
    if (schema.contains("const")) return schema["const"];
    if (schema.contains("enum")) return schema["enum"][0];
    if (schema.contains("oneOf")) return Example(schema["oneOf"][0]);
    const std::string type = TypeOf(schema);
    if (type == "object") {
      json out = json::object();
      for (const json& name : schema.value("required", json::array())) {
        out[name.get<std::string>()] = Example(schema["properties"][name.get<std::string>()]);
      }
      return out;
    }
    if (type == "array") {
      if (schema.value("minItems", 0) == 0 || !schema.contains("items")) return json::array();
      return json::array({Example(schema["items"])});
    }
    if (type == "integer" || type == "number") return schema.value("minimum", 1);
    if (type == "boolean") return false;
    return "text";
  }

  // The JSON pointers of every field under `schema` ("/options/*" stands for
  // any member of an object of additionalProperties).
  void Fields(const json& raw, const std::string& at, std::vector<std::string>* out,
              int depth = 0) const {
    if (depth > 8) return;
    const json& schema = Resolve(raw);
    for (const char* alternatives : {"oneOf", "anyOf"}) {
      if (schema.contains(alternatives)) {
        for (const json& alt : schema[alternatives]) Fields(alt, at, out, depth + 1);
      }
    }
    if (schema.contains("properties")) {
      for (const auto& [name, sub] : schema["properties"].items()) {
        out->push_back(at + "/" + name);
        Fields(sub, at + "/" + name, out, depth + 1);
      }
    }
    if (schema.contains("additionalProperties") && schema["additionalProperties"].is_object()) {
      out->push_back(at + "/*");
    }
    if (schema.contains("items")) Fields(schema["items"], at + "/0", out, depth + 1);
  }

  // Sets `value` at `pointer` in *node (of `schema`), building what is
  // missing or of another shape on the way from the schema's examples.
  void Set(json* node, const json& raw, const std::vector<std::string>& tokens, size_t i,
           const json& value) const {
    if (i == tokens.size()) {
      *node = value;
      return;
    }
    const json& schema = Pick(Resolve(raw), tokens[i]);
    const std::string& token = tokens[i];
    if (schema.contains("items") && !token.empty() && std::isdigit(token[0])) {
      if (!node->is_array()) *node = json::array();
      const size_t index = std::stoul(token);
      while (node->size() <= index) node->push_back(Example(schema["items"]));
      return Set(&(*node)[index], schema["items"], tokens, i + 1, value);
    }
    if (!node->is_object()) *node = Example(schema);
    if (!node->is_object()) *node = json::object();
    const json& sub = schema.contains("properties") && schema["properties"].contains(token)
                          ? schema["properties"][token]
                          : schema.value("additionalProperties", json::object());
    Set(&(*node)[token], sub.is_object() ? sub : json::object(), tokens, i + 1, value);
  }

 private:
  static std::string TypeOf(const json& schema) {
    if (!schema.contains("type")) return schema.contains("properties") ? "object" : "";
    const json& t = schema["type"];
    return t.is_array() ? t[0].get<std::string>() : t.get<std::string>();
  }
  // Of alternatives, the one that can hold `token`.
  const json& Pick(const json& schema, const std::string& token) const {
    if (!schema.contains("oneOf")) return schema;
    const bool index = !token.empty() && std::isdigit(token[0]);
    for (const json& alt : schema["oneOf"]) {
      const json& a = Resolve(alt);
      if (index ? a.contains("items") : a.contains("properties")) return a;
    }
    return schema;
  }
  json components_;
};

std::vector<std::string> Tokens(const std::string& pointer) {
  std::vector<std::string> out;
  size_t at = 1;
  while (at <= pointer.size()) {
    const size_t slash = pointer.find('/', at);
    out.push_back(pointer.substr(at, slash == std::string::npos ? std::string::npos : slash - at));
    if (slash == std::string::npos) break;
    at = slash + 1;
  }
  return out;
}

// The bodies `base` becomes with a huge value in the field `pointer`: the
// value itself; for a field of free names ("/x/*"), a huge name and a huge
// value of a name the handler knows (`known_key`).
std::vector<std::pair<std::string, json>> Mutations(const Schemas& schemas, const json& schema,
                                                    const json& base, const std::string& pointer,
                                                    const std::string& huge,
                                                    const std::string& known_key) {
  std::vector<std::pair<std::string, json>> out;
  std::vector<std::string> tokens = Tokens(pointer);
  if (tokens.back() == "*") {
    json with_name = base;
    tokens.back() = huge;
    schemas.Set(&with_name, schema, tokens, 0, "1");
    out.push_back({pointer + " (name)", std::move(with_name)});
    tokens.back() = known_key;
  }
  json with_value = base;
  schemas.Set(&with_value, schema, tokens, 0, huge);
  out.push_back({pointer, std::move(with_value)});
  return out;
}

// ---------------------------------------------------------------------------
// One server for the HTTP and MCP cases: the demo corpus in the default
// workspace, and the same store read-only as workspace "ro" (writes there
// fail in the engine, whose errors name the store's file).

class BoundedErrorsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    store_ = dir_->File("demo.db");
    {
      auto engine = Engine::Open(store_);
      ASSERT_TRUE(engine.ok()) << engine.status().ToString();
      ASSERT_TRUE((*engine)->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"}).ok());
    }
    ServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.max_body_bytes = 4u << 20;
    EngineOptions read_only;
    read_only.read_only = true;
    auto server = Server::Create(
        options, {{"default", store_, "", std::nullopt}, {"ro", store_, "", read_only}});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    ASSERT_TRUE((*server)->Start().ok());
    server_ = std::move(server).value().release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
  }

  static httplib::Client& Client() {
    static httplib::Client* client = [] {
      auto* c = new httplib::Client("127.0.0.1", server_->port());
      c->set_keep_alive(true);
      c->set_read_timeout(120, 0);
      c->set_write_timeout(120, 0);
      return c;
    }();
    return *client;
  }

  // Sends one request; checks its error (if it is one) and returns status
  // and body. A streamed reply's error events are checked too.
  static std::pair<int, std::string> Send(const std::string& what, const std::string& method,
                                          const std::string& target, const std::string& body,
                                          const httplib::Headers& headers,
                                          const std::string& unit) {
    httplib::Result r = method == "GET" ? Client().Get(target, headers)
                        : method == "DELETE"
                            ? Client().Delete(target, headers)
                            : Client().Post(target, headers, body, "application/json");
    if (!r) {
      ADD_FAILURE() << what << ": no response (" << httplib::to_string(r.error()) << ")";
      Client().stop();
      return {0, ""};
    }
    if (r->status >= 400) {
      EXPECT_NE(r->get_header_value("Content-Type").find("application/json"), std::string::npos)
          << what;
      ExpectBounded(what, r->body, unit, dir_->path());
    } else if (r->get_header_value("Content-Type").find("text/event-stream") != std::string::npos) {
      for (size_t at = r->body.find("\"error\""); at != std::string::npos;
           at = r->body.find("\"error\"", at + 1)) {
        const size_t start = r->body.rfind("data: ", at);
        ExpectBounded(what + " (event)", r->body.substr(start, r->body.find('\n', at) - start),
                      unit, dir_->path());
      }
    }
    return {r->status, r->body};
  }

  static testing::TempDir* dir_;
  static std::string store_;
  static Server* server_;
};

testing::TempDir* BoundedErrorsTest::dir_ = nullptr;
std::string BoundedErrorsTest::store_;
Server* BoundedErrorsTest::server_ = nullptr;

// A valid request body per request schema of /openapi.json; a schema the
// table lacks fails the test (add one for a new route).
const std::map<std::string, json>& BaseBodies() {
  static const std::map<std::string, json> bodies = {
      {"QueryRequest", {{"question", "How long is the River Ostrel?"}, {"method", "qafd"}}},
      {"DocumentsRequest",
       {{"documents",
         json::array({{{"id", "bounded-1"}, {"text", "Ada Brannock kept the light."}}})}}},
      {"ChatCompletionRequest",
       {{"model", "flowrag-qafd"},
        {"messages",
         json::array({{{"role", "user"}, {"content", "How long is the River Ostrel?"}}})}}},
      {"JsonRpc", {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}}},
  };
  return bodies;
}

// A value of each path or query parameter that the route accepts.
std::string BaseParameter(const std::string& name, const json& schema) {
  if (name == "workspace") return "ro";
  if (name == "q") return "Ostrel";
  if (name == "file") return "cytoscape.min.js";
  if (schema.value("type", "") == "integer") return "0";
  return "no-such-document";
}

std::string Target(std::string path, const std::map<std::string, std::string>& in_path,
                   const std::map<std::string, std::string>& query) {
  for (const auto& [name, value] : in_path) {
    const std::string slot = "{" + name + "}";
    path.replace(path.find(slot), slot.size(), value);
  }
  std::string q;
  for (const auto& [name, value] : query) q += (q.empty() ? "?" : "&") + name + "=" + value;
  return path + q;
}

TEST_F(BoundedErrorsTest, EveryFieldOfEveryRouteGetsABoundedError) {
  const json& doc = server::OpenApiDocument();
  const Schemas schemas(doc["components"]["schemas"]);
  const std::string wide = Filler(kWide, kBodyValueBytes);
  const std::string narrow = Filler(kNarrow, kHeadValueBytes);
  // The first option qafd reads: a name the query handlers know.
  const std::string known_option = Engine::MethodOptions("qafd")->front().name;
  size_t requests = 0, errors = 0, streamed = 0;
  for (const auto& [path, operations] : doc["paths"].items()) {
    for (const auto& [method_lower, op] : operations.items()) {
      std::string method = method_lower;
      for (char& c : method) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (method == "HEAD") continue;  // no body to check
      const std::string name = method + " " + path;
      std::map<std::string, std::string> in_path, query;
      std::vector<json> parameters;
      for (const json& p : op.value("parameters", json::array())) {
        parameters.push_back(p);
        const std::string value = BaseParameter(p["name"], p["schema"]);
        if (p["in"] == "path") in_path[p["name"]] = value;
        if (p["in"] == "query" && p.value("required", false)) query[p["name"]] = value;
      }
      // Every parameter with a long value (as long as a request line allows).
      for (const json& p : parameters) {
        auto path_values = in_path;
        auto query_values = query;
        (p["in"] == "path" ? path_values : query_values)[p["name"]] = narrow;
        const auto [status, body] = Send(name + " " + p["name"].get<std::string>(), method,
                                         Target(path, path_values, query_values), "", {}, kNarrow);
        ++requests;
        errors += status >= 400;
      }
      if (!op.contains("requestBody")) {
        const auto [status, body] = Send(name, method, Target(path, in_path, query), "", {}, kWide);
        ++requests;
        continue;
      }
      const json& schema_ref = op["requestBody"]["content"]["application/json"]["schema"];
      const std::string schema_name = schema_ref["$ref"].get<std::string>().substr(21);
      ASSERT_TRUE(BaseBodies().count(schema_name)) << "no base body for " << schema_name;
      const json& base = BaseBodies().at(schema_name);
      const json& schema = schemas.Resolve(schema_ref);
      const bool streams = schema.contains("properties") && schema["properties"].contains("stream");
      // The base request itself works (so each error below is the field's).
      {
        const auto [status, body] =
            Send(name + " (base)", method, Target(path, in_path, query), base.dump(), {}, kWide);
        ++requests;
        if (path.find("{workspace}") == std::string::npos) {
          EXPECT_EQ(status, 200) << name << ": " << body.substr(0, 300);
        }
      }
      std::vector<std::string> fields;
      schemas.Fields(schema, "", &fields);
      fields.push_back("/" + wide);  // an unknown field with a huge name
      for (const std::string& field : fields) {
        for (const auto& [label, request] :
             Mutations(schemas, schema, base, field, wide, known_option)) {
          const std::string what = name + " " + label.substr(0, 80);
          const auto [status, body] =
              Send(what, method, Target(path, in_path, query), request.dump(), {}, kWide);
          ++requests;
          errors += status >= 400;
          if (!streams || field == "/stream" || !request.is_object()) continue;
          // Streamed, a wrong request is refused the same way, before any event.
          json with_stream = request;
          with_stream["stream"] = true;
          const auto [stream_status, stream_body] =
              Send(what + " (stream)", method, Target(path, in_path, query), with_stream.dump(), {},
                   kWide);
          ++requests;
          ++streamed;
          if (status >= 400) {
            EXPECT_EQ(stream_status, status) << what << ": " << stream_body.substr(0, 300);
            EXPECT_EQ(json::parse(stream_body, nullptr, false).value("error", json()),
                      json::parse(body, nullptr, false).value("error", json()))
                << what;
          }
        }
      }
    }
  }
  // The table covered what it should: every route, most fields refused.
  EXPECT_GT(requests, 150u);
  EXPECT_GT(errors, 100u);
  EXPECT_GT(streamed, 30u);
  std::printf("%zu requests, %zu errors, %zu streamed\n", requests, errors, streamed);
}

// A 1 MiB head (a path, a header) is refused by the front end, quoting none of it.
TEST_F(BoundedErrorsTest, HugeHeadsAreRefusedWithoutEcho) {
  const std::string huge = Filler(kNarrow, kBodyValueBytes);
  const std::string narrow = Filler(kNarrow, kHeadValueBytes);
  httplib::Client c("127.0.0.1", server_->port());
  c.set_read_timeout(30, 0);
  auto check = [&](const std::string& what, const httplib::Result& r) {
    ASSERT_TRUE(r) << what;
    EXPECT_GE(r->status, 400) << what;
    ExpectBounded(what, r->body, kNarrow, dir_->path());
  };
  check("1 MiB path", c.Get("/v1/documents/" + huge));
  check("1 MiB header", c.Get("/v1/stats", {{"X-Long", huge}}));
  // Headers a handler reads, as long as a head allows.
  const std::string rpc = R"({"jsonrpc": "2.0", "id": 1, "method": "ping"})";
  for (const char* header : {"MCP-Protocol-Version", "Origin", "Accept", "Content-Type"}) {
    httplib::Headers headers = {{header, narrow}};
    if (std::string(header) == "Origin") headers.insert({"Host", narrow});
    check(header,
          Client().Post("/mcp", headers, rpc,
                        std::string(header) == "Content-Type" ? narrow : "application/json"));
  }
}

// ---------------------------------------------------------------------------
// MCP over HTTP: every argument of every tool, and the protocol's own fields.

// Valid arguments per tool; a tool the table lacks fails the test.
const std::map<std::string, json>& BaseArguments() {
  static const std::map<std::string, json> args = {
      {"query", {{"question", "How long is the River Ostrel?"}}},
      {"ask", {{"question", "How long is the River Ostrel?"}}},
      {"index_text", {{"id", "bounded-mcp"}, {"text", "Ada Brannock kept the light."}}},
      {"delete", {{"ids", json::array({"no-such-document"})}}},
      {"stats", json::object()},
  };
  return args;
}

TEST_F(BoundedErrorsTest, EveryArgumentOfEveryMcpToolGetsABoundedError) {
  const std::string wide = Filler(kWide, kBodyValueBytes);
  const std::string known_option = Engine::MethodOptions("qafd")->front().name;
  const Schemas schemas(json::object());
  size_t calls = 0, errors = 0;
  // Returns the JSON-RPC reply; checks its error (protocol or tool).
  auto call = [&](const std::string& what, const json& message) {
    const auto [status, body] =
        Send(what, "POST", "/mcp", message.dump(), {{"MCP-Protocol-Version", "2025-06-18"}}, kWide);
    ++calls;
    const json reply = json::parse(body, nullptr, false);
    if (reply.contains("error")) {
      ++errors;
      ExpectBounded(what, reply["error"].dump(), kWide, dir_->path());
      ExpectBounded(what, body, kWide, dir_->path());
    } else if (reply.contains("result") && reply["result"].value("isError", false)) {
      ++errors;
      ExpectBounded(what, body, kWide, dir_->path());
    }
    return reply;
  };
  const json tools =
      mcp::ListTools({/*allow_writes=*/true, /*protocol_version=*/"2025-06-18"})["tools"];
  ASSERT_GE(tools.size(), 5u);
  for (const json& tool : tools) {
    const std::string name = tool["name"];
    ASSERT_TRUE(BaseArguments().count(name)) << "no base arguments for tool " << name;
    const json& base = BaseArguments().at(name);
    auto request = [&](const json& args) {
      return json{{"jsonrpc", "2.0"},
                  {"id", 7},
                  {"method", "tools/call"},
                  {"params", {{"name", name}, {"arguments", args}}}};
    };
    const json ok = call(name + " (base)", request(base));
    EXPECT_FALSE(ok["result"].value("isError", true) && name != "delete") << ok.dump();
    std::vector<std::string> fields;
    schemas.Fields(tool["inputSchema"], "", &fields);
    fields.push_back("/" + wide);
    for (const std::string& field : fields) {
      for (const auto& [label, args] :
           Mutations(schemas, tool["inputSchema"], base, field, wide, known_option)) {
        call(name + " " + label.substr(0, 80), request(args));
      }
    }
  }
  // The protocol's fields: method, tool name, resource uri, cursor, id, versions.
  const auto message = [](json m) {
    m["jsonrpc"] = "2.0";
    if (!m.contains("id")) m["id"] = 1;
    return m;
  };
  call("method", message({{"method", wide}}));
  call("tool name", message({{"method", "tools/call"}, {"params", {{"name", wide}}}}));
  call("uri", message({{"method", "resources/read"}, {"params", {{"uri", wide}}}}));
  call("document uri", message({{"method", "resources/read"},
                                {"params", {{"uri", "flowrag://documents/" + wide}}}}));
  call("cursor", message({{"method", "resources/list"}, {"params", {{"cursor", wide}}}}));
  call("id", message({{"method", "ping"}, {"id", wide}}));
  call("jsonrpc", {{"jsonrpc", wide}, {"id", 1}, {"method", "ping"}});
  call("protocolVersion",
       message({{"method", "initialize"},
                {"params", {{"protocolVersion", wide}, {"clientInfo", {{"name", wide}}}}}}));
  call("params", message({{"method", "tools/list"}, {"params", wide}}));
  EXPECT_GT(calls, 30u);
  EXPECT_GT(errors, 25u);
}

// ---------------------------------------------------------------------------
// Item 3: a wrong streamed request gets the unstreamed request's 4xx JSON
// error, not 200 and an error event.

TEST_F(BoundedErrorsTest, AWrongStreamedRequestIsRefusedBeforeAnyEvent) {
  const json question = {{"question", "How long is the River Ostrel?"}};
  const std::vector<std::pair<std::string, json>> wrong = {
      {"unknown method", {{"method", "nope"}}},
      {"unknown option", {{"method", "qafd"}, {"options", {{"qafd.nope", 1}}}}},
      {"option out of range", {{"method", "qafd"}, {"options", {{"qafd.alpha", -5}}}}},
      {"option of another method", {{"method", "bm25"}, {"options", {{"qafd.alpha", 20}}}}},
  };
  for (const auto& [what, fields] : wrong) {
    json query = question;
    query.update(fields);
    // /v1/query, and the chat endpoint (its model picks the method).
    json chat = {
        {"model", "flowrag-" + query.value("method", std::string("qafd"))},
        {"messages", json::array({{{"role", "user"}, {"content", question["question"]}}})}};
    if (query.contains("options")) chat["flowrag"] = {{"options", query["options"]}};
    for (const auto& [route, body] : std::vector<std::pair<std::string, json>>{
             {"/v1/query", query}, {"/v1/chat/completions", chat}}) {
      auto plain = Client().Post(route, body.dump(), "application/json");
      json streamed_body = body;
      streamed_body["stream"] = true;
      auto streamed = Client().Post(route, streamed_body.dump(), "application/json");
      ASSERT_TRUE(plain && streamed) << what;
      EXPECT_EQ(plain->status / 100, 4) << what << " " << route << ": " << plain->body;
      EXPECT_EQ(streamed->status, plain->status) << what << " " << route << ": " << streamed->body;
      EXPECT_EQ(streamed->get_header_value("Content-Type").find("text/event-stream"),
                std::string::npos)
          << what << " " << route;
      EXPECT_EQ(streamed->body, plain->body) << what << " " << route;
    }
  }
  // A right streamed request still streams.
  json ok = question;
  ok["stream"] = true;
  auto r = Client().Post("/v1/query", ok.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->get_header_value("Content-Type").find("text/event-stream"), std::string::npos);
  EXPECT_NE(r->body.find("event: answer"), std::string::npos);
}

// ---------------------------------------------------------------------------
// Item 6: a head whose body length is ambiguous is refused (RFC 9112 6.3).

// Sends `request` on a fresh connection; the response's status line and
// whatever follows until the server closes.
std::string RawExchange(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "";
  }
  (void)!send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  shutdown(fd, SHUT_WR);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

TEST_F(BoundedErrorsTest, AmbiguousBodyLengthsAreRefused) {
  const std::string body = R"({"question": "How long is the River Ostrel?", "method": "bm25"})";
  const std::string head =
      "POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n";
  const std::string n = std::to_string(body.size());
  const std::string length = "Content-Length: " + n + "\r\n";
  char hex[16];
  std::snprintf(hex, sizeof(hex), "%zx", body.size());
  const std::string chunked = hex + ("\r\n" + body) + "\r\n0\r\n\r\n";
  const struct {
    const char* what;
    std::string request;
    const char* status;
  } cases[] = {
      {"one Content-Length", head + length + "\r\n" + body, "HTTP/1.1 200"},
      {"chunked", head + "Transfer-Encoding: chunked\r\n\r\n" + chunked, "HTTP/1.1 200"},
      {"two equal Content-Lengths", head + length + length + "\r\n" + body, "HTTP/1.1 400"},
      {"two different Content-Lengths", head + length + "Content-Length: 5\r\n\r\n" + body,
       "HTTP/1.1 400"},
      {"a list", head + "Content-Length: " + n + ", " + n + "\r\n\r\n" + body, "HTTP/1.1 400"},
      {"Content-Length with Transfer-Encoding",
       head + length + "Transfer-Encoding: chunked\r\n\r\n" + chunked, "HTTP/1.1 400"},
      {"Transfer-Encoding with Content-Length",
       head + "Transfer-Encoding: chunked\r\n" + length + "\r\n" + chunked, "HTTP/1.1 400"},
      {"chunked not last", head + "Transfer-Encoding: chunked, gzip\r\n\r\n" + chunked,
       "HTTP/1.1 400"},
      {"chunked twice",
       head + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked,
       "HTTP/1.1 400"},
      {"gzip before chunked", head + "Transfer-Encoding: gzip, chunked\r\n\r\n" + chunked,
       "HTTP/1.1 501"},
      {"space before the colon", head + "Content-Length : " + n + "\r\n\r\n" + body,
       "HTTP/1.1 400"},
  };
  for (const auto& c : cases) {
    const std::string response = RawExchange(server_->port(), c.request);
    EXPECT_EQ(response.rfind(c.status, 0), 0u) << c.what << ": " << response.substr(0, 300);
    if (response.rfind("HTTP/1.1 200", 0) != 0) {
      EXPECT_NE(response.find("Connection: close"), std::string::npos) << c.what;
      EXPECT_NE(response.find("{\"error\":"), std::string::npos) << c.what;
    }
  }
}

// ---------------------------------------------------------------------------
// The CLI: every option that takes a value, of every command `--help` lists.

std::string Cli() { return std::string(FLOWRAG_BINARY_DIR) + "/tools/flowrag"; }

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// What one command's --help lists.
struct HelpPage {
  std::vector<std::string> positionals;    // in order
  std::vector<std::string> value_options;  // "--db" (the long name)
  std::vector<std::string> subcommands;
};

HelpPage ReadHelp(const std::vector<std::string>& command) {
  std::string line = Cli();
  for (const std::string& c : command) line += " " + c;
  int status = 0;
  const std::string help = testing::RunCommand(line + " --help 2>&1", &status);
  HelpPage page;
  std::string section;
  size_t start = 0;
  while (start < help.size()) {
    const size_t end = help.find('\n', start);
    const std::string text =
        help.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? help.size() : end + 1;
    if (!text.empty() && text[0] != ' ') {
      section = text;
      continue;
    }
    // Entries start two spaces in; their descriptions wrap further in.
    if (text.size() < 3 || text[2] == ' ') continue;
    const std::vector<std::string> words = [&] {
      std::vector<std::string> w;
      size_t at = 2;
      while (at < text.size() && text[at] != ' ') {
        const size_t space = text.find(' ', at);
        w.push_back(text.substr(at, space - at));
        if (space == std::string::npos || (space + 1 < text.size() && text[space + 1] == ' '))
          break;
        at = space + 1;
      }
      return w;
    }();
    if (words.empty()) continue;
    const bool takes_value = words.size() > 1 && !words[1].empty() && std::isupper(words[1][0]);
    if (section.rfind("Subcommands", 0) == 0) {
      page.subcommands.push_back(words[0]);
    } else if (section.rfind("Positionals", 0) == 0) {
      page.positionals.push_back(words[0]);
    } else if (section.rfind("Options", 0) == 0 && takes_value && words[0].rfind("-", 0) == 0) {
      std::string name = words[0];
      if (const size_t comma = name.rfind(','); comma != std::string::npos) {
        name = name.substr(comma + 1);
      }
      page.value_options.push_back(name);
    }
  }
  return page;
}

TEST(BoundedCliErrorsTest, EveryOptionOfEveryCommandGetsABoundedError) {
  testing::TempDir dir;
  const std::string demo = dir.File("demo.db");
  {
    auto engine = Engine::Open(demo);
    ASSERT_TRUE(engine.ok());
    ASSERT_TRUE((*engine)->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"}).ok());
  }
  testing::WriteFile(dir.File("src/a.txt"), "Ada Brannock kept the light at Ostrel.\n");
  testing::WriteFile(dir.File("flowrag.yaml"), "flowrag_config: 1\n");
  const std::string missing = dir.File("missing");
  // A command line per command that runs (or fails on its own), which each
  // option's value then replaces or joins; a command --help lists that the
  // table lacks fails the test.
  const std::map<std::string, std::vector<std::string>> base = {
      {"index", {dir.File("src"), "--db", dir.File("index.db"), "-q"}},
      {"query", {"How long is the River Ostrel?", "--db", demo}},
      {"ingest", {dir.File("src"), "--db", dir.File("ingest.db"), "-q"}},
      {"ask", {"How long is the River Ostrel?", "--db", demo}},
      {"schema induce", {dir.File("src")}},
      {"schema show", {missing}},
      {"eval", {"--bench", missing, "--method", "bm25"}},
      {"stats", {"--db", demo}},
      {"delete", {"no-such-document", "--db", demo}},
      {"compact", {"--db", demo}},
      {"methods", {}},
      {"import-openie", {missing, "--db", demo}},
      {"serve", {"--db", missing}},
      {"config check", {dir.File("flowrag.yaml")}},
      {"export", {"--db", demo, "--out", dir.File("graph.graphml")}},
      {"sql link", {"which rivers", "--db", missing}},
      {"sql ask", {"which rivers", "--db", missing}},
      {"sql exec", {"SELECT 1", "--db", missing}},
      {"sql eval", {"--spider", missing}},
      {"mcp", {"--db", demo}},
  };
  const std::string value = Filler(kNarrow, kCliValueBytes);
  size_t runs = 0;
  std::vector<std::vector<std::string>> commands = {{}};
  std::set<std::string> seen;
  while (!commands.empty()) {
    const std::vector<std::string> command = commands.back();
    commands.pop_back();
    const HelpPage page = ReadHelp(command);
    std::string name;
    for (const std::string& c : command) name += (name.empty() ? "" : " ") + c;
    for (const std::string& sub : page.subcommands) {
      std::vector<std::string> deeper = command;
      deeper.push_back(sub);
      commands.push_back(deeper);
    }
    std::vector<std::pair<std::string, std::vector<std::string>>> lines;
    if (command.empty()) {
      // The global option, before any command.
      lines.push_back({"--config", {"--config", value, "stats", "--db", demo}});
    } else if (page.subcommands.empty()) {
      ASSERT_TRUE(base.count(name)) << "no base command line for `flowrag " << name << "`";
      seen.insert(name);
      const std::vector<std::string>& args = base.at(name);
      for (size_t p = 0; p < page.positionals.size(); ++p) {
        std::vector<std::string> line = args;
        // Positionals come first in the base lines, in order.
        if (p < line.size() && line[p].rfind("-", 0) != 0) {
          line[p] = value;
        } else {
          line.insert(line.begin() + static_cast<long>(p), value);
        }
        lines.push_back({page.positionals[p], line});
      }
      for (const std::string& option : page.value_options) {
        std::vector<std::string> line = args;
        auto it = std::find(line.begin(), line.end(), option);
        if (it != line.end() && it + 1 != line.end()) {
          *(it + 1) = value;
        } else {
          line.push_back(option);
          line.push_back(value);
        }
        lines.push_back({option, line});
      }
    }
    for (const auto& [what, line] : lines) {
      std::string shell = "cd " + ShellQuote(dir.path()) + " && FLOWRAG_CONFIG= " + Cli();
      for (const std::string& c : command) shell += " " + c;
      for (const std::string& a : line) shell += " " + ShellQuote(a);
      int status = 0;
      const std::string err = testing::RunCommand(shell + " 2>&1 >/dev/null </dev/null", &status);
      ++runs;
      ExpectBounded("flowrag " + name + " " + what, err, kNarrow, "");
    }
  }
  for (const auto& [name, args] : base) EXPECT_TRUE(seen.count(name)) << name << " not in --help";
  EXPECT_GT(runs, 80u);
  std::printf("%zu command lines\n", runs);
}

// flowrag.yaml: a 100 KB value or key anywhere is quoted by at most 200
// bytes in `config check`'s error (and every command's).
TEST(BoundedCliErrorsTest, ConfigCheckQuotesAtMostAnExcerpt) {
  testing::TempDir dir;
  const std::string value = Filler(kNarrow, kCliValueBytes);
  // Every key of doc/config.md, each with a value that passes.
  const std::vector<std::string> lines = {
      "flowrag_config: 1",
      "chat:",
      "  base_url: http://127.0.0.1:9/v1",
      "  model: m",
      "  api_key_env: FLOWRAG_TEST_KEY",
      "  timeout_ms: 1000",
      "  max_concurrency: 2",
      "  max_retries: 1",
      "embedding:",
      "  base_url: http://127.0.0.1:9/v1",
      "  model: e",
      "  api_key_env: FLOWRAG_TEST_KEY",
      "  timeout_ms: 1000",
      "  max_concurrency: 2",
      "  max_retries: 1",
      "  batch_size: 8",
      "  dimensions: 16",
      "query:",
      "  method: qafd",
      "methods:",
      "  qafd: {alpha: 20}",
      "server:",
      "  host: 127.0.0.1",
      "  port: 9",
      "  token_env: FLOWRAG_TEST_KEY",
      "  threads: 2",
      "  max_body_mib: 2",
      "  head_timeout_s: 5",
      "  read_timeout_s: 5",
      "  body_timeout_s: 5",
      "  keep_alive_timeout_s: 5",
      "  max_connections: 10",
      "  query_deadline_ms: 100",
      "workspaces:",
      "  - name: docs",
      "    db: docs.db",
      "    token_env: FLOWRAG_TEST_KEY",
      "    methods: {qafd: {alpha: 30}}",
  };
  auto run = [&](const std::string& text) {
    testing::WriteFile(dir.File("f.yaml"), text);
    int status = 0;
    const std::string out =
        testing::RunCommand("cd " + dir.path() + " && FLOWRAG_TEST_KEY=k FLOWRAG_CONFIG= " + Cli() +
                                " config check f.yaml 2>&1",
                            &status);
    return std::make_pair(status, out);
  };
  std::string good;
  for (const std::string& l : lines) good += l + "\n";
  ASSERT_EQ(run(good).first, 0) << run(good).second;
  size_t refused = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(": ");
    // The value of this line, and its key, replaced by the huge one.
    std::vector<std::string> variants;
    if (colon != std::string::npos) {
      variants.push_back(lines[i].substr(0, colon + 2) + value);
      const size_t indent = lines[i].find_first_not_of(" -");
      variants.push_back(lines[i].substr(0, indent) + value + lines[i].substr(colon));
    }
    for (const std::string& variant : variants) {
      std::string text;
      for (size_t j = 0; j < lines.size(); ++j) text += (j == i ? variant : lines[j]) + "\n";
      const auto [status, out] = run(text);
      if (status == 0) continue;  // what it read is printed, not an error
      ++refused;
      ExpectBounded("config line " + std::to_string(i + 1) + " " + variant.substr(0, 40), out,
                    kNarrow, "");
    }
  }
  EXPECT_GT(refused, 40u);
}

// ---------------------------------------------------------------------------
// Item 5: `config check` refuses every file `serve` refuses, naming the file
// and the line or field; both run one validation (PlanServe).

TEST(ConfigCheckAndServeTest, CheckRefusesWhatServeRefuses) {
  testing::TempDir dir;
  for (const char* db : {"a.db", "b.db"}) {
    auto engine = Engine::Open(dir.File(db));
    ASSERT_TRUE(engine.ok());
  }
  const struct {
    const char* what;
    std::string text;
    std::string says;  // in both errors
  } cases[] = {
      {"server token_env unset",
       "flowrag_config: 1\nserver:\n  token_env: FLOWRAG_TEST_UNSET_TOKEN\nworkspaces:\n"
       "  - {name: a, db: a.db}\n",
       "server.token_env"},
      {"max_body_mib .nan",
       "flowrag_config: 1\nserver:\n  max_body_mib: .nan\nworkspaces:\n  - {name: a, db: a.db}\n",
       ":3: server.max_body_mib"},
      {"max_body_mib .inf",
       "flowrag_config: 1\nserver:\n  max_body_mib: .inf\nworkspaces:\n  - {name: a, db: a.db}\n",
       ":3: server.max_body_mib"},
      {"workspace ../../etc", "flowrag_config: 1\nworkspaces:\n  - {name: ../../etc, db: a.db}\n",
       ":3: workspaces[0].name"},
      {"65-character workspace",
       "flowrag_config: 1\nworkspaces:\n  - {name: " + std::string(65, 'w') + ", db: a.db}\n",
       ":3: workspaces[0].name"},
      {"workspace ..", "flowrag_config: 1\nworkspaces:\n  - {name: '..', db: a.db}\n",
       ":3: workspaces[0].name"},
      {"workspace token_env unset",
       "flowrag_config: 1\nworkspaces:\n  - {name: a, db: a.db, token_env: "
       "FLOWRAG_TEST_UNSET_TOKEN}\n",
       "token_env"},
      {"api_key_env unset",
       "flowrag_config: 1\nchat:\n  base_url: http://127.0.0.1:9/v1\n  api_key_env: "
       "FLOWRAG_TEST_UNSET_TOKEN\nworkspaces:\n  - {name: a, db: a.db}\n",
       "api_key_env"},
      {"duplicate workspace",
       "flowrag_config: 1\nworkspaces:\n  - {name: a, db: a.db}\n  - {name: a, db: b.db}\n",
       ":4: workspaces[1].name"},
  };
  const std::string env =
      "cd " + dir.path() +
      " && unset FLOWRAG_SERVER_TOKEN FLOWRAG_TEST_UNSET_TOKEN FLOWRAG_CONFIG; ";
  for (const auto& c : cases) {
    const std::string file = dir.File("case.yaml");
    testing::WriteFile(file, c.text);
    int check_status = 0, serve_status = 0;
    const std::string check =
        testing::RunCommand(env + Cli() + " config check case.yaml 2>&1", &check_status);
    // serve would run on a good file: each case must make it stop at once.
    // (`timeout` only ends a server that wrongly started; nothing is timed.)
    const std::string serve = testing::RunCommand(
        env + "timeout 60 " + Cli() + " --config case.yaml serve --port 0 2>&1 </dev/null",
        &serve_status);
    EXPECT_NE(serve_status, 0) << c.what << ": serve accepted it: " << serve;
    EXPECT_NE(check_status, 0) << c.what << ": check accepted it: " << check;
    EXPECT_NE(check.find("case.yaml"), std::string::npos) << c.what << ": " << check;
    EXPECT_NE(check.find(c.says), std::string::npos) << c.what << ": " << check;
    EXPECT_NE(serve.find(c.says), std::string::npos) << c.what << ": " << serve;
  }
  // A good file passes check; a store not there yet is reported, not an error.
  testing::WriteFile(dir.File("good.yaml"),
                     "flowrag_config: 1\nworkspaces:\n  - {name: a, db: a.db}\n  - {name: c, db: "
                     "c.db}\n");
  int status = 0;
  const std::string out =
      testing::RunCommand(env + Cli() + " config check good.yaml 2>&1", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("no such store yet"), std::string::npos) << out;
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
