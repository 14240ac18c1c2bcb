// POST /v1/query: a question in, an Answer (with its retrieval) out.
#include <map>
#include <string>

#include "common/encoding.h"
#include "engine/result_json.h"
#include "server/handlers.h"
#include "server/request_json.h"
#include "server/sse.h"

namespace flowrag::server {
namespace {

constexpr size_t kMaxQuestionBytes = 8192;
constexpr int64_t kMaxTopK = 1000;
constexpr int64_t kMaxSteps = 10;

// The request field an engine error is about, from its message: "unknown
// method ..." → "method", "unknown option(s) ..." / "option x.y=..." →
// "options", "pipeline: ..." → "pipeline".
std::string FieldOfMessage(const std::string& message) {
  if (message.rfind("unknown method", 0) == 0) return "method";
  if (message.rfind("unknown option", 0) == 0 || message.rfind("option ", 0) == 0) {
    return "options";
  }
  if (message.rfind("schema.analysis", 0) == 0) return "analysis";
  if (message.rfind("schema.extension ", 0) == 0) return "extension";
  for (const char* f : {"pipeline", "max_steps", "answerer", "style", "deadline_ms", "top_k",
                        "method", "question"}) {
    const std::string name(f);
    if (message.rfind(name, 0) == 0 && message.size() > name.size() &&
        (message[name.size()] == ':' || message[name.size()] == ' ')) {
      return name;
    }
  }
  return "";
}

// options: {name: string | number | bool}; numbers keep their JSON spelling.
std::optional<ApiError> ReadParams(const nlohmann::json& request,
                                   std::map<std::string, std::string>* params) {
  auto it = request.find("options");
  if (it == request.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) {
    return BadRequest(
        std::string("options: expected an object of name: value, got ") + it->type_name(),
        "options");
  }
  for (auto o = it->begin(); o != it->end(); ++o) {
    const std::string path = "options." + EscapeForMessage(o.key(), 60);
    if (o->is_string()) {
      (*params)[o.key()] = o->get<std::string>();
    } else if (o->is_number() || o->is_boolean()) {
      (*params)[o.key()] = o->dump();
    } else {
      return BadRequest(path + ": expected a string, number or boolean, got " + o->type_name(),
                        "options");
    }
  }
  return std::nullopt;
}

}  // namespace

std::span<const std::string_view> QueryRequestFields() {
  static constexpr std::string_view kFields[] = {
      "question", "method",      "pipeline", "top_k",     "max_steps", "answerer", "style",
      "deadline_ms", "analysis", "extension", "explain",  "options",   "stream"};
  return kFields;
}

std::optional<ApiError> ParseQueryRequest(const nlohmann::json& request, double max_deadline_ms,
                                          std::string* question, AnswerOptions* options,
                                          bool* stream) {
  if (auto e = RejectUnknownFields(request, QueryRequestFields())) return e;
  if (auto e = ReadBoolean(request, "stream", stream)) return e;
  if (auto e = ReadString(request, "question", "question", true, question)) return e;
  if (question->find_first_not_of(" \t\r\n") == std::string::npos) {
    return BadRequest("question: expected a non-empty string", "question");
  }
  if (question->size() > kMaxQuestionBytes) {
    return BadRequest("question: longer than " + std::to_string(kMaxQuestionBytes) + " bytes",
                      "question");
  }
  // The fields that name a choice. (Snapshots, a server-side directory, are
  // not exposed over HTTP.)
  const std::pair<const char*, std::string*> names[] = {
      {"method", &options->query.method},      {"pipeline", &options->pipeline},
      {"answerer", &options->answerer},        {"style", &options->style},
      {"analysis", &options->schema.analysis}, {"extension", &options->schema.extension}};
  for (const auto& [name, out] : names) {
    if (auto e = ReadString(request, name, name, false, out, kMaxNameBytes)) return e;
  }
  if (auto e = ReadBoolean(request, "explain", &options->query.explain)) return e;
  int64_t top_k = static_cast<int64_t>(options->query.top_k);
  if (auto e = ReadInteger(request, "top_k", 1, kMaxTopK, &top_k)) return e;
  options->query.top_k = static_cast<size_t>(top_k);
  int64_t max_steps = static_cast<int64_t>(options->max_steps);
  if (auto e = ReadInteger(request, "max_steps", 1, kMaxSteps, &max_steps)) return e;
  options->max_steps = static_cast<size_t>(max_steps);
  if (auto e = ReadNonNegative(request, "deadline_ms", &options->deadline_ms)) return e;
  if (max_deadline_ms > 0 &&
      (options->deadline_ms == 0 || options->deadline_ms > max_deadline_ms)) {
    options->deadline_ms = max_deadline_ms;
  }
  return ReadParams(request, &options->query.params);
}

Reply HandleQuery(const Engine& engine, const nlohmann::json& request, double max_deadline_ms) {
  std::string question;
  AnswerOptions options;
  bool stream = false;
  if (auto e = ParseQueryRequest(request, max_deadline_ms, &question, &options, &stream)) {
    return ErrorReply(*e);
  }
  if (Status st = options.Validate(); !st.ok()) {
    return ErrorReply(ErrorFromStatus(st, FieldOfMessage(st.message())));
  }
  if (stream) return StreamedAnswer(engine, std::move(question), std::move(options));
  Result<Answer> answer = engine.Ask(question, options);
  if (!answer.ok()) return ErrorReply(AskError(answer.status()));
  return OkReply(AnswerJson(*answer));
}

ApiError AskError(const Status& st) {
  const std::string field =
      st.code() == StatusCode::kInvalidArgument ? FieldOfMessage(st.message()) : "";
  return ErrorFromStatus(st, field);
}

Reply StreamedAnswer(const Engine& engine, std::string question, AnswerOptions options) {
  Reply reply;
  reply.stream = [&engine, question = std::move(question), options = std::move(options)](
                     const StreamWriter& write, Reply* refused) {
    SseAnswerObserver events(&write);
    AnswerOptions observed = options;
    observed.observer = &events;
    Result<Answer> answer = engine.Ask(question, observed);
    if (answer.ok()) {
      events.Send("answer", AnswerJson(*answer));
    } else if (!events.sent()) {
      // Refused before the retrieval event (an unknown method or option, an
      // option out of range): the same error as without streaming.
      *refused = ErrorReply(AskError(answer.status()));
    } else if (!events.gone()) {
      events.Send("error", ErrorJson(AskError(answer.status())));
    }
  };
  return reply;
}

}  // namespace flowrag::server
