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
// D.3), the expected answer type, and the phrase naming what is asked about
// (its entity type, and the C.2 sufficiency check on it).
//
// Relationships between records (D.1 GraphTraverse, §3.3 schema-driven
// linking): the graph's RELATED_TO facts between record entities whose
// relation is a declared relationship between their types (foreign keys,
// B.5.1) or a link field of the subject's type, read once at Build.
//
// Thread-safety: immutable after Build. Memory O(records · fields + links).
#ifndef FLOWRAG_AGENT_SCHEMA_INDEX_H_
#define FLOWRAG_AGENT_SCHEMA_INDEX_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agent/document_links.h"
#include "flowrag/schema.h"
#include "graph/snapshot.h"
#include "lexical/aho_corasick.h"

namespace flowrag {

struct RecordInput {
  std::string external_id;  // the SourceRecord document
  std::string entity_type;
  std::string fields_json;  // {"field": "value" | ["v1", ...]}
  std::string file;
  int64_t line = 0;
  bool structured = true;
};

inline constexpr uint32_t kNoEntity = ~uint32_t{0};

struct IndexedRecord {
  uint32_t passage = 0;  // snapshot passage index of the record's first passage
  uint32_t entity = kNoEntity;  // the graph entity the record defines (KnowledgeGraph index)
  std::string document_id, type, name, file;
  int64_t line = 0;
  std::vector<std::pair<std::string, std::string>> fields;  // catalog order, arrays joined by ", "
};

// A relationship instance between two records, seen from one of them.
struct RecordLink {
  uint32_t record = 0;    // the other record (index into SchemaIndex::records())
  std::string relation;   // the relationship's name (or the link field's)
  std::string field;      // the referencing field (in the subject's record), "" when unknown
  double confidence = 1.0;
  bool outgoing = true;   // this record's entity is the subject (it holds the reference)
};

// A constraint the question places on structured records.
struct ValueMatch {
  std::string value;  // as stored
  std::string field;
  std::string type;
  std::vector<uint32_t> records;  // indexes into SchemaIndex::records()
  double score = 1.0;             // 1.0 exact, 0.8 contained, below for fuzzy (D.5 m_i)
  size_t token_begin = 0, token_end = 0;  // where in the question (exact matches)
};

struct FieldMention {
  std::string type, field;
  // Share of the field name's tokens the question uses, words of the
  // field's own type's name counting half ("customer id" names
  // Order.customer_id more than Order.order_id).
  double score = 0;
  // Only words of its own type's name matched ("order" for Order.order_date,
  // "customer" for Customer.customer_id): a weak mention.
  bool by_type_name = false;
};

struct QuestionAnalysis {
  std::vector<ValueMatch> constraints;  // best first
  std::vector<FieldMention> fields;     // best first
  std::vector<int> years;
  bool realtime = false;                // a present-time word the sources never write
  std::vector<std::string> unknown_mentions;  // proper nouns the store does not know
  // A proper noun of the question the store knows (a value, or a word of a
  // passage or of the schema): the question is about the data whatever else
  // it names.
  bool names_known = false;
  // The words naming what is asked about (D.2), lower-case, in question
  // order, at most three: the noun phrase after the question word ("which
  // customer placed ..." → {customer}; "what is the number of orders ..."
  // → {orders}), without determiners, auxiliaries, aggregation words and
  // adjectives ("total", "latest", "average"), stopping at a verb, a
  // preposition, a number or a capitalised name. Empty when the question
  // word takes no noun ("Who prefers ...", "What does Zed ship?").
  std::vector<std::string> focus;
  // The entity type the focus names (type or source name, stemmed; "" when
  // none): "Which orders did Alice Smith place?" → "Order".
  std::string asked_type;
  // Aggregation the question asks of the answer records: "count" ("how
  // many", "the number of"), "sum" ("total", "sum", "combined"), "average"
  // ("average", "mean"), or "".
  std::string aggregate;
  // C.2 query sufficiency: the focus noun ("which suppliers", "how many
  // inhabitants") when no entity type, source or field of the schema names
  // any focus word and no known value contains it; empty when the schema
  // covers it or there is no focus.
  std::string missing_concept;
  std::string answer_type;              // "number", "date", "list", "string"
  // The question asks for an explanation or a description ("Why ...",
  // "How did ...", "What caused ...", "What does X consist of?"): D.4's
  // "requires descriptive evidence", routed to VectorRAG first.
  bool descriptive = false;
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
  // Relationship instances of record `r` (both directions), in graph order.
  const std::vector<RecordLink>& LinksOf(uint32_t r) const;
  // Records of `type` reached from `from` along relationship instances in
  // at most `max_hops` hops (breadth first; the nearest depth that reaches
  // any wins). `path` (may be null) receives the relations of the path to
  // the first record found, and `confidence` (may be null) the product of
  // their confidences. O(links visited).
  std::vector<uint32_t> Related(const std::vector<uint32_t>& from, std::string_view type,
                                size_t max_hops, std::vector<std::string>* path,
                                double* confidence) const;
  // Snapshot passages about record `r`: its own (first) passage and every
  // passage the graph says mentions its entity (text mentions, the records
  // referencing it). Sorted, unique.
  std::vector<uint32_t> PassagesAbout(uint32_t r, const Snapshot& snapshot) const;
  // Records snapshot passage `passage` is about: the record it belongs to,
  // the records whose entities it mentions, and, for a page, the records
  // whose values name it (RecordsLinkingTo). Ascending, unique.
  // O(mentions of the passage).
  std::vector<uint32_t> RecordsAbout(uint32_t passage, const Snapshot& snapshot) const;
  // True when `type` has structured records in the store.
  bool HasRecords(std::string_view type) const;
  // (record, field) pairs whose value is `name` (EntityKey), and, when a
  // text document is titled `name`, those whose value names it
  // (agent/document_links.h): the records a link field leads from, read
  // backwards from the page. Unique, in record order.
  std::vector<std::pair<uint32_t, std::string>> RecordsLinkingTo(std::string_view name) const;
  bool IsRecordDocument(const std::string& document_id) const {
    return record_documents_.count(document_id) > 0;
  }
  // Snapshot passages of the text documents a record value `name` names
  // (agent/document_links.h: title, alias, unique alias prefix, titles
  // written in it): where a link field's value leads.
  std::vector<uint32_t> LinkedPassages(std::string_view name) const;
  // SchemaLookup's fuzzy step (D.1: exact, then fuzzy), for a proper-noun
  // `mention` (lower case) that no value equals or contains: the values
  // within an optimal-string-alignment distance of one edit per five
  // characters (at least one; mentions shorter than kMinFuzzyLength are not
  // tried), the nearest only (at most kMaxFuzzyMatches), each appended as a
  // constraint of score kFuzzyScale · (1 − distance / |mention|) — below the
  // substring match's 0.8, so c_node says the match was approximate
  // ("Spaish" → "Spanish": 0.8 · 5/6 ≈ 0.67). Returns how many.
  // O(values · |mention| · max distance).
  static constexpr size_t kMinFuzzyLength = 5;
  static constexpr size_t kMaxFuzzyMatches = 20;
  static constexpr double kFuzzyScale = 0.8;
  size_t AddFuzzyMatches(const std::string& mention, size_t begin, size_t end,
                         std::vector<ValueMatch>* out) const;

  // True when `mention` (a proper-noun span of a question) names nothing the
  // store knows: none of its words (letter runs, calendar words such as
  // month names and "FY" left out) occurs in a passage or in the schema's
  // type, source and field names. A mention of calendar words and numbers
  // only is a time qualifier, not a name: false.
  bool NamesNothingKnown(std::string_view mention, const Snapshot& snapshot) const;

  int min_year() const { return min_year_; }
  int max_year() const { return max_year_; }

 private:
  class Builder;  // fills the index (schema_index.cc)

  // The steps of AnalyzeQuestion. Known values the question names (trie
  // matches with a content word) as constraints of score 1; returns the
  // tokens they cover.
  std::vector<bool> MatchKnownValues(const TokenizedText& text, QuestionAnalysis* a) const;
  // A proper-noun span [b, e) no known value covers: values containing it
  // (0.8), else fuzzy matches; else an unknown mention, unless it is short,
  // a defined term, or its words are known.
  void MatchMention(const TokenizedText& text, size_t b, size_t e, const Snapshot& snapshot,
                    QuestionAnalysis* a) const;
  // Field names the question's words name, weak when only by their type's
  // own words; best first.
  void MatchFieldNames(const std::set<std::string>& words, QuestionAnalysis* a) const;
  // The focus phrase, the aggregation its skipped words ask for, the type it
  // names and the concept the schema lacks.
  void AnalyzeFocus(const TokenizedText& text, QuestionAnalysis* a) const;
  // Words of a type's own name and its sources' (empty for an unknown type).
  const std::set<std::string>& TypeWords(const std::string& type) const;

  void LinkRecords(const Snapshot& snapshot);  // entity and links_ of every record
  // The records naming each text document (TextDocument::linked_from).
  void LinkTextDocuments(const std::set<std::pair<std::string, std::string>>& text_fields);

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
  // Per type: singular words of its name and its sources' names; and the
  // (type, word) pairs where the word is the head (last word) of one.
  std::map<std::string, std::set<std::string>> type_words_;
  std::set<std::pair<std::string, std::string>> type_heads_;
  std::unordered_map<std::string, std::vector<std::pair<uint32_t, std::string>>> by_value_;
  std::unordered_map<std::string, uint32_t> record_documents_;
  // Text documents: title, passages, the records whose values name it.
  struct TextDocument {
    std::string title;
    std::vector<uint32_t> passages;
    std::vector<std::pair<uint32_t, std::string>> linked_from;  // (record, field)
  };
  std::vector<TextDocument> text_documents_;
  DocumentLinks document_links_;
  std::unordered_map<std::string, std::vector<uint32_t>> text_by_title_;  // title key → text documents
  std::vector<std::vector<RecordLink>> links_;  // per record
  std::unordered_map<uint32_t, std::vector<uint32_t>> records_of_entity_;  // graph entity → records
  std::unordered_map<uint32_t, uint32_t> record_of_passage_;               // first passage → record
  std::unordered_map<uint32_t, uint32_t> text_document_of_passage_;        // passage → text_documents_
  std::set<std::string> record_types_;
  int min_year_ = 0, max_year_ = 0;  // 0: no years seen
};

// True when the question word `word` (lower-case) names the field-name word
// `token` (lower-case): equal singular forms ("names" / "name"), or `token`
// is an abbreviation of `word`: at least 3 letters that begin it, the word
// at least 2 letters longer ("pos" / "position", "pop" / "population").
bool NamesFieldWord(std::string_view word, std::string_view token);

// 4-digit years (1800–2100) standing alone in `text`, in order.
std::vector<int> YearsIn(std::string_view text);

}  // namespace flowrag

#endif  // FLOWRAG_AGENT_SCHEMA_INDEX_H_
