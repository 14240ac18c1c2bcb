// The store's documents as MCP resources: flowrag://documents/{id}, text/plain,
// named by their title. Listing pages through Engine::ListDocuments; reading
// returns the document's whole text (Engine::GetDocument).
#ifndef FLOWRAG_MCP_RESOURCES_H_
#define FLOWRAG_MCP_RESOURCES_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "flowrag/engine.h"
#include "mcp/jsonrpc.h"

namespace flowrag::mcp {

inline constexpr std::string_view kDocumentUriPrefix = "flowrag://documents/";

// The URI of a document: the prefix, then the id with every byte other than
// A-Z a-z 0-9 - . _ ~ / percent-encoded ("people/ada.md" stays readable).
std::string DocumentUri(std::string_view document_id);

// The document id of a URI of DocumentUri's form (any byte may be
// percent-encoded); nullopt for another scheme or path, an empty id or a
// malformed escape.
std::optional<std::string> DocumentIdOfUri(std::string_view uri);

// resources/list: {resources: [{uri, name, title?, mimeType, size}],
// nextCursor?}, `page_size` per page. kInvalidParams naming "cursor".
std::optional<RpcError> ListResources(const Engine& engine, const nlohmann::json& params,
                                      size_t page_size, std::string_view protocol_version,
                                      nlohmann::json* result);

// resources/read: {contents: [{uri, mimeType, text}]}. kInvalidParams naming
// "uri" for a malformed one, kResourceNotFound for an unknown document.
std::optional<RpcError> ReadResource(const Engine& engine, const nlohmann::json& params,
                                     nlohmann::json* result);

// resources/templates/list: the document URI template.
nlohmann::json ResourceTemplates();

}  // namespace flowrag::mcp

#endif  // FLOWRAG_MCP_RESOURCES_H_
