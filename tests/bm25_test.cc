#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "text/bm25_index.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

// Hand-computed reference for the three-document corpus below (tokens after
// stopword removal and S-stemming):
//   d0 = [river, ostrel, flow, sea]                  |d0| = 4
//   d1 = [river, bridge, river, town]                |d1| = 4
//   d2 = [lighthouse, keeper, town, sea, sea, storm] |d2| = 6
//   avgdl = 14/3
double Idf(double n, double df) { return std::log(1.0 + (n - df + 0.5) / (df + 0.5)); }
double Term(double tf, double dl, double avgdl, double k1 = 1.2, double b = 0.75) {
  return tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl));
}

Bm25Index Corpus() {
  Bm25Index::Builder b;
  b.Add("The river Ostrel flows to the sea.");
  b.Add("A river bridge: the river town.");
  b.Add("Lighthouse keeper of the town, sea and sea storms.");
  return std::move(b).Build();
}

TEST(Bm25Test, StatisticsMatchTheCorpus) {
  Bm25Index idx = Corpus();
  EXPECT_EQ(idx.num_docs(), 3u);
  EXPECT_DOUBLE_EQ(idx.average_length(), 14.0 / 3.0);
  EXPECT_EQ(idx.DocumentFrequency("river"), 2u);
  EXPECT_EQ(idx.DocumentFrequency("sea"), 2u);
  EXPECT_EQ(idx.DocumentFrequency("storm"), 1u);
  EXPECT_EQ(idx.DocumentFrequency("the"), 0u);  // stopword
  EXPECT_NEAR(idx.Idf("storm"), std::log(1 + 2.5 / 1.5), 1e-12);
}

TEST(Bm25Test, ScoresEqualHandComputedValues) {
  Bm25Index idx = Corpus();
  const double avgdl = 14.0 / 3.0;
  auto hits = idx.Search("river sea", 10, Bm25Params{});
  ASSERT_EQ(hits.size(), 3u);
  const double d0 = Idf(3, 2) * Term(1, 4, avgdl) + Idf(3, 2) * Term(1, 4, avgdl);
  const double d1 = Idf(3, 2) * Term(2, 4, avgdl);
  const double d2 = Idf(3, 2) * Term(2, 6, avgdl);
  std::map<uint32_t, double> expected = {{0, d0}, {1, d1}, {2, d2}};
  for (const auto& h : hits) EXPECT_NEAR(h.score, expected[h.doc], 1e-5) << "doc " << h.doc;
  EXPECT_EQ(hits[0].doc, 0u);  // both terms beat a repeated one
  EXPECT_GT(hits[0].score, hits[1].score);
}

TEST(Bm25Test, ParametersChangeScoresAsTheFormulaSays) {
  Bm25Index idx = Corpus();
  Bm25Params no_length{1.2, 0.0};  // b = 0: no length normalisation
  auto hits = idx.Search("sea", 10, no_length);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].doc, 2u);  // tf 2 beats tf 1 when length is ignored
  EXPECT_NEAR(hits[0].score, Idf(3, 2) * 2 * 2.2 / (2 + 1.2), 1e-5);
}

TEST(Bm25Test, RepeatedQueryTermsCountOnceAndUnknownTermsAreIgnored) {
  Bm25Index idx = Corpus();
  auto a = idx.Search("storm", 10, {});
  auto b = idx.Search("storm storm zzzunknown", 10, {});
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_FLOAT_EQ(a[0].score, b[0].score);
  size_t scored = 99;
  EXPECT_TRUE(idx.Search("zzz", 10, {}, &scored).empty());
  EXPECT_EQ(scored, 0u);
}

TEST(Bm25Test, TopKTruncatesWithDeterministicTies) {
  Bm25Index::Builder b;
  for (int i = 0; i < 5; ++i) b.Add("same words here");
  Bm25Index idx = std::move(b).Build();
  auto hits = idx.Search("words", 3, {});
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(hits[0].doc, 0u);
  EXPECT_EQ(hits[1].doc, 1u);
  EXPECT_EQ(hits[2].doc, 2u);
}

// ScoreMatching lists exactly the documents Search ranks (the ones sharing
// a term), ascending by doc id, with the scores Search gives, bit for bit.
TEST(Bm25Test, ScoreMatchingEqualsSearchOverEveryDocument) {
  const Bm25Index idx = Corpus();
  for (const char* q : {"river sea", "town", "storms storms keeper", "absent"}) {
    std::vector<Bm25Hit> expected = idx.Search(q, idx.num_docs(), {});
    std::sort(expected.begin(), expected.end(),
              [](const Bm25Hit& a, const Bm25Hit& b) { return a.doc < b.doc; });
    const std::vector<Bm25Hit> got = idx.ScoreMatching(q, {});
    ASSERT_EQ(got.size(), expected.size()) << q;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].doc, expected[i].doc) << q;
      EXPECT_EQ(got[i].score, expected[i].score) << q;
      EXPECT_GT(got[i].score, 0.0f) << q;
    }
  }
  EXPECT_TRUE(idx.ScoreMatching("absent", {}).empty());
}

// The arrays a snapshot part persists give back an index that scores
// exactly as the original; damaged arrays are refused.
TEST(Bm25Test, ArraysRoundTripExactlyAndDamageIsRefused) {
  const Bm25Index a = Corpus();
  std::vector<std::string> terms;
  for (std::string_view t : a.Terms()) terms.emplace_back(t);
  auto arrays = [&] {
    return std::make_tuple(terms, std::vector<uint64_t>(a.offsets().begin(), a.offsets().end()),
                           std::vector<uint32_t>(a.posting_docs().begin(), a.posting_docs().end()),
                           std::vector<uint32_t>(a.posting_tfs().begin(), a.posting_tfs().end()),
                           std::vector<uint32_t>(a.doc_lengths().begin(), a.doc_lengths().end()));
  };
  auto [t, o, d, f, l] = arrays();
  auto b = Bm25Index::FromArrays(t, o, d, f, l);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->num_docs(), a.num_docs());
  EXPECT_EQ(b->vocabulary_size(), a.vocabulary_size());
  EXPECT_EQ(b->average_length(), a.average_length());
  for (const char* q : {"river sea", "town storm keeper", "ostrel", "nothing here"}) {
    const auto x = a.Search(q, 10, {}), y = b->Search(q, 10, {});
    ASSERT_EQ(x.size(), y.size()) << q;
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(x[i].doc, y[i].doc) << q;
      EXPECT_EQ(x[i].score, y[i].score) << q;
    }
  }
  {
    auto [t2, o2, d2, f2, l2] = arrays();
    d2[0] = 99;  // a document that does not exist
    EXPECT_EQ(Bm25Index::FromArrays(t2, o2, d2, f2, l2).status().code(), StatusCode::kCorruption);
  }
  {
    auto [t2, o2, d2, f2, l2] = arrays();
    o2.back() += 1;  // offsets past the postings
    EXPECT_EQ(Bm25Index::FromArrays(t2, o2, d2, f2, l2).status().code(), StatusCode::kCorruption);
  }
  {
    auto [t2, o2, d2, f2, l2] = arrays();
    t2[1] = t2[0];  // a repeated term
    EXPECT_EQ(Bm25Index::FromArrays(t2, o2, d2, f2, l2).status().code(), StatusCode::kCorruption);
  }
  {
    auto [t2, o2, d2, f2, l2] = arrays();
    f2[0] = 0;  // a posting without occurrences
    EXPECT_EQ(Bm25Index::FromArrays(t2, o2, d2, f2, l2).status().code(), StatusCode::kCorruption);
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

// An independent BM25 over token lists (no index): every document scored,
// each distinct query term in string order, each term's addition rounded to
// float and summed in float as the index does; top k by score then id.
std::vector<Bm25Hit> BruteForceTopK(const std::vector<std::vector<std::string>>& docs,
                                    std::vector<std::string> query, size_t k, double k1, double b) {
  std::sort(query.begin(), query.end());
  query.erase(std::unique(query.begin(), query.end()), query.end());
  double total = 0;
  for (const auto& d : docs) total += static_cast<double>(d.size());
  const double n = static_cast<double>(docs.size());
  const double avgdl = total / n;
  std::vector<double> df(query.size(), 0.0);
  for (size_t j = 0; j < query.size(); ++j) {
    for (const auto& d : docs) df[j] += std::find(d.begin(), d.end(), query[j]) != d.end();
  }
  std::vector<Bm25Hit> hits;
  for (size_t i = 0; i < docs.size(); ++i) {
    float score = 0.0f;
    bool matched = false;
    for (size_t j = 0; j < query.size(); ++j) {
      const std::string& t = query[j];
      const double tf = static_cast<double>(std::count(docs[i].begin(), docs[i].end(), t));
      if (tf == 0) continue;
      matched = true;
      const double idf = std::log(1.0 + (n - df[j] + 0.5) / (df[j] + 0.5));
      const double norm = k1 * (1.0 - b + b * static_cast<double>(docs[i].size()) / avgdl);
      score += static_cast<float>(idf * tf * (k1 + 1.0) / (tf + norm));
    }
    if (matched) hits.push_back({static_cast<uint32_t>(i), score});
  }
  std::sort(hits.begin(), hits.end(), [](const Bm25Hit& x, const Bm25Hit& y) {
    return x.score != y.score ? x.score > y.score : x.doc < y.doc;
  });
  if (hits.size() > k) hits.resize(k);
  return hits;
}

// Search prunes the frequent terms' lists (bm25_topk.cc) and must still
// give the exhaustive top k bit for bit: a corpus whose documents share
// frame words (as bench/synthetic_corpus.py's do) plus rare names, and
// queries mixing both, against the brute force above, several k and
// parameters.
TEST(Bm25PruningTest, TopKEqualsABruteForceScorerOnFrameWordsAndNames) {
  std::mt19937 rng(11);
  // Lower-case letters only, no stopword, no final s: the tokeniser keeps
  // each word as it is, so the brute force sees the index's tokens.
  const std::vector<std::string> frame = {"recorded", "harbour", "history", "trade",
                                          "family",   "river",   "market"};
  std::vector<std::string> names;
  for (int i = 0; i < 2000; ++i) {
    names.push_back(std::string("zq") + static_cast<char>('a' + i % 26) +
                    static_cast<char>('a' + i / 26 % 26) + static_cast<char>('a' + i / 676) + "v");
  }
  // 12,000 documents: each frame word in ~9,000 of them, so a query of four
  // or more frame words has the postings the pruning needs (kMinPostings).
  std::vector<std::vector<std::string>> docs;
  Bm25Index::Builder builder;
  for (int d = 0; d < 12000; ++d) {
    std::vector<std::string> words;
    for (const std::string& f : frame) {
      if (rng() % 4 != 0) words.push_back(f);
      if (rng() % 5 == 0) words.push_back(f);  // tf 2 now and then
    }
    for (int j = 0, m = 1 + static_cast<int>(rng() % 4); j < m; ++j) {
      words.push_back(names[rng() % names.size()]);
    }
    std::shuffle(words.begin(), words.end(), rng);
    std::string text;
    for (const std::string& w : words) text += w + " ";
    builder.Add(text);
    docs.push_back(words);
  }
  const Bm25Index idx = std::move(builder).Build();
  size_t pruned = 0, searches = 0;
  for (int q = 0; q < 40; ++q) {
    std::vector<std::string> query(frame);
    std::shuffle(query.begin(), query.end(), rng);
    query.resize(4 + rng() % 4);
    for (int j = 0, m = static_cast<int>(rng() % 3); j < m; ++j) {
      query.push_back(names[rng() % names.size()]);
    }
    for (size_t k : {1u, 5u, 20u, 128u}) {
      for (auto [k1, b] : {std::pair{1.2, 0.75}, std::pair{2.0, 1.0}}) {
        size_t scored = 0;
        const std::vector<Bm25Hit> got = idx.SearchTokens(query, k, {k1, b}, &scored);
        const std::vector<Bm25Hit> want = BruteForceTopK(docs, query, k, k1, b);
        ASSERT_EQ(got.size(), want.size()) << "query " << q << " k " << k;
        for (size_t i = 0; i < got.size(); ++i) {
          EXPECT_EQ(got[i].doc, want[i].doc) << "query " << q << " k " << k << " rank " << i;
          EXPECT_EQ(got[i].score, want[i].score) << "query " << q << " k " << k << " rank " << i;
        }
        pruned += scored < docs.size() / 2;  // the frame words match nearly every document
        ++searches;
      }
    }
  }
  EXPECT_GT(pruned, searches / 4) << "the frequent lists were never left out";
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
