#include "text/bm25_index.h"

#include <algorithm>
#include <cmath>

#include "common/text.h"

namespace flowrag {

void Bm25Index::Builder::Add(std::string_view text) {
  scratch_.clear();
  TokenizeInto(text, tokenizer_, &scratch_);
  AddTokens(scratch_);
}

void Bm25Index::Builder::AddTokens(const std::vector<std::string>& tokens) {
  const uint32_t doc = static_cast<uint32_t>(doc_len_.size());
  doc_len_.push_back(static_cast<uint32_t>(tokens.size()));
  for (const std::string& t : tokens) {
    auto [it, inserted] = vocab_.try_emplace(t, static_cast<uint32_t>(postings_.size()));
    if (inserted) postings_.emplace_back();
    auto& list = postings_[it->second];
    if (!list.empty() && list.back().first == doc) {
      ++list.back().second;
    } else {
      list.emplace_back(doc, 1);
    }
  }
}

Bm25Index Bm25Index::Builder::Build() && {
  Bm25Index idx;
  idx.tokenizer_ = std::move(tokenizer_);
  idx.vocab_ = std::move(vocab_);
  idx.doc_len_ = std::move(doc_len_);
  idx.offsets_.assign(postings_.size() + 1, 0);
  size_t total = 0;
  for (size_t t = 0; t < postings_.size(); ++t) {
    idx.offsets_[t] = total;
    total += postings_[t].size();
  }
  idx.offsets_[postings_.size()] = total;
  idx.post_doc_.reserve(total);
  idx.post_tf_.reserve(total);
  for (auto& list : postings_) {
    for (auto [d, tf] : list) {
      idx.post_doc_.push_back(d);
      idx.post_tf_.push_back(tf);
    }
    std::vector<std::pair<uint32_t, uint32_t>>().swap(list);
  }
  idx.ComputeAverageLength();
  return idx;
}

void Bm25Index::ComputeAverageLength() {
  uint64_t sum = 0;
  for (uint32_t l : doc_len_) sum += l;
  avgdl_ = doc_len_.empty() ? 0.0 : static_cast<double>(sum) / doc_len_.size();
}

Bm25Index Bm25Index::Concat(const Bm25Index& a, const Bm25Index& b) {
  Bm25Index out;
  out.tokenizer_ = a.tokenizer_;
  out.vocab_ = a.vocab_;
  // b's term t → term id in `out` (a's id, or the next new one in b's order,
  // as a Builder given a's documents first would number them).
  const std::vector<std::string_view> b_terms = b.Terms();
  std::vector<uint32_t> b_to_out(b_terms.size());
  for (uint32_t t = 0; t < b_terms.size(); ++t) {
    auto [it, inserted] = out.vocab_.try_emplace(std::string(b_terms[t]),
                                                 static_cast<uint32_t>(out.vocab_.size()));
    b_to_out[t] = it->second;
  }
  const size_t num_terms = out.vocab_.size();
  const size_t a_terms = a.offsets_.empty() ? 0 : a.offsets_.size() - 1;
  std::vector<uint32_t> out_to_b(num_terms, UINT32_MAX);
  for (uint32_t t = 0; t < b_to_out.size(); ++t) out_to_b[b_to_out[t]] = t;
  const auto a_docs = static_cast<uint32_t>(a.doc_len_.size());
  out.offsets_.assign(num_terms + 1, 0);
  out.post_doc_.reserve(a.post_doc_.size() + b.post_doc_.size());
  out.post_tf_.reserve(a.post_tf_.size() + b.post_tf_.size());
  for (size_t t = 0; t < num_terms; ++t) {
    out.offsets_[t] = out.post_doc_.size();
    if (t < a_terms) {
      for (uint64_t i = a.offsets_[t]; i < a.offsets_[t + 1]; ++i) {
        out.post_doc_.push_back(a.post_doc_[i]);
        out.post_tf_.push_back(a.post_tf_[i]);
      }
    }
    if (out_to_b[t] != UINT32_MAX) {
      const uint32_t bt = out_to_b[t];
      for (uint64_t i = b.offsets_[bt]; i < b.offsets_[bt + 1]; ++i) {
        out.post_doc_.push_back(a_docs + b.post_doc_[i]);
        out.post_tf_.push_back(b.post_tf_[i]);
      }
    }
  }
  out.offsets_[num_terms] = out.post_doc_.size();
  out.doc_len_ = a.doc_len_;
  out.doc_len_.insert(out.doc_len_.end(), b.doc_len_.begin(), b.doc_len_.end());
  out.ComputeAverageLength();
  return out;
}

Bm25Index Bm25Index::Without(const Bm25Index& a, const std::vector<bool>& removed) {
  std::vector<int64_t> new_doc(a.doc_len_.size(), -1);
  Bm25Index out;
  out.tokenizer_ = a.tokenizer_;
  for (size_t d = 0; d < a.doc_len_.size(); ++d) {
    if (removed[d]) continue;
    new_doc[d] = static_cast<int64_t>(out.doc_len_.size());
    out.doc_len_.push_back(a.doc_len_[d]);
  }
  const std::vector<std::string_view> terms = a.Terms();
  out.offsets_.push_back(0);
  for (size_t t = 0; t < terms.size(); ++t) {
    const size_t before = out.post_doc_.size();
    for (uint64_t i = a.offsets_[t]; i < a.offsets_[t + 1]; ++i) {
      if (new_doc[a.post_doc_[i]] < 0) continue;
      out.post_doc_.push_back(static_cast<uint32_t>(new_doc[a.post_doc_[i]]));
      out.post_tf_.push_back(a.post_tf_[i]);
    }
    if (out.post_doc_.size() == before) continue;  // the term is gone
    out.vocab_.emplace(std::string(terms[t]), static_cast<uint32_t>(out.offsets_.size() - 1));
    out.offsets_.push_back(out.post_doc_.size());
  }
  out.ComputeAverageLength();
  return out;
}

std::vector<std::string_view> Bm25Index::Terms() const {
  std::vector<std::string_view> terms(vocab_.size());
  for (const auto& [term, id] : vocab_) terms[id] = term;
  return terms;
}

Result<Bm25Index> Bm25Index::FromArrays(std::vector<std::string> terms,
                                        std::vector<uint64_t> offsets, std::vector<uint32_t> docs,
                                        std::vector<uint32_t> tfs,
                                        std::vector<uint32_t> doc_lengths) {
  auto bad = [](const std::string& what) { return Status::Corruption("bm25 arrays: " + what); };
  if (offsets.size() != terms.size() + 1 || offsets.front() != 0 || offsets.back() != docs.size() ||
      docs.size() != tfs.size()) {
    return bad("offsets do not span the " + std::to_string(docs.size()) + " postings of " +
               std::to_string(terms.size()) + " terms");
  }
  for (size_t t = 0; t < terms.size(); ++t) {
    if (offsets[t] > offsets[t + 1]) return bad("offsets decrease at term " + std::to_string(t));
  }
  for (size_t i = 0; i < docs.size(); ++i) {
    if (docs[i] >= doc_lengths.size() || tfs[i] == 0) {
      return bad("posting " + std::to_string(i) + " (doc " + std::to_string(docs[i]) + ", tf " +
                 std::to_string(tfs[i]) + ")");
    }
  }
  Bm25Index idx;
  idx.vocab_.reserve(terms.size());
  for (size_t t = 0; t < terms.size(); ++t) {
    if (!idx.vocab_.emplace(std::move(terms[t]), static_cast<uint32_t>(t)).second) {
      return bad("term " + std::to_string(t) + " repeats an earlier one");
    }
  }
  idx.offsets_ = std::move(offsets);
  idx.post_doc_ = std::move(docs);
  idx.post_tf_ = std::move(tfs);
  idx.doc_len_ = std::move(doc_lengths);
  idx.ComputeAverageLength();
  return idx;
}

uint32_t Bm25Index::DocumentFrequency(std::string_view term) const {
  auto it = vocab_.find(std::string(term));
  if (it == vocab_.end()) return 0;
  return static_cast<uint32_t>(offsets_[it->second + 1] - offsets_[it->second]);
}

double Bm25Index::Idf(std::string_view term) const {
  const double n = static_cast<double>(num_docs());
  const double df = DocumentFrequency(term);
  return std::log(1.0 + (n - df + 0.5) / (df + 0.5));
}

std::vector<Bm25Hit> Bm25Index::Search(std::string_view query, size_t k, const Bm25Params& params,
                                       size_t* candidates_scored) const {
  return SearchTokens(Tokenize(query, tokenizer_), k, params, candidates_scored);
}

void Bm25Index::Accumulate(const std::vector<std::string>& terms, const Bm25Params& params,
                           float* acc, std::vector<uint32_t>* touched) const {
  std::vector<std::string> unique_terms(terms);
  std::sort(unique_terms.begin(), unique_terms.end());
  unique_terms.erase(std::unique(unique_terms.begin(), unique_terms.end()), unique_terms.end());

  const double n = static_cast<double>(num_docs());
  const double k1 = params.k1;
  const double b = params.b;
  const double avgdl = avgdl_ > 0 ? avgdl_ : 1.0;
  for (const std::string& term : unique_terms) {
    auto it = vocab_.find(term);
    if (it == vocab_.end()) continue;
    const uint64_t lo = offsets_[it->second], hi = offsets_[it->second + 1];
    const double df = static_cast<double>(hi - lo);
    const double idf = std::log(1.0 + (n - df + 0.5) / (df + 0.5));
    for (uint64_t p = lo; p < hi; ++p) {
      const uint32_t d = post_doc_[p];
      const double tf = post_tf_[p];
      const double norm = k1 * (1.0 - b + b * doc_len_[d] / avgdl);
      if (touched != nullptr && acc[d] == 0.0f) touched->push_back(d);
      acc[d] += static_cast<float>(idf * tf * (k1 + 1.0) / (tf + norm));
    }
  }
}

std::vector<Bm25Hit> Bm25Index::Matching(const std::vector<std::string>& terms,
                                         const Bm25Params& params) const {
  // Per-thread accumulator reused across queries; only touched slots are reset.
  thread_local std::vector<float> acc;
  thread_local std::vector<uint32_t> touched;
  if (acc.size() < num_docs()) acc.assign(num_docs(), 0.0f);
  touched.clear();
  Accumulate(terms, params, acc.data(), &touched);
  std::vector<Bm25Hit> hits;
  hits.reserve(touched.size());
  for (uint32_t d : touched) {
    hits.push_back({d, acc[d]});
    acc[d] = 0.0f;
  }
  return hits;
}

std::vector<Bm25Hit> Bm25Index::ScoreMatching(std::string_view query,
                                              const Bm25Params& params) const {
  std::vector<Bm25Hit> hits = Matching(Tokenize(query, tokenizer_), params);
  std::sort(hits.begin(), hits.end(),
            [](const Bm25Hit& a, const Bm25Hit& b) { return a.doc < b.doc; });
  return hits;
}

std::vector<Bm25Hit> Bm25Index::SearchTokens(const std::vector<std::string>& terms, size_t k,
                                             const Bm25Params& params,
                                             size_t* candidates_scored) const {
  std::vector<Bm25Hit> hits = Matching(terms, params);
  if (candidates_scored) *candidates_scored = hits.size();
  auto better = [](const Bm25Hit& a, const Bm25Hit& b) {
    return a.score != b.score ? a.score > b.score : a.doc < b.doc;
  };
  if (hits.size() > k) {
    std::partial_sort(hits.begin(), hits.begin() + k, hits.end(), better);
    hits.resize(k);
  } else {
    std::sort(hits.begin(), hits.end(), better);
  }
  return hits;
}

}  // namespace flowrag
