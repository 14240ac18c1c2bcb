// Store: persisted snapshot parts (format 6). See store.h and doc/storage.md
// "Snapshot parts". Storage keeps the bytes and their header; what the bytes
// mean, and the checksum, belong to the writer (graph/graph_io.h).
#include <cstdint>

#include "sqldb/connection.h"
#include "storage/meta_value.h"
#include "storage/store.h"
#include "storage/unix_time.h"

namespace flowrag {
namespace {

// meta.generation, which only the store writes (a decimal count from 0):
// anything else is Corruption naming the store.
Result<int64_t> ReadGeneration(SqlConnection& conn, const std::string& path) {
  FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                           conn.Prepare("SELECT value FROM meta WHERE key = 'generation'"));
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return int64_t{0};
  return ParseMetaInt(path, "generation", s.Text(0), 0, INT64_MAX);
}

}  // namespace

Result<int64_t> Store::Generation() {
  std::lock_guard<std::mutex> lock(mu_);
  return ReadGeneration(*conn_, path_);
}

Result<std::optional<Store::SnapshotPartInfo>> Store::GetSnapshotPart(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (format_version_ < 6) return std::optional<SnapshotPartInfo>();
  FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                           conn_->Prepare("SELECT generation, format, key, bytes, checksum, chunks "
                                          "FROM snapshot_parts WHERE name = ?"));
  s.Bind(1, name);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<SnapshotPartInfo>();
  SnapshotPartInfo info;
  info.name = std::string(name);
  info.generation = s.Int(0);
  info.format = static_cast<int>(s.Int(1));
  info.key = std::string(s.Text(2));
  info.bytes = static_cast<uint64_t>(s.Int(3));
  info.checksum = HashFromSql(s.Int(4));
  info.chunks = s.Int(5);
  return std::optional<SnapshotPartInfo>(std::move(info));
}

Status Store::ReadSnapshotChunk(std::string_view name, int64_t seq, uint64_t offset, void* out,
                                size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s, conn_->Prepare("SELECT rowid FROM snapshot_chunks WHERE part = ? AND seq = ?"));
  s.Bind(1, name).Bind(2, seq);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  const std::string what = "snapshot part " + std::string(name) + " chunk " + std::to_string(seq);
  if (!row) return Status::NotFound(path_ + ": " + what + " is missing");
  return conn_->ReadBlobRange("snapshot_chunks", "data", s.Int(0), offset, out, n);
}

Result<bool> Store::PutSnapshotPart(const SnapshotPartInfo& info, const PartProducer& produce) {
  std::lock_guard<std::mutex> lock(mu_);
  if (format_version_ < 6) {
    return Status::FailedPrecondition(path_ + ": store format " + std::to_string(format_version_) +
                                      " has no snapshot parts");
  }
  bool written = false;
  Status st = InTransaction([&]() -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(int64_t generation, ReadGeneration(*conn_, path_));
    if (generation != info.generation) return Status::Ok();  // derived from older data
    FLOWRAG_ASSIGN_OR_RETURN(Statement clear,
                             conn_->Prepare("DELETE FROM snapshot_chunks WHERE part = ?"));
    FLOWRAG_RETURN_IF_ERROR(clear.Bind(1, info.name).Run());
    FLOWRAG_ASSIGN_OR_RETURN(
        Statement chunk,
        conn_->Prepare("INSERT INTO snapshot_chunks(part, seq, data) VALUES (?, ?, ?)"));
    int64_t chunks = 0;
    uint64_t bytes = 0;
    auto emit = [&](std::string_view data) -> Status {
      if (data.size() > kMaxSnapshotChunk) {
        return Status::InvalidArgument("snapshot part " + info.name + ": chunk of " +
                                       std::to_string(data.size()) + " bytes");
      }
      FLOWRAG_RETURN_IF_ERROR(
          chunk.Bind(1, info.name).Bind(2, chunks).BindBlob(3, data.data(), data.size()).Queue());
      ++chunks;
      bytes += data.size();
      return Status::Ok();
    };
    FLOWRAG_ASSIGN_OR_RETURN(uint64_t checksum, produce(emit));
    FLOWRAG_ASSIGN_OR_RETURN(
        Statement header,
        conn_->Prepare("INSERT INTO snapshot_parts(name, generation, format, key, bytes, "
                       "checksum, chunks, built_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                       "ON CONFLICT(name) DO UPDATE SET generation = excluded.generation, "
                       "format = excluded.format, key = excluded.key, bytes = excluded.bytes, "
                       "checksum = excluded.checksum, chunks = excluded.chunks, "
                       "built_at = excluded.built_at"));
    const int64_t now = UnixSeconds();
    FLOWRAG_RETURN_IF_ERROR(header.Bind(1, info.name)
                                .Bind(2, info.generation)
                                .Bind(3, int64_t{info.format})
                                .Bind(4, info.key)
                                .Bind(5, static_cast<int64_t>(bytes))
                                .Bind(6, HashToSql(checksum))
                                .Bind(7, chunks)
                                .Bind(8, now)
                                .Run());
    written = true;
    return Status::Ok();
  });
  if (!st.ok()) return st.WithContext("writing snapshot part " + info.name);
  return written;
}

Status Store::DropSnapshotParts() {
  std::lock_guard<std::mutex> lock(mu_);
  if (format_version_ < 6) return Status::Ok();
  return InTransaction([&]() -> Status {
    return conn_->Exec("DELETE FROM snapshot_chunks; DELETE FROM snapshot_parts;");
  });
}

}  // namespace flowrag
