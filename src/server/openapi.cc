#include "server/openapi.h"

#include <string>
#include <vector>

#include "server/routes.h"

namespace flowrag::server {
namespace {

// components.schemas. Objects list their required fields; the request
// schemas list every field the handler accepts (additionalProperties false
// where the handler rejects others).
constexpr char kSchemas[] = R"json({
  "Error": {"type": "object", "required": ["error"], "properties": {
    "error": {"type": "object", "required": ["code", "message"], "properties": {
      "code": {"type": "string", "description": "stable snake_case name, e.g. invalid_argument, not_found, unauthorized"},
      "message": {"type": "string"},
      "field": {"type": "string", "description": "the request field that was wrong"},
      "type": {"type": "string", "description": "chat endpoints: OpenAI error type"},
      "param": {"type": ["string", "null"], "description": "chat endpoints: the field (OpenAI)"}}}}},
  "QueryRequest": {"type": "object", "additionalProperties": false, "required": ["question"], "properties": {
    "question": {"type": "string", "minLength": 1, "maxLength": 8192},
    "method": {"type": "string", "default": "auto", "description": "one of GET /v1/methods"},
    "pipeline": {"type": "string", "enum": ["auto", "single", "cot", "decompose", "schema"]},
    "top_k": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 5},
    "max_steps": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
    "answerer": {"type": "string", "enum": ["auto", "extractive", "llm"]},
    "style": {"type": "string", "enum": ["short", "long"]},
    "deadline_ms": {"type": "number", "minimum": 0},
    "analysis": {"type": "string", "enum": ["auto", "offline", "llm"]},
    "extension": {"type": "string"},
    "explain": {"type": "boolean", "default": false},
    "options": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}},
    "stream": {"type": "boolean", "default": false, "description": "answer as Server-Sent Events: retrieval, token..., answer (or error)"}}},
  "Passage": {"type": "object", "required": ["passage_id", "document_id", "title", "score", "text"], "properties": {
    "passage_id": {"type": "integer"}, "document_id": {"type": "string"}, "title": {"type": "string"},
    "ordinal": {"type": "integer"}, "begin": {"type": "integer"}, "end": {"type": "integer"},
    "score": {"type": "number"}, "text": {"type": "string"}}},
  "Retrieval": {"type": "object", "required": ["method", "passages", "nodes", "edges", "diagnostics"], "properties": {
    "method": {"type": "string"},
    "passages": {"type": "array", "items": {"$ref": "#/components/schemas/Passage"}},
    "keywords": {"type": "array", "items": {"type": "string"}},
    "nodes": {"type": "array", "items": {"type": "object", "required": ["id", "kind", "label", "score"], "properties": {
      "id": {"type": "integer"}, "kind": {"type": "string"}, "label": {"type": "string"},
      "score": {"type": "number"}, "seed": {"type": "boolean"}}}},
    "edges": {"type": "array", "items": {"type": "object", "required": ["from", "to", "kind"], "properties": {
      "from": {"type": "integer"}, "to": {"type": "integer"}, "kind": {"type": "string"},
      "relation": {"type": "string"}, "weight": {"type": "number"}, "flow": {"type": "number"}}}},
    "paths": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
    "context": {"type": "array", "items": {"type": "string"}},
    "diagnostics": {"type": "object"}}},
  "Citation": {"type": "object", "required": ["marker", "passage_id", "document_id", "title"], "properties": {
    "marker": {"type": "integer"}, "passage_id": {"type": "integer"}, "document_id": {"type": "string"},
    "title": {"type": "string"}, "quote": {"type": "string"}, "begin": {"type": "integer"}, "end": {"type": "integer"}}},
  "Answer": {"type": "object", "required": ["question", "answer", "answered", "answerer", "pipeline", "citations", "retrieval", "usage", "warnings"], "properties": {
    "question": {"type": "string"}, "answer": {"type": "string"}, "reasoning": {"type": "string"},
    "answered": {"type": "boolean"}, "confidence": {"type": "number"},
    "answerer": {"type": "string"}, "pipeline": {"type": "string"},
    "citations": {"type": "array", "items": {"$ref": "#/components/schemas/Citation"}},
    "steps": {"type": "array", "items": {"type": "object"}},
    "usage": {"type": "object", "required": ["llm_calls", "prompt_tokens", "completion_tokens"], "properties": {
      "llm_calls": {"type": "integer"}, "cache_hits": {"type": "integer"}, "prompt_tokens": {"type": "integer"},
      "completion_tokens": {"type": "integer"}, "cost_usd": {"type": "number"}}},
    "warnings": {"type": "array", "items": {"type": "string"}},
    "time_ms": {"type": "number"},
    "retrieval": {"$ref": "#/components/schemas/Retrieval"}}},
  "DocumentsRequest": {"type": "object", "additionalProperties": false, "required": ["documents"], "properties": {
    "documents": {"type": "array", "minItems": 1, "maxItems": 10000, "items": {
      "type": "object", "additionalProperties": false, "required": ["id", "text"], "properties": {
        "id": {"type": "string", "minLength": 1}, "title": {"type": "string"}, "text": {"type": "string"}}}},
    "chunking": {"type": "string", "enum": ["window", "boundary", "none"]}}},
  "IndexReport": {"type": "object", "required": ["documents_seen", "documents_added", "documents_replaced", "documents_unchanged", "passages_added"], "properties": {
    "documents_seen": {"type": "integer"}, "documents_added": {"type": "integer"},
    "documents_replaced": {"type": "integer"}, "documents_unchanged": {"type": "integer"},
    "passages_added": {"type": "integer"}, "messages": {"type": "array", "items": {"type": "string"}}}},
  "Deleted": {"type": "object", "required": ["deleted"], "properties": {"deleted": {"type": "string"}}},
  "Stats": {"type": "object", "required": ["workspace", "documents", "passages", "graph"], "properties": {
    "workspace": {"type": "string"}, "documents": {"type": "integer"}, "passages": {"type": "integer"},
    "graph": {"type": "object", "required": ["nodes", "edges"], "properties": {
      "nodes": {"type": "object"}, "edges": {"type": "object"}}}}},
  "Methods": {"type": "object", "required": ["methods", "default_method", "pipelines", "answerers", "styles", "default_top_k"], "properties": {
    "methods": {"type": "array", "items": {"type": "string"}}, "default_method": {"type": "string"},
    "pipelines": {"type": "array", "items": {"type": "string"}}, "answerers": {"type": "array", "items": {"type": "string"}},
    "styles": {"type": "array", "items": {"type": "string"}}, "default_top_k": {"type": "integer"}}},
  "Health": {"type": "object", "required": ["status"], "properties": {"status": {"type": "string", "const": "ok"}}},
  "ChatMessage": {"type": "object", "required": ["role"], "properties": {
    "role": {"type": "string", "description": "system, user, assistant, ...; the last user message is the question"},
    "content": {"oneOf": [{"type": "string"}, {"type": "null"}, {"type": "array", "items": {
      "type": "object", "required": ["type", "text"], "properties": {"type": {"const": "text"}, "text": {"type": "string"}}}}]}}},
  "ChatCompletionRequest": {"type": "object", "required": ["model", "messages"], "description": "other OpenAI fields (temperature, max_tokens, ...) are accepted and ignored", "properties": {
    "model": {"type": "string", "description": "flowrag or flowrag-<method> (GET /v1/models)"},
    "messages": {"type": "array", "minItems": 1, "maxItems": 256, "items": {"$ref": "#/components/schemas/ChatMessage"}},
    "stream": {"type": "boolean", "default": false},
    "stream_options": {"type": "object", "properties": {"include_usage": {"type": "boolean"}}},
    "n": {"type": "integer", "const": 1},
    "flowrag": {"type": "object", "description": "the POST /v1/query fields but question, method and stream; rewrite: auto, offline or off (how a follow-up question becomes the retrieval query)"}}},
  "ChatCompletion": {"type": "object", "required": ["id", "object", "created", "model", "choices", "usage", "flowrag"], "properties": {
    "id": {"type": "string"}, "object": {"const": "chat.completion"}, "created": {"type": "integer"}, "model": {"type": "string"},
    "choices": {"type": "array", "items": {"type": "object", "required": ["index", "message", "finish_reason"], "properties": {
      "index": {"type": "integer"}, "finish_reason": {"type": "string"},
      "message": {"type": "object", "required": ["role", "content"], "properties": {
        "role": {"const": "assistant"}, "content": {"type": "string", "description": "the answer, then a Sources: list of the cited passages"}}}}}},
    "usage": {"type": "object", "required": ["prompt_tokens", "completion_tokens", "total_tokens"], "properties": {
      "prompt_tokens": {"type": "integer"}, "completion_tokens": {"type": "integer"}, "total_tokens": {"type": "integer"}}},
    "flowrag": {"$ref": "#/components/schemas/Answer"}}},
  "JsonRpc": {"type": ["object", "array"], "description": "a JSON-RPC 2.0 message or batch of the Model Context Protocol (doc/mcp.md)"},
  "ModelList": {"type": "object", "required": ["object", "data"], "properties": {
    "object": {"const": "list"},
    "data": {"type": "array", "items": {"type": "object", "required": ["id", "object", "owned_by"], "properties": {
      "id": {"type": "string"}, "object": {"const": "model"}, "created": {"type": "integer"}, "owned_by": {"type": "string"}}}}}}
})json";

// What one route does: the schemas of its request and of its 200 response
// ("" for none; "text/..." for a non-JSON body), and a summary.
struct Operation {
  RouteKind kind;
  const char* summary;
  const char* request;
  const char* response;
  std::vector<const char*> query = {};  // query-string parameters ("q!" : required)
};

const Operation kOperations[] = {
    {RouteKind::kViewer, "The subgraph viewer page", "", "text/html"},
    {RouteKind::kHealthz, "Liveness (no auth)", "", "Health"},
    {RouteKind::kMetrics, "Prometheus metrics", "", "text/plain"},
    {RouteKind::kOpenApi, "This description (no auth)", "", "object"},
    {RouteKind::kQuery, "Answer a question: retrieval, pipeline, answer with citations; "
                        "with stream: true, Server-Sent Events",
     "QueryRequest", "Answer"},
    {RouteKind::kDocuments, "Insert or replace documents", "DocumentsRequest", "IndexReport"},
    {RouteKind::kDocument, "Delete a document by its id", "", "Deleted"},
    {RouteKind::kStats, "Store and graph statistics", "", "Stats"},
    {RouteKind::kMethods, "Retrieval methods, pipelines, answerers and styles", "", "Methods"},
    {RouteKind::kChatCompletions, "OpenAI-compatible chat completion over the store (stream: "
                                  "true for chat.completion.chunk events)",
     "ChatCompletionRequest", "ChatCompletion"},
    {RouteKind::kModels, "OpenAI-compatible model list: flowrag, flowrag-<method>", "",
     "ModelList"},
    {RouteKind::kMcp, "Model Context Protocol, Streamable HTTP (stateless; 202 for notifications)",
     "JsonRpc", "JsonRpc"},
    {RouteKind::kAsset, "A file the viewer loads (no auth)", "", "text/javascript"},
    {RouteKind::kGraphEntities, "Graph browser: entities whose name contains q", "", "object",
     {"q!", "limit"}},
    {RouteKind::kGraphEntity, "Graph browser: an entity's neighbourhood", "", "object",
     {"neighbours", "facts_per_neighbour"}},
    {RouteKind::kGraphFactPassages, "Graph browser: the passages behind a fact", "", "object",
     {"limit", "generation"}},
};

nlohmann::json Ref(const std::string& schema) {
  return {{"$ref", "#/components/schemas/" + schema}};
}

nlohmann::json ResponseOf(const Operation& op) {
  const std::string r = op.response;
  nlohmann::json ok = {{"description", "OK"}};
  if (r.rfind("text/", 0) == 0) {
    ok["content"][r] = {{"schema", {{"type", "string"}}}};
  } else if (r == "object") {
    ok["content"]["application/json"] = {{"schema", {{"type", "object"}}}};
  } else {
    ok["content"]["application/json"] = {{"schema", Ref(r)}};
  }
  if (op.kind == RouteKind::kQuery || op.kind == RouteKind::kChatCompletions) {
    ok["content"]["text/event-stream"] = {
        {"schema", {{"type", "string"}, {"description", "with stream: true (doc/http_api.md)"}}}};
  }
  nlohmann::json error = {{"description", "error"},
                          {"content", {{"application/json", {{"schema", Ref("Error")}}}}}};
  return {{"200", ok}, {"default", error}};
}

nlohmann::json OperationJson(const Operation& op, const std::string& method, bool workspace) {
  nlohmann::json o = {{"summary", op.summary}, {"responses", ResponseOf(op)}};
  o["operationId"] = method + std::string(RouteLabel(op.kind)) + (workspace ? "@workspace" : "");
  nlohmann::json params = nlohmann::json::array();
  if (workspace) {
    params.push_back({{"name", "workspace"}, {"in", "path"}, {"required", true},
                      {"schema", {{"type", "string"}, {"pattern", "^[A-Za-z0-9_.-]{1,64}$"}}}});
  }
  if (op.kind == RouteKind::kDocument) {
    params.push_back({{"name", "id"}, {"in", "path"}, {"required", true},
                      {"description", "the document's id, URL-encoded; may contain /"},
                      {"schema", {{"type", "string"}}}});
  }
  if (op.kind == RouteKind::kGraphEntity || op.kind == RouteKind::kGraphFactPassages) {
    params.push_back({{"name", "id"}, {"in", "path"}, {"required", true},
                      {"schema", {{"type", "integer"}, {"minimum", 0}}}});
  }
  if (op.kind == RouteKind::kAsset) {
    params.push_back(
        {{"name", "file"}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}});
  }
  for (std::string name : op.query) {
    const bool required = name.back() == '!';
    if (required) name.pop_back();
    params.push_back({{"name", name}, {"in", "query"}, {"required", required},
                      {"schema", {{"type", name == "q" ? "string" : "integer"}}}});
  }
  if (!params.empty()) o["parameters"] = std::move(params);
  if (*op.request != '\0') {
    o["requestBody"] = {{"required", true},
                        {"content", {{"application/json", {{"schema", Ref(op.request)}}}}}};
  }
  const bool open = !NeedsAuth(op.kind);
  if (open) o["security"] = nlohmann::json::array();
  return o;
}

// The methods of AllowedMethods() ("GET, HEAD") in lower case.
std::vector<std::string> MethodsOf(RouteKind kind) {
  std::vector<std::string> out;
  std::string_view allowed = AllowedMethods(kind);
  while (!allowed.empty()) {
    const size_t comma = allowed.find(", ");
    std::string m(allowed.substr(0, comma));
    for (char& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.push_back(m);
    if (comma == std::string_view::npos) break;
    allowed.remove_prefix(comma + 2);
  }
  return out;
}

nlohmann::json Build() {
  nlohmann::json doc = {
      {"openapi", "3.1.0"},
      {"info",
       {{"title", "flowrag HTTP API"},
        {"version", "1"},
        {"description", "Graph retrieval for RAG over one or more stores (workspaces). "
                        "See doc/http_api.md."}}},
      {"security", {{{"bearer", nlohmann::json::array()}}}},
  };
  doc["components"]["securitySchemes"]["bearer"] = {{"type", "http"}, {"scheme", "bearer"}};
  doc["components"]["schemas"] = nlohmann::json::parse(kSchemas);
  // The chat request's "flowrag" object takes the /v1/query fields but the
  // three the chat request sets itself.
  nlohmann::json& schemas = doc["components"]["schemas"];
  nlohmann::json& flowrag = schemas["ChatCompletionRequest"]["properties"]["flowrag"];
  flowrag["additionalProperties"] = false;
  flowrag["properties"] = schemas["QueryRequest"]["properties"];
  for (const char* reserved : {"question", "method", "stream"}) {
    flowrag["properties"].erase(reserved);
  }
  flowrag["properties"]["rewrite"] = {{"type", "string"}, {"enum", {"auto", "offline", "off"}}};
  for (const Operation& op : kOperations) {
    const std::string label(RouteLabel(op.kind));
    std::vector<std::pair<std::string, bool>> paths = {{label, false}};
    if (label.rfind("/v1/", 0) == 0) paths.push_back({"/v1/w/{workspace}/" + label.substr(4), true});
    if (op.kind == RouteKind::kViewer) paths.push_back({"/w/{workspace}/", true});
    if (op.kind == RouteKind::kMcp) paths.push_back({"/mcp", false});
    for (const auto& [path, workspace] : paths) {
      for (const std::string& method : MethodsOf(op.kind)) {
        doc["paths"][path][method] = OperationJson(op, method, workspace);
      }
    }
  }
  return doc;
}

}  // namespace

const nlohmann::json& OpenApiDocument() {
  static const nlohmann::json doc = Build();
  return doc;
}

std::string_view OpenApiJson() {
  static const std::string text = OpenApiDocument().dump(1);
  return text;
}

}  // namespace flowrag::server
