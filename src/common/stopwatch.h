// Time elapsed on the steady clock: the phase timings reports carry (seconds)
// and the per-step times of a query (milliseconds).
#ifndef FLOWRAG_COMMON_STOPWATCH_H_
#define FLOWRAG_COMMON_STOPWATCH_H_

#include <chrono>

namespace flowrag {

using SteadyClock = std::chrono::steady_clock;

inline double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// Milliseconds elapsed on the steady clock: the per-step times queries report.
inline double MillisSince(SteadyClock::time_point start) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
}

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_STOPWATCH_H_
