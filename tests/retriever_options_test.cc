// Options parsed once (retrieval/options_retriever.h): the configured
// defaults are parsed when the retriever is configured, a request without
// params parses nothing, a request's params are applied to a copy, and the
// result, the errors and the catalog are those of parsing the merged
// strings from scratch, as every query did before.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "retrieval/options_retriever.h"
#include "retrieval/ppr_retriever.h"
#include "retrieval/qafd_retriever.h"
#include "retrieval/retriever.h"
#include "retrieval/sa_retriever.h"
#include "retrieval/semflow_retriever.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using Params = std::map<std::string, std::string>;

// A retriever that only resolves its options (Retrieve is not used here).
template <typename Options>
class Probe final : public OptionsRetriever<Options> {
 public:
  explicit Probe(std::string name) : name_(std::move(name)) {}
  std::string_view Name() const override { return name_; }
  Result<RetrievalOutput> Retrieve(const Snapshot&, const RetrievalRequest&) const override {
    return Status::Internal("a probe does not retrieve");
  }
  Result<const Options*> Resolve(const Params* params, std::optional<Options>* scratch) const {
    RetrievalRequest request;
    request.params = params;
    return this->RequestOptions(request, scratch);
  }

 private:
  std::string name_;
};

// Every value of an options struct as its catalog lists it (key=value).
template <typename Options>
std::vector<std::string> Values(const Options& o) {
  std::vector<MethodOption> catalog;
  ParamReader reader(&catalog);
  Options copy = o;
  EXPECT_TRUE(copy.Override(reader).ok());
  std::vector<std::string> out;
  for (const MethodOption& m : catalog) out.push_back(m.name + "=" + m.default_value);
  return out;
}

// What every query did before: the merged strings parsed from Options{}.
template <typename Options>
Result<Options> ParseMerged(const Params& defaults, const Params& params, std::string_view method) {
  Params merged = defaults;
  for (const auto& [k, v] : params) merged[k] = v;
  Options o;
  ParamReader reader(&merged);
  FLOWRAG_RETURN_IF_ERROR(o.Override(reader));
  FLOWRAG_RETURN_IF_ERROR(reader.CheckAllUsed(method));
  return o;
}

TEST(RetrieverOptionsTest, ARequestWithoutParamsUsesTheConfiguredOptions) {
  Probe<SemFlowOptions> probe("semflow");
  EXPECT_TRUE(probe.Configure({{"semflow.lambda", "0.5"}, {"qafd.alpha", "9"}}).ok());
  EXPECT_EQ(probe.configured().lambda, 0.5);
  std::optional<SemFlowOptions> scratch;
  const Params none;
  for (const Params* params : {static_cast<const Params*>(nullptr), &none}) {
    auto o = probe.Resolve(params, &scratch);
    ASSERT_TRUE(o.ok()) << o.status().ToString();
    EXPECT_EQ(*o, &probe.configured());  // nothing parsed, nothing copied
    EXPECT_FALSE(scratch.has_value());
  }
}

TEST(RetrieverOptionsTest, ARequestsParamsApplyToACopy) {
  Probe<SemFlowOptions> probe("semflow");
  ASSERT_TRUE(probe.Configure({{"semflow.lambda", "0.5"}, {"semflow.seeds", "7"}}).ok());
  std::optional<SemFlowOptions> scratch;
  const Params params{{"semflow.seeds", "3"}, {"semflow.weights", "softmax"}};
  auto o = probe.Resolve(&params, &scratch);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(*o, &*scratch);
  EXPECT_EQ((*o)->lambda, 0.5);  // configured
  EXPECT_EQ((*o)->seeds, 3u);    // the query's own win
  EXPECT_EQ((*o)->weights, "softmax");
  EXPECT_EQ(probe.configured().seeds, 7u);  // the configured options are untouched
  EXPECT_EQ(probe.configured().weights, "linear");
}

TEST(RetrieverOptionsTest, ErrorsNameTheKeyAsBefore) {
  Probe<QafdOptions> probe("qafd");
  ASSERT_TRUE(probe.Configure({{"qafd.alpha", "20"}}).ok());
  std::optional<QafdOptions> scratch;
  const Params unknown{{"qafd.nope", "1"}};
  EXPECT_EQ(probe.Resolve(&unknown, &scratch).status().message(),
            "unknown option(s) for method qafd: qafd.nope");
  const Params bad{{"qafd.alpha", "abc"}};
  EXPECT_EQ(probe.Resolve(&bad, &scratch).status().message(),
            "option qafd.alpha=\"abc\": expected a number");
  const Params out_of_range{{"qafd.alpha", "0"}};
  EXPECT_EQ(probe.Resolve(&out_of_range, &scratch).status().message(),
            "option qafd.alpha: expected > 0");
}

// A configured default that does not parse fails the queries that do not
// override it, with its own message, and no others: as when every query
// parsed the merged strings.
TEST(RetrieverOptionsTest, ABadConfiguredDefaultFailsTheQueriesThatReadIt) {
  Probe<SaOptions> probe("sa");
  const Status configured = probe.Configure({{"sa.c", "abc"}, {"sa.k", "2"}});
  EXPECT_EQ(configured.message(), "option sa.c=\"abc\": expected a number");
  std::optional<SaOptions> scratch;
  EXPECT_EQ(probe.Resolve(nullptr, &scratch).status().message(), configured.message());
  const Params other{{"sa.hops", "2"}};
  EXPECT_EQ(probe.Resolve(&other, &scratch).status().message(), configured.message());
  const Params fix{{"sa.c", "0.3"}};
  auto o = probe.Resolve(&fix, &scratch);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ((*o)->c, 0.3);
  EXPECT_EQ((*o)->k, 2u);  // the other default still applies
}

// Random configured defaults and overrides: the options resolved once and
// per request equal the merged strings parsed from scratch, and fail alike.
template <typename Options>
void ExpectSameAsMergedParse(
    const std::string& method,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& keys, uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](Params* p) {
    for (const auto& [key, values] : keys) {
      if (rng() % 3 == 0) (*p)[key] = values[rng() % values.size()];
    }
  };
  for (int trial = 0; trial < 300; ++trial) {
    Params defaults, params;
    pick(&defaults);
    pick(&params);
    if (trial % 5 == 0) params["other.key"] = "1";
    Probe<Options> probe(method);
    (void)probe.Configure(defaults);
    std::optional<Options> scratch;
    auto got = probe.Resolve(&params, &scratch);
    auto want = ParseMerged<Options>(defaults, params, method);
    ASSERT_EQ(got.ok(), want.ok()) << method << " trial " << trial;
    if (!want.ok()) {
      EXPECT_EQ(got.status().message(), want.status().message()) << method << " trial " << trial;
      continue;
    }
    EXPECT_EQ(Values(**got), Values(*want)) << method << " trial " << trial;
  }
}

TEST(RetrieverOptionsTest, ResolvedOnceEqualsTheMergedStringsParsed) {
  ExpectSameAsMergedParse<SemFlowOptions>("semflow",
                                          {{"semflow.lambda", {"0", "2", "-1", "x"}},
                                           {"semflow.weights", {"linear", "softmax", "exp"}},
                                           {"semflow.facts", {"3", "8", "-2"}},
                                           {"semflow.direction", {"true", "off", "maybe"}},
                                           {"semflow.prior", {"dense", "bm25", "nope"}},
                                           {"semflow.prior_top", {"0", "40"}},
                                           {"semflow.reset", {"0.3", "0", "1"}}},
                                          1);
  ExpectSameAsMergedParse<PprOptions>("ppr",
                                      {{"ppr.damping", {"0.5", "0.85", "1"}},
                                       {"ppr.solver", {"push", "power", "x"}},
                                       {"ppr.seeds", {"1", "9"}},
                                       {"ppr.epsilon", {"1e-5", "0"}},
                                       {"ppr.prior", {"hybrid", "dense"}}},
                                      2);
  ExpectSameAsMergedParse<SaOptions>("sa",
                                     {{"sa.k", {"0", "1", "4"}},
                                      {"sa.c", {"0.2", "1", "abc"}},
                                      {"sa.scale", {"auto", "relative", "huge"}},
                                      {"sa.fire", {"0", "0.5", "2"}}},
                                     3);
}

// The catalog (Engine::MethodOptions) reads the method's own defaults,
// whatever the retriever was configured with.
TEST(RetrieverOptionsTest, TheCatalogListsTheMethodsDefaults) {
  for (const std::string& name : RetrieverNames()) {
    auto plain = MakeRetriever(name);
    auto configured = MakeRetriever(
        name,
        {{"qafd.alpha", "20"}, {"ppr.damping", "0.9"}, {"semflow.seeds", "3"}, {"bm25.k1", "2"}});
    ASSERT_TRUE(plain.ok() && configured.ok()) << name;
    std::vector<MethodOption> a, b;
    ParamReader ra(&a), rb(&b);
    ASSERT_TRUE((*plain)->ReadOptions(ra).ok());
    ASSERT_TRUE((*configured)->ReadOptions(rb).ok());
    ASSERT_EQ(a.size(), b.size()) << name;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].name, b[i].name);
      EXPECT_EQ(a[i].default_value, b[i].default_value) << a[i].name;
    }
  }
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
