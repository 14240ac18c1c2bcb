// Test helpers: HTTP servers on loopback (cpp-httplib) that stand in for
// OpenAI-compatible endpoints. Header-only; for tests only.
//
//   StubHttpServer        owns an httplib::Server on 127.0.0.1:<ephemeral
//                         port>, runs it on a thread and stops it on
//                         destruction. Register routes on server(), then
//                         Start().
//   RecordingJsonStub     one POST route that records every request (parsed
//                         JSON body, Authorization header), answers through a
//                         swappable handler or a default answer, tracks the
//                         requests in flight and can hang handlers until
//                         teardown.
#ifndef FLOWRAG_TESTS_STUB_SERVER_H_
#define FLOWRAG_TESTS_STUB_SERVER_H_

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace flowrag::testing {

// An OpenAI chat completion answering `content` (50 prompt, 10 completion tokens).
inline nlohmann::json ChatCompletionJson(const std::string& content) {
  return {{"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", content}}},
                        {"finish_reason", "stop"}}}},
          {"usage", {{"prompt_tokens", 50}, {"completion_tokens", 10}}}};
}

// The FLOWRAG_LLM_* variables that configure the engine's chat model: Clear()
// removes them all, Point() aims them at a stub endpoint (model "stub-chat",
// no key, no retries) and, optionally, sets per-million-token prices. The
// destructor clears them again, so no test leaks a model into the next.
class ChatModelEnv {
 public:
  ChatModelEnv() { Clear(); }
  ~ChatModelEnv() { Clear(); }
  ChatModelEnv(const ChatModelEnv&) = delete;
  ChatModelEnv& operator=(const ChatModelEnv&) = delete;

  static void Clear() {
    for (const char* v : {"FLOWRAG_LLM_BASE_URL", "FLOWRAG_LLM_MODEL", "FLOWRAG_LLM_API_KEY",
                          "FLOWRAG_LLM_MAX_RETRIES", "FLOWRAG_LLM_PRICE_INPUT",
                          "FLOWRAG_LLM_PRICE_OUTPUT"}) {
      unsetenv(v);
    }
  }
  static void Point(const std::string& base_url, const char* price_input = nullptr,
                    const char* price_output = nullptr) {
    setenv("FLOWRAG_LLM_BASE_URL", base_url.c_str(), 1);
    setenv("FLOWRAG_LLM_MODEL", "stub-chat", 1);
    setenv("FLOWRAG_LLM_API_KEY", "", 1);
    setenv("FLOWRAG_LLM_MAX_RETRIES", "0", 1);
    if (price_input != nullptr) setenv("FLOWRAG_LLM_PRICE_INPUT", price_input, 1);
    if (price_output != nullptr) setenv("FLOWRAG_LLM_PRICE_OUTPUT", price_output, 1);
  }
};

class StubHttpServer {
 public:
  StubHttpServer() {
    std::signal(SIGPIPE, SIG_IGN);  // a timed-out client may close before we answer
  }
  ~StubHttpServer() { Stop(); }
  StubHttpServer(const StubHttpServer&) = delete;
  StubHttpServer& operator=(const StubHttpServer&) = delete;

  // For registering routes and settings. httplib does not lock its route
  // table, so register before Start().
  httplib::Server& server() { return server_; }

  // Binds 127.0.0.1 on an ephemeral port, runs the accept loop on a thread and
  // waits up to `timeout` until it runs. Returns ok().
  bool Start(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) return false;
    // The socket listens from here on, so clients may connect before the loop runs.
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!server_.is_running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return ok();
  }

  // Stops the server and joins its thread; idempotent. Owners whose handlers
  // use their own members call this first in their destructor.
  void Stop() {
    if (!thread_.joinable()) return;
    server_.stop();
    thread_.join();
  }

  // True once the port is bound and the accept loop runs.
  bool ok() const { return port_ > 0 && server_.is_running(); }
  int port() const { return port_; }
  // "http://127.0.0.1:<port>".
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = -1;
  std::thread thread_;
};

class RecordingJsonStub {
 public:
  using Json = nlohmann::json;

  // What the stub saw of one request.
  struct SeenRequest {
    Json body;  // null if the body was not JSON
    std::optional<std::string> authorization;
  };
  // (parsed request body, response to fill, 0-based number of this request)
  using Handler = std::function<void(const Json&, httplib::Response&, int)>;
  // The answer when no handler is set, from the parsed request body.
  using DefaultAnswer = std::function<Json(const Json&)>;

  // Serves POST `route` (e.g. "/v1/embeddings") with up to `threads`
  // concurrent handlers, and starts.
  RecordingJsonStub(const std::string& route, DefaultAnswer default_answer, int threads = 16)
      : default_answer_(std::move(default_answer)) {
    httplib::Server& server = http_.server();
    server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    server.set_tcp_nodelay(true);  // no 40 ms delayed-ACK stalls on reused connections
    server.Post(route,
                [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); });
    http_.Start();
  }

  ~RecordingJsonStub() {
    Release();
    http_.Stop();
  }

  // True once the port is bound and the accept loop runs.
  bool ok() const { return http_.ok(); }
  // "http://127.0.0.1:<port>/v1".
  std::string BaseUrl() const { return http_.url() + "/v1"; }
  void SetHandler(Handler handler) {
    std::lock_guard<std::mutex> lock(mu_);
    handler_ = std::move(handler);
  }
  std::vector<SeenRequest> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  int max_in_flight() const { return max_in_flight_.load(); }

  // For handlers: blocks until Release() (teardown) or `timeout`.
  void Hang(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    release_cv_.wait_for(lock, timeout, [this] { return released_; });
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      released_ = true;
    }
    release_cv_.notify_all();
  }

  httplib::Server& server() { return http_.server(); }

 private:
  void Handle(const httplib::Request& req, httplib::Response& res) {
    int in_flight = ++in_flight_;
    int max = max_in_flight_.load();
    while (in_flight > max && !max_in_flight_.compare_exchange_weak(max, in_flight)) {
    }
    SeenRequest seen;
    seen.body = Json::parse(req.body, nullptr, false);
    if (seen.body.is_discarded()) seen.body = nullptr;
    if (req.has_header("Authorization")) {
      seen.authorization = req.get_header_value("Authorization");
    }
    Handler handler;
    int number = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      number = static_cast<int>(seen_.size());
      seen_.push_back(seen);
      handler = handler_;
    }
    if (handler) {
      handler(seen.body, res, number);
    } else {
      res.set_content(default_answer_(seen.body).dump(), "application/json");
    }
    --in_flight_;
  }

  const DefaultAnswer default_answer_;
  std::mutex mu_;
  Handler handler_;                // guarded by mu_
  std::vector<SeenRequest> seen_;  // guarded by mu_
  std::condition_variable release_cv_;
  bool released_ = false;  // guarded by mu_
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
  StubHttpServer http_;  // last: destroyed (stopped) first
};

}  // namespace flowrag::testing

#endif  // FLOWRAG_TESTS_STUB_SERVER_H_
