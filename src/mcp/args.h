// Reading a tool call's "arguments" object: typed fields whose errors name
// the tool and the field ("query: top_k: expected an integer in [1, 50],
// got \"ten\""). Pure; thread-safe.
#ifndef FLOWRAG_MCP_ARGS_H_
#define FLOWRAG_MCP_ARGS_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flowrag::mcp {

// What is wrong with one argument.
struct ArgError {
  std::string field;    // "top_k", "documents[2].text"
  std::string message;  // "query: top_k: expected ..."
};

class ArgReader {
 public:
  // `args`: the arguments object; it must outlive the reader.
  ArgReader(std::string_view tool, const nlohmann::json& args) : tool_(tool), args_(args) {}

  // The first member of the arguments not in `known`.
  std::optional<ArgError> RejectUnknown(std::initializer_list<std::string_view> known) const;

  // A string of 1..max_bytes bytes (not only white space when `non_blank`);
  // absent or null leaves *out unchanged unless `required`.
  std::optional<ArgError> String(const char* name, bool required, size_t max_bytes,
                                 std::string* out, bool non_blank = false) const;
  // One of `allowed`.
  std::optional<ArgError> Enum(const char* name, const std::vector<std::string>& allowed,
                               std::string* out) const;
  // An integer in [min, max] (2.0 counts as 2).
  std::optional<ArgError> Integer(const char* name, int64_t min, int64_t max, int64_t* out) const;
  // {name: string | number | boolean}: numbers and booleans keep their JSON
  // spelling (QueryOptions::params).
  std::optional<ArgError> Params(const char* name, std::map<std::string, std::string>* out) const;

  // An error about `field` (for checks the typed readers do not cover).
  ArgError Error(std::string field, std::string what) const;

  std::string_view tool() const { return tool_; }

 private:
  const nlohmann::json* Member(const char* name) const;
  std::string_view tool_;
  const nlohmann::json& args_;
};

// A short, printable excerpt of a JSON value for messages (at most ~60 bytes).
std::string Excerpt(const nlohmann::json& value);

}  // namespace flowrag::mcp

#endif  // FLOWRAG_MCP_ARGS_H_
