// ppr_export: writes the PPR graph of a store (the snapshot's WalkGraph,
// graph/walk_graph.h: what the ppr retriever walks) and the reset
// vectors of benchmark questions as plain text, so an independent PPR
// implementation (python-igraph, bench/ppr_vs_igraph.py) can solve the same
// problems; with --solve it also solves them with flowrag's push and power
// iteration solvers and writes their scores and timings.
//
// Usage: ppr_export --db STORE --questions questions.jsonl --out DIR
//                   [--limit 20] [--runs 5] [--epsilon (ppr.epsilon)] [--solve]
//                   [--index CORPUS_DIR]
// --index first indexes CORPUS_DIR into the store (offline embedder and
// extractor) with one extraction batch, which also sidesteps the relinking
// pass writing the graph while it iterates passages.
// Writes:
//   DIR/graph.tsv        "num_nodes num_passages" then one "u v weight" per
//                        undirected edge (u < v): the walk graph's weights
//   DIR/reset_<i>.tsv    "node weight" per reset entry (the ppr retriever's
//                        reset vector for question i, normalised)
//   DIR/flowrag_<i>.tsv  (--solve) "passage push_score power_score"
//   DIR/timings.json     (--solve) per question: median push / power ms
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "engine/engine_impl.h"
#include "flowrag/engine.h"
#include "graph_algo/ppr.h"
#include "nlohmann/json.hpp"
#include "retrieval/ppr_retriever.h"
#include "retrieval/seeding.h"

namespace {

using namespace flowrag;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

int Fail(const std::string& m) {
  std::fprintf(stderr, "ppr_export: %s\n", m.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string db, questions, out, index_dir;
  size_t limit = 20, runs = 5;
  double epsilon = PprOptions().epsilon;  // the retriever's
  bool solve = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--db") db = next();
    else if (a == "--questions") questions = next();
    else if (a == "--out") out = next();
    else if (a == "--limit") limit = std::stoul(next());
    else if (a == "--runs") runs = std::max<size_t>(1, std::stoul(next()));
    else if (a == "--epsilon") epsilon = std::stod(next());
    else if (a == "--solve") solve = true;
    else if (a == "--index") index_dir = next();
    else return Fail("unknown argument " + a);
  }
  if (db.empty() || questions.empty() || out.empty()) {
    return Fail("usage: ppr_export --db STORE --questions questions.jsonl --out DIR "
                "[--limit N] [--runs N] [--epsilon E] [--solve]");
  }
  auto engine = Engine::Open(db);
  if (!engine.ok()) return Fail(engine.status().ToString());
  if (!index_dir.empty()) {
    IndexOptions io;
    io.extract_batch_size = size_t{1} << 30;
    auto r = (*engine)->Index({index_dir}, io);
    if (!r.ok()) return Fail(r.status().ToString());
  }
  auto snap = dynamic_cast<EngineImpl*>(engine->get())->snapshot();
  if (snap->graph() == nullptr) return Fail(db + ": the store has no knowledge graph");
  const KnowledgeGraph& g = *snap->graph();
  const PprOptions defaults;
  const WalkGraph& walk = g.walk();
  const WalkTransitions graph(walk);

  // Graph: the walk weights, one line per undirected edge.
  {
    std::ofstream f(out + "/graph.tsv");
    if (!f) return Fail(out + "/graph.tsv: cannot open for writing");
    f.precision(9);
    f << walk.num_nodes() << " " << g.num_passages() << "\n";
    for (uint32_t u = 0; u < walk.num_nodes(); ++u) {
      for (uint64_t i = walk.Begin(u); i < walk.End(u); ++i) {
        if (u < walk.Target(i)) f << u << " " << walk.Target(i) << " " << walk.Weight(i) << "\n";
      }
    }
  }

  std::ifstream qin(questions);
  if (!qin) return Fail(questions + ": cannot open");
  std::string line;
  size_t n = 0;
  nlohmann::json timings = nlohmann::json::array();
  PushSolver push;
  while (n < limit && std::getline(qin, line)) {
    if (line.empty()) continue;
    const std::string q = nlohmann::json::parse(line)["question"];
    auto qs = ScoreQuery(*snap, q, /*lexical=*/true);
    if (!qs.ok()) return Fail(qs.status().ToString());
    RetrievalOutput scratch;
    auto pr = BuildPprReset(*snap, q, *qs, defaults, nullptr, &scratch);  // the retriever's reset
    if (!pr.ok()) return Fail(pr.status().ToString());
    if (pr->seeds.seeds.empty()) continue;  // the retriever falls back to dense here
    const std::vector<NodeWeight>& reset = pr->entries;
    auto norm = NormalizeReset(reset, graph.num_nodes());
    if (!norm.ok()) return Fail(norm.status().ToString());
    {
      std::ofstream f(out + "/reset_" + std::to_string(n) + ".tsv");
      f.precision(17);
      for (const NodeWeight& w : *norm) f << w.node << " " << w.weight << "\n";
    }
    if (solve) {
      std::vector<double> push_ms, power_ms;
      PushOptions po;
      po.damping = defaults.damping;
      po.epsilon = epsilon;
      PowerOptions wo;
      wo.damping = defaults.damping;
      wo.tolerance = 1e-10;
      PprStats ps, ws;
      std::vector<double> power;
      for (size_t r = 0; r < runs; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        Status st = push.Solve(walk, *norm, po, &ps);
        auto t1 = std::chrono::steady_clock::now();
        if (!st.ok()) return Fail(st.ToString());
        auto x = PowerIteration(graph, *norm, wo, &ws);
        auto t2 = std::chrono::steady_clock::now();
        if (!x.ok()) return Fail(x.status().ToString());
        power = std::move(x).value();
        push_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        power_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
      }
      std::ofstream f(out + "/flowrag_" + std::to_string(n) + ".tsv");
      f.precision(17);
      for (uint32_t p = 0; p < g.num_passages(); ++p) {
        f << p << " " << push.Score(p) << " " << power[p] << "\n";
      }
      timings.push_back({{"question", n},
                         {"push_ms", Median(push_ms)},
                         {"power_ms", Median(power_ms)},
                         {"pushes", ps.iterations},
                         {"push_edges", ps.edges_touched},
                         {"push_residual", ps.residual},
                         {"power_iterations", ws.iterations},
                         {"power_edges", ws.edges_touched}});
    }
    ++n;
  }
  if (solve) std::ofstream(out + "/timings.json") << timings.dump(1) << "\n";
  std::printf("%zu questions, %zu nodes written to %s\n", n, graph.num_nodes(), out.c_str());
  return 0;
}
