// Helpers shared by the tests: temporary directories and the shared data path.
#ifndef FLOWRAG_TESTS_TEST_UTIL_H_
#define FLOWRAG_TESTS_TEST_UTIL_H_

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

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

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// ../shared/data next to the source tree, or "" when absent.
inline std::string SharedDataDir() {
  std::string dir = std::string(FLOWRAG_SOURCE_DIR) + "/../shared/data";
  return std::filesystem::exists(dir) ? dir : "";
}

}  // namespace flowrag::testing

#endif  // FLOWRAG_TESTS_TEST_UTIL_H_
