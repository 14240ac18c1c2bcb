// GET /openapi.json: the OpenAPI 3.1 description of the HTTP API. The paths
// and their methods come from the route table (routes.h: every route kind,
// under /v1 and /v1/w/{workspace}); the request and response schemas are
// written in openapi.cc beside them. tests/openapi_test.cc checks the
// description against the handlers: the request fields each handler
// accepts, and the responses of a real server against their schemas.
#ifndef FLOWRAG_SERVER_OPENAPI_H_
#define FLOWRAG_SERVER_OPENAPI_H_

#include <nlohmann/json.hpp>
#include <string_view>

namespace flowrag::server {

// The description as JSON (built once; static storage).
const nlohmann::json& OpenApiDocument();

// OpenApiDocument() serialised.
std::string_view OpenApiJson();

}  // namespace flowrag::server

#endif  // FLOWRAG_SERVER_OPENAPI_H_
