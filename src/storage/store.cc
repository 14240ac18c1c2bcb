#include "storage/store.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/encoding.h"
#include "sqldb/connection.h"
#include "storage/document_texts.h"
#include "storage/graph_writer.h"
#include "storage/meta_value.h"
#include "storage/schema.h"
#include "storage/unix_time.h"
#include "storage/vector_blob.h"

namespace flowrag {
namespace {

constexpr char kMagicKey[] = "magic";
constexpr char kMagicValue[] = "flowrag";
constexpr char kVersionKey[] = "format_version";

// Passage ids of a document.
Result<std::vector<int64_t>> PassagesOf(SqlConnection& conn, int64_t doc_id) {
  FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                           conn.Prepare("SELECT id FROM passages WHERE document_id = ?"));
  s.Bind(1, doc_id);
  std::vector<int64_t> ids;
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    ids.push_back(s.Int(0));
  }
  return ids;
}

}  // namespace

std::string PassageEmbedText(std::string_view title, std::string_view passage_text) {
  if (title.empty()) return std::string(passage_text);
  std::string s;
  s.reserve(title.size() + 1 + passage_text.size());
  s.append(title);
  s.push_back('\n');
  s.append(passage_text);
  return s;
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& location,
                                           const StoreOptions& options) {
  SqlConnectionOptions conn_options;
  conn_options.read_only = options.read_only;
  conn_options.create_if_missing = options.create_if_missing;
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<SqlConnection> conn,
                           OpenSqlConnection(location, conn_options));
  std::unique_ptr<Store> store(new Store(location, std::move(conn)));
  FLOWRAG_RETURN_IF_ERROR(store->Initialize(options));
  return store;
}

Store::~Store() = default;

SqlDialect Store::dialect() const { return conn_->dialect(); }

// Nothing is written before the database is known to be a flowrag store (or
// empty, to become one) and, for a writer, passes the driver's integrity
// check: another application's database, or a damaged store, keeps its
// bytes, SQLite's journal mode included. A store already in WAL mode gets
// the check before its first write transaction instead (InTransaction), so
// that a writable open does not read the whole file: its reads are checked
// as a read-only open's are (the segments' and parts' checksums; a damaged
// page read is Corruption).
Status Store::Initialize(const StoreOptions& options) {
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<std::string> names, conn_->TableNames());
  if (names.empty() && options.read_only) {
    return Status::FailedPrecondition(path_ + ": empty store (run index first)");
  }
  if (!names.empty()) {
    FLOWRAG_RETURN_IF_ERROR(CheckIsStore(names));
    if (!options.read_only) {
      FLOWRAG_ASSIGN_OR_RETURN(integrity_deferred_, CanDeferIntegrityCheck());
      if (!integrity_deferred_) FLOWRAG_RETURN_IF_ERROR(conn_->CheckIntegrity());
    }
  }
  if (!options.read_only) FLOWRAG_RETURN_IF_ERROR(conn_->PrepareForWrites());
  if (names.empty()) {
    FLOWRAG_ASSIGN_OR_RETURN(bool created, CreateSchema(options.create_format_version));
    if (created) return Status::Ok();
    // Another process created the store meanwhile: open what it made.
    FLOWRAG_ASSIGN_OR_RETURN(names, conn_->TableNames());
    FLOWRAG_RETURN_IF_ERROR(CheckIsStore(names));
  }
  FLOWRAG_RETURN_IF_ERROR(CheckFormat(options));
  FLOWRAG_ASSIGN_OR_RETURN(names, conn_->TableNames());  // a migration may have added some
  FLOWRAG_RETURN_IF_ERROR(CheckTables(names));
  return options.read_only ? Status::Ok() : EnsureAddedIndexes();
}

Result<bool> Store::HasIndex(std::string_view name) {
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare(conn_->dialect() == SqlDialect::kPostgres
                         ? "SELECT 1 FROM pg_catalog.pg_indexes WHERE schemaname = "
                           "current_schema() AND indexname = ?"
                         : "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?"));
  s.Bind(1, name);
  return s.Step();
}

// Looks before it writes: a store that has its indexes (every store after
// its first writable open by this build) gets no transaction, so a writable
// open writes nothing it did not write before.
Status Store::EnsureAddedIndexes() {
  for (const AddedIndex& index : AddedIndexes()) {
    FLOWRAG_ASSIGN_OR_RETURN(bool has, HasIndex(index.name));
    if (has) continue;
    FLOWRAG_RETURN_IF_ERROR(InTransaction([&]() -> Status {
                              // Under the write lock: another writer may have added it meanwhile.
                              FLOWRAG_ASSIGN_OR_RETURN(bool added, HasIndex(index.name));
                              return added ? Status::Ok() : conn_->Exec(index.ddl);
                            }).WithContext("adding index " + std::string(index.name)));
  }
  return Status::Ok();
}

Status Store::CheckTables(const std::vector<std::string>& names) {
  for (const std::string& t : TablesOfFormat(format_version_)) {
    if (std::find(names.begin(), names.end(), t) == names.end()) {
      return Status::Corruption(path_ + ": table " + t + " of store format " +
                                std::to_string(format_version_) +
                                " is missing (restore the store from a backup or index again)");
    }
  }
  return Status::Ok();
}

Result<bool> Store::CreateSchema(int format_version) {
  if (conn_->dialect() == SqlDialect::kPostgres && format_version != kStoreFormatVersion) {
    return Status::InvalidArgument(path_ + ": PostgreSQL stores start at format " +
                                   std::to_string(kStoreFormatVersion));
  }
  bool created = false;
  FLOWRAG_RETURN_IF_ERROR(InTransaction([&]() -> Status {
    // Under the write lock: a concurrent creator may have won the race.
    FLOWRAG_ASSIGN_OR_RETURN(std::vector<std::string> names, conn_->TableNames());
    if (!names.empty()) return Status::Ok();
    if (conn_->dialect() == SqlDialect::kPostgres) {
      FLOWRAG_RETURN_IF_ERROR(conn_->Exec(PostgresSchema()));
    } else {
      for (int v = 1; v <= format_version; ++v) FLOWRAG_RETURN_IF_ERROR(conn_->Exec(SchemaStep(v)));
    }
    // A store created at an older format (tests of migrations) stands for
    // one an older build wrote: without them.
    if (format_version == kStoreFormatVersion) {
      for (const AddedIndex& index : AddedIndexes()) {
        FLOWRAG_RETURN_IF_ERROR(conn_->Exec(index.ddl));
      }
    }
    FLOWRAG_ASSIGN_OR_RETURN(Statement ins,
                             conn_->Prepare("INSERT INTO meta(key, value) VALUES (?, ?)"));
    FLOWRAG_RETURN_IF_ERROR(ins.Bind(1, kMagicKey).Bind(2, kMagicValue).Run());
    FLOWRAG_RETURN_IF_ERROR(ins.Bind(1, kVersionKey).Bind(2, std::to_string(format_version)).Run());
    // From the start, so that a graph write can lock the row
    // (GraphWriter::TitlesGeneration); older stores gain it with their
    // first document write.
    FLOWRAG_RETURN_IF_ERROR(ins.Bind(1, "titles_generation").Bind(2, "0").Run());
    created = true;
    return Status::Ok();
  }));
  if (created) format_version_ = format_version;
  return created;
}

Status Store::CheckIsStore(const std::vector<std::string>& names) {
  if (std::find(names.begin(), names.end(), "meta") == names.end()) {
    std::string list;
    for (size_t i = 0; i < names.size() && i < 5; ++i) list += (i ? ", " : "") + names[i];
    return Status::Corruption(
        path_ + ": not a flowrag store (a database without a meta table; tables: " + list + ")");
  }
  FLOWRAG_ASSIGN_OR_RETURN(auto magic, GetMeta(kMagicKey));
  if (!magic || *magic != kMagicValue) {
    return Status::Corruption(path_ + ": not a flowrag store (meta.magic is missing or wrong)");
  }
  return Status::Ok();
}

Status Store::CheckFormat(const StoreOptions& options) {
  FLOWRAG_ASSIGN_OR_RETURN(auto version, GetMeta(kVersionKey));
  int v = 0;
  if (version) v = std::atoi(version->c_str());
  if (v <= 0) return Status::Corruption(path_ + ": meta.format_version is missing or invalid");
  if (v > kStoreFormatVersion) {
    return Status::FailedPrecondition(path_ + ": store format " + std::to_string(v) +
                                      " is newer than this flowrag supports (" +
                                      std::to_string(kStoreFormatVersion) + "); upgrade flowrag");
  }
  format_version_ = v;
  if (v == kStoreFormatVersion) return Status::Ok();
  if (!options.read_only) return Migrate(v);
  if (v >= kOldestReadableFormat) return Status::Ok();
  return Status::FailedPrecondition(path_ + ": store format " + std::to_string(v) +
                                    " needs a migration; open it writable once");
}

Status Store::Migrate(int from_version) {
  for (int v = from_version + 1; v <= kStoreFormatVersion; ++v) {
    FLOWRAG_RETURN_IF_ERROR(
        InTransaction([&]() -> Status {
          FLOWRAG_RETURN_IF_ERROR(conn_->Exec(MigrationStep(v, conn_->dialect())));
          FLOWRAG_ASSIGN_OR_RETURN(Statement up,
                                   conn_->Prepare("UPDATE meta SET value=? WHERE key=?"));
          return up.Bind(1, std::to_string(v)).Bind(2, kVersionKey).Run();
        }).WithContext("migrating to format " + std::to_string(v)));
    format_version_ = v;
  }
  return Status::Ok();
}

Status Store::BumpGeneration() {
  FLOWRAG_RETURN_IF_ERROR(
      conn_->Exec("UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) "
                  "WHERE key = 'generation'"));
  return conn_->AnnounceChange();  // sent with the commit
}

Status Store::LockTitlesGeneration() {
  // SQLite has one writer at a time: nothing to lock.
  if (conn_->dialect() != SqlDialect::kPostgres) return Status::Ok();
  FLOWRAG_RETURN_IF_ERROR(
      conn_->Exec("INSERT INTO meta(key, value) VALUES ('titles_generation', '0') "
                  "ON CONFLICT(key) DO NOTHING"));
  return conn_->Exec("SELECT value FROM meta WHERE key = 'titles_generation' FOR UPDATE");
}

Status Store::BumpTitlesGeneration() {
  return conn_->Exec(
      "INSERT INTO meta(key, value) VALUES ('titles_generation', '1') ON CONFLICT(key) DO "
      "UPDATE SET value = CAST(CAST(meta.value AS BIGINT) + 1 AS TEXT)");
}

Result<std::unique_ptr<SqlConnection>> Store::OpenListener() const {
  SqlConnectionOptions options;
  options.read_only = true;
  options.create_if_missing = false;
  return OpenSqlConnection(location_, options);
}

std::string Store::SegmentDirectory() const {
  if (conn_->dialect() != SqlDialect::kSqlite || location_.empty() || location_ == ":memory:" ||
      location_.rfind("file:", 0) == 0) {
    return "";
  }
  const char* segments = std::getenv("FLOWRAG_SNAPSHOT_SEGMENTS");
  if (segments != nullptr && std::string_view(segments) == "off") return "";
  return location_ + ".segments";
}

Result<std::unique_ptr<Store>> Store::OpenReader() const {
  if (location_.empty() || location_ == ":memory:") return std::unique_ptr<Store>();
  StoreOptions options;
  options.read_only = true;
  options.create_if_missing = false;
  return Open(location_, options);
}

Status Store::ReadConsistently(const std::function<Status()>& body) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    FLOWRAG_RETURN_IF_ERROR(conn_->BeginRead());
  }
  Status st = body();
  std::lock_guard<std::mutex> lock(mu_);
  Status ended = conn_->Rollback();  // nothing to commit
  return st.ok() ? ended : st;
}

Status Store::ReleaseMemory() {
  if (dialect() != SqlDialect::kSqlite) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->Exec("PRAGMA shrink_memory");
}

Status Store::InWriteTransaction(const std::function<Status()>& body) {
  return InTransaction([&]() -> Status {
    const int64_t before = conn_->TotalChanges();
    FLOWRAG_RETURN_IF_ERROR(body());
    FLOWRAG_RETURN_IF_ERROR(conn_->Flush());  // queued statements count once run
    // A transaction that changed no row (a collection that found nothing)
    // leaves the snapshot valid.
    if (conn_->TotalChanges() == before) return Status::Ok();
    return BumpGeneration();
  });
}

Result<bool> Store::CanDeferIntegrityCheck() {
  if (conn_->dialect() != SqlDialect::kSqlite) return false;  // its check is free
  FLOWRAG_ASSIGN_OR_RETURN(Statement s, conn_->Prepare("PRAGMA journal_mode"));
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  return row && s.Text(0) == "wal";
}

Status Store::InTransaction(const std::function<Status()>& body) {
  if (integrity_deferred_) {
    std::call_once(integrity_once_, [this] { integrity_ = conn_->CheckIntegrity(); });
    FLOWRAG_RETURN_IF_ERROR(integrity_);
  }
  FLOWRAG_RETURN_IF_ERROR(conn_->BeginWrite());
  Status st = body();
  if (!st.ok()) {
    (void)conn_->Rollback();
    return st;
  }
  st = conn_->Commit();
  if (!st.ok()) (void)conn_->Rollback();
  return st;
}

Result<std::optional<std::string>> Store::GetMeta(std::string_view key) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(Statement s, conn_->Prepare("SELECT value FROM meta WHERE key=?"));
  s.Bind(1, key);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(std::string(s.Text(0)));
}

Result<std::optional<int64_t>> Store::GetMetaInt(std::string_view key, int64_t min, int64_t max) {
  FLOWRAG_ASSIGN_OR_RETURN(auto text, GetMeta(key));
  if (!text) return std::optional<int64_t>();
  FLOWRAG_ASSIGN_OR_RETURN(int64_t v, ParseMetaInt(path_, key, *text, min, max));
  return std::optional<int64_t>(v);
}

Status Store::SetMeta(std::string_view key, std::string_view value) {
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction([&]() -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                             conn_->Prepare("INSERT INTO meta(key, value) VALUES (?, ?) "
                                            "ON CONFLICT(key) DO UPDATE SET value=excluded.value "
                                            "WHERE meta.value <> excluded.value"));
    FLOWRAG_RETURN_IF_ERROR(s.Bind(1, key).Bind(2, value).Run());
    // Rewriting the same value changes no snapshot.
    return conn_->Changes() > 0 ? BumpGeneration() : Status::Ok();
  });
}

Result<std::optional<std::string>> Store::ReadMeta(std::string_view key) { return GetMeta(key); }

Status Store::WriteMeta(std::string_view key, std::string_view value) {
  return SetMeta(key, value);
}

Result<std::optional<uint64_t>> Store::DocumentHash(std::string_view external_id) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s, conn_->Prepare("SELECT content_hash FROM documents WHERE external_id=?"));
  s.Bind(1, external_id);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<uint64_t>();
  return std::optional<uint64_t>(HashFromSql(s.Int(0)));
}

Result<BatchWriteReport> Store::WriteDocuments(std::span<const DocumentWrite> batch) {
  std::lock_guard<std::mutex> lock(mu_);
  BatchWriteReport report;
  GraphWriter graph(conn_.get());
  Status st = InWriteTransaction([&]() -> Status {
    FLOWRAG_RETURN_IF_ERROR(LockTitlesGeneration());
    FLOWRAG_RETURN_IF_ERROR(graph.Prepare());
    FLOWRAG_ASSIGN_OR_RETURN(const std::optional<EmbedWatermark> watermark,
                             CurrentEmbedWatermark());
    std::optional<int64_t> max_id_before_inserts;
    FLOWRAG_ASSIGN_OR_RETURN(
        Statement find,
        conn_->Prepare("SELECT id, content_hash FROM documents WHERE external_id=?"));
    FLOWRAG_ASSIGN_OR_RETURN(Statement del, conn_->Prepare("DELETE FROM documents WHERE id=?"));
    FLOWRAG_ASSIGN_OR_RETURN(
        Statement ins_doc,
        conn_->Prepare("INSERT INTO documents(external_id, title, source, content_hash, "
                       "chunking, text, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id"));
    FLOWRAG_ASSIGN_OR_RETURN(
        Statement ins_passage,
        conn_->Prepare("INSERT INTO passages(document_id, ordinal, begin_offset, end_offset, "
                       "embed_hash) VALUES (?, ?, ?, ?, ?)"));
    FLOWRAG_ASSIGN_OR_RETURN(
        Statement ins_record,
        conn_->Prepare("INSERT INTO source_records(document_id, source, file, line, entity_type, "
                       "record_key, structured, fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
    const int64_t now = UnixSeconds();
    for (const DocumentWrite& w : batch) {
      find.Bind(1, w.doc.external_id);
      FLOWRAG_ASSIGN_OR_RETURN(bool exists, find.Step());
      int64_t old_id = exists ? find.Int(0) : 0;
      uint64_t old_hash = exists ? HashFromSql(find.Int(1)) : 0;
      find.Reset();
      if (exists && old_hash == w.content_hash) {
        ++report.documents_unchanged;
        continue;
      }
      if (exists) {
        FLOWRAG_ASSIGN_OR_RETURN(std::vector<int64_t> old_passages, PassagesOf(*conn_, old_id));
        FLOWRAG_RETURN_IF_ERROR(DeletePassagesFromGraph(graph, old_passages));
        FLOWRAG_RETURN_IF_ERROR(del.Bind(1, old_id).Run());
        ++report.documents_replaced;
      } else {
        ++report.documents_added;
      }
      FLOWRAG_ASSIGN_OR_RETURN(const int64_t doc_id, ins_doc.Bind(1, w.doc.external_id)
                                                         .Bind(2, w.doc.title)
                                                         .Bind(3, w.doc.source)
                                                         .Bind(4, HashToSql(w.content_hash))
                                                         .Bind(5, w.chunking)
                                                         .Bind(6, w.doc.text)
                                                         .Bind(7, now)
                                                         .RunReturningId());
      if (w.record) {
        const SourceRecordWrite& r = *w.record;
        FLOWRAG_RETURN_IF_ERROR(ins_record.Bind(1, doc_id)
                                    .Bind(2, r.source)
                                    .Bind(3, r.file)
                                    .Bind(4, r.line)
                                    .Bind(5, r.entity_type)
                                    .Bind(6, r.record_key)
                                    .Bind(7, int64_t{r.structured ? 1 : 0})
                                    .Bind(8, r.fields)
                                    .Queue());
      }
      if (!max_id_before_inserts && !w.passages.empty()) {
        FLOWRAG_ASSIGN_OR_RETURN(max_id_before_inserts, MaxPassageId());
      }
      for (const PassageWrite& p : w.passages) {
        FLOWRAG_RETURN_IF_ERROR(ins_passage.Bind(1, doc_id)
                                    .Bind(2, int64_t{p.ordinal})
                                    .Bind(3, int64_t{p.begin})
                                    .Bind(4, int64_t{p.end})
                                    .Bind(5, HashToSql(p.embed_hash))
                                    .Queue());
        ++report.passages_added;
      }
    }
    if (report.documents_added + report.documents_replaced > 0) {
      FLOWRAG_RETURN_IF_ERROR(BumpTitlesGeneration());
      FLOWRAG_RETURN_IF_ERROR(CarryEmbedWatermark(watermark, max_id_before_inserts));
    }
    return graph.Finish();
  });
  if (!st.ok()) return st;
  return report;
}

Status Store::DeleteDocument(std::string_view external_id) {
  std::lock_guard<std::mutex> lock(mu_);
  GraphWriter graph(conn_.get());
  return InWriteTransaction([&]() -> Status {
    FLOWRAG_RETURN_IF_ERROR(LockTitlesGeneration());
    FLOWRAG_RETURN_IF_ERROR(graph.Prepare());
    FLOWRAG_ASSIGN_OR_RETURN(Statement find,
                             conn_->Prepare("SELECT id FROM documents WHERE external_id=?"));
    find.Bind(1, external_id);
    FLOWRAG_ASSIGN_OR_RETURN(bool exists, find.Step());
    if (!exists) {
      return Status::NotFound("no document with id \"" + EscapeForMessage(external_id, 80) + "\"");
    }
    const int64_t doc_id = find.Int(0);
    find.Reset();
    FLOWRAG_ASSIGN_OR_RETURN(const std::optional<EmbedWatermark> watermark,
                             CurrentEmbedWatermark());
    FLOWRAG_ASSIGN_OR_RETURN(std::vector<int64_t> passages, PassagesOf(*conn_, doc_id));
    FLOWRAG_RETURN_IF_ERROR(DeletePassagesFromGraph(graph, passages));
    FLOWRAG_ASSIGN_OR_RETURN(Statement del, conn_->Prepare("DELETE FROM documents WHERE id=?"));
    FLOWRAG_RETURN_IF_ERROR(del.Bind(1, doc_id).Run());
    FLOWRAG_RETURN_IF_ERROR(BumpTitlesGeneration());
    FLOWRAG_RETURN_IF_ERROR(CarryEmbedWatermark(watermark, std::nullopt));
    return graph.Finish();
  });
}

namespace {

// Passage embed texts, optionally only those without a vector for ?1.
constexpr char kPassageTextSql[] =
    "SELECT p.id, p.embed_hash, d.title, p.document_id, p.begin_offset, p.end_offset FROM "
    "passages p JOIN documents d ON d.id = p.document_id ";
constexpr char kMissingSql[] =
    "WHERE p.id > ?3 AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model = ?1 AND "
    "e.text_hash = p.embed_hash) ORDER BY p.id LIMIT ?2";

// A row of kPassageTextSql, its text sliced from the document (read once).
Result<PassageToEmbed> ReadPassageText(const Statement& s, DocumentTexts& texts) {
  PassageToEmbed p;
  p.passage_id = s.Int(0);
  p.embed_hash = HashFromSql(s.Int(1));
  FLOWRAG_ASSIGN_OR_RETURN(std::string_view text, texts.Slice(s.Int(3), s.Int(4), s.Int(5)));
  p.text = PassageEmbedText(s.Text(2), text);
  return p;
}

}  // namespace

Result<std::vector<PassageToEmbed>> Store::PassagesMissingEmbeddings(std::string_view model,
                                                                     size_t limit,
                                                                     int64_t after_id) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(const int64_t embedded_through, EmbeddedThrough(model));
  FLOWRAG_ASSIGN_OR_RETURN(Statement s, conn_->Prepare(std::string(kPassageTextSql) + kMissingSql));
  s.Bind(1, model)
      .Bind(2, static_cast<int64_t>(limit))
      .Bind(3, std::max(after_id, embedded_through));
  FLOWRAG_ASSIGN_OR_RETURN(DocumentTexts texts, DocumentTexts::Prepare(*conn_));
  std::vector<PassageToEmbed> out;
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    FLOWRAG_ASSIGN_OR_RETURN(PassageToEmbed p, ReadPassageText(s, texts));
    out.push_back(std::move(p));
  }
  return out;
}

Status Store::ForEachPassageText(const std::function<Status(const PassageToEmbed&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                           conn_->Prepare(std::string(kPassageTextSql) + "ORDER BY p.id"));
  FLOWRAG_ASSIGN_OR_RETURN(DocumentTexts texts, DocumentTexts::Prepare(*conn_));
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    FLOWRAG_ASSIGN_OR_RETURN(PassageToEmbed p, ReadPassageText(s, texts));
    FLOWRAG_RETURN_IF_ERROR(fn(p));
  }
  return Status::Ok();
}

Result<int64_t> Store::CountPassagesMissingEmbeddings(std::string_view model) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(const int64_t embedded_through, EmbeddedThrough(model));
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare("SELECT count(*) FROM passages p WHERE p.id > ?2 AND NOT EXISTS (SELECT 1 "
                     "FROM embeddings e WHERE e.model = ?1 AND e.text_hash = p.embed_hash)"));
  s.Bind(1, model).Bind(2, embedded_through);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : int64_t{0};
}

Status Store::PutEmbeddings(std::string_view model, std::span<const uint64_t> hashes,
                            const FloatMatrix& vectors) {
  if (hashes.size() != vectors.rows) {
    return Status::InvalidArgument("PutEmbeddings: " + std::to_string(hashes.size()) +
                                   " hashes for " + std::to_string(vectors.rows) + " vectors");
  }
  std::lock_guard<std::mutex> lock(mu_);
  return InWriteTransaction([&]() -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(
        Statement ins,
        conn_->Prepare("INSERT INTO embeddings(model, text_hash, dim, vector) VALUES (?, ?, ?, ?) "
                       "ON CONFLICT(model, text_hash) DO UPDATE SET dim = excluded.dim, "
                       "vector = excluded.vector"));
    for (size_t i = 0; i < hashes.size(); ++i) {
      const std::string blob = EncodeVectorBlob(vectors.row(i), vectors.cols);
      FLOWRAG_RETURN_IF_ERROR(ins.Bind(1, model)
                                  .Bind(2, HashToSql(hashes[i]))
                                  .Bind(3, static_cast<int64_t>(vectors.cols))
                                  .BindBlob(4, blob.data(), blob.size())
                                  .Queue());
    }
    return Status::Ok();
  });
}

Result<FloatMatrix> Store::GetEmbeddings(std::string_view model, std::span<const uint64_t> hashes,
                                         size_t dim, std::vector<bool>* found) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare("SELECT dim, vector FROM embeddings WHERE model=? AND text_hash=?"));
  FloatMatrix m(hashes.size(), dim);
  found->assign(hashes.size(), false);
  for (size_t i = 0; i < hashes.size(); ++i) {
    s.Bind(1, model).Bind(2, HashToSql(hashes[i]));
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (row) {
      const int64_t stored_dim = s.Int(0);
      if (static_cast<size_t>(stored_dim) != dim || !DecodeVectorBlob(s.Blob(1), dim, m.row(i))) {
        const size_t bytes = s.Blob(1).size();
        s.Reset();
        return Status::Corruption(path_ + ": embedding for model " + std::string(model) +
                                  " has dimension " + std::to_string(stored_dim) + " (" +
                                  std::to_string(bytes) + " bytes), expected " +
                                  std::to_string(dim));
      }
      (*found)[i] = true;
    }
    s.Reset();
  }
  return m;
}

Result<int64_t> Store::DropEmbeddingsOfFamilyExcept(std::string_view family,
                                                    std::string_view keep_model) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t dropped = 0;
  Status st = InTransaction([&]() -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(
        Statement del,
        conn_->Prepare(
            "DELETE FROM embeddings WHERE substr(model, 1, length(CAST(?1 AS TEXT))) = ?1 AND "
            "model <> ?2"));
    FLOWRAG_RETURN_IF_ERROR(del.Bind(1, family).Bind(2, keep_model).Run());
    dropped = conn_->Changes();
    FLOWRAG_RETURN_IF_ERROR(ForgetEmbedWatermarkUnlessOf(keep_model));
    return dropped > 0 ? BumpGeneration() : Status::Ok();
  });
  if (!st.ok()) return st;
  return dropped;
}

Result<std::optional<std::string>> Store::GetEmbedderState(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                           conn_->Prepare("SELECT state FROM embedder_state WHERE name=?"));
  s.Bind(1, name);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(std::string(s.Blob(0)));
}

Result<int64_t> Store::EmbedderStateFittedPassages(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s, conn_->Prepare("SELECT fitted_passages FROM embedder_state WHERE name=?"));
  s.Bind(1, name);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : int64_t{-1};
}

Status Store::PutEmbedderState(std::string_view name, std::string_view blob,
                               int64_t fitted_passages) {
  std::lock_guard<std::mutex> lock(mu_);
  return InWriteTransaction([&]() -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(
        Statement s,
        conn_->Prepare("INSERT INTO embedder_state(name, state, fitted_passages, updated_at) "
                       "VALUES (?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET state = "
                       "excluded.state, fitted_passages = excluded.fitted_passages, "
                       "updated_at = excluded.updated_at"));
    return s.Bind(1, name)
        .BindBlob(2, blob.data(), blob.size())
        .Bind(3, fitted_passages)
        .Bind(4, UnixSeconds())
        .Run();
  });
}

Status Store::ForEachDocument(const std::function<Status(DocumentRow&&)>& fn, int64_t after_id) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s, conn_->Prepare("SELECT id, external_id, title, source, text FROM documents "
                                  "WHERE id > ? ORDER BY id"));
  s.Bind(1, after_id);
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    DocumentRow d{s.Int(0), std::string(s.Text(1)), std::string(s.Text(2)), std::string(s.Text(3)),
                  std::string(s.Text(4))};
    FLOWRAG_RETURN_IF_ERROR(fn(std::move(d)));
  }
  return Status::Ok();
}

Status Store::ForEachPassage(const std::function<Status(const PassageRow&)>& fn, int64_t after_id) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s, conn_->Prepare("SELECT id, document_id, ordinal, begin_offset, end_offset, "
                                  "embed_hash FROM passages WHERE id > ? ORDER BY id"));
  s.Bind(1, after_id);
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    PassageRow p{s.Int(0),
                 s.Int(1),
                 static_cast<int32_t>(s.Int(2)),
                 static_cast<uint32_t>(s.Int(3)),
                 static_cast<uint32_t>(s.Int(4)),
                 HashFromSql(s.Int(5))};
    FLOWRAG_RETURN_IF_ERROR(fn(p));
  }
  return Status::Ok();
}

Status Store::ForEachPassageEmbedding(
    std::string_view model, const std::function<Status(int64_t, std::span<const float>)>& fn,
    int64_t after_id) {
  std::lock_guard<std::mutex> lock(mu_);
  // Passages drive the join, in id order, each probing the embedding table's
  // key: `+p.embed_hash` keeps SQLite from driving it by the embeddings of
  // the model instead (all of them, then a sort, whatever `after_id`: 1.3 s
  // at 10^5 passages for an insert's few vectors, 4 ms this way).
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s, conn_->Prepare("SELECT p.id, e.dim, e.vector FROM passages p JOIN embeddings "
                                  "e ON e.model = ? AND e.text_hash = +p.embed_hash WHERE p.id > "
                                  "? ORDER BY p.id"));
  s.Bind(1, model).Bind(2, after_id);
  std::vector<float> vector;
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    const int64_t dim = s.Int(1);
    const std::string_view blob = s.Blob(2);
    const bool dim_ok = dim > 0 && dim <= static_cast<int64_t>(kMaxVectorDimension);
    if (dim_ok) vector.resize(static_cast<size_t>(dim));
    if (!dim_ok || !DecodeVectorBlob(blob, vector.size(), vector.data())) {
      const int64_t passage = s.Int(0);
      const size_t bytes = blob.size();
      s.Reset();
      return Status::Corruption(path_ + ": the cached embedding of passage " +
                                std::to_string(passage) + " is " + std::to_string(bytes) +
                                " bytes for dimension " + std::to_string(dim) +
                                " (no form of a vector of that dimension, storage/vector_blob.h; "
                                "the store is damaged)");
    }
    FLOWRAG_RETURN_IF_ERROR(fn(s.Int(0), vector));
  }
  return Status::Ok();
}

Status Store::CheckVectorSizes(std::string_view model, size_t dimension) {
  std::lock_guard<std::mutex> lock(mu_);
  // The dimension the rows must have: the caller's, else the first row's
  // (by the primary key: the index of sizes would give the least dim).
  int64_t dim = static_cast<int64_t>(dimension);
  if (dim == 0) {
    FLOWRAG_ASSIGN_OR_RETURN(Statement first,
                             conn_->Prepare("SELECT dim FROM embeddings WHERE model = ? ORDER BY "
                                            "text_hash LIMIT 1"));
    first.Bind(1, model);
    FLOWRAG_ASSIGN_OR_RETURN(bool row, first.Step());
    if (!row) return Status::Ok();
    dim = first.Int(0);
  }
  FLOWRAG_ASSIGN_OR_RETURN(Statement bad, conn_->Prepare(kBadVectorSizesQuery));
  const int64_t bitmap =
      dim > 0 ? static_cast<int64_t>(SparseVectorBitmapBytes(static_cast<size_t>(dim))) : 0;
  bad.Bind(1, model).Bind(2, dim).Bind(3, bitmap).Bind(4, 2 * dim).Bind(5, 4 * dim);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, bad.Step());
  if (!row || bad.Int(0) == 0) return Status::Ok();
  const int64_t count = bad.Int(0);
  const uint64_t example = HashFromSql(bad.Int(1));
  bad.Reset();
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement detail, conn_->Prepare("SELECT dim, length(vector) FROM embeddings WHERE model = "
                                       "? AND text_hash = ?"));
  detail.Bind(1, model).Bind(2, HashToSql(example));
  FLOWRAG_ASSIGN_OR_RETURN(row, detail.Step());
  const std::string what =
      row ? "dim " + std::to_string(detail.Int(0)) + ", " + std::to_string(detail.Int(1)) + " bytes"
          : "gone";
  return Status::Corruption(
      path_ + ": table embeddings: " + std::to_string(count) + " cached vector" +
      (count == 1 ? " of model " : "s of model ") + std::string(model).substr(0, 80) +
      (count == 1 ? " does not fit " : " do not fit ") + std::to_string(dim) + " coordinates (" +
      std::to_string(bitmap) + "-" + std::to_string(2 * dim) + " or " + std::to_string(4 * dim) +
      " bytes), e.g. text hash " + std::to_string(example) + " (" + what +
      "); the store is damaged: restore it from a backup, or delete those rows (they are a "
      "cache: the next index run embeds their passages again)");
}

Result<int64_t> Store::BeginIndexRun(std::string_view sources) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s, conn_->Prepare("INSERT INTO index_runs(started_at, sources, status) VALUES "
                                  "(?, ?, 'running') RETURNING id"));
  return s.Bind(1, UnixSeconds()).Bind(2, sources).RunReturningId();
}

Status Store::UpdateIndexRun(const IndexRunRecord& run) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare("UPDATE index_runs SET status=?, documents_added=?, documents_replaced=?, "
                     "documents_unchanged=?, passages_added=?, batches_committed=?, "
                     "passages_embedded=?, error=?, finished_at=CASE WHEN ?='running' THEN "
                     "NULL ELSE CAST(? AS BIGINT) END WHERE id=?"));
  return s.Bind(1, run.status)
      .Bind(2, static_cast<int64_t>(run.documents_added))
      .Bind(3, static_cast<int64_t>(run.documents_replaced))
      .Bind(4, static_cast<int64_t>(run.documents_unchanged))
      .Bind(5, static_cast<int64_t>(run.passages_added))
      .Bind(6, static_cast<int64_t>(run.batches_committed))
      .Bind(7, static_cast<int64_t>(run.passages_embedded))
      .Bind(8, run.error)
      .Bind(9, run.status)
      .Bind(10, UnixSeconds())
      .Bind(11, run.id)
      .Run();
}

Result<std::vector<IndexRunRecord>> Store::RecentIndexRuns(size_t limit) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare("SELECT id, sources, status, documents_added, documents_replaced, "
                     "documents_unchanged, passages_added, batches_committed, "
                     "passages_embedded, error FROM index_runs ORDER BY id DESC LIMIT ?"));
  s.Bind(1, static_cast<int64_t>(limit));
  std::vector<IndexRunRecord> out;
  while (true) {
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    IndexRunRecord r;
    r.id = s.Int(0);
    r.sources = s.Text(1);
    r.status = s.Text(2);
    r.documents_added = s.Int(3);
    r.documents_replaced = s.Int(4);
    r.documents_unchanged = s.Int(5);
    r.passages_added = s.Int(6);
    r.batches_committed = s.Int(7);
    r.passages_embedded = s.Int(8);
    r.error = s.Text(9);
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::pair<int64_t, int64_t>> Store::CountDocumentsAndPassages() {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(Statement s, conn_->Prepare("SELECT (SELECT count(*) FROM documents), "
                                                       "(SELECT count(*) FROM passages)"));
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::make_pair(int64_t{0}, int64_t{0});
  return std::make_pair(s.Int(0), s.Int(1));
}

Result<int64_t> Store::LargestPassageId() {
  std::lock_guard<std::mutex> lock(mu_);
  return MaxPassageId();
}

Result<StoreCounts> Store::Counts() {
  std::lock_guard<std::mutex> lock(mu_);
  StoreCounts c;
  c.format_version = format_version_;
  auto scalar = [&](const char* sql) -> Result<int64_t> {
    FLOWRAG_ASSIGN_OR_RETURN(Statement s, conn_->Prepare(sql));
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    return row ? s.Int(0) : int64_t{0};
  };
  FLOWRAG_ASSIGN_OR_RETURN(c.documents, scalar("SELECT count(*) FROM documents"));
  FLOWRAG_ASSIGN_OR_RETURN(c.passages, scalar("SELECT count(*) FROM passages"));
  FLOWRAG_ASSIGN_OR_RETURN(c.embeddings, scalar("SELECT count(*) FROM embeddings"));
  FLOWRAG_ASSIGN_OR_RETURN(c.embedding_models,
                           scalar("SELECT count(DISTINCT model) FROM embeddings"));
  FLOWRAG_ASSIGN_OR_RETURN(c.index_runs, scalar("SELECT count(*) FROM index_runs"));
  FLOWRAG_ASSIGN_OR_RETURN(c.file_bytes, conn_->StorageBytes());
  return c;
}

}  // namespace flowrag
