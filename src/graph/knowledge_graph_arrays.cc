// KnowledgeGraph's arrays: ExportArrays writes them; AdoptArrays borrows
// them from an ArraySource and checks them before any read depends on
// them. From a source that verifies lazily (a segment), the large arrays
// are checked where they are read, so an open reads no more of them than
// its first questions do:
//   - a CSR's offsets and entries row by row, at a row's first Begin
//     (CsrRowChecks; a row that fails reads as empty);
//   - the fact arrays (subjects, objects, relations, texts, sources) by
//     blocks of 1,024 facts, and the facts by text by blocks of 1,024 texts,
//     at the first read of a fact or text in the block (LazyFacts; a fact
//     of a block that fails reads as fact 0's ids with no sources, a text
//     as one with no facts).
// Every failure is recorded with the source (ArraySource::Damage), which
// its owner acts on by rebuilding from the store. From any other source
// the same checks run over every row and block at adoption, and a failure
// refuses the arrays.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "common/checked_once.h"
#include "graph/array_checks.h"
#include "graph/knowledge_graph.h"

namespace flowrag {
namespace {

using array_checks::Bad;
using array_checks::CheckSize;
using array_checks::GetLazy;

constexpr uint32_t kBlockShift = KnowledgeGraph::kLazyBlockShift;

// Array names of each edge kind's CSR ("kg.<kind>.offsets", ...).
constexpr const char* kEdgeArrays[kNumEdgeKinds] = {"kg.mentions", "kg.related_to", "kg.describes",
                                                    "kg.synonym"};
std::string EdgeArray(int kind, const char* field) {
  return std::string(kEdgeArrays[kind]) + "." + field;
}

size_t Blocks(size_t elements) {
  return (elements + (size_t{1} << kBlockShift) - 1) >> kBlockShift;
}

// A count scalar ("kg.num_*") that fits the uint32 node ids.
Result<size_t> GetCount(const ArraySource& source, std::string_view name) {
  FLOWRAG_ASSIGN_OR_RETURN(uint64_t n, array_checks::GetScalar<uint64_t>(source, name));
  if (n > std::numeric_limits<uint32_t>::max()) return Bad(name, 0, "count too large");
  return static_cast<size_t>(n);
}

// Elements [first, first + count) of `array` verified, each below `limit`
// (`what` it counts, for the message).
Status CheckRangeBelow(std::string_view name, const FlatArray<uint32_t>& array, uint64_t first,
                       uint64_t count, uint64_t limit, std::string_view what) {
  FLOWRAG_RETURN_IF_ERROR(array.Verify(first, count));
  if (limit > std::numeric_limits<uint32_t>::max()) return Status::Ok();
  const size_t end = first + count;
  const size_t i =
      FirstOutside<uint32_t>(array.data(), first, end, 0, static_cast<uint32_t>(limit));
  if (i == end) return Status::Ok();
  return Bad(name, i,
             std::to_string(array[i]) + " out of range (" + std::to_string(limit) + " " +
                 std::string(what) + ")");
}

// Offsets [first, last] of `offsets` verified, non-decreasing and at most
// `entries`: the rows [first, last) index entries inside their array.
Status CheckOffsetRange(std::string_view name, const FlatArray<uint64_t>& offsets, size_t first,
                        size_t last, uint64_t entries) {
  FLOWRAG_RETURN_IF_ERROR(offsets.Verify(first, last - first + 1));
  for (size_t i = first + 1; i <= last; ++i) {
    if (offsets[i] < offsets[i - 1]) return Bad(name, i, "offset decreases");
  }
  if (offsets[last] > entries) {
    return Bad(name, last,
               "offset " + std::to_string(offsets[last]) + " past the " + std::to_string(entries) +
                   " entries it indexes");
  }
  return Status::Ok();
}

// Offsets of `rows` rows into `entries` elements: rows + 1 of them, the
// first 0 and the last `entries` (the rows between: CheckOffsetRange).
Status CheckOffsetEnds(std::string_view name, const FlatArray<uint64_t>& offsets, size_t rows,
                       uint64_t entries) {
  FLOWRAG_RETURN_IF_ERROR(CheckSize<uint64_t>(name, offsets, rows + 1));
  FLOWRAG_RETURN_IF_ERROR(offsets.Verify(0, 1));
  FLOWRAG_RETURN_IF_ERROR(offsets.Verify(rows, 1));
  if (offsets[0] != 0) return Bad(name, 0, "first offset is not 0");
  if (offsets[rows] != entries) {
    return Bad(name, rows,
               "last offset " + std::to_string(offsets[rows]) + " is not the " +
                   std::to_string(entries) + " entries it indexes");
  }
  return Status::Ok();
}

// Each edge kind joins the kinds of node Build joins with it, both ways.
bool EdgeJoins(EdgeKind edge, NodeKind u, NodeKind v) {
  auto either = [&](NodeKind a, NodeKind b) { return (u == a && v == b) || (u == b && v == a); };
  switch (edge) {
    case EdgeKind::kMentions:
      return either(NodeKind::kPassage, NodeKind::kEntity);
    case EdgeKind::kRelatedTo:
    case EdgeKind::kSynonym:
      return either(NodeKind::kEntity, NodeKind::kEntity);
    case EdgeKind::kDescribes:
      return either(NodeKind::kDescription, NodeKind::kEntity);
  }
  return false;
}

constexpr NodeKind kNodeKinds[] = {NodeKind::kPassage, NodeKind::kEntity, NodeKind::kDescription,
                                   NodeKind::kFact};

}  // namespace

// The node ids of one adopted graph by kind: passages [0, passages) (the
// snapshot's; [passages, slots) are empty slots), entities [slots,
// entities_end), descriptions [entities_end, descriptions_end), facts
// [descriptions_end, nodes).
struct NodeRanges {
  uint64_t passages = 0, slots = 0, entities_end = 0, descriptions_end = 0, nodes = 0;

  std::pair<uint64_t, uint64_t> Of(NodeKind k) const {
    switch (k) {
      case NodeKind::kPassage:
        return {0, passages};  // not the empty slots
      case NodeKind::kEntity:
        return {slots, entities_end};
      case NodeKind::kDescription:
        return {entities_end, descriptions_end};
      case NodeKind::kFact:
        return {descriptions_end, nodes};
    }
    return {0, 0};
  }
  NodeKind KindOf(uint64_t node) const {
    if (node < slots) return NodeKind::kPassage;
    if (node < entities_end) return NodeKind::kEntity;
    return node < descriptions_end ? NodeKind::kDescription : NodeKind::kFact;
  }
  // The ids a row of node `from` may point to by an edge of `kind`
  // (EdgeJoins); none from an empty slot or a kind the edge does not join.
  std::pair<uint64_t, uint64_t> Allowed(EdgeKind kind, uint64_t from) const {
    if (from >= passages && from < slots) return {0, 0};
    for (NodeKind to : kNodeKinds) {
      if (EdgeJoins(kind, KindOf(from), to)) return Of(to);
    }
    return {0, 0};
  }
};

struct CsrRowChecks {
  CsrRowChecks(size_t rows, EdgeKind kind, const NodeRanges& ranges, size_t facts)
      : checked(rows), kind(kind), ranges(ranges), facts(facts) {}
  CheckedOnce checked;
  EdgeKind kind;
  NodeRanges ranges;
  size_t facts;
};

struct KnowledgeGraph::LazyFacts {
  LazyFacts(size_t facts, size_t texts, size_t passages)
      : fact_blocks(Blocks(facts)), text_blocks(Blocks(texts)), passages(passages) {}
  CheckedOnce fact_blocks, text_blocks;
  size_t passages;  // the snapshot's, which fact sources lie below
};

namespace {

// Row r of `c` (edge kind `k.kind`) verified and checked: its offsets
// ordered inside the entries, its targets in the range its node's kind
// joins (Allowed), its weights finite, a RELATED_TO entry's fact below
// `k.facts`. OK or Corruption naming the array and entry.
Status CheckCsrRow(const Csr& c, const CsrRowChecks& k, size_t r) {
  const int kind = static_cast<int>(k.kind);
  FLOWRAG_RETURN_IF_ERROR(
      CheckOffsetRange(EdgeArray(kind, "offsets"), c.offsets, r, r + 1, c.targets.size()));
  const uint64_t b = c.offsets[r], e = c.offsets[r + 1];
  FLOWRAG_RETURN_IF_ERROR(c.targets.Verify(b, e - b));
  FLOWRAG_RETURN_IF_ERROR(c.weights.Verify(b, e - b));
  FLOWRAG_RETURN_IF_ERROR(c.attrs.Verify(b, e - b));
  const NodeRanges& ranges = k.ranges;
  const auto [lo, hi] = ranges.Allowed(k.kind, r);
  if (const size_t i = FirstOutside<uint32_t>(c.targets.data(), b, e, static_cast<uint32_t>(lo),
                                              static_cast<uint32_t>(hi));
      i != e) {
    const std::string name = EdgeArray(kind, "targets");
    const uint32_t t = c.targets[i];
    if (r >= ranges.passages && r < ranges.slots) return Bad(name, i, "an empty slot's row");
    if (t >= ranges.nodes) {
      return Bad(name, i,
                 std::to_string(t) + " out of range (" + std::to_string(ranges.nodes) + " nodes)");
    }
    if (t >= ranges.passages && t < ranges.slots) return Bad(name, i, "an empty passage slot");
    return Bad(name, i,
               std::string(NodeKindName(ranges.KindOf(r))) + " to " +
                   std::string(NodeKindName(ranges.KindOf(t))) + " is not an edge of " +
                   std::string(EdgeKindName(k.kind)));
  }
  const std::span<const float> weights = c.weights.span().subspan(b, e - b);
  if (const size_t i = FirstNonFinite(weights); i < weights.size()) {
    return Bad(EdgeArray(kind, "weights"), b + i, "not finite");
  }
  if (k.kind == EdgeKind::kRelatedTo) {
    return CheckRangeBelow(EdgeArray(kind, "attrs"), c.attrs, b, e - b, k.facts, "facts");
  }
  return Status::Ok();
}

}  // namespace

bool Csr::RowPassed(size_t r) const {
  return lazy->checked.Passed(
      r, [&] { return CheckCsrRow(*this, *lazy, r); },
      [&](const Status& s) { targets.ReportDamage(s); });
}

bool KnowledgeGraph::FactBlockPassed(size_t block) const {
  return lazy_facts_->fact_blocks.Passed(
      block, [&] { return CheckFactBlock(block, lazy_facts_->passages); },
      [&](const Status& s) { fact_subject_.ReportDamage(s); });
}

bool KnowledgeGraph::TextBlockPassed(size_t block) const {
  return lazy_facts_->text_blocks.Passed(
      block, [&] { return CheckTextBlock(block); },
      [&](const Status& s) { facts_by_text_.ReportDamage(s); });
}

// Facts [f0, f1) of block `block`: their ids below their ranges, their
// source offsets ordered inside the sources, their sources below
// `passages`.
Status KnowledgeGraph::CheckFactBlock(size_t block, size_t passages) const {
  const size_t f0 = block << kBlockShift;
  const size_t f1 = std::min(num_facts(), f0 + (size_t{1} << kBlockShift)), n = f1 - f0;
  const size_t E = num_entities();
  FLOWRAG_RETURN_IF_ERROR(CheckRangeBelow("kg.fact_subject", fact_subject_, f0, n, E, "entities"));
  FLOWRAG_RETURN_IF_ERROR(CheckRangeBelow("kg.fact_object", fact_object_, f0, n, E, "entities"));
  FLOWRAG_RETURN_IF_ERROR(
      CheckRangeBelow("kg.fact_relation", fact_relation_, f0, n, num_relations(), "relations"));
  FLOWRAG_RETURN_IF_ERROR(
      CheckRangeBelow("kg.fact_text", fact_text_, f0, n, num_fact_texts(), "fact texts"));
  FLOWRAG_RETURN_IF_ERROR(CheckOffsetRange("kg.fact_source_offsets", fact_source_offsets_, f0, f1,
                                           fact_source_passages_.size()));
  const uint64_t s0 = fact_source_offsets_[f0], s1 = fact_source_offsets_[f1];
  return CheckRangeBelow("kg.fact_sources", fact_source_passages_, s0, s1 - s0, passages,
                         "passages");
}

// Texts [t0, t1) of block `block`: each row of `facts_by_text` lists,
// ascending, facts whose text it is.
Status KnowledgeGraph::CheckTextBlock(size_t block) const {
  const size_t t0 = block << kBlockShift;
  const size_t t1 = std::min(num_fact_texts(), t0 + (size_t{1} << kBlockShift));
  FLOWRAG_RETURN_IF_ERROR(CheckOffsetRange("kg.facts_by_text_offsets", facts_by_text_offsets_, t0,
                                           t1, facts_by_text_.size()));
  const uint64_t b = facts_by_text_offsets_[t0], e = facts_by_text_offsets_[t1];
  FLOWRAG_RETURN_IF_ERROR(
      CheckRangeBelow("kg.facts_by_text", facts_by_text_, b, e - b, num_facts(), "facts"));
  for (size_t t = t0; t < t1; ++t) {
    for (uint64_t i = facts_by_text_offsets_[t]; i < facts_by_text_offsets_[t + 1]; ++i) {
      const uint32_t f = facts_by_text_[i];
      if (FactTextId(f) != t || (i > facts_by_text_offsets_[t] && f <= facts_by_text_[i - 1])) {
        return Bad("kg.facts_by_text", i, "not a fact of text " + std::to_string(t));
      }
    }
  }
  return Status::Ok();
}

Status KnowledgeGraph::CheckEveryRow() const {
  for (const Csr& c : edges_) {
    if (c.lazy == nullptr) continue;
    for (size_t r = 0; r < c.rows(); ++r) {
      if (!c.RowPassed(r)) return CheckCsrRow(c, *c.lazy, r);
    }
  }
  if (lazy_facts_ == nullptr) return Status::Ok();
  for (size_t b = 0; b < Blocks(num_facts()); ++b) {
    if (!FactBlockPassed(b)) return CheckFactBlock(b, lazy_facts_->passages);
  }
  for (size_t b = 0; b < Blocks(num_fact_texts()); ++b) {
    if (!TextBlockPassed(b)) return CheckTextBlock(b);
  }
  return Status::Ok();
}

Status KnowledgeGraph::ExportArrays(ArraySink& sink) const {
  FLOWRAG_RETURN_IF_ERROR(CheckEveryRow());  // never copy damage into a new segment
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<uint32_t>("kg.format", kGraphArraysFormat));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<uint64_t>("kg.num_passages", num_passages_));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<uint64_t>("kg.num_entities", num_entities()));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<uint64_t>("kg.num_descriptions", num_descriptions()));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<uint64_t>("kg.num_facts", num_facts()));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<uint64_t>("kg.num_relations", num_relations()));
  FLOWRAG_RETURN_IF_ERROR(sink.PutScalar<uint64_t>("kg.num_fact_texts", num_fact_texts()));
  FLOWRAG_RETURN_IF_ERROR(sink.PutStrings("kg.entity_names", entity_names_));
  FLOWRAG_RETURN_IF_ERROR(sink.PutStrings("kg.entity_types", entity_types_));
  // The texts read lazily, one fact or description at a time (random).
  FLOWRAG_RETURN_IF_ERROR(sink.PutStrings("kg.description_texts", description_texts_, true));
  FLOWRAG_RETURN_IF_ERROR(sink.PutStrings("kg.relation_texts", relation_texts_));
  FLOWRAG_RETURN_IF_ERROR(sink.PutStrings("kg.fact_texts", fact_texts_, true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<int64_t>("kg.entity_ids", entity_ids_));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<float>("kg.abstractness", abstractness_));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<float>("kg.raw_abstractness", raw_abstractness_));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>("kg.description_entity", description_entity_));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>("kg.description_passage", description_passage_));
  // The fact arrays are read by scattered facts and texts (random).
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>("kg.fact_subject", fact_subject_, true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>("kg.fact_object", fact_object_, true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>("kg.fact_relation", fact_relation_, true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>("kg.fact_text", fact_text_, true));
  FLOWRAG_RETURN_IF_ERROR(
      sink.Put<uint64_t>("kg.facts_by_text_offsets", facts_by_text_offsets_, true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>("kg.facts_by_text", facts_by_text_, true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint64_t>("kg.fact_source_offsets", fact_source_offsets_, true));
  FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>("kg.fact_sources", fact_source_passages_, true));
  for (int k = 0; k < kNumEdgeKinds; ++k) {
    const Csr& c = edges_[k];
    FLOWRAG_RETURN_IF_ERROR(sink.Put<uint64_t>(EdgeArray(k, "offsets"), c.offsets, true));
    FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>(EdgeArray(k, "targets"), c.targets, true));
    FLOWRAG_RETURN_IF_ERROR(sink.Put<float>(EdgeArray(k, "weights"), c.weights, true));
    FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>(EdgeArray(k, "attrs"), c.attrs, true));
  }
  return walk_.ExportArrays(sink);
}

namespace {

// The arrays checked where they are read (above), by name.
constexpr const char* kLazyFactArrays[] = {
    "kg.fact_subject",          "kg.fact_object",   "kg.fact_relation",       "kg.fact_text",
    "kg.facts_by_text_offsets", "kg.facts_by_text", "kg.fact_source_offsets", "kg.fact_sources"};
constexpr const char* kCsrFields[] = {"offsets", "targets", "weights", "attrs"};

}  // namespace

Result<std::shared_ptr<const KnowledgeGraph>> KnowledgeGraph::AdoptArrays(
    const ArraySource& source, size_t num_passages, std::shared_ptr<const GraphVectors> vectors) {
  using array_checks::Get;
  FLOWRAG_ASSIGN_OR_RETURN(uint32_t format, array_checks::GetScalar<uint32_t>(source, "kg.format"));
  if (format != kGraphArraysFormat) {
    return Status::Corruption("kg.format: arrays of format " + std::to_string(format) +
                              ", this build reads " + std::to_string(kGraphArraysFormat));
  }
  auto g = std::shared_ptr<KnowledgeGraph>(new KnowledgeGraph());
  FLOWRAG_ASSIGN_OR_RETURN(g->num_passages_, GetCount(source, "kg.num_passages"));
  if (g->num_passages_ != PassageSlots(num_passages)) {
    return Status::Corruption("kg.num_passages: " + std::to_string(g->num_passages_) +
                              " passage slots, a snapshot of " + std::to_string(num_passages) +
                              " passages has " + std::to_string(PassageSlots(num_passages)));
  }
  FLOWRAG_ASSIGN_OR_RETURN(g->entity_names_, array_checks::GetStrings(source, "kg.entity_names"));
  FLOWRAG_ASSIGN_OR_RETURN(g->entity_types_, array_checks::GetStrings(source, "kg.entity_types"));
  // The texts a question reads a few of are verified as it reads them.
  FLOWRAG_ASSIGN_OR_RETURN(g->description_texts_,
                           array_checks::GetLazyStrings(source, "kg.description_texts"));
  FLOWRAG_ASSIGN_OR_RETURN(g->relation_texts_,
                           array_checks::GetStrings(source, "kg.relation_texts"));
  FLOWRAG_ASSIGN_OR_RETURN(g->fact_texts_, array_checks::GetLazyStrings(source, "kg.fact_texts"));
  FLOWRAG_ASSIGN_OR_RETURN(g->entity_ids_, Get<int64_t>(source, "kg.entity_ids"));
  FLOWRAG_ASSIGN_OR_RETURN(g->abstractness_, Get<float>(source, "kg.abstractness"));
  FLOWRAG_ASSIGN_OR_RETURN(g->raw_abstractness_, Get<float>(source, "kg.raw_abstractness"));
  FLOWRAG_ASSIGN_OR_RETURN(g->description_entity_, Get<uint32_t>(source, "kg.description_entity"));
  FLOWRAG_ASSIGN_OR_RETURN(g->description_passage_,
                           Get<uint32_t>(source, "kg.description_passage"));
  FLOWRAG_ASSIGN_OR_RETURN(g->fact_subject_, GetLazy<uint32_t>(source, "kg.fact_subject"));
  FLOWRAG_ASSIGN_OR_RETURN(g->fact_object_, GetLazy<uint32_t>(source, "kg.fact_object"));
  FLOWRAG_ASSIGN_OR_RETURN(g->fact_relation_, GetLazy<uint32_t>(source, "kg.fact_relation"));
  FLOWRAG_ASSIGN_OR_RETURN(g->fact_text_, GetLazy<uint32_t>(source, "kg.fact_text"));
  FLOWRAG_ASSIGN_OR_RETURN(g->facts_by_text_offsets_,
                           GetLazy<uint64_t>(source, "kg.facts_by_text_offsets"));
  FLOWRAG_ASSIGN_OR_RETURN(g->facts_by_text_, GetLazy<uint32_t>(source, "kg.facts_by_text"));
  FLOWRAG_ASSIGN_OR_RETURN(g->fact_source_offsets_,
                           GetLazy<uint64_t>(source, "kg.fact_source_offsets"));
  FLOWRAG_ASSIGN_OR_RETURN(g->fact_source_passages_, GetLazy<uint32_t>(source, "kg.fact_sources"));
  for (int k = 0; k < kNumEdgeKinds; ++k) {
    Csr& c = g->edges_[k];
    FLOWRAG_ASSIGN_OR_RETURN(c.offsets, GetLazy<uint64_t>(source, EdgeArray(k, "offsets")));
    FLOWRAG_ASSIGN_OR_RETURN(c.targets, GetLazy<uint32_t>(source, EdgeArray(k, "targets")));
    FLOWRAG_ASSIGN_OR_RETURN(c.weights, GetLazy<float>(source, EdgeArray(k, "weights")));
    FLOWRAG_ASSIGN_OR_RETURN(c.attrs, GetLazy<uint32_t>(source, EdgeArray(k, "attrs")));
  }
  FLOWRAG_RETURN_IF_ERROR(g->CheckAdopted(source, num_passages));
  Result<WalkGraph> walk =
      WalkGraph::AdoptArrays(source, g->num_passages_, g->num_entities(), num_passages);
  if (!walk.ok()) return walk.status();
  g->walk_ = std::move(*walk);
  g->vectors_ = vectors != nullptr ? std::move(vectors) : std::make_shared<GraphVectors>();
  FLOWRAG_RETURN_IF_ERROR(g->CheckVectors());
  return std::shared_ptr<const KnowledgeGraph>(std::move(g));
}

std::vector<std::string> KnowledgeGraph::LazyArrays() {
  std::vector<std::string> names = {"kg.description_texts.b", "kg.fact_texts.b"};
  for (const char* name : kLazyFactArrays) names.emplace_back(name);
  for (int k = 0; k < kNumEdgeKinds; ++k) {
    for (const char* field : kCsrFields) names.push_back(EdgeArray(k, field));
  }
  for (std::string& walk : WalkGraph::LazyArrays()) names.push_back(std::move(walk));
  return names;
}

Status KnowledgeGraph::CheckAdopted(const ArraySource& source, size_t passages) {
  const size_t P = passages, S = num_passages_, E = num_entities(), D = num_descriptions(),
               F = num_facts(), R = num_relations(), T = num_fact_texts();
  // The counts written beside the arrays.
  struct Count {
    const char* name;
    size_t value;
  };
  for (const Count& c :
       {Count{"kg.num_entities", E}, Count{"kg.num_descriptions", D}, Count{"kg.num_facts", F},
        Count{"kg.num_relations", R}, Count{"kg.num_fact_texts", T}}) {
    FLOWRAG_ASSIGN_OR_RETURN(size_t n, GetCount(source, c.name));
    if (n != c.value) {
      return Status::Corruption(std::string(c.name) + ": " + std::to_string(n) +
                                ", but the arrays hold " + std::to_string(c.value));
    }
  }
  const uint64_t N = static_cast<uint64_t>(S) + E + D + F;
  if (N > std::numeric_limits<uint32_t>::max()) {
    return Status::Corruption("kg.num_*: more nodes than 32-bit ids hold");
  }
  num_nodes_ = N;
  FLOWRAG_RETURN_IF_ERROR(CheckEntitiesAndDescriptions(P));
  FLOWRAG_RETURN_IF_ERROR(CheckFactArraySizes());
  const NodeRanges ranges{P, S, S + E, S + E + D, N};
  bool lazy = fact_subject_.lazy();
  for (int k = 0; k < kNumEdgeKinds; ++k) {
    Csr& c = edges_[k];
    const size_t entries = c.targets.size();
    if (c.offsets.empty() || c.offsets.size() > N + 1) {
      return Bad(EdgeArray(k, "offsets"), c.offsets.size(),
                 "offsets for " + std::to_string(N) + " nodes");
    }
    FLOWRAG_RETURN_IF_ERROR(CheckOffsetEnds(EdgeArray(k, "offsets"), c.offsets, c.rows(), entries));
    FLOWRAG_RETURN_IF_ERROR(CheckSize<float>(EdgeArray(k, "weights"), c.weights, entries));
    FLOWRAG_RETURN_IF_ERROR(CheckSize<uint32_t>(EdgeArray(k, "attrs"), c.attrs, entries));
    c.lazy = std::make_shared<CsrRowChecks>(c.rows(), static_cast<EdgeKind>(k), ranges, F);
    lazy = lazy && c.offsets.lazy() && c.targets.lazy() && c.weights.lazy() && c.attrs.lazy();
  }
  lazy_facts_ = std::make_shared<LazyFacts>(F, T, P);
  if (lazy) return Status::Ok();
  // A source that verified the arrays: every row and block now.
  FLOWRAG_RETURN_IF_ERROR(CheckEveryRow());
  for (Csr& c : edges_) c.lazy.reset();
  lazy_facts_.reset();
  return Status::Ok();
}

Status KnowledgeGraph::CheckEntitiesAndDescriptions(size_t passages) const {
  using array_checks::CheckBelow;
  const size_t E = num_entities(), D = num_descriptions();
  FLOWRAG_RETURN_IF_ERROR(CheckSize<uint64_t>("kg.entity_types.o", entity_types_.offsets(), E + 1));
  FLOWRAG_RETURN_IF_ERROR(CheckSize<int64_t>("kg.entity_ids", entity_ids_, E));
  FLOWRAG_RETURN_IF_ERROR(CheckSize<float>("kg.abstractness", abstractness_, E));
  FLOWRAG_RETURN_IF_ERROR(CheckSize<float>("kg.raw_abstractness", raw_abstractness_, E));
  FLOWRAG_RETURN_IF_ERROR(
      array_checks::CheckFinite<float>("kg.raw_abstractness", raw_abstractness_));
  for (size_t e = 0; e < E; ++e) {
    if (!(abstractness_[e] >= 0.0f && abstractness_[e] <= 1.0f)) {
      return Bad("kg.abstractness", e, "not in [0, 1]");
    }
  }
  FLOWRAG_RETURN_IF_ERROR(CheckSize<uint32_t>("kg.description_entity", description_entity_, D));
  FLOWRAG_RETURN_IF_ERROR(CheckSize<uint32_t>("kg.description_passage", description_passage_, D));
  FLOWRAG_RETURN_IF_ERROR(CheckBelow("kg.description_entity", description_entity_, E, "entities"));
  return CheckBelow("kg.description_passage", description_passage_, passages, "passages");
}

// The sizes of the fact arrays and the ends of their offsets; their values
// are CheckFactBlock's and CheckTextBlock's.
Status KnowledgeGraph::CheckFactArraySizes() const {
  const size_t F = num_facts(), T = num_fact_texts();
  FLOWRAG_RETURN_IF_ERROR(CheckSize<uint32_t>("kg.fact_object", fact_object_, F));
  FLOWRAG_RETURN_IF_ERROR(CheckSize<uint32_t>("kg.fact_relation", fact_relation_, F));
  FLOWRAG_RETURN_IF_ERROR(CheckSize<uint32_t>("kg.fact_text", fact_text_, F));
  FLOWRAG_RETURN_IF_ERROR(CheckSize<uint32_t>("kg.facts_by_text", facts_by_text_, F));
  // A fact of a damaged block reads as ids 0: there must be such ids.
  if (F > 0 && (num_entities() == 0 || num_relations() == 0 || T == 0)) {
    return Bad("kg.fact_subject", 0, "facts without entities, relations or texts");
  }
  FLOWRAG_RETURN_IF_ERROR(
      CheckOffsetEnds("kg.facts_by_text_offsets", facts_by_text_offsets_, T, F));
  return CheckOffsetEnds("kg.fact_source_offsets", fact_source_offsets_, F,
                         fact_source_passages_.size());
}

Status KnowledgeGraph::CheckVectors() const {
  auto check = [](const VectorIndex* index, size_t count, const char* what) {
    if (index == nullptr || index->Size() <= count) return Status::Ok();
    return Status::InvalidArgument(std::string("graph vectors: ") + what + " index of " +
                                   std::to_string(index->Size()) + " vectors, the graph has " +
                                   std::to_string(count));
  };
  FLOWRAG_RETURN_IF_ERROR(check(entity_index(), num_entities(), "entity"));
  FLOWRAG_RETURN_IF_ERROR(check(description_index(), num_descriptions(), "description"));
  return check(fact_index(), num_fact_texts(), "fact text");
}

}  // namespace flowrag
