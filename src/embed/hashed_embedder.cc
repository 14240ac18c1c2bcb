#include "embed/hashed_embedder.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "common/hash.h"
#include "common/text.h"

namespace flowrag {
namespace {

constexpr uint64_t kUnigramSeed = 0x756e69;
constexpr uint64_t kBigramSeed = 0x626967;
constexpr uint64_t kCharSeed = 0x636872;
constexpr uint64_t kTokenSeed = 0x746f6b;

inline void AddFeature(uint64_t h, float w, size_t dim, float* out) {
  float sign = (h >> 63) ? -1.0f : 1.0f;
  out[h % dim] += sign * w;
}

}  // namespace

Status HashedEmbedderOptions::Validate() const {
  if (dimension < 8 || dimension > 65536) {
    return Status::InvalidArgument("embedder.dimension: expected 8..65536, got " +
                                   std::to_string(dimension));
  }
  if (char_ngram_min < 1 || char_ngram_max < char_ngram_min || char_ngram_max > 12) {
    return Status::InvalidArgument("embedder.char_ngram_min/max: expected 1 <= min <= max <= 12");
  }
  if (unigram_weight < 0 || bigram_weight < 0 || char_ngram_weight < 0) {
    return Status::InvalidArgument("embedder weights: expected non-negative values");
  }
  return ValidateLanguage(language);
}

std::string HashedEmbedderOptions::Signature() const {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "d%zu-u%g-b%g-c%g-n%d%d", dimension, unigram_weight,
                bigram_weight, char_ngram_weight, char_ngram_min, char_ngram_max);
  return std::string(buf) + "-" + TokenizerSignature(language);
}

uint64_t TokenHash(std::string_view token) { return Hash64(token, kTokenSeed); }

std::vector<uint64_t> TokenHashes(std::string_view text, std::string_view language) {
  TokenizerOptions o;
  o.language = std::string(language);
  std::vector<uint64_t> out;
  for (const std::string& t : Tokenize(text, o)) out.push_back(TokenHash(t));
  return out;
}

HashedEmbedder::HashedEmbedder(HashedEmbedderOptions options, std::shared_ptr<const IdfTable> idf)
    : options_(options), idf_(idf ? std::move(idf) : std::make_shared<IdfTable>()) {
  char fp[17];
  std::snprintf(fp, sizeof(fp), "%016llx", static_cast<unsigned long long>(idf_->Fingerprint()));
  model_id_ = "flowrag-hash-v1:" + options_.Signature() + ":idf-" + fp;
}

void HashedEmbedder::EmbedOne(std::string_view text, float* out) const {
  const size_t dim = options_.dimension;
  std::memset(out, 0, dim * sizeof(float));
  thread_local std::vector<std::string> tokens;
  thread_local std::vector<float> idfs;
  tokens.clear();
  thread_local TokenizerOptions tokenizer;
  tokenizer.language = options_.language;
  TokenizeInto(text, tokenizer, &tokens);
  idfs.resize(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) idfs[i] = idf_->Idf(TokenHash(tokens[i]));

  std::string padded;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& tok = tokens[i];
    const float idf = idfs[i];
    if (options_.unigram_weight > 0) {
      AddFeature(Hash64(tok, kUnigramSeed), options_.unigram_weight * idf, dim, out);
    }
    if (options_.bigram_weight > 0 && i + 1 < tokens.size()) {
      uint64_t h = HashCombine(Hash64(tok, kBigramSeed), Hash64(tokens[i + 1], kBigramSeed));
      AddFeature(h, options_.bigram_weight * std::sqrt(idf * idfs[i + 1]), dim, out);
    }
    if (options_.char_ngram_weight > 0) {
      padded.assign("<");
      padded += tok;
      padded += '>';
      const int len = static_cast<int>(padded.size());
      int count = 0;
      for (int n = options_.char_ngram_min; n <= options_.char_ngram_max; ++n) {
        count += std::max(0, len - n + 1);
      }
      if (count == 0) continue;
      const float w = options_.char_ngram_weight * idf / std::sqrt(static_cast<float>(count));
      for (int n = options_.char_ngram_min; n <= options_.char_ngram_max; ++n) {
        for (int s = 0; s + n <= len; ++s) {
          AddFeature(Hash64(std::string_view(padded).substr(s, n), kCharSeed), w, dim, out);
        }
      }
    }
  }
  double norm = 0;
  for (size_t d = 0; d < dim; ++d) norm += static_cast<double>(out[d]) * out[d];
  if (norm > 0) {
    const float inv = static_cast<float>(1.0 / std::sqrt(norm));
    for (size_t d = 0; d < dim; ++d) out[d] *= inv;
  }
}

Result<FloatMatrix> HashedEmbedder::Embed(std::span<const std::string> texts) {
  FloatMatrix m(texts.size(), options_.dimension);
  for (size_t i = 0; i < texts.size(); ++i) EmbedOne(texts[i], m.row(i));
  return m;
}

}  // namespace flowrag
