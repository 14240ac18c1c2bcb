// File and JSON helpers shared by the benchmark-data loaders (spider_data.cc
// for Spider 1.0, spider2_data.cc for Spider 2.0-lite). Internal to sql/.
//
// Errors name the file (or the place given as `where`) and what was expected.
// All functions are pure apart from the files they read; thread-safe.
#ifndef FLOWRAG_SQL_DATA_FILES_H_
#define FLOWRAG_SQL_DATA_FILES_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"

namespace flowrag {

// The whole file as bytes, a leading UTF-8 byte-order mark removed.
// NotFound/IoError "<path>: ..." when it cannot be opened or read.
Result<std::string> ReadText(const std::string& path);

// Parses `text`; InvalidArgument "<where>: invalid JSON (<reason>)", the
// reason without a line number when `single_line` (one jsonl line).
Result<nlohmann::json> ParseJson(std::string_view text, const std::string& where, bool single_line);

// ReadText then ParseJson, with the path as the place.
Result<nlohmann::json> ReadJsonFile(const std::string& path);

// Python's json.dump writes NaN, Infinity and -Infinity (pandas' missing
// values in Spider 2.0 sample rows); strict JSON has no such literals. They
// become null outside strings; everything else is kept byte for byte. O(size).
std::string NonFiniteToNull(std::string_view text);

// obj[field] as a list of strings into *out, or InvalidArgument
// "<field>: expected a list of strings" / "<field>[i]: expected a string".
Status StringList(const nlohmann::json& obj, const char* field, std::vector<std::string>* out);

}  // namespace flowrag

#endif  // FLOWRAG_SQL_DATA_FILES_H_
