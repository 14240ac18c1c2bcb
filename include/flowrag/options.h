// Options of the public API, with the defaults taken from the papers.
// Every struct can be default-constructed; per-call options override the
// engine's defaults.
#ifndef FLOWRAG_OPTIONS_H_
#define FLOWRAG_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/models.h"
#include "flowrag/progress.h"
#include "flowrag/status.h"

namespace flowrag {

class AnswerObserver;  // types.h

// How documents are cut into passages.
struct ChunkOptions {
  enum class Strategy {
    kNone,        // one passage per document (pre-chunked corpora, benchmarks)
    kWordWindow,  // SA-RAG §5.3: fixed word windows with overlap
    kBoundary,    // schema-contracts paper B.7.4: section/paragraph boundaries, char budget
  };
  Strategy strategy = Strategy::kWordWindow;
  // kWordWindow (SA-RAG §5.3): 500 words, 200 overlap; shorter documents stay whole.
  size_t window_words = 500;
  size_t overlap_words = 200;
  // kBoundary (schema-contracts B.7.4): documents up to 10,000 chars stay
  // whole; longer ones become chunks of at most 8,000 chars, 500 overlap.
  size_t boundary_threshold_chars = 10000;
  size_t max_chars = 8000;
  size_t overlap_chars = 500;

  // Names the offending field when the options are inconsistent.
  Status Validate() const;
  // Canonical text of these options (stored with each document, so changing
  // them re-chunks on the next index run).
  std::string Signature() const;
};

// Parses "none" | "window" | "boundary".
Result<ChunkOptions::Strategy> ParseChunkStrategy(const std::string& name);
// The name ParseChunkStrategy reads ("none", "window", "boundary").
std::string_view ChunkStrategyName(ChunkOptions::Strategy strategy);

struct IndexOptions {
  ChunkOptions chunking;
  // Documents per transaction: a crash loses at most one batch.
  size_t batch_size = 256;
  // Passages per embedding transaction.
  size_t embed_batch_size = 512;
  // The built-in embedder's IDF is fitted on the corpus and frozen; it is
  // refitted (and passages re-embedded) when the passage count has grown by
  // this factor since the last fit (1.0 = doubled), or always with `refit`.
  double idf_refit_growth = 1.0;
  bool refit = false;
  // Receives each phase's progress (flowrag/progress.h; StderrProgress()
  // prints it); empty: none. Called from extraction workers too.
  ProgressCallback progress;
  // Skip malformed JSONL records (reported) instead of failing the run.
  bool skip_bad_records = false;
  // Knowledge-graph extraction after embedding:
  //   "auto"      the LLM extractor when the engine has a chat model
  //               (EngineOptions::chat_model or ::openai_chat, or
  //               FLOWRAG_LLM_BASE_URL / FLOWRAG_LLM_MODEL), else "heuristic";
  //   "heuristic" the offline extractor (titles, proper nouns, dates, numbers,
  //               dictionary linking, sentence facts);
  //   "llm"       the papers' prompts through the configured chat model;
  //   "none"      no graph.
  std::string extractor = "auto";
  // LLM prompt family: "sarag" (SA-RAG App. B: NER + relations with aliases
  // and descriptions), "openie" (SemFlowRAG A.5.1: NER then triples),
  // "lightrag" (QAFD-RAG A4.2 tuples).
  std::string llm_prompt_style = "openie";
  // Passages per extraction transaction (schema records: records per graph
  // transaction). 0, the default, picks by extractor: 4,096 for the offline
  // extractor, whose batches take milliseconds and whose transactions each
  // write every index page of the graph tables they touch once (10^5
  // synthetic passages: 19 GB written at 256, 7.3 GB at 4,096; doc/scale.md
  // "Index run"), 256 for the LLM extractor and for schema records (a batch's
  // model answers are stored together, so a smaller batch shows progress).
  size_t extract_batch_size = 0;
  // Extraction workers (threads) of this run, offline extractor. Index runs
  // on one store at the same time (other processes and machines included)
  // share the extraction: each worker claims batches of pending passages
  // for a lease and writes them; the ingest, embedding and finalisation
  // phases take turns under the store's writer lock. The graph is the one a
  // single worker builds (doc/storage.md "Parallel indexing").
  size_t workers = 1;
  // A claimed batch not written within this many seconds (its worker died)
  // is claimed again by another worker.
  uint64_t extract_lease_seconds = 300;
  // Estimate LLM calls and tokens for the pending passages without calling
  // anything (documents are still stored and embedded).
  bool dry_run = false;
  // Test hook: called after each committed document batch with its 1-based
  // number; a non-OK status stops the run there (as a crash would).
  std::function<Status(size_t)> after_batch;
  // Cancellation: polled between the batches of each phase (documents,
  // passage embeddings, extraction; from every extraction worker, so it
  // must be thread-safe). A non-OK status stops the run there: what was
  // committed stays, the run is journalled as failed, Index() returns that
  // status, and the next run resumes. The Python package turns Ctrl-C into
  // kCancelled this way.
  std::function<Status()> interrupt;
};

// Per-query options. `params` overrides method options by name
// (e.g. {"bm25.k1", "0.9"}); unknown names are rejected.
struct QueryOptions {
  // "auto" (the default) is the best method measured for the store
  // (bench/out/retrieval.md): "qafd" when it holds a graph with entities,
  // else "hybrid". RetrievalResult::method names the one that ran.
  std::string method = "auto";
  size_t top_k = 5;
  std::map<std::string, std::string> params;
  // Graph methods: also compute explanation paths and the retrieved subgraph
  // (RetrievalResult::nodes/edges/paths beyond seeds and scored nodes). Off
  // by default: they cost more than the retrieval itself on large graphs.
  // `query --explain`, the server's viewer and `"explain": true` turn it on.
  bool explain = false;
};

// The schema-guided agent (schema-contracts paper Appendix D), used by Ask
// when the store holds a schema contract (pipeline "schema", or "auto").
struct SchemaAgentOptions {
  // Query analysis (D.2): "auto" asks the chat model when one is configured
  // (the E.4 pre-retrieval prompt: tool calls with typed constraints, return
  // fields and filters, closed-world validated and merged with the offline
  // analysis), else matches the question against the schema's known values
  // and field names offline; "offline" never asks; "llm" requires a model.
  std::string analysis = "auto";
  // Query-scoped extension (C.6): "auto" — when the question asks about
  // something the schema has no type or field for and the analysis may use
  // the chat model, one E.3 call proposes entity types and relationships;
  // those with confidence ≥ extension_min_confidence extend a copy of the
  // contract that this question's plan reads, then the copy is dropped
  // (the stored contract never changes). "off" never asks.
  std::string extension = "auto";
  double extension_min_confidence = 0.7;  // C.4
  // C.6.3: when set, each query-scoped extension that added something is
  // also written to this directory as schema_<UTC time>.yaml, for review
  // and manual promotion (a contract file LoadContract reads).
  std::string extension_snapshots;
  std::string vector_method = "dense";  // VectorRAG (D.1: dense retrieval)
  std::string graph_method = "ppr";     // GraphTraverse
  size_t max_retries = 2;               // R_max of Algorithm 9
  bool ood_gate = true;                 // D.3 stage 1: abstain on out-of-scope questions
  double min_similarity = 0.3;          // D.3 stage 2: best dense score below → low confidence
  double low_similarity_discount = 0.8; // confidence factor of such an answer
  double retry_link = 0.9;              // c_link of an answer found after a retry (D.5)
};

// How Engine::Ask answers.
struct AnswerOptions {
  QueryOptions query;               // the retriever, top_k and its per-query params
  // "single": retrieve once, answer. "cot" (SA-RAG App. A, Listing 2/7): up
  // to max_steps rounds; each summarises the evidence and either answers or
  // asks a follow-up question for the next round. "decompose" (Listing 3):
  // sub-questions answered in order, then a final retrieval on the question.
  // "schema": the schema-guided agent (SchemaLookup, VectorRAG, GraphTraverse
  // with gates; needs a store built by Engine::Ingest). "auto": "schema" when
  // the store holds a contract, else "single".
  std::string pipeline = "auto";
  SchemaAgentOptions schema;
  size_t max_steps = 3;             // SA-RAG App. A
  // Passages per round the answerer reads (SemFlowRAG A.2: the top 5); the
  // retriever may return more (query.top_k), which stay in the result.
  size_t context_passages = 5;
  // "auto": the chat model when one is configured, else "extractive".
  std::string answerer = "auto";
  // "short" (SA-RAG Listing 1/6: JSON reasoning + final_answer) or "long"
  // (QAFD-RAG Prompt 3: a markdown response).
  std::string style = "short";
  // Give up between steps once this much wall time has passed (0 = no limit).
  double deadline_ms = 0.0;
  // Earlier turns of a conversation (chat clients), oldest first: shown to
  // the chat model as the conversation so far; retrieval uses the question.
  std::vector<ChatMessage> conversation;
  // Streams the answer as it is made (types.h); not owned, may be null.
  AnswerObserver* observer = nullptr;

  // Names the offending field when the options are inconsistent.
  Status Validate() const;
};

struct ImportOpenIeOptions {
  // Skip malformed records (counted and reported) instead of failing.
  bool skip_bad_records = false;
  size_t batch_size = 512;
  ProgressCallback progress;  // as IndexOptions::progress
};

struct EngineOptions {
  // "hash": the built-in offline embedder. "openai": an OpenAI-compatible
  // /v1/embeddings endpoint configured by `openai_embedder`, else by
  // FLOWRAG_EMBED_BASE_URL, FLOWRAG_EMBED_MODEL and FLOWRAG_EMBED_API_KEY (or
  // OPENAI_API_KEY). "custom": `custom_embedder`. Empty: "custom" when
  // `custom_embedder` is set, else whatever the store was indexed with,
  // else "hash".
  std::string embedder;
  // The caller's own embedder (models.h), e.g. a Python callable; shared,
  // so it lives as long as the engine or the caller holds it. The store
  // records the kind "custom" and the vectors under its ModelId(). A store
  // indexed with a custom embedder and opened without one still answers
  // what needs no new vector (bm25); whatever must embed fails with
  // FailedPrecondition naming the model.
  std::shared_ptr<Embedder> custom_embedder;
  // The "openai" embedder's endpoint; unset: from the environment.
  std::optional<OpenAiEmbedderOptions> openai_embedder;
  // The chat model of extraction ("llm"/"auto" extractors), of the
  // query-time LLM steps and of Ask: `chat_model` when set (its answers are
  // not cached in the store); else an OpenAI-compatible client on
  // `openai_chat` when set; else one configured by FLOWRAG_LLM_* when
  // FLOWRAG_LLM_BASE_URL or FLOWRAG_LLM_MODEL is set; else none (offline).
  std::shared_ptr<ChatModel> chat_model;
  std::optional<OpenAiChatOptions> openai_chat;
  size_t hash_dimension = 1024;
  // The tokeniser's stemming language for BM25 and the hash embedder
  // (doc/text.md): "english-s" (plural-only S-stemmer, the default: it
  // measured best on the English benchmarks), "none", or a Snowball
  // algorithm ("english", "german", "french", "russian", ...). Chinese,
  // Japanese, Thai and the like are segmented whatever the language. Empty:
  // what the store records, else "english-s". The first index run records
  // it (meta "language"); opening a store with another language fails with
  // FailedPrecondition.
  std::string language;
  // Collections with at least this many passages use an approximate
  // passage index (passage_ann) instead of exact float search.
  size_t hnsw_threshold = 20000;
  // The approximate passage index: "auto" (an exact scan of int8 codes
  // stored dimension-major, its best candidates rescored with the float
  // vectors, when the embedder's queries are sparse, as the built-in
  // embedder's are; else HNSW), "hnsw" or "int8" (src/vector/flat_index.h
  // says why and what each measured). Another value: InvalidArgument at
  // open.
  std::string passage_ann = "auto";
  // Open the store read-only (queries only).
  bool read_only = false;
  // Writers of one store (index, ingest, delete, import, in any process) take
  // turns (storage/writer_lock.h); a writer waits this long for the one
  // before it, then fails with DeadlineExceeded.
  uint64_t writer_wait_ms = 3600000;
  // Follow the store: a background thread loads what other processes write
  // to it (another server, an index run), so queries see those writes
  // within the staleness bound of doc/storage.md ("Replicas"). PostgreSQL
  // stores announce each write; SQLite ones are polled every
  // follow_poll_ms (also PostgreSQL's fallback). `flowrag serve` sets it.
  bool follow_store = false;
  uint64_t follow_poll_ms = 250;
  // What QueryOptions::method "auto" means; empty: qafd on a store with a
  // graph, else hybrid (flowrag.yaml: query.method).
  std::string default_method;
  // Per-query method options a query gets when it does not set them itself
  // (flowrag.yaml: methods), e.g. {"qafd.alpha": "20"}.
  std::map<std::string, std::string> default_params;
};

}  // namespace flowrag

#endif  // FLOWRAG_OPTIONS_H_
