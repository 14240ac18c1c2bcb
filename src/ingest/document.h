// Raw documents as loaders produce them, and the chunks they are split into.
#ifndef FLOWRAG_INGEST_DOCUMENT_H_
#define FLOWRAG_INGEST_DOCUMENT_H_

#include <cstdint>
#include <string>

namespace flowrag {

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
