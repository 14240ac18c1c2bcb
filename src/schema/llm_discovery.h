// Two-pass LLM schema discovery (schema-contracts paper §3.2, A.6, E.1–E.2):
// the semantic layer of a schema contract from a chat model, grounded in the
// closed-world field catalog and merged over the deterministic contract.
//
//   auto schema = InduceSchema(dir);
//   LlmDiscoveryReport report;
//   auto contract = DiscoverWithLlm(*schema, dir, chat, {}, &report);
//   if (!contract.ok()) contract = DeriveContract(*schema);  // offline fallback
//
// Steps:
//   1. Samples: the records of every source are read again from `dir` (with
//      the same exclusion manifest InduceSchema applied) and the
//      representative record r* and diverse samples it chose are quoted,
//      catalog fields only, r* of every source first, then the samples
//      round-robin, while `pass1_sample_tokens` last; the rest, while
//      `pass2_sample_tokens` last, go to pass 2. Pass 1 also quotes matched
//      samples (A.8.1, schema/matched_samples.h): for each foreign key, up
//      to `matched_values` shared key values with the records of both
//      sources holding each (3 a side quoted, the rest counted), while
//      `matched_sample_tokens` last.
//   2. Pass 1, deep discovery (E.1): catalog + structural hints + samples →
//      entity types, relationships, temporal configuration.
//   3. The answer is repaired (llm/json_repair.h; an answer cut off by
//      max_tokens is closed, nothing invented) and validated against the
//      catalog (schema/schema_proposal.h: FieldValidity, Eq. 3; invalid
//      references dropped and listed; names normalised).
//   4. Pass 2, validation and extension (E.2): the validated pass-1 schema,
//      catalog, hints and further samples → additions, renames, issues; read
//      and validated the same way and merged as A.6.1 says.
//   5. The proposal is merged over DeriveContract(schema)
//      (schema/proposal_merge.h): keys, foreign keys and the catalog stay
//      authoritative; types and relationships are renamed or added where
//      valid. generated_by = "llm:<model>". The result is linted
//      (ParseContract(ToYaml(...))) before it is returned.
//
// Errors (the caller falls back to the offline contract):
//   InvalidArgument   an option out of range;
//   NotFound / FailedPrecondition  `dir` no longer holds the sources of
//                     `schema` (records differ: induce again); reader errors
//                     name the file and line;
//   any code          a failed model call, as the ChatModel returned it,
//                     prefixed "schema discovery pass N (<name>): ";
//   Unavailable       an answer still unusable after JSON repair and
//                     `format_repair_turns` follow-up turns, naming the pass
//                     and the problem;
//   Internal          the merged contract fails the linter (a bug).
//
// Cost: exactly two calls when the answers are usable (plus one per format
// repair turn). Thread-safety: a pure function of its arguments except for
// the calls on `chat`, which is not owned. O(total records) to re-read the
// sources, plus the prompts' size.
#ifndef FLOWRAG_SCHEMA_LLM_DISCOVERY_H_
#define FLOWRAG_SCHEMA_LLM_DISCOVERY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "flowrag/schema.h"
#include "flowrag/status.h"
#include "llm/chat_model.h"
#include "schema/schema_proposal.h"

namespace flowrag {

struct LlmDiscoveryOptions {
  // The dataset in a sentence ({description} of E.1); may be empty.
  std::string description;
  // The exclusion manifest InduceSchema used (SchemaOptions::exclusions);
  // empty: DIR/flowrag_exclude.yaml when present, as InduceSchema does.
  std::string exclusions;
  // Budgets for the quoted records (A.4.3: ~8K tokens), ≈ chars_per_token
  // characters per token.
  size_t pass1_sample_tokens = 8000;
  size_t pass2_sample_tokens = 4000;
  size_t matched_sample_tokens = 2000;  // A.8.1 matched record sets, pass 1
  size_t matched_values = 5;            // Algorithm 2: Sample(K_common, 5) per link
  size_t chars_per_token = 4;
  size_t max_value_bytes = 400;  // each quoted value is cut to this, ≥ 16
  int max_tokens = 4096;         // answer budget per call, ≥ 1
  double temperature = 0.0;      // ≥ 0
  int format_repair_turns = 1;   // follow-ups after an unusable answer, ≥ 0
};

// One call of the two (with its format-repair turns).
struct LlmPassReport {
  int calls = 0;
  int cache_hits = 0;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  bool truncated = false;            // the used answer hit max_tokens and was closed
  size_t samples = 0;                // records quoted in the prompt
  size_t matched_sets = 0;           // A.8.1 matched record sets quoted (pass 1)
  std::vector<std::string> repairs;  // JSON repairs and follow-up turns
  ProposalCheck check;               // references, FieldValidity, drops, adjustments
};

struct LlmDiscoveryReport {
  std::string model;
  LlmPassReport pass1, pass2;
  // Both passes, validated and merged, with the contract's final type names:
  // also what the contract cannot hold yet (descriptions, extraction
  // methods, temporal configuration, the model's issues).
  SchemaProposal proposal;
  std::vector<std::string> merge;  // how the proposal met the offline contract
  // Eq. 3 over both passes.
  double FieldValidity() const {
    const int64_t refs = pass1.check.references + pass2.check.references;
    const int64_t valid = pass1.check.valid_references + pass2.check.valid_references;
    return refs == 0 ? 1.0 : static_cast<double>(valid) / static_cast<double>(refs);
  }
};

// See the header comment. `report` may be null.
Result<SchemaContract> DiscoverWithLlm(const InducedSchema& schema, const std::string& dir,
                                       ChatModel& chat, const LlmDiscoveryOptions& options,
                                       LlmDiscoveryReport* report);

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_LLM_DISCOVERY_H_
