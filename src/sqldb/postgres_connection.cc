#include "sqldb/postgres_connection.h"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "sqldb/postgres_url.h"

namespace flowrag {
namespace {

// Type OIDs of the built-in types (catalog/pg_type.dat; fixed across
// releases). libpq-dev does not ship the server header that names them.
constexpr Oid kBoolOid = 16;
constexpr Oid kByteaOid = 17;
constexpr Oid kInt8Oid = 20;
constexpr Oid kInt2Oid = 21;
constexpr Oid kInt4Oid = 23;
constexpr Oid kTextOid = 25;
constexpr Oid kOidOid = 26;
constexpr Oid kFloat4Oid = 700;
constexpr Oid kFloat8Oid = 701;
constexpr Oid kNumericOid = 1700;

// The largest value PostgreSQL accepts (MaxAllocSize - 1 for varlena).
constexpr size_t kMaxValueBytes = 0x3fffffff - 4;
constexpr int kMaxParams = 65535;

std::string Excerpt(std::string_view sql) { return "\"" + std::string(sql.substr(0, 60)) + "\""; }

std::string FirstLine(const char* text) {
  if (text == nullptr) return "";
  std::string_view s(text);
  s = s.substr(0, s.find('\n'));
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

// libpq's multi-line connection messages on one line.
std::string OneLine(const char* text) {
  std::string out;
  for (const char* p = text; p != nullptr && *p != '\0'; ++p) {
    if (*p == '\n' || *p == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += *p;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

Status FromSqlState(std::string_view state, bool connection_lost, std::string msg) {
  if (connection_lost) return Status::Unavailable(std::move(msg));
  const std::string_view cls = state.substr(0, 2);
  if (cls == "22" || cls == "23" || cls == "54") return Status::InvalidArgument(std::move(msg));
  if (state == "40001" || state == "40P01" || state == "55P03" || state == "57014" || cls == "08" ||
      state.starts_with("57P")) {
    return Status::Unavailable(std::move(msg));
  }
  if (state == "53100" || cls == "58") return Status::IoError(std::move(msg));
  if (cls == "53") return Status::Unavailable(std::move(msg));  // out of memory, connections
  // As SQLite's READONLY and PERM.
  if (state == "25006" || state == "42501") return Status::IoError(std::move(msg));
  if (state == "XX001" || state == "XX002") return Status::Corruption(std::move(msg));
  return Status::Internal(std::move(msg));
}

// A connection failure by libpq's (English) message: the server's verdict
// on the credentials or database, else the network's.
Status ConnectError(const PostgresUrl& url, const std::string& detail) {
  std::string msg = url.redacted + ": connect: " + RedactPassword(url, detail);
  const auto has = [&](std::string_view s) { return detail.find(s) != std::string::npos; };
  if (has("database \"") && has("does not exist")) return Status::NotFound(std::move(msg));
  if (has("authentication failed") || has("no password supplied") || has("pg_hba.conf") ||
      (has("role \"") && has("does not exist")) || has("invalid ")) {
    return Status::InvalidArgument(std::move(msg));
  }
  return Status::Unavailable(std::move(msg));
}

uint64_t ReadBigEndian(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void AppendBigEndian(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// SQLite's REAL → INTEGER: truncation, saturating; NaN is 0.
int64_t DoubleToInt(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (d <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

std::string_view TrimNumberText(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) {
    s.remove_prefix(1);
  }
  if (s.starts_with("+")) s.remove_prefix(1);
  return s;
}

// The number at the start of `s`, 0 when there is none (SQLite's rule).
double TextToDouble(std::string_view s) {
  s = TrimNumberText(s);
  double v = 0;
  if (std::from_chars(s.data(), s.data() + s.size(), v).ec != std::errc()) return 0;
  return v;
}

int64_t TextToInt(std::string_view s) {
  s = TrimNumberText(s);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  const bool more = end != s.data() + s.size() && (*end == '.' || *end == 'e' || *end == 'E');
  if (ec == std::errc() && !more) return v;
  return DoubleToInt(TextToDouble(s));
}

// Shortest text that reads back as `d`, "2.0" rather than "2" (as SQLite).
std::string FormatDouble(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// PostgreSQL's binary numeric (int16 ndigits, int16 weight, uint16 sign,
// int16 dscale, then ndigits base-10000 digits) as decimal text.
std::string NumericText(std::string_view raw) {
  if (raw.size() < 8) return "";
  const int ndigits = static_cast<int16_t>(ReadBigEndian(raw.data(), 2));
  const int weight = static_cast<int16_t>(ReadBigEndian(raw.data() + 2, 2));
  const uint16_t sign = static_cast<uint16_t>(ReadBigEndian(raw.data() + 4, 2));
  const int dscale = static_cast<int16_t>(ReadBigEndian(raw.data() + 6, 2));
  if (sign == 0xC000) return "NaN";
  if (sign == 0xD000) return "Infinity";
  if (sign == 0xF000) return "-Infinity";
  if (ndigits < 0 || dscale < 0 || raw.size() < 8 + 2 * static_cast<size_t>(ndigits)) return "";
  const auto digit = [&](int i) -> int {
    if (i < 0 || i >= ndigits) return 0;
    return static_cast<int16_t>(ReadBigEndian(raw.data() + 8 + 2 * i, 2));
  };
  const auto append4 = [](std::string* s, int d) {
    d = std::clamp(d, 0, 9999);  // a well-formed digit is
    for (int div = 1000; div > 0; div /= 10) s->push_back(static_cast<char>('0' + d / div % 10));
  };
  std::string s = sign == 0x4000 ? "-" : "";
  if (weight < 0) {
    s += "0";
  } else {
    s += std::to_string(digit(0));
    for (int i = 1; i <= weight; ++i) append4(&s, digit(i));
  }
  if (dscale > 0) {
    std::string frac;
    for (int i = weight + 1; static_cast<int>(frac.size()) < dscale; ++i) append4(&frac, digit(i));
    frac.resize(dscale);
    s += "." + frac;
  }
  return s;
}

// An integer column of a binary result (an id), else its decimal text.
int64_t IntValue(const PGresult* result, int row, int col) {
  const char* raw = PQgetvalue(result, row, col);
  const int len = PQgetlength(result, row, col);
  switch (PQftype(result, col)) {
    case kInt8Oid:
      return len == 8 ? static_cast<int64_t>(ReadBigEndian(raw, 8)) : 0;
    case kInt4Oid:
      return len == 4 ? static_cast<int32_t>(ReadBigEndian(raw, 4)) : 0;
    default:
      return TextToInt(std::string_view(raw, static_cast<size_t>(len)));
  }
}

bool IsNumberType(Oid t) {
  return t == kInt8Oid || t == kInt4Oid || t == kInt2Oid || t == kOidOid || t == kBoolOid ||
         t == kFloat4Oid || t == kFloat8Oid || t == kNumericOid;
}

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || static_cast<unsigned char>(c) >= 0x80;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The end of a literal or quoted identifier whose body starts at `from`:
// just past the closing `quote` (a doubled one stands for itself; with
// `backslash`, \x escapes x), or the end of `sql`.
size_t EndOfQuoted(std::string_view sql, size_t from, char quote, bool backslash) {
  size_t end = from;
  while (end < sql.size()) {
    if (backslash && sql[end] == '\\') {
      end += 2;
    } else if (sql[end] == quote) {
      if (end + 1 < sql.size() && sql[end + 1] == quote) {
        end += 2;
      } else {
        return end + 1;
      }
    } else {
      ++end;
    }
  }
  return end;
}

// One server-side prepared statement of the connection.
struct Prepared {
  std::string name;
  std::string sql;        // as the caller wrote it, for messages
  std::string rewritten;  // with $N placeholders
  std::vector<Oid> param_types;
  int64_t session = 0;  // the connection session it is prepared in
  // Executions since prepared, and the count at which it is prepared again
  // (EnsurePrepared).
  uint64_t executions = 0;
  uint64_t replan_at = 100;
};

// The bound values of one execution as libpq takes them.
struct EncodedParams {
  std::vector<const char*> values;
  std::vector<int> lengths, formats;
  std::vector<std::string> encoded;  // numbers, kept alive for `values`
};

class PostgresConnection;

class PostgresStatement final : public StatementImpl {
 public:
  PostgresStatement(PostgresConnection* conn, Prepared* prepared)
      : conn_(conn), prepared_(prepared), params_(prepared->param_types.size()) {}
  ~PostgresStatement() override { PQclear(result_); }

  void BindInt(int i, int64_t v) override {
    if (Param* p = Slot(i)) {
      p->kind = Param::kInt;
      p->i = v;
    }
  }
  void BindDouble(int i, double v) override {
    if (Param* p = Slot(i)) {
      p->kind = Param::kDouble;
      p->d = v;
    }
  }
  void BindText(int i, std::string_view v) override {
    if (Param* p = Slot(i)) {
      p->kind = Param::kText;
      p->bytes.assign(v.data(), v.size());
    }
  }
  void BindBlob(int i, const void* data, size_t size) override {
    if (Param* p = Slot(i)) {
      p->kind = Param::kBlob;
      p->bytes.assign(static_cast<const char*>(data), size);
    }
  }
  void BindNull(int i) override {
    if (Param* p = Slot(i)) p->kind = Param::kNull;
  }

  Result<bool> Step() override;
  Status Queue(int64_t* changes, int64_t* id) override;

  void Reset() override {
    PQclear(result_);
    result_ = nullptr;
    row_ = -1;
    rows_ = 0;
    for (Param& p : params_) p = Param();
    bind_error_.clear();
    text_.clear();
  }

  int64_t Int(int col) const override {
    if (!HasValue(col)) return 0;
    const std::string_view raw = Raw(col);
    switch (PQftype(result_, col)) {
      case kInt8Oid:
        return raw.size() == 8 ? static_cast<int64_t>(ReadBigEndian(raw.data(), 8)) : 0;
      case kInt4Oid:
        return raw.size() == 4 ? static_cast<int32_t>(ReadBigEndian(raw.data(), 4)) : 0;
      case kInt2Oid:
        return raw.size() == 2 ? static_cast<int16_t>(ReadBigEndian(raw.data(), 2)) : 0;
      case kOidOid:
        return raw.size() == 4 ? static_cast<int64_t>(ReadBigEndian(raw.data(), 4)) : 0;
      case kBoolOid:
        return !raw.empty() && raw[0] != 0;
      case kFloat4Oid:
      case kFloat8Oid:
        return DoubleToInt(Double(col));
      case kNumericOid:
        return TextToInt(NumericText(raw));
      default:
        return TextToInt(raw);
    }
  }

  double Double(int col) const override {
    if (!HasValue(col)) return 0;
    const std::string_view raw = Raw(col);
    switch (PQftype(result_, col)) {
      case kFloat8Oid: {
        if (raw.size() != 8) return 0;
        const uint64_t bits = ReadBigEndian(raw.data(), 8);
        double d;
        std::memcpy(&d, &bits, sizeof(d));
        return d;
      }
      case kFloat4Oid: {
        if (raw.size() != 4) return 0;
        const uint32_t bits = static_cast<uint32_t>(ReadBigEndian(raw.data(), 4));
        float f;
        std::memcpy(&f, &bits, sizeof(f));
        return f;
      }
      case kInt8Oid:
      case kInt4Oid:
      case kInt2Oid:
      case kOidOid:
      case kBoolOid:
        return static_cast<double>(Int(col));
      case kNumericOid:
        return TextToDouble(NumericText(raw));
      default:
        return TextToDouble(raw);
    }
  }

  // Numbers are formatted once per row and column, so the view stays valid
  // until the next Step() or Reset().
  std::string_view Text(int col) const override {
    if (!HasValue(col)) return {};
    const Oid type = PQftype(result_, col);
    if (!IsNumberType(type)) return Raw(col);
    std::string& text = text_[col];
    if (text.empty()) {
      if (type == kFloat4Oid || type == kFloat8Oid) {
        text = FormatDouble(Double(col));
      } else if (type == kNumericOid) {
        text = NumericText(Raw(col));
      } else {
        text = std::to_string(Int(col));
      }
    }
    return text;
  }

  std::string_view Blob(int col) const override { return Text(col); }

  bool IsNull(int col) const override { return !HasValue(col); }

 private:
  struct Param {
    enum Kind { kNull, kInt, kDouble, kText, kBlob } kind = kNull;
    int64_t i = 0;
    double d = 0;
    std::string bytes;
  };

  Param* Slot(int i) {
    if (i >= 1 && i <= static_cast<int>(params_.size())) return &params_[i - 1];
    if (bind_error_.empty()) {
      bind_error_ = "binding parameter " + std::to_string(i) + ", but the statement has " +
                    std::to_string(params_.size());
    }
    return nullptr;
  }

  bool HasValue(int col) const {
    return result_ != nullptr && row_ >= 0 && row_ < rows_ && col >= 0 &&
           col < PQnfields(result_) && !PQgetisnull(result_, row_, col);
  }
  std::string_view Raw(int col) const {
    return {PQgetvalue(result_, row_, col), static_cast<size_t>(PQgetlength(result_, row_, col))};
  }

  Status Execute();
  Status QueueNow(int64_t* changes, int64_t* id);
  // The bound values as libpq sends them; InvalidArgument for a bad bind.
  Status Encode(EncodedParams* out) const;

  PostgresConnection* conn_;
  Prepared* prepared_;  // owned by the connection
  std::vector<Param> params_;
  std::string bind_error_;
  PGresult* result_ = nullptr;
  int row_ = -1;
  int rows_ = 0;
  mutable std::vector<std::string> text_;  // formatted numbers of the row
};

class PostgresConnection final : public SqlConnection {
 public:
  PostgresConnection(PostgresUrl url, PGconn* conn) : url_(std::move(url)), conn_(conn) {}
  ~PostgresConnection() override { PQfinish(conn_); }

  SqlDialect dialect() const override { return SqlDialect::kPostgres; }
  const std::string& name() const override { return url_.redacted; }

  // Creates or checks the workspace and applies the session settings.
  Status Setup(const SqlConnectionOptions& options);

  // A connection the server dropped (a restart, an administrator, the
  // network) is reset on the next call outside a write transaction: the
  // call that noticed the loss failed with Unavailable, the next one
  // reconnects (Unavailable while the server stays away), re-applies the
  // session settings and prepares statements again when they run. Inside a
  // transaction the transaction is lost: every call fails until Rollback().
  Status EnsureConnected();
  // BEGIN (`sql` starts with it) on a connection outside any transaction.
  Status Begin(const std::string& sql);
  // Prepares `p` on the server unless it is prepared in this session.
  Status EnsurePrepared(Prepared* p);

  Result<Statement> Prepare(std::string_view sql) override {
    FLOWRAG_ASSIGN_OR_RETURN(Prepared * prepared, PrepareCached(sql));
    return Statement(std::make_unique<PostgresStatement>(this, prepared));
  }

  Status Exec(std::string_view sql) override;

  Status BeginWrite() override {
    return Begin("BEGIN; SELECT pg_catalog.pg_advisory_xact_lock(" +
                 std::to_string(WorkspaceLockKey(url_.workspace)) + ")");
  }

  Status BeginRead() override { return Begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); }

  Status Commit() override {
    // A queued statement that failed fails the transaction whole.
    Status flushed = Flush();
    if (!flushed.ok()) {
      in_transaction_ = false;
      if (PQstatus(conn_) == CONNECTION_OK && PQtransactionStatus(conn_) != PQTRANS_IDLE) {
        PQclear(PQexec(conn_, "ROLLBACK"));
      }
      return Status(flushed.code(), flushed.message() + "; the transaction was rolled back");
    }
    in_transaction_ = false;
    if (PQstatus(conn_) != CONNECTION_OK) {
      return Status::Unavailable(url_.redacted +
                                 ": commit: the connection was lost; the server rolled back");
    }
    FLOWRAG_RETURN_IF_ERROR(RequireTransaction("commit"));
    const bool failed = PQtransactionStatus(conn_) == PQTRANS_INERROR;
    FLOWRAG_RETURN_IF_ERROR(Exec("COMMIT"));
    if (failed) {
      return Status::FailedPrecondition(
          url_.redacted + ": commit: an earlier statement of the transaction failed; it was " +
          "rolled back");
    }
    return Status::Ok();
  }

  Status Rollback() override {
    (void)Flush();  // what was queued is discarded, errors included
    in_transaction_ = false;
    if (PQstatus(conn_) != CONNECTION_OK) {
      return Status::Unavailable(url_.redacted +
                                 ": rollback: the connection was lost; the server rolled back");
    }
    FLOWRAG_RETURN_IF_ERROR(RequireTransaction("rollback"));
    return Exec("ROLLBACK");
  }

  Status Flush() override { return Drain(nullptr, nullptr); }

  int64_t Changes() override { return changes_; }
  int64_t TotalChanges() override { return total_changes_; }

  Status AnnounceChange() override {
    FLOWRAG_ASSIGN_OR_RETURN(Statement s, Prepare("SELECT pg_notify('flowrag', ?)"));
    return s.Bind(1, std::string_view(url_.workspace)).Run();
  }
  Result<bool> WaitForChange(std::chrono::milliseconds timeout) override;

  Result<std::vector<std::string>> TableNames() override {
    FLOWRAG_ASSIGN_OR_RETURN(
        Statement s, Prepare("SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = ? "
                             "ORDER BY tablename"));
    s.Bind(1, std::string_view(url_.workspace));
    std::vector<std::string> names;
    while (true) {
      FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      names.emplace_back(s.Text(0));
    }
    return names;
  }

  // PostgreSQL checks each page as it reads it (header sanity, plus the
  // checksum when the cluster has data checksums) and reports damage as
  // XX001/XX002, mapped to Corruption; there is no cheap whole-store check
  // to run here (amcheck is an extension and reads everything).
  Status CheckIntegrity() override { return Status::Ok(); }

  // Nothing to switch: the server's settings serve readers and writers.
  Status PrepareForWrites() override { return Status::Ok(); }

  // Tables with their indexes and TOAST data.
  Result<int64_t> StorageBytes() override {
    FLOWRAG_ASSIGN_OR_RETURN(
        Statement s,
        Prepare("SELECT CAST(COALESCE(SUM(pg_catalog.pg_total_relation_size(c.oid)), 0) AS BIGINT) "
                "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relkind IN ('r', 'm')"));
    s.Bind(1, std::string_view(url_.workspace));
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    return row ? s.Int(0) : int64_t{0};
  }

  // The table needs a BIGINT column named `rowid`. substring() of a TOASTed
  // bytea fetches only the slices it needs when the column is stored
  // uncompressed (STORAGE EXTERNAL); otherwise the value is decompressed
  // on the server, but only `n` bytes cross the wire.
  // A snapshot is read as many small ranges of each chunk, and every
  // statement is a round trip: the last value read (up to kCachedBlobBytes)
  // is kept, so the ranges of one chunk cost one query. Values read this
  // way are never updated in place (connection.h); the cache is also
  // dropped after any write of this connection.
  Status ReadBlobRange(std::string_view table, std::string_view column, int64_t rowid,
                       uint64_t offset, void* out, size_t n) override {
    const std::string what =
        std::string(table) + "." + std::string(column) + " row " + std::to_string(rowid);
    if (blob_key_ != what || blob_changes_ != total_changes_) {
      FLOWRAG_RETURN_IF_ERROR(CacheBlob(table, column, rowid, what));
    }
    if (blob_cached_) {
      if (offset > blob_.size() || n > blob_.size() - offset) {
        return Status::Corruption(url_.redacted + ": " + what + " holds " +
                                  std::to_string(blob_.size()) + " bytes, " +
                                  std::to_string(offset + n) + " wanted");
      }
      if (n > 0) std::memcpy(out, blob_.data() + offset, n);
      return Status::Ok();
    }
    FLOWRAG_ASSIGN_OR_RETURN(std::string t, QuoteIdentifier(table));
    FLOWRAG_ASSIGN_OR_RETURN(std::string c, QuoteIdentifier(column));
    const std::string sql = "SELECT substring(" + c + " FROM ? FOR ?), octet_length(" + c +
                            ") FROM " + t + " WHERE rowid = ?";
    FLOWRAG_ASSIGN_OR_RETURN(Statement s, Prepare(sql));
    // A value holds at most 1 GiB: a larger range fails the size check below.
    constexpr uint64_t kIntMax = std::numeric_limits<int32_t>::max();
    s.Bind(1, static_cast<int64_t>(std::min<uint64_t>(offset + 1, kIntMax)));
    s.Bind(2, static_cast<int64_t>(std::min<uint64_t>(n, kIntMax)));
    s.Bind(3, rowid);
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return Status::NotFound(url_.redacted + ": " + what + " not found");
    const uint64_t size = static_cast<uint64_t>(s.Int(1));
    if (offset > size || n > size - offset) {
      return Status::Corruption(url_.redacted + ": " + what + " holds " + std::to_string(size) +
                                " bytes, " + std::to_string(offset + n) + " wanted");
    }
    const std::string_view bytes = s.Blob(0);
    if (bytes.size() != n) {
      return Status::Corruption(url_.redacted + ": " + what + ": " + std::to_string(n) +
                                " bytes wanted at " + std::to_string(offset) + ", " +
                                std::to_string(bytes.size()) + " read");
    }
    if (n > 0) std::memcpy(out, bytes.data(), n);
    return Status::Ok();
  }

  // Reads the whole value into blob_ when it is at most kCachedBlobBytes
  // (blob_cached_), else leaves ReadBlobRange to fetch ranges.
  Status CacheBlob(std::string_view table, std::string_view column, int64_t rowid,
                   const std::string& what) {
    static constexpr int64_t kCachedBlobBytes = int64_t{16} << 20;
    blob_key_.clear();
    blob_.clear();
    blob_cached_ = false;
    FLOWRAG_ASSIGN_OR_RETURN(std::string t, QuoteIdentifier(table));
    FLOWRAG_ASSIGN_OR_RETURN(std::string c, QuoteIdentifier(column));
    FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                             Prepare("SELECT CASE WHEN octet_length(" + c + ") <= ? THEN " + c +
                                     " END FROM " + t + " WHERE rowid = ?"));
    s.Bind(1, kCachedBlobBytes).Bind(2, rowid);
    FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return Status::NotFound(url_.redacted + ": " + what + " not found");
    blob_key_ = what;
    blob_changes_ = total_changes_;
    if (!s.IsNull(0)) {
      blob_.assign(s.Blob(0));
      blob_cached_ = true;
    }
    return Status::Ok();
  }

  // For statements.
  bool in_transaction() const { return in_transaction_; }
  // Runs prepared statement `p` with `params` and returns its result (OK or
  // with rows); behind the statements queued before it, in one round trip.
  Result<PGresult*> RunPrepared(const Prepared& p, const EncodedParams& params);
  // Sends `p` with `params` in pipeline mode without waiting for its result
  // (Statement::Queue); waits for all when kMaxQueued are outstanding.
  Status SendQueued(const Prepared& p, const EncodedParams& params, int64_t* changes,
                    int64_t* id);
  PGconn* conn() { return conn_; }
  const PostgresUrl& url() const { return url_; }
  Status Error(const PGresult* result, std::string_view what) const;
  void CountChanges(const PGresult* result);

 private:
  Result<Prepared*> PrepareCached(std::string_view sql);

  Result<std::string> QuoteIdentifier(std::string_view name) {
    char* quoted = PQescapeIdentifier(conn_, name.data(), name.size());
    if (quoted == nullptr) {
      return Status::InvalidArgument(url_.redacted + ": bad identifier \"" + std::string(name) +
                                     "\": " + FirstLine(PQerrorMessage(conn_)));
    }
    std::string out(quoted);
    PQfreemem(quoted);
    return out;
  }

  // SQLite's answer to COMMIT or ROLLBACK without a transaction.
  Status RequireTransaction(std::string_view what) const {
    if (PQtransactionStatus(conn_) != PQTRANS_IDLE) return Status::Ok();
    return Status::Internal(url_.redacted + ": " + std::string(what) +
                            ": no transaction is active");
  }

  Result<bool> WorkspaceExists();

  // Ends the pipeline: a sync, then the queued statements' results (their
  // changes counted, the first error kept), then, when `own` is not null,
  // the result of the statement `own_sql` sent last (left to the caller when
  // it succeeded); back out of pipeline mode. A no-op without a pipeline.
  Status Drain(const Prepared* own_sql, PGresult** own);

  // A statement sent in pipeline mode whose result is not read yet.
  struct QueuedStatement {
    const Prepared* prepared;
    int64_t* changes;  // Statement::Queue()'s counter, or null
    int64_t* id;       // QueueReturningId()'s target, or null
  };
  // Bounds the memory of one pipeline (libpq's output buffer and the
  // server's results, which libpq reads while it writes).
  static constexpr size_t kMaxQueued = 1000;

  PostgresUrl url_;
  PGconn* conn_;
  // By SQL text as the caller wrote it; nodes keep their address.
  std::unordered_map<std::string, Prepared> prepared_;
  int64_t changes_ = 0;
  int64_t total_changes_ = 0;
  bool listening_ = false;        // LISTEN flowrag sent (WaitForChange)
  bool in_transaction_ = false;   // between a Begin that succeeded and Commit/Rollback
  int64_t session_ = 1;           // incremented by every reconnection
  std::vector<QueuedStatement> queued_;  // in pipeline mode, in the order sent
  SqlConnectionOptions options_;  // as opened (Setup), for reconnections
  // ReadBlobRange's last value (CacheBlob).
  std::string blob_key_;  // "table.column row N"; empty when none
  std::string blob_;
  bool blob_cached_ = false;
  int64_t blob_changes_ = 0;  // total_changes_ when read
};

Status PostgresConnection::Error(const PGresult* result, std::string_view what) const {
  std::string state, detail;
  if (result != nullptr) {
    if (const char* s = PQresultErrorField(result, PG_DIAG_SQLSTATE)) state = s;
    if (const char* m = PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY)) detail = m;
    if (detail.empty()) detail = FirstLine(PQresultErrorMessage(result));
  }
  if (detail.empty()) detail = FirstLine(PQerrorMessage(conn_));
  if (detail.empty()) detail = "unknown error";
  std::string msg = url_.redacted + ": " + std::string(what) + ": " + detail;
  if (!state.empty()) msg += " (SQLSTATE " + state + ")";
  return FromSqlState(state, PQstatus(conn_) != CONNECTION_OK, RedactPassword(url_, msg));
}

void PostgresConnection::CountChanges(const PGresult* result) {
  const std::string_view command = PQcmdStatus(const_cast<PGresult*>(result));
  if (!command.starts_with("INSERT ") && !command.starts_with("UPDATE ") &&
      !command.starts_with("DELETE ") && !command.starts_with("MERGE ")) {
    return;
  }
  int64_t rows = 0;
  const std::string_view tuples = PQcmdTuples(const_cast<PGresult*>(result));
  std::from_chars(tuples.data(), tuples.data() + tuples.size(), rows);
  changes_ = rows;
  total_changes_ += rows;
}

Result<Prepared*> PostgresConnection::PrepareCached(std::string_view sql) {
  auto it = prepared_.find(std::string(sql));
  if (it != prepared_.end()) return &it->second;
  const std::string what = "prepare " + Excerpt(sql);
  if (sql.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument(url_.redacted + ": " + what + ": the SQL holds a NUL byte");
  }
  Result<PostgresSql> rewritten = RewritePlaceholders(sql);
  if (!rewritten.ok()) {
    return Status::InvalidArgument(url_.redacted + ": " + what + ": " +
                                   rewritten.status().message());
  }
  Prepared prepared;
  prepared.name = "flowrag_" + std::to_string(prepared_.size() + 1);
  prepared.sql = std::string(sql);
  prepared.rewritten = rewritten->text;
  // A number that does not occur could not be typed by the server: text.
  prepared.param_types.assign(rewritten->param_count, 0);
  for (int k = 0; k < rewritten->param_count; ++k) {
    if (!rewritten->used[k]) prepared.param_types[k] = kTextOid;
  }
  prepared.session = 0;
  FLOWRAG_RETURN_IF_ERROR(EnsurePrepared(&prepared));
  auto [pos, inserted] = prepared_.emplace(std::string(sql), std::move(prepared));
  return &pos->second;
}

Status PostgresConnection::EnsurePrepared(Prepared* p) {
  FLOWRAG_RETURN_IF_ERROR(EnsureConnected());
  if (p->session == session_) {
    if (++p->executions < p->replan_at) return Status::Ok();
    FLOWRAG_RETURN_IF_ERROR(Flush());  // DEALLOCATE and PQprepare wait
    // The server keeps the plan it settled on after a few executions, made
    // for the table sizes of that moment: a lookup planned on a nearly
    // empty table scans it whole for the rest of a bulk load (2wiki's
    // entity-key lookups: 0.18 ms instead of 0.008 ms). Prepared again at
    // its 100th, 400th, 1600th, ... execution, it follows the tables' growth.
    p->replan_at *= 4;
    FLOWRAG_RETURN_IF_ERROR(Exec("DEALLOCATE " + p->name));
  }
  FLOWRAG_RETURN_IF_ERROR(Flush());  // PQprepare waits
  const std::string what = "prepare " + Excerpt(p->sql);
  // First time: unused numbers text, the rest for the server to infer
  // (PrepareCached); after a reconnection: the types it inferred then.
  const std::vector<Oid>& types = p->param_types;
  PGresult* result =
      PQprepare(conn_, p->name.c_str(), p->rewritten.c_str(), static_cast<int>(types.size()),
                types.empty() ? nullptr : types.data());
  if (PQresultStatus(result) != PGRES_COMMAND_OK) {
    Status st = Error(result, what);
    PQclear(result);
    return st;
  }
  PQclear(result);
  if (p->session == 0) {
    // The types the server inferred decide how each value is sent.
    result = PQdescribePrepared(conn_, p->name.c_str());
    if (PQresultStatus(result) != PGRES_COMMAND_OK) {
      Status st = Error(result, what);
      PQclear(result);
      return st;
    }
    p->param_types.resize(PQnparams(result));
    for (int k = 0; k < PQnparams(result); ++k) p->param_types[k] = PQparamtype(result, k);
    PQclear(result);
  }
  p->session = session_;
  return Status::Ok();
}

Status PostgresConnection::Begin(const std::string& sql) {
  FLOWRAG_RETURN_IF_ERROR(EnsureConnected());
  if (PQtransactionStatus(conn_) == PQTRANS_INTRANS ||
      PQtransactionStatus(conn_) == PQTRANS_INERROR) {
    return Status::Internal(url_.redacted + ": begin: a transaction is already open");
  }
  Status st = Exec(sql);
  if (!st.ok() && PQtransactionStatus(conn_) != PQTRANS_IDLE && PQstatus(conn_) == CONNECTION_OK) {
    PQclear(PQexec(conn_, "ROLLBACK"));  // no transaction left open
  }
  in_transaction_ = st.ok();
  return st;
}

Status PostgresConnection::EnsureConnected() {
  if (PQstatus(conn_) == CONNECTION_OK) return Status::Ok();
  if (in_transaction_) {
    return Status::Unavailable(url_.redacted +
                               ": the connection was lost inside a transaction");
  }
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) {
    return Status::Unavailable(
        url_.redacted + ": reconnecting: " + RedactPassword(url_, OneLine(PQerrorMessage(conn_))));
  }
  ++session_;
  listening_ = false;
  queued_.clear();
  return Setup(options_);
}

Status PostgresConnection::Exec(std::string_view sql) {
  FLOWRAG_RETURN_IF_ERROR(EnsureConnected());
  FLOWRAG_RETURN_IF_ERROR(Flush());  // the simple protocol has no pipeline
  const std::string what = "exec " + Excerpt(sql);
  if (sql.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument(url_.redacted + ": " + what + ": the SQL holds a NUL byte");
  }
  const std::string text(sql);
  if (PQsendQuery(conn_, text.c_str()) == 0) return Error(nullptr, what);
  // Every statement's result, to count each one's changes and keep the
  // first error.
  Status first = Status::Ok();
  while (PGresult* result = PQgetResult(conn_)) {
    switch (PQresultStatus(result)) {
      case PGRES_COMMAND_OK:
      case PGRES_TUPLES_OK:
        CountChanges(result);
        break;
      case PGRES_EMPTY_QUERY:
        break;
      case PGRES_COPY_IN:
        PQputCopyEnd(conn_, "flowrag: COPY is not supported");
        break;
      case PGRES_COPY_OUT: {
        char* buffer = nullptr;
        while (PQgetCopyData(conn_, &buffer, 0) > 0) PQfreemem(buffer);
        if (first.ok()) {
          first = Status::InvalidArgument(url_.redacted + ": " + what + ": COPY is not supported");
        }
        break;
      }
      default:
        if (first.ok()) first = Error(result, what);
        break;
    }
    PQclear(result);
    if (PQstatus(conn_) != CONNECTION_OK) break;
  }
  return first;
}

Result<PGresult*> PostgresConnection::RunPrepared(const Prepared& p, const EncodedParams& params) {
  const int n = static_cast<int>(params.values.size());
  PGresult* result = nullptr;
  if (queued_.empty()) {
    result = PQexecPrepared(conn_, p.name.c_str(), n, params.values.data(), params.lengths.data(),
                            params.formats.data(), /*resultFormat=*/1);
  } else {
    if (PQsendQueryPrepared(conn_, p.name.c_str(), n, params.values.data(),
                            params.lengths.data(), params.formats.data(),
                            /*resultFormat=*/1) == 0) {
      Status st = Error(nullptr, "step " + Excerpt(p.sql));
      Status queued = Drain(nullptr, nullptr);
      return queued.ok() ? st : queued;  // the earlier failure first
    }
    FLOWRAG_RETURN_IF_ERROR(Drain(&p, &result));
  }
  const ExecStatusType status = PQresultStatus(result);
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    Status st = Error(result, "step " + Excerpt(p.sql));
    PQclear(result);
    return st;
  }
  return result;
}

Status PostgresConnection::SendQueued(const Prepared& p, const EncodedParams& params,
                                      int64_t* changes, int64_t* id) {
  if (PQpipelineStatus(conn_) == PQ_PIPELINE_OFF && PQenterPipelineMode(conn_) == 0) {
    return Error(nullptr, "step " + Excerpt(p.sql) + ": entering pipeline mode");
  }
  if (PQsendQueryPrepared(conn_, p.name.c_str(), static_cast<int>(params.values.size()),
                          params.values.data(), params.lengths.data(), params.formats.data(),
                          /*resultFormat=*/1) == 0) {
    Status st = Error(nullptr, "step " + Excerpt(p.sql));
    Status queued = Drain(nullptr, nullptr);
    return queued.ok() ? st : queued;
  }
  queued_.push_back({&p, changes, id});
  if (queued_.size() >= kMaxQueued) return Flush();
  return Status::Ok();
}

Status PostgresConnection::Drain(const Prepared* own_sql, PGresult** own) {
  if (PQpipelineStatus(conn_) == PQ_PIPELINE_OFF) {
    queued_.clear();
    return Status::Ok();
  }
  std::vector<QueuedStatement> queued;
  queued.swap(queued_);
  Status first = Status::Ok();
  const auto lost = [&](std::string_view what) {
    if (first.ok()) first = Error(nullptr, what);
  };
  const size_t expected = queued.size() + (own != nullptr ? 1 : 0);
  const auto sql_of = [&](size_t i) -> const std::string& {
    return i < queued.size() ? queued[i].prepared->sql : own_sql->sql;
  };
  // Results come statement by statement, each closed by a null, then the
  // sync's. Two nulls in a row mean nothing more is coming.
  bool synced = false;
  if (PQpipelineSync(conn_) == 0) {
    lost(expected > 0 ? "step " + Excerpt(sql_of(0)) : std::string("sync"));
  } else {
    size_t i = 0;
    bool after_null = false;
    while (PQstatus(conn_) == CONNECTION_OK) {
      PGresult* result = PQgetResult(conn_);
      if (result == nullptr) {
        if (after_null) break;
        after_null = true;
        ++i;
        continue;
      }
      after_null = false;
      const ExecStatusType status = PQresultStatus(result);
      if (status == PGRES_PIPELINE_SYNC) {
        PQclear(result);
        synced = true;
        break;
      }
      if (i >= expected) {
        PQclear(result);  // not ours: cannot happen
        continue;
      }
      if (i == queued.size()) {
        // The caller's statement: its result is the caller's to judge.
        if (first.ok() && *own == nullptr) {
          *own = result;
          result = nullptr;
        }
      } else if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
        CountChanges(result);
        if (queued[i].changes != nullptr) *queued[i].changes += changes_;
        if (queued[i].id != nullptr && PQntuples(result) > 0 && PQnfields(result) > 0 &&
            !PQgetisnull(result, 0, 0)) {
          *queued[i].id = IntValue(result, 0, 0);
        }
      } else if (status != PGRES_PIPELINE_ABORTED && first.ok()) {
        first = Error(result, "step " + Excerpt(sql_of(i)));  // later ones did not run
      }
      PQclear(result);
    }
    if (!synced && first.ok()) {
      lost(expected > 0 ? "step " + Excerpt(sql_of(std::min(i, expected - 1)))
                        : std::string("sync"));
    }
  }
  // A lost connection leaves the pipeline to the reconnection (PQreset).
  if (synced && PQexitPipelineMode(conn_) == 0 && first.ok()) {
    first = Error(nullptr, "leaving pipeline mode");
  }
  if (!first.ok() && own != nullptr && *own != nullptr) {
    PQclear(*own);
    *own = nullptr;
  }
  return first;
}

Result<bool> PostgresConnection::WorkspaceExists() {
  const char* values[1] = {url_.workspace.c_str()};
  PGresult* result = PQexecParams(conn_, "SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1",
                                  1, nullptr, values, nullptr, nullptr, 0);
  if (PQresultStatus(result) != PGRES_TUPLES_OK) {
    Status st = Error(result, "looking up the workspace");
    PQclear(result);
    return st;
  }
  const bool exists = PQntuples(result) > 0;
  PQclear(result);
  return exists;
}

Status PostgresConnection::Setup(const SqlConnectionOptions& options) {
  options_ = options;
  // Notices ("schema already exists, skipping") would go to stderr.
  PQsetNoticeProcessor(
      conn_, [](void*, const char*) {}, nullptr);
  FLOWRAG_ASSIGN_OR_RETURN(const std::string schema, QuoteIdentifier(url_.workspace));
  FLOWRAG_ASSIGN_OR_RETURN(bool exists, WorkspaceExists());
  if (!exists) {
    if (options.read_only || !options.create_if_missing) {
      return Status::NotFound(url_.redacted + ": workspace \"" + url_.workspace +
                              "\" does not exist (no schema of that name in the database)");
    }
    Status created = Exec("CREATE SCHEMA IF NOT EXISTS " + schema);
    if (!created.ok()) {
      // Two processes creating one workspace: the loser sees a unique
      // violation on the catalog although the schema now exists.
      FLOWRAG_ASSIGN_OR_RETURN(bool now, WorkspaceExists());
      if (!now) return created;
    }
  }
  // lock_timeout 0 would wait forever; a zero busy timeout means "don't wait".
  const int lock_ms = std::max(options.busy_timeout_ms, 1);
  std::string settings =
      "SET search_path TO " + schema + "; SET lock_timeout = " + std::to_string(lock_ms);
  if (options.read_only) settings += "; SET default_transaction_read_only = on";
  return Exec(settings);
}

Status PostgresStatement::Encode(EncodedParams* out) const {
  const std::string& sql = prepared_->sql;
  const PostgresUrl& url = conn_->url();
  const auto invalid = [&](const std::string& why) {
    return Status::InvalidArgument(url.redacted + ": step " + Excerpt(sql) + ": " + why);
  };
  if (!bind_error_.empty()) return invalid(bind_error_);
  const size_t n = params_.size();
  out->values.assign(n, nullptr);
  out->lengths.assign(n, 0);
  out->formats.assign(n, 0);
  out->encoded.assign(n, std::string());
  for (size_t k = 0; k < n; ++k) {
    const Param& p = params_[k];
    const Oid type = prepared_->param_types[k];
    const std::string number = std::to_string(k + 1);
    std::string& e = out->encoded[k];
    switch (p.kind) {
      case Param::kNull:
        continue;
      case Param::kInt:
        if (type == kInt8Oid) {
          AppendBigEndian(&e, static_cast<uint64_t>(p.i), 8);
          out->formats[k] = 1;
        } else if (type == kBoolOid) {
          e = p.i != 0 ? "true" : "false";  // SQLite's truth of an integer
        } else {
          e = std::to_string(p.i);
        }
        break;
      case Param::kDouble:
        if (type == kFloat8Oid) {
          uint64_t bits;
          std::memcpy(&bits, &p.d, sizeof(bits));
          AppendBigEndian(&e, bits, 8);
          out->formats[k] = 1;
        } else if ((type == kInt8Oid || type == kInt4Oid || type == kInt2Oid) &&
                   p.d == std::trunc(p.d) && std::fabs(p.d) < 9.2e18) {
          e = std::to_string(static_cast<int64_t>(p.d));  // as SQLite stores 2.0 in an INTEGER
        } else {
          e = FormatDouble(p.d);
        }
        break;
      case Param::kText:
      case Param::kBlob:
        if (p.bytes.size() > kMaxValueBytes) {
          return invalid("parameter " + number + " holds " + std::to_string(p.bytes.size()) +
                         " bytes, more than PostgreSQL's 1 GiB limit");
        }
        if (type == kByteaOid) {
          out->values[k] = p.bytes.data();
          out->lengths[k] = static_cast<int>(p.bytes.size());
          out->formats[k] = 1;
          continue;
        }
        if (p.bytes.find('\0') != std::string::npos) {
          return invalid("parameter " + number + " holds a NUL byte, which PostgreSQL " +
                         "text cannot store (bind it as a blob into a BYTEA column)");
        }
        out->values[k] = p.bytes.c_str();
        continue;
    }
  }
  // After the loop: the strings no longer move.
  for (size_t k = 0; k < n; ++k) {
    if (out->values[k] == nullptr && params_[k].kind != Param::kNull) {
      out->values[k] = out->encoded[k].data();
      out->lengths[k] = static_cast<int>(out->encoded[k].size());
    }
  }
  return Status::Ok();
}

Status PostgresStatement::Execute() {
  FLOWRAG_RETURN_IF_ERROR(conn_->EnsurePrepared(prepared_));
  EncodedParams params;
  FLOWRAG_RETURN_IF_ERROR(Encode(&params));
  FLOWRAG_ASSIGN_OR_RETURN(result_, conn_->RunPrepared(*prepared_, params));
  conn_->CountChanges(result_);
  rows_ = PQntuples(result_);
  row_ = -1;
  return Status::Ok();
}

// Outside a transaction a statement is its own transaction: run it now,
// so that a pipeline never spans several implicit transactions.
Status PostgresStatement::QueueNow(int64_t* changes, int64_t* id) {
  if (!conn_->in_transaction()) {
    FLOWRAG_RETURN_IF_ERROR(Execute());
    if (changes != nullptr) *changes += conn_->Changes();
    if (id != nullptr && rows_ > 0) {
      row_ = 0;
      *id = Int(0);
    }
    return Status::Ok();
  }
  FLOWRAG_RETURN_IF_ERROR(conn_->EnsurePrepared(prepared_));
  EncodedParams params;
  FLOWRAG_RETURN_IF_ERROR(Encode(&params));
  return conn_->SendQueued(*prepared_, params, changes, id);
}

Status PostgresStatement::Queue(int64_t* changes, int64_t* id) {
  Status st = QueueNow(changes, id);
  Reset();
  return st;
}

Result<bool> PostgresStatement::Step() {
  if (result_ == nullptr) FLOWRAG_RETURN_IF_ERROR(Execute());
  if (row_ < rows_) ++row_;
  text_.assign(static_cast<size_t>(PQnfields(result_)), std::string());
  return row_ < rows_;
}

}  // namespace

Result<PostgresSql> RewritePlaceholders(std::string_view sql) {
  PostgresSql out;
  out.text.reserve(sql.size() + 8);
  bool sequential = false, numbered = false;
  const auto use = [&](int64_t number) -> Status {
    if (number < 1 || number > kMaxParams) {
      return Status::InvalidArgument("placeholder number " + std::to_string(number) +
                                     " out of range 1.." + std::to_string(kMaxParams));
    }
    const int k = static_cast<int>(number);
    if (k > out.param_count) {
      out.param_count = k;
      out.used.resize(k, false);
    }
    out.used[k - 1] = true;
    out.text += "$" + std::to_string(k);
    return Status::Ok();
  };
  // The digits at `i`, as a number saturated above the limit.
  const auto digits = [&](size_t* i) {
    int64_t v = 0;
    while (*i < sql.size() && IsDigit(sql[*i])) {
      v = std::min<int64_t>(v * 10 + (sql[*i] - '0'), kMaxParams + 1);
      ++*i;
    }
    return v;
  };
  const size_t n = sql.size();
  size_t i = 0;
  while (i < n) {
    const char c = sql[i];
    const char next = i + 1 < n ? sql[i + 1] : '\0';
    size_t end = i + 1;
    if (c == '\'') {
      // 'it''s'; E'\'' also escapes with backslashes.
      const bool backslash =
          i > 0 && (sql[i - 1] == 'E' || sql[i - 1] == 'e') && (i < 2 || !IsIdentChar(sql[i - 2]));
      end = EndOfQuoted(sql, end, '\'', backslash);
    } else if (c == '"') {
      end = EndOfQuoted(sql, end, '"', /*backslash=*/false);
    } else if (c == '-' && next == '-') {
      const size_t newline = sql.find('\n', i);
      end = newline == std::string_view::npos ? n : newline + 1;
    } else if (c == '/' && next == '*') {
      // Block comments nest in PostgreSQL.
      int depth = 1;
      end = i + 2;
      while (end < n && depth > 0) {
        if (sql[end] == '/' && end + 1 < n && sql[end + 1] == '*') {
          ++depth;
          end += 2;
        } else if (sql[end] == '*' && end + 1 < n && sql[end + 1] == '/') {
          --depth;
          end += 2;
        } else {
          ++end;
        }
      }
    } else if (c == '?' || (c == '$' && IsDigit(next) && (i == 0 || !IsIdentChar(sql[i - 1])))) {
      size_t j = i + 1;
      const bool has_number = j < n && IsDigit(sql[j]);
      int64_t number;
      if (has_number) {
        number = digits(&j);
        numbered = true;
      } else {
        number = out.param_count + 1;
        sequential = true;
      }
      if (sequential && numbered) {
        return Status::InvalidArgument(
            "mixes ? with numbered ?N placeholders (use one style per statement)");
      }
      FLOWRAG_RETURN_IF_ERROR(use(number));
      i = j;
      continue;
    } else if (c == '$' && (i == 0 || !IsIdentChar(sql[i - 1]))) {
      // A dollar-quoted string: $tag$ ... $tag$.
      size_t j = i + 1;
      while (j < n && IsIdentChar(sql[j]) && sql[j] != '$') ++j;
      if (j < n && sql[j] == '$') {
        const std::string_view tag = sql.substr(i, j - i + 1);
        const size_t close = sql.find(tag, j + 1);
        end = close == std::string_view::npos ? n : close + tag.size();
      }
    }
    out.text.append(sql.substr(i, end - i));
    i = end;
  }
  return out;
}

int64_t WorkspaceLockKey(std::string_view workspace) {
  // FNV-1a over a prefix and the name: other applications' advisory locks
  // are unlikely to use the same key.
  uint64_t h = 14695981039346656037ull;
  for (std::string_view part : {std::string_view("flowrag workspace "), workspace}) {
    for (unsigned char c : part) {
      h ^= c;
      h *= 1099511628211ull;
    }
  }
  return static_cast<int64_t>(h);
}

// Notifications arrive on the connection's socket: wait for it to be
// readable, let libpq read what came, then look for one of this workspace.
// Notifications already read by an earlier statement are seen first.
Result<bool> PostgresConnection::WaitForChange(std::chrono::milliseconds timeout) {
  if (!listening_) {
    FLOWRAG_RETURN_IF_ERROR(Exec("LISTEN flowrag"));
    listening_ = true;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    bool changed = false;
    while (PGnotify* n = PQnotifies(conn_)) {
      changed |= std::string_view(n->relname) == "flowrag" && url_.workspace == n->extra;
      PQfreemem(n);
    }
    if (changed) return true;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd fd{PQsocket(conn_), POLLIN, 0};
    if (fd.fd < 0) return Status::Unavailable(url_.redacted + ": the connection is closed");
    const int ready = ::poll(&fd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) {
      return Status::Unavailable(url_.redacted + ": waiting for changes: " + std::strerror(errno));
    }
    if (ready > 0 && PQconsumeInput(conn_) == 0) {
      return Status::Unavailable(url_.redacted + ": waiting for changes: " +
                                 RedactPassword(url_, OneLine(PQerrorMessage(conn_))));
    }
  }
}

Result<std::unique_ptr<SqlConnection>> OpenPostgresConnection(const std::string& url,
                                                              const SqlConnectionOptions& options) {
  FLOWRAG_ASSIGN_OR_RETURN(PostgresUrl parsed, ParsePostgresUrl(url));
  char* error = nullptr;
  PQconninfoOption* conninfo = PQconninfoParse(parsed.conninfo.c_str(), &error);
  if (conninfo == nullptr) {
    std::string detail = error != nullptr ? OneLine(error) : "out of memory";
    PQfreemem(error);
    return Status::InvalidArgument(
        parsed.redacted + ": not a valid PostgreSQL URL: " + RedactPassword(parsed, detail));
  }
  PQconninfoFree(conninfo);
  PGconn* conn = PQconnectdb(parsed.conninfo.c_str());
  if (conn == nullptr) return Status::Unavailable(parsed.redacted + ": connect: out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    const std::string detail = OneLine(PQerrorMessage(conn));
    PQfinish(conn);
    return ConnectError(parsed, detail);
  }
  auto connection = std::make_unique<PostgresConnection>(std::move(parsed), conn);
  FLOWRAG_RETURN_IF_ERROR(connection->Setup(options));
  return std::unique_ptr<SqlConnection>(std::move(connection));
}

}  // namespace flowrag
