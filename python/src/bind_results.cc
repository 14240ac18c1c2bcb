// The result types of include/flowrag/types.h and eval.h as read-only
// Python classes. Each class lists its fields in `_fields`, in declaration
// order, for the package's to_dict() and repr(). List and dict fields are
// converted to Python lists and dicts on each access.
#include <pybind11/stl.h>

#include "binding.h"
#include "flowrag/eval.h"
#include "flowrag/types.h"

namespace flowrag::py_binding {

namespace py = pybind11;

namespace {

// A class with read-only fields whose names it records in `_fields`.
template <class T>
class Record {
 public:
  Record(py::module_& m, const char* name, const char* doc) : cls_(m, name, doc) {}
  ~Record() { cls_.attr("_fields") = py::tuple(names_); }
  template <class M>
  Record& field(const char* name, M T::*member, const char* doc = "") {
    cls_.def_readonly(name, member, doc);
    names_.append(name);
    return *this;
  }

 private:
  py::class_<T> cls_;
  py::list names_;
};

void BindRetrieval(py::module_& m) {
  Record<ScoredPassage>(m, "ScoredPassage", "One retrieved passage, ranked.")
      .field("passage_id", &ScoredPassage::passage_id, "stable while its document is unchanged")
      .field("document_id", &ScoredPassage::document_id)
      .field("title", &ScoredPassage::title)
      .field("ordinal", &ScoredPassage::ordinal, "position of the passage in its document")
      .field("begin", &ScoredPassage::begin, "UTF-8 byte offset into the document text")
      .field("end", &ScoredPassage::end)
      .field("page_first", &ScoredPassage::page_first,
             "first 1-based page (PDF documents); 0 when the document has no pages")
      .field("page_last", &ScoredPassage::page_last)
      .field("text", &ScoredPassage::text)
      .field("score", &ScoredPassage::score, "method-specific; higher is better");
  Record<RetrievalDiagnostics>(m, "RetrievalDiagnostics", "What a retrieval cost.")
      .field("time_ms", &RetrievalDiagnostics::time_ms, "wall time of the retrieval itself")
      .field("candidates_scored", &RetrievalDiagnostics::candidates_scored)
      .field("iterations", &RetrievalDiagnostics::iterations)
      .field("residual", &RetrievalDiagnostics::residual)
      .field("nodes_touched", &RetrievalDiagnostics::nodes_touched)
      .field("edges_touched", &RetrievalDiagnostics::edges_touched)
      .field("extra", &RetrievalDiagnostics::extra, "method-specific counters");
  Record<GraphNode>(m, "GraphNode", "A node of the subgraph a graph method touched.")
      .field("id", &GraphNode::id)
      .field("kind", &GraphNode::kind, "Passage, Entity, EntityDescription or Fact")
      .field("label", &GraphNode::label)
      .field("score", &GraphNode::score, "mass / activation / probability")
      .field("seed", &GraphNode::seed);
  Record<GraphEdge>(m, "GraphEdge", "An edge of the touched subgraph.")
      .field("source", &GraphEdge::from, "the node id the edge leaves (C++ `from`)")
      .field("target", &GraphEdge::to, "the node id it enters (C++ `to`)")
      .field("kind", &GraphEdge::kind, "MENTIONS, RELATED_TO, DESCRIBES or SYNONYM")
      .field("relation", &GraphEdge::relation, "RELATED_TO: the relation text")
      .field("weight", &GraphEdge::weight)
      .field("flow", &GraphEdge::flow);
  Record<RetrievalResult>(m, "RetrievalResult", "Ranked passages and how they were found.")
      .field("method", &RetrievalResult::method, "the method that ran ('auto' resolved)")
      .field("passages", &RetrievalResult::passages, "best first")
      .field("diagnostics", &RetrievalResult::diagnostics)
      .field("keywords", &RetrievalResult::keywords)
      .field("nodes", &RetrievalResult::nodes, "graph methods: seeds and scored nodes")
      .field("edges", &RetrievalResult::edges, "graph methods with explain=True")
      .field("paths", &RetrievalResult::paths, "a seed-to-passage path per passage (explain)")
      .field("context", &RetrievalResult::context, "relation texts a method adds (sa)");
  Record<MethodOption>(m, "MethodOption", "A per-query option of a method, with its default.")
      .field("name", &MethodOption::name)
      .field("type", &MethodOption::type, "number, integer, bool or string")
      .field("default", &MethodOption::default_value);
}

void BindAnswer(py::module_& m) {
  Record<Citation>(m, "Citation", "A cited passage and the sentence that supports the answer.")
      .field("marker", &Citation::marker)
      .field("passage_id", &Citation::passage_id)
      .field("document_id", &Citation::document_id)
      .field("title", &Citation::title)
      .field("quote", &Citation::quote)
      .field("begin", &Citation::begin)
      .field("end", &Citation::end)
      .field("page_first", &Citation::page_first, "pages of the quote; 0: no pages")
      .field("page_last", &Citation::page_last);
  Record<TokenUsage>(m, "TokenUsage", "What the chat model calls of one answer cost.")
      .field("llm_calls", &TokenUsage::llm_calls)
      .field("cache_hits", &TokenUsage::cache_hits)
      .field("prompt_tokens", &TokenUsage::prompt_tokens)
      .field("completion_tokens", &TokenUsage::completion_tokens)
      .field("cost_usd", &TokenUsage::cost_usd);
  Record<AnswerStep>(m, "AnswerStep", "One retrieval round of an iterative pipeline.")
      .field("query", &AnswerStep::query)
      .field("answer", &AnswerStep::answer)
      .field("summary", &AnswerStep::summary)
      .field("follow_up", &AnswerStep::follow_up)
      .field("passage_ids", &AnswerStep::passage_ids);
  Record<Answer>(m, "Answer", "A grounded answer with citations.")
      .field("question", &Answer::question)
      .field("text", &Answer::text)
      .field("reasoning", &Answer::reasoning)
      .field("answered", &Answer::answered)
      .field("confidence", &Answer::confidence)
      .field("answerer", &Answer::answerer)
      .field("pipeline", &Answer::pipeline)
      .field("citations", &Answer::citations)
      .field("steps", &Answer::steps)
      .field("retrieval", &Answer::retrieval)
      .field("usage", &Answer::usage)
      .field("warnings", &Answer::warnings)
      .field("time_ms", &Answer::time_ms);
}

void BindIndexReport(py::module_& m) {
  Record<IndexReport>(m, "IndexReport", "What an index run did.")
      .field("documents_seen", &IndexReport::documents_seen)
      .field("documents_added", &IndexReport::documents_added)
      .field("documents_replaced", &IndexReport::documents_replaced)
      .field("documents_unchanged", &IndexReport::documents_unchanged)
      .field("passages_added", &IndexReport::passages_added)
      .field("passages_embedded", &IndexReport::passages_embedded)
      .field("batches_committed", &IndexReport::batches_committed)
      .field("embedder_refitted", &IndexReport::embedder_refitted)
      .field("extractor", &IndexReport::extractor)
      .field("passages_extracted", &IndexReport::passages_extracted)
      .field("passages_relinked", &IndexReport::passages_relinked)
      .field("extraction_failures", &IndexReport::extraction_failures)
      .field("entities_created", &IndexReport::entities_created)
      .field("entities_deleted", &IndexReport::entities_deleted)
      .field("facts_created", &IndexReport::facts_created)
      .field("triples_rejected", &IndexReport::triples_rejected)
      .field("graph_texts_embedded", &IndexReport::graph_texts_embedded)
      .field("synonym_edges", &IndexReport::synonym_edges)
      .field("estimated_llm_calls", &IndexReport::estimated_llm_calls)
      .field("estimated_prompt_tokens", &IndexReport::estimated_prompt_tokens)
      .field("estimated_completion_tokens", &IndexReport::estimated_completion_tokens)
      .field("messages", &IndexReport::messages)
      .field("ingest_seconds", &IndexReport::ingest_seconds)
      .field("embed_seconds", &IndexReport::embed_seconds)
      .field("extract_seconds", &IndexReport::extract_seconds)
      .field("graph_seconds", &IndexReport::graph_seconds)
      .field("total_seconds", &IndexReport::total_seconds);
}

void BindStats(py::module_& m) {
  Record<GraphStats>(m, "GraphStats", "Knowledge-graph statistics of a store.")
      .field("nodes", &GraphStats::nodes, "per node kind")
      .field("edges", &GraphStats::edges, "per edge kind")
      .field("isolated_ratio", &GraphStats::isolated_ratio)
      .field("average_degree", &GraphStats::average_degree)
      .field("degree_min", &GraphStats::degree_min)
      .field("degree_median", &GraphStats::degree_median)
      .field("degree_p90", &GraphStats::degree_p90)
      .field("degree_p99", &GraphStats::degree_p99)
      .field("degree_max", &GraphStats::degree_max)
      .field("extracted_passages", &GraphStats::extracted_passages)
      .field("failed_passages", &GraphStats::failed_passages)
      .field("llm_calls", &GraphStats::llm_calls)
      .field("llm_prompt_tokens", &GraphStats::llm_prompt_tokens)
      .field("llm_completion_tokens", &GraphStats::llm_completion_tokens)
      .field("memory_bytes", &GraphStats::memory_bytes);
  Record<SchemaStats>(m, "SchemaStats", "Schema and KG quality of a store built by ingest.")
      .field("present", &SchemaStats::present)
      .field("version", &SchemaStats::version)
      .field("source_records", &SchemaStats::source_records)
      .field("schema_utility", &SchemaStats::schema_utility)
      .field("link_validity", &SchemaStats::link_validity)
      .field("qa_ready", &SchemaStats::qa_ready);
  Record<SegmentFileStats>(m, "SegmentFileStats", "One file of a store's segment directory.")
      .field("id", &SegmentFileStats::id)
      .field("kind", &SegmentFileStats::kind)
      .field("rows", &SegmentFileStats::rows)
      .field("deleted_rows", &SegmentFileStats::deleted_rows)
      .field("bytes", &SegmentFileStats::bytes)
      .field("level", &SegmentFileStats::level);
  Record<SegmentStats>(m, "SegmentStats", "A store's segments (empty directory: none kept).")
      .field("directory", &SegmentStats::directory)
      .field("manifest", &SegmentStats::manifest)
      .field("generation", &SegmentStats::generation)
      .field("files", &SegmentStats::files)
      .field("live_bytes", &SegmentStats::live_bytes)
      .field("unreferenced_files", &SegmentStats::unreferenced_files)
      .field("unreferenced_bytes", &SegmentStats::unreferenced_bytes)
      .field("merges_pending", &SegmentStats::merges_pending)
      .field("snapshot_source", &SegmentStats::snapshot_source);
  Record<StoreStats>(m, "StoreStats", "What a store holds.")
      .field("path", &StoreStats::path)
      .field("format_version", &StoreStats::format_version)
      .field("documents", &StoreStats::documents)
      .field("passages", &StoreStats::passages)
      .field("embeddings", &StoreStats::embeddings)
      .field("embedding_models", &StoreStats::embedding_models)
      .field("file_bytes", &StoreStats::file_bytes)
      .field("index_runs", &StoreStats::index_runs)
      .field("dense_model", &StoreStats::dense_model)
      .field("passage_index", &StoreStats::passage_index)
      .field("passages_missing_embeddings", &StoreStats::passages_missing_embeddings)
      .field("snapshot_parts_error", &StoreStats::snapshot_parts_error)
      .field("graph", &StoreStats::graph)
      .field("schema", &StoreStats::schema)
      .field("segments", &StoreStats::segments);
}

void BindEval(py::module_& m) {
  Record<QuestionRecord>(m, "QuestionRecord", "One evaluated question.")
      .field("id", &QuestionRecord::id)
      .field("retrieved_ids", &QuestionRecord::retrieved_ids)
      .field("latency_ms", &QuestionRecord::latency_ms)
      .field("recall", &QuestionRecord::recall)
      .field("diagnostics", &QuestionRecord::diagnostics)
      .field("question", &QuestionRecord::question)
      .field("answer", &QuestionRecord::answer)
      .field("gold_answers", &QuestionRecord::gold_answers)
      .field("em", &QuestionRecord::em)
      .field("f1", &QuestionRecord::f1)
      .field("warnings", &QuestionRecord::warnings);
  Record<EvalReport>(m, "EvalReport", "Recall@k (and EM/F1) of one method on a benchmark.")
      .field("bench", &EvalReport::bench)
      .field("method", &EvalReport::method)
      .field("questions", &EvalReport::questions)
      .field("recall", &EvalReport::recall, "k -> mean recall x100")
      .field("latency_p50_ms", &EvalReport::latency_p50_ms)
      .field("latency_p99_ms", &EvalReport::latency_p99_ms)
      .field("latency_mean_ms", &EvalReport::latency_mean_ms)
      .field("nodes_touched_p50", &EvalReport::nodes_touched_p50)
      .field("edges_touched_p50", &EvalReport::edges_touched_p50)
      .field("iterations_p50", &EvalReport::iterations_p50)
      .field("answers", &EvalReport::answers)
      .field("pipeline", &EvalReport::pipeline)
      .field("em", &EvalReport::em)
      .field("f1", &EvalReport::f1)
      .field("usage", &EvalReport::usage)
      .field("records", &EvalReport::records);
}

}  // namespace

void BindResults(py::module_& m) {
  BindRetrieval(m);
  BindAnswer(m);
  BindIndexReport(m);
  BindStats(m);
  BindEval(m);
}

}  // namespace flowrag::py_binding
