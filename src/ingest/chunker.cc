#include "ingest/chunker.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <string>

#include "ingest/utf8.h"

namespace flowrag {
namespace {

constexpr uint64_t kMaxSize = UINT32_MAX;

// A word: a maximal run of non-space code points, in bytes and in characters.
struct Word {
  uint32_t begin;
  uint32_t end;
  uint32_t begin_ch;
  uint32_t end_ch;
};

// A position in the text, in bytes and in characters.
struct Pos {
  uint32_t byte;
  uint32_t ch;
};

// Candidate cut positions of the boundary strategy, by priority.
enum BoundaryKind { kHeading = 0, kDiscourse = 1, kSentence = 2, kNumBoundaryKinds = 3 };

struct TextIndex {
  std::vector<Word> words;
  std::vector<Pos> boundaries[kNumBoundaryKinds];  // each sorted by position
  uint32_t chars = 0;
};

// Decodes the code point at `pos` with an ASCII fast path.
inline size_t Decode(std::string_view t, size_t pos, char32_t* cp) {
  const auto b = static_cast<unsigned char>(t[pos]);
  if (b < 0x80) {
    *cp = b;
    return 1;
  }
  return DecodeUtf8(t, pos, cp);
}

bool IsSentenceEnd(char32_t cp) { return cp == '.' || cp == '!' || cp == '?' || cp == 0x2026; }
bool IsCjkSentenceEnd(char32_t cp) { return cp == 0x3002 || cp == 0xFF01 || cp == 0xFF1F; }
bool IsCloser(char32_t cp) {
  switch (cp) {
    case '"':
    case '\'':
    case ')':
    case ']':
    case '}':
    case 0x00BB:  // »
    case 0x2019:  // ’
    case 0x201D:  // ”
    case 0x300D:  // 」
    case 0x300F:  // 』
    case 0xFF09:  // ）
      return true;
    default:
      return false;
  }
}

bool IsAsciiAlnum(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// "<h1".."<h6" (any case) followed by '>', '/' or whitespace, at `pos`.
bool IsHtmlHeadingAt(std::string_view t, size_t pos) {
  if (pos + 3 >= t.size() || t[pos] != '<') return false;
  if (t[pos + 1] != 'h' && t[pos + 1] != 'H') return false;
  if (t[pos + 2] < '1' || t[pos + 2] > '6') return false;
  const char c = t[pos + 3];
  return c == '>' || c == '/' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// A speaker label at `i` (after the line's indentation): 1-4 tokens, the
// first starting with an upper-case ASCII or a non-ASCII letter, made of
// letters, digits and . ' - _ ( ) # &, single spaces between tokens, at most
// 48 bytes, then ':' and whitespace or the end of the text.
bool IsSpeakerLabelAt(std::string_view t, size_t i) {
  constexpr size_t kMaxLabelBytes = 48;
  constexpr int kMaxTokens = 4;
  if (i >= t.size()) return false;
  const auto first = static_cast<unsigned char>(t[i]);
  if (!(first >= 'A' && first <= 'Z') && first < 0x80) return false;
  const size_t limit = std::min(t.size(), i + kMaxLabelBytes + 1);
  int tokens = 1;
  bool prev_space = false;
  size_t j = i;
  while (j < limit) {
    const auto c = static_cast<unsigned char>(t[j]);
    if (c == ':') {
      if (j == i || prev_space) return false;
      if (j + 1 == t.size()) return true;
      const char next = t[j + 1];
      return next == ' ' || next == '\t' || next == '\r' || next == '\n';
    }
    if (c == ' ') {
      if (prev_space || ++tokens > kMaxTokens) return false;
      prev_space = true;
      ++j;
      continue;
    }
    prev_space = false;
    if (IsAsciiAlnum(c) || c == '.' || c == '\'' || c == '-' || c == '_' || c == '(' || c == ')' ||
        c == '#' || c == '&') {
      ++j;
      continue;
    }
    if (c < 0x80) return false;
    char32_t cp;
    j += DecodeUtf8(t, j, &cp);
    if (IsUnicodeSpace(cp)) return false;
  }
  return false;
}

enum class LineKind { kOther, kFence, kHeading, kSpeaker };

// Classifies the line starting at `p` from a bounded look-ahead; toggles
// `*fence` on ``` / ~~~ fence lines.
LineKind ClassifyLine(std::string_view t, size_t p, char* fence) {
  size_t i = p;
  int spaces = 0;
  while (i < t.size() && t[i] == ' ' && spaces < 4) {
    ++i;
    ++spaces;
  }
  if (spaces > 3 || i >= t.size()) return LineKind::kOther;
  const char c = t[i];
  if ((c == '`' || c == '~') && i + 2 < t.size() && t[i + 1] == c && t[i + 2] == c) {
    if (*fence == 0) {
      *fence = c;
    } else if (*fence == c) {
      *fence = 0;
    }
    return LineKind::kFence;
  }
  if (*fence != 0) return LineKind::kOther;
  if (c == '#') {
    size_t h = 0;
    while (i + h < t.size() && t[i + h] == '#' && h < 7) ++h;
    if (h > 6) return LineKind::kOther;
    if (i + h == t.size()) return LineKind::kHeading;
    const char d = t[i + h];
    return d == ' ' || d == '\t' || d == '\r' || d == '\n' ? LineKind::kHeading : LineKind::kOther;
  }
  return IsSpeakerLabelAt(t, i) ? LineKind::kSpeaker : LineKind::kOther;
}

// One pass over the text: words, character count and (when `boundaries`)
// the candidate cuts of the boundary strategy. O(n).
TextIndex BuildIndex(std::string_view t, bool boundaries) {
  TextIndex x;
  size_t pos = 0;
  uint32_t ch = 0;
  bool in_word = false;
  Word cur{};
  bool at_line_start = true;
  Pos line{0, 0};
  LineKind kind = LineKind::kOther;
  bool line_has_content = false;
  bool blank_line_pending = false;  // a blank line since the last non-blank one
  bool seen_content = false;
  char fence = 0;
  while (pos < t.size()) {
    if (boundaries && at_line_start) {
      line = {static_cast<uint32_t>(pos), ch};
      kind = ClassifyLine(t, pos, &fence);
      line_has_content = false;
      at_line_start = false;
    }
    char32_t cp;
    const size_t len = Decode(t, pos, &cp);
    if (!IsUnicodeSpace(cp)) {
      if (!in_word) {
        cur.begin = static_cast<uint32_t>(pos);
        cur.begin_ch = ch;
        in_word = true;
      }
      if (boundaries) {
        if (!line_has_content) {  // first visible character of the line
          line_has_content = true;
          if (kind == LineKind::kHeading) {
            x.boundaries[kHeading].push_back(line);
          } else if (seen_content && (blank_line_pending || kind == LineKind::kSpeaker)) {
            x.boundaries[kDiscourse].push_back(line);
          }
          blank_line_pending = false;
          seen_content = true;
        }
        if (cp == '<' && IsHtmlHeadingAt(t, pos)) {
          x.boundaries[kHeading].push_back({static_cast<uint32_t>(pos), ch});
        }
        if (IsSentenceEnd(cp) || IsCjkSentenceEnd(cp)) {
          size_t q = pos + len;
          uint32_t qch = ch + 1;
          bool ends = true;  // reached the end of the text
          char32_t next = 0;
          while (q < t.size()) {
            const size_t l2 = Decode(t, q, &next);
            if (!IsCloser(next)) {
              ends = false;
              break;
            }
            q += l2;
            ++qch;
          }
          if (ends || IsUnicodeSpace(next) || IsCjkSentenceEnd(cp)) {
            x.boundaries[kSentence].push_back({static_cast<uint32_t>(q), qch});
          }
        }
      }
    } else {
      if (in_word) {
        cur.end = static_cast<uint32_t>(pos);
        cur.end_ch = ch;
        x.words.push_back(cur);
        in_word = false;
      }
      if (boundaries && cp == '\n') {
        if (!line_has_content) blank_line_pending = true;
        at_line_start = true;
      }
    }
    pos += len;
    ++ch;
  }
  if (in_word) {
    cur.end = static_cast<uint32_t>(t.size());
    cur.end_ch = ch;
    x.words.push_back(cur);
  }
  x.chars = ch;
  return x;
}

Chunk MakeChunk(std::string_view text, size_t index, size_t begin, size_t end) {
  Chunk c;
  c.index = static_cast<int32_t>(index);
  c.begin = static_cast<uint32_t>(begin);
  c.end = static_cast<uint32_t>(end);
  c.text.assign(text.substr(begin, end - begin));
  return c;
}

// Moves forward from `p` to character `to` (>= p.ch).
Pos WalkTo(std::string_view t, Pos p, uint64_t to) {
  while (p.ch < to) {
    char32_t cp;
    p.byte += static_cast<uint32_t>(Decode(t, p.byte, &cp));
    ++p.ch;
  }
  return p;
}

std::vector<Chunk> ChunkWhole(std::string_view text) {
  std::vector<Chunk> out;
  if (!IsBlank(text)) out.push_back(MakeChunk(text, 0, 0, text.size()));
  return out;
}

std::vector<Chunk> ChunkByWords(std::string_view text, size_t window, size_t overlap) {
  const std::vector<Word> words = BuildIndex(text, /*boundaries=*/false).words;
  std::vector<Chunk> out;
  const size_t n = words.size();
  if (n == 0) return out;
  if (n <= window) {
    out.push_back(MakeChunk(text, 0, words.front().begin, words.back().end));
    return out;
  }
  const size_t stride = window - overlap;
  for (size_t s = 0;; s += stride) {
    if (s + window >= n) {  // the final window ends at the last word
      out.push_back(MakeChunk(text, out.size(), words[n - window].begin, words[n - 1].end));
      break;
    }
    out.push_back(MakeChunk(text, out.size(), words[s].begin, words[s + window - 1].end));
  }
  return out;
}

std::vector<Chunk> ChunkByBoundary(std::string_view text, uint64_t threshold, uint64_t max_chars,
                                   uint64_t overlap) {
  std::vector<Chunk> out;
  if (CountCodePoints(text) <= threshold) {
    const TextIndex x = BuildIndex(text, /*boundaries=*/false);
    if (!x.words.empty())
      out.push_back(MakeChunk(text, 0, x.words.front().begin, x.words.back().end));
    return out;
  }
  const TextIndex x = BuildIndex(text, /*boundaries=*/true);
  const std::vector<Word>& words = x.words;
  if (words.empty()) return out;
  const Word& last = words.back();
  const uint64_t min_cut = std::max<uint64_t>(max_chars / 2, overlap + 1);  // <= max_chars

  // Cursors; each only moves forward because the window end, the cut and the
  // overlap target all strictly increase from one chunk to the next.
  size_t boundary_next[kNumBoundaryKinds] = {0, 0, 0};  // first with ch > window end
  size_t word_end_next = 0;                             // first word with end_ch > window end
  size_t cut_word = 0;                                  // first word with end_ch > cut
  size_t start_word = 0;  // first word with begin_ch >= overlap target

  Pos s{words.front().begin, words.front().begin_ch};
  while (true) {
    if (last.end_ch - s.ch <= max_chars) {
      out.push_back(MakeChunk(text, out.size(), s.byte, last.end));
      break;
    }
    const uint64_t hi = s.ch + max_chars;  // < last.end_ch
    const uint64_t lo = s.ch + min_cut;
    // 1. The latest candidate of the best kind in [lo, hi].
    Pos cut{0, 0};
    bool cut_byte_known = false;
    for (int k = 0; k < kNumBoundaryKinds && !cut_byte_known; ++k) {
      const std::vector<Pos>& list = x.boundaries[k];
      size_t& i = boundary_next[k];
      while (i < list.size() && list[i].ch <= hi) ++i;
      if (i > 0 && list[i - 1].ch >= lo) {
        cut = list[i - 1];
        cut_byte_known = true;
      }
    }
    if (!cut_byte_known) {
      while (word_end_next < words.size() && words[word_end_next].end_ch <= hi) ++word_end_next;
      if (word_end_next > 0 && words[word_end_next - 1].end_ch >= lo) {
        cut = {words[word_end_next - 1].end, words[word_end_next - 1].end_ch};
        cut_byte_known = true;
      }
    }
    if (!cut_byte_known) cut.ch = static_cast<uint32_t>(hi);  // hard cut
    // 2. End the chunk at the cut, trimming whitespace before it.
    while (cut_word < words.size() && words[cut_word].end_ch <= cut.ch) ++cut_word;
    const Word& w = words[cut_word];  // exists: cut.ch <= hi < last.end_ch
    const bool mid_word = w.begin_ch < cut.ch;
    const Pos walk_from = s.ch > w.begin_ch ? s : Pos{w.begin, w.begin_ch};
    uint32_t end;
    if (mid_word) {
      if (!cut_byte_known) cut = WalkTo(text, walk_from, cut.ch);
      end = cut.byte;
    } else {
      end = words[cut_word - 1].end;  // the word at s ends at or before the cut
    }
    // A chunk that ends where the previous one did lies inside it (the text
    // between the two cuts is whitespace): skip it.
    if (out.empty() || end > out.back().end)
      out.push_back(MakeChunk(text, out.size(), s.byte, end));
    // 3. The next chunk starts at most `overlap` characters before the cut.
    const uint64_t target = cut.ch - overlap;  // > s.ch, since cut.ch >= lo > s.ch + overlap
    while (start_word < words.size() && words[start_word].begin_ch < target) ++start_word;
    if (start_word < words.size() && words[start_word].begin_ch < cut.ch) {
      s = {words[start_word].begin, words[start_word].begin_ch};
    } else if (mid_word) {
      s = WalkTo(text, walk_from, target);  // inside w, which starts before target
    } else {
      s = {words[start_word].begin, words[start_word].begin_ch};  // first word after the cut
    }
  }
  return out;
}

}  // namespace

Status ChunkOptions::Validate() const {
  switch (strategy) {
    case Strategy::kNone:
    case Strategy::kWordWindow:
    case Strategy::kBoundary:
      break;
    default:
      return Status::InvalidArgument("ChunkOptions.strategy: unknown value " +
                                     std::to_string(static_cast<int>(strategy)) +
                                     ": expected none, window or boundary");
  }
  struct Field {
    const char* name;
    size_t value;
  };
  for (const Field& f : {Field{"window_words", window_words}, Field{"overlap_words", overlap_words},
                         Field{"boundary_threshold_chars", boundary_threshold_chars},
                         Field{"max_chars", max_chars}, Field{"overlap_chars", overlap_chars}}) {
    if (static_cast<uint64_t>(f.value) >= kMaxSize) {
      return Status::InvalidArgument(
          std::string("ChunkOptions.") + f.name + " (" + std::to_string(f.value) +
          ") is too large: expected less than " + std::to_string(kMaxSize));
    }
  }
  if (window_words == 0) {
    return Status::InvalidArgument("ChunkOptions.window_words is 0: expected at least 1 word");
  }
  if (overlap_words >= window_words) {
    return Status::InvalidArgument("ChunkOptions.overlap_words (" + std::to_string(overlap_words) +
                                   ") must be less than window_words (" +
                                   std::to_string(window_words) + ")");
  }
  if (max_chars == 0) {
    return Status::InvalidArgument("ChunkOptions.max_chars is 0: expected at least 1 character");
  }
  if (overlap_chars >= max_chars) {
    return Status::InvalidArgument("ChunkOptions.overlap_chars (" + std::to_string(overlap_chars) +
                                   ") must be less than max_chars (" + std::to_string(max_chars) +
                                   ")");
  }
  return Status::Ok();
}

std::string ChunkOptions::Signature() const {
  switch (strategy) {
    case Strategy::kNone:
      return "none/v1";
    case Strategy::kWordWindow:
      return "window/v1:" + std::to_string(window_words) + ":" + std::to_string(overlap_words);
    case Strategy::kBoundary:
      return "boundary/v1:" + std::to_string(boundary_threshold_chars) + ":" +
             std::to_string(max_chars) + ":" + std::to_string(overlap_chars);
  }
  return "unknown/" + std::to_string(static_cast<int>(strategy));
}

std::string_view ChunkStrategyName(ChunkOptions::Strategy strategy) {
  switch (strategy) {
    case ChunkOptions::Strategy::kNone:
      return "none";
    case ChunkOptions::Strategy::kWordWindow:
      return "window";
    case ChunkOptions::Strategy::kBoundary:
      return "boundary";
  }
  return "unknown";
}

Result<ChunkOptions::Strategy> ParseChunkStrategy(const std::string& name) {
  for (auto s : {ChunkOptions::Strategy::kNone, ChunkOptions::Strategy::kWordWindow,
                 ChunkOptions::Strategy::kBoundary}) {
    if (name == ChunkStrategyName(s)) return s;
  }
  return Status::InvalidArgument("unknown chunking strategy \"" + name +
                                 "\": expected none, window or boundary");
}

std::vector<Chunk> ChunkText(std::string_view text, const ChunkOptions& options) {
  assert(text.size() <= kMaxSize && "Chunk offsets are 32-bit");
  if (text.size() > kMaxSize) return {};
  switch (options.strategy) {
    case ChunkOptions::Strategy::kNone:
      return ChunkWhole(text);
    case ChunkOptions::Strategy::kWordWindow: {
      const size_t window = std::max<size_t>(options.window_words, 1);
      const size_t overlap = std::min(options.overlap_words, window - 1);
      return ChunkByWords(text, window, overlap);
    }
    case ChunkOptions::Strategy::kBoundary: {
      const uint64_t max_chars = std::max<uint64_t>(options.max_chars, 1);
      const uint64_t overlap = std::min<uint64_t>(options.overlap_chars, max_chars - 1);
      return ChunkByBoundary(text, options.boundary_threshold_chars, max_chars, overlap);
    }
  }
  return ChunkWhole(text);
}

}  // namespace flowrag
