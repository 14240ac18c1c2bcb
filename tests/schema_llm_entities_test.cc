// LLM entity extraction for llm entity types (schema-contracts paper
// Algorithm 3, B.3.3) against a stub OpenAI chat server on loopback:
// Material read from product records and Supplier from a text document;
// instances must be named in the passage and of an offered type, are
// deduplicated across records, DERIVED_FROM the records they occur in and
// linked by the declared relationship; without a model ingestion warns.
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
#include "schema/llm_entities.h"
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
  {"sku": "P-1", "name": "Espresso Machine", "note": "brushed steel body"},
  {"sku": "P-2", "name": "Milk Frother", "note": "froths milk"},
  {"sku": "P-3", "name": "Desk Lamp", "note": "Brushed Steel arm"},
  {"sku": "P-4", "name": "Kettle", "note": "boils water"}
])";

constexpr char kSupply[] = "# Supply chain\n\nThe Espresso Machine body is made by Acme Metals in Turin.\n";

bool IsEntityPrompt(const std::string& p) {
  return p.find("Extract the entities of the listed types") != std::string::npos;
}

// Espresso Machine: one good instance, one not in the text, one of an
// unknown type. Desk Lamp: the same material spelled differently. The
// supply note: a supplier. Kettle: not JSON. Others: none.
Json Answer(const Json& body) {
  const std::string prompt = body["messages"][0]["content"];
  std::string content = R"({"entities": []})";
  if (!IsEntityPrompt(prompt)) {
    content = R"({"entities": [], "relationships": []})";
  } else if (prompt.find("Acme Metals") != std::string::npos) {
    content = R"({"entities": [{"type": "Supplier", "name": "Acme Metals"}]})";
  } else if (prompt.find("Espresso Machine") != std::string::npos) {
    content = R"({"entities": [{"type": "Material", "name": "brushed steel"},
        {"type": "Material", "name": "titanium"}, {"type": "Colour", "name": "steel"}]})";
  } else if (prompt.find("Desk Lamp") != std::string::npos) {
    content = R"({"entities": [{"type": "material", "name": "Brushed Steel"}]})";
  } else if (prompt.find("Kettle") != std::string::npos) {
    content = "water, I think";
  }
  return ChatCompletionJson(content);
}

class LlmEntities : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(stub_.ok());
    WriteFile(dir_ + "/products.json", kProducts);
    WriteFile(dir_ + "/notes/supply.md", kSupply);
    auto induced = InduceSchema(dir_);
    ASSERT_TRUE(induced.ok()) << induced.status().ToString();
    contract_ = DeriveContract(*induced);
    const EntityType* product = TypeOf(contract_, "products");
    ASSERT_NE(product, nullptr);
    ASSERT_NE(TypeOf(contract_, "notes/supply"), nullptr) << ToYaml(contract_);
    EntityType material;
    material.name = "Material";
    material.source = "products";
    material.extraction = "llm";
    EntityType supplier;
    supplier.name = "Supplier";
    supplier.source = "notes/supply";
    supplier.extraction = "llm";
    RelationshipType has;
    has.name = "HAS_MATERIAL";
    has.from = product->name;
    has.to = "Material";
    contract_.entity_types.push_back(material);
    contract_.entity_types.push_back(supplier);
    contract_.relationships.push_back(has);
    auto back = ParseContract(ToYaml(contract_), "shop.yaml");  // a valid contract
    ASSERT_TRUE(back.ok()) << back.status().ToString();
  }

  std::unique_ptr<ChatModel> Client() { return StubChatClient(stub_.BaseUrl()); }

  TempDir tmp_;
  const std::string dir_ = tmp_.File("shop");
  SchemaContract contract_;
  ChatModelEnv env_;
  RecordingJsonStub stub_{"/v1/chat/completions", [](const Json& b) { return Answer(b); }};
};

TEST_F(LlmEntities, InstancesAreGroundedInTheirPassageAndDeduplicated) {
  auto plan = PlanConstruction(dir_, contract_, ConstructionOptions{}, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const size_t derived_before = plan->derived_entities;
  auto chat = Client();
  ASSERT_NE(chat, nullptr);
  const LlmEntityReport report = ExtractLlmEntities(contract_, &*plan, *chat);
  EXPECT_EQ(report.calls, 5u);  // four product records and the note's one passage
  EXPECT_EQ(report.failed_calls, 1u);
  EXPECT_EQ(report.found, 3u);
  EXPECT_EQ(report.entities, 2u);  // brushed steel, Acme Metals
  EXPECT_EQ(report.rejected, 2u);  // titanium (not in the text), Colour
  EXPECT_EQ(plan->derived_entities, derived_before + 2);

  std::set<std::vector<std::string>> derived, links;
  for (const PlannedRecord& r : plan->records) {
    for (const PlannedEntity& d : r.derived) derived.insert({r.document_id, d.type, d.name});
    for (const PlannedLink& l : r.links) {
      if (l.relation == "HAS_MATERIAL" || l.relation == "MENTIONS") links.insert({r.title, l.relation, l.target});
    }
  }
  const std::set<std::vector<std::string>> expected = {
      {"products.json#1", "Material", "brushed steel"},
      {"products.json#3", "Material", "brushed steel"},  // the first spelling
      {"notes/supply.md", "Supplier", "Acme Metals"}};
  EXPECT_EQ(derived, expected);
  const std::set<std::vector<std::string>> expected_links = {
      {"Espresso Machine", "HAS_MATERIAL", "brushed steel"}, {"Desk Lamp", "HAS_MATERIAL", "brushed steel"}};
  EXPECT_EQ(links, expected_links);  // the text document only defines its instance

  std::string espresso;
  for (const auto& r : stub_.requests()) {
    const std::string p = r.body["messages"][0]["content"];
    if (p.find("=== TEXT (products.json") != std::string::npos && p.find("Espresso Machine") != std::string::npos) {
      espresso = p;  // the record, not the note that names it too
    }
  }
  EXPECT_NE(espresso.find("=== ENTITY TYPES ===\n- Material\n=== INSTRUCTIONS"), std::string::npos) << espresso;
  EXPECT_NE(espresso.find("note: brushed steel body"), std::string::npos);
}

TEST_F(LlmEntities, IngestStoresTypedInstancesWithProvenance) {
  const std::string db = tmp_.File("llm.db");
  {
    env_.Point(stub_.BaseUrl());
    auto engine = Engine::Open(db);
    ASSERT_TRUE(engine.ok());
    auto r = (*engine)->Ingest(dir_, contract_, IngestOptions{});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->llm_entities, 2u);
    EXPECT_GE(r->llm_calls, 5u);
    EXPECT_EQ(EntityTypeOf(db, "brushed steel"), "Material");
    EXPECT_EQ(DerivedFrom(db, "brushed steel"), (std::set<std::string>{"products.json#1", "products.json#3"}));
    EXPECT_EQ(EntityTypeOf(db, "Acme Metals"), "Supplier");
    EXPECT_EQ(DerivedFrom(db, "Acme Metals"), std::set<std::string>{"notes/supply.md"});
    EXPECT_TRUE(Facts(db).count({"Desk Lamp", "HAS_MATERIAL", "brushed steel"}));
    auto stats = (*engine)->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_DOUBLE_EQ(stats->schema.link_validity, 1.0);
    EXPECT_DOUBLE_EQ(stats->schema.provenance_completeness, 1.0);
    env_.Clear();
  }
  const std::string offline_db = tmp_.File("offline.db");
  auto engine = Engine::Open(offline_db);
  ASSERT_TRUE(engine.ok());
  auto r = (*engine)->Ingest(dir_, contract_, Offline());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->llm_entities, 0u);
  bool warned = false;
  for (const std::string& w : r->warnings) warned = warned || Contains(w, "entity types extracted by llm");
  EXPECT_TRUE(warned);
  EXPECT_EQ(EntityTypeOf(offline_db, "brushed steel"), "");
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
