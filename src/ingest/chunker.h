// Chunkers: split a document's text into the passages that get indexed.
//
// Common contract (all strategies):
//   - Offsets are UTF-8 byte offsets into the input and every chunk satisfies
//     chunk.text == text.substr(chunk.begin, chunk.end - chunk.begin).
//   - A chunk never starts or ends inside a well-formed UTF-8 code point
//     (ill-formed bytes are treated as one-byte characters and never merged
//     with a neighbour).
//   - Chunks are returned in text order with index 0, 1, 2, ...; begin
//     offsets strictly increase.
//   - A text with no non-whitespace character yields no chunks.
//   - Whitespace is the set of Python's str.isspace() (ASCII whitespace, the
//     information separators U+001C..U+001F, U+0085, U+00A0, the Unicode
//     space separators, U+2028, U+2029); a "word" is a maximal run of other
//     code points, as Python's str.split() would return it.
//   - "Characters" (the *_chars options) are Unicode code points, as the
//     paper's len() counts them; an ill-formed byte counts as one.
//
// Strategy kNone: one chunk holding the whole text, untrimmed.
//
// Strategy kWordWindow (SA-RAG §5.3: 500-word windows, 200 words overlap).
//   Let w_0..w_{n-1} be the words, W = window_words, O = overlap_words,
//   S = W - O (the stride).
//   - n <= W: one chunk from the first byte of w_0 to the last byte of
//     w_{n-1}.
//   - n > W: windows [kS, kS + W) for k = 0, 1, ... while kS + W < n, then
//     one final window [n - W, n) that ends at the last word. Every chunk
//     therefore has exactly W words and there is no short tail chunk;
//     consecutive windows share O words, except the final one, which shares
//     between O and W - 1 words with its predecessor (it is moved back to end
//     at w_{n-1}). Example: n = 1200, W = 500, O = 200 gives chunks starting
//     at words 0, 300, 600 and 700 (the last ending at word 1199); n = 1100
//     gives 0, 300, 600.
//   - A chunk's text runs from the first byte of its first word to the last
//     byte of its last word (inner whitespace kept as in the source).
//
// Strategy kBoundary (schema contracts paper, App. B.3.3 and B.7.4).
//   - A text of at most boundary_threshold_chars characters is one chunk
//     (trimmed of leading and trailing whitespace), even when it is longer
//     than max_chars: the paper processes such documents as-is.
//   - Longer texts are cut greedily from the front. With the current chunk
//     starting at character s, M = max_chars, V = overlap_chars:
//       1. If the rest of the text (up to its last word) has at most M
//          characters it becomes the last chunk.
//       2. Otherwise a cut is chosen in the window [s + m, s + M] where
//          m = max(M / 2, V + 1) (so chunks are at least about half full and
//          the start always advances). Candidate cuts, by priority:
//            a. section headers: the start of a line holding a markdown
//               ATX heading (up to 3 spaces, 1-6 '#', then a space, tab or
//               line end; not inside ``` or ~~~ fences), or the '<' of an
//               HTML heading tag <h1>..<h6> (any case);
//            b. discourse boundaries: the start of the first non-blank line
//               after one or more blank lines (paragraph break), or of a line
//               that opens with a speaker label ("Alice:", "Dr. Smith:",
//               "Q:", "SPEAKER 2:": 1-4 tokens starting with an upper-case
//               or non-ASCII letter, at most 48 bytes, then ':' and
//               whitespace);
//            c. sentence ends: just after '.', '!', '?' or U+2026 (plus any
//               closing quotes or brackets) followed by whitespace, or after
//               the CJK full stops U+3002, U+FF01, U+FF1F;
//            d. word ends (the sliding-window fallback, at a word boundary);
//            e. a hard cut at exactly s + M characters (only when no word
//               boundary exists in the window, e.g. a very long token or
//               text without spaces); it falls between code points.
//          The latest candidate of the highest priority present is used.
//          The chunk ends there, with trailing whitespace trimmed.
//       3. The next chunk starts inside the previous one, at most V
//          characters before the cut: at the first word that starts at or
//          after (cut - V) and before the cut. When no word starts there and
//          the cut fell inside a word, it starts exactly V characters before
//          the cut (a code point boundary inside that word); otherwise, at
//          the first word after the cut (no overlap).
//     Every chunk of a long text has at most M characters, every word lies
//     in some chunk, and consecutive chunks overlap by at most V characters.
//
// Complexity: O(n) time in the text length for every strategy (the boundary
// strategy indexes the text in one pass and then moves monotone cursors; the
// hard-cut and overlap walks are bounded by M per chunk), plus the size of the
// returned chunk texts. Memory: O(number of words) for the index.
// Thread-safety: pure functions of their arguments.
#ifndef FLOWRAG_INGEST_CHUNKER_H_
#define FLOWRAG_INGEST_CHUNKER_H_

#include <cstddef>
#include <string_view>
#include <vector>

#include "flowrag/options.h"
#include "flowrag/status.h"
#include "ingest/document.h"

namespace flowrag {

// ChunkOptions (strategy, window_words = 500, overlap_words = 200,
// boundary_threshold_chars = 10000, max_chars = 8000, overlap_chars = 500)
// is part of the public API, in flowrag/options.h. This module implements
// its methods:
//   Validate(): OK, or InvalidArgument naming the offending field:
//     window_words >= 1, overlap_words < window_words, max_chars >= 1,
//     overlap_chars < max_chars, every size below 2^32, a known strategy.
//     All fields are checked, whichever strategy is selected.
//   Signature(): "none/v1", "window/v1:500:200" or
//     "boundary/v1:10000:8000:500": the strategy, the version of its
//     algorithm and the fields it reads, so stored documents are re-chunked
//     when either changes.
// and ParseChunkStrategy() / ChunkStrategyName() (flowrag/options.h):
// "none" | "window" | "boundary".

// Splits `text` as described above.
// Options should pass Validate(); if they do not, sizes of 0 are treated as 1
// and overlaps are clamped to size - 1 (never a crash or an endless loop).
// REQUIRES: text.size() < 2^32 (Chunk offsets are 32-bit; the loaders
// enforce it).
std::vector<Chunk> ChunkText(std::string_view text, const ChunkOptions& options);

}  // namespace flowrag

#endif  // FLOWRAG_INGEST_CHUNKER_H_
