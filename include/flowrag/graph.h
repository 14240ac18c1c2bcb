// GraphView: read access to the knowledge graph of one engine snapshot, for
// export (GraphML, JSONL; format in doc/graph_export.md) and for browsing
// (entity search, neighbourhoods, the passages behind a fact; the server's
// /v1/graph endpoints, doc/http_api.md).
//
//   std::shared_ptr<const GraphView> g = engine->Graph();
//   g->Export({.format = GraphFormat::kGraphMl}, std::cout, nullptr);
//
// A GraphView pins the snapshot it was taken from: it never changes, even
// while the engine indexes and swaps in newer snapshots, and it keeps that
// snapshot's memory alive until released.
//
// Ids: entities are named by their store id (stable while the entity
// exists). Facts are named by their index in the snapshot, valid for that
// snapshot's generation() only (the store does not keep fact ids across
// writes); a client holding a fact id from an older generation should ask
// again.
//
// Thread-safety: immutable; every method may run concurrently.
#ifndef FLOWRAG_GRAPH_H_
#define FLOWRAG_GRAPH_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"
#include "flowrag/types.h"

namespace flowrag {

enum class GraphFormat { kGraphMl, kJsonl };

// "graphml" | "jsonl"; InvalidArgument naming the accepted values otherwise.
Result<GraphFormat> ParseGraphFormat(std::string_view name);

struct GraphExportOptions {
  GraphFormat format = GraphFormat::kGraphMl;
  // Documents and passages as nodes too, with CONTAINS (document → passage)
  // and MENTIONS (passage → entity) edges. Off: entities, descriptions and
  // the edges between them only (facts still name their source passages).
  bool passages = true;
  // Each passage node carries its text (large: the whole corpus).
  bool passage_text = false;
};

struct GraphExportReport {
  size_t nodes = 0;
  size_t edges = 0;
  uint64_t bytes = 0;              // written to the stream
  size_t replaced_characters = 0;  // invalid UTF-8 or XML-illegal characters replaced
};

struct GraphEntityInfo {
  int64_t id = 0;  // store id
  std::string name;
  std::string type;       // "" when unknown
  uint32_t passages = 0;  // passages mentioning it
  uint32_t facts = 0;     // RELATED_TO degree (facts it is subject or object of)
};

// An edge between two entities of a neighbourhood.
struct GraphEdgeInfo {
  std::string kind;  // "RELATED_TO" (a fact) or "SYNONYM"
  int64_t from = 0;  // entity store ids; a fact goes subject → object
  int64_t to = 0;
  std::string relation;  // RELATED_TO: the relation text
  double weight = 0.0;   // SYNONYM: similarity; RELATED_TO: 1
  int64_t fact = -1;     // RELATED_TO: the fact id (see Ids above)
  uint32_t sources = 0;  // RELATED_TO: passages that state it
};

struct NeighbourhoodOptions {
  // Neighbour entities kept, those sharing most facts with the centre first
  // (then most mentioned, then lowest id). Bounded by the server.
  size_t max_neighbours = 40;
  // Facts kept between the centre and each neighbour (lowest fact id first).
  size_t max_facts_per_neighbour = 3;
};

struct GraphNeighbourhood {
  int64_t generation = 0;
  GraphEntityInfo center;
  std::vector<GraphEntityInfo> neighbours;
  std::vector<GraphEdgeInfo> edges;
  size_t total_neighbours = 0;  // before max_neighbours
  size_t total_facts = 0;       // facts of the centre (RELATED_TO degree)
  bool truncated = false;       // something was left out
};

struct FactProvenance {
  int64_t generation = 0;
  int64_t fact = -1;
  GraphEntityInfo subject, object;
  std::string relation;
  std::vector<ScoredPassage> passages;  // score 0; in store order
  size_t total_passages = 0;            // before the limit
};

class GraphView {
 public:
  virtual ~GraphView() = default;

  // The store generation of the pinned snapshot.
  virtual int64_t generation() const = 0;
  virtual size_t num_entities() const = 0;

  // Writes the whole graph to `out` as it goes (memory O(1) beyond the
  // snapshot). `report` may be null. Fails only when `out` fails.
  // O(nodes + edges + provenance entries).
  virtual Status Export(const GraphExportOptions& options, std::ostream& out,
                        GraphExportReport* report) const = 0;

  // Entities whose name contains `query` (case-insensitive for ASCII
  // letters), best first: exact name, then prefix, then elsewhere; ties by
  // passages mentioning them, then id. At most `limit`. O(entities · |name|).
  virtual std::vector<GraphEntityInfo> FindEntities(std::string_view query, size_t limit) const = 0;

  // The entity and its neighbours by RELATED_TO and SYNONYM edges, bounded
  // by `options`. NotFound for an unknown id. O(degree · log degree).
  virtual Result<GraphNeighbourhood> Neighbourhood(int64_t entity_id,
                                                   const NeighbourhoodOptions& options) const = 0;

  // The fact and the passages that state it (at most `limit`, with their
  // text). NotFound for a fact id outside this snapshot.
  virtual Result<FactProvenance> FactPassages(int64_t fact, size_t limit) const = 0;
};

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_H_
