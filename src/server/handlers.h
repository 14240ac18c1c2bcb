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
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/engine.h"
#include "server/errors.h"
#include "server/routes.h"

namespace flowrag::server {

// POST /v1/query: {question, method, pipeline, top_k, max_steps, answerer,
// style, deadline_ms, explain, options: {name: string|number|bool}, stream}
// → Answer JSON, or with "stream": true the events of sse.h.
// `max_deadline_ms` > 0 bounds the deadline a request may ask for.
Reply HandleQuery(const Engine& engine, const nlohmann::json& request, double max_deadline_ms);

// The fields a POST /v1/query body may have (the OpenAPI test checks them).
std::span<const std::string_view> QueryRequestFields();

// The events of sse.h for an answer to `question` (options already valid);
// `engine` must outlive the reply.
Reply StreamedAnswer(const Engine& engine, std::string question, AnswerOptions options);

// The API error for a failed Ask (the field named when it is about one).
ApiError AskError(const Status& status);

// POST /v1/documents: {documents: [{id, title, text}], chunking} → IndexReport JSON.
Reply HandleInsertDocuments(Engine& engine, const nlohmann::json& request);

// The request parsing of HandleQuery and HandleInsertDocuments (before the
// engine sees anything), for the fuzz targets: the first error, naming the
// field, or nullopt with the outputs filled. ParseQueryRequest does not run
// AnswerOptions::Validate nor the methods' option parsing (HandleQuery and
// the retrievers do).
std::optional<ApiError> ParseQueryRequest(const nlohmann::json& request, double max_deadline_ms,
                                          std::string* question, AnswerOptions* options,
                                          bool* stream = nullptr);
std::optional<ApiError> ParseDocuments(const nlohmann::json& request,
                                       std::vector<DocumentInput>* documents,
                                       IndexOptions* options);

// DELETE /v1/documents/{id} → {"deleted": id}; 404 not_found for an unknown id.
Reply HandleDeleteDocument(Engine& engine, const std::string& document_id);

// GET /v1/stats → StoreStats JSON with the workspace name.
Reply HandleStats(const Engine& engine, std::string_view workspace);

// GET /v1/methods → the retrieval methods, pipelines, answerers and styles.
Reply HandleMethods();

// POST /v1/chat/completions (OpenAI-compatible, routes_chat.cc): {model,
// messages, stream, stream_options: {include_usage}, n: 1, flowrag: {the
// /v1/query fields but question, method and stream, and rewrite}}; other
// OpenAI fields (temperature, max_tokens, ...) are accepted and ignored.
// Errors in the OpenAI shape (ChatErrorReply); an unknown model is 404
// model_not_found. A follow-up question is retrieved as the standalone
// query agent/followup.h makes of it, by `rewriter` when set (not owned,
// outlives the reply), else offline.
Reply HandleChatCompletions(const Engine& engine, const nlohmann::json& request,
                            double max_deadline_ms, ChatModel* rewriter = nullptr);

// The chat model that rewrites a workspace's follow-up questions: the one
// its EngineOptions configure (models/chat_setup.h), or null (offline).
std::shared_ptr<ChatModel> QueryRewriteModel(const EngineOptions& options);

// GET /v1/models (OpenAI-compatible): "flowrag" and "flowrag-<method>".
Reply HandleModels();

// An ApiError in the OpenAI error shape: errors.h's plus "type"
// ("invalid_request_error" or "server_error") and "param" (the field).
Reply ChatErrorReply(const ApiError& error);

// POST /mcp, /v1/mcp, /v1/w/{ws}/mcp: MCP Streamable HTTP (routes_mcp.cc),
// stateless: every POST is served by a fresh mcp::McpSession.
struct McpHttpRequest {
  std::string_view body;
  std::string protocol_version;  // MCP-Protocol-Version header ("": absent)
  std::string accept, content_type, origin, host;  // headers ("": absent)
  bool read_only = false;        // the store is served read-only: no write tools
};
struct McpHttpReply {
  int http_status = 200;  // 202: no body
  std::string body;       // JSON-RPC response(s), or a JSON-RPC error
  std::string error_code; // metrics label of a refusal
};
McpHttpReply HandleMcp(Engine& engine, const McpHttpRequest& request);

// GET graph/entities, graph/entities/{id}, graph/facts/{id}/passages: the
// graph browser (routes_graph.cc; doc/http_api.md "Graph"). `params` is the
// decoded query string.
Reply HandleGraph(const Engine& engine, const Route& route,
                  const std::multimap<std::string, std::string>& params);

}  // namespace flowrag::server

#endif  // FLOWRAG_SERVER_HANDLERS_H_
