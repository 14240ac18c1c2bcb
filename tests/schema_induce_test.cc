// Schema induction: the CSV reader on real-world damage (quotes, newlines,
// ragged rows, mixed encodings), field profiles, identity keys (Eq. 4–5,
// composite) and foreign keys (Eq. 6, confidence, cardinality) on a small
// multi-source folder, and errors that name file and line.
#include <gtest/gtest.h>

#include <filesystem>

#include <algorithm>

#include "flowrag/schema.h"
#include "common/text.h"
#include "schema/csv_reader.h"
#include "schema/field_profile.h"
#include "schema/json_records.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

TEST(CsvReader, QuotesNewlinesCrlfBomAndDelimiters) {
  auto t = ParseCsv(
      "\xEF\xBB\xBFid,name,note\r\n1,\"Smith, Ann\",\"two\nlines\"\r\n\r\n2,Bo,\"say "
      "\"\"hi\"\"\"\n",
      "a.csv");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->columns, (std::vector<std::string>{"id", "name", "note"}));
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[0][1], "Smith, Ann");
  EXPECT_EQ(t->rows[0][2], "two\nlines");
  EXPECT_EQ(t->rows[1][2], "say \"hi\"");
  EXPECT_EQ(t->row_lines, (std::vector<int64_t>{2, 5}));  // the quoted newline counts
  auto semi = ParseCsv("a;b\n1;2\n", "s.csv");
  ASSERT_TRUE(semi.ok());
  EXPECT_EQ(semi->delimiter, ';');
  EXPECT_EQ(semi->rows[0][1], "2");
}

TEST(CsvReader, MixedEncodingsAreReadNotRejected) {
  // "Café" in UTF-8, then "Zoë" in Windows-1252 (0xEB) and a 0x80 euro sign.
  auto t = ParseCsv("name\nCaf\xC3\xA9\nZo\xEB\n\x80 5\n", "m.csv");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->rows[0][0], "Caf\xC3\xA9");
  EXPECT_EQ(t->rows[1][0], "Zo\xC3\xAB");
  EXPECT_EQ(t->rows[2][0], "\xE2\x82\xAC 5");
  EXPECT_EQ(t->transcoded_fields, 2u);
}

TEST(CsvReader, Utf16AndUtf32FilesAreDecoded) {
  const std::string csv = "id,name,city\r\n1,Zo\xC3\xAB Durand,K\xC3\xB8" "benhavn\r\n2,Ann,\xE2\x82\xAC" "uro\r\n";
  for (bool little : {true, false}) {
    auto t = ParseCsv(testing::ToUtf16(csv, little), "u16.csv");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->columns, (std::vector<std::string>{"id", "name", "city"}));
    ASSERT_EQ(t->rows.size(), 2u);
    EXPECT_EQ(t->rows[0][1], "Zo\xC3\xAB Durand");
    EXPECT_EQ(t->rows[0][2], "K\xC3\xB8" "benhavn");
    EXPECT_EQ(t->rows[1][2], "\xE2\x82\xAC" "uro");
    EXPECT_EQ(t->row_lines, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(t->transcoded_fields, 0u);
  }
  // UTF-32LE with its mark.
  std::string u32 = std::string("\xFF\xFE\x00\x00", 4);
  for (char c : std::string("a,b\n1,2\n")) u32 += std::string{c, '\0', '\0', '\0'};
  auto t32 = ParseCsv(u32, "u32.csv");
  ASSERT_TRUE(t32.ok()) << t32.status().ToString();
  EXPECT_EQ(t32->rows, (std::vector<std::vector<std::string>>{{"1", "2"}}));
}

TEST(CsvReader, ErrorsQuoteTheInputEscaped) {
  // A broken UTF-16 file reports the decoded line, not a garbled, cut-off text.
  auto ragged = ParseCsv(testing::ToUtf16("a,b\n1,2\n3\n", true), "r16.csv");
  ASSERT_FALSE(ragged.ok());
  EXPECT_NE(ragged.status().message().find("r16.csv:3: 1 fields, the header has 2 (missing \"b\""),
            std::string::npos)
      << ragged.status().ToString();
  // NUL and invalid bytes of a column name are escaped.
  auto dup = ParseCsv(std::string("x\0y,x\0y\n1,2\n", 12), "d.csv");
  ASSERT_FALSE(dup.ok());
  const std::string m = dup.status().message();
  EXPECT_EQ(m.find('\0'), std::string::npos);
  EXPECT_NE(m.find("column \"x\\0y\" appears twice"), std::string::npos) << m;
}

TEST(JsonRecords, Windows1252AndUtf16AreReadLikeCsv) {
  testing::TempDir dir;
  // Line 2 in Windows-1252 (ë, €), line 3 in UTF-8 (é): each line as it is.
  testing::WriteFile(dir.File("people.jsonl"),
                     "{\"id\": 1, \"name\": \"Ann\"}\n"
                     "{\"id\": 2, \"name\": \"Zo\xEB\", \"note\": \"pays in \x80\"}\n"
                     "{\"id\": 3, \"name\": \"Caf\xC3\xA9\"}\n");
  size_t transcoded = 0;
  auto r = ReadJsonRecords(dir.File("people.jsonl"), {}, &transcoded);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[1].values[1].second, "Zo\xC3\xAB");
  EXPECT_EQ((*r)[1].values[2].second, "pays in \xE2\x82\xAC");
  EXPECT_EQ((*r)[2].values[1].second, "Caf\xC3\xA9");
  EXPECT_EQ(transcoded, 1u);
  // A .json list in UTF-16BE, lines of its records kept.
  testing::WriteFile(dir.File("list.json"),
                     testing::ToUtf16("[\n {\"k\": \"Zo\xC3\xAB\"},\n {\"k\": \"\xE2\x82\xAC\"}\n]\n", false));
  auto list = ReadJsonRecords(dir.File("list.json"));
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].values[0].second, "Zo\xC3\xAB");
  EXPECT_EQ((*list)[1].values[0].second, "\xE2\x82\xAC");
  EXPECT_EQ((*list)[1].line, 3);
  // A broken line of a UTF-16LE JSONL file names file:line, with no raw NUL.
  testing::WriteFile(dir.File("bad.jsonl"),
                     testing::ToUtf16("{\"a\": 1}\n{\"a\": 2}\n{\"a\": \n{\"a\": 4}\n", true));
  auto bad = ReadJsonRecords(dir.File("bad.jsonl"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.jsonl:3: invalid JSON"), std::string::npos)
      << bad.status().ToString();
  EXPECT_EQ(bad.status().message().find('\0'), std::string::npos);
  // Control characters the parser quotes are escaped too.
  testing::WriteFile(dir.File("ctl.jsonl"), std::string("{\"a\": 1}\n{\"a\": \"x\0\xFF\n", 20));
  auto ctl = ReadJsonRecords(dir.File("ctl.jsonl"));
  ASSERT_FALSE(ctl.ok());
  EXPECT_NE(ctl.status().message().find("ctl.jsonl:2:"), std::string::npos) << ctl.status().ToString();
  EXPECT_EQ(ctl.status().message().find('\0'), std::string::npos) << ctl.status().ToString();
  EXPECT_TRUE(IsValidUtf8(ctl.status().message())) << ctl.status().ToString();
}

TEST(CsvReader, ErrorsNameFileLineAndField) {
  auto ragged = ParseCsv("a,b,c\n1,2,3\n4,5\n", "r.csv");
  ASSERT_FALSE(ragged.ok());
  EXPECT_NE(ragged.status().message().find("r.csv:3"), std::string::npos)
      << ragged.status().ToString();
  EXPECT_NE(ragged.status().message().find("\"c\""), std::string::npos);
  auto extra = ParseCsv("a,b\n1,2,3\n", "x.csv");
  EXPECT_NE(extra.status().message().find("x.csv:2"), std::string::npos);
  auto open = ParseCsv("a,b\n1,\"never\nclosed\n", "q.csv");
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.status().message().find("q.csv:2"), std::string::npos) << open.status().ToString();
  EXPECT_NE(ParseCsv("a,a\n1,2\n", "d.csv").status().message().find("appears twice"),
            std::string::npos);
  EXPECT_FALSE(ParseCsv("", "e.csv").ok());
}

TEST(FieldProfile, TypesNullsUniquenessAndCanonicalValues) {
  std::vector<std::string_view> v = {"1", "2", "", "007", "7.0"};
  ColumnProfile p = ProfileColumn("s", "StuID", 0, v);
  EXPECT_EQ(p.info.type, "number");
  EXPECT_EQ(p.info.nulls, 1);
  EXPECT_EQ(p.info.distinct, 3);  // 1, 2, 7 ("007" and "7.0" are one value)
  EXPECT_DOUBLE_EQ(p.info.uniqueness, 0.75);
  EXPECT_TRUE(p.info.id_like);
  EXPECT_EQ(p.info.id.size(), 16u);
  EXPECT_EQ(ProfileColumn("s", "d", 0, {"2020-01-02", "1999/12/31"}).info.type, "date");
  EXPECT_EQ(FieldNameTokens("IDNumber_of-carMakers"),
            (std::vector<std::string>{"id", "number", "of", "car", "makers"}));
  EXPECT_FALSE(IsIdLikeName("video"));
}

std::string Rows(int n, const std::function<std::string(int)>& row) {
  std::string s;
  for (int i = 0; i < n; ++i) s += row(i) + "\n";
  return s;
}

TEST(InduceSchema, IdentityKeysAndForeignKeysOnAMultiSourceFolder) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("countries.csv"),
                     "CountryId,CountryName,Continent\n" + Rows(8, [](int i) {
                       return std::to_string(i + 1) + ",C" + std::to_string(i) + "," +
                              std::to_string(i % 3 + 1);
                     }));
  testing::WriteFile(dir.File("continents.csv"), "ContId,Continent\n" + Rows(5, [](int i) {
                                                   return std::to_string(i + 1) + ",K" +
                                                          std::to_string(i);
                                                 }));
  testing::WriteFile(dir.File("makers/car_makers.csv"), "Id,Maker,Country\n" + Rows(20, [](int i) {
                                                          return std::to_string(i + 1) + ",M" +
                                                                 std::to_string(i) + "," +
                                                                 std::to_string(i % 8 + 1);
                                                        }));
  // A link table: a composite key, no single one.
  testing::WriteFile(dir.File("plays.csv"), "maker_id,country_id,season\n" + Rows(12, [](int i) {
                                              return std::to_string(i % 4 + 1) + "," +
                                                     std::to_string(i / 4 + 1) + ",x";
                                            }));
  auto s = InduceSchema(dir.path());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->sources.size(), 4u);
  EXPECT_EQ(s->sources[2].name, "makers/car_makers");
  auto primary = [&](const std::string& src) {
    for (const IdentityKey& k : s->identity_keys) {
      if (k.source == src && k.primary) return k.fields;
    }
    return std::vector<std::string>{};
  };
  EXPECT_EQ(primary("countries"), (std::vector<std::string>{"CountryId"}));
  EXPECT_EQ(primary("continents"), (std::vector<std::string>{"ContId"}));
  EXPECT_EQ(primary("makers/car_makers"), (std::vector<std::string>{"Id"}));
  EXPECT_EQ(primary("plays"), (std::vector<std::string>{"maker_id", "country_id"}));
  // Eq. 5 confidence of a fully unique key.
  EXPECT_DOUBLE_EQ(s->identity_keys[0].confidence, 0.95);

  auto find_fk = [&](const std::string& from, const std::string& field) -> const ForeignKey* {
    for (const ForeignKey& f : s->foreign_keys) {
      if (f.from_source == from && f.from_field == field) return &f;
    }
    return nullptr;
  };
  const ForeignKey* cont = find_fk("countries", "Continent");
  ASSERT_NE(cont, nullptr);
  EXPECT_EQ(cont->to_source, "continents");
  EXPECT_EQ(cont->to_field, "ContId");
  EXPECT_EQ(cont->cardinality, "N:1");
  EXPECT_DOUBLE_EQ(cont->overlap, 3.0 / 5.0);  // {1,2,3} of {1..5}
  EXPECT_NEAR(cont->confidence, 0.5 + 0.3 * 0.6, 1e-12);
  const ForeignKey* country = find_fk("makers/car_makers", "Country");
  ASSERT_NE(country, nullptr);
  EXPECT_EQ(country->to_source, "countries");
  EXPECT_EQ(country->to_field, "CountryId");
  EXPECT_FALSE(country->exact_name);
  // Source hierarchy (A.7): the referenced side of an N:1 key with fewer
  // records is the parent; parents first. plays (12 rows) is a child of
  // countries (8) but not of car_makers (20).
  ASSERT_EQ(s->hierarchy.size(), 3u);
  EXPECT_EQ(s->hierarchy[0].parent, "continents");
  EXPECT_EQ(s->hierarchy[0].child, "countries");
  EXPECT_EQ(s->hierarchy[0].via, "Continent");
  EXPECT_DOUBLE_EQ(s->hierarchy[0].ratio, 8.0 / 5.0);
  EXPECT_EQ(s->hierarchy[1].parent, "countries");
  EXPECT_EQ(s->hierarchy[1].child, "makers/car_makers");
  EXPECT_DOUBLE_EQ(s->hierarchy[1].ratio, 20.0 / 8.0);
  EXPECT_EQ(s->hierarchy[2].parent, "countries");
  EXPECT_EQ(s->hierarchy[2].child, "plays");
  EXPECT_EQ(s->hierarchy[2].via, "country_id");
  // A bare "Id" matches nothing by name; plays.season is no key of anything.
  EXPECT_EQ(find_fk("makers/car_makers", "Id"), nullptr);
  EXPECT_EQ(find_fk("plays", "season"), nullptr);
  // Every field is in the catalog with a stable id.
  EXPECT_EQ(s->fields.size(), 3u + 2u + 3u + 3u);
  auto again = InduceSchema(dir.path());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->fields[0].id, s->fields[0].id);
}

TEST(InduceSchema, ABadFileFailsNamingItsLine) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("good.csv"), "a\n1\n");
  testing::WriteFile(dir.File("bad.csv"), "a,b\n1,2\n3\n");
  auto s = InduceSchema(dir.path());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("bad.csv:3"), std::string::npos) << s.status().ToString();
  EXPECT_EQ(InduceSchema(dir.File("missing")).status().code(), StatusCode::kNotFound);
}

TEST(InduceSchema, JsonAndJsonlSourcesAreFlattenedToPaths) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("authors.json"),
                     R"([{"author_id": 1, "name": "Ada", "address": {"city": "London"}},
                         {"author_id": 2, "name": "Bo", "address": {"city": "Paris"}},
                         {"author_id": 3, "name": "Cy", "address": {"city": null}},
                         {"author_id": 4, "name": "Di"},
                         {"author_id": 5, "name": "Ed", "address": {"city": "Rome"}}])");
  std::string books;
  for (int i = 0; i < 8; ++i) {
    books += "{\"isbn\": \"978-" + std::to_string(i) + "\", \"author_ids\": [" +
             std::to_string(i % 5 + 1) + ", " + std::to_string((i + 1) % 5 + 1) +
             "], \"tags\": [\"x\"]}\n";
  }
  testing::WriteFile(dir.File("books.jsonl"), books);
  auto s = InduceSchema(dir.path());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->sources.size(), 2u);
  EXPECT_EQ(s->sources[0].format, "json");
  EXPECT_EQ(s->sources[1].format, "jsonl");
  EXPECT_EQ(s->sources[1].records, 8);
  const FieldInfo* city = nullptr;
  for (const FieldInfo& f : s->fields) {
    if (f.path == "address.city") city = &f;
  }
  ASSERT_NE(city, nullptr);
  EXPECT_EQ(city->count, 5);
  EXPECT_EQ(city->nulls, 2);  // null, and absent
  bool isbn_key = false, array_key = false;
  for (const IdentityKey& k : s->identity_keys) {
    isbn_key |= k.source == "books" && k.primary && k.fields == std::vector<std::string>{"isbn"};
    array_key |= k.fields[0].find("[*]") != std::string::npos;
  }
  EXPECT_TRUE(isbn_key);
  EXPECT_FALSE(array_key);
  // The array of author ids references the authors' key (an N:M link).
  bool link = false;
  for (const ForeignKey& f : s->foreign_keys) {
    link |= f.from_source == "books" && f.from_field == "author_ids[*]" &&
            f.to_source == "authors" && f.to_field == "author_id";
  }
  EXPECT_TRUE(link);
}

TEST(InduceSchema, TruncatedOrDeepJsonFailsNamingThePlace) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("t.json"), R"([{"a": 1}, {"a": )");
  auto t = InduceSchema(dir.path());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("t.json"), std::string::npos) << t.status().ToString();
  testing::TempDir deep;
  std::string nested = "{\"a\": ";
  std::string close = "}";
  for (int i = 0; i < 40; ++i) {
    nested += "{\"b\": ";
    close += "}";
  }
  testing::WriteFile(deep.File("d.jsonl"), "{\"ok\": 1}\n" + nested + "1" + close + "\n");
  auto d = InduceSchema(deep.path());
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("d.jsonl:2"), std::string::npos) << d.status().ToString();
  EXPECT_NE(d.status().message().find("nested deeper"), std::string::npos);
  testing::TempDir scalar;
  testing::WriteFile(scalar.File("s.jsonl"), "{\"a\": 1}\n[1, 2]\n");
  EXPECT_NE(InduceSchema(scalar.path()).status().message().find("s.jsonl:2"), std::string::npos);
}

TEST(InduceSchema, AFolderThatIsOneCorpusIsNamedAfterItHoweverItIsSpelled) {
  testing::TempDir dir;
  for (int i = 0; i < 3; ++i) {
    testing::WriteFile(dir.File("memos/m" + std::to_string(i) + ".txt"), "Memo number " + std::to_string(i));
  }
  const std::string folder = dir.File("memos");
  for (const std::string& spelled : {folder, folder + "/", folder + "/.", folder + "//"}) {
    auto s = InduceSchema(spelled);
    ASSERT_TRUE(s.ok()) << spelled << ": " << s.status().ToString();
    ASSERT_EQ(s->sources.size(), 1u) << spelled;
    EXPECT_EQ(s->sources[0].name, "memos") << spelled;
    EXPECT_EQ(s->sources[0].records, 3) << spelled;
    EXPECT_TRUE(std::filesystem::equivalent(s->sources[0].path, folder)) << s->sources[0].path;
  }
}

TEST(InduceSchema, CorpusDirectoriesTextFilesAndSamples) {
  testing::TempDir dir;
  for (int i = 0; i < 52; ++i) {
    testing::WriteFile(dir.File("filings/f" + std::to_string(100 + i) + ".json"),
                       "{\"filing_id\": " + std::to_string(i) + ", \"company\": \"C" +
                           std::to_string(i % 7) + "\"" + (i == 30 ? ", \"note\": \"rare\"" : "") +
                           "}");
  }
  testing::WriteFile(dir.File("few/a.json"), "{\"x\": 1}");
  testing::WriteFile(dir.File("few/b.json"), "{\"y\": 2}");
  testing::WriteFile(dir.File("notes/readme.md"), "# Read me\n\nSome text about filings.\n");
  auto s = InduceSchema(dir.path());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::vector<std::string> names;
  for (const SourceInfo& src : s->sources) names.push_back(src.name);
  EXPECT_EQ(names, (std::vector<std::string>{"few/a", "few/b", "filings", "notes/readme"}));
  const SourceInfo& corpus = s->sources[2];
  EXPECT_EQ(corpus.corpus_files, 52u);
  EXPECT_EQ(corpus.records, 52);
  EXPECT_EQ(corpus.format, "json");
  // Eq. 2: the one record with every field filled (the "note") wins.
  EXPECT_EQ(corpus.representative, 30);
  // Diverse: first, middle, last; r* is not repeated.
  ASSERT_GE(corpus.samples.size(), 3u);
  EXPECT_EQ(corpus.samples[0], 0u);
  EXPECT_EQ(corpus.samples[1], 26u);
  EXPECT_EQ(corpus.samples[2], 51u);
  EXPECT_EQ(std::count(corpus.samples.begin(), corpus.samples.end(), 30u), 0);
  const SourceInfo& text = s->sources[3];
  EXPECT_EQ(text.format, "text");
  EXPECT_EQ(text.corpus_files, 0u);
  const SchemaContract c = DeriveContract(*s);
  bool text_field = false;
  for (const EntityType& t : c.entity_types) {
    if (t.source == "notes/readme") text_field = t.text_fields == std::vector<std::string>{"text"};
  }
  EXPECT_TRUE(text_field);
  bool filing_key = false;
  for (const IdentityKey& k : s->identity_keys) {
    filing_key |= k.source == "filings" && k.primary && k.fields[0] == "filing_id";
  }
  EXPECT_TRUE(filing_key);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
