// SchemaLookup, the schema-guided agent's structured tool (schema-contracts
// paper D.1): typed constraints matched in the question select records of
// one entity type, exact matches before contained ones (the match scores are
// c_node), and the field the question asks for is read from them; the
// schema's relationships are followed when the question asks about another
// type (D.1 GraphTraverse over foreign keys and link fields).
//
// Thread-safety: pure functions of their arguments.
#ifndef FLOWRAG_AGENT_SCHEMA_LOOKUP_H_
#define FLOWRAG_AGENT_SCHEMA_LOOKUP_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agent/schema_index.h"

namespace flowrag {

struct Lookup {
  std::string type, field;        // the answer records' type; the return field ("" → names)
  std::vector<uint32_t> records;  // the answer records
  std::vector<std::string> values;
  std::vector<std::string> constraints;  // "field = value"
  double c_node = 1.0;
  // values[0] aggregates every answer record: their number ("how many") or
  // the sum or average of the field (QuestionAnalysis::aggregate).
  bool aggregated = false;
  // Relationships followed (D.1 GraphTraverse over the schema's links): the
  // records the constraints matched and their type, when the answer records
  // are others; the relations of the path and the product of their
  // confidences.
  std::string matched_type;
  std::vector<uint32_t> bridge;
  std::vector<std::string> path;
  double c_path = 1.0;
  // A value the question itself gave, dropped from the answer.
  std::string given;
};

// The entity type whose records satisfy the most constraints, those records,
// and the field the question asks for (see the definition for the rules).
Lookup SchemaLookup(std::string_view question, const QuestionAnalysis& a, const SchemaIndex& index);

// The value of `field` in `rec` ("" when it has none); "" asks for the name.
std::string ValueOf(const IndexedRecord& rec, const std::string& field);

}  // namespace flowrag

#endif  // FLOWRAG_AGENT_SCHEMA_LOOKUP_H_
