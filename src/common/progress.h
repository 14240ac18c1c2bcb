// Progress: reports the rate of long work to a ProgressCallback
// (include/flowrag/progress.h), at most every `interval` seconds and once
// at Finish(). Without a callback it only counts.
//
// Thread-safety: Advance() may be called from several threads; the
// callback is called under the reporter's lock, one update at a time.
#ifndef FLOWRAG_COMMON_PROGRESS_H_
#define FLOWRAG_COMMON_PROGRESS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "flowrag/progress.h"

namespace flowrag {

class Progress {
 public:
  // `total` may be 0 when unknown. `sink` is copied; empty: nothing reported.
  Progress(std::string phase, std::string unit, uint64_t total, ProgressCallback sink,
           double interval_seconds = 0.5);

  void Advance(uint64_t n);
  void Finish();
  uint64_t done() const { return done_.load(); }

 private:
  void Report(bool finished);  // REQUIRES: mu_ held

  std::string phase_;
  std::string unit_;
  uint64_t total_;
  ProgressCallback sink_;
  double interval_;
  std::atomic<uint64_t> done_{0};
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_report_;
  std::mutex mu_;
};

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_PROGRESS_H_
