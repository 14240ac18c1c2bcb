// Merging a validated LLM schema proposal (schema/schema_proposal.h) into
// the deterministic contract (DeriveContract), schema-contracts paper §3.2
// "statistical-before-semantic": the structural layer stays authoritative.
//
// Nothing of `offline` is removed and its structure (sources, catalog,
// identity keys, foreign keys) is not touched. Then:
//   - Row types: a proposed type of source S with extraction row_as_entity
//     (or "field" on S's single-field primary key) names S's offline type;
//     the first one per source renames it (relationships follow), unless the
//     name is taken. Its keys and attributes stay the offline ones; its text
//     fields are united with the proposal's.
//   - Other proposed types are added as entity types of their source (the
//     identity key is the anchor, else the extraction field) with their
//     extraction method: field and nested_field as proposed (a nested_field
//     path without "[*]" is a field), pattern as llm, and a second
//     row_as_entity type of a source as llm (its row type is taken). A name that is
//     already a type of the same source extends it; of another source, the
//     proposal's type is not added and relationships naming it use that type.
//   - Relationships: endpoints map to the final type names and must be types
//     of the contract; link fields must be fields of the endpoints' sources
//     (others are left out). A relationship matching a foreign-key
//     relationship (same endpoints, compatible fields) renames it (the first
//     one only); one running the other way joins on the same fields,
//     reversed. Others are added unless (from, to, name) exists already.
// `proposal` is updated to the final names, dropped relationships removed.
// `log` receives one line per rename, addition, skip and drop.
// Pure; O(types · relationships).
#ifndef FLOWRAG_SCHEMA_PROPOSAL_MERGE_H_
#define FLOWRAG_SCHEMA_PROPOSAL_MERGE_H_

#include <string>
#include <vector>

#include "flowrag/schema.h"
#include "schema/schema_proposal.h"

namespace flowrag {

SchemaContract MergeProposal(SchemaContract offline, SchemaProposal* proposal,
                             std::vector<std::string>* log);

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_PROPOSAL_MERGE_H_
