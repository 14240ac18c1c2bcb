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
// A PostgreSQL store (a `postgresql://` location) is locked with a
// session-level advisory lock, keyed by its workspace, held by a
// connection of the lock's own: the server releases it when that
// connection ends, the holder's death included. (Its key differs from the
// transaction lock of SqlConnection::BeginWrite, which the holder's own
// store connection takes for every write.)
//
// Thread-safety: one object per holder; moving transfers the lock.
#ifndef FLOWRAG_STORAGE_WRITER_LOCK_H_
#define FLOWRAG_STORAGE_WRITER_LOCK_H_

#include <chrono>
#include <memory>
#include <string>

#include "flowrag/status.h"
#include "sqldb/connection.h"

namespace flowrag {

class WriterLock {
 public:
  // Blocks until this caller holds the writer lock of the store at
  // `store_path` (a file path or a PostgreSQL URL, password included),
  // polling every 20 ms. DeadlineExceeded after `wait` naming the store;
  // IoError when the lock file cannot be created or locked; the driver's
  // errors for a server that cannot be reached. A path naming no file
  // (empty, ":memory:", a "file:" URI) needs no lock: the object returned
  // holds none.
  static Result<WriterLock> Acquire(const std::string& store_path,
                                    std::chrono::milliseconds wait);

  WriterLock() = default;
  WriterLock(WriterLock&& other) noexcept
      : fd_(other.fd_), session_(std::move(other.session_)) {
    other.fd_ = -1;
  }
  WriterLock& operator=(WriterLock&& other) noexcept;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  ~WriterLock();

  bool held() const { return fd_ >= 0 || session_ != nullptr; }

 private:
  explicit WriterLock(int fd) : fd_(fd) {}
  static Result<WriterLock> AcquirePostgres(const std::string& url,
                                            std::chrono::milliseconds wait);
  int fd_ = -1;
  std::unique_ptr<SqlConnection> session_;  // PostgreSQL: holds the advisory lock
};

}  // namespace flowrag

#endif  // FLOWRAG_STORAGE_WRITER_LOCK_H_
