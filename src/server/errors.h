// The HTTP API's error shape and the mapping from flowrag Status codes to
// HTTP status codes (doc/http_api.md, "Errors").
//
//   {"error": {"code": "invalid_argument", "message": "...", "field": "top_k"}}
//
// `code` is a stable snake_case name; `field` (optional) names the request
// field that was wrong, e.g. "question", "options", "documents[2].text".
#ifndef FLOWRAG_SERVER_ERRORS_H_
#define FLOWRAG_SERVER_ERRORS_H_

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "flowrag/status.h"

namespace flowrag::server {

struct ApiError {
  int http_status = 500;
  std::string code;  // e.g. "invalid_argument", "not_found", "payload_too_large"
  std::string message;
  std::string field;  // empty: not about one field
};

// InvalidArgument → 400, NotFound → 404, AlreadyExists and FailedPrecondition
// → 409, DeadlineExceeded → 504, Unavailable → 503, Cancelled → 503, others → 500.
int HttpStatusFor(StatusCode code);

// "invalid_argument", "not_found", ... (the StatusCode in snake_case).
std::string ErrorCodeFor(StatusCode code);

// An ApiError for a non-OK status; `field` as given.
ApiError ErrorFromStatus(const Status& status, std::string field = "");

ApiError BadRequest(std::string message, std::string field = "");

// The JSON body of an error response.
nlohmann::json ErrorJson(const ApiError& error);

// Writes bytes of a streamed reply to the client; false once the client is
// gone (the writer should then stop).
using StreamWriter = std::function<bool(std::string_view bytes)>;

struct Reply;

// Writes a streamed reply through `write`. One that fails before its first
// write sets *refused to the error reply to answer instead (the same as
// without streaming: a wrong request is refused before any event).
using StreamFn = std::function<void(const StreamWriter& write, Reply* refused)>;

// What a handler answers: an HTTP status and a JSON body, or a stream.
struct Reply {
  int http_status = 200;
  nlohmann::json body;
  std::string error_code;  // set for errors (metrics)
  // A streamed reply (200, text/event-stream): when set, the server calls it
  // on the worker thread and `body` is unused. The head goes out with its
  // first write, so until then it may still refuse (StreamFn).
  StreamFn stream;
};

Reply ErrorReply(const ApiError& error);
inline Reply OkReply(nlohmann::json body) { return Reply{200, std::move(body), "", nullptr}; }

}  // namespace flowrag::server

#endif  // FLOWRAG_SERVER_ERRORS_H_
