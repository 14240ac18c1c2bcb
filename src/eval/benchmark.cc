#include <fstream>
#include <nlohmann/json.hpp>

#include "flowrag/eval.h"

namespace flowrag {
namespace {

Status ReadStrings(const nlohmann::json& obj, const char* field, const std::string& where,
                   std::vector<std::string>* out) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) {
    return Status::InvalidArgument(where + ": \"" + field + "\" must be a list of strings");
  }
  for (const auto& v : *it) {
    if (v.is_string()) {
      out->push_back(v.get<std::string>());
    } else if (v.is_number()) {
      out->push_back(v.dump());
    } else {
      return Status::InvalidArgument(where + ": \"" + field + "\" must be a list of strings");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Benchmark> LoadBenchmark(const std::string& dir) {
  Benchmark bench;
  bench.dir = dir;
  std::string base = dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  bench.name = base.substr(base.find_last_of('/') + 1);

  std::ifstream meta(dir + "/meta.json");
  if (meta) {
    nlohmann::json m = nlohmann::json::parse(meta, nullptr, false);
    if (m.is_discarded() || !m.is_object()) {
      return Status::InvalidArgument(dir + "/meta.json: invalid JSON: expected an object");
    }
    if (m.contains("name") && m["name"].is_string()) bench.name = m["name"].get<std::string>();
    if (m.contains("gold_level") && m["gold_level"].is_string()) {
      bench.document_level = m["gold_level"].get<std::string>().rfind("document", 0) == 0;
    }
  }

  const std::string path = dir + "/questions.jsonl";
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": cannot open (expected a benchmark folder)");
  std::string line;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(lineno);
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      return Status::InvalidArgument(where + ": invalid JSON: expected one object per line");
    }
    BenchQuestion q;
    if (!j.contains("question") || !j["question"].is_string()) {
      return Status::InvalidArgument(where + ": expected a string \"question\"");
    }
    q.question = j["question"].get<std::string>();
    q.id = j.contains("id") && j["id"].is_string() ? j["id"].get<std::string>()
                                                   : std::to_string(lineno);
    if (j.contains("type") && j["type"].is_string()) q.type = j["type"].get<std::string>();
    FLOWRAG_RETURN_IF_ERROR(ReadStrings(j, "answers", where, &q.answers));
    FLOWRAG_RETURN_IF_ERROR(ReadStrings(j, "gold_ids", where, &q.gold_ids));
    FLOWRAG_RETURN_IF_ERROR(ReadStrings(j, "gold_titles", where, &q.gold_titles));
    if ((bench.document_level ? q.gold_titles : q.gold_ids).empty()) {
      return Status::InvalidArgument(where + (bench.document_level
                                                  ? ": expected a non-empty \"gold_titles\""
                                                  : ": expected a non-empty \"gold_ids\""));
    }
    bench.questions.push_back(std::move(q));
  }
  if (bench.questions.empty()) return Status::InvalidArgument(path + ": no questions");
  return bench;
}

}  // namespace flowrag
