// The viewer page in headless Chromium (Debian `chromium`) against a real
// server over the demo store: the page loads, asks the question given in its
// URL, draws a non-empty subgraph, and a screenshot is kept as a test
// artefact (<build dir>/viewer_screenshot.png). Skipped without Chromium.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "flowrag/engine.h"
#include "flowrag/server.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::TempDir;

constexpr char kChromium[] = "/usr/bin/chromium";

class ViewerBrowserTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(kChromium)) return;
    std::signal(SIGPIPE, SIG_IGN);
    dir_ = new TempDir;
    auto engine = Engine::Open(dir_->File("demo.db"));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    auto report = (*engine)->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"});
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    engine->reset();
    ServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.threads = 4;
    auto server = Server::Create(options, {{"demo", dir_->File("demo.db")}});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    ASSERT_TRUE((*server)->Start().ok());
    server_ = std::move(server).value().release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }

  void SetUp() override {
    if (!std::filesystem::exists(kChromium)) {
      GTEST_SKIP() << kChromium << " not installed (Debian package chromium; scripts/setup.sh)";
    }
    ASSERT_NE(server_, nullptr);
  }

  static std::string PageUrl(const std::string& path) {
    return "http://127.0.0.1:" + std::to_string(server_->port()) + path +
           "?q=How%20long%20is%20the%20River%20Ostrel%3F&method=qafd";
  }

  // Runs headless Chromium with `args` on `url`; returns its stdout. Its
  // profile and HOME live in the test's temp dir; stderr goes to a file that
  // a failure prints.
  static std::string RunChromium(const std::string& args, const std::string& url,
                                 std::string* log) {
    TempDir home;
    const std::string err = home.File("chromium.log");
    const std::string command =
        "HOME='" + home.path() + "' timeout 120 " + kChromium +
        " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run"
        " --disable-extensions --disable-background-networking --disable-component-update"
        " --disable-sync --hide-scrollbars --mute-audio --user-data-dir='" +
        home.File("profile") + "' --virtual-time-budget=15000 " + args + " '" + url + "' 2>'" +
        err + "'";
    std::string out;
    if (FILE* pipe = popen(command.c_str(), "r")) {
      char buf[8192];
      size_t n;
      while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
      const int rc = pclose(pipe);
      *log = "exit status " + std::to_string(rc) + "\n" + testing::ReadFile(err);
    }
    return out;
  }

  static TempDir* dir_;
  static Server* server_;
};

// The integer value of attribute `name` of <svg id="graph">, or -1.
int SvgAttribute(const std::string& dom, const std::string& name) {
  const size_t svg = dom.find("<svg id=\"graph\"");
  if (svg == std::string::npos) return -1;
  const size_t end = dom.find('>', svg);
  const size_t at = dom.find(name + "=\"", svg);
  if (at == std::string::npos || at > end) return -1;
  return std::atoi(dom.c_str() + at + name.size() + 2);
}

TempDir* ViewerBrowserTest::dir_ = nullptr;
Server* ViewerBrowserTest::server_ = nullptr;

TEST_F(ViewerBrowserTest, PageAsksTheQuestionAndDrawsTheSubgraph) {
  std::string log;
  const std::string dom = RunChromium("--dump-dom", PageUrl("/"), &log);
  ASSERT_FALSE(dom.empty()) << log;
  EXPECT_NE(dom.find("<body data-state=\"done\""), std::string::npos)
      << "the query did not finish\n"
      << dom.substr(0, 3000) << "\n"
      << log;
  const int nodes = SvgAttribute(dom, "data-nodes");
  const int edges = SvgAttribute(dom, "data-edges");
  EXPECT_GT(nodes, 0) << dom.substr(0, 3000);
  EXPECT_GT(edges, 0);
  size_t circles = 0;
  for (size_t at = dom.find("<circle"); at != std::string::npos; at = dom.find("<circle", at + 1)) {
    ++circles;
  }
  EXPECT_EQ(circles, static_cast<size_t>(nodes));
  EXPECT_NE(dom.find("class=\"node seed"), std::string::npos) << "no seed highlighted";
  // The answer and at least one citation are on the page.
  EXPECT_EQ(dom.find("Ask a question to see the answer."), std::string::npos);
  EXPECT_NE(dom.find("<span class=\"quote\">"), std::string::npos);
}

TEST_F(ViewerBrowserTest, WorkspacePageTargetsItsWorkspace) {
  std::string log;
  const std::string dom = RunChromium("--dump-dom", PageUrl("/w/demo/"), &log);
  ASSERT_FALSE(dom.empty()) << log;
  EXPECT_NE(dom.find("<body data-state=\"done\""), std::string::npos) << log;
  EXPECT_NE(dom.find("workspace demo"), std::string::npos);
}

TEST_F(ViewerBrowserTest, ScreenshotIsSavedAsATestArtefact) {
  const std::string png = std::string(FLOWRAG_BINARY_DIR) + "/viewer_screenshot.png";
  std::error_code ec;
  std::filesystem::remove(png, ec);
  std::string log;
  RunChromium("--screenshot='" + png + "' --window-size=1280,900", PageUrl("/"), &log);
  ASSERT_TRUE(std::filesystem::exists(png)) << log;
  const std::string bytes = testing::ReadFile(png);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_GT(bytes.size(), 20000u) << "an almost empty image";
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
