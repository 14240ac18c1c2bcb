// Source discovery (schema-contracts paper A.3, Algorithm 1): which files of
// a folder are record sources, and how they group.
//
// Supported files: .csv, .json, .jsonl/.ndjson (records) and .txt/.md/
// .markdown (text: one record {"title", "text"} per file). Hidden entries are
// skipped; files the exclusion manifest names are left out (and listed).
// A directory holding at least `corpus_min_files` supported files of one kind
// whose structure agrees (the mean pairwise Jaccard similarity of the column
// or top-level key sets of `corpus_sample` files spread over it is ≥
// `corpus_similarity`; text files always agree) is one corpus source named
// by the directory; every other file is a source named by its path without
// the extension. Text files of one directory are one corpus source from
// `text_corpus_min_files` on. Sources come out sorted by name.
#ifndef FLOWRAG_SCHEMA_DISCOVERY_H_
#define FLOWRAG_SCHEMA_DISCOVERY_H_

#include <string>
#include <vector>

#include "flowrag/schema.h"
#include "flowrag/status.h"
#include "schema/exclusions.h"
#include "schema/json_records.h"

namespace flowrag {

struct DiscoveryOptions {
  size_t corpus_min_files = 50;
  // Text files carry no structure to disagree on: those of one directory
  // form one source (their type, e.g. "Note") as soon as there are two.
  size_t text_corpus_min_files = 2;
  size_t corpus_sample = 5;
  double corpus_similarity = 0.8;
};

struct DiscoveredSource {
  std::string name;
  std::string format;  // "csv", "json", "jsonl", "text"
  bool corpus = false;
  std::vector<std::string> files;  // absolute or as given, sorted
  size_t excluded_files = 0;       // MatchContractSources: its files the exclusions removed
};

Result<std::vector<DiscoveredSource>> DiscoverSources(const std::string& dir,
                                                      const Exclusions& exclusions,
                                                      const DiscoveryOptions& options,
                                                      std::vector<std::string>* excluded);

// The files each source of a contract reads, for ingestion: `sources` are
// the contract's (as InduceSchema found them), matched to the folder as it
// is now rather than grouped anew, so a file added, removed or excluded
// since induction changes no source's name or membership. In `sources`
// order:
//   - a single-file source (corpus_files == 0) reads the supported file of
//     its format whose path without the extension is its name (the one
//     named by its path when there are several);
//   - a corpus source (corpus_files > 0, or no such file: contracts written
//     before corpus_files was recorded) reads the files of its format
//     directly in its directory (the folder itself for a corpus named after
//     it) that no single-file source reads.
// Hidden files are never read; files the exclusions name are left out,
// counted in the source's `excluded_files` and listed (relative) in
// `excluded`. Supported files that belong to no source are listed
// (relative) in `unclaimed`. A source may come back without files: the
// caller decides (excluded_files > 0: all excluded; else missing).
Result<std::vector<DiscoveredSource>> MatchContractSources(const std::string& dir,
                                                           const std::vector<SourceInfo>& sources,
                                                           const Exclusions& exclusions,
                                                           std::vector<std::string>* excluded,
                                                           std::vector<std::string>* unclaimed);

// The records of a source, in file order; `columns` gets the CSV header
// order (so empty CSV files still have fields). Every format is decoded to
// UTF-8 the same way (common/encoding.h: BOMs, UTF-16, UTF-32; what is not
// UTF-8 then read as Windows-1252, CSV per field, JSON, JSONL and text per
// line, added to `transcoded_fields`). Errors name file and line.
Result<std::vector<FlatRecord>> LoadSourceRecords(const DiscoveredSource& source,
                                                  const std::string& dir,
                                                  std::vector<std::string>* columns,
                                                  size_t* transcoded_fields);

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_DISCOVERY_H_
