// WriterLock: the exclusive, cross-process lock that serialises the writers
// of one store. Two `flowrag index` runs (or a server and an index run) on
// the same store take turns: the second waits for the first to finish its
// run, then finds the first one's documents stored (content-hash no-ops),
// so concurrent runs give the sequential result.
//
// The lock is flock(2) on "<store>-lock", a file created beside the store
// (as SQLite's own -wal and -shm are); it holds no data and is never read.
// flock locks belong to the open file description, so two engines of one
// process exclude each other too, and the kernel releases the lock when
// the holder dies (kill -9 included): a crashed writer never blocks a rerun.
// Not the store file itself: closing any descriptor of a SQLite file drops
// the process's POSIX locks on it.
//
// Thread-safety: one object per holder; moving transfers the lock.
#ifndef FLOWRAG_STORAGE_WRITER_LOCK_H_
#define FLOWRAG_STORAGE_WRITER_LOCK_H_

#include <chrono>
#include <string>

#include "flowrag/status.h"

namespace flowrag {

class WriterLock {
 public:
  // Blocks until this caller holds the writer lock of the store at
  // `store_path`, polling every 20 ms. DeadlineExceeded after `wait` naming
  // the store; IoError when the lock file cannot be created or locked. A
  // path naming no file (empty, ":memory:", a "file:" URI) needs no lock:
  // the object returned holds none.
  static Result<WriterLock> Acquire(const std::string& store_path,
                                    std::chrono::milliseconds wait);

  WriterLock() = default;
  WriterLock(WriterLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  WriterLock& operator=(WriterLock&& other) noexcept;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  ~WriterLock();

  bool held() const { return fd_ >= 0; }

 private:
  explicit WriterLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace flowrag

#endif  // FLOWRAG_STORAGE_WRITER_LOCK_H_
