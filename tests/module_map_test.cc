// The module map stays true (issue 33): every folder under src/ is a
// module declared in src/CMakeLists.txt and has its row in src/README.md,
// the row names exactly the modules it uses (its flowrag_module DEPS), and
// no module includes a header of a module it does not use, directly or
// through the modules it uses (a module above it, or beside it).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {
namespace FLOWRAG_TEST_FILE {

namespace fs = std::filesystem;

const fs::path kSrc = fs::path(FLOWRAG_SOURCE_DIR) / "src";

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using Deps = std::map<std::string, std::set<std::string>>;  // module -> modules it uses

// flowrag_module(<name> DEPS ...) of src/CMakeLists.txt; of the DEPS only
// the flowrag_<module> libraries.
Deps DeclaredModules() {
  const std::string cmake = ReadAll(kSrc / "CMakeLists.txt");
  const std::regex module(R"(flowrag_module\(\s*(\w+)([^)]*)\))");
  const std::regex dep(R"(\bflowrag_(\w+))");
  Deps deps;
  for (auto it = std::sregex_iterator(cmake.begin(), cmake.end(), module);
       it != std::sregex_iterator(); ++it) {
    std::set<std::string>& uses = deps[(*it)[1]];
    const std::string rest = (*it)[2];
    for (auto d = std::sregex_iterator(rest.begin(), rest.end(), dep); d != std::sregex_iterator();
         ++d) {
      uses.insert((*d)[1]);
    }
  }
  return deps;
}

std::set<std::string> Folders() {
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator(kSrc)) {
    if (entry.is_directory()) out.insert(entry.path().filename().string());
  }
  return out;
}

// Everything `module` may include: itself and what it uses, transitively.
std::set<std::string> Reachable(const Deps& deps, const std::string& module) {
  std::set<std::string> seen{module};
  std::vector<std::string> stack{module};
  while (!stack.empty()) {
    const std::string m = stack.back();
    stack.pop_back();
    auto it = deps.find(m);
    if (it == deps.end()) continue;
    for (const std::string& d : it->second) {
      if (seen.insert(d).second) stack.push_back(d);
    }
  }
  return seen;
}

// The rows of src/README.md's module table: "| `name/` | uses | ... |",
// the uses a comma-separated list of `module/` names or "—".
Deps ReadmeRows() {
  const std::string readme = ReadAll(kSrc / "README.md");
  const std::regex row(R"(\n\|\s*`([a-z_]+)/`\s*\|([^|\n]*)\|)");
  const std::regex used(R"(`([a-z_]+)/`)");
  Deps rows;
  for (auto it = std::sregex_iterator(readme.begin(), readme.end(), row);
       it != std::sregex_iterator(); ++it) {
    std::set<std::string>& uses = rows[(*it)[1]];
    const std::string cell = (*it)[2];
    for (auto u = std::sregex_iterator(cell.begin(), cell.end(), used); u != std::sregex_iterator();
         ++u) {
      uses.insert((*u)[1]);
    }
  }
  return rows;
}

std::string Join(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "(none)" : out;
}

TEST(ModuleMapTest, EveryFolderIsADeclaredModule) {
  const Deps deps = DeclaredModules();
  ASSERT_GT(deps.size(), 10u) << "no flowrag_module() found in src/CMakeLists.txt";
  for (const std::string& folder : Folders()) {
    EXPECT_TRUE(deps.count(folder)) << "src/" << folder << "/ is no flowrag_module()";
  }
  for (const auto& [module, uses] : deps) {
    EXPECT_TRUE(fs::is_directory(kSrc / module)) << "flowrag_module(" << module << ") has no folder";
    for (const std::string& d : uses) {
      EXPECT_TRUE(deps.count(d)) << module << " uses flowrag_" << d << ", which is no module";
    }
  }
}

TEST(ModuleMapTest, EveryFolderHasItsRowNamingWhatItUses) {
  const Deps deps = DeclaredModules();
  const Deps rows = ReadmeRows();
  for (const std::string& folder : Folders()) {
    auto row = rows.find(folder);
    if (row == rows.end()) {
      ADD_FAILURE() << "src/README.md has no row for `" << folder << "/`";
      continue;
    }
    auto declared = deps.find(folder);
    if (declared == deps.end()) continue;  // reported above
    EXPECT_EQ(row->second, declared->second)
        << "src/README.md says `" << folder << "/` uses " << Join(row->second)
        << "; src/CMakeLists.txt says " << Join(declared->second);
  }
  for (const auto& [name, uses] : rows) {
    EXPECT_TRUE(fs::is_directory(kSrc / name)) << "src/README.md has a row for missing " << name;
  }
}

TEST(ModuleMapTest, NoModuleIncludesAHeaderOfAModuleItDoesNotUse) {
  const Deps deps = DeclaredModules();
  const std::set<std::string> folders = Folders();
  const std::regex include(R"(#include\s+"([a-z_]+)/[^"]+")");
  size_t files = 0;
  for (const std::string& module : folders) {
    const std::set<std::string> allowed = Reachable(deps, module);
    for (const auto& entry : fs::recursive_directory_iterator(kSrc / module)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".h" && ext != ".cc") continue;
      ++files;
      const std::string text = ReadAll(entry.path());
      for (auto it = std::sregex_iterator(text.begin(), text.end(), include);
           it != std::sregex_iterator(); ++it) {
        const std::string target = (*it)[1];
        if (!folders.count(target) || allowed.count(target)) continue;
        ADD_FAILURE() << fs::relative(entry.path(), kSrc).string() << " includes " << (*it)[0]
                      << ", but " << module << " does not use " << target << "/";
      }
    }
  }
  EXPECT_GT(files, 100u);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
