// The schema contract: derived offline from structural analysis, written as
// YAML and read back unchanged; hand edits that break it fail naming the
// file, line and field; the exclusion manifest removes files and fields
// before anything sees them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "flowrag/schema.h"
#include "schema/exclusions.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

std::string Rows(int n, const std::function<std::string(int)>& row) {
  std::string s;
  for (int i = 0; i < n; ++i) s += row(i) + "\n";
  return s;
}

class ContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteFile(dir_.File("continents.csv"), "ContId,Continent\n" + Rows(5, [](int i) {
                                                      return std::to_string(i + 1) + ",K" +
                                                             std::to_string(i);
                                                    }));
    testing::WriteFile(dir_.File("countries.csv"),
                       "CountryId,CountryName,Continent,password\n" + Rows(8, [](int i) {
                         return std::to_string(i + 1) + ",C" + std::to_string(i) + "," +
                                std::to_string(i % 3 + 1) + ",pw" + std::to_string(i);
                       }));
    testing::WriteFile(dir_.File("scratch/tmp.csv"), "x\n1\n");
  }
  testing::TempDir dir_;
};

TEST_F(ContractTest, DerivedContractRoundTripsThroughYaml) {
  auto s = InduceSchema(dir_.path());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const SchemaContract c = DeriveContract(*s);
  ASSERT_EQ(c.entity_types.size(), 3u);
  EXPECT_EQ(c.entity_types[0].name, "Continent");
  EXPECT_EQ(c.entity_types[1].name, "Country");
  EXPECT_EQ(c.entity_types[1].identity_key, std::vector<std::string>{"CountryId"});
  ASSERT_EQ(c.relationships.size(), 1u);
  EXPECT_EQ(c.relationships[0].name, "CONTINENT");
  EXPECT_EQ(c.relationships[0].from, "Country");
  EXPECT_EQ(c.relationships[0].to, "Continent");

  const std::string yaml = ToYaml(c);
  auto back = ParseContract(yaml, "schema.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->version, 1);
  EXPECT_EQ(back->structure.fields.size(), s->fields.size());
  EXPECT_EQ(back->structure.fields[0].id, s->fields[0].id);
  ASSERT_EQ(back->entity_types.size(), c.entity_types.size());
  for (size_t i = 0; i < c.entity_types.size(); ++i) {
    EXPECT_EQ(back->entity_types[i].name, c.entity_types[i].name);
    EXPECT_EQ(back->entity_types[i].attributes, c.entity_types[i].attributes);
  }
  EXPECT_EQ(back->relationships[0].to_field, "ContId");
  EXPECT_EQ(back->structure.foreign_keys.size(), 1u);
  // Structural intelligence keeps the hierarchy and the catalog's examples.
  ASSERT_EQ(back->structure.hierarchy.size(), 1u);
  EXPECT_EQ(back->structure.hierarchy[0].parent, "continents");
  EXPECT_EQ(back->structure.hierarchy[0].child, "countries");
  EXPECT_EQ(back->structure.hierarchy[0].via, "Continent");
  EXPECT_DOUBLE_EQ(back->structure.hierarchy[0].ratio, 8.0 / 5.0);
  EXPECT_EQ(back->structure.fields[0].examples, s->fields[0].examples);
  EXPECT_FALSE(back->structure.fields[0].examples.empty());
  EXPECT_EQ(ToYaml(*back), yaml);  // stable
}

// Replaces the first occurrence of `from` in `text`.
std::string Edit(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

int LineOf(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

TEST_F(ContractTest, HandEditsThatBreakTheContractNameFileLineAndField) {
  auto s = InduceSchema(dir_.path());
  ASSERT_TRUE(s.ok());
  const std::string yaml = ToYaml(DeriveContract(*s));
  struct Case {
    std::string text, expect;
  };
  const std::string typo = Edit(yaml, "to: Continent,", "to: Contnent,");
  const std::vector<Case> cases = {
      {typo, "schema.yaml:" + std::to_string(LineOf(typo, "Contnent")) +
                 ": relationships[0].to: \"Contnent\" is not an entity type"},
      {Edit(yaml, "name: CONTINENT", "name: continentOf"), "is not UPPER_SNAKE"},
      {Edit(yaml, "name: Country\n", "name: country\n"), "is not PascalCase"},
      {Edit(yaml, "attributes: [CountryId,", "attributes: [Nope,"),
       "field \"Nope\" is not in the catalog"},
      {Edit(yaml, "to_field: ContId,", "to_field: Missing,"),
       "\"continents.Missing\" is not in the field catalog"},
      {Edit(yaml, "via: Continent", "via: Region"), "hierarchy[0].via: \"countries.Region\" is not in the field catalog"},
      {Edit(yaml, "parent: continents", "parent: oceans"), "hierarchy[0].parent: \"oceans\" is not a source"},
      {Edit(yaml, "version: 1", "version: 0"), "version: expected a positive integer"},
      {Edit(yaml, "flowrag_schema: 1", "flowrag_schema: 7"), "flowrag_schema: expected 1"},
      {Edit(yaml, "sources:", "sources: [oops"), "schema.yaml:"},
      {"- just a list\n", "expected a mapping"},
  };
  for (const Case& c : cases) {
    auto r = ParseContract(c.text, "schema.yaml");
    ASSERT_FALSE(r.ok()) << c.expect;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << r.status().ToString();
  }
  EXPECT_EQ(LoadContract(dir_.File("none.yaml")).status().code(), StatusCode::kNotFound);
}

// The routing section: written with the defaults, read back, absent → the
// defaults, and each wrong shape an error naming the field.
TEST_F(ContractTest, RoutingSectionRoundTripsAndIsChecked) {
  auto s = InduceSchema(dir_.path());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  SchemaContract c = DeriveContract(*s);
  const std::string yaml = ToYaml(c);
  EXPECT_NE(yaml.find("routing:"), std::string::npos);
  EXPECT_NE(yaml.find("preference: [SchemaLookup, VectorRAG, GraphTraverse]"), std::string::npos) << yaml;
  c.routing.preference = {"GraphTraverse", "VectorRAG"};
  c.routing.ood_gate = false;
  auto back = ParseContract(ToYaml(c), "schema.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->routing.preference, (std::vector<std::string>{"GraphTraverse", "VectorRAG"}));
  EXPECT_FALSE(back->routing.ood_gate);
  const std::string without = yaml.substr(0, yaml.find("routing:"));
  auto old = ParseContract(without, "schema.yaml");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->routing.preference, RoutingPolicy{}.preference);
  EXPECT_TRUE(old->routing.ood_gate);
  const std::string head = "flowrag_schema: 1\nversion: 1\n";
  for (const auto& [text, expect] : std::vector<std::pair<std::string, std::string>>{
           {head + "routing: [SchemaLookup]\n", "routing: expected a mapping"},
           {head + "routing:\n  preference: [SchemaLookup, Google]\n", "routing.preference[1]: \"Google\" is not"},
           {head + "routing:\n  preference: [VectorRAG, VectorRAG]\n", "routing.preference[1]: \"VectorRAG\" is listed twice"},
           {head + "routing:\n  preference: []\n", "routing.preference: expected at least one tool"},
           {head + "routing:\n  ood_gate: maybe\n", "routing.ood_gate: expected true or false"},
           {head + "routing:\n  order: [VectorRAG]\n", "routing: unknown key \"order\""}}) {
    auto r = ParseContract(text, "schema.yaml");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find(expect), std::string::npos) << r.status().ToString();
  }
}

// Issue 21: a scalar where a mapping is expected aborted the process
// (uncaught YAML::BadSubscript). Each list of mappings, and numbers out of
// range, now fail naming the file, line and field.
TEST_F(ContractTest, ScalarsWhereMappingsBelongAreErrorsNotCrashes) {
  const std::string head = "flowrag_schema: 1\nversion: 1\n";
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases = {
      {head + "sources:\n  - x\n", "schema.yaml:4: sources[0]: expected a mapping"},
      {head + "sources:\n  - name: a\n    fields:\n      - x\n",
       "sources[0].fields[0]: expected a mapping"},
      {head + "identity_keys:\n  - x\n", "identity_keys[0]: expected a mapping"},
      {head + "foreign_keys: [1, 2]\n", "foreign_keys[0]: expected a mapping"},
      {head + "hierarchy:\n  - [a]\n", "hierarchy[0]: expected a mapping"},
      {head + "entity_types:\n  - Person\n", "entity_types[0]: expected a mapping"},
      {head + "relationships:\n  - KNOWS\n", "relationships[0]: expected a mapping"},
      {head + "extensions:\n  - 2\n", "extensions[0]: expected a mapping"},
      {head + "sources: x\n", "sources: expected a list"},
      {"flowrag_schema: 1\nversion: 1e300\n", "version: expected a whole number"},
      {"flowrag_schema: 1\nversion: 2000000\n", "version: expected a positive integer"},
      {"flowrag_schema: 1\nversion: .nan\n", "version: expected a whole number"},
      {head + "sources:\n  - name: a\n    records: -3\n", "sources[0].records: expected a whole number"},
      {head + "sources:\n  - name: a\n    corpus_files: 1e40\n",
       "sources[0].corpus_files: expected a whole number"},
      {"x\n", "expected a mapping"},
      // Invalid UTF-8 does not survive a ToYaml round trip (fuzz target).
      {head + "sources:\n  - name: CONTINENT\xff\r\n", "schema.yaml:4: invalid UTF-8 at byte 57"},
  };
  for (const Case& c : cases) {
    auto r = ParseContract(c.text, "schema.yaml");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << r.status().ToString();
  }
  // The exclusion manifest's reader, too.
  testing::WriteFile(dir_.File("scalar.yaml"), "x\n");
  EXPECT_EQ(LoadExclusions(dir_.File("scalar.yaml")).status().code(), StatusCode::kInvalidArgument);
}

// Every value of a real contract replaced by a scalar, a list, a mapping or
// a huge number: the parser answers (a contract or InvalidArgument) and never
// throws.
TEST_F(ContractTest, EveryValueReplacedByAnotherShapeIsAnErrorOrAContract) {
  auto s = InduceSchema(dir_.path());
  ASSERT_TRUE(s.ok());
  const std::string yaml = ToYaml(DeriveContract(*s));
  std::vector<std::string> lines;
  for (size_t at = 0, next; at < yaml.size(); at = next + 1) {
    next = yaml.find('\n', at);
    if (next == std::string::npos) next = yaml.size();
    lines.push_back(yaml.substr(at, next - at));
  }
  size_t variants = 0, rejected = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(": ");
    const size_t dash = lines[i].find("- ");
    for (const char* shape : {"x", "[a, [b]]", "{k: v}", "1e400", "-7", "~", "!!binary AAAA"}) {
      std::string line = lines[i];
      if (colon != std::string::npos) {
        line = line.substr(0, colon + 2) + shape;
      } else if (dash != std::string::npos) {
        line = line.substr(0, dash + 2) + shape;
      } else {
        continue;
      }
      std::string text;
      for (size_t j = 0; j < lines.size(); ++j) text += (j == i ? line : lines[j]) + "\n";
      auto r = ParseContract(text, "schema.yaml");  // must not throw
      ++variants;
      if (!r.ok()) {
        ++rejected;
        EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
        EXPECT_EQ(r.status().message().rfind("schema.yaml", 0), 0u) << r.status().ToString();
      }
    }
  }
  EXPECT_GT(variants, 100u);
  EXPECT_GT(rejected, variants / 4);
}

TEST_F(ContractTest, ExclusionManifestRemovesFilesAndFieldsFirst) {
  testing::WriteFile(
      dir_.File("flowrag_exclude.yaml"),
      "exclude:\n  files: [\"scratch/*\"]\n  fields: [\"countries.password\", \"*.Continent\"]\n");
  auto s = InduceSchema(dir_.path());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->sources.size(), 2u);  // scratch/tmp excluded
  for (const FieldInfo& f : s->fields) {
    EXPECT_NE(f.path, "password");
    EXPECT_NE(f.path, "Continent");
  }
  EXPECT_TRUE(s->foreign_keys.empty());  // the link went with its field
  EXPECT_EQ(s->excluded, (std::vector<std::string>{"continents.Continent", "countries.Continent",
                                                   "countries.password", "scratch/tmp.csv"}));

  // A broken manifest is an error naming its line; nothing is induced.
  testing::WriteFile(dir_.File("bad.yaml"), "exclude:\n  files: \"not a list\"\n");
  SchemaOptions o;
  o.exclusions = dir_.File("bad.yaml");
  auto bad = InduceSchema(dir_.path(), o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.yaml:2: exclude.files"), std::string::npos)
      << bad.status().ToString();
}

// The manifest's rules travel in the contract (its `exclude` block), so
// ingestion applies them without the manifest; the block round-trips and
// the linter checks it like the rest.
TEST_F(ContractTest, ExclusionRulesAreRecordedInTheContractAndRoundTrip) {
  testing::WriteFile(dir_.File("notes/a.txt"), "# A\n\nalpha\n");
  testing::WriteFile(dir_.File("notes/b.txt"), "# B\n\nbeta\n");
  testing::TempDir elsewhere;  // outside the folder
  const std::string manifest = elsewhere.File("manifest.yaml");
  testing::WriteFile(manifest,
                     "exclude:\n  files: [\"scratch/*\", \"notes/b.txt\"]\n"
                     "  fields: [\"countries.password\", \"*.ssn\"]\n");
  SchemaOptions o;
  o.exclusions = manifest;
  auto s = InduceSchema(dir_.path(), o);
  std::filesystem::remove(manifest);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->exclusion_rules.files, (std::vector<std::string>{"scratch/*", "notes/b.txt"}));
  EXPECT_EQ(s->exclusion_rules.fields, (std::vector<std::string>{"countries.password", "*.ssn"}));
  const SchemaContract c = DeriveContract(*s);
  const std::string yaml = ToYaml(c);
  EXPECT_NE(yaml.find("exclude:"), std::string::npos) << yaml;
  auto back = ParseContract(yaml, "schema.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << yaml;
  EXPECT_EQ(back->structure.exclusion_rules.files, s->exclusion_rules.files);
  EXPECT_EQ(back->structure.exclusion_rules.fields, s->exclusion_rules.fields);
  EXPECT_TRUE(back->structure.exclusion_rules.ExcludesField("users", "ssn"));
  EXPECT_EQ(ToYaml(*back), yaml);  // stable
  // The notes left: one text file, a source of its own (not a corpus).
  for (const SourceInfo& src : back->structure.sources) {
    EXPECT_EQ(src.corpus_files, 0u) << src.name;
  }

  // Without a manifest there is no block, and a corpus records its size.
  std::filesystem::remove(dir_.File("scratch/tmp.csv"));
  auto plain = InduceSchema(dir_.path());
  ASSERT_TRUE(plain.ok());
  const std::string plain_yaml = ToYaml(DeriveContract(*plain));
  EXPECT_EQ(plain_yaml.find("exclude:"), std::string::npos) << plain_yaml;
  auto plain_back = ParseContract(plain_yaml, "schema.yaml");
  ASSERT_TRUE(plain_back.ok()) << plain_back.status().ToString();
  bool corpus = false;
  for (const SourceInfo& src : plain_back->structure.sources) {
    corpus |= src.name == "notes" && src.corpus_files == 2;
  }
  EXPECT_TRUE(corpus) << plain_yaml;

  // Hand edits of the block fail naming the file, line and entry.
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases = {
      {Edit(yaml, "\"*.ssn\"", "\"\""), "exclude.fields[1]: expected a non-empty glob pattern"},
      {Edit(yaml, "  files: [", "  file: ["), "exclude.file: unknown key (expected files or fields)"},
      {Edit(yaml, "  fields: [countries.password, \"*.ssn\"]", "  fields: \"*.ssn\""),
       "exclude.fields: expected a list of glob patterns"},
      {Edit(yaml, "records: 8\n", "records: 8\n    corpus_files: -1\n"), ".corpus_files: expected a whole number"},
  };
  for (const Case& k : cases) {
    auto r = ParseContract(k.text, "schema.yaml");
    ASSERT_FALSE(r.ok()) << k.expect << "\n" << k.text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(k.expect), std::string::npos) << r.status().ToString();
    EXPECT_NE(r.status().message().find("schema.yaml:"), std::string::npos) << r.status().ToString();
  }
  const std::string line = std::to_string(LineOf(yaml, "*.ssn"));
  auto empty_glob = ParseContract(Edit(yaml, "\"*.ssn\"", "\"\""), "schema.yaml");
  EXPECT_NE(empty_glob.status().message().find("schema.yaml:" + line + ": exclude.fields[1]"),
            std::string::npos)
      << empty_glob.status().ToString();

  // Extension unions the rules: what either side excluded stays excluded.
  const ExtensionResult ext = ExtendContract(*plain_back, *back);
  EXPECT_EQ(ext.contract.structure.exclusion_rules.files, back->structure.exclusion_rules.files);
  EXPECT_EQ(ext.contract.structure.exclusion_rules.fields, back->structure.exclusion_rules.fields);
  EXPECT_NE(std::find(ext.added.begin(), ext.added.end(), "exclusion of files notes/b.txt"),
            ext.added.end())
      << ::testing::PrintToString(ext.added);
  EXPECT_EQ(ext.contract.version, 2);
  EXPECT_TRUE(ParseContract(ToYaml(ext.contract), "schema.yaml").ok());
}

TEST_F(ContractTest, PersistentExtensionIsMonotonicAndVersioned) {
  auto s = InduceSchema(dir_.path());
  ASSERT_TRUE(s.ok());
  const SchemaContract base = DeriveContract(*s);
  const std::string base_yaml = ToYaml(base);

  // New data: countries gained a column, and a new source links to countries.
  testing::TempDir next;
  testing::WriteFile(next.File("countries.csv"),
                     "CountryId,CountryName,Population\n" + Rows(8, [](int i) {
                       return std::to_string(i + 1) + ",C" + std::to_string(i) + "," +
                              std::to_string(1000 * i);
                     }));
  testing::WriteFile(next.File("cities.csv"), "CityId,Name,CountryId\n" + Rows(12, [](int i) {
                                                return std::to_string(i + 1) + ",T" +
                                                       std::to_string(i) + "," +
                                                       std::to_string(i % 8 + 1);
                                              }));
  auto s2 = InduceSchema(next.path());
  ASSERT_TRUE(s2.ok());
  const ExtensionResult ext = ExtendContract(base, DeriveContract(*s2));
  const SchemaContract& c = ext.contract;
  EXPECT_EQ(c.version, 2);
  ASSERT_EQ(c.extensions.size(), 1u);
  EXPECT_EQ(c.extensions[0].version, 2);
  EXPECT_EQ(c.extensions[0].added, ext.added);

  // Monotonic: every element of the base is still there, unchanged.
  for (const EntityType& t : base.entity_types) {
    auto it = std::find_if(c.entity_types.begin(), c.entity_types.end(),
                           [&](const EntityType& x) { return x.name == t.name; });
    ASSERT_NE(it, c.entity_types.end()) << t.name;
    EXPECT_EQ(it->source, t.source);
    EXPECT_EQ(it->identity_key, t.identity_key);
    EXPECT_TRUE(std::equal(t.attributes.begin(), t.attributes.end(), it->attributes.begin()));
  }
  for (size_t i = 0; i < base.structure.fields.size(); ++i) {
    EXPECT_EQ(c.structure.fields[i].id, base.structure.fields[i].id);
    EXPECT_EQ(c.structure.fields[i].distinct, base.structure.fields[i].distinct);
  }
  for (size_t i = 0; i < base.relationships.size(); ++i) {
    EXPECT_EQ(c.relationships[i].name, base.relationships[i].name);
  }
  // Additions: the new source and type, the new column, the new link.
  auto has = [&](const std::string& what) {
    return std::find(ext.added.begin(), ext.added.end(), what) != ext.added.end();
  };
  EXPECT_TRUE(has("source cities"));
  EXPECT_TRUE(has("entity type City"));
  EXPECT_TRUE(has("field countries.Population"));
  EXPECT_TRUE(has("attribute Country.Population"));
  EXPECT_TRUE(has("relationship (City)-[COUNTRY]->(Country)"));

  // The contract with its log survives the YAML round trip and validation.
  auto back = ParseContract(ToYaml(c), "schema.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->version, 2);
  EXPECT_EQ(back->extensions[0].added, ext.added);

  // Nothing new: same contract, same version.
  const ExtensionResult again = ExtendContract(c, DeriveContract(*s2));
  EXPECT_TRUE(again.added.empty());
  EXPECT_EQ(again.contract.version, 2);
  EXPECT_EQ(ToYaml(again.contract), ToYaml(c));

  // Query-scoped use: the base the caller holds is untouched.
  EXPECT_EQ(ToYaml(base), base_yaml);
}

// C.4 / §3.4: with τ set, new keys, foreign keys and relationships whose
// confidence is below it are left out of a persistent extension and listed,
// in the result and in the contract's extension log; at the default
// (Appendix C.4: persistent extension merges everything that survives the
// diff) nothing is left out.
TEST_F(ContractTest, PersistentExtensionLeavesOutAdditionsBelowTheConfidenceThreshold) {
  auto s = InduceSchema(dir_.path());
  ASSERT_TRUE(s.ok());
  const SchemaContract base = DeriveContract(*s);
  SchemaContract incoming = base;
  InducedSchema& in = incoming.structure;
  SourceInfo cities;
  cities.name = "cities";
  cities.path = "cities.csv";
  cities.format = "csv";
  cities.records = 12;
  in.sources.push_back(cities);
  for (const char* f : {"CityId", "Name", "CountryId"}) {
    FieldInfo fi;
    fi.source = "cities";
    fi.path = f;
    fi.type = "string";
    in.fields.push_back(fi);
  }
  in.identity_keys.push_back({"cities", {"CityId"}, 1.0, 0.65, true});
  ForeignKey fk;
  fk.from_source = "cities";
  fk.from_field = "CountryId";
  fk.to_source = "countries";
  fk.to_field = "CountryId";
  fk.confidence = 0.6;
  in.foreign_keys.push_back(fk);
  EntityType city;
  city.name = "City";
  city.source = "cities";
  city.identity_key = {"CityId"};
  city.attributes = {"CityId", "Name", "CountryId"};
  incoming.entity_types.push_back(city);
  incoming.relationships.push_back({"COUNTRY", "City", "Country", "CountryId", "CountryId", "N:1", 0.6, ""});
  incoming.relationships.push_back({"NEIGHBOUR_OF", "Country", "Country", "", "", "N:M", 0.9, ""});
  incoming.relationships.push_back({"CAPITAL_OF", "City", "Country", "", "", "1:1", 0.7, ""});

  ExtensionOptions tau;
  tau.min_confidence = 0.7;
  const ExtensionResult ext = ExtendContract(base, incoming, tau);
  EXPECT_EQ(ext.left_out,
            (std::vector<std::string>{
                "identity key cities(CityId): confidence 0.65 below 0.70",
                "foreign key cities.CountryId -> countries.CountryId: confidence 0.60 below 0.70",
                "relationship (City)-[COUNTRY]->(Country): confidence 0.60 below 0.70"}));
  auto has = [&](const std::vector<std::string>& v, const std::string& what) {
    return std::find(v.begin(), v.end(), what) != v.end();
  };
  EXPECT_TRUE(has(ext.added, "source cities"));
  EXPECT_TRUE(has(ext.added, "entity type City"));
  EXPECT_TRUE(has(ext.added, "relationship (Country)-[NEIGHBOUR_OF]->(Country)"));
  EXPECT_TRUE(has(ext.added, "relationship (City)-[CAPITAL_OF]->(Country)"));  // at τ: kept
  EXPECT_FALSE(has(ext.added, "relationship (City)-[COUNTRY]->(Country)"));
  const SchemaContract& c = ext.contract;
  EXPECT_EQ(c.structure.foreign_keys.size(), base.structure.foreign_keys.size());
  EXPECT_EQ(c.structure.identity_keys.size(), base.structure.identity_keys.size());
  for (const RelationshipType& r : c.relationships) EXPECT_NE(r.name, "COUNTRY") << r.from;
  const EntityType* added_city = nullptr;
  for (const EntityType& t : c.entity_types) {
    if (t.name == "City") added_city = &t;
  }
  ASSERT_NE(added_city, nullptr);
  EXPECT_TRUE(added_city->identity_key.empty());  // its key was left out
  // The log says what was left out, and survives YAML and the linter.
  EXPECT_EQ(c.version, base.version + 1);
  ASSERT_EQ(c.extensions.size(), 1u);
  EXPECT_EQ(c.extensions[0].added, ext.added);
  EXPECT_EQ(c.extensions[0].left_out, ext.left_out);
  const std::string yaml = ToYaml(c);
  EXPECT_NE(yaml.find("left_out:"), std::string::npos) << yaml;
  auto back = ParseContract(yaml, "schema.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << yaml;
  EXPECT_EQ(back->extensions[0].left_out, ext.left_out);
  EXPECT_EQ(ToYaml(*back), yaml);

  // The default (C.4): everything that survives the diff is merged.
  const ExtensionResult all = ExtendContract(base, incoming);
  EXPECT_TRUE(all.left_out.empty());
  EXPECT_TRUE(has(all.added, "relationship (City)-[COUNTRY]->(Country)"));
  EXPECT_TRUE(has(all.added, "foreign key cities.CountryId -> countries.CountryId"));
  EXPECT_EQ(ToYaml(all.contract).find("left_out:"), std::string::npos);
  // Nothing new above τ: the contract is unchanged, but the report still lists it.
  SchemaContract weak = base;
  weak.relationships.push_back({"RIVAL_OF", "Country", "Country", "", "", "N:M", 0.3, ""});
  const ExtensionResult none = ExtendContract(base, weak, tau);
  EXPECT_TRUE(none.added.empty());
  EXPECT_EQ(none.contract.version, base.version);
  EXPECT_EQ(none.left_out,
            std::vector<std::string>{"relationship (Country)-[RIVAL_OF]->(Country): confidence 0.30 below 0.70"});
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

// A.9: sources whose names give the same type are one type, attributes unioned.
TEST(UnificationTest, SameTypeAcrossSourcesIsOneTypeAndRoundTrips) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("2019/orders.csv"), "order_id,amount\n" + Rows(6, [](int i) {
                                                    return std::to_string(100 + i) + "," +
                                                           std::to_string(10 * i);
                                                  }));
  testing::WriteFile(dir.File("2020/orders.csv"), "order_id,amount,channel\n" + Rows(6, [](int i) {
                                                    return std::to_string(200 + i) + "," +
                                                           std::to_string(5 * i) + ",web";
                                                  }));
  auto s = InduceSchema(dir.path());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const SchemaContract c = DeriveContract(*s);
  ASSERT_EQ(c.entity_types.size(), 1u);
  const EntityType& t = c.entity_types[0];
  EXPECT_EQ(t.name, "Order");
  EXPECT_EQ(t.source, "2019/orders");
  EXPECT_EQ(t.merged_sources, std::vector<std::string>{"2020/orders"});
  EXPECT_TRUE(t.HasSource("2020/orders"));
  EXPECT_EQ(t.attributes, (std::vector<std::string>{"order_id", "amount", "channel"}));
  auto back = ParseContract(ToYaml(c), "schema.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->entity_types[0].merged_sources, t.merged_sources);
  EXPECT_EQ(ToYaml(*back), ToYaml(c));

  std::string yaml = ToYaml(c);
  yaml.replace(yaml.find("[2020/orders]"), 13, "[2021/orders]");
  auto bad = ParseContract(yaml, "schema.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("merged_sources: \"2021/orders\" is not a source"),
            std::string::npos)
      << bad.status().ToString();
}

// A.8.2: "queries_metadata" beside "queries" is joined on their shared field
// even though it is no identity key of either.
TEST(CompanionTest, CompanionSourcesLinkOnTheirSharedField) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("queries.csv"), "qid,text\n" + Rows(12, [](int i) {
                                                return "q" + std::to_string(i % 6) + ",text " +
                                                       std::to_string(i);
                                              }));
  testing::WriteFile(dir.File("queries_metadata.csv"), "qid,lang\n" + Rows(8, [](int i) {
                                                         return "q" + std::to_string(i % 4) +
                                                                (i % 2 ? ",en" : ",de");
                                                       }));
  auto s = InduceSchema(dir.path());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->foreign_keys.size(), 1u);
  const ForeignKey& fk = s->foreign_keys[0];
  EXPECT_TRUE(fk.companion);
  EXPECT_EQ(fk.from_source, "queries_metadata");
  EXPECT_EQ(fk.to_source, "queries");
  EXPECT_EQ(fk.from_field, "qid");
  EXPECT_DOUBLE_EQ(fk.containment, 1.0);
  EXPECT_EQ(fk.cardinality, "N:1");
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
