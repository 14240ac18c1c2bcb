// Retrieval evaluation over the normalised benchmark format
// (../shared/data/bench/README.md): corpus.jsonl, questions.jsonl, meta.json.
//
// Recall@k at passage level: |gold_ids ∩ top-k| / |gold_ids| per question,
// averaged, ×100. A retrieved passage counts as its document's id (the
// corpus record id), and the ranking is deduplicated by document before
// cutting at k, so chunked corpora are scored fairly. At document level
// (meta.json "gold_level" starting with "document"), a gold title is found
// when any of the top-k (deduplicated by title) has that title.
#ifndef FLOWRAG_EVAL_H_
#define FLOWRAG_EVAL_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/engine.h"
#include "flowrag/status.h"

namespace flowrag {

struct BenchQuestion {
  std::string id;
  std::string question;
  std::vector<std::string> answers;
  std::vector<std::string> gold_ids;
  std::vector<std::string> gold_titles;
  std::string type;
};

struct Benchmark {
  std::string name;        // meta.json "name", else the folder name
  std::string dir;
  bool document_level = false;
  std::vector<BenchQuestion> questions;
};

// Reads meta.json (optional) and questions.jsonl; errors name file and line.
Result<Benchmark> LoadBenchmark(const std::string& dir);

// Recall of one ranking, in [0, 1]. `ranked_ids` and `ranked_titles` are
// parallel (document id and title of each retrieved passage, best first).
double RecallAtK(const BenchQuestion& q, bool document_level,
                 const std::vector<std::string>& ranked_ids,
                 const std::vector<std::string>& ranked_titles, size_t k);

// Answer metrics of SQuAD / HotpotQA: answers are normalised (lower case,
// ASCII punctuation and the articles a/an/the removed, whitespace collapsed);
// EM is 1 when the prediction equals a gold answer; F1 is the token-overlap F1
// (0 when either side is yes/no/noanswer and they differ). Both take the best
// over the gold answers; 0 when there is none.
std::string NormalizeAnswer(std::string_view answer);
double ExactMatch(std::string_view prediction, const std::vector<std::string>& golds);
double AnswerF1(std::string_view prediction, const std::vector<std::string>& golds);

struct EvalOptions {
  std::vector<size_t> ks = {1, 2, 5, 10};
  QueryOptions query;   // method and per-query params; top_k is raised to cover max(ks)
  size_t limit = 0;     // evaluate only the first `limit` questions (0 = all)
  ProgressCallback progress;  // per question (flowrag/progress.h); empty: none
  // Retrieve this many passages per question, so document deduplication still
  // leaves max(ks) distinct documents (chunked corpora).
  size_t depth_factor = 3;
  // Also answer each question (Engine::Ask with `answer`; its query is
  // replaced by `query`) and score EM/F1. Recall is then measured on the
  // answer's evidence (every round's passages).
  bool answers = false;
  AnswerOptions answer;
};

struct QuestionRecord {
  std::string id;
  std::vector<std::string> retrieved_ids;  // deduplicated, best first
  double latency_ms = 0.0;
  std::map<size_t, double> recall;
  RetrievalDiagnostics diagnostics;  // the method's own counters and stage timings
  // With EvalOptions::answers:
  std::string question;
  std::string answer;
  std::vector<std::string> gold_answers;
  double em = 0.0, f1 = 0.0;
  std::vector<Citation> citations;
  std::vector<AnswerStep> steps;
  std::vector<std::string> warnings;
};

struct EvalReport {
  std::string bench;
  std::string method;
  size_t questions = 0;
  std::map<size_t, double> recall;    // k → mean recall ×100
  double latency_p50_ms = 0.0;        // wall time of Engine::Query
  double latency_p99_ms = 0.0;
  double latency_mean_ms = 0.0;
  double nodes_touched_p50 = 0.0;     // RetrievalDiagnostics, median over questions
  double edges_touched_p50 = 0.0;     // edge visits of the solver (push/spread)
  double iterations_p50 = 0.0;        // pushes (ppr, semflow, qafd) or expansions (sa)
  bool answers = false;               // EvalOptions::answers
  std::string pipeline;               // the answer pipeline
  double em = 0.0, f1 = 0.0;          // means ×100
  TokenUsage usage;                   // summed over the questions
  std::vector<QuestionRecord> records;

  // {"bench", "method", "questions", "recall": {"1": x, ...}, "latency_ms": {"p50", "p99"},
  //  "touched_p50": {"nodes", "edges", "iterations"}}; with answers also "pipeline", "em", "f1", "usage"
  std::string ToJson() const;
};

// Runs every question of `bench` through `engine` (which must hold the
// benchmark's corpus). The first question's latency includes loading the
// engine's snapshot unless the engine has read before (Engine::Refresh,
// Stats or a query): the CLI and the Python package load it first.
Result<EvalReport> Evaluate(const Engine& engine, const Benchmark& bench,
                            const EvalOptions& options);

// Percentile (0..100) by linear interpolation between closest ranks.
double Percentile(std::vector<double> values, double p);

}  // namespace flowrag

#endif  // FLOWRAG_EVAL_H_
