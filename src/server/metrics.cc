#include "server/metrics.h"

#include <cstdio>

namespace flowrag::server {

Metrics::Metrics() : started_(std::chrono::steady_clock::now()) {}

void Metrics::RequestFinished(std::string_view route, std::string_view method, int status,
                              std::string_view workspace, double seconds,
                              std::string_view error_code, bool was_started) {
  if (was_started) in_flight_.fetch_sub(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[RequestKey(std::string(route), std::string(method), status, std::string(workspace))];
  if (!error_code.empty()) ++errors_[{std::string(route), std::string(error_code)}];
  if (seconds < 0) return;
  auto it = durations_.find(route);
  if (it == durations_.end()) it = durations_.emplace(std::string(route), Histogram{}).first;
  Histogram& h = it->second;
  size_t b = 0;
  while (b < kBuckets.size() && seconds > kBuckets[b]) ++b;
  if (b < kBuckets.size()) ++h.buckets[b];
  ++h.count;
  h.sum += seconds;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

}  // namespace

std::string Metrics::Render() const {
  std::string out;
  out +=
      "# HELP flowrag_http_requests_total HTTP requests answered, by route, method, status and "
      "workspace.\n# TYPE flowrag_http_requests_total counter\n";
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, n] : requests_) {
    const auto& [route, method, status, workspace] = key;
    out += "flowrag_http_requests_total{route=\"" + EscapeLabelValue(route) + "\",method=\"" +
           EscapeLabelValue(method) + "\",status=\"" + std::to_string(status) + "\",workspace=\"" +
           EscapeLabelValue(workspace) + "\"} " + std::to_string(n) + "\n";
  }
  out +=
      "# HELP flowrag_http_request_duration_seconds Time from the request line to the handler's "
      "answer, by route.\n# TYPE flowrag_http_request_duration_seconds histogram\n";
  for (const auto& [route, h] : durations_) {
    const std::string r = EscapeLabelValue(route);
    uint64_t cumulative = 0;
    for (size_t b = 0; b < kBuckets.size(); ++b) {
      cumulative += h.buckets[b];
      out += "flowrag_http_request_duration_seconds_bucket{route=\"" + r + "\",le=\"" +
             Number(kBuckets[b]) + "\"} " + std::to_string(cumulative) + "\n";
    }
    out += "flowrag_http_request_duration_seconds_bucket{route=\"" + r + "\",le=\"+Inf\"} " +
           std::to_string(h.count) + "\n";
    out += "flowrag_http_request_duration_seconds_sum{route=\"" + r + "\"} " + Number(h.sum) + "\n";
    out += "flowrag_http_request_duration_seconds_count{route=\"" + r + "\"} " +
           std::to_string(h.count) + "\n";
  }
  out +=
      "# HELP flowrag_http_errors_total Error responses, by route and error code.\n"
      "# TYPE flowrag_http_errors_total counter\n";
  for (const auto& [key, n] : errors_) {
    out += "flowrag_http_errors_total{route=\"" + EscapeLabelValue(key.first) + "\",code=\"" +
           EscapeLabelValue(key.second) + "\"} " + std::to_string(n) + "\n";
  }
  out +=
      "# HELP flowrag_http_requests_in_flight Requests being served now.\n"
      "# TYPE flowrag_http_requests_in_flight gauge\n"
      "flowrag_http_requests_in_flight " +
      std::to_string(in_flight_.load(std::memory_order_relaxed)) + "\n";
  const double uptime =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  out +=
      "# HELP flowrag_server_uptime_seconds Seconds since the server was created.\n"
      "# TYPE flowrag_server_uptime_seconds gauge\n"
      "flowrag_server_uptime_seconds " +
      Number(uptime) + "\n";
  return out;
}

}  // namespace flowrag::server
