// LayeredBm25 against one Bm25Index built from the same documents: hits and
// scores bit for bit, statistics and the folded arrays equal, through
// appends of every size, the fold and a removal.
#include "text/layered_bm25.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

// Every document holds the eight frame words (so that a query of them has
// enough postings for the pruned top k) and a few of 3,000 rarer words.
std::vector<std::string> Documents(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> word(0, 2999), extra(0, 5);
  std::vector<std::string> docs;
  for (size_t d = 0; d < n; ++d) {
    std::string text = "alpha bravo charlie delta echo foxtrot golf hotel";
    for (int i = extra(rng) + 1; i > 0; --i)
      text += " w" + std::to_string(word(rng) % (1 + word(rng)));
    docs.push_back(std::move(text));
  }
  return docs;
}

Bm25Index Built(const std::vector<std::string>& docs, size_t from, size_t to) {
  Bm25Index::Builder builder;
  for (size_t d = from; d < to; ++d) builder.Add(docs[d]);
  return std::move(builder).Build();
}

std::vector<std::string> Queries() {
  return {"alpha bravo charlie delta echo foxtrot golf hotel w7",
          "alpha bravo charlie delta echo foxtrot golf hotel w1 w2 w3",
          "w0 w1",
          "w1500 w2999 unknownword",
          "hotel w42",
          "nothing here matches",
          "w13 w13 w13 alpha"};
}

void ExpectSameHits(const std::vector<Bm25Hit>& a, const std::vector<Bm25Hit>& b,
                    const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].doc, b[i].doc) << what << " #" << i;
    EXPECT_EQ(std::memcmp(&a[i].score, &b[i].score, sizeof(float)), 0) << what << " #" << i;
  }
}

void ExpectSameArrays(const Bm25Index& a, const Bm25Index& b) {
  ASSERT_EQ(a.Terms(), b.Terms());
  EXPECT_TRUE(
      std::equal(a.offsets().begin(), a.offsets().end(), b.offsets().begin(), b.offsets().end()));
  EXPECT_TRUE(std::equal(a.posting_docs().begin(), a.posting_docs().end(), b.posting_docs().begin(),
                         b.posting_docs().end()));
  EXPECT_TRUE(std::equal(a.posting_tfs().begin(), a.posting_tfs().end(), b.posting_tfs().begin(),
                         b.posting_tfs().end()));
  EXPECT_TRUE(std::equal(a.doc_lengths().begin(), a.doc_lengths().end(), b.doc_lengths().begin(),
                         b.doc_lengths().end()));
}

// Everything a reader sees of `layered` equals the one index `flat`.
void ExpectSameIndex(const LayeredBm25& layered, const Bm25Index& flat) {
  ASSERT_EQ(layered.num_docs(), flat.num_docs());
  EXPECT_EQ(layered.vocabulary_size(), flat.vocabulary_size());
  EXPECT_EQ(layered.average_length(), flat.average_length());
  const Bm25Params params;
  for (const std::string& q : Queries()) {
    for (size_t k : {1, 5, 10, 100000}) {
      ExpectSameHits(layered.Search(q, k, params), flat.Search(q, k, params),
                     q + " k=" + std::to_string(k));
    }
    ExpectSameHits(layered.ScoreMatching(q, params), flat.ScoreMatching(q, params), q);
    for (const std::string& term : Tokenize(q, flat.tokenizer())) {
      EXPECT_EQ(layered.DocumentFrequency(term), flat.DocumentFrequency(term)) << term;
      EXPECT_EQ(layered.Idf(term), flat.Idf(term)) << term;
    }
  }
  ExpectSameArrays(*layered.Flat(), flat);
}

TEST(LayeredBm25Test, AppendsOfEverySizeSearchAsOneIndexUntilAndAfterTheFold) {
  const std::vector<std::string> docs = Documents(10300, 7);
  LayeredBm25 bm25(Built(docs, 0, 6000));
  EXPECT_FALSE(bm25.layered());
  size_t n = 6000;
  std::mt19937 rng(11);
  std::uniform_int_distribution<size_t> batch(1, 300);
  while (n < 10000) {
    const size_t to = std::min<size_t>(10000, n + batch(rng));
    bm25 = LayeredBm25::Appended(bm25, Built(docs, n, to));
    n = to;
    ASSERT_TRUE(bm25.layered()) << n;  // 4,000 documents stay under the bound
    if (n == 10000 || batch(rng) < 40) ExpectSameIndex(bm25, Built(docs, 0, n));
  }
  EXPECT_EQ(bm25.tail_docs(), 4000u);
  // 300 more pass max(4,096, N/32): one layer again.
  bm25 = LayeredBm25::Appended(bm25, Built(docs, 10000, 10300));
  EXPECT_FALSE(bm25.layered());
  ExpectSameIndex(bm25, Built(docs, 0, 10300));
}

TEST(LayeredBm25Test, ThePrunedTopKOfTheBaseUsesTheWholeIndexStatistics) {
  const std::vector<std::string> docs = Documents(7000, 3);
  const LayeredBm25 bm25 =
      LayeredBm25::Appended(LayeredBm25(Built(docs, 0, 6000)), Built(docs, 6000, 7000));
  ASSERT_TRUE(bm25.layered());
  const std::string q = Queries()[0];
  size_t scored = 0;
  const std::vector<Bm25Hit> hits = bm25.Search(q, 10, Bm25Params{}, &scored);
  // The frame words' lists are probed, not read through.
  EXPECT_LT(scored, 7000u);
  ExpectSameHits(hits, Built(docs, 0, 7000).Search(q, 10, Bm25Params{}), q);
}

TEST(LayeredBm25Test, RemovingFromALayeredIndexEqualsRemovingFromTheFlatOne) {
  const std::vector<std::string> docs = Documents(900, 5);
  const LayeredBm25 bm25 =
      LayeredBm25::Appended(LayeredBm25(Built(docs, 0, 800)), Built(docs, 800, 900));
  ASSERT_TRUE(bm25.layered());
  std::vector<bool> removed(900, false);
  for (size_t d = 0; d < 900; d += 7) removed[d] = true;
  removed[850] = true;
  const LayeredBm25 without = LayeredBm25::Without(bm25, removed);
  EXPECT_FALSE(without.layered());
  std::vector<std::string> kept;
  for (size_t d = 0; d < 900; ++d) {
    if (!removed[d]) kept.push_back(docs[d]);
  }
  const Bm25Index flat = Built(kept, 0, kept.size());
  const Bm25Params params;
  for (const std::string& q : Queries()) {
    ExpectSameHits(without.Search(q, 10, params), flat.Search(q, 10, params), q);
  }
  EXPECT_EQ(without.num_docs(), kept.size());
}

TEST(LayeredBm25Test, AppendingToNothingOrNothingKeepsOneLayer) {
  const std::vector<std::string> docs = Documents(20, 9);
  LayeredBm25 bm25 = LayeredBm25::Appended(LayeredBm25(), Built(docs, 0, 20));
  EXPECT_FALSE(bm25.layered());
  ExpectSameIndex(bm25, Built(docs, 0, 20));
  bm25 = LayeredBm25::Appended(bm25, Bm25Index());
  EXPECT_FALSE(bm25.layered());
  EXPECT_EQ(bm25.num_docs(), 20u);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
