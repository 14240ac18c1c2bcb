#include "text/bm25_index.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/array_scan.h"
#include "common/string_slots.h"
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
  std::vector<std::string_view> by_id(vocab_.size());
  size_t term_bytes = 0;
  for (const auto& [term, id] : vocab_) {
    by_id[id] = term;
    term_bytes += term.size();
  }
  StringArena terms;
  terms.Reserve(by_id.size(), term_bytes);
  for (std::string_view t : by_id) terms.Append(t);
  idx.SetTerms(std::move(terms));  // the map's keys are distinct
  std::unordered_map<std::string, uint32_t>().swap(vocab_);
  std::vector<uint64_t> offsets(postings_.size() + 1, 0);
  size_t total = 0;
  for (size_t t = 0; t < postings_.size(); ++t) {
    offsets[t] = total;
    total += postings_[t].size();
  }
  offsets[postings_.size()] = total;
  std::vector<uint32_t> docs, tfs;
  docs.reserve(total);
  tfs.reserve(total);
  for (auto& list : postings_) {
    for (auto [d, tf] : list) {
      docs.push_back(d);
      tfs.push_back(tf);
    }
    std::vector<std::pair<uint32_t, uint32_t>>().swap(list);
  }
  idx.offsets_ = std::move(offsets);
  idx.post_doc_ = std::move(docs);
  idx.post_tf_ = std::move(tfs);
  idx.doc_len_ = std::move(doc_len_);
  idx.ComputeAverageLength();
  return idx;
}

bool Bm25Index::SetTerms(StringArena terms) {
  terms_ = std::move(terms);
  bool distinct = true;
  table_ = BuildStringSlots(terms_, &distinct);
  return distinct;
}

uint32_t Bm25Index::FindTerm(std::string_view term) const {
  static_assert(kNoTerm == kNoString);
  return FindString(table_, terms_, term);
}

void Bm25Index::ComputeAverageLength() {
  uint64_t sum = 0;
  for (uint32_t l : doc_len_) sum += l;
  length_sum_ = sum;
  avgdl_ = doc_len_.empty() ? 0.0 : static_cast<double>(sum) / doc_len_.size();
}

Bm25Index Bm25Index::Concat(const Bm25Index& a, const Bm25Index& b) {
  Bm25Index out;
  out.tokenizer_ = a.tokenizer_;
  // b's term t → term id in `out` (a's id, or the next new one in b's order,
  // as a Builder given a's documents first would number them).
  StringArena terms = a.terms_;
  std::vector<uint32_t> b_to_out(b.terms_.size());
  for (uint32_t t = 0; t < b_to_out.size(); ++t) {
    const std::string_view term = b.terms_[t];
    b_to_out[t] = a.FindTerm(term);
    if (b_to_out[t] == kNoTerm) {
      b_to_out[t] = static_cast<uint32_t>(terms.size());
      terms.Append(term);
    }
  }
  out.SetTerms(std::move(terms));  // b's new terms are distinct and not a's
  const size_t num_terms = out.terms_.size();
  const size_t a_terms = a.terms_.size();
  std::vector<uint32_t> out_to_b(num_terms, kNoTerm);
  for (uint32_t t = 0; t < b_to_out.size(); ++t) out_to_b[b_to_out[t]] = t;
  const auto a_docs = static_cast<uint32_t>(a.doc_len_.size());
  std::vector<uint64_t> offsets(num_terms + 1, 0);
  std::vector<uint32_t> docs, tfs;
  docs.reserve(a.post_doc_.size() + b.post_doc_.size());
  tfs.reserve(a.post_tf_.size() + b.post_tf_.size());
  for (size_t t = 0; t < num_terms; ++t) {
    offsets[t] = docs.size();
    if (t < a_terms) {
      const auto [lo, hi] = a.Postings(static_cast<uint32_t>(t));
      for (uint64_t i = lo; i < hi; ++i) {
        docs.push_back(a.post_doc_[i]);
        tfs.push_back(a.post_tf_[i]);
      }
    }
    if (out_to_b[t] != kNoTerm) {
      const auto [lo, hi] = b.Postings(out_to_b[t]);
      for (uint64_t i = lo; i < hi; ++i) {
        docs.push_back(a_docs + b.post_doc_[i]);
        tfs.push_back(b.post_tf_[i]);
      }
    }
  }
  offsets[num_terms] = docs.size();
  std::vector<uint32_t> lengths(a.doc_len_.begin(), a.doc_len_.end());
  lengths.insert(lengths.end(), b.doc_len_.begin(), b.doc_len_.end());
  out.offsets_ = std::move(offsets);
  out.post_doc_ = std::move(docs);
  out.post_tf_ = std::move(tfs);
  out.doc_len_ = std::move(lengths);
  out.ComputeAverageLength();
  return out;
}

Bm25Index Bm25Index::Without(const Bm25Index& a, const std::vector<bool>& removed) {
  std::vector<int64_t> new_doc(a.doc_len_.size(), -1);
  Bm25Index out;
  out.tokenizer_ = a.tokenizer_;
  std::vector<uint32_t> lengths;
  for (size_t d = 0; d < a.doc_len_.size(); ++d) {
    if (removed[d]) continue;
    new_doc[d] = static_cast<int64_t>(lengths.size());
    lengths.push_back(a.doc_len_[d]);
  }
  StringArena terms;
  std::vector<uint64_t> offsets{0};
  std::vector<uint32_t> docs, tfs;
  for (size_t t = 0; t < a.terms_.size(); ++t) {
    const size_t before = docs.size();
    const auto [lo, hi] = a.Postings(static_cast<uint32_t>(t));
    for (uint64_t i = lo; i < hi; ++i) {
      if (new_doc[a.post_doc_[i]] < 0) continue;
      docs.push_back(static_cast<uint32_t>(new_doc[a.post_doc_[i]]));
      tfs.push_back(a.post_tf_[i]);
    }
    if (docs.size() == before) continue;  // the term is gone
    terms.Append(a.terms_[t]);
    offsets.push_back(docs.size());
  }
  out.SetTerms(std::move(terms));
  out.offsets_ = std::move(offsets);
  out.post_doc_ = std::move(docs);
  out.post_tf_ = std::move(tfs);
  out.doc_len_ = std::move(lengths);
  out.ComputeAverageLength();
  return out;
}

std::vector<std::string_view> Bm25Index::Terms() const {
  std::vector<std::string_view> terms(terms_.size());
  for (size_t t = 0; t < terms.size(); ++t) terms[t] = terms_[t];
  return terms;
}

bool Bm25Index::borrowed() const {
  return terms_.offsets().borrowed() && terms_.bytes().borrowed() && table_.borrowed() &&
         offsets_.borrowed() && post_doc_.borrowed() && post_tf_.borrowed() && doc_len_.borrowed();
}

size_t Bm25Index::MemoryBytes() const {
  return terms_.memory_bytes() + table_.bytes() + offsets_.bytes() + post_doc_.bytes() +
         post_tf_.bytes() + doc_len_.bytes();
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
  if (!idx.SetTerms(StringArena(terms))) return bad("a term repeats an earlier one");
  idx.offsets_ = std::move(offsets);
  idx.post_doc_ = std::move(docs);
  idx.post_tf_ = std::move(tfs);
  idx.doc_len_ = std::move(doc_lengths);
  idx.ComputeAverageLength();
  return idx;
}

// ---- arrays out and back

namespace {

constexpr uint32_t kArraysFormat = 1;  // bump when the layout or the table's hash changes
constexpr char kFormat[] = "bm25.format";
constexpr char kNumDocs[] = "bm25.num_docs";
constexpr char kAvgdl[] = "bm25.avgdl";
constexpr char kTerms[] = "bm25.terms";
constexpr char kTable[] = "bm25.term_table";
constexpr char kOffsets[] = "bm25.offsets";
constexpr char kDocs[] = "bm25.post_docs";
constexpr char kTfs[] = "bm25.post_tfs";
constexpr char kLengths[] = "bm25.doc_lengths";

Status Corrupt(std::string_view array, const std::string& what) {
  return Status::Corruption(std::string(array) + ": " + what);
}

// A scalar that is NotFound stays so; another failure names the array.
template <class T>
Result<T> Scalar(const ArraySource& source, const char* name) {
  Result<T> value = source.GetScalar<T>(name);
  if (!value.ok() && value.status().code() == StatusCode::kCorruption) {
    return Corrupt(name, value.status().message());
  }
  return value;
}

// Offsets of a CSR array: n + 1 of them, first 0, non-decreasing, last ==
// `entries`. Empty when they are, else what is wrong.
std::string CheckOffsets(std::span<const uint64_t> offsets, size_t n, size_t entries) {
  if (offsets.size() != n + 1) {
    return std::to_string(offsets.size()) + " offsets for " + std::to_string(n) + " lists";
  }
  if (offsets.front() != 0) return "the first offset is not 0";
  if (const size_t i = FirstDecrease(offsets); i < offsets.size()) {
    return "offset " + std::to_string(i) + " decreases";
  }
  if (offsets.back() != entries) {
    return "the last offset " + std::to_string(offsets.back()) + " is not the " +
           std::to_string(entries) + " entries";
  }
  return {};
}

}  // namespace

const std::vector<std::string_view>& Bm25Index::ArrayNames() {
  static const std::vector<std::string_view> kNames = {
      kFormat, kNumDocs, kAvgdl, "bm25.terms.o", "bm25.terms.b",
      kTable,  kOffsets, kDocs,  kTfs,           kLengths};
  return kNames;
}

Status Bm25Index::ExportArrays(ArraySink& sink) const {
  FLOWRAG_RETURN_IF_ERROR(VerifyPostings());  // damage is not copied
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<uint32_t>(kFormat, kArraysFormat));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<uint64_t>(kNumDocs, num_docs()));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<double>(kAvgdl, avgdl_));
  FLOWRAG_RETURN_IF_ERROR(sink.PutStrings(kTerms, terms_));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>(kTable, table_.span(), /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint64_t>(kOffsets, offsets_.span(), /*random=*/true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>(kDocs, post_doc_.span()));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>(kTfs, post_tf_.span()));
  return sink.Put<uint32_t>(kLengths, doc_len_.span(), /*random=*/true);
}

Result<Bm25Index> Bm25Index::AdoptArrays(const ArraySource& source, size_t num_passages,
                                         const TokenizerOptions& tokenizer) {
  FLOWRAG_ASSIGN_OR_RETURN(uint32_t format, Scalar<uint32_t>(source, kFormat));
  if (format != kArraysFormat) {
    return Corrupt(kFormat, "format " + std::to_string(format) + ", expected " +
                                std::to_string(kArraysFormat));
  }
  FLOWRAG_ASSIGN_OR_RETURN(uint64_t num_docs, Scalar<uint64_t>(source, kNumDocs));
  if (num_docs != num_passages) {
    return Corrupt(kNumDocs, std::to_string(num_docs) + " documents for " +
                                 std::to_string(num_passages) + " passages");
  }
  FLOWRAG_ASSIGN_OR_RETURN(double avgdl, Scalar<double>(source, kAvgdl));
  Bm25Index idx;
  idx.tokenizer_ = tokenizer;
  FLOWRAG_ASSIGN_OR_RETURN(idx.terms_, source.GetStrings(kTerms));  // Corruption names it
  FLOWRAG_ASSIGN_OR_RETURN(idx.table_, source.Get<uint32_t>(kTable));
  FLOWRAG_ASSIGN_OR_RETURN(idx.offsets_, source.Get<uint64_t>(kOffsets));
  FLOWRAG_ASSIGN_OR_RETURN(idx.post_doc_, source.GetLazy<uint32_t>(kDocs));
  FLOWRAG_ASSIGN_OR_RETURN(idx.post_tf_, source.GetLazy<uint32_t>(kTfs));
  FLOWRAG_ASSIGN_OR_RETURN(idx.doc_len_, source.Get<uint32_t>(kLengths));
  const size_t num_terms = idx.terms_.size();
  if (idx.doc_len_.size() != num_passages) {
    return Corrupt(kLengths, std::to_string(idx.doc_len_.size()) + " lengths for " +
                                 std::to_string(num_passages) + " passages");
  }
  if (std::string bad = CheckOffsets(idx.offsets_, num_terms, idx.post_doc_.size()); !bad.empty()) {
    return Corrupt(kOffsets, bad);
  }
  if (idx.post_tf_.size() != idx.post_doc_.size()) {
    return Corrupt(kTfs, std::to_string(idx.post_tf_.size()) + " frequencies for " +
                             std::to_string(idx.post_doc_.size()) + " postings");
  }
  if (idx.post_doc_.lazy() || idx.post_tf_.lazy()) {
    // Each list is verified and checked at its first read (Postings).
    idx.list_state_ = std::make_shared<const CheckedOnce>(num_terms);
  } else {
    for (uint32_t t = 0; t < num_terms; ++t) FLOWRAG_RETURN_IF_ERROR(idx.CheckList(t));
  }
  if (std::string what = CheckStringSlots(idx.table_, num_terms); !what.empty()) {
    return Corrupt(kTable, what);
  }
  idx.ComputeAverageLength();
  if (std::memcmp(&avgdl, &idx.avgdl_, sizeof(double)) != 0) {
    return Corrupt(kAvgdl, std::string("not the mean of ") + kLengths);
  }
  return idx;
}

std::vector<std::string> Bm25Index::LazyArrays() { return {kDocs, kTfs}; }

Status Bm25Index::CheckList(uint32_t t) const {
  const uint64_t lo = offsets_[t], hi = offsets_[t + 1];
  FLOWRAG_RETURN_IF_ERROR(post_doc_.Verify(lo, hi - lo));
  FLOWRAG_RETURN_IF_ERROR(post_tf_.Verify(lo, hi - lo));
  const size_t docs = doc_len_.size();
  const size_t beyond =
      docs > UINT32_MAX ? hi
                        : FirstOutside<uint32_t>(post_doc_.data(), lo, hi, 0,
                                                 static_cast<uint32_t>(docs));
  if (beyond < hi) {
    return Corrupt(kDocs, "posting " + std::to_string(beyond) + " names document " +
                              std::to_string(post_doc_[beyond]) + " of " + std::to_string(docs));
  }
  if (const size_t i = FirstEqual<uint32_t>(post_tf_.data() + lo, hi - lo, 0); i < hi - lo) {
    return Corrupt(kTfs, "posting " + std::to_string(lo + i) + " has tf 0");
  }
  // Ascending documents (the pruned search probes them).
  for (uint64_t p = lo + 1; p < hi; ++p) {
    if (post_doc_[p] <= post_doc_[p - 1]) {
      return Corrupt(kDocs, "the documents of term " + std::to_string(t) +
                                " are not ascending at posting " + std::to_string(p));
    }
  }
  return Status::Ok();
}

std::pair<uint64_t, uint64_t> Bm25Index::Postings(uint32_t t) const {
  const uint64_t lo = offsets_[t], hi = offsets_[t + 1];
  if (list_state_ == nullptr) return {lo, hi};
  const bool passed = list_state_->Passed(
      t, [&] { return CheckList(t); }, [&](const Status& s) { post_doc_.ReportDamage(s); });
  return passed ? std::pair{lo, hi} : std::pair{lo, lo};
}

Status Bm25Index::VerifyPostings() const {
  if (list_state_ == nullptr) return Status::Ok();
  for (uint32_t t = 0; t + 1 < offsets_.size(); ++t) {
    if (const auto [lo, hi] = Postings(t); lo == hi && offsets_[t + 1] != lo) {
      return CheckList(t);  // the damage, named
    }
  }
  return Status::Ok();
}

uint32_t Bm25Index::DocumentFrequency(std::string_view term) const {
  const uint32_t t = FindTerm(term);
  if (t == kNoTerm) return 0;
  return static_cast<uint32_t>(offsets_[t + 1] - offsets_[t]);
}

double Bm25Index::Idf(std::string_view term) const {
  return IdfOf(static_cast<double>(num_docs()), DocumentFrequency(term));
}

std::vector<Bm25Hit> Bm25Index::Search(std::string_view query, size_t k, const Bm25Params& params,
                                       size_t* candidates_scored) const {
  return SearchTokens(Tokenize(query, tokenizer_), k, params, candidates_scored);
}

std::vector<std::string> Bm25Index::UniqueTerms(std::vector<std::string> terms) {
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  return terms;
}

Bm25Index::Scoring Bm25Index::OwnScoring(const std::vector<std::string>& unique_terms) const {
  Scoring scoring;
  scoring.avgdl = avgdl_ > 0 ? avgdl_ : 1.0;
  scoring.idf.reserve(unique_terms.size());
  const double n = static_cast<double>(num_docs());
  for (const std::string& term : unique_terms)
    scoring.idf.push_back(IdfOf(n, DocumentFrequency(term)));
  return scoring;
}

void Bm25Index::Accumulate(const std::vector<std::string>& unique_terms, const Scoring& scoring,
                           const Bm25Params& params, float* acc,
                           std::vector<uint32_t>* touched) const {
  const double k1 = params.k1;
  const double b = params.b;
  for (size_t i = 0; i < unique_terms.size(); ++i) {
    const uint32_t t = FindTerm(unique_terms[i]);
    if (t == kNoTerm) continue;
    const double idf = scoring.idf[i];
    const auto [lo, hi] = Postings(t);
    for (uint64_t p = lo; p < hi; ++p) {
      const uint32_t d = post_doc_[p];
      if (touched != nullptr && acc[d] == 0.0f) touched->push_back(d);
      acc[d] += Contribution(idf, post_tf_[p], doc_len_[d], scoring.avgdl, k1, b);
    }
  }
}

std::vector<Bm25Hit> Bm25Index::MatchingUnique(const std::vector<std::string>& unique_terms,
                                               const Scoring& scoring,
                                               const Bm25Params& params) const {
  // Per-thread accumulator reused across queries; only touched slots are reset.
  thread_local std::vector<float> acc;
  thread_local std::vector<uint32_t> touched;
  if (acc.size() < num_docs()) acc.assign(num_docs(), 0.0f);
  touched.clear();
  Accumulate(unique_terms, scoring, params, acc.data(), &touched);
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
  const std::vector<std::string> unique_terms = UniqueTerms(Tokenize(query, tokenizer_));
  std::vector<Bm25Hit> hits = MatchingUnique(unique_terms, OwnScoring(unique_terms), params);
  std::sort(hits.begin(), hits.end(),
            [](const Bm25Hit& a, const Bm25Hit& b) { return a.doc < b.doc; });
  return hits;
}

std::vector<Bm25Hit> Bm25Index::SearchTokens(const std::vector<std::string>& terms, size_t k,
                                             const Bm25Params& params,
                                             size_t* candidates_scored) const {
  const std::vector<std::string> unique_terms = UniqueTerms(terms);
  return TopKUnique(unique_terms, OwnScoring(unique_terms), k, params, candidates_scored);
}

std::vector<Bm25Hit> Bm25Index::TopKUnique(const std::vector<std::string>& unique_terms,
                                           const Scoring& scoring, size_t k,
                                           const Bm25Params& params,
                                           size_t* candidates_scored) const {
  if (auto pruned = PrunedTopK(unique_terms, scoring, k, params, candidates_scored)) {
    return *pruned;
  }
  std::vector<Bm25Hit> hits = MatchingUnique(unique_terms, scoring, params);
  if (candidates_scored) *candidates_scored = hits.size();
  if (hits.size() > k) {
    std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(k), hits.end(),
                      RanksBefore);
    hits.resize(k);
  } else {
    std::sort(hits.begin(), hits.end(), RanksBefore);
  }
  return hits;
}

}  // namespace flowrag
