// The bounded functions of bounded_functions.h: printf()/format() (the width
// and precision check, then the built-in printf on a private connection),
// and the linear instr() and replace().
#include "sql/bounded_functions.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>

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
      if (helper_ == nullptr) {
        sqlite3_result_error_nomem(ctx);
      } else {
        sqlite3_result_error(ctx, sqlite3_errmsg(helper_), -1);  // e.g. too many arguments
      }
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
        sqlite3_close_v2(helper_);
        helper_ = nullptr;
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

// A value's bytes as text (a copy for a BLOB, so the argument keeps its
// type, as SQLite's instr() does).
class TextOf {
 public:
  explicit TextOf(sqlite3_value* v) {
    if (sqlite3_value_type(v) == SQLITE_BLOB) v = copy_ = sqlite3_value_dup(v);
    text_ = v == nullptr ? nullptr : reinterpret_cast<const char*>(sqlite3_value_text(v));
    size_ = text_ == nullptr ? 0 : static_cast<size_t>(sqlite3_value_bytes(v));
  }
  ~TextOf() { sqlite3_value_free(copy_); }
  TextOf(const TextOf&) = delete;
  TextOf& operator=(const TextOf&) = delete;
  std::string_view view() const { return {text_ == nullptr ? "" : text_, size_}; }
  bool null() const { return text_ == nullptr; }

 private:
  sqlite3_value* copy_ = nullptr;
  const char* text_ = nullptr;
  size_t size_ = 0;
};

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; }

// Knuth-Morris-Pratt search for a non-empty pattern: linear in the text
// searched plus the pattern, whatever the input (memmem is linear in glibc
// but not under the sanitizers' interceptor).
class PatternSearch {
 public:
  explicit PatternSearch(std::string_view pattern) : pattern_(pattern), border_(pattern.size()) {
    // border_[i]: length of the longest proper prefix of pattern[0..i] that
    // is also its suffix.
    for (size_t i = 1, k = 0; i < pattern.size(); ++i) {
      while (k > 0 && pattern[i] != pattern[k]) k = border_[k - 1];
      if (pattern[i] == pattern[k]) ++k;
      border_[i] = k;
    }
  }

  // The first match at or after `from` whose position `accept` takes, or
  // npos. O(|text| - from + |pattern|).
  template <typename Accept>
  size_t Find(std::string_view text, size_t from, Accept accept) const {
    size_t k = 0;  // pattern bytes matched so far
    for (size_t i = from; i < text.size(); ++i) {
      while (k > 0 && text[i] != pattern_[k]) k = border_[k - 1];
      if (text[i] == pattern_[k]) ++k;
      if (k < pattern_.size()) continue;
      const size_t at = i + 1 - k;
      if (accept(at)) return at;
      k = border_[k - 1];
    }
    return std::string_view::npos;
  }
  size_t Find(std::string_view text, size_t from) const {
    return Find(text, from, [](size_t) { return true; });
  }

 private:
  std::string_view pattern_;
  std::vector<size_t> border_;
};

// instr(X, Y) as SQLite defines it: the 1-based position of the first Y in X,
// in bytes when both are BLOBs, else in characters, where only character
// starts are match positions; 0 when absent, 1 for an empty Y, NULL for a
// NULL argument. SQLite's own loop compares Y at every position (O(|X|·|Y|)
// in one uninterruptible call); this one is linear (PatternSearch).
void Instr(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL) {
    return;
  }
  const bool bytes =
      sqlite3_value_type(argv[0]) == SQLITE_BLOB && sqlite3_value_type(argv[1]) == SQLITE_BLOB;
  std::string_view hay, needle;
  std::unique_ptr<TextOf> hay_text, needle_text;
  if (bytes) {
    hay = {static_cast<const char*>(sqlite3_value_blob(argv[0])),
           static_cast<size_t>(sqlite3_value_bytes(argv[0]))};
    needle = {static_cast<const char*>(sqlite3_value_blob(argv[1])),
              static_cast<size_t>(sqlite3_value_bytes(argv[1]))};
  } else {
    hay_text = std::make_unique<TextOf>(argv[0]);
    needle_text = std::make_unique<TextOf>(argv[1]);
    if (hay_text->null() || needle_text->null()) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
    hay = hay_text->view();
    needle = needle_text->view();
  }
  if (needle.empty()) {
    sqlite3_result_int(ctx, 1);
    return;
  }
  // In text, SQLite compares only where a character starts.
  const size_t at = PatternSearch(needle).Find(
      hay, 0, [&](size_t p) { return bytes || p == 0 || !IsContinuationByte(hay[p]); });
  if (at == std::string_view::npos) {
    sqlite3_result_int(ctx, 0);
    return;
  }
  int64_t position = 1;
  for (size_t i = 0; i < at; ++i) {
    if (bytes || i == 0 || !IsContinuationByte(hay[i])) ++position;
  }
  sqlite3_result_int64(ctx, position);
}

// replace(X, Y, Z) as SQLite defines it: X as text with every non-overlapping
// Y, left to right, replaced by Z; X itself when Y is empty (or starts with a
// NUL byte); NULL when an argument is NULL; "string or blob too big" past
// SQLITE_LIMIT_LENGTH. Linear, where SQLite's loop is O(|X|·|Y|).
void Replace(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  const auto* x = reinterpret_cast<const char*>(sqlite3_value_text(argv[0]));
  if (x == nullptr) return;
  const std::string_view str(x, static_cast<size_t>(sqlite3_value_bytes(argv[0])));
  const auto* y = reinterpret_cast<const char*>(sqlite3_value_text(argv[1]));
  if (y == nullptr) return;
  if (y[0] == '\0') {
    sqlite3_result_value(ctx, argv[0]);
    return;
  }
  const std::string_view pattern(y, static_cast<size_t>(sqlite3_value_bytes(argv[1])));
  const auto* z = reinterpret_cast<const char*>(sqlite3_value_text(argv[2]));
  if (z == nullptr) return;
  const std::string_view rep(z, static_cast<size_t>(sqlite3_value_bytes(argv[2])));
  const auto limit =
      static_cast<size_t>(sqlite3_limit(sqlite3_context_db_handle(ctx), SQLITE_LIMIT_LENGTH, -1));
  const PatternSearch search(pattern);
  std::string out;
  size_t i = 0;
  for (size_t at; (at = search.Find(str, i)) != std::string_view::npos; i = at + pattern.size()) {
    out.append(str.substr(i, at - i)).append(rep);
    if (out.size() > limit) {
      sqlite3_result_error_toobig(ctx);
      return;
    }
  }
  out.append(str.substr(i));
  if (out.size() > limit) {
    sqlite3_result_error_toobig(ctx);
    return;
  }
  sqlite3_result_text64(ctx, out.data(), out.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

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
  for (auto [name, args, fn] :
       {std::tuple{"instr", 2, &Instr}, std::tuple{"replace", 3, &Replace}}) {
    const int rc =
        sqlite3_create_function_v2(db, name, args, kFlags, nullptr, fn, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) {
      return Status::Internal(std::string("registering the linear ") + name +
                              "(): " + sqlite3_errstr(rc));
    }
  }
  return Status::Ok();
}

}  // namespace flowrag
