// The MCP tools' calls over the Engine (tool_impl.h).
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
#include "mcp/tool_impl.h"
#include "mcp/tools.h"

namespace flowrag::mcp {
namespace {

using nlohmann::json;

// An error about unknown ids names at most this many of them.
constexpr size_t kListedIds = 5;

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

}  // namespace

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

  std::string text =
      std::to_string(r->passages.size()) + " passages (method " + r->method + "), best first:\n";
  json passages = json::array();
  std::vector<json> links;
  std::set<std::string> linked;
  for (size_t i = 0; i < r->passages.size(); ++i) {
    const ScoredPassage& p = r->passages[i];
    text += "\n[" + std::to_string(i + 1) + "] " + p.title + " (document \"" + p.document_id +
            "\", passage " + std::to_string(p.ordinal) + ", score " + FormatScore(p.score) + ")\n" +
            p.text + "\n";
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
  if (!e)
    e = in.Enum("pipeline", {"auto", "single", "cot", "decompose", "schema"}, &answer.pipeline);
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

  std::string text = a->text;
  if (!a->answered) text += " (the store holds no answer to this question)";
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
  json structured = {{"answer", a->text},
                     {"answered", a->answered},
                     {"confidence", a->confidence},
                     {"answerer", a->answerer},
                     {"pipeline", a->pipeline},
                     {"method", a->retrieval.method},
                     {"citations", std::move(citations)},
                     {"warnings", a->warnings}};
  return ToolSuccess(std::move(text), std::move(structured), links, options);
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
  std::string text = "indexed " + std::to_string(r->documents_seen) +
                     " document(s): " + std::to_string(r->documents_added) + " added, " +
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
    if (!engine.GetDocument(wanted.back()).ok())
      unknown.push_back(EscapeForMessage(wanted.back(), 80));
  }
  if (!unknown.empty()) {
    std::string list;
    for (size_t i = 0; i < unknown.size() && i < kListedIds; ++i) {
      list += (list.empty() ? "\"" : ", \"") + unknown[i] + "\"";
    }
    if (unknown.size() > kListedIds) {
      list += " and " + std::to_string(unknown.size() - kListedIds) + " more";
    }
    return ToolError("delete: ids: no such document " + list + "; nothing was deleted");
  }
  json deleted = json::array();
  for (const std::string& id : wanted) {
    Status st = engine.DeleteDocument(id);
    if (!st.ok() && st.code() != StatusCode::kNotFound) {  // a repeated id is gone already
      return ToolError("delete failed at \"" + EscapeForMessage(id, 80) + "\" (" +
                       std::to_string(deleted.size()) + " deleted before it): " + st.ToString());
    }
    if (st.ok()) deleted.push_back(id);
  }
  std::string text =
      "deleted " + std::to_string(deleted.size()) + " document(s): " + deleted.dump();
  return ToolSuccess(std::move(text), {{"deleted", std::move(deleted)}}, {}, options);
}

json CallStats(Engine& engine, const json& args, const ToolOptions& options) {
  ArgReader in("stats", args);
  if (auto e = in.RejectUnknown({})) return ToolError(e->message);
  Result<StoreStats> s = engine.Stats();
  if (!s.ok()) return EngineError("stats", s.status());
  json structured = json::parse(ToJson(*s));
  std::string text = "store " + s->path + ": " + std::to_string(s->documents) + " documents, " +
                     std::to_string(s->passages) + " passages, " + std::to_string(s->embeddings) +
                     " embeddings (" + s->dense_model + ")";
  for (const auto& [kind, n] : s->graph.nodes) text += "; " + std::to_string(n) + " " + kind;
  for (const auto& [kind, n] : s->graph.edges)
    text += "; " + std::to_string(n) + " " + kind + " edges";
  return ToolSuccess(std::move(text), std::move(structured), {}, options);
}

}  // namespace flowrag::mcp
