// SchemaIndex: the runtime routing context of the schema-guided agent
// (schema-contracts paper §3.5 (i), D.2): the structured records a contract
// ingested, with the known-value dictionary of their discrete fields, the
// field-name vocabulary per entity type and the temporal range, over one
// snapshot.
//
// Query analysis (AnalyzeQuestion) matches a question against it without a
// model: known values found in the question (exact, match score 1.0; a
// capitalised mention contained in a longer value, 0.8: D.5's m_i), the
// fields whose names the question uses, years, real-time words and
// proper-noun mentions that nothing in the store knows (the OOD signals of
// D.3), and the expected answer type.
//
// Thread-safety: immutable after Build. Memory O(records · fields).
#ifndef FLOWRAG_AGENT_SCHEMA_INDEX_H_
#define FLOWRAG_AGENT_SCHEMA_INDEX_H_

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "extract/aho_corasick.h"
#include "flowrag/schema.h"
#include "graph/snapshot.h"

namespace flowrag {

struct RecordInput {
  std::string external_id;  // the SourceRecord document
  std::string entity_type;
  std::string fields_json;  // {"field": "value" | ["v1", ...]}
  std::string file;
  int64_t line = 0;
  bool structured = true;
};

struct IndexedRecord {
  uint32_t passage = 0;  // snapshot passage index of the record's first passage
  std::string document_id, type, name, file;
  int64_t line = 0;
  std::vector<std::pair<std::string, std::string>> fields;  // catalog order, arrays joined by ", "
};

// A constraint the question places on structured records.
struct ValueMatch {
  std::string value;  // as stored
  std::string field;
  std::string type;
  std::vector<uint32_t> records;  // indexes into SchemaIndex::records()
  double score = 1.0;             // 1.0 exact, 0.8 contained (D.5 m_i)
  size_t token_begin = 0, token_end = 0;  // where in the question (exact matches)
};

struct FieldMention {
  std::string type, field;
  double score = 0;  // share of the field name's tokens the question uses
};

struct QuestionAnalysis {
  std::vector<ValueMatch> constraints;  // best first
  std::vector<FieldMention> fields;     // best first
  std::vector<int> years;
  bool realtime = false;                // "current", "latest", "today", "now"
  std::vector<std::string> unknown_mentions;  // proper nouns the store does not know
  // C.2 query sufficiency: the noun the question asks about ("which
  // suppliers", "how many inhabitants") when no entity type, source or field
  // of the schema names it; empty when the schema covers it.
  std::string missing_concept;
  std::string answer_type;              // "number", "date", "list", "string"
};

class SchemaIndex {
 public:
  static std::unique_ptr<SchemaIndex> Build(const SchemaContract& contract,
                                            std::vector<RecordInput> records,
                                            const Snapshot& snapshot);

  QuestionAnalysis AnalyzeQuestion(std::string_view question, const Snapshot& snapshot) const;

  // Closed-world check of a constraint someone else proposed (the E.4
  // planner): the known values of `type`.`field` equal to `value` (score
  // 1.0, case-insensitive), else those containing it (0.8, at most 20).
  // Type and field compare case-insensitively; "name" is the record's name.
  // A field / nested_field type's name (or field) is its field in the
  // records of its source's row type. Empty when nothing matches.
  std::vector<ValueMatch> MatchValue(std::string_view type, std::string_view field,
                                     std::string_view value) const;
  // The contract's spelling of an entity type, or "" when it has none such.
  std::string FindType(std::string_view type) const;
  // The spelling of a field of `type` (an attribute, or "name"), or "".
  std::string FindField(std::string_view type, std::string_view field) const;

  const SchemaContract& contract() const { return contract_; }
  const std::vector<IndexedRecord>& records() const { return records_; }
  // (record, field) pairs whose value is `name` (EntityKey): the records a
  // link field leads from, read backwards from the page titled `name`.
  std::vector<std::pair<uint32_t, std::string>> RecordsLinkingTo(std::string_view name) const;
  bool IsRecordDocument(const std::string& document_id) const {
    return record_documents_.count(document_id) > 0;
  }
  // Snapshot passages of the text documents titled `name` (EntityKey): where
  // a link field's value leads.
  std::vector<uint32_t> LinkedPassages(std::string_view name) const;
  int min_year() const { return min_year_; }
  int max_year() const { return max_year_; }

 private:
  SchemaContract contract_;
  std::vector<IndexedRecord> records_;
  // Known values: trie payload → value id; per value its (field, type, records).
  struct KnownValue {
    std::string value, field, type;
    std::vector<uint32_t> records;
  };
  std::vector<KnownValue> values_;
  std::vector<std::string> value_keys_;  // lower-cased values, for containment
  TokenTrie trie_;
  // Field vocabulary: (type, field, lower-cased name tokens).
  struct FieldName {
    std::string type, field;
    std::vector<std::string> tokens;
  };
  std::vector<FieldName> field_names_;
  std::set<std::string> vocabulary_;  // singular words of type, source and field names
  std::unordered_map<std::string, std::vector<std::pair<uint32_t, std::string>>> by_value_;
  std::unordered_map<std::string, uint32_t> record_documents_;
  std::unordered_map<std::string, std::vector<uint32_t>> text_passages_;  // title key → passages
  int min_year_ = 0, max_year_ = 0;  // 0: no years seen
};

}  // namespace flowrag

#endif  // FLOWRAG_AGENT_SCHEMA_INDEX_H_
