#include "schema/discovery.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/encoding.h"
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
    // The header: the first line of the (decoded) first 64 KiB.
    std::ifstream in(file, std::ios::binary);
    std::string head(64 * 1024, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    std::string header = DecodeUnicodeText(head).text;
    header.resize(std::min(header.size(), header.find('\n')));
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

// A supported file of the folder.
struct FolderFile {
  std::string path;    // as the walk gives it (dir joined with the relative path)
  std::string rel;     // relative to the folder, '/'-separated
  std::string parent;  // rel's directory ("" at the top)
  std::string stem;    // rel without the extension: the name of a single-file source
  std::string format;
  bool excluded = false;
};

// Every supported, non-hidden file below `dir`, sorted by path; those the
// exclusions name are flagged.
Result<std::vector<FolderFile>> WalkFolder(const std::string& dir, const Exclusions& exclusions) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound(dir + ": not a directory");
  std::vector<FolderFile> out;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.empty() && name[0] == '.') {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    FolderFile f;
    f.format = FormatOf(it->path());
    if (f.format.empty()) continue;
    const fs::path rel = fs::relative(it->path(), dir);
    f.path = it->path().string();
    f.rel = rel.generic_string();
    f.parent = rel.parent_path().generic_string();
    f.stem = (rel.parent_path() / rel.stem()).generic_string();
    f.excluded = exclusions.ExcludesFile(f.rel);
    out.push_back(std::move(f));
  }
  if (ec) return Status::IoError(dir + ": " + ec.message());
  std::sort(out.begin(), out.end(),
            [](const FolderFile& a, const FolderFile& b) { return a.path < b.path; });
  return out;
}

// The name of a corpus of the files in `parent` ("" : the folder itself,
// named as the folder is, however `dir` is spelled: "data/", "./data", ".").
std::string CorpusName(const std::string& dir, const std::string& parent) {
  if (!parent.empty()) return parent;
  std::error_code ec;
  fs::path folder = fs::absolute(dir, ec).lexically_normal();
  if (folder.has_parent_path() && folder.filename().empty()) folder = folder.parent_path();
  return folder.filename().string();
}

}  // namespace

Result<std::vector<DiscoveredSource>> DiscoverSources(const std::string& dir,
                                                      const Exclusions& exclusions,
                                                      const DiscoveryOptions& o,
                                                      std::vector<std::string>* excluded) {
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<FolderFile> walked, WalkFolder(dir, exclusions));
  // (directory, format) → files
  std::map<std::pair<std::string, std::string>, std::vector<const FolderFile*>> groups;
  for (const FolderFile& f : walked) {
    if (f.excluded) {
      excluded->push_back(f.rel);
      continue;
    }
    groups[{f.parent, f.format}].push_back(&f);
  }
  std::vector<DiscoveredSource> out;
  for (const auto& [key, files] : groups) {
    const auto& [parent, format] = key;
    std::vector<std::string> paths;
    for (const FolderFile* f : files) paths.push_back(f->path);
    const size_t min_files = format == "text" ? o.text_corpus_min_files : o.corpus_min_files;
    if (files.size() >= min_files && Homogeneous(paths, format, o)) {
      out.push_back({CorpusName(dir, parent), format, true, paths});
      continue;
    }
    for (const FolderFile* f : files) out.push_back({f->stem, format, false, {f->path}});
  }
  std::sort(out.begin(), out.end(),
            [](const DiscoveredSource& a, const DiscoveredSource& b) { return a.name < b.name; });
  return out;
}

Result<std::vector<DiscoveredSource>> MatchContractSources(const std::string& dir,
                                                           const std::vector<SourceInfo>& sources,
                                                           const Exclusions& exclusions,
                                                           std::vector<std::string>* excluded,
                                                           std::vector<std::string>* unclaimed) {
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<FolderFile> walked, WalkFolder(dir, exclusions));
  std::vector<DiscoveredSource> out(sources.size());
  std::vector<bool> claimed(walked.size(), false);
  auto take = [&](DiscoveredSource& s, size_t i) {
    claimed[i] = true;
    if (walked[i].excluded) {
      ++s.excluded_files;
    } else {
      s.files.push_back(walked[i].path);
    }
  };
  // Single files first: a corpus reads what they leave.
  std::vector<bool> corpus(sources.size(), false);
  for (size_t k = 0; k < sources.size(); ++k) {
    const SourceInfo& info = sources[k];
    out[k].name = info.name;
    out[k].format = info.format;
    if (info.corpus_files > 0) {
      corpus[k] = true;
      continue;
    }
    const std::string filename = fs::path(info.path).filename().string();
    size_t best = walked.size();
    for (size_t i = 0; i < walked.size(); ++i) {
      if (claimed[i] || walked[i].stem != info.name || walked[i].format != info.format) continue;
      if (best == walked.size() || fs::path(walked[i].path).filename() == filename) best = i;
    }
    if (best < walked.size()) {
      take(out[k], best);
    } else {
      corpus[k] = true;  // written before corpus_files was, or gone
    }
  }
  for (size_t k = 0; k < sources.size(); ++k) {
    if (!corpus[k]) continue;
    out[k].corpus = true;
    for (size_t i = 0; i < walked.size(); ++i) {
      if (claimed[i] || walked[i].format != sources[k].format) continue;
      if (CorpusName(dir, walked[i].parent) == sources[k].name) take(out[k], i);
    }
  }
  for (size_t i = 0; i < walked.size(); ++i) {
    if (walked[i].excluded) {
      excluded->push_back(walked[i].rel);
    } else if (!claimed[i]) {
      unclaimed->push_back(walked[i].rel);
    }
  }
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
      // BOMs, UTF-16 and UTF-32 to UTF-8, then lines not in UTF-8 as Windows-1252.
      std::string text = DecodeUnicodeText(ReadAll(file, &error)).text;
      FLOWRAG_RETURN_IF_ERROR(error);
      *transcoded_fields += LinesToUtf8(&text);
      FlatRecord rec;
      rec.line = 1;
      rec.values.emplace_back("path", fs::relative(file, dir).generic_string());
      rec.values.emplace_back("title", FirstHeading(text));
      rec.values.emplace_back("text", std::move(text));
      out.push_back(std::move(rec));
    } else {
      FLOWRAG_ASSIGN_OR_RETURN(std::vector<FlatRecord> recs,
                               ReadJsonRecords(file, JsonReadOptions{}, transcoded_fields));
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
