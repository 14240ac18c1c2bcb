// Fuzz target: the follow-up rewriter of the chat endpoint
// (src/agent/followup.h) on a conversation a client sends: RewriteFollowUp
// offline and with a model whose reply is part of the input,
// ReadAssistantTurn, ReadModelRewrite.
//
// Input: parts separated by NUL bytes. The last part is the question; the
// parts before it alternate user and assistant messages; the first part is
// also the model's reply to the rewrite prompt, and every part is a passage
// of the store (title: its first line) that the stub keyword search returns.
// Checks: no crash; the query is the question when nothing was rewritten; a
// model rewrite that was accepted is one line, not empty, within its bound.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/followup.h"
#include "common/text.h"
#include "fuzz_util.h"

namespace {

class ReplyChat final : public flowrag::ChatModel {
 public:
  explicit ReplyChat(std::string reply) : reply_(std::move(reply)) {}
  std::string Model() const override { return "fuzz"; }
  flowrag::Result<flowrag::ChatResponse> Complete(const flowrag::ChatRequest&) override {
    flowrag::ChatResponse r;
    r.content = reply_;
    r.finish_reason = "stop";
    return r;
  }

 private:
  std::string reply_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts;
  for (size_t at = 0; at <= input.size();) {
    size_t nul = input.find('\0', at);
    if (nul == std::string_view::npos) nul = input.size();
    parts.emplace_back(input.substr(at, nul - at));
    at = nul + 1;
  }
  const std::string question = parts.back();
  std::vector<flowrag::ChatMessage> earlier;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    earlier.push_back({i % 2 == 0 ? "user" : "assistant", parts[i]});
  }
  std::vector<flowrag::ScoredPassage> corpus;
  for (size_t i = 0; i < parts.size(); ++i) {
    flowrag::ScoredPassage p;
    p.passage_id = static_cast<int64_t>(i);
    p.title = parts[i].substr(0, parts[i].find('\n'));
    p.text = parts[i];
    p.ordinal = static_cast<int32_t>(i % 2);
    corpus.push_back(std::move(p));
  }
  flowrag::FollowUpLookup lookup;
  lookup.passages = [&corpus](std::string_view text,
                              size_t k) -> flowrag::Result<std::vector<flowrag::ScoredPassage>> {
    const std::vector<std::string> terms = flowrag::Tokenize(text);
    std::vector<flowrag::ScoredPassage> out;
    for (const flowrag::ScoredPassage& p : corpus) {
      if (out.size() >= k) break;
      const std::vector<std::string> words = flowrag::Tokenize(p.text);
      for (const std::string& t : terms) {
        if (std::find(words.begin(), words.end(), t) != words.end()) {
          out.push_back(p);
          break;
        }
      }
    }
    return out;
  };
  lookup.entity_type = [](std::string_view name) -> std::string {
    return name.size() % 3 == 0 ? "PERSON" : name.size() % 3 == 1 ? "LOCATION" : "";
  };

  const flowrag::QueryRewrite offline = flowrag::RewriteFollowUpOffline(question, earlier, lookup);
  if (!offline.rewritten()) FUZZ_CHECK(offline.query == question, "unchanged query differs");
  ReplyChat chat(parts.front());
  const flowrag::QueryRewrite model = flowrag::RewriteFollowUp(question, earlier, lookup, &chat);
  if (model.method == "llm") {
    FUZZ_CHECK(!model.query.empty(), "empty model rewrite");
    FUZZ_CHECK(model.query.find('\n') == std::string::npos, "model rewrite of several lines");
    FUZZ_CHECK(model.query.size() <= std::max<size_t>(1000, 2 * question.size()),
               "model rewrite too long");
  }
  (void)flowrag::ReadAssistantTurn(parts.front());
  auto read = flowrag::ReadModelRewrite(parts.front(), question);
  if (!read.ok()) FUZZ_CHECK_ERROR(read.status());
  return 0;
}
