#include "graph/walk_graph.h"

#include <algorithm>
#include <string>

#include "graph/knowledge_graph.h"

namespace flowrag {
namespace {

struct Item {
  uint32_t target;
  float weight;
  uint8_t kind;
};

// Factor on every edge of entity e (literal and hub rules).
std::vector<float> EntityFactors(const KnowledgeGraph& g, const WalkWeights& w) {
  std::vector<float> f(g.num_entities(), 1.0f);
  for (uint32_t e = 0; e < g.num_entities(); ++e) {
    const std::string& type = g.EntityType(e);
    if (type == "DATE" || type == "NUMBER") f[e] *= w.literal;
    const uint32_t df = g.EntityPassageCount(e);
    if (w.hub_passages > 0 && df > w.hub_passages) {
      f[e] *= static_cast<float>(w.hub_passages) / static_cast<float>(df);
    }
  }
  return f;
}

// u's entries of one edge kind, one per distinct target (parallel entries
// add up for facts; mentions count once per pair).
void CollectRow(const KnowledgeGraph& g, uint32_t u, const WalkWeights& w,
                const std::vector<float>& factor, std::vector<Item>* row) {
  const size_t P = g.num_passages();
  auto entity_factor = [&](uint32_t node) { return node >= P ? factor[node - P] : 1.0f; };
  const float fu = entity_factor(u);
  const Csr& m = g.Edges(EdgeKind::kMentions);
  for (uint64_t i = m.Begin(u); i < m.End(u); ++i) {
    const uint32_t v = m.targets[i];
    const float base = m.attrs[i] == 1 ? w.title : w.mention;
    row->push_back({v, base * fu * entity_factor(v), static_cast<uint8_t>(EdgeKind::kMentions)});
  }
  if (u < P) return;
  const Csr& rel = g.Edges(EdgeKind::kRelatedTo);
  for (uint64_t i = rel.Begin(u); i < rel.End(u); ++i) {
    const uint32_t v = rel.targets[i];
    row->push_back({v, w.fact * fu * entity_factor(v), static_cast<uint8_t>(EdgeKind::kRelatedTo)});
  }
  const Csr& syn = g.Edges(EdgeKind::kSynonym);
  for (uint64_t i = syn.Begin(u); i < syn.End(u); ++i) {
    const float s = std::max(0.0f, syn.weights[i]);
    if (s == 0.0f) continue;
    row->push_back({syn.targets[i], w.synonym * s * fu * entity_factor(syn.targets[i]),
                    static_cast<uint8_t>(EdgeKind::kSynonym)});
  }
}

}  // namespace

WalkGraph WalkGraph::Build(const KnowledgeGraph& g, const WalkWeights& w) {
  WalkGraph out;
  out.config_ = w;
  const size_t n = g.num_passages() + g.num_entities();
  const std::vector<float> factor = EntityFactors(g, w);
  out.offsets_.reserve(n + 1);
  out.offsets_.push_back(0);
  out.row_sums_.assign(n, 0.0);
  std::vector<Item> row;
  for (uint32_t u = 0; u < n; ++u) {
    row.clear();
    CollectRow(g, u, w, factor, &row);
    // Merge by target: weights add; the kind is the lowest EdgeKind present
    // (a fact outranks a synonym, a mention is alone in its pair).
    std::sort(row.begin(), row.end(), [](const Item& a, const Item& b) {
      return a.target != b.target ? a.target < b.target : a.kind < b.kind;
    });
    double sum = 0.0;
    const size_t row_begin = out.targets_.size();
    for (const Item& it : row) {
      if (!(it.weight > 0)) continue;
      if (out.targets_.size() > row_begin && out.targets_.back() == it.target) {
        out.weights_.back() += it.weight;
      } else {
        out.targets_.push_back(it.target);
        out.weights_.push_back(it.weight);
        out.kinds_.push_back(it.kind);
      }
      sum += it.weight;
    }
    out.row_sums_[u] = sum;
    out.offsets_.push_back(out.targets_.size());
  }
  return out;
}

size_t WalkGraph::MemoryBytes() const {
  return offsets_.size() * 8 + targets_.size() * 9 + kinds_.size() + row_sums_.size() * 8;
}

}  // namespace flowrag
