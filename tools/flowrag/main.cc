// flowrag: index documents, query them with any retrieval method, evaluate
// on benchmarks and inspect stores. `flowrag --help` and `flowrag CMD --help`.
//
// main reads flowrag.yaml (its values are the defaults flags override),
// registers every subcommand (one Add*Command each, here or in the
// subcommand's own file), parses the command line and runs the one given.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <string_view>
#include <vector>

#include "commands.h"
#include "config_cmd.h"
#include "export_cmd.h"
#include "flowrag/engine.h"
#include "flowrag/messages.h"
#include "mcp_cmd.h"
#include "serve.h"
#include "sql_cmd.h"

namespace flowrag::cli {
namespace {

// `schema induce`'s arguments.
struct InduceArgs {
  std::string dir;
  bool json = false;
  std::string out, exclude, extend;
  std::vector<std::string> sets;  // --set key=value
  bool llm = false;
  double min_confidence = 0.0;
};

struct DeleteArgs {
  std::string db;
  std::vector<std::string> ids;
};

// Every subcommand's arguments as CLI11 fills them, the --set pairs of
// those that take them, and the subcommands (the one given is the one
// whose *app is true).
struct CommandLine {
  std::string config_flag;  // --config
  IndexArgs index;
  QueryArgs query;
  std::vector<std::string> query_sets;
  IngestArgs ingest;
  AskArgs ask;
  std::vector<std::string> ask_sets;
  InduceArgs induce;
  std::string show_file;  // schema show FILE
  EvalArgs eval;
  std::vector<std::string> eval_sets;
  StatsArgs stats;
  DeleteArgs del;
  std::string compact_db;
  std::vector<std::string> method_names;
  ImportArgs import_openie;
  ServeArgs serve;
  std::string config_file;  // config check [FILE]
  ExportArgs export_args;
  SqlArgs sql;
  McpArgs mcp;

  CLI::App *index_cmd = nullptr, *query_cmd = nullptr, *ingest_cmd = nullptr, *ask_cmd = nullptr,
           *induce_cmd = nullptr, *show_cmd = nullptr, *eval_cmd = nullptr, *stats_cmd = nullptr,
           *delete_cmd = nullptr, *methods_cmd = nullptr, *import_openie_cmd = nullptr,
           *serve_cmd = nullptr, *config_check_cmd = nullptr, *export_cmd = nullptr,
           *sql_cmd = nullptr, *mcp_cmd = nullptr, *compact_cmd = nullptr;
};

// "bm25|dense|...": the --method choices.
std::string MethodChoices() {
  std::string methods;
  for (const auto& m : Engine::Methods()) methods += (methods.empty() ? "" : "|") + m;
  return methods;
}

CLI::App* AddIndexCommand(CLI::App& app, IndexArgs* ia) {
  auto* index = app.add_subcommand("index", "Load, chunk, store and embed documents");
  index
      ->add_option("sources", ia->sources,
                   "Directories of .txt/.md/.pdf/.html files, single such files, .jsonl, .json "
                   "lists or benchmark folders (doc/ingestion.md)")
      ->required();
  index
      ->add_option("--db", ia->db,
                   "Store: a SQLite file or a postgresql:// URL (created if missing)")
      ->required();
  index->add_option("--chunking", ia->chunking, "none|window|boundary")->capture_default_str();
  index->add_option("--window-words", ia->index.chunking.window_words, "Word window size")
      ->capture_default_str();
  index->add_option("--overlap-words", ia->index.chunking.overlap_words, "Word window overlap")
      ->capture_default_str();
  index->add_option("--max-chars", ia->index.chunking.max_chars, "Boundary chunk budget")
      ->capture_default_str();
  index->add_option("--overlap-chars", ia->index.chunking.overlap_chars, "Boundary overlap")
      ->capture_default_str();
  index->add_option("--batch-size", ia->index.batch_size, "Documents per transaction")
      ->capture_default_str();
  index
      ->add_option("--extract-batch-size", ia->index.extract_batch_size,
                   "Passages per extraction transaction; 0: 4096 offline, 256 with a model")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  index
      ->add_option("--workers", ia->index.workers,
                   "Extraction workers of this run; concurrent index runs on one store share "
                   "the extraction (doc/storage.md)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  index
      ->add_option("--lease-seconds", ia->index.extract_lease_seconds,
                   "A claimed extraction batch not written in this time is claimed again")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  index->add_option("--embedder", ia->engine.embedder, "hash (built-in) or openai");
  index->add_option("--dim", ia->engine.hash_dimension, "Built-in embedder dimension")
      ->capture_default_str();
  index->add_option("--language", ia->engine.language,
                    "Tokeniser stemming language: english-s (default), none, or a Snowball "
                    "one (english, german, french, ...); recorded in the store, which queries "
                    "then tokenise with (doc/text.md)");
  index->add_flag("--refit", ia->index.refit, "Refit the built-in embedder's IDF now");
  index->add_flag("--skip-bad-records", ia->index.skip_bad_records,
                  "Skip malformed JSONL records instead of failing");
  index->add_option("--extractor", ia->index.extractor, "auto|heuristic|llm|none")
      ->capture_default_str();
  index
      ->add_option("--llm-style", ia->index.llm_prompt_style,
                   "LLM extraction prompts: sarag|openie|lightrag")
      ->capture_default_str();
  index->add_flag("--dry-run", ia->index.dry_run,
                  "Estimate LLM extraction calls and tokens; call nothing");
  index->add_flag("-q,--quiet", ia->quiet, "No progress output");
  return index;
}

CLI::App* AddQueryCommand(CLI::App& app, QueryArgs* qa, std::vector<std::string>* sets) {
  auto* query = app.add_subcommand("query", "Retrieve passages for a question");
  query->add_option("question", qa->question, "The question")->required();
  query->add_option("--db", qa->db, "Store: a SQLite file or a postgresql:// URL")->required();
  query->add_option("--method", qa->query.method, MethodChoices())->capture_default_str();
  query->add_option("--top-k", qa->query.top_k, "Passages to return")->capture_default_str();
  query->add_option("--set", *sets, "Override a method option: key=value (repeatable)");
  query->add_flag("--json", qa->json, "Print the result as JSON");
  query->add_flag("--explain", qa->explain,
                  "Graph methods: print keywords, seeds, paths and diagnostics");
  return query;
}

CLI::App* AddIngestCommand(CLI::App& app, IngestArgs* ga) {
  auto* ingest = app.add_subcommand(
      "ingest",
      "Build typed entities, relationships and passages from a folder under a schema contract");
  ingest->add_option("dir", ga->dir, "Folder of CSV, JSON, JSONL and text files")->required();
  ingest->add_option("--schema", ga->schema, "The contract (schema.yaml); default: induce it now");
  ingest
      ->add_option("--db", ga->db,
                   "Store: a SQLite file or a postgresql:// URL (created if missing)")
      ->required();
  ingest->add_option(
      "--exclude", ga->exclude,
      "Exclusion manifest, on top of the contract's own and DIR/flowrag_exclude.yaml");
  ingest->add_option("--extractor", ga->extractor, "Text documents: auto|heuristic|llm|none")
      ->capture_default_str();
  ingest->add_option("--embedder", ga->engine.embedder, "hash (built-in) or openai");
  ingest->add_option("--language", ga->engine.language,
                     "Tokeniser stemming language (as for index; default: the store's, else "
                     "english-s)");
  ingest->add_flag("-q,--quiet", ga->quiet, "No progress or report output");
  return ingest;
}

CLI::App* AddAskCommand(CLI::App& app, AskArgs* aa, std::vector<std::string>* sets) {
  auto* ask = app.add_subcommand("ask", "Answer a question with citations");
  auto* ask_question = ask->add_option("question", aa->question, "The question");
  ask->add_option("--questions", aa->questions,
                  "JSONL file of {\"id\", \"question\"}: print one JSON answer per line")
      ->excludes(ask_question);
  ask->add_option("--db", aa->db, "Store: a SQLite file or a postgresql:// URL")->required();
  ask->add_option("--method", aa->answer.query.method, MethodChoices())->capture_default_str();
  ask->add_option("--top-k", aa->answer.query.top_k, "Passages to retrieve per round")
      ->capture_default_str();
  ask->add_option("--pipeline", aa->answer.pipeline, "auto|single|cot|decompose|schema")
      ->capture_default_str();
  ask->add_option("--max-steps", aa->answer.max_steps, "cot: retrieval rounds")
      ->capture_default_str();
  ask->add_option("--answerer", aa->answer.answerer, "auto|extractive|llm")->capture_default_str();
  ask->add_option("--style", aa->answer.style, "short|long")->capture_default_str();
  ask->add_option("--analysis", aa->answer.schema.analysis,
                  "schema pipeline: auto|offline|llm (llm: the E.4 planning prompt)")
      ->capture_default_str();
  ask->add_option("--extension", aa->answer.schema.extension,
                  "schema pipeline: auto|off (auto: a query-scoped schema extension by the chat "
                  "model when the schema lacks what is asked)")
      ->capture_default_str();
  ask->add_option("--extension-snapshots", aa->answer.schema.extension_snapshots,
                  "Save each query-scoped schema extension here as schema_<time>.yaml");
  ask->add_option("--set", *sets, "Override a method option: key=value (repeatable)");
  ask->add_flag("--json", aa->json, "Print the answer object as JSON");
  ask->add_flag("--stream", aa->stream,
                "Print the answer's text as the model writes it, then the citations");
  return ask;
}

// `schema induce` and `schema show`.
void AddSchemaCommands(CLI::App& app, CommandLine* c) {
  InduceArgs& ia = c->induce;
  auto* schema = app.add_subcommand("schema", "Executable schema contracts");
  schema->require_subcommand(1);
  auto* induce =
      schema->add_subcommand("induce", "Profile a folder's sources; infer keys and links");
  induce
      ->add_option("dir", ia.dir, "Folder of CSV, JSON, JSONL, text and markdown files (recursive)")
      ->required();
  induce->add_flag("--json", ia.json, "Print the schema as JSON");
  induce->add_option("--out", ia.out, "Write the YAML contract here");
  induce->add_option(
      "--set", ia.sets,
      "Override a structural threshold: key=value (repeatable; e.g. min_containment=0)");
  induce->add_flag("--llm", ia.llm,
                   "Two-pass semantic discovery with the configured chat model (E.1-E.2)");
  induce->add_option("--exclude", ia.exclude,
                     "Exclusion manifest (default: DIR/flowrag_exclude.yaml when present)");
  induce->add_option("--extend", ia.extend,
                     "Merge into this contract (monotonic, version bump) instead of starting anew");
  induce
      ->add_option("--min-confidence", ia.min_confidence,
                   "With --extend: leave out new keys and relationships below this confidence "
                   "(paper 3.4: 0.7; Appendix C.4 merges all)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  auto* show = schema->add_subcommand("show", "Validate a YAML schema contract and summarise it");
  show->add_option("file", c->show_file, "The contract (schema.yaml)")->required();
  c->induce_cmd = induce;
  c->show_cmd = show;
}

CLI::App* AddEvalCommand(CLI::App& app, EvalArgs* ea, std::vector<std::string>* sets) {
  auto* eval = app.add_subcommand("eval", "Recall@k and latency on a benchmark folder");
  eval->add_option("--bench", ea->bench, "Benchmark folder (corpus.jsonl, questions.jsonl)")
      ->required();
  eval->add_option("--method", ea->methods, MethodChoices() + " (repeatable)")->required();
  eval->add_option("--k", ea->ks, "Comma-separated cut-offs")->capture_default_str();
  eval->add_option(
      "--db", ea->db,
      "Store: a SQLite file or a postgresql:// URL (default: a cache file per benchmark)");
  eval->add_option("--format", ea->format, "text|json")->capture_default_str();
  eval->add_option("--chunking", ea->chunking, "Chunking when indexing the corpus")
      ->capture_default_str();
  eval->add_option("--limit", ea->limit, "Only the first N questions");
  eval->add_option("--records", ea->records, "Write per-question results (JSONL) here");
  eval->add_option("--set", *sets, "Override a method option: key=value (repeatable)");
  eval->add_flag("-q,--quiet", ea->quiet, "No progress output");
  eval->add_flag("--answers", ea->answers, "Also answer each question and score EM/F1");
  eval->add_option("--pipeline", ea->answer.pipeline, "With --answers: single|cot|decompose")
      ->capture_default_str();
  eval->add_option("--answerer", ea->answer.answerer, "With --answers: auto|extractive|llm")
      ->capture_default_str();
  eval->add_option("--max-steps", ea->answer.max_steps, "With --answers: cot rounds")
      ->capture_default_str();
  return eval;
}

CLI::App* AddStatsCommand(CLI::App& app, StatsArgs* sa) {
  auto* stats = app.add_subcommand("stats", "Counts and sizes of a store");
  stats->add_option("--db", sa->db, "Store: a SQLite file or a postgresql:// URL")->required();
  stats->add_flag("--json", sa->json, "Print as JSON");
  return stats;
}

CLI::App* AddDeleteCommand(CLI::App& app, DeleteArgs* da) {
  auto* del = app.add_subcommand("delete", "Remove documents (and what only they supported)");
  del->add_option("ids", da->ids, "Document ids (as `flowrag query --json` shows them)")
      ->required();
  del->add_option("--db", da->db, "Store: a SQLite file or a postgresql:// URL")->required();
  return del;
}

CLI::App* AddCompactCommand(CLI::App& app, std::string* db) {
  auto* compact = app.add_subcommand(
      "compact", "Write the store's snapshot segment now, so the next open maps it");
  compact->add_option("--db", *db, "Store: a SQLite file or a postgresql:// URL")->required();
  return compact;
}

CLI::App* AddMethodsCommand(CLI::App& app, std::vector<std::string>* method_names) {
  auto* methods = app.add_subcommand(
      "methods", "List the retrieval methods and the options --set overrides, with defaults");
  methods->add_option("method", *method_names, "Only these methods");
  return methods;
}

CLI::App* AddImportOpenIeCommand(CLI::App& app, ImportArgs* ima) {
  auto* import_openie = app.add_subcommand(
      "import-openie", "Import precomputed OpenIE (benchmark openie.jsonl or HippoRAG JSON)");
  import_openie->add_option("file", ima->file, "openie.jsonl or openie_results_ner_*.json")
      ->required();
  import_openie->add_option("--db", ima->db, "Store holding the corpus")->required();
  import_openie->add_flag("--skip-bad-records", ima->options.skip_bad_records,
                          "Skip malformed records instead of failing");
  import_openie->add_flag("-q,--quiet", ima->quiet, "No progress output");
  return import_openie;
}

// Every subcommand, in the order `flowrag --help` lists them. `config`
// (may be null) gives serve's defaults and becomes the active
// configuration.
void AddCommands(CLI::App& app, std::optional<Config> config, CommandLine* c) {
  c->index_cmd = AddIndexCommand(app, &c->index);
  c->query_cmd = AddQueryCommand(app, &c->query, &c->query_sets);
  c->ingest_cmd = AddIngestCommand(app, &c->ingest);
  c->ask_cmd = AddAskCommand(app, &c->ask, &c->ask_sets);
  AddSchemaCommands(app, c);
  c->eval_cmd = AddEvalCommand(app, &c->eval, &c->eval_sets);
  c->stats_cmd = AddStatsCommand(app, &c->stats);
  c->delete_cmd = AddDeleteCommand(app, &c->del);
  c->compact_cmd = AddCompactCommand(app, &c->compact_db);
  c->methods_cmd = AddMethodsCommand(app, &c->method_names);
  c->import_openie_cmd = AddImportOpenIeCommand(app, &c->import_openie);
  if (config) ApplyServerDefaults(*config, &c->serve);
  c->serve_cmd = AddServeCommand(app, &c->serve);
  c->config_check_cmd = AddConfigCommand(app, &c->config_file);
  SetActiveConfig(std::move(config));
  c->export_cmd = AddExportCommand(app, &c->export_args);
  c->sql_cmd = AddSqlCommand(app, &c->sql);
  c->mcp_cmd = AddMcpCommand(app, &c->mcp);
}

// The --set pairs of a command into *params, then the command.
template <typename Run>
Status WithSets(const std::vector<std::string>& sets, std::map<std::string, std::string>* params,
                const Run& run) {
  Result<std::map<std::string, std::string>> parsed = ParseSetPairs(sets);
  if (!parsed.ok()) return parsed.status();
  *params = std::move(parsed).value();
  return run();
}

// Runs the subcommand the command line gave.
Status RunCommand(CommandLine& c) {
  if (*c.index_cmd) return RunIndex(c.index);
  if (*c.query_cmd) {
    return WithSets(c.query_sets, &c.query.query.params, [&] { return RunQuery(c.query); });
  }
  if (*c.ask_cmd) {
    return WithSets(c.ask_sets, &c.ask.answer.query.params, [&] { return RunAsk(c.ask); });
  }
  if (*c.ingest_cmd) return RunIngest(c.ingest);
  if (*c.induce_cmd) {
    const InduceArgs& ia = c.induce;
    auto settings = ParseSetPairs(ia.sets);
    return settings.ok() ? RunSchemaInduce(ia.dir, ia.json, ia.out, ia.exclude, ia.extend, ia.llm,
                                           ia.min_confidence, *settings)
                         : settings.status();
  }
  if (*c.show_cmd) return RunSchemaShow(c.show_file);
  if (*c.eval_cmd) {
    return WithSets(c.eval_sets, &c.eval.params, [&] { return RunEval(c.eval); });
  }
  if (*c.stats_cmd) return RunStats(c.stats);
  if (*c.import_openie_cmd) return RunImportOpenIe(c.import_openie);
  if (*c.methods_cmd) return RunMethods(c.method_names);
  if (*c.delete_cmd) return RunDelete(c.del.db, c.del.ids);
  if (*c.compact_cmd) return RunCompact(c.compact_db);
  if (*c.serve_cmd) return RunServe(c.serve);
  if (*c.export_cmd) return RunExport(c.export_args);
  if (*c.sql_cmd) return RunSql(c.sql);
  if (*c.config_check_cmd) {
    return RunConfigCheck(c.config_file.empty() ? c.config_flag : c.config_file);
  }
  if (*c.mcp_cmd) return RunMcp(c.mcp);
  return Status::Ok();
}

// flowrag.yaml is read before the command line, so its values are the
// defaults that flags override (`config check` reads its own file): the
// file --config, $FLOWRAG_CONFIG or ./flowrag.yaml names, if any.
Result<std::optional<Config>> LoadConfigFile(int argc, char** argv,
                                             const std::string& config_flag) {
  const std::string path = ConfigPath(config_flag);
  if (path.empty() || (argc > 1 && std::string(argv[1]) == "config")) {
    return std::optional<Config>();
  }
  FLOWRAG_ASSIGN_OR_RETURN(Config config, LoadConfig(path));
  return std::optional<Config>(std::move(config));
}

}  // namespace
}  // namespace flowrag::cli

int main(int argc, char** argv) {
  using namespace flowrag;
  CLI::App app{"flowrag: graph retrieval for retrieval-augmented generation"};
  app.require_subcommand(1);
  // No error printed here quotes more than kMaxQuotedInputBytes of an
  // argument, whoever made the message (CLI11, a loader naming its path).
  const std::vector<std::string_view> arguments(argv + 1, argv + argc);
  const auto bounded = [&arguments](const std::string& message) {
    return BoundInputEchoes(message, arguments);
  };
  app.failure_message([&bounded](const CLI::App* a, const CLI::Error& e) {
    return bounded(CLI::FailureMessage::simple(a, e));
  });
  cli::CommandLine c;
  c.config_flag = cli::ConfigFlagOf(argc, argv);
  app.add_option("--config", c.config_flag,
                 "Configuration file (default: $FLOWRAG_CONFIG, else ./flowrag.yaml if present)");
  Result<std::optional<Config>> config = cli::LoadConfigFile(argc, argv, c.config_flag);
  if (!config.ok()) {
    std::fprintf(stderr, "flowrag: error: %s\n", bounded(config.status().ToString()).c_str());
    return 2;
  }
  app.set_version_flag("--version", "flowrag 0.1.0");
  cli::AddCommands(app, std::move(config).value(), &c);

  CLI11_PARSE(app, argc, argv);

  Status st;
  // A library that throws (std::filesystem on a name too long, say) ends the
  // command with an error, not a crash.
  try {
    st = cli::RunCommand(c);
  } catch (const std::exception& e) {
    st = Status::Internal(std::string("unexpected error: ") + e.what());
  }
  if (!st.ok()) {
    std::fprintf(stderr, "flowrag: error: %s\n", bounded(st.ToString()).c_str());
    return st.code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  return 0;
}
