// Bm25Index's arrays out and back in place (Bm25Index::ExportArrays /
// AdoptArrays through MemoryArrays): the adopted index borrows every array,
// searches bit for bit as the exported one, finds the same terms, serves
// Concat and Without, and every damaged array is refused with Corruption
// naming it (random damage never crashes: run under the sanitizers too).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <filesystem>

#include "common/array_io.h"
#include "segment/segment_arrays.h"
#include "segment/segment_reader.h"
#include "segment/segment_writer.h"
#include "test_util.h"
#include "text/bm25_index.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

// Words of several scripts, so the arena holds multi-byte terms and the
// tokeniser's ICU path is taken for some of them.
const std::vector<std::string>& Words() {
  static const std::vector<std::string> kWords = [] {
    std::vector<std::string> w = {"café", "straße", "東京", "αθήνα", "мост", "naïve", "ﬁle"};
    for (int i = 0; i < 400; ++i) w.push_back("w" + std::to_string(i) + "x");
    return w;
  }();
  return kWords;
}

std::string RandomText(std::mt19937& rng, size_t min_words, size_t max_words) {
  std::uniform_int_distribution<size_t> len(min_words, max_words);
  // Skewed: low-numbered words are frequent, so postings lists vary in length.
  std::geometric_distribution<size_t> pick(0.02);
  std::string text;
  for (size_t n = len(rng); n > 0; --n) {
    text += Words()[pick(rng) % Words().size()];
    text += ' ';
  }
  return text;
}

Bm25Index Corpus(uint32_t seed, size_t docs) {
  std::mt19937 rng(seed);
  Bm25Index::Builder b;
  for (size_t d = 0; d < docs; ++d) b.Add(RandomText(rng, 0, 40));  // some documents are empty
  return std::move(b).Build();
}

bool BitEqual(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

void ExpectSameHits(const std::vector<Bm25Hit>& a, const std::vector<Bm25Hit>& b,
                    const std::string& query) {
  ASSERT_EQ(a.size(), b.size()) << query;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].doc, b[i].doc) << query << " rank " << i;
    EXPECT_TRUE(BitEqual(a[i].score, b[i].score)) << query << " rank " << i;
  }
}

// Every array of `got` equal to `want`'s, element for element.
void ExpectSameArrays(const Bm25Index& got, const Bm25Index& want) {
  EXPECT_TRUE(got.terms() == want.terms());
  EXPECT_TRUE(std::ranges::equal(got.term_table(), want.term_table()));
  EXPECT_TRUE(std::ranges::equal(got.offsets(), want.offsets()));
  EXPECT_TRUE(std::ranges::equal(got.posting_docs(), want.posting_docs()));
  EXPECT_TRUE(std::ranges::equal(got.posting_tfs(), want.posting_tfs()));
  EXPECT_TRUE(std::ranges::equal(got.doc_lengths(), want.doc_lengths()));
  EXPECT_EQ(got.average_length(), want.average_length());
}

// True when `p` points into the bytes MemoryArrays holds for `name`.
bool Inside(MemoryArrays& arrays, std::string_view name, const void* p) {
  const std::span<std::byte> bytes = arrays.MutableBytes(name);
  const auto* b = reinterpret_cast<const std::byte*>(p);
  return !bytes.empty() && b >= bytes.data() && b < bytes.data() + bytes.size();
}

TEST(Bm25ArraysTest, AdoptedIndexBorrowsEveryArrayAndSearchesBitForBit) {
  const Bm25Index built = Corpus(7, 500);
  MemoryArrays arrays;
  ASSERT_TRUE(built.ExportArrays(arrays).ok());
  for (std::string_view name : Bm25Index::ArrayNames()) {
    EXPECT_TRUE(arrays.Has(name)) << name;
    EXPECT_LE(name.size(), 31u) << name;
  }
  auto adopted = Bm25Index::AdoptArrays(arrays, built.num_docs(), built.tokenizer());
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_TRUE(adopted->borrowed());
  EXPECT_FALSE(built.borrowed());
  // In place: the arrays are MemoryArrays' own bytes, not copies.
  EXPECT_TRUE(Inside(arrays, "bm25.terms.b", adopted->terms().bytes().data()));
  EXPECT_TRUE(Inside(arrays, "bm25.terms.o", adopted->terms().offsets().data()));
  EXPECT_TRUE(Inside(arrays, "bm25.term_table", adopted->term_table().data()));
  EXPECT_TRUE(Inside(arrays, "bm25.offsets", adopted->offsets().data()));
  EXPECT_TRUE(Inside(arrays, "bm25.post_docs", adopted->posting_docs().data()));
  EXPECT_TRUE(Inside(arrays, "bm25.post_tfs", adopted->posting_tfs().data()));
  EXPECT_TRUE(Inside(arrays, "bm25.doc_lengths", adopted->doc_lengths().data()));
  ExpectSameArrays(*adopted, built);
  EXPECT_EQ(adopted->MemoryBytes(), built.MemoryBytes());

  std::mt19937 rng(11);
  for (int q = 0; q < 300; ++q) {
    std::string query = RandomText(rng, 1, 12);
    if (q % 5 == 0) query += " zzzabsent";
    for (const Bm25Params& params : {Bm25Params{}, Bm25Params{0.9, 0.4}}) {
      size_t built_scored = 0, adopted_scored = 1;
      ExpectSameHits(adopted->Search(query, 10, params, &adopted_scored),
                     built.Search(query, 10, params, &built_scored), query);
      EXPECT_EQ(adopted_scored, built_scored);
      ExpectSameHits(adopted->ScoreMatching(query, params), built.ScoreMatching(query, params),
                     query);
    }
  }
}

// Adopted from a segment, the postings are borrowed lazily: the open
// verifies none of their blocks; each list is verified and checked at the
// first search that reads it, a list in altered blocks reads as empty (and
// is recorded), the others search bit for bit as the built index, and an
// export refuses to copy the damage.
TEST(Bm25ArraysTest, PostingsFromASegmentAreCheckedListByListAsSearchesReadThem) {
  namespace fs = std::filesystem;
  std::string dir = (fs::path(::testing::TempDir()) / "bm25-lazy-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string path = dir + "/bm25.seg";
  const Bm25Index built = Corpus(5, 3000);
  {
    auto writer = SegmentWriter::Create(path, "test", 1, 1);
    ASSERT_TRUE(writer.ok());
    SegmentArraySink sink(writer->get());
    ASSERT_TRUE(built.ExportArrays(sink).ok());
    ASSERT_TRUE((*writer)->Finish().ok());
  }
  const auto adopt = [&](std::shared_ptr<const SegmentReader>* reader) {
    auto r = SegmentReader::Open(path);
    EXPECT_TRUE(r.ok());
    *reader = *r;
    return Bm25Index::AdoptArrays(SegmentArraySource(*reader), built.num_docs(),
                                  built.tokenizer());
  };
  std::shared_ptr<const SegmentReader> reader;
  auto adopted = adopt(&reader);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  const SectionInfo docs = *reader->FindSection("bm25.post_docs");
  ASSERT_GE(docs.block_count, 2u);
  std::mt19937 rng(3);
  for (int q = 0; q < 100; ++q) {
    const std::string query = RandomText(rng, 1, 8);
    ExpectSameHits(adopted->Search(query, 10, Bm25Params{}), built.Search(query, 10, Bm25Params{}),
                   query);
  }
  EXPECT_TRUE(reader->Damage().ok());

  // Alter the last block of the documents' postings: the terms whose lists
  // lie there read as empty; a term whose list lies before it still reads.
  testing::AlterEightBytesBefore(path, docs.offset + docs.length);
  adopted = adopt(&reader);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();  // the open does not read them
  const uint32_t last = static_cast<uint32_t>(built.terms().size() - 1);
  const auto [lo, hi] = adopted->Postings(last);
  EXPECT_EQ(lo, hi);
  EXPECT_NE(built.Postings(last).first, built.Postings(last).second);
  EXPECT_FALSE(reader->Damage().ok());
  const auto [lo0, hi0] = adopted->Postings(0);
  EXPECT_EQ(hi0 - lo0, built.Postings(0).second - built.Postings(0).first);
  MemoryArrays copy;
  EXPECT_EQ(adopted->ExportArrays(copy).code(), StatusCode::kCorruption);
  fs::remove_all(dir);
}

TEST(Bm25ArraysTest, TermLookupsFindTheSameIds) {
  const Bm25Index built = Corpus(3, 300);
  MemoryArrays arrays;
  ASSERT_TRUE(built.ExportArrays(arrays).ok());
  auto adopted = Bm25Index::AdoptArrays(arrays, built.num_docs(), built.tokenizer());
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  const std::vector<std::string_view> terms = built.Terms();
  ASSERT_GT(terms.size(), 100u);
  for (uint32_t t = 0; t < terms.size(); ++t) {
    EXPECT_EQ(built.FindTerm(terms[t]), t) << terms[t];
    EXPECT_EQ(adopted->FindTerm(terms[t]), t) << terms[t];
  }
  // Present in several scripts (as the tokeniser folds them), absent ones.
  for (const char* word : {"café", "strasse", "東京", "αθήνα", "мост", "file"}) {
    const std::vector<std::string> tokens = Tokenize(word, built.tokenizer());
    ASSERT_FALSE(tokens.empty()) << word;
    EXPECT_NE(adopted->FindTerm(tokens[0]), Bm25Index::kNoTerm) << word;
    EXPECT_EQ(adopted->DocumentFrequency(tokens[0]), built.DocumentFrequency(tokens[0])) << word;
    EXPECT_GT(adopted->DocumentFrequency(tokens[0]), 0u) << word;
  }
  for (std::string_view absent : std::initializer_list<std::string_view>{
           "", "zzz", "cafe", "北", "мосты", "w400x", "w1", std::string_view("w1x\0", 4)}) {
    EXPECT_EQ(adopted->FindTerm(absent), Bm25Index::kNoTerm) << absent;
    EXPECT_EQ(adopted->DocumentFrequency(absent), 0u) << absent;
  }
  EXPECT_EQ(adopted->Idf("w0x"), built.Idf("w0x"));
}

TEST(Bm25ArraysTest, AdoptTakesTheTokenizerItIsGiven) {
  TokenizerOptions none;
  none.language = "none";
  none.remove_stopwords = false;
  Bm25Index::Builder b(none);
  b.Add("the rivers flow");
  b.Add("the river");
  const Bm25Index built = std::move(b).Build();
  MemoryArrays arrays;
  ASSERT_TRUE(built.ExportArrays(arrays).ok());
  auto adopted = Bm25Index::AdoptArrays(arrays, 2, none);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_EQ(adopted->tokenizer().language, "none");
  EXPECT_EQ(adopted->Search("rivers", 10, {}).size(), 1u);  // not stemmed to "river"
  EXPECT_EQ(adopted->Search("the", 10, {}).size(), 2u);     // not a stopword here
}

TEST(Bm25ArraysTest, EmptyIndexRoundTrips) {
  for (size_t docs : {0, 3}) {
    Bm25Index::Builder b;
    for (size_t d = 0; d < docs; ++d) b.Add("");
    const Bm25Index built = std::move(b).Build();
    MemoryArrays arrays;
    ASSERT_TRUE(built.ExportArrays(arrays).ok());
    auto adopted = Bm25Index::AdoptArrays(arrays, docs, {});
    ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
    EXPECT_EQ(adopted->num_docs(), docs);
    EXPECT_EQ(adopted->vocabulary_size(), 0u);
    EXPECT_EQ(adopted->FindTerm("anything"), Bm25Index::kNoTerm);
    EXPECT_TRUE(adopted->Search("anything", 5, {}).empty());
  }
  // A default-constructed index too.
  MemoryArrays arrays;
  ASSERT_TRUE(Bm25Index().ExportArrays(arrays).ok());
  EXPECT_TRUE(Bm25Index::AdoptArrays(arrays, 0, {}).ok());
}

TEST(Bm25ArraysTest, ConcatAndWithoutOfAnAdoptedIndexEqualTheBuiltOnes) {
  const Bm25Index built = Corpus(5, 200);
  const Bm25Index more = Corpus(6, 50);
  MemoryArrays arrays;
  ASSERT_TRUE(built.ExportArrays(arrays).ok());
  auto adopted = Bm25Index::AdoptArrays(arrays, built.num_docs(), built.tokenizer());
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  std::vector<bool> removed(built.num_docs());
  for (size_t d = 0; d < removed.size(); d += 3) removed[d] = true;
  const Bm25Index without = Bm25Index::Without(*adopted, removed);
  EXPECT_FALSE(without.borrowed());
  ExpectSameArrays(without, Bm25Index::Without(built, removed));
  const Bm25Index concat = Bm25Index::Concat(*adopted, more);
  ExpectSameArrays(concat, Bm25Index::Concat(built, more));
  // Concat numbers terms as a Builder given both corpora would.
  Bm25Index::Builder both;
  std::mt19937 a(5), b(6);
  for (int d = 0; d < 200; ++d) both.Add(RandomText(a, 0, 40));
  for (int d = 0; d < 50; ++d) both.Add(RandomText(b, 0, 40));
  ExpectSameArrays(concat, std::move(both).Build());
  // And the adopted index outlives the MemoryArrays it came from.
  arrays = MemoryArrays();
  EXPECT_EQ(adopted->Search("w0x w1x", 3, {}).size(), 3u);
}

// ---- damage

class Bm25DamageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    built_ = Corpus(9, 120);
    ASSERT_TRUE(built_.ExportArrays(arrays_).ok());
    ASSERT_TRUE(Bm25Index::AdoptArrays(arrays_, built_.num_docs(), {}).ok());
  }

  template <class T>
  std::vector<T> Values(std::string_view name) {
    const std::span<std::byte> bytes = arrays_.MutableBytes(name);
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
  template <class T>
  void Set(std::string_view name, const std::vector<T>& v) {
    ASSERT_TRUE(arrays_.Replace(name, std::as_bytes(std::span<const T>(v))).ok()) << name;
  }
  // A change to array `name`: `edit` applied to its values.
  template <class T, class Edit>
  auto Change(std::string name, Edit edit) {
    return [this, name, edit] {
      std::vector<T> v = Values<T>(name);
      edit(v);
      Set(name, v);
    };
  }
  // Adopting fails with Corruption whose message names `array`.
  void ExpectRefused(std::string_view array, const std::string& what) {
    auto r = Bm25Index::AdoptArrays(arrays_, built_.num_docs(), {});
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << what << ": " << r.status().ToString();
    EXPECT_NE(r.status().message().find(array), std::string::npos)
        << what << ": " << r.status().ToString();
  }

  Bm25Index built_;
  MemoryArrays arrays_;
};

TEST_F(Bm25DamageTest, EachArrayIsChecked) {
  // Each case damages a fresh export, then restores it.
  auto damage = [&](std::string_view array, const std::string& what, auto change) {
    MemoryArrays fresh;
    ASSERT_TRUE(built_.ExportArrays(fresh).ok());
    arrays_ = fresh;
    change();
    ExpectRefused(array, what);
  };
  damage("bm25.format", "another format", [&] { Set<uint32_t>("bm25.format", {2}); });
  damage("bm25.num_docs", "a document more",
         [&] { Set<uint64_t>("bm25.num_docs", {built_.num_docs() + 1}); });
  damage("bm25.num_docs", "two values", [&] { Set<uint64_t>("bm25.num_docs", {1, 2}); });
  damage("bm25.avgdl", "another mean",
         [&] { Set<double>("bm25.avgdl", {built_.average_length() * 1.0000001}); });
  damage("bm25.avgdl", "a changed length",
         Change<uint32_t>("bm25.doc_lengths", [&](auto& v) { v[4] += 1; }));
  damage("bm25.doc_lengths", "a length short",
         Change<uint32_t>("bm25.doc_lengths", [&](auto& v) { v.pop_back(); }));
  damage("bm25.terms", "arena offsets not from 0",
         Change<uint64_t>("bm25.terms.o", [&](auto& v) { v[0] = 1; }));
  damage("bm25.terms", "arena offsets decreasing",
         Change<uint64_t>("bm25.terms.o", [&](auto& v) { std::swap(v[3], v[4]); }));
  damage("bm25.terms", "arena bytes short",
         Change<char>("bm25.terms.b", [&](auto& v) { v.pop_back(); }));
  damage("bm25.offsets", "a term more than offsets (an empty one appended)",
         Change<uint64_t>("bm25.terms.o", [&](auto& v) { v.push_back(v.back()); }));
  damage("bm25.offsets", "first offset not 0",
         Change<uint64_t>("bm25.offsets", [&](auto& v) { v[0] = 1; }));
  damage("bm25.offsets", "decreasing offsets",
         Change<uint64_t>("bm25.offsets", [&](auto& v) { v[2] = v[1] + 1000000; }));
  damage("bm25.offsets", "offsets past the postings",
         Change<uint64_t>("bm25.offsets", [&](auto& v) { v.back() += 1; }));
  damage("bm25.offsets", "postings short",
         Change<uint32_t>("bm25.post_docs", [&](auto& v) { v.pop_back(); }));
  damage("bm25.post_docs", "a document out of range",
         Change<uint32_t>("bm25.post_docs", [&](auto& v) {
           v[v.size() / 2] = static_cast<uint32_t>(built_.num_docs());
         }));
  damage("bm25.post_docs", "a list's documents not ascending (the pruned search probes them)",
         Change<uint32_t>("bm25.post_docs", [&](auto& v) {
           const std::vector<uint64_t> offsets = Values<uint64_t>("bm25.offsets");
           for (size_t t = 0; t + 1 < offsets.size(); ++t) {
             if (offsets[t + 1] - offsets[t] >= 2) {
               std::swap(v[offsets[t]], v[offsets[t] + 1]);
               return;
             }
           }
         }));
  damage("bm25.post_tfs", "a frequency short",
         Change<uint32_t>("bm25.post_tfs", [&](auto& v) { v.pop_back(); }));
  damage("bm25.post_tfs", "a zero frequency",
         Change<uint32_t>("bm25.post_tfs", [&](auto& v) { v[0] = 0; }));
  damage("bm25.term_table", "a slot past the terms",
         Change<uint32_t>("bm25.term_table", [&](auto& v) {
           v[0] = static_cast<uint32_t>(built_.vocabulary_size());
         }));
  damage("bm25.term_table", "a slot short",
         Change<uint32_t>("bm25.term_table", [&](auto& v) { v.pop_back(); }));
  damage("bm25.term_table", "no slots", [&] { Set<uint32_t>("bm25.term_table", {}); });
}

TEST_F(Bm25DamageTest, MissingArraysAreNotFound) {
  for (std::string_view name : Bm25Index::ArrayNames()) {
    MemoryArrays partial;
    MemoryArrays full;
    ASSERT_TRUE(built_.ExportArrays(full).ok());
    for (std::string_view other : Bm25Index::ArrayNames()) {
      if (other == name) continue;
      const std::span<std::byte> bytes = full.MutableBytes(other);
      // Same element kinds as ExportArrays puts them.
      ArrayKind kind = ArrayKind::kU32;
      size_t size = 4;
      if (other == "bm25.num_docs" || other == "bm25.terms.o" || other == "bm25.offsets") {
        kind = ArrayKind::kU64;
        size = 8;
      } else if (other == "bm25.avgdl") {
        kind = ArrayKind::kF64;
        size = 8;
      } else if (other == "bm25.terms.b") {
        kind = ArrayKind::kU8;
        size = 1;
      }
      ASSERT_TRUE(partial.PutBytes(other, kind, size, bytes, false).ok());
    }
    auto r = Bm25Index::AdoptArrays(partial, built_.num_docs(), {});
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << name;
  }
}

// A crafted table whose ids sit in the wrong slots, or that has no empty
// slot, only makes lookups miss: probing stops after one pass.
TEST_F(Bm25DamageTest, FullOrScrambledTablesOnlyMiss) {
  auto table = Values<uint32_t>("bm25.term_table");
  std::vector<uint32_t> full(table.size(), 0);  // every slot names term 0
  Set("bm25.term_table", full);
  auto r = Bm25Index::AdoptArrays(arrays_, built_.num_docs(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->FindTerm("zzzabsent"), Bm25Index::kNoTerm);
  EXPECT_EQ(r->FindTerm(built_.Terms()[0]), 0u);
  std::reverse(table.begin(), table.end());
  Set("bm25.term_table", table);
  r = Bm25Index::AdoptArrays(arrays_, built_.num_docs(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (std::string_view t : built_.Terms()) {
    const uint32_t id = r->FindTerm(t);
    EXPECT_TRUE(id == Bm25Index::kNoTerm || r->Terms()[id] == t) << t;
  }
}

// Random bytes overwritten in each array: adopting either refuses them or
// gives an index whose searches stay in range (the sanitizer build checks).
TEST_F(Bm25DamageTest, RandomDamageIsRefusedOrHarmless) {
  std::mt19937 rng(21);
  MemoryArrays pristine;
  ASSERT_TRUE(built_.ExportArrays(pristine).ok());
  size_t refused = 0, adopted = 0;
  for (std::string_view name : Bm25Index::ArrayNames()) {
    for (int trial = 0; trial < 40; ++trial) {
      MemoryArrays damaged;
      ASSERT_TRUE(built_.ExportArrays(damaged).ok());
      const std::span<std::byte> bytes = damaged.MutableBytes(name);
      if (bytes.empty()) continue;
      for (int k = 0; k < 1 + trial % 3; ++k) {
        bytes[rng() % bytes.size()] = static_cast<std::byte>(rng());
      }
      auto r = Bm25Index::AdoptArrays(damaged, built_.num_docs(), {});
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << name;
        ++refused;
        continue;
      }
      ++adopted;
      std::mt19937 q(trial);
      for (int i = 0; i < 5; ++i) {
        const std::string query = RandomText(q, 1, 8);
        for (const Bm25Hit& h : r->Search(query, 5, {})) EXPECT_LT(h.doc, built_.num_docs());
      }
    }
  }
  EXPECT_GT(refused, 0u);
  EXPECT_GT(adopted, 0u);  // e.g. a changed tf or term byte is not detectable
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
