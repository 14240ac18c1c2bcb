#include "llm/json_repair.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <utility>

#include "common/text.h"

namespace flowrag {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kCurlyOpen = "\xE2\x80\x9C";    // “
constexpr std::string_view kCurlyClose = "\xE2\x80\x9D";   // ”
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Bytes a UTF-8 sequence starting with `lead` should have; 0 for a byte that
// cannot start one.
size_t Utf8ExpectedLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// Length of the well-formed UTF-8 sequence at s[i], or 0 when it is not one
// (bad lead, bad continuation, overlong, surrogate, beyond U+10FFFF, cut).
size_t ValidUtf8Length(std::string_view s, size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  const size_t n = Utf8ExpectedLength(lead);
  if (n <= 1) return n;
  if (i + n > s.size()) return 0;
  uint32_t cp = lead & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
  for (size_t k = 1; k < n; ++k) {
    const auto d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3F);
  }
  if (n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return 0;
  if (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return 0;
  return n;
}

bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }
bool IsBareKeyChar(char c) {
  return IsAsciiAlpha(c) || IsAsciiDigit(c) || c == '_' || c == '$' || c == '-';
}
bool IsHex(char c) { return IsAsciiDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool IsJsonNumber(std::string_view t) {
  size_t i = 0;
  if (i < t.size() && t[i] == '-') ++i;
  if (i >= t.size()) return false;
  if (t[i] == '0') {
    ++i;
  } else if (t[i] >= '1' && t[i] <= '9') {
    while (i < t.size() && IsAsciiDigit(t[i])) ++i;
  } else {
    return false;
  }
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (i >= t.size() || !IsAsciiDigit(t[i])) return false;
    while (i < t.size() && IsAsciiDigit(t[i])) ++i;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (i >= t.size() || !IsAsciiDigit(t[i])) return false;
    while (i < t.size() && IsAsciiDigit(t[i])) ++i;
  }
  return i == t.size();
}

// The literals a model may write, and their JSON spelling.
struct Literal {
  std::string_view word;
  std::string_view json;
  bool python;
};
constexpr Literal kLiterals[] = {
    {"true", "true", false}, {"false", "false", false}, {"null", "null", false},
    {"True", "true", true},  {"False", "false", true},  {"None", "null", true},
};

// A recursive-descent parser over one candidate that re-emits strict JSON
// into `out_`. See the header for the repair rules. Each parse function
// returns kOk (value complete), kEof (input ended inside the value; what was
// emitted for it is closed and well-formed) or kError (error_ set).
class LenientParser {
 public:
  enum class Outcome { kOk, kEof, kError };

  LenientParser(std::string_view text, const JsonRepairOptions& options)
      : text_(text), options_(options) {}

  // Parses the value starting at byte `start` (a '{' or '[').
  Outcome Run(size_t start) {
    pos_ = start;
    return Value(0);
  }

  const std::string& out() const { return out_; }
  size_t pos() const { return pos_; }
  bool committed() const { return committed_; }
  size_t error_pos() const { return error_pos_; }
  const std::string& error() const { return error_; }
  const std::vector<std::string>& repairs() const { return repairs_; }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }
  bool StartsWith(size_t at, std::string_view s) const {
    return text_.size() >= at + s.size() && text_.substr(at, s.size()) == s;
  }

  void Repair(std::string_view what) {
    for (const std::string& r : repairs_) {
      if (r == what) return;
    }
    repairs_.emplace_back(what);
  }

  Outcome Fail(size_t at, std::string what) {
    error_pos_ = at;
    error_ = std::move(what);
    return Outcome::kError;
  }

  // Whitespace (including U+00A0) and comments.
  void SkipSpace() {
    while (!AtEnd()) {
      const char c = Peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (StartsWith(pos_, "\xC2\xA0")) {
        pos_ += 2;
      } else if (StartsWith(pos_, "//")) {
        Repair("removed comments");
        const size_t nl = text_.find('\n', pos_);
        pos_ = nl == std::string_view::npos ? text_.size() : nl + 1;
      } else if (StartsWith(pos_, "/*")) {
        Repair("removed comments");
        const size_t close = text_.find("*/", pos_ + 2);
        pos_ = close == std::string_view::npos ? text_.size() : close + 2;
      } else {
        return;
      }
    }
  }

  // True when a quote that ends at byte `at` closes its string: what follows
  // on the same line is nothing, a line end, or one of , : ] } " ' /.
  bool QuoteCloses(size_t at) const {
    while (at < text_.size() && (text_[at] == ' ' || text_[at] == '\t')) ++at;
    if (at >= text_.size()) return true;
    const char c = text_[at];
    return c == '\n' || c == '\r' || c == ',' || c == ':' || c == ']' || c == '}' || c == '"' ||
           c == '\'' || c == '/';
  }

  bool IsStringStart() const {
    return Peek() == '"' || Peek() == '\'' || StartsWith(pos_, kCurlyOpen);
  }

  bool IsValueStart() const {
    const char c = Peek();
    return c == '{' || c == '[' || c == '-' || IsAsciiDigit(c) || IsAsciiAlpha(c) ||
           IsStringStart();
  }

  Outcome Value(size_t depth) {
    SkipSpace();
    last_was_container_ = false;
    if (AtEnd()) return Outcome::kEof;
    const char c = Peek();
    Outcome r;
    bool container = false;
    if (c == '{' || c == '[') {
      if (depth >= options_.max_depth) {
        return Fail(pos_, "nested deeper than " + std::to_string(options_.max_depth) + " levels");
      }
      container = true;
      r = c == '{' ? Object(depth) : Array(depth);
    } else if (IsStringStart()) {
      r = String();
    } else if (c == '-' || IsAsciiDigit(c)) {
      r = Number();
    } else if (IsAsciiAlpha(c)) {
      r = Word();
    } else {
      return Fail(pos_, "expected a value");
    }
    last_was_container_ = container;
    return r;
  }

  Outcome Array(size_t depth) {
    out_ += '[';
    ++pos_;
    size_t count = 0;
    bool need_value = true;
    bool pending_comma = false;
    for (;;) {
      SkipSpace();
      if (AtEnd()) {
        out_ += ']';
        return Outcome::kEof;
      }
      const char c = Peek();
      if (c == ']') {
        if (pending_comma) Repair("removed trailing comma");
        ++pos_;
        out_ += ']';
        return Outcome::kOk;
      }
      if (c == ',') {
        if (need_value) {
          Repair("removed extra comma");
        } else {
          need_value = true;
          pending_comma = true;
        }
        ++pos_;
        continue;
      }
      if (!need_value) {
        if (!IsValueStart()) return Fail(pos_, "expected ',' or ']' after an array element");
        Repair("inserted missing comma");
      }
      const size_t mark = out_.size();
      if (count > 0) out_ += ',';
      const Outcome r = Value(depth + 1);
      if (r == Outcome::kError) return r;
      if (r == Outcome::kEof) {
        out_.resize(mark);
        out_ += ']';
        Repair("dropped incomplete last element");
        return Outcome::kEof;
      }
      ++count;
      need_value = false;
      pending_comma = false;
      committed_ = true;
    }
  }

  Outcome Object(size_t depth) {
    out_ += '{';
    ++pos_;
    size_t count = 0;
    bool need_member = true;
    bool pending_comma = false;
    for (;;) {
      SkipSpace();
      if (AtEnd()) {
        out_ += '}';
        return Outcome::kEof;
      }
      const char c = Peek();
      if (c == '}') {
        if (pending_comma) Repair("removed trailing comma");
        ++pos_;
        out_ += '}';
        return Outcome::kOk;
      }
      if (c == ',') {
        if (need_member) {
          Repair("removed extra comma");
        } else {
          need_member = true;
          pending_comma = true;
        }
        ++pos_;
        continue;
      }
      const bool key_start = IsStringStart() || IsBareKeyChar(c);
      if (!need_member) {
        if (!key_start) return Fail(pos_, "expected ',' or '}' after an object member");
        Repair("inserted missing comma");
      }
      if (!key_start) return Fail(pos_, "expected a key in double quotes or '}'");
      const size_t mark = out_.size();
      if (count > 0) out_ += ',';
      const Outcome k = IsStringStart() ? String(/*is_key=*/true) : BareKey();
      if (k == Outcome::kError) return k;
      if (k == Outcome::kOk) SkipSpace();
      if (k == Outcome::kEof || AtEnd()) {
        out_.resize(mark);
        out_ += '}';
        Repair("dropped incomplete last member");
        return Outcome::kEof;
      }
      if (Peek() != ':') return Fail(pos_, "expected ':' after an object key");
      ++pos_;
      out_ += ':';
      committed_ = true;
      const Outcome v = Value(depth + 1);
      if (v == Outcome::kError) return v;
      if (v == Outcome::kEof) {
        if (!last_was_container_) {
          out_.resize(mark);
          Repair("dropped incomplete last member");
        }
        out_ += '}';
        return Outcome::kEof;
      }
      ++count;
      need_member = false;
      pending_comma = false;
    }
  }

  Outcome BareKey() {
    const size_t start = pos_;
    while (!AtEnd() && IsBareKeyChar(Peek())) ++pos_;
    if (AtEnd()) return Outcome::kEof;
    Repair("quoted bare keys");
    out_ += '"';
    out_.append(text_.substr(start, pos_ - start));
    out_ += '"';
    return Outcome::kOk;
  }

  // Emits the escape for control character `c`.
  void EmitControl(unsigned char c) {
    Repair("escaped control characters in strings");
    switch (c) {
      case '\n':
        out_ += "\\n";
        break;
      case '\r':
        out_ += "\\r";
        break;
      case '\t':
        out_ += "\\t";
        break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        out_ += "\\u00";
        out_ += kHex[c >> 4];
        out_ += kHex[c & 0xF];
      }
    }
  }

  // Reads "\uXXXX" at `at`; returns the code unit or -1 when not hex.
  long ReadUnicodeEscape(size_t at) const {
    if (!StartsWith(at, "\\u") || at + 6 > text_.size()) return -1;
    long v = 0;
    for (size_t k = at + 2; k < at + 6; ++k) {
      const char h = text_[k];
      if (!IsHex(h)) return -1;
      v = v * 16 + (IsAsciiDigit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
    }
    return v;
  }

  // True when the text from `at` to the end is a proper prefix of a \uXXXX
  // escape (the empty string included): the answer was cut inside it.
  bool CutUnicodeEscape(size_t at) const {
    const std::string_view rest = text_.substr(std::min(at, text_.size()));
    if (rest.size() >= 6) return false;
    if (!rest.empty() && rest[0] != '\\') return false;
    if (rest.size() >= 2 && rest[1] != 'u') return false;
    for (size_t k = 2; k < rest.size(); ++k) {
      if (!IsHex(rest[k])) return false;
    }
    return true;
  }

  // A backslash escape at pos_ inside a string.
  Outcome Escape() {
    if (pos_ + 1 >= text_.size()) return Outcome::kEof;
    const char e = text_[pos_ + 1];
    switch (e) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
        out_ += '\\';
        out_ += e;
        pos_ += 2;
        return Outcome::kOk;
      case '\'':
        Repair("unescaped \\'");
        out_ += '\'';
        pos_ += 2;
        return Outcome::kOk;
      case 'u': {
        if (CutUnicodeEscape(pos_)) return Outcome::kEof;
        const long unit = ReadUnicodeEscape(pos_);
        if (unit < 0) break;  // kept literally below
        if (unit >= 0xD800 && unit <= 0xDBFF) {
          if (CutUnicodeEscape(pos_ + 6)) return Outcome::kEof;  // the low half was cut off
          const long low = ReadUnicodeEscape(pos_ + 6);
          if (low >= 0xDC00 && low <= 0xDFFF) {
            out_.append(text_.substr(pos_, 12));
            pos_ += 12;
            return Outcome::kOk;
          }
          Repair("replaced unpaired surrogate escapes");
          out_ += "\\ufffd";
          pos_ += 6;
          return Outcome::kOk;
        }
        if (unit >= 0xDC00 && unit <= 0xDFFF) {
          Repair("replaced unpaired surrogate escapes");
          out_ += "\\ufffd";
          pos_ += 6;
          return Outcome::kOk;
        }
        out_.append(text_.substr(pos_, 6));
        pos_ += 6;
        return Outcome::kOk;
      }
      default:
        break;
    }
    Repair("kept invalid escapes literally");
    out_ += "\\\\";
    pos_ += 1;  // the escaped character is read as ordinary text next
    return Outcome::kOk;
  }

  // A key's closing quote is never taken for an inner quote.
  Outcome String(bool is_key = false) {
    enum class Kind { kDouble, kSingle, kCurly } kind;
    if (Peek() == '"') {
      kind = Kind::kDouble;
      pos_ += 1;
    } else if (Peek() == '\'') {
      kind = Kind::kSingle;
      pos_ += 1;
      Repair("converted single-quoted strings");
    } else {
      kind = Kind::kCurly;
      pos_ += kCurlyOpen.size();
      Repair("converted curly-quoted strings");
    }
    out_ += '"';
    for (;;) {
      if (AtEnd()) return Outcome::kEof;
      const auto c = static_cast<unsigned char>(Peek());
      if (c == '"') {
        if (kind == Kind::kDouble && (is_key || QuoteCloses(pos_ + 1))) {
          ++pos_;
          out_ += '"';
          return Outcome::kOk;
        }
        if (kind == Kind::kDouble) Repair("escaped inner double quotes");
        out_ += "\\\"";
        ++pos_;
        continue;
      }
      if (c == '\'' && kind == Kind::kSingle) {
        ++pos_;
        if (QuoteCloses(pos_)) {
          out_ += '"';
          return Outcome::kOk;
        }
        out_ += '\'';
        continue;
      }
      if (kind == Kind::kCurly && StartsWith(pos_, kCurlyClose)) {
        pos_ += kCurlyClose.size();
        out_ += '"';
        return Outcome::kOk;
      }
      if (c == '\\') {
        const Outcome r = Escape();
        if (r != Outcome::kOk) return r;
        continue;
      }
      if (c < 0x20) {
        EmitControl(c);
        ++pos_;
        continue;
      }
      if (c < 0x80) {
        out_ += static_cast<char>(c);
        ++pos_;
        continue;
      }
      const size_t expected = Utf8ExpectedLength(c);
      if (expected > 1 && pos_ + expected > text_.size()) {
        bool continuations = true;
        for (size_t k = pos_ + 1; k < text_.size(); ++k) {
          continuations = continuations && (static_cast<unsigned char>(text_[k]) & 0xC0) == 0x80;
        }
        if (continuations) return Outcome::kEof;  // cut inside a character
      }
      const size_t n = ValidUtf8Length(text_, pos_);
      if (n == 0) {
        Repair("replaced invalid UTF-8");
        out_ += kReplacement;
        ++pos_;
      } else {
        out_.append(text_.substr(pos_, n));
        pos_ += n;
      }
    }
  }

  Outcome Number() {
    const size_t start = pos_;
    while (!AtEnd() && (IsAsciiDigit(Peek()) || std::strchr("+-.eE", Peek()) != nullptr)) ++pos_;
    if (AtEnd()) return Outcome::kEof;  // maybe cut: "12" of "1234"
    const std::string_view token = text_.substr(start, pos_ - start);
    // At most 40 bytes of the token in a message.
    const std::string quoted =
        "'" + std::string(token.substr(0, 40)) + (token.size() > 40 ? "...'" : "'");
    if (!IsJsonNumber(token)) return Fail(start, "malformed number " + quoted);
    // 1e400 is grammatical but not a double: the JSON parser rejects it.
    if (!std::isfinite(std::strtod(std::string(token).c_str(), nullptr))) {
      return Fail(start, "number " + quoted + " is out of range: expected a finite number");
    }
    out_.append(token);
    return Outcome::kOk;
  }

  Outcome Word() {
    const size_t start = pos_;
    while (!AtEnd() && (IsAsciiAlpha(Peek()) || IsAsciiDigit(Peek()) || Peek() == '_')) ++pos_;
    const std::string_view word = text_.substr(start, pos_ - start);
    if (AtEnd()) {
      for (const Literal& l : kLiterals) {
        if (l.word.substr(0, word.size()) == word) return Outcome::kEof;
      }
    } else {
      for (const Literal& l : kLiterals) {
        if (l.word != word) continue;
        if (l.python) Repair("converted Python literals");
        out_.append(l.json);
        return Outcome::kOk;
      }
    }
    return Fail(start, "unexpected word '" + std::string(word.substr(0, 40)) + "'");
  }

  std::string_view text_;
  const JsonRepairOptions& options_;
  size_t pos_ = 0;
  std::string out_;
  std::vector<std::string> repairs_;
  bool committed_ = false;
  bool last_was_container_ = false;
  size_t error_pos_ = 0;
  std::string error_;
};

// The outcome of trying the candidates of one region.
struct RegionAttempt {
  enum class Kind { kParsed, kCommittedError, kNothing } kind = Kind::kNothing;
  RepairedJson parsed;
  Status error;              // kCommittedError
  std::string first_reason;  // kNothing: why the first candidate was rejected
  bool had_candidate = false;
};

RegionAttempt TryRegion(std::string_view text, size_t begin, size_t end,
                        const JsonRepairOptions& options) {
  RegionAttempt attempt;
  const std::string_view region = text.substr(begin, end - begin);
  size_t candidates = 0;
  for (size_t start = region.find_first_of("{["); start != std::string_view::npos;
       start = region.find_first_of("{[", start + 1)) {
    if (++candidates > kMaxJsonCandidates) break;
    attempt.had_candidate = true;
    LenientParser parser(region, options);
    const LenientParser::Outcome outcome = parser.Run(start);
    const size_t abs_start = begin + start;
    if (outcome == LenientParser::Outcome::kError) {
      const size_t at = begin + parser.error_pos();
      const std::string message = "not JSON at byte " + std::to_string(at) + ": " + parser.error() +
                                  ", near " + ExcerptAround(text, at);
      if (parser.committed()) {
        attempt.kind = RegionAttempt::Kind::kCommittedError;
        attempt.error = Status::InvalidArgument(message);
        return attempt;
      }
      if (attempt.first_reason.empty()) attempt.first_reason = message;
      continue;
    }
    const bool truncated = outcome == LenientParser::Outcome::kEof;
    if (truncated && !options.allow_truncated) {
      const std::string message = "the JSON ends before it is complete (at byte " +
                                  std::to_string(text.size()) +
                                  "): " + ExcerptAround(text, text.size());
      if (parser.committed()) {
        attempt.kind = RegionAttempt::Kind::kCommittedError;
        attempt.error = Status::InvalidArgument(message);
        return attempt;
      }
      if (attempt.first_reason.empty()) attempt.first_reason = message;
      continue;
    }
    Json value = Json::parse(parser.out(), nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) {
      // The emitter only writes strict JSON; reaching this is a bug, reported
      // rather than hidden.
      attempt.kind = RegionAttempt::Kind::kCommittedError;
      attempt.error =
          Status::Internal("JSON repair produced invalid JSON from byte " +
                           std::to_string(abs_start) + ": " + ExcerptAround(parser.out(), 0, 60));
      return attempt;
    }
    attempt.kind = RegionAttempt::Kind::kParsed;
    attempt.parsed.value = std::move(value);
    attempt.parsed.repairs = parser.repairs();
    attempt.parsed.truncated = truncated;
    if (truncated) AppendUnique(&attempt.parsed.repairs, "closed truncated JSON");
    if (HasNonSpace(region.substr(0, start)) ||
        (!truncated && HasNonSpace(region.substr(parser.pos())))) {
      AppendUnique(&attempt.parsed.repairs, "ignored text around the JSON");
    }
    return attempt;
  }
  return attempt;
}

}  // namespace

std::string ExcerptAround(std::string_view text, size_t pos, size_t radius) {
  pos = std::min(pos, text.size());
  size_t begin = pos > radius ? pos - radius : 0;
  size_t end = std::min(text.size(), pos + radius);
  while (begin > 0 && begin < text.size() &&
         (static_cast<unsigned char>(text[begin]) & 0xC0) == 0x80) {
    ++begin;
  }
  while (end < text.size() && end > begin &&
         (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    --end;
  }
  std::string out = "\"";
  if (begin > 0) out += "...";
  for (size_t i = begin; i < end;) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      out += c < 0x20 ? ' ' : static_cast<char>(c);
      ++i;
      continue;
    }
    const size_t n = ValidUtf8Length(text, i);
    if (n == 0 || i + n > end) {
      out += '?';
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  if (end < text.size()) out += "...";
  out += '"';
  return out;
}

Result<RepairedJson> ParseLlmJson(std::string_view text, const JsonRepairOptions& options) {
  // Fast path: the whole answer is strict JSON.
  try {
    Json strict = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!strict.is_discarded() && (strict.is_object() || strict.is_array())) {
      RepairedJson out;
      out.value = std::move(strict);
      return out;
    }
  } catch (const std::exception&) {
    // Fall through to the tolerant path.
  }

  // A fenced block first, then the whole answer.
  struct Region {
    size_t begin;
    size_t end;
    bool fenced;
  };
  std::vector<Region> regions;
  const size_t fence = text.find("```");
  if (fence != std::string_view::npos) {
    size_t body = fence + 3;
    while (body < text.size() && IsBareKeyChar(text[body])) ++body;  // language tag
    const size_t close = text.find("```", body);
    regions.push_back({body, close == std::string_view::npos ? text.size() : close, true});
  }
  regions.push_back({0, text.size(), false});

  std::string first_reason;
  bool had_candidate = false;
  for (const Region& region : regions) {
    RegionAttempt attempt;
    try {
      attempt = TryRegion(text, region.begin, region.end, options);
    } catch (const std::exception& e) {
      return Status::Internal(std::string("JSON repair failed: ") + e.what());
    }
    had_candidate = had_candidate || attempt.had_candidate;
    if (attempt.kind == RegionAttempt::Kind::kCommittedError) return attempt.error;
    if (attempt.kind == RegionAttempt::Kind::kParsed) {
      if (region.fenced) {
        attempt.parsed.repairs.insert(attempt.parsed.repairs.begin(), "stripped markdown fence");
      }
      return std::move(attempt.parsed);
    }
    if (first_reason.empty()) first_reason = attempt.first_reason;
  }
  if (!had_candidate) {
    return Status::InvalidArgument("no JSON object or array in the answer: " +
                                   ExcerptAround(text, 0, 60));
  }
  return Status::InvalidArgument("no JSON object or array in the answer (" + first_reason + ")");
}

}  // namespace flowrag
