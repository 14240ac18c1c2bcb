#include "mcp/session.h"

#include "common/encoding.h"
#include "mcp/resources.h"
#include "mcp/tools.h"

namespace flowrag::mcp {
namespace {

using nlohmann::json;

constexpr char kInstructions[] =
    "flowrag is a graph retrieval engine over a document store. Use `ask` for a cited answer "
    "to a question, `query` for the ranked passages themselves (document ids, titles, "
    "scores), `stats` for what the store holds. Documents are resources "
    "(flowrag://documents/{id}); `index_text` adds or replaces documents and `delete` "
    "removes them.";

}  // namespace

McpSession::McpSession(Engine& engine, McpSessionOptions options)
    : engine_(engine), options_(std::move(options)), protocol_version_(options_.protocol_version) {}

McpReply McpSession::Handle(std::string_view message) {
  McpReply reply;
  try {
    json value;
    if (auto e = ParseJson(message, &value)) {
      reply.malformed = true;
      reply.body = Serialize(ErrorResponse(nullptr, *e));
      return reply;
    }
    if (!value.is_array()) {
      const Message m = Classify(value);
      reply.malformed = m.kind == Message::Kind::kInvalid && m.error.code == kInvalidRequest;
      json response = HandleOne(value, /*in_batch=*/false);
      if (!response.is_null()) reply.body = Serialize(response);
      return reply;
    }
    if (value.empty() || value.size() > options_.max_batch) {
      reply.malformed = true;
      const std::string why = value.empty() ? "an empty batch"
                                            : "a batch of " + std::to_string(value.size()) +
                                                  " messages (at most " +
                                                  std::to_string(options_.max_batch) + ")";
      reply.body = Serialize(
          ErrorResponse(nullptr, RpcError{kInvalidRequest, "invalid request: " + why, nullptr}));
      return reply;
    }
    json responses = json::array();
    for (const json& element : value) {
      json response = HandleOne(element, /*in_batch=*/true);
      if (!response.is_null()) responses.push_back(std::move(response));
    }
    if (!responses.empty()) reply.body = Serialize(responses);
  } catch (const std::exception& e) {  // a bug: answered, never fatal to the transport
    reply.body = Serialize(ErrorResponse(
        nullptr,
        RpcError{kInternalError, "internal error: " + EscapeForMessage(e.what()), nullptr}));
  }
  return reply;
}

json McpSession::HandleOne(const json& value, bool in_batch) {
  Message m = Classify(value);
  switch (m.kind) {
    case Message::Kind::kResponse:
      return nullptr;
    case Message::Kind::kNotification:
      Notify(m.method);
      return nullptr;
    case Message::Kind::kInvalid:
      return ErrorResponse(m.id, m.error);
    case Message::Kind::kRequest:
      break;
  }
  if (in_batch && m.method == "initialize") {
    return ErrorResponse(
        m.id, RpcError{kInvalidRequest, "invalid request: initialize must not be part of a batch",
                       nullptr});
  }
  json result;
  std::optional<RpcError> error;
  try {
    error = Dispatch(m.method, m.params, &result);
  } catch (const std::exception& e) {
    error = RpcError{kInternalError, "internal error: " + EscapeForMessage(e.what()), nullptr};
  }
  return error ? ErrorResponse(m.id, *error) : ResultResponse(m.id, std::move(result));
}

std::optional<RpcError> McpSession::Dispatch(const std::string& method, const json& params,
                                             json* result) {
  if (method == "initialize") return Initialize(params, result);
  if (method == "ping") {
    *result = json::object();
    return std::nullopt;
  }
  if (method == "tools/list") {
    *result = ListTools({options_.allow_writes, protocol_version_});
    return std::nullopt;
  }
  if (method == "tools/call") {
    return CallTool(engine_, params, {options_.allow_writes, protocol_version_}, result);
  }
  if (method == "resources/list") {
    return ListResources(engine_, params, options_.page_size, protocol_version_, result);
  }
  if (method == "resources/read") return ReadResource(engine_, params, result);
  if (method == "resources/templates/list") {
    *result = ResourceTemplates();
    return std::nullopt;
  }
  RpcError e{kMethodNotFound,
             "method not found: \"" + EscapeForMessage(method, 60) +
                 "\" (this server offers initialize, ping, tools/list, tools/call, "
                 "resources/list, resources/read, resources/templates/list)",
             nullptr};
  e.data = {{"method", EscapeForMessage(method, 60)}};  // the client's, cut
  return e;
}

std::optional<RpcError> McpSession::Initialize(const json& params, json* result) {
  auto version = params.find("protocolVersion");
  if (version == params.end() || !version->is_string()) {
    return InvalidParams("invalid params: \"protocolVersion\": required string is missing",
                         "protocolVersion");
  }
  if (auto info = params.find("clientInfo"); info != params.end() && info->is_object()) {
    auto name = info->find("name");
    if (name != info->end() && name->is_string()) client_name_ = name->get<std::string>();
  }
  protocol_version_ = std::string(NegotiateProtocolVersion(version->get<std::string>()));
  json server_info = {{"name", options_.server_name}, {"version", options_.server_version}};
  if (HasStructuredOutput(protocol_version_)) server_info["title"] = "flowrag graph retrieval";
  *result = {{"protocolVersion", protocol_version_},
             {"capabilities",
              {{"tools", {{"listChanged", false}}},
               {"resources", {{"subscribe", false}, {"listChanged", false}}}}},
             {"serverInfo", std::move(server_info)},
             {"instructions", kInstructions}};
  return std::nullopt;
}

void McpSession::Notify(const std::string& method) {
  if (method == "notifications/initialized") initialized_ = true;
  // notifications/cancelled: requests are served to completion in order, so
  // by the time it is read the request it names has been answered.
}

}  // namespace flowrag::mcp
