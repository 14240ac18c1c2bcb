// flowrag: index documents, query them with any retrieval method, evaluate
// on benchmarks and inspect stores. `flowrag --help` and `flowrag CMD --help`.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string_view>
#include <vector>

#include "commands.h"
#include "flowrag/messages.h"
#include "config_cmd.h"
#include "export_cmd.h"
#include "flowrag/engine.h"
#include "mcp_cmd.h"
#include "serve.h"
#include "sql_cmd.h"

using namespace flowrag;

int main(int argc, char** argv) {
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
  // flowrag.yaml is read before the command line, so its values are the
  // defaults that flags override (`config check` reads its own file).
  std::string config_flag = cli::ConfigFlagOf(argc, argv);
  app.add_option("--config", config_flag,
                 "Configuration file (default: $FLOWRAG_CONFIG, else ./flowrag.yaml if present)");
  std::optional<Config> config;
  if (const std::string path = ConfigPath(config_flag);
      !path.empty() && !(argc > 1 && std::string(argv[1]) == "config")) {
    Result<Config> loaded = LoadConfig(path);
    if (!loaded.ok()) {
      std::fprintf(stderr, "flowrag: error: %s\n", bounded(loaded.status().ToString()).c_str());
      return 2;
    }
    config = std::move(loaded).value();
  }
  app.set_version_flag("--version", "flowrag 0.1.0");
  std::string methods;
  for (const auto& m : Engine::Methods()) methods += (methods.empty() ? "" : "|") + m;

  cli::IndexArgs ia;
  auto* index = app.add_subcommand("index", "Load, chunk, store and embed documents");
  index
      ->add_option("sources", ia.sources,
                   "Directories of .txt/.md/.pdf/.html files, single such files, .jsonl, .json "
                   "lists or benchmark folders (doc/ingestion.md)")
      ->required();
  index->add_option("--db", ia.db, "Store: a SQLite file or a postgresql:// URL (created if missing)")->required();
  index->add_option("--chunking", ia.chunking, "none|window|boundary")->capture_default_str();
  index->add_option("--window-words", ia.index.chunking.window_words, "Word window size")
      ->capture_default_str();
  index->add_option("--overlap-words", ia.index.chunking.overlap_words, "Word window overlap")
      ->capture_default_str();
  index->add_option("--max-chars", ia.index.chunking.max_chars, "Boundary chunk budget")
      ->capture_default_str();
  index->add_option("--overlap-chars", ia.index.chunking.overlap_chars, "Boundary overlap")
      ->capture_default_str();
  index->add_option("--batch-size", ia.index.batch_size, "Documents per transaction")
      ->capture_default_str();
  index
      ->add_option("--workers", ia.index.workers,
                   "Extraction workers of this run; concurrent index runs on one store share "
                   "the extraction (doc/storage.md)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  index
      ->add_option("--lease-seconds", ia.index.extract_lease_seconds,
                   "A claimed extraction batch not written in this time is claimed again")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  index->add_option("--embedder", ia.engine.embedder, "hash (built-in) or openai");
  index->add_option("--dim", ia.engine.hash_dimension, "Built-in embedder dimension")
      ->capture_default_str();
  index->add_option("--language", ia.engine.language,
                    "Tokeniser stemming language: english-s (default), none, or a Snowball "
                    "one (english, german, french, ...); recorded in the store, which queries "
                    "then tokenise with (doc/text.md)");
  index->add_flag("--refit", ia.index.refit, "Refit the built-in embedder's IDF now");
  index->add_flag("--skip-bad-records", ia.index.skip_bad_records,
                  "Skip malformed JSONL records instead of failing");
  index->add_option("--extractor", ia.index.extractor, "auto|heuristic|llm|none")
      ->capture_default_str();
  index
      ->add_option("--llm-style", ia.index.llm_prompt_style,
                   "LLM extraction prompts: sarag|openie|lightrag")
      ->capture_default_str();
  index->add_flag("--dry-run", ia.index.dry_run,
                  "Estimate LLM extraction calls and tokens; call nothing");
  index->add_flag("-q,--quiet", ia.quiet, "No progress output");

  cli::QueryArgs qa;
  std::vector<std::string> query_sets;
  auto* query = app.add_subcommand("query", "Retrieve passages for a question");
  query->add_option("question", qa.question, "The question")->required();
  query->add_option("--db", qa.db, "Store: a SQLite file or a postgresql:// URL")->required();
  query->add_option("--method", qa.query.method, methods)->capture_default_str();
  query->add_option("--top-k", qa.query.top_k, "Passages to return")->capture_default_str();
  query->add_option("--set", query_sets, "Override a method option: key=value (repeatable)");
  query->add_flag("--json", qa.json, "Print the result as JSON");
  query->add_flag("--explain", qa.explain,
                  "Graph methods: print keywords, seeds, paths and diagnostics");

  cli::IngestArgs ga;
  auto* ingest = app.add_subcommand(
      "ingest", "Build typed entities, relationships and passages from a folder under a schema contract");
  ingest->add_option("dir", ga.dir, "Folder of CSV, JSON, JSONL and text files")->required();
  ingest->add_option("--schema", ga.schema, "The contract (schema.yaml); default: induce it now");
  ingest->add_option("--db", ga.db, "Store: a SQLite file or a postgresql:// URL (created if missing)")->required();
  ingest->add_option("--exclude", ga.exclude,
                     "Exclusion manifest, on top of the contract's own and DIR/flowrag_exclude.yaml");
  ingest->add_option("--extractor", ga.extractor, "Text documents: auto|heuristic|llm|none")
      ->capture_default_str();
  ingest->add_option("--embedder", ga.engine.embedder, "hash (built-in) or openai");
  ingest->add_option("--language", ga.engine.language,
                     "Tokeniser stemming language (as for index; default: the store's, else "
                     "english-s)");
  ingest->add_flag("-q,--quiet", ga.quiet, "No progress or report output");

  cli::AskArgs aa;
  std::vector<std::string> ask_sets;
  auto* ask = app.add_subcommand("ask", "Answer a question with citations");
  auto* ask_question = ask->add_option("question", aa.question, "The question");
  ask->add_option("--questions", aa.questions,
                  "JSONL file of {\"id\", \"question\"}: print one JSON answer per line")
      ->excludes(ask_question);
  ask->add_option("--db", aa.db, "Store: a SQLite file or a postgresql:// URL")->required();
  ask->add_option("--method", aa.answer.query.method, methods)->capture_default_str();
  ask->add_option("--top-k", aa.answer.query.top_k, "Passages to retrieve per round")
      ->capture_default_str();
  ask->add_option("--pipeline", aa.answer.pipeline, "auto|single|cot|decompose|schema")->capture_default_str();
  ask->add_option("--max-steps", aa.answer.max_steps, "cot: retrieval rounds")
      ->capture_default_str();
  ask->add_option("--answerer", aa.answer.answerer, "auto|extractive|llm")->capture_default_str();
  ask->add_option("--style", aa.answer.style, "short|long")->capture_default_str();
  ask->add_option("--analysis", aa.answer.schema.analysis,
                  "schema pipeline: auto|offline|llm (llm: the E.4 planning prompt)")
      ->capture_default_str();
  ask->add_option("--extension", aa.answer.schema.extension,
                  "schema pipeline: auto|off (auto: a query-scoped schema extension by the chat model "
                  "when the schema lacks what is asked)")
      ->capture_default_str();
  ask->add_option("--extension-snapshots", aa.answer.schema.extension_snapshots,
                  "Save each query-scoped schema extension here as schema_<time>.yaml");
  ask->add_option("--set", ask_sets, "Override a method option: key=value (repeatable)");
  ask->add_flag("--json", aa.json, "Print the answer object as JSON");
  ask->add_flag("--stream", aa.stream,
                "Print the answer's text as the model writes it, then the citations");

  std::string schema_dir;
  bool schema_json = false;
  auto* schema = app.add_subcommand("schema", "Executable schema contracts");
  schema->require_subcommand(1);
  auto* induce =
      schema->add_subcommand("induce", "Profile a folder's sources; infer keys and links");
  induce->add_option("dir", schema_dir, "Folder of CSV, JSON, JSONL, text and markdown files (recursive)")->required();
  induce->add_flag("--json", schema_json, "Print the schema as JSON");
  std::string schema_out, schema_exclude, schema_file, schema_extend;
  induce->add_option("--out", schema_out, "Write the YAML contract here");
  std::vector<std::string> induce_sets;
  induce->add_option("--set", induce_sets,
                     "Override a structural threshold: key=value (repeatable; e.g. min_containment=0)");
  bool schema_llm = false;
  induce->add_flag("--llm", schema_llm,
                   "Two-pass semantic discovery with the configured chat model (E.1-E.2)");
  induce->add_option("--exclude", schema_exclude,
                     "Exclusion manifest (default: DIR/flowrag_exclude.yaml when present)");
  induce->add_option("--extend", schema_extend,
                     "Merge into this contract (monotonic, version bump) instead of starting anew");
  double schema_min_confidence = 0.0;
  induce
      ->add_option("--min-confidence", schema_min_confidence,
                   "With --extend: leave out new keys and relationships below this confidence "
                   "(paper 3.4: 0.7; Appendix C.4 merges all)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  auto* show = schema->add_subcommand("show", "Validate a YAML schema contract and summarise it");
  show->add_option("file", schema_file, "The contract (schema.yaml)")->required();

  cli::EvalArgs ea;
  std::vector<std::string> eval_sets;
  auto* eval = app.add_subcommand("eval", "Recall@k and latency on a benchmark folder");
  eval->add_option("--bench", ea.bench, "Benchmark folder (corpus.jsonl, questions.jsonl)")
      ->required();
  eval->add_option("--method", ea.methods, methods + " (repeatable)")->required();
  eval->add_option("--k", ea.ks, "Comma-separated cut-offs")->capture_default_str();
  eval->add_option("--db", ea.db, "Store: a SQLite file or a postgresql:// URL (default: a cache file per benchmark)");
  eval->add_option("--format", ea.format, "text|json")->capture_default_str();
  eval->add_option("--chunking", ea.chunking, "Chunking when indexing the corpus")
      ->capture_default_str();
  eval->add_option("--limit", ea.limit, "Only the first N questions");
  eval->add_option("--records", ea.records, "Write per-question results (JSONL) here");
  eval->add_option("--set", eval_sets, "Override a method option: key=value (repeatable)");
  eval->add_flag("-q,--quiet", ea.quiet, "No progress output");
  eval->add_flag("--answers", ea.answers, "Also answer each question and score EM/F1");
  eval->add_option("--pipeline", ea.answer.pipeline, "With --answers: single|cot|decompose")
      ->capture_default_str();
  eval->add_option("--answerer", ea.answer.answerer, "With --answers: auto|extractive|llm")
      ->capture_default_str();
  eval->add_option("--max-steps", ea.answer.max_steps, "With --answers: cot rounds")
      ->capture_default_str();

  cli::StatsArgs sa;
  auto* stats = app.add_subcommand("stats", "Counts and sizes of a store");
  stats->add_option("--db", sa.db, "Store: a SQLite file or a postgresql:// URL")->required();
  stats->add_flag("--json", sa.json, "Print as JSON");

  std::string delete_db;
  std::vector<std::string> delete_ids;
  auto* del = app.add_subcommand("delete", "Remove documents (and what only they supported)");
  del->add_option("ids", delete_ids, "Document ids (as `flowrag query --json` shows them)")
      ->required();
  del->add_option("--db", delete_db, "Store: a SQLite file or a postgresql:// URL")->required();

  std::vector<std::string> method_names;
  auto* methods_cmd = app.add_subcommand(
      "methods", "List the retrieval methods and the options --set overrides, with defaults");
  methods_cmd->add_option("method", method_names, "Only these methods");

  cli::ImportArgs ima;
  auto* import_openie = app.add_subcommand(
      "import-openie", "Import precomputed OpenIE (benchmark openie.jsonl or HippoRAG JSON)");
  import_openie->add_option("file", ima.file, "openie.jsonl or openie_results_ner_*.json")
      ->required();
  import_openie->add_option("--db", ima.db, "Store holding the corpus")->required();
  import_openie->add_flag("--skip-bad-records", ima.options.skip_bad_records,
                          "Skip malformed records instead of failing");
  import_openie->add_flag("-q,--quiet", ima.quiet, "No progress output");

  cli::ServeArgs serve_args;
  if (config) cli::ApplyServerDefaults(*config, &serve_args);
  auto* serve = cli::AddServeCommand(app, &serve_args);
  std::string config_file;
  auto* config_check = cli::AddConfigCommand(app, &config_file);
  cli::SetActiveConfig(std::move(config));
  cli::ExportArgs export_args;
  auto* export_cmd = cli::AddExportCommand(app, &export_args);
  cli::SqlArgs sql_args;
  auto* sql = cli::AddSqlCommand(app, &sql_args);
  cli::McpArgs mcp_args;
  auto* mcp = cli::AddMcpCommand(app, &mcp_args);

  CLI11_PARSE(app, argc, argv);

  // The --set pairs of a command into *params, then the command.
  const auto with_sets = [](const std::vector<std::string>& sets,
                            std::map<std::string, std::string>* params, const auto& run) {
    Result<std::map<std::string, std::string>> parsed = cli::ParseSetPairs(sets);
    if (!parsed.ok()) return parsed.status();
    *params = std::move(parsed).value();
    return run();
  };
  Status st;
  // A library that throws (std::filesystem on a name too long, say) ends the
  // command with an error, not a crash.
  try {
    if (*index) {
      st = cli::RunIndex(ia);
    } else if (*query) {
      st = with_sets(query_sets, &qa.query.params, [&] { return cli::RunQuery(qa); });
    } else if (*ask) {
      st = with_sets(ask_sets, &aa.answer.query.params, [&] { return cli::RunAsk(aa); });
    } else if (*ingest) {
      st = cli::RunIngest(ga);
    } else if (*induce) {
      auto settings = cli::ParseSetPairs(induce_sets);
      st = settings.ok()
               ? cli::RunSchemaInduce(schema_dir, schema_json, schema_out, schema_exclude,
                                      schema_extend, schema_llm, schema_min_confidence, *settings)
               : settings.status();
    } else if (*show) {
      st = cli::RunSchemaShow(schema_file);
    } else if (*eval) {
      st = with_sets(eval_sets, &ea.params, [&] { return cli::RunEval(ea); });
    } else if (*stats) {
      st = cli::RunStats(sa);
    } else if (*import_openie) {
      st = cli::RunImportOpenIe(ima);
    } else if (*methods_cmd) {
      st = cli::RunMethods(method_names);
    } else if (*del) {
      st = cli::RunDelete(delete_db, delete_ids);
    } else if (*serve) {
      st = cli::RunServe(serve_args);
    } else if (*export_cmd) {
      st = cli::RunExport(export_args);
    } else if (*sql) {
      st = cli::RunSql(sql_args);
    } else if (*config_check) {
      st = cli::RunConfigCheck(config_file.empty() ? config_flag : config_file);
    } else if (*mcp) {
      st = cli::RunMcp(mcp_args);
    }
  } catch (const std::exception& e) {
    st = Status::Internal(std::string("unexpected error: ") + e.what());
  }
  if (!st.ok()) {
    std::fprintf(stderr, "flowrag: error: %s\n", bounded(st.ToString()).c_str());
    return st.code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  return 0;
}
