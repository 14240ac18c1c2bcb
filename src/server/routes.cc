#include "server/routes.h"

namespace flowrag::server {
namespace {

bool ConsumePrefix(std::string_view* s, std::string_view prefix) {
  if (s->substr(0, prefix.size()) != prefix) return false;
  s->remove_prefix(prefix.size());
  return true;
}

// Reads "{ws}/" off the front of `rest`; false when there is no '/'.
bool ConsumeWorkspace(std::string_view* rest, std::string* workspace) {
  const size_t slash = rest->find('/');
  if (slash == std::string_view::npos || slash == 0) return false;
  *workspace = std::string(rest->substr(0, slash));
  rest->remove_prefix(slash + 1);
  return true;
}

RouteKind EndpointKind(std::string_view rest, std::string* document_id) {
  if (rest == "query") return RouteKind::kQuery;
  if (rest == "documents") return RouteKind::kDocuments;
  if (rest == "stats") return RouteKind::kStats;
  if (rest == "methods") return RouteKind::kMethods;
  if (ConsumePrefix(&rest, "documents/") && !rest.empty()) {
    *document_id = std::string(rest);
    return RouteKind::kDocument;
  }
  return RouteKind::kUnknown;
}

}  // namespace

Route ParseRoute(std::string_view path) {
  Route r;
  if (path == "/") {
    r.kind = RouteKind::kViewer;
  } else if (path == "/healthz") {
    r.kind = RouteKind::kHealthz;
  } else if (path == "/metrics") {
    r.kind = RouteKind::kMetrics;
  } else if (ConsumePrefix(&path, "/w/")) {
    // "/w/{ws}/" or "/w/{ws}"
    std::string_view ws = path;
    if (!ws.empty() && ws.back() == '/') ws.remove_suffix(1);
    if (!ws.empty() && ws.find('/') == std::string_view::npos) {
      r.kind = RouteKind::kViewer;
      r.default_workspace = false;
      r.workspace = std::string(ws);
    }
  } else if (ConsumePrefix(&path, "/v1/")) {
    if (ConsumePrefix(&path, "w/")) {
      if (!ConsumeWorkspace(&path, &r.workspace)) return Route{};
      r.default_workspace = false;
    }
    r.kind = EndpointKind(path, &r.document_id);
    if (r.kind == RouteKind::kUnknown) return Route{};
  }
  return r;
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
      return "GET, HEAD";
    case RouteKind::kQuery:
    case RouteKind::kDocuments:
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

bool NeedsAuth(RouteKind kind) { return kind != RouteKind::kViewer && kind != RouteKind::kHealthz; }

}  // namespace flowrag::server
