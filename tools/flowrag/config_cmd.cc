#include "config_cmd.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "flowrag/engine.h"

namespace flowrag::cli {
namespace {

std::optional<Config>& Active() {
  static std::optional<Config> config;
  return config;
}

}  // namespace

std::string ConfigFlagOf(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--config") == 0 && i + 1 < argc) return argv[i + 1];
    if (std::strncmp(argv[i], "--config=", 9) == 0) return argv[i] + 9;
  }
  return "";
}

const Config* ActiveConfig() { return Active() ? &*Active() : nullptr; }
void SetActiveConfig(std::optional<Config> config) { Active() = std::move(config); }

Result<EngineOptions> ConfiguredEngineOptions(const std::string& db, EngineOptions base) {
  return ConfiguredEngineOptions(ActiveConfig(), db, std::move(base));
}

Result<EngineOptions> ConfiguredEngineOptions(const Config* c, const std::string& db,
                                              EngineOptions base) {
  if (c == nullptr) return base;
  for (const WorkspaceConfig& w : c->workspaces) {
    if (w.db == db) return ApplyConfig(*c, &w, std::move(base));
  }
  return ApplyConfig(*c, nullptr, std::move(base));
}

bool StoreFileExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

void ApplyServerDefaults(const Config& c, ServeArgs* args) {
  ServerOptions& s = args->server;
  if (c.host) s.host = *c.host;
  if (c.port) s.port = *c.port;
  if (c.threads) s.threads = *c.threads;
  if (c.max_body_mib) args->max_body_mib = *c.max_body_mib;
  if (c.head_timeout_s) s.head_timeout_s = *c.head_timeout_s;
  if (c.read_timeout_s) s.read_timeout_s = *c.read_timeout_s;
  if (c.body_timeout_s) s.body_timeout_s = *c.body_timeout_s;
  if (c.keep_alive_timeout_s) s.keep_alive_timeout_s = *c.keep_alive_timeout_s;
  if (c.max_connections) s.max_connections = *c.max_connections;
  if (c.query_deadline_ms) s.query_deadline_ms = *c.query_deadline_ms;
}

CLI::App* AddConfigCommand(CLI::App& app, std::string* file) {
  auto* config = app.add_subcommand("config", "The configuration file (flowrag.yaml)");
  config->require_subcommand(1);
  auto* check = config->add_subcommand(
      "check", "Check a configuration file: every error with its file and line");
  check->add_option("file", *file,
                    "The file (default: --config, $FLOWRAG_CONFIG, else ./flowrag.yaml)");
  return check;
}

Status RunConfigCheck(const std::string& file) {
  const std::string path = file.empty() ? ConfigPath("") : file;
  if (path.empty()) {
    return Status::NotFound("config check: no file given, $FLOWRAG_CONFIG unset and no "
                            "./flowrag.yaml");
  }
  FLOWRAG_ASSIGN_OR_RETURN(Config c, LoadConfig(path));
  // Keys named by environment variables are looked up now, so a missing one
  // is found before a server starts.
  FLOWRAG_ASSIGN_OR_RETURN(EngineOptions top, ApplyConfig(c, nullptr, EngineOptions{}));
  // What `flowrag serve --config FILE` would run, checked the same way; a
  // file without workspaces is served with --db, so only its server part is.
  ServeArgs serve;
  ApplyServerDefaults(c, &serve);
  if (c.workspaces.empty()) serve.db = "(--db)";
  FLOWRAG_ASSIGN_OR_RETURN(ServePlan plan, PlanServe(serve, &c));
  std::vector<WorkspaceSpec> workspaces;
  if (!c.workspaces.empty()) workspaces = std::move(plan.workspaces);
  std::printf("%s: ok\n", path.c_str());
  std::printf("  chat model:      %s\n",
              top.openai_chat ? (top.openai_chat->model + " at " + top.openai_chat->base_url).c_str()
                              : "none (offline answers)");
  std::printf("  embedding model: %s\n",
              top.openai_embedder
                  ? (top.openai_embedder->model + " at " + top.openai_embedder->base_url).c_str()
                  : "built-in hashed embedder");
  std::printf("  method defaults: %zu option(s)%s%s\n", top.default_params.size(),
              top.default_method.empty() ? "" : ", query.method ",
              top.default_method.c_str());
  if (c.passage_ann || c.hnsw_threshold) {
    std::printf("  passage index:   %s from %zu passages\n", top.passage_ann.c_str(),
                top.hnsw_threshold);
  }
  for (const WorkspaceSpec& w : workspaces) {
    const bool missing =
        std::find(plan.missing.begin(), plan.missing.end(), w.db_path) != plan.missing.end();
    std::printf("  workspace %-12s %s%s%s\n", w.name.c_str(), DisplayLocation(w.db_path).c_str(),
                w.token.empty() ? "" : " (own token)",
                missing ? " (no such store yet: `flowrag index` it, or serve --create)" : "");
  }
  if (!plan.server.bearer_token.empty()) std::printf("  server token:    set\n");
  return Status::Ok();
}

}  // namespace flowrag::cli
