// Field and nested_field entity types (schema-contracts paper B.3.2) and
// type co-occurrence relationships (B.5.2): a contract that declares
// Category from products.category and Tag from products.tags[*] gets one
// entity per distinct value, DERIVED_FROM every record it occurs in, linked
// to the record's entity by the declared relationship or the field's name;
// the YAML form round-trips, the linter rejects broken extraction entries,
// and extension keeps such types as they are.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "flowrag/engine.h"
#include "flowrag/schema.h"
#include "schema/construct.h"
#include "schema_store_util.h"
#include "stub_server.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using namespace flowrag::testing;  // NOLINT: test helpers

// "kitchen" and "Kitchen " are one category; P-4 has no category.
constexpr char kProducts[] = R"([
  {"sku": "P-1", "name": "Espresso Machine", "category": "Kitchen", "tags": ["coffee", "steel"]},
  {"sku": "P-2", "name": "Milk Frother", "category": "kitchen", "tags": ["coffee"]},
  {"sku": "P-3", "name": "Desk Lamp", "category": "Lighting", "tags": ["steel", "led"]},
  {"sku": "P-4", "name": "Gift Card", "tags": []},
  {"sku": "P-5", "name": "Floor Lamp", "category": "Lighting ", "tags": ["led"]},
  {"sku": "P-6", "name": "Kettle", "category": "Kitchen", "tags": ["steel"]}
])";

constexpr char kOrders[] =
    "order_id,sku,quantity\n"
    "1,P-1,2\n"
    "2,P-3,1\n"
    "3,P-5,4\n"
    "4,P-6,1\n"
    "5,P-2,3\n"
    "6,P-1,1\n";

// The offline contract with Category (field) and Tag (nested_field) added,
// and Product -[IN_CATEGORY]-> Category declared.
SchemaContract WithFieldTypes(SchemaContract c) {
  const EntityType* product = TypeOf(c, "products");
  const EntityType category = InstanceType("Category", "products", "field", "category");
  const EntityType tag = InstanceType("Tag", "products", "nested_field", "tags[*]");
  RelationshipType in_category;
  in_category.name = "IN_CATEGORY";
  in_category.from = product->name;
  in_category.to = "Category";
  in_category.from_field = "category";
  in_category.to_field = "category";
  in_category.cardinality = "N:1";
  in_category.confidence = 1.0;
  c.entity_types.push_back(category);
  c.entity_types.push_back(tag);
  c.relationships.push_back(in_category);
  return c;
}

class FieldTypes : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(dir + "/products.json", kProducts);
    WriteFile(dir + "/orders.csv", kOrders);
    auto c = ContractOf(dir);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    offline = *c;
    ASSERT_NE(TypeOf(offline, "products"), nullptr);
    contract = WithFieldTypes(offline);
  }

  TempDir tmp;
  const std::string dir = tmp.File("shop"), db = tmp.File("shop.db");
  SchemaContract offline, contract;
};

TEST_F(FieldTypes, TheExtractionEntryRoundTripsThroughYaml) {
  const std::string yaml = ToYaml(contract);
  EXPECT_NE(yaml.find("extraction: {method: nested_field, field: \"tags[*]\"}"), std::string::npos) << yaml;
  // Row types keep the short form: no extraction entry.
  EXPECT_EQ(ToYaml(offline).find("extraction:"), std::string::npos);
  auto back = ParseContract(yaml, "shop.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(ToYaml(*back), yaml);
  ASSERT_EQ(back->entity_types.size(), offline.entity_types.size() + 2);
  const EntityType& tag = back->entity_types.back();
  EXPECT_EQ(tag.extraction, "nested_field");
  EXPECT_EQ(tag.extraction_field, "tags[*]");
  EXPECT_TRUE(back->entity_types.front().RowType());
}

TEST_F(FieldTypes, BrokenExtractionEntriesNameLineAndField) {
  const std::string yaml = ToYaml(contract);
  struct Case {
    std::string from, to, field, what;
  };
  const std::vector<Case> cases = {
      {"method: nested_field, field: \"tags[*]\"", "method: magic, field: \"tags[*]\"",
       "extraction.method", "\"magic\" is not one of"},
      {"method: field, field: category", "method: field, field: colour", "extraction.field",
       "\"products.colour\" is not in the field catalog"},
      {"method: nested_field, field: \"tags[*]\"", "method: nested_field, field: category",
       "extraction.field", "is not a list path"},
      {"method: field, field: category", "method: field", "extraction.field",
       "missing (field reads its instances from a field)"},
  };
  for (const Case& c : cases) {
    std::string edited = yaml;
    const size_t at = edited.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    edited.replace(at, c.from.size(), c.to);
    size_t line = 1;
    for (size_t i = 0; i < at; ++i) line += edited[i] == '\n';
    auto r = ParseContract(edited, "shop.yaml");
    ASSERT_FALSE(r.ok()) << c.to;
    const std::string message = r.status().ToString();
    EXPECT_TRUE(Contains(message, "shop.yaml:" + std::to_string(line) + ":")) << message;
    EXPECT_TRUE(Contains(message, c.field)) << message;
    EXPECT_TRUE(Contains(message, c.what)) << message;
  }
}

TEST_F(FieldTypes, ThePlanHasOneInstancePerValueLinkedToItsRecords) {
  auto plan = PlanConstruction(dir, contract, ConstructionOptions{}, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  // Kitchen, Lighting; coffee, steel, led.
  EXPECT_EQ(plan->derived_entities, 5u);
  std::set<std::vector<std::string>> links;
  for (const PlannedRecord& r : plan->records) {
    for (const PlannedEntity& e : r.derived) links.insert({r.document_id, e.type, e.name});
  }
  const std::set<std::vector<std::string>> expected = {
      {"products.json#1", "Category", "Kitchen"}, {"products.json#1", "Tag", "coffee"},
      {"products.json#1", "Tag", "steel"},        {"products.json#2", "Category", "Kitchen"},
      {"products.json#2", "Tag", "coffee"},       {"products.json#3", "Category", "Lighting"},
      {"products.json#3", "Tag", "steel"},        {"products.json#3", "Tag", "led"},
      {"products.json#5", "Category", "Lighting"}, {"products.json#5", "Tag", "led"},
      {"products.json#6", "Category", "Kitchen"}, {"products.json#6", "Tag", "steel"},
  };
  EXPECT_EQ(links, expected);
  EXPECT_EQ(plan->unresolved_links, 0u);
}

TEST_F(FieldTypes, IngestedInstancesHaveProvenanceAndTypedLinks) {
  auto engine = Engine::Open(db);
  ASSERT_TRUE(engine.ok());
  auto r = (*engine)->Ingest(dir, contract, Offline());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->field_entities, 5u);
  EXPECT_EQ(r->unresolved_links, 0u);
  EXPECT_EQ(EntityTypeOf(db, "Kitchen"), "Category");
  EXPECT_EQ(EntityTypeOf(db, "led"), "Tag");
  EXPECT_EQ(DerivedFrom(db, "Kitchen"),
            (std::set<std::string>{"products.json#1", "products.json#2", "products.json#6"}));
  EXPECT_EQ(DerivedFrom(db, "steel"),
            (std::set<std::string>{"products.json#1", "products.json#3", "products.json#6"}));
  const auto facts = Facts(db);
  EXPECT_TRUE(facts.count({"Milk Frother", "IN_CATEGORY", "Kitchen"}));
  EXPECT_TRUE(facts.count({"Floor Lamp", "IN_CATEGORY", "Lighting"}));
  EXPECT_TRUE(facts.count({"Desk Lamp", "tags", "led"}));  // no declared relationship: the field
  EXPECT_FALSE(facts.count({"Gift Card", "IN_CATEGORY", "Kitchen"}));
  EXPECT_EQ(Count(db, "SELECT count(*) FROM entities WHERE type = 'Category'"), 2);
  auto stats = (*engine)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_DOUBLE_EQ(stats->schema.link_validity, 1.0);
  EXPECT_DOUBLE_EQ(stats->schema.provenance_completeness, 1.0);
  EXPECT_DOUBLE_EQ(stats->schema.schema_utility, 1.0);
  EXPECT_GE(stats->schema.relationship_types_used, 2);  // the foreign key and IN_CATEGORY

  // Dropping the types from the contract and re-ingesting removes their
  // entities and edges and leaves nothing dangling.
  auto again = (*engine)->Ingest(dir, offline, Offline());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(EntityTypeOf(db, "Kitchen"), "");
  EXPECT_FALSE(Facts(db).count({"Milk Frother", "IN_CATEGORY", "Kitchen"}));
  auto after = (*engine)->Stats();
  ASSERT_TRUE(after.ok());
  EXPECT_DOUBLE_EQ(after->schema.link_validity, 1.0);
}

TEST_F(FieldTypes, TwoInstanceTypesOfOneRecordLinkByTheirDeclaredRelationship) {
  RelationshipType tagged;
  tagged.name = "TAGGED_IN";
  tagged.from = "Tag";
  tagged.to = "Category";
  contract.relationships.push_back(tagged);
  auto plan = PlanConstruction(dir, contract, ConstructionOptions{}, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::set<std::vector<std::string>> links;
  for (const PlannedRecord& r : plan->records) {
    for (const PlannedLink& l : r.links) {
      if (l.relation == "TAGGED_IN") links.insert({l.subject, l.target});
    }
  }
  const std::set<std::vector<std::string>> expected = {
      {"coffee", "Kitchen"}, {"steel", "Kitchen"}, {"steel", "Lighting"}, {"led", "Lighting"}};
  EXPECT_EQ(links, expected);
  for (const PlannedRecord& r : plan->records) {
    for (const PlannedLink& l : r.links) {
      if (l.relation == "TAGGED_IN") {
        EXPECT_DOUBLE_EQ(l.confidence, 0.9);  // the type pattern only
      } else if (l.relation == "IN_CATEGORY") {
        EXPECT_DOUBLE_EQ(l.confidence, 1.0);  // names the instance's field
      }
    }
  }
}

TEST_F(FieldTypes, ExtensionKeepsFieldTypesAndDoesNotDuplicateThem) {
  // The same types arriving again add nothing.
  ExtensionResult same = ExtendContract(contract, WithFieldTypes(offline));
  EXPECT_TRUE(same.added.empty()) << same.added.front();
  EXPECT_EQ(same.contract.version, contract.version);
  // Offline re-induction (row types only) leaves them as they are.
  ExtensionResult rerun = ExtendContract(contract, offline);
  EXPECT_TRUE(rerun.added.empty());
  EXPECT_EQ(ToYaml(rerun.contract), ToYaml(contract));
  // A field type is not folded into the row type of its source.
  ExtensionResult onto_offline = ExtendContract(offline, contract);
  ASSERT_EQ(onto_offline.contract.entity_types.size(), offline.entity_types.size() + 2);
  EXPECT_EQ(onto_offline.contract.version, offline.version + 1);
  EXPECT_EQ(onto_offline.contract.entity_types.back().extraction, "nested_field");
  const EntityType* row = TypeOf(onto_offline.contract, "products");
  EXPECT_TRUE(row->RowType());
  EXPECT_EQ(row->attributes, TypeOf(offline, "products")->attributes);
}

// A planner that names the field type ("Category" = "lighting") gets the
// products whose category field holds it: the closed-world check reads a
// field type as its field in its source's records.
TEST_F(FieldTypes, APlannedConstraintOnAFieldTypeLooksUpItsSourceRecords) {
  // The stub outlives the engine, whose client keeps its connection open.
  RecordingJsonStub stub("/v1/chat/completions", [](const nlohmann::json&) {
    return ChatCompletionJson(R"({"tool_calls": [{"tool": "SchemaLookup", "entity_type": "category",
        "constraints": {"name": "lighting"}, "return_field": "name"}]})");
  });
  ASSERT_TRUE(stub.ok());
  ChatModelEnv env;
  auto engine = Engine::Open(db);
  ASSERT_TRUE(engine.ok());
  ASSERT_TRUE((*engine)->Ingest(dir, contract, Offline()).ok());
  env.Point(stub.BaseUrl());  // after ingestion: only the agent talks to the model
  AnswerOptions o;
  o.answerer = "extractive";
  o.schema.extension = "off";  // "lamps" names no type: only the plan is asked
  auto a = (*engine)->Ask("Which lamps are there?", o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_GE(a->steps.size(), 2u);
  EXPECT_EQ(a->steps[0].answer, "SchemaLookup");
  EXPECT_TRUE(Contains(a->steps[1].query, "category = Lighting")) << a->steps[1].query;
  std::set<std::string> cited;
  for (const Citation& c : a->citations) cited.insert(c.document_id);
  EXPECT_TRUE(cited.count("products.json#3")) << a->text;
  EXPECT_TRUE(cited.count("products.json#5")) << a->text;
  EXPECT_FALSE(cited.count("products.json#1")) << a->text;
  EXPECT_EQ(stub.requests().size(), 1u);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
