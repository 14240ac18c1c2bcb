// LLM entity extraction for `llm` entity types (schema-contracts paper
// Algorithm 3, B.3.3): instances of the types a contract reads with
// `extraction: {method: llm}` from a source, found by a chat model in the
// text of that source's records.
//
// Every record of a source that has llm types is asked once per passage
// (the record's passages are its B.7.4 chunks: at most 8,000 chars, 500
// overlap), in concurrent batches of `batch_records` calls (B.3.3: 100).
// The model sees the passage and the types and answers
//   {"entities": [{"type": "Material", "name": "brushed steel"}]}
// An instance is kept only when its type is one offered and its name (at
// most 200 bytes) occurs in the passage, case-insensitively: the closed
// world of the record's own text. Instances are deduplicated per type by
// EntityKey across the plan (the first spelling wins), appended to the
// record's derived entities (DERIVED_FROM the record, defined by the
// passage they were found in), and linked from the record's entity by a
// declared relationship between their types (not an llm one; confidence
// 0.9), else by MENTIONS; in a text document they are only defined (its
// passages mention them). A failed call or unreadable answer loses that
// passage's instances and is counted.
//
// Thread-safety: reentrant if the chat model is.
#ifndef FLOWRAG_SCHEMA_LLM_ENTITIES_H_
#define FLOWRAG_SCHEMA_LLM_ENTITIES_H_

#include <cstddef>
#include <string>
#include <vector>

#include "flowrag/schema.h"
#include "llm/chat_model.h"
#include "schema/construct.h"

namespace flowrag {

struct LlmEntityOptions {
  size_t batch_records = 100;  // B.3.3
};

struct LlmEntityReport {
  size_t calls = 0;         // chat calls (cache hits included)
  size_t failed_calls = 0;  // errors and unreadable answers
  size_t found = 0;         // instance mentions kept (before deduplication)
  size_t entities = 0;      // distinct instances
  size_t rejected = 0;      // unknown types, names not in the passage
};

// The llm entity types of the contract that have a source.
std::vector<const EntityType*> LlmEntityTypes(const SchemaContract& contract);

// Asks `chat` about every passage of every record whose source has llm
// types, and adds the kept instances (and their links) to `plan`.
LlmEntityReport ExtractLlmEntities(const SchemaContract& contract, ConstructionPlan* plan,
                                   ChatModel& chat, const LlmEntityOptions& options = {});

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_LLM_ENTITIES_H_
