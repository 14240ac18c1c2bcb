#include "server/sse.h"

#include "engine/result_json.h"

namespace flowrag::server {

std::string SseEvent(std::string_view event, const nlohmann::json& data) {
  std::string out;
  if (!event.empty()) {
    out += "event: ";
    out += event;
    out += '\n';
  }
  out += "data: ";
  out += data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out += "\n\n";
  return out;
}

bool SseAnswerObserver::Send(std::string_view event, const nlohmann::json& data) {
  if (gone_) return false;
  sent_ = true;
  gone_ = !(*write_)(SseEvent(event, data));
  return !gone_;
}

bool SseAnswerObserver::OnRetrieval(const RetrievalResult& retrieval) {
  return Send("retrieval", RetrievalResultJson(retrieval));
}

bool SseAnswerObserver::OnText(std::string_view piece) {
  return Send("token", {{"text", std::string(piece)}});
}

}  // namespace flowrag::server
