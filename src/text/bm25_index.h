// Bm25Index: an inverted index with Okapi BM25 scoring.
//
//   score(d, q) = Σ_{t ∈ unique(q)} idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
//   idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))   (never negative)
//
// Documents and queries go through the same tokeniser (common/text.h) with
// the same options (the index keeps the Builder's: Search tokenises queries
// like the documents were), so |d| counts tokens after stopword removal. k1 and b are applied at
// query time, so they can be overridden per query.
//
// Memory: flat arrays only (common/flat_array.h), owned when built, borrowed
// in place when adopted from a segment (ExportArrays / AdoptArrays):
//  - the vocabulary: the terms in a StringArena (term t is terms[t], ids in
//    the order a Builder first met them) and an open-addressing table of
//    term ids (common/string_slots.h: linear probing over a power-of-two
//    number of slots, at most half full, keyed by the stable Hash64 of
//    common/hash.h, so a table written by one process is read by another);
//  - postings in CSR form (term offsets, doc ids ascending, term
//    frequencies) and the document lengths.
// A term lookup hashes the term and compares it with the arena's string of
// each id probed. Why a hash table rather than sorted terms and a binary
// search: it keeps the Builder's term numbering (Concat's "array for array"
// and the persisted part stay as they were) and it is ten times faster on
// 2wiki's questions (33,770 terms, 674 question tokens, warm, median of 7:
// 12.5 ns per lookup, 16.3 ns with the std::unordered_map it replaced,
// 118 ns by binary search over a sorted arena; lookups are 0.35% of a
// 24 µs Search). The table costs 4 bytes a slot (2wiki: 512 KiB beside a
// 504 KiB arena). Scores sum the query's distinct terms in string order,
// so they do not depend on term numbering.
// Build O(total tokens); query O(Σ postings of the query terms + c log k),
// less when the top k is found by pruning (bm25_topk.cc: the frequent
// terms' lists are not read through, only probed for the candidates).
// Thread-safety: immutable after Build(); Search() is safe concurrently.
#ifndef FLOWRAG_TEXT_BM25_INDEX_H_
#define FLOWRAG_TEXT_BM25_INDEX_H_

#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/array_io.h"
#include "common/checked_once.h"
#include "common/flat_array.h"
#include "common/text.h"
#include "flowrag/status.h"

namespace flowrag {

struct Bm25Params {
  double k1 = 1.2;  // Robertson & Zaragoza's usual defaults
  double b = 0.75;
};

struct Bm25Hit {
  uint32_t doc = 0;
  float score = 0.0f;
};

// The ranking order of hits: higher score first, then ascending doc id.
inline bool RanksBefore(const Bm25Hit& x, const Bm25Hit& y) {
  return x.score != y.score ? x.score > y.score : x.doc < y.doc;
}

class Bm25Index {
 public:
  class Builder {
   public:
    // `tokenizer`: how Add() cuts documents and the built index cuts queries.
    explicit Builder(TokenizerOptions tokenizer = {}) : tokenizer_(std::move(tokenizer)) {}
    // Adds the next document (ids are assigned 0, 1, 2, ...).
    void Add(std::string_view text);
    void AddTokens(const std::vector<std::string>& tokens);
    Bm25Index Build() &&;

   private:
    std::unordered_map<std::string, uint32_t> vocab_;
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> postings_;  // term → (doc, tf)
    std::vector<uint32_t> doc_len_;
    std::vector<std::string> scratch_;
    TokenizerOptions tokenizer_;
  };

  // The tokeniser options of documents and queries (the Builder's; Concat
  // and Without keep a's; FromArrays: the defaults until set_tokenizer).
  const TokenizerOptions& tokenizer() const { return tokenizer_; }
  void set_tokenizer(TokenizerOptions tokenizer) { tokenizer_ = std::move(tokenizer); }

  size_t num_docs() const { return doc_len_.size(); }
  size_t vocabulary_size() const { return terms_.size(); }
  double average_length() const { return avgdl_; }
  // The id of `term` (its index in Terms()), or kNoTerm. O(|term|) expected:
  // one hash and the probed ids' string compares (the table has the
  // smallest power of two ≥ 2·terms slots, so it is at most half full);
  // at most one pass over the table whatever an adopted table holds.
  static constexpr uint32_t kNoTerm = UINT32_MAX;
  uint32_t FindTerm(std::string_view term) const;
  uint32_t DocumentFrequency(std::string_view term) const;
  double Idf(std::string_view term) const;

  // Top-k documents for `query` (ties by ascending doc id). When
  // `candidates_scored` is set it receives the number of documents scored.
  std::vector<Bm25Hit> Search(std::string_view query, size_t k, const Bm25Params& params,
                              size_t* candidates_scored = nullptr) const;
  // Same with pre-tokenised query terms.
  std::vector<Bm25Hit> SearchTokens(const std::vector<std::string>& terms, size_t k,
                                    const Bm25Params& params,
                                    size_t* candidates_scored = nullptr) const;
  // Every document sharing a term with `query` and its score (the scores
  // Search returns, bit for bit), ascending by doc id; the others score 0.
  // O(postings of the terms + m log m) for m matching documents.
  std::vector<Bm25Hit> ScoreMatching(std::string_view query, const Bm25Params& params) const;

  // The scoring of a query whose statistics may be a larger corpus's, of
  // which this index holds a part (LayeredBm25, text/layered_bm25.h):
  // `idf[i]` is the idf of the i-th of the query's sorted distinct terms
  // (UniqueTerms) in that corpus, `avgdl` its mean document length (1 when
  // it has none). Scores sum each term's Contribution in that string order,
  // so a document scores bit for bit as in an index of the whole corpus.
  struct Scoring {
    double avgdl = 1.0;
    std::vector<double> idf;
  };
  // The sorted distinct terms of a query.
  static std::vector<std::string> UniqueTerms(std::vector<std::string> terms);
  // This index's own Scoring of `unique_terms`.
  Scoring OwnScoring(const std::vector<std::string>& unique_terms) const;
  // SearchTokens over `unique_terms` (UniqueTerms's output) scored with
  // `scoring`; hits in RanksBefore order.
  std::vector<Bm25Hit> TopKUnique(const std::vector<std::string>& unique_terms,
                                  const Scoring& scoring, size_t k, const Bm25Params& params,
                                  size_t* candidates_scored = nullptr) const;
  // Every document sharing a term with `unique_terms`, scored with
  // `scoring`, in no particular order.
  std::vector<Bm25Hit> MatchingUnique(const std::vector<std::string>& unique_terms,
                                      const Scoring& scoring, const Bm25Params& params) const;
  // ln(1 + (N − df + 0.5) / (df + 0.5)), as every path computes it.
  static double IdfOf(double num_docs, double df) {
    return std::log(1.0 + (num_docs - df + 0.5) / (df + 0.5));
  }
  // Σ of the document lengths (avgdl = length_sum / num_docs).
  uint64_t length_sum() const { return length_sum_; }

  // `a` followed by `b` (b's documents numbered after a's): the index a
  // Builder given a's documents then b's would build, array for array.
  // O(vocabulary + postings) of both.
  static Bm25Index Concat(const Bm25Index& a, const Bm25Index& b);

  // `a` without the documents marked in `removed` (one flag per document;
  // the others renumbered densely, terms left without postings dropped).
  // Searches exactly as an index built from the remaining documents; only
  // the numbering of terms may differ. O(vocabulary + postings).
  static Bm25Index Without(const Bm25Index& a, const std::vector<bool>& removed);

  // The arrays, for persistence (graph/graph_io.h): Terms()[t] is term t,
  // whose postings are (posting_docs, posting_tfs)[offsets[t], offsets[t+1]).
  std::vector<std::string_view> Terms() const;  // O(vocabulary)
  const StringArena& terms() const { return terms_; }
  std::span<const uint64_t> offsets() const { return offsets_; }
  // The postings of every term; of an index adopted lazily (AdoptArrays)
  // only what Postings() or VerifyPostings() checked may be read.
  std::span<const uint32_t> posting_docs() const { return post_doc_; }
  std::span<const uint32_t> posting_tfs() const { return post_tf_; }
  // Term t's postings: [first, second) of posting_docs()/posting_tfs().
  // Of an index whose postings AdoptArrays borrowed lazily, the list is
  // verified and checked (documents ascending and below num_docs(), tfs >
  // 0) at its first call, and is empty when it fails (the damage recorded
  // by the source). REQUIRES t < terms().size(). O(1) after the first call.
  std::pair<uint64_t, uint64_t> Postings(uint32_t t) const;
  // Every list checked as Postings checks it (before a copy of all
  // postings: exports, parts); OK at once when not lazy, else Corruption
  // naming the first bad list. O(postings) the first time.
  Status VerifyPostings() const;
  std::span<const uint32_t> doc_lengths() const { return doc_len_; }
  // The term table's slots (kNoTerm for an empty one).
  std::span<const uint32_t> term_table() const { return table_; }
  // True when every array is borrowed from an ArraySource (AdoptArrays).
  bool borrowed() const;
  // Bytes of the arrays (owned or borrowed).
  size_t MemoryBytes() const;
  // The index of those arrays; it searches exactly as the one they came
  // from. Corruption naming the first violation (offsets not spanning the
  // postings, a doc id out of range, a zero tf, a repeated term).
  // O(vocabulary + postings).
  static Result<Bm25Index> FromArrays(std::vector<std::string> terms, std::vector<uint64_t> offsets,
                                      std::vector<uint32_t> docs, std::vector<uint32_t> tfs,
                                      std::vector<uint32_t> doc_lengths);

  // Hands the arrays to `sink`, named "bm25.*" (ArrayNames(); the terms as
  // the string arena "bm25.terms": "bm25.terms.o", "bm25.terms.b"), the
  // counts and avgdl as scalars, random access for the arrays read by
  // scattered ids (term table, term offsets, document lengths). O(1) beyond
  // the sink's copy. The tokeniser options are not written: AdoptArrays
  // takes them, as a store knows its tokeniser.
  Status ExportArrays(ArraySink& sink) const;
  // The index of arrays an ExportArrays wrote, borrowed in place (no copy;
  // kept alive by source.keep()): it searches exactly as the exported one,
  // scores bit for bit. Checks everything a damaged or crafted file could
  // make unsafe or inconsistent, Corruption naming the array: the format;
  // num_docs and the document lengths' count == num_passages; the terms'
  // arena (offsets first 0, non-decreasing, last == bytes); term offsets
  // (terms + 1 of them, first 0, non-decreasing, last == postings); as many
  // tfs as docs; posting docs < num_passages, tfs > 0; the term table (a
  // power of two slots, more than the terms, each empty or < terms);
  // avgdl == the lengths' mean, bit for bit. A table whose ids sit in the
  // wrong slots only makes lookups miss (probing is bounded by the table's
  // size). A missing array: the source's NotFound. O(postings + docs +
  // table). A source that lends arrays lazily (a segment) lends the
  // postings so: their bytes and the checks of docs and tfs then wait for
  // each list's first read (Postings), and the open costs O(terms + docs +
  // table).
  static Result<Bm25Index> AdoptArrays(const ArraySource& source, size_t num_passages,
                                       const TokenizerOptions& tokenizer);
  // The arrays AdoptArrays borrows lazily: the postings' documents and tfs.
  static std::vector<std::string> LazyArrays();
  // The names ExportArrays writes (the arena's two included).
  static const std::vector<std::string_view>& ArrayNames();

 private:
  // One term's addition to one document's score, as every path computes
  // it (so pruned and exhaustive searches sum the same floats).
  static float Contribution(double idf, double tf, uint32_t length, double avgdl, double k1,
                            double b) {
    const double norm = k1 * (1.0 - b + b * length / avgdl);
    return static_cast<float>(idf * tf * (k1 + 1.0) / (tf + norm));
  }
  // SearchTokens' top k when bounds prune (bm25_topk.cc), else nullopt.
  std::optional<std::vector<Bm25Hit>> PrunedTopK(const std::vector<std::string>& unique_terms,
                                                 const Scoring& scoring, size_t k,
                                                 const Bm25Params& params,
                                                 size_t* candidates_scored) const;
  // Adds each document's BM25 score for `unique_terms` into acc
  // (num_docs() floats); a document's first non-zero addition appends it to
  // `touched` when that is not null.
  void Accumulate(const std::vector<std::string>& unique_terms, const Scoring& scoring,
                  const Bm25Params& params, float* acc, std::vector<uint32_t>* touched) const;
  // Postings' check of term t's list (lazy postings).
  Status CheckList(uint32_t t) const;
  // Sets terms_ and builds table_ over them; false when a term repeats.
  bool SetTerms(StringArena terms);
  void ComputeAverageLength();

  StringArena terms_;
  FlatArray<uint32_t> table_;  // open addressing: term ids by Hash64, kNoTerm empty
  FlatArray<uint64_t> offsets_{std::vector<uint64_t>{0}};  // term t: [offsets_[t], offsets_[t+1])
  FlatArray<uint32_t> post_doc_;
  FlatArray<uint32_t> post_tf_;
  FlatArray<uint32_t> doc_len_;
  // Per term of lazily borrowed postings, whether its list passed
  // CheckList. Shared by copies (they borrow the same arrays); null when not
  // lazy.
  std::shared_ptr<const CheckedOnce> list_state_;
  uint64_t length_sum_ = 0;
  double avgdl_ = 0.0;
  TokenizerOptions tokenizer_;
};

}  // namespace flowrag

#endif  // FLOWRAG_TEXT_BM25_INDEX_H_
