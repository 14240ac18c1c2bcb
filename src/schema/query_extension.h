// Query-scoped schema extension (schema-contracts paper C.6, prompt E.3).
//
// When a question asks about something the contract has no type for (the
// agent's C.2 sufficiency check), one chat call reads the question and the
// contract's vocabulary (entity type and relationship names, nothing of the
// records) and proposes the missing entity types and relationships, each
// with a confidence:
//   {"needs_extension": true,
//    "required_entities": [{"type": "Supplier", "confidence": 0.9,
//                           "reason": "...", "examples": [...], "attributes": [...]}],
//    "required_relationships": [{"type": "SUPPLIES", "source_entity": "Supplier",
//                                "target_entity": "Product", "confidence": 0.8}],
//    "reasoning": "..."}
// Additions at or above `min_confidence` (0.7, C.4) are merged into a copy
// of the contract by ExtendContract (monotonic; the copy's version is
// bumped and its log lists them); the base is never touched, and the caller
// drops the copy after the question (C.6.2). A proposed type becomes an
// "llm" type without a source (closed world: it has no catalog fields; its
// instances can only come from text); a relationship needs both endpoints
// to be types of the copy. What is left out is listed with the reason.
//
// Thread-safety: reentrant if the chat model is.
#ifndef FLOWRAG_SCHEMA_QUERY_EXTENSION_H_
#define FLOWRAG_SCHEMA_QUERY_EXTENSION_H_

#include <string>
#include <string_view>
#include <vector>

#include "flowrag/schema.h"
#include "llm/chat_model.h"

namespace flowrag {

struct QueryExtension {
  bool needs_extension = false;      // the model's verdict
  SchemaContract contract;           // the base plus what was accepted
  std::vector<std::string> added;    // ExtendContract's list (empty: contract == base)
  std::vector<std::string> rejected; // "Customer: already an entity type", ...
  std::string reasoning;             // the model's
};

// The E.3 prompt for `question` over `base`'s vocabulary.
std::string QueryExtensionPrompt(std::string_view question, const SchemaContract& base);

// One chat call. Errors: the model's, and InvalidArgument when the answer is
// not a JSON object.
Result<QueryExtension> ExtendForQuery(std::string_view question, const SchemaContract& base,
                                      ChatModel& chat, double min_confidence = 0.7);

// C.6.3: writes `contract` as <dir>/schema_YYYYMMDD_HHMMSS.yaml (UTC; "_2",
// "_3", ... when taken), creating `dir`, for review and manual promotion
// (LoadContract reads it back). Returns the path; IoError names it.
Result<std::string> SaveExtensionSnapshot(const SchemaContract& contract, const std::string& dir);

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_QUERY_EXTENSION_H_
