// IdfTable: corpus document frequencies of word tokens, keyed by token hash,
// fitted once over a corpus and frozen (the "vocabulary" of the built-in
// embedder). Stored in the store as an opaque blob (Serialize/Deserialize).
//
// idf(t) = ln((N + 1) / (df(t) + 1)) + 1, so unseen tokens get the highest
// weight and no weight is ever zero or negative.
//
// Thread-safety: immutable after construction; concurrent reads are safe.
#ifndef FLOWRAG_EMBED_IDF_TABLE_H_
#define FLOWRAG_EMBED_IDF_TABLE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flowrag/status.h"

namespace flowrag {

class IdfTable {
 public:
  IdfTable() = default;  // empty corpus: every token has idf 1

  // Accumulates document frequencies; Build() freezes them.
  class Builder {
   public:
    // `token_hashes` of one document; duplicates are counted once.
    void AddDocument(const std::vector<uint64_t>& token_hashes);
    IdfTable Build() &&;

   private:
    uint64_t num_docs_ = 0;
    std::unordered_map<uint64_t, uint32_t> df_;
    std::vector<uint64_t> scratch_;
  };

  uint64_t num_docs() const { return num_docs_; }
  size_t vocabulary_size() const { return df_.size(); }
  uint32_t DocumentFrequency(uint64_t token_hash) const;  // O(log V)
  float Idf(uint64_t token_hash) const;

  // Compact little-endian encoding with a magic and version.
  std::string Serialize() const;
  static Result<IdfTable> Deserialize(std::string_view bytes);

  // Hash of the contents; changes whenever any frequency changes.
  uint64_t Fingerprint() const { return fingerprint_; }

 private:
  void Finalize();

  uint64_t num_docs_ = 0;
  std::vector<std::pair<uint64_t, uint32_t>> df_;  // sorted by token hash
  uint64_t fingerprint_ = 0;
};

}  // namespace flowrag

#endif  // FLOWRAG_EMBED_IDF_TABLE_H_
