#include "extract/prompts.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/text.h"

namespace flowrag {
namespace {

using Json = nlohmann::json;

// ----- SA-RAG, Appendix B, Listing 4 (NER) -----

constexpr std::string_view kSaRagNerInstructions =
    R"(Given a text passage, identify and extract the entities it mentions by following the step-by-step procedure below.

- **Identify every entity explicitly mentioned in the text.**
  - Each entity belongs to one of four categories:
    - **PERSON**: individual people.
    - **ORGANIZATION**: companies, institutions and organised groups.
    - **GPE** (geopolitical entities): countries, cities, states, regions or territories.
    - **MISC**: every other notable entity that fits none of the above, such as historical events, works of art, patents or buildings.

- **Names and aliases:**
  - When an entity is mentioned in several ways (aliases or abbreviations), use its **full official name** as the primary name.
  - List every other name the text uses for it as an alias.

- **Factual attributes** (the "entity_information" field):
  - For **PERSON** entities: birthplace, birth and death dates, nationality, occupation, titles and achievements stated in the text.
  - For **ORGANIZATION** entities: foundation date, headquarters location, industry or sectors, associated institutions, co-founders and explicit criticism, if any.
  - For **GPE** entities: geographical or political details, historical characteristics, capital city, demographics, and cultural or administrative aspects stated in the text.
    - **Never** describe a GPE through its role for another entity ("birthplace of ...", "city of origin of ...", "place where someone died") or in any other context-dependent way: such facts belong to the other entity's description and to relationships.
  - For **MISC** entities: temporal attributes, scale, historical significance or other descriptive facts stated in the text.

- **Stay strictly with the text:**
  - Extract **only** details the text states explicitly.
  - **Do not** infer, assume or invent information the text does not contain.

Output Format

- Return your response as a JSON array.
- Each element of the array is a JSON object with exactly four keys: "name", "type", "aliases" (a list of strings) and "entity_information" (a string).
)";

constexpr std::string_view kSaRagNerDemoInput =
    R"(Nikola Tesla (born July 9/10, 1856, Smiljan, Austrian Empire [now in Croatia]-died January 7, 1943, New York, New York, U.S.) was a Serbian American inventor and engineer who discovered and patented the rotating magnetic field, the basis of most alternating-current machinery. He also developed the three-phase system of electric power transmission. He immigrated to the United States in 1884 and sold the patent rights to his system of alternating-current dynamos, transformers, and motors to George Westinghouse. In 1891 he invented the Tesla coil, an induction coil widely used in radio technology.)";

constexpr std::string_view kSaRagNerDemoOutput = R"([
  {
    "name": "Nikola Tesla",
    "type": "PERSON",
    "aliases": [],
    "entity_information": "Born July 9/10, 1856, in Smiljan, Austrian Empire (now in Croatia), died January 7, 1943, in New York, U.S. Serbian American inventor and engineer who discovered and patented the rotating magnetic field, developed the three-phase system of electric power transmission, immigrated to the United States in 1884, sold patent rights of alternating-current systems to George Westinghouse, and invented the Tesla coil in 1891."
  },
  {"name": "Smiljan", "type": "GPE", "aliases": [], "entity_information": "Place previously in Austrian Empire, currently part of Croatia."},
  {"name": "Austrian Empire", "type": "GPE", "aliases": [], "entity_information": "Empire existing in 1856."},
  {"name": "Croatia", "type": "GPE", "aliases": [], "entity_information": "Country in Europe."},
  {"name": "New York", "type": "GPE", "aliases": [], "entity_information": "City in the United States."},
  {"name": "United States", "type": "GPE", "aliases": ["U.S."], "entity_information": "Country."},
  {"name": "George Westinghouse", "type": "PERSON", "aliases": [], "entity_information": "Person who purchased patent rights of Nikola Tesla's system of alternating-current dynamos, transformers, and motors."},
  {"name": "Tesla coil", "type": "MISC", "aliases": [], "entity_information": "Induction coil invented by Nikola Tesla in 1891, widely used in radio technology."}
])";

constexpr std::string_view kSaRagNerForbidden = R"([
  {"name": "United States", "type": "GPE", "aliases": [], "entity_information": "Country where Nikola Tesla immigrated to in 1884."},
  {"name": "New York", "type": "GPE", "aliases": [], "entity_information": "City in the United States, where Nikola Tesla died."},
  {"name": "Smiljan", "type": "GPE", "aliases": [], "entity_information": "Town in the Austrian Empire (now in Croatia), birthplace of Nikola Tesla."}
])";

// ----- SA-RAG, Appendix B, Listing 5 (RE) -----

constexpr std::string_view kSaRagReInstructions =
    R"(You are given a text passage and a list of named entities. Perform relationship extraction: identify every relationship that the text states explicitly between two entities of the list.

Instructions:
- **Entity pairing:** consider only relationships between two entities from the given named entity list, and write their names as they appear in the list.
- **Triple format:** write each relationship as a list of three strings, `["entity1", "relationship", "entity2"]`, where "relationship" is a short description of how entity1 relates to entity2.
- **Pronoun resolution:** replace pronouns with the named entities they refer to, so that every reference is clear.
- **Output format:** your final answer must be a JSON object with the single key "triples", whose value is the list of all extracted triples.
- **Explicit relationships:** include only relationships that the text states explicitly.
)";

constexpr std::string_view kSaRagReDemoInput =
    R"(Jack Parsons (born October 2, 1914, Los Angeles, California, U.S.-died June 17, 1952, Pasadena, California) was an American rocket scientist and chemist who made significant contributions to the development of rocket technology and missile systems and was a cofounder of the Jet Propulsion Laboratory (JPL) at the California Institute of Technology (Caltech) and of the Aerojet Engineering Corporation.)";

constexpr std::string_view kSaRagReDemoEntities =
    "Jack Parsons, Los Angeles, Pasadena, Jet Propulsion Laboratory, California Institute of "
    "Technology, Aerojet Engineering Corporation";

constexpr std::string_view kSaRagReDemoReasoning =
    R"(1. **Provided information:**
   - **Input text:** the paragraph is about Jack Parsons; the key phrases are "born", "died", "cofounder" and the association of JPL with Caltech.
   - **Entity list:** Jack Parsons, Los Angeles, Pasadena, Jet Propulsion Laboratory, California Institute of Technology, Aerojet Engineering Corporation.
2. **Explicit relationships:**
   - The text states that Jack Parsons was born in Los Angeles and died in Pasadena.
   - It states that Jack Parsons co-founded both the Jet Propulsion Laboratory and the Aerojet Engineering Corporation.
   - It places the Jet Propulsion Laboratory at the California Institute of Technology.
3. **Pronoun resolution:**
   - No pronoun needed resolving: every entity is named explicitly.)";

constexpr std::string_view kSaRagReDemoOutput = R"({
  "triples": [
    ["Jack Parsons", "born in", "Los Angeles"],
    ["Jack Parsons", "died in", "Pasadena"],
    ["Jack Parsons", "co-founded", "Jet Propulsion Laboratory"],
    ["Jack Parsons", "co-founded", "Aerojet Engineering Corporation"],
    ["Jet Propulsion Laboratory", "is located at", "California Institute of Technology"]
  ]
})";

// ----- SemFlowRAG A.5.1, Figures 5 and 6 (HippoRAG OpenIE) -----

constexpr std::string_view kOpenIeNerSystem =
    R"(Your task is to extract named entities from the given paragraph. Respond with a JSON list of entities, as a JSON object whose "named_entities" key holds the list.)";

constexpr std::string_view kOpenIeDemoTitle = "Radio City";
constexpr std::string_view kOpenIeDemoText =
    "Radio City is India's first private FM radio station and was started on 3 July 2001. It "
    "plays Hindi, English and regional songs.\nRadio City recently forayed into New Media in May "
    "2008 with the launch of a music portal - PlanetRadiocity.com that offers music related news, "
    "videos, songs, and other music-related features.";

constexpr std::string_view kOpenIeDemoNer =
    R"({"named_entities": ["Radio City", "India", "3 July 2001", "Hindi", "English", "May 2008", "PlanetRadiocity.com"]})";

constexpr std::string_view kOpenIeTripleSystem =
    R"(Your task is to construct an RDF (Resource Description Framework) graph from the given passages and named entity lists. Respond with a JSON list of triples, as a JSON object whose "triples" key holds the list, each triple representing one relationship of the RDF graph. Pay attention to the following requirements:

- Extract as many explicit factual statements from the paragraph as possible; aim for high recall rather than a short summary.
- Each triple should contain at least one named entity where possible, but do not leave out explicit facts whose useful endpoints are descriptive phrases, dates, quantities, titles, roles, events, locations, affiliations or other salient noun phrases.
- Split enumerations and compound statements into separate triples when they express several facts.
- Keep the factual detail of the paragraph: aliases, dates, numbers, locations, occupations, memberships, affiliations, works, events and descriptive attributes.
- Do not infer facts that the paragraph does not explicitly support.
- Resolve pronouns to the specific names they refer to, for clarity.)";

constexpr std::string_view kOpenIeDemoTriples = R"({"triples": [
  ["Radio City", "located in", "India"],
  ["Radio City", "is", "private FM radio station"],
  ["Radio City", "started on", "3 July 2001"],
  ["Radio City", "plays songs in", "Hindi"],
  ["Radio City", "plays songs in", "English"],
  ["Radio City", "forayed into", "New Media"],
  ["Radio City", "launched", "PlanetRadiocity.com"],
  ["PlanetRadiocity.com", "launched in", "May 2008"],
  ["PlanetRadiocity.com", "is", "music portal"],
  ["PlanetRadiocity.com", "offers", "news"],
  ["PlanetRadiocity.com", "offers", "videos"],
  ["PlanetRadiocity.com", "offers", "songs"]
]})";

// ----- QAFD-RAG A4.2 (LightRAG entity and relationship extraction) -----

// {td} tuple delimiter, {rd} record delimiter, {cd} completion delimiter,
// {types} entity types, {language} output language.
constexpr std::string_view kLightRagTemplate = R"(-Goal-
Given a text document that is potentially relevant to this activity and a list of entity types, identify all entities of those types in the text and all relationships among the identified entities.
Use {language} as output language.

-Steps-
1. Identify all entities. For each identified entity, extract the following information:
- entity_name: name of the entity, in the same language as the input text. If English, capitalize the name.
- entity_type: one of the following types: [{types}]
- entity_description: a comprehensive description of the entity's attributes and activities
Format each entity as ("entity"{td}<entity_name>{td}<entity_type>{td}<entity_description>)

2. From the entities identified in step 1, identify all pairs of (source_entity, target_entity) that are clearly related to each other.
For each pair of related entities, extract the following information:
- source_entity: name of the source entity, as identified in step 1
- target_entity: name of the target entity, as identified in step 1
- relationship_description: an explanation of why the source entity and the target entity are related to each other
- relationship_strength: a numeric score indicating the strength of the relationship between the source entity and the target entity
- relationship_keywords: one or more high-level keywords that summarize the overarching nature of the relationship, focusing on concepts or themes rather than specific details
Format each relationship as ("relationship"{td}<source_entity>{td}<target_entity>{td}<relationship_description>{td}<relationship_keywords>{td}<relationship_strength>)

3. Identify high-level keywords that summarize the main concepts, themes or topics of the entire text. These should capture the overarching ideas present in the document.
Format the content-level keywords as ("content_keywords"{td}<high_level_keywords>)

4. Return output in {language} as a single list of all the entities and relationships identified in steps 1 and 2. Use **{rd}** as the list delimiter.

5. When finished, output {cd}

-Example-
Entity_types: [person, organization, geo, event, category]
Text:
Marie Curie, a physicist born in Warsaw, shared the 1903 Nobel Prize in Physics with Pierre Curie for their research on radioactivity. She later founded the Radium Institute in Paris.
Output:
("entity"{td}"Marie Curie"{td}"person"{td}"Marie Curie is a physicist born in Warsaw who shared the 1903 Nobel Prize in Physics for research on radioactivity and founded the Radium Institute."){rd}
("entity"{td}"Warsaw"{td}"geo"{td}"Warsaw is the city where Marie Curie was born."){rd}
("entity"{td}"Pierre Curie"{td}"person"{td}"Pierre Curie is a researcher of radioactivity who shared the 1903 Nobel Prize in Physics."){rd}
("entity"{td}"Nobel Prize in Physics"{td}"event"{td}"The 1903 Nobel Prize in Physics was awarded for research on radioactivity."){rd}
("entity"{td}"Radium Institute"{td}"organization"{td}"The Radium Institute is a research institute in Paris founded by Marie Curie."){rd}
("entity"{td}"Paris"{td}"geo"{td}"Paris is the city where the Radium Institute is located."){rd}
("relationship"{td}"Marie Curie"{td}"Warsaw"{td}"Marie Curie was born in Warsaw."{td}"birthplace, origin"{td}8){rd}
("relationship"{td}"Marie Curie"{td}"Pierre Curie"{td}"Marie Curie and Pierre Curie shared the Nobel Prize for their joint research."{td}"collaboration, shared award"{td}9){rd}
("relationship"{td}"Marie Curie"{td}"Nobel Prize in Physics"{td}"Marie Curie received the 1903 Nobel Prize in Physics."{td}"recognition, scientific achievement"{td}9){rd}
("relationship"{td}"Marie Curie"{td}"Radium Institute"{td}"Marie Curie founded the Radium Institute."{td}"founding, institution building"{td}8){rd}
("relationship"{td}"Radium Institute"{td}"Paris"{td}"The Radium Institute is located in Paris."{td}"location"{td}6){rd}
("content_keywords"{td}"physics, radioactivity, scientific awards, research institutions"){cd}
)";

std::string ReplaceAll(std::string s, std::string_view from, std::string_view to) {
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
  return s;
}

std::string JoinStrings(std::span<const std::string> items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

std::string LightRagTypes(const LightRagFormat& format) {
  return JoinStrings(format.entity_types, ", ");
}

// A JSON string literal of `s` (invalid UTF-8 replaced by U+FFFD).
std::string JsonQuote(std::string_view s) {
  return Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string OpenIeUserTurn(std::string_view passage, std::string_view ner_json) {
  std::string out =
      "Convert the paragraph into a JSON dict, it has a named entity list and a triple list.\n"
      "Paragraph:\n```\n";
  out += passage;
  out += "\n```\n\n";
  out += ner_json;
  return out;
}

ChatRequest MakeRequest(int max_tokens, bool json_mode, const PromptOptions& options) {
  ChatRequest request;
  request.max_tokens = max_tokens;
  request.json_mode = json_mode;
  request.temperature = options.temperature;
  return request;
}

std::string Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::string Excerpt(std::string_view s, size_t max = 80) {
  std::string t = Trim(s);
  for (char& c : t) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  if (t.size() > max) {
    size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(t[cut]) & 0xC0) == 0x80) --cut;
    t = t.substr(0, cut) + "...";
  }
  return "\"" + t + "\"";
}

// Strips one layer of matching quotes (straight or curly) or <angle
// brackets> around a field.
std::string CleanField(std::string_view raw) {
  std::string s = Trim(raw);
  for (int round = 0; round < 2; ++round) {
    if (s.size() >= 2 &&
        ((s.front() == '"' && s.back() == '"') || (s.front() == '\'' && s.back() == '\'') ||
         (s.front() == '<' && s.back() == '>'))) {
      s = Trim(std::string_view(s).substr(1, s.size() - 2));
    } else if (s.size() >= 6 && s.compare(0, 3, "\xE2\x80\x9C") == 0 &&
               s.compare(s.size() - 3, 3, "\xE2\x80\x9D") == 0) {
      s = Trim(std::string_view(s).substr(3, s.size() - 6));
    } else if (s.size() == 1 && (s[0] == '"' || s[0] == '\'')) {
      s.clear();
    } else {
      break;
    }
  }
  // A lone leading or trailing straight quote (the other was lost).
  if (!s.empty() && s.front() == '"' && s.find('"', 1) == std::string::npos) s.erase(0, 1);
  if (!s.empty() && s.back() == '"' && s.find('"') == s.size() - 1) s.pop_back();
  return Trim(s);
}

// A record start found in LightRAG output.
struct RecordStart {
  size_t begin;  // first byte of the record ('(' or the keyword / its quote)
  size_t delim;  // first tuple delimiter of the record
};

bool IsKeywordChar(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }

// Finds record starts: a keyword (entity / relationship / content_keywords),
// optionally quoted and preceded by '(', right before a tuple delimiter.
// It must begin the text or a line, or follow ')' or the record delimiter.
std::vector<RecordStart> FindRecordStarts(std::string_view body, std::string_view td,
                                          std::string_view rd) {
  std::vector<RecordStart> starts;
  if (td.empty()) return starts;
  for (size_t d = body.find(td); d != std::string_view::npos; d = body.find(td, d + td.size())) {
    size_t i = d;
    while (i > 0 && (body[i - 1] == ' ' || body[i - 1] == '\t')) --i;
    // Closing quote: " ' or ”.
    if (i >= 3 && body.substr(i - 3, 3) == "\xE2\x80\x9D") {
      i -= 3;
    } else if (i > 0 && (body[i - 1] == '"' || body[i - 1] == '\'')) {
      --i;
    }
    size_t w = i;
    while (w > 0 && IsKeywordChar(body[w - 1])) --w;
    const std::string word = ToLowerAscii(body.substr(w, i - w));
    if (word != "entity" && word != "relationship" && word != "content_keywords") continue;
    size_t b = w;
    if (b >= 3 && body.substr(b - 3, 3) == "\xE2\x80\x9C") {
      b -= 3;
    } else if (b > 0 && (body[b - 1] == '"' || body[b - 1] == '\'')) {
      --b;
    }
    size_t p = b;
    while (p > 0 && (body[p - 1] == ' ' || body[p - 1] == '\t')) --p;
    if (p > 0 && body[p - 1] == '(') {
      b = p - 1;
    } else if (p > 0 && body[p - 1] != '\n' && body[p - 1] != '\r' && body[p - 1] != ')' &&
               (rd.empty() || body.substr(0, p).substr(p >= rd.size() ? p - rd.size() : 0) != rd)) {
      continue;  // a keyword in the middle of a description
    }
    starts.push_back({b, d});
  }
  return starts;
}

std::vector<std::string> SplitFields(std::string_view s, std::string_view td) {
  std::vector<std::string> fields;
  size_t begin = 0;
  for (;;) {
    const size_t d = s.find(td, begin);
    if (d == std::string_view::npos) {
      fields.push_back(CleanField(s.substr(begin)));
      return fields;
    }
    fields.push_back(CleanField(s.substr(begin, d - begin)));
    begin = d + td.size();
  }
}

}  // namespace

std::string_view ExtractionPromptStyleName(ExtractionPromptStyle style) {
  switch (style) {
    case ExtractionPromptStyle::kSaRag:
      return "sa-rag";
    case ExtractionPromptStyle::kOpenIe:
      return "openie";
    case ExtractionPromptStyle::kLightRag:
      return "lightrag";
  }
  return "unknown";
}

Result<ExtractionPromptStyle> ParseExtractionPromptStyle(std::string_view name) {
  const std::string n = ToLowerAscii(name);
  if (n == "sa-rag" || n == "sarag" || n == "sa_rag") return ExtractionPromptStyle::kSaRag;
  if (n == "openie" || n == "hipporag" || n == "semflow" || n == "semflowrag") {
    return ExtractionPromptStyle::kOpenIe;
  }
  if (n == "lightrag" || n == "qafd" || n == "qafd-rag") return ExtractionPromptStyle::kLightRag;
  return Status::InvalidArgument("unknown extraction prompt style \"" + std::string(name) +
                                 "\": expected sa-rag, openie or lightrag");
}

StylePlan PlanFor(ExtractionPromptStyle style, const PromptOptions& options) {
  StylePlan plan;
  switch (style) {
    case ExtractionPromptStyle::kSaRag:
      plan = {2, 2048, 2048};
      break;
    case ExtractionPromptStyle::kOpenIe:
      plan = {2, 512, 2048};
      break;
    case ExtractionPromptStyle::kLightRag:
      plan = {1, 4096, 0};
      break;
  }
  if (options.first_max_tokens > 0) plan.first_max_tokens = options.first_max_tokens;
  if (options.second_max_tokens > 0 && plan.calls_per_passage == 2) {
    plan.second_max_tokens = options.second_max_tokens;
  }
  return plan;
}

std::string RenderPassage(std::string_view title, std::string_view text) {
  const std::string t = Trim(title);
  const std::string body = Trim(text);
  const size_t first_line_end = body.find('\n');
  if (t.empty() || Trim(std::string_view(body).substr(0, first_line_end)) == t) return body;
  return t + "\n" + body;
}

ChatRequest BuildSaRagNerRequest(std::string_view title, std::string_view text,
                                 const PromptOptions& options) {
  const StylePlan plan = PlanFor(ExtractionPromptStyle::kSaRag, options);
  // json_mode stays off: the answer is a top-level array (see the header).
  ChatRequest request = MakeRequest(plan.first_max_tokens, /*json_mode=*/false, options);
  std::string system(kSaRagNerInstructions);
  system += "\nDemonstration\n\nInput\n\n";
  system += kSaRagNerDemoInput;
  system += "\n\nDesired output\n\n";
  system += kSaRagNerDemoOutput;
  system += "\n\nForbidden outputs (context-dependent GPE descriptions)\n\n";
  system += kSaRagNerForbidden;
  system += "\n";
  request.messages.push_back({"system", std::move(system)});
  request.messages.push_back({"user", "Real input\n\n" + RenderPassage(title, text)});
  return request;
}

ChatRequest BuildSaRagReRequest(std::string_view title, std::string_view text,
                                std::span<const std::string> entities,
                                const PromptOptions& options) {
  const StylePlan plan = PlanFor(ExtractionPromptStyle::kSaRag, options);
  ChatRequest request = MakeRequest(plan.second_max_tokens, /*json_mode=*/true, options);
  std::string system(kSaRagReInstructions);
  system += "\nDemonstration\n\nInput\n\n";
  system += kSaRagReDemoInput;
  system += "\n\nEntity list: ";
  system += kSaRagReDemoEntities;
  system += "\n\nReasoning\n\n";
  system += kSaRagReDemoReasoning;
  system += "\n\nResponse\n\n";
  system += kSaRagReDemoOutput;
  system += "\n";
  request.messages.push_back({"system", std::move(system)});
  std::string user = "Real input\n\n" + RenderPassage(title, text);
  user += "\n\nEntity list: " + JoinStrings(entities, ", ");
  request.messages.push_back({"user", std::move(user)});
  return request;
}

ChatRequest BuildOpenIeNerRequest(std::string_view title, std::string_view text,
                                  const PromptOptions& options) {
  const StylePlan plan = PlanFor(ExtractionPromptStyle::kOpenIe, options);
  ChatRequest request = MakeRequest(plan.first_max_tokens, /*json_mode=*/true, options);
  request.messages.push_back({"system", std::string(kOpenIeNerSystem)});
  request.messages.push_back({"user", RenderPassage(kOpenIeDemoTitle, kOpenIeDemoText)});
  request.messages.push_back({"assistant", std::string(kOpenIeDemoNer)});
  request.messages.push_back({"user", RenderPassage(title, text)});
  return request;
}

ChatRequest BuildOpenIeTripleRequest(std::string_view title, std::string_view text,
                                     std::span<const std::string> named_entities,
                                     const PromptOptions& options) {
  const StylePlan plan = PlanFor(ExtractionPromptStyle::kOpenIe, options);
  ChatRequest request = MakeRequest(plan.second_max_tokens, /*json_mode=*/true, options);
  request.messages.push_back({"system", std::string(kOpenIeTripleSystem)});
  request.messages.push_back(
      {"user", OpenIeUserTurn(RenderPassage(kOpenIeDemoTitle, kOpenIeDemoText), kOpenIeDemoNer)});
  request.messages.push_back({"assistant", std::string(kOpenIeDemoTriples)});
  std::string ner = "{\"named_entities\": [";
  for (size_t i = 0; i < named_entities.size(); ++i) {
    if (i > 0) ner += ", ";
    ner += JsonQuote(named_entities[i]);
  }
  ner += "]}";
  request.messages.push_back({"user", OpenIeUserTurn(RenderPassage(title, text), ner)});
  return request;
}

ChatRequest BuildLightRagRequest(std::string_view title, std::string_view text,
                                 const PromptOptions& options) {
  const StylePlan plan = PlanFor(ExtractionPromptStyle::kLightRag, options);
  const LightRagFormat& f = options.lightrag;
  ChatRequest request = MakeRequest(plan.first_max_tokens, /*json_mode=*/false, options);
  std::string system(kLightRagTemplate);
  system = ReplaceAll(std::move(system), "{td}", f.tuple_delimiter);
  system = ReplaceAll(std::move(system), "{rd}", f.record_delimiter);
  system = ReplaceAll(std::move(system), "{cd}", f.completion_delimiter);
  system = ReplaceAll(std::move(system), "{types}", LightRagTypes(f));
  system = ReplaceAll(std::move(system), "{language}", f.language);
  request.messages.push_back({"system", std::move(system)});
  std::string user = "-Real Data-\nEntity_types: [" + LightRagTypes(f) + "]\nText:\n";
  user += RenderPassage(title, text);
  user += "\n######################\nOutput:";
  request.messages.push_back({"user", std::move(user)});
  return request;
}

ChatRequest BuildFirstRequest(ExtractionPromptStyle style, std::string_view title,
                              std::string_view text, const PromptOptions& options) {
  switch (style) {
    case ExtractionPromptStyle::kSaRag:
      return BuildSaRagNerRequest(title, text, options);
    case ExtractionPromptStyle::kOpenIe:
      return BuildOpenIeNerRequest(title, text, options);
    case ExtractionPromptStyle::kLightRag:
      return BuildLightRagRequest(title, text, options);
  }
  return {};
}

ChatRequest BuildSecondRequest(ExtractionPromptStyle style, std::string_view title,
                               std::string_view text, std::span<const std::string> entities,
                               const PromptOptions& options) {
  switch (style) {
    case ExtractionPromptStyle::kSaRag:
      return BuildSaRagReRequest(title, text, entities, options);
    case ExtractionPromptStyle::kOpenIe:
      return BuildOpenIeTripleRequest(title, text, entities, options);
    case ExtractionPromptStyle::kLightRag:
      break;
  }
  return {};
}

ChatRequest BuildFormatRepairRequest(ExtractionPromptStyle style, const ChatRequest& original,
                                     std::string_view answer, std::string_view problem,
                                     const PromptOptions& options) {
  ChatRequest request = original;
  request.messages.push_back({"assistant", std::string(answer)});
  std::string follow_up = "Your previous answer could not be used: ";
  follow_up += problem;
  if (style == ExtractionPromptStyle::kLightRag) {
    follow_up +=
        "\nAnswer again using only the record format described above, one record per "
        "entity or relationship separated by " +
        options.lightrag.record_delimiter + ", and end with " +
        options.lightrag.completion_delimiter + ".";
  } else {
    follow_up +=
        "\nAnswer again with only the JSON in the output format described above, "
        "without any other text.";
  }
  request.messages.push_back({"user", std::move(follow_up)});
  return request;
}

namespace {

// The answer up to the completion delimiter, when it has one (the parse is
// then complete; text after it is ignored).
std::string_view BeforeCompletion(std::string_view content, const LightRagFormat& format,
                                  LightRagParse* out) {
  if (format.completion_delimiter.empty()) return content;
  const size_t done = content.find(format.completion_delimiter);
  if (done == std::string_view::npos) return content;
  out->complete = true;
  if (HasNonSpace(content.substr(done + format.completion_delimiter.size()))) {
    AppendUnique(&out->repairs, "ignored text after the completion delimiter");
  }
  return content.substr(0, done);
}

// `record` without trailing whitespace and record delimiters; *delimited
// tells whether it ended with one.
std::string_view TrimRecordEnd(std::string_view record, std::string_view rd, bool* delimited) {
  *delimited = false;
  for (;;) {
    const size_t last = record.find_last_not_of(" \t\r\n");
    record = last == std::string_view::npos ? std::string_view() : record.substr(0, last + 1);
    if (!rd.empty() && record.size() >= rd.size() &&
        record.substr(record.size() - rd.size()) == rd) {
      record.remove_suffix(rd.size());
      *delimited = true;
      continue;
    }
    return record;
  }
}

// ("entity", name, type, description).
void AddEntityRecord(const std::vector<std::string>& fields, std::string_view record,
                     LightRagParse* out) {
  if (fields.size() < 4) {
    out->rejections.push_back("entity record has " + std::to_string(fields.size()) +
                              " fields, expected 4: " + Excerpt(record));
    return;
  }
  if (fields.size() > 4) AppendUnique(&out->repairs, "ignored extra fields");
  if (fields[1].empty()) {
    out->rejections.push_back("entity record with an empty name: " + Excerpt(record));
    return;
  }
  out->entities.push_back({fields[1], fields[2], fields[3]});
}

// ("relationship", source, target, description, keywords[, strength]).
void AddRelationshipRecord(const std::vector<std::string>& fields, std::string_view record,
                           LightRagParse* out) {
  if (fields.size() < 5) {
    out->rejections.push_back("relationship record has " + std::to_string(fields.size()) +
                              " fields, expected 6: " + Excerpt(record));
    return;
  }
  if (fields.size() > 6) AppendUnique(&out->repairs, "ignored extra fields");
  if (fields[1].empty() || fields[2].empty()) {
    out->rejections.push_back("relationship record with an empty endpoint: " + Excerpt(record));
    return;
  }
  LightRagRelationRecord rel{fields[1], fields[2], fields[3], fields[4], 1.0};
  if (fields.size() >= 6) {
    const std::string& s = fields[5];
    double v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size()) {
      rel.strength = v;
    } else {
      AppendUnique(&out->repairs, "non-numeric relationship strength read as 1");
    }
  }
  out->relationships.push_back(std::move(rel));
}

// ("content_keywords", "a, b", ...): every comma-separated keyword.
void AddContentKeywords(const std::vector<std::string>& fields, LightRagParse* out) {
  for (size_t f = 1; f < fields.size(); ++f) {
    std::string_view list = fields[f];
    size_t begin = 0;
    while (begin <= list.size()) {
      size_t comma = list.find(',', begin);
      if (comma == std::string_view::npos) comma = list.size();
      std::string kw = CleanField(list.substr(begin, comma - begin));
      if (!kw.empty()) out->content_keywords.push_back(std::move(kw));
      begin = comma + 1;
    }
  }
}

// One record, from its start to the next one's. `may_be_cut`: the last
// record of an answer cut off by the token limit without a completion
// delimiter, dropped unless a record delimiter ends it.
void AddRecord(std::string_view record, const LightRagFormat& format, bool may_be_cut,
               LightRagParse* out) {
  bool delimited = false;
  record = TrimRecordEnd(record, format.record_delimiter, &delimited);
  if (may_be_cut && !delimited) {
    out->rejections.push_back("record cut off by the token limit, dropped: " + Excerpt(record));
    return;
  }
  if (!record.empty() && record.back() == ')') {
    record.remove_suffix(1);
  } else {
    AppendUnique(&out->repairs, "accepted records without a closing parenthesis");
  }
  if (!record.empty() && record.front() == '(') record.remove_prefix(1);
  const std::vector<std::string> fields = SplitFields(record, format.tuple_delimiter);
  const std::string kind = ToLowerAscii(fields[0]);
  if (kind == "entity") {
    AddEntityRecord(fields, record, out);
  } else if (kind == "relationship") {
    AddRelationshipRecord(fields, record, out);
  } else {
    AddContentKeywords(fields, out);
  }
}

}  // namespace

Result<LightRagParse> ParseLightRagOutput(std::string_view content, const LightRagFormat& format,
                                          bool truncated) {
  LightRagParse out;
  const std::string_view body = BeforeCompletion(content, format, &out);
  const std::vector<RecordStart> starts =
      FindRecordStarts(body, format.tuple_delimiter, format.record_delimiter);
  if (starts.empty()) {
    if (!HasNonSpace(body)) return out;
    return Status::InvalidArgument("no LightRAG records (expected (\"entity\"" +
                                   format.tuple_delimiter +
                                   "...)) in the answer: " + Excerpt(body));
  }
  if (HasNonSpace(body.substr(0, starts[0].begin))) {
    AppendUnique(&out.repairs, "ignored text before the first record");
  }
  for (size_t k = 0; k < starts.size(); ++k) {
    const bool last_record = k + 1 == starts.size();
    const size_t end = last_record ? body.size() : starts[k + 1].begin;
    AddRecord(body.substr(starts[k].begin, end - starts[k].begin), format,
              truncated && !out.complete && last_record, &out);
  }
  return out;
}

}  // namespace flowrag
