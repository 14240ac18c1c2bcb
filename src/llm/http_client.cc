#include "llm/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace flowrag {
namespace {

// Idle easy handles kept for reuse (each keeps its connections alive).
constexpr size_t kMaxIdleHandles = 16;

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// libcurl wants curl_global_init() once per process before any other call,
// and it is not itself thread-safe on every platform.
const Status& GlobalInitStatus() {
  static std::once_flag once;
  static Status status;
  std::call_once(once, [] {
    CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
      status = Status::Internal(std::string("curl_global_init failed: ") + curl_easy_strerror(rc));
    }
  });
  return status;
}

struct CurlHandleDeleter {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
using CurlHandle = std::unique_ptr<CURL, CurlHandleDeleter>;

struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

// State the curl callbacks write into during one transfer.
struct Transfer {
  HttpResponse response;
  size_t max_bytes = 0;
  bool too_large = false;
  const std::function<bool(std::string_view)>* on_body = nullptr;  // HttpRequest::on_body
  bool cancelled = false;
};

size_t WriteBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * count;
  if (t->response.body.size() + n > t->max_bytes) {
    t->too_large = true;
    return 0;  // makes curl abort with CURLE_WRITE_ERROR
  }
  t->response.body.append(data, n);
  if (t->on_body != nullptr && *t->on_body && !(*t->on_body)(std::string_view(data, n))) {
    t->cancelled = true;
    return 0;
  }
  return n;
}

size_t WriteHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * count;
  std::string_view line(data, n);
  if (StartsWithNoCase(line, "HTTP/")) {
    // A new response starts (e.g. after "100 Continue"): keep only the last.
    t->response.headers.clear();
    return n;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;  // blank line or folded junk
  std::string_view name = Trim(line.substr(0, colon));
  if (name.empty()) return n;
  t->response.headers.emplace_back(ToLower(name), std::string(Trim(line.substr(colon + 1))));
  return n;
}

class CurlHttpClient : public HttpClient {
 public:
  ~CurlHttpClient() override = default;

  Result<HttpResponse> Post(const HttpRequest& request) override {
    const std::string where = "POST " + RedactUrl(request.url) + ": ";
    FLOWRAG_RETURN_IF_ERROR(GlobalInitStatus());
    if (!StartsWithNoCase(request.url, "http://") && !StartsWithNoCase(request.url, "https://")) {
      return Status::InvalidArgument(where + "expected an http:// or https:// URL");
    }
    if (request.connect_timeout_ms <= 0 || request.timeout_ms <= 0) {
      return Status::InvalidArgument(where + "timeouts must be positive (connect " +
                                     std::to_string(request.connect_timeout_ms) + " ms, total " +
                                     std::to_string(request.timeout_ms) + " ms)");
    }

    CurlHandle handle = AcquireHandle();
    if (handle == nullptr) return Status::Internal(where + "curl_easy_init failed");
    CURL* h = handle.get();

    Slist headers;
    auto add_header = [&headers](const std::string& line) {
      curl_slist* next = curl_slist_append(headers.get(), line.c_str());
      if (next == nullptr) return false;
      headers.release();
      headers.reset(next);
      return true;
    };
    bool headers_ok = add_header("Content-Type: " + request.content_type) &&
                      add_header("Expect:");  // no "100-continue" round trip
    for (const std::string& line : request.headers) headers_ok = headers_ok && add_header(line);
    if (!headers_ok) return Status::Internal(where + "out of memory building headers");

    Transfer transfer;
    transfer.max_bytes = request.max_response_bytes;
    transfer.on_body = &request.on_body;
    char error_buffer[CURL_ERROR_SIZE] = {0};

    curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85.0
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(h, CURLOPT_PROTOCOLS, CURLPROTO_HTTP | CURLPROTO_HTTPS);
#endif
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // required for timeouts in threads
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout_ms));
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout_ms));
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode
    curl_easy_setopt(h, CURLOPT_USERAGENT, "flowrag/0.1");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &WriteBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &WriteHeader);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &transfer);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);

    CURLcode rc = curl_easy_perform(h);
    long status_code = 0;
    if (rc == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status_code);
    // Detach everything that points into this stack frame before pooling.
    curl_easy_reset(h);
    ReleaseHandle(std::move(handle));

    if (rc != CURLE_OK) {
      std::string detail = curl_easy_strerror(rc);
      if (error_buffer[0] != '\0') {
        std::string_view extra = Trim(error_buffer);
        detail += " (";
        detail += extra;
        detail += ")";
      }
      if (rc == CURLE_OPERATION_TIMEDOUT) {
        return Status::DeadlineExceeded(
            where + "timed out (connect timeout " + std::to_string(request.connect_timeout_ms) +
            " ms, total timeout " + std::to_string(request.timeout_ms) + " ms): " + detail);
      }
      if (rc == CURLE_WRITE_ERROR && transfer.cancelled) {
        return Status::Cancelled(where + "the reader of the streamed body stopped");
      }
      if (rc == CURLE_WRITE_ERROR && transfer.too_large) {
        return Status::Unavailable(where + "response larger than " +
                                   std::to_string(request.max_response_bytes) + " bytes");
      }
      if (rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL) {
        return Status::InvalidArgument(where + detail);
      }
      return Status::Unavailable(where + detail);
    }
    transfer.response.status = static_cast<int>(status_code);
    return std::move(transfer.response);
  }

 private:
  CurlHandle AcquireHandle() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        CurlHandle h = std::move(idle_.back());
        idle_.pop_back();
        return h;
      }
    }
    return CurlHandle(curl_easy_init());
  }

  void ReleaseHandle(CurlHandle h) {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.size() < kMaxIdleHandles) idle_.push_back(std::move(h));
  }

  std::mutex mu_;
  std::vector<CurlHandle> idle_;  // reset handles whose connections stay open
};

}  // namespace

const std::string* HttpResponse::FindHeader(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() && StartsWithNoCase(key, name)) return &value;
  }
  return nullptr;
}

std::shared_ptr<HttpClient> NewCurlHttpClient() { return std::make_shared<CurlHttpClient>(); }

std::string RedactUrl(std::string_view url) {
  size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  size_t authority_start = scheme + 3;
  size_t authority_end = url.find_first_of("/?#", authority_start);
  if (authority_end == std::string_view::npos) authority_end = url.size();
  std::string_view authority = url.substr(authority_start, authority_end - authority_start);
  size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  std::string out(url.substr(0, authority_start));
  out += "***@";
  out += url.substr(authority_start + at + 1);
  return out;
}

}  // namespace flowrag
