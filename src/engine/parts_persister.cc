#include "engine/parts_persister.h"

namespace flowrag {

PartsPersister::~PartsPersister() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  Flush();
}

void PartsPersister::Schedule(std::shared_ptr<const Snapshot> snapshot) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (pending_ == nullptr) latest_due_ = now + max_wait_;
    pending_ = std::move(snapshot);
    due_ = std::min(now + delay_, latest_due_);
    if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
  }
  cv_.notify_all();
}

void PartsPersister::Flush() {
  std::shared_ptr<const Snapshot> snapshot;
  {
    std::lock_guard<std::mutex> lock(mu_);
    snapshot = std::move(pending_);
    pending_.reset();
  }
  if (snapshot != nullptr) Write(*snapshot);
}

void PartsPersister::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (pending_ == nullptr) {
      cv_.wait(lock);
      continue;
    }
    if (std::chrono::steady_clock::now() < due_) {
      cv_.wait_until(lock, due_);
      continue;
    }
    std::shared_ptr<const Snapshot> snapshot = std::move(pending_);
    pending_.reset();
    lock.unlock();
    Write(*snapshot);
    if (on_published_ != nullptr && snapshot->SegmentPublished()) on_published_(std::move(snapshot));
    snapshot.reset();
    lock.lock();
  }
}

void PartsPersister::Write(const Snapshot& snapshot) {
  // A cache of the store: failing to write it only costs the next open
  // time, so it is reported in the engine's statistics, not as an error.
  Result<size_t> written = snapshot.PersistParts(*store_);
  std::lock_guard<std::mutex> lock(mu_);
  last_error_ = written.ok() ? "" : store_->path() + ": " + written.status().ToString();
}

std::string PartsPersister::LastError() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

}  // namespace flowrag
