// Schema linking: which tables, columns and joins a question needs
// (QAFD-RAG §4.2, A2.2.1, A5 Prompt 5).
//
// QAFD, per sub-query q_k:
//   1. Candidates. Keywords of q_k (retrieval/keywords.h); a node's Eq. 1
//      score is the best cosine between a keyword and the node's name text
//      (split table/column names) or, if higher, the Jaccard overlap of the
//      keyword's words with the node's own name words ("singers" scores 1
//      on table singer, ½ on singer.singer_id), times 0.4 + 0.6 × its
//      table's overlap for a column (the question that names a column but
//      not its table matches it less); scores under min_seed_score
//      are dropped. A column holding a literal the question quotes or names
//      (value_index.h) scores value_score/√(columns holding it) and is
//      always a candidate; otherwise the `seeds` best nodes scoring at least
//      seed_ratio × the best become candidates.
//   2. Sources and targets. With a chat model, Prompt 5 proposes sub-queries
//      and [source, target, confidence] column pairs; value-matched columns
//      are added to them as candidates and sources (paired with the
//      sub-query's first target, confidence = their candidate score), in
//      the sub-queries whose text holds the value, or in every sub-query
//      when none does. Offline, the best candidate is the source and each
//      other candidate a target, with its score as confidence (one
//      candidate: source = target). The pairs set the mass only with
//      mass = "path".
//   3. Source mass. Default (mass = "score"): every candidate of q_k is a
//      source with Δ_v = α·T_v·score(v), α = 10 (A2.2.1), so the flow starts
//      where the question's words and values point, in proportion to how
//      well they match (QAFD-RAG's QA setting, α·T on each seed, and the
//      authors' code, which shares α·ΣT by seed weight). mass = "path" is
//      A2.2.1's text: m_s = α·Σ_{j∈P} T_j over the shortest path P between
//      the pair's source and target (Σ_{i∈V} T_i without a path), pairs
//      sharing a source adding up, scaled by their confidence. The solver's
//      feasibility guard caps the sources of a component at half its
//      capacity when it holds less than twice their mass (on most Spider
//      schemas, ~30 nodes, it does). SchemaLink::sources reports each
//      source's mass before and after the guard.
//   4. Flow diffusion (graph_algo/flow_diffusion.h) with the query-aware
//      hybrid weights of Eq. 5c on the schema graph: h(u) the embedding of
//      the node text (names, type, description, samples), h(q) of q_k. Sink
//      capacities T_v = 1 (A2.2.1's text; sinks = "degree": T_v = deg(v), as
//      the authors' code does).
//   5. Support (relevance = "support", the default): the flow decides which
//      column candidates are linked: a column candidate is linked when its
//      x_v ≥ select·max x (select = 0.2) in some sub-query. The flow adds no
//      node itself. Value-matched columns always stay, and table candidates
//      keep their keyword score (x_v is the excess v pushed over its weighted
//      degree, so a table node, one edge per column, has a small x however
//      much flow passes through it). When nothing was pushed (max_pushes =
//      0, or no candidate's mass above its sink) the candidates are the
//      answer: that is the no-diffusion ablation. relevance = "max" is the
//      linker before issue 22: relevance = max(candidate score, x_v/max x)
//      over every node the flow reached, linked at ≥ select (0.5 then).
// Tables: those of the linked nodes. Join paths: the tables are connected by
// shortest paths through FOREIGN_KEY edges (growing from the most relevant
// table); the key columns and intermediate tables on them are added. Output
// ranks tables and columns by relevance.
//
// Why the flow confirms rather than adds (issue 22, measured on Spider dev
// with the built-in hashed embedder, bench/out/sql_linking.md): of the
// columns the old linker added because x_v/max x ≥ 0.5, 13% were gold, and
// at no x/max bucket more than 29%; a column raises F1 only when it is gold
// more often than about F1/2 ≈ 0.33. Among the keyword candidates x/max does
// separate: candidates under 0.2 were gold about 30% of the time, those over
// 0.8 about 73%. The text and the authors' code differ on sink capacities
// (uniform vs degree) and source mass (path vs per-seed); both were measured
// with the rest at the defaults (column F1, Spider dev / Spider 2.0-lite):
// uniform 0.660 / 0.411, degree 0.647 / 0.359; score mass 0.660 / 0.411,
// path mass 0.573 / 0.284; support 0.660 / 0.411, max 0.572 / 0.372; no
// diffusion (max_pushes = 0) 0.648 / 0.390; BM25 with as many columns per
// question 0.626 / 0.361. select = 0.15 / 0.25 gives 0.653 / 0.410 and
// 0.666 / 0.377 (Spider 2.0-lite has 24 questions: one question moves its
// mean by up to 0.04).
//
// Baselines behind the same call: "all" (every table and column), "bm25"
// (Okapi BM25 over node texts) and "dense" (cosine of the question with the
// node texts), each returning its `top_k` best nodes (or, with top_columns,
// the best nodes down to the top_columns-th column: the baseline at a given
// output size); a table node counts as its table, a column node as its
// column and its table.
//
// Thread-safety: Link() is const and reentrant. Cost of Link(): O(|V|·|K|·d)
// for candidate scoring plus the diffusion, which touches only the nodes
// that receive mass.
#ifndef FLOWRAG_SQL_SCHEMA_LINKER_H_
#define FLOWRAG_SQL_SCHEMA_LINKER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "embed/embedder.h"
#include "flowrag/sql.h"
#include "flowrag/status.h"
#include "llm/chat_model.h"
#include "retrieval/qafd_retriever.h"
#include "sql/schema_graph.h"
#include "sql/value_index.h"
#include "text/bm25_index.h"

namespace flowrag {

enum class LinkMethod { kQafd, kAll, kBm25, kDense };
Result<LinkMethod> ParseLinkMethod(std::string_view name);
std::string_view LinkMethodName(LinkMethod method);

// SchemaLinkOptions, LinkedItem, JoinEdge, SchemaLink: flowrag/sql.h.

class SchemaLinker {
 public:
  // Embeds every node (name text and full text). With a null embedder the
  // built-in hashed embedder is fitted on the node texts. `chat` may be null.
  static Result<std::unique_ptr<SchemaLinker>> Create(std::shared_ptr<const SchemaGraph> graph,
                                                      ValueIndex values,
                                                      std::shared_ptr<Embedder> embedder,
                                                      ChatModel* chat = nullptr);

  Result<SchemaLink> Link(std::string_view question, LinkMethod method,
                          const SchemaLinkOptions& options = {}) const;

  const SchemaGraph& graph() const { return *graph_; }
  const ValueIndex& values() const { return values_; }

  // The compact prompt text for a set of tables/columns and joins: one line
  // per table "name(col TYPE PK, col TYPE -- e.g. 'v1', 'v2'; ...)", then the
  // joins. With full_tables every column of a linked table is listed.
  std::string SchemaText(const std::vector<LinkedItem>& tables, const std::vector<LinkedItem>& columns,
                         const std::vector<JoinEdge>& joins, bool full_tables) const;

 private:
  struct Pair {
    uint32_t source = 0, target = 0;
    double confidence = 1.0;
  };
  struct Subquery {
    std::string text;
    std::vector<Pair> pairs;
    std::vector<std::pair<uint32_t, double>> candidates;  // node, score
  };

  SchemaLinker() = default;
  Result<FloatMatrix> EmbedAll(const std::vector<std::string>& texts) const;
  Result<std::vector<Subquery>> PlanOffline(std::string_view question, const SchemaLinkOptions& o,
                                            SchemaLink* link) const;
  Result<std::vector<Subquery>> PlanWithLlm(std::string_view question, const SchemaLinkOptions& o,
                                            SchemaLink* link) const;
  class LlmPlanReader;  // the planner's answer read against the schema (link_llm.cc)
  // The schema as the planner prompt shows it: every table for a small
  // schema, else a summary of the nodes nearest the question (link_llm.cc).
  Result<std::string> PlannerSchemaText(std::string_view question,
                                        const SchemaLinkOptions& o) const;
  // With a chat model's plan: each value match becomes a candidate and a
  // source (paired with the sub-query's first target) of the sub-queries
  // whose text holds the value, or of every sub-query when none does.
  void MergeValueMatches(const std::vector<ColumnValueMatch>& values, const SchemaLinkOptions& o,
                         std::vector<Subquery>* plan) const;
  // QAFD schema linking: plan the sub-queries (PlanSubqueries), diffuse
  // each from its seeds over the query-aware graph (DiffuseSubquery), then
  // select the tables and columns the flow confirms (SelectLinked).
  struct QafdFlow;  // one call's options and per-node relevance (schema_linker.cc)
  Status LinkQafd(std::string_view question, const SchemaLinkOptions& o, SchemaLink* link) const;
  // The chat model's plan with the value matches merged in, when there is a
  // model and its plan names nodes of the schema; else the offline plan.
  Result<std::vector<Subquery>> PlanSubqueries(std::string_view question,
                                               const SchemaLinkOptions& o,
                                               const std::vector<ColumnValueMatch>& values,
                                               SchemaLink* link) const;
  Status DiffuseSubquery(const Subquery& sq, const SchemaLinkOptions& o, QafdFlow* flow,
                         SchemaLink* link) const;
  void SelectLinked(const SchemaLinkOptions& o, const std::vector<ColumnValueMatch>& values,
                    QafdFlow* flow, SchemaLink* link) const;
  // The first top_k nodes, or with top_columns > 0 the shortest prefix
  // holding top_columns columns (all of them when fewer exist).
  std::vector<std::pair<uint32_t, double>> TakeTop(std::vector<std::pair<uint32_t, double>> ranked,
                                                   const SchemaLinkOptions& o) const;
  void LinkRanked(const std::vector<std::pair<uint32_t, double>>& ranked, const SchemaLinkOptions& o,
                  SchemaLink* link) const;
  void AddJoins(std::vector<double>* relevance, std::vector<std::string>* why, SchemaLink* link) const;

  std::shared_ptr<const SchemaGraph> graph_;
  ValueIndex values_;
  std::shared_ptr<Embedder> embedder_;
  ChatModel* chat_ = nullptr;
  FloatMatrix name_vectors_, text_vectors_;
  std::vector<std::vector<std::string>> name_words_;  // stemmed words of each node's own name
  Bm25Index bm25_;
};

}  // namespace flowrag

#endif  // FLOWRAG_SQL_SCHEMA_LINKER_H_
