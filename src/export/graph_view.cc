#include "export/graph_view.h"

#include <algorithm>
#include <cctype>
#include <tuple>
#include <unordered_map>

#include "export/graph_export.h"

namespace flowrag {
namespace {

// What browsing derives once per set of entities (Snapshot::DerivedFromEntities).
struct EntityLookup {
  std::unordered_map<int64_t, uint32_t> by_store_id;
  std::vector<std::string> lower_names;  // ASCII letters lowered
};

std::string LowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const char kLookupTag = 0;

class SnapshotGraphView final : public GraphView {
 public:
  explicit SnapshotGraphView(std::shared_ptr<const Snapshot> snap) : snap_(std::move(snap)) {}

  int64_t generation() const override { return snap_->generation(); }
  size_t num_entities() const override {
    return snap_->graph() == nullptr ? 0 : snap_->graph()->num_entities();
  }

  Status Export(const GraphExportOptions& options, std::ostream& out,
                GraphExportReport* report) const override {
    return WriteGraph(*snap_, options, out, report);
  }

  std::vector<GraphEntityInfo> FindEntities(std::string_view query, size_t limit) const override;
  Result<GraphNeighbourhood> Neighbourhood(int64_t entity_id,
                                           const NeighbourhoodOptions& options) const override;
  Result<FactProvenance> FactPassages(int64_t fact, size_t limit) const override;

 private:
  // Lives as long as the snapshot (or the caller's copy).
  std::shared_ptr<const EntityLookup> Lookup() const {
    auto made = snap_->DerivedFromEntities(&kLookupTag, [this]() -> std::shared_ptr<const void> {
      auto l = std::make_shared<EntityLookup>();
      const KnowledgeGraph& kg = *snap_->graph();
      l->by_store_id.reserve(kg.num_entities());
      l->lower_names.reserve(kg.num_entities());
      for (uint32_t e = 0; e < kg.num_entities(); ++e) {
        l->by_store_id.emplace(kg.EntityStoreId(e), e);
        l->lower_names.push_back(LowerAscii(kg.EntityName(e)));
      }
      return l;
    });
    return std::static_pointer_cast<const EntityLookup>(made);
  }

  GraphEntityInfo Info(uint32_t e) const {
    const KnowledgeGraph& kg = *snap_->graph();
    GraphEntityInfo info;
    info.id = kg.EntityStoreId(e);
    info.name = kg.EntityName(e);
    info.type = kg.EntityType(e);
    info.passages = kg.EntityPassageCount(e);
    info.facts = static_cast<uint32_t>(kg.Edges(EdgeKind::kRelatedTo).Degree(kg.EntityNode(e)));
    return info;
  }

  std::shared_ptr<const Snapshot> snap_;
};

std::vector<GraphEntityInfo> SnapshotGraphView::FindEntities(std::string_view query,
                                                             size_t limit) const {
  std::vector<GraphEntityInfo> out;
  const KnowledgeGraph* kg = snap_->graph();
  if (kg == nullptr || query.empty() || limit == 0) return out;
  const std::shared_ptr<const EntityLookup> lookup = Lookup();
  const EntityLookup& l = *lookup;
  const std::string q = LowerAscii(query);
  struct Hit {
    int rank;
    uint32_t passages;
    int64_t id;
    uint32_t e;
  };
  std::vector<Hit> hits;
  for (uint32_t e = 0; e < l.lower_names.size(); ++e) {
    const std::string& name = l.lower_names[e];
    const size_t at = name.find(q);
    if (at == std::string::npos) continue;
    const int rank = name.size() == q.size() ? 0 : at == 0 ? 1 : 2;
    hits.push_back({rank, kg->EntityPassageCount(e), kg->EntityStoreId(e), e});
  }
  auto better = [](const Hit& a, const Hit& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.passages != b.passages) return a.passages > b.passages;
    return a.id < b.id;
  };
  const size_t n = std::min(limit, hits.size());
  std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(n), hits.end(),
                    better);
  for (size_t i = 0; i < n; ++i) out.push_back(Info(hits[i].e));
  return out;
}

Result<GraphNeighbourhood> SnapshotGraphView::Neighbourhood(
    int64_t entity_id, const NeighbourhoodOptions& options) const {
  const KnowledgeGraph* kg = snap_->graph();
  const std::shared_ptr<const EntityLookup> lookup = kg == nullptr ? nullptr : Lookup();
  const auto it = lookup == nullptr ? std::unordered_map<int64_t, uint32_t>::const_iterator{}
                                    : lookup->by_store_id.find(entity_id);
  if (lookup == nullptr || it == lookup->by_store_id.end()) {
    return Status::NotFound("no entity " + std::to_string(entity_id));
  }
  const uint32_t e = it->second;
  const uint32_t node = kg->EntityNode(e);
  GraphNeighbourhood out;
  out.generation = snap_->generation();
  out.center = Info(e);

  // Neighbours: RELATED_TO runs (a CSR row is sorted by target), then SYNONYM.
  struct Near {
    uint32_t node;
    std::vector<uint32_t> facts;
    float synonym = -1.0f;
  };
  std::unordered_map<uint32_t, size_t> slot;
  std::vector<Near> near;
  auto at = [&](uint32_t t) -> Near& {
    auto [pos, fresh] = slot.try_emplace(t, near.size());
    if (fresh) near.push_back({t, {}, -1.0f});
    return near[pos->second];
  };
  const Csr& rel = kg->Edges(EdgeKind::kRelatedTo);
  out.total_facts = rel.Degree(node);
  for (uint64_t i = rel.Begin(node); i < rel.End(node); ++i) {
    if (rel.targets[i] != node) at(rel.targets[i]).facts.push_back(rel.attrs[i]);
  }
  const Csr& syn = kg->Edges(EdgeKind::kSynonym);
  for (uint64_t i = syn.Begin(node); i < syn.End(node); ++i) {
    if (syn.targets[i] != node) at(syn.targets[i]).synonym = syn.weights[i];
  }
  out.total_neighbours = near.size();
  auto key = [&](const Near& n) {
    const uint32_t ne = kg->LocalIndex(n.node);
    return std::make_tuple(-static_cast<int64_t>(n.facts.size()),
                           -static_cast<int64_t>(kg->EntityPassageCount(ne)),
                           kg->EntityStoreId(ne));
  };
  const size_t keep = std::min(options.max_neighbours, near.size());
  std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(keep), near.end(),
                    [&](const Near& a, const Near& b) { return key(a) < key(b); });
  near.resize(keep);
  out.truncated = keep < out.total_neighbours;
  for (Near& n : near) {
    const uint32_t ne = kg->LocalIndex(n.node);
    out.neighbours.push_back(Info(ne));
    std::sort(n.facts.begin(), n.facts.end());
    n.facts.erase(std::unique(n.facts.begin(), n.facts.end()), n.facts.end());
    if (n.facts.size() > options.max_facts_per_neighbour) out.truncated = true;
    for (size_t k = 0; k < std::min(n.facts.size(), options.max_facts_per_neighbour); ++k) {
      const uint32_t f = n.facts[k];
      GraphEdgeInfo edge;
      edge.kind = "RELATED_TO";
      edge.from = kg->EntityStoreId(kg->FactSubject(f));
      edge.to = kg->EntityStoreId(kg->FactObject(f));
      edge.relation = kg->FactRelation(f);
      edge.weight = 1.0;
      edge.fact = f;
      edge.sources = static_cast<uint32_t>(kg->FactSources(f).size());
      out.edges.push_back(std::move(edge));
    }
    if (n.synonym >= 0.0f) {
      GraphEdgeInfo edge;
      edge.kind = "SYNONYM";
      edge.from = out.center.id;
      edge.to = kg->EntityStoreId(ne);
      edge.weight = n.synonym;
      out.edges.push_back(std::move(edge));
    }
  }
  return out;
}

Result<FactProvenance> SnapshotGraphView::FactPassages(int64_t fact, size_t limit) const {
  const KnowledgeGraph* kg = snap_->graph();
  if (kg == nullptr || fact < 0 || static_cast<uint64_t>(fact) >= kg->num_facts()) {
    return Status::NotFound("no fact " + std::to_string(fact) + " in graph generation " +
                            std::to_string(snap_->generation()));
  }
  const uint32_t f = static_cast<uint32_t>(fact);
  FactProvenance out;
  out.generation = snap_->generation();
  out.fact = fact;
  out.subject = Info(kg->FactSubject(f));
  out.object = Info(kg->FactObject(f));
  out.relation = kg->FactRelation(f);
  const auto sources = kg->FactSources(f);
  out.total_passages = sources.size();
  for (size_t i = 0; i < std::min(limit, sources.size()); ++i) {
    out.passages.push_back(snap_->Scored(sources[i], 0.0));
  }
  return out;
}

}  // namespace

std::shared_ptr<const GraphView> MakeGraphView(std::shared_ptr<const Snapshot> snapshot) {
  return std::make_shared<SnapshotGraphView>(std::move(snapshot));
}

Result<GraphFormat> ParseGraphFormat(std::string_view name) {
  if (name == "graphml") return GraphFormat::kGraphMl;
  if (name == "jsonl") return GraphFormat::kJsonl;
  return Status::InvalidArgument("graph format \"" + std::string(name.substr(0, 40)) +
                                 "\": expected graphml or jsonl");
}

}  // namespace flowrag
