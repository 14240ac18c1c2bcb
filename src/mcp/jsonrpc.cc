#include "mcp/jsonrpc.h"

#include "common/encoding.h"
#include "common/json_errors.h"

namespace flowrag::mcp {
namespace {

// The deepest nesting of objects and arrays in `text`, outside strings,
// stopping once it passes `limit`. Linear; no recursion.
size_t NestingDepth(std::string_view text, size_t limit) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

bool ValidId(const nlohmann::json& id) {
  return (id.is_string() && id.get_ref<const std::string&>().size() <= kMaxRequestIdBytes) ||
         id.is_number();
}

}  // namespace

RpcError InvalidParams(std::string message, std::string field) {
  RpcError e{kInvalidParams, std::move(message), nullptr};
  if (!field.empty()) e.data = {{"field", std::move(field)}};
  return e;
}

std::optional<RpcError> ParseJson(std::string_view text, nlohmann::json* out) {
  if (NestingDepth(text, kMaxNesting) > kMaxNesting) {
    return RpcError{
        kInvalidRequest,
        "message nests objects and arrays deeper than " + std::to_string(kMaxNesting) + " levels",
        nullptr};
  }
  try {
    *out = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    return RpcError{kParseError,
                    "parse error: not valid JSON (byte " + std::to_string(e.byte) +
                        "): " + CleanJsonError(e.what(), text.find('\n') == std::string_view::npos),
                    nullptr};
  } catch (const nlohmann::json::exception& e) {  // a number beyond a double (1e400)
    return RpcError{kParseError, "parse error: " + CleanJsonError(e.what(), true), nullptr};
  }
  return std::nullopt;
}

Message Classify(const nlohmann::json& value) {
  Message m;
  auto invalid = [&m](std::string why) {
    m.kind = Message::Kind::kInvalid;
    m.error = RpcError{kInvalidRequest, "invalid request: " + std::move(why), nullptr};
    return m;
  };
  if (!value.is_object())
    return invalid("expected a JSON-RPC object, got " + DescribeJsonType(value));
  auto id = value.find("id");
  const bool has_id = id != value.end();
  if (has_id && ValidId(*id)) m.id = *id;
  auto version = value.find("jsonrpc");
  if (version == value.end() || *version != "2.0") {
    return invalid("\"jsonrpc\" must be \"2.0\"");
  }
  auto method = value.find("method");
  if (method == value.end()) {
    // A response to a request of ours (we send none) is read and dropped.
    if (has_id && (value.contains("result") || value.contains("error"))) {
      m.kind = Message::Kind::kResponse;
      return m;
    }
    return invalid("missing \"method\"");
  }
  if (!method->is_string()) {
    return invalid("\"method\" must be a string, got " + DescribeJsonType(*method));
  }
  if (has_id && !ValidId(*id)) {
    return invalid(id->is_string()
                       ? "\"id\": a string of more than " + std::to_string(kMaxRequestIdBytes) +
                             " bytes"
                       : "\"id\" must be a string or a number, got " + DescribeJsonType(*id));
  }
  m.method = method->get<std::string>();
  m.kind = has_id ? Message::Kind::kRequest : Message::Kind::kNotification;
  m.params = nlohmann::json::object();
  if (auto params = value.find("params"); params != value.end() && !params->is_null()) {
    if (!params->is_object()) {
      m.kind = has_id ? Message::Kind::kInvalid : Message::Kind::kNotification;
      m.error = InvalidParams(
          "invalid params: \"params\" must be an object, got " + DescribeJsonType(*params),
          "params");
      if (!has_id) m.params = nlohmann::json::object();
      return m;
    }
    m.params = *params;
  }
  return m;
}

nlohmann::json ResultResponse(const nlohmann::json& id, nlohmann::json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

nlohmann::json ErrorResponse(const nlohmann::json& id, const RpcError& error) {
  nlohmann::json e = {{"code", error.code}, {"message", error.message}};
  if (!error.data.is_null()) e["data"] = error.data;
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(e)}};
}

std::string Serialize(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace flowrag::mcp
