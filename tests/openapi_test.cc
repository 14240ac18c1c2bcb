// GET /openapi.json against the handlers it describes: every route (and only
// the routes) with its methods, the request fields each handler accepts, and
// the responses of a real server on loopback checked against the schemas.
#include "server/openapi.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <csignal>
#include <nlohmann/json.hpp>
#include <set>

#include "flowrag/engine.h"
#include "flowrag/server.h"
#include "server/handlers.h"
#include "server/routes.h"
#include "demo_server.h"

namespace flowrag::server {
namespace {
namespace FLOWRAG_TEST_FILE {

using nlohmann::json;

const json& Doc() { return OpenApiDocument(); }

std::set<std::string> MethodsOf(RouteKind kind) {
  std::set<std::string> out;
  std::string allowed(AllowedMethods(kind));
  for (size_t at = 0; at < allowed.size();) {
    size_t comma = allowed.find(", ", at);
    if (comma == std::string::npos) comma = allowed.size();
    std::string m = allowed.substr(at, comma - at);
    for (char& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.insert(m);
    at = comma + 2;
  }
  return out;
}

// A concrete path for a templated one ("{workspace}" → "ws", "{id}" → "7").
std::string Concrete(std::string path) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"{workspace}", "ws"},
                                 {"{id}", "7"}, {"{file}", "cytoscape.min.js"}}) {
    const size_t at = path.find(from);
    if (at != std::string::npos) path.replace(at, from.size(), to);
  }
  return path;
}

TEST(OpenApiTest, TheDocumentIsOpenApi31WithSchemasThatResolve) {
  EXPECT_EQ(Doc()["openapi"], "3.1.0");
  const std::string text = Doc().dump();
  for (size_t at = text.find("\"$ref\":\""); at != std::string::npos;
       at = text.find("\"$ref\":\"", at + 1)) {
    const size_t begin = at + 8;
    const std::string ref = text.substr(begin, text.find('"', begin) - begin);
    ASSERT_EQ(ref.rfind("#/components/schemas/", 0), 0u) << ref;
    EXPECT_TRUE(Doc()["components"]["schemas"].contains(ref.substr(21))) << ref;
  }
}

TEST(OpenApiTest, EveryRouteIsDescribedWithItsMethods) {
  std::set<RouteKind> described;
  for (const auto& [path, item] : Doc()["paths"].items()) {
    const Route route = ParseRoute(Concrete(path));
    ASSERT_NE(route.kind, RouteKind::kUnknown) << path;
    std::set<std::string> methods;
    for (const auto& [method, op] : item.items()) methods.insert(method);
    EXPECT_EQ(methods, MethodsOf(route.kind)) << path;
    EXPECT_EQ(path.find("{workspace}") != std::string::npos, !route.default_workspace) << path;
    for (const auto& [method, op] : item.items()) {
      EXPECT_EQ(op.contains("security") && op["security"].empty(), !NeedsAuth(route.kind)) << path;
    }
    described.insert(route.kind);
  }
  // Every kind the route table knows (RouteLabel is "other" past the last).
  for (int k = static_cast<int>(RouteKind::kUnknown) + 1;
       RouteLabel(static_cast<RouteKind>(k)) != "other"; ++k) {
    EXPECT_TRUE(described.count(static_cast<RouteKind>(k)))
        << "route " << RouteLabel(static_cast<RouteKind>(k)) << " is not in /openapi.json";
  }
}

std::set<std::string> PropertiesOf(const json& schema) {
  std::set<std::string> out;
  for (const auto& [name, s] : schema["properties"].items()) out.insert(name);
  return out;
}

TEST(OpenApiTest, RequestSchemasListTheFieldsTheHandlersAccept) {
  const json& schemas = Doc()["components"]["schemas"];
  const std::span<const std::string_view> fields = QueryRequestFields();
  EXPECT_EQ(PropertiesOf(schemas["QueryRequest"]), std::set<std::string>(fields.begin(), fields.end()));
  // Documents: each described field is accepted, any other refused.
  const json& documents = schemas["DocumentsRequest"];
  std::vector<DocumentInput> docs;
  IndexOptions io;
  for (const std::string& field : PropertiesOf(documents)) {
    json request = {{"documents", {{{"id", "a"}, {"text", "t"}}}}};
    if (field == "chunking") request[field] = "window";
    EXPECT_FALSE(ParseDocuments(request, &docs, &io).has_value()) << field;
  }
  for (const std::string& field : PropertiesOf(documents["properties"]["documents"]["items"])) {
    json request = {{"documents", {{{"id", "a"}, {"text", "t"}, {field, "x"}}}}};
    EXPECT_FALSE(ParseDocuments(request, &docs, &io).has_value()) << field;
  }
  auto refused = ParseDocuments({{"documents", {{{"id", "a"}, {"text", "t"}, {"extra", 1}}}}},
                                &docs, &io);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->field, "documents[0].extra");
  EXPECT_EQ(documents["additionalProperties"], false);
}

// A small JSON Schema check: type, const, enum, required, properties,
// items, oneOf and $ref (what the document uses). Appends what fails.
void Check(const json& schema, const json& value, const std::string& at,
           std::vector<std::string>* errors) {
  if (schema.contains("$ref")) {
    const std::string name = schema["$ref"].get<std::string>().substr(21);
    return Check(Doc()["components"]["schemas"][name], value, at, errors);
  }
  if (schema.contains("oneOf")) {
    for (const json& option : schema["oneOf"]) {
      std::vector<std::string> e;
      Check(option, value, at, &e);
      if (e.empty()) return;
    }
    errors->push_back(at + ": matches no oneOf option");
    return;
  }
  if (schema.contains("const") && value != schema["const"]) errors->push_back(at + ": not const");
  if (schema.contains("enum") &&
      std::find(schema["enum"].begin(), schema["enum"].end(), value) == schema["enum"].end()) {
    errors->push_back(at + ": not in enum");
  }
  if (schema.contains("type")) {
    const auto is = [&](const std::string& t) {
      return (t == "object" && value.is_object()) || (t == "array" && value.is_array()) ||
             (t == "string" && value.is_string()) || (t == "boolean" && value.is_boolean()) ||
             (t == "integer" && value.is_number_integer()) || (t == "number" && value.is_number()) ||
             (t == "null" && value.is_null());
    };
    bool ok = false;
    if (schema["type"].is_array()) {
      for (const json& t : schema["type"]) ok = ok || is(t.get<std::string>());
    } else {
      ok = is(schema["type"].get<std::string>());
    }
    if (!ok) {
      errors->push_back(at + ": expected " + schema["type"].dump() + ", got " + value.type_name());
      return;
    }
  }
  if (value.is_object()) {
    const json required = schema.value("required", json::array());
    const json properties = schema.value("properties", json::object());
    for (const json& r : required) {
      if (!value.contains(r.get<std::string>())) errors->push_back(at + ": lacks " + r.dump());
    }
    for (const auto& [name, s] : properties.items()) {
      if (value.contains(name)) Check(s, value[name], at + "." + name, errors);
    }
  }
  if (value.is_array() && schema.contains("items")) {
    for (size_t i = 0; i < value.size(); ++i) {
      Check(schema["items"], value[i], at + "[" + std::to_string(i) + "]", errors);
    }
  }
}

// The schema of `path`'s `method` response for `status` ("200" or "default").
json ResponseSchema(const std::string& path, const std::string& method, const std::string& status) {
  return Doc()["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"];
}

void ExpectMatches(const httplib::Result& r, const std::string& path, const std::string& method) {
  ASSERT_TRUE(r) << path;
  const json body = json::parse(r->body, nullptr, false);
  ASSERT_FALSE(body.is_discarded()) << path << ": " << r->body.substr(0, 200);
  const json schema = ResponseSchema(path, method, r->status == 200 ? "200" : "default");
  ASSERT_FALSE(schema.is_null()) << path << " " << method;
  std::vector<std::string> errors;
  Check(schema, body, path, &errors);
  EXPECT_TRUE(errors.empty()) << path << " " << r->status << ": " << errors.front();
}

TEST(OpenApiTest, ARealServersResponsesMatchTheSchemas) {
  testing::DemoServer server;
  ASSERT_TRUE(server.ok());
  httplib::Client c("127.0.0.1", server.port());
  c.set_read_timeout(60, 0);
  for (const char* path : {"/healthz", "/v1/stats", "/v1/methods", "/v1/models"}) {
    ExpectMatches(c.Get(path), path, "get");
  }
  auto spec = c.Get("/openapi.json");
  ASSERT_TRUE(spec);
  EXPECT_EQ(json::parse(spec->body), Doc());
  const auto post = [&](const std::string& path, const json& body) {
    return c.Post(path.c_str(), body.dump(), "application/json");
  };
  ExpectMatches(post("/v1/query", {{"question", "How long is the River Ostrel?"}, {"explain", true}}),
                "/v1/query", "post");
  ExpectMatches(post("/v1/query", {{"question", 3}}), "/v1/query", "post");
  ExpectMatches(post("/v1/chat/completions",
                     {{"model", "flowrag"},
                      {"messages", {{{"role", "user"}, {"content", "How long is the River Ostrel?"}}}}}),
                "/v1/chat/completions", "post");
  ExpectMatches(post("/v1/chat/completions", {{"model", "flowrag"}}), "/v1/chat/completions",
                "post");
  ExpectMatches(post("/v1/documents", {{"documents", {{{"id", "n"}, {"text", "Nora Quill."}}}}}),
                "/v1/documents", "post");
  ExpectMatches(c.Delete("/v1/documents/n"), "/v1/documents/{id}", "delete");
  ExpectMatches(c.Delete("/v1/documents/n"), "/v1/documents/{id}", "delete");  // 404
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag::server
