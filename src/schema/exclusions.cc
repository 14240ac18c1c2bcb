#include "schema/exclusions.h"

#include <algorithm>
#include <filesystem>

#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

namespace flowrag {
namespace {

bool AnyMatch(const std::vector<std::string>& globs, const std::string& s) {
  for (const std::string& g : globs) {
    if (fnmatch(g.c_str(), s.c_str(), 0) == 0) return true;
  }
  return false;
}

}  // namespace

bool Exclusions::ExcludesFile(const std::string& relative_path) const {
  return AnyMatch(files, relative_path);
}

bool Exclusions::ExcludesField(const std::string& source, const std::string& field) const {
  return AnyMatch(fields, source + "." + field);
}

size_t Exclusions::Merge(const ExclusionRules& other) {
  size_t added = 0;
  for (const auto& [mine, theirs] : {std::pair{&files, &other.files}, {&fields, &other.fields}}) {
    for (const std::string& g : *theirs) {
      if (std::find(mine->begin(), mine->end(), g) != mine->end()) continue;
      mine->push_back(g);
      ++added;
    }
  }
  return added;
}

Result<Exclusions> LoadExclusions(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Status::NotFound(path + ": cannot open the exclusion manifest");
  } catch (const YAML::ParserException& e) {
    return Status::InvalidArgument(path + ":" + std::to_string(e.mark.line + 1) +
                                   ": invalid YAML: " + e.msg);
  }
  Exclusions out;
  const YAML::Node ex = root.IsMap() ? root["exclude"] : YAML::Node();  // [] throws on a scalar
  if (!ex.IsDefined() || !ex.IsMap()) {
    return Status::InvalidArgument(
        path + ": expected a mapping with \"exclude\": {files: [...], fields: [...]}");
  }
  for (const auto& [key, list] :
       {std::pair<const char*, std::vector<std::string>*>{"files", &out.files},
        {"fields", &out.fields}}) {
    const YAML::Node n = ex[key];
    if (!n.IsDefined() || n.IsNull()) continue;
    if (!n.IsSequence()) {
      return Status::InvalidArgument(path + ":" + std::to_string(n.Mark().line + 1) + ": exclude." +
                                     key + ": expected a list of glob patterns");
    }
    for (size_t i = 0; i < n.size(); ++i) {
      if (!n[i].IsScalar() || n[i].Scalar().empty()) {
        return Status::InvalidArgument(path + ":" + std::to_string(n[i].Mark().line + 1) +
                                       ": exclude." + key + "[" + std::to_string(i) +
                                       "]: expected a non-empty glob pattern");
      }
      list->push_back(n[i].Scalar());
    }
  }
  return out;
}

Result<Exclusions> LoadFolderExclusions(const std::string& dir, const std::string& path) {
  namespace fs = std::filesystem;
  std::string manifest = path;
  if (manifest.empty() && fs::exists(fs::path(dir) / "flowrag_exclude.yaml")) {
    manifest = (fs::path(dir) / "flowrag_exclude.yaml").string();
  }
  if (manifest.empty()) return Exclusions{};
  return LoadExclusions(manifest);
}

}  // namespace flowrag
