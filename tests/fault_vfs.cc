#include "fault_vfs.h"

#include <unistd.h>

#include <cstring>

namespace flowrag::testing {
namespace {

sqlite3_vfs* g_real = nullptr;
sqlite3_vfs g_vfs;
FaultPlan g_plan;
std::atomic<int64_t> g_writes{0};

// The wrapped file: ours first, the real VFS's file right after it.
struct FaultFile {
  sqlite3_file base;
  sqlite3_file* real;
};

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<FaultFile*>(f)->real; }

int Write(sqlite3_file* f, const void* data, int amount, sqlite3_int64 offset) {
  const int64_t n = ++g_writes;
  if (g_plan.fault != Fault::kNone && n == g_plan.at_write) {
    switch (g_plan.fault) {
      case Fault::kCrash:
        _exit(77);  // no destructors, no flush: as a kill at this write
      case Fault::kIoError:
        return SQLITE_IOERR_WRITE;
      case Fault::kDiskFull:
        return SQLITE_FULL;
      case Fault::kNone:
        break;
    }
  }
  return Real(f)->pMethods->xWrite(Real(f), data, amount, offset);
}

int Close(sqlite3_file* f) { return Real(f)->pMethods->xClose(Real(f)); }
int Read(sqlite3_file* f, void* d, int n, sqlite3_int64 o) {
  return Real(f)->pMethods->xRead(Real(f), d, n, o);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  return Real(f)->pMethods->xTruncate(Real(f), size);
}
int Sync(sqlite3_file* f, int flags) { return Real(f)->pMethods->xSync(Real(f), flags); }
int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Real(f)->pMethods->xFileSize(Real(f), size);
}
int Lock(sqlite3_file* f, int l) { return Real(f)->pMethods->xLock(Real(f), l); }
int Unlock(sqlite3_file* f, int l) { return Real(f)->pMethods->xUnlock(Real(f), l); }
int CheckReservedLock(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}
int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) {
  return Real(f)->pMethods->xDeviceCharacteristics(Real(f));
}
int ShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return Real(f)->pMethods->xShmMap(Real(f), region, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int del) { return Real(f)->pMethods->xShmUnmap(Real(f), del); }
int Fetch(sqlite3_file* f, sqlite3_int64 o, int n, void** p) {
  return Real(f)->pMethods->xFetch(Real(f), o, n, p);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 o, void* p) {
  return Real(f)->pMethods->xUnfetch(Real(f), o, p);
}

const sqlite3_io_methods kMethods = {
    3,        Close,     Read,     Write,  Truncate,    Sync,     FileSize, Lock,
    Unlock,   CheckReservedLock,   FileControl,         SectorSize,         DeviceCharacteristics,
    ShmMap,   ShmLock,   ShmBarrier,        ShmUnmap,    Fetch,    Unfetch};

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  auto* ff = reinterpret_cast<FaultFile*>(f);
  ff->real = reinterpret_cast<sqlite3_file*>(ff + 1);
  const int rc = g_real->xOpen(g_real, name, ff->real, flags, out_flags);
  // A failed open leaves pMethods null, so SQLite does not close it.
  ff->base.pMethods = ff->real->pMethods != nullptr ? &kMethods : nullptr;
  return rc;
}

}  // namespace

void InstallFaultVfs(const FaultPlan& plan) {
  if (g_real == nullptr) {
    g_real = sqlite3_vfs_find(nullptr);
    g_vfs = *g_real;
    g_vfs.zName = "flowrag-fault";
    g_vfs.szOsFile = static_cast<int>(sizeof(FaultFile)) + g_real->szOsFile;
    g_vfs.xOpen = Open;
    sqlite3_vfs_register(&g_vfs, /*makeDflt=*/1);
  }
  g_plan = plan;
  g_writes = 0;
}

int64_t FaultVfsWrites() { return g_writes; }

}  // namespace flowrag::testing
