// Raw documents as loaders produce them, and the chunks they are split into.
#ifndef FLOWRAG_INGEST_DOCUMENT_H_
#define FLOWRAG_INGEST_DOCUMENT_H_

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace flowrag {

// Page breaks. A document read from a paged source (a PDF) ends every page's
// text with U+000C FORM FEED, so its text holds exactly one form feed per
// page, the last one at the very end, and the pages survive storage as they
// are (the store keeps the text; no format change). Page k (1-based) is the
// text between the (k-1)-th and the k-th form feed. Any text that holds a
// form feed is paged this way (plain-text files with form feeds, such as the
// RFCs, get page numbers too); a text without one has no pages.
inline constexpr char kPageBreak = '\f';

// Byte offsets of every page break of `text`, in order. O(n).
inline std::vector<uint32_t> PageBreaks(std::string_view text) {
  std::vector<uint32_t> breaks;
  for (size_t at = text.find(kPageBreak); at != std::string_view::npos;
       at = text.find(kPageBreak, at + 1)) {
    breaks.push_back(static_cast<uint32_t>(at));
  }
  return breaks;
}

// The 1-based pages of the bytes [begin, end) of a text whose page breaks are
// `breaks` (PageBreaks), as {first, last}; {0, 0} when the text has no pages.
// The last page is that of byte end - 1 (a span ending on a page break ends
// on that page); an empty span lies on the page of `begin`. O(log breaks).
struct PageSpan {
  int32_t first = 0;
  int32_t last = 0;
};
inline PageSpan PagesOfSpan(std::span<const uint32_t> breaks, uint32_t begin, uint32_t end) {
  if (breaks.empty()) return {};
  auto page_of = [&](uint32_t offset) {
    const auto before = std::lower_bound(breaks.begin(), breaks.end(), offset) - breaks.begin();
    // Text after the last break (none in a PDF's text) counts as the last page.
    return static_cast<int32_t>(std::min<size_t>(before, breaks.size() - 1) + 1);
  };
  const int32_t first = page_of(begin);
  return {first, end > begin ? std::max(first, page_of(end - 1)) : first};
}

// One document read from a source, before chunking.
struct RawDocument {
  // Stable id: the record's "id" field when present, otherwise derived from
  // the source (the file path relative to the indexed directory, or
  // "<file>:<line>" / "<file>#<index>" for records without an id).
  std::string external_id;
  std::string title;   // may be empty
  std::string text;    // valid UTF-8
  std::string source;  // the file it came from
  int64_t line = 0;    // 1-based line (JSONL) or record index + 1 (JSON list); 0 for whole files
};

// A passage cut from a document. Offsets are UTF-8 byte offsets into
// RawDocument::text: text == doc.text.substr(begin, end - begin).
struct Chunk {
  int32_t index = 0;  // 0-based position within the document
  uint32_t begin = 0;
  uint32_t end = 0;
  std::string text;
};

}  // namespace flowrag

#endif  // FLOWRAG_INGEST_DOCUMENT_H_
