// Seed selection by a chat model (QAFD-RAG A5, Prompt 5): sub-queries,
// source and target columns and [source, target, confidence] candidates,
// validated against the schema (closed world: a name the schema does not
// have is dropped).
#include <algorithm>
#include <map>
#include <unordered_set>

#include "common/text.h"
#include "llm/json_repair.h"
#include "sql/schema_linker.h"

namespace flowrag {
namespace {

constexpr size_t kMaxSummaryColumns = 800;

const char kPlannerPrompt[] = R"(You plan text-to-SQL queries over a database schema graph.

Question: {QUERY}

Schema (one table per line, table(column type, ...); joins after "Joins:"):
{SCHEMA}

Do this:
1. Split the question into the logical sub-questions it needs answered.
2. For each sub-question, go through every table and every column of the schema and judge how strongly it relates to the sub-question: by meaning, by structure (keys and joins), by time, by logic (filters, conditions), by aggregation or statistics, or by domain knowledge.
3. Source nodes: the columns where answering the sub-question starts. Target nodes: the columns where it ends.
4. Map domain concepts of the question to the columns that hold them.
5. Give the most confident path through the schema for each sub-question, as columns joined by "->".
6. Give 2 or 3 different candidates [source, target, confidence] per sub-question, confidence between 0 and 1, each a different reading or join path.

Write every node as "table.column" exactly as the schema spells it, same upper and lower case.
Answer with JSON only, no explanation:
{"subqueries": [{"subquery": "...", "source_nodes": ["t.c"], "target_nodes": ["t.c"], "path": "t.c -> t.c", "candidates": [["t.c", "t.c", 0.9]]}]})";

std::string Fill(std::string text, std::string_view key, std::string_view value) {
  const size_t at = text.find(key);
  if (at != std::string::npos) text.replace(at, key.size(), value);
  return text;
}

// The columns the summary of the schema lists: all of them for a small
// schema (`full`); on a large one the summary's columns and its tables'
// primary keys.
std::vector<bool> ListedColumns(const SchemaGraph& g, const std::vector<LinkedItem>& tables,
                                const std::vector<LinkedItem>& columns, bool full) {
  std::vector<bool> listed(g.columns.size(), full);
  if (full) return listed;
  std::unordered_set<std::string> names;
  for (const LinkedItem& c : columns) names.insert(c.name);
  for (const LinkedItem& t : tables) {
    const int64_t ti = g.FindTable(t.name);
    if (ti < 0) continue;
    for (uint32_t c : g.tables[ti].columns) {
      listed[c] = g.columns[c].primary_key || names.count(g.NodeName(g.ColumnNode(c)));
    }
  }
  return listed;
}

// Joins between listed columns, so the join list does not grow with the
// whole schema. Same-name (inferred) joins form a clique over the tables
// sharing a key name; on a large schema each name is listed as a star
// instead (every column joined to the first one), which says the same in
// k − 1 lines instead of k(k − 1)/2.
std::vector<JoinEdge> SummaryJoins(const SchemaGraph& g, const std::vector<bool>& listed,
                                   bool full) {
  std::vector<JoinEdge> joins;
  std::map<std::string, std::vector<uint32_t>> same_name;  // lower-case name → listed columns
  for (const SchemaForeignKey& fk : g.foreign_keys) {
    if (!listed[fk.from] || !listed[fk.to]) continue;
    if (!full && fk.inferred) {
      for (uint32_t c : {fk.from, fk.to}) {
        auto& group = same_name[ToLowerAscii(g.columns[c].name)];
        if (std::find(group.begin(), group.end(), c) == group.end()) group.push_back(c);
      }
      continue;
    }
    joins.push_back(
        {g.NodeName(g.ColumnNode(fk.from)), g.NodeName(g.ColumnNode(fk.to)), fk.inferred});
  }
  for (auto& [name, group] : same_name) {
    std::sort(group.begin(), group.end());
    for (size_t i = 1; i < group.size(); ++i) {
      joins.push_back(
          {g.NodeName(g.ColumnNode(group[i])), g.NodeName(g.ColumnNode(group[0])), true});
    }
  }
  return joins;
}

// The nodes of a path "t.c -> t.c" (or with "→"), trimmed.
std::vector<std::string> PathNodes(std::string path) {
  for (size_t at; (at = path.find("->")) != std::string::npos;) path.replace(at, 2, "\x1f");
  for (size_t at; (at = path.find("\u2192")) != std::string::npos;) path.replace(at, 3, "\x1f");
  std::vector<std::string> nodes;
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find('\x1f', begin);
    if (end == std::string::npos) end = path.size();
    std::string node(path.substr(begin, end - begin));
    node.erase(0, node.find_first_not_of(" \t"));
    node.erase(node.find_last_not_of(" \t") + 1);
    if (!node.empty()) nodes.push_back(std::move(node));
    begin = end + 1;
  }
  return nodes;
}

}  // namespace

// Reads the planner's answer against the schema (closed world): each
// sub-query's source and target nodes, path and candidate pairs; a name
// the schema does not have is dropped and counted.
class SchemaLinker::LlmPlanReader {
 public:
  LlmPlanReader(const SchemaGraph& g, std::string_view question) : g_(g), question_(question) {}

  Result<std::vector<Subquery>> Read(const nlohmann::json& answer) {
    const nlohmann::json* subs = &answer;
    if (answer.is_object()) {
      auto it = answer.find("subqueries");
      subs = it == answer.end() ? nullptr : &*it;
    }
    if (subs == nullptr || !subs->is_array()) {
      return Status::InvalidArgument("planner answer has no \"subqueries\" list");
    }
    std::vector<Subquery> plan;
    for (const auto& s : *subs) {
      if (!s.is_object()) continue;
      Subquery sq = ReadSubquery(s);
      if (!sq.pairs.empty()) plan.push_back(std::move(sq));
    }
    return plan;
  }

  size_t dropped() const { return dropped_; }

 private:
  // A node "table.column" or a table "table": its node, or -1.
  int64_t Resolve(const nlohmann::json& j) const {
    if (!j.is_string()) return -1;
    const std::string s = j.get<std::string>();
    const size_t dot = s.find('.');
    if (dot == std::string::npos) return g_.FindTable(s);
    const int64_t c = g_.FindColumn(s.substr(0, dot), s.substr(dot + 1));
    return c < 0 ? -1 : static_cast<int64_t>(g_.ColumnNode(static_cast<uint32_t>(c)));
  }

  void AddCandidate(int64_t v, double score, Subquery* sq) {
    if (v < 0) {
      ++dropped_;
      return;
    }
    for (auto& [n, sc] : sq->candidates) {
      if (n == static_cast<uint32_t>(v)) {
        sc = std::max(sc, score);
        return;
      }
    }
    sq->candidates.emplace_back(static_cast<uint32_t>(v), score);
  }

  // [source, target, confidence] candidates; confidence clamped to [0, 1].
  void AddPairs(const nlohmann::json& candidates, Subquery* sq) {
    for (const auto& c : candidates) {
      if (!c.is_array() || c.size() < 2) continue;
      const int64_t a = Resolve(c[0]), b = Resolve(c[1]);
      double conf = c.size() > 2 && c[2].is_number() ? c[2].get<double>() : 1.0;
      conf = std::clamp(conf, 0.0, 1.0);
      if (a < 0 || b < 0) {
        ++dropped_;
        continue;
      }
      sq->pairs.push_back({static_cast<uint32_t>(a), static_cast<uint32_t>(b), conf});
    }
  }

  Subquery ReadSubquery(const nlohmann::json& s) {
    Subquery sq;
    sq.text = s.contains("subquery") && s["subquery"].is_string() ? s["subquery"].get<std::string>()
                                                                  : std::string(question_);
    for (const char* key : {"source_nodes", "target_nodes"}) {
      if (s.contains(key) && s[key].is_array()) {
        for (const auto& n : s[key]) AddCandidate(Resolve(n), 1.0, &sq);
      }
    }
    if (s.contains("path") && s["path"].is_string()) {
      for (const std::string& node : PathNodes(s["path"].get<std::string>())) {
        AddCandidate(Resolve(node), 1.0, &sq);
      }
    }
    if (s.contains("candidates") && s["candidates"].is_array()) AddPairs(s["candidates"], &sq);
    // Without candidate pairs: the first node paired with every other one.
    if (sq.pairs.empty() && !sq.candidates.empty()) {
      for (size_t j = 1; j < sq.candidates.size(); ++j) {
        sq.pairs.push_back({sq.candidates[0].first, sq.candidates[j].first, 1.0});
      }
      if (sq.pairs.empty()) {
        sq.pairs.push_back({sq.candidates[0].first, sq.candidates[0].first, 1.0});
      }
    }
    return sq;
  }

  const SchemaGraph& g_;
  std::string_view question_;
  size_t dropped_ = 0;
};

Result<std::string> SchemaLinker::PlannerSchemaText(std::string_view question,
                                                    const SchemaLinkOptions& o) const {
  const SchemaGraph& g = *graph_;
  // Large schemas (over kMaxSummaryColumns columns): the summary lists the
  // dense top-kMaxSummaryColumns nodes (tables and columns nearest the
  // question), each listed table's primary keys, and the joins among them.
  const bool full = g.columns.size() <= kMaxSummaryColumns;
  std::vector<LinkedItem> tables, columns;
  if (full) {
    for (const SchemaTable& t : g.tables) tables.push_back({t.name, 1.0, ""});
  } else {
    SchemaLinkOptions dense = o;
    dense.top_k = kMaxSummaryColumns;
    FLOWRAG_ASSIGN_OR_RETURN(SchemaLink near, Link(question, LinkMethod::kDense, dense));
    tables = near.tables;
    columns = near.columns;
  }
  const std::vector<bool> listed = ListedColumns(g, tables, columns, full);
  return SchemaText(tables, columns, SummaryJoins(g, listed, full), full);
}

Result<std::vector<SchemaLinker::Subquery>> SchemaLinker::PlanWithLlm(std::string_view question,
                                                                      const SchemaLinkOptions& o,
                                                                      SchemaLink* link) const {
  FLOWRAG_ASSIGN_OR_RETURN(const std::string schema, PlannerSchemaText(question, o));
  ChatRequest request;
  request.json_mode = true;
  request.messages.push_back(
      {"user", Fill(Fill(kPlannerPrompt, "{QUERY}", question), "{SCHEMA}", schema)});
  ++link->llm_calls;
  FLOWRAG_ASSIGN_OR_RETURN(ChatResponse response, chat_->Complete(request));
  JsonRepairOptions ro;
  ro.allow_truncated = response.finish_reason == "length";
  FLOWRAG_ASSIGN_OR_RETURN(RepairedJson parsed, ParseLlmJson(response.content, ro));
  LlmPlanReader reader(*graph_, question);
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<Subquery> plan, reader.Read(parsed.value));
  if (reader.dropped() > 0) {
    link->warnings.push_back(std::to_string(reader.dropped()) +
                             " node name(s) proposed by the model are not in the schema; dropped");
  }
  return plan;
}

}  // namespace flowrag
