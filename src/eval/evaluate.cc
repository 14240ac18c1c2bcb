#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "common/progress.h"
#include "flowrag/eval.h"

namespace flowrag {

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double pos = (p / 100.0) * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

double RecallAtK(const BenchQuestion& q, bool document_level,
                 const std::vector<std::string>& ranked_ids,
                 const std::vector<std::string>& ranked_titles, size_t k) {
  const std::vector<std::string>& gold = document_level ? q.gold_titles : q.gold_ids;
  const std::vector<std::string>& ranked = document_level ? ranked_titles : ranked_ids;
  if (gold.empty()) return 0.0;
  std::set<std::string> top;
  for (const std::string& r : ranked) {
    if (top.size() >= k) break;
    top.insert(r);  // duplicates do not use up a rank
  }
  std::set<std::string> gold_set(gold.begin(), gold.end());
  size_t found = 0;
  for (const std::string& g : gold_set) found += top.count(g);
  return static_cast<double>(found) / static_cast<double>(gold_set.size());
}

std::string EvalReport::ToJson() const {
  nlohmann::json j;
  j["bench"] = bench;
  j["method"] = method;
  j["questions"] = questions;
  nlohmann::json r = nlohmann::json::object();
  for (const auto& [k, v] : recall) r[std::to_string(k)] = std::round(v * 1e4) / 1e4;
  j["recall"] = r;
  j["latency_ms"] = {{"p50", std::round(latency_p50_ms * 1000.0) / 1000.0},
                     {"p99", std::round(latency_p99_ms * 1000.0) / 1000.0}};
  j["touched_p50"] = {
      {"nodes", nodes_touched_p50}, {"edges", edges_touched_p50}, {"iterations", iterations_p50}};
  if (answers) {
    j["pipeline"] = pipeline;
    j["em"] = std::round(em * 100.0) / 100.0;
    j["f1"] = std::round(f1 * 100.0) / 100.0;
    j["usage"] = {{"llm_calls", usage.llm_calls},
                  {"cache_hits", usage.cache_hits},
                  {"prompt_tokens", usage.prompt_tokens},
                  {"completion_tokens", usage.completion_tokens},
                  {"cost_usd", usage.cost_usd}};
  }
  return j.dump();
}

Result<EvalReport> Evaluate(const Engine& engine, const Benchmark& bench,
                            const EvalOptions& options) {
  if (options.ks.empty()) return Status::InvalidArgument("eval: expected at least one k");
  const size_t max_k = *std::max_element(options.ks.begin(), options.ks.end());
  QueryOptions query = options.query;
  query.top_k = std::max(query.top_k, max_k * std::max<size_t>(1, options.depth_factor));

  EvalReport report;
  report.bench = bench.name;
  report.method = query.method;
  report.answers = options.answers;
  AnswerOptions ask = options.answer;
  ask.query = query;
  if (options.answers) {
    report.pipeline = ask.pipeline;
    FLOWRAG_RETURN_IF_ERROR(ask.Validate());
  }
  const size_t n = options.limit > 0 ? std::min(options.limit, bench.questions.size())
                                     : bench.questions.size();
  std::vector<double> latencies, nodes_touched, edges_touched, iterations;
  Progress progress("eval " + bench.name + " " + query.method, "questions", n, options.progress);
  for (size_t i = 0; i < n; ++i) {
    const BenchQuestion& q = bench.questions[i];
    QuestionRecord rec;
    const auto start = std::chrono::steady_clock::now();
    Result<RetrievalResult> result = Status::Internal("not run");
    if (options.answers) {
      auto answer = engine.Ask(q.question, ask);
      if (!answer.ok()) return answer.status().WithContext("question " + q.id);
      rec.question = q.question;
      rec.answer = answer->text;
      rec.gold_answers = q.answers;
      rec.em = ExactMatch(answer->text, q.answers);
      rec.f1 = AnswerF1(answer->text, q.answers);
      report.em += rec.em;
      report.f1 += rec.f1;
      rec.citations = answer->citations;
      rec.steps = answer->steps;
      rec.warnings = answer->warnings;
      report.usage.llm_calls += answer->usage.llm_calls;
      report.usage.cache_hits += answer->usage.cache_hits;
      report.usage.prompt_tokens += answer->usage.prompt_tokens;
      report.usage.completion_tokens += answer->usage.completion_tokens;
      report.usage.cost_usd += answer->usage.cost_usd;
      result = std::move(answer->retrieval);
    } else {
      result = engine.Query(q.question, query);
    }
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start).count();
    if (!result.ok()) return result.status().WithContext("question " + q.id);
    latencies.push_back(ms);
    nodes_touched.push_back(static_cast<double>(result->diagnostics.nodes_touched));
    edges_touched.push_back(static_cast<double>(result->diagnostics.edges_touched));
    iterations.push_back(static_cast<double>(result->diagnostics.iterations));
    rec.id = q.id;
    rec.latency_ms = ms;
    rec.diagnostics = result->diagnostics;
    std::vector<std::string> ids, titles;
    for (const ScoredPassage& p : result->passages) {
      ids.push_back(p.document_id);
      titles.push_back(p.title);
    }
    for (size_t k : options.ks) {
      rec.recall[k] = RecallAtK(q, bench.document_level, ids, titles, k);
      report.recall[k] += rec.recall[k];
    }
    std::set<std::string> seen;
    for (const std::string& id : ids) {
      if (seen.insert(id).second) rec.retrieved_ids.push_back(id);
    }
    report.records.push_back(std::move(rec));
    progress.Advance(1);
  }
  progress.Finish();
  report.questions = n;
  for (auto& [k, v] : report.recall) v = n > 0 ? 100.0 * v / static_cast<double>(n) : 0.0;
  report.em = n > 0 ? 100.0 * report.em / static_cast<double>(n) : 0.0;
  report.f1 = n > 0 ? 100.0 * report.f1 / static_cast<double>(n) : 0.0;
  report.latency_p50_ms = Percentile(latencies, 50);
  report.latency_p99_ms = Percentile(latencies, 99);
  report.nodes_touched_p50 = Percentile(nodes_touched, 50);
  report.edges_touched_p50 = Percentile(edges_touched, 50);
  report.iterations_p50 = Percentile(iterations, 50);
  double sum = 0;
  for (double l : latencies) sum += l;
  report.latency_mean_ms = latencies.empty() ? 0.0 : sum / latencies.size();
  return report;
}

}  // namespace flowrag
