// Test helper: the demo corpus (examples/demo) indexed into a temporary
// store and served by a real flowrag::Server on a loopback ephemeral port.
#ifndef FLOWRAG_TESTS_DEMO_SERVER_H_
#define FLOWRAG_TESTS_DEMO_SERVER_H_

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <memory>
#include <string>

#include "flowrag/engine.h"
#include "flowrag/server.h"
#include "test_util.h"

namespace flowrag::testing {

class DemoServer {
 public:
  // Check ok() (failures are reported to the running test).
  explicit DemoServer(ServerOptions options = {}) {
    std::signal(SIGPIPE, SIG_IGN);
    {
      auto engine = Engine::Open(dir_.File("demo.db"));
      EXPECT_TRUE(engine.ok()) << engine.status().ToString();
      if (!engine.ok()) return;
      auto report = (*engine)->Index({std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo"});
      EXPECT_TRUE(report.ok()) << report.status().ToString();
    }
    options.host = "127.0.0.1";
    options.port = 0;
    auto server = Server::Create(options, {{"default", dir_.File("demo.db")}});
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    if (!server.ok() || !(*server)->Start().ok()) return;
    server_ = std::move(server).value();
  }
  bool ok() const { return server_ != nullptr; }
  int port() const { return server_->port(); }
  // "http://127.0.0.1:<port>".
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }

 private:
  TempDir dir_;
  std::unique_ptr<Server> server_;
};

// The js/ folder when Node.js and the npm "openai" client are installed
// (scripts/setup.sh), else "" (the test skips).
inline std::string NodeOpenAiClientDir() {
  const std::string js = std::string(FLOWRAG_SOURCE_DIR) + "/js";
  int status = 0;
  RunCommand("node --version > /dev/null 2>&1", &status);
  if (status != 0 || !std::filesystem::exists(js + "/node_modules/openai")) return "";
  return js;
}

}  // namespace flowrag::testing

#endif  // FLOWRAG_TESTS_DEMO_SERVER_H_
