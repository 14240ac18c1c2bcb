#include "extract/openie_import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Triple = std::array<std::string, 3>;
using ::flowrag::testing::TempDir;
using ::flowrag::testing::WriteFile;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << text << "\"\n  does not contain \"" << part << "\"";
}
#define EXPECT_CONTAINS(text, part) EXPECT_TRUE(Contains((text), (part)))

std::string Fixture(const std::string& name) {
  return std::string(FLOWRAG_TESTDATA_DIR) + "/openie/" + name;
}

// Reads `path` expecting an error; returns it.
Status ReadError(const std::string& path, const OpenIeReadOptions& options = {},
                 OpenIeReport* report = nullptr) {
  auto r = ReadAllOpenIe(path, options, report);
  EXPECT_FALSE(r.ok()) << path << " read " << (r.ok() ? r->size() : 0) << " records";
  return r.status();
}

OpenIeReadOptions Skipping() {
  OpenIeReadOptions o;
  o.skip_bad_records = true;
  return o;
}

std::string AllMessages(const OpenIeReport& report) {
  std::string all;
  for (const std::string& m : report.messages) all += m + "\n";
  return all;
}

// ---------------------------------------------------------------------------
// Format detection.

TEST(DetectOpenIeFormatTest, ByExtension) {
  EXPECT_EQ(*DetectOpenIeFormat(Fixture("bench_small.jsonl")), OpenIeFormat::kBenchmarkJsonl);
  EXPECT_EQ(*DetectOpenIeFormat(Fixture("hipporag2_openie_results_ner_gpt-4o-mini.json")),
            OpenIeFormat::kHippoRagJson);
  TempDir dir;
  WriteFile(dir.File("A.NDJSON"), "{\"id\": \"a\", \"entities\": [], \"triples\": []}\n");
  EXPECT_EQ(*DetectOpenIeFormat(dir.File("A.NDJSON")), OpenIeFormat::kBenchmarkJsonl);
  WriteFile(dir.File("B.JSON"), "\xEF\xBB\xBF  \n {\"docs\": []}");
  EXPECT_EQ(*DetectOpenIeFormat(dir.File("B.JSON")), OpenIeFormat::kHippoRagJson);
  EXPECT_EQ(OpenIeFormatName(OpenIeFormat::kBenchmarkJsonl), "benchmark-jsonl");
  EXPECT_EQ(OpenIeFormatName(OpenIeFormat::kHippoRagJson), "hipporag-json");
}

TEST(DetectOpenIeFormatTest, UnknownExtensionByContent) {
  TempDir dir;
  WriteFile(dir.File("results.out"), "\n  {\"docs\": [], \"avg_ent_chars\": 1}");
  EXPECT_EQ(*DetectOpenIeFormat(dir.File("results.out")), OpenIeFormat::kHippoRagJson);
  WriteFile(dir.File("rows"), "{\"id\": \"a\", \"entities\": [], \"triples\": []}\n");
  EXPECT_EQ(*DetectOpenIeFormat(dir.File("rows")), OpenIeFormat::kBenchmarkJsonl);

  WriteFile(dir.File("notes.txt"), "hello");
  auto r = DetectOpenIeFormat(dir.File("notes.txt"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(r.status().message(), dir.File("notes.txt") + ": unknown format");
  EXPECT_CONTAINS(r.status().message(), "starts with 'h'");
  EXPECT_CONTAINS(r.status().message(), "openie.jsonl");
}

TEST(DetectOpenIeFormatTest, Errors) {
  TempDir dir;
  auto missing = DetectOpenIeFormat(dir.File("nope.jsonl"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_CONTAINS(missing.status().message(), dir.File("nope.jsonl"));

  WriteFile(dir.File("empty.jsonl"), "");
  auto empty = DetectOpenIeFormat(dir.File("empty.jsonl"));
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(empty.status().message(), dir.File("empty.jsonl") + ": file is empty");

  WriteFile(dir.File("blank.json"), " \n\t\n");
  auto blank = DetectOpenIeFormat(dir.File("blank.json"));
  EXPECT_CONTAINS(blank.status().message(), "file is empty (only whitespace)");

  WriteFile(dir.File("list.json"), "[{\"passage\": \"x\"}]");
  auto list = DetectOpenIeFormat(dir.File("list.json"));
  EXPECT_EQ(list.status().code(), StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(list.status().message(), "starts with '['");
  EXPECT_CONTAINS(list.status().message(), "\"docs\"");

  WriteFile(dir.File("bench/openie.jsonl"), "{}\n");
  auto directory = DetectOpenIeFormat(dir.File("bench"));
  EXPECT_EQ(directory.status().code(), StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(directory.status().message(), "is a directory");
  EXPECT_CONTAINS(directory.status().message(), "did you mean " + dir.File("bench/openie.jsonl"));
}

// ---------------------------------------------------------------------------
// Benchmark JSONL.

TEST(ReadOpenIeTest, BenchmarkFixture) {
  OpenIeReport report;
  auto r = ReadAllOpenIe(Fixture("bench_small.jsonl"), {}, &report);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::vector<OpenIeRecord>& recs = *r;
  ASSERT_EQ(recs.size(), 4u);

  EXPECT_EQ(recs[0].passage_key, "demo-p0");
  EXPECT_FALSE(recs[0].key_is_text);
  EXPECT_EQ(recs[0].line_or_index, 1);
  EXPECT_EQ(recs[0].entities, (std::vector<std::string>{"Alan Turing", "Bletchley Park", "1912"}));
  EXPECT_EQ(recs[0].triples, (std::vector<Triple>{{"Alan Turing", "worked at", "Bletchley Park"},
                                                  {"Alan Turing", "born in", "1912"}}));
  EXPECT_EQ(recs[1].passage_key, "7");  // an integer id, printed in decimal
  EXPECT_EQ(recs[1].line_or_index, 3);  // line 2 is blank
  EXPECT_TRUE(recs[1].entities.empty());
  EXPECT_TRUE(recs[1].triples.empty());
  EXPECT_EQ(recs[2].passage_key, "demo-p2");
  EXPECT_EQ(recs[2].triples.size(), 2u);
  EXPECT_EQ(recs[3].passage_key, "demo-p3");  // CRLF line ending
  EXPECT_EQ(recs[3].triples, (std::vector<Triple>{{"Colossus", "built in", "1943"}}));

  EXPECT_EQ(report.records_read, 4);
  EXPECT_EQ(report.records_delivered, 4);
  EXPECT_EQ(report.records_skipped, 0);
  EXPECT_EQ(report.entities_read, 7);
  EXPECT_EQ(report.entities_kept, 5);
  EXPECT_EQ(report.empty_entities_dropped, 1);
  EXPECT_EQ(report.duplicate_entities_removed, 1);
  EXPECT_EQ(report.triples_read, 10);
  EXPECT_EQ(report.triples_kept, 5);
  EXPECT_EQ(report.triples_rejected, 4);
  EXPECT_EQ(report.duplicate_triples_removed, 1);
  EXPECT_EQ(report.triples_read,
            report.triples_kept + report.triples_rejected + report.duplicate_triples_removed);

  // Rejected triples and dropped entities are noted with file:line and place.
  const std::string all = AllMessages(report);
  const std::string where = Fixture("bench_small.jsonl") + ":1: ";
  EXPECT_CONTAINS(all, where + "\"entities\"[3] is empty: entity dropped");
  EXPECT_CONTAINS(all, where +
                           "\"triples\"[3] has 2 elements: expected [subject, relation, "
                           "object]");
  EXPECT_CONTAINS(all, where + "\"triples\"[4] has 4 elements");
  EXPECT_CONTAINS(all, where + "\"triples\"[5] [2] is an integer");
  EXPECT_CONTAINS(all, where + "\"triples\"[6] has an empty subject");
  EXPECT_CONTAINS(all, "(triple rejected)");
}

TEST(ReadOpenIeTest, BenchmarkByteOrderMarkAndNonFiniteNumbers) {
  TempDir dir;
  WriteFile(
      dir.File("o.jsonl"),
      "\xEF\xBB\xBF{\"id\": \"a\", \"entities\": [\"NaN\"], \"triples\": [], \"score\": NaN}\n"
      "{\"id\": \"b\", \"entities\": [\"-Infinity x\"], \"triples\": [], \"s\": -Infinity}\n"
      "{\"id\": \"c\", \"entities\": [], \"triples\": [], \"s\": [Infinity, -1, -2.5]}\n");
  OpenIeReport report;
  auto r = ReadAllOpenIe(dir.File("o.jsonl"), {}, &report);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].passage_key, "a");
  EXPECT_EQ((*r)[0].entities, std::vector<std::string>{"NaN"});  // inside a string: kept
  EXPECT_EQ((*r)[1].entities, std::vector<std::string>{"-Infinity x"});
  EXPECT_EQ(report.nonfinite_numbers_replaced, 3);
}

TEST(ReadOpenIeTest, ExplicitFormatOverridesDetection) {
  TempDir dir;
  WriteFile(dir.File("rows.txt"), "{\"id\": \"a\", \"entities\": [\"x\"], \"triples\": []}\n");
  OpenIeReadOptions o;
  o.format = OpenIeFormat::kBenchmarkJsonl;
  auto r = ReadAllOpenIe(dir.File("rows.txt"), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->size(), 1u);

  o.format = OpenIeFormat::kHippoRagJson;
  Status st = ReadError(dir.File("rows.txt"), o);
  EXPECT_CONTAINS(st.message(), "missing \"docs\"");

  WriteFile(dir.File("empty.json"), "  \n");
  st = ReadError(dir.File("empty.json"), o);
  EXPECT_CONTAINS(st.message(), dir.File("empty.json") + ": file is empty");
  o.format = OpenIeFormat::kBenchmarkJsonl;
  st = ReadError(dir.File("empty.json"), o);
  EXPECT_CONTAINS(st.message(), dir.File("empty.json") + ": file is empty (only blank lines)");

  st = ReadError(dir.File("missing.jsonl"), o);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
}

// One malformed row each: the message names file:line, the field and what was expected.
struct BadRow {
  std::string line;
  std::string message;  // expected after "<path>:2: "
};

TEST(ReadOpenIeTest, BenchmarkRecordErrors) {
  const std::vector<BadRow> cases = {
      {"{\"id\": \"x\", \"entities\": [}", "invalid JSON (at column 26: syntax error"},
      {"[\"x\", [], []]", "expected a JSON object {\"id\", \"entities\", \"triples\"}, got a list"},
      {"\"just a string\"",
       "expected a JSON object {\"id\", \"entities\", \"triples\"}, got a string"},
      {"{\"entities\": [], \"triples\": []}",
       "missing \"id\": expected a non-empty string or an "
       "integer (the corpus id)"},
      {"{\"id\": null, \"entities\": [], \"triples\": []}", "missing \"id\""},
      {"{\"id\": \"\", \"entities\": [], \"triples\": []}", "\"id\" is an empty string"},
      {"{\"id\": 1.5, \"entities\": [], \"triples\": []}", "\"id\" is a non-integer number"},
      {"{\"id\": \"x\", \"triples\": []}", "missing \"entities\": expected a list of strings"},
      {"{\"id\": \"x\", \"entities\": \"Paris\", \"triples\": []}",
       "\"entities\" is a string: expected a list of strings"},
      {"{\"id\": \"x\", \"entities\": {\"a\": 1}, \"triples\": []}", "\"entities\" is an object"},
      {"{\"id\": \"x\", \"entities\": [\"a\", 1963], \"triples\": []}",
       "\"entities\"[1] is an integer: expected a string"},
      {"{\"id\": \"x\", \"entities\": [null], \"triples\": []}", "\"entities\"[0] is null"},
      {"{\"id\": \"x\", \"entities\": []}",
       "missing \"triples\": expected a list of [subject, "
       "relation, object] lists"},
      {"{\"id\": \"x\", \"entities\": [], \"triples\": {\"s\": \"r\"}}",
       "\"triples\" is an object"},
      {"{\"id\": \"a\", \"entities\": [], \"triples\": []}",
       "duplicate id \"a\", first at line 1: expected one record per passage"},
  };
  TempDir dir;
  int n = 0;
  for (const BadRow& c : cases) {
    const std::string path = dir.File("bad" + std::to_string(n++) + ".jsonl");
    WriteFile(path, "{\"id\": \"a\", \"entities\": [\"e\"], \"triples\": []}\n" + c.line +
                        "\n{\"id\": \"z\", \"entities\": [], \"triples\": []}\n");
    std::vector<std::string> keys;
    OpenIeReport report;
    Status st = ReadOpenIe(
        path, {},
        [&keys](OpenIeRecord&& rec) {
          keys.push_back(rec.passage_key);
          return Status::Ok();
        },
        &report);
    ASSERT_FALSE(st.ok()) << c.line;
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.line;
    EXPECT_CONTAINS(st.message(), path + ":2: ");
    EXPECT_CONTAINS(st.message(), c.message);
    EXPECT_EQ(keys, std::vector<std::string>{"a"}) << "records before the error reach the sink";

    // Skipping: the bad row is counted and noted, the rest is read.
    keys.clear();
    st = ReadOpenIe(
        path, Skipping(),
        [&keys](OpenIeRecord&& rec) {
          keys.push_back(rec.passage_key);
          return Status::Ok();
        },
        &report);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(keys, (std::vector<std::string>{"a", "z"})) << c.line;
    EXPECT_EQ(report.records_read, 3);
    EXPECT_EQ(report.records_delivered, 2);
    EXPECT_EQ(report.records_skipped, 1);
    EXPECT_EQ(report.entities_read, 1) << "a skipped record adds no entity counts";
    ASSERT_EQ(report.messages.size(), 1u);
    EXPECT_CONTAINS(report.messages[0], "skipped: " + path + ":2: " + c.message);
  }
}

TEST(ReadOpenIeTest, MalformedTriplesAreRejectedNotFatal) {
  TempDir dir;
  const std::string path = dir.File("t.jsonl");
  WriteFile(path,
            "{\"id\": \"a\", \"entities\": [\"S\"], \"triples\": [[\"S\", \"r\", \"O\"], "
            "[\"S\", \"r\"], [\"S\", \"r\", \"O\", \"x\"], [], \"S r O\", [\"S\", null, \"O\"], "
            "[\"S\", [\"r\"], \"O\"], [\"S\", \"r\", \"  \"], [\"S\", \"\", \"O2\"]]}\n");
  OpenIeReport report;
  auto r = ReadAllOpenIe(path, {}, &report);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].triples, (std::vector<Triple>{{"S", "r", "O"}, {"S", "", "O2"}}))
      << "an empty relation is allowed";
  EXPECT_EQ(report.triples_read, 9);
  EXPECT_EQ(report.triples_kept, 2);
  EXPECT_EQ(report.triples_rejected, 7);
  const std::string all = AllMessages(report);
  EXPECT_CONTAINS(all, path + ":1: \"triples\"[1] has 2 elements");
  EXPECT_CONTAINS(all, "\"triples\"[2] has 4 elements");
  EXPECT_CONTAINS(all, "\"triples\"[3] has 0 elements");
  EXPECT_CONTAINS(all, "\"triples\"[4] is a string");
  EXPECT_CONTAINS(all, "\"triples\"[5] [1] is null");
  EXPECT_CONTAINS(all, "\"triples\"[6] [1] is a list");
  EXPECT_CONTAINS(all, "\"triples\"[7] has an empty object");
}

TEST(ReadOpenIeTest, SkipCountsAndMessageLimit) {
  TempDir dir;
  const std::string path = dir.File("mixed.jsonl");
  std::string content;
  for (int i = 0; i < 30; ++i) {
    if (i % 3 == 0) {
      content += "{\"id\": \"p" + std::to_string(i) + "\", \"entities\": 5, \"triples\": []}\n";
    } else if (i % 3 == 1) {
      content += "not json\n";
    } else {
      content += "{\"id\": \"p" + std::to_string(i) +
                 "\", \"entities\": [\"a\"], \"triples\": [[\"a\", \"r\", \"b\"], [\"a\"]]}\n";
    }
  }
  WriteFile(path, content);
  OpenIeReadOptions o = Skipping();
  o.max_report_messages = 5;
  OpenIeReport report;
  auto r = ReadAllOpenIe(path, o, &report);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->size(), 10u);
  EXPECT_EQ(report.records_read, 30);
  EXPECT_EQ(report.records_delivered, 10);
  EXPECT_EQ(report.records_skipped, 20);
  EXPECT_EQ(report.triples_kept, 10);
  EXPECT_EQ(report.triples_rejected, 10);
  ASSERT_EQ(report.messages.size(), 5u);
  EXPECT_CONTAINS(report.messages[0], "skipped: " + path + ":1: \"entities\" is an integer");
  EXPECT_CONTAINS(report.messages[1], "skipped: " + path + ":2: invalid JSON (at column 2: ");
  EXPECT_CONTAINS(report.messages[1], "): expected one object per line");
  EXPECT_CONTAINS(report.messages[2], path + ":3: \"triples\"[1] has 1 element:");

  // Only bad rows: nothing delivered, but that is not an error when skipping.
  WriteFile(path, "oops\n[1]\n");
  r = ReadAllOpenIe(path, Skipping(), &report);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size(), 0u);
  EXPECT_EQ(report.records_skipped, 2);
}

TEST(ReadOpenIeTest, SinkErrorStopsTheRead) {
  int calls = 0;
  Status st = ReadOpenIe(Fixture("bench_small.jsonl"), {}, [&calls](OpenIeRecord&&) {
    return ++calls == 2 ? Status::Cancelled("enough") : Status::Ok();
  });
  EXPECT_EQ(st.code(), StatusCode::kCancelled);
  EXPECT_EQ(st.message(), "enough");
  EXPECT_EQ(calls, 2);

  calls = 0;
  st = ReadOpenIe(Fixture("hipporag2_openie_results_ner_gpt-4o-mini.json"), {},
                  [&calls](OpenIeRecord&&) {
                    ++calls;
                    return Status::IoError("disk full");
                  });
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_EQ(st.message(), "disk full");
  EXPECT_EQ(calls, 1);
}

// ---------------------------------------------------------------------------
// HippoRAG JSON.

TEST(ReadOpenIeTest, HippoRag2Fixture) {
  OpenIeReport report;
  const std::string path = Fixture("hipporag2_openie_results_ner_gpt-4o-mini.json");
  auto r = ReadAllOpenIe(path, {}, &report);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  const OpenIeRecord& a = (*r)[0];
  EXPECT_TRUE(a.key_is_text);
  EXPECT_EQ(a.passage_key, "Alan Turing\nAlan Turing worked at Bletchley Park during the war.");
  EXPECT_EQ(a.idx, "chunk-2bdf5f0b0bea99aaebc48f1ff6a14507");
  EXPECT_EQ(a.line_or_index, 0);
  EXPECT_EQ(a.entities, (std::vector<std::string>{"Alan Turing", "Bletchley Park"}));
  EXPECT_EQ(a.triples, (std::vector<Triple>{{"Alan Turing", "worked at", "Bletchley Park"}}));
  EXPECT_EQ((*r)[1].line_or_index, 1);
  EXPECT_EQ(report.records_read, 2);
  EXPECT_EQ(report.records_delivered, 2);
  EXPECT_EQ(report.triples_read, 4);
  EXPECT_EQ(report.triples_kept, 2);
  EXPECT_EQ(report.triples_rejected, 2);
  EXPECT_EQ(report.nonfinite_numbers_replaced, 0);
  const std::string all = AllMessages(report);
  EXPECT_CONTAINS(all, path + ": docs[0]: \"extracted_triples\"[1] has 2 elements");
  EXPECT_CONTAINS(all, path + ": docs[0]: \"extracted_triples\"[2] has 4 elements");
}

TEST(ReadOpenIeTest, HippoRag1FixtureWithNaN) {
  OpenIeReport report;
  auto r =
      ReadAllOpenIe(Fixture("hipporag1_openie_results_ner_gpt-3.5-turbo-1106_2.json"), {}, &report);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].passage_key, "Colossus computer\nColossus was built in 1943.");
  EXPECT_EQ((*r)[0].idx, "0");
  EXPECT_EQ((*r)[1].idx, "1");
  EXPECT_EQ((*r)[1].triples, (std::vector<Triple>{{"Tommy Flowers", "designed", "Colossus"}}));
  EXPECT_EQ(report.nonfinite_numbers_replaced, 3);  // NaN, NaN, Infinity
}

TEST(ReadOpenIeTest, HippoRagRecordErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"42",
       "expected a JSON object {\"passage\", \"extracted_entities\", \"extracted_triples\"}, "
       "got an integer"},
      {"[\"p\", [], []]",
       "expected a JSON object {\"passage\", \"extracted_entities\", "
       "\"extracted_triples\"}, got a list"},
      {"{\"idx\": \"chunk-1\", \"extracted_entities\": [], \"extracted_triples\": []}",
       "missing \"passage\": expected a non-empty string (the passage text)"},
      {"{\"passage\": \" \\n \", \"extracted_entities\": [], \"extracted_triples\": []}",
       "\"passage\" is blank"},
      {"{\"passage\": 3, \"extracted_entities\": [], \"extracted_triples\": []}",
       "\"passage\" is an integer"},
      {"{\"passage\": \"q\", \"extracted_entities\": \"x\", \"extracted_triples\": []}",
       "\"extracted_entities\" is a string: expected a list of strings"},
      {"{\"passage\": \"q\", \"extracted_entities\": [true], \"extracted_triples\": []}",
       "\"extracted_entities\"[0] is a boolean: expected a string"},
      {"{\"passage\": \"q\", \"extracted_entities\": []}", "missing \"extracted_triples\""},
      {"{\"passage\": \"p\", \"extracted_entities\": [], \"extracted_triples\": []}",
       "duplicate passage text, first at docs[0]"},
  };
  TempDir dir;
  int n = 0;
  for (const auto& [element, message] : cases) {
    const std::string path = dir.File("bad" + std::to_string(n++) + ".json");
    WriteFile(path,
              "{\"docs\": [{\"passage\": \"p\", \"extracted_entities\": [], "
              "\"extracted_triples\": []}, " +
                  element +
                  ", {\"passage\": \"z\", \"extracted_entities\": [], \"extracted_triples\": "
                  "[]}], \"avg_ent_chars\": NaN}");
    Status st = ReadError(path);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_CONTAINS(st.message(), path + ": docs[1]: " + message);

    OpenIeReport report;
    auto r = ReadAllOpenIe(path, Skipping(), &report);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->size(), 2u) << element;
    EXPECT_EQ((*r)[1].passage_key, "z");
    EXPECT_EQ((*r)[1].line_or_index, 2);
    EXPECT_EQ(report.records_skipped, 1);
    ASSERT_FALSE(report.messages.empty());
    EXPECT_CONTAINS(report.messages[0], "skipped: " + path + ": docs[1]: " + message);
  }
}

TEST(ReadOpenIeTest, HippoRagFileErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"avg_ent_chars\": 1.0}", "missing \"docs\": expected a HippoRAG OpenIE results object"},
      {"{\"docs\": []}", "\"docs\" is empty: expected one entry per passage"},
      {"{\"docs\": {\"passage\": \"p\"}}", "\"docs\" is an object: expected a HippoRAG"},
      {"{\"docs\": \"x\"}", "\"docs\" is a string"},
      {"{\"docs\": [], \"docs\": []}", "\"docs\" appears twice"},
      {"{\"docs\": [{\"passage\": \"p\", \"extracted_entities\": [], \"extracted_triples\": []},"
       " {\"passage\": \"q\", \"extracted_entities\": [\"a\" \"b\"]}]}",
       "invalid JSON (line 1, column"},
      {"{\"docs\": [{\"passage\": \"p\", \"extracted_entities\": [], \"extracted_triples\": []},"
       "\n {\"passage\": \"q\",\n \"extracted_entities\": [\"a\" \"b\"]}]}",
       "invalid JSON (line 3, column 31: syntax error"},
      {"{\"docs\": [{\"passage\": \"p\", \"extracted_entities\": [], \"extracted_triples\": []},"
       " {\"passage\": \"q\"",
       "(in docs[1])"},
      {"{\"docs\": [{\"passage\": \"p\", \"extracted_entities\": [], \"extracted_triples\": []}]",
       "invalid JSON"},
  };
  TempDir dir;
  int n = 0;
  for (const auto& [content, message] : cases) {
    const std::string path = dir.File("f" + std::to_string(n++) + ".json");
    WriteFile(path, content);
    // File-level problems end the read even when skipping bad records.
    Status st = ReadError(path, Skipping());
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << content;
    EXPECT_CONTAINS(st.message(), path + ": ");
    EXPECT_CONTAINS(st.message(), message);
  }
  // Top-level lists are rejected by detection already; with an explicit format, by the reader.
  const std::string list = dir.File("list.json");
  WriteFile(list, "[{\"passage\": \"p\", \"extracted_entities\": [], \"extracted_triples\": []}]");
  OpenIeReadOptions o;
  o.format = OpenIeFormat::kHippoRagJson;
  Status st = ReadError(list, o);
  EXPECT_CONTAINS(st.message(), list + ": the top-level value is a list: expected a HippoRAG");
}

TEST(ReadOpenIeTest, HippoRagIgnoresOtherFieldsAtAnyDepth) {
  TempDir dir;
  const std::string path = dir.File("extra.json");
  WriteFile(path,
            "{\"meta\": {\"docs\": [1, 2], \"nested\": [[{\"passage\": 1}]]}, "
            "\"docs\": [{\"title\": \"T\", \"text\": \"x\", \"passage\": \"T\\nx\", \"idx\": 5, "
            "\"extra\": {\"docs\": []}, \"extracted_entities\": [\"T\"], "
            "\"extracted_triples\": [[\"T\", \"is\", \"x\"]]}], "
            "\"ents_by_doc\": [[\"T\"]], \"num_tokens\": -Infinity}");
  OpenIeReport report;
  auto r = ReadAllOpenIe(path, {}, &report);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].passage_key, "T\nx");
  EXPECT_EQ((*r)[0].idx, "5");
  EXPECT_EQ(report.nonfinite_numbers_replaced, 1);
}

TEST(ReadOpenIeTest, NonFiniteTokensAcrossReadBlocks) {
  // The HippoRAG reader filters 64 KiB blocks: a token split by a block boundary is still found.
  TempDir dir;
  const std::string head =
      "{\"docs\": [{\"passage\": \"p\", \"extracted_entities\": [\"NaN\"], "
      "\"extracted_triples\": []}], \"pad\": \"";
  for (size_t shift = 0; shift < 10; ++shift) {
    const size_t pad = (1 << 16) - head.size() - 8 + shift;
    const std::string path = dir.File("b" + std::to_string(shift) + ".json");
    WriteFile(path, head + std::string(pad, 'x') + "\", \"a\": NaN, \"b\": -Infinity}");
    OpenIeReport report;
    auto r = ReadAllOpenIe(path, {}, &report);
    ASSERT_TRUE(r.ok()) << shift << ": " << r.status().ToString();
    EXPECT_EQ((*r)[0].entities, std::vector<std::string>{"NaN"});
    EXPECT_EQ(report.nonfinite_numbers_replaced, 2) << shift;
  }
}

// Every prefix and many single-byte corruptions of the fixtures give a Status, never a crash,
// and whatever is delivered obeys the record contract.
TEST(ReadOpenIeTest, TruncatedAndCorruptedInputs) {
  TempDir dir;
  for (const std::string name :
       {"bench_small.jsonl", "hipporag2_openie_results_ner_gpt-4o-mini.json",
        "hipporag1_openie_results_ner_gpt-3.5-turbo-1106_2.json"}) {
    const std::string data = ::flowrag::testing::ReadFile(Fixture(name));
    ASSERT_FALSE(data.empty()) << name;
    const std::string path = dir.File(name);
    std::vector<std::string> variants;
    for (size_t n = 0; n < data.size(); ++n) variants.push_back(data.substr(0, n));
    const std::string bytes = "{}[]\",:\\ \nN-0\xFF";
    for (size_t i = 0; i < data.size(); i += 3) {
      std::string v = data;
      v[i] = bytes[i % bytes.size()];
      variants.push_back(std::move(v));
    }
    for (const std::string& v : variants) {
      WriteFile(path, v);
      for (bool skip : {false, true}) {
        OpenIeReadOptions o;
        o.skip_bad_records = skip;
        OpenIeReport report;
        auto r = ReadAllOpenIe(path, o, &report);
        if (!r.ok()) {
          EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
          EXPECT_CONTAINS(r.status().message(), path);
          continue;
        }
        EXPECT_EQ(report.records_delivered, static_cast<int64_t>(r->size()));
        for (const OpenIeRecord& rec : *r) {
          EXPECT_FALSE(rec.passage_key.empty());
          for (const std::string& e : rec.entities) EXPECT_FALSE(e.empty());
          for (const Triple& t : rec.triples) {
            EXPECT_FALSE(t[0].empty());
            EXPECT_FALSE(t[2].empty());
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// ToExtraction.

const ExtractedEntity* FindEntity(const PassageExtraction& x, const std::string& name) {
  for (const ExtractedEntity& e : x.entities) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

TEST(AddTitleEntityTest, TheTitleBecomesTheFirstEntity) {
  PassageExtraction x;
  x.entities.push_back({"Audrey Hepburn", "", {}, "", 1, true});
  x.entities.push_back({"my fair lady", "", {}, "", 1, true});
  AddTitleEntity("My Fair Lady", &x);  // named by the record: that entity, retyped
  ASSERT_EQ(x.entities.size(), 2u);
  EXPECT_EQ(x.entities[0].name, "my fair lady");
  EXPECT_EQ(x.entities[0].type, "TITLE");
  EXPECT_TRUE(x.entities[0].defining);
  AddTitleEntity("Rex Harrison", &x);  // not named: added first
  ASSERT_EQ(x.entities.size(), 3u);
  EXPECT_EQ(x.entities[0].name, "Rex Harrison");
  EXPECT_EQ(x.entities[0].type, "TITLE");
  AddTitleEntity("", &x);
  EXPECT_EQ(x.entities.size(), 3u);
}

TEST(ToExtractionTest, EntitiesAndTriples) {
  OpenIeRecord rec;
  rec.passage_key = "p";
  rec.entities = {"Journal of Mathematical Physics", "Person-centered therapy", "1963"};
  rec.triples = {{"Journal of Mathematical Physics", "became", "monthly publication in 1963"},
                 {"Person - centered therapy", "developed by", "Carl Rogers"},
                 {"person-centered THERAPY", "began in", "1940s"},
                 {"Carl Rogers", "developed", "Person-centered therapy"}};
  OpenIeReport report;
  PassageExtraction x = ToExtraction(rec, 42, &report);
  EXPECT_EQ(x.passage_id, 42);
  std::vector<std::string> names;
  for (const ExtractedEntity& e : x.entities) {
    names.push_back(e.name);
    EXPECT_EQ(e.type, "");
    EXPECT_TRUE(e.defining);
    EXPECT_EQ(e.count, 1);
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "Journal of Mathematical Physics", "Person-centered therapy", "1963",
                       "monthly publication in 1963", "Carl Rogers", "1940s"}));
  const ExtractedEntity* therapy = FindEntity(x, "Person-centered therapy");
  ASSERT_NE(therapy, nullptr);
  EXPECT_EQ(therapy->aliases,
            (std::vector<std::string>{"Person - centered therapy", "person-centered THERAPY"}));
  ASSERT_EQ(x.triples.size(), 4u);
  EXPECT_EQ(x.triples[1].subject, "Person - centered therapy");
  EXPECT_EQ(x.triples[1].relation, "developed by");
  EXPECT_EQ(x.triples[1].object, "Carl Rogers");
  EXPECT_EQ(report.entities_added_from_triples, 3);
  EXPECT_EQ(report.aliases_added_from_triples, 2);
  EXPECT_EQ(report.triples_rejected, 0);
}

TEST(ToExtractionTest, HandBuiltRecordsAreCleanedAndCounted) {
  OpenIeRecord rec;
  rec.entities = {" A ", "A", "", "  ", "B"};
  rec.triples = {
      {"A", "r", "B"}, {" A", "r", "B "}, {"", "r", "B"}, {"A", "r", " "}, {"A", "", "C"}};
  OpenIeReport report;
  PassageExtraction x = ToExtraction(rec, 1, &report);
  ASSERT_EQ(x.entities.size(), 3u);
  EXPECT_EQ(x.entities[0].name, "A");
  EXPECT_EQ(x.entities[1].name, "B");
  EXPECT_EQ(x.entities[2].name, "C");
  ASSERT_EQ(x.triples.size(), 2u);
  EXPECT_EQ(report.empty_entities_dropped, 2);
  EXPECT_EQ(report.duplicate_entities_removed, 1);
  EXPECT_EQ(report.duplicate_triples_removed, 1);
  EXPECT_EQ(report.triples_rejected, 2);
  EXPECT_EQ(report.entities_added_from_triples, 1);
  // Without a report the result is the same.
  EXPECT_EQ(ToExtraction(rec, 1).triples.size(), 2u);
}

// Every triple's subject and object is an entity name or alias (PassageExtraction's contract).
void ExpectTriplesResolve(const PassageExtraction& x) {
  std::unordered_set<std::string> names;
  for (const ExtractedEntity& e : x.entities) {
    names.insert(e.name);
    names.insert(e.aliases.begin(), e.aliases.end());
  }
  for (const ExtractedTriple& t : x.triples) {
    EXPECT_TRUE(names.count(t.subject)) << t.subject;
    EXPECT_TRUE(names.count(t.object)) << t.object;
  }
}

// ---------------------------------------------------------------------------
// Passage matching.

TEST(OpenIePassageMatcherTest, KeysAndTexts) {
  EXPECT_EQ(NormalizeWhitespace("  a \t b\n\nc  "), "a b c");
  EXPECT_EQ(NormalizeWhitespace(" \n "), "");

  OpenIePassageMatcher m;
  m.AddPassage(10, "demo-p0", "Alan Turing",
               "Alan Turing worked at Bletchley Park during the war.");
  m.AddPassage(11, "demo-p2", "Enigma", "The Enigma machine was used by the German military.");
  m.AddPassage(12, "demo-p3", "", "Colossus was built in 1943.");
  m.AddPassage(13, "demo-p4", "", "Colossus was built in 1943.");  // a duplicated passage
  m.AddPassage(14, "demo-p5", "Unused", "Nobody extracted this one.");
  EXPECT_EQ(m.passage_count(), 5u);

  auto bench = ReadAllOpenIe(Fixture("bench_small.jsonl"));
  ASSERT_TRUE(bench.ok());
  auto by_key = m.Find((*bench)[0]);
  EXPECT_EQ(by_key.kind, OpenIePassageMatcher::MatchKind::kKey);
  EXPECT_EQ(by_key.passage_ids, std::vector<int64_t>{10});
  EXPECT_EQ(m.Find((*bench)[1]).kind, OpenIePassageMatcher::MatchKind::kNone);  // id "7"

  auto hippo = ReadAllOpenIe(Fixture("hipporag2_openie_results_ner_gpt-4o-mini.json"));
  ASSERT_TRUE(hippo.ok());
  auto exact = m.Find((*hippo)[0]);  // "title\ntext"
  EXPECT_EQ(exact.kind, OpenIePassageMatcher::MatchKind::kExactText);
  EXPECT_EQ(exact.passage_ids, std::vector<int64_t>{10});
  auto normalized = m.Find((*hippo)[1]);  // a double space in the file
  EXPECT_EQ(normalized.kind, OpenIePassageMatcher::MatchKind::kNormalizedText);
  EXPECT_EQ(normalized.passage_ids, std::vector<int64_t>{11});

  OpenIeRecord text;
  text.key_is_text = true;
  text.passage_key = "Colossus was built in 1943.";
  auto both = m.Find(text);
  EXPECT_EQ(both.kind, OpenIePassageMatcher::MatchKind::kExactText);
  EXPECT_EQ(both.passage_ids, (std::vector<int64_t>{12, 13}));
  text.passage_key = "Colossus   was built\nin 1943. ";
  EXPECT_EQ(m.Find(text).kind, OpenIePassageMatcher::MatchKind::kNormalizedText);
  text.passage_key = "Colossus was built in 1944.";
  EXPECT_EQ(m.Find(text).kind, OpenIePassageMatcher::MatchKind::kNone);
  text.passage_key = "demo-p5";  // a text key never matches by id
  EXPECT_EQ(m.Find(text).kind, OpenIePassageMatcher::MatchKind::kNone);

  EXPECT_EQ(m.UnmatchedPassages(), std::vector<int64_t>{14});
}

// ---------------------------------------------------------------------------
// The benchmark files shipped in ../shared/data/bench.

struct CorpusRow {
  std::string id;
  std::string title;
  std::string text;
};

std::vector<CorpusRow> ReadCorpus(const std::string& path) {
  std::vector<CorpusRow> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json j = json::parse(line);
    rows.push_back(
        {j.at("id").get<std::string>(), j.value("title", ""), j.at("text").get<std::string>()});
  }
  return rows;
}

struct BenchExpectation {
  std::string name;
  size_t passages;
  int64_t triples_read;
  int64_t triples_kept;
  int64_t triples_rejected;
  int64_t duplicate_triples;
};

class BenchOpenIeTest : public ::testing::TestWithParam<BenchExpectation> {};

TEST_P(BenchOpenIeTest, ReproducesEveryPassageAndTriple) {
  const BenchExpectation& want = GetParam();
  const std::string dir = std::string(FLOWRAG_SOURCE_DIR) + "/../shared/data/bench/" + want.name;
  if (!fs::exists(dir + "/openie.jsonl") || !fs::exists(dir + "/corpus.jsonl")) {
    GTEST_SKIP() << dir << " not found: the shared benchmark data is not available";
  }
  const std::vector<CorpusRow> corpus = ReadCorpus(dir + "/corpus.jsonl");
  ASSERT_EQ(corpus.size(), want.passages);

  OpenIeReport report;
  auto records = ReadAllOpenIe(dir + "/openie.jsonl", {}, &report);
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  EXPECT_EQ(records->size(), corpus.size()) << "one record per corpus passage";
  EXPECT_EQ(report.records_read, static_cast<int64_t>(corpus.size()));
  EXPECT_EQ(report.records_skipped, 0);

  OpenIePassageMatcher matcher;
  for (size_t i = 0; i < corpus.size(); ++i) {
    matcher.AddPassage(static_cast<int64_t>(i), corpus[i].id, corpus[i].title, corpus[i].text);
  }
  std::vector<PassageExtraction> extractions;
  OpenIeReport conversion;
  for (const OpenIeRecord& rec : *records) {
    auto match = matcher.Find(rec);
    ASSERT_EQ(match.kind, OpenIePassageMatcher::MatchKind::kKey) << rec.passage_key;
    ASSERT_EQ(match.passage_ids.size(), 1u) << rec.passage_key;
    extractions.push_back(ToExtraction(rec, match.passage_ids[0], &conversion));
    ExpectTriplesResolve(extractions.back());
  }
  EXPECT_TRUE(matcher.UnmatchedPassages().empty()) << "every corpus passage has OpenIE";

  EXPECT_EQ(report.triples_read, want.triples_read);
  EXPECT_EQ(report.triples_kept, want.triples_kept);
  EXPECT_EQ(report.triples_rejected, want.triples_rejected);
  EXPECT_EQ(report.duplicate_triples_removed, want.duplicate_triples);
  EXPECT_EQ(conversion.triples_rejected, 0);
  int64_t extracted_triples = 0;
  for (const PassageExtraction& x : extractions) {
    extracted_triples += static_cast<int64_t>(x.triples.size());
  }
  EXPECT_EQ(extracted_triples, report.triples_kept);

  std::cout << "[ measured ] " << want.name << ": records " << report.records_delivered
            << ", entities read " << report.entities_read << " kept " << report.entities_kept
            << ", triples read " << report.triples_read << " kept " << report.triples_kept
            << " rejected " << report.triples_rejected << " duplicates "
            << report.duplicate_triples_removed << ", entities added from triples "
            << conversion.entities_added_from_triples << ", aliases added "
            << conversion.aliases_added_from_triples << "\n";
  for (size_t k = 0; k < std::min<size_t>(3, report.messages.size()); ++k) {
    std::cout << "[ message  ] " << report.messages[k] << "\n";
  }

  // The same data in HippoRAG's format (passage = title + "\n" + text, keyed by text) reads
  // and matches to the same passages with the same triples.
  TempDir tmp;
  const std::string hippo_path = tmp.File("openie_results_ner_bench.json");
  {
    std::unordered_map<std::string, const CorpusRow*> by_id;
    for (const CorpusRow& row : corpus) by_id[row.id] = &row;
    json docs = json::array();
    std::ifstream in(dir + "/openie.jsonl");
    std::string line;
    while (std::getline(in, line)) {
      json row = json::parse(line);
      const CorpusRow& c = *by_id.at(row.at("id").get<std::string>());
      docs.push_back({{"idx", "chunk-" + c.id},
                      {"passage", c.title + "\n" + c.text},
                      {"extracted_entities", row.at("entities")},
                      {"extracted_triples", row.at("triples")}});
    }
    std::ofstream out(hippo_path);
    out << "{\"docs\": " << docs.dump() << ", \"avg_ent_chars\": NaN, \"avg_ent_words\": NaN}";
  }
  OpenIeReport hippo_report;
  OpenIePassageMatcher text_matcher;
  for (size_t i = 0; i < corpus.size(); ++i) {
    text_matcher.AddPassage(static_cast<int64_t>(i), "", corpus[i].title, corpus[i].text);
  }
  size_t i = 0;
  Status st = ReadOpenIe(
      hippo_path, {},
      [&](OpenIeRecord&& rec) {
        auto match = text_matcher.Find(rec);
        if (match.kind != OpenIePassageMatcher::MatchKind::kExactText ||
            match.passage_ids.size() != 1) {
          return Status::Internal("unmatched docs[" + std::to_string(rec.line_or_index) + "]");
        }
        if (i >= records->size() || rec.triples != (*records)[i].triples ||
            rec.entities != (*records)[i].entities) {
          return Status::Internal("differs at docs[" + std::to_string(rec.line_or_index) + "]");
        }
        ++i;
        return Status::Ok();
      },
      &hippo_report);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(i, corpus.size());
  EXPECT_TRUE(text_matcher.UnmatchedPassages().empty());
  EXPECT_EQ(hippo_report.triples_kept, report.triples_kept);
  EXPECT_EQ(hippo_report.nonfinite_numbers_replaced, 2);
}

INSTANTIATE_TEST_SUITE_P(SharedData, BenchOpenIeTest,
                         ::testing::Values(BenchExpectation{"musique-train", 1890, 17419, 17204,
                                                            185, 30},
                                           BenchExpectation{"medical", 268, 5256, 5255, 1, 0}),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
