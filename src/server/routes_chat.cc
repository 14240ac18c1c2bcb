// The OpenAI-compatible API (doc/http_api.md, "OpenAI-compatible chat"):
// POST /v1/chat/completions answers the last user message of a
// conversation with Engine::Ask (earlier turns are the conversation so far;
// the model "flowrag-<method>" picks the retriever), and GET /v1/models
// lists those models. Any OpenAI client, with its base URL set to /v1 (or
// /v1/w/{ws} for a workspace), can use flowrag as a retrieval-augmented
// model; the answer's citations come back in the message text (a
// "Sources:" list) and whole in the "flowrag" extension field. A follow-up
// question ("Where was he born?") is retrieved and answered as the
// standalone question the conversation makes of it (agent/followup.h:
// offline, or by the chat model); the response shows that query.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>
#include <string>

#include "agent/followup.h"
#include "common/encoding.h"
#include "common/text.h"
#include "models/chat_setup.h"
#include "engine/result_json.h"
#include "server/handlers.h"
#include "server/request_json.h"
#include "server/sse.h"

namespace flowrag::server {
namespace {

constexpr std::string_view kModelPrefix = "flowrag-";
constexpr size_t kMaxMessages = 256;

// The conversation of a request: the question (last user message) and the
// turns before it.
struct Conversation {
  std::string question;
  std::vector<ChatMessage> earlier;
};

// messages[i].content: a string, null, or an array of text parts.
std::optional<ApiError> ReadContent(const nlohmann::json& message, const std::string& path,
                                    std::string* out) {
  auto it = message.find("content");
  if (it == message.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) {
    *out = it->get<std::string>();
    return std::nullopt;
  }
  if (!it->is_array()) {
    return BadRequest(path + ".content: expected a string or an array of text parts", "messages");
  }
  for (size_t j = 0; j < it->size(); ++j) {
    const nlohmann::json& part = (*it)[j];
    const std::string where = path + ".content[" + std::to_string(j) + "]";
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
        !part["text"].is_string()) {
      return BadRequest(where + ": only {\"type\": \"text\", \"text\": \"...\"} parts are supported",
                        "messages");
    }
    if (!out->empty()) out->push_back('\n');
    *out += part["text"].get<std::string>();
  }
  return std::nullopt;
}

std::optional<ApiError> ReadConversation(const nlohmann::json& request, Conversation* c) {
  auto it = request.find("messages");
  if (it == request.end() || !it->is_array() || it->empty()) {
    return BadRequest("messages: expected a non-empty array of {role, content}", "messages");
  }
  if (it->size() > kMaxMessages) {
    return BadRequest("messages: more than " + std::to_string(kMaxMessages) + " messages",
                      "messages");
  }
  std::vector<ChatMessage> all;
  for (size_t i = 0; i < it->size(); ++i) {
    const nlohmann::json& m = (*it)[i];
    const std::string path = "messages[" + std::to_string(i) + "]";
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      return BadRequest(path + ": expected an object with a string \"role\"", "messages");
    }
    ChatMessage message{m["role"].get<std::string>(), ""};
    if (auto e = ReadContent(m, path, &message.content)) return e;
    all.push_back(std::move(message));
  }
  size_t last_user = all.size();
  for (size_t i = all.size(); i-- > 0;) {
    if (all[i].role == "user") {
      last_user = i;
      break;
    }
  }
  if (last_user == all.size() ||
      all[last_user].content.find_first_not_of(" \t\r\n") == std::string::npos) {
    return BadRequest(
        "messages: no user message with text (the last user message is the question)",
        "messages");
  }
  c->question = std::move(all[last_user].content);
  all.resize(last_user);
  c->earlier = std::move(all);
  return std::nullopt;
}

// model "flowrag" (the store's default method) or "flowrag-<method>".
std::optional<ApiError> ReadModel(const nlohmann::json& request, std::string* model,
                                  std::string* method) {
  if (auto e = ReadString(request, "model", "model", true, model)) return e;
  if (*model == "flowrag") {
    *method = "auto";
    return std::nullopt;
  }
  if (model->rfind(kModelPrefix, 0) == 0) {
    *method = model->substr(kModelPrefix.size());
    for (const std::string& m : Engine::Methods()) {
      if (m == *method) return std::nullopt;
    }
  }
  return ApiError{404, "model_not_found",
                  "model \"" + EscapeForMessage(*model, 60) +
                      "\" does not exist (GET /v1/models lists flowrag and flowrag-<method>)",
                  "model"};
}

// The /v1/query request the chat request amounts to: its "flowrag"
// extension object (the /v1/query fields but question, method and stream),
// with the question and the model's method.
std::optional<ApiError> QueryOfChat(const nlohmann::json& request, const Conversation& c,
                                    const std::string& method, nlohmann::json* query) {
  *query = nlohmann::json::object();
  if (auto it = request.find("flowrag"); it != request.end() && !it->is_null()) {
    if (!it->is_object()) return BadRequest("flowrag: expected an object", "flowrag");
    for (const char* reserved : {"question", "method", "stream"}) {
      if (it->contains(reserved)) {
        return BadRequest(std::string("flowrag.") + reserved +
                              ": set by the chat request itself (messages, model, stream)",
                          std::string("flowrag.") + reserved);
      }
    }
    *query = *it;
    query->erase("rewrite");  // the chat request's own (ReadRewriteMode)
  }
  (*query)["question"] = c.question;
  (*query)["method"] = method;
  return std::nullopt;
}

struct ChatRequestParts {
  std::string model;
  bool stream = false;
  bool include_usage = false;
  std::string question;
  AnswerOptions options;
  std::string rewrite = "auto";  // flowrag.rewrite: "auto", "offline" or "off"
};

// flowrag.rewrite: how a follow-up question becomes the retrieval query.
std::optional<ApiError> ReadRewriteMode(const nlohmann::json& request, std::string* mode) {
  auto it = request.find("flowrag");
  if (it == request.end() || !it->is_object()) return std::nullopt;
  auto r = it->find("rewrite");
  if (r == it->end() || r->is_null()) return std::nullopt;
  if (r->is_string()) {
    const std::string v = r->get<std::string>();
    if (v == "auto" || v == "offline" || v == "off") {
      *mode = v;
      return std::nullopt;
    }
  }
  return BadRequest("flowrag.rewrite: expected \"auto\", \"offline\" or \"off\"",
                    "flowrag.rewrite");
}

std::optional<ApiError> ParseChatRequest(const nlohmann::json& request, double max_deadline_ms,
                                         ChatRequestParts* out) {
  std::string method;
  if (auto e = ReadModel(request, &out->model, &method)) return e;
  Conversation c;
  if (auto e = ReadConversation(request, &c)) return e;
  if (auto e = ReadBoolean(request, "stream", &out->stream)) return e;
  if (auto it = request.find("stream_options"); it != request.end() && it->is_object()) {
    if (auto e = ReadBoolean(*it, "include_usage", &out->include_usage)) return e;
  }
  int64_t n = 1;
  if (auto e = ReadInteger(request, "n", 1, 1, &n)) return e;
  if (auto e = ReadRewriteMode(request, &out->rewrite)) return e;
  nlohmann::json query;
  if (auto e = QueryOfChat(request, c, method, &query)) return e;
  if (auto e = ParseQueryRequest(query, max_deadline_ms, &out->question, &out->options)) {
    if (e->field != "question" && e->field != "method") e->field = "flowrag." + e->field;
    return e;
  }
  out->options.conversation = std::move(c.earlier);
  return std::nullopt;
}

// What the follow-up rewriter may ask this engine: a BM25 search, and the
// graph's type of an entity of that name.
FollowUpLookup LookupOf(const Engine& engine) {
  FollowUpLookup lookup;
  lookup.passages = [&engine](std::string_view text,
                              size_t k) -> Result<std::vector<ScoredPassage>> {
    QueryOptions q;
    q.method = "bm25";
    q.top_k = k;
    FLOWRAG_ASSIGN_OR_RETURN(RetrievalResult r, engine.Query(text, q));
    return std::move(r.passages);
  };
  Result<std::shared_ptr<const GraphView>> loaded = engine.Graph();
  if (!loaded.ok()) return lookup;  // the query reports the load's error
  lookup.entity_type = [graph = std::move(loaded).value()](std::string_view name) -> std::string {
    const std::string key = EntityKey(name);
    for (const GraphEntityInfo& e : graph->FindEntities(name, 3)) {
      if (EntityKey(e.name) == key) return e.type;
    }
    return "";
  };
  return lookup;
}

// The retrieval query of the request: the question, or the standalone form
// of a follow-up (flowrag.rewrite "auto": by `model` when there is one).
QueryRewrite RewriteOf(const Engine& engine, const ChatRequestParts& parts, ChatModel* model) {
  if (parts.rewrite == "off") {
    QueryRewrite r;
    r.query = parts.question;
    r.reason = "flowrag.rewrite is \"off\"";
    return r;
  }
  return RewriteFollowUp(parts.question, parts.options.conversation, LookupOf(engine),
                         parts.rewrite == "auto" ? model : nullptr);
}

// The rewrite in the flowrag extension field.
nlohmann::json RewriteJson(const QueryRewrite& r, const std::string& question) {
  nlohmann::json references = nlohmann::json::array();
  for (const ResolvedReference& ref : r.references) {
    references.push_back({{"text", ref.text}, {"target", ref.target}});
  }
  return {{"method", r.method},
          {"question", question},
          {"query", r.query},
          {"references", std::move(references)},
          {"reason", r.reason}};
}

// The answer's usage and warnings with the rewrite's added.
void AddRewrite(const QueryRewrite& r, Answer* answer) {
  answer->usage.llm_calls += r.usage.llm_calls;
  answer->usage.cache_hits += r.usage.cache_hits;
  answer->usage.prompt_tokens += r.usage.prompt_tokens;
  answer->usage.completion_tokens += r.usage.completion_tokens;
  answer->usage.cost_usd += r.usage.cost_usd;
  answer->warnings.insert(answer->warnings.begin(), r.warnings.begin(), r.warnings.end());
}

nlohmann::json AnswerJsonWithRewrite(const Answer& answer, const QueryRewrite& r,
                                     const std::string& question) {
  nlohmann::json j = AnswerJson(answer);
  j["retrieval_query"] = r.query;
  j["rewrite"] = RewriteJson(r, question);
  return j;
}

// "\n\nSearched for: <query>" after the sources when the query is not the
// question as written, so a chat front-end shows what was retrieved.
std::string SearchedText(const QueryRewrite& r) {
  return r.rewritten() ? "\n\nSearched for: " + r.query : "";
}

std::string CompletionId() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = std::random_device{}();
  char id[48];
  std::snprintf(id, sizeof(id), "chatcmpl-%016llx%06llx", static_cast<unsigned long long>(salt),
                static_cast<unsigned long long>(counter.fetch_add(1) & 0xFFFFFF));
  return id;
}

// "\n\nSources:\n[1] Title (document id)\n..." for the cited passages.
std::string SourcesText(const Answer& answer) {
  std::string out;
  std::vector<int64_t> listed;
  for (const Citation& c : answer.citations) {
    if (std::find(listed.begin(), listed.end(), c.passage_id) != listed.end()) continue;
    listed.push_back(c.passage_id);
    out += "\n[" + std::to_string(c.marker) + "] " + (c.title.empty() ? c.document_id : c.title);
    if (!c.title.empty() && c.title != c.document_id) out += " (" + c.document_id + ")";
  }
  return out.empty() ? out : "\n\nSources:" + out;
}

nlohmann::json Usage(const Answer& a) {
  return {{"prompt_tokens", a.usage.prompt_tokens},
          {"completion_tokens", a.usage.completion_tokens},
          {"total_tokens", a.usage.prompt_tokens + a.usage.completion_tokens}};
}

// The envelope of a completion (object "chat.completion") or of a chunk.
nlohmann::json Envelope(const std::string& id, const std::string& model, const char* object,
                        int64_t created) {
  return {{"id", id}, {"object", object}, {"created", created}, {"model", model}};
}

nlohmann::json Chunk(const nlohmann::json& envelope, nlohmann::json delta,
                     const nlohmann::json& finish_reason) {
  nlohmann::json c = envelope;
  c["choices"] = nlohmann::json::array(
      {{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", finish_reason}}});
  return c;
}

// Streams the answer as chat.completion.chunk events, then "[DONE]".
class ChunkObserver final : public AnswerObserver {
 public:
  ChunkObserver(const StreamWriter* write, nlohmann::json envelope)
      : write_(write), envelope_(std::move(envelope)) {}
  bool OnRetrieval(const RetrievalResult&) override { return Start(); }
  bool OnText(std::string_view piece) override {
    return Start() && Send(Chunk(envelope_, {{"content", std::string(piece)}}, nullptr));
  }
  // The first chunk (the role), once the retrieval is done: a request the
  // engine refuses before it gets its error reply instead of a stream.
  bool Start() {
    if (started_) return !gone_;
    started_ = true;
    nlohmann::json first = Chunk(envelope_, {{"role", "assistant"}, {"content", ""}}, nullptr);
    if (!first_flowrag_.is_null()) first["flowrag"] = first_flowrag_;
    return Send(first);
  }
  // A "flowrag" object the first chunk carries (the retrieval query).
  void set_first_flowrag(nlohmann::json flowrag) { first_flowrag_ = std::move(flowrag); }
  bool started() const { return started_; }
  bool Send(const nlohmann::json& data) {
    if (!gone_) gone_ = !(*write_)(SseEvent("", data));
    return !gone_;
  }
  void Done() {
    if (!gone_) gone_ = !(*write_)("data: [DONE]\n\n");
  }
  const nlohmann::json& envelope() const { return envelope_; }
  bool gone() const { return gone_; }

 private:
  const StreamWriter* write_;
  nlohmann::json envelope_;
  bool gone_ = false;
  bool started_ = false;
  nlohmann::json first_flowrag_;
};

Reply StreamedCompletion(const Engine& engine, ChatRequestParts parts, ChatModel* rewriter) {
  Reply reply;
  reply.stream = [&engine, parts = std::move(parts), rewriter](const StreamWriter& write,
                                                               Reply* refused) {
    const int64_t created = std::time(nullptr);
    ChunkObserver chunks(&write,
                         Envelope(CompletionId(), parts.model, "chat.completion.chunk", created));
    const QueryRewrite rewrite = RewriteOf(engine, parts, rewriter);
    chunks.set_first_flowrag(
        {{"retrieval_query", rewrite.query}, {"rewrite", RewriteJson(rewrite, parts.question)}});
    AnswerOptions observed = parts.options;
    observed.observer = &chunks;
    Result<Answer> answer = engine.Ask(rewrite.query, observed);
    if (!answer.ok()) {
      if (!chunks.started()) {
        *refused = ChatErrorReply(AskError(answer.status()));
      } else if (!chunks.gone()) {
        chunks.Send(ChatErrorReply(AskError(answer.status())).body);
      }
      return;
    }
    if (!chunks.Start()) return;
    AddRewrite(rewrite, &*answer);
    const std::string sources = SourcesText(*answer) + SearchedText(rewrite);
    if (!sources.empty()) chunks.OnText(sources);
    nlohmann::json last = Chunk(chunks.envelope(), nlohmann::json::object(), "stop");
    last["flowrag"] = AnswerJsonWithRewrite(*answer, rewrite, parts.question);
    chunks.Send(last);
    if (parts.include_usage) {
      nlohmann::json usage = chunks.envelope();
      usage["choices"] = nlohmann::json::array();
      usage["usage"] = Usage(*answer);
      chunks.Send(usage);
    }
    chunks.Done();
  };
  return reply;
}

}  // namespace

Reply ChatErrorReply(const ApiError& error) {
  Reply r = ErrorReply(error);
  nlohmann::json& e = r.body["error"];
  e["type"] = error.http_status >= 500 ? "server_error" : "invalid_request_error";
  e["param"] = error.field.empty() ? nlohmann::json(nullptr) : nlohmann::json(error.field);
  return r;
}

std::shared_ptr<ChatModel> QueryRewriteModel(const EngineOptions& options) {
  if (!HasChatModel(options)) return nullptr;
  Result<std::shared_ptr<ChatModel>> model = MakeChatModel(options, nullptr);
  return model.ok() ? std::move(model).value() : nullptr;
}

Reply HandleChatCompletions(const Engine& engine, const nlohmann::json& request,
                            double max_deadline_ms, ChatModel* rewriter) {
  ChatRequestParts parts;
  if (auto e = ParseChatRequest(request, max_deadline_ms, &parts)) return ChatErrorReply(*e);
  if (Status st = parts.options.Validate(); !st.ok()) {
    return ChatErrorReply(AskError(st));
  }
  if (parts.stream) return StreamedCompletion(engine, std::move(parts), rewriter);
  const QueryRewrite rewrite = RewriteOf(engine, parts, rewriter);
  Result<Answer> answer = engine.Ask(rewrite.query, parts.options);
  if (!answer.ok()) return ChatErrorReply(AskError(answer.status()));
  AddRewrite(rewrite, &*answer);
  nlohmann::json body = Envelope(CompletionId(), parts.model, "chat.completion", std::time(nullptr));
  const std::string content = answer->text + SourcesText(*answer) + SearchedText(rewrite);
  body["choices"] =
      nlohmann::json::array({{{"index", 0},
                              {"message", {{"role", "assistant"}, {"content", content}}},
                              {"finish_reason", "stop"}}});
  body["usage"] = Usage(*answer);
  body["flowrag"] = AnswerJsonWithRewrite(*answer, rewrite, parts.question);
  return OkReply(std::move(body));
}

Reply HandleModels() {
  nlohmann::json data = nlohmann::json::array();
  const auto model = [](const std::string& id) {
    return nlohmann::json{{"id", id}, {"object", "model"}, {"created", 0}, {"owned_by", "flowrag"}};
  };
  data.push_back(model("flowrag"));
  for (const std::string& m : Engine::Methods()) {
    if (m != "auto") data.push_back(model(std::string(kModelPrefix) + m));
  }
  return OkReply({{"object", "list"}, {"data", std::move(data)}});
}

}  // namespace flowrag::server
