#include "common/progress.h"

#include <cstdio>

namespace flowrag {

std::string ProgressLine(const ProgressUpdate& u) {
  const double rate = u.seconds > 0 ? static_cast<double>(u.done) / u.seconds : 0.0;
  char line[512];
  if (u.finished) {
    std::snprintf(line, sizeof(line), "%s: %llu %s in %.2f s (%.0f %s/s)", u.phase.c_str(),
                  static_cast<unsigned long long>(u.done), u.unit.c_str(), u.seconds, rate,
                  u.unit.c_str());
  } else if (u.total > 0 && rate > 0) {
    const double eta = static_cast<double>(u.total > u.done ? u.total - u.done : 0) / rate;
    std::snprintf(line, sizeof(line), "%s: %llu/%llu %s (%.0f %s/s, ETA %.0f s)", u.phase.c_str(),
                  static_cast<unsigned long long>(u.done), static_cast<unsigned long long>(u.total),
                  u.unit.c_str(), rate, u.unit.c_str(), eta);
  } else {
    std::snprintf(line, sizeof(line), "%s: %llu %s (%.0f %s/s)", u.phase.c_str(),
                  static_cast<unsigned long long>(u.done), u.unit.c_str(), rate, u.unit.c_str());
  }
  return line;
}

ProgressCallback StderrProgress() {
  return [](const ProgressUpdate& u) {
    std::fprintf(stderr, "\r%s%s", ProgressLine(u).c_str(), u.finished ? "\n" : "   ");
    std::fflush(stderr);
  };
}

Progress::Progress(std::string phase, std::string unit, uint64_t total, ProgressCallback sink,
                   double interval_seconds)
    : phase_(std::move(phase)),
      unit_(std::move(unit)),
      total_(total),
      sink_(std::move(sink)),
      interval_(interval_seconds),
      start_(std::chrono::steady_clock::now()),
      last_report_(start_) {}

void Progress::Advance(uint64_t n) {
  done_ += n;
  if (!sink_) return;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  if (std::chrono::duration<double>(now - last_report_).count() < interval_) return;
  last_report_ = now;
  Report(false);
}

void Progress::Finish() {
  if (!sink_) return;
  std::lock_guard<std::mutex> lock(mu_);
  Report(true);
}

void Progress::Report(bool finished) {
  ProgressUpdate u;
  u.phase = phase_;
  u.unit = unit_;
  u.done = done_.load();
  u.total = total_;
  u.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  u.finished = finished;
  sink_(u);
}

}  // namespace flowrag
