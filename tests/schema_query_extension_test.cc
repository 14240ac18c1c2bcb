// Query-scoped schema extension (schema-contracts paper C.6, prompt E.3) in
// the schema agent, against a stub OpenAI chat server on loopback: a
// question about something the schema lacks gets one extension call whose
// confident additions the E.4 plan sees; the stored contract never changes
// and the next question sees the base schema again (revert); snapshots are
// contract files that load and can be promoted by hand.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "flowrag/engine.h"
#include "flowrag/schema.h"
#include "schema/query_extension.h"
#include "schema_store_util.h"
#include "shop_sources.h"
#include "stub_server.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using Json = nlohmann::json;
using namespace flowrag::testing;  // NOLINT: test helpers

constexpr char kInhabitants[] = "How many inhabitants live in the city of Acme Corp?";

// Accepted: Population (0.9), LOCATED_IN (0.8). Left out: Customer (exists),
// Mayor (0.4), ORBITS (Planet is no type).
constexpr char kProposal[] = R"({"needs_extension": true,
  "required_entities": [
    {"type": "population", "confidence": 0.9, "reason": "inhabitants are asked for",
     "examples": ["Berlin"], "attributes": ["inhabitants"]},
    {"type": "Customer", "confidence": 0.95},
    {"type": "Mayor", "confidence": 0.4}],
  "required_relationships": [
    {"type": "located in", "source_entity": "Customer", "target_entity": "Population", "confidence": 0.8},
    {"type": "orbits", "source_entity": "Customer", "target_entity": "Planet", "confidence": 0.9}],
  "reasoning": "no type holds population figures"})";

// The plan of SchemaAgentLlmTest.PlannedTraversalMakesTheReturnedFieldABridge.
constexpr char kPlan[] = R"({"tool_calls": [{"tool": "SchemaLookup", "entity_type": "Customer",
    "constraints": {"name": "Acme Corp"}, "return_field": "city"},
   {"tool": "GraphTraverse", "start_entity": "Acme Corp", "pattern": "city -> page"}]})";

bool IsExtensionPrompt(const std::string& p) { return p.find("Analyze this user query") != std::string::npos; }
bool IsPlanPrompt(const std::string& p) { return p.find("schema-guided question-answering agent") != std::string::npos; }

class SchemaQueryExtensionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(stub_.ok());
    WriteShopSources(src_);
    auto induced = InduceSchema(src_);
    ASSERT_TRUE(induced.ok()) << induced.status().ToString();
    base_ = DeriveContract(*induced);
    auto engine = Engine::Open(db_);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    auto report = engine_->Ingest(src_, base_, Offline());
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    stored_ = StoredContract();
    ASSERT_FALSE(stored_.empty());
    env_.Point(stub_.BaseUrl());  // after ingestion: only the agent talks to the model
  }

  Json Reply(const Json& body) {
    const std::string prompt = body["messages"][0]["content"];
    if (IsExtensionPrompt(prompt)) return ChatCompletionJson(proposal_);
    if (IsPlanPrompt(prompt)) return ChatCompletionJson(kPlan);
    return {{"error", {{"message", "unexpected prompt"}}}};
  }

  Answer Ask(const std::string& question, SchemaAgentOptions schema = {}) {
    AnswerOptions o;
    o.answerer = "extractive";  // the model extends and plans; answers stay offline
    o.schema = std::move(schema);
    auto a = engine_->Ask(question, o);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return a.ok() ? *a : Answer{};
  }

  std::string StoredContract() {
    Rows r = Sql(db_, "SELECT value FROM meta WHERE key = 'schema_contract'");
    return r.empty() ? "" : r[0][0];
  }

  // The prompts the stub saw since the last call, in order.
  std::vector<std::string> Prompts() {
    std::vector<std::string> out;
    const auto seen = stub_.requests();
    for (size_t i = seen_; i < seen.size(); ++i) out.push_back(seen[i].body["messages"][0]["content"]);
    seen_ = seen.size();
    return out;
  }

  std::string proposal_ = kProposal;
  TempDir dir_;
  const std::string src_ = dir_.path() + "/src", db_ = dir_.File("store.db");
  SchemaContract base_;
  std::string stored_;
  size_t seen_ = 0;
  ChatModelEnv env_;
  RecordingJsonStub stub_{"/v1/chat/completions", [this](const Json& b) { return Reply(b); }};
  std::unique_ptr<Engine> engine_;  // last: closed before the stub stops
};

TEST_F(SchemaQueryExtensionTest, ConfidentAdditionsReachThePlanForThisQuestionOnly) {
  const Answer a = Ask(kInhabitants);
  ASSERT_TRUE(a.answered) << a.reasoning;
  EXPECT_NE(a.text.find("3.7 million"), std::string::npos) << a.text;

  const std::vector<std::string> prompts = Prompts();
  ASSERT_EQ(prompts.size(), 2u);
  ASSERT_TRUE(IsExtensionPrompt(prompts[0]));
  EXPECT_NE(prompts[0].find(kInhabitants), std::string::npos);
  EXPECT_NE(prompts[0].find("- Customer (attributes: customer_id, name, city, segment)"), std::string::npos)
      << prompts[0];
  EXPECT_EQ(prompts[0].find("Acme Corp,Berlin"), std::string::npos);  // no records reach the model
  ASSERT_TRUE(IsPlanPrompt(prompts[1]));
  EXPECT_NE(prompts[1].find("name: Population"), std::string::npos) << prompts[1];
  EXPECT_NE(prompts[1].find("{name: LOCATED_IN, from: Customer, to: Population"), std::string::npos);

  ASSERT_GE(a.steps.size(), 2u);
  EXPECT_EQ(a.steps[0].query, "ExtendSchema(inhabitants)");
  EXPECT_EQ(a.steps[0].answer, "entity type Population; relationship (Customer)-[LOCATED_IN]->(Population)");
  const std::string& summary = a.steps[0].summary;
  EXPECT_TRUE(Contains(summary, "2 added for this question only")) << summary;
  EXPECT_TRUE(Contains(summary, "Customer: already an entity type")) << summary;
  EXPECT_TRUE(Contains(summary, "Mayor: confidence 0.40 below 0.70")) << summary;
  EXPECT_TRUE(Contains(summary, "ORBITS: \"Planet\" is not an entity type")) << summary;
  EXPECT_EQ(a.steps[1].query, "Plan(" + std::string(kInhabitants) + ")");
  ASSERT_FALSE(a.warnings.empty());
  EXPECT_TRUE(Contains(a.warnings[0], "the schema was extended for this question")) << a.warnings[0];
  EXPECT_EQ(a.usage.llm_calls, 2);

  // Reverted: the store's contract is byte-identical, and the next question
  // (which the schema covers) is planned over the base schema, unextended.
  EXPECT_EQ(StoredContract(), stored_);
  const Answer b = Ask("What is the city of Acme Corp?");
  EXPECT_EQ(b.text, "Berlin");
  const std::vector<std::string> next = Prompts();
  ASSERT_EQ(next.size(), 1u);
  ASSERT_TRUE(IsPlanPrompt(next[0]));
  EXPECT_EQ(next[0].find("Population"), std::string::npos);
}

TEST_F(SchemaQueryExtensionTest, SnapshotIsAContractThatCanBePromotedByHand) {
  SchemaAgentOptions o;
  o.extension_snapshots = dir_.File("snapshots");
  const Answer a = Ask(kInhabitants, o);
  ASSERT_FALSE(a.steps.empty());
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(o.extension_snapshots)) {
    files.push_back(e.path().string());
  }
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(Contains(a.steps[0].summary, "snapshot " + files[0])) << a.steps[0].summary;
  EXPECT_EQ(std::filesystem::path(files[0]).filename().string().rfind("schema_", 0), 0u);
  auto snapshot = LoadContract(files[0]);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  EXPECT_EQ(snapshot->version, base_.version + 1);
  ASSERT_EQ(snapshot->entity_types.size(), base_.entity_types.size() + 1);
  const EntityType& population = snapshot->entity_types.back();
  EXPECT_EQ(population.name, "Population");
  EXPECT_EQ(population.source, "");
  EXPECT_EQ(population.extraction, "llm");
  ASSERT_FALSE(snapshot->extensions.empty());
  EXPECT_EQ(snapshot->extensions.back().added.size(), 2u);
  EXPECT_EQ(StoredContract(), stored_);  // saving a snapshot promotes nothing

  // A second question saves a second file beside it.
  Ask(kInhabitants, o);
  size_t count = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(o.extension_snapshots)) ++count;
  EXPECT_EQ(count, 2u);

  // Promotion is by hand: ingesting with the snapshot stores it, and the
  // graph stays consistent (the new type has no records of its own).
  env_.Clear();
  auto promoted = engine_->Ingest(src_, *snapshot, Offline());
  ASSERT_TRUE(promoted.ok()) << promoted.status().ToString();
  EXPECT_TRUE(Contains(StoredContract(), "name: Population"));
  auto stats = engine_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_DOUBLE_EQ(stats->schema.link_validity, 1.0);
  EXPECT_DOUBLE_EQ(stats->schema.provenance_completeness, 1.0);
}

TEST_F(SchemaQueryExtensionTest, NoCallWhenCoveredOffOrOffline) {
  Ask("What is the city of Acme Corp?");  // no gap: only the plan
  std::vector<std::string> p = Prompts();
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(IsPlanPrompt(p[0]));

  SchemaAgentOptions off;
  off.extension = "off";
  const Answer a = Ask(kInhabitants, off);
  p = Prompts();
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(IsPlanPrompt(p[0]));
  ASSERT_FALSE(a.warnings.empty());
  EXPECT_EQ(a.warnings[0], "schema sufficiency: no entity type or field for \"inhabitants\"");

  SchemaAgentOptions offline;
  offline.analysis = "offline";
  const Answer b = Ask(kInhabitants, offline);
  EXPECT_TRUE(Prompts().empty());
  EXPECT_NE(b.text.find("3.7 million"), std::string::npos) << b.text;
}

TEST_F(SchemaQueryExtensionTest, UnusableOrNegativeAnswersLeaveTheBaseSchema) {
  proposal_ = "this is not JSON";
  const Answer a = Ask(kInhabitants);
  EXPECT_NE(a.text.find("3.7 million"), std::string::npos) << a.text;  // the plan still runs
  bool warned = false;
  for (const std::string& w : a.warnings) warned = warned || Contains(w, "query-scoped schema extension failed");
  EXPECT_TRUE(warned);
  std::vector<std::string> p = Prompts();
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[1].find("Population"), std::string::npos);

  // Another question: the store caches the model's answers by prompt.
  proposal_ = R"({"needs_extension": false, "required_entities": [{"type": "Population", "confidence": 0.9}]})";
  const Answer b = Ask("How many inhabitants does the city of Acme Corp have?");
  ASSERT_FALSE(b.steps.empty());
  EXPECT_EQ(b.steps[0].answer, "");
  EXPECT_TRUE(Contains(b.steps[0].summary, "Population: the model says the schema suffices")) << b.steps[0].summary;
  p = Prompts();
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[1].find("Population"), std::string::npos);

  AnswerOptions bad;
  bad.schema.extension = "always";
  auto r = engine_->Ask(kInhabitants, bad);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "schema.extension \"always\"")) << r.status().ToString();
}

TEST(QueryExtensionContract, OnlyAnLlmTypeMayHaveNoSource) {
  TempDir tmp;
  WriteShopSources(tmp.path());
  auto induced = InduceSchema(tmp.path());
  ASSERT_TRUE(induced.ok());
  SchemaContract c = DeriveContract(*induced);
  EntityType scoped;
  scoped.name = "Population";
  scoped.extraction = "llm";
  c.entity_types.push_back(scoped);
  const std::string yaml = ToYaml(c);
  auto back = ParseContract(yaml, "s.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(ToYaml(*back), yaml);

  std::string edited = yaml;
  const std::string from = "extraction: {method: llm}";
  const size_t at = edited.find(from);
  ASSERT_NE(at, std::string::npos) << yaml;
  edited.replace(at, from.size(), "extraction: {method: row_as_entity}");
  auto r = ParseContract(edited, "s.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), ".source: missing (only an llm type may have no source)"))
      << r.status().ToString();
  EXPECT_TRUE(Contains(r.status().message(), "s.yaml:")) << r.status().ToString();
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
