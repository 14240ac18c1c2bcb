// The bounded printf()/format() of bounded_functions.h: the width and
// precision check, and the built-in printf run on a private connection.
#include "sql/bounded_functions.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

namespace flowrag {
namespace {

constexpr char kConsumingConversions[] = "dsgzqQwcouxXfeEGipr";  // take one argument

// A '*' width or precision: SQLite reads the argument as an int (the low 32
// bits of the integer) and uses its magnitude.
int64_t StarValue(int64_t arg) {
  const auto v = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(arg)));
  return v < 0 ? -static_cast<int64_t>(v) : v;
}

// State of one printf() format scan.
class FormatScan {
 public:
  FormatScan(std::string_view format, const std::vector<int64_t>& int_args)
      : f_(format), args_(int_args) {}

  std::vector<int64_t> Run() {
    while (i_ < f_.size()) {
      if (f_[i_++] != '%') continue;
      if (i_ >= f_.size()) break;
      const char conversion = Spec();
      if (conversion == 'n' || conversion == '%') {
        ++i_;
      } else if (conversion != '\0' && std::strchr(kConsumingConversions, conversion) != nullptr) {
        ++arg_;
        ++i_;
      } else {
        break;  // SQLite stops formatting at an unknown conversion
      }
    }
    return std::move(out_);
  }

 private:
  char At() const { return i_ < f_.size() ? f_[i_] : '\0'; }
  int64_t NextArg() {
    const int64_t v = arg_ < args_.size() ? args_[arg_] : 0;
    ++arg_;
    return v;
  }
  int64_t Digits() {
    uint32_t v = 0;
    while (At() >= '0' && At() <= '9') v = v * 10 + static_cast<uint32_t>(f_[i_++] - '0');
    return v & 0x7fffffff;
  }

  // Flags, width, precision and length of one conversion, as SQLite's loop
  // reads them; returns the conversion character ('\0' at the end).
  char Spec() {
    while (true) {
      const char c = At();
      switch (c) {
        case '-':  // flags
        case '+':
        case ' ':
        case '#':
        case '!':
        case '0':
        case ',':
          ++i_;
          continue;
        case 'l':
          ++i_;
          if (At() == 'l') ++i_;
          return At();
        case '*':
          out_.push_back(StarValue(NextArg()));
          ++i_;
          if (At() == '.' || At() == 'l') continue;
          return At();
        case '.':
          ++i_;
          if (At() == '*') {
            out_.push_back(StarValue(NextArg()));
            ++i_;
          } else {
            out_.push_back(Digits());
          }
          if (At() == 'l') continue;
          return At();
        default:
          if (c < '1' || c > '9') return c;
          out_.push_back(Digits());
          if (At() == '.' || At() == 'l') continue;
          return At();
      }
    }
  }

  std::string_view f_;
  const std::vector<int64_t>& args_;
  size_t i_ = 0;
  size_t arg_ = 0;
  std::vector<int64_t> out_;
};

// The function's user data: the bound and the helper connection that runs
// the built-in printf, with one statement per argument count.
class BoundedPrintf {
 public:
  explicit BoundedPrintf(int64_t max_width) : max_width_(max_width) {}
  ~BoundedPrintf() {
    for (sqlite3_stmt* s : by_arity_) sqlite3_finalize(s);
    if (helper_ != nullptr) sqlite3_close_v2(helper_);
  }
  BoundedPrintf(const BoundedPrintf&) = delete;
  BoundedPrintf& operator=(const BoundedPrintf&) = delete;

  static void Call(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
    static_cast<BoundedPrintf*>(sqlite3_user_data(ctx))->Format(ctx, argc, argv);
  }
  static void Destroy(void* p) { delete static_cast<BoundedPrintf*>(p); }

 private:
  void Format(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
    if (argc < 1) return;  // printf() is NULL
    const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(argv[0]));
    if (text == nullptr) return;  // a NULL format gives NULL
    const std::string_view format(text, static_cast<size_t>(sqlite3_value_bytes(argv[0])));
    std::vector<int64_t> int_args;
    for (int a = 1; a < argc; ++a) int_args.push_back(sqlite3_value_int64(argv[a]));
    for (int64_t w : PrintfWidths(format, int_args)) {
      if (w > max_width_) {
        const std::string m = "printf(): width or precision " + std::to_string(w) +
                              " is over the limit of " + std::to_string(max_width_);
        sqlite3_result_error(ctx, m.c_str(), -1);
        return;
      }
    }
    sqlite3_stmt* stmt = Statement(argc);
    if (stmt == nullptr) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
    for (int a = 0; a < argc; ++a) sqlite3_bind_value(stmt, a + 1, argv[a]);
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
      sqlite3_result_value(ctx, sqlite3_column_value(stmt, 0));
    } else if ((rc & 0xff) == SQLITE_TOOBIG) {
      sqlite3_result_error_toobig(ctx);
    } else {
      sqlite3_result_error(ctx, sqlite3_errmsg(helper_), -1);
    }
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
  }

  // "SELECT printf(?1, ..., ?argc)" on the helper, prepared once per argc.
  sqlite3_stmt* Statement(int argc) {
    if (helper_ == nullptr) {
      if (sqlite3_open_v2(":memory:", &helper_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
        return nullptr;
      }
      const int64_t length = std::min<int64_t>(max_width_ + 1, 0x7fffffff);
      sqlite3_limit(helper_, SQLITE_LIMIT_LENGTH, static_cast<int>(length));
    }
    if (by_arity_.size() <= static_cast<size_t>(argc)) by_arity_.resize(argc + 1, nullptr);
    if (by_arity_[argc] == nullptr) {
      std::string sql = "SELECT printf(";
      for (int a = 1; a <= argc; ++a) sql += (a > 1 ? ",?" : "?") + std::to_string(a);
      sql += ")";
      sqlite3_prepare_v2(helper_, sql.c_str(), -1, &by_arity_[argc], nullptr);
    }
    return by_arity_[argc];
  }

  int64_t max_width_;
  sqlite3* helper_ = nullptr;
  std::vector<sqlite3_stmt*> by_arity_;
};

}  // namespace

std::vector<int64_t> PrintfWidths(std::string_view format, const std::vector<int64_t>& int_args) {
  return FormatScan(format, int_args).Run();
}

Status InstallBoundedFunctions(sqlite3* db, int64_t max_width) {
  constexpr int kFlags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  for (const char* name : {"printf", "format"}) {
    auto state = std::make_unique<BoundedPrintf>(max_width);
    const int rc =
        sqlite3_create_function_v2(db, name, -1, kFlags, state.get(), &BoundedPrintf::Call, nullptr,
                                   nullptr, &BoundedPrintf::Destroy);
    // SQLite calls Destroy itself when registering fails.
    state.release();
    if (rc != SQLITE_OK) {
      return Status::Internal(std::string("registering the bounded ") + name +
                              "(): " + sqlite3_errstr(rc));
    }
  }
  return Status::Ok();
}

}  // namespace flowrag
