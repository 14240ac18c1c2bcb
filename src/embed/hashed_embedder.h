// HashedEmbedder: the built-in offline embedder. Deterministic, no model file.
//
// A text becomes a sparse bag of features, each hashed into one of
// `dimension` buckets with a hash-derived sign (the "hashing trick"):
//   - word unigrams (the shared tokeniser: stopwords dropped, stemmed per
//     `language`; Chinese, Japanese and Thai segmented into words),
//     weight idf(w);
//   - word bigrams of adjacent kept tokens, weight bigram_weight·sqrt(idf·idf);
//   - character n-grams (n_min..n_max) of "<w>", weight
//     char_ngram_weight·idf(w)/sqrt(#n-grams of w), so spelling variants and
//     inflections still overlap.
// Term frequency is counted per occurrence; the vector is L2-normalised, so
// dot products are cosine similarities of IDF-weighted feature bags.
//
// The IDF table is fitted on the corpus (embed/idf_table.h) and frozen; its
// fingerprint is part of ModelId(), so cached embeddings never mix tables.
//
// Cost: O(bytes of text) per text. Thread-safety: Embed() is const in effect
// and safe to call concurrently.
#ifndef FLOWRAG_EMBED_HASHED_EMBEDDER_H_
#define FLOWRAG_EMBED_HASHED_EMBEDDER_H_

#include <memory>
#include <string>
#include <vector>

#include "embed/embedder.h"
#include "common/text.h"
#include "embed/idf_table.h"

namespace flowrag {

struct HashedEmbedderOptions {
  size_t dimension = 1024;
  float unigram_weight = 1.0f;
  float bigram_weight = 0.5f;
  float char_ngram_weight = 0.5f;
  int char_ngram_min = 3;
  int char_ngram_max = 5;
  // The tokeniser's stemming language (common/text.h), kDefaultLanguage by
  // default; with the tokeniser version, part of the model id, so vectors of
  // another language or tokeniser version are never mixed.
  std::string language = std::string(kDefaultLanguage);

  Status Validate() const;
  // Canonical text of the options, part of the model id.
  std::string Signature() const;
};

// Hash of a token as the IdfTable keys it.
uint64_t TokenHash(std::string_view token);

// Token hashes of `text` under the shared tokeniser (stemmed per
// `language`), for fitting an IdfTable.
std::vector<uint64_t> TokenHashes(std::string_view text,
                                  std::string_view language = kDefaultLanguage);

class HashedEmbedder final : public Embedder {
 public:
  HashedEmbedder(HashedEmbedderOptions options, std::shared_ptr<const IdfTable> idf);

  std::string ModelId() const override { return model_id_; }
  size_t Dimension() const override { return options_.dimension; }
  Result<FloatMatrix> Embed(std::span<const std::string> texts) override;
  bool IsLocal() const override { return true; }
  bool SparseQueries() const override { return true; }

  // Embeds one text into `out` (Dimension() floats).
  void EmbedOne(std::string_view text, float* out) const;

  const IdfTable& idf() const { return *idf_; }

 private:
  HashedEmbedderOptions options_;
  std::shared_ptr<const IdfTable> idf_;
  std::string model_id_;
};

}  // namespace flowrag

#endif  // FLOWRAG_EMBED_HASHED_EMBEDDER_H_
