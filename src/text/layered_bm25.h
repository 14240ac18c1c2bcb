// LayeredBm25: the BM25 index of a snapshot, as one Bm25Index or as a
// large base and a small tail of documents appended after it, so that an
// insert does not copy the base's postings (a memory-mapped base stays
// mapped, shared with the other readers of its segment).
//
//   LayeredBm25 bm25(std::move(built));                        // one layer
//   bm25 = LayeredBm25::Appended(bm25, std::move(new_docs));   // base + tail
//   bm25.Search("river rises", 10, Bm25Params{});
//
// Exactness: a search scores every document with the whole index's
// statistics (N, each term's document frequency summed over the layers,
// avgdl from the summed lengths) and each term's contribution added in the
// string order of the query's terms (Bm25Index::Scoring), so hits and
// scores equal, bit for bit, those of one Bm25Index built from all the
// documents; the top k is the best k of each layer's exact top k. The
// tail's documents are numbered after the base's.
//
// Folding: Appended merges the new documents into the tail
// (Bm25Index::Concat, O(tail)), and folds base and tail into one index
// (O(index)) once the tail holds more than max(kFoldMinDocs, N / 32)
// documents: an append then costs O(tail + new), at most N/32 of the
// corpus, and the fold's O(N) comes once per N/32 appended documents.
// Writing the index out (Flat) and removing documents (Without) fold.
//
// Cost of a search: each layer's (the tail's small lists are read through)
// plus the document frequencies from both. Copies share the layers: O(1).
// Thread-safety: immutable; const methods are safe concurrently.
#ifndef FLOWRAG_TEXT_LAYERED_BM25_H_
#define FLOWRAG_TEXT_LAYERED_BM25_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/bm25_index.h"

namespace flowrag {

class LayeredBm25 {
 public:
  // A tail up to this many documents is never folded.
  static constexpr size_t kFoldMinDocs = 4096;

  LayeredBm25() : LayeredBm25(Bm25Index()) {}
  // One layer.
  explicit LayeredBm25(Bm25Index index);

  // `a` followed by `added`'s documents (numbered after a's; `added` has
  // a's tokeniser). Searches exactly as Bm25Index::Concat of the two.
  static LayeredBm25 Appended(const LayeredBm25& a, Bm25Index added);
  // `a` without the documents marked in `removed` (one flag per document,
  // the others renumbered densely): Bm25Index::Without of the folded index,
  // one layer.
  static LayeredBm25 Without(const LayeredBm25& a, const std::vector<bool>& removed);

  const TokenizerOptions& tokenizer() const { return base_->tokenizer(); }
  size_t num_docs() const { return num_docs_; }
  // Distinct terms over both layers.
  size_t vocabulary_size() const { return vocabulary_size_; }
  double average_length() const { return avgdl_; }
  bool layered() const { return tail_ != nullptr; }
  size_t tail_docs() const { return tail_ ? tail_->num_docs() : 0; }

  uint32_t DocumentFrequency(std::string_view term) const;
  double Idf(std::string_view term) const;
  // As Bm25Index's, over both layers.
  std::vector<Bm25Hit> Search(std::string_view query, size_t k, const Bm25Params& params,
                              size_t* candidates_scored = nullptr) const;
  std::vector<Bm25Hit> SearchTokens(const std::vector<std::string>& terms, size_t k,
                                    const Bm25Params& params,
                                    size_t* candidates_scored = nullptr) const;
  std::vector<Bm25Hit> ScoreMatching(std::string_view query, const Bm25Params& params) const;

  // The one index of all the documents: the base when there is no tail,
  // else the two folded (Concat, O(index)), array for array the index a
  // Builder given every document in order would build.
  std::shared_ptr<const Bm25Index> Flat() const;
  // Bytes of both layers' arrays.
  size_t MemoryBytes() const;

 private:
  LayeredBm25(std::shared_ptr<const Bm25Index> base, std::shared_ptr<const Bm25Index> tail);
  Bm25Index::Scoring ScoringOf(const std::vector<std::string>& unique_terms) const;

  std::shared_ptr<const Bm25Index> base_;  // never null
  std::shared_ptr<const Bm25Index> tail_;  // null: one layer
  size_t num_docs_ = 0;
  size_t vocabulary_size_ = 0;
  double avgdl_ = 0.0;
};

}  // namespace flowrag

#endif  // FLOWRAG_TEXT_LAYERED_BM25_H_
