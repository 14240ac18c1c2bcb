// flowrag.yaml: one configuration file for the CLI and the server (doc/
// config.md). What it holds:
//
//   flowrag_config: 1
//   chat:        {base_url, model, api_key_env, timeout_ms, max_concurrency, max_retries}
//   embedding:   {base_url, model, api_key_env, timeout_ms, max_concurrency, max_retries,
//                 batch_size, dimensions}
//   query:       {method, top_k}
//   methods:     {<method>: {<option>: value}}   e.g. qafd: {alpha: 20}
//   server:      {host, port, token_env, threads, max_body_mib, head_timeout_s,
//                 read_timeout_s, body_timeout_s, keep_alive_timeout_s, max_connections,
//                 query_deadline_ms}
//   workspaces:  [{name, db, token_env, chat, embedding, methods}]   the first is the default
//
// Secrets never stand in the file: a key or token is named by the
// environment variable that holds it (api_key_env, token_env); a key that
// looks like a secret ("api_key", "token", "password", "secret", or a
// value like "sk-...") is an error. Unknown keys are errors. Every error
// names the file and line ("flowrag.yaml:7: chat.base_url: ...").
//
// Precedence, lowest first: built-in defaults, the file, environment
// variables (FLOWRAG_LLM_*, FLOWRAG_EMBED_*, FLOWRAG_SERVER_TOKEN), flags.
//
// A program on the library (the flowrag CLI) reads the file once and opens
// its stores with the options it gives:
//
//   auto config = flowrag::LoadConfig(flowrag::ConfigPath(flag));
//   if (!config.ok()) ...  // "flowrag.yaml:7: chat.base_url: ..."
//   auto options = flowrag::ApplyConfig(*config, nullptr, flowrag::EngineOptions{});
//   auto engine = flowrag::Engine::Open("corpus.db", *options);
//
// Thread-safety: pure functions over their arguments (and the environment,
// read when called).
#ifndef FLOWRAG_CONFIG_H_
#define FLOWRAG_CONFIG_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "flowrag/models.h"
#include "flowrag/options.h"
#include "flowrag/server.h"
#include "flowrag/status.h"

namespace flowrag {

// An endpoint as the file gives it; the key is read from `api_key_env`.
struct ModelEndpointConfig {
  std::optional<std::string> base_url, model, api_key_env;
  std::optional<int> timeout_ms, max_retries;
  std::optional<size_t> max_concurrency, batch_size, dimensions;
};

struct WorkspaceConfig {
  std::string name;
  std::string db;
  std::string token_env;  // empty: no token of its own
  std::optional<ModelEndpointConfig> chat, embedding;
  std::map<std::string, std::string> method_options;  // "qafd.alpha" -> "20"
  int line = 0;                                       // where it starts in the file
};

struct Config {
  std::string path;  // the file read
  std::optional<ModelEndpointConfig> chat, embedding;
  std::optional<std::string> query_method;
  std::optional<size_t> query_top_k;
  // index: the passage index (EngineOptions::passage_ann, hnsw_threshold).
  std::optional<std::string> passage_ann;
  std::optional<size_t> hnsw_threshold;
  std::map<std::string, std::string> method_options;  // "qafd.alpha" -> "20"
  // server:
  std::optional<std::string> host, token_env;
  std::optional<int> port;
  std::optional<size_t> threads, max_connections;
  std::optional<double> max_body_mib, query_deadline_ms;
  std::optional<int> head_timeout_s, read_timeout_s, body_timeout_s, keep_alive_timeout_s;
  std::vector<WorkspaceConfig> workspaces;
};

// Reads and checks `path`. NotFound when it does not exist; InvalidArgument
// "path:line: field: ..." for anything wrong (syntax, unknown key, wrong
// type or range, a secret in clear text, an unknown method or method
// option, a duplicate workspace).
Result<Config> LoadConfig(const std::string& path);

// The file to read: `flag` when given, else $FLOWRAG_CONFIG, else
// ./flowrag.yaml when it exists, else none ("").
std::string ConfigPath(const std::string& flag);

// `base` with the file's models and method defaults applied (a workspace's
// own over the file's), then the environment's FLOWRAG_LLM_* and
// FLOWRAG_EMBED_* over them. Errors name the environment variable a key
// should come from when it is unset.
Result<EngineOptions> ApplyConfig(const Config& config, const WorkspaceConfig* workspace,
                                  EngineOptions base);

// The workspaces to serve (each with its engine options and token).
Result<std::vector<WorkspaceSpec>> ConfiguredWorkspaces(const Config& config,
                                                        const EngineOptions& base);

}  // namespace flowrag

#endif  // FLOWRAG_CONFIG_H_
