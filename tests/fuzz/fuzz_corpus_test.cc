// Replays every fuzz target's seed corpus (tests/fuzz/corpus/<target>/) and
// saved crashes (tests/fuzz/crashes/<target>/) through its
// LLVMFuzzerTestOneInput, compiled here as <target>_FuzzOne: each input
// must return 0 without crashing (the sanitize build also catches memory
// errors, leaks and undefined behaviour). The libFuzzer binaries themselves
// are built with FLOWRAG_FUZZ (doc/fuzzing.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#define FLOWRAG_FUZZ_TARGET(name) extern "C" int name##_FuzzOne(const uint8_t* data, size_t size);
#include "fuzz_targets.inc"
#undef FLOWRAG_FUZZ_TARGET

namespace {

struct FuzzTarget {
  const char* name;
  int (*fn)(const uint8_t* data, size_t size);
};

const FuzzTarget kTargets[] = {
#define FLOWRAG_FUZZ_TARGET(name) {#name, &name##_FuzzOne},
#include "fuzz_targets.inc"
#undef FLOWRAG_FUZZ_TARGET
};

// gtest prints the parameter as its name (not as raw bytes).
void PrintTo(const FuzzTarget& target, std::ostream* os) { *os << target.name; }

// The regular files of `dir` (none when it does not exist), sorted; dot
// files (.gitkeep) are skipped.
std::vector<std::filesystem::path> InputsOf(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file() && it->path().filename().string()[0] != '.') {
      files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class FuzzCorpusTest : public ::testing::TestWithParam<FuzzTarget> {};

TEST_P(FuzzCorpusTest, ReplaysCorpusAndCrashes) {
  const FuzzTarget& target = GetParam();
  const std::filesystem::path root = std::filesystem::path(FLOWRAG_SOURCE_DIR) / "tests" / "fuzz";
  const std::vector<std::filesystem::path> corpus = InputsOf(root / "corpus" / target.name);
  EXPECT_FALSE(corpus.empty()) << "no seeds in " << (root / "corpus" / target.name);
  std::vector<std::filesystem::path> inputs = corpus;
  for (const auto& p : InputsOf(root / "crashes" / target.name)) inputs.push_back(p);
  for (const std::filesystem::path& path : inputs) {
    SCOPED_TRACE(path.string());
    const std::string bytes = ReadBytes(path);
    EXPECT_EQ(target.fn(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzCorpusTest, ::testing::ValuesIn(kTargets),
                         [](const ::testing::TestParamInfo<FuzzTarget>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
