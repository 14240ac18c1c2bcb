#include "engine/parts_persister.h"

#include <cstdio>

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
    pending_ = std::move(snapshot);
    due_ = std::chrono::steady_clock::now() + delay_;
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
  if (snapshot != nullptr) Write(*store_, *snapshot);
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
    Write(*store_, *snapshot);
    lock.lock();
  }
}

void PartsPersister::Write(SnapshotSource& store, const Snapshot& snapshot) {
  // A cache of the store: failing to write it only costs the next open time.
  Result<size_t> written = snapshot.PersistParts(store);
  if (!written.ok()) {
    std::fprintf(stderr, "flowrag: %s: snapshot parts not persisted: %s\n", store.path().c_str(),
                 written.status().ToString().c_str());
  }
}

}  // namespace flowrag
