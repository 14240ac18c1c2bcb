#include "schema/discovery.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/text.h"
#include "schema/csv_reader.h"

namespace flowrag {
namespace {

namespace fs = std::filesystem;

std::string FormatOf(const fs::path& p) {
  const std::string ext = ToLowerAscii(p.extension().string());
  if (ext == ".csv") return "csv";
  if (ext == ".json") return "json";
  if (ext == ".jsonl" || ext == ".ndjson") return "jsonl";
  if (ext == ".txt" || ext == ".md" || ext == ".markdown") return "text";
  return "";
}

std::string ReadAll(const std::string& path, Status* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = Status::NotFound(path + ": cannot open");
    return "";
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// Column names (CSV) or the first record's top-level keys (JSON/JSONL).
std::set<std::string> Shape(const std::string& file, const std::string& format) {
  std::set<std::string> out;
  if (format == "csv") {
    std::ifstream in(file, std::ios::binary);
    std::string header;
    std::getline(in, header);
    auto t = ParseCsv(header, file);
    if (t.ok()) out.insert(t->columns.begin(), t->columns.end());
    return out;
  }
  auto records = ReadJsonRecords(file);
  if (!records.ok() || records->empty()) return out;
  for (const auto& [path, value] : records->front().values) {
    out.insert(path.substr(0, path.find_first_of(".[")));
  }
  return out;
}

double Jaccard(const std::set<std::string>& a, const std::set<std::string>& b) {
  if (a.empty() && b.empty()) return 1.0;
  size_t both = 0;
  for (const std::string& x : a) both += b.count(x);
  return static_cast<double>(both) / static_cast<double>(a.size() + b.size() - both);
}

bool Homogeneous(const std::vector<std::string>& files, const std::string& format,
                 const DiscoveryOptions& o) {
  if (format == "text") return true;
  std::vector<std::set<std::string>> shapes;
  const size_t k = std::min(o.corpus_sample, files.size());
  for (size_t i = 0; i < k; ++i) shapes.push_back(Shape(files[i * files.size() / k], format));
  double sum = 0;
  size_t pairs = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    for (size_t j = i + 1; j < shapes.size(); ++j, ++pairs) sum += Jaccard(shapes[i], shapes[j]);
  }
  return pairs > 0 && sum / static_cast<double>(pairs) >= o.corpus_similarity;
}

std::string FirstHeading(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# ", 0) == 0) return line.substr(2);
  }
  return "";
}

}  // namespace

Result<std::vector<DiscoveredSource>> DiscoverSources(const std::string& dir,
                                                      const Exclusions& exclusions,
                                                      const DiscoveryOptions& o,
                                                      std::vector<std::string>* excluded) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound(dir + ": not a directory");
  // (directory, format) → files
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> groups;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.empty() && name[0] == '.') {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    const std::string format = FormatOf(it->path());
    if (format.empty()) continue;
    const std::string rel = fs::relative(it->path(), dir).generic_string();
    if (exclusions.ExcludesFile(rel)) {
      excluded->push_back(rel);
      continue;
    }
    const std::string parent = fs::relative(it->path(), dir).parent_path().generic_string();
    groups[{parent, format == "jsonl" ? "jsonl" : format}].push_back(it->path().string());
  }
  if (ec) return Status::IoError(dir + ": " + ec.message());
  std::vector<DiscoveredSource> out;
  for (auto& [key, files] : groups) {
    std::sort(files.begin(), files.end());
    const auto& [parent, format] = key;
    const size_t min_files = format == "text" ? o.text_corpus_min_files : o.corpus_min_files;
    if (files.size() >= min_files && Homogeneous(files, format, o)) {
      out.push_back(
          {parent.empty() ? fs::path(dir).filename().string() : parent, format, true, files});
      continue;
    }
    for (const std::string& f : files) {
      fs::path rel = fs::relative(f, dir);
      out.push_back({(rel.parent_path() / rel.stem()).generic_string(), format, false, {f}});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const DiscoveredSource& a, const DiscoveredSource& b) { return a.name < b.name; });
  return out;
}

Result<std::vector<FlatRecord>> LoadSourceRecords(const DiscoveredSource& source,
                                                  const std::string& dir,
                                                  std::vector<std::string>* columns,
                                                  size_t* transcoded_fields) {
  std::vector<FlatRecord> out;
  for (const std::string& file : source.files) {
    const size_t first = out.size();
    if (source.format == "csv") {
      FLOWRAG_ASSIGN_OR_RETURN(CsvTable t, ReadCsvFile(file));
      *transcoded_fields += t.transcoded_fields;
      for (const std::string& c : t.columns) {
        if (std::find(columns->begin(), columns->end(), c) == columns->end()) columns->push_back(c);
      }
      for (size_t r = 0; r < t.rows.size(); ++r) {
        FlatRecord rec;
        rec.line = t.row_lines[r];
        for (size_t c = 0; c < t.columns.size(); ++c)
          rec.values.emplace_back(t.columns[c], std::move(t.rows[r][c]));
        out.push_back(std::move(rec));
      }
    } else if (source.format == "text") {
      Status error;
      std::string text = ReadAll(file, &error);
      FLOWRAG_RETURN_IF_ERROR(error);
      size_t bad = 0;
      if (!IsValidUtf8(text, &bad)) {
        text = Windows1252ToUtf8(text);
        ++*transcoded_fields;
      }
      FlatRecord rec;
      rec.line = 1;
      rec.values.emplace_back("path", fs::relative(file, dir).generic_string());
      rec.values.emplace_back("title", FirstHeading(text));
      rec.values.emplace_back("text", std::move(text));
      out.push_back(std::move(rec));
    } else {
      FLOWRAG_ASSIGN_OR_RETURN(std::vector<FlatRecord> recs, ReadJsonRecords(file));
      for (FlatRecord& r : recs) out.push_back(std::move(r));
    }
    const std::string relative = fs::relative(file, dir).generic_string();
    for (size_t i = first; i < out.size(); ++i) {
      out[i].file = relative;
      out[i].index = static_cast<int64_t>(i - first) + 1;
    }
  }
  return out;
}

}  // namespace flowrag
