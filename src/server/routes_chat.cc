// The OpenAI-compatible API (doc/http_api.md, "OpenAI-compatible chat"):
// POST /v1/chat/completions answers the last user message of a
// conversation with Engine::Ask (earlier turns are the conversation so far;
// the model "flowrag-<method>" picks the retriever), and GET /v1/models
// lists those models. Any OpenAI client, with its base URL set to /v1 (or
// /v1/w/{ws} for a workspace), can use flowrag as a retrieval-augmented
// model; the answer's citations come back in the message text (a
// "Sources:" list) and whole in the "flowrag" extension field.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>
#include <string>

#include "common/encoding.h"
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
};

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
  nlohmann::json query;
  if (auto e = QueryOfChat(request, c, method, &query)) return e;
  if (auto e = ParseQueryRequest(query, max_deadline_ms, &out->question, &out->options)) {
    if (e->field != "question" && e->field != "method") e->field = "flowrag." + e->field;
    return e;
  }
  out->options.conversation = std::move(c.earlier);
  return std::nullopt;
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
    return Send(Chunk(envelope_, {{"role", "assistant"}, {"content", ""}}, nullptr));
  }
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
};

Reply StreamedCompletion(const Engine& engine, ChatRequestParts parts) {
  Reply reply;
  reply.stream = [&engine, parts = std::move(parts)](const StreamWriter& write, Reply* refused) {
    const int64_t created = std::time(nullptr);
    ChunkObserver chunks(&write,
                         Envelope(CompletionId(), parts.model, "chat.completion.chunk", created));
    AnswerOptions observed = parts.options;
    observed.observer = &chunks;
    Result<Answer> answer = engine.Ask(parts.question, observed);
    if (!answer.ok()) {
      if (!chunks.started()) {
        *refused = ChatErrorReply(AskError(answer.status()));
      } else if (!chunks.gone()) {
        chunks.Send(ChatErrorReply(AskError(answer.status())).body);
      }
      return;
    }
    if (!chunks.Start()) return;
    const std::string sources = SourcesText(*answer);
    if (!sources.empty()) chunks.OnText(sources);
    nlohmann::json last = Chunk(chunks.envelope(), nlohmann::json::object(), "stop");
    last["flowrag"] = AnswerJson(*answer);
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

Reply HandleChatCompletions(const Engine& engine, const nlohmann::json& request,
                            double max_deadline_ms) {
  ChatRequestParts parts;
  if (auto e = ParseChatRequest(request, max_deadline_ms, &parts)) return ChatErrorReply(*e);
  if (Status st = parts.options.Validate(); !st.ok()) {
    return ChatErrorReply(AskError(st));
  }
  if (parts.stream) return StreamedCompletion(engine, std::move(parts));
  Result<Answer> answer = engine.Ask(parts.question, parts.options);
  if (!answer.ok()) return ChatErrorReply(AskError(answer.status()));
  nlohmann::json body = Envelope(CompletionId(), parts.model, "chat.completion", std::time(nullptr));
  body["choices"] = nlohmann::json::array(
      {{{"index", 0},
        {"message", {{"role", "assistant"}, {"content", answer->text + SourcesText(*answer)}}},
        {"finish_reason", "stop"}}});
  body["usage"] = Usage(*answer);
  body["flowrag"] = AnswerJson(*answer);
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
