// McpSession: one Model Context Protocol conversation over an Engine,
// independent of the transport. A transport hands it each JSON-RPC message
// it reads (stdio: a line; Streamable HTTP: a POST body) and sends back what
// Handle returns.
//
//   McpSession session(*engine);
//   McpReply reply = session.Handle(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
//   if (reply.body) write(*reply.body);  // {"jsonrpc":"2.0","id":1,"result":{}}
//
// Methods: initialize (protocol version negotiation), ping, tools/list,
// tools/call (mcp/tools.h), resources/list (paged by cursor),
// resources/read, resources/templates/list; the notifications
// notifications/initialized and notifications/cancelled are accepted, any
// other notification is ignored (JSON-RPC never answers a notification).
// A batch (a JSON array of messages) gets an array of the responses its
// requests call for. Errors are JSON-RPC errors: parse error, invalid
// request, method not found, invalid params (data.field names the field).
//
// Requests are served in order, each to completion. No request needs a
// prior initialize (a stateless HTTP binding sends none on most requests);
// initialize fixes the protocol revision for the results that follow.
//
// Thread-safety: not thread-safe (it holds the negotiated revision); use one
// session per connection. The Engine must outlive the session; tool calls
// run concurrently with other sessions' as Engine's thread-safety allows.
#ifndef FLOWRAG_MCP_SESSION_H_
#define FLOWRAG_MCP_SESSION_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "flowrag/engine.h"
#include "mcp/jsonrpc.h"
#include "mcp/protocol.h"

namespace flowrag::mcp {

struct McpSessionOptions {
  std::string server_name = "flowrag";
  std::string server_version = "0.1.0";
  // Offer index_text and delete (off for a store served read-only).
  bool allow_writes = true;
  // Resources per resources/list page.
  size_t page_size = 100;
  // Messages per batch at most (a larger batch is one invalid-request error).
  size_t max_batch = 100;
  // The revision results follow until initialize negotiates one (the HTTP
  // binding sets the request's MCP-Protocol-Version here).
  std::string protocol_version = std::string(kLatestProtocolVersion);
};

// What a message gets back.
struct McpReply {
  // The response (or batch of them) as one line of JSON; none when the
  // message held only notifications and responses.
  std::optional<std::string> body;
  // The message as a whole was refused: not JSON, too deep, not a JSON-RPC
  // message or an empty batch (HTTP answers 400).
  bool malformed = false;
};

class McpSession {
 public:
  explicit McpSession(Engine& engine, McpSessionOptions options = {});

  // Serves one message: a request, a notification, a response (dropped) or a
  // batch of them. Never throws.
  McpReply Handle(std::string_view message);

  // The revision in force (negotiated by initialize, else the option's).
  const std::string& protocol_version() const { return protocol_version_; }
  // Whether notifications/initialized has arrived.
  bool initialized() const { return initialized_; }
  // The client's name and version from initialize ("" before).
  const std::string& client_name() const { return client_name_; }

 private:
  // The response to one message of a batch (or the whole message); null for
  // a notification or a response.
  nlohmann::json HandleOne(const nlohmann::json& value, bool in_batch);
  // A request's result, or the error.
  std::optional<RpcError> Dispatch(const std::string& method, const nlohmann::json& params,
                                   nlohmann::json* result);
  std::optional<RpcError> Initialize(const nlohmann::json& params, nlohmann::json* result);
  void Notify(const std::string& method);

  Engine& engine_;
  const McpSessionOptions options_;
  std::string protocol_version_;
  std::string client_name_;
  bool initialized_ = false;
};

}  // namespace flowrag::mcp

#endif  // FLOWRAG_MCP_SESSION_H_
