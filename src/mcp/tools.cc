#include "mcp/tools.h"

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "common/encoding.h"
#include "common/json_errors.h"
#include "flowrag/json.h"
#include "mcp/args.h"
#include "mcp/protocol.h"
#include "mcp/resources.h"

namespace flowrag::mcp {
namespace {

using nlohmann::json;

// ---- results ---------------------------------------------------------------

json TextContent(std::string text) { return {{"type", "text"}, {"text", std::move(text)}}; }

json ToolError(std::string text) {
  return {{"content", json::array({TextContent(std::move(text))})}, {"isError", true}};
}

json EngineError(std::string_view tool, const Status& status) {
  return ToolError(std::string(tool) + " failed: " + status.ToString());
}

// A successful result: the text for the model, and (from 2025-06-18) the
// same as structuredContent plus links to the documents it names.
json ToolSuccess(std::string text, json structured, const std::vector<json>& links,
                 const ToolOptions& options) {
  json content = json::array({TextContent(std::move(text))});
  json result;
  if (HasStructuredOutput(options.protocol_version)) {
    for (const json& link : links) content.push_back(link);
    result["structuredContent"] = std::move(structured);
  }
  result["content"] = std::move(content);
  result["isError"] = false;
  return result;
}

json ResourceLink(const std::string& document_id, const std::string& title) {
  return {{"type", "resource_link"},
          {"uri", DocumentUri(document_id)},
          {"name", title.empty() ? document_id : title},
          {"mimeType", "text/plain"}};
}

std::string FormatScore(double score) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", score);
  return buf;
}

// ---- schemas ---------------------------------------------------------------

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
  return {{"type", "integer"}, {"minimum", 1}, {"maximum", kMaxTopK}, {"default", 5},
          {"description", what}};
}

json PassagesOutputSchema() {
  json passage = ObjectSchema(
      {{"rank", {{"type", "integer"}}},
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

json DocumentSchema() {
  json id = Str("Document id; a stored document with this id is replaced");
  id["minLength"] = 1;
  json text = Str("The document's text (chunked into passages)");
  text["minLength"] = 1;
  return ObjectSchema({{"id", id}, {"title", Str("Title (default: the id)")}, {"text", text}},
                      {"id", "text"});
}

// ---- tools -----------------------------------------------------------------

struct Tool {
  const char* name;
  const char* title;
  const char* description;
  bool writes;
  json (*input_schema)();
  json (*output_schema)();  // null: none
  json annotations;
  json (*call)(Engine&, const json& args, const ToolOptions&);
};

json CallQuery(Engine& engine, const json& args, const ToolOptions& options) {
  ArgReader in("query", args);
  std::string question;
  QueryOptions query;
  int64_t top_k = static_cast<int64_t>(query.top_k);
  std::optional<ArgError> e = in.RejectUnknown({"question", "method", "top_k", "params"});
  if (!e) e = in.String("question", true, kMaxQuestionBytes, &question, /*non_blank=*/true);
  if (!e) e = in.Enum("method", Engine::Methods(), &query.method);
  if (!e) e = in.Integer("top_k", 1, kMaxTopK, &top_k);
  if (!e) e = in.Params("params", &query.params);
  if (e) return ToolError(e->message);
  query.top_k = static_cast<size_t>(top_k);
  Result<RetrievalResult> r = engine.Query(question, query);
  if (!r.ok()) return EngineError("query", r.status());

  std::string text = std::to_string(r->passages.size()) + " passages (method " + r->method +
                     "), best first:\n";
  json passages = json::array();
  std::vector<json> links;
  std::set<std::string> linked;
  for (size_t i = 0; i < r->passages.size(); ++i) {
    const ScoredPassage& p = r->passages[i];
    text += "\n[" + std::to_string(i + 1) + "] " + p.title + " (document \"" + p.document_id +
            "\", passage " + std::to_string(p.ordinal) + ", score " + FormatScore(p.score) +
            ")\n" + p.text + "\n";
    passages.push_back({{"rank", i + 1},
                        {"document_id", p.document_id},
                        {"title", p.title},
                        {"ordinal", p.ordinal},
                        {"passage_id", p.passage_id},
                        {"score", p.score},
                        {"text", p.text},
                        {"uri", DocumentUri(p.document_id)}});
    if (linked.insert(p.document_id).second) links.push_back(ResourceLink(p.document_id, p.title));
  }
  json structured = {{"method", r->method},
                     {"time_ms", r->diagnostics.time_ms},
                     {"passages", std::move(passages)}};
  return ToolSuccess(std::move(text), std::move(structured), links, options);
}

json CallAsk(Engine& engine, const json& args, const ToolOptions& options) {
  ArgReader in("ask", args);
  std::string question;
  AnswerOptions answer;
  int64_t top_k = static_cast<int64_t>(answer.query.top_k);
  int64_t max_steps = static_cast<int64_t>(answer.max_steps);
  std::optional<ArgError> e =
      in.RejectUnknown({"question", "pipeline", "method", "top_k", "max_steps", "params"});
  if (!e) e = in.String("question", true, kMaxQuestionBytes, &question, /*non_blank=*/true);
  if (!e) e = in.Enum("pipeline", {"auto", "single", "cot", "decompose", "schema"}, &answer.pipeline);
  if (!e) e = in.Enum("method", Engine::Methods(), &answer.query.method);
  if (!e) e = in.Integer("top_k", 1, kMaxTopK, &top_k);
  if (!e) e = in.Integer("max_steps", 1, 10, &max_steps);
  if (!e) e = in.Params("params", &answer.query.params);
  if (e) return ToolError(e->message);
  answer.query.top_k = static_cast<size_t>(top_k);
  answer.max_steps = static_cast<size_t>(max_steps);
  if (Status st = answer.Validate(); !st.ok()) return ToolError("ask: " + st.message());
  Result<Answer> a = engine.Ask(question, answer);
  if (!a.ok()) return EngineError("ask", a.status());

  std::string text = a->answered ? a->text : "Insufficient information: " + a->text;
  json citations = json::array();
  std::vector<json> links;
  std::set<std::string> linked;
  if (!a->citations.empty()) text += "\n\nCitations:";
  for (const Citation& c : a->citations) {
    text += "\n[" + std::to_string(c.marker) + "] " + c.title + " (document \"" + c.document_id +
            "\"): \"" + c.quote + "\"";
    citations.push_back({{"marker", c.marker},
                         {"document_id", c.document_id},
                         {"title", c.title},
                         {"quote", c.quote},
                         {"uri", DocumentUri(c.document_id)}});
    if (linked.insert(c.document_id).second) links.push_back(ResourceLink(c.document_id, c.title));
  }
  for (const std::string& w : a->warnings) text += "\nwarning: " + w;
  json structured = {{"answer", a->text},           {"answered", a->answered},
                     {"confidence", a->confidence}, {"answerer", a->answerer},
                     {"pipeline", a->pipeline},     {"method", a->retrieval.method},
                     {"citations", std::move(citations)}, {"warnings", a->warnings}};
  return ToolSuccess(std::move(text), std::move(structured), links, options);
}

// One document of index_text: {id, title?, text} at `prefix` ("" or "documents[2].").
std::optional<ArgError> ReadDocument(const ArgReader& top, const json& object,
                                     const std::string& prefix, DocumentInput* doc) {
  if (!object.is_object()) {
    return top.Error(prefix.substr(0, prefix.size() - 1),
                     "expected an object {id, title, text}, got " + DescribeJsonType(object));
  }
  for (const char* f : {"id", "title", "text"}) {
    auto it = object.find(f);
    if (it == object.end() || it->is_null()) continue;
    if (!it->is_string()) {
      return top.Error(prefix + f, "expected a string, got " + DescribeJsonType(*it));
    }
  }
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (it.key() != "id" && it.key() != "title" && it.key() != "text") {
      return top.Error(prefix + EscapeForMessage(it.key(), 60),
                       "unknown argument (known: id, title, text)");
    }
  }
  auto get = [&object](const char* f) {
    auto it = object.find(f);
    return it == object.end() || it->is_null() ? std::string() : it->get<std::string>();
  };
  doc->id = get("id");
  doc->title = get("title");
  doc->text = get("text");
  if (doc->id.empty()) return top.Error(prefix + "id", "required non-empty string is missing");
  if (doc->id.size() > kMaxIdBytes) {
    return top.Error(prefix + "id", "longer than " + std::to_string(kMaxIdBytes) + " bytes");
  }
  if (doc->text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return top.Error(prefix + "text", "required non-empty string is missing");
  }
  if (doc->title.empty()) doc->title = doc->id;
  return std::nullopt;
}

std::optional<ArgError> ReadDocuments(const ArgReader& in, const json& args,
                                      std::vector<DocumentInput>* docs) {
  auto list = args.find("documents");
  const bool has_list = list != args.end() && !list->is_null();
  const bool has_single = args.contains("id") || args.contains("text") || args.contains("title");
  if (has_list && has_single) {
    return in.Error("documents", "give either documents or id/title/text, not both");
  }
  if (!has_list) {
    if (!has_single) return in.Error("text", "required: id and text, or documents");
    json single = json::object();
    for (const char* f : {"id", "title", "text"}) {
      if (args.contains(f)) single[f] = args[f];
    }
    docs->emplace_back();
    return ReadDocument(in, single, "", &docs->back());
  }
  if (!list->is_array() || list->empty() || list->size() > kMaxDocuments) {
    return in.Error("documents", "expected an array of 1 to " + std::to_string(kMaxDocuments) +
                                     " {id, title, text} objects, got " +
                                     (list->is_array() ? std::to_string(list->size()) + " items"
                                                       : DescribeJsonType(*list)));
  }
  for (size_t i = 0; i < list->size(); ++i) {
    docs->emplace_back();
    const std::string prefix = "documents[" + std::to_string(i) + "].";
    if (auto e = ReadDocument(in, (*list)[i], prefix, &docs->back())) return e;
  }
  return std::nullopt;
}

json CallIndexText(Engine& engine, const json& args, const ToolOptions& options) {
  ArgReader in("index_text", args);
  std::vector<DocumentInput> docs;
  IndexOptions index;
  std::string chunking;
  std::optional<ArgError> e = in.RejectUnknown({"id", "title", "text", "documents", "chunking"});
  if (!e) e = in.Enum("chunking", {"window", "boundary", "none"}, &chunking);
  if (!e) e = ReadDocuments(in, args, &docs);
  if (e) return ToolError(e->message);
  if (!chunking.empty()) index.chunking.strategy = *ParseChunkStrategy(chunking);
  Result<IndexReport> r = engine.IndexDocuments(docs, index);
  if (!r.ok()) return EngineError("index_text", r.status());
  std::string text = "indexed " + std::to_string(r->documents_seen) + " document(s): " +
                     std::to_string(r->documents_added) + " added, " +
                     std::to_string(r->documents_replaced) + " replaced, " +
                     std::to_string(r->documents_unchanged) + " unchanged; " +
                     std::to_string(r->passages_added) + " passages added";
  for (const std::string& m : r->messages) text += "\n" + m;
  json ids = json::array();
  std::vector<json> links;
  for (const DocumentInput& d : docs) {
    ids.push_back(d.id);
    links.push_back(ResourceLink(d.id, d.title));
  }
  json structured = {{"documents", std::move(ids)},
                     {"documents_added", r->documents_added},
                     {"documents_replaced", r->documents_replaced},
                     {"documents_unchanged", r->documents_unchanged},
                     {"passages_added", r->passages_added},
                     {"entities_created", r->entities_created},
                     {"facts_created", r->facts_created},
                     {"seconds", r->total_seconds}};
  return ToolSuccess(std::move(text), std::move(structured), links, options);
}

json CallDelete(Engine& engine, const json& args, const ToolOptions& options) {
  ArgReader in("delete", args);
  if (auto e = in.RejectUnknown({"ids"})) return ToolError(e->message);
  auto ids = args.find("ids");
  if (ids == args.end() || ids->is_null()) {
    return ToolError(in.Error("ids", "required array of document ids is missing").message);
  }
  if (!ids->is_array() || ids->empty() || ids->size() > kMaxDocuments) {
    return ToolError(in.Error("ids", "expected an array of 1 to " + std::to_string(kMaxDocuments) +
                                         " document ids, got " + Excerpt(*ids))
                         .message);
  }
  std::vector<std::string> wanted;
  std::vector<std::string> unknown;
  for (size_t i = 0; i < ids->size(); ++i) {
    const json& id = (*ids)[i];
    if (!id.is_string() || id.get_ref<const std::string&>().empty()) {
      return ToolError(in.Error("ids[" + std::to_string(i) + "]",
                                "expected a non-empty string, got " + Excerpt(id))
                           .message);
    }
    wanted.push_back(id.get<std::string>());
    if (!engine.GetDocument(wanted.back()).ok()) unknown.push_back(EscapeForMessage(wanted.back(), 80));
  }
  if (!unknown.empty()) {
    std::string list;
    for (const std::string& u : unknown) list += (list.empty() ? "\"" : ", \"") + u + "\"";
    return ToolError("delete: ids: no such document " + list + "; nothing was deleted");
  }
  json deleted = json::array();
  for (const std::string& id : wanted) {
    Status st = engine.DeleteDocument(id);
    if (!st.ok() && st.code() != StatusCode::kNotFound) {  // a repeated id is gone already
      return ToolError("delete failed at \"" + EscapeForMessage(id, 80) + "\" (deleted before it: " +
                       deleted.dump() + "): " + st.ToString());
    }
    if (st.ok()) deleted.push_back(id);
  }
  std::string text = "deleted " + std::to_string(deleted.size()) + " document(s): " + deleted.dump();
  return ToolSuccess(std::move(text), {{"deleted", std::move(deleted)}}, {}, options);
}

json CallStats(Engine& engine, const json& args, const ToolOptions& options) {
  ArgReader in("stats", args);
  if (auto e = in.RejectUnknown({})) return ToolError(e->message);
  Result<StoreStats> s = engine.Stats();
  if (!s.ok()) return EngineError("stats", s.status());
  json structured = json::parse(ToJson(*s));
  std::string text = "store " + s->path + ": " + std::to_string(s->documents) + " documents, " +
                     std::to_string(s->passages) + " passages, " +
                     std::to_string(s->embeddings) + " embeddings (" + s->dense_model + ")";
  for (const auto& [kind, n] : s->graph.nodes) text += "; " + std::to_string(n) + " " + kind;
  for (const auto& [kind, n] : s->graph.edges) text += "; " + std::to_string(n) + " " + kind + " edges";
  return ToolSuccess(std::move(text), std::move(structured), {}, options);
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
  schema["properties"]["max_steps"] = {{"type", "integer"}, {"minimum", 1}, {"maximum", 10},
                                       {"default", 3}, {"description", "cot: retrieval rounds"}};
  return schema;
}

json IndexInput() {
  json schema = DocumentSchema();
  schema.erase("required");
  schema["properties"]["documents"] = {{"type", "array"},
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

json Hints(bool read_only, bool destructive, bool idempotent) {
  return {{"readOnlyHint", read_only},
          {"destructiveHint", destructive},
          {"idempotentHint", idempotent},
          {"openWorldHint", false}};
}

const std::vector<Tool>& Tools() {
  static const std::vector<Tool> tools = {
      {"query", "Search the store",
       "Retrieve the passages of the flowrag store that best answer a question, ranked, with "
       "their document ids, titles and scores. Use it to gather evidence; `ask` answers "
       "directly.",
       false, QueryInput, PassagesOutputSchema, Hints(true, false, true), CallQuery},
      {"ask", "Answer with citations",
       "Answer a question from the flowrag store: retrieves passages, then answers with the "
       "cited sentences (document id, title, quote). Multi-hop questions: pipeline cot.",
       false, AskInput, AnswerOutputSchema, Hints(true, false, true), CallAsk},
      {"index_text", "Add documents",
       "Store and index text documents ({id, title, text}, or a list in `documents`): chunked, "
       "embedded and linked into the knowledge graph, searchable as soon as this returns. A "
       "document with an existing id replaces it; unchanged text is skipped.",
       true, IndexInput, IndexOutput, Hints(false, true, true), CallIndexText},
      {"delete", "Delete documents",
       "Remove documents by id, with their passages and what only they supported in the "
       "knowledge graph. Unknown ids fail the call and nothing is deleted.",
       true, DeleteInput, DeleteOutput, Hints(false, true, true), CallDelete},
      {"stats", "Store statistics",
       "Counts of the store: documents, passages, embeddings, knowledge-graph nodes and edges "
       "per kind, index runs, size.",
       false, StatsInput, StatsOutput, Hints(true, false, true), CallStats},
  };
  return tools;
}

std::string ToolNames(const ToolOptions& options) {
  std::string names;
  for (const Tool& t : Tools()) {
    if (t.writes && !options.allow_writes) continue;
    names += (names.empty() ? "" : ", ") + std::string(t.name);
  }
  return names;
}

}  // namespace

json ListTools(const ToolOptions& options) {
  const bool v2 = HasStructuredOutput(options.protocol_version);
  json tools = json::array();
  for (const Tool& t : Tools()) {
    if (t.writes && !options.allow_writes) continue;
    json tool = {{"name", t.name}, {"description", t.description}, {"inputSchema", t.input_schema()}};
    json annotations = t.annotations;
    annotations["title"] = t.title;
    if (v2) {
      tool["title"] = t.title;
      if (t.output_schema != nullptr) tool["outputSchema"] = t.output_schema();
    }
    tool["annotations"] = std::move(annotations);
    tools.push_back(std::move(tool));
  }
  return {{"tools", std::move(tools)}};
}

std::optional<RpcError> CallTool(Engine& engine, const json& params, const ToolOptions& options,
                                 json* result) {
  auto name = params.find("name");
  if (name == params.end() || !name->is_string()) {
    return InvalidParams("invalid params: \"name\": required string (the tool) is missing", "name");
  }
  const json empty = json::object();
  const json* args = &empty;
  if (auto a = params.find("arguments"); a != params.end() && !a->is_null()) {
    if (!a->is_object()) {
      return InvalidParams("invalid params: \"arguments\": expected an object, got " +
                               DescribeJsonType(*a),
                           "arguments");
    }
    args = &*a;
  }
  const std::string& tool_name = name->get_ref<const std::string&>();
  for (const Tool& t : Tools()) {
    if (tool_name != t.name) continue;
    if (t.writes && !options.allow_writes) {
      RpcError e = InvalidParams("invalid params: tool \"" + tool_name +
                                     "\" is not available: the store is served read-only",
                                 "name");
      e.data["tool"] = tool_name;
      return e;
    }
    *result = t.call(engine, *args, options);
    return std::nullopt;
  }
  RpcError e = InvalidParams("invalid params: unknown tool \"" + EscapeForMessage(tool_name, 60) +
                                 "\" (tools: " + ToolNames(options) + ")",
                             "name");
  e.data["tool"] = tool_name;
  return e;
}

}  // namespace flowrag::mcp
