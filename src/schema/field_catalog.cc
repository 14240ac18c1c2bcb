#include "schema/field_catalog.h"

#include "common/text.h"

namespace flowrag {
namespace {

// Without surrounding whitespace, quotes and backticks.
std::string Bare(std::string_view s) {
  const char* junk = " \t\r\n`\"'";
  const size_t b = s.find_first_not_of(junk);
  return b == std::string_view::npos ? ""
                                     : std::string(s.substr(b, s.find_last_not_of(junk) - b + 1));
}

}  // namespace

FieldCatalog::FieldCatalog(const InducedSchema& schema) : schema_(&schema) {
  for (const FieldInfo& f : schema.fields) {
    by_id_[ToLowerAscii(f.id)] = &f;
    by_source_path_[f.source + "." + f.path] = &f;
    by_pair_[{f.source, f.path}] = &f;
  }
}

const FieldInfo* FieldCatalog::Resolve(std::string_view raw, std::string_view source) const {
  const std::string ref = Bare(raw);
  if (ref.empty()) return nullptr;
  if (auto it = by_id_.find(ToLowerAscii(ref)); it != by_id_.end()) return it->second;
  if (auto it = by_source_path_.find(ref); it != by_source_path_.end()) return it->second;
  if (!source.empty()) {
    if (auto it = by_pair_.find({std::string(source), ref}); it != by_pair_.end()) {
      return it->second;
    }
  }
  return nullptr;
}

const SourceInfo* FieldCatalog::FindSource(std::string_view raw) const {
  const std::string name = Bare(raw);
  if (name.empty()) return nullptr;
  for (const SourceInfo& s : schema_->sources) {
    if (s.name == name) return &s;
  }
  for (const SourceInfo& s : schema_->sources) {
    const size_t slash = name.find_last_of('/');
    const size_t dot = name.find_last_of('.');
    const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
    if ((has_ext && name.substr(0, dot) == s.name) || s.path == name ||
        (s.path.size() > name.size() && s.path.ends_with("/" + name))) {
      return &s;
    }
  }
  return nullptr;
}

bool FieldCatalog::Has(const std::string& source, const std::string& path) const {
  return by_pair_.count({source, path}) > 0;
}

std::string FieldCatalog::IdOf(const std::string& source, const std::string& path) const {
  auto it = by_pair_.find({source, path});
  return it == by_pair_.end() ? "" : it->second->id;
}

std::vector<std::string> FieldCatalog::TextFields(const std::string& source) const {
  std::vector<std::string> out;
  for (const FieldInfo& f : schema_->fields) {
    if (f.source == source && f.type == "text") out.push_back(f.path);
  }
  return out;
}

}  // namespace flowrag
