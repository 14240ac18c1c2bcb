// The route table of the HTTP API: which path is which endpoint, of which
// workspace, and which HTTP methods it allows. Pure functions.
//
//   /                      viewer page (default workspace)
//   /w/{ws}/               viewer page of workspace ws
//   /healthz  /metrics  /openapi.json
//   /assets/{file}         a file the viewer loads (cytoscape.min.js)
//   /mcp                   MCP Streamable HTTP of the default workspace (= /v1/mcp)
//   /v1/{endpoint}         default workspace
//   /v1/w/{ws}/{endpoint}  workspace ws
// where {endpoint} is query | documents | documents/{id} | stats | methods |
// mcp | graph/entities | graph/entities/{id} | graph/facts/{id}/passages |
// chat/completions | models (the last two: the OpenAI-compatible API, so a
// client's base URL is /v1 or /v1/w/{ws}).
#ifndef FLOWRAG_SERVER_ROUTES_H_
#define FLOWRAG_SERVER_ROUTES_H_

#include <string>
#include <string_view>
#include <vector>

namespace flowrag::server {

enum class RouteKind {
  kUnknown,
  kViewer,
  kHealthz,
  kMetrics,
  kQuery,
  kDocuments,  // POST: insert or replace documents
  kDocument,   // DELETE /documents/{id}
  kStats,
  kMethods,
  kChatCompletions,  // POST: OpenAI-compatible chat completions
  kModels,           // GET: OpenAI-compatible model list
  kOpenApi,          // GET /openapi.json
  kMcp,  // POST: Model Context Protocol messages (routes_mcp.cc)
  kAsset,              // GET /assets/{file} (no auth, like the page)
  kGraphEntities,      // GET graph/entities?q=
  kGraphEntity,        // GET graph/entities/{id}
  kGraphFactPassages,  // GET graph/facts/{id}/passages
};

struct Route {
  RouteKind kind = RouteKind::kUnknown;
  bool default_workspace = true;  // false: /w/{ws}/... or /v1/w/{ws}/...
  std::string workspace;          // the (decoded) {ws} of the path
  std::string document_id;        // kDocument: the decoded rest of the path
  std::string id;                 // graph routes: the decoded {id}; kAsset: {file}
};

// `path` is the raw (still percent-encoded) path of the request target,
// without the query string. It is split at '/' before its segments are
// decoded, so an encoded slash ("%2F") never separates segments: a workspace
// name holding one is no route, a document id may hold one.
Route ParseRoute(std::string_view path);


// The graph endpoints (routes_graph.cc): segments[at..] of an API path, raw;
// sets *id. kUnknown when they are none of the graph routes.
RouteKind ParseGraphEndpoint(const std::vector<std::string_view>& segments, size_t at,
                             std::string* id);

// The metric label of a route: "/v1/query", "/v1/documents/{id}", "/", "other"
// (workspace paths use the same labels; the workspace is a separate label).
std::string_view RouteLabel(RouteKind kind);

// The HTTP methods a route allows, as an Allow header ("GET, HEAD").
std::string_view AllowedMethods(RouteKind kind);

// Whether `method` is one of AllowedMethods(kind).
bool MethodAllowed(RouteKind kind, std::string_view method);

// Whether the route needs the bearer token when one is configured.
bool NeedsAuth(RouteKind kind);

}  // namespace flowrag::server

#endif  // FLOWRAG_SERVER_ROUTES_H_
