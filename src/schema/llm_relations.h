// LLM relationship extraction (schema-contracts paper B.5.3): instances of
// the relationship types a contract declares `extraction: llm`, read by a
// chat model from the record they co-occur in.
//
// A record is a candidate when it holds two entities whose types a declared
// llm relationship connects (from → to). Its entities are the record's own
// (row type), its field / nested_field instances, and the targets of its
// foreign-key links (typed by the relationship). Per source, the first
// `max_calls_per_source` candidates in file order get one call each (sent
// as one concurrent batch); the model sees the record's text, its entities
// with their types and the relationship types that fit them, and answers
//   {"relationships": [{"type": "MADE_OF", "source": "Espresso Machine",
//                       "target": "steel", "confidence": 0.9}]}
// A proposed instance is kept only when its type is one offered, both ends
// are entities listed for that record with the relationship's types, and
// it is not already a link; its confidence is the model's (0.8 when
// absent, clamped to [0, 1]). Kept instances are appended to the record's
// links (so they are written, resumed and removed with it). A failed call
// or an unreadable answer loses only that record's instances and is
// counted.
//
// Thread-safety: reentrant if the chat model is.
#ifndef FLOWRAG_SCHEMA_LLM_RELATIONS_H_
#define FLOWRAG_SCHEMA_LLM_RELATIONS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "flowrag/schema.h"
#include "llm/chat_model.h"
#include "schema/construct.h"

namespace flowrag {

struct LlmRelationOptions {
  size_t max_calls_per_source = 50;  // B.5.3
  size_t max_record_chars = 6000;    // of the record's text in the prompt
};

struct LlmRelationReport {
  size_t candidates = 0;    // records with two entities an llm relationship connects
  size_t calls = 0;         // chat calls (cache hits included)
  size_t failed_calls = 0;  // errors and unreadable answers
  size_t over_cap = 0;      // candidates past the per-source cap: not asked
  size_t added = 0;         // links appended
  size_t rejected = 0;      // proposed instances that failed the checks above
};

// True when the contract declares any relationship `extraction: llm`.
bool HasLlmRelationships(const SchemaContract& contract);

// Asks `chat` about the candidate records of `plan` and appends the kept
// instances to their links (and to plan->links).
LlmRelationReport ExtractLlmRelationships(const SchemaContract& contract, ConstructionPlan* plan,
                                          ChatModel& chat, const LlmRelationOptions& options = {});

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_LLM_RELATIONS_H_
