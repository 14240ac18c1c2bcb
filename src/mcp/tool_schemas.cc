// The JSON Schemas of the MCP tools (tool_impl.h).
#include <string>
#include <vector>

#include "flowrag/engine.h"
#include "mcp/tool_impl.h"
#include "mcp/tools.h"

namespace flowrag::mcp {
namespace {

using nlohmann::json;

json Str(std::string description) { return {{"type", "string"}, {"description", description}}; }

json ObjectSchema(json properties, std::vector<std::string> required) {
  json schema = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) schema["required"] = std::move(required);
  schema["additionalProperties"] = false;
  return schema;
}

json QuestionSchema() {
  json q = Str("The question, in natural language");
  q["minLength"] = 1;
  q["maxLength"] = kMaxQuestionBytes;
  return q;
}

json MethodSchema() {
  return {{"type", "string"},
          {"enum", Engine::Methods()},
          {"default", "auto"},
          {"description",
           "Retrieval method: auto (qafd over a knowledge graph, else hybrid), bm25, dense, "
           "hybrid, or a graph method (qafd, ppr, semflow, sa, onehop)"}};
}

json TopKSchema(const char* what) {
  return {{"type", "integer"},
          {"minimum", 1},
          {"maximum", kMaxTopK},
          {"default", 5},
          {"description", what}};
}

json DocumentSchema() {
  json id = Str("Document id; a stored document with this id is replaced");
  id["minLength"] = 1;
  json text = Str("The document's text (chunked into passages)");
  text["minLength"] = 1;
  return ObjectSchema({{"id", id}, {"title", Str("Title (default: the id)")}, {"text", text}},
                      {"id", "text"});
}

}  // namespace

json PassagesOutputSchema() {
  json passage = ObjectSchema({{"rank", {{"type", "integer"}}},
                               {"document_id", {{"type", "string"}}},
                               {"title", {{"type", "string"}}},
                               {"ordinal", {{"type", "integer"}}},
                               {"passage_id", {{"type", "integer"}}},
                               {"score", {{"type", "number"}}},
                               {"text", {{"type", "string"}}},
                               {"uri", {{"type", "string"}}}},
                              {"rank", "document_id", "title", "score", "text", "uri"});
  return ObjectSchema({{"method", {{"type", "string"}}},
                       {"time_ms", {{"type", "number"}}},
                       {"passages", {{"type", "array"}, {"items", passage}}}},
                      {"method", "passages"});
}

json AnswerOutputSchema() {
  json citation = ObjectSchema({{"marker", {{"type", "integer"}}},
                                {"document_id", {{"type", "string"}}},
                                {"title", {{"type", "string"}}},
                                {"quote", {{"type", "string"}}},
                                {"uri", {{"type", "string"}}}},
                               {"marker", "document_id", "quote"});
  return ObjectSchema({{"answer", {{"type", "string"}}},
                       {"answered", {{"type", "boolean"}}},
                       {"confidence", {{"type", "number"}}},
                       {"answerer", {{"type", "string"}}},
                       {"pipeline", {{"type", "string"}}},
                       {"method", {{"type", "string"}}},
                       {"citations", {{"type", "array"}, {"items", citation}}},
                       {"warnings", {{"type", "array"}, {"items", {{"type", "string"}}}}}},
                      {"answer", "answered", "citations"});
}

json QueryInput() {
  return ObjectSchema(
      {{"question", QuestionSchema()},
       {"method", MethodSchema()},
       {"top_k", TopKSchema("Passages to return")},
       {"params",
        {{"type", "object"},
         {"additionalProperties", {{"type", {"string", "number", "boolean"}}}},
         {"description",
          "Per-query options of the method, e.g. {\"qafd.alpha\": 50, \"bm25.k1\": 0.9} "
          "(`flowrag methods` lists them with their defaults)"}}}},
      {"question"});
}

json AskInput() {
  json schema = QueryInput();
  schema["properties"]["top_k"] = TopKSchema("Passages retrieved per round");
  schema["properties"]["pipeline"] = {
      {"type", "string"},
      {"enum", {"auto", "single", "cot", "decompose", "schema"}},
      {"default", "auto"},
      {"description",
       "single: retrieve once and answer; cot: up to max_steps rounds, each following the "
       "bridge entity the evidence names; decompose: sub-questions first; schema: the "
       "schema-guided agent (stores built by `flowrag ingest`); auto: schema when the store "
       "has a contract, else single"}};
  schema["properties"]["max_steps"] = {{"type", "integer"},
                                       {"minimum", 1},
                                       {"maximum", 10},
                                       {"default", 3},
                                       {"description", "cot: retrieval rounds"}};
  return schema;
}

json IndexInput() {
  json schema = DocumentSchema();
  schema.erase("required");
  schema["properties"]["documents"] = {
      {"type", "array"},
      {"minItems", 1},
      {"maxItems", kMaxDocuments},
      {"items", DocumentSchema()},
      {"description", "Several documents (instead of id/title/text)"}};
  schema["properties"]["chunking"] = {{"type", "string"},
                                      {"enum", {"window", "boundary", "none"}},
                                      {"default", "window"},
                                      {"description",
                                       "window: 500-word windows, 200 overlap; boundary: "
                                       "sections and paragraphs; none: one passage"}};
  return schema;
}

json DeleteInput() {
  return ObjectSchema({{"ids",
                        {{"type", "array"},
                         {"minItems", 1},
                         {"maxItems", kMaxDocuments},
                         {"items", {{"type", "string"}, {"minLength", 1}}},
                         {"description", "Document ids (as query results name them)"}}}},
                      {"ids"});
}

json StatsInput() { return ObjectSchema(json::object(), {}); }

json IndexOutput() {
  return ObjectSchema({{"documents", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                       {"documents_added", {{"type", "integer"}}},
                       {"documents_replaced", {{"type", "integer"}}},
                       {"documents_unchanged", {{"type", "integer"}}},
                       {"passages_added", {{"type", "integer"}}},
                       {"entities_created", {{"type", "integer"}}},
                       {"facts_created", {{"type", "integer"}}},
                       {"seconds", {{"type", "number"}}}},
                      {"documents", "documents_added"});
}

json DeleteOutput() {
  return ObjectSchema({{"deleted", {{"type", "array"}, {"items", {{"type", "string"}}}}}},
                      {"deleted"});
}

json StatsOutput() {
  json schema = {{"type", "object"},
                 {"properties",
                  {{"documents", {{"type", "integer"}}},
                   {"passages", {{"type", "integer"}}},
                   {"graph", {{"type", "object"}}}}},
                 {"required", {"documents", "passages"}}};
  return schema;
}

}  // namespace flowrag::mcp
