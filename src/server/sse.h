// Server-Sent Events for the streamed replies of the HTTP API.
//
// POST /v1/query with "stream": true (doc/http_api.md, "Streaming") answers
//   event: retrieval  data: RetrievalResult JSON (passages, subgraph), once
//   event: token      data: {"text": "..."}, as the answer is written
//   event: answer     data: Answer JSON (citations), once, last
// or, when the answer fails after the stream began,
//   event: error      data: {"error": {...}} (the error shape of errors.h).
// An answer that fails before the retrieval event (a wrong request: unknown
// method or option, an option out of range) sends no event: the server
// answers its JSON error instead, as without streaming (StreamFn).
#ifndef FLOWRAG_SERVER_SSE_H_
#define FLOWRAG_SERVER_SSE_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "flowrag/types.h"
#include "server/errors.h"

namespace flowrag::server {

// "event: <event>\ndata: <json>\n\n" (no event line when `event` is empty).
// The JSON is compact, so it holds no raw line break; invalid UTF-8 becomes
// U+FFFD.
std::string SseEvent(std::string_view event, const nlohmann::json& data);

// Writes an answer's retrieval and text as they come (the events above);
// gone() once a write failed (the client left): the answer is then
// cancelled.
class SseAnswerObserver final : public AnswerObserver {
 public:
  explicit SseAnswerObserver(const StreamWriter* write) : write_(write) {}
  bool OnRetrieval(const RetrievalResult& retrieval) override;
  bool OnText(std::string_view piece) override;
  // Writes one event; false (and gone()) when the client left.
  bool Send(std::string_view event, const nlohmann::json& data);
  bool gone() const { return gone_; }
  // Whether an event was written (the stream began).
  bool sent() const { return sent_; }

 private:
  const StreamWriter* write_;
  bool gone_ = false;
  bool sent_ = false;
};

}  // namespace flowrag::server

#endif  // FLOWRAG_SERVER_SSE_H_
