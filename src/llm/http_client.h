// HttpClient: the one way flowrag talks HTTP to model services (embeddings,
// chat completions). A small interface so tests and callers can inject faults,
// and a libcurl implementation for real use.
//
// Error contract: Post() returns a Result<HttpResponse> for every answer the
// server gave, whatever its status code (4xx and 5xx included: interpreting
// them is the caller's job). It returns a non-OK Status only when no complete
// answer arrived:
//   DeadlineExceeded  the connect or total timeout expired;
//   Unavailable       DNS, connect, TLS, send or receive failed, or the
//                     response exceeded max_response_bytes;
//   InvalidArgument   the request itself is unusable (bad URL, bad timeouts);
//   Cancelled         HttpRequest::on_body returned false.
// Every message starts with "POST <url>: " (user:password in the URL is
// redacted) and never contains request headers, so API keys do not leak into
// logs.
//
// Thread-safety: HttpClient implementations must allow concurrent Post()
// calls; the curl client uses one easy handle per call and initialises libcurl
// once per process.
#ifndef FLOWRAG_LLM_HTTP_CLIENT_H_
#define FLOWRAG_LLM_HTTP_CLIENT_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flowrag/status.h"

namespace flowrag {

struct HttpRequest {
  std::string url;   // http:// or https:// only
  std::string body;  // sent as is
  std::string content_type = "application/json";
  // Extra header lines, each "Name: value" (e.g. "Authorization: Bearer ...").
  std::vector<std::string> headers;
  int connect_timeout_ms = 5000;                  // TCP + TLS handshake; must be > 0
  int timeout_ms = 30000;                         // whole transfer including connect; must be > 0
  size_t max_response_bytes = size_t{256} << 20;  // larger bodies fail as Unavailable
  // When set, called with each piece of the body as it arrives (the body is
  // still collected into HttpResponse::body); returning false aborts the
  // transfer and Post() returns Cancelled. For streamed answers (SSE).
  std::function<bool(std::string_view piece)> on_body;
};

struct HttpResponse {
  int status = 0;  // HTTP status code, e.g. 200, 429, 503
  std::string body;
  // Headers of the final response in arrival order; names lower-cased, values
  // with surrounding whitespace trimmed.
  std::vector<std::pair<std::string, std::string>> headers;

  // The value of the first header called `name` (case-insensitive), or nullptr.
  // The pointer is valid while this response is alive and unmodified.
  const std::string* FindHeader(std::string_view name) const;
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;

  // POSTs request.body to request.url and waits for the whole response.
  // Blocks the calling thread for at most about request.timeout_ms.
  virtual Result<HttpResponse> Post(const HttpRequest& request) = 0;
};

// The libcurl-backed client. One instance may be shared by any number of
// threads and owners; it keeps up to 16 idle curl handles so that keep-alive
// connections (and TLS sessions) are reused between calls. Honours the usual
// proxy environment variables (http_proxy, https_proxy, no_proxy) as curl
// does; follows no redirects.
std::shared_ptr<HttpClient> NewCurlHttpClient();

// `url` with any "user:password@" part replaced by "***@", for messages.
std::string RedactUrl(std::string_view url);

}  // namespace flowrag

#endif  // FLOWRAG_LLM_HTTP_CLIENT_H_
