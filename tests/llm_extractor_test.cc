// Tests the LLM extractor: the papers' prompts, tolerant JSON repair, the
// LightRAG tuple parser, validation and rejection rules with scripted model
// answers, the dry-run estimate, and end to end through the real
// OpenAiChatClient against a cpp-httplib stub on loopback that answers with
// fixed and faulty responses (timeouts, non-JSON, invented entities, answers
// cut off by the token limit, HTTP 500, and replays from the response cache).
#include "extract/llm_extractor.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/text.h"
#include "extract/prompts.h"
#include "llm/chat_client.h"
#include "llm/http_client.h"
#include "llm/json_repair.h"
#include "stub_server.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using Json = nlohmann::json;

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// EXPECT that `haystack` contains `needle`, printing both otherwise.
#define EXPECT_HAS(haystack, needle)                                              \
  EXPECT_TRUE(Contains((haystack), (needle))) << "  text: " << (haystack) << "\n" \
                                              << "  lacks: " << (needle)

bool HasRepair(const std::vector<std::string>& repairs, std::string_view what) {
  for (const std::string& r : repairs) {
    if (r == what) return true;
  }
  return false;
}

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

const ExtractedEntity* FindEntity(const PassageExtraction& x, std::string_view name) {
  for (const ExtractedEntity& e : x.entities) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

bool HasTriple(const PassageExtraction& x, std::string_view s, std::string_view r,
               std::string_view o) {
  for (const ExtractedTriple& t : x.triples) {
    if (t.subject == s && t.relation == r && t.object == o) return true;
  }
  return false;
}

// ===================================================================
// Prompts
// ===================================================================

TEST(PromptsTest, SaRagNerHasCategoriesFieldsDemonstrationAndPassage) {
  ChatRequest r = BuildSaRagNerRequest("Ada Lovelace", "Ada Lovelace wrote the first program.");
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[1].role, "user");
  const std::string& sys = r.messages[0].content;
  for (const char* needle :
       {"PERSON", "ORGANIZATION", "GPE", "MISC", "aliases", "\"entity_information\"", "JSON array",
        "full official name", "Demonstration", "Nikola Tesla", "Tesla coil", "Forbidden outputs",
        "birthplace of Nikola Tesla"}) {
    EXPECT_TRUE(Contains(sys, needle)) << needle;
  }
  EXPECT_EQ(r.messages[1].content,
            "Real input\n\nAda Lovelace\nAda Lovelace wrote the first program.");
  EXPECT_FALSE(r.json_mode);  // the answer is a top-level array
  EXPECT_EQ(r.max_tokens, 2048);
  EXPECT_EQ(r.temperature, 0.0);
}

TEST(PromptsTest, SaRagReListsTheEntitiesAndAsksForTriples) {
  const std::vector<std::string> entities = {"Ada Lovelace", "Charles Babbage"};
  ChatRequest r = BuildSaRagReRequest("", "Ada Lovelace worked with Charles Babbage.", entities);
  ASSERT_EQ(r.messages.size(), 2u);
  const std::string& sys = r.messages[0].content;
  for (const char* needle :
       {"relationship extraction", "[\"entity1\", \"relationship\", \"entity2\"]",
        "Pronoun resolution", "\"triples\"", "Jack Parsons", "Reasoning", "Response",
        "co-founded"}) {
    EXPECT_TRUE(Contains(sys, needle)) << needle;
  }
  EXPECT_HAS(r.messages[1].content, "Ada Lovelace worked with Charles Babbage.");
  EXPECT_HAS(r.messages[1].content, "Entity list: Ada Lovelace, Charles Babbage");
  EXPECT_TRUE(r.json_mode);
  EXPECT_EQ(r.max_tokens, 2048);
}

TEST(PromptsTest, OpenIeNerUsesDemonstrationTurnsAnd512Tokens) {
  ChatRequest r = BuildOpenIeNerRequest("Ada", "Ada Lovelace wrote the first program.");
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_HAS(r.messages[0].content, "extract named entities");
  EXPECT_HAS(r.messages[0].content, "JSON");
  EXPECT_EQ(r.messages[1].role, "user");
  EXPECT_HAS(r.messages[1].content, "Radio City is India's first private FM");
  EXPECT_EQ(r.messages[2].role, "assistant");
  Json demo = Json::parse(r.messages[2].content);
  EXPECT_EQ(demo["named_entities"].size(), 7u);
  EXPECT_EQ(r.messages[3].role, "user");
  EXPECT_EQ(r.messages[3].content, "Ada\nAda Lovelace wrote the first program.");
  EXPECT_TRUE(r.json_mode);
  EXPECT_EQ(r.max_tokens, 512);
}

TEST(PromptsTest, OpenIeTriplesGetPassageAndNerJsonAnd2048Tokens) {
  const std::vector<std::string> ner = {"Ada Lovelace", "say \"hi\""};
  ChatRequest r = BuildOpenIeTripleRequest("", "Ada Lovelace wrote the first program.", ner);
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_HAS(r.messages[0].content, "RDF");
  EXPECT_HAS(r.messages[0].content, "Split enumerations");
  EXPECT_HAS(r.messages[1].content, "Convert the paragraph into a JSON dict");
  Json demo = Json::parse(r.messages[2].content);
  EXPECT_EQ(demo["triples"].size(), 12u);
  const std::string& user = r.messages[3].content;
  EXPECT_HAS(user, "Paragraph:\n```\nAda Lovelace wrote the first program.\n```");
  const size_t brace = user.rfind("{\"named_entities\"");
  ASSERT_NE(brace, std::string::npos);
  Json sent = Json::parse(user.substr(brace));
  EXPECT_EQ(sent["named_entities"], Json(ner));
  EXPECT_TRUE(r.json_mode);
  EXPECT_EQ(r.max_tokens, 2048);
}

TEST(PromptsTest, LightRagSubstitutesFormatAndItsExampleParses) {
  PromptOptions options;
  options.lightrag.entity_types = {"person", "place"};
  ChatRequest r = BuildLightRagRequest("T", "Ada Lovelace met Babbage in London.", options);
  ASSERT_EQ(r.messages.size(), 2u);
  const std::string& sys = r.messages[0].content;
  EXPECT_FALSE(Contains(sys, "{td}"));
  EXPECT_FALSE(Contains(sys, "{rd}"));
  EXPECT_FALSE(Contains(sys, "{cd}"));
  EXPECT_FALSE(Contains(sys, "{language}"));
  EXPECT_HAS(sys, "entity_type: one of the following types: [person, place]");
  EXPECT_HAS(sys, "(\"entity\"<|><entity_name><|><entity_type><|><entity_description>)");
  EXPECT_HAS(sys, "relationship_strength");
  EXPECT_HAS(sys, "content_keywords");
  EXPECT_HAS(sys, "Use **##** as the list delimiter");
  EXPECT_HAS(sys, "output <|COMPLETE|>");
  EXPECT_HAS(r.messages[1].content, "Entity_types: [person, place]");
  EXPECT_HAS(r.messages[1].content, "T\nAda Lovelace met Babbage in London.");
  EXPECT_FALSE(r.json_mode);
  EXPECT_EQ(r.max_tokens, 4096);

  // The demonstration the prompt shows is itself valid output.
  const size_t out = sys.find("Output:\n");
  ASSERT_NE(out, std::string::npos);
  Result<LightRagParse> demo =
      ParseLightRagOutput(sys.substr(out + 8), options.lightrag, /*truncated=*/false);
  ASSERT_TRUE(demo.ok()) << demo.status().ToString();
  EXPECT_EQ(demo->entities.size(), 6u);
  EXPECT_EQ(demo->relationships.size(), 5u);
  EXPECT_TRUE(demo->complete);
  EXPECT_TRUE(demo->rejections.empty()) << JoinLines(demo->rejections);
  EXPECT_TRUE(demo->repairs.empty()) << JoinLines(demo->repairs);
  EXPECT_EQ(demo->content_keywords.size(), 4u);
}

TEST(PromptsTest, PlansRenderingAndStyleNames) {
  EXPECT_EQ(PlanFor(ExtractionPromptStyle::kSaRag).calls_per_passage, 2);
  const StylePlan openie = PlanFor(ExtractionPromptStyle::kOpenIe);
  EXPECT_EQ(openie.calls_per_passage, 2);
  EXPECT_EQ(openie.first_max_tokens, 512);
  EXPECT_EQ(openie.second_max_tokens, 2048);
  const StylePlan light = PlanFor(ExtractionPromptStyle::kLightRag);
  EXPECT_EQ(light.calls_per_passage, 1);
  EXPECT_EQ(light.second_max_tokens, 0);
  PromptOptions options;
  options.first_max_tokens = 100;
  options.second_max_tokens = 200;
  EXPECT_EQ(PlanFor(ExtractionPromptStyle::kOpenIe, options).first_max_tokens, 100);
  EXPECT_EQ(PlanFor(ExtractionPromptStyle::kOpenIe, options).second_max_tokens, 200);
  EXPECT_EQ(PlanFor(ExtractionPromptStyle::kLightRag, options).second_max_tokens, 0);
  EXPECT_EQ(BuildOpenIeNerRequest("", "x", options).max_tokens, 100);

  EXPECT_EQ(RenderPassage("", " text "), "text");
  EXPECT_EQ(RenderPassage("Title", "Body."), "Title\nBody.");
  EXPECT_EQ(RenderPassage("Title", "Title\nBody."), "Title\nBody.");  // not repeated
  EXPECT_EQ(RenderPassage("Title", "Title is a word here."), "Title\nTitle is a word here.");

  for (ExtractionPromptStyle s : {ExtractionPromptStyle::kSaRag, ExtractionPromptStyle::kOpenIe,
                                  ExtractionPromptStyle::kLightRag}) {
    Result<ExtractionPromptStyle> back = ParseExtractionPromptStyle(ExtractionPromptStyleName(s));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, s);
  }
  Result<ExtractionPromptStyle> bad = ParseExtractionPromptStyle("graphrag");
  ASSERT_FALSE(bad.ok());
  EXPECT_HAS(bad.status().message(), "expected sa-rag, openie or lightrag");
}

TEST(PromptsTest, FormatRepairAppendsTheAnswerAndTheProblem) {
  ChatRequest original = BuildOpenIeNerRequest("", "Ada Lovelace.");
  ChatRequest r = BuildFormatRepairRequest(ExtractionPromptStyle::kOpenIe, original, "nope",
                                           "no JSON object or array in the answer");
  ASSERT_EQ(r.messages.size(), original.messages.size() + 2);
  EXPECT_EQ(r.messages[r.messages.size() - 2].role, "assistant");
  EXPECT_EQ(r.messages[r.messages.size() - 2].content, "nope");
  EXPECT_EQ(r.messages.back().role, "user");
  EXPECT_HAS(r.messages.back().content, "no JSON object or array in the answer");
  EXPECT_HAS(r.messages.back().content, "only the JSON");
  EXPECT_EQ(r.max_tokens, original.max_tokens);
  EXPECT_EQ(r.json_mode, original.json_mode);
  ChatRequest light = BuildFormatRepairRequest(ExtractionPromptStyle::kLightRag,
                                               BuildLightRagRequest("", "x"), "?", "no records");
  EXPECT_HAS(light.messages.back().content, "<|COMPLETE|>");
}

// ===================================================================
// JSON repair
// ===================================================================

struct RepairCase {
  const char* name;
  std::string input;
  bool truncated;                    // allow_truncated
  const char* expected;              // strict JSON of the expected value
  std::vector<std::string> repairs;  // each must be among the reported repairs
};

TEST(JsonRepairTest, RepairsRealLookingBrokenAnswers) {
  const std::vector<RepairCase> cases = {
      {"strict", R"({"a": [1, 2]})", false, R"({"a":[1,2]})", {}},
      {"fence",
       "```json\n{\"named_entities\": [\"Ada\"]}\n```",
       false,
       R"({"named_entities":["Ada"]})",
       {"stripped markdown fence"}},
      {"fence without language", "```\n[1]\n```", false, "[1]", {"stripped markdown fence"}},
      {"fence on one line",
       "```json {\"a\": 1}```",
       false,
       R"({"a":1})",
       {"stripped markdown fence"}},
      {"prose around",
       "Sure! Here is the JSON:\n{\"triples\": []}\nLet me know.",
       false,
       R"({"triples":[]})",
       {"ignored text around the JSON"}},
      {"prose with brackets first",
       "Entities [as requested] below: [\"Ada\", \"Bob\"]",
       false,
       R"(["Ada","Bob"])",
       {"ignored text around the JSON"}},
      {"reasoning then fenced response",
       "Reasoning\n1. The list {Ada, Bob} ...\nResponse\n```json\n{\"triples\": [[\"Ada\", "
       "\"knows\", \"Bob\"]]}\n```",
       false,
       R"({"triples":[["Ada","knows","Bob"]]})",
       {"stripped markdown fence"}},
      {"trailing commas",
       R"({"a": [1, 2, ], "b": 3, })",
       false,
       R"({"a":[1,2],"b":3})",
       {"removed trailing comma"}},
      {"doubled comma", R"([1,, 2])", false, "[1,2]", {"removed extra comma"}},
      {"missing comma between objects",
       R"([{"a": 1} {"a": 2}])",
       false,
       R"([{"a":1},{"a":2}])",
       {"inserted missing comma"}},
      {"missing comma between lines",
       "{\"a\": \"x\"\n \"b\": \"y\"}",
       false,
       R"({"a":"x","b":"y"})",
       {"inserted missing comma"}},
      {"single quotes",
       R"({'name': 'Ada', 'aliases': ['Countess']})",
       false,
       R"({"aliases":["Countess"],"name":"Ada"})",
       {"converted single-quoted strings"}},
      {"apostrophe inside single quotes",
       R"(['Tesla's coil', 'Edison's lab'])",
       false,
       R"(["Tesla's coil","Edison's lab"])",
       {"converted single-quoted strings"}},
      {"double quote inside single quotes", R"(['say "hi"'])", false, R"(["say \"hi\""])", {}},
      {"bare keys",
       R"({name: "Ada", entity_information: "x"})",
       false,
       R"({"entity_information":"x","name":"Ada"})",
       {"quoted bare keys"}},
      {"python literals",
       R"({"a": True, "b": None, "c": False})",
       false,
       R"({"a":true,"b":null,"c":false})",
       {"converted Python literals"}},
      {"comments",
       "{\n  // the entities\n  \"a\": 1 /* one */\n}",
       false,
       R"({"a":1})",
       {"removed comments"}},
      {"inner quotes",
       R"({"d": "known as "the Wizard" of Menlo Park"})",
       false,
       R"({"d":"known as \"the Wizard\" of Menlo Park"})",
       {"escaped inner double quotes"}},
      {"raw newline in string",
       "{\"d\": \"line one\nline two\"}",
       false,
       R"({"d":"line one\nline two"})",
       {"escaped control characters in strings"}},
      {"invalid escape",
       R"({"d": "it\'s \x"})",
       false,
       R"({"d":"it's \\x"})",
       {"unescaped \\'", "kept invalid escapes literally"}},
      {"unicode escapes kept",
       R"({"d": "caf\u00e9 \ud83d\ude00"})",
       false,
       "{\"d\":\"caf\xC3\xA9 \xF0\x9F\x98\x80\"}",
       {}},
      {"lone surrogate",
       R"({"d": "x\ud800y"})",
       false,
       "{\"d\":\"x\xEF\xBF\xBDy\"}",
       {"replaced unpaired surrogate escapes"}},
      {"invalid utf8",
       "{\"d\": \"a\xFF\xFE b\"}",
       false,
       "{\"d\":\"a\xEF\xBF\xBD\xEF\xBF\xBD b\"}",
       {"replaced invalid UTF-8"}},
      {"curly quotes",
       "{\xE2\x80\x9Cname\xE2\x80\x9D: \xE2\x80\x9C"
       "Ada\xE2\x80\x9D}",
       false,
       R"({"name":"Ada"})",
       {"converted curly-quoted strings"}},
      {"nbsp whitespace",
       "{\"a\":\xC2\xA0"
       "1}",
       false,
       R"({"a":1})",
       {}},
      {"numbers", R"([0, -1.5, 2e3, 1E-2])", false, "[0,-1.5,2000.0,0.01]", {}},
      {"second value ignored",
       R"({"a": 1} {"b": 2})",
       false,
       R"({"a":1})",
       {"ignored text around the JSON"}},
      // Truncation (finish_reason "length").
      {"cut inside a string element",
       R"({"named_entities": ["Radio City", "Ind)",
       true,
       R"({"named_entities":["Radio City"]})",
       {"dropped incomplete last element", "closed truncated JSON"}},
      {"cut inside a triple",
       R"({"triples": [["a", "r", "b"], ["c", "r")",
       true,
       R"({"triples":[["a","r","b"]]})",
       {"dropped incomplete last element"}},
      {"cut inside an entity object",
       R"([{"name": "Ada", "type": "PERSON"}, {"name": "Bob", "entity_information": "Born in)",
       true,
       R"([{"name":"Ada","type":"PERSON"}])",
       {"dropped incomplete last element"}},
      {"cut after a complete element",
       R"({"triples": [["a", "r", "b"],)",
       true,
       R"({"triples":[["a","r","b"]]})",
       {"closed truncated JSON"}},
      {"cut inside a key",
       R"({"triples": [["a", "r", "b"]], "na)",
       true,
       R"({"triples":[["a","r","b"]]})",
       {"dropped incomplete last member"}},
      {"cut after a colon",
       R"({"a": 1, "b": )",
       true,
       R"({"a":1})",
       {"dropped incomplete last member"}},
      {"cut in a number", R"([1, 2, 3)", true, "[1,2]", {"dropped incomplete last element"}},
      {"cut in a literal", R"([true, fal)", true, "[true]", {"dropped incomplete last element"}},
      {"cut in an escape", R"(["ab", "c\u00)", true, R"(["ab"])", {}},
      {"cut in a surrogate pair", R"(["ab", "c\ud83d)", true, R"(["ab"])", {}},
      {"cut in a utf8 character", "[\"ab\", \"caf\xC3", true, R"(["ab"])", {}},
      {"cut inside a fence",
       "```json\n{\"triples\": [[\"a\", \"r\", \"b\"], [\"c\"",
       true,
       R"({"triples":[["a","r","b"]]})",
       {"stripped markdown fence", "closed truncated JSON"}},
      {"cut right after opening",
       "{\"triples\": [",
       true,
       R"({"triples":[]})",
       {"closed truncated JSON"}},
      {"cut with trailing comment", "[1, 2, // more", true, "[1,2]", {}},
  };
  for (const RepairCase& c : cases) {
    SCOPED_TRACE(c.name);
    JsonRepairOptions options;
    options.allow_truncated = c.truncated;
    Result<RepairedJson> r = ParseLlmJson(c.input, options);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->value, Json::parse(c.expected)) << r->value.dump();
    for (const std::string& want : c.repairs) {
      EXPECT_TRUE(HasRepair(r->repairs, want)) << want << " not in\n" << JoinLines(r->repairs);
    }
    if (std::string(c.name) == "strict") {
      EXPECT_TRUE(r->repairs.empty());
    }
    EXPECT_EQ(r->truncated, HasRepair(r->repairs, "closed truncated JSON"));
  }
}

TEST(JsonRepairTest, ReportsWhatCouldNotBeParsed) {
  struct ErrorCase {
    std::string input;
    bool truncated;
    std::string message_part;
  };
  const std::vector<ErrorCase> cases = {
      {"I'm sorry, but I can't help with that.", false, "no JSON object or array in the answer"},
      {"", false, "no JSON object or array"},
      {"The entities are [Ada Lovelace, Charles Babbage].", false, "unexpected word 'Ada'"},
      {R"({"triples": [["a", "r", "b"]] ]})", false, "expected ',' or '}' after an object member"},
      {R"({"triples": [["a", "r", "b"]] garbage})", false, "expected ':' after an object key"},
      {R"({"a": [1, 2}})", false, "expected ',' or ']' after an array element"},
      {R"({"a" 1})", false, "expected ':' after an object key"},
      {R"({"a": .5})", false, "expected a value"},
      {R"({"a": 1.2.3})", false, "malformed number '1.2.3'"},
      // Grammatical but not a double (issue 21, found by llm_json_fuzz): was Internal.
      {R"({"c": 1e400, "d": 1})", false, "number '1e400' is out of range"},
      {R"([-1e999])", true, "number '-1e999' is out of range"},
      {R"({"a": [1, 2)", false, "the JSON ends before it is complete"},
      {"```json\n{\"a\": [\"x\", \"y\"", false, "ends before it is complete"},
      {"Sure, here it is: ```json\n", true, "no JSON object or array"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.input);
    JsonRepairOptions options;
    options.allow_truncated = c.truncated;
    Result<RepairedJson> r = ParseLlmJson(c.input, options);
    ASSERT_FALSE(r.ok()) << r->value.dump();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_HAS(r.status().message(), c.message_part);
  }
  // Errors quote where the text stopped making sense.
  Result<RepairedJson> r = ParseLlmJson(R"({"triples": [["a", "r", "b"]] ] and more})");
  ASSERT_FALSE(r.ok());
  EXPECT_HAS(r.status().message(), "at byte 30");
  EXPECT_HAS(r.status().message(), R"(near "{"triples": [["a", "r", "b"]] ] and more}")");
}

TEST(JsonRepairTest, DepthIsBounded) {
  std::string deep(200, '[');
  deep += std::string(200, ']');
  JsonRepairOptions options;
  options.max_depth = 64;
  Result<RepairedJson> r = ParseLlmJson("x" + deep, options);  // not strict: takes the slow path
  ASSERT_FALSE(r.ok());
  EXPECT_HAS(r.status().message(), "nested deeper than 64 levels");
}

TEST(JsonRepairTest, ExcerptIsShortSingleLineAndUtf8Safe) {
  const std::string text = std::string(50, 'a') + "\n\xC3\xA9\xC3\xA9" + std::string(50, 'b');
  const std::string e = ExcerptAround(text, 52, 10);
  EXPECT_EQ(e.find('\n'), std::string::npos);
  EXPECT_TRUE(IsValidUtf8(e));
  EXPECT_EQ(e.front(), '"');
  EXPECT_HAS(e, "...");
  EXPECT_LT(e.size(), 30u);
}

// Collects every string in a JSON value.
void CollectStrings(const Json& v, std::multiset<std::string>* out) {
  if (v.is_string()) out->insert(v.get<std::string>());
  if (v.is_array() || v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (v.is_object()) out->insert(it.key());
      CollectStrings(it.value(), out);
    }
  }
}

// Property: cutting a valid answer anywhere and repairing it with
// allow_truncated never invents content: every string of the repaired value
// is a whole string of the original, and the full answer round-trips.
TEST(JsonRepairTest, TruncatedPrefixesNeverInventContent) {
  const std::vector<std::string> answers = {
      R"({"named_entities": ["Radio City", "India", "3 July 2001", "Hindi", "PlanetRadiocity.com"]})",
      R"({"triples": [["Radio City", "located in", "India"], ["Radio City", "started on", "3 July 2001"], ["PlanetRadiocity.com", "offers", "news"]]})",
      R"([{"name": "Nikola Tesla", "type": "PERSON", "aliases": ["Tesla"], "entity_information": "Inventor, born 1856 in Smiljan."}, {"name": "United States", "type": "GPE", "aliases": ["U.S."], "entity_information": "Country."}])",
      "```json\n{\"triples\": [[\"caf\\u00e9\", \"is in\", \"Paris\"], [\"a\", \"b\", "
      "\"c\"]]}\n```",
  };
  for (const std::string& answer : answers) {
    const Json full = ParseLlmJson(answer).value().value;
    std::multiset<std::string> allowed;
    CollectStrings(full, &allowed);
    for (size_t cut = 0; cut <= answer.size(); ++cut) {
      SCOPED_TRACE(answer.substr(0, cut));
      JsonRepairOptions options;
      options.allow_truncated = true;
      Result<RepairedJson> r = ParseLlmJson(answer.substr(0, cut), options);
      if (!r.ok()) continue;  // nothing salvageable yet
      std::multiset<std::string> got;
      CollectStrings(r->value, &got);
      for (const std::string& s : got) EXPECT_TRUE(allowed.count(s)) << "invented: " << s;
      if (cut == answer.size()) {
        EXPECT_EQ(r->value, full);
      }
    }
  }
}

// Property: random damage never crashes and every success is valid JSON
// whose strings are valid UTF-8 (it can be dumped).
TEST(JsonRepairTest, RandomDamageNeverCrashes) {
  const std::string seed_answer =
      R"({"triples": [["Jack Parsons", "born in", "Los Angeles"], ['Jack', "died in", "Pasadena"],], name: True, "d": "x\u00e9\"y"})";
  const std::string alphabet = "{}[]\",:'\\ \nabc0-.eTu/*`\xC3\xA9\xFF";
  std::mt19937 rng(12345);
  int parsed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = seed_answer;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0:
          s.erase(at, 1 + rng() % 3);
          break;
        case 1:
          s.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
        default:
          s.resize(at);
      }
    }
    for (bool truncated : {false, true}) {
      JsonRepairOptions options;
      options.allow_truncated = truncated;
      Result<RepairedJson> r = ParseLlmJson(s, options);
      if (!r.ok()) {
        EXPECT_NE(r.status().code(), StatusCode::kInternal) << r.status().ToString();
        EXPECT_TRUE(IsValidUtf8(r.status().message()));
        continue;
      }
      ++parsed;
      EXPECT_TRUE(r->value.is_object() || r->value.is_array());
      EXPECT_NO_THROW((void)r->value.dump());
    }
  }
  EXPECT_GT(parsed, 1000);
}

// ===================================================================
// LightRAG tuples
// ===================================================================

TEST(LightRagParseTest, ReadsWellFormedRecords) {
  const std::string answer =
      "(\"entity\"<|>\"Ada Lovelace\"<|>\"person\"<|>\"Mathematician who wrote the first "
      "program (for the Analytical Engine).\")##\n"
      "(\"entity\"<|>\"Charles Babbage\"<|>\"person\"<|>\"Inventor.\")##\n"
      "(\"relationship\"<|>\"Ada Lovelace\"<|>\"Charles Babbage\"<|>\"Ada worked with "
      "Babbage.\"<|>\"collaboration\"<|>8)##\n"
      "(\"content_keywords\"<|>\"computing, mathematics\")<|COMPLETE|>";
  Result<LightRagParse> r = ParseLightRagOutput(answer, LightRagFormat{}, false);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->entities.size(), 2u);
  EXPECT_EQ(r->entities[0].name, "Ada Lovelace");
  EXPECT_EQ(r->entities[0].type, "person");
  EXPECT_EQ(r->entities[0].description,
            "Mathematician who wrote the first program (for the Analytical Engine).");
  ASSERT_EQ(r->relationships.size(), 1u);
  EXPECT_EQ(r->relationships[0].source, "Ada Lovelace");
  EXPECT_EQ(r->relationships[0].target, "Charles Babbage");
  EXPECT_EQ(r->relationships[0].description, "Ada worked with Babbage.");
  EXPECT_EQ(r->relationships[0].keywords, "collaboration");
  EXPECT_EQ(r->relationships[0].strength, 8.0);
  EXPECT_EQ(r->content_keywords, (std::vector<std::string>{"computing", "mathematics"}));
  EXPECT_TRUE(r->complete);
  EXPECT_TRUE(r->rejections.empty());
  EXPECT_TRUE(r->repairs.empty()) << JoinLines(r->repairs);
}

TEST(LightRagParseTest, ToleratesCommonDeviations) {
  // No parentheses, no record delimiters (one record per line), unquoted and
  // curly-quoted fields, upper-case keyword, <angle brackets>, prose around,
  // a non-numeric strength, a five-field relationship.
  const std::string answer =
      "Here are the records:\n"
      "entity<|>Ada Lovelace<|>person<|>Mathematician.\n"
      "(\"ENTITY\"<|>\xE2\x80\x9C"
      "Charles Babbage\xE2\x80\x9D<|><person><|>Inventor.)\n"
      "(\"relationship\"<|>Ada Lovelace<|>Charles Babbage<|>Worked together.<|>work<|>high)\n"
      "(\"relationship\"<|>Charles Babbage<|>Ada Lovelace<|>Corresponded.<|>letters)\n"
      "<|COMPLETE|> Hope this helps!";
  Result<LightRagParse> r = ParseLightRagOutput(answer, LightRagFormat{}, false);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->entities.size(), 2u);
  EXPECT_EQ(r->entities[0].name, "Ada Lovelace");
  EXPECT_EQ(r->entities[1].name, "Charles Babbage");
  EXPECT_EQ(r->entities[1].type, "person");
  ASSERT_EQ(r->relationships.size(), 2u);
  EXPECT_EQ(r->relationships[0].strength, 1.0);
  EXPECT_EQ(r->relationships[1].keywords, "letters");
  EXPECT_TRUE(HasRepair(r->repairs, "ignored text before the first record"));
  EXPECT_TRUE(HasRepair(r->repairs, "ignored text after the completion delimiter"));
  EXPECT_TRUE(HasRepair(r->repairs, "accepted records without a closing parenthesis"));
  EXPECT_TRUE(HasRepair(r->repairs, "non-numeric relationship strength read as 1"));
}

TEST(LightRagParseTest, RejectsShortRecordsWithReasons) {
  const std::string answer =
      "(\"entity\"<|>\"Ada\"<|>\"person\")##\n"
      "(\"entity\"<|>\"\"<|>\"person\"<|>\"nameless\")##\n"
      "(\"relationship\"<|>\"Ada\"<|>\"Bob\"<|>\"knows\")##\n"
      "(\"entity\"<|>\"Bob\"<|>\"person\"<|>\"A person.\")<|COMPLETE|>";
  Result<LightRagParse> r = ParseLightRagOutput(answer, LightRagFormat{}, false);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->entities.size(), 1u);
  EXPECT_EQ(r->entities[0].name, "Bob");
  ASSERT_EQ(r->rejections.size(), 3u);
  EXPECT_HAS(r->rejections[0], "entity record has 3 fields, expected 4");
  EXPECT_HAS(r->rejections[1], "empty name");
  EXPECT_HAS(r->rejections[2], "relationship record has 4 fields, expected 6");
}

TEST(LightRagParseTest, TruncatedOutputDropsTheCutRecord) {
  const std::string answer =
      "(\"entity\"<|>\"Ada\"<|>\"person\"<|>\"A mathematician.\")##\n"
      "(\"entity\"<|>\"Bob\"<|>\"person\"<|>\"An inven";
  Result<LightRagParse> cut = ParseLightRagOutput(answer, LightRagFormat{}, /*truncated=*/true);
  ASSERT_TRUE(cut.ok());
  ASSERT_EQ(cut->entities.size(), 1u);
  EXPECT_EQ(cut->entities[0].name, "Ada");
  ASSERT_EQ(cut->rejections.size(), 1u);
  EXPECT_HAS(cut->rejections[0], "cut off by the token limit");
  EXPECT_FALSE(cut->complete);
  // A record ending with the delimiter is complete even when the answer is cut.
  Result<LightRagParse> whole = ParseLightRagOutput(
      "(\"entity\"<|>\"Ada\"<|>\"person\"<|>\"A mathematician.\")##", LightRagFormat{}, true);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->entities.size(), 1u);
}

TEST(LightRagParseTest, CustomDelimitersProseAndEmptyAnswers) {
  LightRagFormat f;
  f.tuple_delimiter = "|";
  f.record_delimiter = ";;";
  f.completion_delimiter = "DONE";
  Result<LightRagParse> r = ParseLightRagOutput(
      "(entity|Ada|person|A mathematician.);;(entity|Bob|person|Inventor.)DONE", f, false);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->entities.size(), 2u);

  Result<LightRagParse> prose = ParseLightRagOutput("I could not find any entity.", {}, false);
  ASSERT_FALSE(prose.ok());
  EXPECT_HAS(prose.status().message(), "no LightRAG records");
  Result<LightRagParse> empty = ParseLightRagOutput("  <|COMPLETE|>", {}, false);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->entities.empty());
  EXPECT_TRUE(empty->complete);
  // "entity" inside a description does not start a record.
  Result<LightRagParse> inner = ParseLightRagOutput(
      "(\"entity\"<|>\"Ada\"<|>\"person\"<|>\"An entity<|>like no other\")<|COMPLETE|>", {}, false);
  ASSERT_TRUE(inner.ok());
  ASSERT_EQ(inner->entities.size(), 1u);
}

// ===================================================================
// Extractor with scripted answers (no HTTP)
// ===================================================================

ChatResponse Answer(std::string content, std::string finish = "stop") {
  ChatResponse r;
  r.content = std::move(content);
  r.finish_reason = std::move(finish);
  r.prompt_tokens = 100;
  r.completion_tokens = 20;
  return r;
}

bool IsFollowUp(const ChatRequest& r) {
  return Contains(r.messages.back().content, "Your previous answer could not be used");
}

// The passage message of a request (the last user turn that is not a follow-up).
std::string PassageOf(const ChatRequest& r) {
  for (auto it = r.messages.rbegin(); it != r.messages.rend(); ++it) {
    if (it->role == "user" && !Contains(it->content, "Your previous answer could not be used")) {
      return it->content;
    }
  }
  return "";
}

// Call 2 of SA-RAG or OpenIE.
bool IsSecondCall(const ChatRequest& r) {
  return Contains(r.messages[0].content, "relationship extraction") ||
         Contains(r.messages[0].content, "RDF");
}

// A ChatModel answering from a function of the request; records requests and
// the size of every CompleteBatch().
class ScriptedModel : public ChatModel {
 public:
  using Script = std::function<Result<ChatResponse>(const ChatRequest&)>;
  explicit ScriptedModel(Script script) : script_(std::move(script)) {}

  std::string Model() const override { return "scripted"; }
  Result<ChatResponse> Complete(const ChatRequest& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(request);
    return script_(request);
  }
  std::vector<Result<ChatResponse>> CompleteBatch(std::span<const ChatRequest> requests) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      batches_.push_back(requests.size());
    }
    std::vector<Result<ChatResponse>> out;
    for (const ChatRequest& r : requests) out.push_back(Complete(r));
    return out;
  }
  ChatUsage usage() const override { return {}; }

  std::vector<ChatRequest> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  std::vector<size_t> batches() {
    std::lock_guard<std::mutex> lock(mu_);
    return batches_;
  }

 private:
  Script script_;
  std::mutex mu_;
  std::vector<ChatRequest> requests_;
  std::vector<size_t> batches_;
};

const char kTeslaText[] =
    "Nikola Tesla (Tesla) worked for Thomas Edison in New York. Tesla later sold patents to "
    "George Westinghouse. The U.S. granted Tesla many patents.";

const char kTeslaNer[] = R"([
  {"name": "Nikola Tesla", "type": "person", "aliases": ["Tesla"], "entity_information": "Inventor."},
  {"name": "Tesla", "type": "PERSON", "aliases": [], "entity_information": "Sold patents to Westinghouse."},
  {"name": "Thomas Edison", "type": "PERSON", "aliases": "Edison", "entity_information": "Employer of Tesla."},
  {"name": "New York", "type": "GPE", "aliases": [], "entity_information": "City."},
  {"name": "George Westinghouse", "type": "PERSON", "aliases": [], "entity_information": ["Industrialist", "who bought patents."]},
  {"name": "United States", "type": "GPE", "aliases": ["U.S."], "entity_information": "Country."},
  {"name": "  ", "type": "MISC"},
  {"type": "MISC", "aliases": []},
  42,
  {"name": "Edison", "type": "PERSON", "aliases": ["Thomas Alva Edison"], "entity_information": "Inventor."}
])";

const char kTeslaRe[] = R"({"triples": [
  ["Nikola Tesla", "worked for", "Thomas Edison"],
  ["Tesla", "sold patents to", "George Westinghouse"],
  ["tesla", "sold patents to", "george westinghouse"],
  ["Nikola Tesla", "was friends with", "Mark Twain"],
  ["Thomas Edison", "worked in"],
  ["Nikola Tesla", "", "New York"],
  ["Tesla", "is", "Nikola Tesla"],
  ["U.S.", "granted patents to", "Tesla"],
  {"subject": "Thomas Edison", "relation": "lived in", "object": "New York"},
  "not a triple"
]})";

LlmExtractorOptions SaRagOptions() {
  LlmExtractorOptions options;
  options.style = ExtractionPromptStyle::kSaRag;
  return options;
}

TEST(LlmExtractorTest, SaRagMergesAliasesKeepsDescriptionsAndRejectsBadTriples) {
  ScriptedModel model([](const ChatRequest& r) -> Result<ChatResponse> {
    return Answer(IsSecondCall(r) ? kTeslaRe : kTeslaNer);
  });
  std::vector<std::string> log;
  LlmExtractorOptions options = SaRagOptions();
  options.log = [&](std::string_view line) { log.emplace_back(line); };
  auto extractor = LlmExtractor::Create(&model, options);
  ASSERT_TRUE(extractor.ok()) << extractor.status().ToString();
  const std::vector<ExtractionInput> inputs = {{7, "", kTeslaText}};
  auto outcomes = (*extractor)->Extract(inputs);
  ASSERT_TRUE(outcomes.ok());
  ASSERT_EQ(outcomes->size(), 1u);
  const PassageOutcome& o = (*outcomes)[0];
  ASSERT_TRUE(o.status.ok()) << o.status.ToString();
  EXPECT_EQ(o.passage_id, 7);
  EXPECT_EQ(o.extraction.passage_id, 7);
  EXPECT_FALSE(o.truncated);
  EXPECT_EQ(o.calls, 2);
  EXPECT_EQ(o.prompt_tokens, 200);
  EXPECT_EQ(o.completion_tokens, 40);

  const PassageExtraction& x = o.extraction;
  ASSERT_EQ(x.entities.size(), 5u) << JoinLines(o.rejections);
  const ExtractedEntity* tesla = FindEntity(x, "Nikola Tesla");
  ASSERT_NE(tesla, nullptr);
  EXPECT_EQ(tesla->type, "PERSON");  // upper-cased
  EXPECT_EQ(tesla->aliases, std::vector<std::string>{"Tesla"});
  EXPECT_EQ(tesla->description, "Inventor. Sold patents to Westinghouse.");
  EXPECT_EQ(tesla->count, 4);  // "Nikola Tesla" once, "Tesla" three more times
  EXPECT_TRUE(tesla->defining);
  const ExtractedEntity* edison = FindEntity(x, "Thomas Edison");
  ASSERT_NE(edison, nullptr);
  EXPECT_EQ(edison->aliases, (std::vector<std::string>{"Edison", "Thomas Alva Edison"}));
  EXPECT_EQ(edison->description, "Employer of Tesla. Inventor.");
  const ExtractedEntity* westinghouse = FindEntity(x, "George Westinghouse");
  ASSERT_NE(westinghouse, nullptr);
  EXPECT_EQ(westinghouse->description, "Industrialist who bought patents.");
  const ExtractedEntity* us = FindEntity(x, "United States");
  ASSERT_NE(us, nullptr);
  EXPECT_EQ(us->count, 1);  // "U.S." via its alias
  EXPECT_EQ(FindEntity(x, "Tesla"), nullptr);

  // The RE call got the merged primary names.
  const std::vector<ChatRequest> requests = model.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_HAS(requests[1].messages[1].content,
             "Entity list: Nikola Tesla, Thomas Edison, New York, George Westinghouse, "
             "United States");

  EXPECT_EQ(x.triples.size(), 4u);
  EXPECT_TRUE(HasTriple(x, "Nikola Tesla", "worked for", "Thomas Edison"));
  EXPECT_TRUE(HasTriple(x, "Nikola Tesla", "sold patents to", "George Westinghouse"));
  EXPECT_TRUE(HasTriple(x, "United States", "granted patents to", "Nikola Tesla"));
  EXPECT_TRUE(HasTriple(x, "Thomas Edison", "lived in", "New York"));

  const std::string rejections = JoinLines(o.rejections);
  EXPECT_HAS(rejections, "entity with an empty name");
  EXPECT_HAS(rejections, "entity #8 has no string \"name\"");
  EXPECT_HAS(
      rejections,
      "triple [Nikola Tesla | was friends with | Mark Twain]: object \"Mark Twain\" is not an "
      "extracted entity");
  EXPECT_HAS(rejections, "triple with 2 parts, expected [subject, relation, object]");
  EXPECT_HAS(rejections, "triple with an empty relation");
  EXPECT_HAS(rejections, "subject and object are the same entity");
  EXPECT_HAS(rejections, "triple #10 is a string");
  EXPECT_HAS(rejections, "entity #9 is a number, expected an object with \"name\" or a string");
  EXPECT_EQ(o.rejections.size(), 8u) << rejections;
  // Every rejection was logged with the passage id.
  EXPECT_EQ(log.size(), o.rejections.size());
  for (const std::string& line : log) EXPECT_EQ(line.rfind("passage 7: rejected: ", 0), 0u);
}

TEST(LlmExtractorTest, MissingTripleEntitiesCanBeAddedAndInventedEntitiesRejected) {
  ScriptedModel model([](const ChatRequest& r) -> Result<ChatResponse> {
    if (IsSecondCall(r)) {
      return Answer(R"({"triples": [["Radio City", "is", "private FM radio station"]]})");
    }
    return Answer(R"({"named_entities": ["Radio City", "India", "Atlantis"]})");
  });
  LlmExtractorOptions options;
  options.style = ExtractionPromptStyle::kOpenIe;
  options.add_missing_triple_entities = true;
  options.require_entities_in_text = true;
  auto extractor = LlmExtractor::Create(&model, options).value();
  const std::vector<ExtractionInput> inputs = {
      {1, "Radio City", "Radio City is India's first private FM radio station."}};
  auto outcomes = extractor->Extract(inputs).value();
  const PassageOutcome& o = outcomes[0];
  ASSERT_TRUE(o.status.ok());
  EXPECT_TRUE(HasTriple(o.extraction, "Radio City", "is", "private FM radio station"));
  const ExtractedEntity* phrase = FindEntity(o.extraction, "private FM radio station");
  ASSERT_NE(phrase, nullptr);
  EXPECT_EQ(phrase->type, "");
  EXPECT_EQ(FindEntity(o.extraction, "Atlantis"), nullptr);
  ASSERT_EQ(o.rejections.size(), 1u);
  EXPECT_HAS(o.rejections[0], "entity \"Atlantis\" does not occur in the passage");
  // The triple prompt carries the NER answer as JSON (HippoRAG's format).
  EXPECT_HAS(model.requests()[1].messages[3].content,
             R"({"named_entities": ["Radio City", "India"]})");
}

TEST(LlmExtractorTest, BatchesAllNerCallsThenAllSecondCalls) {
  ScriptedModel model([](const ChatRequest& r) -> Result<ChatResponse> {
    if (IsSecondCall(r)) return Answer(R"({"triples": [["Ada", "knows", "Bob"]]})");
    if (Contains(PassageOf(r), "nobody")) return Answer(R"({"named_entities": []})");
    return Answer(R"({"named_entities": ["Ada", "Bob"]})");
  });
  LlmExtractorOptions options;
  options.style = ExtractionPromptStyle::kOpenIe;
  options.batch_size = 3;
  auto extractor = LlmExtractor::Create(&model, options).value();
  std::vector<ExtractionInput> inputs;
  for (int i = 0; i < 5; ++i)
    inputs.push_back({100 + i, "", "Ada knows Bob, " + std::to_string(i)});
  inputs.push_back({200, "", "nobody here"});
  auto outcomes = extractor->Extract(inputs).value();
  ASSERT_EQ(outcomes.size(), 6u);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    EXPECT_EQ(outcomes[i].passage_id, inputs[i].passage_id);
    EXPECT_TRUE(outcomes[i].status.ok());
  }
  EXPECT_EQ(outcomes[0].extraction.triples.size(), 1u);
  EXPECT_TRUE(outcomes[5].extraction.entities.empty());
  EXPECT_EQ(outcomes[5].calls, 1);  // nothing found: no triple call
  // Batch 1: 3 NER, then 3 triple calls; batch 2: 3 NER, then 2 triple calls.
  EXPECT_EQ(model.batches(), (std::vector<size_t>{3, 3, 3, 2}));
  const std::vector<ChatRequest> requests = model.requests();
  for (size_t i = 0; i < 3; ++i) EXPECT_FALSE(IsSecondCall(requests[i]));
  for (size_t i = 3; i < 6; ++i) EXPECT_TRUE(IsSecondCall(requests[i]));
}

TEST(LlmExtractorTest, LightRagIsOneCallAndRelationDescriptionsBecomeRelations) {
  ScriptedModel model([](const ChatRequest&) -> Result<ChatResponse> {
    return Answer(
        "(\"entity\"<|>\"ADA LOVELACE\"<|>\"person\"<|>\"A mathematician.\")##\n"
        "(\"entity\"<|>\"Charles Babbage\"<|>\"person\"<|>\"An inventor.\")##\n"
        "(\"entity\"<|>\"Ada Lovelace\"<|>\"person\"<|>\"Wrote notes.\")##\n"
        "(\"relationship\"<|>\"Ada Lovelace\"<|>\"Charles Babbage\"<|>\"Ada translated "
        "Babbage's work.\"<|>\"translation\"<|>7)##\n"
        "(\"relationship\"<|>\"Ada Lovelace\"<|>\"Lord "
        "Byron\"<|>\"Daughter.\"<|>\"family\"<|>9)##\n"
        "(\"content_keywords\"<|>\"computing\")<|COMPLETE|>");
  });
  LlmExtractorOptions options;
  options.style = ExtractionPromptStyle::kLightRag;
  auto extractor = LlmExtractor::Create(&model, options).value();
  const std::vector<ExtractionInput> inputs = {
      {3, "", "Ada Lovelace translated the work of Charles Babbage."}};
  auto outcomes = extractor->Extract(inputs).value();
  const PassageOutcome& o = outcomes[0];
  ASSERT_TRUE(o.status.ok()) << o.status.ToString();
  EXPECT_EQ(o.calls, 1);
  EXPECT_EQ(model.requests().size(), 1u);
  ASSERT_EQ(o.extraction.entities.size(), 2u);
  EXPECT_EQ(o.extraction.entities[0].name, "ADA LOVELACE");
  EXPECT_EQ(o.extraction.entities[0].type, "PERSON");
  EXPECT_EQ(o.extraction.entities[0].description, "A mathematician. Wrote notes.");
  ASSERT_EQ(o.extraction.triples.size(), 1u);
  EXPECT_TRUE(
      HasTriple(o.extraction, "ADA LOVELACE", "Ada translated Babbage's work.", "Charles Babbage"));
  ASSERT_EQ(o.rejections.size(), 1u);
  EXPECT_HAS(o.rejections[0], "object \"Lord Byron\" is not an extracted entity");
  EXPECT_EQ(o.content_keywords, std::vector<std::string>{"computing"});
}

TEST(LlmExtractorTest, FailedCallsLeaveThePassageUnextracted) {
  ScriptedModel model([](const ChatRequest& r) -> Result<ChatResponse> {
    const std::string passage = PassageOf(r);
    if (Contains(passage, "timeout") && !IsSecondCall(r)) {
      return Status::DeadlineExceeded("POST http://x/chat/completions: timed out after 200 ms");
    }
    if (Contains(passage, "re-fails") && IsSecondCall(r)) {
      return Status::Unavailable("POST http://x/chat/completions: HTTP 503");
    }
    if (IsSecondCall(r)) return Answer(R"({"triples": [["Ada", "knows", "Bob"]]})");
    return Answer(R"([{"name": "Ada"}, {"name": "Bob"}])");
  });
  auto extractor = LlmExtractor::Create(&model, SaRagOptions()).value();
  const std::vector<ExtractionInput> inputs = {{1, "", "Ada knows Bob (timeout)."},
                                               {2, "", "Ada knows Bob (re-fails)."},
                                               {3, "", "Ada knows Bob."}};
  auto outcomes = extractor->Extract(inputs).value();
  EXPECT_EQ(outcomes[0].status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_HAS(outcomes[0].status.message(), "passage 1: NER call: POST");
  EXPECT_TRUE(outcomes[0].extraction.entities.empty());
  EXPECT_EQ(outcomes[0].extraction.passage_id, 1);
  EXPECT_EQ(outcomes[0].calls, 1);
  EXPECT_EQ(outcomes[1].status.code(), StatusCode::kUnavailable);
  EXPECT_HAS(outcomes[1].status.message(), "relation extraction call");
  EXPECT_TRUE(outcomes[1].extraction.entities.empty());  // no half extraction
  EXPECT_TRUE(outcomes[1].extraction.triples.empty());
  EXPECT_TRUE(outcomes[2].status.ok());
  EXPECT_EQ(outcomes[2].extraction.triples.size(), 1u);
}

TEST(LlmExtractorTest, UnparseableAnswersGetOneFollowUpThenFail) {
  ScriptedModel model([](const ChatRequest& r) -> Result<ChatResponse> {
    const std::string passage = PassageOf(r);
    if (IsSecondCall(r)) return Answer(R"({"triples": []})");
    if (Contains(passage, "stubborn")) return Answer("I'm sorry, I cannot do that.");
    if (IsFollowUp(r)) return Answer(R"({"named_entities": ["Ada"]})");
    return Answer("Entities: Ada.");
  });
  LlmExtractorOptions options;
  options.style = ExtractionPromptStyle::kOpenIe;
  auto extractor = LlmExtractor::Create(&model, options).value();
  const std::vector<ExtractionInput> inputs = {{1, "", "Ada (recovers)."},
                                               {2, "", "Ada (stubborn)."}};
  auto outcomes = extractor->Extract(inputs).value();
  ASSERT_TRUE(outcomes[0].status.ok()) << outcomes[0].status.ToString();
  EXPECT_EQ(outcomes[0].extraction.entities.size(), 1u);
  EXPECT_TRUE(HasRepair(outcomes[0].repairs, "asked again after an unusable NER answer"));
  EXPECT_EQ(outcomes[0].calls, 3);  // NER, follow-up, triples
  EXPECT_EQ(outcomes[1].status.code(), StatusCode::kUnavailable);
  EXPECT_HAS(outcomes[1].status.message(),
             "passage 2: NER answer unusable after 1 follow-up request(s): no JSON "
             "object or array in the answer");
  EXPECT_TRUE(outcomes[1].extraction.entities.empty());
  // The follow-up showed the model its answer and the problem.
  bool saw_follow_up = false;
  for (const ChatRequest& r : model.requests()) {
    if (!IsFollowUp(r) || !Contains(PassageOf(r), "stubborn")) continue;
    saw_follow_up = true;
    EXPECT_EQ(r.messages[r.messages.size() - 2].content, "I'm sorry, I cannot do that.");
  }
  EXPECT_TRUE(saw_follow_up);

  // Without follow-ups the first bad answer fails the passage.
  LlmExtractorOptions strict = options;
  strict.format_repair_turns = 0;
  auto strict_extractor = LlmExtractor::Create(&model, strict).value();
  auto strict_outcomes = strict_extractor->Extract(std::span(inputs).first(1)).value();
  EXPECT_EQ(strict_outcomes[0].status.code(), StatusCode::kUnavailable);
  EXPECT_HAS(strict_outcomes[0].status.message(), "NER answer unusable: ");
}

TEST(LlmExtractorTest, TruncatedAnswersAreRepairedAndMarked) {
  ScriptedModel model([](const ChatRequest& r) -> Result<ChatResponse> {
    const std::string passage = PassageOf(r);
    if (Contains(passage, "empty")) return Answer("```json\n{\"named_entities\": [\"A", "length");
    if (IsSecondCall(r)) {
      return Answer(R"({"triples": [["Ada", "knows", "Bob"], ["Bob", "knows", "Ca)", "length");
    }
    return Answer(R"({"named_entities": ["Ada", "Bob", "Carl"]})");
  });
  LlmExtractorOptions options;
  options.style = ExtractionPromptStyle::kOpenIe;
  options.format_repair_turns = 0;
  auto extractor = LlmExtractor::Create(&model, options).value();
  const std::vector<ExtractionInput> inputs = {{1, "", "Ada knows Bob; Bob knows Carl."},
                                               {2, "", "Cut (empty)."}};
  auto outcomes = extractor->Extract(inputs).value();
  const PassageOutcome& o = outcomes[0];
  ASSERT_TRUE(o.status.ok()) << o.status.ToString();
  EXPECT_TRUE(o.truncated);
  EXPECT_EQ(o.extraction.triples.size(), 1u);
  EXPECT_TRUE(HasTriple(o.extraction, "Ada", "knows", "Bob"));
  EXPECT_TRUE(HasRepair(o.repairs, "closed truncated JSON"));
  EXPECT_TRUE(
      HasRepair(o.repairs, "repaired a triple extraction answer cut off by the token limit"));
  // Cut before the first complete record: nothing usable, the passage fails.
  EXPECT_FALSE(outcomes[1].status.ok());
  EXPECT_HAS(outcomes[1].status.message(),
             "cut off by the token limit (max_tokens 512) before its first complete");
}

TEST(LlmExtractorTest, StopsAfterABatchWhoseCallsAllFailed) {
  int calls = 0;
  ScriptedModel model([&](const ChatRequest&) -> Result<ChatResponse> {
    ++calls;
    return Status::Unavailable("POST http://x/chat/completions: connection refused");
  });
  LlmExtractorOptions options = SaRagOptions();
  options.batch_size = 2;
  auto extractor = LlmExtractor::Create(&model, options).value();
  std::vector<ExtractionInput> inputs;
  for (int i = 0; i < 6; ++i) inputs.push_back({i, "", "text " + std::to_string(i)});
  auto outcomes = extractor->Extract(inputs).value();
  EXPECT_EQ(calls, 2);
  for (const PassageOutcome& o : outcomes) EXPECT_EQ(o.status.code(), StatusCode::kUnavailable);
  EXPECT_HAS(outcomes[4].status.message(),
             "not attempted: every call of an earlier "
             "batch failed");
  EXPECT_HAS(outcomes[4].status.message(), "connection refused");
}

TEST(LlmExtractorTest, RejectsBadOptionsAndDuplicateIds) {
  ScriptedModel model([](const ChatRequest&) -> Result<ChatResponse> { return Answer("[]"); });
  EXPECT_FALSE(LlmExtractor::Create(nullptr, {}).ok());
  LlmExtractorOptions options;
  options.batch_size = 0;
  Result<std::unique_ptr<LlmExtractor>> bad = LlmExtractor::Create(&model, options);
  ASSERT_FALSE(bad.ok());
  EXPECT_HAS(bad.status().message(), "batch_size");
  options = {};
  options.format_repair_turns = -1;
  EXPECT_FALSE(LlmExtractor::Create(&model, options).ok());
  options = {};
  options.style = ExtractionPromptStyle::kLightRag;
  options.prompt.lightrag.tuple_delimiter = "";
  EXPECT_FALSE(LlmExtractor::Create(&model, options).ok());

  auto extractor = LlmExtractor::Create(&model, {}).value();
  const std::vector<ExtractionInput> dup = {{1, "", "a"}, {1, "", "b"}};
  Result<std::vector<PassageOutcome>> r = extractor->Extract(dup);
  ASSERT_FALSE(r.ok());
  EXPECT_HAS(r.status().message(), "passage_id 1 appears twice");
  auto empty = extractor->Extract({});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

// ===================================================================
// Dry-run estimate
// ===================================================================

int64_t Bytes(const ChatRequest& r) {
  int64_t n = 0;
  for (const ChatMessage& m : r.messages) n += static_cast<int64_t>(m.content.size());
  return n;
}

TEST(EstimateCostTest, CountsCallsAndTokensForAKnownInput) {
  // Two passages of exactly 400 bytes: 100 passage tokens each.
  const std::string text(400, 'x');
  const std::vector<ExtractionInput> inputs = {{1, "", text}, {2, "", text}};

  LlmExtractorOptions openie;
  openie.style = ExtractionPromptStyle::kOpenIe;
  DryRunEstimate e = EstimateCost(inputs, openie);
  EXPECT_EQ(e.passages, 2);
  EXPECT_EQ(e.calls, 4);
  EXPECT_EQ(e.completion_tokens_max, 2 * (512 + 2048));
  // NER 0.25 x 100 = 25, triples 1.0 x 100 = 100.
  EXPECT_EQ(e.completion_tokens_typical, 2 * (25 + 100));
  const int64_t ner = (Bytes(BuildOpenIeNerRequest("", text)) + 3) / 4;
  const int64_t triples = (Bytes(BuildOpenIeTripleRequest("", text, {})) + 3) / 4;
  EXPECT_EQ(e.prompt_tokens, 2 * (ner + triples + 25));
  EXPECT_GT(ner, 100);  // the prompt includes the passage and the demonstration

  LlmExtractorOptions sa = SaRagOptions();
  DryRunEstimate s = EstimateCost(inputs, sa);
  EXPECT_EQ(s.calls, 4);
  EXPECT_EQ(s.completion_tokens_max, 2 * (2048 + 2048));
  EXPECT_EQ(s.completion_tokens_typical, 2 * (100 + 50));

  LlmExtractorOptions light;
  light.style = ExtractionPromptStyle::kLightRag;
  light.prompt.first_max_tokens = 120;
  DryRunEstimate l = EstimateCost(inputs, light);
  EXPECT_EQ(l.calls, 2);
  EXPECT_EQ(l.completion_tokens_max, 240);
  EXPECT_EQ(l.completion_tokens_typical, 240);  // 1.5 x 100 = 150, capped at 120
  EXPECT_EQ(l.prompt_tokens, 2 * ((Bytes(BuildLightRagRequest("", text, light.prompt)) + 3) / 4));

  EXPECT_EQ(EstimateCost({}, openie).calls, 0);
  EXPECT_EQ(TypicalCompletionTokens(ExtractionPromptStyle::kOpenIe, 0, 101, 512), 26);
}

// ===================================================================
// End to end: OpenAiChatClient against a local stub server
// ===================================================================

// What the stub answers to one request.
struct StubReply {
  int status = 200;
  std::string content;
  std::string finish_reason = "stop";
  int delay_ms = 0;
};

// A ResponseCache in memory.
class MapCache : public ResponseCache {
 public:
  Result<std::optional<ChatResponse>> Get(uint64_t key) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return std::optional<ChatResponse>();
    return std::optional<ChatResponse>(it->second);
  }
  Status Put(uint64_t key, const std::string&, const std::string&,
             const ChatResponse& response) override {
    std::lock_guard<std::mutex> lock(mu_);
    map_[key] = response;
    return Status::Ok();
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return map_.size();
  }

 private:
  std::mutex mu_;
  std::map<uint64_t, ChatResponse> map_;
};

// An OpenAI-compatible chat endpoint on 127.0.0.1 (ephemeral port) that
// answers from a script: (request, 0-based count of earlier requests for the
// same passage and call) -> reply.
class StubChatServer {
 public:
  using Script = std::function<StubReply(const ChatRequest&, int)>;

  explicit StubChatServer(Script script) : script_(std::move(script)) {
    httplib::Server& server = http_.server();
    server.new_task_queue = [] { return new httplib::ThreadPool(8); };
    server.Post("/v1/chat/completions",
                [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); });
    http_.Start();
  }
  ~StubChatServer() { http_.Stop(); }

  bool ok() const { return http_.ok(); }
  std::string BaseUrl() const { return http_.url() + "/v1"; }
  int requests() const { return requests_.load(); }
  void SetScript(Script script) {
    std::lock_guard<std::mutex> lock(mu_);
    script_ = std::move(script);
  }

 private:
  void Handle(const httplib::Request& req, httplib::Response& res) {
    ++requests_;
    Json body = Json::parse(req.body, nullptr, false);
    ChatRequest request;
    if (body.is_object() && body.contains("messages")) {
      for (const Json& m : body["messages"]) {
        request.messages.push_back({m.value("role", ""), m.value("content", "")});
      }
      request.max_tokens = body.value("max_tokens", 0);
      request.json_mode = body.contains("response_format");
    }
    Script script;
    int seen = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      script = script_;
      const std::string key = PassageOf(request) + (IsSecondCall(request) ? "#2" : "#1") +
                              (IsFollowUp(request) ? "#f" : "");
      seen = counts_[key]++;
    }
    const StubReply reply = script(request, seen);
    if (reply.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(reply.delay_ms));
    res.status = reply.status;
    if (reply.status != 200) {
      res.set_content(R"({"error": {"message": "stub failure"}})", "application/json");
      return;
    }
    Json out = {{"id", "stub"},
                {"object", "chat.completion"},
                {"choices",
                 {{{"index", 0},
                   {"message", {{"role", "assistant"}, {"content", reply.content}}},
                   {"finish_reason", reply.finish_reason}}}},
                {"usage", {{"prompt_tokens", 50}, {"completion_tokens", 10}}}};
    res.set_content(out.dump(), "application/json");
  }

  Script script_;
  std::mutex mu_;
  std::map<std::string, int> counts_;
  std::atomic<int> requests_{0};
  testing::StubHttpServer http_;
};

StubReply Reply(std::string content, std::string finish = "stop") {
  StubReply r;
  r.content = std::move(content);
  r.finish_reason = std::move(finish);
  return r;
}

// The scripted model behind the stub. Passages are named by a marker word:
//   GOOD      fenced NER JSON; RE with one invented entity (rejected)
//   SLOW      NER answers after 900 ms (the client gives up at 300 ms) until
//             `slow_fixed`, then promptly
//   GARBAGE   NER answers prose, also to the follow-up
//   CUT       RE stops mid-answer (finish_reason "length", cut JSON)
//   FLAKY     NER gets HTTP 500 once, then succeeds
StubReply ScriptedReply(const ChatRequest& r, int seen, bool slow_fixed) {
  const std::string passage = PassageOf(r);
  const bool second = IsSecondCall(r);
  if (Contains(passage, "SLOW") && !second) {
    StubReply slow = Reply(R"([{"name": "Grace Hopper"}])");
    if (!slow_fixed) slow.delay_ms = 900;
    return slow;
  }
  if (Contains(passage, "GARBAGE") && !second) {
    return Reply("I'm sorry, but as an AI I cannot extract entities from this text.");
  }
  if (Contains(passage, "FLAKY") && !second && seen == 0) {
    StubReply error;
    error.status = 500;
    return error;
  }
  if (second) {
    if (Contains(passage, "CUT")) {
      return Reply(
          R"({"triples": [["Ada Lovelace", "worked with", "Charles Babbage"], ["Ada Lovelace", "wrote notes on", "Analyt)",
          "length");
    }
    return Reply(
        R"({"triples": [["Ada Lovelace", "worked with", "Charles Babbage"], ["Ada Lovelace", "was the daughter of", "Lord Byron"]]})");
  }
  return Reply(
      "Here are the entities:\n```json\n[\n"
      "  {\"name\": \"Ada Lovelace\", \"type\": \"PERSON\", \"aliases\": [\"Ada\"], "
      "\"entity_information\": \"Mathematician.\"},\n"
      "  {\"name\": \"Charles Babbage\", \"type\": \"PERSON\", \"aliases\": [], "
      "\"entity_information\": \"Inventor of the Analytical Engine.\"},\n"
      "  {\"name\": \"Analytical Engine\", \"type\": \"MISC\", \"aliases\": [], "
      "\"entity_information\": \"A proposed mechanical computer.\"},\n"
      "]\n```");
}

std::unique_ptr<OpenAiChatClient> StubClient(const StubChatServer& server, ResponseCache* cache) {
  OpenAiChatOptions options;
  options.base_url = server.BaseUrl();
  options.model = "stub-model";
  options.timeout_ms = 300;
  options.connect_timeout_ms = 1000;
  options.max_retries = 1;
  options.initial_backoff_ms = 10;
  options.max_backoff_ms = 50;
  options.max_concurrency = 4;
  Result<std::unique_ptr<OpenAiChatClient>> client =
      OpenAiChatClient::Create(options, cache, NewCurlHttpClient());
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(client).value() : nullptr;
}

const std::vector<ExtractionInput>& EndToEndPassages() {
  static const std::vector<ExtractionInput> passages = {
      {1, "GOOD", "Ada Lovelace worked with Charles Babbage on the Analytical Engine."},
      {2, "SLOW", "Grace Hopper wrote a compiler."},
      {3, "GARBAGE", "Ada Lovelace worked with Charles Babbage."},
      {4, "CUT", "Ada Lovelace wrote notes on the Analytical Engine of Charles Babbage."},
      {5, "FLAKY", "Ada Lovelace worked with Charles Babbage on the Analytical Engine."},
  };
  return passages;
}

TEST(LlmExtractorEndToEndTest, EveryFaultThroughTheRealClientAndResumeFromCache) {
  std::atomic<bool> slow_fixed{false};
  StubChatServer server(
      [&](const ChatRequest& r, int seen) { return ScriptedReply(r, seen, slow_fixed.load()); });
  ASSERT_TRUE(server.ok());
  MapCache cache;
  std::unique_ptr<OpenAiChatClient> client = StubClient(server, &cache);
  ASSERT_NE(client, nullptr);
  std::vector<std::string> log;
  LlmExtractorOptions options = SaRagOptions();
  options.log = [&](std::string_view line) { log.emplace_back(line); };
  auto extractor = LlmExtractor::Create(client.get(), options).value();

  const auto start = std::chrono::steady_clock::now();
  auto first = extractor->Extract(EndToEndPassages());
  ASSERT_TRUE(first.ok());
  const std::vector<PassageOutcome>& run1 = *first;
  ASSERT_EQ(run1.size(), 5u);

  // GOOD: fenced NER with a trailing comma repaired; the triple naming an
  // invented entity is rejected with its reason, the rest kept.
  const PassageOutcome& good = run1[0];
  ASSERT_TRUE(good.status.ok()) << good.status.ToString();
  EXPECT_EQ(good.extraction.entities.size(), 3u);
  EXPECT_EQ(FindEntity(good.extraction, "Ada Lovelace")->aliases, std::vector<std::string>{"Ada"});
  EXPECT_EQ(FindEntity(good.extraction, "Analytical Engine")->description,
            "A proposed mechanical computer.");
  ASSERT_EQ(good.extraction.triples.size(), 1u);
  EXPECT_TRUE(HasTriple(good.extraction, "Ada Lovelace", "worked with", "Charles Babbage"));
  ASSERT_EQ(good.rejections.size(), 1u);
  EXPECT_HAS(good.rejections[0], "object \"Lord Byron\" is not an extracted entity");
  EXPECT_TRUE(HasRepair(good.repairs, "stripped markdown fence"));
  EXPECT_TRUE(HasRepair(good.repairs, "removed trailing comma"));
  EXPECT_EQ(good.calls, 2);
  EXPECT_EQ(good.prompt_tokens, 100);
  EXPECT_EQ(good.completion_tokens, 20);
  EXPECT_FALSE(good.truncated);

  // SLOW: the client's timeout (after its retry) fails the passage, which
  // gets no extraction.
  const PassageOutcome& slow = run1[1];
  EXPECT_EQ(slow.status.code(), StatusCode::kDeadlineExceeded) << slow.status.ToString();
  EXPECT_HAS(slow.status.message(), "passage 2: NER call: POST");
  EXPECT_TRUE(slow.extraction.entities.empty());

  // GARBAGE: prose, twice (answer and follow-up): a clear error, no extraction.
  const PassageOutcome& garbage = run1[2];
  EXPECT_EQ(garbage.status.code(), StatusCode::kUnavailable);
  EXPECT_HAS(garbage.status.message(), "NER answer unusable");
  EXPECT_HAS(garbage.status.message(), "no JSON object or array in the answer");
  EXPECT_TRUE(garbage.extraction.entities.empty());
  EXPECT_EQ(garbage.calls, 2);

  // CUT: the RE answer stopped mid-JSON; the complete triple is kept.
  const PassageOutcome& cut = run1[3];
  ASSERT_TRUE(cut.status.ok()) << cut.status.ToString();
  EXPECT_TRUE(cut.truncated);
  ASSERT_EQ(cut.extraction.triples.size(), 1u);
  EXPECT_TRUE(HasTriple(cut.extraction, "Ada Lovelace", "worked with", "Charles Babbage"));
  EXPECT_TRUE(HasRepair(cut.repairs, "closed truncated JSON"));

  // FLAKY: HTTP 500 then success, retried by the client.
  const PassageOutcome& flaky = run1[4];
  ASSERT_TRUE(flaky.status.ok()) << flaky.status.ToString();
  EXPECT_EQ(flaky.extraction.entities.size(), 3u);
  EXPECT_GE(client->usage().retries, 2);  // FLAKY once, SLOW once

  // Failures were logged.
  std::string all_log = JoinLines(log);
  EXPECT_HAS(all_log, "passage 2: DeadlineExceeded");
  EXPECT_HAS(all_log, "passage 3: Unavailable");
  EXPECT_HAS(all_log,
             "passage 1: rejected: triple [Ada Lovelace | was the daughter of | Lord Byron]");

  // Resume: a new client on the same cache (as after a crash), the slow
  // passage now answered promptly. Only the failed passages reach the
  // server again; everything else replays from the cache with identical
  // extractions.
  slow_fixed = true;
  const int requests_before = server.requests();
  std::unique_ptr<OpenAiChatClient> client2 = StubClient(server, &cache);
  auto extractor2 = LlmExtractor::Create(client2.get(), options).value();
  auto second = extractor2->Extract(EndToEndPassages());
  ASSERT_TRUE(second.ok());
  const std::vector<PassageOutcome>& run2 = *second;
  for (size_t i : {0u, 3u, 4u}) {
    SCOPED_TRACE(i);
    ASSERT_TRUE(run2[i].status.ok());
    EXPECT_EQ(run2[i].cache_hits, run2[i].calls);
    EXPECT_EQ(run2[i].extraction.entities.size(), run1[i].extraction.entities.size());
    for (size_t e = 0; e < run1[i].extraction.entities.size(); ++e) {
      EXPECT_EQ(run2[i].extraction.entities[e].name, run1[i].extraction.entities[e].name);
      EXPECT_EQ(run2[i].extraction.entities[e].aliases, run1[i].extraction.entities[e].aliases);
      EXPECT_EQ(run2[i].extraction.entities[e].description,
                run1[i].extraction.entities[e].description);
    }
    ASSERT_EQ(run2[i].extraction.triples.size(), run1[i].extraction.triples.size());
    for (size_t t = 0; t < run1[i].extraction.triples.size(); ++t) {
      EXPECT_EQ(run2[i].extraction.triples[t].subject, run1[i].extraction.triples[t].subject);
      EXPECT_EQ(run2[i].extraction.triples[t].relation, run1[i].extraction.triples[t].relation);
      EXPECT_EQ(run2[i].extraction.triples[t].object, run1[i].extraction.triples[t].object);
    }
    EXPECT_EQ(run2[i].rejections, run1[i].rejections);
    EXPECT_EQ(run2[i].truncated, run1[i].truncated);
  }
  ASSERT_TRUE(run2[1].status.ok()) << run2[1].status.ToString();  // SLOW now succeeds
  EXPECT_EQ(run2[1].extraction.entities.size(), 1u);
  EXPECT_EQ(run2[1].cache_hits, 0);
  // The garbage answers (answer and follow-up) were cached: the same error,
  // without asking again.
  EXPECT_EQ(run2[2].status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(run2[2].cache_hits, 2);
  // SLOW's NER and RE are the only new HTTP requests.
  EXPECT_EQ(server.requests() - requests_before, 2);
  EXPECT_EQ(client2->usage().requests, 2);

  // A third run on the same cache makes no HTTP call at all.
  const int requests_mid = server.requests();
  std::unique_ptr<OpenAiChatClient> client3 = StubClient(server, &cache);
  auto extractor3 = LlmExtractor::Create(client3.get(), options).value();
  auto third = extractor3->Extract(EndToEndPassages());
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(server.requests(), requests_mid);
  EXPECT_EQ(client3->usage().requests, 0);
  for (size_t i = 0; i < run2.size(); ++i) {
    EXPECT_EQ((*third)[i].status.code(), run2[i].status.code());
    EXPECT_EQ((*third)[i].extraction.triples.size(), run2[i].extraction.triples.size());
  }

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 15.0);
}

TEST(LlmExtractorEndToEndTest, OpenIeAndLightRagThroughTheRealClient) {
  StubChatServer server([](const ChatRequest& r, int) {
    if (Contains(r.messages[0].content, "-Goal-")) {
      return Reply(
          "(\"entity\"<|>\"Ada Lovelace\"<|>\"person\"<|>\"Mathematician.\")##\n"
          "(\"entity\"<|>\"Charles Babbage\"<|>\"person\"<|>\"Inventor.\")##\n"
          "(\"relationship\"<|>\"Ada Lovelace\"<|>\"Charles Babbage\"<|>\"Worked "
          "together.\"<|>\"collaboration\"<|>8)##\n(\"content_keywords\"<|>\"computing\")"
          "<|COMPLETE|>");
    }
    if (IsSecondCall(r)) {
      EXPECT_TRUE(r.json_mode);
      EXPECT_EQ(r.max_tokens, 2048);
      return Reply(R"({"triples": [["Ada Lovelace", "worked with", "Charles Babbage"]]})");
    }
    EXPECT_TRUE(r.json_mode);
    EXPECT_EQ(r.max_tokens, 512);
    return Reply(R"({"named_entities": ["Ada Lovelace", "Charles Babbage"]})");
  });
  ASSERT_TRUE(server.ok());
  std::unique_ptr<OpenAiChatClient> client = StubClient(server, nullptr);
  ASSERT_NE(client, nullptr);
  const std::vector<ExtractionInput> inputs = {
      {1, "", "Ada Lovelace worked with Charles Babbage."}};
  for (ExtractionPromptStyle style :
       {ExtractionPromptStyle::kOpenIe, ExtractionPromptStyle::kLightRag}) {
    SCOPED_TRACE(std::string(ExtractionPromptStyleName(style)));
    LlmExtractorOptions options;
    options.style = style;
    auto extractor = LlmExtractor::Create(client.get(), options).value();
    auto outcomes = extractor->Extract(inputs).value();
    ASSERT_TRUE(outcomes[0].status.ok()) << outcomes[0].status.ToString();
    EXPECT_EQ(outcomes[0].extraction.entities.size(), 2u);
    EXPECT_EQ(outcomes[0].extraction.triples.size(), 1u);
    EXPECT_EQ(outcomes[0].calls, style == ExtractionPromptStyle::kLightRag ? 1 : 2);
  }
  EXPECT_EQ(server.requests(), 3);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
