#include "retrieval/fact_bm25.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "common/text.h"
#include "retrieval/persistent_indexes.h"

namespace flowrag {

namespace {

constexpr char kTag = 0;
constexpr char kPrefix[] = "fb.";

// The Bm25Index's array names under "fb." (its own are "bm25.*", which the
// passage index already uses in the snapshot's segment).
class PrefixedSink final : public ArraySink {
 public:
  explicit PrefixedSink(ArraySink& inner) : inner_(inner) {}
  Status PutBytes(std::string_view name, ArrayKind kind, size_t element_size,
                  std::span<const std::byte> bytes, bool random) override {
    return inner_.PutBytes(kPrefix + std::string(name), kind, element_size, bytes, random);
  }

 private:
  ArraySink& inner_;
};

class PrefixedSource final : public ArraySource {
 public:
  explicit PrefixedSource(const ArraySource& inner) : inner_(inner) {}
  Result<std::span<const std::byte>> GetBytes(std::string_view name, ArrayKind kind,
                                              size_t element_size) const override {
    return inner_.GetBytes(kPrefix + std::string(name), kind, element_size);
  }
  bool Has(std::string_view name) const override { return inner_.Has(kPrefix + std::string(name)); }
  std::shared_ptr<const void> keep() const override { return inner_.keep(); }

 private:
  const ArraySource& inner_;
};

bool Better(const FactHit& a, const FactHit& b) {
  return a.score != b.score ? a.score > b.score : a.fact_text < b.fact_text;
}

}  // namespace

FactBm25 FactBm25::Build(const KnowledgeGraph& g, const TokenizerOptions& tokenizer) {
  Bm25Index::Builder builder(tokenizer);
  for (uint32_t t = 0; t < g.num_fact_texts(); ++t) builder.Add(g.FactTextOf(t));
  FactBm25 out;
  out.index_ = std::move(builder).Build();
  return out;
}

std::shared_ptr<const FactBm25> FactBm25::For(const Snapshot& s) {
  if (s.graph() == nullptr) return nullptr;
  return std::static_pointer_cast<const FactBm25>(
      s.Derived(&kTag, [&]() -> std::shared_ptr<const void> {
        return std::make_shared<const FactBm25>(Build(*s.graph(), s.bm25().tokenizer()));
      }));
}

const PersistentDerived& FactBm25::Persistence() {
  static const PersistentDerived persistence = PersistentIndexOf<FactBm25>(&kTag, "fb", 1);
  return persistence;
}

Status FactBm25::ExportArrays(ArraySink& sink) const {
  PrefixedSink prefixed(sink);
  return index_.ExportArrays(prefixed);
}

Result<std::shared_ptr<const FactBm25>> FactBm25::AdoptArrays(const Snapshot& s,
                                                              const ArraySource& source) {
  if (s.graph() == nullptr) return Status::FailedPrecondition("fact bm25: no graph");
  PrefixedSource prefixed(source);
  Result<Bm25Index> index =
      Bm25Index::AdoptArrays(prefixed, s.graph()->num_fact_texts(), s.bm25().tokenizer());
  if (!index.ok()) {
    return Status(index.status().code(), std::string(kPrefix) + index.status().message());
  }
  auto out = std::make_shared<FactBm25>();
  out->index_ = std::move(index).value();
  return std::shared_ptr<const FactBm25>(std::move(out));
}

std::vector<FactHit> FactBm25::Search(std::string_view query, size_t k,
                                      size_t* candidates_scored) const {
  std::vector<FactHit> hits;
  for (const Bm25Hit& h : index_.Search(query, k, Bm25Params{}, candidates_scored)) {
    if (h.score > 0) hits.push_back({h.doc, static_cast<double>(h.score)});
  }
  return hits;
}

std::vector<FactHit> FactBm25::Best(std::span<const uint32_t> candidates, std::string_view query,
                                    size_t k) const {
  // Bm25Index::Accumulate's arithmetic, term for term in the same (string)
  // order, restricted to the candidates: the scores are Search's bit for bit.
  std::vector<std::string> terms = Tokenize(query, index_.tokenizer());
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  const std::span<const uint32_t> docs = index_.posting_docs();
  const std::span<const uint32_t> tfs = index_.posting_tfs();
  const std::span<const uint32_t> lengths = index_.doc_lengths();
  const Bm25Params params;
  const double n = static_cast<double>(index_.num_docs());
  const double k1 = params.k1, b = params.b;
  const double avgdl = index_.average_length() > 0 ? index_.average_length() : 1.0;
  std::vector<float> acc(candidates.size(), 0.0f);
  for (const std::string& term : terms) {
    const uint32_t t = index_.FindTerm(term);
    if (t == Bm25Index::kNoTerm) continue;
    const auto [lo, hi] = index_.Postings(t);  // checked at its first read
    const double stored_df = static_cast<double>(index_.offsets()[t + 1] - index_.offsets()[t]);
    const double idf = std::log(1.0 + (n - stored_df + 0.5) / (stored_df + 0.5));
    auto from = docs.begin() + static_cast<ptrdiff_t>(lo);
    const auto end = docs.begin() + static_cast<ptrdiff_t>(hi);
    for (size_t i = 0; i < candidates.size() && from != end; ++i) {
      from = std::lower_bound(from, end, candidates[i]);
      if (from == end || *from != candidates[i]) continue;
      const size_t p = static_cast<size_t>(from - docs.begin());
      const uint32_t d = docs[p];
      const double tf = tfs[p];
      const double norm = k1 * (1.0 - b + b * lengths[d] / avgdl);
      acc[i] += static_cast<float>(idf * tf * (k1 + 1.0) / (tf + norm));
    }
  }
  std::vector<FactHit> hits;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (acc[i] > 0) hits.push_back({candidates[i], static_cast<double>(acc[i])});
  }
  k = std::min(k, hits.size());
  std::partial_sort(hits.begin(), hits.begin() + static_cast<ptrdiff_t>(k), hits.end(), Better);
  hits.resize(k);
  return hits;
}

}  // namespace flowrag
