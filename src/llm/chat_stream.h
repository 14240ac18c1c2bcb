// ChatStreamReader: reads a streamed OpenAI-compatible chat completion (the
// Server-Sent Events a /chat/completions endpoint sends for "stream": true)
// as its bytes arrive, and hands each piece of answer text to a sink.
//
// Each event line "data: {json}" is one chunk: choices[0].delta.content is
// the next piece of text, choices[0].finish_reason (once) why it ended, and
// "usage" (with stream_options.include_usage) the token counts; "data:
// [DONE]" ends the stream. Other lines (comments, "event:", "id:") are
// ignored. Bounds: a line longer than kMaxLineBytes is an error.
//
// Errors (Finish): Unavailable for a chunk that is not JSON, an "error"
// event, a malformed chunk, or a stream that ended before any chunk.
// Thread-safety: one reader per transfer; not shared.
#ifndef FLOWRAG_LLM_CHAT_STREAM_H_
#define FLOWRAG_LLM_CHAT_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "flowrag/models.h"
#include "flowrag/status.h"

namespace flowrag {

class ChatStreamReader {
 public:
  static constexpr size_t kMaxLineBytes = size_t{1} << 20;

  // `sink` is not owned and must outlive the reader.
  explicit ChatStreamReader(const TextSink* sink) : sink_(sink) {}

  // Takes the next bytes of the body. False stops the transfer: the sink
  // cancelled (cancelled() is then true) or the stream is malformed.
  bool Feed(std::string_view bytes);

  // Whether any "data:" event arrived (a server that ignored "stream" sends
  // a plain JSON body instead, with none).
  bool saw_events() const { return saw_events_; }
  // Whether any text went to the sink (then the request cannot be retried).
  bool emitted() const { return !content_.empty(); }
  bool cancelled() const { return cancelled_; }

  // The answer once the body has ended: content, finish_reason and the
  // usage when the server sent it (else 0; the caller estimates).
  Result<ChatResponse> Finish();
  bool usage_reported() const { return usage_reported_; }

 private:
  bool Line(std::string_view line);   // one line, without its end
  bool Chunk(std::string_view json);  // one data: payload

  const TextSink* sink_;
  std::string pending_;  // an incomplete line
  std::string content_;
  std::string finish_reason_;
  int64_t prompt_tokens_ = 0;
  int64_t completion_tokens_ = 0;
  bool usage_reported_ = false;
  bool saw_events_ = false;
  bool done_ = false;
  bool cancelled_ = false;
  Status error_;
};

}  // namespace flowrag

#endif  // FLOWRAG_LLM_CHAT_STREAM_H_
