// LlmExtractor: entities, aliases, descriptions and relations of passages from
// a chat model, with the papers' prompts (extract/prompts.h), tolerant
// parsing (llm/json_repair.h) and validation, so that whatever the model
// answers, the graph only receives well-formed, self-consistent extractions.
//
// Per batch of passages (options.batch_size), all first calls (NER, or the
// single LightRAG call) go out in one ChatModel::CompleteBatch(), then all
// second calls (RE / triples). The model's client does the HTTP, retries,
// timeouts, concurrency limit and response cache; the extractor makes no
// retries of its own except format-repair turns: when an answer cannot be
// parsed, up to options.format_repair_turns follow-up requests show the model
// its answer and the problem and ask for the format again.
//
// Outcome per passage (results[i] is passages[i]):
//   - status OK: `extraction` holds the validated entities and triples
//     (possibly none). Entities are deduplicated by EntityKey (common/text.h)
//     over their names and aliases: two records sharing a name or alias key
//     become one entity (first name primary, other names aliases, distinct
//     descriptions joined, first non-empty type). Types are upper-cased.
//     `count` is the number of word-bounded occurrences of the name or an
//     alias in the passage (at least 1). Triples name entities by their
//     primary names; duplicates are dropped.
//   - status not OK: a call failed after the client's retries (timeout,
//     HTTP error) or an answer stayed unparseable; `extraction` is then EMPTY
//     (passage_id set, no entities, no triples), so the caller leaves the
//     passage un-extracted and a rerun retries it. Answers already received
//     are in the client's response cache and are replayed for free. A failed
//     second call fails the whole passage (a half extraction would never be
//     completed by a rerun).
//   - `rejections` lists every record dropped by validation, with the reason
//     and the record: an empty or over-long name, a triple without exactly
//     three parts, an empty relation, a subject or object that is not an
//     extracted entity (by name or alias key), a triple from an entity to
//     itself, an entity whose name does not occur in the passage (only with
//     require_entities_in_text), a record cut off by the token limit. The rest
//     of the passage is kept. Each line is also sent to options.log.
//   - `truncated`: some answer stopped at the token limit (finish_reason
//     "length"); it was repaired (incomplete tail dropped, nothing invented).
//     A truncated answer with no complete record at all fails the passage.
//
// Thread-safety: Extract() may be called concurrently (the model must allow
// concurrent calls, as ChatModel requires). The model is not owned and must
// outlive the extractor.
#ifndef FLOWRAG_EXTRACT_LLM_EXTRACTOR_H_
#define FLOWRAG_EXTRACT_LLM_EXTRACTOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/extraction.h"
#include "extract/prompts.h"
#include "flowrag/status.h"
#include "llm/chat_model.h"

namespace flowrag {

struct LlmExtractorOptions {
  ExtractionPromptStyle style = ExtractionPromptStyle::kSaRag;
  PromptOptions prompt;  // budgets, temperature, LightRAG format
  // Passages per CompleteBatch() round, >= 1. The client bounds concurrency;
  // this bounds memory and how much work one failure can interrupt.
  size_t batch_size = 32;
  // Follow-up turns after an unparseable answer, >= 0.
  int format_repair_turns = 1;
  // A triple whose subject or object is not an extracted entity is rejected
  // (false, the default: the issue requires triples to use extracted
  // entities) or the endpoint is added as an entity without type or
  // description (true: HippoRAG's OpenIE graph, where descriptive endpoints
  // like "private FM radio station" become phrase nodes).
  bool add_missing_triple_entities = false;
  // Reject entities whose name and aliases all fail to occur (by EntityKey,
  // word-bounded) in the title or text: catches invented entities, but also
  // drops names the model normalised ("U.S." written as "United States"
  // without the alias).
  bool require_entities_in_text = false;
  // Names, aliases and relation texts longer than this are rejected (bytes).
  size_t max_name_bytes = 200;
  size_t max_relation_bytes = 500;
  // When every first call of a batch fails at the transport level (the
  // endpoint is down or the key is wrong), later batches are not sent; their
  // passages fail with Unavailable("not attempted: ...").
  bool stop_after_failed_batch = true;
  // Receives one line per rejection and per failed passage, prefixed with
  // "passage <id>: ". Null: nothing is logged (outcomes still carry them).
  // Called on the thread running Extract(); concurrent Extract() calls may
  // call it concurrently.
  std::function<void(std::string_view)> log;
};

struct ExtractionInput {
  int64_t passage_id = 0;
  std::string title;
  std::string text;
};

struct PassageOutcome {
  int64_t passage_id = 0;
  Status status;                        // see the header comment
  PassageExtraction extraction;         // empty unless status.ok()
  std::vector<std::string> rejections;  // validation drops, with reasons
  std::vector<std::string> repairs;     // format repairs applied to the answers
  int64_t prompt_tokens = 0;            // of every answer received (cache hits included)
  int64_t completion_tokens = 0;
  bool truncated = false;                     // an answer hit the token limit
  int calls = 0;                              // requests made for this passage
  int cache_hits = 0;                         // of those, answered from the cache
  std::vector<std::string> content_keywords;  // LightRAG's "content_keywords"
};

// What `flowrag index --dry-run` reports before any call is made.
struct DryRunEstimate {
  int64_t passages = 0;
  // Upper bound: calls_per_passage per passage (a second call is skipped
  // when NER finds nothing; format-repair turns are not counted).
  int64_t calls = 0;
  // ceil(bytes / 4) of every rendered request (all messages). A second call's
  // prompt is rendered with an empty entity list plus the typical size of
  // the first call's answer (OpenIE repeats that answer; SA-RAG repeats only
  // the names, so there it is an overestimate). Cached answers are not
  // subtracted: this is the cost of a run on an empty cache.
  int64_t prompt_tokens = 0;
  int64_t completion_tokens_max = 0;      // sum of max_tokens: a hard upper bound
  int64_t completion_tokens_typical = 0;  // see TypicalCompletionTokens()
};

// Rough typical answer size of one call: ceil(passage tokens * ratio),
// capped at max_tokens, where passage tokens = ceil(bytes of the rendered
// passage / 4) and ratio is a rule of thumb, not from the papers: SA-RAG NER
// 1.0 (descriptions restate the passage), SA-RAG RE 0.5, OpenIE NER 0.25,
// OpenIE triples 1.0, LightRAG 1.5. `call` is 0 or 1.
int64_t TypicalCompletionTokens(ExtractionPromptStyle style, int call, int64_t passage_tokens,
                                int max_tokens);

// Counts calls and tokens for extracting `passages` with `options`, without
// any network access. O(total passage bytes + prompt size per passage).
DryRunEstimate EstimateCost(std::span<const ExtractionInput> passages,
                            const LlmExtractorOptions& options);

class LlmExtractor {
 public:
  // InvalidArgument when `model` is null or an option is out of range
  // (batch_size 0, negative format_repair_turns, zero name limits, a token
  // budget below 1, an empty LightRAG tuple delimiter).
  static Result<std::unique_ptr<LlmExtractor>> Create(ChatModel* model,
                                                      LlmExtractorOptions options);

  // One outcome per passage, in input order. Fails as a whole only on
  // invalid input (two inputs with the same passage_id); model failures are
  // per-passage statuses.
  Result<std::vector<PassageOutcome>> Extract(std::span<const ExtractionInput> passages);

  const LlmExtractorOptions& options() const { return options_; }

 private:
  struct Work;

  LlmExtractor(ChatModel* model, LlmExtractorOptions options);

  // Runs one batch; returns true when every first call failed at transport level.
  bool RunBatch(std::span<const ExtractionInput> passages, std::span<PassageOutcome> outcomes);
  class CallRound;    // one call over a batch (llm_extractor.cc)
  class RecordMerge;  // one passage's records validated and merged (llm_extractor.cc)

  // Sends one call per work item (call 0 or 1), with format-repair turns.
  void RunCall(std::vector<Work>& work, int call);
  // Validates and stores the final extraction of one passage.
  void Finish(Work& w);
  void Log(const PassageOutcome& outcome, std::string_view line) const;
  // Marks `w` failed with `status` unless it already failed.
  static void Fail(Work& w, Status status);

  ChatModel* const model_;
  const LlmExtractorOptions options_;
};

}  // namespace flowrag

#endif  // FLOWRAG_EXTRACT_LLM_EXTRACTOR_H_
