#include "embed/hashed_embedder.h"

#include <gtest/gtest.h>

#include <cmath>

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

float Dot(const float* a, const float* b, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return static_cast<float>(s);
}

std::shared_ptr<IdfTable> Fit(const std::vector<std::string>& corpus) {
  IdfTable::Builder b;
  for (const auto& t : corpus) b.AddDocument(TokenHashes(t));
  return std::make_shared<IdfTable>(std::move(b).Build());
}

TEST(IdfTableTest, FrequenciesAndRoundTrip) {
  auto idf = Fit({"river sea", "river town", "sea storm river"});
  EXPECT_EQ(idf->num_docs(), 3u);
  EXPECT_EQ(idf->DocumentFrequency(TokenHash("river")), 3u);
  EXPECT_EQ(idf->DocumentFrequency(TokenHash("storm")), 1u);
  EXPECT_NEAR(idf->Idf(TokenHash("storm")), std::log(4.0 / 2.0) + 1.0, 1e-6);
  EXPECT_NEAR(idf->Idf(TokenHash("unseen")), std::log(4.0) + 1.0, 1e-6);
  auto back = IdfTable::Deserialize(idf->Serialize());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->Fingerprint(), idf->Fingerprint());
  EXPECT_EQ(back->DocumentFrequency(TokenHash("sea")), 2u);
}

TEST(IdfTableTest, RejectsCorruptBlobs) {
  auto idf = Fit({"a b c"});
  std::string blob = idf->Serialize();
  EXPECT_EQ(IdfTable::Deserialize("garbage").status().code(), StatusCode::kCorruption);
  EXPECT_EQ(IdfTable::Deserialize(blob.substr(0, blob.size() - 3)).status().code(),
            StatusCode::kCorruption);
}

TEST(HashedEmbedderTest, DeterministicNormalisedAndModelIdTracksIdf) {
  auto idf = Fit({"the lighthouse keeper", "the river bridge"});
  HashedEmbedder e({}, idf);
  std::vector<std::string> texts = {"lighthouse keeper of Skerry", "",
                                    "lighthouse keeper of Skerry"};
  auto m = e.Embed(texts);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->rows, 3u);
  ASSERT_EQ(m->cols, 1024u);
  EXPECT_NEAR(Dot(m->row(0), m->row(0), 1024), 1.0f, 1e-5);
  EXPECT_EQ(Dot(m->row(1), m->row(1), 1024), 0.0f);  // empty text → zero vector
  EXPECT_EQ(std::vector<float>(m->row(0), m->row(0) + 1024),
            std::vector<float>(m->row(2), m->row(2) + 1024));
  HashedEmbedder same({}, Fit({"the lighthouse keeper", "the river bridge"}));
  EXPECT_EQ(same.ModelId(), e.ModelId());
  HashedEmbedder other({}, Fit({"something else entirely"}));
  EXPECT_NE(other.ModelId(), e.ModelId());
}

TEST(HashedEmbedderTest, SimilarTextsScoreHigherThanUnrelated) {
  auto idf = Fit({"lighthouse keeper on the isle", "orchestra concert hall", "river bridge town",
                  "storm at sea"});
  HashedEmbedder e({}, idf);
  std::vector<std::string> t = {"Who kept the lighthouse on Skerry Isle?",
                                "Ivo Brannock was the lighthouse keeper of Skerry Isle.",
                                "The orchestra plays in the concert hall."};
  auto m = e.Embed(t);
  ASSERT_TRUE(m.ok());
  EXPECT_GT(Dot(m->row(0), m->row(1), 1024), Dot(m->row(0), m->row(2), 1024) + 0.2f);
}

TEST(HashedEmbedderTest, CharacterNgramsMatchInflections) {
  HashedEmbedderOptions words_only;
  words_only.char_ngram_weight = 0;
  words_only.bigram_weight = 0;
  auto idf = std::make_shared<IdfTable>();
  HashedEmbedder plain(words_only, idf), full({}, idf);
  std::vector<std::string> t = {"photographer", "photography"};
  auto a = plain.Embed(t);
  auto b = full.Embed(t);
  ASSERT_TRUE(a.ok() && b.ok());
  const float words = Dot(a->row(0), a->row(1), 1024);
  EXPECT_LT(std::fabs(words), 0.05f);                        // different words, no overlap
  EXPECT_GT(Dot(b->row(0), b->row(1), 1024), words + 0.1f);  // shared n-grams
}

TEST(HashedEmbedderTest, ValidatesOptions) {
  HashedEmbedderOptions o;
  o.dimension = 2;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o.dimension = 64;
  o.char_ngram_min = 4;
  o.char_ngram_max = 3;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
