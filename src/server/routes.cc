#include "server/routes.h"

#include <vector>

#include "common/text.h"

namespace flowrag::server {
namespace {

// The path segments of a raw path ("/v1/w/a/query" → "v1", "w", "a",
// "query"), each kept raw: decoding comes after splitting, so that an
// encoded slash stays inside its segment.
std::vector<std::string_view> SplitSegments(std::string_view path) {
  std::vector<std::string_view> segments;
  if (path.empty() || path.front() != '/') return segments;
  path.remove_prefix(1);
  while (true) {
    const size_t slash = path.find('/');
    segments.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return segments;
}

// The joined raw segments [from, end) ("people/ada.md").
std::string_view Rest(std::string_view path, const std::vector<std::string_view>& segments,
                      size_t from) {
  const size_t offset = static_cast<size_t>(segments[from].data() - path.data());
  return path.substr(offset);
}

RouteKind EndpointKind(std::string_view path, const std::vector<std::string_view>& segments,
                       size_t at, std::string* document_id) {
  const size_t n = segments.size() - at;
  if (n == 0) return RouteKind::kUnknown;
  const std::string first = DecodePercent(segments[at]);
  if (n == 1) {
    if (first == "query") return RouteKind::kQuery;
    if (first == "documents") return RouteKind::kDocuments;
    if (first == "stats") return RouteKind::kStats;
    if (first == "methods") return RouteKind::kMethods;
    if (first == "models") return RouteKind::kModels;
    if (first == "mcp") return RouteKind::kMcp;
    return RouteKind::kUnknown;
  }
  if (first == "chat" && n == 2 && DecodePercent(segments[at + 1]) == "completions") {
    return RouteKind::kChatCompletions;
  }
  // documents/{id}: the id is the rest of the path, slashes (raw or encoded) included.
  if (first != "documents") return RouteKind::kUnknown;
  *document_id = DecodePercent(Rest(path, segments, at + 1));
  return document_id->empty() ? RouteKind::kUnknown : RouteKind::kDocument;
}

// A decoded workspace segment; false when empty or when it holds a slash.
bool WorkspaceSegment(std::string_view raw, std::string* workspace) {
  *workspace = DecodePercent(raw);
  return !workspace->empty() && workspace->find('/') == std::string::npos;
}

Route ParseApiRoute(std::string_view path, const std::vector<std::string_view>& segments) {
  Route r;
  size_t at = 1;  // after "v1"
  if (segments.size() > 2 && DecodePercent(segments[1]) == "w") {
    if (!WorkspaceSegment(segments[2], &r.workspace)) return Route{};
    r.default_workspace = false;
    at = 3;
  }
  r.kind = EndpointKind(path, segments, at, &r.document_id);
  if (r.kind == RouteKind::kUnknown) r.kind = ParseGraphEndpoint(segments, at, &r.id);
  if (r.kind == RouteKind::kUnknown) return Route{};
  return r;
}

}  // namespace

Route ParseRoute(std::string_view path) {
  const std::vector<std::string_view> segments = SplitSegments(path);
  if (segments.empty()) return Route{};
  const std::string first = DecodePercent(segments[0]);
  Route r;
  if (segments.size() == 1) {
    if (first.empty()) r.kind = RouteKind::kViewer;
    if (first == "healthz") r.kind = RouteKind::kHealthz;
    if (first == "metrics") r.kind = RouteKind::kMetrics;
    if (first == "openapi.json") r.kind = RouteKind::kOpenApi;
    if (first == "mcp") r.kind = RouteKind::kMcp;
    return r;
  }
  if (first == "w") {
    // "/w/{ws}/" or "/w/{ws}"
    const bool page = segments.size() == 2 || (segments.size() == 3 && segments[2].empty());
    if (!page || !WorkspaceSegment(segments[1], &r.workspace)) return Route{};
    r.kind = RouteKind::kViewer;
    r.default_workspace = false;
    return r;
  }
  if (first == "v1") return ParseApiRoute(path, segments);
  if (first == "assets" && segments.size() == 2) {
    r.id = DecodePercent(segments[1]);
    if (!r.id.empty()) r.kind = RouteKind::kAsset;
    return r;
  }
  return Route{};
}

std::string_view RouteLabel(RouteKind kind) {
  switch (kind) {
    case RouteKind::kViewer:
      return "/";
    case RouteKind::kHealthz:
      return "/healthz";
    case RouteKind::kMetrics:
      return "/metrics";
    case RouteKind::kQuery:
      return "/v1/query";
    case RouteKind::kDocuments:
      return "/v1/documents";
    case RouteKind::kDocument:
      return "/v1/documents/{id}";
    case RouteKind::kStats:
      return "/v1/stats";
    case RouteKind::kMethods:
      return "/v1/methods";
    case RouteKind::kChatCompletions:
      return "/v1/chat/completions";
    case RouteKind::kModels:
      return "/v1/models";
    case RouteKind::kOpenApi:
      return "/openapi.json";
    case RouteKind::kMcp:
      return "/v1/mcp";
    case RouteKind::kAsset:
      return "/assets/{file}";
    case RouteKind::kGraphEntities:
      return "/v1/graph/entities";
    case RouteKind::kGraphEntity:
      return "/v1/graph/entities/{id}";
    case RouteKind::kGraphFactPassages:
      return "/v1/graph/facts/{id}/passages";
    case RouteKind::kUnknown:
      return "other";
  }
  return "other";
}

std::string_view AllowedMethods(RouteKind kind) {
  switch (kind) {
    case RouteKind::kViewer:
    case RouteKind::kHealthz:
    case RouteKind::kMetrics:
    case RouteKind::kStats:
    case RouteKind::kMethods:
    case RouteKind::kModels:
    case RouteKind::kOpenApi:
    case RouteKind::kAsset:
    case RouteKind::kGraphEntities:
    case RouteKind::kGraphEntity:
    case RouteKind::kGraphFactPassages:
      return "GET, HEAD";
    case RouteKind::kQuery:
    case RouteKind::kDocuments:
    case RouteKind::kChatCompletions:
    case RouteKind::kMcp:
      return "POST";
    case RouteKind::kDocument:
      return "DELETE";
    case RouteKind::kUnknown:
      return "";
  }
  return "";
}

bool MethodAllowed(RouteKind kind, std::string_view method) {
  std::string_view allowed = AllowedMethods(kind);
  while (!allowed.empty()) {
    const size_t comma = allowed.find(", ");
    if (allowed.substr(0, comma) == method) return true;
    if (comma == std::string_view::npos) break;
    allowed.remove_prefix(comma + 2);
  }
  return false;
}

bool NeedsAuth(RouteKind kind) {
  return kind != RouteKind::kViewer && kind != RouteKind::kHealthz && kind != RouteKind::kOpenApi &&
         kind != RouteKind::kAsset;
}

}  // namespace flowrag::server
