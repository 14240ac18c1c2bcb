// The papers' extraction prompts as ChatRequests, and the parser of the one
// output format that is not JSON (LightRAG tuples).
//
// Three styles, each a fixed sequence of calls per passage:
//
//   kSaRag     SA-RAG §5.3 and Appendix B. Call 1, NER (Listing 4): entities
//              with "name", "type" (PERSON / ORGANIZATION / GPE / MISC),
//              "aliases" and "entity_information" (the entity description),
//              as a JSON array; one-shot demonstration (Nikola Tesla) and the
//              "forbidden outputs" of context-dependent GPE descriptions, all
//              in the system message, the passage as "Real input". Call 2, RE
//              (Listing 5): the passage and "Entity list: a, b, c"; answer
//              {"triples": [["entity1", "relationship", "entity2"], ...]};
//              one-shot demonstration (Jack Parsons) with its reasoning.
//   kOpenIe    SemFlowRAG A.5.1, Figures 5-6 (HippoRAG's OpenIE). Call 1, NER:
//              {"named_entities": [...]}; call 2, triples: the passage and the
//              NER JSON, answer {"triples": [[s, r, o], ...]}. Demonstrations
//              (Radio City) are prior user/assistant turns, as in HippoRAG.
//              Budgets from SemFlowRAG A.2: 512 tokens NER, 2048 triples.
//   kLightRag  QAFD-RAG A4.2 (LightRAG's extraction prompt). One call:
//              ("entity"<|>name<|>type<|>description) and
//              ("relationship"<|>source<|>target<|>description<|>keywords<|>strength)
//              records separated by "##", then ("content_keywords"<|>...),
//              ending with <|COMPLETE|>. Not JSON: see ParseLightRagOutput().
//
// Instructions are in our own words; structure, fields, demonstrations and
// output formats follow the papers. The passage is rendered as
// "title\ntext" unless the title is empty or already the text's first line.
// All requests use temperature PromptOptions::temperature (0 by default, so
// answers are reproducible and cacheable). JSON-answer calls set json_mode,
// except SA-RAG NER: its answer is a top-level JSON array, which OpenAI's
// json_object mode forbids; the parser accepts the array and an object
// wrapping it.
//
// All functions are pure and thread-safe.
#ifndef FLOWRAG_EXTRACT_PROMPTS_H_
#define FLOWRAG_EXTRACT_PROMPTS_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"
#include "llm/chat_model.h"

namespace flowrag {

enum class ExtractionPromptStyle { kSaRag, kOpenIe, kLightRag };

// "sa-rag", "openie", "lightrag".
std::string_view ExtractionPromptStyleName(ExtractionPromptStyle style);
// Inverse of the above (also accepts "sarag", "hipporag", "qafd");
// InvalidArgument listing the accepted names otherwise.
Result<ExtractionPromptStyle> ParseExtractionPromptStyle(std::string_view name);

// LightRAG's output format and prompt parameters (QAFD-RAG A4.2 placeholders;
// defaults are LightRAG's).
struct LightRagFormat {
  std::string tuple_delimiter = "<|>";
  std::string record_delimiter = "##";
  std::string completion_delimiter = "<|COMPLETE|>";
  std::vector<std::string> entity_types = {"organization", "person", "geo", "event", "category"};
  std::string language = "English";
};

struct PromptOptions {
  // Token budgets; 0 takes the style's default (StylePlan below).
  int first_max_tokens = 0;   // NER, or the single LightRAG call
  int second_max_tokens = 0;  // RE / triple extraction
  double temperature = 0.0;
  LightRagFormat lightrag;
};

// What a style costs per passage.
struct StylePlan {
  int calls_per_passage = 2;  // 2 (NER then RE/triples) or 1 (LightRAG)
  int first_max_tokens = 0;   // budget of call 1
  int second_max_tokens = 0;  // budget of call 2 (0 when there is none)
};

// Default budgets: kOpenIe 512 / 2048 (SemFlowRAG A.2). SA-RAG and QAFD-RAG
// state none: kSaRag uses 2048 / 2048 (a 500-word chunk's entities with
// descriptions fit), kLightRag 4096 (entities and relationships with
// descriptions of a ~1200-token chunk). PromptOptions overrides them.
StylePlan PlanFor(ExtractionPromptStyle style, const PromptOptions& options = {});

// The passage as shown to the model: "title\ntext", or just the text when
// the title is empty or is already the text's first line.
std::string RenderPassage(std::string_view title, std::string_view text);

ChatRequest BuildSaRagNerRequest(std::string_view title, std::string_view text,
                                 const PromptOptions& options = {});
// `entities`: primary names from the NER call, in order.
ChatRequest BuildSaRagReRequest(std::string_view title, std::string_view text,
                                std::span<const std::string> entities,
                                const PromptOptions& options = {});
ChatRequest BuildOpenIeNerRequest(std::string_view title, std::string_view text,
                                  const PromptOptions& options = {});
// `named_entities`: the NER call's entities, sent back as {"named_entities": [...]}.
ChatRequest BuildOpenIeTripleRequest(std::string_view title, std::string_view text,
                                     std::span<const std::string> named_entities,
                                     const PromptOptions& options = {});
ChatRequest BuildLightRagRequest(std::string_view title, std::string_view text,
                                 const PromptOptions& options = {});

// Call 1 and call 2 of `style` (call 2 of kLightRag is an empty request).
ChatRequest BuildFirstRequest(ExtractionPromptStyle style, std::string_view title,
                              std::string_view text, const PromptOptions& options = {});
ChatRequest BuildSecondRequest(ExtractionPromptStyle style, std::string_view title,
                               std::string_view text, std::span<const std::string> entities,
                               const PromptOptions& options = {});

// A follow-up turn after an answer that could not be parsed: `original`'s
// messages, then the answer as an assistant turn, then a user turn naming
// `problem` and asking for the format again (JSON only, or the LightRAG
// records ending with the completion delimiter). Same budget and json_mode.
// Being a different request, it has its own cache entry, so a rerun replays
// both the bad answer and the follow-up instead of asking again.
ChatRequest BuildFormatRepairRequest(ExtractionPromptStyle style, const ChatRequest& original,
                                     std::string_view answer, std::string_view problem,
                                     const PromptOptions& options = {});

// ----- LightRAG tuple output -----

struct LightRagEntityRecord {
  std::string name;
  std::string type;
  std::string description;
};

struct LightRagRelationRecord {
  std::string source;
  std::string target;
  std::string description;
  std::string keywords;
  double strength = 1.0;  // 1.0 when missing or not a number
};

struct LightRagParse {
  std::vector<LightRagEntityRecord> entities;
  std::vector<LightRagRelationRecord> relationships;
  std::vector<std::string> content_keywords;
  // Records that could not be used, each with the reason and an excerpt
  // ("entity record has 3 fields, expected 4: ...").
  std::vector<std::string> rejections;
  std::vector<std::string> repairs;  // tolerated deviations, each once
  bool complete = false;             // the completion delimiter was seen
};

// Parses LightRAG records tolerantly: a record starts where a keyword
// ("entity", "relationship", "content_keywords", any case, quoted or not,
// with or without '(') is followed by the tuple delimiter, and runs to the
// next record start; record delimiters, newlines, the closing ')', quotes
// around fields (straight or curly) and <angle brackets> around whole fields
// are stripped. Text before the first record or after the completion
// delimiter is ignored. Entities need 4 fields, relationships 5 or 6 (extra
// fields are ignored, a missing or non-numeric strength is 1.0); shorter
// records and records with an empty name are rejected with a reason.
// When `truncated` (finish_reason "length") and no completion delimiter was
// seen, the last record is dropped unless it ends with a record delimiter:
// it may be cut off.
// Errors: InvalidArgument when the answer has text but no record at all.
Result<LightRagParse> ParseLightRagOutput(std::string_view content, const LightRagFormat& format,
                                          bool truncated);

}  // namespace flowrag

#endif  // FLOWRAG_EXTRACT_PROMPTS_H_
