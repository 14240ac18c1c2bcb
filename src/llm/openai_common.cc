#include "llm/openai_common.h"

#include <charconv>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>

namespace flowrag::llm_internal {

using Json = nlohmann::json;

std::string Snippet(std::string_view body, size_t max_bytes) {
  if (body.empty()) return "(empty body)";
  size_t n = std::min(body.size(), max_bytes);
  if (n < body.size()) {
    // Back off continuation bytes (10xxxxxx) so a code point is not split.
    while (n > 0 && (static_cast<unsigned char>(body[n]) & 0xC0) == 0x80) --n;
  }
  std::string out(body.substr(0, n));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  if (n < body.size()) out += "...";
  return out;
}

std::string ErrorDetail(std::string_view body) {
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    auto error = j.find("error");
    if (error != j.end()) {
      if (error->is_object()) {
        auto message = error->find("message");
        if (message != error->end() && message->is_string()) {
          return Snippet(message->get<std::string>(), kServerMessageBytes);
        }
      } else if (error->is_string()) {
        return Snippet(error->get<std::string>(), kServerMessageBytes);
      }
    }
    for (const char* key : {"message", "detail"}) {
      auto it = j.find(key);
      if (it != j.end() && it->is_string()) {
        return Snippet(it->get<std::string>(), kServerMessageBytes);
      }
    }
  }
  return Snippet(body);
}

std::string_view TrimSpaceTab(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<double> RetryAfterMs(const HttpResponse& response) {
  if (const std::string* v = response.FindHeader("retry-after-ms")) {
    std::string_view s = TrimSpaceTab(*v);
    double ms = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), ms);
    if (ec == std::errc() && end == s.data() + s.size() && std::isfinite(ms) && ms >= 0) return ms;
  }
  if (const std::string* v = response.FindHeader("retry-after")) {
    std::string_view s = TrimSpaceTab(*v);
    double seconds = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), seconds);
    if (ec == std::errc() && end == s.data() + s.size() && std::isfinite(seconds) && seconds >= 0) {
      return seconds * 1000.0;
    }
  }
  return std::nullopt;
}

std::string DescribeJson(const Json& j) {
  switch (j.type()) {
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::null:
      return "null";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "a number";
    default:
      return std::string("a ") + j.type_name();
  }
}

bool IsRetryableHttpStatus(int status) { return status == 408 || status == 429 || status >= 500; }

std::string TrimSlashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

std::string PostWhere(std::string_view redacted_url, int http_status) {
  return "POST " + std::string(redacted_url) + ": HTTP " + std::to_string(http_status);
}

HttpRequest JsonPostRequest(const std::string& url, const std::string& body, int connect_timeout_ms,
                            int timeout_ms, const std::string& api_key) {
  HttpRequest request;
  request.url = url;
  request.body = body;
  request.connect_timeout_ms = connect_timeout_ms;
  request.timeout_ms = timeout_ms;
  request.headers.push_back("Accept: application/json");
  if (!api_key.empty()) request.headers.push_back("Authorization: Bearer " + api_key);
  return request;
}

bool CheckHttpResult(const Result<HttpResponse>& result, std::string_view redacted_url,
                     AttemptStatus* attempt) {
  if (!result.ok()) {
    attempt->status = result.status();
    attempt->retryable = result.status().code() == StatusCode::kUnavailable ||
                         result.status().code() == StatusCode::kDeadlineExceeded;
    return false;
  }
  const HttpResponse& response = *result;
  if (response.status >= 200 && response.status < 300) return true;
  attempt->retryable = IsRetryableHttpStatus(response.status);
  if (attempt->retryable) attempt->retry_after_ms = RetryAfterMs(response);
  std::string message =
      PostWhere(redacted_url, response.status) + ": " + ErrorDetail(response.body);
  bool client_error = response.status >= 400 && response.status < 500 && !attempt->retryable;
  attempt->status = client_error ? Status::InvalidArgument(std::move(message))
                                 : Status::Unavailable(std::move(message));
  return false;
}

std::string GaveUpSuffix(int attempt_number) {
  if (attempt_number == 0) return "";
  return " (gave up after " + std::to_string(attempt_number + 1) + " attempts)";
}

void RequestSlots::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return in_use_ < limit_; });
  ++in_use_;
}

void RequestSlots::Release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_use_;
  }
  cv_.notify_one();
}

std::optional<std::string> GetEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

Result<uint64_t> ParseEnvInteger(const std::string& name, const std::string& value, uint64_t min,
                                 uint64_t max, const char* expected) {
  std::string_view s = TrimSpaceTab(value);
  uint64_t out = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || out < min || out > max) {
    return Status::InvalidArgument(name + "=\"" + value + "\": expected " + expected);
  }
  return out;
}

Status CheckOption(bool ok, const char* options_type, const char* field, const std::string& got,
                   const char* expected) {
  if (ok) return Status::Ok();
  return Status::InvalidArgument(std::string(options_type) + "." + field + ": expected " +
                                 expected + ", got " + got);
}

}  // namespace flowrag::llm_internal
