// KnowledgeGraph: the immutable in-memory typed graph of a snapshot
// (DESIGN.md "One graph, typed"), built from the store's graph tables.
//
// Nodes share one id space, by kind:
//   [0, S)             Passage      (= snapshot passage index)
//   [S, S+E)           Entity
//   [S+E, S+E+D)       EntityDescription
//   [S+E+D, N)         Fact
// where S = PassageSlots(P) ≥ P for a snapshot of P passages: the slots
// [P, S) are passage nodes without edges, so that a snapshot extended by a
// few passages before their extraction (Snapshot::Append) keeps this graph
// as it is instead of numbering every entity again. Walks never reach an
// empty slot (no edges, no reset mass: the passage prior covers the
// snapshot's passages only).
// Edges are stored per kind as CSR adjacency over that id space, both
// directions of every undirected edge:
//   kMentions    passage ↔ entity        weight = occurrences; attr = 1 for the
//                                        passage's own title entity, else 0
//   kRelatedTo   entity ↔ entity         one entry per fact; attr = fact index
//   kDescribes   description ↔ entity    weight 1
//   kSynonym     entity ↔ entity         weight = embedding similarity
// Facts are nodes without edges of their own: fact_subject/fact_object give
// their entities and FactSources() the passages that state them. Relation
// texts are shared by the facts that state them (the offline extractor's
// relation is a sentence with many entity pairs), and so are fact texts
// (graph/graph_texts.h FactText): both are stored once.
//
// Vectors (graph/graph_vectors.h, built by the loader and moved in):
// entity names, descriptions and distinct fact texts each get a VectorIndex
// (ids = index within the kind / fact text id); relation texts a sparse row
// each (RelationDot); with the built-in embedder the entity names' sparse
// rows too (entity_vectors). Elements whose text has no embedding get a
// zero vector.
//
// Abstractness (SemFlowRAG §3.2 Eq. 1): d_v = tr Cov{h_p : p mentions v}
// (population covariance of the passage embeddings; 0 for one passage),
// then clipped to the 1st–99th percentile over all entities and min-max
// scaled to [0, 1].
//
// Arrays: every array is a FlatArray and every string list a StringArena
// (common/flat_array.h), owned when built, borrowed when adopted from an
// ArraySource (common/array_io.h; a memory-mapped segment file) by
// AdoptArrays, which recomputes nothing. ExportArrays writes them.
//
// Thread-safety: immutable after Build() / AdoptArrays(); share through the
// snapshot.
#ifndef FLOWRAG_GRAPH_KNOWLEDGE_GRAPH_H_
#define FLOWRAG_GRAPH_KNOWLEDGE_GRAPH_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/array_io.h"
#include "common/flat_array.h"
#include "common/matrix.h"
#include "flowrag/status.h"
#include "graph/graph_vectors.h"
#include "graph/walk_graph.h"
#include "vector/sparse_rows.h"
#include "vector/vector_index.h"

namespace flowrag {

enum class NodeKind : uint8_t { kPassage, kEntity, kDescription, kFact };
enum class EdgeKind : uint8_t { kMentions = 0, kRelatedTo, kDescribes, kSynonym };
inline constexpr int kNumEdgeKinds = 4;
std::string_view NodeKindName(NodeKind kind);
std::string_view EdgeKindName(EdgeKind kind);

// The format of the arrays ExportArrays writes and AdoptArrays reads: bump
// it whenever what Build computes changes (CSR order, walk weights,
// abstractness, facts by text, a new array), since adopted arrays are used
// as written, never recomputed: a segment of another format is refused and
// rebuilt from the store.
// 2: passage slots (PassageSlots) instead of exactly the snapshot's passages.
// 3: a CSR's offsets end at its last node with an edge (Csr::rows).
inline constexpr uint32_t kGraphArraysFormat = 3;

// The passage node slots of a graph over `passages` passages: `passages`
// rounded up to a multiple of 2^(max(0, floor(log2 passages) - 5)), so at
// most 1/32 more (0 for 0; 6,144 for 2wiki's 6,119; 100,352 for 10^5). A
// function of the count alone, so that a graph built over P passages and
// one shared by a snapshot that appended passages up to the same slot
// count are the same graph. Non-decreasing, and PassageSlots(S) = S for a
// slot count S.
size_t PassageSlots(size_t passages);

// The per-row checks of a CSR adopted lazily (knowledge_graph_arrays.cc).
struct CsrRowChecks;

// One edge kind's adjacency. Neighbours of a node are sorted by target id.
// Rows end at the last node with an edge of the kind: the nodes after it
// (every fact, and at 10^6 passages 6.5 million of the 9.5 million nodes)
// have no offsets, and Begin, End and Degree read them as empty rows.
//
// Adopted from a segment (KnowledgeGraph::AdoptArrays), the four arrays are
// borrowed unverified and each row is verified and checked at its first
// Begin (`lazy` set): its two offsets, its entries' bytes, its targets
// against the node kinds its edge kind joins, finite weights, a fact index
// per RELATED_TO entry. A row that fails reads as empty from then on (Begin
// is End), its damage recorded with the source. So read a row only within
// [Begin(node), End(node)), and call Begin before reading its entries.
struct Csr {
  FlatArray<uint64_t> offsets{std::vector<uint64_t>{0}};  // rows() + 1, rows() <= num_nodes
  FlatArray<uint32_t> targets;
  FlatArray<float> weights;
  FlatArray<uint32_t> attrs;  // kRelatedTo: fact index; kMentions: 1 = title; else 0
  std::shared_ptr<const CsrRowChecks> lazy;  // lazily adopted only; shared by copies

  // Nodes [0, rows()) have offsets; every later node has no edges.
  size_t rows() const { return offsets.size() - 1; }
  size_t Degree(uint32_t node) const { return End(node) - Begin(node); }
  uint64_t Begin(uint32_t node) const {
    const size_t r = std::min<size_t>(node, rows());
    return lazy == nullptr || r == rows() || RowPassed(r) ? offsets[r] : offsets[r + 1];
  }
  uint64_t End(uint32_t node) const { return offsets[std::min<size_t>(size_t{node} + 1, rows())]; }
  size_t num_entries() const { return targets.size(); }
  // Row r checked (the first time: verified and checked, a failure reported
  // to the source). REQUIRES: lazy set, r < rows().
  bool RowPassed(size_t r) const;
};

// Passage vectors read in place, row by row (abstractness reads only the
// rows of the entities it computes): a FloatMatrix's rows (null or empty:
// none) or any row accessor, such as a vector index's stored rows (in place,
// or decoded into the scratch row it is given, which it then returns). A
// null row reads as zeros.
class PassageVectorRows {
 public:
  PassageVectorRows() = default;
  PassageVectorRows(const FloatMatrix* m)  // NOLINT(google-explicit-constructor)
      : rows_(m != nullptr ? m->rows : 0), dim_(m != nullptr ? m->cols : 0), matrix_(m) {}
  PassageVectorRows(size_t rows, size_t dim, std::function<const float*(uint32_t, float*)> row)
      : rows_(rows), dim_(dim), row_(std::move(row)) {}
  size_t rows() const { return rows_; }
  size_t dim() const { return dim_; }
  bool empty() const { return rows_ == 0 || dim_ == 0; }
  // Row `r` (dim() floats) or null: in place, or in `scratch` (dim()
  // floats). REQUIRES r < rows().
  const float* row(uint32_t r, float* scratch) const {
    return matrix_ != nullptr ? matrix_->row(r) : row_(r, scratch);
  }

 private:
  size_t rows_ = 0, dim_ = 0;
  const FloatMatrix* matrix_ = nullptr;
  std::function<const float*(uint32_t, float*)> row_;
};

class KnowledgeGraph {
 public:
  // Builder input: rows as loaded from the store, already mapped to
  // kind-local indexes (graph/graph_loader.cc). A snapshot part persists
  // every field but `vectors` and `passage_vectors` (graph/graph_io.cc
  // SerializeGraphRows): a field added here must be written there too, and
  // kGraphRowsFormat bumped (snapshot_persist_test compares graphs built
  // from rows and from the part accessor by accessor).
  struct Input {
    size_t num_passages = 0;  // the snapshot's passages (the graph has PassageSlots of them)
    std::vector<std::string> entity_names, entity_types;
    std::vector<int64_t> entity_ids;  // store ids
    struct Mention {
      uint32_t passage, entity;
      float count;
      bool defining;
      bool title = false;  // the passage's own title entity
    };
    std::vector<Mention> mentions;
    std::vector<uint32_t> description_entity, description_passage;
    std::vector<std::string> description_texts;
    std::vector<uint32_t> fact_subject, fact_object;  // entity indexes
    std::vector<uint32_t> fact_relation;              // index into relation_texts
    std::vector<std::string> relation_texts;          // distinct
    std::vector<uint32_t> fact_text;                  // index into fact_texts
    std::vector<std::string> fact_texts;              // distinct
    std::vector<std::vector<uint32_t>> fact_sources;  // passage indexes
    struct Synonym {
      uint32_t a, b;
      float similarity;
    };
    std::vector<Synonym> synonyms;
    // Vectors of the texts above (null or empty when there is no embedder);
    // shared with later graphs whose texts are the same.
    std::shared_ptr<const GraphVectors> vectors;
    // Passage embeddings for abstractness (rows = passages), may be empty.
    PassageVectorRows passage_vectors;
    // Optional: an earlier graph, and per passage of this input its row
    // there (kNoRow for a passage it lacks), for passages whose vector is
    // the same there. An entity whose passages map one to one, in order, to
    // its passages there keeps its raw abstractness (the same vectors in
    // the same order give the same float) and its passages' vectors are
    // not read. Neither field is persisted (nor are the two above).
    const KnowledgeGraph* previous = nullptr;
    std::vector<uint32_t> previous_rows;
  };
  static constexpr uint32_t kNoRow = UINT32_MAX;
  // Computes every array from `input` (CSR adjacency, facts by text, fact
  // sources, abstractness, the WalkGraph). A change of what it computes
  // needs a bump of kGraphArraysFormat (above).
  static Result<std::shared_ptr<const KnowledgeGraph>> Build(Input&& input);

  // Writes every array and count of the graph (not the vectors), named
  // "kg.*" and "walk.*", with kGraphArraysFormat as "kg.format". Arrays
  // read by scattered rows (every CSR, fact and walk array) are marked
  // random. A lazily adopted graph checks every row and block first
  // (Corruption for a damaged one: no damage is copied). O(arrays' bytes).
  Status ExportArrays(ArraySink& sink) const;
  // The graph ExportArrays wrote, its arrays borrowed from `source` (no copy,
  // nothing recomputed), with `vectors` (null: none). Checks everything a
  // damaged or crafted source could make unsafe: the format, the passage
  // slots against PassageSlots(`num_passages`, the snapshot's passages),
  // that no edge or walk entry touches an empty slot (a passage node ≥
  // num_passages), every count against the array sizes, every offsets array
  // (a CSR's at most one per node and one; first 0, non-decreasing, last =
  // the length of the array it indexes), every index against its range (CSR
  // and walk targets, fact subjects/objects/relations/texts, sources,
  // description entities and passages, facts by text), the node kinds each
  // edge kind joins, walk kinds, finite weights, abstractness in [0, 1] and
  // row sums. From a source that verifies lazily (a segment), the large
  // arrays are borrowed unverified and checked where they are read (about
  // 700 MB at 10^6 passages that an open no longer reads): CSR rows at
  // their first Begin (Csr), facts and fact texts by blocks at their first
  // read (FactSubject ... FactsWithText), walk rows at their first Begin
  // (WalkGraph::AdoptArrays); what fails reads as empty and is recorded
  // with the source. From any other source every row and block is checked
  // here. Not checked, as no read depends on them for safety: the order of
  // a node's neighbours, that both directions of an edge are there, that a
  // RELATED_TO entry's fact joins its two entities. Errors: NotFound for a
  // missing array, Corruption naming the array (and index) for anything
  // else; InvalidArgument when `vectors` index more elements than the graph
  // has. O(nodes + entities) from a lazy source, O(total length of the
  // arrays) from another.
  static Result<std::shared_ptr<const KnowledgeGraph>> AdoptArrays(
      const ArraySource& source, size_t num_passages, std::shared_ptr<const GraphVectors> vectors);
  // The arrays AdoptArrays borrows lazily (ArraySource::GetLazy), which a
  // reader verifying a segment ahead of the adoption leaves to it: the
  // bytes of the description and fact texts (each text verified when it is
  // first read: DescriptionText, FactTextOf; empty when it fails), the CSRs,
  // the fact arrays, and the walk graph's entries (WalkGraph::LazyArrays).
  static std::vector<std::string> LazyArrays();

  // ---- node space
  size_t num_nodes() const { return num_nodes_; }
  // Passage node slots (PassageSlots of the snapshot's passages, above): the
  // first entity's node. A snapshot's own count is Snapshot::num_passages().
  size_t num_passages() const { return num_passages_; }
  size_t num_entities() const { return entity_names_.size(); }
  size_t num_descriptions() const { return description_texts_.size(); }
  size_t num_facts() const { return fact_subject_.size(); }
  size_t num_relations() const { return relation_texts_.size(); }
  size_t num_fact_texts() const { return fact_texts_.size(); }
  uint32_t EntityNode(uint32_t e) const { return static_cast<uint32_t>(num_passages_ + e); }
  uint32_t DescriptionNode(uint32_t d) const {
    return static_cast<uint32_t>(num_passages_ + num_entities() + d);
  }
  uint32_t FactNode(uint32_t f) const {
    return static_cast<uint32_t>(num_passages_ + num_entities() + num_descriptions() + f);
  }
  NodeKind Kind(uint32_t node) const;
  // Kind-local index of a node (passage index, entity index, ...).
  uint32_t LocalIndex(uint32_t node) const;

  const Csr& Edges(EdgeKind kind) const { return edges_[static_cast<int>(kind)]; }
  // Passages and entities as one weighted undirected graph (graph/walk_graph.h).
  const WalkGraph& walk() const { return walk_; }
  size_t NumEdges(EdgeKind kind) const;  // undirected edges (entries / 2)

  // ---- entities
  std::string_view EntityName(uint32_t e) const { return entity_names_[e]; }
  std::string_view EntityType(uint32_t e) const { return entity_types_[e]; }
  int64_t EntityStoreId(uint32_t e) const { return entity_ids_[e]; }
  // Passages mentioning the entity (SemFlowRAG's passage frequency).
  uint32_t EntityPassageCount(uint32_t e) const;
  float Abstractness(uint32_t e) const { return abstractness_[e]; }         // normalised [0,1]
  float RawAbstractness(uint32_t e) const { return raw_abstractness_[e]; }  // tr Cov

  // ---- descriptions and facts
  std::string_view DescriptionText(uint32_t d) const { return description_texts_[d]; }
  uint32_t DescriptionEntity(uint32_t d) const { return description_entity_[d]; }
  uint32_t DescriptionPassage(uint32_t d) const { return description_passage_[d]; }
  // Facts and fact texts are checked by blocks of 2^kLazyBlockShift.
  static constexpr uint32_t kLazyBlockShift = 10;
  // A fact of an adopted graph is checked at its first read, with the 1,023
  // facts of its block; a fact of a block that fails reads as ids 0 and no
  // sources (its damage recorded with the source; AdoptArrays).
  uint32_t FactSubject(uint32_t f) const { return FactPassed(f) ? fact_subject_[f] : 0; }
  uint32_t FactObject(uint32_t f) const { return FactPassed(f) ? fact_object_[f] : 0; }
  uint32_t FactRelationId(uint32_t f) const { return FactPassed(f) ? fact_relation_[f] : 0; }
  std::string_view FactRelation(uint32_t f) const { return relation_texts_[FactRelationId(f)]; }
  std::string_view RelationText(uint32_t r) const { return relation_texts_[r]; }
  uint32_t FactTextId(uint32_t f) const { return FactPassed(f) ? fact_text_[f] : 0; }
  std::string_view FactTextOf(uint32_t t) const { return fact_texts_[t]; }
  // Facts whose text is fact text `t` (ascending; checked as facts are,
  // by blocks of texts: none for a text of a block that fails).
  std::span<const uint32_t> FactsWithText(uint32_t t) const {
    if (lazy_facts_ != nullptr && !TextBlockPassed(t >> kLazyBlockShift)) return {};
    return {facts_by_text_.data() + facts_by_text_offsets_[t],
            facts_by_text_offsets_[t + 1] - facts_by_text_offsets_[t]};
  }
  std::span<const uint32_t> FactSources(uint32_t f) const {
    if (!FactPassed(f)) return {};
    return {fact_source_passages_.data() + fact_source_offsets_[f],
            fact_source_offsets_[f + 1] - fact_source_offsets_[f]};
  }

  // ---- vectors (null / empty when the store has no embeddings)
  const VectorIndex* entity_index() const { return vectors_->entity_index.get(); }
  const VectorIndex* description_index() const { return vectors_->description_index.get(); }
  const VectorIndex* fact_index() const {
    return vectors_->fact_index.get();
  }  // ids: fact text ids
  // Entity-name vectors as rows (entity index → row); null unless the graph
  // was embedded by the built-in embedder.
  const SparseRows* entity_vectors() const {
    return vectors_->entity_rows.rows() == num_entities() && num_entities() > 0
               ? &vectors_->entity_rows
               : nullptr;
  }
  // Cosine of relation `r`'s text with an L2-normalised query vector (0 when
  // there are no relation vectors).
  float RelationDot(uint32_t r, const float* query) const {
    return vectors_->relation_rows.rows() > r ? vectors_->relation_rows.Dot(r, query) : 0.0f;
  }
  // Every vector (never null), for persistence (graph/graph_io.h) and for
  // later snapshots to share or reuse.
  const std::shared_ptr<const GraphVectors>& vectors() const { return vectors_; }

  size_t MemoryBytes() const;

 private:
  // The per-block checks of a lazily adopted graph's fact arrays
  // (knowledge_graph_arrays.cc).
  struct LazyFacts;
  bool FactPassed(uint32_t f) const {
    return lazy_facts_ == nullptr || FactBlockPassed(f >> kLazyBlockShift);
  }
  // A block's state, checked the first time (a failure reported to the source).
  bool FactBlockPassed(size_t block) const;
  bool TextBlockPassed(size_t block) const;
  // A block of facts (their ids, source offsets and sources, the sources
  // below `passages`) or of fact texts (their facts) verified and checked.
  Status CheckFactBlock(size_t block, size_t passages) const;
  Status CheckTextBlock(size_t block) const;
  // Every CSR row and fact and text block of a lazily adopted graph checked
  // (the first failure), so that an export copies no damage. O(arrays).
  Status CheckEveryRow() const;

  // AdoptArrays' checks of the arrays in place (sets num_nodes_) for a
  // snapshot of `passages` passages: the sizes, counts and offsets' ends
  // now, the rows and blocks now or (from a lazy source) at first read.
  Status CheckAdopted(const ArraySource& source, size_t passages);
  Status CheckEntitiesAndDescriptions(size_t passages) const;
  Status CheckFactArraySizes() const;
  // The vectors' sizes against the graph's.
  Status CheckVectors() const;

  size_t num_passages_ = 0, num_nodes_ = 0;
  StringArena entity_names_, entity_types_;
  FlatArray<int64_t> entity_ids_;
  FlatArray<float> abstractness_, raw_abstractness_;
  StringArena description_texts_;
  FlatArray<uint32_t> description_entity_, description_passage_;
  FlatArray<uint32_t> fact_subject_, fact_object_, fact_relation_, fact_text_;
  StringArena relation_texts_, fact_texts_;
  FlatArray<uint64_t> facts_by_text_offsets_;
  FlatArray<uint32_t> facts_by_text_;
  FlatArray<uint64_t> fact_source_offsets_;
  FlatArray<uint32_t> fact_source_passages_;
  Csr edges_[kNumEdgeKinds];
  std::shared_ptr<const LazyFacts> lazy_facts_;  // lazily adopted only
  WalkGraph walk_;
  std::shared_ptr<const GraphVectors> vectors_;
};

// Semantic abstractness of each entity (raw tr Cov, then normalised), as
// defined above. `entity_passages[e]` lists passage rows of `passage_vectors`.
// Exposed for tests. O(Σ|P(v)|·d).
void ComputeAbstractness(const FloatMatrix& passage_vectors,
                         const std::vector<std::vector<uint32_t>>& entity_passages,
                         std::vector<float>* raw, std::vector<float>* normalised);

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_KNOWLEDGE_GRAPH_H_
