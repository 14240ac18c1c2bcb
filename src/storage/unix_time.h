// Seconds since the Unix epoch: the timestamps the store's tables record.
#ifndef FLOWRAG_STORAGE_UNIX_TIME_H_
#define FLOWRAG_STORAGE_UNIX_TIME_H_

#include <chrono>
#include <cstdint>

namespace flowrag {

inline int64_t UnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace flowrag

#endif  // FLOWRAG_STORAGE_UNIX_TIME_H_
