// The graph browser's endpoints (doc/http_api.md "Graph"), over the
// engine's GraphView (include/flowrag/graph.h):
//
//   GET graph/entities?q=NAME&limit=20             entity search
//   GET graph/entities/{id}?neighbours=40&facts_per_neighbour=3
//                                                   the entity's neighbourhood
//   GET graph/facts/{id}/passages?limit=10&generation=G
//                                                   the passages behind a fact
//
// Every size is bounded (kMax* below); a bad parameter is a 400 naming it.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>

#include "common/encoding.h"
#include "common/text.h"
#include "flowrag/graph.h"
#include "server/handlers.h"
#include "server/routes.h"

namespace flowrag::server {
namespace {

constexpr size_t kMaxQueryBytes = 200;
constexpr int64_t kDefaultEntities = 20, kMaxEntities = 100;
constexpr int64_t kDefaultNeighbours = 40, kMaxNeighbours = 200;
constexpr int64_t kDefaultFactsPerNeighbour = 3, kMaxFactsPerNeighbour = 20;
constexpr int64_t kDefaultPassages = 10, kMaxPassages = 50;

using Params = std::multimap<std::string, std::string>;

// A whole decimal integer, or nullopt.
std::optional<int64_t> ParseInteger(std::string_view text) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end) return std::nullopt;
  return v;
}

// Integer parameter `name` in [lo, hi], `fallback` when absent.
std::optional<ApiError> IntParam(const Params& params, const char* name, int64_t lo, int64_t hi,
                                 int64_t fallback, int64_t* out) {
  auto it = params.find(name);
  if (it == params.end()) {
    *out = fallback;
    return std::nullopt;
  }
  const std::optional<int64_t> v = ParseInteger(it->second);
  if (!v || *v < lo || *v > hi) {
    return BadRequest(std::string(name) + " \"" + EscapeForMessage(it->second, 40) +
                          "\": expected an integer from " + std::to_string(lo) + " to " +
                          std::to_string(hi),
                      name);
  }
  *out = *v;
  return std::nullopt;
}

nlohmann::json EntityJson(const GraphEntityInfo& e) {
  return {{"id", e.id},
          {"name", e.name},
          {"type", e.type},
          {"passages", e.passages},
          {"facts", e.facts}};
}

Reply SearchEntities(const GraphView& graph, const Params& params) {
  auto q = params.find("q");
  if (q == params.end() || q->second.empty()) {
    return ErrorReply(BadRequest("missing query parameter q (part of an entity name)", "q"));
  }
  if (q->second.size() > kMaxQueryBytes) {
    return ErrorReply(BadRequest("q: " + std::to_string(q->second.size()) + " bytes, at most " +
                                     std::to_string(kMaxQueryBytes),
                                 "q"));
  }
  int64_t limit = 0;
  if (auto e = IntParam(params, "limit", 1, kMaxEntities, kDefaultEntities, &limit)) {
    return ErrorReply(*e);
  }
  // One more than asked says whether there are more.
  std::vector<GraphEntityInfo> found =
      graph.FindEntities(q->second, static_cast<size_t>(limit) + 1);
  const bool more = found.size() > static_cast<size_t>(limit);
  if (more) found.pop_back();
  nlohmann::json list = nlohmann::json::array();
  for (const GraphEntityInfo& e : found) list.push_back(EntityJson(e));
  return OkReply({{"generation", graph.generation()},
                  {"query", q->second},
                  {"entities", std::move(list)},
                  {"truncated", more}});
}

std::optional<ApiError> IdSegment(const std::string& text, const char* what, int64_t* id) {
  const std::optional<int64_t> v = ParseInteger(text);
  if (!v || *v < 0) {
    return BadRequest(std::string(what) + " id \"" + EscapeForMessage(text, 40) +
                          "\": expected a non-negative integer",
                      "id");
  }
  *id = *v;
  return std::nullopt;
}

Reply EntityNeighbourhood(const GraphView& graph, const std::string& id_text,
                          const Params& params) {
  int64_t id = 0, neighbours = 0, per = 0;
  if (auto e = IdSegment(id_text, "entity", &id)) return ErrorReply(*e);
  if (auto e = IntParam(params, "neighbours", 1, kMaxNeighbours, kDefaultNeighbours, &neighbours)) {
    return ErrorReply(*e);
  }
  if (auto e = IntParam(params, "facts_per_neighbour", 1, kMaxFactsPerNeighbour,
                        kDefaultFactsPerNeighbour, &per)) {
    return ErrorReply(*e);
  }
  NeighbourhoodOptions options;
  options.max_neighbours = static_cast<size_t>(neighbours);
  options.max_facts_per_neighbour = static_cast<size_t>(per);
  Result<GraphNeighbourhood> n = graph.Neighbourhood(id, options);
  if (!n.ok()) return ErrorReply(ErrorFromStatus(n.status(), "id"));
  nlohmann::json nodes = nlohmann::json::array();
  for (const GraphEntityInfo& e : n->neighbours) nodes.push_back(EntityJson(e));
  nlohmann::json edges = nlohmann::json::array();
  for (const GraphEdgeInfo& e : n->edges) {
    nlohmann::json j = {
        {"kind", e.kind}, {"source", e.from}, {"target", e.to}, {"weight", e.weight}};
    if (e.kind == "RELATED_TO") {
      j["id"] = "f" + std::to_string(e.fact);
      j["fact"] = e.fact;
      j["relation"] = e.relation;
      j["sources"] = e.sources;
    } else {
      j["id"] = "s" + std::to_string(std::min(e.from, e.to)) + "-" +
                std::to_string(std::max(e.from, e.to));
    }
    edges.push_back(std::move(j));
  }
  return OkReply({{"generation", n->generation},
                  {"center", EntityJson(n->center)},
                  {"neighbours", std::move(nodes)},
                  {"edges", std::move(edges)},
                  {"total_neighbours", n->total_neighbours},
                  {"total_facts", n->total_facts},
                  {"truncated", n->truncated}});
}

Reply FactPassages(const GraphView& graph, const std::string& id_text, const Params& params) {
  int64_t id = 0, limit = 0, generation = 0;
  if (auto e = IdSegment(id_text, "fact", &id)) return ErrorReply(*e);
  if (auto e = IntParam(params, "limit", 1, kMaxPassages, kDefaultPassages, &limit)) {
    return ErrorReply(*e);
  }
  if (auto e = IntParam(params, "generation", 0, INT64_MAX, graph.generation(), &generation)) {
    return ErrorReply(*e);
  }
  if (generation != graph.generation()) {
    return ErrorReply({409, "graph_changed",
                       "fact ids of generation " + std::to_string(generation) +
                           " are stale: the graph is at generation " +
                           std::to_string(graph.generation()) + "; reload the neighbourhood",
                       "generation"});
  }
  Result<FactProvenance> f = graph.FactPassages(id, static_cast<size_t>(limit));
  if (!f.ok()) return ErrorReply(ErrorFromStatus(f.status(), "id"));
  nlohmann::json passages = nlohmann::json::array();
  for (const ScoredPassage& p : f->passages) {
    passages.push_back({{"passage_id", p.passage_id},
                        {"document_id", p.document_id},
                        {"title", p.title},
                        {"ordinal", p.ordinal},
                        {"text", p.text}});
  }
  return OkReply({{"generation", f->generation},
                  {"fact",
                   {{"id", f->fact},
                    {"subject", EntityJson(f->subject)},
                    {"relation", f->relation},
                    {"object", EntityJson(f->object)}}},
                  {"passages", std::move(passages)},
                  {"total_passages", f->total_passages},
                  {"truncated", f->total_passages > f->passages.size()}});
}

}  // namespace

RouteKind ParseGraphEndpoint(const std::vector<std::string_view>& segments, size_t at,
                             std::string* id) {
  const size_t n = segments.size() - std::min(at, segments.size());
  if (n < 2 || DecodePercent(segments[at]) != "graph") return RouteKind::kUnknown;
  const std::string what = DecodePercent(segments[at + 1]);
  if (what == "entities" && n == 2) return RouteKind::kGraphEntities;
  if (what == "entities" && n == 3) {
    *id = DecodePercent(segments[at + 2]);
    return id->empty() ? RouteKind::kUnknown : RouteKind::kGraphEntity;
  }
  if (what == "facts" && n == 4 && DecodePercent(segments[at + 3]) == "passages") {
    *id = DecodePercent(segments[at + 2]);
    return id->empty() ? RouteKind::kUnknown : RouteKind::kGraphFactPassages;
  }
  return RouteKind::kUnknown;
}

Reply HandleGraph(const Engine& engine, const Route& route, const Params& params) {
  Result<std::shared_ptr<const GraphView>> loaded = engine.Graph();
  if (!loaded.ok()) return ErrorReply(ErrorFromStatus(loaded.status()));
  const std::shared_ptr<const GraphView> graph = std::move(loaded).value();
  switch (route.kind) {
    case RouteKind::kGraphEntities:
      return SearchEntities(*graph, params);
    case RouteKind::kGraphEntity:
      return EntityNeighbourhood(*graph, route.id, params);
    case RouteKind::kGraphFactPassages:
      return FactPassages(*graph, route.id, params);
    default:
      return ErrorReply({500, "internal", "not a graph route", ""});
  }
}

}  // namespace flowrag::server
