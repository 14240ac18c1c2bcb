// POST /mcp, /v1/mcp and /v1/w/{ws}/mcp: the Model Context Protocol's
// Streamable HTTP transport (doc/mcp.md, doc/http_api.md).
//
// Stateless: the server issues no Mcp-Session-Id (the transport makes
// sessions optional) and serves every POST with a fresh McpSession, so any
// replica can answer any request. The revision of a request is its
// MCP-Protocol-Version header (2025-03-26 when absent, as the transport
// says); an unsupported one is refused (400). Responses are JSON
// (application/json), never an SSE stream: GET (the server-to-client
// stream) and DELETE (session end) answer 405 through the route table.
// A POST of only notifications or responses answers 202 without a body.
//
// Against DNS rebinding and cross-site requests: a browser's Origin must
// name this server's own Host (403 otherwise), and the body must be sent as
// application/json (415), which a cross-site page cannot do without a CORS
// preflight this server never grants. Bearer-token auth and the workspace
// are checked before this handler runs (http_server.cc).
#include <algorithm>
#include <cctype>
#include <string>

#include "common/encoding.h"
#include "mcp/jsonrpc.h"
#include "mcp/protocol.h"
#include "mcp/session.h"
#include "server/handlers.h"

namespace flowrag::server {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The media type of a Content-Type or one Accept entry, lower case, without
// parameters and spaces.
std::string MediaType(std::string_view value) {
  value = value.substr(0, value.find(';'));
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  return Lower(value);
}

// Whether an Accept header lets us answer application/json.
bool AcceptsJson(std::string_view accept) {
  if (accept.empty()) return true;
  while (true) {
    const size_t comma = accept.find(',');
    const std::string type = MediaType(accept.substr(0, comma));
    if (type == "application/json" || type == "application/*" || type == "*/*") return true;
    if (comma == std::string_view::npos) return false;
    accept.remove_prefix(comma + 1);
  }
}

McpHttpReply Refusal(int http_status, std::string code, std::string message) {
  McpHttpReply reply;
  reply.http_status = http_status;
  reply.error_code = std::move(code);
  reply.body = mcp::Serialize(mcp::ErrorResponse(
      nullptr, mcp::RpcError{mcp::kTransportError, std::move(message), nullptr}));
  return reply;
}

std::optional<McpHttpReply> CheckHeaders(const McpHttpRequest& request) {
  if (!request.origin.empty()) {
    const std::string origin = Lower(request.origin);
    const std::string host = Lower(request.host);
    if (host.empty() || (origin != "http://" + host && origin != "https://" + host)) {
      return Refusal(403, "forbidden_origin",
                     "Origin \"" + EscapeForMessage(request.origin, 80) +
                         "\" is not this server's (" + EscapeForMessage(request.host, 80) + ")");
    }
  }
  if (MediaType(request.content_type) != "application/json") {
    return Refusal(415, "unsupported_media_type",
                   "Content-Type \"" + EscapeForMessage(request.content_type, 80) +
                       "\": expected application/json");
  }
  if (!AcceptsJson(request.accept)) {
    return Refusal(406, "not_acceptable",
                   "Accept \"" + EscapeForMessage(request.accept, 80) +
                       "\": this server answers application/json");
  }
  if (!request.protocol_version.empty() &&
      !mcp::SupportedProtocolVersion(request.protocol_version)) {
    std::string list;
    for (std::string_view v : mcp::kProtocolVersions)
      list += (list.empty() ? "" : ", ") + std::string(v);
    return Refusal(400, "unsupported_protocol_version",
                   "MCP-Protocol-Version \"" + EscapeForMessage(request.protocol_version, 40) +
                       "\" is not supported (supported: " + list + ")");
  }
  return std::nullopt;
}

}  // namespace

McpHttpReply HandleMcp(Engine& engine, const McpHttpRequest& request) {
  if (std::optional<McpHttpReply> refused = CheckHeaders(request)) return *refused;
  mcp::McpSessionOptions options;
  options.allow_writes = !request.read_only;
  options.protocol_version = request.protocol_version.empty()
                                 ? std::string(mcp::kHttpDefaultProtocolVersion)
                                 : request.protocol_version;
  mcp::McpSession session(engine, options);
  mcp::McpReply reply = session.Handle(request.body);
  McpHttpReply out;
  if (!reply.body) {
    out.http_status = 202;
    return out;
  }
  out.body = std::move(*reply.body);
  if (reply.malformed) {
    out.http_status = 400;
    out.error_code = "invalid_mcp_message";
  }
  return out;
}

}  // namespace flowrag::server
