// `flowrag export`: the knowledge graph of a store as GraphML or JSON Lines
// (doc/graph_export.md).
#ifndef FLOWRAG_TOOLS_EXPORT_CMD_H_
#define FLOWRAG_TOOLS_EXPORT_CMD_H_

#include <CLI/CLI.hpp>
#include <string>

#include "flowrag/status.h"

namespace flowrag::cli {

struct ExportArgs {
  std::string db;
  std::string format = "graphml";
  std::string out;  // empty or "-": stdout
  bool entities_only = false;
  bool passage_text = false;
  bool quiet = false;
};

// Registers the subcommand and its options (filled into *args) on `app`.
CLI::App* AddExportCommand(CLI::App& app, ExportArgs* args);

// Writes the export; a regular file is written to FILE.tmp and renamed when
// complete, a device or pipe (/dev/null, a FIFO) directly.
Status RunExport(const ExportArgs& args);

}  // namespace flowrag::cli

#endif  // FLOWRAG_TOOLS_EXPORT_CMD_H_
