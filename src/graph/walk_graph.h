// WalkGraph: the weighted undirected graph of passages and entities that
// the graph retrievers walk (ppr, qafd, semflow's passage edges). One entry
// per neighbour pair and direction, built once per snapshot from the typed
// KnowledgeGraph (which keeps every fact and mention as stored; this graph
// only decides how much each carries).
//
// Base weights are HippoRAG 2's (ppr_retriever.h): passage–entity 1 per
// pair, entity–entity 2 per fact joining the pair (HippoRAG inserts each
// fact edge once per direction into an undirected graph), SYNONYM 2 ×
// similarity. On top, rules for the offline graph, where the extractor
// links every entity of a sentence and literals and nationalities become
// hubs ("American" is named in 1,113 of 2wiki's 6,119 passages):
//   title     a passage's link to its own title entity (MENTIONS attr 1)
//             weighs `title` instead of 1: the passage is *about* that
//             entity, the strongest link the offline graph has;
//   literal   every edge of a DATE or NUMBER entity is multiplied by
//             `literal`: a year shared by two passages is weak evidence of
//             a connection;
//   hub       every edge of an entity named in df > `hub_passages`
//             passages is multiplied by hub_passages / df (per endpoint).
// Measured (ppr Recall@5 offline, 2wiki-train / musique-train, on the
// all-pairs fact graph before proximity facts and the local fact channel): HippoRAG weights
// alone 85.2 / 64.8; title 3 88.2 / 66.4; title 10 91.0 / 66.0; literal 0.1 86.6 / 66.6; hub
// 50 85.5 / 65.2; title 10 + literal 0.1 + hub 50 93.3 / 67.0 (2wiki 79.2 → 90.3,
// hotpotqa-train 84.0 → 89.0). Lowering the fact weight to 0.5 lost a point.
//
// Arrays: FlatArrays (common/flat_array.h), owned when built, borrowed when
// adopted (AdoptArrays, called by KnowledgeGraph::AdoptArrays: the same
// arrays from a segment file, nothing recomputed).
//
// Thread-safety: immutable after Build / AdoptArrays. Memory: 9 bytes per
// entry plus 16 bytes per node.
#ifndef FLOWRAG_GRAPH_WALK_GRAPH_H_
#define FLOWRAG_GRAPH_WALK_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/array_io.h"
#include "common/checked_once.h"
#include "common/flat_array.h"
#include "flowrag/status.h"

namespace flowrag {

class KnowledgeGraph;
enum class EdgeKind : uint8_t;

struct WalkWeights {
  float mention = 1.0f;
  float title = 10.0f;
  float fact = 2.0f;
  float synonym = 2.0f;
  float literal = 0.1f;
  uint32_t hub_passages = 50;  // 0 = no hub rule
};

class WalkGraph {
 public:
  WalkGraph() = default;
  static WalkGraph Build(const KnowledgeGraph& graph, const WalkWeights& weights);

  // Writes the arrays ("walk.offsets", "walk.targets", "walk.weights",
  // "walk.kinds", "walk.row_sums", all marked random) and the
  // WalkWeights as scalars ("walk.w.*"); a lazily adopted graph checks every
  // row first (Corruption for a damaged one). O(arrays' bytes).
  Status ExportArrays(ArraySink& sink) const;
  // The walk graph ExportArrays wrote, over `num_passages` passage slots
  // (KnowledgeGraph::num_passages) and `num_entities` entities, its arrays
  // borrowed from `source`, for a snapshot of `passages` passages. Checks
  // the offsets (num_passages + num_entities + 1, first 0, non-decreasing,
  // last = entries), no row for an empty slot (≥ `passages`), every row sum
  // finite, and each row's entries: every target < nodes and not an empty
  // slot, every kind one Build makes between the kinds of node it joins
  // (MENTIONS: passage and entity; RELATED_TO and SYNONYM: two entities),
  // every weight finite and > 0, the row sum equal to its row's weights
  // (relative 1e-4), and the WalkWeights finite. From a source that verifies
  // lazily (a segment), the entries (targets, weights, kinds: 240 MB at 10^6
  // passages) are borrowed unverified and each row is verified and checked
  // at its first read (Begin); a row that fails reads as empty from then on,
  // its damage recorded with the source. NotFound for a missing array,
  // Corruption naming the array and index otherwise. O(nodes), and
  // O(entries) from a source that does not verify lazily.
  static Result<WalkGraph> AdoptArrays(const ArraySource& source, size_t num_passages,
                                       size_t num_entities, size_t passages);
  // The arrays AdoptArrays borrows lazily, which a reader verifying a
  // segment ahead of the adoption leaves to it.
  static std::vector<std::string> LazyArrays();

  size_t num_nodes() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }
  size_t num_entries() const { return targets_.size(); }
  // Row u's entries are [Begin(u), End(u)). Begin checks a lazily adopted
  // row at its first read (above) and is End(u) for a row that failed: read
  // a row only within these bounds, Begin first.
  uint64_t Begin(uint32_t u) const {
    return lazy_ == nullptr || RowChecked(u) ? offsets_[u] : offsets_[u + 1];
  }
  uint64_t End(uint32_t u) const { return offsets_[u + 1]; }
  size_t Degree(uint32_t u) const { return End(u) - Begin(u); }
  uint32_t Target(uint64_t i) const { return targets_[i]; }
  float Weight(uint64_t i) const { return weights_[i]; }
  EdgeKind Kind(uint64_t i) const { return static_cast<EdgeKind>(kinds_[i]); }
  // Σ of u's weights (0 for an isolated node).
  double RowSum(uint32_t u) const { return row_sums_[u]; }
  const WalkWeights& weights() const { return config_; }

  // The arrays whole, as built or adopted (unchecked rows included: read
  // rows through Begin and End).
  std::span<const uint64_t> offsets() const { return offsets_; }
  std::span<const uint32_t> targets() const { return targets_; }
  std::span<const float> weight_values() const { return weights_; }
  size_t MemoryBytes() const;

 private:
  // The per-row checks of a lazily adopted walk graph.
  struct LazyRows {
    explicit LazyRows(size_t nodes) : checked(nodes) {}
    CheckedOnce checked;
    size_t passages = 0, slots = 0;  // as AdoptArrays was given them
  };
  // Row u's state, checking it the first time (CheckRow; a failure reported
  // to the source).
  bool RowChecked(uint32_t u) const;
  // Row u's bytes verified and its entries checked (AdoptArrays): OK or
  // Corruption naming the array and entry.
  Status CheckRow(uint32_t u, size_t passages, size_t slots) const;

  WalkWeights config_;
  FlatArray<uint64_t> offsets_;
  FlatArray<uint32_t> targets_;
  FlatArray<float> weights_;
  FlatArray<uint8_t> kinds_;
  FlatArray<double> row_sums_;
  std::shared_ptr<const LazyRows> lazy_;  // lazily adopted only; shared by copies
};

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_WALK_GRAPH_H_
