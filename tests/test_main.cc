// main() of the test group executables (tests/CMakeLists.txt links every
// tests/<name>.cc into one of a few flowrag_tests_<group> binaries): what
// gtest_main does, plus one flag of its own:
//
//   --test_file=<name>  runs only the tests defined in tests/<name>.cc, as
//                       when each file was its own executable; combined with
//                       --gtest_filter, a test must pass both. A name that
//                       defines no test in this binary is an error (exit 1).
//
// The build writes build/<dir>/tests/<name>, a script that runs this with
// --test_file=<name>, so a file's tests keep their old command.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace {

constexpr std::string_view kFileFlag = "--test_file=";

// Removes --test_file=<name> from argv (the last one wins); returns <name>,
// or "" when absent.
std::string TakeFileFlag(int& argc, char** argv) {
  std::string file;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.substr(0, kFileFlag.size()) == kFileFlag) {
      file = std::string(arg.substr(kFileFlag.size()));
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  return file;
}

// Whether a test defined at `path` (its __FILE__) is in tests/<name>.cc.
bool DefinedIn(std::string_view path, const std::string& name) {
  const std::string suffix = "/" + name + ".cc";
  return path == name + ".cc" ||
         (path.size() >= suffix.size() && path.substr(path.size() - suffix.size()) == suffix);
}

// Narrows the test filter to the tests of tests/<name>.cc: every other
// test is appended to the filter's negative patterns, so the user's
// positive and negative patterns still apply. Returns false when the file
// defines no test here.
bool RestrictToFile(const std::string& name) {
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  std::string others;
  bool found = false;
  for (int s = 0; s < unit.total_test_suite_count(); ++s) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(s);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      const ::testing::TestInfo& test = *suite.GetTestInfo(t);
      if (DefinedIn(test.file(), name)) {
        found = true;
        continue;
      }
      if (!others.empty()) others += ':';
      others += std::string(test.test_suite_name()) + "." + test.name();
    }
  }
  if (!found) return false;
  if (others.empty()) return true;
  std::string filter = GTEST_FLAG_GET(filter);
  filter += filter.find('-') == std::string::npos ? "-" : ":";
  GTEST_FLAG_SET(filter, filter + others);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const std::string file = TakeFileFlag(argc, argv);
  if (!file.empty() && !RestrictToFile(file)) {
    std::fprintf(stderr, "%s: no test of this binary is defined in tests/%s.cc\n", argv[0],
                 file.c_str());
    return 1;
  }
  return RUN_ALL_TESTS();
}
