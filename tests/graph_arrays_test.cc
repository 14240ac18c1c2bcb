// KnowledgeGraph's arrays out and back in place (KnowledgeGraph::ExportArrays
// / AdoptArrays through MemoryArrays, the WalkGraph's with them): the adopted
// graph borrows every array, answers every accessor as the built one, walks
// bit for bit, exports the same bytes again and outlives the arrays' owner;
// every missing, retyped or damaged array is refused with NotFound or
// Corruption naming it, and random damage never crashes (run under the
// sanitizers too).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/array_io.h"
#include "engine/engine_impl.h"
#include "flowrag/engine.h"
#include "graph/array_checks.h"
#include "graph/graph_loader.h"
#include "graph/knowledge_graph.h"
#include "graph/snapshot.h"
#include "graph_algo/ppr.h"
#include "models/embedder_setup.h"
#include "retrieval/persistent_indexes.h"
#include "segment/segment_arrays.h"
#include "segment/segment_reader.h"
#include "segment/segment_writer.h"
#include "snapshot_compare.h"
#include "storage/store.h"
#include "test_util.h"
#include "vector/flat_index.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

const std::string kDemo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";

// A small graph with every kind of row: 4 passages, 5 entities (one a DATE,
// so the walk's literal rule applies), title and plain mentions, two
// descriptions, four facts over two relations and three fact texts with
// several sources, a synonym, and passage vectors for abstractness.
KnowledgeGraph::Input SmallInput(FloatMatrix* passage_vectors) {
  KnowledgeGraph::Input in;
  in.num_passages = 4;
  in.entity_names = {"Ada Lovelace", "London", "1815", "Analytical Engine", "Lovelace"};
  in.entity_types = {"PERSON", "PLACE", "DATE", "THING", "PERSON"};
  in.entity_ids = {11, 12, 13, 14, 15};
  in.mentions = {{0, 0, 2.0f, true, true}, {0, 1, 1.0f, false},       {0, 2, 1.0f, false},
                 {1, 1, 1.0f, true, true}, {1, 0, 1.0f, false},       {2, 3, 3.0f, true, true},
                 {2, 0, 1.0f, false},      {3, 4, 1.0f, true, false}, {3, 2, 1.0f, false}};
  in.description_entity = {0, 3};
  in.description_passage = {0, 2};
  in.description_texts = {"English mathematician", "a proposed mechanical computer"};
  in.fact_subject = {0, 0, 3, 4};
  in.fact_object = {1, 2, 0, 1};
  in.fact_relation = {0, 1, 0, 0};
  in.relation_texts = {"born in", "born on"};
  in.fact_text = {0, 1, 2, 0};
  in.fact_texts = {"Ada Lovelace born in London", "Ada Lovelace born on 1815",
                   "Analytical Engine described by Ada Lovelace"};
  in.fact_sources = {{1, 0}, {0}, {2, 3, 0}, {3}};
  in.synonyms = {{0, 4, 0.875f}};
  *passage_vectors = FloatMatrix(4, 3);
  const float values[] = {1, 0, 0, 0.5f, 0.5f, 0, 0, 1, 0.25f, 0, 0.75f, 1};
  std::memcpy(passage_vectors->data.data(), values, sizeof(values));
  in.passage_vectors = passage_vectors;
  return in;
}

std::shared_ptr<const KnowledgeGraph> SmallGraph() {
  FloatMatrix vectors;
  auto g = KnowledgeGraph::Build(SmallInput(&vectors));
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(g).value() : nullptr;
}

// Build with an earlier graph (KnowledgeGraph::Input::previous): an entity
// whose passages are the earlier graph's keeps its raw abstractness without
// a vector read, and every value equals a build without the earlier graph.
TEST(AbstractnessReuseTest, UnchangedEntitiesKeepTheirValueAndReadNoVector) {
  FloatMatrix v1;
  auto g1 = KnowledgeGraph::Build(SmallInput(&v1));
  ASSERT_TRUE(g1.ok());
  // A fifth passage that mentions London (entity 1, in passages 0 and 1).
  FloatMatrix v2(5, 3);
  std::copy(v1.data.begin(), v1.data.end(), v2.data.begin());
  v2.row(4)[0] = 0.3f, v2.row(4)[1] = 0.6f, v2.row(4)[2] = -0.2f;
  auto extended = [&](KnowledgeGraph::Input in) {
    in.num_passages = 5;
    in.mentions.push_back({4, 1, 1.0f, false});
    return in;
  };
  FloatMatrix unused;
  KnowledgeGraph::Input fresh_input = extended(SmallInput(&unused));
  fresh_input.passage_vectors = &v2;
  auto fresh = KnowledgeGraph::Build(std::move(fresh_input));
  ASSERT_TRUE(fresh.ok());
  for (const bool passage_two_changed : {false, true}) {
    SCOPED_TRACE(passage_two_changed ? "passage 2 changed" : "passages 0-3 the same");
    std::set<uint32_t> read;
    KnowledgeGraph::Input in = extended(SmallInput(&unused));
    in.passage_vectors = PassageVectorRows(5, 3, [&](uint32_t r, float*) {
      read.insert(r);
      return v2.row(r);
    });
    in.previous = g1->get();
    in.previous_rows = {0, 1, passage_two_changed ? KnowledgeGraph::kNoRow : 2, 3,
                        KnowledgeGraph::kNoRow};
    auto reused = KnowledgeGraph::Build(std::move(in));
    ASSERT_TRUE(reused.ok());
    for (uint32_t e = 0; e < (*fresh)->num_entities(); ++e) {
      EXPECT_EQ((*reused)->RawAbstractness(e), (*fresh)->RawAbstractness(e)) << e;
      EXPECT_EQ((*reused)->Abstractness(e), (*fresh)->Abstractness(e)) << e;
    }
    // London's passages (0, 1, 4) are read; Ada Lovelace's (0, 1, 2) only
    // when passage 2 is not the earlier one; 1815's (0, 3) never.
    const std::set<uint32_t> expected =
        passage_two_changed ? std::set<uint32_t>{0, 1, 2, 4} : std::set<uint32_t>{0, 1, 4};
    EXPECT_EQ(read, expected);
  }
  EXPECT_NE((*fresh)->RawAbstractness(1), (*g1)->RawAbstractness(1));
}

// The names, kinds and bytes of every array put, in order, forwarded to
// `out` (when not null) except `drop`; `retype` is forwarded as bytes of
// another element type.
class RecordingSink final : public ArraySink {
 public:
  struct Array {
    ArrayKind kind;
    std::vector<std::byte> bytes;
    bool random;
  };
  explicit RecordingSink(ArraySink* out, std::string drop = "", std::string retype = "")
      : out_(out), drop_(std::move(drop)), retype_(std::move(retype)) {}
  Status PutBytes(std::string_view name, ArrayKind kind, size_t element_size,
                  std::span<const std::byte> bytes, bool random) override {
    EXPECT_LE(name.size(), 31u) << name;
    EXPECT_TRUE(name.starts_with("kg.") || name.starts_with("walk.")) << name;
    EXPECT_TRUE(
        arrays_.emplace(std::string(name), Array{kind, {bytes.begin(), bytes.end()}, random})
            .second)
        << name;
    names_.emplace_back(name);
    if (out_ == nullptr || name == drop_) return Status::Ok();
    if (name == retype_) {
      const ArrayKind other = kind == ArrayKind::kU8 ? ArrayKind::kI8 : ArrayKind::kU8;
      return out_->PutBytes(name, other, 1, bytes, random);
    }
    return out_->PutBytes(name, kind, element_size, bytes, random);
  }
  const std::vector<std::string>& names() const { return names_; }
  const std::map<std::string, Array>& arrays() const { return arrays_; }

 private:
  ArraySink* out_;
  std::string drop_, retype_;
  std::vector<std::string> names_;
  std::map<std::string, Array> arrays_;
};

std::vector<std::string> ArrayNames(const KnowledgeGraph& g) {
  RecordingSink sink(nullptr);
  EXPECT_TRUE(g.ExportArrays(sink).ok());
  return sink.names();
}

// True when `p` points into the bytes MemoryArrays holds for `name`.
bool Inside(MemoryArrays& arrays, std::string_view name, const void* p) {
  const std::span<std::byte> bytes = arrays.MutableBytes(name);
  const auto* b = reinterpret_cast<const std::byte*>(p);
  return !bytes.empty() && b >= bytes.data() && b < bytes.data() + bytes.size();
}

// Every accessor of the two graphs equal (floats bit for bit;
// snapshot_compare.h), the same walk weights and the same vectors object.
void ExpectSameGraph(const KnowledgeGraph& a, const KnowledgeGraph& b) {
  snapshot_compare::ExpectSameGraph(a, b);
  EXPECT_EQ(std::memcmp(&a.walk().weights(), &b.walk().weights(), sizeof(WalkWeights)), 0);
  EXPECT_EQ(a.vectors(), b.vectors());
}

// Every array `g` exports, as bytes.
std::map<std::string, RecordingSink::Array> Exported(const KnowledgeGraph& g) {
  RecordingSink sink(nullptr);
  EXPECT_TRUE(g.ExportArrays(sink).ok());
  return sink.arrays();
}

// Personalized PageRank by push over the walk graph and by power iteration
// over its transitions, from the entities (the passages when there are none).
std::vector<double> Walks(const KnowledgeGraph& g) {
  std::vector<NodeWeight> reset;
  for (uint32_t e = 0; e < g.num_entities(); ++e) reset.push_back({g.EntityNode(e), 1.0 + e});
  if (reset.empty()) {
    for (uint32_t p = 0; p < g.num_passages(); ++p) reset.push_back({p, 1.0});
  }
  std::vector<double> out;
  PushSolver push;
  PprStats stats;
  EXPECT_TRUE(push.Solve(g.walk(), reset, PushOptions{}, &stats).ok());
  for (uint32_t u = 0; u < g.walk().num_nodes(); ++u) out.push_back(push.Score(u));
  auto power = PowerIteration(WalkTransitions(g.walk()), reset, PowerOptions{}, &stats);
  EXPECT_TRUE(power.ok()) << power.status().ToString();
  if (power.ok()) out.insert(out.end(), power->begin(), power->end());
  return out;
}

void ExpectRoundTrip(const std::shared_ptr<const KnowledgeGraph>& built) {
  std::shared_ptr<const KnowledgeGraph> adopted;
  {
    MemoryArrays arrays;
    ASSERT_TRUE(built->ExportArrays(arrays).ok());
    auto a = KnowledgeGraph::AdoptArrays(arrays, built->num_passages(), built->vectors());
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    adopted = std::move(a).value();
    // Borrowed: every array read in place.
    if (built->num_entities() > 0) {
      EXPECT_TRUE(Inside(arrays, "kg.entity_names.b", adopted->EntityName(0).data()));
      EXPECT_TRUE(Inside(arrays, "kg.entity_types.b", adopted->EntityType(0).data()));
    }
    if (built->num_fact_texts() > 0) {
      EXPECT_TRUE(Inside(arrays, "kg.fact_texts.b", adopted->FactTextOf(0).data()));
      EXPECT_TRUE(Inside(arrays, "kg.facts_by_text", adopted->FactsWithText(0).data()));
      EXPECT_TRUE(Inside(arrays, "kg.relation_texts.b", adopted->RelationText(0).data()));
    }
    if (built->num_descriptions() > 0) {
      EXPECT_TRUE(Inside(arrays, "kg.description_texts.b", adopted->DescriptionText(0).data()));
    }
    for (int k = 0; k < kNumEdgeKinds; ++k) {
      const Csr& c = adopted->Edges(static_cast<EdgeKind>(k));
      EXPECT_TRUE(c.offsets.borrowed() && c.targets.borrowed() && c.weights.borrowed() &&
                  c.attrs.borrowed());
      EXPECT_TRUE(Inside(arrays,
                         "kg." +
                             std::string(k == 0   ? "mentions"
                                         : k == 1 ? "related_to"
                                         : k == 2 ? "describes"
                                                  : "synonym") +
                             ".offsets",
                         c.offsets.data()));
    }
    EXPECT_TRUE(Inside(arrays, "walk.offsets", adopted->walk().offsets().data()));
    if (adopted->walk().num_entries() > 0) {
      EXPECT_TRUE(Inside(arrays, "walk.targets", adopted->walk().targets().data()));
      EXPECT_TRUE(Inside(arrays, "walk.weights", adopted->walk().weight_values().data()));
    }
  }
  // The arrays' owner is gone; the adopted graph keeps its bytes alive.
  ExpectSameGraph(*built, *adopted);
  const auto want = Exported(*built), got = Exported(*adopted);
  EXPECT_EQ(got.size(), want.size());
  for (const auto& [name, array] : got) {
    EXPECT_TRUE(array.kind == want.at(name).kind && array.bytes == want.at(name).bytes) << name;
  }
  const std::vector<double> x = Walks(*built), y = Walks(*adopted);
  ASSERT_EQ(x.size(), y.size());
  EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(double)), 0);
  EXPECT_LE(adopted->MemoryBytes(), built->MemoryBytes());
}

TEST(GraphArraysTest, SmallGraphRoundTripsBorrowedAndWalksBitForBit) {
  const auto built = SmallGraph();
  ASSERT_NE(built, nullptr);
  // The input's rows are all there, and abstractness is not trivially 0.
  ASSERT_EQ(built->num_entities(), 5u);
  ASSERT_EQ(built->NumEdges(EdgeKind::kSynonym), 1u);
  ASSERT_EQ(built->FactsWithText(0).size(), 2u);
  ASSERT_GT(built->RawAbstractness(0), 0.0f);
  ExpectRoundTrip(built);
}

TEST(GraphArraysTest, ArraysAreNamedAndHinted) {
  const auto built = SmallGraph();
  ASSERT_NE(built, nullptr);
  const auto arrays = Exported(*built);
  for (const char* name : {"kg.format", "kg.num_passages", "kg.entity_names.o", "kg.fact_sources",
                           "kg.abstractness", "walk.row_sums", "walk.w.hub_passages"}) {
    EXPECT_TRUE(arrays.count(name)) << name;
  }
  for (const char* name : {"kg.mentions.targets", "kg.related_to.weights", "kg.synonym.attrs",
                           "walk.targets", "walk.weights"}) {
    EXPECT_TRUE(arrays.at(name).random) << name;
  }
  EXPECT_FALSE(arrays.at("kg.entity_names.b").random);
  uint32_t format = 0;
  std::memcpy(&format, arrays.at("kg.format").bytes.data(), sizeof(format));
  EXPECT_EQ(format, kGraphArraysFormat);
}

TEST(GraphArraysTest, EmptyGraphRoundTrips) {
  KnowledgeGraph::Input in;
  in.num_passages = 3;
  auto built = KnowledgeGraph::Build(std::move(in));
  ASSERT_TRUE(built.ok());
  ExpectRoundTrip(*built);
}

TEST(GraphArraysTest, DemoStoreRoundTrips) {
  testing::TempDir dir;
  auto engine = Engine::Open(dir.File("demo.db"));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  ASSERT_TRUE((*engine)->Index({kDemo}).ok());
  auto* impl = dynamic_cast<EngineImpl*>(engine->get());
  ASSERT_NE(impl, nullptr);
  const auto snap = impl->snapshot();
  ASSERT_NE(snap->graph(), nullptr);
  ASSERT_GT(snap->graph()->num_facts(), 0u);
  // The snapshot's graph, shared (aliasing the snapshot that owns it).
  ExpectRoundTrip(std::shared_ptr<const KnowledgeGraph>(snap, snap->graph()));
}

// The demo store indexed in `dir`, opened again (no derived value made yet).
void OpenIndexedDemo(const testing::TempDir& dir, std::unique_ptr<Engine>* engine,
                     EngineImpl** impl) {
  const std::string path = dir.File("demo.db");
  {
    auto indexing = Engine::Open(path);
    ASSERT_TRUE(indexing.ok()) << indexing.status().ToString();
    ASSERT_TRUE((*indexing)->Index({kDemo}).ok());
  }
  auto opened = Engine::Open(path);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  *engine = std::move(opened).value();
  *impl = dynamic_cast<EngineImpl*>(engine->get());
  ASSERT_NE(*impl, nullptr);
}

// A write's snapshot is published with the persistent derived values the
// replaced snapshot's queries used (LocalFacts for qafd) already made, so no
// query waits for them; an open makes none until a query needs them.
TEST(PublishedSnapshotTest, AWriteMakesTheValuesQueriesUsedBeforeTheySeeIt) {
  testing::TempDir dir;
  std::unique_ptr<Engine> engine;
  EngineImpl* impl = nullptr;
  ASSERT_NO_FATAL_FAILURE(OpenIndexedDemo(dir, &engine, &impl));
  auto ready = [&](const Snapshot& snap) {
    std::vector<std::string> names;
    for (const PersistentDerived* p : PersistentQueryIndexes()) {
      if (snap.DerivedReady(p->tag)) names.emplace_back(p->name);
    }
    return names;
  };
  QueryOptions qafd;
  qafd.method = "qafd";
  QueryOptions bm25;
  bm25.method = "bm25";
  ASSERT_TRUE(engine->Query("Who designed the Brannock lens?", bm25).ok());
  EXPECT_TRUE(ready(*impl->snapshot()).empty());  // opened: made at first use
  ASSERT_TRUE(engine->Query("Who designed the Brannock lens?", qafd).ok());
  const std::vector<std::string> used = ready(*impl->snapshot());
  EXPECT_EQ(used, std::vector<std::string>{"lf"});
  // (The persister may make the others meanwhile, for the segment.)
  auto has_lf = [&] {
    const std::vector<std::string> now = ready(*impl->snapshot());
    return std::find(now.begin(), now.end(), "lf") != now.end();
  };
  ASSERT_TRUE(
      engine->IndexDocuments({{"new", "A New Page", "Corin Aske sailed to Port Calder."}}).ok());
  EXPECT_TRUE(has_lf());
  ASSERT_TRUE(engine->DeleteDocument("new").ok());
  EXPECT_TRUE(has_lf());
}

// The persister's export makes every persistent value for the segment file;
// the snapshot then mapped from that file makes (and so reads the pages of)
// only those the queries used, as the open did.
TEST(PublishedSnapshotTest, TheSnapshotMappedAfterAWriteMakesOnlyTheValuesQueriesUsed) {
  testing::TempDir dir;
  std::unique_ptr<Engine> engine;
  EngineImpl* impl = nullptr;
  ASSERT_NO_FATAL_FAILURE(OpenIndexedDemo(dir, &engine, &impl));
  auto names = [&](const Snapshot& snap, bool asked) {
    std::vector<std::string> out;
    for (const PersistentDerived* p : PersistentQueryIndexes()) {
      if (asked ? snap.DerivedAsked(p->tag) : snap.DerivedReady(p->tag)) {
        out.emplace_back(p->name);
      }
    }
    return out;
  };
  QueryOptions qafd;
  qafd.method = "qafd";
  ASSERT_TRUE(engine->Query("Who designed the Brannock lens?", qafd).ok());
  const std::vector<std::string> lf{"lf"};
  ASSERT_EQ(names(*impl->snapshot(), /*asked=*/true), lf);
  ASSERT_TRUE(
      engine->IndexDocuments({{"new", "A New Page", "Corin Aske sailed to Port Calder."}}).ok());
  const std::shared_ptr<const Snapshot> written = impl->snapshot();
  ASSERT_EQ(written->segment(), nullptr);  // built in private memory
  // Until the persister has exported it and the snapshot of its file
  // replaced it (at most 30 s).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (impl->snapshot()->segment() == nullptr && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::shared_ptr<const Snapshot> mapped = impl->snapshot();
  ASSERT_NE(mapped->segment(), nullptr) << "no segment mapped after the write";
  EXPECT_EQ(mapped->generation(), written->generation());
  EXPECT_GT(names(*written, /*asked=*/false).size(), 1u);  // the export made them all
  EXPECT_EQ(names(*written, /*asked=*/true), lf);
  EXPECT_EQ(names(*mapped, /*asked=*/false), lf);
}

TEST(GraphArraysTest, VectorsOfMoreElementsThanTheGraphAreRefused) {
  const auto built = SmallGraph();
  MemoryArrays arrays;
  ASSERT_TRUE(built->ExportArrays(arrays).ok());
  // A vectors object whose entity index holds more entities than the graph.
  auto vectors = std::make_shared<GraphVectors>();
  FloatMatrix rows(built->num_entities() + 1, 2);
  std::fill(rows.data.begin(), rows.data.end(), 0.5f);
  auto index = std::make_unique<FlatIndex>(2);
  ASSERT_TRUE(index->Add(rows).ok());
  vectors->entity_index = std::move(index);
  auto a = KnowledgeGraph::AdoptArrays(arrays, built->num_passages(), vectors);
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument) << a.status().ToString();
}

class GraphDamageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    built_ = SmallGraph();
    ASSERT_NE(built_, nullptr);
    ASSERT_TRUE(built_->ExportArrays(arrays_).ok());
    ASSERT_TRUE(Adopt().ok());
  }
  Result<std::shared_ptr<const KnowledgeGraph>> Adopt() {
    return KnowledgeGraph::AdoptArrays(arrays_, built_->num_passages(), built_->vectors());
  }
  template <class T>
  std::span<T> Elements(const std::string& name) {
    const std::span<std::byte> bytes = arrays_.MutableBytes(name);
    EXPECT_FALSE(bytes.empty()) << name;
    return {reinterpret_cast<T*>(bytes.data()), bytes.size() / sizeof(T)};
  }
  // Adoption refused with Corruption naming `name` (a string arena's
  // offsets: the arena); the arrays restored.
  void ExpectRefused(std::string name, const std::string& what) {
    auto a = Adopt();
    EXPECT_FALSE(a.ok()) << what << " of " << name;
    EXPECT_EQ(a.status().code(), StatusCode::kCorruption) << what << ": " << a.status().ToString();
    if (name.starts_with("kg.") && name.ends_with(".o")) name.resize(name.size() - 2);
    EXPECT_NE(a.status().message().find(name), std::string::npos)
        << what << ": " << a.status().ToString();
    arrays_ = MemoryArrays();
    ASSERT_TRUE(built_->ExportArrays(arrays_).ok());
  }
  // The array with its last element dropped.
  void Shorten(const std::string& name) {
    const std::span<std::byte> bytes = arrays_.MutableBytes(name);
    const size_t element = ElementSize(Exported(*built_).at(name).kind);
    ASSERT_GE(bytes.size(), element) << name;
    const std::vector<std::byte> shorter(bytes.begin(),
                                         bytes.end() - static_cast<ptrdiff_t>(element));
    ASSERT_TRUE(arrays_.Replace(name, shorter).ok());
  }
  static size_t ElementSize(ArrayKind kind) {
    switch (kind) {
      case ArrayKind::kU64:
      case ArrayKind::kI64:
      case ArrayKind::kF64:
        return 8;
      case ArrayKind::kU32:
      case ArrayKind::kI32:
      case ArrayKind::kF32:
        return 4;
      case ArrayKind::kU16:
      case ArrayKind::kI16:
        return 2;
      default:
        return 1;
    }
  }

  std::shared_ptr<const KnowledgeGraph> built_;
  MemoryArrays arrays_;
};

const std::vector<std::string> kIndexArrays = {"kg.description_entity", "kg.description_passage",
                                               "kg.fact_subject",       "kg.fact_object",
                                               "kg.fact_relation",      "kg.fact_text",
                                               "kg.facts_by_text",      "kg.fact_sources",
                                               "kg.mentions.targets",   "kg.related_to.targets",
                                               "kg.describes.targets",  "kg.synonym.targets",
                                               "kg.related_to.attrs",   "walk.targets"};
const std::vector<std::string> kOffsetArrays = {"kg.facts_by_text_offsets",
                                                "kg.fact_source_offsets",
                                                "kg.mentions.offsets",
                                                "kg.related_to.offsets",
                                                "kg.describes.offsets",
                                                "kg.synonym.offsets",
                                                "walk.offsets",
                                                "kg.entity_names.o",
                                                "kg.entity_types.o",
                                                "kg.description_texts.o",
                                                "kg.relation_texts.o",
                                                "kg.fact_texts.o"};

TEST_F(GraphDamageTest, IndexesOutOfRangeAreRefused) {
  for (const std::string& name : kIndexArrays) {
    for (uint32_t bad :
         {std::numeric_limits<uint32_t>::max(), static_cast<uint32_t>(built_->num_nodes())}) {
      std::span<uint32_t> v = Elements<uint32_t>(name);
      ASSERT_FALSE(v.empty()) << name;
      v[v.size() - 1] = bad;
      ExpectRefused(name, "index " + std::to_string(bad));
    }
  }
}

TEST_F(GraphDamageTest, BadOffsetsAreRefused) {
  for (const std::string& name : kOffsetArrays) {
    std::span<uint64_t> o = Elements<uint64_t>(name);
    ASSERT_GE(o.size(), 2u) << name;
    o[0] = 1;
    ExpectRefused(name, "first offset 1");
    o = Elements<uint64_t>(name);
    o[o.size() / 2] = o.back() + 1;  // then the next one decreases
    ExpectRefused(name, "decreasing offsets");
    o = Elements<uint64_t>(name);
    o.back() = o.back() > 0 ? o.back() - 1 : 1;
    ExpectRefused(name, "last offset");
    Shorten(name);
    ExpectRefused(name, "missing offset");
  }
}

TEST_F(GraphDamageTest, ArraysOfTheWrongSizeAreRefused) {
  for (const std::string& name :
       {"kg.entity_ids", "kg.abstractness", "kg.raw_abstractness", "kg.description_entity",
        "kg.description_passage", "kg.fact_object", "kg.fact_relation", "kg.fact_text",
        "kg.facts_by_text", "kg.mentions.weights", "kg.related_to.attrs", "kg.synonym.weights",
        "walk.weights", "walk.kinds", "walk.row_sums"}) {
    Shorten(name);
    ExpectRefused(name, "one element short");
  }
}

// A CSR's rows end at its last node with an edge (facts have none): every
// node reads the degree a count of the input's edges gives, built and
// adopted, and offsets for more nodes than the graph has are refused.
TEST(GraphCsrRowsTest, RowsEndAtTheLastNodeWithAnEdgeAndLaterNodesReadEmpty) {
  FloatMatrix vectors;
  const KnowledgeGraph::Input in = SmallInput(&vectors);
  const std::shared_ptr<const KnowledgeGraph> g = SmallGraph();
  const size_t n = g->num_nodes();
  std::vector<std::vector<size_t>> want(kNumEdgeKinds, std::vector<size_t>(n, 0));
  auto edge = [&](EdgeKind k, uint32_t a, uint32_t b) {
    ++want[static_cast<int>(k)][a];
    ++want[static_cast<int>(k)][b];
  };
  for (const auto& m : in.mentions) edge(EdgeKind::kMentions, m.passage, g->EntityNode(m.entity));
  for (size_t f = 0; f < in.fact_subject.size(); ++f) {
    edge(EdgeKind::kRelatedTo, g->EntityNode(in.fact_subject[f]), g->EntityNode(in.fact_object[f]));
  }
  for (size_t d = 0; d < in.description_entity.size(); ++d) {
    edge(EdgeKind::kDescribes, g->DescriptionNode(static_cast<uint32_t>(d)),
         g->EntityNode(in.description_entity[d]));
  }
  for (const auto& s : in.synonyms) edge(EdgeKind::kSynonym, g->EntityNode(s.a), g->EntityNode(s.b));
  MemoryArrays arrays;
  ASSERT_TRUE(g->ExportArrays(arrays).ok());
  auto adopted = KnowledgeGraph::AdoptArrays(arrays, g->num_passages(), g->vectors());
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  for (const KnowledgeGraph* graph : {g.get(), adopted->get()}) {
    for (int k = 0; k < kNumEdgeKinds; ++k) {
      const Csr& c = graph->Edges(static_cast<EdgeKind>(k));
      size_t rows = 0;
      for (size_t v = 0; v < n; ++v) {
        EXPECT_EQ(c.Degree(static_cast<uint32_t>(v)), want[k][v]) << k << " node " << v;
        if (want[k][v] > 0) rows = v + 1;
      }
      EXPECT_EQ(c.rows(), rows) << k;
      EXPECT_LE(c.rows(), g->FactNode(0)) << k;  // no fact has a row
      EXPECT_EQ(c.Begin(static_cast<uint32_t>(n)), c.targets.size()) << k;
    }
  }
  // Offsets for one node more than the graph has.
  const std::span<std::byte> bytes = arrays.MutableBytes("kg.mentions.offsets");
  std::vector<uint64_t> offsets(bytes.size() / sizeof(uint64_t));
  std::memcpy(offsets.data(), bytes.data(), bytes.size());
  offsets.resize(n + 2, offsets.back());
  ASSERT_TRUE(arrays.Replace("kg.mentions.offsets", std::as_bytes(std::span(offsets))).ok());
  auto refused = KnowledgeGraph::AdoptArrays(arrays, g->num_passages(), g->vectors());
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
  EXPECT_NE(refused.status().message().find("kg.mentions.offsets"), std::string::npos)
      << refused.status().ToString();
}

// A graph of `passages` passages that mention 5 of `entities` entities
// each (the first its title), and `facts` facts between random entities:
// walk rows of many blocks.
std::shared_ptr<const KnowledgeGraph> RandomGraph(uint32_t passages, uint32_t entities,
                                                  uint32_t facts, uint32_t seed) {
  std::mt19937 rng(seed);
  KnowledgeGraph::Input in;
  in.num_passages = passages;
  for (uint32_t e = 0; e < entities; ++e) {
    in.entity_names.push_back("entity " + std::to_string(e));
    in.entity_types.push_back("THING");
    in.entity_ids.push_back(e + 1);
  }
  for (uint32_t p = 0; p < passages; ++p) {
    std::set<uint32_t> named;
    while (named.size() < 5) named.insert(static_cast<uint32_t>(rng() % entities));
    bool first = true;
    for (uint32_t e : named) {
      in.mentions.push_back({p, e, 1.0f, first, first});
      first = false;
    }
  }
  in.relation_texts = {"is near"};
  for (uint32_t f = 0; f < facts; ++f) {
    const auto a = static_cast<uint32_t>(rng() % entities);
    const auto b = static_cast<uint32_t>((a + 1 + rng() % (entities - 1)) % entities);
    in.fact_subject.push_back(a);
    in.fact_object.push_back(b);
    in.fact_relation.push_back(0);
    in.fact_text.push_back(f);
    in.fact_texts.push_back("fact " + std::to_string(f));
    in.fact_sources.push_back({static_cast<uint32_t>(rng() % passages)});
  }
  auto g = KnowledgeGraph::Build(std::move(in));
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? *g : nullptr;
}

// Adopted from a segment, the walk graph's entries are borrowed lazily:
// the adoption verifies none of their blocks; each row is verified and
// checked at its first read (Begin), a row in altered blocks reads as
// empty (and is recorded), the others as built, and an export refuses to
// copy the damage.
TEST(GraphArraysTest, WalkRowsFromASegmentAreCheckedRowByRowAsWalksReadThem) {
  namespace fs = std::filesystem;
  const auto built = RandomGraph(600, 400, 1500, 21);
  ASSERT_NE(built, nullptr);
  std::string dir = (fs::path(::testing::TempDir()) / "walk-lazy-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string path = dir + "/graph.seg";
  {
    auto writer = SegmentWriter::Create(path, "test", 1, 1);
    ASSERT_TRUE(writer.ok());
    SegmentArraySink sink(writer->get());
    ASSERT_TRUE(built->ExportArrays(sink).ok());
    ASSERT_TRUE((*writer)->Finish().ok());
  }
  const auto adopt = [&](std::shared_ptr<const SegmentReader>* reader) {
    auto r = SegmentReader::Open(path);
    EXPECT_TRUE(r.ok());
    *reader = *r;
    return KnowledgeGraph::AdoptArrays(SegmentArraySource(*reader), 600, nullptr);
  };
  const WalkGraph& want = built->walk();
  auto row = [](const WalkGraph& w, uint32_t u) {
    std::vector<std::pair<uint32_t, float>> out;
    for (uint64_t i = w.Begin(u); i < w.End(u); ++i) out.emplace_back(w.Target(i), w.Weight(i));
    return out;
  };
  std::shared_ptr<const SegmentReader> reader;
  auto adopted = adopt(&reader);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  for (uint32_t u = 0; u < want.num_nodes(); ++u) ASSERT_EQ(row((*adopted)->walk(), u), row(want, u));
  EXPECT_TRUE(reader->Damage().ok());
  MemoryArrays copy;
  EXPECT_TRUE((*adopted)->ExportArrays(copy).ok());

  const SectionInfo targets = *reader->FindSection("walk.targets");
  ASSERT_GE(targets.block_count, 2u);
  testing::AlterEightBytesBefore(path, targets.offset + targets.length);
  adopted = adopt(&reader);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();  // the adoption does not read them
  const WalkGraph& walk = (*adopted)->walk();
  const auto last = static_cast<uint32_t>(want.num_nodes() - 1);
  ASSERT_GT(want.Degree(last), 0u);
  EXPECT_EQ(walk.Degree(last), 0u);
  EXPECT_FALSE(reader->Damage().ok());
  EXPECT_EQ(row(walk, 0), row(want, 0));
  MemoryArrays copy2;
  EXPECT_EQ((*adopted)->ExportArrays(copy2).code(), StatusCode::kCorruption);
  fs::remove_all(dir);
}

// A segment file holding `graph`'s arrays, in a new temporary folder.
std::string GraphSegment(const KnowledgeGraph& graph, const char* name) {
  std::string dir = (std::filesystem::path(::testing::TempDir()) / name).string() + "-XXXXXX";
  EXPECT_NE(mkdtemp(dir.data()), nullptr);
  const std::string path = dir + "/graph.seg";
  auto writer = SegmentWriter::Create(path, "test", 1, 1);
  EXPECT_TRUE(writer.ok());
  SegmentArraySink sink(writer->get());
  EXPECT_TRUE(graph.ExportArrays(sink).ok());
  EXPECT_TRUE((*writer)->Finish().ok());
  return path;
}

// Everything a reader of one node's edges of `kind` sees.
std::vector<std::tuple<uint32_t, float, uint32_t>> CsrRow(const KnowledgeGraph& g, EdgeKind kind,
                                                          uint32_t node) {
  const Csr& c = g.Edges(kind);
  std::vector<std::tuple<uint32_t, float, uint32_t>> out;
  for (uint64_t i = c.Begin(node); i < c.End(node); ++i) {
    out.emplace_back(c.targets[i], c.weights[i], c.attrs[i]);
  }
  return out;
}

// Everything a reader of one fact sees.
std::vector<uint32_t> FactRow(const KnowledgeGraph& g, uint32_t f) {
  std::vector<uint32_t> out = {g.FactSubject(f), g.FactObject(f), g.FactRelationId(f),
                               g.FactTextId(f)};
  for (uint32_t p : g.FactSources(f)) out.push_back(p);
  out.push_back(UINT32_MAX);
  for (uint32_t other : g.FactsWithText(g.FactTextId(f))) out.push_back(other);
  return out;
}

// Adopted from a segment, the CSRs' rows and the fact arrays are borrowed
// lazily: the adoption verifies none of their blocks (it succeeds with the
// last block of each altered); every row and fact reads as built, a CSR row
// or a block of facts in altered bytes reads as empty (recorded with the
// source), and an export refuses to copy the damage.
TEST(GraphArraysTest, CsrRowsAndFactsFromASegmentAreCheckedAsTheyAreRead) {
  const auto built = RandomGraph(600, 400, 1500, 22);
  ASSERT_NE(built, nullptr);
  const std::string path = GraphSegment(*built, "csr-lazy");
  const auto adopt = [&](std::shared_ptr<const SegmentReader>* reader) {
    auto r = SegmentReader::Open(path);
    EXPECT_TRUE(r.ok());
    *reader = *r;
    return KnowledgeGraph::AdoptArrays(SegmentArraySource(*reader), 600, nullptr);
  };
  const EdgeKind kinds[] = {EdgeKind::kMentions, EdgeKind::kRelatedTo};
  std::shared_ptr<const SegmentReader> reader;
  auto adopted = adopt(&reader);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  const KnowledgeGraph& g = **adopted;
  for (EdgeKind kind : kinds) {
    for (uint32_t node = 0; node < built->num_nodes(); ++node) {
      ASSERT_EQ(CsrRow(g, kind, node), CsrRow(*built, kind, node)) << node;
    }
  }
  for (uint32_t f = 0; f < built->num_facts(); ++f) ASSERT_EQ(FactRow(g, f), FactRow(*built, f));
  EXPECT_TRUE(reader->Damage().ok());
  MemoryArrays copy;
  EXPECT_TRUE(g.ExportArrays(copy).ok());

  // The last node with RELATED_TO entries and the last fact are in the last
  // blocks of their arrays; the first are not.
  const Csr& related = built->Edges(EdgeKind::kRelatedTo);
  const auto last_node = static_cast<uint32_t>(related.rows() - 1);
  const auto last_fact = static_cast<uint32_t>(built->num_facts() - 1);
  ASSERT_GT(related.Degree(last_node), 0u);
  for (const char* name : {"kg.related_to.targets", "kg.fact_subject"}) {
    const SectionInfo section = *reader->FindSection(name);
    ASSERT_GE(section.block_count, 2u) << name;
    testing::AlterEightBytesBefore(path, section.offset + section.length);
  }
  adopted = adopt(&reader);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();  // the adoption does not read them
  const KnowledgeGraph& damaged = **adopted;
  EXPECT_TRUE(reader->Damage().ok());
  EXPECT_EQ(CsrRow(damaged, EdgeKind::kRelatedTo, built->EntityNode(0)),
            CsrRow(*built, EdgeKind::kRelatedTo, built->EntityNode(0)));
  EXPECT_EQ(FactRow(damaged, 0), FactRow(*built, 0));
  EXPECT_TRUE(reader->Damage().ok());
  EXPECT_EQ(damaged.Edges(EdgeKind::kRelatedTo).Degree(last_node), 0u);
  EXPECT_FALSE(reader->Damage().ok());
  EXPECT_EQ(damaged.FactSubject(last_fact), 0u);
  EXPECT_TRUE(damaged.FactSources(last_fact).empty());
  MemoryArrays copy2;
  EXPECT_EQ(damaged.ExportArrays(copy2).code(), StatusCode::kCorruption);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

// The passage slots: P rounded up by at most 1/32, a function of P alone.
TEST(PassageSlotsTest, RoundUpByAtMostAThirtySecondAndStayPut) {
  EXPECT_EQ(PassageSlots(0), 0u);
  EXPECT_EQ(PassageSlots(1), 1u);
  EXPECT_EQ(PassageSlots(63), 63u);
  EXPECT_EQ(PassageSlots(64), 64u);
  EXPECT_EQ(PassageSlots(65), 66u);
  EXPECT_EQ(PassageSlots(6119), 6144u);
  EXPECT_EQ(PassageSlots(100000), 100352u);
  EXPECT_EQ(PassageSlots(1000000), 1015808u);
  size_t last = 0;
  for (size_t p = 0; p <= 200000; ++p) {
    const size_t s = PassageSlots(p);
    ASSERT_GE(s, p);
    ASSERT_LE(s, p + p / 32 + 1) << p;
    ASSERT_GE(s, last) << p;  // non-decreasing
    ASSERT_EQ(PassageSlots(s), s) << p;
    last = s;
  }
}

// A graph over 66 passages has 66 slots; read for a snapshot of 65
// passages (the same slot count), passage 65 is an empty slot, and an edge
// to it is refused: no walk may reach a passage the snapshot lacks.
TEST(PassageSlotsTest, EmptySlotsHaveNoEdgesAndAdoptionRefusesEdgesIntoThem) {
  FloatMatrix unused;
  KnowledgeGraph::Input in = SmallInput(&unused);
  in.passage_vectors = PassageVectorRows();
  in.num_passages = 65;
  auto g = KnowledgeGraph::Build(std::move(in));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->num_passages(), 66u);
  EXPECT_EQ((*g)->EntityNode(0), 66u);
  EXPECT_EQ((*g)->Kind(65), NodeKind::kPassage);
  for (int k = 0; k < kNumEdgeKinds; ++k) {
    EXPECT_EQ((*g)->Edges(static_cast<EdgeKind>(k)).Degree(65), 0u);
  }
  EXPECT_EQ((*g)->walk().Degree(65), 0u);
  MemoryArrays arrays;
  ASSERT_TRUE((*g)->ExportArrays(arrays).ok());
  EXPECT_TRUE(KnowledgeGraph::AdoptArrays(arrays, 65, nullptr).ok());
  EXPECT_TRUE(KnowledgeGraph::AdoptArrays(arrays, 66, nullptr).ok());  // slot 65 filled later
  // Another slot count.
  auto other = KnowledgeGraph::AdoptArrays(arrays, 64, nullptr);
  EXPECT_EQ(other.status().code(), StatusCode::kCorruption);
  EXPECT_NE(other.status().message().find("kg.num_passages"), std::string::npos);

  // Passage 65 mentions London: adopted for 65 passages, that mention
  // points into an empty slot.
  in = SmallInput(&unused);
  in.passage_vectors = PassageVectorRows();
  in.num_passages = 66;
  in.mentions.push_back({65, 1, 1.0f, false});
  auto h = KnowledgeGraph::Build(std::move(in));
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  MemoryArrays with_edge;
  ASSERT_TRUE((*h)->ExportArrays(with_edge).ok());
  EXPECT_TRUE(KnowledgeGraph::AdoptArrays(with_edge, 66, nullptr).ok());
  auto refused = KnowledgeGraph::AdoptArrays(with_edge, 65, nullptr);
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
  EXPECT_NE(refused.status().message().find("slot"), std::string::npos)
      << refused.status().ToString();
}

TEST_F(GraphDamageTest, CountsAndFormatAreChecked) {
  Elements<uint32_t>("kg.format")[0] = kGraphArraysFormat + 1;
  ExpectRefused("kg.format", "another format");
  for (const char* name : {"kg.num_entities", "kg.num_descriptions", "kg.num_facts",
                           "kg.num_relations", "kg.num_fact_texts", "kg.num_passages"}) {
    Elements<uint64_t>(name)[0] += 1;
    ExpectRefused(name, "count + 1");
  }
  auto a = KnowledgeGraph::AdoptArrays(arrays_, built_->num_passages() + 1, nullptr);
  EXPECT_EQ(a.status().code(), StatusCode::kCorruption);
  EXPECT_NE(a.status().message().find("kg.num_passages"), std::string::npos);
}

TEST_F(GraphDamageTest, WrongNodeKindsAndEdgeKindsAreRefused) {
  // A mention from a passage to a fact node (in range, of the wrong kind).
  Elements<uint32_t>("kg.mentions.targets")[0] = built_->FactNode(0);
  ExpectRefused("kg.mentions.targets", "passage to fact");
  // A synonym to a passage.
  Elements<uint32_t>("kg.synonym.targets")[0] = 0;
  ExpectRefused("kg.synonym.targets", "synonym to a passage");
  // Walk entries of a kind Build never makes there, or of no kind.
  for (uint8_t kind : {uint8_t{2}, uint8_t{1}, uint8_t{9}}) {
    Elements<uint8_t>("walk.kinds")[0] = kind;  // passage 0's first entry: a mention
    ExpectRefused("walk.kinds", "walk kind " + std::to_string(kind));
  }
  // facts_by_text rows permuted across texts.
  std::span<uint32_t> by_text = Elements<uint32_t>("kg.facts_by_text");
  std::swap(by_text[0], by_text[by_text.size() - 1]);
  ExpectRefused("kg.facts_by_text", "facts under another text");
}

TEST_F(GraphDamageTest, NonFiniteOrInconsistentFloatsAreRefused) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const char* name : {"kg.mentions.weights", "kg.synonym.weights", "kg.raw_abstractness",
                           "kg.abstractness", "walk.weights", "walk.w.title"}) {
    for (float bad : {nan, inf}) {
      Elements<float>(name)[0] = bad;
      ExpectRefused(name, "not finite");
    }
  }
  Elements<float>("kg.abstractness")[0] = 2.0f;
  ExpectRefused("kg.abstractness", "abstractness above 1");
  Elements<float>("walk.weights")[0] = 0.0f;
  ExpectRefused("walk.weights", "zero weight");
  Elements<double>("walk.row_sums")[0] *= 2.0;
  ExpectRefused("walk.row_sums", "row sum not the row's");
  Elements<double>("walk.row_sums")[0] = std::numeric_limits<double>::quiet_NaN();
  ExpectRefused("walk.row_sums", "row sum NaN");
}

TEST_F(GraphDamageTest, MissingArraysAreNotFoundAndRetypedOnesCorrupt) {
  const std::vector<std::string> names = ArrayNames(*built_);
  ASSERT_GT(names.size(), 50u);
  for (const std::string& name : names) {
    for (bool drop : {true, false}) {
      MemoryArrays arrays;
      RecordingSink sink(&arrays, drop ? name : "", drop ? "" : name);
      ASSERT_TRUE(built_->ExportArrays(sink).ok());
      auto a = KnowledgeGraph::AdoptArrays(arrays, built_->num_passages(), nullptr);
      ASSERT_FALSE(a.ok()) << (drop ? "without " : "retyped ") << name;
      EXPECT_EQ(a.status().code(), drop ? StatusCode::kNotFound : StatusCode::kCorruption)
          << a.status().ToString();
      EXPECT_NE(a.status().message().find(name), std::string::npos) << a.status().ToString();
    }
  }
}

// Random bytes of random arrays changed: the graph is refused, or adopted
// and every accessor reads within its arrays (the sanitizer build checks).
TEST_F(GraphDamageTest, RandomDamageIsRefusedOrReadable) {
  const std::vector<std::string> names = ArrayNames(*built_);
  std::mt19937 rng(34);
  size_t refused = 0;
  for (int round = 0; round < 2000; ++round) {
    MemoryArrays arrays;
    ASSERT_TRUE(built_->ExportArrays(arrays).ok());
    for (int hits = 1 + static_cast<int>(rng() % 3); hits > 0; --hits) {
      std::span<std::byte> bytes = arrays.MutableBytes(names[rng() % names.size()]);
      if (bytes.empty()) continue;
      bytes[rng() % bytes.size()] ^= static_cast<std::byte>(1u << (rng() % 8));
    }
    auto a = KnowledgeGraph::AdoptArrays(arrays, built_->num_passages(), nullptr);
    if (!a.ok()) {
      EXPECT_TRUE(a.status().code() == StatusCode::kCorruption) << a.status().ToString();
      ++refused;
      continue;
    }
    const KnowledgeGraph& g = **a;
    size_t sum = 0;
    for (uint32_t e = 0; e < g.num_entities(); ++e) {
      sum += g.EntityName(e).size() + g.EntityType(e).size() + g.EntityPassageCount(e);
    }
    for (uint32_t d = 0; d < g.num_descriptions(); ++d) {
      sum += g.DescriptionText(d).size() + g.EntityName(g.DescriptionEntity(d)).size() +
             g.DescriptionPassage(d);
    }
    for (uint32_t f = 0; f < g.num_facts(); ++f) {
      sum += g.FactRelation(f).size() + g.FactTextOf(g.FactTextId(f)).size() +
             g.EntityName(g.FactSubject(f)).size() + g.EntityName(g.FactObject(f)).size();
      for (uint32_t p : g.FactSources(f)) sum += p;
    }
    for (uint32_t t = 0; t < g.num_fact_texts(); ++t) {
      for (uint32_t f : g.FactsWithText(t)) sum += g.FactSubject(f);
    }
    for (int k = 0; k < kNumEdgeKinds; ++k) {
      const Csr& c = g.Edges(static_cast<EdgeKind>(k));
      for (uint32_t u = 0; u < g.num_nodes(); ++u) {
        for (uint64_t i = c.Begin(u); i < c.End(u); ++i) sum += g.LocalIndex(c.targets[i]);
      }
    }
    const std::vector<double> walks = Walks(g);
    EXPECT_FALSE(walks.empty());
    EXPECT_GT(sum, 0u);
  }
  RecordProperty("refused", static_cast<int>(refused));
  // Most damage is caught (a flipped string byte or float bit need not be).
  EXPECT_GT(refused, 1000u);
}

// Not a check: Build against AdoptArrays on a store named by
// FLOWRAG_GRAPH_ARRAYS_DB (opened read-only), with MemoryBytes of both.
// Skipped without it. E.g.
//   FLOWRAG_GRAPH_ARRAYS_DB=/tmp/r-2wiki.db build/release/tests/graph_arrays_test \
//       --gtest_filter=GraphArraysTimingTest.*
TEST(GraphArraysTimingTest, BuildAgainstAdoptOnAStore) {
  const char* path = std::getenv("FLOWRAG_GRAPH_ARRAYS_DB");
  if (path == nullptr) GTEST_SKIP() << "FLOWRAG_GRAPH_ARRAYS_DB is not set";
  StoreOptions so;
  so.read_only = true;
  so.create_if_missing = false;
  auto store = Store::Open(path, so);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto embedder = LoadEmbedder(**store, kHashEmbedderName, EngineOptions{});
  ASSERT_TRUE(embedder.ok()) << embedder.status().ToString();
  SnapshotOptions options;
  options.dense_model = (*store)->DenseModel().value().value_or("");
  auto snap = Snapshot::Build(**store, *embedder, options);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  const KnowledgeGraph* graph = (*snap)->graph();
  const auto* flat = dynamic_cast<const FlatIndex*>((*snap)->dense());
  ASSERT_TRUE(graph != nullptr && flat != nullptr) << "needs a graph and a flat passage index";
  std::unordered_map<int64_t, uint32_t> passage_index;
  for (uint32_t p = 0; p < (*snap)->num_passages(); ++p) passage_index[(*snap)->passage(p).id] = p;
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a) {
    return std::chrono::duration<double, std::milli>(Clock::now() - a).count();
  };
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::vector<double> build_ms, adopt_ms;
  std::shared_ptr<const KnowledgeGraph> built, adopted;
  for (int run = 0; run < 3; ++run) {
    auto rows = LoadGraphRows(**store, passage_index);
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    rows->vectors = graph->vectors();
    rows->passage_vectors = &flat->matrix();
    const auto start = Clock::now();
    auto g = KnowledgeGraph::Build(std::move(*rows));
    build_ms.push_back(ms(start));
    ASSERT_TRUE(g.ok());
    built = std::move(g).value();
  }
  MemoryArrays arrays;
  ASSERT_TRUE(built->ExportArrays(arrays).ok());
  for (int run = 0; run < 5; ++run) {
    const auto start = Clock::now();
    auto g = KnowledgeGraph::AdoptArrays(arrays, built->num_passages(), built->vectors());
    adopt_ms.push_back(ms(start));
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    adopted = std::move(g).value();
  }
  ExpectSameGraph(*built, *adopted);
  const size_t vector_bytes = built->vectors()->MemoryBytes();
  std::printf(
      "entities %zu, facts %zu, nodes %zu\nBuild %.1f ms, AdoptArrays %.1f ms (medians of 3 / "
      "5)\nMemoryBytes %.1f MiB (graph arrays %.1f MiB + vectors %.1f MiB)\n",
      built->num_entities(), built->num_facts(), built->num_nodes(), median(build_ms),
      median(adopt_ms), built->MemoryBytes() / 1048576.0,
      (built->MemoryBytes() - vector_bytes) / 1048576.0, vector_bytes / 1048576.0);
}

// The chunked checks (array_checks.h, common/array_scan.h) against a one-element-at-a-time
// reading of their contracts: a bad value in a full chunk, on either side
// of a chunk boundary, in the tail, or nowhere, is found at its index.
TEST(ArrayChecksTest, ChunkedScansFindTheFirstBadIndexWherePerElementScansDo) {
  namespace c = array_checks;
  const size_t n = 3 * kScanChunk + 17;
  for (size_t at : {size_t{0}, kScanChunk - 1, kScanChunk, 2 * kScanChunk + 5,
                    n - 1, n}) {
    SCOPED_TRACE(at);
    std::vector<uint32_t> values(n, 7);
    std::vector<uint64_t> offsets(n);
    std::vector<float> floats(n, 1.0f);
    for (size_t i = 0; i < n; ++i) offsets[i] = 3 * i;
    if (at < n) {
      values[at] = 100;
      floats[at] = std::numeric_limits<float>::infinity();
      if (at > 0) offsets[at] = offsets[at - 1] - 1;
    }
    const size_t expected = at < n ? at : n;
    EXPECT_EQ(FirstOutside<uint32_t>(values.data(), 0, n, 5, 100), expected);
    EXPECT_EQ(FirstOutside<uint32_t>(values.data(), 1, n, 5, 100), at >= 1 ? expected : n);
    Status below = c::CheckBelow("v", values, 100, "things");
    EXPECT_EQ(below.ok(), at == n);
    if (at < n) EXPECT_NE(below.message().find("v[" + std::to_string(at) + "]"), std::string::npos);
    Status finite = c::CheckFinite<float>("f", floats);
    EXPECT_EQ(finite.ok(), at == n);
    if (at < n) EXPECT_NE(finite.message().find("f[" + std::to_string(at) + "]"), std::string::npos);
    Status increasing = c::CheckOffsets("o", offsets, n - 1, offsets.back());
    EXPECT_EQ(increasing.ok(), at == n || at == 0);
    if (at > 0 && at < n) {
      EXPECT_NE(increasing.message().find("o[" + std::to_string(at) + "]"), std::string::npos)
          << increasing.ToString();
    }
  }
  // Limits beyond the element type, values of 2^63 and more that never
  // decrease, NaN.
  std::vector<uint8_t> bytes(2 * kScanChunk, 255);
  EXPECT_TRUE(c::CheckBelow("b", bytes, 256, "").ok());
  EXPECT_FALSE(c::CheckBelow("b", bytes, 255, "").ok());
  std::vector<uint64_t> high(2 * kScanChunk + 1);
  for (size_t i = 0; i < high.size(); ++i) high[i] = i == 0 ? 0 : (uint64_t{1} << 63) + i;
  EXPECT_TRUE(c::CheckOffsets("h", high, high.size() - 1, high.back()).ok());
  std::vector<double> doubles(kScanChunk, 2.0);
  doubles[kScanChunk / 2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(c::CheckFinite<double>("d", doubles).ok());
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag

