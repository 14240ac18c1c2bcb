// flowrag.yaml (include/flowrag/config.h): what a file sets, every kind of error
// with its file and line, the engine applying method defaults, per-workspace
// tokens on a real server, and `flowrag config check` as a user runs it.
#include "flowrag/config.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "flowrag/engine.h"
#include "flowrag/server.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

class ConfigTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text, const std::string& name = "flowrag.yaml") {
    const std::string path = dir_.File(name);
    std::ofstream(path) << text;
    return path;
  }
  // The error of loading `text`, or "" when it loads.
  std::string ErrorOf(const std::string& text) {
    auto c = LoadConfig(Write(text));
    return c.ok() ? "" : c.status().message();
  }
  testing::TempDir dir_;
};

constexpr char kGood[] = R"(flowrag_config: 1
chat:
  base_url: http://127.0.0.1:11434/v1
  model: llama3.1
  api_key_env: FLOWRAG_TEST_CHAT_KEY
  max_concurrency: 2
embedding:
  base_url: http://127.0.0.1:11434/v1
  model: nomic-embed-text
  dimensions: 256
query:
  method: ppr
index:
  passage_ann: int8
  hnsw_threshold: 50000
methods:
  qafd: {alpha: 20, seeds: 12}
server:
  port: 9123
  token_env: FLOWRAG_TEST_SERVER_TOKEN
  max_body_mib: 2
workspaces:
  - name: docs
    db: docs.db
    token_env: FLOWRAG_TEST_DOCS_TOKEN
    methods:
      qafd: {alpha: 30}
  - name: wiki
    db: wiki.db
    chat: {base_url: http://127.0.0.1:8080/v1, model: qwen}
)";

TEST_F(ConfigTest, AFileSetsModelsMethodDefaultsServerAndWorkspaces) {
  setenv("FLOWRAG_TEST_CHAT_KEY", "k-123", 1);
  setenv("FLOWRAG_TEST_DOCS_TOKEN", "docs-token", 1);
  auto c = LoadConfig(Write(kGood));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->port, 9123);
  EXPECT_EQ(c->token_env, "FLOWRAG_TEST_SERVER_TOKEN");
  EXPECT_DOUBLE_EQ(*c->max_body_mib, 2.0);
  ASSERT_EQ(c->workspaces.size(), 2u);
  auto top = ApplyConfig(*c, nullptr, EngineOptions{});
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  ASSERT_TRUE(top->openai_chat.has_value());
  EXPECT_EQ(top->openai_chat->model, "llama3.1");
  EXPECT_EQ(top->openai_chat->api_key, "k-123");  // from the named variable
  EXPECT_EQ(top->openai_chat->max_concurrency, 2u);
  EXPECT_EQ(top->embedder, "openai");
  EXPECT_EQ(top->openai_embedder->dimensions, 256u);
  EXPECT_EQ(top->default_method, "ppr");
  EXPECT_EQ(top->default_params.at("qafd.alpha"), "20");
  EXPECT_EQ(top->passage_ann, "int8");
  EXPECT_EQ(top->hnsw_threshold, 50000u);
  auto spaces = ConfiguredWorkspaces(*c, EngineOptions{});
  ASSERT_TRUE(spaces.ok()) << spaces.status().ToString();
  EXPECT_EQ((*spaces)[0].token, "docs-token");
  EXPECT_EQ((*spaces)[0].engine->default_params.at("qafd.alpha"), "30");  // its own wins
  EXPECT_EQ((*spaces)[0].engine->default_params.at("qafd.seeds"), "12");
  EXPECT_EQ((*spaces)[1].engine->openai_chat->model, "qwen");
  EXPECT_EQ((*spaces)[1].token, "");
  // Options set by the caller (flags, the environment) win over the file.
  EngineOptions mine;
  mine.default_params["qafd.alpha"] = "7";
  EXPECT_EQ(ApplyConfig(*c, nullptr, mine)->default_params.at("qafd.alpha"), "7");
  unsetenv("FLOWRAG_TEST_CHAT_KEY");
  auto missing = ApplyConfig(*c, nullptr, EngineOptions{});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("FLOWRAG_TEST_CHAT_KEY is not set"), std::string::npos);
  unsetenv("FLOWRAG_TEST_DOCS_TOKEN");
}

TEST_F(ConfigTest, ErrorsNameTheFileLineAndField) {
  const std::string path = dir_.File("flowrag.yaml");
  const struct {
    const char* text;
    const char* expected;  // in the message, after "path:"
  } cases[] = {
      {"flowrag_config: 1\nchat:\n  model: x\n  modle: y\n", "4: chat.modle: unknown key"},
      {"flowrag_config: 1\nchat:\n  api_key: sk-abcdefghijklmnopqrstuvwxyz\n",
       "3: chat.api_key: secrets are not written"},
      {"flowrag_config: 1\nserver:\n  token: hunter2\n", "3: server.token: secrets"},
      {"flowrag_config: 1\nchat:\n  model: sk-abcdefghijklmnopqrstuvwxyz0123\n",
       "3: chat.model: looks like an API key"},
      {"flowrag_config: 1\nchat:\n  api_key_env: sk-live-123\n", "3: chat.api_key_env: expected the name"},
      {"flowrag_config: 1\nserver:\n  port: eighty\n", "3: server.port: expected a number"},
      {"flowrag_config: 1\nserver:\n  port: 70000\n", "3: server.port: expected a number from 0 to 65535"},
      {"flowrag_config: 1\nchat:\n  base_url: localhost:8080\n", "3: chat.base_url: expected an http"},
      {"flowrag_config: 1\nmethods:\n  qafd:\n    alpah: 3\n", "4: methods.qafd.alpah: unknown option"},
      {"flowrag_config: 1\nmethods:\n  nope: {a: 1}\n", "3: methods.nope: unknown method"},
      {"flowrag_config: 1\nquery:\n  method: nope\n", "3: query.method: unknown method"},
      {"flowrag_config: 1\nindex:\n  passage_ann: faiss\n", "3: index.passage_ann: expected auto"},
      {"flowrag_config: 1\nindex:\n  hnsw_threshold: 0\n", "3: index.hnsw_threshold: expected a number"},
      {"flowrag_config: 1\nindex:\n  ef: 3\n", "3: index.ef: unknown key"},
      {"flowrag_config: 1\nworkspaces:\n  - {name: a, db: a.db}\n  - {name: a, db: b.db}\n",
       "4: workspaces[1].name: given twice"},
      {"flowrag_config: 1\nworkspaces:\n  - name: a\n", "3: workspaces[0].db: required"},
      {"flowrag_config: 1\nworkspaces: {name: a}\n", "2: workspaces: expected a list"},
      {"chat: {model: x}\n", "flowrag_config: expected 1"},
      {"flowrag_config: 1\nchat: [unclosed\n", ":3: "},
      {"- just\n- a list\n", "1: (top): expected a mapping"},
  };
  for (const auto& c : cases) {
    const std::string message = ErrorOf(c.text);
    EXPECT_EQ(message.rfind(path + ":", 0), 0u) << c.text << " → " << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.text << " → " << message;
  }
  EXPECT_EQ(LoadConfig(dir_.File("none.yaml")).status().code(), StatusCode::kNotFound);
}

TEST_F(ConfigTest, TheEngineAppliesMethodDefaultsUnderTheQuerysOwn) {
  EngineOptions eo;
  eo.default_method = "bm25";
  eo.default_params["qafd.alpha"] = "-1";  // refused by the retriever when it reads it
  auto engine = Engine::Open(dir_.File("s.db"), eo);
  ASSERT_TRUE(engine.ok());
  ASSERT_TRUE((*engine)->IndexDocuments({{"a", "Ostrel", "The Ostrel river runs past Port Calder."}}).ok());
  auto r = (*engine)->Query("Ostrel", QueryOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, "bm25");  // "auto" is the configured method
  QueryOptions q;
  q.method = "qafd";
  auto bad = (*engine)->Query("Ostrel", q);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("qafd.alpha"), std::string::npos) << bad.status().ToString();
  q.params["qafd.alpha"] = "5";  // the query's own value wins
  EXPECT_TRUE((*engine)->Query("Ostrel", q).ok());
}

TEST_F(ConfigTest, AWorkspaceTokenOpensOnlyItsWorkspace) {
  for (const char* name : {"a.db", "b.db"}) {
    auto e = Engine::Open(dir_.File(name));
    ASSERT_TRUE(e.ok());
  }
  ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.bearer_token = "server-token";
  auto server = Server::Create(o, {{"a", dir_.File("a.db"), "a-token", std::nullopt},
                                   {"b", dir_.File("b.db"), "", std::nullopt}});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  ASSERT_TRUE((*server)->Start().ok());
  httplib::Client c("127.0.0.1", (*server)->port());
  const auto status = [&](const std::string& path, const std::string& token) {
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    auto r = c.Get(path.c_str(), h);
    return r ? r->status : -1;
  };
  EXPECT_EQ(status("/v1/stats", "a-token"), 200);        // a is the default workspace
  EXPECT_EQ(status("/v1/w/a/stats", "a-token"), 200);
  EXPECT_EQ(status("/v1/w/b/stats", "a-token"), 401);    // not another workspace
  EXPECT_EQ(status("/metrics", "a-token"), 401);         // nor the server's routes
  EXPECT_EQ(status("/v1/w/nope/stats", "a-token"), 401); // nor reveals what exists
  EXPECT_EQ(status("/v1/w/a/stats", ""), 401);
  EXPECT_EQ(status("/v1/w/b/stats", "server-token"), 200);
  EXPECT_EQ(status("/v1/w/a/stats", "server-token"), 200);
  EXPECT_EQ(status("/metrics", "server-token"), 200);
}

std::string RunCli(const std::string& args, int* status) {
  return testing::RunCommand(
      std::string(FLOWRAG_BINARY_DIR) + "/tools/flowrag " + args + " 2>&1", status);
}

TEST_F(ConfigTest, ConfigCheckReportsWhatItReadOrTheFirstError) {
  setenv("FLOWRAG_TEST_CHAT_KEY", "k", 1);
  setenv("FLOWRAG_TEST_DOCS_TOKEN", "t", 1);
  int status = 0;
  // server.token_env names a variable that is not set: serve would refuse
  // the file (without --token), so check does too.
  std::string out = RunCli("config check " + Write(kGood), &status);
  EXPECT_NE(status, 0) << out;
  EXPECT_NE(out.find("server.token_env: the environment variable FLOWRAG_TEST_SERVER_TOKEN is "
                     "not set"),
            std::string::npos)
      << out;
  setenv("FLOWRAG_TEST_SERVER_TOKEN", "s", 1);
  out = RunCli("config check " + Write(kGood), &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find(": ok"), std::string::npos) << out;
  EXPECT_NE(out.find("llama3.1 at http://127.0.0.1:11434/v1"), std::string::npos) << out;
  EXPECT_NE(out.find("workspace docs"), std::string::npos) << out;
  EXPECT_EQ(out.find("k-123"), std::string::npos);
  const std::string bad = Write("flowrag_config: 1\nserver:\n  prot: 1\n", "bad.yaml");
  out = RunCli("config check " + bad, &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find(bad + ":3: server.prot: unknown key"), std::string::npos) << out;
  // Any command reads --config first and stops at its error.
  out = RunCli("--config " + bad + " stats --db " + dir_.File("x.db"), &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find(bad + ":3:"), std::string::npos) << out;
  unsetenv("FLOWRAG_TEST_CHAT_KEY");
  unsetenv("FLOWRAG_TEST_DOCS_TOKEN");
  unsetenv("FLOWRAG_TEST_SERVER_TOKEN");
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
