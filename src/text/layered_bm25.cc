#include "text/layered_bm25.h"

#include <algorithm>
#include <utility>

namespace flowrag {

LayeredBm25::LayeredBm25(Bm25Index index)
    : LayeredBm25(std::make_shared<const Bm25Index>(std::move(index)), nullptr) {}

LayeredBm25::LayeredBm25(std::shared_ptr<const Bm25Index> base,
                         std::shared_ptr<const Bm25Index> tail)
    : base_(std::move(base)), tail_(std::move(tail)) {
  num_docs_ = base_->num_docs();
  vocabulary_size_ = base_->vocabulary_size();
  uint64_t length_sum = base_->length_sum();
  if (tail_ != nullptr) {
    num_docs_ += tail_->num_docs();
    length_sum += tail_->length_sum();
    for (std::string_view term : tail_->Terms()) {
      if (base_->FindTerm(term) == Bm25Index::kNoTerm) ++vocabulary_size_;
    }
  }
  // As Bm25Index::ComputeAverageLength, so that the mean is the same double.
  avgdl_ = num_docs_ == 0 ? 0.0 : static_cast<double>(length_sum) / num_docs_;
}

LayeredBm25 LayeredBm25::Appended(const LayeredBm25& a, Bm25Index added) {
  if (added.num_docs() == 0) return a;
  if (a.num_docs_ == 0) return LayeredBm25(std::move(added));
  auto tail = std::make_shared<const Bm25Index>(
      a.tail_ == nullptr ? std::move(added) : Bm25Index::Concat(*a.tail_, added));
  if (tail->num_docs() > std::max(kFoldMinDocs, (a.num_docs_ + added.num_docs()) / 32)) {
    return LayeredBm25(Bm25Index::Concat(*a.base_, *tail));
  }
  return LayeredBm25(a.base_, std::move(tail));
}

LayeredBm25 LayeredBm25::Without(const LayeredBm25& a, const std::vector<bool>& removed) {
  return LayeredBm25(Bm25Index::Without(*a.Flat(), removed));
}

std::shared_ptr<const Bm25Index> LayeredBm25::Flat() const {
  if (tail_ == nullptr) return base_;
  return std::make_shared<const Bm25Index>(Bm25Index::Concat(*base_, *tail_));
}

size_t LayeredBm25::MemoryBytes() const {
  return base_->MemoryBytes() + (tail_ ? tail_->MemoryBytes() : 0);
}

uint32_t LayeredBm25::DocumentFrequency(std::string_view term) const {
  return base_->DocumentFrequency(term) + (tail_ ? tail_->DocumentFrequency(term) : 0);
}

double LayeredBm25::Idf(std::string_view term) const {
  return Bm25Index::IdfOf(static_cast<double>(num_docs_), DocumentFrequency(term));
}

Bm25Index::Scoring LayeredBm25::ScoringOf(const std::vector<std::string>& unique_terms) const {
  Bm25Index::Scoring scoring;
  scoring.avgdl = avgdl_ > 0 ? avgdl_ : 1.0;
  scoring.idf.reserve(unique_terms.size());
  for (const std::string& term : unique_terms) scoring.idf.push_back(Idf(term));
  return scoring;
}

std::vector<Bm25Hit> LayeredBm25::Search(std::string_view query, size_t k, const Bm25Params& params,
                                         size_t* candidates_scored) const {
  return SearchTokens(Tokenize(query, tokenizer()), k, params, candidates_scored);
}

std::vector<Bm25Hit> LayeredBm25::SearchTokens(const std::vector<std::string>& terms, size_t k,
                                               const Bm25Params& params,
                                               size_t* candidates_scored) const {
  if (tail_ == nullptr) return base_->SearchTokens(terms, k, params, candidates_scored);
  const std::vector<std::string> unique_terms = Bm25Index::UniqueTerms(terms);
  const Bm25Index::Scoring scoring = ScoringOf(unique_terms);
  size_t base_scored = 0, tail_scored = 0;
  std::vector<Bm25Hit> hits = base_->TopKUnique(unique_terms, scoring, k, params, &base_scored);
  const auto offset = static_cast<uint32_t>(base_->num_docs());
  for (Bm25Hit hit : tail_->TopKUnique(unique_terms, scoring, k, params, &tail_scored)) {
    hits.push_back({hit.doc + offset, hit.score});
  }
  if (candidates_scored != nullptr) *candidates_scored = base_scored + tail_scored;
  std::sort(hits.begin(), hits.end(), RanksBefore);
  if (hits.size() > k) hits.resize(k);
  return hits;
}

std::vector<Bm25Hit> LayeredBm25::ScoreMatching(std::string_view query,
                                                const Bm25Params& params) const {
  if (tail_ == nullptr) return base_->ScoreMatching(query, params);
  const std::vector<std::string> unique_terms =
      Bm25Index::UniqueTerms(Tokenize(query, tokenizer()));
  const Bm25Index::Scoring scoring = ScoringOf(unique_terms);
  std::vector<Bm25Hit> hits = base_->MatchingUnique(unique_terms, scoring, params);
  const auto offset = static_cast<uint32_t>(base_->num_docs());
  for (Bm25Hit hit : tail_->MatchingUnique(unique_terms, scoring, params)) {
    hits.push_back({hit.doc + offset, hit.score});
  }
  std::sort(hits.begin(), hits.end(),
            [](const Bm25Hit& x, const Bm25Hit& y) { return x.doc < y.doc; });
  return hits;
}

}  // namespace flowrag
