// The schema-guided agent (agent/schema_agent.h) on a small multi-source
// folder: routing by the preference order, the out-of-scope and grounding
// gates, composite confidence, retries and citations of source records.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "flowrag/engine.h"
#include "flowrag/schema.h"
#include "shop_sources.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

class SchemaAgentTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    engine_ = testing::OpenShopStore(dir_->path()).release();
    ASSERT_NE(engine_, nullptr);
  }
  static void TearDownTestSuite() {
    delete engine_;
    delete dir_;
  }

  static Answer Ask(const std::string& question, AnswerOptions options = {}) {
    auto a = engine_->Ask(question, options);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return a.ok() ? *a : Answer{};
  }

  static testing::TempDir* dir_;
  static Engine* engine_;
};

testing::TempDir* SchemaAgentTest::dir_ = nullptr;
Engine* SchemaAgentTest::engine_ = nullptr;

TEST_F(SchemaAgentTest, TypedConstraintRoutesToSchemaLookupAndCitesTheRecord) {
  const Answer a = Ask("What is the city of Acme Corp?");
  EXPECT_EQ(a.pipeline, "schema");  // "auto" picks the agent when the store has a contract
  EXPECT_EQ(a.answerer, "schema-lookup");
  EXPECT_EQ(a.text, "Berlin");
  EXPECT_DOUBLE_EQ(a.confidence, 1.0);  // one tool, exact match, grounded in the record
  ASSERT_EQ(a.citations.size(), 1u);
  EXPECT_EQ(a.citations[0].document_id, "customers.csv:2");  // the SourceRecord: file and line
  EXPECT_EQ(a.citations[0].quote, "city: Berlin");
  ASSERT_EQ(a.steps.size(), 1u);
  EXPECT_NE(a.steps[0].query.find("SchemaLookup(Customer"), std::string::npos);
}

TEST_F(SchemaAgentTest, EntityNamesAreKnownValues) {
  const Answer a = Ask("What is the amount of order 1003?");
  EXPECT_EQ(a.answerer, "schema-lookup");
  EXPECT_EQ(a.text, "1200.00");
  ASSERT_FALSE(a.citations.empty());
  EXPECT_EQ(a.citations[0].document_id, "orders.csv:4");
}

TEST_F(SchemaAgentTest, PluralQuestionListsEveryMatchingRecord) {
  const Answer a = Ask("Which customers are in the enterprise segment?");
  EXPECT_EQ(a.text, "Acme Corp, Umbrella, Hooli");
  EXPECT_EQ(a.citations.size(), 3u);
}

TEST_F(SchemaAgentTest, ContainedMentionScoresPointEight) {
  // "Vandelay" is contained in the known value "Vandelay Industries": m = 0.8.
  const Answer a = Ask("What is the city of Vandelay?");
  EXPECT_EQ(a.text, "New York");
  EXPECT_NEAR(a.confidence, 0.8, 1e-9);
}

TEST_F(SchemaAgentTest, MisspelledMentionMatchesFuzzilyWithALowerScore) {
  // Exact, then contained, then fuzzy (D.1): "Acme Crop" is one
  // transposition from "Acme Corp" (9 characters: m = 0.8 · 8/9), "Vandelay
  // Industreis" one from "Vandelay Industries" (0.8 · 18/19).
  const Answer a = Ask("What is the city of Acme Crop?");
  EXPECT_EQ(a.answerer, "schema-lookup");
  EXPECT_EQ(a.text, "Berlin");
  EXPECT_NEAR(a.confidence, 0.8 * 8.0 / 9.0, 1e-9);
  const Answer v = Ask("What is the city of Vandelay Industreis?");
  EXPECT_EQ(v.text, "New York");
  EXPECT_NEAR(v.confidence, 0.8 * 18.0 / 19.0, 1e-9);
  // Two edits in a short name are too many: no match, and no answer from it.
  const Answer far = Ask("What is the city of Glbx?");
  EXPECT_NE(far.text, "Paris");
}

TEST_F(SchemaAgentTest, LookupWithoutTheAskedFieldRetriesWithVectorRag) {
  const Answer a = Ask("Where does Acme Corp plan to expand?");
  ASSERT_TRUE(a.answered);
  EXPECT_EQ(a.text, "Munich");
  ASSERT_EQ(a.steps.size(), 2u);
  EXPECT_NE(a.steps[0].query.find("SchemaLookup"), std::string::npos);
  EXPECT_NE(a.steps[0].summary.find("next: VectorRAG"), std::string::npos);
  EXPECT_NE(a.steps[1].query.find("VectorRAG"), std::string::npos);
  // c = c_link (after a retry) · c_node (exact) · c_ground (0.9: the span is in a cited passage),
  // possibly discounted for a low dense similarity.
  EXPECT_LE(a.confidence, 0.9 * 0.9 + 1e-9);
  EXPECT_GT(a.confidence, 0.0);
  ASSERT_FALSE(a.citations.empty());
  EXPECT_EQ(a.citations[0].document_id, "notes/acme.md");
}

TEST_F(SchemaAgentTest, BridgeValueIsFollowedToItsLinkedDocument) {
  // The city is looked up, then the question is answered on the city's page.
  const Answer a = Ask("How many inhabitants live in the city of Acme Corp?");
  ASSERT_TRUE(a.answered);
  EXPECT_NE(a.text.find("3.7 million"), std::string::npos) << a.text;
  ASSERT_EQ(a.steps.size(), 2u);
  EXPECT_NE(a.steps[0].query.find("-> city"), std::string::npos);
  EXPECT_EQ(a.steps[1].query, "GraphTraverse(link: Berlin)");
  ASSERT_FALSE(a.citations.empty());
  EXPECT_EQ(a.citations[0].document_id, "notes/berlin.md");
  EXPECT_NEAR(a.confidence, 0.9 * 0.9, 1e-9);  // c_link after the hop · c_node 1 · c_ground 0.9
  // C.2: no type or field of the schema is about inhabitants.
  ASSERT_FALSE(a.warnings.empty());
  EXPECT_EQ(a.warnings[0], "schema sufficiency: no entity type or field for \"inhabitants\"");
}

TEST_F(SchemaAgentTest, SufficiencyCheckIsQuietWhenTheSchemaCoversTheQuestion) {
  for (const char* q : {"What is the city of Acme Corp?", "Which customers are in the enterprise segment?",
                        "What is the amount of order 1003?"}) {
    const Answer a = Ask(q);
    for (const std::string& w : a.warnings) EXPECT_EQ(w.find("sufficiency"), std::string::npos) << q;
  }
}

TEST_F(SchemaAgentTest, RetrievedPageIsFollowedBackToTheRecordsLinkingToIt) {
  // No constraint names a record; the page found by dense retrieval is what
  // Acme Corp's city links to, and the question asks for the customer's name.
  const Answer a = Ask("What is the name of the customer in the capital of Germany?");
  ASSERT_TRUE(a.answered) << a.reasoning;
  EXPECT_EQ(a.text, "Acme Corp");
  ASSERT_EQ(a.steps.size(), 2u);
  EXPECT_EQ(a.steps[0].query.rfind("VectorRAG(", 0), 0u);
  EXPECT_EQ(a.steps[1].query, "GraphTraverse(reverse link: Berlin -> Customer.name)");
  ASSERT_EQ(a.citations.size(), 2u);
  EXPECT_EQ(a.citations[0].document_id, "customers.csv:2");
  EXPECT_EQ(a.citations[0].quote, "name: Acme Corp");
  EXPECT_EQ(a.citations[1].document_id, "notes/berlin.md");
  EXPECT_NEAR(a.confidence, 0.9, 1e-9);  // c_link after the hop, one record
}

TEST_F(SchemaAgentTest, ACellNamingAPageByItsShortTitleLinksBothWays) {
  // "Palo Alto" in the table is the page "Palo Alto, California".
  const Answer hop = Ask("Which county is the city of Hooli in?");
  ASSERT_TRUE(hop.answered) << hop.reasoning;
  EXPECT_NE(hop.text.find("Santa Clara County"), std::string::npos) << hop.text;
  ASSERT_EQ(hop.steps.size(), 2u);
  EXPECT_EQ(hop.steps[1].query, "GraphTraverse(link: Palo Alto)");
  ASSERT_FALSE(hop.citations.empty());
  EXPECT_EQ(hop.citations[0].document_id, "notes/palo_alto.md");

  const Answer back = Ask("What is the name of the customer in the city where technology companies were founded in garages?");
  ASSERT_TRUE(back.answered) << back.reasoning;
  EXPECT_EQ(back.text, "Hooli");
  ASSERT_EQ(back.steps.size(), 2u);
  EXPECT_EQ(back.steps[1].query, "GraphTraverse(reverse link: Palo Alto, California -> Customer.name)");
  ASSERT_EQ(back.citations.size(), 2u);
  EXPECT_EQ(back.citations[0].document_id, "customers.csv:6");
}

TEST_F(SchemaAgentTest, DescriptiveQuestionGoesToVectorRagFirst) {
  // Globex is a known value, but "why" asks for an explanation, not a field.
  const Answer a = Ask("Why did Globex get a replacement?");
  ASSERT_FALSE(a.steps.empty());
  EXPECT_EQ(a.steps[0].query.rfind("VectorRAG(", 0), 0u) << a.steps[0].query;
  ASSERT_FALSE(a.citations.empty());
  EXPECT_EQ(a.citations[0].document_id, "notes/globex.md");
  // The same entity asked for a field still goes to SchemaLookup first.
  const Answer field = Ask("What is the city of Globex?");
  ASSERT_FALSE(field.steps.empty());
  EXPECT_EQ(field.steps[0].query.rfind("SchemaLookup(", 0), 0u);
}

TEST_F(SchemaAgentTest, LookupAnswersCarryDenseContextAfterTheirRecords) {
  const Answer a = Ask("What is the city of Acme Corp?");
  ASSERT_GE(a.retrieval.passages.size(), 2u);
  EXPECT_EQ(a.retrieval.passages[0].document_id, "customers.csv:2");  // the record first
  EXPECT_EQ(a.citations.size(), 1u);                                   // context is not cited
}

TEST_F(SchemaAgentTest, ValueOfTheAskedFieldIsNotFollowed) {
  const Answer a = Ask("Which city is Acme Corp in?");
  EXPECT_EQ(a.text, "Berlin");
  EXPECT_EQ(a.answerer, "schema-lookup");
}

TEST_F(SchemaAgentTest, ForeignKeyIsFollowedBackToTheRecordsOfTheAskedType) {
  // The constraint matches a Customer; the question asks for Orders: the
  // CUSTOMER relationship (orders.customer_id → customers) is followed, and
  // the customer's own name is never the answer.
  const Answer a = Ask("Which orders did Acme Corp place?");
  ASSERT_TRUE(a.answered) << a.reasoning;
  EXPECT_EQ(a.answerer, "schema-lookup");
  EXPECT_EQ(a.text, "Order 1001, Order 1003");
  ASSERT_EQ(a.steps.size(), 2u);
  EXPECT_EQ(a.steps[0].query, "SchemaLookup(Customer: name = Acme Corp)");
  EXPECT_EQ(a.steps[1].query, "GraphTraverse(Customer -[CUSTOMER]-> Order)");
  // Each answer record, then the record the constraint matched.
  ASSERT_EQ(a.citations.size(), 3u);
  EXPECT_EQ(a.citations[0].document_id, "orders.csv:2");
  EXPECT_EQ(a.citations[1].document_id, "orders.csv:4");
  EXPECT_EQ(a.citations[2].document_id, "customers.csv:2");
  // c_link = the foreign key's confidence: 0.5 + 0.3 · 5/6 + 0.15 (exact name).
  EXPECT_NEAR(a.confidence, 0.9, 1e-9);
}

TEST_F(SchemaAgentTest, ForeignKeyIdIsResolvedToTheReferencedEntity) {
  for (const char* q : {"Which customer placed order 1004?", "Who placed order 1004?"}) {
    const Answer a = Ask(q);
    ASSERT_TRUE(a.answered) << q << ": " << a.reasoning;
    EXPECT_EQ(a.text, "Initech") << q;  // not "C003", not "Order 1004"
    ASSERT_EQ(a.citations.size(), 2u) << q;
    EXPECT_EQ(a.citations[0].document_id, "customers.csv:4");
    EXPECT_EQ(a.citations[0].quote, "Customer: Initech");
    EXPECT_EQ(a.citations[1].document_id, "orders.csv:5");
    EXPECT_EQ(a.citations[1].quote, "customer_id: C003");  // the reference followed
  }
  // Asked for by its full name, the reference itself is the answer.
  const Answer id = Ask("What is the customer id of order 1004?");
  EXPECT_EQ(id.text, "C003");
  EXPECT_DOUBLE_EQ(id.confidence, 1.0);
}

TEST_F(SchemaAgentTest, FieldOfALinkedRecordIsLookedUpThroughTheRelationship) {
  const Answer city = Ask("What is the city of the customer who placed order 1004?");
  EXPECT_EQ(city.text, "Austin");
  ASSERT_FALSE(city.citations.empty());
  EXPECT_EQ(city.citations[0].quote, "city: Austin");
  // A year of the question narrows the linked records.
  const Answer in_2022 = Ask("Which order did Acme Corp place in 2022?");
  EXPECT_EQ(in_2022.text, "Order 1003");
}

TEST_F(SchemaAgentTest, CountAndTotalOverLinkedRecords) {
  const Answer n = Ask("How many orders did Acme Corp place?");
  EXPECT_EQ(n.text, "2");
  EXPECT_EQ(n.citations.size(), 3u);  // both orders and the customer
  const Answer sum = Ask("What is the total amount of orders by Acme Corp?");
  EXPECT_EQ(sum.text, "1450.00");
  const Answer count = Ask("How many customers are in the enterprise segment?");
  EXPECT_EQ(count.text, "3");
}

TEST_F(SchemaAgentTest, VectorRagKeepsOnlyPassagesAboutTheConstrainedEntity) {
  AnswerOptions o;
  o.schema.max_retries = 1;  // SchemaLookup (no value), then VectorRAG
  const Answer a = Ask("What was reported about the delivery of Acme Corp?", o);
  ASSERT_EQ(a.steps.size(), 2u);
  EXPECT_EQ(a.steps[1].query.rfind("VectorRAG(", 0), 0u);
  EXPECT_NE(a.steps[1].summary.find("filter (entities Acme Corp) kept"), std::string::npos)
      << a.steps[1].summary;
  // The Globex ticket is about deliveries too, but not about Acme Corp: filtered out, not reordered.
  ASSERT_TRUE(a.answered) << a.reasoning;
  ASSERT_FALSE(a.retrieval.passages.empty());
  for (const ScoredPassage& p : a.retrieval.passages) {
    EXPECT_NE(p.document_id, "notes/globex.md");
    EXPECT_NE(p.document_id, "customers.csv:3");
  }
}

TEST_F(SchemaAgentTest, VectorRagPadsTopKFromTheUnfilteredRanking) {
  // Initech has its record and one order; the rest of the ranking is about
  // other customers. The filter's two passages come first, then the
  // unfiltered ranking fills top_k (passages about no other entity before
  // those about one), so the answer reads as much evidence as without a filter.
  AnswerOptions o;
  o.schema.max_retries = 1;
  const Answer a = Ask("What was said about Initech?", o);
  ASSERT_EQ(a.steps.size(), 2u);
  EXPECT_NE(a.steps[1].summary.find("filter (entities Initech) kept 2 of"), std::string::npos) << a.steps[1].summary;
  EXPECT_NE(a.steps[1].summary.find("then 3 of the unfiltered ranking"), std::string::npos) << a.steps[1].summary;
  std::vector<std::string> docs;
  for (const ScoredPassage& p : a.retrieval.passages) docs.push_back(p.document_id);
  ASSERT_EQ(docs.size(), o.query.top_k);
  EXPECT_EQ(docs[0], "customers.csv:4");
  EXPECT_EQ(docs[1], "orders.csv:5");
  EXPECT_EQ(std::set<std::string>(docs.begin(), docs.end()).size(), docs.size());  // no duplicates
}

TEST_F(SchemaAgentTest, YesNoAnswerIsGroundedByTheSentenceItCites) {
  const Answer a = Ask("Did Acme Corp plan to expand into Munich?");
  ASSERT_TRUE(a.answered) << a.reasoning;
  EXPECT_EQ(a.text, "yes");
  ASSERT_FALSE(a.citations.empty());
  EXPECT_EQ(a.citations[0].document_id, "notes/acme.md");
  EXPECT_NE(a.steps.back().summary.find("grounded (0.7"), std::string::npos) << a.steps.back().summary;
}

TEST_F(SchemaAgentTest, ADefinedTermAfterADeterminerIsNotAnUnknownName) {
  // "the Company" names no record, but it is no out-of-scope entity either.
  const Answer a = Ask("What did the Company renew in February 2022?");
  EXPECT_EQ(a.reasoning.find("out of scope"), std::string::npos) << a.reasoning;
  ASSERT_TRUE(a.answered);
  ASSERT_FALSE(a.citations.empty());
  EXPECT_EQ(a.citations[0].document_id, "notes/acme.md");
}

TEST_F(SchemaAgentTest, VectorRagFilterThatKeepsNothingFallsBackAndSaysSo) {
  // Nothing about Acme Corp states 2023 (its orders are 2021 and 2022).
  const Answer a = Ask("What did Acme Corp renew in 2023?");
  const std::string note = "filter (entities Acme Corp; years 2023) left no passage; the unfiltered ranking is used";
  bool warned = false;
  for (const std::string& w : a.warnings) warned = warned || w.find(note) != std::string::npos;
  EXPECT_TRUE(warned);
  bool in_step = false;
  for (const AnswerStep& s : a.steps) in_step = in_step || s.summary.find(note) != std::string::npos;
  EXPECT_TRUE(in_step);
}

TEST_F(SchemaAgentTest, SufficiencyCheckSkipsVerbsQualifiersAndNames) {
  AnswerOptions o;
  o.schema.ood_gate = false;
  o.schema.max_retries = 0;
  // The first content word after the question word is a verb ("prefers"),
  // a qualifier ("latest", "total") or a name ("Zed"), not a concept.
  for (const char* q : {"Who prefers delivery on Mondays?", "What is the latest order of Initech?",
                        "What is the total amount of orders by Acme Corp?", "What does Zed ship?",
                        "What does the Zed warehouse ship?", "What is the number of orders of Globex?",
                        "What are the names of the customers in the smb segment?"}) {
    const Answer a = Ask(q, o);
    for (const std::string& w : a.warnings) EXPECT_EQ(w.find("sufficiency"), std::string::npos) << q << ": " << w;
  }
  // Real gaps are still found, past the qualifier.
  const Answer revenue = Ask("What is the total revenue of Globex?", o);
  ASSERT_FALSE(revenue.warnings.empty());
  EXPECT_EQ(revenue.warnings[0], "schema sufficiency: no entity type or field for \"revenue\"");
  const Answer suppliers = Ask("Which suppliers does Acme Corp use?", o);
  ASSERT_FALSE(suppliers.warnings.empty());
  EXPECT_EQ(suppliers.warnings[0], "schema sufficiency: no entity type or field for \"suppliers\"");
}

TEST_F(SchemaAgentTest, RealTimeQuestionIsOutOfScope) {
  const Answer a = Ask("What did Initech order today?");
  EXPECT_FALSE(a.answered);
  EXPECT_EQ(a.text, "Insufficient Information");
  EXPECT_NE(a.reasoning.find("out of scope"), std::string::npos);
  EXPECT_TRUE(a.steps.empty());  // the gate runs before any tool
}

TEST_F(SchemaAgentTest, YearOutsideTheDataIsOutOfScope) {
  const Answer a = Ask("What did Globex order in 1995?");
  EXPECT_FALSE(a.answered);
  EXPECT_NE(a.reasoning.find("1995"), std::string::npos);
}

TEST_F(SchemaAgentTest, AYearTheDataHasKeepsAComparisonInScope) {
  // 2022 is in the data; 1995 alone would be out of scope (above).
  const Answer a = Ask("What did Globex order in 2022 and 1995?");
  EXPECT_EQ(a.reasoning.find("out of scope"), std::string::npos) << a.reasoning;
  EXPECT_FALSE(a.steps.empty());
}

TEST_F(SchemaAgentTest, MonthsAndReportingPeriodsAreNotUnknownNames) {
  // No source writes "December" or "FY2022": they qualify time, they name
  // nothing the data lacks. A measure the text names ("Delivery") is known.
  for (const char* q : {"What did Acme Corp order as of December 31, 2022?",
                        "What did Acme Corp order in FY2022?",
                        "What did Acme Corp order in the Fiscal Year Ended March 2022?"}) {
    const Answer a = Ask(q);
    EXPECT_EQ(a.reasoning.find("out of scope"), std::string::npos) << q << ": " << a.reasoning;
  }
}

TEST_F(SchemaAgentTest, LatestOrdersTheDataAndAnUnknownNameBesideAKnownOneOrAYearIsInScope) {
  for (const char* q : {"What is the latest order of Initech?",
                        "Did Acme Corp plan to expand into Munich like Cyberdyne Systems?",
                        "What did Cyberdyne Systems order in 2022?"}) {
    const Answer a = Ask(q);
    EXPECT_EQ(a.reasoning.find("out of scope"), std::string::npos) << q << ": " << a.reasoning;
  }
}

TEST_F(SchemaAgentTest, UnknownEntityIsOutOfScope) {
  const Answer a = Ask("Where does Cyberdyne Systems plan to expand?");
  EXPECT_FALSE(a.answered);
  EXPECT_NE(a.reasoning.find("Cyberdyne Systems"), std::string::npos);
}

// The contract's routing section orders the tools and can turn the gate off.
TEST(SchemaAgentRoutingTest, TheContractsPreferenceAndGateAreFollowed) {
  testing::TempDir dir;
  RoutingPolicy routing;
  routing.preference = {"VectorRAG", "SchemaLookup"};
  routing.ood_gate = false;
  auto engine = testing::OpenShopStore(dir.path(), routing);
  ASSERT_NE(engine, nullptr);
  auto a = engine->Ask("What is the city of Acme Corp?");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_FALSE(a->steps.empty());
  EXPECT_EQ(a->steps[0].query.rfind("VectorRAG", 0), 0u) << a->steps[0].query;
  auto outside = engine->Ask("Where does Cyberdyne Systems plan to expand?");
  ASSERT_TRUE(outside.ok());
  EXPECT_EQ(outside->reasoning.find("out of scope"), std::string::npos) << outside->reasoning;
  EXPECT_FALSE(outside->steps.empty());
}

TEST_F(SchemaAgentTest, GateCanBeTurnedOff) {
  AnswerOptions o;
  o.schema.ood_gate = false;
  const Answer a = Ask("What did Initech order today?", o);
  EXPECT_FALSE(a.steps.empty());  // the tools ran
}

TEST_F(SchemaAgentTest, NoGroundedAnswerAbstainsAfterEveryTool) {
  AnswerOptions o;
  o.schema.ood_gate = false;
  o.schema.max_retries = 0;  // one round only
  const Answer a = Ask("Zzyzx qwerty?", o);
  EXPECT_FALSE(a.answered);
  EXPECT_EQ(a.steps.size(), 1u);
  EXPECT_NE(a.reasoning.find("no grounded answer"), std::string::npos);
  // The passages it looked at stay visible, uncited.
  EXPECT_FALSE(a.retrieval.passages.empty());
  EXPECT_TRUE(a.citations.empty());
}

TEST_F(SchemaAgentTest, SinglePipelineStillAvailable) {
  AnswerOptions o;
  o.pipeline = "single";
  const Answer a = Ask("What is the city of Acme Corp?", o);
  EXPECT_EQ(a.pipeline, "single");
}

TEST(SchemaAgentNoContractTest, AutoFallsBackToSingleAndSchemaIsRefused) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("docs/a.md"), "# Ada\n\nAda Lovelace wrote the first program.\n");
  auto engine = Engine::Open(dir.File("store.db"));
  ASSERT_TRUE(engine.ok());
  ASSERT_TRUE((*engine)->Index({dir.File("docs")}).ok());
  auto a = (*engine)->Ask("Who wrote the first program?");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->pipeline, "single");
  AnswerOptions o;
  o.pipeline = "schema";
  auto refused = (*engine)->Ask("Who wrote the first program?", o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
