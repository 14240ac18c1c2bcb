// What an extractor produces for one passage: the common currency of the
// offline extractor, the LLM extractors and OpenIE import. The graph writer
// (storage/graph_writer.h) turns it into nodes and edges with provenance.
// Here, below both, because extract/ and storage/ share it and neither is
// below the other.
#ifndef FLOWRAG_COMMON_EXTRACTION_H_
#define FLOWRAG_COMMON_EXTRACTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/text.h"  // EntityKey: the normalised name key of resolution and linking

namespace flowrag {

struct ExtractedEntity {
  std::string name;                  // surface form as written
  std::string type;                  // "PERSON", "DATE", ... ("" when unknown)
  std::vector<std::string> aliases;  // other names of the same entity in this passage
  std::string description;           // SA-RAG §5.3 entity description ("" when none)
  int count = 1;                     // occurrences in the passage
  // True when this passage itself names the entity (a title, a detected
  // span, an LLM/OpenIE entity); false when it was only linked because the
  // name is known from elsewhere (dictionary linking). An entity survives
  // only while some passage defines it.
  bool defining = true;
};

// A subject–relation–object fact (SemFlowRAG §3.2). Subject and object are
// entity names that appear in the same extraction's entities (or aliases).
struct ExtractedTriple {
  std::string subject;
  std::string relation;  // relation text: a phrase (LLM/OpenIE) or the sentence (offline)
  std::string object;
};

struct PassageExtraction {
  int64_t passage_id = 0;  // store passage id
  std::vector<ExtractedEntity> entities;
  std::vector<ExtractedTriple> triples;
};

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_EXTRACTION_H_
