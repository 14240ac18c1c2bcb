// The schema-guided QA agent (schema-contracts paper §3.5, Appendix D,
// Algorithm 9) over a store built by Engine::Ingest.
//
//   1. Query analysis (D.2) against the SchemaIndex: known values as typed
//      constraints, field names, years, answer type.
//      With a chat model (options.schema.analysis "auto" or "llm"), the E.4
//      pre-retrieval prompt (agent/tool_plan.h) also plans: its validated
//      constraints and return fields go first, its tool order is tried
//      before the preference order, its VectorRAG query is what VectorRAG
//      retrieves with, and ExternalSearch / out_of_scope trips the gate. The
//      plan is the first AnswerStep ("Plan(question)"); when the call fails
//      the offline analysis stands and a warning says so.
//      Query sufficiency (C.2): when the noun the question asks about (the
//      focus phrase of QuestionAnalysis, past auxiliaries, qualifiers such
//      as "total" or "latest", and never a verb or a name) matches no entity
//      type, source or field name, Answer::warnings says
//      so (the answer can then only come from text). With a chat model
//      (options.schema.extension "auto"), that gap triggers the query-scoped
//      extension of C.6 (schema/query_extension.h) before planning: the E.3
//      proposal's confident types and relationships extend a copy of the
//      contract that the E.4 prompt shows; the copy is dropped when the
//      question is answered (optionally saved as a snapshot, C.6.3). The
//      step "ExtendSchema(noun)" lists what was added and left out.
//   2. Stage-1 gate (D.3), only on evidence that the question asks for
//      something the store lacks: a present-time word ("today",
//      "currently") the sources never write; years none of which is in the
//      data's temporal range ("2019 and 2018" is in scope when 2019 is); a
//      proper-noun mention none of whose words (calendar words such as
//      "December", "FY" left out) occurs in a passage or the schema, in a
//      question that names no value, known name or year of the data → out
//      of scope: abstain (no external search here). "latest" orders the
//      data; it is no real-time word.
//   3. Plan–execute–retry (D.4–D.5): rounds r = 0..max_retries, each running
//      the next tool of the plan (the model's order, then) the contract's
//      routing preference (RoutingPolicy; by default SchemaLookup, when the
//      question constrains typed fields, → VectorRAG → GraphTraverse, a
//      graph retriever). The contract's routing.ood_gate: false turns the
//      stage-1 gate off. Running the tools of a round as a set with their
//      evidence united (Algorithm 9) was measured on TAT-QA and HybridQA
//      (the matched records before the VectorRAG passages): R@5 +0.1 and
//      −1.2, EM 0 and −0.4, so each round runs one tool; the lookup's
//      answer already carries the dense passages after its records.
//      SchemaLookup follows the schema's relationships when the question
//      asks about another entity type than the one its constraints matched
//      ("Which orders did Alice Smith place?": Customer → Order along the
//      foreign key's RELATED_TO facts, at most two hops; the answer records'
//      names or asked field, each record cited, then the matched ones), and
//      resolves a looked-up reference the question does not name in full
//      ("Which customer placed order O4?": customer_id C003 → the customer's
//      name); c_link is then the product of the relationships' confidences.
//      "How many", "total" and "average" aggregate over the answer records;
//      a year of the question narrows them. A value equal to a constraint
//      the question gave is never the answer.
//      VectorRAG filters (D.1): with entity constraints, only passages about
//      the matched records (their own, those the graph says mention their
//      entities, the pages their link fields name) — the dense index's id
//      filter when the method is dense, else the method's deepened ranking
//      filtered; with years, only passages stating a year in their range.
//      When the filter keeps fewer than top_k, the unfiltered ranking fills
//      the rest (passages about no other entity of the constrained types
//      first); when it keeps nothing the unfiltered ranking is used and the
//      step and warnings say so.
//      A round's answer must be grounded (stage 2): a lookup
//      value is grounded in its record (c_ground 1.0); a passage answer needs
//      its text in a cited passage (0.9) or half its words there (0.7) (a
//      title counts unless it is a file name, answer_lexicon.h IsFileLabel), and
//      is not grounded when it states uncertainty ("I cannot determine ...",
//      D.3 stage 2 (ii)) or only repeats a constraint of the question.
//      Otherwise the failure summary names what was tried and the next round
//      runs the next tool; after the last, the agent abstains.
//      A looked-up value that names a text document (a link field: a table
//      cell and its page) is followed when the question does not ask for
//      that field itself (its name is not among the first content words
//      after the question word, and the model's plan does not return it
//      without a GraphTraverse): the value is a bridge, and the question is
//      answered on the linked page (GraphTraverse, c_link = retry_link).
//      Backwards too: when the question asks for a field of a type and a
//      page VectorRAG retrieved is what records of that type link to, the
//      answer is those records' field (the page is the bridge; both cited).
//   4. Confidence c = c_link · c_node · c_ground: c_link 1.0 for the first
//      tool, `retry_link` after a retry, times the confidences of the
//      relationships a lookup followed; c_node the smallest constraint match
//      score (1.0 exact, 0.8 contained; 1.0 without constraints); a best
//      dense score under `min_similarity` discounts c and warns.
// SchemaLookup answers cite the SourceRecord passage and quote the
// "field: value" line; passage answers cite as the answer pipelines do. With
// a chat model (answerer auto/llm), the lookup's records and the VectorRAG
// passages are the evidence the model answers from; offline the lookup
// candidates are returned directly (D.3 (iii)).
//
// Every tool call is an AnswerStep: query = the call ("SchemaLookup(Order:
// customer_id = C001 → amount)"), answer = what it returned, summary = the
// outcome or the failure summary.
// Thread-safety: reentrant if the deps are.
#ifndef FLOWRAG_AGENT_SCHEMA_AGENT_H_
#define FLOWRAG_AGENT_SCHEMA_AGENT_H_

#include <functional>
#include <string_view>

#include "agent/pipeline.h"
#include "agent/schema_index.h"
#include "flowrag/options.h"
#include "flowrag/types.h"
#include "graph/snapshot.h"

namespace flowrag {

struct SchemaAgentDeps {
  const SchemaIndex* index = nullptr;
  const Snapshot* snapshot = nullptr;
  // Retrieval with explicit options (the engine's query path).
  std::function<Result<RetrievalResult>(std::string_view query, const QueryOptions& options,
                                        ChatModel* chat)>
      query;
  PipelineDeps pipeline;  // chat, idf, prices (retrieve is set per tool)
};

Result<Answer> RunSchemaAgent(std::string_view question, const AnswerOptions& options,
                              const SchemaAgentDeps& deps);

}  // namespace flowrag

#endif  // FLOWRAG_AGENT_SCHEMA_AGENT_H_
