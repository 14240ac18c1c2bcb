// Request metrics of the HTTP server in the Prometheus text exposition format
// (version 0.0.4). Names and labels are documented in doc/http_api.md:
//
//   flowrag_http_requests_total{route,method,status,workspace}   counter
//   flowrag_http_request_duration_seconds{route}                histogram
//   flowrag_http_errors_total{route,code}                        counter
//   flowrag_http_requests_in_flight                              gauge
//   flowrag_server_uptime_seconds                                gauge
//
// Thread-safety: every method may be called from any thread.
// Memory: one series per (route, method, status, workspace) seen; routes and
// workspaces are bounded sets, so the series are too.
#ifndef FLOWRAG_SERVER_METRICS_H_
#define FLOWRAG_SERVER_METRICS_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

namespace flowrag::server {

class Metrics {
 public:
  Metrics();

  void RequestStarted() { in_flight_.fetch_add(1, std::memory_order_relaxed); }

  // Records a finished request. `seconds` < 0: the duration is unknown (the
  // request failed before it was routed) and only the counters move.
  // `error_code` empty: not an API error.
  void RequestFinished(std::string_view route, std::string_view method, int status,
                       std::string_view workspace, double seconds, std::string_view error_code,
                       bool was_started);

  // The whole exposition, "# HELP"/"# TYPE" lines included.
  std::string Render() const;

  // Upper bounds of the latency buckets, seconds (+Inf implied).
  static constexpr std::array<double, 14> kBuckets = {
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0};

 private:
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> buckets{};  // non-cumulative counts
    uint64_t count = 0;
    double sum = 0.0;
  };
  using RequestKey = std::tuple<std::string, std::string, int, std::string>;

  const std::chrono::steady_clock::time_point started_;
  std::atomic<int64_t> in_flight_{0};
  mutable std::mutex mu_;
  std::map<RequestKey, uint64_t> requests_;
  std::map<std::string, Histogram, std::less<>> durations_;
  std::map<std::pair<std::string, std::string>, uint64_t> errors_;
};

// Escapes a label value (backslash, double quote, newline).
std::string EscapeLabelValue(std::string_view value);

}  // namespace flowrag::server

#endif  // FLOWRAG_SERVER_METRICS_H_
