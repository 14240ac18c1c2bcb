// Exclusions from induction to ingestion (schema-contracts paper A.3, issue
// 6): the rules of the manifest a contract was induced under are written
// into the contract, so ingesting the folder under that contract removes
// exactly the same files and fields even when the manifest is not given
// again (a data leak before); `IngestOptions::exclusions` (flowrag ingest
// --exclude) adds rules; each contract source reads only its own files, so
// excluding, adding or removing files never renames a source.
#include <gtest/gtest.h>

#include <filesystem>
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

// Each appears only in data that the tests exclude.
constexpr char kNoteSecret[] = "Xylophone-Nebula-42";  // in notes bob and carol
constexpr char kPassword[] = "Quasar-Violet-77";       // a password of users.csv

constexpr char kUsers[] =
    "user_id,name,city,password\n"
    "U1,Ann Smith,Berlin,Quasar-Violet-77\n"
    "U2,Bob Jones,Paris,hunter2\n"
    "U3,Cid Moss,Rome,letmein\n"
    "U4,Dee Park,Oslo,qwerty\n"
    "U5,Eve Lund,Lyon,dragon\n";

void WriteNotes(const std::string& dir, const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    const std::string text = n == "carol" || n == "bob"
                                 ? "# Note " + n + "\n\nThe vault code is " + kNoteSecret + ".\n"
                                 : "# Note " + n + "\n\nAnn Smith met Bob Jones in Berlin.\n";
    WriteFile(dir + "/notes/" + n + ".txt", text);
  }
}

// Every place ingestion writes text: documents (and so their passages,
// which are ranges of them), record fields, entity names and relations,
// then the raw bytes of the store file itself.
std::vector<std::string> WhereIs(const std::string& db, const std::string& needle) {
  std::vector<std::string> found;
  const std::string q = Quoted(needle);
  const std::vector<std::pair<std::string, std::string>> checks = {
      {"documents", "SELECT count(*) FROM documents WHERE instr(text, " + q + ") OR instr(title, " + q + ")"},
      {"passages",
       "SELECT count(*) FROM passages p JOIN documents d ON d.id = p.document_id WHERE "
       "instr(substr(CAST(d.text AS BLOB), p.begin_offset + 1, p.end_offset - p.begin_offset), "
       "CAST(" + q + " AS BLOB))"},
      {"source_records", "SELECT count(*) FROM source_records WHERE instr(fields, " + q + ")"},
      {"entities", "SELECT count(*) FROM entities WHERE instr(name, " + q + ")"},
      {"relations", "SELECT count(*) FROM relations WHERE instr(text, " + q + ")"},
      {"meta", "SELECT count(*) FROM meta WHERE instr(value, " + q + ")"},
  };
  for (const auto& [table, sql] : checks) {
    if (Count(db, sql) > 0) found.push_back(table);
  }
  for (const std::string& file : {db, db + "-wal"}) {
    if (std::filesystem::exists(file) && Contains(ReadFile(file), needle)) found.push_back(file);
  }
  return found;
}

Result<IngestReport> IngestInto(const std::string& db, const std::string& dir,
                                const SchemaContract& contract, const IngestOptions& options) {
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Open(db));
  return engine->Ingest(dir, contract, options);
}

// The contract as `flowrag schema induce DIR --exclude MANIFEST --out F`
// writes it, read back as `flowrag ingest --schema F` reads it.
Result<SchemaContract> InducedThroughYaml(const std::string& dir, const std::string& manifest,
                                          const std::string& yaml_path) {
  SchemaOptions o;
  o.exclusions = manifest;
  FLOWRAG_ASSIGN_OR_RETURN(InducedSchema s, InduceSchema(dir, o));
  WriteFile(yaml_path, ToYaml(DeriveContract(s)));
  return LoadContract(yaml_path);
}

std::vector<std::string> Names(const SchemaContract& c) {
  std::vector<std::string> out;
  for (const SourceInfo& s : c.structure.sources) out.push_back(s.name);
  return out;
}

TEST(SchemaExclusions, ACustomManifestAtInductionHoldsAtIngestionWithoutIt) {
  TempDir tmp;
  const std::string dir = tmp.File("data"), db = tmp.File("x.db");
  WriteFile(dir + "/users.csv", kUsers);
  WriteNotes(dir, {"alice", "bob_ok", "carol"});
  // The manifest lives outside the folder: ingestion cannot find it.
  const std::string manifest = tmp.File("private.yaml");
  WriteFile(manifest,
            "exclude:\n  files: [\"notes/carol.txt\"]\n  fields: [\"users.password\"]\n");
  auto contract = InducedThroughYaml(dir, manifest, tmp.File("schema.yaml"));
  ASSERT_TRUE(contract.ok()) << contract.status().ToString();
  EXPECT_EQ(Names(*contract), (std::vector<std::string>{"notes", "users"}));
  EXPECT_EQ(contract->structure.exclusion_rules.files, std::vector<std::string>{"notes/carol.txt"});
  EXPECT_EQ(contract->structure.exclusion_rules.fields, std::vector<std::string>{"users.password"});
  std::filesystem::remove(manifest);

  auto r = IngestInto(db, dir, *contract, Offline());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->records, 5u);
  EXPECT_EQ(r->text_documents, 2u);  // 2 of 3 notes, as induction showed
  EXPECT_EQ(Column(db, "SELECT external_id FROM documents WHERE external_id LIKE 'notes/%'"),
            (std::set<std::string>{"notes/alice.txt", "notes/bob_ok.txt"}));
  for (const char* secret : {kNoteSecret, kPassword, "hunter2"}) {
    EXPECT_TRUE(WhereIs(db, secret).empty()) << secret << ": " << ::testing::PrintToString(WhereIs(db, secret));
  }
  EXPECT_FALSE(Contains(RecordFields(db, "users.csv:2"), "password")) << RecordFields(db, "users.csv:2");
  EXPECT_TRUE(Contains(RecordFields(db, "users.csv:2"), "Berlin"));  // the rest is there
  for (const std::string& w : r->warnings) EXPECT_FALSE(Contains(w, "carol")) << w;
}

TEST(SchemaExclusions, ExcludingOneOfTwoNotesKeepsTheSingleFileSourceItNamed) {
  TempDir tmp;
  const std::string dir = tmp.File("data"), db = tmp.File("x.db");
  WriteFile(dir + "/users.csv", kUsers);
  WriteNotes(dir, {"alice", "bob"});
  const std::string manifest = tmp.File("private.yaml");
  WriteFile(manifest, "exclude:\n  files: [\"notes/bob.txt\"]\n");
  auto contract = InducedThroughYaml(dir, manifest, tmp.File("schema.yaml"));
  ASSERT_TRUE(contract.ok()) << contract.status().ToString();
  // One text file left: a source of its own, named by its path.
  EXPECT_EQ(Names(*contract), (std::vector<std::string>{"notes/alice", "users"}));

  auto r = IngestInto(db, dir, *contract, Offline());
  ASSERT_TRUE(r.ok()) << r.status().ToString();  // was NotFound: "notes/alice" is not in the folder
  EXPECT_EQ(r->text_documents, 1u);
  EXPECT_EQ(Column(db, "SELECT external_id FROM documents WHERE external_id LIKE 'notes/%'"),
            (std::set<std::string>{"notes/alice.txt"}));
  EXPECT_TRUE(WhereIs(db, kNoteSecret).empty()) << ::testing::PrintToString(WhereIs(db, kNoteSecret));
}

TEST(SchemaExclusions, IngestExclusionsAddToTheContractsAndTakeStoredRecordsAway) {
  TempDir tmp;
  const std::string dir = tmp.File("data"), db = tmp.File("x.db");
  WriteFile(dir + "/users.csv", kUsers);
  WriteNotes(dir, {"alice", "bob_ok", "carol"});
  auto contract = ContractOf(dir);  // no exclusions at all
  ASSERT_TRUE(contract.ok()) << contract.status().ToString();
  auto first = IngestInto(db, dir, *contract, Offline());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->text_documents, 3u);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM documents WHERE instr(text, " + Quoted(kNoteSecret) + ")"), 1);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM documents WHERE instr(text, " + Quoted(kPassword) + ")"), 1);

  // flowrag ingest --exclude: carol's note and every password go.
  const std::string manifest = tmp.File("later.yaml");
  WriteFile(manifest, "exclude:\n  files: [\"notes/carol.txt\"]\n  fields: [\"*.password\"]\n");
  IngestOptions o = Offline();
  o.exclusions = manifest;
  auto second = IngestInto(db, dir, *contract, o);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->text_documents, 2u);
  EXPECT_EQ(second->records_removed, 1u);  // carol's note
  EXPECT_EQ(second->index.documents_replaced, 5u);  // every user without a password
  EXPECT_EQ(Count(db, "SELECT count(*) FROM documents WHERE instr(text, " + Quoted(kNoteSecret) + ")"), 0);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM documents WHERE instr(text, " + Quoted(kPassword) + ")"), 0);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM source_records WHERE instr(fields, 'hunter2')"), 0);

  // Every file of a source excluded: the source is skipped, its records removed.
  WriteFile(manifest, "exclude:\n  files: [\"notes/*\"]\n");
  auto third = IngestInto(db, dir, *contract, o);
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(third->text_documents, 0u);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM documents WHERE external_id LIKE 'notes/%'"), 0);
  bool said = false;
  for (const std::string& w : third->warnings) said |= Contains(w, "\"notes\": all its files are excluded");
  EXPECT_TRUE(said) << ::testing::PrintToString(third->warnings);

  // A broken manifest names its file and line; the store is untouched.
  WriteFile(manifest, "exclude:\n  files: [\"\"]\n");
  auto bad = IngestInto(db, dir, *contract, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status().message(), "later.yaml:2: exclude.files[0]"))
      << bad.status().ToString();
}

TEST(SchemaExclusions, FilesAddedAfterInductionNeitherRenameNorJoinASource) {
  TempDir tmp;
  const std::string dir = tmp.File("data"), db = tmp.File("x.db");
  WriteFile(dir + "/users.csv", kUsers);
  WriteNotes(dir, {"alice"});
  auto contract = ContractOf(dir);
  ASSERT_TRUE(contract.ok()) << contract.status().ToString();
  ASSERT_EQ(Names(*contract), (std::vector<std::string>{"notes/alice", "users"}));
  // Two more notes: a fresh discovery would make "notes" one corpus source.
  WriteNotes(dir, {"bob", "dave"});
  auto r = IngestInto(db, dir, *contract, Offline());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Column(db, "SELECT external_id FROM documents WHERE external_id LIKE 'notes/%'"),
            (std::set<std::string>{"notes/alice.txt"}));
  std::string warnings;
  for (const std::string& w : r->warnings) warnings += w + "\n";
  EXPECT_TRUE(Contains(warnings, "notes/bob.txt: in no source of the contract")) << warnings;
  EXPECT_TRUE(Contains(warnings, "notes/dave.txt: in no source of the contract")) << warnings;

  // A corpus source reads whatever its directory holds now.
  TempDir tmp2;
  const std::string dir2 = tmp2.File("data");
  WriteNotes(dir2, {"alice", "bob_ok"});
  auto corpus = ContractOf(dir2);
  ASSERT_TRUE(corpus.ok()) << corpus.status().ToString();
  ASSERT_EQ(Names(*corpus), std::vector<std::string>{"notes"});
  ASSERT_EQ(corpus->structure.sources[0].corpus_files, 2u);
  std::filesystem::remove(dir2 + "/notes/bob_ok.txt");
  auto one = IngestInto(tmp2.File("y.db"), dir2, *corpus, Offline());
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->text_documents, 1u);
  std::filesystem::remove(dir2 + "/notes/alice.txt");
  auto none = IngestInto(tmp2.File("y.db"), dir2, *corpus, Offline());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound) << none.status().ToString();
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
