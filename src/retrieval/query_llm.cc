#include "retrieval/query_llm.h"

#include <algorithm>
#include <set>

#include "common/text.h"
#include "llm/json_repair.h"
#include "nlohmann/json.hpp"

namespace flowrag {
namespace {

constexpr std::string_view kKeywordSystem =
    "You pick out the keywords of a user's question so that a knowledge graph search can start "
    "from them. List two kinds: high-level keywords name the broad concepts or themes the "
    "question is about; low-level keywords name the specific entities, names, dates and concrete "
    "details it mentions. Answer with one JSON object with exactly two keys, "
    "\"high_level_keywords\" and \"low_level_keywords\", each a list of strings.";

constexpr std::string_view kDecomposeSystem =
    "You split a multi-hop question into the shortest ordered list of simple questions whose "
    "answers, taken in order, are enough to answer it. Rules: use only what the question says "
    "(no new entities, no definitions it did not ask for); make each sub-question fetch one "
    "missing fact or resolve one reference a later one needs, preferably entity to attribute or "
    "entity to relation; drop anything already given; later sub-questions may refer to earlier "
    "answers; a single-hop question stays one sub-question. Answer with one JSON object: "
    "{\"original_question\": \"...\", \"subquestions\": [{\"id\": 1, \"question\": \"...\"}, "
    "...]}.";

constexpr std::string_view kFilterSystem =
    "You filter candidate facts for a retrieval system. You get a question and a list of "
    "candidate facts, each a [subject, predicate, object] triple. Keep at most {max} facts, the "
    "ones most useful for answering the question: facts that may hold the answer, and bridge "
    "facts that link the entities a multi-hop answer needs. Copy kept facts exactly as given; "
    "never write new ones. Answer with one JSON object {\"fact\": [[subject, predicate, object], "
    "...]}; if no candidate is relevant answer {\"fact\": []}.";

}  // namespace

Result<nlohmann::json> AskJsonObject(ChatModel& chat, std::string system, std::string user,
                                     int max_tokens, const TextSink* sink) {
  ChatRequest req;
  req.messages = {{"system", std::move(system)}, {"user", std::move(user)}};
  req.temperature = 0.0;
  req.max_tokens = max_tokens;
  req.json_mode = true;
  FLOWRAG_ASSIGN_OR_RETURN(
      ChatResponse resp, sink != nullptr ? chat.CompleteStreaming(req, *sink) : chat.Complete(req));
  JsonRepairOptions ro;
  ro.allow_truncated = resp.finish_reason == "length";
  FLOWRAG_ASSIGN_OR_RETURN(RepairedJson parsed, ParseLlmJson(resp.content, ro));
  if (!parsed.value.is_object()) {
    return Status::InvalidArgument("model answer is not a JSON object: " +
                                   ExcerptAround(resp.content, 0, 60));
  }
  return std::move(parsed.value);
}

namespace {

void AddStrings(const nlohmann::json& list, std::set<std::string>* seen,
                std::vector<std::string>* out) {
  if (!list.is_array()) return;
  for (const nlohmann::json& v : list) {
    if (!v.is_string()) continue;
    const std::string s = v.get<std::string>();
    const std::string key = EntityKey(s);
    if (key.empty() || !seen->insert(key).second) continue;
    out->push_back(s);
  }
}

std::string TripleKey(const std::string& s, const std::string& p, const std::string& o) {
  return EntityKey(s) + "\x1f" + EntityKey(p) + "\x1f" + EntityKey(o);
}

}  // namespace

Result<DualKeywords> LlmDualKeywords(ChatModel& chat, std::string_view query) {
  FLOWRAG_ASSIGN_OR_RETURN(nlohmann::json j, AskJsonObject(chat, std::string(kKeywordSystem),
                                                           "Question: " + std::string(query), 256));
  if (!j.contains("high_level_keywords") && !j.contains("low_level_keywords")) {
    return Status::InvalidArgument(
        "keyword answer: expected \"high_level_keywords\" and \"low_level_keywords\"");
  }
  DualKeywords out;
  std::set<std::string> low_seen, high_seen;
  AddStrings(j.value("low_level_keywords", nlohmann::json::array()), &low_seen, &out.low);
  AddStrings(j.value("high_level_keywords", nlohmann::json::array()), &high_seen, &out.high);
  return out;
}

Result<std::vector<std::string>> LlmQueryKeywords(ChatModel& chat, std::string_view query) {
  FLOWRAG_ASSIGN_OR_RETURN(DualKeywords dual, LlmDualKeywords(chat, query));
  std::set<std::string> seen;
  std::vector<std::string> out;
  for (const std::vector<std::string>* list : {&dual.low, &dual.high}) {
    for (const std::string& k : *list) {
      if (seen.insert(EntityKey(k)).second) out.push_back(k);
    }
  }
  return out;
}

Result<std::vector<std::string>> LlmDecomposeQuery(ChatModel& chat, std::string_view query) {
  FLOWRAG_ASSIGN_OR_RETURN(nlohmann::json j, AskJsonObject(chat, std::string(kDecomposeSystem),
                                                           "Question: " + std::string(query), 512));
  auto it = j.find("subquestions");
  if (it == j.end() || !it->is_array()) {
    return Status::InvalidArgument("decomposition answer: expected a \"subquestions\" list");
  }
  std::vector<std::pair<double, std::string>> items;
  for (size_t i = 0; i < it->size(); ++i) {
    const nlohmann::json& sq = (*it)[i];
    std::string text;
    double id = static_cast<double>(i + 1);
    if (sq.is_string()) {
      text = sq.get<std::string>();
    } else if (sq.is_object() && sq.contains("question") && sq["question"].is_string()) {
      text = sq["question"].get<std::string>();
      if (sq.contains("id") && sq["id"].is_number()) id = sq["id"].get<double>();
    }
    if (!EntityKey(text).empty()) items.push_back({id, std::move(text)});
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& [id, text] : items) out.push_back(std::move(text));
  if (out.empty()) out.push_back(std::string(query));
  return out;
}

QueryKeywords KeywordsForQuery(std::string_view query, const EntityNameMatcher* names,
                               const KeywordOptions& options, ChatModel* chat,
                               RetrievalDiagnostics* diag) {
  QueryKeywords out = ExtractKeywords(query, names, options);
  if (chat == nullptr) return out;
  auto llm = LlmDualKeywords(*chat, query);
  if (!llm.ok() || (llm->low.empty() && llm->high.empty())) {
    diag->extra["llm_fallback"] = 1;
    return out;
  }
  std::set<std::string> seen;
  out.keywords.clear();
  for (const std::vector<std::string>* list : {&llm->low, &llm->high}) {
    for (const std::string& k : *list) {
      if (seen.insert(EntityKey(k)).second) out.keywords.push_back(k);
    }
    if (list == &llm->low) out.low_level = out.keywords.size();
  }
  if (out.keywords.size() > options.max_keywords) out.keywords.resize(options.max_keywords);
  out.low_level = std::min(out.low_level, out.keywords.size());
  diag->extra["llm_keywords"] = static_cast<double>(out.keywords.size());
  return out;
}

std::vector<std::string> SubQueriesFor(std::string_view query, ChatModel* chat,
                                       RetrievalDiagnostics* diag) {
  if (chat != nullptr) {
    auto llm = LlmDecomposeQuery(*chat, query);
    if (llm.ok()) return std::move(llm).value();
    diag->extra["llm_fallback"] = 1;
  }
  return DecomposeQuery(query);
}

Result<std::vector<size_t>> LlmFilterFacts(ChatModel& chat, std::string_view query,
                                           const std::vector<Triple>& candidates, size_t max_keep) {
  if (candidates.empty() || max_keep == 0) return std::vector<size_t>{};
  nlohmann::json list = nlohmann::json::array();
  for (const Triple& t : candidates) list.push_back({t[0], t[1], t[2]});
  std::string system(kFilterSystem);
  system.replace(system.find("{max}"), 5, std::to_string(max_keep));
  const std::string user = "Question: " + std::string(query) +
                           "\nCandidate facts: " + nlohmann::json{{"fact", list}}.dump();
  FLOWRAG_ASSIGN_OR_RETURN(nlohmann::json j, AskJsonObject(chat, system, user, 1024));
  auto it = j.find("fact");
  if (it == j.end() || !it->is_array()) {
    return Status::InvalidArgument("fact filter answer: expected a \"fact\" list");
  }
  std::set<std::string> wanted;
  for (const nlohmann::json& t : *it) {
    if (!t.is_array() || t.size() != 3 || !t[0].is_string() || !t[1].is_string() ||
        !t[2].is_string()) {
      continue;  // not a triple: ignored, like any fact not among the candidates
    }
    wanted.insert(
        TripleKey(t[0].get<std::string>(), t[1].get<std::string>(), t[2].get<std::string>()));
  }
  std::vector<size_t> kept;
  for (size_t i = 0; i < candidates.size() && kept.size() < max_keep; ++i) {
    const Triple& c = candidates[i];
    if (wanted.count(TripleKey(c[0], c[1], c[2]))) kept.push_back(i);
  }
  return kept;
}

}  // namespace flowrag
