// JSON-RPC 2.0 as the Model Context Protocol uses it: reading one message
// (or a batch) from text, classifying it, and writing responses and errors.
// Pure functions; thread-safe.
//
//   request       {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {...}}
//   notification  {"jsonrpc": "2.0", "method": "notifications/initialized"}
//   response      {"jsonrpc": "2.0", "id": 1, "result": {...}}  (or "error")
//
// MCP narrows JSON-RPC: ids are strings or numbers (never null) and params,
// when present, are an object.
#ifndef FLOWRAG_MCP_JSONRPC_H_
#define FLOWRAG_MCP_JSONRPC_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace flowrag::mcp {

// JSON-RPC 2.0 error codes, and MCP's "resource not found".
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kResourceNotFound = -32002;
// Transport-level refusals of the HTTP binding (implementation-defined range).
inline constexpr int kTransportError = -32000;

// A request id is a string of at most this many bytes (or a number): every
// response repeats its id, and no error quotes more of a client's input
// (common/encoding.h). A longer one is an invalid request, answered with
// id null.
inline constexpr size_t kMaxRequestIdBytes = 200;

// Messages may nest objects and arrays this deep at most (deeper input is
// refused before it is parsed, so that nothing recursive meets it).
inline constexpr size_t kMaxNesting = 64;

// A JSON-RPC error: code, message and optional data (e.g. {"field": "top_k"}).
struct RpcError {
  int code = kInternalError;
  std::string message;
  nlohmann::json data;  // null: none
};

RpcError InvalidParams(std::string message, std::string field);

// Parses `text` as JSON. Errors: kParseError naming the byte position of the
// syntax error (a short excerpt), or kInvalidRequest when objects and arrays
// nest deeper than kMaxNesting.
std::optional<RpcError> ParseJson(std::string_view text, nlohmann::json* out);

// One message of a batch (or the whole message), classified.
struct Message {
  enum class Kind { kRequest, kNotification, kResponse, kInvalid };
  Kind kind = Kind::kInvalid;
  nlohmann::json id;      // kRequest (and kInvalid when the id was readable): the id
  std::string method;     // kRequest, kNotification
  nlohmann::json params;  // an object (empty when absent)
  RpcError error;         // kInvalid: why (kInvalidRequest or kInvalidParams)
};

// Classifies one JSON value as a message. Never throws.
Message Classify(const nlohmann::json& value);

// {"jsonrpc": "2.0", "id": id, "result": result}
nlohmann::json ResultResponse(const nlohmann::json& id, nlohmann::json result);
// {"jsonrpc": "2.0", "id": id, "error": {"code", "message", "data"?}}
nlohmann::json ErrorResponse(const nlohmann::json& id, const RpcError& error);

// Compact JSON text of a response, on one line (strings escape their line
// breaks; bytes that are not UTF-8 become U+FFFD).
std::string Serialize(const nlohmann::json& value);

}  // namespace flowrag::mcp

#endif  // FLOWRAG_MCP_JSONRPC_H_
