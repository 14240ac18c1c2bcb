// qafd_scaling: how QAFD flow diffusion, SA-RAG spreading activation and the
// one-hop baseline scale with the graph at a fixed seed count (QAFD-RAG §3:
// the push method's cost is O(d̄·‖Δ‖₁·log 1/ε), set by the retrieved
// subgraph, not by |V| or |E|; SA-RAG §5.4–5.5: an n-hop subgraph around k
// seeds, then Algorithm 1 on it).
//
// Synthetic graph per size: E entities on a ring with community structure
// (each entity links to ~k/2 random entities within a window of 64 and, with
// probability 0.1, one uniformly random entity), P = E/8 passages, each
// mentioning 5 entities of one window. Built with KnowledgeGraph::Build from
// an Input filled here (no store). The diffusion runs on RELATED_TO +
// MENTIONS with hybrid query-aware weights from per-node pseudo-similarities
// (a hash, so each weight costs a computation as in the engine), 40 seeds in
// one window, α = 50, T = 1, ε = 0.05 (the paper's defaults). SA: the first
// k = 10 of those seeds, the n = 3 hop RELATED_TO subgraph (capped at 50,000
// entities as in the retriever), link weights w' = (w − 0.4)/0.6 clipped at 0
// from the same pseudo-similarities, Algorithm 1, activated entities above
// τa = 0.5 and the passages mentioning them (the retriever's steps 2–4
// without the embedding lookups).
//
// Usage: qafd_scaling [max_edges=10000000] [queries=20]
// Prints one row per size: edges, nodes, build s, QAFD p50/p99 ms, pushes,
// nodes touched, edges touched, one-hop p50 ms, max residual, SA p50/p99 ms,
// SA subgraph entities and arcs (medians).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <unordered_map>

#include "graph/knowledge_graph.h"
#include "retrieval/flow_diffusion.h"
#include "retrieval/qafd_retriever.h"
#include "retrieval/spreading_activation.h"

namespace flowrag {
namespace {

double Sim(uint32_t a, uint32_t b) {  // pseudo cosine in [0,1]
  uint64_t h = (static_cast<uint64_t>(std::min(a, b)) << 32 | std::max(a, b)) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  return static_cast<double>(h % 1000) / 1000.0;
}

class BenchGraph final : public DiffusionGraph {
 public:
  explicit BenchGraph(const KnowledgeGraph& g) : g_(g) {}
  size_t num_nodes() const override { return g_.num_nodes(); }
  size_t Degree(uint32_t u) const override {
    return g_.Edges(EdgeKind::kRelatedTo).Degree(u) + g_.Edges(EdgeKind::kMentions).Degree(u);
  }
  void Neighbors(uint32_t u, std::vector<uint32_t>* out) const override {
    for (EdgeKind k : {EdgeKind::kRelatedTo, EdgeKind::kMentions}) {
      const Csr& c = g_.Edges(k);
      for (uint64_t i = c.Begin(u); i < c.End(u); ++i) out->push_back(c.targets[i]);
    }
  }
  void WeightedNeighbors(uint32_t u, std::vector<uint32_t>* nodes,
                         std::vector<double>* weights) const override {
    const double suq = Sim(u, 0xFFFFFFFFu);
    for (EdgeKind k : {EdgeKind::kRelatedTo, EdgeKind::kMentions}) {
      const Csr& c = g_.Edges(k);
      for (uint64_t i = c.Begin(u); i < c.End(u); ++i) {
        const uint32_t v = c.targets[i];
        nodes->push_back(v);
        weights->push_back(QueryAwareWeight(EdgeWeighting::kHybrid, 0.5 + 0.5 * Sim(u, v), suq,
                                            Sim(v, 0xFFFFFFFFu), 1.0, 0.25) +
                           1e-10);
      }
    }
  }

 private:
  const KnowledgeGraph& g_;
};

std::shared_ptr<const KnowledgeGraph> MakeGraph(size_t edges, uint64_t seed) {
  const size_t kDeg = 8;  // average RELATED_TO degree
  const size_t E = std::max<size_t>(256, 2 * edges / kDeg);
  const size_t P = E / 8;
  std::mt19937_64 rng(seed);
  KnowledgeGraph::Input in;
  in.num_passages = P;
  in.entity_names.resize(E);
  for (size_t e = 0; e < E; ++e) in.entity_names[e] = "e" + std::to_string(e);
  in.entity_types.assign(E, "X");
  in.entity_ids.resize(E);
  for (size_t e = 0; e < E; ++e) in.entity_ids[e] = static_cast<int64_t>(e);
  in.relation_texts = {"related"};
  in.fact_texts = {"related"};
  in.fact_subject.reserve(edges);
  in.fact_object.reserve(edges);
  std::uniform_int_distribution<int> window(-32, 32);
  std::uniform_real_distribution<double> coin(0, 1);
  for (size_t f = 0; f < edges; ++f) {
    const uint32_t a = static_cast<uint32_t>(rng() % E);
    uint32_t b;
    if (coin(rng) < 0.1) {
      b = static_cast<uint32_t>(rng() % E);
    } else {
      b = static_cast<uint32_t>((a + E + static_cast<size_t>(window(rng) + static_cast<int>(E))) % E);
    }
    if (a == b) b = static_cast<uint32_t>((a + 1) % E);
    in.fact_subject.push_back(a);
    in.fact_object.push_back(b);
  }
  in.fact_relation.assign(edges, 0);
  in.fact_text.assign(edges, 0);
  in.fact_sources.resize(edges);
  for (uint32_t p = 0; p < P; ++p) {
    const size_t base = static_cast<size_t>(p) * 8;
    for (int m = 0; m < 5; ++m) {
      in.mentions.push_back({p, static_cast<uint32_t>((base + rng() % 32) % E), 1.0f, false});
    }
  }
  auto g = KnowledgeGraph::Build(std::move(in));
  if (!g.ok()) {
    std::fprintf(stderr, "build failed: %s\n", g.status().ToString().c_str());
    std::exit(1);
  }
  return *g;
}

struct SaCost {
  size_t entities = 0, arcs = 0, passages = 0;
};

// The SA retriever's steps 2–4 on the synthetic graph (see the file comment).
SaCost RunSa(const KnowledgeGraph& g, const std::vector<uint32_t>& seed_entities) {
  constexpr size_t kHops = 3, kMaxEntities = 50000;
  const Csr& rel = g.Edges(EdgeKind::kRelatedTo);
  std::unordered_map<uint32_t, uint32_t> local;  // entity → local id
  std::vector<uint32_t> nodes;
  for (uint32_t e : seed_entities) {
    if (local.emplace(e, static_cast<uint32_t>(nodes.size())).second) nodes.push_back(e);
  }
  size_t begin = 0;
  for (size_t hop = 0; hop < kHops && nodes.size() < kMaxEntities; ++hop) {
    const size_t end = nodes.size();
    for (size_t i = begin; i < end && nodes.size() < kMaxEntities; ++i) {
      const uint32_t u = g.EntityNode(nodes[i]);
      for (uint64_t j = rel.Begin(u); j < rel.End(u) && nodes.size() < kMaxEntities; ++j) {
        const uint32_t e = g.LocalIndex(rel.targets[j]);
        if (local.emplace(e, static_cast<uint32_t>(nodes.size())).second) nodes.push_back(e);
      }
    }
    begin = end;
  }
  std::vector<SaGraph::Arc> arcs;
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const uint32_t u = g.EntityNode(nodes[i]);
    for (uint64_t j = rel.Begin(u); j < rel.End(u); ++j) {
      auto it = local.find(g.LocalIndex(rel.targets[j]));
      if (it == local.end()) continue;
      const float w = RescaleLinkWeight(static_cast<float>(Sim(u, rel.targets[j])), 0.4f);
      if (w > 0) arcs.push_back({i, it->second, w});
    }
  }
  const SaGraph sg = SaGraph::FromArcs(nodes.size(), arcs);
  std::vector<uint32_t> seeds(std::min(seed_entities.size(), nodes.size()));
  for (uint32_t i = 0; i < seeds.size(); ++i) seeds[i] = i;
  const SaRun run = SpreadActivation(sg, seeds);
  const Csr& men = g.Edges(EdgeKind::kMentions);
  std::unordered_map<uint32_t, float> passages;
  for (uint32_t v : ActivatedNodes(run, 0.5f)) {
    const uint32_t node = g.EntityNode(nodes[v]);
    for (uint64_t j = men.Begin(node); j < men.End(node); ++j) {
      float& a = passages[men.targets[j]];
      a = std::max(a, run.activation[v]);
    }
  }
  return {nodes.size(), arcs.size(), passages.size()};
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

}  // namespace
}  // namespace flowrag

int main(int argc, char** argv) {
  using namespace flowrag;
  const size_t max_edges = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10000000;
  const int queries = argc > 2 ? std::atoi(argv[2]) : 20;
  std::printf("%10s %10s %8s %10s %10s %8s %9s %9s %11s %10s %9s %9s %9s %9s\n", "edges", "nodes",
              "build_s", "qafd_p50", "qafd_p99", "pushes", "nodes_t", "edges_t", "onehop_p50",
              "residual", "sa_p50", "sa_p99", "sa_ents", "sa_arcs");
  for (size_t edges = 10000; edges <= max_edges; edges *= 10) {
    auto t0 = std::chrono::steady_clock::now();
    auto g = MakeGraph(edges, 42);
    const double build =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    BenchGraph bg(*g);
    std::vector<double> qt, ot, st, sa_ents, sa_arcs;
    size_t pushes = 0, nodes = 0, etouched = 0;
    double residual = 0;
    std::mt19937 rng(7);
    for (int q = 0; q < queries; ++q) {
      // 40 seeds in one window of the ring (a topic).
      const uint32_t center = static_cast<uint32_t>(rng() % g->num_entities());
      std::vector<FlowSource> src;
      for (uint32_t i = 0; i < 40; ++i) {
        src.push_back({g->EntityNode((center + i * 3) % static_cast<uint32_t>(g->num_entities())), 1.0});
      }
      auto s = std::chrono::steady_clock::now();
      FlowDiffusionResult r = SolveFlowDiffusion(bg, src, FlowDiffusionOptions{});
      qt.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
      pushes += r.pushes;
      nodes += r.nodes.size();
      etouched += r.edges_touched;
      residual = std::max(residual, r.residual);
      // One-hop: seeds' RELATED_TO neighbours and the passages mentioning them.
      s = std::chrono::steady_clock::now();
      std::unordered_map<uint32_t, double> ps;
      const Csr& rel = g->Edges(EdgeKind::kRelatedTo);
      const Csr& men = g->Edges(EdgeKind::kMentions);
      for (const FlowSource& f : src) {
        for (uint64_t i = men.Begin(f.node); i < men.End(f.node); ++i) ps[men.targets[i]] += 1.0;
        for (uint64_t i = rel.Begin(f.node); i < rel.End(f.node); ++i) {
          const uint32_t n = rel.targets[i];
          for (uint64_t j = men.Begin(n); j < men.End(n); ++j) ps[men.targets[j]] += 0.5;
        }
      }
      std::vector<std::pair<double, uint32_t>> top;
      for (auto [p, sc] : ps) top.push_back({sc, p});
      std::partial_sort(top.begin(), top.begin() + std::min<size_t>(5, top.size()), top.end(),
                        std::greater<>());
      ot.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
      // SA: the first 10 seeds (SA-RAG k = 10, n = 3).
      std::vector<uint32_t> sa_seeds;
      for (size_t i = 0; i < 10; ++i) sa_seeds.push_back(g->LocalIndex(src[i].node));
      s = std::chrono::steady_clock::now();
      const SaCost cost = RunSa(*g, sa_seeds);
      st.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
      sa_ents.push_back(static_cast<double>(cost.entities));
      sa_arcs.push_back(static_cast<double>(cost.arcs));
    }
    std::printf("%10zu %10zu %8.2f %10.3f %10.3f %8zu %9zu %9zu %11.3f %10.4f %9.3f %9.3f %9.0f %9.0f\n",
                edges, g->num_nodes(), build, Percentile(qt, 0.5), Percentile(qt, 0.99),
                pushes / static_cast<size_t>(queries), nodes / static_cast<size_t>(queries),
                etouched / static_cast<size_t>(queries), Percentile(ot, 0.5), residual,
                Percentile(st, 0.5), Percentile(st, 0.99), Percentile(sa_ents, 0.5),
                Percentile(sa_arcs, 0.5));
    std::fflush(stdout);
  }
  return 0;
}
