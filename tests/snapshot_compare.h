// Comparing snapshots for tests: every accessor, array and answer of two
// snapshots of the same store built different ways (rows, parts, a
// segment, Append/Remove), exactly (floats bit for bit); and a store opened
// the way the engine opens it, to build snapshots directly.
#ifndef FLOWRAG_TESTS_SNAPSHOT_COMPARE_H_
#define FLOWRAG_TESTS_SNAPSHOT_COMPARE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "flowrag/engine.h"
#include "graph/snapshot.h"
#include "models/embedder_setup.h"
#include "retrieval/retriever.h"
#include "storage/store.h"
#include "vector/flat_index.h"
#include "vector/half_rows_index.h"
#include "vector/hnsw_index.h"
#include "vector/layered_index.h"
#include "vector/sparse_index.h"

namespace flowrag {
namespace snapshot_compare {

inline constexpr size_t kDefaultHnswThreshold = VectorIndexOptions{}.hnsw_threshold;

inline std::vector<std::string> DemoQuestions() {
  std::ifstream in(std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo_questions.jsonl");
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    const size_t q = line.find("\"question\": \"");
    if (q == std::string::npos) continue;
    const size_t b = q + 13;
    out.push_back(line.substr(b, line.find('"', b) - b));
  }
  return out;
}

// A store opened the way the engine opens it, to build snapshots directly.
struct OpenStore {
  std::unique_ptr<Store> store;
  std::shared_ptr<Embedder> embedder;
  std::string dense_model;
  size_t hnsw_threshold;
  // As EngineOptions::passage_ann "int8" (the engine's "auto" for the
  // built-in embedder); false: HNSW above the threshold.
  bool sparse_queries = false;

  explicit OpenStore(const std::string& path, bool read_only = true,
                     size_t threshold = kDefaultHnswThreshold)
      : hnsw_threshold(threshold) {
    StoreOptions so;
    so.read_only = read_only;
    so.create_if_missing = false;
    auto s = Store::Open(path, so);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    store = std::move(s).value();
    auto e = LoadEmbedder(*store, kHashEmbedderName, EngineOptions{});
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    embedder = std::move(e).value();
    dense_model = store->DenseModel().value().value_or("");
  }

  SnapshotOptions Options(bool use_parts) const {
    SnapshotOptions so;
    so.dense_model = dense_model;
    so.use_parts = use_parts;
    so.vector.hnsw_threshold = hnsw_threshold;
    so.vector.sparse_queries = sparse_queries;
    return so;
  }

  std::shared_ptr<const Snapshot> Build(bool use_parts, SnapshotBuildStats* stats = nullptr) {
    const SnapshotOptions so = Options(use_parts);
    auto snap = Snapshot::Build(*store, embedder, so, stats);
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    return snap.ok() ? std::move(snap).value() : nullptr;
  }
};

template <typename A, typename B>
inline void ExpectSameArray(const A& a, const B& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i])) {
      ADD_FAILURE() << what << " differs at " << i;
      return;
    }
  }
}

inline void ExpectSameRows(const SparseRows& a, const SparseRows& b, const std::string& what) {
  EXPECT_EQ(a.cols, b.cols) << what;
  ExpectSameArray(a.offsets, b.offsets, what + " offsets");
  ExpectSameArray(a.dims, b.dims, what + " dims");
  ExpectSameArray(a.values, b.values, what + " values");
}

inline void ExpectSameIndex(const VectorIndex* a, const VectorIndex* b, const std::string& what) {
  ASSERT_EQ(a == nullptr, b == nullptr) << what;
  if (a == nullptr) return;
  ASSERT_EQ(a->Kind(), b->Kind()) << what;
  EXPECT_EQ(a->Size(), b->Size()) << what;
  EXPECT_EQ(a->Dimension(), b->Dimension()) << what;
  if (const auto* sa = dynamic_cast<const SparseIndex*>(a)) {
    const auto* sb = dynamic_cast<const SparseIndex*>(b);
    ExpectSameArray(sa->offsets(), sb->offsets(), what + " offsets");
    ExpectSameArray(sa->deltas(), sb->deltas(), what + " deltas");
    ExpectSameArray(sa->values(), sb->values(), what + " values");
  } else if (const auto* ha = dynamic_cast<const HalfRowsIndex*>(a)) {
    const auto* hb = dynamic_cast<const HalfRowsIndex*>(b);
    for (size_t i = 0; i < ha->Size() && i < hb->Size(); ++i) {
      if (!std::ranges::equal(ha->Row(i).dims, hb->Row(i).dims) ||
          !std::ranges::equal(ha->Row(i).halves, hb->Row(i).halves)) {
        ADD_FAILURE() << what << ": row " << i << " differs";
        return;
      }
    }
  } else if (a->Kind() == "flat-int8") {
    // Built, adopted or with layered edits: the same vectors in the same
    // order (the codes are a function of them).
    std::vector<float> xs(a->Dimension()), ys(a->Dimension());
    for (uint32_t i = 0; i < a->Size() && i < b->Size(); ++i) {
      const float* x = StoredVector(*a, i, xs.data());
      const float* y = StoredVector(*b, i, ys.data());
      ASSERT_TRUE(x != nullptr && y != nullptr) << what;
      if (!std::equal(x, x + a->Dimension(), y)) {
        ADD_FAILURE() << what << ": vector " << i << " differs";
        return;
      }
    }
  } else if (const auto* fa = dynamic_cast<const FlatIndex*>(a)) {
    ExpectSameArray(fa->matrix().data, dynamic_cast<const FlatIndex*>(b)->matrix().data, what);
  } else if (a->Kind() == "hnsw") {
    // The whole graph: vectors, levels, links, entry point, level generator
    // (an index adopted from a segment through its hnswlib copy; an edited
    // one as the build from its vectors that folds it, with its base's
    // parameters).
    auto save = [](const VectorIndex* index, std::string* bytes) -> Status {
      if (const auto* layered = dynamic_cast<const LayeredIndex*>(index)) {
        VectorIndexOptions options;
        if (const auto* h = dynamic_cast<const HnswIndex*>(&layered->base())) {
          options.hnsw_m = h->m(), options.hnsw_ef_construction = h->ef_construction();
          options.seed = h->seed();
        } else if (const auto* a = dynamic_cast<const HnswArraysIndex*>(&layered->base())) {
          options.hnsw_m = a->m(), options.hnsw_ef_construction = a->ef_construction();
          options.seed = a->seed();
        }
        auto folded = HnswIndex::Create(layered->Dimension(), layered->Size(), options);
        if (!folded.ok()) return folded.status();
        FLOWRAG_RETURN_IF_ERROR((*folded)->Add(layered->Vectors()));
        return (*folded)->Save(bytes);
      }
      if (const auto* adopted = dynamic_cast<const HnswArraysIndex*>(index)) {
        auto built = adopted->ToHnswIndex();
        return built.ok() ? (*built)->Save(bytes) : built.status();
      }
      return dynamic_cast<const HnswIndex&>(*index).Save(bytes);
    };
    std::string x, y;
    ASSERT_TRUE(save(a, &x).ok());
    ASSERT_TRUE(save(b, &y).ok());
    EXPECT_TRUE(x == y) << what << ": the HNSW indexes differ";
  }
}

inline void ExpectSameCsr(const Csr& a, const Csr& b, const std::string& what) {
  ExpectSameArray(a.offsets, b.offsets, what + " offsets");
  ExpectSameArray(a.targets, b.targets, what + " targets");
  ExpectSameArray(a.weights, b.weights, what + " weights");
  ExpectSameArray(a.attrs, b.attrs, what + " attrs");
}

// Every accessor of the two graphs, exactly (floats bit for bit).
inline void ExpectSameGraph(const KnowledgeGraph& a, const KnowledgeGraph& b) {
  ASSERT_EQ(a.num_nodes(), b.num_nodes());
  ASSERT_EQ(a.num_passages(), b.num_passages());
  ASSERT_EQ(a.num_entities(), b.num_entities());
  ASSERT_EQ(a.num_descriptions(), b.num_descriptions());
  ASSERT_EQ(a.num_facts(), b.num_facts());
  ASSERT_EQ(a.num_relations(), b.num_relations());
  ASSERT_EQ(a.num_fact_texts(), b.num_fact_texts());
  for (uint32_t n = 0; n < a.num_nodes(); ++n) {
    ASSERT_EQ(a.Kind(n), b.Kind(n));
    ASSERT_EQ(a.LocalIndex(n), b.LocalIndex(n));
  }
  for (uint32_t e = 0; e < a.num_entities(); ++e) {
    EXPECT_EQ(a.EntityName(e), b.EntityName(e));
    EXPECT_EQ(a.EntityType(e), b.EntityType(e));
    EXPECT_EQ(a.EntityStoreId(e), b.EntityStoreId(e));
    EXPECT_EQ(a.EntityPassageCount(e), b.EntityPassageCount(e));
    const float x[] = {a.Abstractness(e), a.RawAbstractness(e)};
    const float y[] = {b.Abstractness(e), b.RawAbstractness(e)};
    EXPECT_EQ(std::memcmp(x, y, sizeof(x)), 0) << "abstractness of entity " << e;
  }
  for (uint32_t d = 0; d < a.num_descriptions(); ++d) {
    EXPECT_EQ(a.DescriptionText(d), b.DescriptionText(d));
    EXPECT_EQ(a.DescriptionEntity(d), b.DescriptionEntity(d));
    EXPECT_EQ(a.DescriptionPassage(d), b.DescriptionPassage(d));
  }
  for (uint32_t f = 0; f < a.num_facts(); ++f) {
    EXPECT_EQ(a.FactSubject(f), b.FactSubject(f));
    EXPECT_EQ(a.FactObject(f), b.FactObject(f));
    EXPECT_EQ(a.FactRelationId(f), b.FactRelationId(f));
    EXPECT_EQ(a.FactRelation(f), b.FactRelation(f));
    EXPECT_EQ(a.FactTextId(f), b.FactTextId(f));
    ExpectSameArray(a.FactSources(f), b.FactSources(f), "fact sources");
  }
  for (uint32_t t = 0; t < a.num_fact_texts(); ++t) {
    EXPECT_EQ(a.FactTextOf(t), b.FactTextOf(t));
    ExpectSameArray(a.FactsWithText(t), b.FactsWithText(t), "facts with text");
  }
  for (uint32_t r = 0; r < a.num_relations(); ++r) EXPECT_EQ(a.RelationText(r), b.RelationText(r));
  for (int k = 0; k < kNumEdgeKinds; ++k) {
    const auto kind = static_cast<EdgeKind>(k);
    EXPECT_EQ(a.NumEdges(kind), b.NumEdges(kind));
    ExpectSameCsr(a.Edges(kind), b.Edges(kind), std::string(EdgeKindName(kind)));
  }
  ExpectSameArray(a.walk().offsets(), b.walk().offsets(), "walk offsets");
  ExpectSameArray(a.walk().targets(), b.walk().targets(), "walk targets");
  ExpectSameArray(a.walk().weight_values(), b.walk().weight_values(), "walk weights");
  for (uint32_t u = 0; u < a.walk().num_nodes(); ++u) {
    const double x = a.walk().RowSum(u), y = b.walk().RowSum(u);
    EXPECT_EQ(std::memcmp(&x, &y, sizeof(x)), 0) << "row sum " << u;
  }
  for (uint64_t i = 0; i < a.walk().num_entries(); ++i)
    EXPECT_EQ(a.walk().Kind(i), b.walk().Kind(i));
  ASSERT_EQ(a.entity_vectors() == nullptr, b.entity_vectors() == nullptr);
  if (a.entity_vectors() != nullptr)
    ExpectSameRows(*a.entity_vectors(), *b.entity_vectors(), "entity rows");
  ExpectSameIndex(a.entity_index(), b.entity_index(), "entity index");
  ExpectSameIndex(a.description_index(), b.description_index(), "description index");
  ExpectSameIndex(a.fact_index(), b.fact_index(), "fact index");
  ExpectSameRows(a.vectors()->relation_rows, b.vectors()->relation_rows, "relation rows");
}

// Every term with the same postings, the same document lengths: the same
// scores for every query (term numbering may differ: Bm25Index::Without).
inline void ExpectSameBm25(const Bm25Index& a, const Bm25Index& b) {
  ASSERT_EQ(a.vocabulary_size(), b.vocabulary_size());
  ExpectSameArray(a.doc_lengths(), b.doc_lengths(), "bm25 lengths");
  EXPECT_EQ(a.average_length(), b.average_length());
  auto postings = [](const Bm25Index& x) {
    std::map<std::string_view, std::vector<std::pair<uint32_t, uint32_t>>> out;
    const auto terms = x.Terms();
    for (size_t t = 0; t < terms.size(); ++t) {
      auto& list = out[terms[t]];
      for (uint64_t i = x.offsets()[t]; i < x.offsets()[t + 1]; ++i) {
        list.emplace_back(x.posting_docs()[i], x.posting_tfs()[i]);
      }
    }
    return out;
  };
  EXPECT_TRUE(postings(a) == postings(b)) << "bm25 postings differ";
}

inline void ExpectSameSnapshot(const Snapshot& a, const Snapshot& b) {
  ASSERT_EQ(a.num_passages(), b.num_passages());
  ASSERT_EQ(a.num_documents(), b.num_documents());
  for (uint32_t p = 0; p < a.num_passages(); ++p) {
    EXPECT_EQ(a.passage(p).id, b.passage(p).id);
    EXPECT_EQ(a.passage(p).document, b.passage(p).document);
    EXPECT_EQ(a.passage(p).ordinal, b.passage(p).ordinal);
    EXPECT_EQ(a.passage(p).begin, b.passage(p).begin);
    EXPECT_EQ(a.passage(p).end, b.passage(p).end);
    EXPECT_EQ(a.PassageText(p), b.PassageText(p));
  }
  for (uint32_t d = 0; d < a.num_documents(); ++d) {
    const SnapshotDocument& x = a.documents()[d];
    const SnapshotDocument& y = b.documents()[d];
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.external_id, y.external_id);
    EXPECT_EQ(x.title, y.title);
    EXPECT_EQ(x.text, y.text);
    EXPECT_TRUE(std::equal(x.page_breaks.begin(), x.page_breaks.end(), y.page_breaks.begin(),
                           y.page_breaks.end()))
        << "page breaks of document " << x.id;
  }
  ASSERT_EQ(a.bm25().vocabulary_size(), b.bm25().vocabulary_size());
  ASSERT_EQ(a.bm25().num_docs(), b.bm25().num_docs());
  ExpectSameBm25(*a.bm25().Flat(), *b.bm25().Flat());
  ExpectSameIndex(a.dense(), b.dense(), "dense");
  ASSERT_EQ(a.graph() == nullptr, b.graph() == nullptr);
  if (a.graph() != nullptr) ExpectSameGraph(*a.graph(), *b.graph());
}

// Every method, every demo question: the same passages with the same
// scores, and the same seeds and node scores for graph methods.
inline void ExpectSameAnswers(const Snapshot& a, const Snapshot& b) {
  const std::vector<std::string> questions = DemoQuestions();
  ASSERT_GE(questions.size(), 10u);
  for (const std::string& method : RetrieverNames()) {
    auto r = MakeRetriever(method);
    ASSERT_TRUE(r.ok()) << method;
    for (const std::string& q : questions) {
      RetrievalRequest req;
      req.query = q;
      req.top_k = 10;
      auto x = (*r)->Retrieve(a, req);
      auto y = (*r)->Retrieve(b, req);
      ASSERT_EQ(x.ok(), y.ok()) << method << ": " << q;
      if (!x.ok()) continue;
      ASSERT_EQ(x->ranked.size(), y->ranked.size()) << method << ": " << q;
      for (size_t i = 0; i < x->ranked.size(); ++i) {
        EXPECT_EQ(x->ranked[i].passage, y->ranked[i].passage)
            << method << ": " << q << " rank " << i;
        EXPECT_EQ(x->ranked[i].score, y->ranked[i].score) << method << ": " << q << " rank " << i;
      }
      ASSERT_EQ(x->seeds.size(), y->seeds.size()) << method << ": " << q;
      for (size_t i = 0; i < x->seeds.size(); ++i) {
        EXPECT_EQ(x->seeds[i].node, y->seeds[i].node) << method;
        EXPECT_EQ(x->seeds[i].score, y->seeds[i].score) << method;
      }
      ASSERT_EQ(x->node_scores.size(), y->node_scores.size()) << method << ": " << q;
      for (size_t i = 0; i < x->node_scores.size(); ++i) {
        EXPECT_EQ(x->node_scores[i].node, y->node_scores[i].node) << method;
        EXPECT_EQ(x->node_scores[i].score, y->node_scores[i].score) << method;
      }
    }
  }
}

}  // namespace snapshot_compare
}  // namespace flowrag

#endif  // FLOWRAG_TESTS_SNAPSHOT_COMPARE_H_
