// A one-passage DocumentWrite for store tests: title "T <id>", the whole
// text as its passage, `hash` as its content hash.
#ifndef FLOWRAG_TESTS_STORE_DOCS_H_
#define FLOWRAG_TESTS_STORE_DOCS_H_

#include <cstdint>
#include <string>

#include "common/hash.h"
#include "storage/store.h"

namespace flowrag::testing {

inline DocumentWrite Doc(const std::string& id, const std::string& text, uint64_t hash) {
  DocumentWrite w;
  w.doc.external_id = id;
  w.doc.title = "T " + id;
  w.doc.text = text;
  w.doc.source = "test";
  w.content_hash = hash;
  w.chunking = "none";
  PassageWrite p;
  p.begin = 0;
  p.end = static_cast<uint32_t>(text.size());
  p.embed_hash = Hash64(text);
  w.passages.push_back(p);
  return w;
}

}  // namespace flowrag::testing

#endif  // FLOWRAG_TESTS_STORE_DOCS_H_
