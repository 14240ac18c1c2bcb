// SA-RAG spreading activation (graph_algo/spreading_activation.h):
// Algorithm 1 on hand-worked graphs, the link weight rescaling, thresholds,
// the on-demand form against Algorithm 1 on random graphs, its bounds and
// parameter validation. The "sa" retriever is checked in sa_retriever_test.cc.
#include "graph_algo/spreading_activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

// SpreadActivationLocal's run, which every call here expects to succeed.
LocalSaRun RunLocal(SaArcSource& source, std::span<const uint32_t> seeds, const SaLimits& limits,
                    bool track_carried = false) {
  Result<LocalSaRun> run = SpreadActivationLocal(source, seeds, limits, track_carried);
  EXPECT_TRUE(run.ok()) << run.status().ToString();
  return run.ok() ? std::move(run).value() : LocalSaRun{};
}

// Undirected links become two arcs, (a→b) then (b→a), in link order.
SaGraph Undirected(size_t n, std::vector<std::tuple<uint32_t, uint32_t, float>> links) {
  std::vector<SaGraph::Arc> arcs;
  for (auto [a, b, w] : links) {
    arcs.push_back({a, b, w});
    arcs.push_back({b, a, w});
  }
  return SaGraph::FromArcs(n, arcs);
}

// A=0, B=1, C=2, D=3, E=4 (isolated). Links A–B .5, B–C .6, A–D .9, D–C .5.
// Arcs per source, in order: A:[B .5, D .9]  B:[A .5, C .6]  C:[B .6, D .5]
// D:[A .9, C .5].  Seed A.
//   a = (1, 0, 0, 0, 0), Q = [A]
//   pop A: a_B = min(1, 0 + .5·1) = .5 (push B); a_D = .9 (push D)      Q=[B,D]
//   pop B: a_A = min(1, 1 + .5·.5) = 1 (visited); a_C = .6·.5 = .3 (push C)  Q=[D,C]
//   pop D: a_A = 1; a_C = .3 + .5·.9 = .75 (push C again)               Q=[C,C]
//   pop C: a_B = min(1, .5 + .6·.75) = .95; a_D = min(1, .9 + .5·.75) = 1
//   pop C: already visited → skip
// Result: A=1, B=.95, C=.75, D=1, E=0; 4 expansions, 8 arc updates.
TEST(SpreadActivationTest, HandWorkedSingleSeed) {
  SaGraph g = Undirected(5, {{0, 1, 0.5f}, {1, 2, 0.6f}, {0, 3, 0.9f}, {3, 2, 0.5f}});
  const uint32_t seeds[] = {0};
  SaRun run = SpreadActivation(g, seeds, /*track_carried=*/true);
  ASSERT_EQ(run.activation.size(), 5u);
  EXPECT_FLOAT_EQ(run.activation[0], 1.0f);
  EXPECT_FLOAT_EQ(run.activation[1], 0.95f);
  EXPECT_FLOAT_EQ(run.activation[2], 0.75f);
  EXPECT_FLOAT_EQ(run.activation[3], 1.0f);
  EXPECT_FLOAT_EQ(run.activation[4], 0.0f);
  EXPECT_EQ(run.steps, 4u);
  EXPECT_EQ(run.arc_updates, 8u);
  // First-activating arcs: B and D from A, C from B (A's arcs are 0,1; B's 2,3).
  EXPECT_EQ(run.first_arc[0], SaRun::kNoArc);
  EXPECT_EQ(g.targets[run.first_arc[1]], 1u);
  EXPECT_LT(run.first_arc[1], g.offsets[1]);      // an arc of A
  EXPECT_EQ(run.first_arc[2], g.offsets[1] + 1);  // B → C
  EXPECT_EQ(run.first_arc[4], SaRun::kNoArc);
  // Carried activation: A→B .5 then C→B .45; D→C .45; C→D capped at .1.
  EXPECT_FLOAT_EQ(run.carried[0], 0.5f);                   // A→B
  EXPECT_FLOAT_EQ(run.carried[g.offsets[2]], 0.45f);       // C→B
  EXPECT_NEAR(run.carried[g.offsets[2] + 1], 0.1f, 1e-6);  // C→D (cap)
  EXPECT_EQ(ActivatedNodes(run, 0.5f), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(ActivatedNodes(run, 0.8f), (std::vector<uint32_t>{0, 1, 3}));
}

// Path 0 –.2– 1 –.2– 2, seeds [0, 2]; visited is reset per seed, so the
// second pass re-propagates from the first seed's side.
//   seed 0: a0 = 1; pop 0: a1 = .2; pop 1: a0 = 1, a2 = .04; pop 2: a1 = .2 + .2·.04 = .208
//   seed 2: a2 = 1; pop 2: a1 = .208 + .2 = .408; pop 1: a0 = 1, a2 = 1 (cap), push 0;
//           pop 0: a1 = .408 + .2·1 = .608
// Result: (1, .608, 1).
TEST(SpreadActivationTest, HandWorkedTwoSeedsResetVisited) {
  SaGraph g = Undirected(3, {{0, 1, 0.2f}, {1, 2, 0.2f}});
  const uint32_t seeds[] = {0, 2};
  SaRun run = SpreadActivation(g, seeds);
  EXPECT_FLOAT_EQ(run.activation[0], 1.0f);
  EXPECT_NEAR(run.activation[1], 0.608f, 1e-6);
  EXPECT_FLOAT_EQ(run.activation[2], 1.0f);
  EXPECT_EQ(run.steps, 6u);
  EXPECT_TRUE(run.carried.empty());
  // Duplicate and out-of-range seeds are ignored.
  const uint32_t dup[] = {0, 2, 0, 7};
  SaRun again = SpreadActivation(g, dup);
  EXPECT_EQ(again.activation, run.activation);
  EXPECT_EQ(again.steps, run.steps);
}

TEST(SpreadActivationTest, ThresholdIsStrict) {
  SaGraph g = Undirected(3, {{0, 1, 0.5f}, {1, 2, 0.0f}});
  const uint32_t seeds[] = {0};
  SaRun run = SpreadActivation(g, seeds);
  EXPECT_FLOAT_EQ(run.activation[1], 0.5f);  // exactly τa: not activated
  EXPECT_FLOAT_EQ(run.activation[2], 0.0f);  // reached through a 0-weight arc: nothing carried
  EXPECT_EQ(run.steps, 3u);                  // ... but traversed, as in Algorithm 1
  EXPECT_EQ(ActivatedNodes(run, 0.5f), std::vector<uint32_t>{0});
  EXPECT_EQ(ActivatedNodes(run, 0.49f), (std::vector<uint32_t>{0, 1}));
}

TEST(SpreadActivationTest, EmptyInputs) {
  SaGraph empty;
  EXPECT_TRUE(SpreadActivation(empty, {}).activation.empty());
  SaGraph g = Undirected(2, {{0, 1, 1.0f}});
  SaRun run = SpreadActivation(g, {});
  EXPECT_EQ(run.activation, (std::vector<float>{0.0f, 0.0f}));
}

// w' = (w − c)/(1 − c), clipped at 0 (SA-RAG §5.5, c = 0.4).
TEST(SpreadActivationTest, Rescaling) {
  EXPECT_FLOAT_EQ(RescaleLinkWeight(1.0f, 0.4f), 1.0f);
  EXPECT_NEAR(RescaleLinkWeight(0.7f, 0.4f), 0.5f, 1e-6);
  EXPECT_NEAR(RescaleLinkWeight(0.55f, 0.4f), 0.25f, 1e-6);
  EXPECT_FLOAT_EQ(RescaleLinkWeight(0.4f, 0.4f), 0.0f);
  EXPECT_FLOAT_EQ(RescaleLinkWeight(0.1f, 0.4f), 0.0f);  // clipped, no inhibition
  EXPECT_FLOAT_EQ(RescaleLinkWeight(-0.3f, 0.4f), 0.0f);
  EXPECT_FLOAT_EQ(RescaleLinkWeight(0.3f, 0.0f), 0.3f);  // c = 0: identity
  EXPECT_FLOAT_EQ(RescaleLinkWeight(std::nanf(""), 0.4f), 0.0f);
}

// ---- Algorithm 1 read on demand (SpreadActivationLocal)

// Unbounded, the on-demand form is Algorithm 1: the same activations, parent
// arcs, carried activation and counts, on random graphs with 0-weight and
// parallel arcs and repeated seeds.
TEST(SpreadActivationLocalTest, UnboundedEqualsAlgorithm1) {
  std::mt19937 rng(20240611);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 1 + rng() % 25;
    std::vector<SaGraph::Arc> arcs;
    const size_t m = rng() % (3 * n + 1);
    for (size_t i = 0; i < m; ++i) {
      const uint32_t a = rng() % n, b = rng() % n;
      const float w = (rng() % 4 == 0) ? 0.0f : static_cast<float>(rng() % 1000) / 1000.0f;
      arcs.push_back({a, b, w});
    }
    const SaGraph g = SaGraph::FromArcs(n, arcs);
    std::vector<uint32_t> seeds;
    for (size_t i = 0, k = 1 + rng() % 4; i < k; ++i) seeds.push_back(rng() % n);
    const SaRun want = SpreadActivation(g, seeds, /*track_carried=*/true);
    SaGraphSource source(g);
    const LocalSaRun got = RunLocal(source, seeds, SaLimits{}, true);
    ASSERT_EQ(got.activation, want.activation) << "trial " << trial;
    EXPECT_EQ(got.steps, want.steps);
    EXPECT_EQ(got.expansions, want.steps);
    EXPECT_EQ(got.arc_updates, want.arc_updates);
    std::vector<float> carried(g.num_arcs(), 0.0f);
    for (size_t i = 0; i < got.arcs.size(); ++i) carried[got.arcs[i].tag] += got.carried[i];
    EXPECT_EQ(carried, want.carried);
    for (uint32_t v = 0; v < n; ++v) {
      if (want.first_arc[v] == SaRun::kNoArc) {
        EXPECT_EQ(got.first_arc[v], SaRun::kNoArc);
      } else {
        ASSERT_NE(got.first_arc[v], SaRun::kNoArc);
        EXPECT_EQ(got.arcs[got.first_arc[v]].tag, want.first_arc[v]);
        EXPECT_EQ(got.arc_from[got.first_arc[v]], [&] {
          uint32_t u = 0;
          while (g.offsets[u + 1] <= want.first_arc[v]) ++u;
          return u;
        }());
      }
    }
  }
}

// The bounds on the hand-worked graph above (A–B .5, B–C .6, A–D .9, D–C .5; seed A).
TEST(SpreadActivationLocalTest, HopsAndFiringThresholdBoundExpansion) {
  SaGraph g = Undirected(5, {{0, 1, 0.5f}, {1, 2, 0.6f}, {0, 3, 0.9f}, {3, 2, 0.5f}});
  const uint32_t seeds[] = {0};
  {  // one hop: only A expands
    SaGraphSource source(g);
    SaLimits limits;
    limits.hops = 1;
    const LocalSaRun run = RunLocal(source, seeds, limits);
    EXPECT_EQ(run.activation, (std::vector<float>{1.0f, 0.5f, 0.0f, 0.9f, 0.0f}));
    EXPECT_EQ(run.expansions, 1u);
    EXPECT_EQ(run.steps, 3u);
    EXPECT_EQ(run.nodes_read, 1u);
  }
  {  // firing threshold .6: B (.5) does not fire; D (.9) does: C = .5 · .9
    SaGraphSource source(g);
    SaLimits limits;
    limits.fire = 0.6f;
    const LocalSaRun run = RunLocal(source, seeds, limits);
    EXPECT_FLOAT_EQ(run.activation[1], 0.5f);
    EXPECT_FLOAT_EQ(run.activation[2], 0.45f);
    EXPECT_FLOAT_EQ(run.activation[3], 0.9f);
    EXPECT_EQ(run.expansions, 2u);  // A, D
    EXPECT_EQ(run.nodes_read, 2u);
    EXPECT_EQ(run.arcs.size(), 4u);  // only A's and D's arcs were read
  }
}

// A source that discovers nodes as it goes: a path 0 – 1 – 2 – ... of
// weight 1 links; the node cap stops discovery.
class PathSource final : public SaArcSource {
 public:
  size_t num_nodes() const override { return known_; }
  void Arcs(uint32_t u, bool may_discover, std::vector<SaArc>* out) override {
    if (u > 0) out->push_back({u - 1, 1.0f, 0});
    if (u + 1 < known_) {
      out->push_back({u + 1, 1.0f, 0});
    } else if (may_discover) {
      out->push_back({static_cast<uint32_t>(known_++), 1.0f, 0});
    }
  }

 private:
  size_t known_ = 1;
};

TEST(SpreadActivationLocalTest, NodeCapStopsDiscovery) {
  PathSource source;
  SaLimits limits;
  limits.max_nodes = 4;
  const uint32_t seeds[] = {0};
  const LocalSaRun run = RunLocal(source, seeds, limits);
  EXPECT_EQ(run.activation.size(), 4u);
  EXPECT_TRUE(run.truncated);
  for (float a : run.activation) EXPECT_EQ(a, 1.0f);
}

TEST(SpreadActivationLocalTest, RejectsAFiringThresholdOutsideZeroToOne) {
  SaGraph g = Undirected(2, {{0, 1, 0.5f}});
  const uint32_t seeds[] = {0};
  for (float fire : {-0.1f, 1.5f, std::nanf("")}) {
    SaGraphSource source(g);
    SaLimits limits;
    limits.fire = fire;
    Result<LocalSaRun> run = SpreadActivationLocal(source, seeds, limits);
    ASSERT_FALSE(run.ok()) << fire;
    EXPECT_EQ(run.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(run.status().message().find("fire"), std::string::npos) << run.status().message();
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
