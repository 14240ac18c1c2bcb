// Progress: rate and ETA lines on stderr for long work ("passages/s, ETA").
//
// Prints at most every `interval` seconds and once at Finish(). Disabled
// reporters print nothing. Thread-safety: Advance() may be called from
// several threads.
#ifndef FLOWRAG_COMMON_PROGRESS_H_
#define FLOWRAG_COMMON_PROGRESS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace flowrag {

class Progress {
 public:
  // `total` may be 0 when unknown (no ETA is printed then).
  Progress(std::string label, std::string unit, uint64_t total, bool enabled,
           double interval_seconds = 0.5);

  void Advance(uint64_t n);
  void Finish();
  uint64_t done() const { return done_.load(); }

 private:
  void Print(bool final);

  std::string label_;
  std::string unit_;
  uint64_t total_;
  bool enabled_;
  double interval_;
  std::atomic<uint64_t> done_{0};
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_print_;
  std::mutex mu_;
};

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_PROGRESS_H_
