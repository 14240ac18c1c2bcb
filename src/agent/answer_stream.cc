#include "agent/answer_stream.h"

#include <cctype>
#include <cstdint>

#include "common/encoding.h"

namespace flowrag {

bool AnswerStream::Retrieval(const RetrievalResult& retrieval) {
  if (cancelled_) return false;
  if (retrieval_sent_) return true;
  retrieval_sent_ = true;
  cancelled_ = !observer_->OnRetrieval(retrieval);
  return !cancelled_;
}

bool AnswerStream::Text(std::string_view piece) {
  if (cancelled_) return false;
  if (piece.empty()) return true;
  text_sent_ = true;
  cancelled_ = !observer_->OnText(piece);
  return !cancelled_;
}

Status AnswerStream::Close(const Answer& answer) {
  if (!cancelled_) Retrieval(answer.retrieval);
  if (!cancelled_ && !text_sent_) Text(answer.text);
  if (cancelled_) return Status::Cancelled("answer: the reader stopped");
  return Status::Ok();
}

namespace {

// The value of 4 hex digits at s[at..at+4), or -1.
int32_t Hex4(std::string_view s, size_t at) {
  int32_t v = 0;
  for (size_t i = at; i < at + 4; ++i) {
    const char c = s[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= c - '0';
    else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
    else return -1;
  }
  return v;
}

}  // namespace

bool JsonStringFieldStream::operator()(std::string_view piece) {
  if (state_ == State::kDone) return true;
  seen_.append(piece);
  return Scan();
}

bool JsonStringFieldStream::Unescape(std::string* out) {
  if (pos_ + 1 >= seen_.size()) return false;
  const char c = seen_[pos_ + 1];
  if (c != 'u') {
    switch (c) {
      case 'n': out->push_back('\n'); break;
      case 't': out->push_back('\t'); break;
      case 'r': out->push_back('\r'); break;
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      default: out->push_back(c); break;  // \" \\ \/ and anything else as itself
    }
    pos_ += 2;
    return true;
  }
  if (pos_ + 6 > seen_.size()) return false;
  int32_t cp = Hex4(seen_, pos_ + 2);
  size_t used = 6;
  if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair needs its second half
    if (pos_ + 12 > seen_.size()) return false;
    const int32_t low = seen_[pos_ + 6] == '\\' && seen_[pos_ + 7] == 'u' ? Hex4(seen_, pos_ + 8) : -1;
    if (low >= 0xDC00 && low < 0xE000) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      used = 12;
    } else {
      cp = 0xFFFD;
    }
  }
  AppendUtf8(cp < 0 ? U'\uFFFD' : static_cast<char32_t>(cp), out);
  pos_ += used;
  return true;
}

bool JsonStringFieldStream::Scan() {
  while (state_ != State::kDone) {
    if (state_ == State::kSeekKey) {
      const size_t at = seen_.find(key_, pos_);
      if (at == std::string::npos) {
        // Keep scanning from where a key could still start.
        pos_ = seen_.size() >= key_.size() ? seen_.size() - key_.size() + 1 : 0;
        return true;
      }
      pos_ = at + key_.size();
      state_ = State::kSeekValue;
    } else if (state_ == State::kSeekValue) {
      while (pos_ < seen_.size() &&
             (std::isspace(static_cast<unsigned char>(seen_[pos_])) || seen_[pos_] == ':')) {
        ++pos_;
      }
      if (pos_ >= seen_.size()) return true;
      if (seen_[pos_] != '"') {  // not a string (or the key was a value): look further
        state_ = State::kSeekKey;
        continue;
      }
      ++pos_;
      state_ = State::kInValue;
    } else {  // kInValue
      std::string piece;
      while (pos_ < seen_.size()) {
        const char c = seen_[pos_];
        if (c == '"') {
          state_ = State::kDone;
          break;
        }
        if (c == '\\') {
          if (!Unescape(&piece)) break;
          continue;
        }
        // A character split between pieces waits for its last byte.
        const unsigned char u = static_cast<unsigned char>(c);
        const size_t len = u < 0xC0 ? 1 : u < 0xE0 ? 2 : u < 0xF0 ? 3 : 4;
        if (pos_ + len > seen_.size()) break;
        piece.append(seen_, pos_, len);
        pos_ += len;
      }
      if (!piece.empty() && !(*out_)(piece)) return false;
      if (state_ != State::kDone) return true;
    }
  }
  return true;
}

}  // namespace flowrag
