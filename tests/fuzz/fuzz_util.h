// Helpers shared by the fuzz targets (tests/fuzz/*_fuzz.cc).
//
// Each target defines LLVMFuzzerTestOneInput. The libFuzzer build
// (FLOWRAG_FUZZ) links each into its own binary; fuzz_corpus_test compiles
// them all into one GoogleTest binary, renaming the entry point per target
// (LLVMFuzzerTestOneInput=<target>_FuzzOne), and replays the seed corpora
// and saved crashes.
//
// A target returns 0 for every input. Bad input must come back as a Status
// error; FUZZ_CHECK aborts on a broken invariant (a round trip that fails,
// an error without a message), which libFuzzer reports as a crash.
#ifndef FLOWRAG_TESTS_FUZZ_FUZZ_UTIL_H_
#define FLOWRAG_TESTS_FUZZ_FUZZ_UTIL_H_

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#define FUZZ_CHECK(cond, what)                                                           \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %s\n", __FILE__, __LINE__, #cond, \
                   std::string(what).c_str());                                           \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

namespace flowrag::fuzz {

// An error must say what went wrong, briefly: a non-empty message of at most
// kMaxErrorBytes (a short excerpt of the input, never all of it).
inline constexpr size_t kMaxErrorBytes = 4096;
#define FUZZ_CHECK_ERROR(status)                                                     \
  FUZZ_CHECK(!(status).message().empty() &&                                          \
                 (status).message().size() <= ::flowrag::fuzz::kMaxErrorBytes,       \
             "error message empty or longer than 4096 bytes: " +                     \
                 (status).ToString().substr(0, 300))

// A directory of this process, created on first use and removed at exit:
// under $TMPDIR when set, else /dev/shm when writable (file-based targets run
// several times faster in memory), else the system temp dir. Each target
// uses its own subdirectory or file.
inline const std::string& ScratchDir() {
  struct Scratch {
    Scratch() {
      std::filesystem::path base = std::filesystem::temp_directory_path();
      if (std::getenv("TMPDIR") == nullptr && access("/dev/shm", W_OK) == 0) base = "/dev/shm";
      std::string tmpl = (base / "flowrag-fuzz-XXXXXX").string();
      path = mkdtemp(tmpl.data());
    }
    ~Scratch() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
    std::string path;
  };
  static const Scratch scratch;
  return scratch.path;
}

// A fresh, empty directory `ScratchDir()/name` (its old content removed).
inline std::string FreshDir(const std::string& name) {
  const std::string dir = ScratchDir() + "/" + name;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir);
  return dir;
}

inline void WriteBytes(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Removes a SQLite file and its side files (journal, WAL, shared memory), so
// that nothing of one input leaks into the next.
inline void RemoveSqliteFiles(const std::string& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) {
    std::filesystem::remove(path + suffix, ec);
  }
}

// Splits `input` at each occurrence of `separator` (several files in one
// input: spider2_ddl_fuzz).
inline std::vector<std::string_view> SplitInput(std::string_view input,
                                                std::string_view separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = input.find(separator, start);
    if (at == std::string_view::npos) {
      parts.push_back(input.substr(start));
      return parts;
    }
    parts.push_back(input.substr(start, at - start));
    start = at + separator.size();
  }
}

}  // namespace flowrag::fuzz

#endif  // FLOWRAG_TESTS_FUZZ_FUZZ_UTIL_H_
