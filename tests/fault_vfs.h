// A SQLite VFS for tests that wraps the default one and injects faults at
// the n-th write to any file (the database, its WAL or journal): the process
// exits there (a crash, as kill -9 at that point), or the write fails with
// an I/O error or disk full. The LevelDB-Env idea at the SQLite layer: the
// engine runs unchanged, every one of its writes is a fault point.
//
// Install() makes it the process's default VFS; use it in a forked child
// (a crash ends the process).
#ifndef FLOWRAG_TESTS_FAULT_VFS_H_
#define FLOWRAG_TESTS_FAULT_VFS_H_

#include <sqlite3.h>

#include <atomic>
#include <cstdint>

namespace flowrag::testing {

enum class Fault { kNone, kCrash, kIoError, kDiskFull };

struct FaultPlan {
  Fault fault = Fault::kNone;
  int64_t at_write = 0;  // 1-based; the fault replaces this write
};

// Registers the faulting VFS as the default (idempotent) and arms `plan`.
void InstallFaultVfs(const FaultPlan& plan);
// Writes seen since the last InstallFaultVfs.
int64_t FaultVfsWrites();

}  // namespace flowrag::testing

#endif  // FLOWRAG_TESTS_FAULT_VFS_H_
