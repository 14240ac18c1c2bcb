// The endpoint handlers of the HTTP API, free of HTTP plumbing: each takes the
// workspace's engine and the parsed request and returns a Reply (status and
// JSON body). Shapes are documented in doc/http_api.md.
//
// Thread-safety: as the Engine's: queries and stats run concurrently; the
// engine serialises inserts and deletes.
#ifndef FLOWRAG_SERVER_HANDLERS_H_
#define FLOWRAG_SERVER_HANDLERS_H_

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/engine.h"
#include "server/errors.h"
#include "server/routes.h"

namespace flowrag::server {

// POST /v1/query: {question, method, pipeline, top_k, max_steps, answerer,
// style, deadline_ms, options: {name: string|number|bool}} → Answer JSON.
// `max_deadline_ms` > 0 bounds the deadline a request may ask for.
Reply HandleQuery(const Engine& engine, const nlohmann::json& request, double max_deadline_ms);

// POST /v1/documents: {documents: [{id, title, text}], chunking} → IndexReport JSON.
Reply HandleInsertDocuments(Engine& engine, const nlohmann::json& request);

// The request parsing of HandleQuery and HandleInsertDocuments (before the
// engine sees anything), for the fuzz targets: the first error, naming the
// field, or nullopt with the outputs filled. ParseQueryRequest does not run
// AnswerOptions::Validate nor the methods' option parsing (HandleQuery and
// the retrievers do).
std::optional<ApiError> ParseQueryRequest(const nlohmann::json& request, double max_deadline_ms,
                                          std::string* question, AnswerOptions* options);
std::optional<ApiError> ParseDocuments(const nlohmann::json& request,
                                       std::vector<DocumentInput>* documents,
                                       IndexOptions* options);

// DELETE /v1/documents/{id} → {"deleted": id}; 404 not_found for an unknown id.
Reply HandleDeleteDocument(Engine& engine, const std::string& document_id);

// GET /v1/stats → StoreStats JSON with the workspace name.
Reply HandleStats(const Engine& engine, std::string_view workspace);

// GET /v1/methods → the retrieval methods, pipelines, answerers and styles.
Reply HandleMethods();

// GET graph/entities, graph/entities/{id}, graph/facts/{id}/passages: the
// graph browser (routes_graph.cc; doc/http_api.md "Graph"). `params` is the
// decoded query string.
Reply HandleGraph(const Engine& engine, const Route& route,
                  const std::multimap<std::string, std::string>& params);

}  // namespace flowrag::server

#endif  // FLOWRAG_SERVER_HANDLERS_H_
