#include "session/subgraph.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

namespace flowrag {

namespace {

std::string NodeLabel(const Snapshot& snap, uint32_t node) {
  const KnowledgeGraph& g = *snap.graph();
  const uint32_t i = g.LocalIndex(node);
  switch (g.Kind(node)) {
    case NodeKind::kPassage:
      return std::string(snap.document_of(i).external_id) + "#" + std::to_string(snap.passage(i).ordinal);
    case NodeKind::kEntity:
      return std::string(g.EntityName(i));
    case NodeKind::kDescription:
      return "description of " + std::string(g.EntityName(g.DescriptionEntity(i)));
    case NodeKind::kFact:
      return std::string(g.EntityName(g.FactSubject(i))) + " / " +
             std::string(g.FactRelation(i).substr(0, 80)) + " / " +
             std::string(g.EntityName(g.FactObject(i)));
  }
  return "";
}

}  // namespace

void DescribeSubgraph(const Snapshot& snap, const RetrievalOutput& out, RetrievalResult* result) {
  constexpr size_t kMaxNodes = 150;  // what a viewer can draw
  const KnowledgeGraph& g = *snap.graph();
  std::unordered_map<uint32_t, size_t> index;  // node → position in result->nodes
  auto add = [&](uint32_t node, double score, bool seed) {
    if (node >= g.num_nodes()) return;
    // An empty passage slot (KnowledgeGraph) names no passage.
    if (g.Kind(node) == NodeKind::kPassage && node >= snap.num_passages()) return;
    auto [it, inserted] = index.emplace(node, result->nodes.size());
    if (inserted) {
      result->nodes.push_back(
          {node, std::string(NodeKindName(g.Kind(node))), NodeLabel(snap, node), score, seed});
    } else {
      GraphNode& n = result->nodes[it->second];
      n.seed |= seed;
      n.score = std::max(n.score, score);
    }
  };
  for (const NodeScore& s : out.seeds) add(s.node, s.score, true);
  for (const ExplanationPath& p : out.paths) {
    for (uint32_t n : p.nodes) add(n, 0.0, false);
  }
  for (const RankedPassage& r : out.ranked) add(r.passage, r.score, false);
  for (const NodeScore& s : out.node_scores) {
    if (result->nodes.size() >= kMaxNodes) break;
    add(s.node, s.score, false);
  }
  for (const NodeScore& s : out.node_scores) {  // scores of nodes added through paths
    auto it = index.find(s.node);
    if (it != index.end())
      result->nodes[it->second].score = std::max(result->nodes[it->second].score, s.score);
  }
  for (const TouchedEdge& e : out.subgraph) {
    if (!index.count(e.from) || !index.count(e.to)) continue;
    std::string relation;
    if (e.kind == EdgeKind::kRelatedTo) {
      // The fact behind the edge: the first RELATED_TO entry between the two.
      const Csr& rel = g.Edges(EdgeKind::kRelatedTo);
      for (uint64_t i = rel.Begin(e.from); i < rel.End(e.from); ++i) {
        if (rel.targets[i] == e.to) {
          relation = g.FactRelation(rel.attrs[i]);
          break;
        }
      }
    }
    result->edges.push_back(
        {e.from, e.to, std::string(EdgeKindName(e.kind)), relation, e.weight, e.flow});
  }
  for (const ExplanationPath& p : out.paths) {
    std::vector<std::string> labels;
    for (uint32_t n : p.nodes) labels.push_back(NodeLabel(snap, n));
    result->paths.push_back(std::move(labels));
  }
  result->keywords = out.keywords;
  result->context = out.context;
}

}  // namespace flowrag
