// LLM relationship extraction (schema-contracts paper B.5.3) against a stub
// OpenAI chat server on loopback: a relationship declared `extraction: llm`
// (Product -[MADE_OF]-> Tag, where only some tags are materials) gets
// instances only where the model, reading the record, states them; answers
// naming types or entities the record does not hold are rejected; the cap
// per source holds; the deterministic strategies leave such relationships
// alone; without a model ingestion warns and stays consistent.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "flowrag/engine.h"
#include "flowrag/schema.h"
#include "llm/chat_client.h"
#include "schema/construct.h"
#include "schema/llm_relations.h"
#include "schema_store_util.h"
#include "stub_chat_client.h"
#include "stub_server.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using Json = nlohmann::json;
using namespace flowrag::testing;  // NOLINT: test helpers

constexpr char kProducts[] = R"([
  {"sku": "P-1", "name": "Espresso Machine", "tags": ["coffee", "steel"], "note": "brushed steel body"},
  {"sku": "P-2", "name": "Milk Frother", "tags": ["coffee"], "note": "froths milk"},
  {"sku": "P-3", "name": "Desk Lamp", "tags": ["steel", "led"], "note": "steel arm, LED head"},
  {"sku": "P-4", "name": "Gift Card", "tags": [], "note": "any amount"},
  {"sku": "P-5", "name": "Floor Lamp", "tags": ["led"], "note": "tall"},
  {"sku": "P-6", "name": "Kettle", "tags": ["steel"], "note": "boils water"}
])";

bool IsRelationPrompt(const std::string& p) { return p.find("=== RELATIONSHIP TYPES ===") != std::string::npos; }

// Espresso Machine: one good instance, one unknown target, one unknown type.
// Desk Lamp: a good one with an unreadable confidence (0.8), one backwards.
// Kettle: not JSON. Others: none.
Json Answer(const Json& body) {
  const std::string prompt = body["messages"][0]["content"];
  std::string content = R"({"relationships": []})";
  if (!IsRelationPrompt(prompt)) {
    content = R"({"entities": [], "relationships": []})";
  } else if (prompt.find("Espresso Machine") != std::string::npos) {
    content = R"({"relationships": [
        {"type": "MADE_OF", "source": "Espresso Machine", "target": "steel", "confidence": 0.9},
        {"type": "MADE_OF", "source": "Espresso Machine", "target": "aluminium", "confidence": 0.9},
        {"type": "SOLD_BY", "source": "Espresso Machine", "target": "coffee"}]})";
  } else if (prompt.find("Desk Lamp") != std::string::npos) {
    content = R"({"relationships": [
        {"type": "made of", "source": "desk lamp", "target": "STEEL", "confidence": "high"},
        {"type": "MADE_OF", "source": "led", "target": "Desk Lamp", "confidence": 0.7}]})";
  } else if (prompt.find("Kettle") != std::string::npos) {
    content = "steel, probably";
  }
  return ChatCompletionJson(content);
}

class LlmRelations : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(stub_.ok());
    WriteFile(dir_ + "/products.json", kProducts);
    auto induced = InduceSchema(dir_);
    ASSERT_TRUE(induced.ok()) << induced.status().ToString();
    contract_ = DeriveContract(*induced);
    const EntityType* product = TypeOf(contract_, "products");
    ASSERT_NE(product, nullptr);
    RelationshipType made_of;
    made_of.name = "MADE_OF";
    made_of.from = product->name;
    made_of.to = "Tag";
    made_of.cardinality = "N:M";
    made_of.extraction = "llm";
    contract_.entity_types.push_back(InstanceType("Tag", "products", "nested_field", "tags[*]"));
    contract_.relationships.push_back(made_of);
  }

  std::unique_ptr<ChatModel> Client() { return StubChatClient(stub_.BaseUrl()); }

  ConstructionPlan Plan() {
    auto plan = PlanConstruction(dir_, contract_, ConstructionOptions{}, nullptr);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    return plan.ok() ? std::move(plan).value() : ConstructionPlan{};
  }

  size_t RelationPrompts() {
    size_t n = 0;
    for (const auto& r : stub_.requests()) n += IsRelationPrompt(r.body["messages"][0]["content"]);
    return n;
  }

  TempDir tmp_;
  const std::string dir_ = tmp_.File("shop");
  SchemaContract contract_;
  ChatModelEnv env_;
  RecordingJsonStub stub_{"/v1/chat/completions", [](const Json& b) { return Answer(b); }};
};

// (subject, relation, target, confidence) of every MADE_OF link in the plan.
std::set<std::tuple<std::string, std::string, double>> MadeOf(const ConstructionPlan& plan) {
  std::set<std::tuple<std::string, std::string, double>> out;
  for (const PlannedRecord& r : plan.records) {
    for (const PlannedLink& l : r.links) {
      if (l.relation == "MADE_OF") out.emplace(l.subject.empty() ? r.title : l.subject, l.target, l.confidence);
    }
  }
  return out;
}

TEST_F(LlmRelations, TheDeclarationRoundTripsAndIsValidated) {
  const std::string yaml = ToYaml(contract_);
  EXPECT_NE(yaml.find("cardinality: N:M, confidence: 0, extraction: llm}"), std::string::npos) << yaml;
  auto back = ParseContract(yaml, "shop.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->relationships.back().extraction, "llm");
  EXPECT_EQ(ToYaml(*back), yaml);
  std::string edited = yaml;
  const size_t at = edited.find("extraction: llm}");
  edited.replace(at, 16, "extraction: magic}");
  size_t line = 1;
  for (size_t i = 0; i < at; ++i) line += edited[i] == '\n';
  auto r = ParseContract(edited, "shop.yaml");
  ASSERT_FALSE(r.ok());
  const std::string message = r.status().ToString();
  EXPECT_TRUE(Contains(message, "shop.yaml:" + std::to_string(line) + ":")) << message;
  EXPECT_TRUE(Contains(message, ".extraction: \"magic\" is not llm")) << message;
}

TEST_F(LlmRelations, OnlyCheckedAnswersOfTheModelBecomeLinks) {
  ConstructionPlan plan = Plan();
  // Co-occurrence leaves the llm relationship alone: the tags hang off the
  // product by the field's name.
  EXPECT_TRUE(MadeOf(plan).empty());
  const size_t links_before = plan.links;
  auto chat = Client();
  ASSERT_NE(chat, nullptr);
  const LlmRelationReport report = ExtractLlmRelationships(contract_, &plan, *chat);
  EXPECT_EQ(report.candidates, 5u);  // every product with a tag; not the Gift Card
  EXPECT_EQ(report.calls, 5u);
  EXPECT_EQ(report.failed_calls, 1u);  // Kettle
  EXPECT_EQ(report.added, 2u);
  EXPECT_EQ(report.rejected, 3u);  // aluminium, SOLD_BY, led -> Desk Lamp
  EXPECT_EQ(report.over_cap, 0u);
  EXPECT_EQ(plan.links, links_before + 2);
  const std::set<std::tuple<std::string, std::string, double>> expected = {
      {"Espresso Machine", "steel", 0.9}, {"Desk Lamp", "steel", 0.8}};
  EXPECT_EQ(MadeOf(plan), expected);

  std::string espresso;
  for (const auto& r : stub_.requests()) {
    const std::string p = r.body["messages"][0]["content"];
    if (p.find("Espresso Machine") != std::string::npos) espresso = p;
  }
  EXPECT_NE(espresso.find("- \"Espresso Machine\" (Product)\n- \"coffee\" (Tag)\n- \"steel\" (Tag)"),
            std::string::npos)
      << espresso;
  EXPECT_NE(espresso.find("- MADE_OF: Product -> Tag"), std::string::npos);
  EXPECT_NE(espresso.find("note: brushed steel body"), std::string::npos);  // the record's text
}

TEST_F(LlmRelations, TheCapPerSourceBoundsTheCalls) {
  ConstructionPlan plan = Plan();
  auto chat = Client();
  ASSERT_NE(chat, nullptr);
  LlmRelationOptions o;
  o.max_calls_per_source = 2;
  const LlmRelationReport report = ExtractLlmRelationships(contract_, &plan, *chat, o);
  EXPECT_EQ(report.calls, 2u);
  EXPECT_EQ(report.over_cap, 3u);
  EXPECT_EQ(RelationPrompts(), 2u);
  EXPECT_EQ(MadeOf(plan).size(), 1u);  // Espresso Machine comes first; Desk Lamp is third
}

TEST_F(LlmRelations, IngestWithAModelStoresThemAndWithoutOneWarns) {
  const std::string db = tmp_.File("llm.db");
  {
    env_.Point(stub_.BaseUrl());
    auto engine = Engine::Open(db);
    ASSERT_TRUE(engine.ok());
    IngestOptions options;  // extractor "auto": the model is configured
    auto r = (*engine)->Ingest(dir_, contract_, options);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->llm_calls, 5u);
    EXPECT_EQ(r->llm_links, 2u);
    const auto facts = Facts(db);
    EXPECT_TRUE(facts.count({"Espresso Machine", "MADE_OF", "steel"}));
    EXPECT_TRUE(facts.count({"Desk Lamp", "MADE_OF", "steel"}));
    EXPECT_FALSE(facts.count({"Espresso Machine", "MADE_OF", "coffee"}));
    EXPECT_FALSE(facts.count({"Kettle", "MADE_OF", "steel"}));
    auto stats = (*engine)->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_DOUBLE_EQ(stats->schema.link_validity, 1.0);
    // Again: the answers come from the store's cache, the graph is the same.
    const size_t asked = RelationPrompts();
    auto again = (*engine)->Ingest(dir_, contract_, options);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(again->llm_links, 2u);
    EXPECT_EQ(RelationPrompts(), asked);
    EXPECT_EQ(Facts(db), facts);
    env_.Clear();
  }
  const std::string offline_db = tmp_.File("offline.db");
  auto engine = Engine::Open(offline_db);
  ASSERT_TRUE(engine.ok());
  auto r = (*engine)->Ingest(dir_, contract_, Offline());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->llm_links, 0u);
  bool warned = false;
  for (const std::string& w : r->warnings) warned = warned || Contains(w, "extracted by llm (Algorithm 3, B.5.3) were not extracted");
  EXPECT_TRUE(warned);
  const auto facts = Facts(offline_db);
  EXPECT_FALSE(facts.count({"Espresso Machine", "MADE_OF", "steel"}));
  EXPECT_TRUE(facts.count({"Espresso Machine", "tags", "steel"}));
  auto stats = (*engine)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_DOUBLE_EQ(stats->schema.link_validity, 1.0);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
