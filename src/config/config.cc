#include "flowrag/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <limits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <set>
#include <type_traits>

#include "common/encoding.h"
#include "flowrag/engine.h"

namespace flowrag {
namespace {

// A key or name of the file as a message quotes it.
std::string Quoted(const std::string& text) { return EscapeForMessage(text, 60); }

// Environment variable names longer than this are refused (no shell has them).
constexpr size_t kMaxEnvNameBytes = 128;

// A bound as a message shows it: 4096, 0.001 (not std::to_string's 0.001000).
template <typename T>
std::string NumberText(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", static_cast<double>(v));
    return buf;
  } else {
    return std::to_string(v);
  }
}

// Reads one file's nodes; every error is "path:line: field: what".
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  Status Error(const YAML::Node& node, const std::string& field, const std::string& what) const {
    const int line = node.IsDefined() && node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
    return Status::InvalidArgument(path_ + ":" + std::to_string(line) + ": " + field + ": " + what);
  }

  // A mapping whose keys are all in `known` (and none a secret).
  Status Mapping(const YAML::Node& node, const std::string& field,
                 std::initializer_list<const char*> known) const {
    if (!node.IsMap()) return Error(node, field, "expected a mapping");
    for (const auto& kv : node) {
      const std::string key = kv.first.Scalar();
      const std::string shown = Quoted(key);
      const std::string where = field.empty() ? shown : field + "." + shown;
      if (std::find_if(known.begin(), known.end(), [&](const char* k) { return key == k; }) !=
          known.end()) {
        FLOWRAG_RETURN_IF_ERROR(NoSecretValue(kv.second, where));
        continue;
      }
      if (LooksSecret(key)) {
        return Error(kv.first, where,
                     "secrets are not written in the config file: put it in an environment "
                     "variable and name that variable (api_key_env, token_env)");
      }
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      return Error(kv.first, where, "unknown key (known: " + list + ")");
    }
    return Status::Ok();
  }

  Status String(const YAML::Node& map, const char* key, const std::string& field,
                std::optional<std::string>* out) const {
    const YAML::Node n = map[key];
    if (!n.IsDefined() || n.IsNull()) return Status::Ok();
    if (!n.IsScalar()) return Error(n, field + key, "expected a string");
    *out = n.Scalar();
    return Status::Ok();
  }

  template <typename T>
  Status Number(const YAML::Node& map, const char* key, const std::string& field, T min, T max,
                std::optional<T>* out) const {
    const YAML::Node n = map[key];
    if (!n.IsDefined() || n.IsNull()) return Status::Ok();
    T value{};
    bool ok = n.IsScalar() && YAML::convert<T>::decode(n, value);
    // NaN compares false with both bounds: refused by name (".nan", ".inf").
    if constexpr (std::is_floating_point_v<T>) ok = ok && std::isfinite(value);
    if (!ok || value < min || value > max) {
      return Error(n, field + key,
                   "expected a number from " + NumberText(min) + " to " + NumberText(max) +
                       ", got \"" + EscapeForMessage(n.IsScalar() ? n.Scalar() : "?", 40) + "\"");
    }
    *out = value;
    return Status::Ok();
  }

  // An environment variable's name: [A-Za-z_][A-Za-z0-9_]*.
  Status EnvName(const YAML::Node& map, const char* key, const std::string& field,
                 std::optional<std::string>* out) const {
    FLOWRAG_RETURN_IF_ERROR(String(map, key, field, out));
    if (!*out) return Status::Ok();
    const std::string& v = **out;
    const bool ok = !v.empty() && v.size() <= kMaxEnvNameBytes &&
                    !std::isdigit(static_cast<unsigned char>(v[0])) &&
                    std::all_of(v.begin(), v.end(), [](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                    });
    if (!ok) {
      return Error(map[key], field + key,
                   "expected the name of an environment variable (e.g. OPENAI_API_KEY), not the "
                   "secret itself");
    }
    return Status::Ok();
  }

 private:
  static bool LooksSecret(const std::string& key) {
    for (const char* s : {"api_key", "apikey", "key", "token", "password", "secret"}) {
      if (key == s) return true;
    }
    return false;
  }
  // A value shaped like an API key ("sk-" and 20 more characters).
  Status NoSecretValue(const YAML::Node& n, const std::string& field) const {
    if (n.IsScalar() && n.Scalar().rfind("sk-", 0) == 0 && n.Scalar().size() > 20) {
      return Error(n, field, "looks like an API key: name its environment variable instead");
    }
    return Status::Ok();
  }

  std::string path_;
};

// InvalidArgument "unknown method \"x\" (known: ...)" unless `method` is one
// of Engine::Methods().
Status KnownMethod(const std::string& method) {
  const std::vector<std::string> methods = Engine::Methods();
  if (std::find(methods.begin(), methods.end(), method) != methods.end()) return Status::Ok();
  std::string list;
  for (const std::string& m : methods) list += (list.empty() ? "" : ", ") + m;
  return Status::InvalidArgument("unknown method \"" + Quoted(method) + "\" (known: " + list + ")");
}

Status ReadEndpoint(const Reader& r, const YAML::Node& n, const std::string& field, bool embedding,
                    std::optional<ModelEndpointConfig>* out) {
  if (!n.IsDefined() || n.IsNull()) return Status::Ok();
  if (embedding) {
    FLOWRAG_RETURN_IF_ERROR(r.Mapping(n, field, {"base_url", "model", "api_key_env", "timeout_ms",
                                                 "max_retries", "max_concurrency", "batch_size",
                                                 "dimensions"}));
  } else {
    FLOWRAG_RETURN_IF_ERROR(r.Mapping(
        n, field, {"base_url", "model", "api_key_env", "timeout_ms", "max_retries", "max_concurrency"}));
  }
  ModelEndpointConfig e;
  const std::string f = field + ".";
  FLOWRAG_RETURN_IF_ERROR(r.String(n, "base_url", f, &e.base_url));
  if (e.base_url && e.base_url->rfind("http://", 0) != 0 && e.base_url->rfind("https://", 0) != 0) {
    return r.Error(n["base_url"], f + "base_url", "expected an http:// or https:// URL");
  }
  FLOWRAG_RETURN_IF_ERROR(r.String(n, "model", f, &e.model));
  FLOWRAG_RETURN_IF_ERROR(r.EnvName(n, "api_key_env", f, &e.api_key_env));
  FLOWRAG_RETURN_IF_ERROR(r.Number<int>(n, "timeout_ms", f, 1, 3600000, &e.timeout_ms));
  FLOWRAG_RETURN_IF_ERROR(r.Number<int>(n, "max_retries", f, 0, 100, &e.max_retries));
  FLOWRAG_RETURN_IF_ERROR(r.Number<size_t>(n, "max_concurrency", f, 1, 1024, &e.max_concurrency));
  FLOWRAG_RETURN_IF_ERROR(r.Number<size_t>(n, "batch_size", f, 1, 100000, &e.batch_size));
  FLOWRAG_RETURN_IF_ERROR(r.Number<size_t>(n, "dimensions", f, 0, 100000, &e.dimensions));
  *out = std::move(e);
  return Status::Ok();
}

// methods: {qafd: {alpha: 20}} → {"qafd.alpha": "20"}, each checked against
// the method's options (Engine::MethodOptions).
Status ReadMethods(const Reader& r, const YAML::Node& n, const std::string& field,
                   std::map<std::string, std::string>* out) {
  if (!n.IsDefined() || n.IsNull()) return Status::Ok();
  if (!n.IsMap()) return r.Error(n, field, "expected a mapping of method: {option: value}");
  for (const auto& m : n) {
    const std::string method = m.first.Scalar();
    const std::string where = field + "." + Quoted(method);
    if (Status s = KnownMethod(method); !s.ok()) return r.Error(m.first, where, s.message());
    Result<std::vector<MethodOption>> known = Engine::MethodOptions(method);
    if (!known.ok()) return r.Error(m.first, where, known.status().message());
    if (!m.second.IsMap()) return r.Error(m.second, where, "expected a mapping of option: value");
    for (const auto& o : m.second) {
      const std::string option = o.first.Scalar();
      const std::string option_field = where + "." + Quoted(option);
      // An option named as the method reads it (one several methods share,
      // "fact_search", or a whole "qafd.alpha") is kept as it is.
      const bool shared = std::any_of(known->begin(), known->end(),
                                      [&](const MethodOption& k) { return k.name == option; });
      const bool exists = shared || std::any_of(known->begin(), known->end(),
                                                [&](const MethodOption& k) {
                                                  return k.name == method + "." + option;
                                                });
      if (!exists) {
        std::string list;
        for (const MethodOption& k : *known) list += (list.empty() ? "" : ", ") + k.name;
        return r.Error(o.first, option_field, "unknown option (known: " + list + ")");
      }
      if (!o.second.IsScalar()) return r.Error(o.second, option_field, "expected a value");
      (*out)[shared ? option : method + "." + option] = o.second.Scalar();
    }
  }
  return Status::Ok();
}

Status ReadServer(const Reader& r, const YAML::Node& n, Config* c) {
  if (!n.IsDefined() || n.IsNull()) return Status::Ok();
  FLOWRAG_RETURN_IF_ERROR(r.Mapping(
      n, "server", {"host", "port", "token_env", "threads", "max_body_mib", "head_timeout_s",
                    "read_timeout_s", "body_timeout_s", "keep_alive_timeout_s", "max_connections",
                    "query_deadline_ms"}));
  const std::string f = "server.";
  FLOWRAG_RETURN_IF_ERROR(r.String(n, "host", f, &c->host));
  FLOWRAG_RETURN_IF_ERROR(r.Number<int>(n, "port", f, 0, 65535, &c->port));
  FLOWRAG_RETURN_IF_ERROR(r.EnvName(n, "token_env", f, &c->token_env));
  FLOWRAG_RETURN_IF_ERROR(r.Number<size_t>(n, "threads", f, 0, 4096, &c->threads));
  FLOWRAG_RETURN_IF_ERROR(r.Number<double>(n, "max_body_mib", f, 0.001, 4096, &c->max_body_mib));
  FLOWRAG_RETURN_IF_ERROR(r.Number<int>(n, "head_timeout_s", f, 1, 3600, &c->head_timeout_s));
  FLOWRAG_RETURN_IF_ERROR(r.Number<int>(n, "read_timeout_s", f, 1, 3600, &c->read_timeout_s));
  FLOWRAG_RETURN_IF_ERROR(r.Number<int>(n, "body_timeout_s", f, 1, 3600, &c->body_timeout_s));
  FLOWRAG_RETURN_IF_ERROR(
      r.Number<int>(n, "keep_alive_timeout_s", f, 1, 3600, &c->keep_alive_timeout_s));
  FLOWRAG_RETURN_IF_ERROR(
      r.Number<size_t>(n, "max_connections", f, 1, 1000000, &c->max_connections));
  return r.Number<double>(n, "query_deadline_ms", f, 0, 3.6e6, &c->query_deadline_ms);
}

Status ReadWorkspaces(const Reader& r, const YAML::Node& n, Config* c) {
  if (!n.IsDefined() || n.IsNull()) return Status::Ok();
  if (!n.IsSequence()) return r.Error(n, "workspaces", "expected a list of {name, db, ...}");
  std::set<std::string> names;
  for (size_t i = 0; i < n.size(); ++i) {
    const YAML::Node w = n[i];
    const std::string field = "workspaces[" + std::to_string(i) + "]";
    FLOWRAG_RETURN_IF_ERROR(
        r.Mapping(w, field, {"name", "db", "token_env", "chat", "embedding", "methods"}));
    WorkspaceConfig ws;
    ws.line = w.Mark().line + 1;
    std::optional<std::string> name, db, token_env;
    FLOWRAG_RETURN_IF_ERROR(r.String(w, "name", field + ".", &name));
    FLOWRAG_RETURN_IF_ERROR(r.String(w, "db", field + ".", &db));
    FLOWRAG_RETURN_IF_ERROR(r.EnvName(w, "token_env", field + ".", &token_env));
    if (!name || name->empty()) return r.Error(w, field + ".name", "required");
    if (!db || db->empty()) return r.Error(w, field + ".db", "required (a store path or URL)");
    if (!ValidWorkspaceName(*name)) {
      return r.Error(w["name"], field + ".name",
                     "\"" + EscapeForMessage(*name, 80) +
                         "\": expected 1 to 64 of [A-Za-z0-9_.-], not . or .. (it is a path "
                         "segment: /v1/w/NAME/)");
    }
    if (!names.insert(*name).second) return r.Error(w["name"], field + ".name", "given twice");
    ws.name = *name;
    ws.db = *db;
    ws.token_env = token_env.value_or("");
    FLOWRAG_RETURN_IF_ERROR(ReadEndpoint(r, w["chat"], field + ".chat", false, &ws.chat));
    FLOWRAG_RETURN_IF_ERROR(
        ReadEndpoint(r, w["embedding"], field + ".embedding", true, &ws.embedding));
    FLOWRAG_RETURN_IF_ERROR(ReadMethods(r, w["methods"], field + ".methods", &ws.method_options));
    c->workspaces.push_back(std::move(ws));
  }
  return Status::Ok();
}

Status ReadConfig(const Reader& r, const YAML::Node& root, Config* c) {
  if (!root.IsMap()) return r.Error(root, "(top)", "expected a mapping (see doc/config.md)");
  FLOWRAG_RETURN_IF_ERROR(r.Mapping(
      root, "",
      {"flowrag_config", "chat", "embedding", "query", "index", "methods", "server", "workspaces"}));
  const YAML::Node version = root["flowrag_config"];
  if (!version.IsDefined() || !version.IsScalar() || version.Scalar() != "1") {
    return r.Error(version.IsDefined() ? version : root, "flowrag_config",
                   "expected 1 (the format version)");
  }
  FLOWRAG_RETURN_IF_ERROR(ReadEndpoint(r, root["chat"], "chat", false, &c->chat));
  FLOWRAG_RETURN_IF_ERROR(ReadEndpoint(r, root["embedding"], "embedding", true, &c->embedding));
  if (const YAML::Node q = root["query"]; q.IsDefined() && !q.IsNull()) {
    FLOWRAG_RETURN_IF_ERROR(r.Mapping(q, "query", {"method"}));
    FLOWRAG_RETURN_IF_ERROR(r.String(q, "method", "query.", &c->query_method));
    if (c->query_method) {
      if (Status s = KnownMethod(*c->query_method); !s.ok()) {
        return r.Error(q["method"], "query.method", s.message());
      }
    }
  }
  if (const YAML::Node i = root["index"]; i.IsDefined() && !i.IsNull()) {
    FLOWRAG_RETURN_IF_ERROR(r.Mapping(i, "index", {"passage_ann", "hnsw_threshold"}));
    FLOWRAG_RETURN_IF_ERROR(r.String(i, "passage_ann", "index.", &c->passage_ann));
    if (c->passage_ann && *c->passage_ann != "auto" && *c->passage_ann != "hnsw" &&
        *c->passage_ann != "int8") {
      return r.Error(i["passage_ann"], "index.passage_ann", "expected auto, hnsw or int8");
    }
    FLOWRAG_RETURN_IF_ERROR(r.Number<size_t>(i, "hnsw_threshold", "index.", 1,
                                             std::numeric_limits<uint32_t>::max(),
                                             &c->hnsw_threshold));
  }
  FLOWRAG_RETURN_IF_ERROR(ReadMethods(r, root["methods"], "methods", &c->method_options));
  FLOWRAG_RETURN_IF_ERROR(ReadServer(r, root["server"], c));
  return ReadWorkspaces(r, root["workspaces"], c);
}

// The key of an endpoint: from its api_key_env (which must be set), else
// whatever the options had.
Status KeyFromEnv(const ModelEndpointConfig& e, const std::string& field, std::string* key) {
  if (!e.api_key_env) return Status::Ok();
  const char* v = std::getenv(e.api_key_env->c_str());
  if (v == nullptr) {
    return Status::FailedPrecondition(field + ".api_key_env: the environment variable " +
                                      *e.api_key_env + " is not set");
  }
  *key = v;
  return Status::Ok();
}

template <typename Options>
Status ApplyEndpoint(const ModelEndpointConfig& e, const std::string& field, Options* o) {
  if (e.base_url) o->base_url = *e.base_url;
  if (e.model) o->model = *e.model;
  if (e.timeout_ms) o->timeout_ms = *e.timeout_ms;
  if (e.max_retries) o->max_retries = *e.max_retries;
  if (e.max_concurrency) o->max_concurrency = *e.max_concurrency;
  return KeyFromEnv(e, field, &o->api_key);
}

}  // namespace

Result<Config> LoadConfig(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status::NotFound(path + ": no such config file");
  }
  if (std::filesystem::file_size(path, ec) > (1u << 20)) {
    return Status::InvalidArgument(path + ": larger than 1 MiB; not a config file");
  }
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(path + ":" + std::to_string(e.mark.line + 1) + ": " +
                                   EscapeForMessage(e.msg));
  }
  Config c;
  c.path = path;
  try {
    FLOWRAG_RETURN_IF_ERROR(ReadConfig(Reader(path), root, &c));
  } catch (const YAML::Exception& e) {  // a shape the checks above did not expect
    return Status::InvalidArgument(path + ":" + std::to_string(e.mark.line + 1) + ": " +
                                   EscapeForMessage(e.msg));
  }
  return c;
}

std::string ConfigPath(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("FLOWRAG_CONFIG"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  return std::filesystem::is_regular_file("flowrag.yaml", ec) ? "flowrag.yaml" : "";
}

Result<EngineOptions> ApplyConfig(const Config& config, const WorkspaceConfig* workspace,
                                  EngineOptions base) {
  const auto& chat = workspace != nullptr && workspace->chat ? workspace->chat : config.chat;
  const auto& embedding =
      workspace != nullptr && workspace->embedding ? workspace->embedding : config.embedding;
  const std::string where =
      config.path + ": " + (workspace != nullptr ? "workspace " + workspace->name + ": " : "");
  if (chat && !base.openai_chat && base.chat_model == nullptr) {
    OpenAiChatOptions o;
    FLOWRAG_RETURN_IF_ERROR(ApplyEndpoint(*chat, where + "chat", &o));
    base.openai_chat = o;
  }
  if (embedding && !base.openai_embedder && base.custom_embedder == nullptr) {
    OpenAiEmbedderOptions o;
    FLOWRAG_RETURN_IF_ERROR(ApplyEndpoint(*embedding, where + "embedding", &o));
    if (embedding->batch_size) o.batch_size = *embedding->batch_size;
    if (embedding->dimensions) o.dimensions = *embedding->dimensions;
    base.openai_embedder = o;
    if (base.embedder.empty()) base.embedder = "openai";
  }
  std::map<std::string, std::string> params = config.method_options;
  if (workspace != nullptr) {
    for (const auto& [k, v] : workspace->method_options) params[k] = v;
  }
  for (const auto& [k, v] : base.default_params) params[k] = v;
  base.default_params = std::move(params);
  if (base.default_method.empty() && config.query_method) base.default_method = *config.query_method;
  if (config.passage_ann) base.passage_ann = *config.passage_ann;
  if (config.hnsw_threshold) base.hnsw_threshold = *config.hnsw_threshold;
  return base;
}

Result<std::vector<WorkspaceSpec>> ConfiguredWorkspaces(const Config& config,
                                                        const EngineOptions& base) {
  std::vector<WorkspaceSpec> out;
  for (const WorkspaceConfig& w : config.workspaces) {
    WorkspaceSpec spec;
    spec.name = w.name;
    spec.db_path = w.db;
    if (!w.token_env.empty()) {
      const char* t = std::getenv(w.token_env.c_str());
      if (t == nullptr || *t == '\0') {
        return Status::FailedPrecondition(config.path + ":" + std::to_string(w.line) +
                                          ": workspace " + w.name + ": token_env: " + w.token_env +
                                          " is not set");
      }
      spec.token = t;
    }
    FLOWRAG_ASSIGN_OR_RETURN(spec.engine, ApplyConfig(config, &w, base));
    out.push_back(std::move(spec));
  }
  return out;
}

}  // namespace flowrag
