#include "ingest/loaders.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "ingest/utf8.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

namespace fs = std::filesystem;

// EXPECT_CONTAINS(text, part): `part` occurs in `text`.
::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << text << "\"\n  does not contain \"" << part << "\"";
}
#define EXPECT_CONTAINS(text, part) EXPECT_TRUE(Contains((text), (part)))

const std::string kTestdata = std::string(FLOWRAG_TESTDATA_DIR) + "/ingest";

std::string Fixture(const std::string& name) { return kTestdata + "/" + name; }

// A fresh directory per test, removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "flowrag_loaders_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }

  // Writes `content` (bytes as given) to dir_/rel and returns the path.
  std::string Write(const std::string& rel, const std::string& content) {
    fs::path p = fs::path(dir_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    return p.string();
  }
  std::string Path(const std::string& rel) const { return (fs::path(dir_) / rel).string(); }

  std::string dir_;
};

std::vector<std::string> Ids(const std::vector<RawDocument>& docs) {
  std::vector<std::string> ids;
  for (const RawDocument& d : docs) ids.push_back(d.external_id);
  return ids;
}

// Loads `path` expecting an error; returns it.
Status LoadError(const std::string& path, const LoadOptions& options = {}) {
  auto r = LoadAll(path, options);
  EXPECT_FALSE(r.ok()) << path << " loaded " << (r.ok() ? r->size() : 0) << " documents";
  return r.status();
}

// ---------------------------------------------------------------------------
// UTF-8 helpers.

TEST(Utf8Test, ValidatesAndReportsFirstBadOffset) {
  size_t off = 99;
  EXPECT_TRUE(IsValidUtf8("plain, caf\xC3\xA9, \xE6\x97\xA5\xE6\x9C\xAC, \xF0\x9F\x99\x82", &off));
  EXPECT_FALSE(IsValidUtf8(std::string("abc\xFF", 4), &off));
  EXPECT_EQ(off, 3u);
  EXPECT_FALSE(IsValidUtf8("ok\xC3", &off));  // truncated
  EXPECT_EQ(off, 2u);
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80", &off));  // surrogate
  EXPECT_EQ(off, 0u);
  EXPECT_FALSE(IsValidUtf8("x\xC0\xAF", &off));  // overlong
  EXPECT_EQ(off, 1u);
}

TEST(Utf8Test, SanitizeReplacesMaximalSubparts) {
  size_t n = 0;
  EXPECT_EQ(SanitizeUtf8("caf\xC3\xA9", &n), "caf\xC3\xA9");
  EXPECT_EQ(n, 0u);
  // A truncated 3-byte sequence is one maximal subpart.
  EXPECT_EQ(SanitizeUtf8("a\xE2\x82z", &n), "a\xEF\xBF\xBDz");
  EXPECT_EQ(n, 1u);
  // F0 80 80: 80 cannot follow F0, so three subparts (Unicode §3.9 practice).
  EXPECT_EQ(SanitizeUtf8("\xF0\x80\x80", &n), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(n, 3u);
  // Surrogate ED A0 80: three subparts.
  EXPECT_EQ(SanitizeUtf8("\xED\xA0\x80", &n), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(SanitizeUtf8(std::string("\xFF\xFE", 2), &n), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_TRUE(IsValidUtf8(SanitizeUtf8("\xC3\x28\xA0\xA1\xE2\x28\xA1")));
}

TEST(Utf8Test, DecodeCountAndSpaces) {
  char32_t cp;
  bool ok;
  EXPECT_EQ(DecodeUtf8("\xF0\x9F\x99\x82", 0, &cp, &ok), 4u);
  EXPECT_TRUE(ok);
  EXPECT_EQ(cp, char32_t{0x1F642});
  EXPECT_EQ(DecodeUtf8("\xE6\x97", 0, &cp, &ok), 2u);
  EXPECT_FALSE(ok);
  EXPECT_EQ(cp, kReplacementCodePoint);
  EXPECT_EQ(CountCodePoints("a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x99\x82"), 4u);
  EXPECT_TRUE(IsUnicodeSpace(U' '));
  EXPECT_TRUE(IsUnicodeSpace(U'\n'));
  EXPECT_TRUE(IsUnicodeSpace(0x3000));
  EXPECT_TRUE(IsUnicodeSpace(0xA0));
  EXPECT_TRUE(IsUnicodeSpace(0x2009));
  EXPECT_FALSE(IsUnicodeSpace(U'a'));
  EXPECT_FALSE(IsUnicodeSpace(0x200B));  // zero width space is not whitespace in Python
  EXPECT_TRUE(IsBlank(" \t\n\xE3\x80\x80"));
  EXPECT_FALSE(IsBlank(" x "));
}

// ---------------------------------------------------------------------------
// Source detection.

TEST(DetectSourceKindTest, EveryFormat) {
  auto kind = [](const std::string& name) { return DetectSourceKind(Fixture(name)); };
  EXPECT_EQ(*kind("docs"), SourceKind::kDirectory);
  EXPECT_EQ(*kind("bench_like"), SourceKind::kBenchmarkDirectory);
  EXPECT_EQ(*kind("records.jsonl"), SourceKind::kJsonl);
  EXPECT_EQ(*kind("hipporag.json"), SourceKind::kJson);
  EXPECT_EQ(*kind("note.txt"), SourceKind::kText);
  EXPECT_EQ(*kind("guide.md"), SourceKind::kMarkdown);
  EXPECT_EQ(SourceKindName(SourceKind::kBenchmarkDirectory), "benchmark directory");
}

TEST(DetectSourceKindTest, UnknownExtensionAndMissingPath) {
  auto csv = DetectSourceKind(Fixture("docs/notes.csv"));
  ASSERT_FALSE(csv.ok());
  EXPECT_EQ(csv.status().code(), StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(csv.status().message(), "notes.csv: unsupported file type \".csv\"");
  EXPECT_CONTAINS(csv.status().message(), "expected a directory or a .jsonl");

  auto none = DetectSourceKind(Fixture("docs/README"));
  ASSERT_FALSE(none.ok());
  EXPECT_CONTAINS(none.status().message(), "README: no file extension");

  auto missing = DetectSourceKind(Fixture("no/such/file.jsonl"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_CONTAINS(missing.status().message(), "file.jsonl");
  EXPECT_CONTAINS(missing.status().message(), "No such file or directory");
}

// ---------------------------------------------------------------------------
// Directories.

TEST(DirectoryLoaderTest, LoadsTextFilesSortedWithIdsAndTitles) {
  LoadReport report;
  auto docs = LoadAll(Fixture("docs"), {}, &report);
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  EXPECT_EQ(Ids(*docs),
            (std::vector<std::string>{"a.md", "b.txt", "sub/c.markdown", "sub/deeper/d.txt"}));
  const auto& d = *docs;
  EXPECT_EQ(d[0].title, "Alpha Title");
  EXPECT_EQ(d[0].text, "# Alpha Title\n\nSome text about alpha.\n");
  EXPECT_EQ(d[1].title, "b");      // no level-one heading: the file stem
  EXPECT_EQ(d[2].title, "Gamma");  // heading in the code fence ignored, closing #s dropped
  EXPECT_EQ(d[3].title, "Delta");
  EXPECT_EQ(d[3].text.substr(0, 7), "# Delta");  // BOM stripped
  for (const RawDocument& doc : d) {
    EXPECT_EQ(doc.line, 0);
    EXPECT_EQ(fs::path(doc.source), fs::path(Fixture("docs")) / doc.external_id);
  }
  EXPECT_EQ(report.documents, 4);
  EXPECT_EQ(report.files_read, 6);  // the four above + empty.txt + blank.md
  EXPECT_EQ(report.skipped_empty_files, 2);
  ASSERT_EQ(report.messages.size(), 2u);
  EXPECT_CONTAINS(report.messages[0], "blank.md: file is empty (only whitespace)");
  EXPECT_CONTAINS(report.messages[1], "empty.txt: file is empty");
}

TEST_F(TempDirTest, DirectoryOrderIsByFullPathAndDeterministic) {
  // Created in an order unrelated to the expected one.
  for (const char* rel : {"x/y.txt", "x.txt", "x-z.txt", "X.md", "a b.txt", "x/a/b.md"}) {
    Write(rel, std::string("text of ") + rel);
  }
  auto first = LoadAll(dir_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  // Byte order of the relative path: "X" < "a" < "x-" < "x." < "x/".
  EXPECT_EQ(Ids(*first), (std::vector<std::string>{"X.md", "a b.txt", "x-z.txt", "x.txt",
                                                   "x/a/b.md", "x/y.txt"}));
  auto second = LoadAll(dir_ + "/");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(Ids(*first), Ids(*second));
  EXPECT_EQ((*first)[3].title, "x");
  EXPECT_EQ((*first)[3].text, "text of x.txt");
}

TEST_F(TempDirTest, DirectorySkipsHiddenAndFollowsSymlinksWithoutLoops) {
  Write("a.txt", "alpha");
  Write("sub/b.txt", "beta");
  Write(".hid/c.txt", "hidden dir");
  Write("sub/.d.md", "hidden file");
  fs::create_directory_symlink("..", Path("sub/loop"));            // loop back to the root
  fs::create_directory_symlink("sub", Path("link_to_sub"));        // second path to sub
  fs::create_symlink("missing.txt", Path("broken.txt"));           // dangling
  fs::create_symlink("a.txt", Path("file_link.txt"));              // link to a file
  fs::create_directory_symlink("/nonexistent-dir", Path("gone"));  // dangling dir link
  LoadReport report;
  auto docs = LoadAll(dir_, {}, &report);
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  // The real path of sub wins over link_to_sub; the loop is cut.
  EXPECT_EQ(Ids(*docs), (std::vector<std::string>{"a.txt", "file_link.txt", "sub/b.txt"}));
  EXPECT_EQ((*docs)[1].text, "alpha");
  EXPECT_EQ(report.skipped_links, 4);  // broken.txt, gone, link_to_sub, sub/loop
  std::string all;
  for (const std::string& m : report.messages) all += m + "\n";
  EXPECT_CONTAINS(all, "broken.txt: broken symbolic link");
  EXPECT_CONTAINS(all, "directory already visited");
}

TEST_F(TempDirTest, DirectoryWithOnlyIgnoredFilesLoadsNothing) {
  Write("data.csv", "a,b\n");
  Write("empty.md", "");
  LoadReport report;
  auto docs = LoadAll(dir_, {}, &report);
  ASSERT_TRUE(docs.ok());
  EXPECT_TRUE(docs->empty());
  EXPECT_EQ(report.skipped_empty_files, 1);
}

TEST_F(TempDirTest, DirectoryFailsOnInvalidUtf8UnlessSkipping) {
  Write("a.txt", "good");
  Write("b.txt", std::string("bad \xFF byte"));
  Write("c.txt", "good too");
  Status st = LoadError(dir_);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(st.message(), "b.txt: invalid UTF-8 at byte offset 4");

  LoadOptions skip;
  skip.skip_bad_records = true;
  LoadReport report;
  auto docs = LoadAll(dir_, skip, &report);
  ASSERT_TRUE(docs.ok());
  EXPECT_EQ(Ids(*docs), (std::vector<std::string>{"a.txt", "c.txt"}));
  EXPECT_EQ(report.skipped_records, 1);
}

TEST(DirectoryLoaderTest, BenchmarkFolderLoadsOnlyCorpus) {
  auto docs = LoadAll(Fixture("bench_like"));
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  EXPECT_EQ(Ids(*docs), (std::vector<std::string>{"bench-p00000", "bench-p00001", "bench-p00002"}));
  EXPECT_EQ((*docs)[1].title, "Second");
  EXPECT_EQ((*docs)[1].line, 2);
  EXPECT_EQ(fs::path((*docs)[1].source).filename(), "corpus.jsonl");
}

// ---------------------------------------------------------------------------
// Single files.

TEST(FileLoaderTest, JsonlIdsTitlesLinesBomCrlfAndBlankLines) {
  auto docs = LoadAll(Fixture("records.jsonl"));
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  ASSERT_EQ(docs->size(), 4u);
  const auto& d = *docs;
  EXPECT_EQ(Ids(d), (std::vector<std::string>{"r-1", "42", "records.jsonl:5", "records.jsonl:6"}));
  EXPECT_EQ(d[0].title, "One");
  EXPECT_EQ(d[0].text, "first record");
  EXPECT_EQ(d[0].line, 1);
  EXPECT_EQ(d[1].title, "");
  EXPECT_EQ(d[1].line, 3);
  EXPECT_EQ(d[2].title, "");  // null title
  EXPECT_EQ(d[2].line, 5);
  EXPECT_EQ(d[3].title, "Caf\xC3\xA9");
  EXPECT_EQ(d[3].text, "\xC3\xA9t\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x99\x82");
  EXPECT_EQ(d[3].source, Fixture("records.jsonl"));
}

TEST(FileLoaderTest, JsonListHippoRagFormat) {
  auto docs = LoadAll(Fixture("hipporag.json"));
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  // "id" is used when present; "idx" is not an id.
  EXPECT_EQ(Ids(*docs),
            (std::vector<std::string>{"hipporag.json#0", "custom-id", "hipporag.json#2"}));
  EXPECT_EQ((*docs)[0].title, "Teutberga");
  EXPECT_EQ((*docs)[2].text, "Boso the Elder was a Frankish nobleman.");
  EXPECT_EQ((*docs)[0].line, 1);
  EXPECT_EQ((*docs)[2].line, 3);
}

TEST(FileLoaderTest, JsonSingleObject) {
  auto docs = LoadAll(Fixture("single.json"));
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  ASSERT_EQ(docs->size(), 1u);
  EXPECT_EQ((*docs)[0].external_id, "solo");
  EXPECT_EQ((*docs)[0].title, "Solo");
  EXPECT_EQ((*docs)[0].line, 0);
}

TEST(FileLoaderTest, TextAndMarkdownFiles) {
  auto txt = LoadAll(Fixture("note.txt"));
  ASSERT_TRUE(txt.ok());
  ASSERT_EQ(txt->size(), 1u);
  EXPECT_EQ((*txt)[0].external_id, "note.txt");
  EXPECT_EQ((*txt)[0].title, "note");
  EXPECT_EQ((*txt)[0].text, "A plain note without a heading.\n");
  auto md = LoadAll(Fixture("guide.md"));
  ASSERT_TRUE(md.ok());
  EXPECT_EQ((*md)[0].external_id, "guide.md");
  EXPECT_EQ((*md)[0].title, "Guide to Ingest");
}

TEST(FileLoaderTest, MarkdownTitleRules) {
  EXPECT_EQ(ExtractMarkdownTitle("# Title\nx", "stem"), "Title");
  EXPECT_EQ(ExtractMarkdownTitle("   #  Spaced  #### \n", "stem"), "Spaced");
  EXPECT_EQ(ExtractMarkdownTitle("## Two\n#NoSpace\n", "stem"), "stem");
  EXPECT_EQ(ExtractMarkdownTitle("    # indented code\n", "stem"), "stem");
  EXPECT_EQ(ExtractMarkdownTitle("~~~\n# in fence\n~~~\n# After\n", "stem"), "After");
  EXPECT_EQ(ExtractMarkdownTitle("#\n# \n# Real\n", "stem"), "Real");
  EXPECT_EQ(ExtractMarkdownTitle("# C# tips\n", "stem"), "C# tips");
  EXPECT_EQ(ExtractMarkdownTitle("# Windows\r\n", "stem"), "Windows");
}

TEST(FileLoaderTest, FixtureErrorsNameFileLineAndRecord) {
  Status line = LoadError(Fixture("bad_json_line.jsonl"));
  EXPECT_CONTAINS(line.message(), "bad_json_line.jsonl:3: invalid JSON (");
  EXPECT_CONTAINS(line.message(), "): expected one object per line");
  Status record = LoadError(Fixture("missing_text.json"));
  EXPECT_CONTAINS(record.message(),
                  "missing_text.json: record #1: missing \"text\": expected an object with a "
                  "string \"text\" field");
}

// ---------------------------------------------------------------------------
// Bad input.

struct BadJsonlCase {
  std::string content;
  std::string expected;  // substring of the message
};

TEST_F(TempDirTest, BadJsonlLinesNameFileLineAndExpectation) {
  const std::string ok = "{\"text\": \"fine\"}\n";
  const std::vector<BadJsonlCase> cases = {
      {ok + "{\"text\": \"unterminated}\n", "bad.jsonl:2: invalid JSON (at column"},
      {ok + ok + "{\"text\": 1,}\n", "bad.jsonl:3: invalid JSON (at column 12: syntax error"},
      {ok + "{\"text\": \"a\"} trailing\n", "bad.jsonl:2: invalid JSON ("},
      {"[\"a\", \"b\"]\n",
       "bad.jsonl:1: expected a JSON object with a string \"text\" field, got an array"},
      {"\"just a string\"\n",
       "bad.jsonl:1: expected a JSON object with a string \"text\" field, got a string"},
      {ok + "{\"title\": \"no text\"}\n",
       "bad.jsonl:2: missing \"text\": expected an object with a string \"text\" field"},
      {"{\"text\": 5}\n", "bad.jsonl:1: \"text\" is an integer: expected a string"},
      {"{\"text\": null}\n", "bad.jsonl:1: \"text\" is null: expected a string"},
      {"{\"text\": [\"a\"]}\n", "bad.jsonl:1: \"text\" is an array: expected a string"},
      {"{\"id\": true, \"text\": \"a\"}\n",
       "bad.jsonl:1: \"id\" is a boolean: expected a string or an integer"},
      {"{\"id\": 1.5, \"text\": \"a\"}\n",
       "bad.jsonl:1: \"id\" is a non-integer number: expected a string or an integer"},
      {"{\"id\": \"\", \"text\": \"a\"}\n", "bad.jsonl:1: \"id\" is an empty string"},
      {"{\"id\": {}, \"text\": \"a\"}\n", "bad.jsonl:1: \"id\" is an object"},
      {"{\"title\": 3, \"text\": \"a\"}\n",
       "bad.jsonl:1: \"title\" is an integer: expected a string"},
      {"{\"title\": [\"x\"], \"text\": \"a\"}\n",
       "bad.jsonl:1: \"title\" is an array: expected a string"},
  };
  for (const BadJsonlCase& c : cases) {
    const std::string path = Write("bad.jsonl", c.content);
    Status st = LoadError(path);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.content;
    EXPECT_CONTAINS(st.message(), c.expected) << c.content;
    EXPECT_CONTAINS(st.message(), path) << c.content;
  }
}

TEST_F(TempDirTest, JsonlInvalidJsonMessageShape) {
  // The message of the brief: file:line, the parser's reason, the expectation.
  const std::string path = Write("corpus.jsonl", std::string(16, '\n') + "{\"text\": \n");
  Status st = LoadError(path);
  EXPECT_CONTAINS(st.message(), "corpus.jsonl:17: invalid JSON (at column 10: syntax error");
  EXPECT_CONTAINS(st.message(), "): expected one object per line");
}

TEST_F(TempDirTest, InvalidUtf8InJsonlReportsLineAndOffset) {
  const std::string line1 = "{\"text\": \"ok\"}\n";
  const std::string path = Write("u.jsonl", line1 + "{\"text\": \"b\xFFz\"}\n");
  Status st = LoadError(path);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(st.message(),
                  "u.jsonl:2: invalid UTF-8 at byte 11 of the line (file byte offset " +
                      std::to_string(line1.size() + 11) + ")");
  EXPECT_CONTAINS(st.message(), "kReplace");

  LoadOptions replace;
  replace.invalid_utf8 = LoadOptions::InvalidUtf8::kReplace;
  LoadReport report;
  auto docs = LoadAll(path, replace, &report);
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[1].text, "b\xEF\xBF\xBDz");
  EXPECT_EQ(report.utf8_replacements, 1);
  ASSERT_EQ(report.messages.size(), 1u);
  EXPECT_CONTAINS(report.messages[0], "u.jsonl:2: replaced 1 invalid UTF-8 sequence");
}

TEST_F(TempDirTest, InvalidUtf8InTextFileReportsOffset) {
  const std::string path = Write("t.txt", std::string("\xEF\xBB\xBFhello \xC3(world"));
  Status st = LoadError(path);
  EXPECT_CONTAINS(st.message(), "t.txt: invalid UTF-8 at byte offset 9: expected UTF-8 text");
  LoadOptions replace;
  replace.invalid_utf8 = LoadOptions::InvalidUtf8::kReplace;
  auto docs = LoadAll(path, replace);
  ASSERT_TRUE(docs.ok());
  EXPECT_EQ((*docs)[0].text, "hello \xEF\xBF\xBD(world");
}

TEST_F(TempDirTest, InvalidUtf8InJsonReportsOffsetAndRecord) {
  const std::string head = "[{\"text\": \"a\"},\n {\"text\": \"b";
  const std::string path = Write("u.json", head + "\xE2\x82" + "c\"}]\n");
  Status st = LoadError(path);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(st.message(), "u.json: invalid UTF-8 at byte offset " +
                                    std::to_string(head.size()) + " (in record #1)");

  LoadOptions replace;
  replace.invalid_utf8 = LoadOptions::InvalidUtf8::kReplace;
  LoadReport report;
  auto docs = LoadAll(path, replace, &report);
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[1].text,
            "b\xEF\xBF\xBD"
            "c");
  EXPECT_EQ(report.utf8_replacements, 1);

  // An ill-formed byte after the list still fails the load.
  const std::string tail = Write("tail.json", "[{\"text\": \"a\"}]\n\xFF");
  EXPECT_CONTAINS(LoadError(tail).message(), "tail.json: invalid UTF-8 at byte offset 16");
}

TEST_F(TempDirTest, JsonStreamsAcrossBufferBoundaries) {
  // Multi-byte characters straddle the 64 KiB read blocks; a BOM leads.
  std::string json = "\xEF\xBB\xBF[";
  std::string expected_text;
  for (int i = 0; i < 40000; ++i) expected_text += "\xE6\x97\xA5";  // 120,000 bytes
  for (int r = 0; r < 3; ++r) {
    json += std::string(r ? "," : "") + "{\"id\": " + std::to_string(r) + ", \"text\": \"" +
            expected_text + "\"}";
  }
  json += "]";
  const std::string path = Write("big.json", json);
  auto docs = LoadAll(path);
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  ASSERT_EQ(docs->size(), 3u);
  for (const RawDocument& d : *docs) EXPECT_EQ(d.text, expected_text);
  EXPECT_EQ(Ids(*docs), (std::vector<std::string>{"0", "1", "2"}));

  // A bad byte far past the first block: the offset is still exact.
  std::string bad = json;
  size_t at = 200000;
  while (static_cast<unsigned char>(bad[at]) != 0xE6) ++at;  // a lead byte
  bad[at + 1] = 'x';                                         // now it starts a truncated sequence
  const std::string bad_path = Write("bad_big.json", bad);
  Status st = LoadError(bad_path);
  EXPECT_CONTAINS(st.message(), "invalid UTF-8 at byte offset " + std::to_string(at));
}

TEST_F(TempDirTest, BadJsonNamesRecordAndExpectation) {
  struct Case {
    std::string content;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"[{\"text\": \"a\"}, 5]",
       "j.json: record #1: expected a JSON object with a string \"text\" field, got an integer"},
      {"[{\"text\": \"a\"}, {\"text\": \"b\"}, {\"title\": \"c\"}]",
       "j.json: record #2: missing \"text\": expected an object"},
      {"[{\"text\": \"a\", \"id\": false}]", "j.json: record #0: \"id\" is a boolean"},
      {"[\n{\"text\": \"a\"},\n{\"text\": \"b\",,}\n]",
       "j.json: invalid JSON (line 3, column 14: syntax error"},
      {"[\n{\"text\": \"a\"},\n{\"text\": \"b\",,}\n]",
       "(in record #1): expected a JSON list of objects"},
      {"[{\"text\": \"a\"}] [", "j.json: invalid JSON (line 1, column 17"},
      {"42", "j.json: the top-level value is an integer: expected a JSON list of objects"},
      {"\"text\"", "j.json: the top-level value is a string"},
      {"[]", "j.json: the JSON list is empty"},
      {"{\"title\": \"only\"}", "j.json: missing \"text\""},
      {"{\"text\": \"a\"", "j.json: invalid JSON (line 1, column 13"},
  };
  for (const Case& c : cases) {
    const std::string path = Write("j.json", c.content);
    Status st = LoadError(path);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.content;
    EXPECT_CONTAINS(st.message(), c.expected) << c.content;
  }
}

TEST_F(TempDirTest, EmptyFilesGivenDirectlyAreErrors) {
  struct Case {
    std::string name, content, expected;
  };
  const std::vector<Case> cases = {
      {"x.jsonl", "", "x.jsonl: file is empty: expected one JSON object per line"},
      {"y.jsonl", "\n  \n\r\n", "y.jsonl: file is empty (only blank lines)"},
      {"z.jsonl", "\xEF\xBB\xBF", "z.jsonl: file is empty (only blank lines)"},
      {"x.json", "", "x.json: file is empty: expected a JSON list"},
      {"y.json", " \n\t ", "y.json: file is empty (only whitespace)"},
      {"x.txt", "", "x.txt: file is empty: expected UTF-8 text"},
      {"x.md", "\xEF\xBB\xBF \n\xE3\x80\x80", "x.md: file is empty (only whitespace)"},
  };
  for (const Case& c : cases) {
    Status st = LoadError(Write(c.name, c.content));
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_CONTAINS(st.message(), c.expected) << c.name;
  }
}

TEST_F(TempDirTest, UnreadablePathsCarryTheOsReason) {
  Status missing = LoadError(Path("missing.jsonl"));
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_CONTAINS(missing.message(), "missing.jsonl: cannot access: No such file or directory");

  Status missing_dir = LoadError(Path("nodir/"));
  EXPECT_EQ(missing_dir.code(), StatusCode::kNotFound);

  // /proc/self/mem is a regular file whose first page cannot be read (EIO),
  // even for root.
  fs::create_symlink("/proc/self/mem", Path("mem.txt"));
  Status io = LoadError(Path("mem.txt"));
  EXPECT_EQ(io.code(), StatusCode::kIoError);
  EXPECT_CONTAINS(io.message(), "mem.txt: read failed: Input/output error");

  Status unknown = LoadError(Write("table.csv", "a,b\n"));
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(unknown.message(), "table.csv: unsupported file type \".csv\"");
}

TEST_F(TempDirTest, PermissionDeniedIsIoError) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: permissions are not enforced";
  const std::string path = Write("secret.jsonl", "{\"text\": \"a\"}\n");
  fs::permissions(path, fs::perms::none);
  Status st = LoadError(path);
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_CONTAINS(st.message(), "secret.jsonl: cannot open: Permission denied");

  // An unreadable directory inside a scan fails the scan.
  Write("tree/ok.txt", "fine");
  Write("tree/locked/inner.txt", "hidden by permissions");
  fs::permissions(Path("tree/locked"), fs::perms::none);
  Status dir = LoadError(Path("tree"));
  fs::permissions(Path("tree/locked"), fs::perms::owner_all);
  EXPECT_EQ(dir.code(), StatusCode::kIoError);
  EXPECT_CONTAINS(dir.message(), "locked: cannot read directory: Permission denied");
}

TEST_F(TempDirTest, SkipBadRecordsCountsAndReports) {
  const std::string path = Write("mixed.jsonl",
                                 "{\"id\": \"a\", \"text\": \"one\"}\n"
                                 "{broken\n"
                                 "{\"id\": \"b\", \"text\": \"two\"}\n"
                                 "{\"id\": \"c\"}\n"
                                 "{\"id\": \"d\", \"text\": \"bad \xFF\"}\n"
                                 "{\"id\": \"e\", \"text\": \"three\"}\n");
  EXPECT_CONTAINS(LoadError(path).message(), "mixed.jsonl:2: invalid JSON");

  LoadOptions skip;
  skip.skip_bad_records = true;
  skip.max_report_messages = 2;
  LoadReport report;
  auto docs = LoadAll(path, skip, &report);
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  EXPECT_EQ(Ids(*docs), (std::vector<std::string>{"a", "b", "e"}));
  EXPECT_EQ(report.skipped_records, 3);
  EXPECT_EQ(report.documents, 3);
  ASSERT_EQ(report.messages.size(), 2u);  // capped
  EXPECT_CONTAINS(report.messages[0], "mixed.jsonl:2: invalid JSON");
  EXPECT_CONTAINS(report.messages[1], "mixed.jsonl:4: missing \"text\"");

  // JSON list records are skipped the same way; syntax errors are not.
  const std::string list =
      Write("mixed.json", "[{\"text\": \"a\"}, {\"text\": 2}, {\"text\": \"c\"}]");
  auto from_list = LoadAll(list, skip, &report);
  ASSERT_TRUE(from_list.ok());
  EXPECT_EQ(Ids(*from_list), (std::vector<std::string>{"mixed.json#0", "mixed.json#2"}));
  EXPECT_EQ(report.skipped_records, 1);  // the report was reset
  EXPECT_FALSE(LoadAll(Write("syntax.json", "[{\"text\": \"a\"}, {]"), skip).ok());
}

// Mutated fixtures (a cheap stand-in for a fuzzer): every outcome is either
// documents with valid UTF-8 or an InvalidArgument naming the file.
TEST_F(TempDirTest, MutatedInputsNeverCrashAndAlwaysExplain) {
  std::mt19937 rng(7);
  for (const char* name : {"records.jsonl", "hipporag.json", "single.json", "guide.md"}) {
    std::ifstream in(Fixture(name), std::ios::binary);
    const std::string original((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    const std::string ext = fs::path(name).extension().string();
    for (int iter = 0; iter < 300; ++iter) {
      std::string data = original;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !data.empty(); ++e) {
        const size_t at = rng() % data.size();
        switch (rng() % 4) {
          case 0:
            data[at] = static_cast<char>(rng() % 256);
            break;
          case 1:
            data.erase(at, 1 + rng() % 8);
            break;
          case 2:
            data.insert(at, 1, "{}[]\\\":,\n\x80\xC3\xFF"[rng() % 13]);  // 13th: NUL
            break;
          default:
            data.resize(at);
            break;
        }
      }
      const std::string path = Write("m" + ext, data);
      for (auto policy : {LoadOptions::InvalidUtf8::kError, LoadOptions::InvalidUtf8::kReplace}) {
        LoadOptions options;
        options.invalid_utf8 = policy;
        options.skip_bad_records = iter % 2 == 1;
        auto docs = LoadAll(path, options);
        if (docs.ok()) {
          for (const RawDocument& d : *docs) {
            ASSERT_TRUE(IsValidUtf8(d.text)) << name << " iteration " << iter;
            ASSERT_TRUE(IsValidUtf8(d.title)) << name << " iteration " << iter;
            ASSERT_FALSE(d.external_id.empty());
          }
        } else {
          ASSERT_EQ(docs.status().code(), StatusCode::kInvalidArgument) << docs.status().ToString();
          ASSERT_TRUE(Contains(docs.status().message(), path + ":") ||
                      Contains(docs.status().message(), path + "#"))
              << docs.status().ToString();
        }
      }
    }
  }
}

TEST(SinkTest, SinkErrorStopsTheLoadAndIsReturnedUnchanged) {
  int seen = 0;
  LoadReport report;
  Status st = LoadSource(
      Fixture("records.jsonl"), {},
      [&](RawDocument&&) {
        if (++seen == 2) return Status::Cancelled("enough");
        return Status::Ok();
      },
      &report);
  EXPECT_EQ(st.code(), StatusCode::kCancelled);
  EXPECT_EQ(st.message(), "enough");
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(report.documents, 1);

  seen = 0;
  st = LoadSource(Fixture("hipporag.json"), {}, [&](RawDocument&&) {
    ++seen;
    return Status::Unavailable("store down");
  });
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(seen, 1);

  seen = 0;
  st = LoadSource(Fixture("docs"), {}, [&](RawDocument&&) {
    ++seen;
    return Status::IoError("disk full");
  });
  EXPECT_EQ(st.message(), "disk full");
  EXPECT_EQ(seen, 1);
}

TEST(SinkTest, ExceptionsFromTheSinkBecomeStatus) {
  Status st = LoadSource(Fixture("note.txt"), {},
                         [](RawDocument&&) -> Status { throw std::runtime_error("boom"); });
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_CONTAINS(st.message(), "boom");
}

// ---------------------------------------------------------------------------
// The real benchmark corpus, when the shared data is present.

TEST(BenchmarkCorpusTest, Loads2WikiCorpus) {
  const std::string bench = std::string(FLOWRAG_SOURCE_DIR) + "/../shared/data/bench";
  const std::string corpus = bench + "/2wiki/corpus.jsonl";
  if (!fs::exists(corpus)) GTEST_SKIP() << corpus << " not present";
  const auto start = std::chrono::steady_clock::now();
  std::vector<RawDocument> docs;
  std::set<std::string> ids;
  Status st = LoadSource(corpus, {}, [&](RawDocument&& d) {
    ids.insert(d.external_id);
    docs.push_back(std::move(d));
    return Status::Ok();
  });
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(docs.size(), 6119u);
  EXPECT_EQ(ids.size(), 6119u);  // unique
  for (size_t i = 0; i < docs.size(); ++i) {
    char expected[32];
    std::snprintf(expected, sizeof(expected), "2wiki-p%05zu", i);
    ASSERT_EQ(docs[i].external_id, expected);
    ASSERT_FALSE(docs[i].title.empty()) << expected;
    ASSERT_FALSE(docs[i].text.empty()) << expected;
    ASSERT_EQ(docs[i].line, static_cast<int64_t>(i + 1));
  }
  EXPECT_EQ(docs.front().title, "Teutberga");
  EXPECT_EQ(docs.back().title, "Margaret of L'Aigle");
  std::printf("loaded 2wiki corpus.jsonl (%zu documents) in %.1f ms\n", docs.size(), ms);

  // The folder itself is a benchmark directory and loads the same documents.
  auto via_dir = LoadAll(bench + "/2wiki");
  ASSERT_TRUE(via_dir.ok()) << via_dir.status().ToString();
  EXPECT_EQ(via_dir->size(), 6119u);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
