// One-hop baseline "onehop": LightRAG's local and global retrieval (Guo et
// al. 2024, as compared in QAFD-RAG §4), following its reference code
// (github.com/HKUDS/LightRAG, lightrag/operate.py: _get_node_data,
// _find_most_related_edges_from_entities, _get_edge_data,
// _find_most_related_entities_from_relationships,
// _find_related_text_unit_from_entities / _relations, _merge_all_chunks;
// constants.py for the defaults). A baseline: reported, not tuned.
//
// Keywords: LightRAG asks the LLM for low-level keywords (entities,
// details) and high-level keywords (themes). With a chat model the same
// (query_llm.h LlmDualKeywords); offline keywords.h: the names and spans it
// finds are the low-level keywords, its phrases and content words the
// high-level ones. Each list is joined with ", " and embedded as one text.
// Both empty: the query stands for the low-level keywords.
//
// Local mode (low-level keywords):
//   1. the `top_k` entities whose name vectors are closest to the keywords
//      (cosine ≥ `min_cosine`), best first (LightRAG embeds an entity's
//      name with its description; here the name, which is all an imported
//      OpenIE graph has);
//   2. their one-hop neighbourhood: every relation (entity pair joined by
//      a fact) touching one of them, deduplicated, sorted by edge degree
//      (sum of the endpoints' distinct-neighbour counts) then weight (facts
//      joining the pair), descending.
// Global mode (high-level keywords):
//   1. the relations whose fact texts are closest to the keywords (cosine ≥
//      `min_cosine`, or with fact_search=bm25 any BM25 score > 0; a fact
//      text stands for every pair it states), the first
//      `top_k` pairs in that order. LightRAG searches every relation; here,
//      as the walks seed (retrieval/local_facts.h), only the fact texts of
//      the best `fact_passages` passages of the hybrid prior and of the
//      entities the query names are scored (0: every fact text). On 2wiki
//      that scan was three quarters of the query (p50 2.6 → 1.1 ms; Recall@5
//      58.4 → 60.4);
//   2. their entities, in relation order.
//   (LightRAG's relation vectors embed keywords, both names and the
//   description; a fact text "subject relation object" is the same.)
// Hybrid (the default) merges both: entities and relations round-robin
// (local first), deduplicated; then cut to LightRAG's token budgets
// (`max_entity_tokens`, `max_relation_tokens`; a row is estimated at one
// token per 4 bytes of its name(s), type and description/relation text
// plus 10 for the JSON around it).
// Chunks:
//   entity chunks: the passages mentioning each kept entity, in entity order;
//     a passage counted once (for the first entity naming it), each
//     entity's passages ordered by how many kept entities name them; then
//     picked by `pick`:
//       vector  (LightRAG's default) the int(related_chunks · entities / 2)
//               with the highest cosine to the query;
//       weight  linear-gradient polling: the i-th entity gets
//               round(related_chunks − i·(related_chunks − 1)/(n − 1)) of
//               its passages, unused quota passed to the next entities;
//   relation chunks: the same over the passages that state each kept
//     relation's facts, leaving out the entity chunks;
//   merged round-robin (entity chunk, relation chunk, ...), deduplicated,
//   at most `chunk_top_k`; the request's top_k in that order (score 1/rank).
//
// Per-query options (LightRAG's defaults):
//   fact_search               vector  global mode: fact texts by vector | bm25 (seeding.h; one
//                                     key for every fact-seeded method)
//   onehop.mode               hybrid  local | global | hybrid
//   onehop.top_k              40      entities / relations retrieved (DEFAULT_TOP_K)
//   onehop.chunk_top_k        20      merged chunks kept (DEFAULT_CHUNK_TOP_K)
//   onehop.related_chunks     5       related_chunk_number (DEFAULT_RELATED_CHUNK_NUMBER)
//   onehop.pick               vector  vector | weight (DEFAULT_KG_CHUNK_PICK_METHOD)
//   onehop.min_cosine         0.2     vector storage cosine threshold (DEFAULT_COSINE_THRESHOLD)
//   onehop.fact_passages      20      global mode's fact texts: the best N prior passages'
//                                     (0 = all)
//   onehop.max_entity_tokens  6000    DEFAULT_MAX_ENTITY_TOKENS
//   onehop.max_relation_tokens 8000   DEFAULT_MAX_RELATION_TOKENS
//   onehop.max_keywords       24      offline keyword cap
//   onehop.llm                true    keywords by the LLM when a chat model is set
//
// Measured offline (Recall@5, bench/retrieval_report.py): 2wiki 60.4,
// 2wiki-train 61.1, musique-dev 39.8, hotpotqa-train 66.0, medical 91.0
// (OpenIE 91.8), musique-train OpenIE 50.6: below BM25 everywhere. With the
// lexical embedder few entity names reach cosine 0.2 for a joined keyword
// string (none on medical, where only the global mode retrieves), and the
// chunks are picked by cosine, which ranks passages below BM25.
//
// Outputs: ranked, seeds (the local entities, with their cosine),
// node_scores (kept entities, by cosine for local ones, then in relation
// order), keywords; with RetrievalRequest::explain, paths (entity →
// passage, or entity → entity → passage for a relation chunk) and the
// subgraph (kept relations). Diagnostics: nodes_touched = entities and
// passages considered, edges_touched = RELATED_TO and MENTIONS entries read.
//
// Thread-safety: Retrieve() is const and reentrant.
// Complexity: a vector search over entity names, one scan of the passage
// vectors (query_scores.h ScoreQuery), the local fact texts + O(Σ degree of
// the top entities) + O(mentions of the kept entities and sources of the
// kept relations). The distinct-neighbour counts are computed once per graph
// (O(RELATED_TO)).
#ifndef FLOWRAG_RETRIEVAL_ONE_HOP_RETRIEVER_H_
#define FLOWRAG_RETRIEVAL_ONE_HOP_RETRIEVER_H_

#include <string>

#include "retrieval/options_retriever.h"
#include "retrieval/params.h"
#include "retrieval/retriever.h"
#include "retrieval/seeding.h"

namespace flowrag {

struct OneHopOptions {
  FactSearch fact_search = FactSearch::kVector;  // seeding.h: vector | bm25
  std::string mode = "hybrid";
  size_t top_k = 40;
  size_t chunk_top_k = 20;
  size_t related_chunks = 5;
  std::string pick = "vector";
  double min_cosine = 0.2;
  size_t fact_passages = 20;
  size_t max_entity_tokens = 6000;
  size_t max_relation_tokens = 8000;
  size_t max_keywords = 24;
  bool llm = true;
  Status Override(ParamReader& r);
};

// LightRAG's pick_by_weighted_polling over per-item chunk lists (each
// already ordered): item i gets round(max − i·(max − min)/(n − 1)) chunks
// (max for a single item), at most as many as it has; then the unused quota
// goes one chunk at a time to the first items with chunks left. Exposed for
// tests.
std::vector<uint32_t> PickByWeightedPolling(const std::vector<std::vector<uint32_t>>& items,
                                            size_t max_chunks, size_t min_chunks = 1);

class OneHopRetriever final : public OptionsRetriever<OneHopOptions> {
 public:
  std::string_view Name() const override { return "onehop"; }
  Result<RetrievalOutput> Retrieve(const Snapshot& s, const RetrievalRequest& r) const override;
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_ONE_HOP_RETRIEVER_H_
