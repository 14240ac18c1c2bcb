#include "llm/chat_stream.h"

#include <nlohmann/json.hpp>

#include "llm/openai_common.h"

namespace flowrag {

using Json = nlohmann::json;
using llm_internal::Snippet;

bool ChatStreamReader::Feed(std::string_view bytes) {
  if (!error_.ok() || cancelled_) return false;
  while (!bytes.empty()) {
    const size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      if (pending_.size() + bytes.size() > kMaxLineBytes) {
        error_ = Status::Unavailable("streamed answer: a line longer than " +
                                     std::to_string(kMaxLineBytes) + " bytes");
        return false;
      }
      pending_.append(bytes);
      return true;
    }
    std::string_view line = bytes.substr(0, nl);
    bytes.remove_prefix(nl + 1);
    bool ok;
    if (pending_.empty()) {
      ok = Line(line);
    } else {
      pending_.append(line);
      std::string whole = std::move(pending_);
      pending_.clear();
      ok = Line(whole);
    }
    if (!ok) return false;
  }
  return true;
}

bool ChatStreamReader::Line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  constexpr std::string_view kData = "data:";
  if (line.substr(0, kData.size()) != kData || done_) return true;
  std::string_view payload = line.substr(kData.size());
  if (!payload.empty() && payload.front() == ' ') payload.remove_prefix(1);
  saw_events_ = true;
  if (payload == "[DONE]") {
    done_ = true;
    return true;
  }
  return Chunk(payload);
}

bool ChatStreamReader::Chunk(std::string_view payload) {
  const Json j = Json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    error_ = Status::Unavailable("streamed answer: an event that is not a JSON object: " +
                                 Snippet(payload));
    return false;
  }
  if (auto e = j.find("error"); e != j.end()) {
    error_ = Status::Unavailable("streamed answer: the server sent an error: " +
                                 llm_internal::ErrorDetail(payload));
    return false;
  }
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    const auto count = [&](const char* field) -> int64_t {
      auto f = u->find(field);
      return f != u->end() && f->is_number_integer() ? f->get<int64_t>() : 0;
    };
    prompt_tokens_ = count("prompt_tokens");
    completion_tokens_ = count("completion_tokens");
    usage_reported_ = true;
  }
  auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty()) return true;  // usage chunk
  const Json& choice = choices->front();
  if (!choice.is_object()) return true;
  if (auto f = choice.find("finish_reason"); f != choice.end() && f->is_string()) {
    finish_reason_ = f->get<std::string>();
  }
  auto delta = choice.find("delta");
  if (delta == choice.end() || !delta->is_object()) return true;
  auto content = delta->find("content");
  if (content == delta->end() || !content->is_string()) return true;
  const std::string& piece = content->get_ref<const std::string&>();
  if (piece.empty()) return true;
  content_ += piece;
  if (!(*sink_)(piece)) {
    cancelled_ = true;
    return false;
  }
  return true;
}

Result<ChatResponse> ChatStreamReader::Finish() {
  if (!error_.ok()) return error_;
  if (cancelled_) return Status::Cancelled("chat completion: the reader stopped");
  if (!pending_.empty() && !Line(pending_)) return Finish();
  pending_.clear();
  if (!saw_events_) return Status::Unavailable("streamed answer: no event arrived");
  ChatResponse out;
  out.content = std::move(content_);
  out.finish_reason = std::move(finish_reason_);
  out.prompt_tokens = prompt_tokens_;
  out.completion_tokens = completion_tokens_;
  return out;
}

}  // namespace flowrag
