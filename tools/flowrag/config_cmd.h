// flowrag.yaml in the CLI (include/flowrag/config.h): found before the command
// line is parsed, so that its values are the defaults flags override; and
// `flowrag config check [FILE]`.
#ifndef FLOWRAG_TOOLS_CONFIG_CMD_H_
#define FLOWRAG_TOOLS_CONFIG_CMD_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "flowrag/config.h"
#include "serve.h"

namespace flowrag::cli {

// The --config value in argv ("--config FILE" or "--config=FILE"), or "".
std::string ConfigFlagOf(int argc, char** argv);

// The configuration in force for this run (null: none); set once by main.
const Config* ActiveConfig();
void SetActiveConfig(std::optional<Config> config);

// `base` with the active configuration applied: the workspace whose store
// is `db` when the file has one, else the file's top level.
Result<EngineOptions> ConfiguredEngineOptions(const std::string& db, EngineOptions base);
// The same with `config` (null: none) instead of the active one.
Result<EngineOptions> ConfiguredEngineOptions(const Config* config, const std::string& db,
                                              EngineOptions base);

// Whether a store file exists at `path` (false too when the name cannot be
// looked up, e.g. a name too long: never throws).
bool StoreFileExists(const std::string& path);

// The file's server section as defaults of `serve` (flags given later win).
void ApplyServerDefaults(const Config& config, ServeArgs* args);

// `flowrag config check [FILE]`: reads the file, resolves its models and
// keys, and runs PlanServe on it as `flowrag serve --config FILE` would
// without flags (a file serve refuses is refused here, with its file and
// line or field); a store that does not exist yet is reported, not an error.
CLI::App* AddConfigCommand(CLI::App& app, std::string* file);
Status RunConfigCheck(const std::string& file);

}  // namespace flowrag::cli

#endif  // FLOWRAG_TOOLS_CONFIG_CMD_H_
