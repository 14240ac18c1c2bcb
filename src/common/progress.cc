#include "common/progress.h"

#include <cstdio>

namespace flowrag {

Progress::Progress(std::string label, std::string unit, uint64_t total, bool enabled,
                   double interval_seconds)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      enabled_(enabled),
      interval_(interval_seconds),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

void Progress::Advance(uint64_t n) {
  done_ += n;
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  if (std::chrono::duration<double>(now - last_print_).count() < interval_) return;
  last_print_ = now;
  Print(false);
}

void Progress::Finish() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  Print(true);
}

void Progress::Print(bool final) {
  double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  uint64_t done = done_.load();
  double rate = elapsed > 0 ? done / elapsed : 0.0;
  if (final) {
    std::fprintf(stderr, "\r%s: %llu %s in %.2f s (%.0f %s/s)\n", label_.c_str(),
                 static_cast<unsigned long long>(done), unit_.c_str(), elapsed, rate,
                 unit_.c_str());
  } else if (total_ > 0 && rate > 0) {
    double eta = (total_ > done ? total_ - done : 0) / rate;
    std::fprintf(stderr, "\r%s: %llu/%llu %s (%.0f %s/s, ETA %.0f s)   ", label_.c_str(),
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_),
                 unit_.c_str(), rate, unit_.c_str(), eta);
  } else {
    std::fprintf(stderr, "\r%s: %llu %s (%.0f %s/s)   ", label_.c_str(),
                 static_cast<unsigned long long>(done), unit_.c_str(), rate, unit_.c_str());
  }
  std::fflush(stderr);
}

}  // namespace flowrag
