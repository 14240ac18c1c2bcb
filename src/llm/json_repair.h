// Tolerant parsing of JSON written by a language model.
//
// It lives in llm/, beside the clients whose answers it reads: every module
// that asks a model for JSON (graph extraction, schema discovery and
// extension, SQL schema linking, query analysis, the agent's tool plans)
// already depends on llm/, and nothing here depends on what they do with it.
//
// Models asked for JSON often answer with almost-JSON: a markdown fence, a
// sentence before or after, a trailing comma, single quotes, unquoted keys,
// Python literals, or an answer cut off by the token budget. ParseLlmJson()
// finds the JSON value in such an answer and repairs what can be repaired
// without guessing content; everything else is an error that says where the
// text stopped making sense.
//
// What is found: the first balanced JSON object or array. When the answer has
// a markdown code fence (```json ... ```), its content is tried first. Text
// around the value is ignored. A '{' or '[' in prose that does not start a
// JSON value ("see [1]" excepted: that IS a JSON array) is skipped; once the
// parser has read a complete element or a "key": of a candidate, that
// candidate is the answer's JSON and its errors are reported.
//
// Repairs (each applied one is named in RepairedJson::repairs):
//   - trailing and doubled commas are removed, missing commas between
//     elements and members inserted;
//   - single-quoted strings become double-quoted when the closing quote is
//     unambiguous (followed by , : ] } or a line end), so 'Tesla's coil' stays
//     one string; curly “...” quotes likewise;
//   - unquoted keys made of [A-Za-z0-9_$-] are quoted;
//   - True / False / None become true / false / null;
//   - // and /* */ comments between tokens are removed;
//   - inside strings: raw control characters are escaped, invalid escapes
//     (\' , \x) keep their character, invalid UTF-8 becomes U+FFFD, and a '"'
//     followed on the same line by more text (not , : ] } ") is taken as an
//     inner quote and escaped;
//   - truncation (only with allow_truncated, i.e. finish_reason "length"):
//     every array drops its incomplete last element, every object drops an
//     incomplete member whose value is a string, number or literal (or whose
//     key or value is missing) and keeps one whose value is an object or
//     array (closed); then all open containers are closed. So
//     {"triples": [["a","r","b"], ["c","r"  gives {"triples": [["a","r","b"]]}:
//     nothing is invented and no cut-off string survives. A number or
//     literal at the very end counts as incomplete.
//
// Errors: InvalidArgument whose message names the byte offset, what was
// expected and a short excerpt, e.g.
//   not JSON at byte 57: expected ',' or ']' after an array element, near "... ]] ]} x"
// or "no JSON object or array in the answer: \"I cannot help with that\"".
// A truncated answer without allow_truncated fails with
//   "the JSON ends before it is complete (at byte N): ...".
// Internal only if the repair itself produced invalid JSON (a bug; the
// fuzz-style tests check it never happens).
//
// Complexity: O(n) per candidate start, at most kMaxCandidates candidates.
// Nesting deeper than max_depth is an error. Pure; thread-safe.
#ifndef FLOWRAG_LLM_JSON_REPAIR_H_
#define FLOWRAG_LLM_JSON_REPAIR_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"

namespace flowrag {

struct JsonRepairOptions {
  // Close JSON that stops mid-value (see the header comment). Set it when the
  // model reported finish_reason "length".
  bool allow_truncated = false;
  // Containers nested deeper than this are rejected (stack safety).
  size_t max_depth = 64;
};

struct RepairedJson {
  nlohmann::json value;  // an object or an array
  // Repairs applied, short fixed phrases ("removed trailing comma", ...),
  // each once, in the order first applied. Empty for strict JSON.
  std::vector<std::string> repairs;
  // True when the value was cut off and closed (allow_truncated only).
  bool truncated = false;
};

// Candidate starts ('{' or '[') tried per region before giving up.
inline constexpr size_t kMaxJsonCandidates = 32;

// Finds, repairs and parses the JSON object or array in `text`.
Result<RepairedJson> ParseLlmJson(std::string_view text, const JsonRepairOptions& options = {});

// A short, single-line, UTF-8-safe quote of `text` around byte `pos` (about
// `radius` bytes each side, "..." marks cuts), for error messages.
std::string ExcerptAround(std::string_view text, size_t pos, size_t radius = 30);

}  // namespace flowrag

#endif  // FLOWRAG_LLM_JSON_REPAIR_H_
