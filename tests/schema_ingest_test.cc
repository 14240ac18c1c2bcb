// Schema-driven construction (schema-contracts paper, Appendix B) end to end
// through Engine::Ingest on a small multi-source folder (customers.csv,
// orders.csv with one dangling reference, products.json, two markdown
// notes): typed entities with DERIVED_FROM provenance, foreign-key
// relationships, text linked to the records it names, every retriever on
// the result, re-ingestion as a no-op or an exact diff, crashes that leave a
// consistent store, the bad inputs of issue 6 (ragged CSV, truncated JSON,
// a missing source, a hand-broken contract, quoted newlines and
// Windows-1252) and both deduplication stages.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "flowrag/engine.h"
#include "flowrag/schema.h"
#include "schema_store_util.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using namespace flowrag::testing;  // NOLINT: test helpers

// ---- The multi-source example ------------------------------------------------

constexpr char kCustomers[] =
    "customer_id,name,city,segment\n"
    "C001,Acme Corp,Berlin,enterprise\n"
    "C002,Globex,Paris,smb\n"
    "C003,Initech,Austin,smb\n"
    "C004,Umbrella,Raccoon City,enterprise\n"
    "C005,Hooli,Palo Alto,enterprise\n"
    "C006,Vandelay Industries,New York,smb\n"
    "C007,Stark Industries,Malibu,enterprise\n"
    "C008,Wayne Enterprises,Gotham,enterprise\n"
    "C009,Wonka,London,smb\n"
    "C010,Soylent,Chicago,smb\n";

// Line 13 (order 1012) references C999, which no customer has.
constexpr char kOrders[] =
    "order_id,customer_id,product_sku,amount,order_date\n"
    "1001,C001,P-10,250.00,2024-01-03\n"
    "1002,C002,P-11,75.50,2024-01-09\n"
    "1003,C001,P-12,1200.00,2024-02-14\n"
    "1004,C003,P-10,250.00,2024-02-20\n"
    "1005,C005,P-11,75.50,2024-03-01\n"
    "1006,C004,P-12,1200.00,2024-03-15\n"
    "1007,C006,P-10,250.00,2024-04-02\n"
    "1008,C007,P-13,9.99,2024-04-05\n"
    "1009,C008,P-14,19.99,2024-04-11\n"
    "1010,C009,P-10,250.00,2024-05-02\n"
    "1011,C010,P-11,75.50,2024-05-20\n"
    "1012,C999,P-11,75.50,2024-06-03\n";

constexpr char kProducts[] =
    "[{\"sku\":\"P-10\",\"title\":\"Widget\",\"price\":250.0,\"tags\":[\"metal\",\"small\"]},\n"
    " {\"sku\":\"P-11\",\"title\":\"Gadget\",\"price\":75.5,\"tags\":[\"plastic\"]},\n"
    " {\"sku\":\"P-12\",\"title\":\"Gizmo\",\"price\":1200.0,\"tags\":[\"metal\",\"large\"]},\n"
    " {\"sku\":\"P-13\",\"title\":\"Doohickey\",\"price\":9.99,\"tags\":[]},\n"
    " {\"sku\":\"P-14\",\"title\":\"Thingamajig\",\"price\":19.99,\"tags\":[\"small\"]}]\n";

constexpr char kAcmeNote[] =
    "# Acme Corp account review\n\n"
    "Acme Corp renewed its Gizmo contract in February 2024. The account manager noted that "
    "Acme Corp plans to expand into Munich next year.\n";

constexpr char kGlobexNote[] =
    "# Globex support ticket\n\n"
    "Globex reported that the Gadget arrived damaged. A replacement was shipped within two "
    "days.\n";

constexpr size_t kStructuredRecords = 10 + 12 + 5;
constexpr size_t kTextDocuments = 2;

void WriteMultiSource(const std::string& dir) {
  WriteFile(dir + "/customers.csv", kCustomers);
  WriteFile(dir + "/orders.csv", kOrders);
  WriteFile(dir + "/products.json", kProducts);
  WriteFile(dir + "/notes/acme.md", kAcmeNote);
  WriteFile(dir + "/notes/globex.md", kGlobexNote);
}

// The document of the best BM25 passage for `question`, "" when none.
std::string TopBm25(const Engine& engine, const std::string& question) {
  QueryOptions q;
  q.method = "bm25";
  auto r = engine.Query(question, q);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() && !r->passages.empty() ? r->passages[0].document_id : "";
}

// Every graph and record row with ids replaced by names and passages by
// "document#ordinal", sorted: equal dumps mean equal stores.
std::vector<std::string> Dump(const std::string& db) {
  const char* queries[] = {
      "SELECT 'document', external_id, title, source, text FROM documents",
      "SELECT 'passage', d.external_id, p.ordinal, p.begin_offset, p.end_offset FROM passages p "
      "JOIN documents d ON d.id = p.document_id",
      "SELECT 'record', d.external_id, r.source, r.file, r.line, r.entity_type, r.record_key, "
      "r.structured, r.fields FROM source_records r JOIN documents d ON d.id = r.document_id",
      "SELECT 'entity', name, type FROM entities",
      "SELECT 'mention', d.external_id || '#' || p.ordinal, e.name, m.surface, m.type, m.count, "
      "m.defining FROM mentions m JOIN passages p ON p.id = m.passage_id JOIN documents d ON d.id "
      "= p.document_id JOIN entities e ON e.id = m.entity_id",
      "SELECT 'fact', s.name, r.text, o.name, d.external_id || '#' || p.ordinal FROM facts f JOIN "
      "relations r ON r.id = f.relation_id JOIN entities s ON s.id = f.subject_id JOIN entities o "
      "ON o.id = f.object_id JOIN fact_sources fs ON fs.fact_id = f.id JOIN passages p ON p.id = "
      "fs.passage_id JOIN documents d ON d.id = p.document_id",
      "SELECT 'synonym', min(a.name, b.name), max(a.name, b.name), round(s.similarity, 4) FROM "
      "synonyms s JOIN entities a ON a.id = s.a JOIN entities b ON b.id = s.b",
  };
  std::vector<std::string> out;
  for (const char* q : queries) {
    for (const auto& row : Sql(db, q)) {
      std::string line;
      for (const std::string& c : row) line += (line.empty() ? "" : " | ") + c;
      out.push_back(line);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The rows of `a` missing from `b`, for readable failures.
std::vector<std::string> Missing(const std::vector<std::string>& a,
                                 const std::vector<std::string>& b) {
  std::vector<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  if (out.size() > 20) out.resize(20);
  return out;
}

std::string Lines(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += "  " + x + "\n";
  return s;
}

// Equal dumps, or the rows that differ.
::testing::AssertionResult SameStore(const std::vector<std::string>& a,
                                     const std::vector<std::string>& b) {
  if (a == b) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "only in the first store:\n"
                                       << Lines(Missing(a, b)) << "only in the second store:\n"
                                       << Lines(Missing(b, a));
}

// A clean ingest of `dir` into a fresh store, dumped.
std::vector<std::string> CleanDump(const std::string& dir, const SchemaContract& contract,
                                   const std::string& db) {
  auto engine = Engine::Open(db);
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  if (!engine.ok()) return {};
  auto r = (*engine)->Ingest(dir, contract, Offline());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return Dump(db);
}

// The multi-source example in a fresh folder with its offline contract;
// the store is `db`, outside the folder.
class MultiSource : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteMultiSource(dir);
    auto c = ContractOf(dir);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    contract = *std::move(c);
  }

  // The store with the example ingested once.
  Result<std::unique_ptr<Engine>> Ingested() {
    FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Open(db));
    FLOWRAG_RETURN_IF_ERROR(engine->Ingest(dir, contract, Offline()).status());
    return engine;
  }

  TempDir tmp;
  const std::string dir = tmp.File("ms"), db = tmp.File("ms.db");
  SchemaContract contract;
};

// ---- 1. The multi-source example -------------------------------------------------

TEST_F(MultiSource, MultiSourceFolderBecomesATypedGraphWithProvenance) {
  ASSERT_NE(TypeOf(contract, "customers"), nullptr);
  ASSERT_NE(TypeOf(contract, "orders"), nullptr);
  ASSERT_NE(TypeOf(contract, "products"), nullptr);
  ASSERT_NE(TypeOf(contract, "notes"), nullptr);
  EXPECT_EQ(TypeOf(contract, "customers")->name, "Customer");
  EXPECT_EQ(TypeOf(contract, "orders")->name, "Order");
  EXPECT_EQ(TypeOf(contract, "products")->name, "Product");
  const std::string note_type = TypeOf(contract, "notes")->name;
  EXPECT_TRUE(note_type == "Note" || note_type == "Notes") << note_type;
  std::string to_customer, to_product;
  for (const RelationshipType& r : contract.relationships) {
    if (r.from == "Order" && r.to == "Customer") to_customer = r.name;
    if (r.from == "Order" && r.to == "Product") to_product = r.name;
  }
  ASSERT_FALSE(to_customer.empty()) << ToYaml(contract);
  ASSERT_FALSE(to_product.empty()) << ToYaml(contract);

  auto engine = Engine::Open(db);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  auto report = (*engine)->Ingest(dir, contract, Offline());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->records, kStructuredRecords);
  EXPECT_EQ(report->text_documents, kTextDocuments);
  EXPECT_EQ(report->index.documents_added, kStructuredRecords + kTextDocuments);
  EXPECT_EQ(report->entities, kStructuredRecords);  // every record its own entity
  EXPECT_EQ(report->merged_by_key, 0u);
  EXPECT_EQ(report->links, 11u + 12u);  // 11 resolvable customers, 12 products
  EXPECT_EQ(report->unresolved_links, 1u);
  EXPECT_EQ(report->records_removed, 0u);
  // B.2: referenced sources before the ones that reference them.
  const auto& order = report->source_order;
  auto pos = [&](const std::string& s) { return std::find(order.begin(), order.end(), s); };
  ASSERT_NE(pos("orders"), order.end());
  EXPECT_LT(pos("customers"), pos("orders"));
  EXPECT_LT(pos("products"), pos("orders"));
  // The dangling reference: file, line (header is line 1), field and value.
  bool reported = false;
  for (const std::string& w : report->warnings) {
    reported |= Contains(w, "orders.csv:13: customer_id: \"C999\"") && Contains(w, "dropped");
  }
  EXPECT_TRUE(reported) << ::testing::PrintToString(report->warnings);
  // Acme Corp and Gizmo in the Acme note, Globex and Gadget in the Globex one.
  EXPECT_EQ(report->text_mentions, 4u);

  // Entities: named by their name/title field, or "<Type> <key>".
  EXPECT_EQ(EntityTypeOf(db, "Acme Corp"), "Customer");
  EXPECT_EQ(EntityTypeOf(db, "Wayne Enterprises"), "Customer");
  EXPECT_EQ(EntityTypeOf(db, "Order 1001"), "Order");
  EXPECT_EQ(EntityTypeOf(db, "Order 1012"), "Order");  // the record stays; only its link goes
  EXPECT_EQ(EntityTypeOf(db, "Gizmo"), "Product");
  EXPECT_EQ(Count(db, "SELECT count(*) FROM entities WHERE type = 'Customer'"), 10);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM entities WHERE type = 'Order'"), 12);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM entities WHERE type = 'Product'"), 5);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM entities WHERE name LIKE '%C999%'"), 0);

  // Relationships: foreign-key joins as facts, sourced at the order's record.
  const auto facts = Facts(db);
  EXPECT_TRUE(facts.count({"Order 1001", to_customer, "Acme Corp"}));
  EXPECT_TRUE(facts.count({"Order 1003", to_customer, "Acme Corp"}));
  EXPECT_TRUE(facts.count({"Order 1002", to_customer, "Globex"}));
  EXPECT_TRUE(facts.count({"Order 1001", to_product, "Widget"}));
  EXPECT_TRUE(facts.count({"Order 1012", to_product, "Gadget"}));
  EXPECT_EQ(Count(db,
                  "SELECT count(*) FROM facts f JOIN relations r ON r.id = f.relation_id "
                  "WHERE r.text = " +
                      Quoted(to_customer)),
            11);
  EXPECT_EQ(Count(db,
                  "SELECT count(*) FROM facts f JOIN relations r ON r.id = f.relation_id "
                  "WHERE r.text = " +
                      Quoted(to_product)),
            12);
  for (const auto& f : facts) {
    EXPECT_FALSE(f[0] == "Order 1012" && f[1] == to_customer) << "dangling reference stored";
  }
  EXPECT_EQ(Sql(db,
                "SELECT d.external_id || '#' || p.ordinal FROM facts f JOIN relations r ON r.id "
                "= f.relation_id JOIN entities s ON s.id = f.subject_id JOIN fact_sources fs ON "
                "fs.fact_id = f.id JOIN passages p ON p.id = fs.passage_id JOIN documents d ON "
                "d.id = p.document_id WHERE s.name = 'Order 1003' AND r.text = " +
                    Quoted(to_customer)),
            (Rows{{"orders.csv:4#0"}}));

  // SourceRecords: one per document, keyed "<file>:<line>", with the
  // original field values.
  EXPECT_EQ(Count(db, "SELECT count(*) FROM source_records"),
            static_cast<int64_t>(kStructuredRecords + kTextDocuments));
  EXPECT_EQ(Count(db, "SELECT count(*) FROM source_records WHERE structured = 1"),
            static_cast<int64_t>(kStructuredRecords));
  EXPECT_EQ(Count(db,
                  "SELECT count(*) FROM documents d WHERE NOT EXISTS (SELECT 1 FROM "
                  "source_records r WHERE r.document_id = d.id)"),
            0);
  EXPECT_EQ(Sql(db,
                "SELECT r.source, r.file, r.line, r.entity_type, r.record_key, r.structured, "
                "d.title FROM source_records r JOIN documents d ON d.id = r.document_id WHERE "
                "d.external_id = 'orders.csv:4'"),
            (Rows{{"orders", "orders.csv", "4", "Order", "1003", "1", "Order 1003"}}));
  const std::string fields = RecordFields(db, "orders.csv:4");
  EXPECT_TRUE(Contains(fields, "\"customer_id\":\"C001\"")) << fields;
  EXPECT_TRUE(Contains(fields, "\"amount\":\"1200.00\"")) << fields;
  Rows note = Sql(db,
                  "SELECT r.entity_type, r.structured FROM source_records r JOIN documents d ON "
                  "d.id = r.document_id WHERE d.external_id = 'notes/acme.md'");
  EXPECT_EQ(note, (Rows{{note_type, "0"}}));

  // DERIVED_FROM: each structured record defines its entity from its own
  // first passage, and only from there.
  EXPECT_EQ(DerivedFrom(db, "Acme Corp").count("customers.csv:2"), 1u);
  EXPECT_EQ(DerivedFrom(db, "Order 1003"), (std::set<std::string>{"orders.csv:4"}));
  EXPECT_EQ(DerivedFrom(db, "Gizmo").count("products.json#3"), 1u);
  EXPECT_EQ(Count(db,
                  "SELECT count(*) FROM source_records r JOIN documents d ON d.id = r.document_id "
                  "WHERE r.structured = 1 AND EXISTS (SELECT 1 FROM passages p JOIN mentions m ON "
                  "m.passage_id = p.id JOIN entities e ON e.id = m.entity_id WHERE p.document_id "
                  "= d.id AND p.ordinal = 0 AND m.defining = 1 AND e.name = d.title AND e.type = "
                  "r.entity_type)"),
            static_cast<int64_t>(kStructuredRecords));

  // The notes are linked to the record entities they name (the Customer
  // and Product entities themselves, not look-alikes).
  const auto acme_note = MentionedIn(db, "notes/acme.md");
  EXPECT_TRUE(acme_note.count("Acme Corp")) << ::testing::PrintToString(acme_note);
  EXPECT_TRUE(acme_note.count("Gizmo"));
  EXPECT_FALSE(acme_note.count("Globex"));
  const auto globex_note = MentionedIn(db, "notes/globex.md");
  EXPECT_TRUE(globex_note.count("Globex"));
  EXPECT_TRUE(globex_note.count("Gadget"));
  EXPECT_FALSE(globex_note.count("Acme Corp"));
  EXPECT_EQ(Count(db, "SELECT count(*) FROM entities WHERE name = 'Acme Corp'"), 1);

  // Quality metrics (B.7.2).
  auto stats = (*engine)->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  const SchemaStats& s = stats->schema;
  EXPECT_TRUE(s.present);
  EXPECT_EQ(s.version, 1);
  EXPECT_EQ(s.source_records, static_cast<int64_t>(kStructuredRecords + kTextDocuments));
  EXPECT_GE(s.derived_from, static_cast<int64_t>(kStructuredRecords));
  EXPECT_DOUBLE_EQ(s.link_validity, 1.0);
  EXPECT_DOUBLE_EQ(s.provenance_completeness, 1.0);
  EXPECT_DOUBLE_EQ(s.schema_utility, 1.0);
  EXPECT_DOUBLE_EQ(s.relationship_usage, 1.0);
  EXPECT_EQ(s.relationship_types, 2);
  EXPECT_EQ(stats->documents, static_cast<int64_t>(kStructuredRecords + kTextDocuments));
  EXPECT_EQ(stats->passages_missing_embeddings, 0);
  EXPECT_EQ(stats->graph.nodes["SourceRecord"], s.source_records);
  EXPECT_EQ(stats->graph.edges["DERIVED_FROM"], s.derived_from);
}

// Without an extractor the notes still get their links: the record names
// found in them (B.5.2), as plain mentions.
TEST_F(MultiSource, TextIsLinkedToTheRecordsItNamesWithoutAnExtractor) {
  auto engine = Engine::Open(db);
  ASSERT_TRUE(engine.ok());
  IngestOptions o = Offline();
  o.index.extractor = "none";
  auto report = (*engine)->Ingest(dir, contract, o);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->text_mentions, 4u);
  EXPECT_EQ(MentionedIn(db, "notes/acme.md"), (std::set<std::string>{"Acme Corp", "Gizmo"}));
  EXPECT_EQ(MentionedIn(db, "notes/globex.md"), (std::set<std::string>{"Globex", "Gadget"}));
  EXPECT_EQ(EntityTypeOf(db, "Acme Corp"), "Customer");
  auto stats = (*engine)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_DOUBLE_EQ(stats->schema.link_validity, 1.0);
  EXPECT_DOUBLE_EQ(stats->schema.provenance_completeness, 1.0);
}

// ---- 2. Every retriever on the ingested store ------------------------------------

TEST_F(MultiSource, EveryRetrieverAnswersOnTheIngestedStore) {
  auto engine = Ingested();
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  // Documents that answer "Which orders did Acme Corp place?".
  const std::set<std::string> acme = {"customers.csv:2", "notes/acme.md", "orders.csv:2",
                                      "orders.csv:4"};
  const std::vector<std::string> methods = Engine::Methods();
  ASSERT_GE(methods.size(), 3u);
  size_t graph_methods = 0;
  for (const std::string& method : methods) {
    QueryOptions q;
    q.explain = true;
    q.method = method;
    q.top_k = 5;
    auto r = (*engine)->Query("Which orders did Acme Corp place?", q);
    ASSERT_TRUE(r.ok()) << method << ": " << r.status().ToString();
    ASSERT_FALSE(r->passages.empty()) << method;
    bool found = false;
    for (const ScoredPassage& p : r->passages) {
      found |= acme.count(p.document_id) > 0;
      EXPECT_FALSE(p.text.empty()) << method << " " << p.document_id;
    }
    EXPECT_TRUE(found) << method << " found nothing about Acme Corp";
    const bool graph_method = std::any_of(r->nodes.begin(), r->nodes.end(),
                                          [](const GraphNode& n) { return n.kind == "Entity"; });
    if (!graph_method) continue;
    ++graph_methods;
    // A walk (ppr, qafd, semflow) carries mass over the foreign-key edges: an
    // order to Acme Corp. SA spreads along the links whose relation text
    // matches the question best and one-hop reads chunks of the named
    // entity: both must reach an order's record.
    if (method == "sa" || method == "onehop") {
      bool order = false;
      for (const ScoredPassage& p : r->passages)
        order |= p.document_id.rfind("orders.csv:", 0) == 0;
      EXPECT_TRUE(order) << method << " reached no order of Acme Corp";
      continue;
    }
    std::map<uint32_t, std::string> label;
    for (const GraphNode& n : r->nodes) label[n.id] = n.label;
    bool order_edge = false;
    for (const GraphEdge& e : r->edges) {
      const std::string a = label[e.from], b = label[e.to];
      order_edge |= e.kind == "RELATED_TO" && ((a == "Acme Corp" && b.rfind("Order ", 0) == 0) ||
                                               (b == "Acme Corp" && a.rfind("Order ", 0) == 0));
    }
    EXPECT_TRUE(order_edge) << method << ": no Order–Acme Corp edge in the subgraph";
  }
  EXPECT_GE(graph_methods, 4u);  // ppr, qafd, semflow, sa, onehop, ...
}

// An engine reads the schema contract once and keeps it across its own
// inserts; an ingest by another process, seen by Refresh, replaces it.
TEST_F(MultiSource, TheSchemaAgentAnswersOnceAContractIsIngestedAndAfterInserts) {
  auto reader = Engine::Open(db);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_TRUE((*reader)->IndexDocuments({{"note-1", "Note", "Acme Corp placed an order."}}).ok());
  const std::string question = "Which orders did Acme Corp place?";
  auto before = (*reader)->Ask(question, AnswerOptions{});
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_NE(before->pipeline, "schema");  // no contract yet
  {
    auto writer = Engine::Open(db);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    ASSERT_TRUE((*writer)->Ingest(dir, contract, Offline()).ok());
  }
  ASSERT_TRUE((*reader)->Refresh().ok());
  auto after = (*reader)->Ask(question, AnswerOptions{});
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->pipeline, "schema");
  ASSERT_TRUE((*reader)->IndexDocuments({{"note-2", "Note", "Acme Corp paid an invoice."}}).ok());
  auto kept = (*reader)->Ask(question, AnswerOptions{});
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(kept->pipeline, "schema");
  // Deleting a record's document is a write that may change the records.
  ASSERT_TRUE((*reader)->DeleteDocument("note-2").ok());
  auto deleted = (*reader)->Ask(question, AnswerOptions{});
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(deleted->pipeline, "schema");
}

// ---- 3. Re-ingestion ---------------------------------------------------------------

TEST_F(MultiSource, ReingestingIsANoOpAndARemovedRowTakesItsEntityAlong) {
  auto engine = Ingested();
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  const std::vector<std::string> first = Dump(db);
  ASSERT_FALSE(first.empty());

  auto again = (*engine)->Ingest(dir, contract, Offline());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->index.documents_unchanged, kStructuredRecords + kTextDocuments);
  EXPECT_EQ(again->index.documents_added, 0u);
  EXPECT_EQ(again->index.documents_replaced, 0u);
  EXPECT_EQ(again->index.passages_embedded, 0u);
  EXPECT_EQ(again->records_removed, 0u);
  const std::vector<std::string> second = Dump(db);
  EXPECT_TRUE(SameStore(first, second));

  // Order 1005 (line 6) leaves the file.
  std::string orders = kOrders;
  const std::string row = "1005,C005,P-11,75.50,2024-03-01\n";
  orders.erase(orders.find(row), row.size());
  WriteFile(dir + "/orders.csv", orders);
  auto removed = (*engine)->Ingest(dir, contract, Offline());
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(removed->records_removed, 1u);
  EXPECT_EQ(removed->records, kStructuredRecords - 1);
  EXPECT_EQ(EntityTypeOf(db, "Order 1005"), "");
  EXPECT_EQ(Count(db, "SELECT count(*) FROM documents WHERE text LIKE '%order_id: 1005%'"), 0);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM source_records WHERE record_key = '1005'"), 0);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM source_records"),
            static_cast<int64_t>(kStructuredRecords + kTextDocuments - 1));
  // Hooli's only order is gone; Hooli stays, with no order pointing at it.
  EXPECT_EQ(EntityTypeOf(db, "Hooli"), "Customer");
  for (const auto& f : Facts(db)) EXPECT_NE(f[2], "Hooli") << f[0] << " " << f[1];
  // The orders after it keep their entities and links.
  EXPECT_EQ(EntityTypeOf(db, "Order 1006"), "Order");
  EXPECT_EQ(EntityTypeOf(db, "Order 1012"), "Order");
  EXPECT_EQ(Count(db, "SELECT count(*) FROM entities WHERE type = 'Order'"), 11);
  auto stats = (*engine)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_DOUBLE_EQ(stats->schema.link_validity, 1.0);
  EXPECT_DOUBLE_EQ(stats->schema.provenance_completeness, 1.0);
  // The store is exactly what a clean ingest of the edited folder gives.
  EXPECT_TRUE(SameStore(Dump(db), CleanDump(dir, contract, tmp.File("clean.db"))));
}

// Edits that change what other, unchanged records link to: a customer
// renamed (its orders must point at the new name) and a customer removed
// (its orders' references become dangling and must be dropped). Each
// re-ingest must give the store a clean ingest of the edited folder gives.
TEST_F(MultiSource, ReingestingEditedRecordsMatchesACleanIngest) {
  std::string to_customer;
  for (const RelationshipType& r : contract.relationships) {
    if (r.from == "Order" && r.to == "Customer") to_customer = r.name;
  }
  ASSERT_FALSE(to_customer.empty());
  auto engine = Ingested();
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();

  // Vandelay Industries (C006) is renamed; its order 1007 is unchanged.
  std::string customers = kCustomers;
  const std::string vandelay = "C006,Vandelay Industries,New York,smb\n";
  customers.replace(customers.find(vandelay), vandelay.size(),
                    "C006,Vandelay Imports,New York,smb\n");
  WriteFile(dir + "/customers.csv", customers);
  auto renamed = (*engine)->Ingest(dir, contract, Offline());
  ASSERT_TRUE(renamed.ok()) << renamed.status().ToString();
  EXPECT_EQ(renamed->index.documents_replaced, 1u);
  auto facts = Facts(db);
  EXPECT_TRUE(facts.count({"Order 1007", to_customer, "Vandelay Imports"}));
  EXPECT_FALSE(facts.count({"Order 1007", to_customer, "Vandelay Industries"}));
  EXPECT_EQ(EntityTypeOf(db, "Vandelay Industries"), "");
  EXPECT_TRUE(SameStore(Dump(db), CleanDump(dir, contract, tmp.File("clean1.db"))));

  // Initech (C003) leaves: order 1004 now references nothing.
  const std::string initech = "C003,Initech,Austin,smb\n";
  customers.erase(customers.find(initech), initech.size());
  WriteFile(dir + "/customers.csv", customers);
  auto removed = (*engine)->Ingest(dir, contract, Offline());
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(removed->unresolved_links, 2u);
  bool reported = false;
  for (const std::string& w : removed->warnings) {
    reported |= Contains(w, "orders.csv:5: customer_id: \"C003\"");
  }
  EXPECT_TRUE(reported) << ::testing::PrintToString(removed->warnings);
  EXPECT_EQ(EntityTypeOf(db, "Initech"), "");
  for (const auto& f : Facts(db)) {
    EXPECT_FALSE(f[0] == "Order 1004" && f[1] == to_customer) << f[2];
  }
  auto stats = (*engine)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_DOUBLE_EQ(stats->schema.link_validity, 1.0);
  EXPECT_DOUBLE_EQ(stats->schema.provenance_completeness, 1.0);
  EXPECT_TRUE(SameStore(Dump(db), CleanDump(dir, contract, tmp.File("clean2.db"))));

  // Acme Corp, which the Acme note names, is renamed: the note's own
  // extraction keeps an "Acme Corp" entity, which is no Customer any more.
  const std::string acme = "C001,Acme Corp,Berlin,enterprise\n";
  customers.replace(customers.find(acme), acme.size(), "C001,Acme Corporation,Berlin,enterprise\n");
  WriteFile(dir + "/customers.csv", customers);
  auto acme_renamed = (*engine)->Ingest(dir, contract, Offline());
  ASSERT_TRUE(acme_renamed.ok()) << acme_renamed.status().ToString();
  EXPECT_TRUE(Facts(db).count({"Order 1001", to_customer, "Acme Corporation"}));
  EXPECT_NE(EntityTypeOf(db, "Acme Corp"), "Customer");
  EXPECT_TRUE(SameStore(Dump(db), CleanDump(dir, contract, tmp.File("clean3.db"))));
}

// ---- 4. Crashes mid-ingest -----------------------------------------------------------

TEST_F(MultiSource, AFailureAfterTheFirstBatchLeavesAConsistentStoreAndARerunCompletes) {
  IngestOptions small = Offline();
  small.index.batch_size = 4;
  small.index.extract_batch_size = 4;
  {
    auto engine = Engine::Open(db);
    ASSERT_TRUE(engine.ok());
    IngestOptions crash = small;
    crash.index.after_batch = [](size_t batch) -> Status {
      return batch == 1 ? Status::IoError("disk full (injected)") : Status::Ok();
    };
    auto r = (*engine)->Ingest(dir, contract, crash);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(Contains(r.status().message(), "injected")) << r.status().ToString();
  }
  {
    auto reopened = Engine::Open(db);
    ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
    auto stats = (*reopened)->Stats();
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->documents, 4);  // one whole batch, nothing of the next
    EXPECT_EQ(stats->schema.source_records, 4);
    EXPECT_DOUBLE_EQ(stats->schema.link_validity, 1.0);
    EXPECT_DOUBLE_EQ(stats->schema.provenance_completeness, 1.0);
    EXPECT_EQ(Count(db,
                    "SELECT count(*) FROM documents d WHERE NOT EXISTS (SELECT 1 FROM "
                    "source_records r WHERE r.document_id = d.id)"),
              0);
    auto rerun = (*reopened)->Ingest(dir, contract, small);
    ASSERT_TRUE(rerun.ok()) << rerun.status().ToString();
    EXPECT_EQ(rerun->index.documents_unchanged, 4u);
    EXPECT_EQ(rerun->index.documents_added, kStructuredRecords + kTextDocuments - 4);
    auto after = (*reopened)->Stats();
    ASSERT_TRUE(after.ok());
    EXPECT_DOUBLE_EQ(after->schema.link_validity, 1.0);
    EXPECT_DOUBLE_EQ(after->schema.provenance_completeness, 1.0);
  }
  const std::string clean_db = tmp.File("clean.db");
  const std::vector<std::string> clean = CleanDump(dir, contract, clean_db);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM entities"),
            Count(clean_db, "SELECT count(*) FROM entities"));
  EXPECT_EQ(Count(db, "SELECT count(*) FROM facts"), Count(clean_db, "SELECT count(*) FROM facts"));
  EXPECT_EQ(Count(db, "SELECT count(*) FROM source_records"),
            Count(clean_db, "SELECT count(*) FROM source_records"));
  EXPECT_TRUE(SameStore(Dump(db), clean));
}

// A child process re-ingests an edited folder (a row removed, so the rows
// after it are rewritten) and dies with _exit (no cleanup, like kill -9)
// right after committing the first batch: replaced records without their
// graph yet. The store must stay valid, and a rerun must give exactly the
// store a clean ingest of the edited folder gives.
TEST_F(MultiSource, AKilledReingestIsRepairedByTheNextRun) {
  IngestOptions small = Offline();
  small.index.batch_size = 2;
  {
    auto engine = Engine::Open(db);
    ASSERT_TRUE(engine.ok());
    ASSERT_TRUE((*engine)->Ingest(dir, contract, small).ok());
  }
  std::string orders = kOrders;
  const std::string row = "1002,C002,P-11,75.50,2024-01-09\n";
  orders.erase(orders.find(row), row.size());
  WriteFile(dir + "/orders.csv", orders);

  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto engine = Engine::Open(db);
    if (!engine.ok()) _exit(3);
    IngestOptions o = small;
    o.index.after_batch = [](size_t batch) -> Status {
      if (batch == 1) _exit(0);  // killed mid-run
      return Status::Ok();
    };
    (void)(*engine)->Ingest(dir, contract, o);
    _exit(4);  // must not get here
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);

  auto engine = Engine::Open(db);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  auto stats = (*engine)->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_DOUBLE_EQ(stats->schema.link_validity, 1.0);
  EXPECT_DOUBLE_EQ(stats->schema.provenance_completeness, 1.0);
  auto rerun = (*engine)->Ingest(dir, contract, small);
  ASSERT_TRUE(rerun.ok()) << rerun.status().ToString();
  EXPECT_EQ(rerun->records_removed, 1u);
  EXPECT_EQ(EntityTypeOf(db, "Order 1002"), "");
  EXPECT_TRUE(SameStore(Dump(db), CleanDump(dir, contract, tmp.File("clean.db"))));
}

// ---- 5. Bad input ----------------------------------------------------------------------

TEST_F(MultiSource, ARaggedCsvRowFailsNamingFileAndLineAndKeepsTheStore) {
  auto engine = Ingested();
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  const std::vector<std::string> before = Dump(db);
  auto stats_before = (*engine)->Stats();
  ASSERT_TRUE(stats_before.ok());

  // Line 5 (order 1004) loses its last two cells.
  std::string orders = kOrders;
  const std::string full = "1004,C003,P-10,250.00,2024-02-20\n";
  orders.replace(orders.find(full), full.size(), "1004,C003,P-10\n");
  WriteFile(dir + "/orders.csv", orders);
  auto r = (*engine)->Ingest(dir, contract, Offline());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "orders.csv:5")) << r.status().ToString();

  auto stats = (*engine)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->documents, stats_before->documents);
  EXPECT_EQ(stats->schema.source_records, stats_before->schema.source_records);
  EXPECT_DOUBLE_EQ(stats->schema.link_validity, 1.0);
  EXPECT_TRUE(SameStore(before, Dump(db)));
  // Queries still see the old records.
  EXPECT_EQ(TopBm25(**engine, "order 1004"), "orders.csv:5");
}

TEST_F(MultiSource, TruncatedJsonFailsNamingFileAndLine) {
  // Cut in the middle of the third product (line 3).
  const std::string products = kProducts;
  WriteFile(dir + "/products.json", products.substr(0, products.find("\"Gizmo\"") + 4));
  auto engine = Engine::Open(db);
  ASSERT_TRUE(engine.ok());
  auto r = (*engine)->Ingest(dir, contract, Offline());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  EXPECT_TRUE(Contains(r.status().message(), "products.json")) << r.status().ToString();
  EXPECT_TRUE(Contains(r.status().message(), "line 3")) << r.status().ToString();
  auto stats = (*engine)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->documents, 0);  // nothing of a failed plan is written
}

TEST(SchemaIngest, ATruncatedJsonlLineFailsNamingFileAndLine) {
  TempDir tmp;
  const std::string dir = tmp.File("ev");
  std::string visits;
  for (int i = 1; i <= 6; ++i) {
    visits += "{\"visit_id\": \"V" + std::to_string(i) + "\", \"page\": \"/p" +
              std::to_string(i % 3) + "\", \"seconds\": " + std::to_string(10 * i) + "}\n";
  }
  WriteFile(dir + "/visits.jsonl", visits);
  auto contract = ContractOf(dir);
  ASSERT_TRUE(contract.ok()) << contract.status().ToString();
  // The writer died in the middle of line 6.
  WriteFile(dir + "/visits.jsonl", visits.substr(0, visits.rfind("\"page\"")));
  auto engine = Engine::Open(tmp.File("ev.db"));
  ASSERT_TRUE(engine.ok());
  auto r = (*engine)->Ingest(dir, *contract, Offline());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "visits.jsonl:6")) << r.status().ToString();
}

TEST_F(MultiSource, AContractSourceMissingFromTheFolderIsNotFound) {
  std::filesystem::remove(dir + "/products.json");
  auto engine = Engine::Open(db);
  ASSERT_TRUE(engine.ok());
  auto r = (*engine)->Ingest(dir, contract, Offline());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << r.status().ToString();
  EXPECT_TRUE(Contains(r.status().message(), "\"products\"")) << r.status().ToString();
  auto stats = (*engine)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->documents, 0);
}

// The 1-based line of the first line of `text` containing both `a` and `b`.
int LineOf(const std::string& text, const std::string& a, const std::string& b) {
  int n = 1;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    if (Contains(line, a) && Contains(line, b)) return n;
    start = end + 1;
    ++n;
  }
  return -1;
}

TEST_F(MultiSource, AHandEditedInvalidContractNamesFileLineAndField) {
  const std::string yaml = ToYaml(contract);
  const std::string path = tmp.File("schema.yaml");
  WriteFile(path, yaml);
  auto loaded = LoadContract(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();  // the unedited file is valid

  // A relationship to a type that does not exist.
  size_t index = contract.relationships.size();
  for (size_t i = 0; i < contract.relationships.size(); ++i) {
    if (contract.relationships[i].to == "Customer") index = i;
  }
  ASSERT_LT(index, contract.relationships.size());
  const std::string rel_name = "name: " + contract.relationships[index].name;
  const int line = LineOf(yaml, rel_name, "to: Customer");
  ASSERT_GT(line, 0) << yaml;
  std::string broken = yaml;
  const size_t at = broken.find("to: Customer", broken.find(rel_name));
  broken.replace(at, std::string("to: Customer").size(), "to: Custmer");
  WriteFile(path, broken);
  auto bad = LoadContract(path);
  ASSERT_FALSE(bad.ok());
  const std::string expected =
      "schema.yaml:" + std::to_string(line) + ": relationships[" + std::to_string(index) + "].to";
  EXPECT_TRUE(Contains(bad.status().message(), expected))
      << bad.status().ToString() << "\nexpected: " << expected;
  EXPECT_TRUE(Contains(bad.status().message(), "\"Custmer\"")) << bad.status().ToString();

  // Not YAML at all.
  WriteFile(path, yaml.substr(0, yaml.find("entity_types:")) + "entity_types: [\n");
  bad = LoadContract(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status().message(), "schema.yaml:")) << bad.status().ToString();
}

// A field reference of an entity type that is not in the catalog is
// reported at its own line as "entity_types[i].attributes", as relationship
// errors are ("relationships[0].to" at its own line).
TEST_F(MultiSource, AnUnknownAttributeIsReportedAtItsOwnLineAndField) {
  const std::string yaml = ToYaml(contract);
  const std::string path = tmp.File("schema.yaml");
  std::string broken = yaml;
  const std::string attrs = "attributes: [customer_id, name, city, segment]";
  ASSERT_NE(broken.find(attrs), std::string::npos) << yaml;
  const int attr_line = LineOf(yaml, attrs, "");
  broken.replace(broken.find(attrs), attrs.size(),
                 "attributes: [customer_id, name, city, segment, email]");
  WriteFile(path, broken);
  auto bad = LoadContract(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status().message(), "\"email\"")) << bad.status().ToString();
  size_t customer = contract.entity_types.size();
  for (size_t i = 0; i < contract.entity_types.size(); ++i) {
    if (contract.entity_types[i].source == "customers") customer = i;
  }
  const std::string expected = "schema.yaml:" + std::to_string(attr_line) + ": entity_types[" +
                               std::to_string(customer) + "].attributes";
  EXPECT_TRUE(Contains(bad.status().message(), expected))
      << bad.status().ToString() << "\nexpected: " << expected;
}

// In a pretty-printed JSON array a dangling reference in the 5th order,
// which starts on line 18 (its field on line 20), is reported at the
// record's real line.
TEST(SchemaIngest, ADanglingReferenceInPrettyPrintedJsonNamesItsRealLine) {
  TempDir tmp;
  const std::string dir = tmp.File("js");
  WriteFile(dir + "/customers.csv", kCustomers);
  const char* customer[] = {"C001", "C002", "C003", "C004", "C999", "C005",
                            "C006", "C007", "C008", "C009", "C010", "C001"};
  std::string orders = "[\n";
  for (int i = 0; i < 12; ++i) {
    orders += std::string(i ? ",\n" : "") + "  {\n    \"order_id\": \"O" + std::to_string(i) +
              "\",\n    \"customer_id\": \"" + customer[i] + "\"\n  }";
  }
  orders += "\n]\n";
  WriteFile(dir + "/orders.json", orders);
  ASSERT_EQ(LineOf(orders, "C999", ""), 20);
  auto contract = ContractOf(dir);
  ASSERT_TRUE(contract.ok()) << contract.status().ToString();
  ASSERT_EQ(contract->relationships.size(), 1u) << ToYaml(*contract);
  auto engine = Engine::Open(tmp.File("js.db"));
  ASSERT_TRUE(engine.ok());
  auto r = (*engine)->Ingest(dir, *contract, Offline());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->unresolved_links, 1u);
  ASSERT_EQ(r->warnings.size(), 1u) << ::testing::PrintToString(r->warnings);
  const std::string& w = r->warnings[0];
  EXPECT_TRUE(Contains(w, "customer_id: \"C999\"")) << w;
  EXPECT_TRUE(Contains(w, "orders.json:18:") || Contains(w, "orders.json:20:") ||
              Contains(w, "record #5"))
      << w;
}

TEST(SchemaIngest, QuotedNewlinesAndWindows1252BytesAreIngestedAndKept) {
  TempDir tmp;
  const std::string dir = tmp.File("enc"), db = tmp.File("enc.db");
  // Line 2–3: a quoted newline; line 4: Windows-1252 ë and €; line 6: UTF-8
  // é and doubled quotes; CRLF line ends on two rows.
  WriteFile(dir + "/people.csv",
            "person_id,name,city,remark\n"
            "P1,Ann Smith,Berlin,\"likes\nlong walks\"\n"
            "P2,Zo\xEB Durand,Paris,pays in \x80\r\n"
            "P3,Bob Jones,Rome,plain\r\n"
            "P4,Caf\xC3\xA9 Owner,Lyon,\"said \"\"hi\"\"\"\n"
            "P5,Eve Park,Oslo,ok\n");
  auto schema = InduceSchema(dir);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  ASSERT_EQ(schema->sources.size(), 1u);
  EXPECT_EQ(schema->sources[0].transcoded_fields, 2u);
  const SchemaContract contract = DeriveContract(*schema);
  auto engine = Engine::Open(db);
  ASSERT_TRUE(engine.ok());
  auto r = (*engine)->Ingest(dir, contract, Offline());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->records, 5u);

  Rows docs = Sql(db, "SELECT external_id, title, text FROM documents ORDER BY external_id");
  ASSERT_EQ(docs.size(), 5u);
  // Record lines count the quoted newline.
  EXPECT_EQ(Column(db, "SELECT external_id FROM documents"),
            (std::set<std::string>{"people.csv:2", "people.csv:4", "people.csv:5", "people.csv:6",
                                   "people.csv:7"}));
  EXPECT_TRUE(Contains(docs[0][2], "likes\nlong walks")) << docs[0][2];
  EXPECT_EQ(docs[1][1], "Zo\xC3\xAB Durand");  // transcoded to UTF-8
  EXPECT_TRUE(Contains(docs[1][2], "pays in \xE2\x82\xAC")) << docs[1][2];
  EXPECT_FALSE(Contains(docs[2][2], "\r")) << docs[2][2];
  EXPECT_EQ(docs[3][1], "Caf\xC3\xA9 Owner");
  EXPECT_TRUE(Contains(docs[3][2], "said \"hi\"")) << docs[3][2];
  EXPECT_FALSE(EntityTypeOf(db, "Zo\xC3\xAB Durand").empty());
  EXPECT_TRUE(Contains(RecordFields(db, "people.csv:2"), "likes\\nlong walks"))
      << RecordFields(db, "people.csv:2");
  EXPECT_EQ(TopBm25(**engine, "long walks"), "people.csv:2");
}

// Excel's "Unicode text" export (UTF-16LE with a mark), a JSONL file written
// by a Windows tool (Windows-1252 on one line, UTF-8 on another) and a
// UTF-16BE note: all ingested with the right characters, records cited at
// their real lines.
TEST(SchemaIngest, Utf16CsvWindows1252JsonlAndUtf16TextAreIngestedAsUtf8) {
  TempDir tmp;
  const std::string dir = tmp.File("enc"), db = tmp.File("enc.db");
  WriteFile(dir + "/customers.csv", ToUtf16("customer_id,name,city\r\n"
                                            "P1,Zo\xC3\xAB Durand,K\xC3\xB8"
                                            "benhavn\r\n"
                                            "P2,Ann Smith,Berlin\r\n"
                                            "P3,Bob \xE2\x82\xAC"
                                            "uro,Rome\r\n"
                                            "P4,Cy Moss,Oslo\r\n"
                                            "P5,Di Park,Lyon\r\n",
                                            true));
  WriteFile(dir + "/visits.jsonl",
            "{\"visit_id\": \"V1\", \"customer_id\": \"P1\", \"remark\": \"caf\xE9 au lait, \x80"
            "3\"}\n"
            "{\"visit_id\": \"V2\", \"customer_id\": \"P2\", \"remark\": \"cr\xC3\xA8me "
            "br\xC3\xBBl\xC3\xA9"
            "e\"}\n"
            "{\"visit_id\": \"V3\", \"customer_id\": \"P3\", \"remark\": \"plain\"}\n"
            "{\"visit_id\": \"V4\", \"customer_id\": \"P4\", \"remark\": \"plain\"}\n"
            "{\"visit_id\": \"V5\", \"customer_id\": \"P5\", \"remark\": \"plain\"}\n");
  WriteFile(dir + "/memo.md", ToUtf16("# Memo\n\nZo\xC3\xAB Durand moved to K\xC3\xB8"
                                      "benhavn.\n",
                                      false));
  auto schema = InduceSchema(dir);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  ASSERT_EQ(schema->sources.size(), 3u);
  size_t transcoded = 0;
  for (const SourceInfo& s : schema->sources) transcoded += s.transcoded_fields;
  EXPECT_EQ(transcoded, 1u);  // the one Windows-1252 line
  const SchemaContract contract = DeriveContract(*schema);
  auto engine = Engine::Open(db);
  ASSERT_TRUE(engine.ok());
  auto r = (*engine)->Ingest(dir, contract, Offline());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->records, 10u);
  EXPECT_EQ(r->text_documents, 1u);
  EXPECT_EQ(r->unresolved_links, 0u) << ::testing::PrintToString(r->warnings);

  EXPECT_EQ(Column(db, "SELECT external_id FROM documents WHERE external_id LIKE 'customers%'"),
            (std::set<std::string>{"customers.csv:2", "customers.csv:3", "customers.csv:4",
                                   "customers.csv:5", "customers.csv:6"}));
  EXPECT_EQ(Sql(db, "SELECT title FROM documents WHERE external_id = 'customers.csv:2'"),
            (Rows{{"Zo\xC3\xAB Durand"}}));
  EXPECT_TRUE(Contains(RecordFields(db, "customers.csv:2"),
                       "\"city\":\"K\xC3\xB8"
                       "benhavn\""))
      << RecordFields(db, "customers.csv:2");
  EXPECT_TRUE(Contains(RecordFields(db, "customers.csv:4"),
                       "Bob \xE2\x82\xAC"
                       "uro"))
      << RecordFields(db, "customers.csv:4");
  EXPECT_EQ(EntityTypeOf(db, "Zo\xC3\xAB Durand"), "Customer");
  EXPECT_TRUE(Contains(RecordFields(db, "visits.jsonl:1"),
                       "caf\xC3\xA9 au lait, \xE2\x82\xAC"
                       "3"))
      << RecordFields(db, "visits.jsonl:1");
  EXPECT_TRUE(Contains(RecordFields(db, "visits.jsonl:2"),
                       "cr\xC3\xA8me br\xC3\xBBl\xC3\xA9"
                       "e"))
      << RecordFields(db, "visits.jsonl:2");
  Rows memo = Sql(db, "SELECT title, text FROM documents WHERE external_id = 'memo.md'");
  ASSERT_EQ(memo.size(), 1u);
  EXPECT_EQ(memo[0][0], "Memo");
  EXPECT_TRUE(Contains(memo[0][1],
                       "K\xC3\xB8"
                       "benhavn"))
      << memo[0][1];
  EXPECT_EQ(Count(db, "SELECT count(*) FROM documents WHERE instr(text, char(0)) > 0"), 0);
  // Visits link to their customers across the encodings.
  bool linked = false;
  for (const auto& f : Facts(db)) {
    linked |= f[0].rfind("Visit ", 0) == 0 && f[1] == "CUSTOMER" && f[2] == "Zo\xC3\xAB Durand";
  }
  EXPECT_TRUE(linked) << ::testing::PrintToString(Facts(db));
}

// ---- 6. Deduplication (B.4) ---------------------------------------------------------------

TEST(SchemaIngest, RecordsSharingAnIdentityKeyDefineOneEntity) {
  TempDir tmp;
  const std::string dir = tmp.File("dd"), db = tmp.File("dd.db");
  // C001 twice (a re-export with a longer name), and two different
  // customers both called Globex.
  WriteFile(dir + "/customers.csv",
            "customer_id,name,city\n"
            "C001,Acme Corp,Berlin\n"
            "C002,Globex,Paris\n"
            "C003,Initech,Austin\n"
            "C004,Hooli,Palo Alto\n"
            "C005,Globex,Lyon\n"
            "C001,Acme Corporation,Berlin\n"
            "C006,Wonka,London\n");
  WriteFile(dir + "/orders.csv",
            "order_id,customer_id,amount\n"
            "1,C001,10\n"
            "2,C005,20\n"
            "3,C002,30\n"
            "4,C003,40\n"
            "5,C004,50\n"
            "6,C006,60\n");
  auto contract = ContractOf(dir);
  ASSERT_TRUE(contract.ok()) << contract.status().ToString();
  const EntityType* customer = TypeOf(*contract, "customers");
  ASSERT_NE(customer, nullptr);
  ASSERT_EQ(customer->identity_key, (std::vector<std::string>{"customer_id"})) << ToYaml(*contract);
  auto engine = Engine::Open(db);
  ASSERT_TRUE(engine.ok());
  auto r = (*engine)->Ingest(dir, *contract, Offline());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->merged_by_key, 1u);
  EXPECT_EQ(r->records, 7u + 6u);
  EXPECT_EQ(r->entities, 6u + 6u);
  EXPECT_EQ(r->unresolved_links, 0u);
  // Both records are kept and both define the one entity (first name wins).
  EXPECT_EQ(Count(db, "SELECT count(*) FROM entities WHERE type = " + Quoted(customer->name)), 6);
  EXPECT_EQ(DerivedFrom(db, "Acme Corp"),
            (std::set<std::string>{"customers.csv:2", "customers.csv:7"}));
  EXPECT_EQ(EntityTypeOf(db, "Acme Corporation"), "");
  EXPECT_TRUE(Contains(RecordFields(db, "customers.csv:7"), "\"Acme Corporation\""));
  // One name, two keys: the entities stay apart, told by their key, and
  // each order links to the right one.
  EXPECT_EQ(EntityTypeOf(db, "Globex"), "");
  EXPECT_EQ(EntityTypeOf(db, "Globex (C002)"), customer->name);
  EXPECT_EQ(EntityTypeOf(db, "Globex (C005)"), customer->name);
  std::map<std::string, std::string> customer_of;
  for (const auto& f : Facts(db)) customer_of[f[0]] = f[2];
  EXPECT_EQ(customer_of["Order 2"], "Globex (C005)");
  EXPECT_EQ(customer_of["Order 3"], "Globex (C002)");
  EXPECT_EQ(customer_of["Order 1"], "Acme Corp");
  auto stats = (*engine)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_DOUBLE_EQ(stats->schema.link_validity, 1.0);
  EXPECT_DOUBLE_EQ(stats->schema.provenance_completeness, 1.0);
}

TEST(SchemaIngest, NearIdenticalNamesOfATypeWithoutKeyMergeByEmbedding) {
  TempDir tmp;
  const std::string dir = tmp.File("dd");
  // Four records: too few for any identity key (min_key_values = 5). The
  // built-in hashed embedder rates "Wayne Enterprises" / "Wayne Enterprise"
  // above 0.85, and "Stark Industries" / "Stark Industries Ltd" below it.
  WriteFile(dir + "/suppliers.csv",
            "name,country\n"
            "Wayne Enterprises,US\n"
            "Wayne Enterprise,US\n"
            "Stark Industries,US\n"
            "Stark Industries Ltd,UK\n");
  auto contract = ContractOf(dir);
  ASSERT_TRUE(contract.ok()) << contract.status().ToString();
  const EntityType* supplier = TypeOf(*contract, "suppliers");
  ASSERT_NE(supplier, nullptr);
  ASSERT_TRUE(supplier->identity_key.empty()) << ToYaml(*contract);
  const std::string type = supplier->name;

  {
    const std::string db = tmp.File("merged.db");
    auto engine = Engine::Open(db);
    ASSERT_TRUE(engine.ok());
    auto r = (*engine)->Ingest(dir, *contract, Offline());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->merged_by_embedding, 1u);
    EXPECT_EQ(r->merged_by_key, 0u);
    EXPECT_EQ(r->records, 4u);
    EXPECT_EQ(r->entities, 3u);
    EXPECT_EQ(Count(db, "SELECT count(*) FROM entities WHERE type = " + Quoted(type)), 3);
    // The later spelling folds into the first; both records define it.
    EXPECT_EQ(DerivedFrom(db, "Wayne Enterprises"),
              (std::set<std::string>{"suppliers.csv:2", "suppliers.csv:3"}));
    EXPECT_EQ(EntityTypeOf(db, "Wayne Enterprise"), "");
    // Names below the threshold stay apart.
    EXPECT_EQ(EntityTypeOf(db, "Stark Industries"), type);
    EXPECT_EQ(EntityTypeOf(db, "Stark Industries Ltd"), type);
    // The record keeps its own spelling.
    EXPECT_TRUE(Contains(RecordFields(db, "suppliers.csv:3"), "\"Wayne Enterprise\""));
    auto stats = (*engine)->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_DOUBLE_EQ(stats->schema.provenance_completeness, 1.0);
  }
  {
    const std::string db = tmp.File("apart.db");
    auto engine = Engine::Open(db);
    ASSERT_TRUE(engine.ok());
    IngestOptions off = Offline();
    off.dedup_similarity = 0;  // stage 2 off
    auto r = (*engine)->Ingest(dir, *contract, off);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->merged_by_embedding, 0u);
    EXPECT_EQ(r->entities, 4u);
    EXPECT_EQ(EntityTypeOf(db, "Wayne Enterprise"), type);
    EXPECT_EQ(Count(db, "SELECT count(*) FROM entities WHERE type = " + Quoted(type)), 4);
  }
  {
    // A type with an identity key never merges by name, however close.
    const std::string keyed = tmp.File("keyed");
    WriteFile(keyed + "/suppliers.csv",
              "supplier_id,name,country\n"
              "S1,Wayne Enterprises,US\n"
              "S2,Wayne Enterprise,US\n"
              "S3,Stark Industries,US\n"
              "S4,Globex,FR\n"
              "S5,Hooli,US\n");
    auto keyed_contract = ContractOf(keyed);
    ASSERT_TRUE(keyed_contract.ok()) << keyed_contract.status().ToString();
    ASSERT_FALSE(TypeOf(*keyed_contract, "suppliers")->identity_key.empty());
    const std::string db = tmp.File("keyed.db");
    auto engine = Engine::Open(db);
    ASSERT_TRUE(engine.ok());
    auto r = (*engine)->Ingest(keyed, *keyed_contract, Offline());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->merged_by_embedding, 0u);
    EXPECT_EQ(r->entities, 5u);
    EXPECT_EQ(EntityTypeOf(db, "Wayne Enterprise"), TypeOf(*keyed_contract, "suppliers")->name);
  }
}

// IngestReport::entities counts entities as the store keys them
// (EntityKey: case and punctuation folded), so records named "Acme
// Corporation Ltd" and "Acme Corporation Ltd." are one entity in both.
TEST(SchemaIngest, ReportedEntitiesMatchTheStoreWhenNamesDifferOnlyInPunctuation) {
  TempDir tmp;
  const std::string dir = tmp.File("dd"), db = tmp.File("dd.db");
  WriteFile(dir + "/suppliers.csv",
            "name,country\n"
            "Acme Corporation Ltd,UK\n"
            "Acme Corporation Ltd.,UK\n"
            "Initech Systems,US\n"
            "Globex,FR\n");
  auto contract = ContractOf(dir);
  ASSERT_TRUE(contract.ok()) << contract.status().ToString();
  auto engine = Engine::Open(db);
  ASSERT_TRUE(engine.ok());
  IngestOptions off = Offline();
  off.dedup_similarity = 0;
  auto r = (*engine)->Ingest(dir, *contract, off);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Count(db, "SELECT count(*) FROM entities"), 3);
  EXPECT_EQ(r->entities, 3u);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
