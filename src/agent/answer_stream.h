// AnswerStream: what Engine::Ask does with AnswerOptions::observer. It hands
// the observer the retrieval once and the answer's text as the chat model
// writes it, and at the end (Close) whatever the pipeline did not stream
// itself (the offline answerers and the schema agent answer in one piece).
//
// JsonStringFieldStream: a TextSink filter for a model that writes a JSON
// object token by token: only the characters of one string field's value
// ("final_answer") go on, unescaped, as they arrive.
//
// Thread-safety: one per Ask, used on its thread.
#ifndef FLOWRAG_AGENT_ANSWER_STREAM_H_
#define FLOWRAG_AGENT_ANSWER_STREAM_H_

#include <string>
#include <string_view>

#include "flowrag/models.h"
#include "flowrag/status.h"
#include "flowrag/types.h"

namespace flowrag {

class AnswerStream {
 public:
  explicit AnswerStream(AnswerObserver* observer) : observer_(observer) {}

  // The retrieval the answer is written from; the first call only.
  bool Retrieval(const RetrievalResult& retrieval);
  // Passes answer text on (after the retrieval, which must have gone).
  const TextSink& text_sink() const { return sink_; }
  // Sends what was not streamed yet: the retrieval, and the whole text when
  // no piece went. Cancelled when the observer stopped the answer.
  Status Close(const Answer& answer);

  bool cancelled() const { return cancelled_; }

 private:
  bool Text(std::string_view piece);

  AnswerObserver* observer_;
  bool retrieval_sent_ = false;
  bool text_sent_ = false;
  bool cancelled_ = false;
  TextSink sink_ = [this](std::string_view piece) { return Text(piece); };
};

class JsonStringFieldStream {
 public:
  // `out` is not owned and must outlive this filter.
  JsonStringFieldStream(std::string field, const TextSink* out)
      : key_("\"" + std::move(field) + "\""), out_(out) {}

  // Takes the next piece of the model's JSON; false when `out` cancelled.
  bool operator()(std::string_view piece);

 private:
  enum class State { kSeekKey, kSeekValue, kInValue, kDone };
  // Scans seen_ from pos_ as far as it can; false when `out` cancelled.
  bool Scan();
  // Decodes the escape at pos_ (seen_[pos_] == '\\') into *out; false when
  // it is not complete yet.
  bool Unescape(std::string* out);

  std::string key_;
  const TextSink* out_;
  std::string seen_;  // everything received
  size_t pos_ = 0;    // scanned up to here
  State state_ = State::kSeekKey;
};

}  // namespace flowrag

#endif  // FLOWRAG_AGENT_ANSWER_STREAM_H_
