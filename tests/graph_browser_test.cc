// The viewer's graph browser in headless Chromium (Debian `chromium`)
// against a real server over the demo store, driven as a user would by
// tests/graph_browser.mjs (Node, DevTools protocol over a pipe): search
// "Ostrel", open the first match, click a neighbour to expand it, click a
// fact edge and read the passages behind it. A screenshot is kept as a test
// artefact (<build dir>/graph_browser_screenshot.png). Skipped without
// Chromium or Node.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "flowrag/engine.h"
#include "flowrag/server.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::TempDir;

constexpr char kChromium[] = "/usr/bin/chromium";

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool HaveNode() { return std::system("node --version > /dev/null 2>&1") == 0; }

TEST(GraphBrowserTest, SearchExpandAndOpenAFactsPassages) {
  if (!std::filesystem::exists(kChromium)) {
    GTEST_SKIP() << kChromium << " not installed (Debian package chromium; scripts/setup.sh)";
  }
  if (!HaveNode()) GTEST_SKIP() << "node not installed (Debian package nodejs; scripts/setup.sh)";
  std::signal(SIGPIPE, SIG_IGN);
  TempDir dir;
  {
    auto engine = Engine::Open(dir.File("demo.db"));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    ASSERT_TRUE((*engine)->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"}).ok());
  }
  ServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.threads = 4;
  auto server = Server::Create(options, {{"demo", dir.File("demo.db")}});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  ASSERT_TRUE((*server)->Start().ok());

  const std::string png = std::string(FLOWRAG_BINARY_DIR) + "/graph_browser_screenshot.png";
  std::error_code ec;
  std::filesystem::remove(png, ec);
  const std::string url = "http://127.0.0.1:" + std::to_string((*server)->port()) + "/";
  const std::string command = "HOME='" + dir.path() + "' timeout 120 node '" + FLOWRAG_SOURCE_DIR +
                              "/tests/graph_browser.mjs' " + kChromium + " '" + url + "' Ostrel '" +
                              png + "' '" + dir.File("profile") + "' 2>&1";
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buf[8192];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  const int rc = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << out;
  const size_t brace = out.rfind("\n{") == std::string::npos ? out.find('{') : out.rfind("\n{") + 1;
  nlohmann::json r = nlohmann::json::parse(out.substr(brace), nullptr, false);
  ASSERT_TRUE(r.is_object()) << out;
  ASSERT_FALSE(r.contains("error")) << out;

  // Search: every result names Ostrel.
  ASSERT_FALSE(r["search"]["results"].empty()) << out;
  for (const auto& text : r["search"]["results"]) {
    EXPECT_NE(Lower(text.get<std::string>()).find("ostrel"), std::string::npos) << text;
  }
  // Open: the first result is the centre, with neighbours and edges drawn.
  EXPECT_NE(Lower(r["open"]["center"].get<std::string>()).find("ostrel"), std::string::npos) << out;
  EXPECT_GT(r["open"]["nodes"].get<int>(), 1);
  EXPECT_GT(r["open"]["edges"].get<int>(), 0);
  // Expand: the clicked neighbour is now shown in the detail panel, and the
  // graph did not shrink.
  EXPECT_EQ(r["expand"]["detail"], r["expand"]["node"]) << out;
  EXPECT_GE(r["expand"]["nodes"].get<int>(), r["open"]["nodes"].get<int>());
  EXPECT_NE(r["expand"]["status"].get<std::string>().find("Expanded"), std::string::npos) << out;
  // Edge: the fact's passages, with their text.
  ASSERT_TRUE(r["edge"].is_object()) << "no fact edge could be clicked\n" << out;
  EXPECT_NE(r["edge"]["title"].get<std::string>().find("→"), std::string::npos) << out;
  EXPECT_NE(r["edge"]["meta"].get<std::string>().find("stated by"), std::string::npos) << out;
  ASSERT_FALSE(r["edge"]["passages"].empty()) << out;
  for (const auto& p : r["edge"]["passages"]) EXPECT_GT(p.get<std::string>().size(), 40u) << p;

  ASSERT_TRUE(std::filesystem::exists(png)) << out;
  const std::string bytes = testing::ReadFile(png);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_GT(bytes.size(), 20000u) << "an almost empty image";
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
