// Fuzz target: the shared tokeniser (src/common/text.h Tokenize, WordSegments,
// EntityKey, FoldCase) on arbitrary bytes, ill-formed UTF-8 included.
//
// Input: byte 0 picks the stemming language (english-s, none, english,
// german, russian, ...) and max_token_bytes; the rest is the text. Checks:
// no crash, every token and key well-formed UTF-8, no empty token, tokens
// within max_token_bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/text.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const kLanguages[] = {"english-s", "none", "english", "german",
                                           "russian",   "french", "porter", "turkish"};
  const uint8_t mode = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  flowrag::TokenizerOptions o;
  o.language = kLanguages[mode & 7];
  o.max_token_bytes = (mode & 8) ? 8 : 64;
  o.remove_stopwords = (mode & 16) == 0;
  for (const std::string& t : flowrag::Tokenize(text, o)) {
    FUZZ_CHECK(!t.empty(), "empty token");
    FUZZ_CHECK(flowrag::IsValidUtf8(t), "ill-formed token");
    // Stemming never lengthens a token by more than a few bytes (english-s: "ies" -> "y").
    FUZZ_CHECK(t.size() <= o.max_token_bytes + 8, "token too long: " + t.substr(0, 80));
  }
  size_t last = 0;
  for (const flowrag::TextSpan& w : flowrag::WordSegments(text)) {
    FUZZ_CHECK(w.begin >= last && w.begin < w.end && w.end <= text.size(), "word segment out of order");
    last = w.end;
  }
  FUZZ_CHECK(flowrag::IsValidUtf8(flowrag::EntityKey(text)), "ill-formed entity key");
  FUZZ_CHECK(flowrag::IsValidUtf8(flowrag::FoldCase(text)), "ill-formed fold");
  return 0;
}
