#include "export_cmd.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "flowrag/engine.h"
#include "flowrag/graph.h"

namespace flowrag::cli {

CLI::App* AddExportCommand(CLI::App& app, ExportArgs* args) {
  auto* cmd = app.add_subcommand(
      "export",
      "Write the knowledge graph (entities, facts with provenance, synonyms, passages) "
      "as GraphML or JSON Lines; see doc/graph_export.md");
  cmd->add_option("--db", args->db, "Store: a SQLite file or a postgresql:// URL")->required();
  cmd->add_option("--format", args->format, "graphml (Gephi, NetworkX, yEd) or jsonl")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "Output file (default: stdout)");
  cmd->add_flag("--entities-only", args->entities_only,
                "Leave out documents, passages and their CONTAINS / MENTIONS edges (facts still "
                "name their source passages)");
  cmd->add_flag("--passage-text", args->passage_text, "Give each passage node its text");
  cmd->add_flag("-q,--quiet", args->quiet, "No summary on stderr");
  return cmd;
}

Status RunExport(const ExportArgs& args) {
  GraphExportOptions options;
  FLOWRAG_ASSIGN_OR_RETURN(options.format, ParseGraphFormat(args.format));
  options.passages = !args.entities_only;
  options.passage_text = args.passage_text;
  if (args.entities_only && args.passage_text) {
    return Status::InvalidArgument("--passage-text needs passages: drop --entities-only");
  }
  FLOWRAG_ASSIGN_OR_RETURN(auto engine, OpenExistingStore(args.db));
  const auto start = std::chrono::steady_clock::now();
  FLOWRAG_ASSIGN_OR_RETURN(std::shared_ptr<const GraphView> graph, engine->Graph());
  GraphExportReport report;
  const bool to_stdout = args.out.empty() || args.out == "-";
  std::error_code ec;
  const auto kind = std::filesystem::status(args.out, ec).type();
  // A device or a pipe (/dev/null, a FIFO) is written as it is; only a
  // regular file goes through FILE.tmp and a rename (which would replace
  // the device with a file).
  const bool direct = !to_stdout && kind != std::filesystem::file_type::not_found &&
                      kind != std::filesystem::file_type::regular;
  if (to_stdout) {
    std::ios::sync_with_stdio(false);
    FLOWRAG_RETURN_IF_ERROR(graph->Export(options, std::cout, &report));
  } else if (direct) {
    std::ofstream file(args.out, std::ios::binary);
    if (!file) return Status::IoError(args.out + ": cannot open for writing");
    FLOWRAG_RETURN_IF_ERROR(graph->Export(options, file, &report).WithContext(args.out));
  } else {
    const std::string tmp = args.out + ".tmp";
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    if (!file) return Status::IoError(tmp + ": cannot open for writing");
    Status st = graph->Export(options, file, &report);
    file.close();
    if (st.ok() && !file) st = Status::IoError(tmp + ": write failed");
    if (!st.ok()) {
      std::filesystem::remove(tmp, ec);
      return st.WithContext(args.out);
    }
    std::filesystem::rename(tmp, args.out, ec);
    if (ec) return Status::IoError(args.out + ": " + ec.message());
  }
  if (!args.quiet) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "export: %zu nodes, %zu edges, %llu bytes (%s) in %.2f s%s\n",
                 report.nodes, report.edges, static_cast<unsigned long long>(report.bytes),
                 args.format.c_str(), s,
                 report.replaced_characters ? (", " + std::to_string(report.replaced_characters) +
                                               " invalid characters replaced by U+FFFD")
                                                  .c_str()
                                            : "");
  }
  return Status::Ok();
}

}  // namespace flowrag::cli
