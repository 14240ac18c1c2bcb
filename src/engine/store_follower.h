// StoreFollower: keeps an engine's snapshot up to date with what other
// processes write to its store (replicated query servers, doc/storage.md
// "Replicas"). A background thread waits on a connection of its own for the
// store's change announcements (PostgreSQL LISTEN; a SQLite store has none,
// so the wait is a poll of `poll` length) and calls `refresh` after each
// announcement and after each wait that timed out; `refresh` compares the
// store's generation with the snapshot's and loads a new snapshot only when
// they differ, so a timed-out wait costs one small query.
//
// A lost connection (or one that cannot be opened) is reopened with
// exponential backoff from 100 ms to 5 s; after each reopening `refresh`
// runs at once, since announcements sent meanwhile were missed. Errors of
// `refresh` are kept in last_error() and retried on the next round.
//
// Staleness bound: the time of one `refresh` plus, on PostgreSQL, the
// notification delivery (measured in doc/storage.md), else `poll`.
//
// Thread-safety: the destructor stops the thread (within one `poll`) and
// joins it; last_error() may be called from any thread.
#ifndef FLOWRAG_ENGINE_STORE_FOLLOWER_H_
#define FLOWRAG_ENGINE_STORE_FOLLOWER_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "flowrag/status.h"
#include "sqldb/connection.h"

namespace flowrag {

class StoreFollower {
 public:
  using Opener = std::function<Result<std::unique_ptr<SqlConnection>>()>;
  using Refresher = std::function<Status()>;

  StoreFollower(Opener open, Refresher refresh, std::chrono::milliseconds poll);
  ~StoreFollower();
  StoreFollower(const StoreFollower&) = delete;
  StoreFollower& operator=(const StoreFollower&) = delete;

  Status last_error() const;

 private:
  void Run();
  // Sleeps `d` unless stopped meanwhile; false when stopped.
  bool SleepUnlessStopped(std::chrono::milliseconds d);
  void Record(Status st);

  Opener open_;
  Refresher refresh_;
  std::chrono::milliseconds poll_;
  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  Status last_error_;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace flowrag

#endif  // FLOWRAG_ENGINE_STORE_FOLLOWER_H_
