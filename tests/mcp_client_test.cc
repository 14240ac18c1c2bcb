// The MCP server driven by the official TypeScript SDK (js/clients/mcp_client.mjs):
// its Client over StdioClientTransport launches the real `flowrag mcp`, and
// over StreamableHTTPClientTransport talks to a real `flowrag serve` on a
// loopback port with a bearer token. Both must list the tools and every page
// of resources, read a resource, call each tool, and see an unknown tool as
// a JSON-RPC error and wrong arguments as an isError result naming the field.
// Skipped when node or js/node_modules is missing (scripts/setup.sh installs them).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using nlohmann::json;

const std::string kSource = FLOWRAG_SOURCE_DIR;
const std::string kFlowrag = std::string(FLOWRAG_BINARY_DIR) + "/tools/flowrag";
const std::string kClient = kSource + "/js/clients/mcp_client.mjs";

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs a shell command; its stdout and exit code.
std::pair<std::string, int> RunShell(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return {"", -1};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

std::string SkipReason() {
  if (RunShell("command -v node >/dev/null 2>&1").second != 0) return "node is not installed";
  if (!std::filesystem::exists(kSource + "/js/node_modules/@modelcontextprotocol/sdk")) {
    return "js/node_modules has no @modelcontextprotocol/sdk (run scripts/setup.sh)";
  }
  return "";
}

class McpClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    if (!SkipReason().empty()) return;  // each test says why
    for (const char* name : {"demo.db", "other.db"}) {
      const auto [out, rc] =
          RunShell(Quote(kFlowrag) + " index -q " + Quote(kSource + "/examples/demo") + " --db " +
                   Quote(dir_->File(name)) + " 2>&1");
      ASSERT_EQ(rc, 0) << out;
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (std::string why = SkipReason(); !why.empty()) GTEST_SKIP() << why;
  }

  static json RunClient(const std::string& args, bool expect_success = true) {
    const auto [out, rc] = RunShell("node " + Quote(kClient) + " " + args + " 2>&1");
    if (expect_success) {
      EXPECT_EQ(rc, 0) << out;
    }
    try {
      return json::parse(
          out.substr(out.rfind("\n{") == std::string::npos ? 0 : out.rfind("\n{") + 1));
    } catch (const std::exception& e) {
      ADD_FAILURE() << "client output is not JSON: " << out;
      return json::object();
    }
  }

  // What both transports must show.
  static void CheckSession(const json& r, size_t expected_pages) {
    ASSERT_FALSE(r.contains("fatal")) << r.dump(2);
    EXPECT_EQ(r["server"]["name"], "flowrag");
    std::vector<std::string> tools;
    for (const json& t : r["tools"]) {
      tools.push_back(t["name"]);
      EXPECT_TRUE(t["described"].get<bool>()) << t.dump();
      EXPECT_TRUE(t["hasOutputSchema"].get<bool>()) << t.dump();
    }
    EXPECT_EQ(tools, (std::vector<std::string>{"query", "ask", "index_text", "delete", "stats"}));
    EXPECT_EQ(r["resources"]["count"], 36);
    EXPECT_EQ(r["resources"]["pages"], expected_pages);
    EXPECT_EQ(r["resources"]["first"]["mimeType"], "text/plain");
    EXPECT_EQ(r["read"]["uri"], r["resources"]["first"]["uri"]);
    EXPECT_GT(r["read"]["length"].get<int>(), 100);
    EXPECT_EQ(r["readMissing"]["code"], -32002) << r["readMissing"].dump();
    EXPECT_EQ(r["templates"][0], "flowrag://documents/{id}");

    const json& q = r["query"];
    ASSERT_FALSE(q.value("isError", true)) << q.dump();
    bool found = false;
    for (const json& p : q["structured"]["passages"])
      found = found || p["document_id"] == "places/river_ostrel.md";
    EXPECT_TRUE(found) << q.dump();
    EXPECT_EQ(q["structured"]["passages"].size(), 3u);
    EXPECT_NE(q["text"].get<std::string>().find("places/river_ostrel.md"), std::string::npos);
    EXPECT_FALSE(q["links"].empty());
    EXPECT_FALSE(r["queryParams"].value("isError", true)) << r["queryParams"].dump();
    EXPECT_EQ(r["queryParams"]["structured"]["passages"].size(), 2u);

    const json& ask = r["ask"];
    ASSERT_FALSE(ask.value("isError", true)) << ask.dump();
    EXPECT_NE(ask["structured"]["answer"].get<std::string>().find("Wrenfield"), std::string::npos)
        << ask.dump();
    EXPECT_FALSE(ask["structured"]["citations"].empty());
    EXPECT_NE(ask["text"].get<std::string>().find("Citations:"), std::string::npos);

    EXPECT_FALSE(r["index"].value("isError", true)) << r["index"].dump();
    EXPECT_EQ(r["index"]["structured"]["documents_added"], 1);
    EXPECT_EQ(r["queryNew"]["structured"]["passages"][0]["document_id"], "mcp/zephyr.md");
    EXPECT_FALSE(r["delete"].value("isError", true)) << r["delete"].dump();
    EXPECT_EQ(r["delete"]["structured"]["deleted"], json::array({"mcp/zephyr.md"}));
    EXPECT_TRUE(r["deleteAgain"].value("isError", false)) << r["deleteAgain"].dump();
    EXPECT_EQ(r["stats"]["structured"]["documents"], 36);

    // Protocol error: the SDK rejects the call with the JSON-RPC error.
    EXPECT_EQ(r["unknownTool"]["rpcError"]["code"], -32602) << r["unknownTool"].dump();
    EXPECT_NE(r["unknownTool"]["rpcError"]["message"].get<std::string>().find("no_such_tool"),
              std::string::npos);
    // Tool execution errors name the tool and the field.
    for (const auto& [key, prefix] : std::vector<std::pair<std::string, std::string>>{
             {"wrongType", "query: top_k:"},
             {"missingField", "ask: question:"},
             {"badMethod", "query: method:"},
             {"badParam", "query failed: InvalidArgument"}}) {
      EXPECT_TRUE(r[key].value("isError", false)) << key << ": " << r[key].dump();
      EXPECT_EQ(r[key].value("text", "").rfind(prefix, 0), 0u) << key << ": " << r[key].dump();
    }
    EXPECT_GT(r["latency"]["medianMs"].get<double>(), 0.0);
    std::fprintf(stderr, "[ latency  ] %s query (bm25): median %.2f ms over %d calls\n",
                 r.value("transport", "").c_str(), r["latency"]["medianMs"].get<double>(),
                 r["latency"]["calls"].get<int>());
  }

  static testing::TempDir* dir_;
};
testing::TempDir* McpClientTest::dir_ = nullptr;

TEST_F(McpClientTest, StdioTransportAgainstFlowragMcp) {
  json r = RunClient("stdio " + Quote(kFlowrag) + " " + Quote(dir_->File("demo.db")) +
                     " --page-size 10 --repeat 5");
  r["transport"] = "stdio";
  CheckSession(r, 4);
  EXPECT_EQ(r["protocolVersion"], nullptr);  // stdio keeps no header; see the server's answer
  EXPECT_TRUE(r["stderrHasLog"].get<bool>());
}

TEST_F(McpClientTest, StreamableHttpAgainstFlowragServe) {
  int err[2];
  ASSERT_EQ(pipe(err), 0);
  const std::string db = dir_->File("demo.db");
  const std::string other = "other=" + dir_->File("other.db");
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(err[1], 2);
    close(err[0]);
    execl(kFlowrag.c_str(), "flowrag", "serve", "--db", db.c_str(), "--port", "0", "--token",
          "s3cret", "--workspace", other.c_str(), nullptr);
    _exit(127);
  }
  close(err[1]);
  std::string log;
  const int port = testing::ReadServedPort(err[0], &log);
  ASSERT_GT(port, 0) << log;
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  json r = RunClient("http " + Quote(base + "/mcp") + " --token s3cret --repeat 5");
  json w = RunClient("http " + Quote(base + "/v1/w/other/mcp") + " --token s3cret --repeat 1");
  json denied = RunClient("http " + Quote(base + "/mcp") + " --token wrong --repeat 1",
                          /*expect_success=*/false);
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  close(err[0]);
  r["transport"] = "http";
  CheckSession(r, 1);
  EXPECT_EQ(r["protocolVersion"], "2025-11-25");
  w["transport"] = "http workspace";
  CheckSession(w, 1);
  ASSERT_TRUE(denied.contains("fatal")) << denied.dump();
  EXPECT_NE(denied["fatal"].get<std::string>().find("invalid bearer token"), std::string::npos)
      << denied.dump();
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
