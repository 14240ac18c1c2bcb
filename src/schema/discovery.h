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
};

Result<std::vector<DiscoveredSource>> DiscoverSources(const std::string& dir,
                                                      const Exclusions& exclusions,
                                                      const DiscoveryOptions& options,
                                                      std::vector<std::string>* excluded);

// The records of a source, in file order; `columns` gets the CSV header
// order (so empty CSV files still have fields). Errors name file and line.
Result<std::vector<FlatRecord>> LoadSourceRecords(const DiscoveredSource& source,
                                                  const std::string& dir,
                                                  std::vector<std::string>* columns,
                                                  size_t* transcoded_fields);

}  // namespace flowrag

#endif  // FLOWRAG_SCHEMA_DISCOVERY_H_
