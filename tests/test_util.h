// Helpers shared by the tests: temporary directories and the shared data path.
#ifndef FLOWRAG_TESTS_TEST_UTIL_H_
#define FLOWRAG_TESTS_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>

namespace flowrag::testing {

// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "flowrag-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out << content;
}

// Overwrites the 8 bytes before offset `end` of the file at `path` with
// junk, as a torn or altered write would (the block checksum there fails).
inline void AlterEightBytesBefore(const std::string& path, uint64_t end) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(end - 8));
  const char junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  f.write(junk, 8);
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs `command` with the shell; returns its standard output and sets
// *status (pclose's).
inline std::string RunCommand(const std::string& command, int* status) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[4096];
  size_t n;
  while (pipe != nullptr && (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  *status = pipe == nullptr ? -1 : pclose(pipe);
  return out;
}

// Reads `fd` (a `flowrag serve` child's output) until it announces
// "http://127.0.0.1:PORT/", appending what it read to *log; the port, or 0
// when the output ended first.
inline int ReadServedPort(int fd, std::string* log) {
  char buf[512];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) return 0;
    log->append(buf, static_cast<size_t>(n));
    const size_t at = log->find("http://127.0.0.1:");
    if (at != std::string::npos && log->find('/', at + 17) != std::string::npos) {
      return std::atoi(log->c_str() + at + 17);
    }
  }
}

// ../shared/data next to the source tree, or "" when absent.
inline std::string SharedDataDir() {
  std::string dir = std::string(FLOWRAG_SOURCE_DIR) + "/../shared/data";
  return std::filesystem::exists(dir) ? dir : "";
}

// UTF-8 text (ASCII and BMP characters only) as UTF-16 with a byte-order mark.
inline std::string ToUtf16(const std::string& utf8, bool little) {
  std::string out = little ? "\xFF\xFE" : "\xFE\xFF";
  for (size_t i = 0; i < utf8.size();) {
    const unsigned char c = static_cast<unsigned char>(utf8[i]);
    char32_t cp = c;
    size_t len = 1;
    if (c >= 0xE0) {
      cp = ((c & 0x0F) << 12) | ((utf8[i + 1] & 0x3F) << 6) | (utf8[i + 2] & 0x3F);
      len = 3;
    } else if (c >= 0xC0) {
      cp = ((c & 0x1F) << 6) | (utf8[i + 1] & 0x3F);
      len = 2;
    }
    const char hi = static_cast<char>(cp >> 8), lo = static_cast<char>(cp & 0xFF);
    out += little ? std::string{lo, hi} : std::string{hi, lo};
    i += len;
  }
  return out;
}

// Unsets the chat-model variables before the suite runs, so it runs offline
// whatever the shell exports. Register once per test binary:
//   [[maybe_unused]] ::testing::Environment* const kOffline =
//       ::testing::AddGlobalTestEnvironment(new testing::OfflineEnvironment);
class OfflineEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    unsetenv("FLOWRAG_LLM_BASE_URL");
    unsetenv("FLOWRAG_LLM_MODEL");
    unsetenv("FLOWRAG_LLM_API_KEY");
  }
};

// Runs `body` in a forked child and returns its exit code, 128 + the
// signal when killed; with `kill_after`, SIGKILLs it after that long. The
// crash tests stop their child inside `body` (_exit, as kill -9) or from
// outside (kill_after).
inline int InChild(const std::function<int()>& body,
                   std::optional<std::chrono::microseconds> kill_after = std::nullopt) {
  const pid_t pid = fork();
  if (pid == 0) _exit(body());
  if (kill_after) {
    std::this_thread::sleep_for(*kill_after);
    kill(pid, SIGKILL);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Whether a crash matrix runs its point `i` of `n` (after `offset` more):
// all of them in a release build; under AddressSanitizer (scripts/test.sh's
// second run) every third, the first and the last always. The release run
// checks the recovery at every point; the sampled points still run the
// recovery code under the sanitizers, at a third of the CPU time.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr size_t kCrashPointStride = 3;
#else
inline constexpr size_t kCrashPointStride = 1;
#endif
inline bool RunsCrashPoint(size_t i, size_t n, size_t offset = 0) {
  return (i + offset) % kCrashPointStride == 0 || i == 0 || i + 1 == n;
}

}  // namespace flowrag::testing

#endif  // FLOWRAG_TESTS_TEST_UTIL_H_
