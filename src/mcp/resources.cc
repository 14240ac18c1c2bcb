#include "mcp/resources.h"

#include <cctype>

#include "common/encoding.h"
#include "mcp/protocol.h"

namespace flowrag::mcp {
namespace {

constexpr char kTextPlain[] = "text/plain";

bool Unreserved(unsigned char c) {
  return std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<RpcError> ReadUri(const nlohmann::json& params, std::string* uri) {
  auto it = params.find("uri");
  if (it == params.end() || !it->is_string()) {
    return InvalidParams("invalid params: \"uri\": required string is missing", "uri");
  }
  *uri = it->get<std::string>();
  return std::nullopt;
}

}  // namespace

std::string DocumentUri(std::string_view document_id) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri(kDocumentUriPrefix);
  for (char ch : document_id) {
    const auto c = static_cast<unsigned char>(ch);
    if (Unreserved(c)) {
      uri += ch;
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  return uri;
}

std::optional<std::string> DocumentIdOfUri(std::string_view uri) {
  if (uri.substr(0, kDocumentUriPrefix.size()) != kDocumentUriPrefix) return std::nullopt;
  uri.remove_prefix(kDocumentUriPrefix.size());
  std::string id;
  for (size_t i = 0; i < uri.size(); ++i) {
    if (uri[i] != '%') {
      id += uri[i];
      continue;
    }
    const int hi = i + 1 < uri.size() ? HexValue(uri[i + 1]) : -1;
    const int lo = i + 2 < uri.size() ? HexValue(uri[i + 2]) : -1;
    if (hi < 0 || lo < 0) return std::nullopt;
    id += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  if (id.empty()) return std::nullopt;
  return id;
}

std::optional<RpcError> ListResources(const Engine& engine, const nlohmann::json& params,
                                      size_t page_size, std::string_view protocol_version,
                                      nlohmann::json* result) {
  std::string cursor;
  if (auto it = params.find("cursor"); it != params.end() && !it->is_null()) {
    if (!it->is_string()) {
      return InvalidParams("invalid params: \"cursor\": expected a string from nextCursor",
                           "cursor");
    }
    cursor = it->get<std::string>();
  }
  Result<DocumentPage> page = engine.ListDocuments(cursor, page_size);
  if (!page.ok()) {
    if (page.status().code() == StatusCode::kInvalidArgument) {
      return InvalidParams("invalid params: " + page.status().message(), "cursor");
    }
    return RpcError{kInternalError, page.status().ToString(), nullptr};
  }
  nlohmann::json resources = nlohmann::json::array();
  for (const StoredDocument& d : page->documents) {
    nlohmann::json r = {{"uri", DocumentUri(d.id)},
                        {"name", d.title.empty() ? d.id : d.title},
                        {"mimeType", kTextPlain},
                        {"size", d.bytes}};
    if (HasStructuredOutput(protocol_version)) r["title"] = d.title.empty() ? d.id : d.title;
    r["description"] = "flowrag document \"" + d.id + "\"";
    resources.push_back(std::move(r));
  }
  *result = {{"resources", std::move(resources)}};
  if (!page->next_cursor.empty()) (*result)["nextCursor"] = page->next_cursor;
  return std::nullopt;
}

std::optional<RpcError> ReadResource(const Engine& engine, const nlohmann::json& params,
                                     nlohmann::json* result) {
  std::string uri;
  if (auto e = ReadUri(params, &uri)) return e;
  const std::optional<std::string> id = DocumentIdOfUri(uri);
  if (!id) {
    return InvalidParams("invalid params: \"uri\": expected " + std::string(kDocumentUriPrefix) +
                             "{id} (id percent-encoded), got \"" + EscapeForMessage(uri, 80) + "\"",
                         "uri");
  }
  Result<StoredDocument> doc = engine.GetDocument(*id);
  if (!doc.ok()) {
    if (doc.status().code() == StatusCode::kNotFound) {
      return RpcError{kResourceNotFound,
                      "resource not found: " + doc.status().message(),
                      {{"uri", EscapeForMessage(uri, 80)}}};  // the client's, cut
    }
    return RpcError{kInternalError, doc.status().ToString(), nullptr};
  }
  *result = {{"contents", nlohmann::json::array({{{"uri", DocumentUri(doc->id)},
                                                  {"mimeType", kTextPlain},
                                                  {"text", doc->text}}})}};
  return std::nullopt;
}

nlohmann::json ResourceTemplates() {
  std::string uri_template(kDocumentUriPrefix);
  uri_template += "{id}";
  return {{"resourceTemplates",
           nlohmann::json::array(
               {{{"uriTemplate", uri_template},
                 {"name", "document"},
                 {"title", "flowrag document"},
                 {"description", "A stored document's whole text, by its id (percent-encoded)"},
                 {"mimeType", kTextPlain}}})}};
}

}  // namespace flowrag::mcp
