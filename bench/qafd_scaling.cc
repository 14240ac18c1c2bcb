// qafd_scaling: how QAFD query time scales with the graph at a fixed number
// of seeds / questions (QAFD-RAG §3: the push method's cost is
// O(d̄·‖Δ‖₁·log 1/ε), set by the retrieved subgraph, not by |V| or |E|). Two
// modes:
//
// --full: the engine's whole QAFD query path. Per size a synthetic corpus is
// indexed through the public Engine API into a fresh SQLite store in a temp
// dir (Engine::IndexDocuments: chunking, BM25, the built-in hashed embedder,
// the heuristic extractor, entity vectors and synonyms, the snapshot and its
// persisted parts; engine defaults, so HNSW above 20,000 passages), the
// engine is closed, reopened from the store, and each question runs
// Engine::Query(method "qafd", top_k 5): the "qafd" retriever's Retrieve()
// with its default options (fact-channel seeding with the local facts of
// the hybrid prior's best passages and the named entities, query-aware
// weights, flow diffusion on the WalkGraph, passage ranking, output). The
// corpus has community structure: E = 2P entities with unique two-word
// capitalised names on a ring; document p (one passage, titled with the
// entity at its ring position 2p) has 6 sentences "A met B near C.", each
// naming 3 entities drawn from a window of 24 entities after that position
// (with probability 0.1 one uniformly random entity: long-range links). The
// heuristic extractor makes the title and the named entities mentions and
// every pair in a sentence (and the title with each) a RELATED_TO fact.
// Each question names two entities of one window ("How is A connected to
// B?"); the same number of questions at every size, after one warm-up query
// (its time, which includes building the snapshot's lazily derived query
// indexes, is printed as first_ms). Passages per size are chosen for a
// target edge count; "edges" is what the store holds (GraphStats::edges,
// all kinds, undirected). A size whose build would exceed --budget seconds
// (extrapolated from the previous size, linearly) is skipped with a note.
// Single-threaded queries (the engine's background parts writer has
// finished: the engine is reopened after its destructor flushed it).
//
// Default (solver only): the solver on a synthetic KnowledgeGraph (no store).
// E entities on a ring with community structure
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
//        qafd_scaling --full [max_edges=10000000] [queries=50] [--budget=900]
//                     [--hnsw-threshold=20000]  (EngineOptions::hnsw_threshold)
//                     [--keep=DIR]  (stores kept in DIR; a store already
//                     there is reused, its build_s printed as 0, so the
//                     queries can be timed again on an idle machine)
// Solver only prints one row per size: edges, nodes, build s, QAFD p50/p99
// ms, pushes, nodes touched, edges touched, one-hop p50 ms, max residual, SA
// p50/p99 ms, SA subgraph entities and arcs (medians).
// --full prints one row per size: edges (store), nodes (store), passages,
// build s (index + close), open s, first query ms, QAFD p50/p99 ms (median
// of 3 passes over the questions), and the
// retriever's diagnostics as medians: pushes (iterations), nodes touched,
// edge visits, seeds, and the ms of its steps (score_ms, seeding_ms,
// diffusion_ms; qafd_retriever.h).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flowrag/engine.h"
#include "graph/knowledge_graph.h"
#include "graph_algo/flow_diffusion.h"
#include "graph_algo/spreading_activation.h"
#include "retrieval/qafd_retriever.h"

namespace flowrag {
namespace {

double Sim(uint32_t a, uint32_t b) {  // pseudo cosine in [0,1]
  uint64_t h =
      (static_cast<uint64_t>(std::min(a, b)) << 32 | std::max(a, b)) * 0x9E3779B97F4A7C15ull;
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
      b = static_cast<uint32_t>((a + E + static_cast<size_t>(window(rng) + static_cast<int>(E))) %
                                E);
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

// --- Full engine path (--full) ---------------------------------------------

// A unique two-word capitalised name for entity i (i < 32^5): syllables from
// the base-32 digits of i, so names share n-grams as real names do.
std::string EntityName(size_t i) {
  static constexpr const char* kSyl[32] = {"ka",  "lo",  "mi",  "ren", "tar", "vel",  "dor", "sa",
                                           "bri", "nu",  "fen", "gal", "hol", "ist",  "jor", "kel",
                                           "lum", "mar", "nov", "or",  "pel", "quin", "ros", "sil",
                                           "tum", "ul",  "vor", "wen", "yar", "zed",  "bal", "cor"};
  size_t d[5];
  for (size_t& x : d) {
    x = i % 32;
    i /= 32;
  }
  std::string first = std::string(kSyl[d[0]]) + kSyl[(d[1] + 7 * d[0]) % 32];
  std::string last = std::string(kSyl[d[2]]) + kSyl[d[3]] + kSyl[d[4]] + "an";
  first[0] = static_cast<char>(first[0] - 'a' + 'A');
  last[0] = static_cast<char>(last[0] - 'a' + 'A');
  return first + " " + last;
}

constexpr size_t kWindow = 24;      // entities a passage draws from
constexpr size_t kSentences = 6;    // sentences per passage, 3 names each
constexpr double kLongRange = 0.1;  // chance a name is drawn uniformly

struct Corpus {
  size_t entities = 0;
  std::vector<DocumentInput> documents;
};

Corpus MakeCorpus(size_t passages, uint64_t seed) {
  static constexpr const char* kVerb[8] = {"met",       "visited", "advised", "followed",
                                           "succeeded", "hosted",  "trained", "wrote to"};
  static constexpr const char* kPrep[6] = {"near", "beside", "before", "after", "at", "with"};
  Corpus c;
  c.entities = 2 * passages;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> coin(0, 1);
  auto draw = [&](size_t base) {
    if (coin(rng) < kLongRange) return rng() % c.entities;
    return (base + rng() % kWindow) % c.entities;
  };
  c.documents.reserve(passages);
  for (size_t p = 0; p < passages; ++p) {
    const size_t base = 2 * p;
    DocumentInput d;
    d.id = "d" + std::to_string(p);
    d.title = EntityName(base);
    for (size_t s = 0; s < kSentences; ++s) {
      const size_t a = draw(base);
      size_t b = draw(base), e = draw(base);
      if (b == a) b = (a + 1) % c.entities;
      if (e == a || e == b) e = (std::max(a, b) + 1) % c.entities;
      d.text += EntityName(a) + " " + kVerb[rng() % 8] + " " + EntityName(b) + " " +
                kPrep[rng() % 6] + " " + EntityName(e) + ". ";
    }
    c.documents.push_back(std::move(d));
  }
  return c;
}

double Median(std::vector<double> v) { return v.empty() ? 0.0 : Percentile(std::move(v), 0.5); }

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

void Die(const char* what, const Status& s) {
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

// Graph edges per passage of MakeCorpus as the heuristic extractor stores
// them; calibrated on the first size and used to size the next ones.
// `queries` + 1 questions (the first is the warm-up), each naming two
// entities of one window: the same count per size.
std::vector<std::string> FullQuestions(const Corpus& corpus, size_t passages, int queries) {
  std::mt19937 rng(7);
  std::vector<std::string> questions;
  for (int q = 0; q <= queries; ++q) {
    const size_t base = 2 * (rng() % passages);
    const size_t a = (base + rng() % kWindow) % corpus.entities;
    size_t b = (base + rng() % kWindow) % corpus.entities;
    if (b == a) b = (a + 1) % corpus.entities;
    questions.push_back("How is " + EntityName(a) + " connected to " + EntityName(b) + "?");
  }
  return questions;
}

struct QueryTimes {
  double first_ms = 0.0;  // the warm-up: builds the snapshot's derived query indexes
  std::vector<double> p50, p99;  // per pass over the other queries
  std::vector<double> pushes, touched, visits, seeds;  // the other queries
  std::vector<double> score_ms, seeding_ms, diffusion_ms;  // the retriever's steps
};

constexpr int kPasses = 3;  // timed passes over the questions; medians reported

// Runs every question through Engine::Query("qafd"), the first once (the
// warm-up), the others kPasses times; false (with a message) when a query
// fails or another method ran. Diagnostics come from the first pass.
bool TimeQueries(Engine& engine, const std::vector<std::string>& questions, QueryTimes* out) {
  QueryOptions qo;
  qo.method = "qafd";
  qo.top_k = 5;
  std::vector<double> ms;
  for (size_t i = 0; i < 1 + kPasses * (questions.size() - 1); ++i) {
    const size_t q = i == 0 ? 0 : 1 + (i - 1) % (questions.size() - 1);
    const auto s = std::chrono::steady_clock::now();
    auto r = engine.Query(questions[q], qo);
    const double t =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
    if (!r.ok()) Die("query", r.status());
    if (r->method != "qafd") {
      std::fprintf(stderr, "query ran %s, not qafd\n", r->method.c_str());
      return false;
    }
    if (i == 0) {
      out->first_ms = t;
      continue;
    }
    ms.push_back(t);
    if (ms.size() == questions.size() - 1) {  // a pass is complete
      out->p50.push_back(Percentile(ms, 0.5));
      out->p99.push_back(Percentile(ms, 0.99));
      ms.clear();
    }
    if (i >= questions.size()) continue;  // diagnostics from the first pass only
    const RetrievalDiagnostics& d = r->diagnostics;
    out->pushes.push_back(static_cast<double>(d.iterations));
    out->touched.push_back(static_cast<double>(d.nodes_touched));
    out->visits.push_back(static_cast<double>(d.edges_touched));
    auto extra = [&](const char* key) {
      auto it = d.extra.find(key);
      return it == d.extra.end() ? 0.0 : it->second;
    };
    out->seeds.push_back(extra("seeds"));
    out->score_ms.push_back(extra("score_ms"));
    out->seeding_ms.push_back(extra("seeding_ms"));
    out->diffusion_ms.push_back(extra("diffusion_ms"));
  }
  return true;
}

constexpr double kInitialEdgesPerPassage = 60.0;

// Indexes `corpus` into a new store at `db` (the destructor writes the
// snapshot parts).
void BuildStore(const std::string& db, const Corpus& corpus, size_t hnsw_threshold) {
  EngineOptions eo;
  eo.hnsw_threshold = hnsw_threshold;
  auto engine = Engine::Open(db, eo);
  if (!engine.ok()) Die("open", engine.status());
  IndexOptions io;
  io.extractor = "heuristic";
  io.batch_size = 2048;
  io.extract_batch_size = 2048;
  io.embed_batch_size = 2048;
  auto report = (*engine)->IndexDocuments(corpus.documents, io);
  if (!report.ok()) Die("index", report.status());
}

int RunFull(size_t max_edges, int queries, double budget_s, size_t hnsw_threshold,
            const std::string& keep_dir) {
  std::printf("%10s %10s %9s %9s %8s %9s %10s %10s %8s %9s %9s %6s %8s %8s %8s\n", "edges",
              "nodes", "passages", "build_s", "open_s", "first_ms", "qafd_p50", "qafd_p99",
              "pushes", "nodes_t", "edges_t", "seeds", "score", "seeding", "diffuse");
  std::fflush(stdout);
  double edges_per_passage = kInitialEdgesPerPassage;
  double seconds_per_edge = 0.0;
  std::string dir = keep_dir;
  if (dir.empty()) {
    dir = (std::filesystem::temp_directory_path() / "qafd-scaling-XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr) {
      std::perror("mkdtemp");
      return 1;
    }
  } else {
    std::filesystem::create_directories(dir);
  }
  for (size_t target = 10000; target <= max_edges; target *= 10) {
    const std::string db = dir + "/s" + std::to_string(target) + ".db";
    const bool reuse = !keep_dir.empty() && std::filesystem::exists(db);
    if (!reuse && seconds_per_edge > 0 &&
        seconds_per_edge * static_cast<double>(target) > budget_s) {
      std::printf("# %zu edges skipped: build projected at %.0f s > budget %.0f s\n", target,
                  seconds_per_edge * static_cast<double>(target), budget_s);
      std::fflush(stdout);
      break;
    }
    const size_t passages =
        std::max<size_t>(16, static_cast<size_t>(static_cast<double>(target) / edges_per_passage));
    Corpus corpus = MakeCorpus(passages, 42);
    auto t0 = std::chrono::steady_clock::now();
    if (!reuse) BuildStore(db, corpus, hnsw_threshold);
    const double build_s = reuse ? 0.0 : Seconds(t0);
    t0 = std::chrono::steady_clock::now();
    EngineOptions eo;
    eo.read_only = true;
    eo.hnsw_threshold = hnsw_threshold;
    auto opened = Engine::Open(db, eo);
    if (!opened.ok()) Die("reopen", opened.status());
    const std::unique_ptr<Engine>& engine = *opened;
    const double open_s = Seconds(t0);
    auto stats = engine->Stats();
    if (!stats.ok()) Die("stats", stats.status());
    int64_t edges = 0, nodes = 0;
    for (const auto& [kind, n] : stats->graph.edges) edges += n;
    for (const auto& [kind, n] : stats->graph.nodes) {
      if (kind == "Entity" || kind == "Passage") nodes += n;  // the walk's nodes
    }
    edges_per_passage = static_cast<double>(edges) / static_cast<double>(passages);
    if (!reuse) seconds_per_edge = build_s / static_cast<double>(std::max<int64_t>(1, edges));

    const std::vector<std::string> questions = FullQuestions(corpus, passages, queries);
    QueryTimes times;
    if (!TimeQueries(*engine, questions, &times)) return 1;
    std::printf(
        "%10lld %10lld %9zu %9.1f %8.2f %9.1f %10.2f %10.2f %8.0f %9.0f %9.0f %6.0f %8.3f %8.3f "
        "%8.3f\n",
        static_cast<long long>(edges), static_cast<long long>(nodes), passages, build_s, open_s,
        times.first_ms, Median(times.p50), Median(times.p99), Median(times.pushes),
        Median(times.touched), Median(times.visits), Median(times.seeds), Median(times.score_ms),
        Median(times.seeding_ms), Median(times.diffusion_ms));
    std::fflush(stdout);
    if (!keep_dir.empty()) continue;
    std::error_code ec;
    for (const auto& f : std::filesystem::directory_iterator(dir, ec)) {
      std::filesystem::remove(f.path(), ec);
    }
  }
  std::error_code ec;
  if (keep_dir.empty()) std::filesystem::remove_all(dir, ec);
  return 0;
}
}  // namespace
}  // namespace flowrag

int main(int argc, char** argv) {
  using namespace flowrag;
  if (argc > 1 && std::string_view(argv[1]) == "--full") {
    std::vector<std::string_view> pos;
    double budget_s = 900.0;
    size_t hnsw_threshold = EngineOptions{}.hnsw_threshold;
    std::string keep_dir;
    for (int i = 2; i < argc; ++i) {
      std::string_view a = argv[i];
      if (a.starts_with("--budget=")) {
        budget_s = std::strtod(argv[i] + 9, nullptr);
      } else if (a.starts_with("--hnsw-threshold=")) {
        hnsw_threshold = std::strtoull(argv[i] + 17, nullptr, 10);
      } else if (a.starts_with("--keep=")) {
        keep_dir = std::string(a.substr(7));
      } else {
        pos.push_back(a);
      }
    }
    const size_t max_edges = pos.size() > 0 ? std::strtoull(pos[0].data(), nullptr, 10) : 10000000;
    const int queries = pos.size() > 1 ? std::atoi(pos[1].data()) : 50;
    return RunFull(max_edges, queries, budget_s, hnsw_threshold, keep_dir);
  }
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
        src.push_back(
            {g->EntityNode((center + i * 3) % static_cast<uint32_t>(g->num_entities())), 1.0});
      }
      auto s = std::chrono::steady_clock::now();
      FlowDiffusionResult r = SolveFlowDiffusion(bg, src, FlowDiffusionOptions{}).value();
      qt.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
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
      ot.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
      // SA: the first 10 seeds (SA-RAG k = 10, n = 3).
      std::vector<uint32_t> sa_seeds;
      for (size_t i = 0; i < 10; ++i) sa_seeds.push_back(g->LocalIndex(src[i].node));
      s = std::chrono::steady_clock::now();
      const SaCost cost = RunSa(*g, sa_seeds);
      st.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
      sa_ents.push_back(static_cast<double>(cost.entities));
      sa_arcs.push_back(static_cast<double>(cost.arcs));
    }
    std::printf(
        "%10zu %10zu %8.2f %10.3f %10.3f %8zu %9zu %9zu %11.3f %10.4f %9.3f %9.3f %9.0f %9.0f\n",
        edges, g->num_nodes(), build, Percentile(qt, 0.5), Percentile(qt, 0.99),
        pushes / static_cast<size_t>(queries), nodes / static_cast<size_t>(queries),
        etouched / static_cast<size_t>(queries), Percentile(ot, 0.5), residual, Percentile(st, 0.5),
        Percentile(st, 0.99), Percentile(sa_ents, 0.5), Percentile(sa_arcs, 0.5));
    std::fflush(stdout);
  }
  return 0;
}
