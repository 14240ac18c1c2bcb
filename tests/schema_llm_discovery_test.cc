// Two-pass LLM schema discovery (schema/llm_discovery.h) against a stub
// OpenAI chat server on loopback with fixed answers: a good run gives the
// merged contract; invented fields are validated away and reported; broken
// JSON is repaired or fails naming the pass; excluded fields never reach the
// model; the result always passes the linter.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "flowrag/schema.h"
#include "llm/chat_client.h"
#include "schema/llm_discovery.h"
#include "schema/matched_samples.h"
#include "schema/schema_proposal.h"
#include "stub_chat_client.h"
#include "stub_server.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using Json = nlohmann::json;

bool Contains(const std::vector<std::string>& lines, const std::string& needle) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(needle) != std::string::npos; });
}

const EntityType* FindType(const SchemaContract& c, const std::string& name) {
  for (const EntityType& t : c.entity_types) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const RelationshipType* FindRelationship(const SchemaContract& c, const std::string& name) {
  for (const RelationshipType& r : c.relationships) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

// The contract must survive the linter unchanged.
void ExpectLints(const SchemaContract& c) {
  const std::string yaml = ToYaml(c);
  auto back = ParseContract(yaml, "schema.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << yaml;
  EXPECT_EQ(ToYaml(*back), yaml);
}

class LlmDiscoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string customers = "customer_id,name,email,city\n";
    const char* cities[] = {"Oslo", "Lima", "Kyoto"};
    for (int i = 0; i < 8; ++i) {
      customers += std::to_string(i + 1) + ",Name " + std::to_string(i) + ",c" + std::to_string(i) +
                   "@example.com," + cities[i % 3] + "\n";
    }
    std::string orders = "order_id,customer_id,product,amount,order_date\n";
    const char* products[] = {"lamp", "desk", "chair", "shelf"};
    for (int i = 0; i < 12; ++i) {
      const std::string date = std::string("2024-01-") + (i + 1 < 10 ? "0" : "") + std::to_string(i + 1);
      orders += std::to_string(100 + i) + "," + std::to_string(i % 8 + 1) + "," + products[i % 4] +
                "," + std::to_string(10 * i + 5) + "," + date + "\n";
    }
    testing::WriteFile(dir_.File("customers.csv"), customers);
    testing::WriteFile(dir_.File("orders.csv"), orders);
    ASSERT_TRUE(stub_.ok());
    chat_ = testing::StubChatClient(stub_.BaseUrl());
    ASSERT_NE(chat_, nullptr);
  }

  void Induce() {
    auto s = InduceSchema(dir_.path());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    schema_ = std::move(s).value();
  }

  std::string Id(const std::string& source, const std::string& path) const {
    for (const FieldInfo& f : schema_.fields) {
      if (f.source == source && f.path == path) return f.id;
    }
    ADD_FAILURE() << source << "." << path << " is not in the catalog";
    return "";
  }

  // Answers pass 1 and pass 2 (told apart by the system message); the n-th
  // attempt of a pass (follow-up turns add messages) gets answers[n], the
  // last one repeating.
  void Serve(std::vector<std::string> pass1, std::vector<std::string> pass2,
             std::string finish1 = "stop") {
    stub_.SetHandler([=](const Json& body, httplib::Response& res, int) {
      const std::string system = body["messages"][0]["content"];
      const bool second = system.find("review and extend") != std::string::npos;
      const std::vector<std::string>& answers = second ? pass2 : pass1;
      const size_t attempt = (body["messages"].size() - 2) / 2;
      Json reply = testing::ChatCompletionJson(answers[std::min(attempt, answers.size() - 1)]);
      if (!second) reply["choices"][0]["finish_reason"] = finish1;
      res.set_content(reply.dump(), "application/json");
    });
  }

  Result<SchemaContract> Discover(LlmDiscoveryReport* report, LlmDiscoveryOptions o = {}) {
    return DiscoverWithLlm(schema_, dir_.path(), *chat_, o, report);
  }

  // All request texts the stub received.
  std::string Prompts() {
    std::string all;
    for (const auto& r : stub_.requests()) {
      for (const Json& m : r.body["messages"]) all += m["content"].get<std::string>() + "\n";
    }
    return all;
  }

  // A good pass-1 answer: renames Order, adds Product and City, names the
  // foreign key, adds a co-occurrence relationship and a temporal config.
  std::string GoodPass1() const {
    Json a = {
        {"observations", {{{"field_id", Id("orders", "order_date")}, {"snippet", "2024-01-01"}}}},
        {"entities",
         {{{"name", "Customer"},
           {"description", "A buyer."},
           {"source", "customers"},
           {"anchor", {Id("customers", "customer_id")}},
           {"attributes", {{{"field_id", Id("customers", "name")}, {"name", "name"}}}},
           {"extraction", {{"method", "row_as_entity"}, {"field_id", nullptr}}},
           {"confidence", 0.95}},
          {{"name", "purchase order"},
           {"source", "orders"},
           {"anchor", {Id("orders", "order_id")}},
           {"attributes", {Id("orders", "amount"), Id("orders", "order_date")}},
           {"extraction", {{"method", "row_as_entity"}}}},
          {{"name", "Product"},
           {"source", "orders"},
           {"attributes", {{{"field_id", Id("orders", "product")}}}},
           {"extraction", {{"method", "field"}, {"field_id", Id("orders", "product")}}}},
          {{"name", "City"},
           {"source", "customers"},
           {"extraction", {{"method", "field"}, {"field_id", "customers.city"}}}}}},
        {"relationships",
         {{{"type", "placed by"},
           {"from", "PurchaseOrder"},
           {"to", "Customer"},
           {"cardinality", "many-to-one"},
           {"extraction", "join_on_field"},
           {"from_field_id", Id("orders", "customer_id")},
           {"to_field_id", Id("customers", "customer_id")},
           {"confidence", 0.9}},
          {{"type", "CONTAINS_PRODUCT"},
           {"from", "PurchaseOrder"},
           {"to", "Product"},
           {"cardinality", "N:1"},
           {"extraction", "co_occurrence"}}}},
        {"temporal", {{"mode", "edge_properties"}, {"field_ids", {Id("orders", "order_date")}}}},
        {"notes", "two sources"}};
    return a.dump();
  }

  std::string GoodPass2() const {
    Json a = {
        {"added_entities", Json::array()},
        {"added_relationships",
         {{{"type", "LIVES_IN"},
           {"from", "Customer"},
           {"to", "City"},
           {"extraction", "semantic_extraction"},
           {"evidence", "customer 1 lives in Oslo"},
           {"confidence", 0.8}}}},
        {"added_attributes", {{{"entity", "Product"}, {"field_ids", {Id("orders", "amount")}}}}},
        {"renamed_entities", Json::array()},
        {"temporal_changes", nullptr},
        {"issues", {"the currency of amount is unknown"}},
        {"notes", ""}};
    return a.dump();
  }

  testing::TempDir dir_;
  InducedSchema schema_;
  testing::RecordingJsonStub stub_{"/v1/chat/completions", [](const Json&) {
                                     return Json{{"error", {{"message", "no handler"}}}};
                                   }};
  std::unique_ptr<ChatModel> chat_;
};

TEST_F(LlmDiscoveryTest, TwoPassRunMergesOverTheOfflineContract) {
  Induce();
  const SchemaContract offline = DeriveContract(schema_);
  ASSERT_EQ(offline.relationships.size(), 1u) << ToYaml(offline);
  ASSERT_EQ(offline.relationships[0].name, "CUSTOMER");
  Serve({GoodPass1()}, {GoodPass2()});
  LlmDiscoveryReport report;
  auto c = Discover(&report);
  ASSERT_TRUE(c.ok()) << c.status().ToString();

  EXPECT_EQ(c->generated_by, "llm:stub-model");
  EXPECT_EQ(report.pass1.calls, 1);
  EXPECT_EQ(report.pass2.calls, 1);
  EXPECT_DOUBLE_EQ(report.FieldValidity(), 1.0);
  EXPECT_TRUE(report.pass1.check.invalid.empty());
  // The structural layer is untouched.
  EXPECT_EQ(ToJson(c->structure), ToJson(offline.structure));

  // Order was renamed (normalised to PascalCase); its keys and attributes stay offline.
  ASSERT_EQ(c->entity_types.size(), 4u) << ToYaml(*c);
  EXPECT_EQ(FindType(*c, "Order"), nullptr);
  const EntityType* order = FindType(*c, "PurchaseOrder");
  ASSERT_NE(order, nullptr);
  EXPECT_EQ(order->source, "orders");
  EXPECT_EQ(order->identity_key, std::vector<std::string>{"order_id"});
  EXPECT_EQ(order->attributes, offline.entity_types[1].attributes);
  const EntityType* product = FindType(*c, "Product");
  ASSERT_NE(product, nullptr);
  EXPECT_EQ(product->source, "orders");
  EXPECT_EQ(product->identity_key, std::vector<std::string>{"product"});
  EXPECT_EQ(product->attributes,
            (std::vector<std::string>{"product", "amount"}));  // pass 2 added amount
  const EntityType* city = FindType(*c, "City");
  ASSERT_NE(city, nullptr);
  EXPECT_EQ(city->attributes, std::vector<std::string>{"city"});  // "customers.city" resolved

  // The foreign key keeps its fields and confidence under the model's name.
  const RelationshipType* placed = FindRelationship(*c, "PLACED_BY");
  ASSERT_NE(placed, nullptr);
  EXPECT_EQ(FindRelationship(*c, "CUSTOMER"), nullptr);
  EXPECT_EQ(placed->from, "PurchaseOrder");
  EXPECT_EQ(placed->to, "Customer");
  EXPECT_EQ(placed->from_field, "customer_id");
  EXPECT_EQ(placed->confidence, offline.relationships[0].confidence);
  const RelationshipType* contains = FindRelationship(*c, "CONTAINS_PRODUCT");
  ASSERT_NE(contains, nullptr);
  EXPECT_EQ(contains->extraction, "");  // co-occurrence: deterministic
  const RelationshipType* lives = FindRelationship(*c, "LIVES_IN");
  ASSERT_NE(lives, nullptr);
  EXPECT_DOUBLE_EQ(lives->confidence, 0.8);
  EXPECT_EQ(lives->extraction, "llm");  // semantic_extraction: B.5.3
  EXPECT_EQ(c->relationships.size(), 3u);

  // What the contract cannot hold yet is in the report.
  EXPECT_EQ(report.proposal.temporal.mode, "edge_properties");
  EXPECT_EQ(report.proposal.temporal.fields, std::vector<std::string>{"orders.order_date"});
  EXPECT_TRUE(Contains(report.proposal.issues, "currency"));
  EXPECT_TRUE(Contains(report.merge, "renamed PurchaseOrder"));
  EXPECT_TRUE(Contains(report.pass1.check.adjusted, "\"purchase order\" written as PurchaseOrder"));
  ExpectLints(*c);

  // Pass 1 saw the catalog, the hints and quoted records; pass 2 the pass-1 schema.
  const auto requests = stub_.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].body["response_format"]["type"], "json_object");
  const std::string p1 = requests[0].body["messages"][1]["content"];
  EXPECT_NE(p1.find(Id("orders", "customer_id")), std::string::npos);
  EXPECT_NE(p1.find("orders.customer_id -> customers.customer_id"), std::string::npos);
  EXPECT_NE(p1.find("representative"), std::string::npos);
  EXPECT_NE(p1.find("@example.com"), std::string::npos);
  // ... and matched samples (A.8.1): customer 1 with both of its orders.
  EXPECT_EQ(report.pass1.matched_sets, 5u);
  const size_t matched = p1.find("MATCHED RECORDS");
  ASSERT_NE(matched, std::string::npos);
  const size_t set1 = p1.find("orders.customer_id = customers.customer_id = \"1\": 2 record(s) of "
                              "\"orders\", 1 of \"customers\"", matched);
  ASSERT_NE(set1, std::string::npos) << p1.substr(matched);
  EXPECT_NE(p1.find("record 1 of 12, matched", set1), std::string::npos);
  EXPECT_NE(p1.find("record 9 of 12, matched", set1), std::string::npos);
  EXPECT_NE(p1.find("\"name\":\"Name 0\"", set1), std::string::npos);
  const std::string p2 = requests[1].body["messages"][1]["content"];
  EXPECT_NE(p2.find("EXISTING SCHEMA"), std::string::npos);
  EXPECT_EQ(p2.find("MATCHED RECORDS"), std::string::npos);
  EXPECT_NE(p2.find("PurchaseOrder"), std::string::npos);
}

TEST_F(LlmDiscoveryTest, InventedFieldsAreDroppedAndReported) {
  Induce();
  Json pass1 = {
      {"entities",
       {{{"name", "Customer"},
         {"source", "customers"},
         {"attributes", {Id("customers", "name"), "customers.loyalty_tier", "deadbeefdeadbeef"}},
         {"extraction", "row_as_entity"}},
        {{"name", "Invoice"},
         {"source", "invoices"},
         {"attributes", {"invoices.total", "0123456789abcdef"}},
         {"extraction", "row_as_entity"}}}},
      {"relationships",
       {{{"type", "BILLED_TO"}, {"from", "Invoice"}, {"to", "Customer"}},
        {{"type", "IN_REGION"},
         {"from", "Customer"},
         {"to", "Order"},
         {"extraction", "join_on_field"},
         {"from_field_id", "customers.region"}}}}};
  Json pass2 = {{"added_attributes", {{{"entity", "Customer"}, {"field_ids", {"customers.vip"}}}}},
                {"added_entities",
                 {{{"name", "Segment"}, {"source", "customers"}, {"attributes", {"segment"}}}}}};
  Serve({pass1.dump()}, {pass2.dump()});
  LlmDiscoveryReport report;
  auto c = Discover(&report);
  ASSERT_TRUE(c.ok()) << c.status().ToString();

  const ProposalCheck& p1 = report.pass1.check;
  EXPECT_TRUE(Contains(p1.invalid, "customers.loyalty_tier"));
  EXPECT_TRUE(Contains(p1.invalid, "deadbeefdeadbeef"));
  EXPECT_TRUE(Contains(p1.invalid, "invoices.total"));
  EXPECT_TRUE(Contains(p1.invalid, "customers.region"));
  EXPECT_EQ(p1.references, 6);
  EXPECT_EQ(p1.valid_references, 1);
  EXPECT_NEAR(p1.FieldValidity(), 1.0 / 6, 1e-12);
  EXPECT_TRUE(Contains(p1.dropped, "Invoice"));
  EXPECT_TRUE(Contains(p1.dropped, "BILLED_TO"));
  EXPECT_TRUE(Contains(p1.dropped, "IN_REGION"));
  EXPECT_TRUE(Contains(report.pass2.check.invalid, "customers.vip"));
  EXPECT_TRUE(Contains(report.pass2.check.dropped, "Segment"));
  EXPECT_LT(report.FieldValidity(), 1.0);

  // Nothing invented reaches the contract; the offline layer is all there.
  EXPECT_EQ(c->entity_types.size(), 2u) << ToYaml(*c);
  EXPECT_EQ(FindType(*c, "Invoice"), nullptr);
  const EntityType* customer = FindType(*c, "Customer");
  ASSERT_NE(customer, nullptr);
  EXPECT_EQ(std::count(customer->attributes.begin(), customer->attributes.end(), "loyalty_tier"),
            0);
  EXPECT_EQ(c->relationships.size(), 1u);
  EXPECT_EQ(FindRelationship(*c, "BILLED_TO"), nullptr);
  ExpectLints(*c);
  // Pass 2 was shown only the validated schema.
  const std::string p2 = stub_.requests().at(1).body["messages"][1]["content"];
  const std::string existing = p2.substr(p2.find("EXISTING SCHEMA"));
  EXPECT_EQ(existing.find("loyalty_tier"), std::string::npos);
  EXPECT_EQ(existing.find("Invoice"), std::string::npos);
}

TEST_F(LlmDiscoveryTest, BrokenJsonIsRepaired) {
  Induce();
  // A fence, prose, single quotes, unquoted keys and trailing commas.
  const std::string pass1 =
      "Here is the schema:\n```json\n{entities: [{'name': 'Client', 'source': 'customers', "
      "'anchor': ['" +
      Id("customers", "customer_id") +
      "'], 'extraction': 'row_as_entity',},], relationships: [],}\n```\nDone.";
  Serve({pass1}, {R"({"issues": [], "notes": "nothing to add",})"});
  LlmDiscoveryReport report;
  auto c = Discover(&report);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(report.pass1.repairs.empty());
  EXPECT_EQ(report.pass1.calls, 1);
  EXPECT_NE(FindType(*c, "Client"), nullptr);
  EXPECT_EQ(FindType(*c, "Customer"), nullptr);
  EXPECT_EQ(FindRelationship(*c, "CUSTOMER")->to, "Client");  // the FK follows the rename
  ExpectLints(*c);
}

TEST_F(LlmDiscoveryTest, UnusableAnswerAsksAgainThenFailsNamingThePass) {
  Induce();
  // Pass 1: prose, then JSON after the follow-up turn.
  Serve({"I cannot produce a schema.", GoodPass1()}, {GoodPass2()});
  LlmDiscoveryReport report;
  auto c = Discover(&report);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(report.pass1.calls, 2);
  EXPECT_TRUE(Contains(report.pass1.repairs, "asked again"));
  const auto requests = stub_.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[1].body["messages"].size(), 4u);
  EXPECT_NE(requests[1].body["messages"][3]["content"].get<std::string>().find("could not be used"),
            std::string::npos);

  // Pass 1 never usable: a clear error naming the pass.
  Serve({"no", R"({"schema": "none"})"}, {GoodPass2()});
  auto bad1 = Discover(nullptr);
  ASSERT_FALSE(bad1.ok());
  EXPECT_EQ(bad1.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(bad1.status().message().find("pass 1 (deep discovery)"), std::string::npos)
      << bad1.status().ToString();
  EXPECT_NE(bad1.status().message().find("\"entities\""), std::string::npos);

  // Pass 2 never usable, no follow-up turns.
  Serve({GoodPass1()}, {"[1, 2"});
  LlmDiscoveryOptions o;
  o.format_repair_turns = 0;
  auto bad2 = Discover(nullptr, o);
  ASSERT_FALSE(bad2.ok());
  EXPECT_NE(bad2.status().message().find("pass 2 (validation)"), std::string::npos)
      << bad2.status().ToString();
}

TEST_F(LlmDiscoveryTest, TruncatedAnswerKeepsCompleteRecords) {
  Induce();
  std::string pass1 = GoodPass1();
  pass1 = pass1.substr(0, pass1.find("CONTAINS_PRODUCT") + 5);  // cut inside a relationship
  Serve({pass1}, {GoodPass2()}, "length");
  LlmDiscoveryReport report;
  auto c = Discover(&report);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(report.pass1.truncated);
  EXPECT_NE(FindRelationship(*c, "PLACED_BY"), nullptr);
  EXPECT_EQ(FindRelationship(*c, "CONTAINS_PRODUCT"), nullptr);
  ExpectLints(*c);
}

TEST_F(LlmDiscoveryTest, ExcludedFieldsNeverReachTheModel) {
  testing::WriteFile(dir_.File("flowrag_exclude.yaml"),
                     "exclude:\n  fields: [\"customers.email\"]\n");
  Induce();
  Serve({GoodPass1()}, {GoodPass2()});
  auto c = Discover(nullptr);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const std::string prompts = Prompts();
  EXPECT_NE(prompts.find("Oslo"), std::string::npos);  // samples are quoted
  EXPECT_EQ(prompts.find("@example.com"), std::string::npos);
}

TEST_F(LlmDiscoveryTest, ChangedFolderAndBadOptionsFailBeforeAnyCall) {
  Induce();
  Serve({GoodPass1()}, {GoodPass2()});
  LlmDiscoveryOptions o;
  o.max_tokens = 0;
  EXPECT_EQ(Discover(nullptr, o).status().code(), StatusCode::kInvalidArgument);
  testing::WriteFile(dir_.File("orders.csv"), "order_id,customer_id\n1,1\n");
  auto stale = Discover(nullptr);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(stale.status().message().find("induce the schema again"), std::string::npos);
  EXPECT_TRUE(stub_.requests().empty());
}

FlatRecord Record(std::vector<std::pair<std::string, std::string>> values) {
  FlatRecord r;
  r.values = std::move(values);
  return r;
}

TEST(MatchedSamplingTest, GroupsEveryRecordOfBothSidesByTheSharedValue) {
  ForeignKey fk;
  fk.from_source = "orders";
  fk.from_field = "customer";
  fk.to_source = "customers";
  fk.to_field = "id";
  // c2 has three orders, c1 one, c9 none on the other side, one order has no customer.
  const std::vector<FlatRecord> orders = {Record({{"customer", "c2"}}), Record({{"customer", "c9"}}),
                                          Record({{"customer", "c1"}}), Record({{"customer", "c2"}}),
                                          Record({{"customer", ""}}), Record({{"customer", "c2"}})};
  const std::vector<FlatRecord> customers = {Record({{"id", "c1"}}), Record({{"id", "c2"}}),
                                             Record({{"id", "c3"}})};
  const auto sets = MatchedSampling(fk, orders, customers);
  ASSERT_EQ(sets.size(), 2u);  // c9 and c3 are on one side only
  EXPECT_EQ(sets[0].value, "c2");  // first seen in the referencing source
  EXPECT_EQ(sets[0].from_records, (std::vector<size_t>{0, 3, 5}));
  EXPECT_EQ(sets[0].to_records, std::vector<size_t>{1});
  EXPECT_EQ(sets[1].value, "c1");
  EXPECT_EQ(sets[1].from_records, std::vector<size_t>{2});

  // List paths contribute every element; a record counts once per value.
  fk.from_field = "tags[*]";
  fk.to_field = "tag";
  const std::vector<FlatRecord> posts = {Record({{"tags[*]", "a"}, {"tags[*]", "b"}, {"tags[*]", "a"}}),
                                         Record({{"tags[*]", "b"}})};
  const std::vector<FlatRecord> tags = {Record({{"tag", "b"}}), Record({{"tag", "a"}})};
  const auto by_tag = MatchedSampling(fk, posts, tags);
  ASSERT_EQ(by_tag.size(), 2u);
  EXPECT_EQ(by_tag[0].value, "a");
  EXPECT_EQ(by_tag[0].from_records, std::vector<size_t>{0});
  EXPECT_EQ(by_tag[1].from_records, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(by_tag[1].to_records, std::vector<size_t>{0});

  // At most max_values values, spread over the shared ones.
  std::vector<FlatRecord> many_from, many_to;
  for (int i = 0; i < 100; ++i) {
    many_from.push_back(Record({{"tags[*]", std::to_string(i)}}));
    many_to.push_back(Record({{"tag", std::to_string(i)}}));
  }
  const auto spread = MatchedSampling(fk, many_from, many_to, 4);
  ASSERT_EQ(spread.size(), 4u);
  EXPECT_EQ(spread[0].value, "0");
  EXPECT_EQ(spread[1].value, "25");
  EXPECT_EQ(spread[3].value, "75");
  EXPECT_TRUE(MatchedSampling(fk, many_from, many_to, 0).empty());
}

TEST(SchemaNamesTest, PascalAndUpperSnake) {
  EXPECT_EQ(PascalCaseName("customer order"), "CustomerOrder");
  EXPECT_EQ(PascalCaseName("customer_order"), "CustomerOrder");
  EXPECT_EQ(PascalCaseName("customerOrder"), "CustomerOrder");
  EXPECT_EQ(PascalCaseName("3d model"), "T3dModel");
  EXPECT_EQ(PascalCaseName("--"), "");
  EXPECT_EQ(UpperSnakeName("placedBy"), "PLACED_BY");
  EXPECT_EQ(UpperSnakeName("placed by"), "PLACED_BY");
  EXPECT_EQ(UpperSnakeName("PLACED-BY"), "PLACED_BY");
  EXPECT_EQ(UpperSnakeName("PLACED_BY"), "PLACED_BY");
  EXPECT_EQ(UpperSnakeName("2nd"), "R_2ND");
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
