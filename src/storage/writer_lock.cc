#include "storage/writer_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "sqldb/postgres_connection.h"
#include "sqldb/postgres_url.h"

namespace flowrag {
namespace {

bool NamesNoFile(const std::string& path) {
  return path.empty() || path == ":memory:" || path.rfind("file:", 0) == 0;
}

}  // namespace

Result<WriterLock> WriterLock::Acquire(const std::string& store_path,
                                       std::chrono::milliseconds wait) {
  if (NamesNoFile(store_path)) return WriterLock();
  if (IsPostgresLocation(store_path)) return AcquirePostgres(store_path, wait);
  const std::string lock_path = store_path + "-lock";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IoError(lock_path +
                           ": cannot create the store's writer lock: " + std::strerror(errno));
  }
  WriterLock lock(fd);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      return Status::IoError(lock_path + ": cannot lock: " + std::strerror(errno));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::DeadlineExceeded(store_path + ": another writer has held the store for " +
                                      std::to_string(wait.count() / 1000) +
                                      " s (a running index or server); try again later");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return lock;
}

Result<WriterLock> WriterLock::AcquirePostgres(const std::string& url,
                                               std::chrono::milliseconds wait) {
  FLOWRAG_ASSIGN_OR_RETURN(PostgresUrl parsed, ParsePostgresUrl(url));
  SqlConnectionOptions options;
  options.create_if_missing = false;
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<SqlConnection> session,
                           OpenSqlConnection(url, options));
  FLOWRAG_ASSIGN_OR_RETURN(Statement try_lock,
                           session->Prepare("SELECT pg_try_advisory_lock(?)"));
  const int64_t key = WorkspaceLockKey("writers of " + parsed.workspace);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, try_lock.Bind(1, key).Step());
    const bool locked = row && try_lock.Int(0) != 0;
    try_lock.Reset();
    if (locked) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::DeadlineExceeded(session->name() +
                                      ": another writer has held the store for " +
                                      std::to_string(wait.count() / 1000) +
                                      " s (a running index or server); try again later");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  WriterLock lock;
  lock.session_ = std::move(session);
  return lock;
}

WriterLock& WriterLock::operator=(WriterLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);  // closing releases the flock
    fd_ = other.fd_;
    other.fd_ = -1;
    session_ = std::move(other.session_);  // closing the session releases its lock
  }
  return *this;
}

WriterLock::~WriterLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace flowrag
