// Progress of long work (an index run's phases, an OpenIE import, an
// evaluation), reported to a callback the caller installs. The library
// writes nothing to stderr itself; a program that wants progress lines
// installs StderrProgress() (the flowrag CLI does unless --quiet).
#ifndef FLOWRAG_PROGRESS_H_
#define FLOWRAG_PROGRESS_H_

#include <cstdint>
#include <functional>
#include <string>

namespace flowrag {

struct ProgressUpdate {
  std::string phase;      // "ingest", "embed", "extract", "embed graph", "import-openie", ...
  std::string unit;       // what `done` counts: "passages", "texts", "records", ...
  uint64_t done = 0;
  uint64_t total = 0;     // 0 when unknown
  double seconds = 0;     // since the phase began
  bool finished = false;  // the phase's last update
};

// Called at most every half second per phase and once when it ends; from
// the thread that did the work (extraction workers included: the callback
// must be thread-safe). Empty: no progress is reported.
using ProgressCallback = std::function<void(const ProgressUpdate&)>;

// "extract: 1200/6119 passages (850 passages/s, ETA 6 s)"; when finished
// "extract: 6119 passages in 7.20 s (850 passages/s)".
std::string ProgressLine(const ProgressUpdate& update);

// A callback that writes ProgressLine()s to stderr, each update over the
// previous one of its phase (carriage return), the last one ending the line.
ProgressCallback StderrProgress();

}  // namespace flowrag

#endif  // FLOWRAG_PROGRESS_H_
