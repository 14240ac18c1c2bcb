// The flowrag command-line tool: one function per subcommand, built only on
// the public API in include/flowrag/.
#ifndef FLOWRAG_TOOLS_COMMANDS_H_
#define FLOWRAG_TOOLS_COMMANDS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "flowrag/engine.h"
#include "flowrag/options.h"
#include "flowrag/status.h"

namespace flowrag::cli {

struct IndexArgs {
  std::vector<std::string> sources;
  std::string db;
  std::string chunking = "window";
  EngineOptions engine;
  IndexOptions index;
  bool quiet = false;
};

struct QueryArgs {
  std::string db;
  std::string question;
  QueryOptions query;
  bool json = false;
  bool explain = false;
};

struct EvalArgs {
  std::string bench;
  std::string db;  // empty: a cache file per benchmark
  std::vector<std::string> methods;
  std::string ks = "1,2,5,10";
  std::string format = "text";
  std::string chunking = "none";
  std::string records;  // per-question JSONL output
  std::map<std::string, std::string> params;
  size_t limit = 0;
  bool quiet = false;
  EngineOptions engine;
  bool answers = false;  // also answer and score EM/F1
  AnswerOptions answer;  // pipeline, answerer, max_steps
};

struct AskArgs {
  std::string db;
  std::string question;
  std::string questions;  // JSONL of {"id", "question"}: one JSON answer per line
  AnswerOptions answer;
  bool json = false;
  bool stream = false;  // print the answer's text as it is written
};

struct IngestArgs {
  std::string dir;
  std::string schema;  // the contract; empty: induced offline from dir
  std::string exclude;  // an exclusion manifest on top of the contract's
  std::string db;
  std::string extractor = "auto";
  EngineOptions engine;
  bool quiet = false;
};

struct ImportArgs {
  std::string file;
  std::string db;
  ImportOpenIeOptions options;
  bool quiet = false;
};

struct StatsArgs {
  std::string db;
  bool json = false;
};

// Opens a store that must already exist, read-only (query, ask, stats);
// NotFound with a hint otherwise.
Result<std::unique_ptr<Engine>> OpenExistingStore(const std::string& db);

// Parses "k=v" pairs into a map; InvalidArgument naming the bad pair.
Result<std::map<std::string, std::string>> ParseSetPairs(const std::vector<std::string>& pairs);

Status RunIndex(IndexArgs args);
Status RunQuery(const QueryArgs& args);
Status RunAsk(const AskArgs& args);
Status RunIngest(const IngestArgs& args);
// `min_confidence`: with `extend`, additions below it are left out (C.4).
// `settings`: SchemaOptions overrides (--set key=value): unique_ratio,
// id_like_unique_ratio, min_key_values, max_key_avg_length,
// min_key_cardinality, composite_keys, min_overlap, min_containment.
Status RunSchemaInduce(const std::string& dir, bool json, const std::string& out,
                       const std::string& exclude, const std::string& extend, bool llm,
                       double min_confidence, const std::map<std::string, std::string>& settings);
Status RunSchemaShow(const std::string& path);
Status RunEval(EvalArgs args);
Status RunStats(const StatsArgs& args);
Status RunImportOpenIe(ImportArgs args);
Status RunDelete(const std::string& db, const std::vector<std::string>& ids);
// `flowrag compact`: Engine::Compact on an existing store.
Status RunCompact(const std::string& db);
// Prints each method (all but "auto" when `methods` is empty) and its
// per-query options (Engine::MethodOptions): name, type, default.
Status RunMethods(const std::vector<std::string>& methods);

}  // namespace flowrag::cli

#endif  // FLOWRAG_TOOLS_COMMANDS_H_
