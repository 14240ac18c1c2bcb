#include "engine/store_follower.h"

#include <algorithm>

namespace flowrag {

StoreFollower::StoreFollower(Opener open, Refresher refresh, std::chrono::milliseconds poll)
    : open_(std::move(open)), refresh_(std::move(refresh)), poll_(poll) {
  thread_ = std::thread([this] { Run(); });
}

StoreFollower::~StoreFollower() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

Status StoreFollower::last_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

void StoreFollower::Record(Status st) {
  std::lock_guard<std::mutex> lock(mu_);
  last_error_ = std::move(st);
}

bool StoreFollower::SleepUnlessStopped(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !stop_cv_.wait_for(lock, d, [this] { return stop_; });
}

void StoreFollower::Run() {
  constexpr std::chrono::milliseconds kFirstBackoff(100), kMaxBackoff(5000);
  std::chrono::milliseconds backoff = kFirstBackoff;
  std::unique_ptr<SqlConnection> listener;
  while (SleepUnlessStopped(std::chrono::milliseconds(0))) {
    if (listener == nullptr) {
      Result<std::unique_ptr<SqlConnection>> opened = open_();
      if (!opened.ok()) {
        Record(opened.status());
        if (!SleepUnlessStopped(backoff)) return;
        backoff = std::min(backoff * 2, kMaxBackoff);
        continue;
      }
      listener = std::move(*opened);
      backoff = kFirstBackoff;
      Record(refresh_());  // what was announced while nobody listened
      continue;
    }
    // Waits in slices so that a stop is seen within one poll.
    Result<bool> changed = listener->WaitForChange(poll_);
    if (!changed.ok()) {
      Record(changed.status());
      listener.reset();
      continue;
    }
    Record(refresh_());
  }
}

}  // namespace flowrag
